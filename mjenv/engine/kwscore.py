"""Compiled Kawuxing win valuing and judging for the claim window (docs/rules/kawuxing.md §3.7–§3.9).

This module owns the numba twin of the part of :func:`mjenv.rules.scoring.kawuxing.score_win` that a
claim window needs: the value V of the best reading (§1.6: the largest capped value, then the largest
value), V_D = V · f_D, and legality L1–L4 (``qianggang``, ``kaikou``, the missed-win lock with
``louhu_exception``).  It enumerates the same readings (every pair, every split of the rest into
triplets and sequences, seven pairs without melds) and applies the same fans, combination and cap,
so the verdict equals the Python scorer's; tests/test_kwscore.py checks that on random hands and
option mixes, and tests/differential.py on whole games.  When a hand ends, :func:`reading_fans` writes the
fans of the winner's chosen reading (ids and values, :mod:`mjenv.engine.fanrow`) for the engine's result; the fan
names, the reading's text and the result's settlement are made in Python from them.

The options and the fan values enter as ints in a slice of the engine's configuration vector (:func:`config`,
``KW_*`` indices), built when an Engine is made from the options and from the Python scorer's value table
(``kawuxing.FANS``, the one source: a changed entry reaches the compiled code without a recompile).  Functions
allocate nothing (the engine's kernels run without numba's reference counting); working rows are passed in.
The engine's kernels (:mod:`mjenv.engine.kwend`) also settle
Kawuxing's hand ends with :func:`best_value`, :func:`payer_factor` and :func:`capped`.

The compiled-code cache keys its callers by this file's source too (:mod:`mjenv.engine.jitcache`), so they
recompile after an edit.
"""

from __future__ import annotations

import numpy as np

from mjenv.engine import fanrow, handk
from mjenv.engine.jit import njit
from mjenv.rules import hand as _hand
from mjenv.rules.scoring import kawuxing as _K

__all__ = ["config", "N_KW", "best_value", "best_reading", "reading_fans", "claim_verdict", "payer_factor", "capped"]

# Indices into the options slice (see :func:`config`).
(
    KW_MULTIPLY,  # fan_combine: 1 multiply, 0 add
    KW_CAP,  # cap: 8, 16, or 0 for none
    KW_CAP_SL16,  # cap_shuanglong_16 on
    KW_KAIKOU,  # 0 none, 1 soft, 2 hard
    KW_LOUHU_HIGHER,  # louhu_exception: 1 higher, 0 off
    KW_QIANGGANG,  # qianggang on
    KW_LIANG_VS_LIANG,
    KW_LIANG_LOSER_DOUBLE,
    KW_GANG_STACK,
    KW_HAIDI,  # 0 off, 1 zimo, 2 zimo_and_pao
    KW_MING_SCOPE,  # 0 win_tile, 1 qingyise_any, 2 any
    KW_AN_SCOPE,
    KW_AN_SPLIT_ANY,  # an_sigui_split: 1 any, 0 triplet_seq
    KW_SIGUI_EACH,
    KW_LONGQIDUI_ANY,  # longqidui: 1 any_four, 0 win_tile
    KW_SHUANGLONG,
    KW_SHOUZHUAYI_MELDED,  # shouzhuayi: 1 melded_x4, 0 pph_single_x2
    KW_BAOHU,  # settlement (§3.10): baohu on
    KW_BAOHU_EXEMPT,  # baohu_liang_exempt on
    KW_BAOHU_ALL,  # baohu_amount: 1 all_shares, 0 double
    KW_BAOHU_PER_SHARE,  # baohu_cap: 1 per_share, 0 total
    KW_SINGLE_WINNER,  # multi_win off
    KW_TINGTOU,  # drawn hand (§3.11): 0 off, 1 on, 2 each
    KW_HUANG_PENALTY,  # huang_liang_penalty
) = range(24)
# Then the fan values (§3.7), one entry per id of kawuxing.fan_values() in its order: the Python scorer's
# table, read when an Engine is made (numba would freeze a module-level table into the compiled code).
_VALUE_IDS = tuple(_K.fan_values())
KW_V = 24
KW_V_PIHU = KW_V + _VALUE_IDS.index("pihu")
KW_V_PENGPENG = KW_V + _VALUE_IDS.index("pengpeng")
KW_V_QINGYISE = KW_V + _VALUE_IDS.index("qingyise")
KW_V_QIDUI = KW_V + _VALUE_IDS.index("qidui")
KW_V_LONGQIDUI = KW_V + _VALUE_IDS.index("longqidui")
KW_V_SHUANGLONG = KW_V + _VALUE_IDS.index("shuanglong")
KW_V_DASANYUAN = KW_V + _VALUE_IDS.index("dasanyuan")
KW_V_XIAOSANYUAN = KW_V + _VALUE_IDS.index("xiaosanyuan")
KW_V_KAWUXING = KW_V + _VALUE_IDS.index("kawuxing")
KW_V_MING_SIGUI = KW_V + _VALUE_IDS.index("ming_sigui")
KW_V_AN_SIGUI = KW_V + _VALUE_IDS.index("an_sigui")
KW_V_SHOUZHUAYI = KW_V + _VALUE_IDS.index("shouzhuayi")
KW_V_LIANGDAO = KW_V + _VALUE_IDS.index("liangdao")
KW_V_GANGKAI = KW_V + _VALUE_IDS.index("gangkai")
KW_V_GANGPAO = KW_V + _VALUE_IDS.index("gangpao")
KW_V_QIANGGANG = KW_V + _VALUE_IDS.index("qianggang")
KW_V_HAIDI = KW_V + _VALUE_IDS.index("haidi")
KW_V_SHOUZHUAYI_PPH = KW_V + _VALUE_IDS.index("shouzhuayi_pph")
N_KW = KW_V + len(_VALUE_IDS)

# Fan ids of the results (mjenv.engine.fanrow): indices in kawuxing.FAN_ORDER.
_FAN_ID = {f: i for i, f in enumerate(_K.FAN_ORDER)}
(
    F_PIHU, F_PENGPENG, F_QINGYISE, F_QIDUI, F_LONGQIDUI, F_SHUANGLONG, F_DASANYUAN, F_XIAOSANYUAN, F_KAWUXING,
    F_MING_SIGUI, F_AN_SIGUI, F_SHOUZHUAYI, F_LIANGDAO, F_GANGKAI, F_GANGPAO, F_QIANGGANG, F_HAIDI,
) = (_FAN_ID[f] for f in (
    "pihu", "pengpeng", "qingyise", "qidui", "longqidui", "shuanglong", "dasanyuan", "xiaosanyuan", "kawuxing",
    "ming_sigui", "an_sigui", "shouzhuayi", "liangdao", "gangkai", "gangpao", "qianggang", "haidi",
))
HOW_DISCARD, HOW_SELF_DRAW, HOW_ROB = 0, 1, 2
_SCOPES = {"win_tile": 0, "qingyise_any": 1, "any": 2}
_PONG, _DIRECT_KONG = 1, 3  # meld kind codes of mjenv.engine.state
# A V_D this large does not fit the engine's int16 claim value: the window is then left to Python.
VALUE_LIMIT = 32767
_SEVEN_PAIRS, _TIE = _hand.READING_SEVEN_PAIRS, _hand.READING_TIE  # reading codes (mjenv.rules.hand)


def config(opts) -> np.ndarray:
    """int64 [N_KW]: the options of a ``KawuxingOptions`` value that the compiled verdict reads."""
    on = lambda name: int(getattr(opts, name) == "on")  # noqa: E731
    kc = np.zeros(N_KW, np.int64)
    kc[KW_MULTIPLY] = opts.fan_combine == "multiply"
    kc[KW_CAP] = 0 if opts.cap is None else int(opts.cap)
    kc[KW_CAP_SL16] = on("cap_shuanglong_16")
    kc[KW_KAIKOU] = {"none": 0, "soft": 1, "hard": 2}[opts.kaikou]
    kc[KW_LOUHU_HIGHER] = opts.louhu_exception == "higher"
    kc[KW_QIANGGANG] = on("qianggang")
    kc[KW_LIANG_VS_LIANG] = on("liang_vs_liang")
    kc[KW_LIANG_LOSER_DOUBLE] = on("liang_loser_double")
    kc[KW_GANG_STACK] = on("gang_stack")
    kc[KW_HAIDI] = {"off": 0, "zimo": 1, "zimo_and_pao": 2}[opts.haidi]
    kc[KW_MING_SCOPE] = _SCOPES[opts.ming_sigui_scope]
    kc[KW_AN_SCOPE] = _SCOPES[opts.an_sigui_scope]
    kc[KW_AN_SPLIT_ANY] = opts.an_sigui_split == "any"
    kc[KW_SIGUI_EACH] = opts.sigui_count == "each"
    kc[KW_LONGQIDUI_ANY] = opts.longqidui == "any_four"
    kc[KW_SHUANGLONG] = on("shuanglong")
    kc[KW_SHOUZHUAYI_MELDED] = opts.shouzhuayi == "melded_x4"
    kc[KW_BAOHU] = on("baohu")
    kc[KW_BAOHU_EXEMPT] = on("baohu_liang_exempt")
    kc[KW_BAOHU_ALL] = opts.baohu_amount == "all_shares"
    kc[KW_BAOHU_PER_SHARE] = opts.baohu_cap == "per_share"
    kc[KW_SINGLE_WINNER] = opts.multi_win == "off"
    kc[KW_TINGTOU] = {"off": 0, "on": 1, "each": 2}[opts.tingtou]
    kc[KW_HUANG_PENALTY] = int(opts.huang_liang_penalty)
    for i, v in enumerate(_K.fan_values().values()):
        kc[KW_V + i] = v
    return kc


_jit = njit(cache=True, _nrt=False)


@_jit
def _scope_ok(scope, w, t, qingyise):
    if scope == 2:
        return True
    if scope == 1:
        return w == t or qingyise
    return w == t


@_jit
def _power(value, times, multiply):
    if multiply:
        out = 1
        for _ in range(times):
            out *= value
        return out
    return value * times


@_jit
def _key(value, cap):
    """Sort key (capped value, value) of a reading packed into one int (values stay far below 2**31)."""
    capped = value if cap == 0 or value < cap else cap
    return (np.int64(capped) << 31) | np.int64(value)


@_jit
def _pengpeng_shouzhuayi(kc, nm, seqs, p, w):
    """碰碰胡 and 手抓一's value of a standard reading with ``seqs`` (its sequence bits), pair ``p`` and winning tile
    ``w`` after ``nm`` melds (kawuxing._reading_fans): 手抓一 with four melds replaces 碰碰胡 where the option melds it."""
    pengpeng = seqs == 0
    shz = 0
    if kc[KW_SHOUZHUAYI_MELDED] != 0:
        if nm == 4:
            shz = kc[KW_V_SHOUZHUAYI]
            pengpeng = False
    elif pengpeng and p == w:
        shz = kc[KW_V_SHOUZHUAYI_PPH]
    return pengpeng, shz


@_jit
def _dragon_triplets(all_trips):
    """How many of 中发白 are triplets (or kongs) in the bit set ``all_trips``."""
    dragons = 0
    for x in range(31, 34):
        if (all_trips >> x) & 1:
            dragons += 1
    return dragons


@_jit
def best_value(full, work, w, mk, mt, nm, revealed, kong_position, how, last_tile, kc):
    """``(V, cap)`` of the best reading of the complete hand ``full`` (concealed counts incl. the winning tile
    ``w``), with ``nm`` melds of kinds ``mk`` / tiles ``mt``; ``(0, 0)`` when it has no reading.  A cap of 0
    means none.  ``work``: an int8 row of 34."""
    value, cap, _ = best_reading(full, work, w, mk, mt, nm, revealed, kong_position, how, last_tile, kc)
    return value, cap


@_jit
def best_reading(full, work, w, mk, mt, nm, revealed, kong_position, how, last_tile, kc):
    """:func:`best_value` and the code of the reading that gives it (:data:`mjenv.rules.hand.READING_TIE` set when
    another reading has the same key, -1 when there is none), which the engine's results are built from."""
    multiply = kc[KW_MULTIPLY] != 0
    # situational fans (§1.6): the same for every reading
    s_mul = 1
    s_sum = 0
    liang = revealed
    if revealed:
        s_mul *= kc[KW_V_LIANGDAO]
    if kong_position >= 1 and how != HOW_ROB:
        v = kc[KW_V_GANGKAI] if how == HOW_SELF_DRAW else kc[KW_V_GANGPAO]
        if kc[KW_GANG_STACK] != 0:
            v = _power(v, kong_position, True)
        s_mul *= v
        s_sum += v
    if how == HOW_ROB:
        s_mul *= kc[KW_V_QIANGGANG]
        s_sum += kc[KW_V_QIANGGANG]
    if last_tile and (
        (how == HOW_SELF_DRAW and kc[KW_HAIDI] >= 1) or (how == HOW_DISCARD and kc[KW_HAIDI] == 2)
    ):
        s_mul *= kc[KW_V_HAIDI]
        s_sum += kc[KW_V_HAIDI]
    # tiles of the whole hand: 清一色, meld triplets, 明四归一 (none of them depends on the reading)
    suits = 0
    total = 0
    for t in range(34):
        if full[t] > 0:
            suits |= 1 << (t // 9)
        total += full[t]
    meld_bits = np.int64(0)
    ming = 0
    for j in range(nm):
        suits |= 1 << (mt[j] // 9)
        meld_bits |= np.int64(1) << mt[j]
    qingyise = suits == 1 or suits == 2 or suits == 4
    for j in range(nm):
        if mk[j] == _PONG and full[mt[j]] >= 1 and _scope_ok(kc[KW_MING_SCOPE], w, mt[j], qingyise):
            ming += 1
    an_any = 0  # fours that qualify for 暗四归一 whatever the split
    four_bits = np.int64(0)
    fours = 0
    for t in range(34):
        if full[t] == 4:
            fours += 1
            if _scope_ok(kc[KW_AN_SCOPE], w, t, qingyise):
                four_bits |= np.int64(1) << t
                an_any += 1
    cap = kc[KW_CAP]
    best = np.int64(-1)
    best_value_ = 0
    best_cap = 0
    code = -1
    tie = False
    # standard readings: each pair, each split of the rest (handk.reading_split, the enumeration of
    # mjenv.rules.hand.readings)
    for p in range(34):
        if full[p] < 2:
            continue
        m = handk.reading_choices(full, p)
        for choice in range(1 << m):
            ok, trips, seqs, _ = handk.reading_split(full, work, p, choice, m)
            if not ok:
                continue
            # the reading's fans (kawuxing._reading_fans, standard branch)
            mul = s_mul
            sm = s_sum
            pengpeng, shz = _pengpeng_shouzhuayi(kc, nm, seqs, p, w)
            if pengpeng:
                mul *= kc[KW_V_PENGPENG]
                sm += kc[KW_V_PENGPENG]
            if qingyise:
                mul *= kc[KW_V_QINGYISE]
                sm += kc[KW_V_QINGYISE]
            all_trips = trips | meld_bits
            dragons = _dragon_triplets(all_trips)
            if dragons == 3:
                mul *= kc[KW_V_DASANYUAN]
                sm += kc[KW_V_DASANYUAN]
            elif dragons == 2 and p >= 31 and ((all_trips >> p) & 1) == 0:
                mul *= kc[KW_V_XIAOSANYUAN]
                sm += kc[KW_V_XIAOSANYUAN]
            if (w == 4 or w == 13 or w == 22) and ((seqs >> (w - 1)) & 1):
                mul *= kc[KW_V_KAWUXING]
                sm += kc[KW_V_KAWUXING]
            if ming:
                v = _power(kc[KW_V_MING_SIGUI], ming if kc[KW_SIGUI_EACH] != 0 else 1, multiply)
                mul *= v
                sm += v
            an = an_any
            if kc[KW_AN_SPLIT_ANY] == 0:
                an = 0
                bits = four_bits & trips
                while bits:
                    an += 1
                    bits &= bits - 1
            if an:
                v = _power(kc[KW_V_AN_SIGUI], an if kc[KW_SIGUI_EACH] != 0 else 1, multiply)
                mul *= v
                sm += v
            if shz:
                mul *= shz
                sm += shz
            value = mul if multiply else (sm if sm > 0 else kc[KW_V_PIHU]) * (kc[KW_V_LIANGDAO] if liang else 1)
            key = _key(value, cap)
            if key > best:
                best = key
                best_value_ = value
                best_cap = cap
                code = p << 5 | choice
                tie = False
            elif key == best:
                tie = True
    # seven pairs (no melds, 14 concealed tiles, every count even)
    if nm == 0 and total == 14:
        even = True
        for t in range(34):
            if full[t] % 2:
                even = False
        if even:
            mul = s_mul
            sm = s_sum
            if qingyise:
                mul *= kc[KW_V_QINGYISE]
                sm += kc[KW_V_QINGYISE]
            sl = False
            if fours >= 2 and kc[KW_SHUANGLONG] != 0:
                mul *= kc[KW_V_SHUANGLONG]
                sm += kc[KW_V_SHUANGLONG]
                sl = True
            elif fours > 0 and (kc[KW_LONGQIDUI_ANY] != 0 or full[w] == 4):
                mul *= kc[KW_V_LONGQIDUI]
                sm += kc[KW_V_LONGQIDUI]
            else:
                mul *= kc[KW_V_QIDUI]
                sm += kc[KW_V_QIDUI]
            value = mul if multiply else (sm if sm > 0 else kc[KW_V_PIHU]) * (kc[KW_V_LIANGDAO] if liang else 1)
            rcap = 16 if (cap == 8 and kc[KW_CAP_SL16] != 0 and sl) else cap
            key = _key(value, rcap)
            if key > best:
                best = key
                best_value_ = value
                best_cap = rcap
                code = _SEVEN_PAIRS << 5
                tie = False
            elif key == best:
                tie = True
    return best_value_, best_cap, (code | _TIE) if tie else code


@_jit
def reading_fans(full, work, w, mk, mt, nm, revealed, kong_position, how, last_tile, kc, code, row):
    """Write the fans of the reading of code ``code`` (as :func:`best_reading` returns it, without
    :data:`~mjenv.rules.hand.READING_TIE`) of the complete hand ``full`` into the fan row ``row``
    (:mod:`mjenv.engine.fanrow`: ids of ``kawuxing.FAN_ORDER`` and contributions, in that order, as
    ``kawuxing._reading_fans``, ``_situational_fans`` and ``_combine`` make them; 屁胡 when no fan applies), with
    the other arguments as :func:`best_reading`'s.  The value and cap are left to the caller."""
    multiply = kc[KW_MULTIPLY] != 0
    suits = 0
    for t in range(34):
        if full[t] > 0:
            suits |= 1 << (t // 9)
    meld_bits = np.int64(0)
    for j in range(nm):
        suits |= 1 << (mt[j] // 9)
        meld_bits |= np.int64(1) << mt[j]
    qingyise = suits == 1 or suits == 2 or suits == 4
    k = 0
    p = code >> 5
    if p == _SEVEN_PAIRS:
        fours = 0
        for t in range(34):
            if full[t] == 4:
                fours += 1
        if qingyise:
            k = fanrow.put(row, k, F_QINGYISE, kc[KW_V_QINGYISE])
        if fours >= 2 and kc[KW_SHUANGLONG] != 0:
            k = fanrow.put(row, k, F_SHUANGLONG, kc[KW_V_SHUANGLONG])
        elif fours > 0 and (kc[KW_LONGQIDUI_ANY] != 0 or full[w] == 4):
            k = fanrow.put(row, k, F_LONGQIDUI, kc[KW_V_LONGQIDUI])
        else:
            k = fanrow.put(row, k, F_QIDUI, kc[KW_V_QIDUI])
    else:
        _, trips, seqs, _ = handk.reading_split(full, work, p, code & 31, handk.reading_choices(full, p))
        pengpeng, shz = _pengpeng_shouzhuayi(kc, nm, seqs, p, w)
        if pengpeng:
            k = fanrow.put(row, k, F_PENGPENG, kc[KW_V_PENGPENG])
        if qingyise:
            k = fanrow.put(row, k, F_QINGYISE, kc[KW_V_QINGYISE])
        all_trips = trips | meld_bits
        dragons = _dragon_triplets(all_trips)
        if dragons == 3:
            k = fanrow.put(row, k, F_DASANYUAN, kc[KW_V_DASANYUAN])
        elif dragons == 2 and p >= 31 and ((all_trips >> p) & 1) == 0:
            k = fanrow.put(row, k, F_XIAOSANYUAN, kc[KW_V_XIAOSANYUAN])
        if (w == 4 or w == 13 or w == 22) and ((seqs >> (w - 1)) & 1):
            k = fanrow.put(row, k, F_KAWUXING, kc[KW_V_KAWUXING])
        ming = 0
        for j in range(nm):
            if mk[j] == _PONG and full[mt[j]] >= 1 and _scope_ok(kc[KW_MING_SCOPE], w, mt[j], qingyise):
                ming += 1
        if ming:
            v = _power(kc[KW_V_MING_SIGUI], ming if kc[KW_SIGUI_EACH] != 0 else 1, multiply)
            k = fanrow.put(row, k, F_MING_SIGUI, v)
        an = 0
        for t in range(34):
            if full[t] == 4 and _scope_ok(kc[KW_AN_SCOPE], w, t, qingyise) and (
                kc[KW_AN_SPLIT_ANY] != 0 or ((trips >> t) & 1) != 0
            ):
                an += 1
        if an:
            v = _power(kc[KW_V_AN_SIGUI], an if kc[KW_SIGUI_EACH] != 0 else 1, multiply)
            k = fanrow.put(row, k, F_AN_SIGUI, v)
        if shz:
            k = fanrow.put(row, k, F_SHOUZHUAYI, shz)
    # the situational fans (§1.6), in the same order
    if revealed:
        k = fanrow.put(row, k, F_LIANGDAO, kc[KW_V_LIANGDAO])
    if kong_position >= 1 and how != HOW_ROB:
        v = kc[KW_V_GANGKAI] if how == HOW_SELF_DRAW else kc[KW_V_GANGPAO]
        if kc[KW_GANG_STACK] != 0:
            v = _power(v, kong_position, True)
        k = fanrow.put(row, k, F_GANGKAI if how == HOW_SELF_DRAW else F_GANGPAO, v)
    if how == HOW_ROB:
        k = fanrow.put(row, k, F_QIANGGANG, kc[KW_V_QIANGGANG])
    if last_tile and (
        (how == HOW_SELF_DRAW and kc[KW_HAIDI] >= 1) or (how == HOW_DISCARD and kc[KW_HAIDI] == 2)
    ):
        k = fanrow.put(row, k, F_HAIDI, kc[KW_V_HAIDI])
    if k == 0:
        k = fanrow.put(row, k, F_PIHU, kc[KW_V_PIHU])
    row[fanrow.ROW_N] = k


@_jit
def payer_factor(kc, winner_revealed, payer_revealed):
    """f_P of §3.10 (``kawuxing.payer_factor``)."""
    if payer_revealed and winner_revealed and kc[KW_LIANG_VS_LIANG] != 0:
        return 2
    if payer_revealed and not winner_revealed and kc[KW_LIANG_LOSER_DOUBLE] != 0:
        return 2
    return 1


@_jit
def capped(value, cap):
    """min(value, cap), or value when the cap is 0 (none)."""
    return value if cap == 0 or value < cap else cap


@_jit
def claim_verdict(h, full, work, w, mk, mt, nm, how, kong_position, last_tile, revealed, discarder_revealed, konged, lock, kc):
    """``(legal, value_d)`` of a discard-type win (``how`` HOW_DISCARD or HOW_ROB) on tile ``w`` by a hand of
    concealed counts ``h`` (without ``w``); as ``score_win(...).legal`` / ``.value_d``.  ``konged``: the
    winner made a kong this hand; ``lock``: its missed-win lock value (0 = none).  ``full`` and ``work`` are
    int8 rows of 34 used as working space."""
    for t in range(34):
        full[t] = h[t]
    full[w] += 1
    value, _ = best_value(full, work, w, mk, mt, nm, revealed, kong_position, how, last_tile, kc)
    if value == 0:
        return False, 0
    value_d = value * payer_factor(kc, revealed, discarder_revealed)
    if how == HOW_ROB and kc[KW_QIANGGANG] == 0:
        return False, value_d
    if kc[KW_KAIKOU] != 0 and value_d < 2:
        has_kong = konged
        for j in range(nm):
            if mk[j] >= _DIRECT_KONG:
                has_kong = True
        if kc[KW_KAIKOU] == 2 or not has_kong:
            return False, value_d
    if lock != 0:
        if kc[KW_LOUHU_HIGHER] == 0 or value_d <= lock:
            return False, value_d
    return True, value_d


@njit(cache=True)
def fans_batch(fulls, ws, mks, mts, nms, revs, kps, hows, lasts, kc, rows):
    """:func:`best_reading` of each complete hand and, when one reading alone is best, its fans
    (:func:`reading_fans`) with V and the cap in ``rows[i]`` (a fan row; ``ROW_N`` 0 otherwise), for tests."""
    work = np.zeros(34, np.int8)
    for i in range(fulls.shape[0]):
        value, cap, code = best_reading(fulls[i], work, ws[i], mks[i], mts[i], nms[i], revs[i] != 0, kps[i], hows[i],
                                        lasts[i] != 0, kc)
        rows[i, fanrow.ROW_N] = 0
        if code >= 0 and code & _TIE == 0:
            reading_fans(fulls[i], work, ws[i], mks[i], mts[i], nms[i], revs[i] != 0, kps[i], hows[i], lasts[i] != 0,
                         kc, code, rows[i])
            rows[i, fanrow.ROW_VALUE] = value
            rows[i, fanrow.ROW_CAP] = cap


@njit(cache=True)
def verdict_batch(hs, ws, mks, mts, nms, hows, kps, lasts, revs, drevs, kongeds, locks, kc, legal, value_d):
    """:func:`claim_verdict` of each row (for tests and benchmarks)."""
    full = np.zeros(34, np.int8)
    work = np.zeros(34, np.int8)
    for i in range(hs.shape[0]):
        legal[i], value_d[i] = claim_verdict(
            hs[i], full, work, ws[i], mks[i], mts[i], nms[i], hows[i], kps[i], lasts[i] != 0, revs[i] != 0,
            drevs[i] != 0, kongeds[i] != 0, locks[i], kc,
        )
