"""Compiled Yangzhou win judging for claim windows and the self-draw mask (docs/rules/yangzhou.md §8.2–§8.7).

This module owns the numba twin of the part of :func:`mjenv.rules.scoring.yangzhou.score_win` that the
engine needs while a hand runs: whether a win reaches the fan minimum (some reading has a big fan, B > 0,
and a total T = B + small fans ≥ ``min_fan``) and, on a discard or rob, whether the missed-win lock (漏胡,
with the 大吊车 exception) refuses it.  It enumerates the same readings (every pair, every split of the rest
into triplets and sequences; seven pairs is no win here), places the winning tile in each distinct set of
the reading as the Python scorer does, and computes the same big fans (§8.5, §8.6) and small fans (§8.4),
so its best key (legal by the minimum, T, B) equals the scorer's; tests/test_yzscore.py checks legality, T
and B on random and near-minimum hands, and tests/differential.py on whole games.  When a hand ends,
:func:`reading_fans` writes the fans of the winner's chosen reading (ids and values, :mod:`mjenv.engine.fanrow`)
for the engine's result (``yangzhou.score_settled``); fan names, reading texts and the result's settlement are made
in Python from them.

The options (the fan minimum, ``louhu``), the big-fan values of the ruleset's column and the small-fan values
enter as ints in a slice of the engine's configuration vector (:func:`config`, ``YZ_*`` indices), built when an
Engine is made from the Python scorer's tables (``yangzhou.BIG_FANS``, ``SMALL_FANS``, ``COMPOSITES``: the one
source; a changed entry reaches the compiled code without a recompile).  Functions allocate nothing (the engine's kernels run without numba's reference counting);
working rows are passed in.

The compiled-code cache keys its callers by this file's source too (:mod:`mjenv.engine.jitcache`), so they
recompile after an edit.
"""

from __future__ import annotations

import numpy as np

from mjenv.engine import fanrow, handk
from mjenv.engine.jit import njit
from mjenv.rules import hand as _H
from mjenv.rules.scoring import yangzhou as _Y

__all__ = ["config", "N_YZ", "best", "reading_fans", "claim_legal", "self_draw_legal"]

# The structure fans (yangzhou.STRUCTURE, the one list); bit i of a reading's structure set is STRUCTURE[i].
STRUCTURE = _Y.STRUCTURE
_TIEBAN = STRUCTURE.index("tieban")
_YIBAN = STRUCTURE.index("yiban")
_SHUANGBANBAN = STRUCTURE.index("shuangbanban")
_SHUANGXI = STRUCTURE.index("shuangban_shuangxi")
_SHUANGLAO = STRUCTURE.index("shuangban_shuanglao")
_SHUANGLIAN = STRUCTURE.index("shuangban_shuanglian")
_YITIAOLONG = STRUCTURE.index("yitiaolong")
_BANLONG = STRUCTURE.index("banlong")
_SANFUTONG = STRUCTURE.index("sanfutong")
_SIFUTONG = STRUCTURE.index("sifutong")
_DUIDUIHU = STRUCTURE.index("duiduihu")
_SHUANGPIAO = STRUCTURE.index("shuangpiao")
N_STRUCT = len(STRUCTURE)

# Indices into the options slice (see :func:`config`).
YZ_ON = 0  # 1: the engine judges Yangzhou windows and self-draw masks here
YZ_MIN_FAN = 1
YZ_LOUHU = 2  # louhu on
YZ_FENGQING = 3  # big-fan values of the ruleset's column (§8.5, §9)
YZ_GANGBAN = 4
YZ_HUN = 5  # 混一色 alone
YZ_QING = 6  # 清一色 alone
YZ_STRUCT = 7  # N_STRUCT entries: each structure fan alone
YZ_COMBO_HUN = YZ_STRUCT + N_STRUCT  # 混一色 with each structure fan: the listed composite, else the sum
YZ_COMBO_QING = YZ_COMBO_HUN + N_STRUCT  # 清一色 likewise
YZ_SMALL = YZ_COMBO_QING + N_STRUCT  # the small fans' values (§8.4), one per yangzhou.SMALL_FANS id in its order
# (the ones read by name:)
_SMALL_IDS = tuple(_Y.SMALL_FANS)
YZ_S_YAZI = YZ_SMALL + _SMALL_IDS.index("yazi")
YZ_S_ZIGE = YZ_SMALL + _SMALL_IDS.index("zige")
YZ_S_MINGGANG = YZ_SMALL + _SMALL_IDS.index("minggang")
YZ_S_ANGANG = YZ_SMALL + _SMALL_IDS.index("angang")
YZ_S_JIANKE = YZ_SMALL + _SMALL_IDS.index("jianke")
YZ_S_DUDIAO = YZ_SMALL + _SMALL_IDS.index("dudiao")
N_SMALL = len(_SMALL_IDS)
# The fan ids of the results' fan rows (indices in yangzhou.FAN_ORDER; mjenv.engine.fanrow), from the same tables:
YZ_ID_FENGQING = YZ_SMALL + N_SMALL
YZ_ID_GANGBAN = YZ_ID_FENGQING + 1
YZ_ID_HUN = YZ_ID_FENGQING + 2
YZ_ID_QING = YZ_ID_FENGQING + 3
YZ_ID_STRUCT = YZ_ID_FENGQING + 4  # N_STRUCT entries: each structure fan's id
YZ_ID_COMBO_HUN = YZ_ID_STRUCT + N_STRUCT  # 混一色 with each structure fan: the listed composite's id, -1 for none
YZ_ID_COMBO_QING = YZ_ID_COMBO_HUN + N_STRUCT  # 清一色 likewise
YZ_ID_SMALL = YZ_ID_COMBO_QING + N_STRUCT  # N_SMALL entries: each small fan's id, in yangzhou.SMALL_FANS order
N_YZ = YZ_ID_SMALL + N_SMALL

# Small fans by their index in yangzhou.SMALL_FANS (bit i of a reading's small-fan set is SMALL_FANS' i-th fan).
_S_MENQING, _S_PINGHU, _S_ZIMO, _S_YAZI, _S_QUEYI, _S_YAOTOU, _S_DUANYAO, _S_QIXIANG, _S_LIANFU, _S_LAOSHAO = (
    _SMALL_IDS.index(f)
    for f in ("menqing", "pinghu", "zimo", "yazi", "queyi", "yaotou", "duanyao", "qixiang", "lianfu", "laoshao")
)
_S_ZIGE, _S_MINGGANG, _S_ANGANG, _S_MENFENG, _S_QUANFENG, _S_JIANKE, _S_DUDIAO = (
    _SMALL_IDS.index(f) for f in ("zige", "minggang", "angang", "menfeng", "quanfeng", "jianke", "dudiao")
)
# where the winning tile sits in the reading that scores best (_placement)
_AT_SEQ, _AT_TRIP, _AT_PAIR = 0, 1, 2

HOW_DISCARD, HOW_SELF_DRAW, HOW_ROB = 0, 1, 2  # as mjenv.engine.kwscore
# Meld kind codes of mjenv.engine.state.
_PONG, _CHI, _DIRECT_KONG, _ADDED_KONG, _CONCEALED_KONG = 1, 2, 3, 4, 5


def config(opts) -> np.ndarray:
    """int64 [N_YZ]: what the compiled verdict reads of a ``YangzhouOptions`` value (YZ_ON set)."""
    col = 1 if opts.yz_style == "new" else 0
    big = lambda f: _Y.BIG_FANS[f][2][col]  # noqa: E731
    yc = np.zeros(N_YZ, np.int64)
    yc[YZ_ON] = 1
    yc[YZ_MIN_FAN] = int(opts.min_fan)
    yc[YZ_LOUHU] = opts.louhu == "on"
    fan_id = _Y.FAN_ORDER.index
    for value_at, id_at, fan in ((YZ_FENGQING, YZ_ID_FENGQING, "fengqing"), (YZ_GANGBAN, YZ_ID_GANGBAN, "gangban"),
                                 (YZ_HUN, YZ_ID_HUN, "hunyise"), (YZ_QING, YZ_ID_QING, "qingyise")):
        yc[value_at] = big(fan)
        yc[id_at] = fan_id(fan)
    for i, f in enumerate(STRUCTURE):
        yc[YZ_STRUCT + i] = big(f)
        yc[YZ_ID_STRUCT + i] = fan_id(f)
        for value_at, id_at, suit in ((YZ_COMBO_HUN, YZ_ID_COMBO_HUN, "hunyise"),
                                      (YZ_COMBO_QING, YZ_ID_COMBO_QING, "qingyise")):
            combo = _Y.COMPOSITES.get((suit, f))
            yc[value_at + i] = big(combo) if combo is not None else big(suit) + big(f)
            yc[id_at + i] = -1 if combo is None else fan_id(combo)
    for i, (_, _, v) in enumerate(_Y.SMALL_FANS.values()):
        yc[YZ_SMALL + i] = v
    for i, f in enumerate(_SMALL_IDS):
        yc[YZ_ID_SMALL + i] = fan_id(f)
    return yc


_jit = njit(cache=True, _nrt=False)
_TIE = _H.READING_TIE


@_jit
def _structure(sc, ns):
    """``(gangban, bits)``: 钢板 (four identical sequences) and the structure fans (``yangzhou.structure_fans``)
    of a reading with ``ns`` sequences, ``sc[t]`` of them starting at tile ``t`` (four sets in all)."""
    bits = 0
    maxc = 0
    twin_a = -1
    twin_b = -1
    for t in range(27):
        c = sc[t]
        if c > maxc:
            maxc = c
        if c == 2:
            if twin_a < 0:
                twin_a = t
            elif twin_b < 0:
                twin_b = t
    if maxc == 4:
        return True, 0
    if maxc == 3:
        bits |= 1 << _TIEBAN
    if maxc >= 2:
        bits |= 1 << _YIBAN
    if twin_b >= 0:  # two distinct starts held twice each
        bits |= 1 << _SHUANGBANBAN
        a = twin_a
        b = twin_b
        if a // 9 != b // 9 and a % 9 == b % 9:
            bits |= 1 << _SHUANGXI
        if a // 9 == b // 9 and a % 9 == 0 and b % 9 == 6:
            bits |= 1 << _SHUANGLAO
        if a // 9 == b // 9 and b - a == 3:
            bits |= 1 << _SHUANGLIAN
    for s in range(3):
        c0 = sc[9 * s]
        c3 = sc[9 * s + 3]
        c6 = sc[9 * s + 6]
        if c0 > 0 and c3 > 0 and c6 > 0:
            bits |= 1 << _YITIAOLONG
            if ns == 4 and c0 + c3 + c6 == 4:
                bits |= 1 << _BANLONG
    for r in range(7):
        c0 = sc[r]
        c1 = sc[9 + r]
        c2 = sc[18 + r]
        if c0 > 0 and c1 > 0 and c2 > 0:
            bits |= 1 << _SANFUTONG
            if c0 + c1 + c2 == 4:
                bits |= 1 << _SIFUTONG
    if ns == 0:
        bits |= 1 << _DUIDUIHU
    if ns == 4 and maxc == 1 and _shuangpiao(sc):
        bits |= 1 << _SHUANGPIAO
    return False, bits


@_jit
def _shuangpiao(sc):
    """Four distinct sequences a-X, a-Y, c-X, c-Y in exactly two suits with c = a + 3 or {a, c} = {1, 7}."""
    ranks0 = 0  # bits of the ranks held in each suit
    ranks1 = 0
    ranks2 = 0
    for r in range(7):
        if sc[r] > 0:
            ranks0 |= 1 << r
        if sc[9 + r] > 0:
            ranks1 |= 1 << r
        if sc[18 + r] > 0:
            ranks2 |= 1 << r
    if ranks0 == 0:
        x = ranks1
        y = ranks2
    elif ranks1 == 0:
        x = ranks0
        y = ranks2
    elif ranks2 == 0:
        x = ranks0
        y = ranks1
    else:
        return False
    return x == y and (x == 0b1001 << 0 or x == 0b1001 << 1 or x == 0b1001 << 2 or x == 0b1001 << 3 or x == 0b1000001)


@_jit
def _big_value(sc, ns, suit_fan, yc):
    """``(B, which)`` of a reading (``yangzhou.big_fan_value``); ``suit_fan``: 0 none, 1 混一色, 2 清一色, 3 风清.
    ``which`` says what makes B, as ``big_fan_value`` keeps the first of equal options: the structure fan's index
    (with the suit fan, its composite or the two), ``N_STRUCT`` for 钢板, -1 for the suit fan alone (or 风清, or
    nothing when B is 0)."""
    if suit_fan == 3:
        return yc[YZ_FENGQING], -1
    gangban, bits = _structure(sc, ns)
    if gangban:
        return yc[YZ_GANGBAN], N_STRUCT
    best = 0
    which = -1
    if suit_fan == 1:
        best = yc[YZ_HUN]
    elif suit_fan == 2:
        best = yc[YZ_QING]
    for f in range(N_STRUCT):
        if (bits >> f) & 1:
            if suit_fan == 0:
                v = yc[YZ_STRUCT + f]
            elif suit_fan == 1:
                v = yc[YZ_COMBO_HUN + f]
            else:
                v = yc[YZ_COMBO_QING + f]
            if v > best or (suit_fan == 0 and which < 0):
                best = v
                which = f
    return best, which


@_jit
def _edge_or_closed(first, w):
    pos = w - first
    return pos == 1 or (pos == 2 and first % 9 == 0) or (pos == 0 and first % 9 == 6)


@_jit
def _hand_facts(h, full, owned, w, mk, mt, nm, self_draw, tabs):
    """What the whole hand says, whatever its reading: ``(suit_fan, honors, meld_sp, meld_ns, meld_trips, fixed,
    n_ming, n_an, sole_wait)`` — the suit fan (as :func:`_big_value` takes it), honors held, the melds' sequence
    starts (6 bits each) and count, their triplet tiles (bits), the small fans that do not depend on the reading
    (bits of ``SMALL_FANS``' indices: 门清, 自摸, 缺一, 断幺), the open and concealed kongs, and whether the hand
    (``h``, without ``w``) waits on one tile only.  Leaves the complete hand in ``full``."""
    suits = 0
    honors = False
    terminals = False
    for t in range(34):
        full[t] = h[t]
        owned[t] = h[t]
    full[w] += 1
    for t in range(34):
        if full[t] > 0:
            if t >= 27:
                honors = True
            else:
                suits |= 1 << (t // 9)
                if t % 9 == 0 or t % 9 == 8:
                    terminals = True
    meld_sp = np.int64(0)
    meld_ns = 0
    meld_trips = np.int64(0)
    open_melds = False
    n_ming = 0
    n_an = 0
    for j in range(nm):
        k = mk[j]
        t = mt[j]
        if t >= 27:
            honors = True
        else:
            suits |= 1 << (t // 9)
        if k == _CHI:
            meld_sp |= np.int64(t) << (6 * meld_ns)
            meld_ns += 1
            if t % 9 == 0 or t % 9 == 6:
                terminals = True
            for x in range(t, t + 3):
                owned[x] += 1
        else:
            meld_trips |= np.int64(1) << t
            if t < 27 and (t % 9 == 0 or t % 9 == 8):
                terminals = True
            owned[t] += 4 if k >= _DIRECT_KONG else 3
        if k != _CONCEALED_KONG:
            open_melds = True
        if k == _DIRECT_KONG or k == _ADDED_KONG:
            n_ming += 1  # 明杠
        elif k == _CONCEALED_KONG:
            n_an += 1  # 暗杠
    n_suits = (suits & 1) + ((suits >> 1) & 1) + ((suits >> 2) & 1)
    if n_suits == 0:
        suit_fan = 3
    elif n_suits == 1:
        suit_fan = 1 if honors else 2
    else:
        suit_fan = 0
    waits = handk.wait_bits(h, False, tabs) & handk.owned_bits(owned)
    sole_wait = waits != 0 and (waits & (waits - 1)) == 0
    fixed = 0
    if not open_melds:
        fixed |= 1 << _S_MENQING  # 门清
    if self_draw:
        fixed |= 1 << _S_ZIMO  # 自摸
    if not honors and n_suits == 2:
        fixed |= 1 << _S_QUEYI  # 缺一
    if not honors and not terminals:
        fixed |= 1 << _S_DUANYAO  # 断幺
    return suit_fan, honors, meld_sp, meld_ns, meld_trips, fixed, n_ming, n_an, sole_wait


@_jit
def _reading_small(sc, ns, p, trips, all_trips, honors, seat_wind, round_wind):
    """``(bits, n_zige, n_jianke)``: the small fans of one reading before the winning tile is placed (bits of
    ``SMALL_FANS``' indices: 平胡, 幺头, 齐相, 连副, 老少, 门风, 圈风), its concealed triplets (子格) and dragon sets;
    ``sc[t]``: how many of its sequences (melds included) start at ``t``, ``ns`` of them, ``p`` its pair,
    ``trips`` / ``all_trips`` its concealed / all triplet tiles (bits)."""
    bits = 0
    if not honors and ns == 4:
        bits |= 1 << _S_PINGHU  # 平胡
    if p < 27 and (p % 9 == 0 or p % 9 == 8):
        bits |= 1 << _S_YAOTOU  # 幺头
    for r in range(7):
        if (sc[r] > 0) + (sc[9 + r] > 0) + (sc[18 + r] > 0) >= 2:
            bits |= 1 << _S_QIXIANG  # 齐相
    for s in range(3):
        for r in range(4):
            if sc[9 * s + r] > 0 and sc[9 * s + r + 3] > 0:
                bits |= 1 << _S_LIANFU  # 连副
        if sc[9 * s] > 0 and sc[9 * s + 6] > 0:
            bits |= 1 << _S_LAOSHAO  # 老少
    if (all_trips >> seat_wind) & 1:
        bits |= 1 << _S_MENFENG  # 门风
    if (all_trips >> round_wind) & 1:
        bits |= 1 << _S_QUANFENG  # 圈风
    n_zige = 0
    x = trips
    while x:
        n_zige += 1  # 子格, one per concealed triplet of the reading
        x &= x - 1
    n_jianke = 0
    for t in range(31, 34):
        if (all_trips >> t) & 1:
            n_jianke += 1  # 中发白
    return bits, n_zige, n_jianke


@_jit
def _placement(w, p, trips, hand_seqs, sole_wait, self_draw, yc):
    """``(extra, at, fan)``: where the winning tile ``w`` sits in a reading so that it scores best, as
    ``yangzhou.score_win`` tries the placements (the reading's own sequences from the lowest, its triplets, its pair;
    the first of equal totals kept): what it adds to the small fans (丫子 or 独吊; a triplet completed by another's
    tile is no concealed triplet, one 子格 less), ``_AT_SEQ`` / ``_AT_TRIP`` / ``_AT_PAIR``, and the small fan it
    brings (its ``SMALL_FANS`` index, -1 for none)."""
    extra = np.int64(-(1 << 20))
    at = -1
    fan = -1
    if w < 27:
        for f in range(max(w - 2, 9 * (w // 9)), w + 1):
            if (hand_seqs >> f) & 1:
                yazi = sole_wait and _edge_or_closed(f, w)
                e = yc[YZ_S_YAZI] if yazi else 0
                if e > extra:
                    extra = e
                    at = _AT_SEQ
                    fan = _S_YAZI if yazi else -1
    if (trips >> w) & 1:
        e = 0 if self_draw else -yc[YZ_S_ZIGE]
        if e > extra:
            extra = e
            at = _AT_TRIP
            fan = -1
    if p == w:
        e = yc[YZ_S_DUDIAO] if sole_wait else 0
        if e > extra:
            extra = e
            at = _AT_PAIR
            fan = _S_DUDIAO if sole_wait else -1
    return extra, at, fan


@_jit
def _small_value(bits, n_zige, n_ming, n_an, n_jianke, yc):
    """The fans that small fans ``bits`` (one each) and the counted ones add to T."""
    v = n_zige * yc[YZ_S_ZIGE] + n_ming * yc[YZ_S_MINGGANG] + n_an * yc[YZ_S_ANGANG] + n_jianke * yc[YZ_S_JIANKE]
    for i in range(N_SMALL):
        if (bits >> i) & 1:
            v += yc[YZ_SMALL + i]
    return v


@_jit
def _reading_values(work, meld_sp, meld_ns, hand_ns, p, trips, meld_trips, suit_fan, honors, seat_wind, round_wind, yc):
    """``(B, which, small-fan bits, 子格 count, 箭刻 count)`` of one reading: its sequence starts ``work`` (as
    ``handk.reading_split`` left them) with the melds' added, its big fans (:func:`_big_value`) and its small fans
    (:func:`_reading_small`); shared by :func:`best` and :func:`reading_fans`."""
    ns = meld_ns + hand_ns
    for j in range(meld_ns):
        work[(meld_sp >> (6 * j)) & 63] += 1
    b_value, which = _big_value(work, ns, suit_fan, yc)
    bits, n_zige, n_jianke = _reading_small(work, ns, p, trips, trips | meld_trips, honors, seat_wind, round_wind)
    return b_value, which, bits, n_zige, n_jianke


@_jit
def best(h, full, work, owned, w, mk, mt, nm, self_draw, seat_wind, round_wind, yc, tabs):
    """``(qualifies, T, B, code)`` of the best reading of a win on ``w`` by concealed counts ``h`` (*without*
    ``w``) and ``nm`` melds of kinds ``mk`` / tiles ``mt``, as ``yangzhou.score_win`` chooses it (the largest key
    (B > 0 and T ≥ min_fan, T, B) over readings and placements of ``w``); ``code``: that reading's code
    (``mjenv.rules.hand``'s reading codes, READING_TIE set when another reading has the same key); ``(False, 0,
    0, -1)`` without a reading.  ``full``, ``work`` and ``owned``: int8 rows of 34 used as working space."""
    suit_fan, honors, meld_sp, meld_ns, meld_trips, fixed, n_ming, n_an, sole_wait = _hand_facts(
        h, full, owned, w, mk, mt, nm, self_draw, tabs
    )
    min_fan = yc[YZ_MIN_FAN]
    best_key = np.int64(-1)
    best_t = 0
    best_b = 0
    best_code = -1
    tie = False
    for p in range(34):
        if full[p] < 2:
            continue
        m = handk.reading_choices(full, p)
        for choice in range(1 << m):
            # (handk.reading_split, the enumeration of mjenv.rules.hand.readings); ``hand_seqs``: the distinct
            # first tiles of the reading's own sequences, ``work``: how many start at each tile
            ok, trips, hand_seqs, hand_ns = handk.reading_split(full, work, p, choice, m)
            if not ok:
                continue
            b_value, _, bits, n_zige, n_jianke = _reading_values(work, meld_sp, meld_ns, hand_ns, p, trips, meld_trips,
                                                                 suit_fan, honors, seat_wind, round_wind, yc)
            extra, _, _ = _placement(w, p, trips, hand_seqs, sole_wait, self_draw, yc)
            total = b_value + _small_value(fixed | bits, n_zige, n_ming, n_an, n_jianke, yc) + extra
            qualifies = b_value > 0 and total >= min_fan
            key = (np.int64(1 if qualifies else 0) << 40) | (np.int64(total) << 20) | np.int64(b_value)
            if key > best_key:
                best_key = key
                best_t = total
                best_b = b_value
                best_code = p << 5 | choice
                tie = False
            elif key == best_key:
                tie = True
    if best_key < 0:
        return False, 0, 0, -1
    return (best_key >> 40) != 0, best_t, best_b, (best_code | _TIE) if tie else best_code


@_jit
def _put(row, k, fan, value):
    """:func:`mjenv.engine.fanrow.put` while the row has room (``k`` counts on past it, so that the caller can tell)."""
    if k < fanrow.MAX_FANS:
        fanrow.put(row, k, fan, value)
    return k + 1


@_jit
def reading_fans(h, full, work, owned, w, mk, mt, nm, self_draw, seat_wind, round_wind, yc, tabs, code, total, row):
    """Write the fans of the reading of code ``code`` (as :func:`best` returns it, without
    :data:`~mjenv.rules.hand.READING_TIE`) into the fan row ``row`` (:mod:`mjenv.engine.fanrow`: ids of
    ``yangzhou.FAN_ORDER`` with their contributions in ``WinScore.fans``' order: the big fans that make B, then the
    small fans in ``SMALL_FANS`` order, each with its count times its value, the winning tile placed as
    :func:`best` placed it), V = ``total`` (T) and no cap; the other arguments as :func:`best`'s.  Nothing is
    written (``ROW_N`` 0: the Python scorer then makes the result) when the fans would not fit the row or a small
    fan held is worth 0 in the table (its count could not be read back from its contribution)."""
    suit_fan, honors, meld_sp, meld_ns, meld_trips, fixed, n_ming, n_an, sole_wait = _hand_facts(
        h, full, owned, w, mk, mt, nm, self_draw, tabs
    )
    row[fanrow.ROW_N] = 0
    p = code >> 5
    ok, trips, hand_seqs, hand_ns = handk.reading_split(full, work, p, code & 31, handk.reading_choices(full, p))
    if not ok:
        return
    b_value, which, bits, n_zige, n_jianke = _reading_values(work, meld_sp, meld_ns, hand_ns, p, trips, meld_trips,
                                                             suit_fan, honors, seat_wind, round_wind, yc)
    _, at, fan = _placement(w, p, trips, hand_seqs, sole_wait, self_draw, yc)
    bits |= fixed
    if fan >= 0:
        bits |= 1 << fan
    if at == _AT_TRIP and not self_draw:
        n_zige -= 1
    k = 0
    # the big fans (yangzhou.big_fan_value's parts)
    if suit_fan == 3:
        k = _put(row, k, yc[YZ_ID_FENGQING], yc[YZ_FENGQING])
    elif which == N_STRUCT:
        k = _put(row, k, yc[YZ_ID_GANGBAN], yc[YZ_GANGBAN])
    elif suit_fan == 0:
        if which >= 0:
            k = _put(row, k, yc[YZ_ID_STRUCT + which], yc[YZ_STRUCT + which])
    else:
        suit_id = yc[YZ_ID_HUN] if suit_fan == 1 else yc[YZ_ID_QING]
        suit_v = yc[YZ_HUN] if suit_fan == 1 else yc[YZ_QING]
        if which < 0:
            k = _put(row, k, suit_id, suit_v)
        else:
            combo = yc[(YZ_ID_COMBO_HUN if suit_fan == 1 else YZ_ID_COMBO_QING) + which]
            if combo >= 0:
                k = _put(row, k, combo, yc[(YZ_COMBO_HUN if suit_fan == 1 else YZ_COMBO_QING) + which])
            else:
                k = _put(row, k, suit_id, suit_v)
                k = _put(row, k, yc[YZ_ID_STRUCT + which], yc[YZ_STRUCT + which])
    # the small fans, SMALL_FANS order
    for i in range(N_SMALL):
        if i == _S_ZIGE:
            n = n_zige
        elif i == _S_MINGGANG:
            n = n_ming
        elif i == _S_ANGANG:
            n = n_an
        elif i == _S_JIANKE:
            n = n_jianke
        else:
            n = (bits >> i) & 1
        if n > 0:
            if yc[YZ_SMALL + i] == 0:
                return
            k = _put(row, k, yc[YZ_ID_SMALL + i], n * yc[YZ_SMALL + i])
    if k > fanrow.MAX_FANS:
        return
    row[fanrow.ROW_VALUE] = total
    row[fanrow.ROW_CAP] = 0
    row[fanrow.ROW_N] = k


@_jit
def claim_legal(h, full, work, owned, w, mk, mt, nm, seat_wind, round_wind, locked, dadiaoche, yc, tabs):
    """``score_win(...).legal`` of a discard or rob win on ``w`` (the lock of §8.2: ``locked``, and the 大吊车
    tile ``dadiaoche``, -1 for none)."""
    if yc[YZ_LOUHU] != 0 and locked and (dadiaoche < 0 or w != dadiaoche):
        return False
    ok, _, _, _ = best(h, full, work, owned, w, mk, mt, nm, False, seat_wind, round_wind, yc, tabs)
    return ok


@_jit
def self_draw_legal(hand, before, full, work, owned, w, mk, mt, nm, seat_wind, round_wind, yc, tabs):
    """``score_win(...).legal`` of a self-draw on ``w`` by the concealed counts ``hand`` (which hold ``w``);
    ``before`` is a further working row."""
    for t in range(34):
        before[t] = hand[t]
    before[w] -= 1
    ok, _, _, _ = best(before, full, work, owned, w, mk, mt, nm, True, seat_wind, round_wind, yc, tabs)
    return ok


@njit(cache=True)
def best_batch(hs, ws, mks, mts, nms, self_draws, seat_winds, round_winds, yc, tabs, out):
    """:func:`best` of each row into ``out[i] = (qualifies, T, B)`` (for tests and benchmarks)."""
    full = np.zeros(34, np.int8)
    work = np.zeros(34, np.int8)
    owned = np.zeros(34, np.int8)
    for i in range(hs.shape[0]):
        q, t, b, _ = best(
            hs[i], full, work, owned, ws[i], mks[i], mts[i], nms[i], self_draws[i] != 0, seat_winds[i],
            round_winds[i], yc, tabs,
        )
        out[i, 0] = q
        out[i, 1] = t
        out[i, 2] = b


@njit(cache=True)
def fans_batch(hs, ws, mks, mts, nms, self_draws, seat_winds, round_winds, yc, tabs, codes, rows):
    """:func:`best`'s reading code of each hand into ``codes[i]`` and, when it names one reading (no READING_TIE),
    :func:`reading_fans` of that reading into the fan row ``rows[i]`` (for tests)."""
    full = np.zeros(34, np.int8)
    work = np.zeros(34, np.int8)
    owned = np.zeros(34, np.int8)
    for i in range(hs.shape[0]):
        args = (hs[i], full, work, owned, ws[i], mks[i], mts[i], nms[i], self_draws[i] != 0, seat_winds[i],
                round_winds[i], yc, tabs)
        _, total, _, code = best(*args)
        codes[i] = code
        rows[i, fanrow.ROW_N] = 0
        if code >= 0 and (code & _TIE) == 0:
            reading_fans(*args, code, total, rows[i])


@njit(cache=True)
def claim_batch_one(h, w, mk, mt, nm, seat_wind, round_wind, locked, dadiaoche, yc, tabs):
    """:func:`claim_legal` of one hand (for tests)."""
    full = np.zeros(34, np.int8)
    work = np.zeros(34, np.int8)
    owned = np.zeros(34, np.int8)
    return claim_legal(h, full, work, owned, w, mk, mt, nm, seat_wind, round_wind, locked, dadiaoche, yc, tabs)
