"""The compiled game core: one table's state machine as numba functions over the packed state.

This module owns the common rules of docs/rules/common.md §1.7–§1.9 as they run in the engine: the
deal, draws, discards, 亮倒 discards, claim windows (who may win, pong, kong or chi a discard or rob
an added kong, asked in turn order, then resolved by priority), pongs, chis, the three kongs with
their chain positions and the revealed-kong test, Gejiu's face-up kong tiles, the legal-action masks
and the automatic moves (a state with a single legal action is played at once).  Every function
works on ONE table ``b`` of the packed buffers of :func:`mjenv.engine.state.allocate_packed`; the
entry point (``run_tables``) loops over a list of tables, so a batch of 4096 tables and the AEC
env's single table run the same code.  There is one entry point per set of compiled scorers
(:func:`kernel_for`; :data:`run_tables` holds them all), made from one source, so that a start compiles
only its own family's scorer (cold starts: docs/benchmarks.md, "Start-up").  The kernels run
without numba's reference counting (``_nrt=False``): they allocate nothing and make no array they return,
and the atomic increments of views passed between functions had cost about half of their time.

What needs the pure scoring library (:mod:`mjenv.rules.scoring`) is not compiled: the kernel stops
that table with a *pending* code in ``pend[b, 0]`` (and its arguments in ``pend[b, 1:]``), the
engine (:mod:`mjenv.engine.core`) does that piece in Python through the family adapter and calls
:func:`run_tables` in ``MODE_RESUME``, which carries on exactly where the table stopped.  Pendings:

========================  ===================================================================
``P_WINDOW``              score the seats (bits in ``pend[b,1]``) that complete on the claimed tile
                          (not for Kawuxing: :mod:`mjenv.engine.kwscore` judges and values them here;
                          not for Yangzhou: :mod:`mjenv.engine.yzscore` judges them here;
                          not for Gejiu, where every complete shape wins: :func:`_shape_window`;
                          not for Diedaohu / Liuwei, where the lock and a busted discarder decide:
                          :func:`_louhu_window`)
``P_KONG``                kong money in Python (``KONG_MONEY_PYTHON``; no family uses it now: Kawuxing's
                          is compiled, Diedaohu's and Liuwei's, limited by the bankrolls, too:
                          :func:`_bankroll_kong`)
``P_MASK_SCORE``          a self-draw's minimum value for the win mask (no longer raised: Yangzhou's
                          is judged here by :mod:`mjenv.engine.yzscore`; kept for a family that needs it)
``P_SELF_DRAW``           settle a self-drawn win (ends the hand; not for Gejiu: :func:`_gj_end`)
``P_CLAIM_WIN``           settle a won discard or rob (ends the hand; not for Gejiu: :func:`_gj_end`)
``P_EXHAUSTED``           settle a drawn hand (ends the hand); no family stops for it now (below)
``P_ENDED``               the hand was settled and ended here, ``pend[b,1]`` says how (``END_*``): every
                          Kawuxing hand end (:func:`_kw_end`), every Gejiu hand end (wins valued by
                          :mod:`mjenv.engine.gjscore`: :func:`_gj_end`) and the drawn hands of the families
                          whose drawn hands pay nothing (:func:`_draw_end`: Gejiu, Diedaohu, Yangzhou, Liuwei);
                          the engine only books it (match money, the session, a ``results`` entry built
                          when read)
========================  ===================================================================

Yangzhou's judging needs the round wind, which the session (kept by the engine) decides: the engine writes it
into the spare column ``pend[b, PEND_ROUND_WIND]`` when it deals a hand, and no pending overwrites it.

Events are written as int16 records ``ev[b, k] = (type, a, b, c, d)`` (``EV_*``); the engine turns
them into the documented dicts only when they are read.

The order of every state change equals the numpy engine this replaced (kept as the test oracle in
tests/reference_engine.py; tests/differential.py compares the two step by step).
"""

from __future__ import annotations

import inspect

import numba
import numpy as np
from numba.core import types as nb_types
from numba.extending import overload

from mjenv.engine import gjscore, handk, kwscore, yzscore
from mjenv.engine.jit import njit
from mjenv.engine.state import (
    ADDED_KONG,
    CHI_MELD,
    CLAIM,
    CLAIMED,
    CONCEALED_KONG,
    DIRECT_KONG,
    DONE,
    MAX_MELDS,
    MAX_RIVER,
    O8_ACTOR,
    O8_AFTER_KONG,
    O8_CLAIM_FROM,
    O8_CLAIM_KONG_POS,
    O8_CLAIM_OPTS,
    O8_CLAIM_REPLY,
    O8_CLAIM_TILE,
    O8_CUR,
    O8_DADIAOCHE,
    O8_DEALER,
    O8_DRAWN,
    O8_HAND,
    O8_HIDDEN,
    O8_KONG_COUNT,
    O8_KONG_TILES,
    O8_MELD_KIND,
    O8_MELD_SRC,
    O8_MELD_TILE,
    O8_MELDED,
    O8_N_MELDS,
    O8_PHASE,
    O8_REVEAL_SEQ,
    O8_REVEALED,
    O8_RIVER,
    O8_ROB_REPLACEMENT,
    O8_TURNS,
    O8_WALL,
    O16_BACK,
    O16_CLAIM_VALUE,
    O16_FRONT,
    O16_LOCK,
    O16_N_DISCARDS,
    O16_RIVER_LEN,
    O16_RIVER_TIME,
    PICK,
    PONG_MELD,
    ROB,
    TURN,
)

# Action ids (mjenv.encoding.actions; repeated as plain ints so that they compile as constants).
A_LIANG, A_KONG_SELF, A_PONG, A_KONG_CLAIM = 34, 68, 102, 103
A_CHI_LOW, A_CHI_HIGH, A_WIN, A_PASS, A_KONGTILE_0, A_KONGTILE_1 = 104, 106, 107, 108, 109, 110
N_ACTIONS = 111

# Pending codes (see the module docstring).
P_NONE, P_WINDOW, P_KONG, P_MASK_SCORE, P_SELF_DRAW, P_CLAIM_WIN, P_EXHAUSTED, P_ENDED = range(8)
PEND_ROUND_WIND = 6  # Yangzhou: the round wind's tile id (27..30), set by the engine at each deal
PEND_WIDTH = 7
# How a hand settled in the kernel ended (``pend[b, 1]`` with P_ENDED, ``a`` of its EV_END record).
END_DRAW, END_SELF_DRAW, END_DISCARD, END_ROB = 1, 2, 3, 4

# Event record types.
EV_DEAL, EV_DRAW, EV_DISCARD, EV_REPLY, EV_PONG, EV_CHI, EV_ADD_KONG, EV_KONG, EV_PICK, EV_REVEAL, EV_PY, EV_COUNTS, EV_END = range(1, 14)
# EV_REVEAL is followed by two EV_COUNTS records holding the shown hand, 6 counts per field in base 5.
EV_WIDTH = 5
EV_CAPACITY = 640  # per hand: < 136 draws, as many discards, (n-1) replies each, kongs, the end

# The configuration vector (one int64 per entry), built by the engine from the family and the options.
(
    C_N,
    C_WALL,
    C_SEVEN_PAIRS,
    C_LIANG,
    C_CHI,
    C_ROB_ADDED,
    C_ROB_REPLACEMENT,
    C_KONG_TILES,
    C_SELF_DRAW_MINIMUM,
    C_LIANG_KONG,
    C_ANGANG_IMMEDIATE,
    C_KONG_LINK,
    C_HIDE_TRIPLETS,
    C_KONG_MONEY,
    C_RECORD,
    C_KINDS_BITS,
    C_SPECIAL,
    C_KW_SCORE,  # Kawuxing: claim-window wins judged and valued, hand ends settled here (mjenv.engine.kwscore)
) = range(18)
C_KW = 18  # first of the kwscore.N_KW option entries (kwscore.config)
C_YZ = C_KW + kwscore.N_KW  # first of the yzscore.N_YZ entries (yzscore.config; all 0 unless Yangzhou)
# The other 4-player families (after Yangzhou's entries; see _draw_end, _bankroll_kong, _open_window, _gj_end):
C_DRAW_ENDS = C_YZ + yzscore.N_YZ  # a drawn hand pays nothing: it is ended here (P_ENDED, END_DRAW)
C_WIN_ON_SHAPE = C_DRAW_ENDS + 1  # Gejiu: every complete shape on a claimed or robbed tile is a legal win
C_KONG_ALL_PAY = C_DRAW_ENDS + 2  # KONG_MONEY_BANKROLL: a direct kong is paid by every other seat (Liuwei)
C_KONG_LIMIT = C_DRAW_ENDS + 3  # KONG_MONEY_BANKROLL: payments limited by the balances (园子)
C_GJ_SCORE = C_DRAW_ENDS + 4  # Gejiu: wins valued (mjenv.engine.gjscore) and settled here (_gj_end)
C_GJ_COMBINE = C_DRAW_ENDS + 5  # Gejiu: gejiu_combine (gjscore.COMBINE)
C_SINGLE_WINNER = C_DRAW_ENDS + 6  # Gejiu: multi_win off (only the nearest claimant wins)
C_LOUHU_WINDOW = C_DRAW_ENDS + 7  # Diedaohu / Liuwei: claim-window wins judged here (_louhu_window), LOUHU_* bits
LOUHU_JUDGE, LOUHU_ON, LOUHU_BANKROLL = 1, 2, 4  # judged here; ``louhu`` on; a bankroll (园子): busted discarders
N_CONFIG = C_DRAW_ENDS + 8
LIANG_KONG_NONE, LIANG_KONG_KEEP_READY, LIANG_KONG_SAME_WAITS = 0, 1, 2
LINK_SELF_CONSECUTIVE, LINK_CHAIN, LINK_PER_HAND = 1, 2, 3
KONG_MONEY_NONE, KONG_MONEY_COMPILED, KONG_MONEY_PYTHON, KONG_MONEY_BANKROLL = 0, 1, 2, 3
# The float configuration vector: the kong money per payer by meld kind code (Kawuxing: at chain position 1,
# in units of b; KONG_MONEY_BANKROLL: the amount owed, b included).
F_KONG_DIRECT, F_KONG_ADDED, F_KONG_CONCEALED, F_KONG_DOUBLING = 0, 1, 2, 3
N_FCONFIG = 5  # ... and the base stake b at F_KONG_DOUBLING + 1 (F_BASE; Kawuxing and Gejiu)
F_BASE = F_KONG_DOUBLING + 1
# After the N_FCONFIG entries the engine's float vector holds every table's bankroll balance at the start of
# the hand (``Engine.balance`` is a view of it): seat p of table b at N_FCONFIG + C_N * b + p.
F_BALANCE = N_FCONFIG

_jit = njit(cache=True, _nrt=False)


# ----------------------------------------------------------------------------------------- events
@_jit
def _event(ev, evn, cfg, b, kind, a0, a1, a2, a3):
    if cfg[C_RECORD] == 0:
        return
    k = evn[b]
    if k < ev.shape[1]:
        ev[b, k, 0] = kind
        ev[b, k, 1] = a0
        ev[b, k, 2] = a1
        ev[b, k, 3] = a2
        ev[b, k, 4] = a3
    evn[b] = k + 1


@_jit
def _counts_events(ev, evn, cfg, b, h):
    """Two EV_COUNTS records holding the 34 counts ``h`` (6 per field, base 5)."""
    _event(ev, evn, cfg, b, EV_COUNTS, _base5(h, 0), _base5(h, 6), _base5(h, 12), _base5(h, 18))
    _event(ev, evn, cfg, b, EV_COUNTS, _base5(h, 24), _base5(h, 30), 0, 0)


@_jit
def _base5(h, start):
    v = 0
    for x in range(min(start + 6, 34) - 1, start - 1, -1):
        v = v * 5 + h[x]
    return v


# ----------------------------------------------------------------------------------------- deal
@_jit
def deal_tables(b8, b16, money, fresh8, fresh16, idx, walls, dealers, cfg, ev, evn, mask):
    """Clear tables ``idx`` and deal wall ``walls[j]`` with dealer ``dealers[j]`` (docs/rules/common.md §1.6)."""
    n = cfg[C_N]
    W = cfg[C_WALL]
    for j in range(idx.shape[0]):
        b = idx[j]
        r8 = b8[b]
        r16 = b16[b]
        for i in range(fresh8.shape[0]):
            r8[i] = fresh8[i]
        for i in range(fresh16.shape[0]):
            r16[i] = fresh16[i]
        for i in range(money.shape[1]):
            money[b, i] = 0.0
        for i in range(W):
            r8[O8_WALL + i] = walls[j, i]
        d = dealers[j]
        for k in range(n):
            seat = (d + k) % n
            for i in range(13):
                t = walls[j, 13 * k + i]
                r8[O8_HAND + 34 * seat + t] += 1
        fourteenth = walls[j, 13 * n]
        r8[O8_HAND + 34 * d + fourteenth] += 1
        r16[O16_FRONT] = 13 * n + 1
        r16[O16_BACK] = W
        if cfg[C_KONG_TILES] > 0:
            # Gejiu §6.3: the last two wall tiles are turned face up as kong tiles right after the deal.
            r8[O8_KONG_TILES] = walls[j, W - 1]
            r8[O8_KONG_TILES + 1] = walls[j, W - 2]
            r16[O16_BACK] = W - 2
        r8[O8_DEALER] = d
        r8[O8_CUR] = d
        r8[O8_ACTOR] = d
        r8[O8_PHASE] = TURN
        r8[O8_DRAWN] = fourteenth
        for a in range(N_ACTIONS):
            mask[b, a] = False
        evn[b] = 0
        _event(ev, evn, cfg, b, EV_DEAL, d, 0, 0, 0)


@_jit
def _splitmix(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@_jit
def seeded_walls(seed, table_ids, tiles, out):
    """Write into ``out[j]`` the wall of table id ``table_ids[j]`` under ``seed``: a Fisher–Yates shuffle of
    ``tiles`` (ascending tile ids) driven by SplitMix64 seeded with ``mix(mix(seed) ^ table_id)``.

    ``seed`` and the ids are taken modulo 2**64.  See :func:`mjenv.engine.core.seeded_wall` for the
    same function in plain Python.
    """
    W = tiles.shape[0]
    for j in range(table_ids.shape[0]):
        _, s0 = _splitmix(np.uint64(seed))
        state, _ = _splitmix(s0 ^ np.uint64(table_ids[j]))
        row = out[j]
        for i in range(W):
            row[i] = tiles[i]
        for i in range(W - 1, 0, -1):
            state, r = _splitmix(state)
            k = np.int64(r % np.uint64(i + 1))
            t = row[i]
            row[i] = row[k]
            row[k] = t


# ----------------------------------------------------------------------------------------- helpers
@numba.njit(cache=True, _nrt=False, inline="always")
def _hand(r8, s):
    return r8[O8_HAND + 34 * s : O8_HAND + 34 * s + 34]


@_jit
def _wait_bits(h, owned, cfg, tabs):
    """hand.wait_mask(h, seven_pairs, kinds, owned) as bits."""
    return handk.wait_bits(h, cfg[C_SEVEN_PAIRS] != 0, tabs) & cfg[C_KINDS_BITS] & handk.owned_bits(owned)


@_jit
def _revealed_kong_ok(r8, cfg, tabs, scr, s, t, kind):
    """§3.6 D3 ``liang_kong`` test for a revealed player's kong of ``t`` (``kind``: a *_KONG code)."""
    rule = cfg[C_LIANG_KONG]
    if rule == LIANG_KONG_NONE:
        return False
    h = _hand(r8, s)
    owned = scr[0]
    owned_after = scr[1]
    after = scr[2]
    for x in range(34):
        owned[x] = h[x] + r8[O8_MELDED + 34 * s + x]
        owned_after[x] = owned[x]
        after[x] = h[x]
    owned_after[t] = 4  # after the kong all four copies are the player's
    after[t] -= 3 if kind == DIRECT_KONG else (4 if kind == CONCEALED_KONG else 1)
    w_after = _wait_bits(after, owned_after, cfg, tabs)
    if rule == LIANG_KONG_KEEP_READY:
        return w_after != 0
    before = scr[3]
    for x in range(34):
        before[x] = h[x]
    if kind != DIRECT_KONG:
        drawn = r8[O8_DRAWN]
        before[drawn] -= 1  # the wait set the player revealed, before this turn's draw
        owned[drawn] -= 1
    w_before = _wait_bits(before, owned, cfg, tabs)
    return w_after != 0 and w_before == w_after


@_jit
def _hideable_triplets(r8, cfg, tabs, scr, s):
    """§3.6 D2 (``kawuxing.hideable_triplets``): bits of the largest set of concealed triplets of seat ``s``
    (after its 亮倒 discard) that may stay face down — the waits without them, each counted as a completed
    set, equal the waits with them; among sets of one size the first in lexicographic order of tile ids."""
    h = _hand(r8, s)
    owned = scr[0]
    rest = scr[1]
    total = 0
    for x in range(34):
        owned[x] = h[x] + r8[O8_MELDED + 34 * s + x]
        total += h[x]
    owned_keep = handk.owned_bits(owned) & cfg[C_KINDS_BITS]
    waits = handk.wait_bits(h, total == 13, tabs) & owned_keep
    if waits == 0:
        return 0
    trip = 0  # the triplet tiles, 6 bits each, in ascending order
    m = 0
    for x in range(34):
        if h[x] == 3 and m < 4:
            trip |= x << (6 * m)
            m += 1
    best = 0
    best_size = 0
    best_key = -1
    for subset in range(1, 1 << m):
        size = 0
        key = 0
        for i in range(m):
            if (subset >> i) & 1:
                size += 1
                key |= 1 << (m - 1 - i)  # for equal sizes, a larger key is the lexicographically earlier set
        if size < best_size or (size == best_size and key < best_key):
            continue
        for x in range(34):
            rest[x] = h[x]
        for i in range(m):
            if (subset >> i) & 1:
                rest[(trip >> (6 * i)) & 63] -= 3
        if handk.wait_bits(rest, False, tabs) & owned_keep == waits:
            best_size = size
            best_key = key
            best = 0
            for i in range(m):
                if (subset >> i) & 1:
                    best |= np.int64(1) << ((trip >> (6 * i)) & 63)
    return best


@_jit
def _complete_with(r8, cfg, tabs, s, t):
    """Seat ``s``'s concealed hand plus tile ``t`` is a winning shape (incl. special shapes)."""
    h = _hand(r8, s)
    h[t] += 1
    comp = handk.is_complete(h, cfg[C_SEVEN_PAIRS] != 0, tabs)
    if not comp and cfg[C_SPECIAL] != 0:
        comp = handk.lanpai(h)
    h[t] -= 1
    return comp


# ----------------------------------------------------------------------------------------- draws and discards
@_jit
def _draw(E, b, seat):
    """Normal draw for ``seat``; an empty wall ends the hand as a drawn hand (pending)."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    if r16[O16_FRONT] >= r16[O16_BACK]:
        return P_EXHAUSTED
    t = r8[O8_WALL + r16[O16_FRONT]]
    r16[O16_FRONT] += 1
    r8[O8_CLAIM_TILE] = -1
    r8[O8_CLAIM_FROM] = -1
    r8[O8_HAND + 34 * seat + t] += 1
    r8[O8_DRAWN] = t
    r16[O16_LOCK + seat] = 0
    r8[O8_DADIAOCHE + seat] = -1
    r8[O8_CUR] = seat
    r8[O8_ACTOR] = seat
    r8[O8_PHASE] = TURN
    r8[O8_AFTER_KONG] = 0
    _event(ev, evn, cfg, b, EV_DRAW, seat, t, 0, 0)
    return P_NONE


@_jit
def _discard(E, b, t, liang):
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    s = r8[O8_CUR]
    h = _hand(r8, s)
    h[t] -= 1
    pos = r16[O16_RIVER_LEN + s]
    r8[O8_RIVER + MAX_RIVER * s + pos] = t
    r16[O16_RIVER_TIME + MAX_RIVER * s + pos] = r16[O16_N_DISCARDS]
    r16[O16_RIVER_LEN + s] += 1
    r16[O16_N_DISCARDS] += 1
    r8[O8_CLAIM_KONG_POS] = r8[O8_AFTER_KONG]
    r8[O8_AFTER_KONG] = 0
    r8[O8_DRAWN] = -1
    r8[O8_TURNS + s] += 1
    # 大吊车 (Yangzhou family §7.6): a locked player left holding only the tile it just discarded may win on it.
    single = False
    if r16[O16_LOCK + s] > 0 and h[t] == 1:
        total = 0
        for x in range(34):
            total += h[x]
        single = total == 1
    r8[O8_DADIAOCHE + s] = t if single else -1
    _event(ev, evn, cfg, b, EV_DISCARD, s, t, 1 if liang else 0, 0)
    if liang:
        nrev = 0
        for x in range(cfg[C_N]):
            nrev += r8[O8_REVEALED + x]
        r8[O8_REVEAL_SEQ + s] = nrev
        r8[O8_REVEALED + s] = 1
        hide = _hideable_triplets(r8, cfg, tabs, scr, s) if cfg[C_HIDE_TRIPLETS] != 0 else 0
        shown = scr[3]
        face_down = 0
        for x in range(34):
            hidden = (hide >> x) & 1
            r8[O8_HIDDEN + 34 * s + x] = hidden
            shown[x] = h[x] - 3 * hidden
            face_down += 3 * hidden
        _event(ev, evn, cfg, b, EV_REVEAL, s, face_down, 0, 0)
        _counts_events(ev, evn, cfg, b, shown)
    return _open_window(E, b, t, s, False)


# ----------------------------------------------------------------------------------------- claim windows
@_jit
def _open_window(E, b, t, frm, rob):
    """Find who may claim ``t`` discarded (or added-konged) by ``frm``; scoring of complete hands is pending."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    n = cfg[C_N]
    r8[O8_CLAIM_TILE] = t
    r8[O8_CLAIM_FROM] = frm
    for s in range(n):
        r8[O8_CLAIM_REPLY + s] = -1
        r8[O8_CLAIM_OPTS + s] = 0
        r16[O16_CLAIM_VALUE + s] = 0
    can = r16[O16_BACK] > r16[O16_FRONT]
    to_score = 0
    for k in range(1, n):
        s = (frm + k) % n
        h = _hand(r8, s)
        cnt = h[t]
        if _complete_with(r8, cfg, tabs, s, t):
            to_score |= 1 << s
        opts = 0
        if not rob and can:
            rev = r8[O8_REVEALED + s] != 0
            if cnt >= 2 and not rev:
                opts |= 2
            if cnt == 3 and (not rev or _revealed_kong_ok(r8, cfg, tabs, scr, s, t, DIRECT_KONG)):
                opts |= 4
            if k == 1 and cfg[C_CHI] != 0 and t < 27:
                rank = t % 9
                if rank <= 6 and h[t + 1] > 0 and h[t + 2] > 0:
                    opts |= 8
                if 1 <= rank <= 7 and h[t - 1] > 0 and h[t + 1] > 0:
                    opts |= 16
                if rank >= 2 and h[t - 2] > 0 and h[t - 1] > 0:
                    opts |= 32
        r8[O8_CLAIM_OPTS + s] = opts
    r8[O8_PHASE] = ROB if rob else CLAIM
    if to_score:
        if cfg[C_KW_SCORE] != 0 and _kw_window_if(E, b, t, frm, rob, to_score):
            return _next_claimant(E, b)
        if cfg[C_YZ + yzscore.YZ_ON] != 0:
            _yz_window_if(E, b, t, to_score)
            return _next_claimant(E, b)
        if cfg[C_LOUHU_WINDOW] != 0:
            _louhu_window(E, b, t, frm, to_score)
            return _next_claimant(E, b)
        if cfg[C_WIN_ON_SHAPE] != 0:
            _shape_window(E, b, to_score)
            return _next_claimant(E, b)
        pend[b, 1] = to_score
        pend[b, 2] = 1 if rob else 0
        return P_WINDOW
    return _next_claimant(E, b)


@_jit
def _kw_window(E, b, t, frm, rob, bits):
    """Kawuxing: judge and value the wins of seats ``bits`` on ``t`` as the engine's P_WINDOW handler does
    (legal → claim bit 1 and the value V_D ≥ 1 the lock keeps).  False (nothing changed) when a value does
    not fit the int16 claim value: the window is then left to Python, which raises as before."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    n = cfg[C_N]
    kc = cfg[C_KW : C_KW + kwscore.N_KW]
    how = kwscore.HOW_ROB if rob else kwscore.HOW_DISCARD
    kp = 0 if rob else r8[O8_CLAIM_KONG_POS]
    last = (not rob) and r16[O16_FRONT] >= r16[O16_BACK]
    drev = r8[O8_REVEALED + frm] != 0
    for s in range(n):
        if (bits >> s) & 1:
            legal, vd = kwscore.claim_verdict(
                _hand(r8, s), scr[0], scr[1], t,
                r8[O8_MELD_KIND + MAX_MELDS * s : O8_MELD_KIND + MAX_MELDS * s + MAX_MELDS],
                r8[O8_MELD_TILE + MAX_MELDS * s : O8_MELD_TILE + MAX_MELDS * s + MAX_MELDS],
                r8[O8_N_MELDS + s], how, kp, last, r8[O8_REVEALED + s] != 0, drev,
                r8[O8_KONG_COUNT + s] > 0, r16[O16_LOCK + s], kc,
            )
            if legal:
                if vd > kwscore.VALUE_LIMIT:
                    for x in range(n):
                        r8[O8_CLAIM_OPTS + x] &= ~1
                        r16[O16_CLAIM_VALUE + x] = 0
                    return False
                r8[O8_CLAIM_OPTS + s] |= 1
                r16[O16_CLAIM_VALUE + s] = max(1, vd)
    return True


@_jit
def _yz_window(E, b, t, bits):
    """Yangzhou: judge the wins of seats ``bits`` on ``t`` as the engine's P_WINDOW handler does (legal →
    claim bit 1 and the plain lock flag 1 as claim value)."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    yc = cfg[C_YZ : C_YZ + yzscore.N_YZ]
    dealer = r8[O8_DEALER]
    for s in range(cfg[C_N]):
        if (bits >> s) & 1:
            if yzscore.claim_legal(
                _hand(r8, s), scr[0], scr[1], scr[2], np.int64(t),
                r8[O8_MELD_KIND + MAX_MELDS * s : O8_MELD_KIND + MAX_MELDS * s + MAX_MELDS],
                r8[O8_MELD_TILE + MAX_MELDS * s : O8_MELD_TILE + MAX_MELDS * s + MAX_MELDS],
                r8[O8_N_MELDS + s], np.int64(27 + (s - dealer + 4) % 4), pend[b, PEND_ROUND_WIND],
                r16[O16_LOCK + s] > 0, r8[O8_DADIAOCHE + s], yc, tabs,
            ):
                r8[O8_CLAIM_OPTS + s] |= 1
                r16[O16_CLAIM_VALUE + s] = 1


@_jit
def _yz_self_draw(E, b, s, w):
    """Yangzhou: the self-draw of seat ``s`` on ``w`` reaches the fan minimum (the engine's P_MASK_SCORE)."""
    r8 = E[0][b]
    scr = E[9]
    # (int64 tile and winds as in _yz_window: one compiled specialization of yzscore.best serves both)
    return yzscore.self_draw_legal(
        _hand(r8, s), scr[3], scr[0], scr[1], scr[2], np.int64(w),
        r8[O8_MELD_KIND + MAX_MELDS * s : O8_MELD_KIND + MAX_MELDS * s + MAX_MELDS],
        r8[O8_MELD_TILE + MAX_MELDS * s : O8_MELD_TILE + MAX_MELDS * s + MAX_MELDS],
        r8[O8_N_MELDS + s], np.int64(27 + (s - r8[O8_DEALER] + 4) % 4), E[4][b, PEND_ROUND_WIND],
        E[7][C_YZ : C_YZ + yzscore.N_YZ], E[8],
    )


@_jit
def _louhu_window(E, b, t, frm, bits):
    """Diedaohu / Liuwei (§7.6, §7.7, ``diedaohu.win_refusal``): a seat of ``bits`` whose hand completes on ``t``
    may win it unless its missed-win lock forbids (大吊车 tile excepted) or the discarder (robbed konger) is
    busted under 园子, as the engine's P_WINDOW handler found (claim bit 1, value 1)."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    n = cfg[C_N]
    rule = cfg[C_LOUHU_WINDOW]
    if rule & LOUHU_BANKROLL and fcfg[F_BALANCE + n * b + frm] + money[b, frm] <= 1e-9:
        return  # the busted discarder's tiles cannot be won on
    for s in range(n):
        if (bits >> s) & 1:
            dd = r8[O8_DADIAOCHE + s]
            if rule & LOUHU_ON and r16[O16_LOCK + s] > 0 and (dd < 0 or t != dd):
                continue
            r8[O8_CLAIM_OPTS + s] |= 1
            r16[O16_CLAIM_VALUE + s] = 1


@_jit
def _shape_window(E, b, bits):
    """Gejiu (§6.4, §6.8: no minimum, no missed-win lock, a rob of the allowed kind): every seat of ``bits``
    whose hand completes on the tile may win it, as the engine's P_WINDOW handler found (claim bit 1, value 1)."""
    r8 = E[0][b]
    r16 = E[1][b]
    for s in range(E[7][C_N]):
        if (bits >> s) & 1:
            r8[O8_CLAIM_OPTS + s] |= 1
            r16[O16_CLAIM_VALUE + s] = 1


@_jit
def _next_claimant(E, b):
    """Point the window at its next unanswered eligible seat in turn order; resolve a finished window."""
    r8 = E[0][b]
    n = E[7][C_N]
    frm = r8[O8_CLAIM_FROM]
    for k in range(1, n):
        s = (frm + k) % n
        if r8[O8_CLAIM_OPTS + s] > 0 and r8[O8_CLAIM_REPLY + s] < 0:
            r8[O8_ACTOR] = s
            return P_NONE
    return _resolve(E, b)


@_jit
def _reply(E, b, a):
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    s = r8[O8_ACTOR]
    r8[O8_CLAIM_REPLY + s] = a
    if (r8[O8_CLAIM_OPTS + s] & 1) and a != A_WIN:
        v = max(r16[O16_CLAIM_VALUE + s], 1)
        if v > r16[O16_LOCK + s]:
            r16[O16_LOCK + s] = v
    _event(ev, evn, cfg, b, EV_REPLY, s, a, 0, 0)
    return _next_claimant(E, b)


@_jit
def _resolve(E, b):
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    n = cfg[C_N]
    frm = r8[O8_CLAIM_FROM]
    wins = False
    claims = False
    for s in range(n):
        a = r8[O8_CLAIM_REPLY + s]
        if a == A_WIN:
            wins = True
        elif a == A_PONG or a == A_KONG_CLAIM or (A_CHI_LOW <= a <= A_CHI_HIGH):
            claims = True
    if wins:
        return P_CLAIM_WIN
    if not claims:
        for s in range(n):
            r8[O8_CLAIM_OPTS + s] = 0
        if r8[O8_PHASE] == CLAIM:
            return _draw(E, b, (frm + 1) % n)
        if r8[O8_ROB_REPLACEMENT] != 0:  # nobody took the replacement tile: the konger plays on
            r8[O8_ROB_REPLACEMENT] = 0
            r8[O8_PHASE] = TURN
            r8[O8_ACTOR] = r8[O8_CUR]
            r8[O8_CLAIM_TILE] = -1
            return P_NONE
        return _complete_kong(E, b, r8[O8_CUR], r8[O8_CLAIM_TILE], ADDED_KONG, -1)
    for k in range(1, n):
        s = (frm + k) % n
        a = r8[O8_CLAIM_REPLY + s]
        if a == A_PONG:
            return _claim_meld(E, b, s, PONG_MELD, r8[O8_CLAIM_TILE])
        if a == A_KONG_CLAIM:
            return _direct_kong(E, b, s)
    # chi has the lowest priority (§1.8) and only the next player may chi
    s = (frm + 1) % n
    return _claim_meld(E, b, s, CHI_MELD, r8[O8_CLAIM_TILE] - (r8[O8_CLAIM_REPLY + s] - A_CHI_LOW))


@_jit
def _take_discard(r8, r16):
    """Remove the tile under claim from its discarder's river (it is always the last one)."""
    frm = r8[O8_CLAIM_FROM]
    r16[O16_RIVER_LEN + frm] -= 1
    r8[O8_RIVER + MAX_RIVER * frm + r16[O16_RIVER_LEN + frm]] = -1
    return r8[O8_CLAIM_TILE]


@_jit
def _add_meld(r8, s, kind, t, src):
    j = r8[O8_N_MELDS + s]
    r8[O8_MELD_KIND + MAX_MELDS * s + j] = kind
    r8[O8_MELD_TILE + MAX_MELDS * s + j] = t
    r8[O8_MELD_SRC + MAX_MELDS * s + j] = src
    r8[O8_N_MELDS + s] = j + 1
    if kind == CHI_MELD:
        for x in range(t, t + 3):
            r8[O8_MELDED + 34 * s + x] += 1
    else:
        r8[O8_MELDED + 34 * s + t] += 4 if kind >= DIRECT_KONG else 3


@_jit
def _claim_meld(E, b, s, kind, low):
    """Seat ``s`` pongs or chis the tile under claim (meld starting at ``low``) and must discard next."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    t = _take_discard(r8, b16[b])
    frm = r8[O8_CLAIM_FROM]
    h = _hand(r8, s)
    if kind == PONG_MELD:
        h[t] -= 2
    else:
        for x in range(low, low + 3):
            if x != t:
                h[x] -= 1
    _add_meld(r8, s, kind, low, frm)
    for x in range(cfg[C_N]):
        r8[O8_CLAIM_OPTS + x] = 0
    r8[O8_CLAIM_TILE] = -1
    r8[O8_CLAIM_FROM] = -1
    r8[O8_CUR] = s
    r8[O8_ACTOR] = s
    r8[O8_PHASE] = CLAIMED
    r8[O8_DRAWN] = -1
    r8[O8_AFTER_KONG] = 0
    if kind == PONG_MELD:
        _event(ev, evn, cfg, b, EV_PONG, s, t, frm, 0)
    else:
        _event(ev, evn, cfg, b, EV_CHI, s, t, frm, low)
    return P_NONE


@_jit
def _direct_kong(E, b, s):
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    t = _take_discard(r8, b16[b])
    frm = r8[O8_CLAIM_FROM]
    r8[O8_HAND + 34 * s + t] -= 3
    r8[O8_HIDDEN + 34 * s + t] = 0  # a face-down triplet konged is shown as the kong
    _add_meld(r8, s, DIRECT_KONG, t, frm)
    for x in range(cfg[C_N]):
        r8[O8_CLAIM_OPTS + x] = 0
    return _finish_kong(E, b, s, t, DIRECT_KONG, frm)


# ----------------------------------------------------------------------------------------- kongs
@_jit
def _kong_position(r8, cfg, s, direct):
    """Chain position of a kong now made by ``s`` (docs/rules/kawuxing.md §3.5 linking)."""
    link = cfg[C_KONG_LINK]
    if link == LINK_PER_HAND:
        return r8[O8_KONG_COUNT + s] + 1
    if not direct and r8[O8_AFTER_KONG] > 0 and r8[O8_CUR] == s:
        return r8[O8_AFTER_KONG] + 1
    if direct and link == LINK_CHAIN and r8[O8_CLAIM_KONG_POS] > 0:
        return r8[O8_CLAIM_KONG_POS] + 1
    return 1


@_jit
def _self_kong(E, b, t):
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    s = r8[O8_CUR]
    if r8[O8_HAND + 34 * s + t] == 4:
        r8[O8_HAND + 34 * s + t] = 0
        _add_meld(r8, s, CONCEALED_KONG, t, -1)
        r8[O8_HIDDEN + 34 * s + t] = 0
        return _finish_kong(E, b, s, t, CONCEALED_KONG, -1)
    # Added kong: the rob window opens before the kong is laid down (§3.5).
    _event(ev, evn, cfg, b, EV_ADD_KONG, s, t, 0, 0)
    if cfg[C_ROB_ADDED] != 0:
        return _open_window(E, b, t, s, True)
    return _complete_kong(E, b, s, t, ADDED_KONG, -1)


@_jit
def _complete_kong(E, b, s, t, kind, src):
    """Lay down an added kong whose rob window closed without a rob."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r8[O8_HAND + 34 * s + t] -= 1
    for j in range(MAX_MELDS):
        if r8[O8_MELD_KIND + MAX_MELDS * s + j] == PONG_MELD and r8[O8_MELD_TILE + MAX_MELDS * s + j] == t:
            r8[O8_MELD_KIND + MAX_MELDS * s + j] = ADDED_KONG
            break
    r8[O8_MELDED + 34 * s + t] += 1
    for x in range(cfg[C_N]):
        r8[O8_CLAIM_OPTS + x] = 0
    r8[O8_CLAIM_TILE] = -1
    return _finish_kong(E, b, s, t, kind, src)


@_jit
def _finish_kong(E, b, s, t, kind, discarder):
    """Kong money at its chain position (pending where the family pays any), then :func:`_kong_tail`."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    pos = _kong_position(r8, cfg, s, kind == DIRECT_KONG)
    if cfg[C_KONG_MONEY] == KONG_MONEY_COMPILED:
        # kawuxing.kong_money (§3.5): the same amounts, paid in the same order as its transfer list
        mult = 2 ** (pos - 1) if fcfg[F_KONG_DOUBLING] != 0 else 1
        amount = float(int(fcfg[kind - DIRECT_KONG]) * mult) * fcfg[F_KONG_DOUBLING + 1]
        if kind == DIRECT_KONG:
            money[b, discarder] -= amount
            money[b, s] += amount
        else:
            for p in range(cfg[C_N]):
                if p != s:
                    money[b, p] -= amount
                    money[b, s] += amount
    elif cfg[C_KONG_MONEY] == KONG_MONEY_BANKROLL:
        _bankroll_kong(E, b, s, kind, discarder)
    elif cfg[C_KONG_MONEY] == KONG_MONEY_PYTHON:
        pend[b, 1] = s
        pend[b, 2] = t
        pend[b, 3] = kind
        pend[b, 4] = discarder
        pend[b, 5] = pos
        return P_KONG
    _event(ev, evn, cfg, b, EV_KONG, s, t, kind * 8 + (discarder + 1), pos)
    return _kong_tail(E, b, s, pos)


@_jit
def _bankroll_kong(E, b, s, kind, discarder):
    """Diedaohu / Liuwei kong money (``settle_kong``: ``kong_money`` through ``apply_bankroll``): each payer in
    seat order pays what it owes, under 园子 at most its balance (start-of-hand balance plus this hand's money;
    it only pays here, so that is the scorer's running balance), zero payments left out.  The same
    transfers in the same order as the engine's Python path, so the money is bit-identical."""
    money = E[2]
    cfg = E[7]
    fcfg = E[10]
    n = cfg[C_N]
    owed = fcfg[kind - DIRECT_KONG]
    for p in range(n):
        if p == s or (kind == DIRECT_KONG and cfg[C_KONG_ALL_PAY] == 0 and p != discarder):
            continue
        a = owed
        if cfg[C_KONG_LIMIT] != 0:
            have = fcfg[F_BALANCE + n * b + p] + money[b, p]
            if have < a:  # min(owed, balance) as the scorer takes it
                a = have
        if a > 0:
            money[b, p] -= a
            money[b, s] += a


@_jit
def _kong_tail(E, b, s, pos):
    """After the kong money: the replacement draw from the back of the wall (or Gejiu's kong-tile pick)."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    r8[O8_KONG_COUNT + s] += 1
    r8[O8_CUR] = s
    r8[O8_ACTOR] = s
    r8[O8_AFTER_KONG] = pos
    r8[O8_CLAIM_TILE] = -1
    if cfg[C_KONG_TILES] > 0:
        r8[O8_PHASE] = PICK
        return P_NONE
    back = r16[O16_BACK] - 1
    r16[O16_BACK] = back
    _replacement(E, b, s, r8[O8_WALL + back])
    return P_NONE


@_jit
def _replacement(E, b, s, tile):
    """Seat ``s`` takes its kong replacement ``tile`` and is in AFTER_DRAW with the after-kong flag."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r8[O8_HAND + 34 * s + tile] += 1
    r8[O8_DRAWN] = tile
    b16[b, O16_LOCK + s] = 0
    r8[O8_DADIAOCHE + s] = -1
    r8[O8_PHASE] = TURN
    _event(ev, evn, cfg, b, EV_DRAW, s, tile, 1, 0)


@_jit
def _pick(E, b, slot):
    """Gejiu §6.3: the konger takes face-up kong tile ``slot``; the last face-down tile is turned up."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    s = r8[O8_CUR]
    tile = r8[O8_KONG_TILES + slot]
    if r16[O16_BACK] > r16[O16_FRONT]:
        r16[O16_BACK] -= 1
        r8[O8_KONG_TILES + slot] = r8[O8_WALL + r16[O16_BACK]]
    else:
        r8[O8_KONG_TILES + slot] = -1
    _event(ev, evn, cfg, b, EV_PICK, s, slot, tile, 0)
    _replacement(E, b, s, tile)
    if cfg[C_ROB_REPLACEMENT] != 0:
        r8[O8_ROB_REPLACEMENT] = 1
        return _open_window(E, b, tile, s, True)
    return P_NONE


# ----------------------------------------------------------------------------------------- actions and masks
@_jit
def _apply(E, b, a):
    """Apply action ``a`` of table ``b``'s acting seat; returns a pending code or P_NONE."""
    ph = E[0][b, O8_PHASE]
    if ph == TURN or ph == CLAIMED:
        if a < A_KONG_SELF:
            return _discard(E, b, a % 34, a >= A_LIANG)
        if a == A_WIN:
            return P_SELF_DRAW
        return _self_kong(E, b, a - A_KONG_SELF)
    if ph == PICK:
        return _pick(E, b, a - A_KONGTILE_0)
    return _reply(E, b, a)


@_jit
def _own_turn_mask(E, b, m):
    """Legal actions of the seat on turn (after a draw or a claim) into the cleared row ``m``.

    Returns ``(status, count, last)``: P_MASK_SCORE when the win bit still needs the scorer (then
    ``count`` leaves it out), the number of legal actions and the highest one.
    """
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    s = r8[O8_CUR]
    h = _hand(r8, s)
    rev = r8[O8_REVEALED + s] != 0
    turn = r8[O8_PHASE] == TURN
    drawn = r8[O8_DRAWN]
    count = 0
    last = -1
    if not rev:
        for x in range(34):
            if h[x] > 0:
                m[x] = True
                count += 1
                last = x
        if cfg[C_LIANG] != 0:
            owned = scr[0]
            for x in range(34):
                owned[x] = h[x] + r8[O8_MELDED + 34 * s + x]
            bits = handk.discard_ready_bits(h, cfg[C_SEVEN_PAIRS] != 0, cfg[C_KINDS_BITS], handk.owned_bits(owned), tabs)
            x = 0
            while bits:
                if bits & 1:
                    m[A_LIANG + x] = True
                    count += 1
                    last = A_LIANG + x
                bits >>= 1
                x += 1
    else:
        m[drawn] = True  # a revealed player's only possible discard is the drawn tile
        count += 1
        last = drawn
    # Kongs on one's own turn (never after a claim, never without a replacement tile).
    if turn and r16[O16_BACK] > r16[O16_FRONT]:
        first_turn = r8[O8_TURNS + s] == 0
        immediate = cfg[C_ANGANG_IMMEDIATE] != 0
        for x in range(34):
            if h[x] == 4 and (not immediate or x == drawn or first_turn):
                if (not rev) or _revealed_kong_ok(r8, cfg, tabs, scr, s, x, CONCEALED_KONG):
                    m[A_KONG_SELF + x] = True
                    count += 1
                    last = A_KONG_SELF + x
        if h[drawn] >= 1 and not m[A_KONG_SELF + drawn]:
            for j in range(r8[O8_N_MELDS + s]):
                if r8[O8_MELD_KIND + MAX_MELDS * s + j] == PONG_MELD and r8[O8_MELD_TILE + MAX_MELDS * s + j] == drawn:
                    if (not rev) or _revealed_kong_ok(r8, cfg, tabs, scr, s, drawn, ADDED_KONG):
                        m[A_KONG_SELF + drawn] = True
                        count += 1
                        last = A_KONG_SELF + drawn
    if turn:
        win = handk.is_complete(h, cfg[C_SEVEN_PAIRS] != 0, tabs)
        if not win and cfg[C_SPECIAL] != 0:
            win = handk.lanpai(h)
        if win and cfg[C_SELF_DRAW_MINIMUM] != 0:
            if cfg[C_YZ + yzscore.YZ_ON] == 0:
                return P_MASK_SCORE, count, last
            win = _yz_self_draw_if(E, b, s, drawn)
        if win:
            m[A_WIN] = True
            count += 1
            last = A_WIN
    return P_NONE, count, last


@_jit
def _compute_mask(E, b):
    """Write table ``b``'s mask row; returns ``(status, count, last)`` as :func:`_own_turn_mask`."""
    b8 = E[0]
    m = E[3][b]
    for a in range(N_ACTIONS):
        m[a] = False
    r8 = b8[b]
    ph = r8[O8_PHASE]
    if ph == TURN or ph == CLAIMED:
        return _own_turn_mask(E, b, m)
    if ph == PICK:
        count = 0
        last = -1
        for slot in range(2):
            if r8[O8_KONG_TILES + slot] >= 0:
                m[A_KONGTILE_0 + slot] = True
                count += 1
                last = A_KONGTILE_0 + slot
        return P_NONE, count, last
    o = r8[O8_CLAIM_OPTS + r8[O8_ACTOR]]
    m[A_WIN] = (o & 1) != 0
    m[A_PONG] = (o & 2) != 0
    m[A_KONG_CLAIM] = (o & 4) != 0
    m[A_CHI_LOW] = (o & 8) != 0
    m[A_CHI_LOW + 1] = (o & 16) != 0
    m[A_CHI_LOW + 2] = (o & 32) != 0
    m[A_PASS] = True
    count = 1
    for bit in range(6):
        count += (o >> bit) & 1
    return P_NONE, count, A_PASS


@_jit
def _advance(E, b, count, last):
    """Recompute the mask (unless ``count`` > 0 says it is ready: ``count`` legal actions, ``last`` the
    highest); auto-play while the acting seat has exactly one legal action."""
    b8 = E[0]
    mask = E[3]
    while True:
        if b8[b, O8_PHASE] == DONE:
            for a in range(N_ACTIONS):
                mask[b, a] = False
            return P_NONE
        if count == 0:
            status, count, last = _compute_mask(E, b)
            if status != P_NONE:
                return status
        if count != 1:
            return P_NONE
        count = 0
        status = _apply(E, b, last)
        if status != P_NONE:
            return status


@_jit
def _resume(E, b, code):
    """Carry on table ``b`` after the engine handled pending ``code`` in Python."""
    pend = E[4]
    if code == P_WINDOW:
        status = _next_claimant(E, b)
    elif code == P_KONG:
        status = _kong_tail(E, b, pend[b, 1], pend[b, 5])
    elif code == P_MASK_SCORE:
        mask = E[3]
        mask[b, A_WIN] = pend[b, 1] != 0
        count = 0
        last = -1
        for a in range(N_ACTIONS):
            if mask[b, a]:
                count += 1
                last = a
        return _advance(E, b, count, last)
    else:  # the hand ended in Python
        return _advance(E, b, 0, -1)
    if status != P_NONE:
        return status
    return _advance(E, b, 0, -1)


# ----------------------------------------------------------------------------------------- Kawuxing hand ends
@_jit
def _kw_best(E, b, s, w, add, how, kp, last):
    """``(V, cap)`` of seat ``s``'s best reading with tile ``w`` (added to its concealed hand when ``add``)."""
    r8 = E[0][b]
    scr = E[9]
    full = scr[0]
    h = _hand(r8, s)
    for x in range(34):
        full[x] = h[x]
    if add:
        full[w] += 1
    return kwscore.best_value(
        full, scr[1], w,
        r8[O8_MELD_KIND + MAX_MELDS * s : O8_MELD_KIND + MAX_MELDS * s + MAX_MELDS],
        r8[O8_MELD_TILE + MAX_MELDS * s : O8_MELD_TILE + MAX_MELDS * s + MAX_MELDS],
        r8[O8_N_MELDS + s], r8[O8_REVEALED + s] != 0, kp, how, last, E[7][C_KW : C_KW + kwscore.N_KW],
    )


@_jit
def _kw_ready(E, b, s):
    """``kawuxing.ready_value`` of seat ``s``: ``(T, cap)`` over its waits, each scored as a plain discard win
    (larger value, then larger cap with none the largest); ``(0, 0)`` when not ready."""
    r8 = E[0][b]
    cfg = E[7]
    scr = E[9]
    h = _hand(r8, s)
    owned = scr[2]
    for x in range(34):
        owned[x] = h[x] + r8[O8_MELDED + 34 * s + x]
    nm = r8[O8_N_MELDS + s]
    waits = handk.wait_bits(h, nm == 0, E[8]) & cfg[C_KINDS_BITS] & handk.owned_bits(owned)
    best_v = 0
    best_c = 0
    for w in range(34):
        if (waits >> w) & 1:
            full = scr[0]
            for x in range(34):
                full[x] = h[x]
            full[w] += 1
            kc = cfg[C_KW : C_KW + kwscore.N_KW]
            v, c = kwscore.best_value(
                full, scr[1], w,
                r8[O8_MELD_KIND + MAX_MELDS * s : O8_MELD_KIND + MAX_MELDS * s + MAX_MELDS],
                r8[O8_MELD_TILE + MAX_MELDS * s : O8_MELD_TILE + MAX_MELDS * s + MAX_MELDS],
                nm, False, 0, kwscore.HOW_DISCARD, False, kc,
            )
            if v == 0:
                continue
            ci = c if c != 0 else 1 << 40
            bi = best_c if best_c != 0 else 1 << 40
            if v > best_v or (v == best_v and ci > bi):
                best_v = v
                best_c = c
    return best_v, best_c


@_jit
def _pay(money, b, payer, payee, amount):
    money[b, payer] -= amount
    money[b, payee] += amount


@_jit
def _kw_end(E, b, code):
    """Settle a Kawuxing hand end (P_SELF_DRAW, P_CLAIM_WIN or P_EXHAUSTED) as the engine's Python path does
    (kawuxing.settle_win / settle_draw, the claimed tile joining the nearest winner's hand), end the hand and
    return P_ENDED with ``pend[b, 1]`` = END_*.  Transfers are paid in the scorer's order, so the money is
    bit-identical."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    n = cfg[C_N]
    kc = cfg[C_KW : C_KW + kwscore.N_KW]
    base = fcfg[F_KONG_DOUBLING + 1]
    last = r16[O16_FRONT] >= r16[O16_BACK]
    if code == P_SELF_DRAW:
        s = r8[O8_CUR]
        value, cap = _kw_best(E, b, s, r8[O8_DRAWN], False, kwscore.HOW_SELF_DRAW, r8[O8_AFTER_KONG], last)
        wrev = r8[O8_REVEALED + s] != 0
        for p in range(n):
            if p != s:
                f = kwscore.payer_factor(kc, wrev, r8[O8_REVEALED + p] != 0)
                _pay(money, b, p, s, float(kwscore.capped(value * f, cap)) * base)
        kind = END_SELF_DRAW
    elif code == P_CLAIM_WIN:
        frm = r8[O8_CLAIM_FROM]
        t = r8[O8_CLAIM_TILE]
        rob = r8[O8_PHASE] == ROB
        how = kwscore.HOW_ROB if rob else kwscore.HOW_DISCARD
        kp = 0 if rob else r8[O8_CLAIM_KONG_POS]
        drev = r8[O8_REVEALED + frm] != 0
        first = -1
        for k in range(1, n):
            s = (frm + k) % n
            if r8[O8_CLAIM_REPLY + s] != A_WIN:
                continue
            if first >= 0 and kc[kwscore.KW_SINGLE_WINNER] != 0:
                break
            if first < 0:
                first = s
            # scored before the tile moves (only the nearest winner's hand changes, after every score)
            value, cap = _kw_best(E, b, s, t, True, how, kp, (not rob) and last)
            wrev = r8[O8_REVEALED + s] != 0
            f = kwscore.payer_factor(kc, wrev, drev)
            if kc[kwscore.KW_BAOHU] != 0 and wrev and not (kc[kwscore.KW_BAOHU_EXEMPT] != 0 and drev):
                m = n - 1 if kc[kwscore.KW_BAOHU_ALL] != 0 else 2
                if kc[kwscore.KW_BAOHU_PER_SHARE] != 0:
                    amount = m * (float(kwscore.capped(value * f, cap)) * base)
                else:
                    amount = float(kwscore.capped(m * value * f, cap)) * base
            else:
                amount = float(kwscore.capped(value * f, cap)) * base
            _pay(money, b, frm, s, amount)
        if rob:
            r8[O8_HAND + 34 * frm + t] -= 1
        else:
            r16[O16_RIVER_LEN + frm] -= 1
            r8[O8_RIVER + MAX_RIVER * frm + r16[O16_RIVER_LEN + frm]] = -1
        r8[O8_HAND + 34 * first + t] += 1
        kind = END_ROB if rob else END_DISCARD
    else:
        nrev = 0
        for x in range(n):
            nrev += r8[O8_REVEALED + x]
        tingtou = kc[kwscore.KW_TINGTOU]
        if nrev > 0 and tingtou == 0:
            if kc[kwscore.KW_HUANG_PENALTY] == 1:
                first = 0
                for x in range(n):
                    if r8[O8_REVEAL_SEQ + x] >= 0 and (
                        r8[O8_REVEAL_SEQ + first] < 0 or r8[O8_REVEAL_SEQ + x] < r8[O8_REVEAL_SEQ + first]
                    ):
                        first = x
                for p in range(n):
                    if p != first:
                        _pay(money, b, first, p, 1.0 * base)
        elif nrev > 0:
            # payers in the order they declared 亮倒 (reveal_seq 0, 1, ...); only the first under tingtou on
            for rank in range(nrev if tingtou == 2 else 1):
                r = 0
                for x in range(n):
                    if r8[O8_REVEAL_SEQ + x] == rank:
                        r = x
                for x in range(n):
                    if r8[O8_REVEALED + x] != 0:
                        continue
                    v, c = _kw_ready(E, b, x)
                    if v > 0:
                        _pay(money, b, r, x, float(kwscore.capped(2 * v, c)) * base)
                    else:
                        v, c = _kw_ready(E, b, r)
                        if v > 0:
                            _pay(money, b, x, r, float(kwscore.capped(2 * v, c)) * base)
        kind = END_DRAW
    r8[O8_PHASE] = DONE
    for x in range(n):
        r8[O8_CLAIM_OPTS + x] = 0
    for a in range(N_ACTIONS):
        mask[b, a] = False
    pend[b, 1] = kind
    _event(ev, evn, cfg, b, EV_END, kind, 0, 0, 0)
    return P_ENDED


@_jit
def _gj_value(E, b, s, w, add, after_kong, rob):
    """Gejiu V of seat ``s``'s best reading with tile ``w`` (added to its concealed hand when ``add``)."""
    r8 = E[0][b]
    scr = E[9]
    full = scr[0]
    h = _hand(r8, s)
    for x in range(34):
        full[x] = h[x]
    if add:
        full[w] += 1
    return gjscore.hand_value(
        full, scr[1],
        r8[O8_MELD_KIND + MAX_MELDS * s : O8_MELD_KIND + MAX_MELDS * s + MAX_MELDS],
        r8[O8_MELD_TILE + MAX_MELDS * s : O8_MELD_TILE + MAX_MELDS * s + MAX_MELDS],
        r8[O8_N_MELDS + s], after_kong, rob, E[7][C_GJ_COMBINE],
    )


@_jit
def _gj_end(E, b, code):
    """Settle a Gejiu win (P_SELF_DRAW or P_CLAIM_WIN) as the engine's Python path does (``gejiu.settle_win``:
    V · b from each other seat on a self-draw, from the discarder / konger to each winner in turn order
    otherwise; the claimed tile joins the nearest winner's hand), end the hand and return P_ENDED with
    ``pend[b, 1]`` = END_*.  Every complete shape is a legal win (§6.8), so no verdict is needed."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    n = cfg[C_N]
    base = fcfg[F_BASE]
    if code == P_SELF_DRAW:
        s = r8[O8_CUR]
        amount = float(_gj_value(E, b, s, r8[O8_DRAWN], False, r8[O8_AFTER_KONG] > 0, False)) * base
        for p in range(n):
            if p != s:
                _pay(money, b, p, s, amount)
        kind = END_SELF_DRAW
    else:
        frm = r8[O8_CLAIM_FROM]
        t = r8[O8_CLAIM_TILE]
        rob = r8[O8_PHASE] == ROB
        first = -1
        for k in range(1, n):
            s = (frm + k) % n
            if r8[O8_CLAIM_REPLY + s] != A_WIN:
                continue
            if first >= 0 and cfg[C_SINGLE_WINNER] != 0:
                break
            if first < 0:
                first = s
            # valued before the tile moves (only the nearest winner's hand changes, after every value)
            _pay(money, b, frm, s, float(_gj_value(E, b, s, t, True, False, rob)) * base)
        if rob:
            r8[O8_HAND + 34 * frm + t] -= 1
        else:
            r16[O16_RIVER_LEN + frm] -= 1
            r8[O8_RIVER + MAX_RIVER * frm + r16[O16_RIVER_LEN + frm]] = -1
        r8[O8_HAND + 34 * first + t] += 1
        kind = END_ROB if rob else END_DISCARD
    r8[O8_PHASE] = DONE
    for x in range(n):
        r8[O8_CLAIM_OPTS + x] = 0
    for a in range(N_ACTIONS):
        mask[b, a] = False
    pend[b, 1] = kind
    _event(ev, evn, cfg, b, EV_END, kind, 0, 0, 0)
    return P_ENDED


@_jit
def _draw_end(E, b):
    """End a drawn hand of a family whose drawn hands pay nothing (Gejiu, Diedaohu, Yangzhou, Liuwei) as the
    engine's Python path does (no transfers, phase DONE, window and mask cleared); returns P_ENDED with
    ``pend[b, 1]`` = END_DRAW.  The engine books the session and the result."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r8[O8_PHASE] = DONE
    for x in range(cfg[C_N]):
        r8[O8_CLAIM_OPTS + x] = 0
    for a in range(N_ACTIONS):
        mask[b, a] = False
    pend[b, 1] = END_DRAW
    _event(ev, evn, cfg, b, EV_END, END_DRAW, 0, 0, 0)
    return P_ENDED


# ----------------------------------------------------------------------------------------- entry point
MODE_STEP, MODE_ADVANCE, MODE_RESUME, MODE_MASKS = 0, 1, 2, 3


# ----------------------------------------------------------------------------------------- one entry per family
# A cold start compiles only what its family needs.  Every kernel function that takes ``E`` is specialized on
# the type of its last item, ``fam``: the literal set of compiled scorers (FEAT_*).  The calls that reach a
# scorer go through a gate (:func:`_gate`) that numba resolves while typing, from that literal: to the scorer
# when the set holds it, else to a stub, so the scorer is neither typed nor compiled.  The rules keep one
# source; the cfg flags still decide at run time, and the set only has to include every scorer they switch on.
FEAT_KW, FEAT_YZ, FEAT_GJ = 1, 2, 4  # kwscore (windows, hand ends), yzscore (windows, self-draws), gjscore (ends)
FEAT_ALL = FEAT_KW | FEAT_YZ | FEAT_GJ


def _compiles(E, feature: int) -> bool:
    """While typing: whether the kernel being compiled for the tuple type ``E`` holds ``feature``."""
    fam = E.types[-1]
    return not isinstance(fam, nb_types.IntegerLiteral) or (fam.literal_value & feature) != 0


def _gate(feature: int, on, off):
    """A function for the kernels that calls ``on`` where the kernel holds ``feature`` and ``off`` (same
    parameters, ``E`` first) elsewhere, chosen while typing.  ``off`` is only reached if a cfg flag enables what
    ``fam`` left out.  (Not ``inline="always"``: numba's inlining of it into ``_open_window``'s ``and`` lost the
    write of ``pend[b, 1]`` on the Python path, tests/test_kernel_ends_4p.py.)"""
    params = ", ".join(inspect.signature(on.py_func).parameters)
    ns: dict = {}
    exec(  # (explicit parameters, as the overload machinery likes them best)
        f"def gated({params}):\n    raise NotImplementedError('compiled code only')\n"
        f"def typed({params}):\n    fn = on if compiles(E, feature) else off\n"
        f"    def impl({params}):\n        return fn({params})\n    return impl\n",
        {"on": on, "off": off, "compiles": _compiles, "feature": feature, "__name__": __name__},
        ns,
    )
    gated = ns["gated"]
    gated.__name__ = gated.__qualname__ = on.__name__ + "_if"
    overload(gated, prefer_literal=True, jit_options={"_nrt": False})(ns["typed"])
    return gated


@_jit
def _false(E, *args):
    return False


@_jit
def _nothing(E, *args):
    return None


@_jit
def _code_unchanged(E, b, code):
    return code


_kw_window_if = _gate(FEAT_KW, _kw_window, _false)
_kw_end_if = _gate(FEAT_KW, _kw_end, _code_unchanged)
_yz_window_if = _gate(FEAT_YZ, _yz_window, _nothing)
_yz_self_draw_if = _gate(FEAT_YZ, _yz_self_draw, _false)
_gj_end_if = _gate(FEAT_GJ, _gj_end, _code_unchanged)


def features(cfg) -> int:
    """The FEAT_* set the configuration vector ``cfg`` switches on."""
    return (
        (FEAT_KW if cfg[C_KW_SCORE] else 0)
        | (FEAT_YZ if cfg[C_YZ + yzscore.YZ_ON] else 0)
        | (FEAT_GJ if cfg[C_GJ_SCORE] else 0)
    )


def _entry(fam: int):
    """The entry point compiled with the scorers of the FEAT_* set ``fam`` (a closure: numba types ``fam`` as its
    literal and keys the cached code by its value, so the entries of every set share one cache index)."""

    @_jit
    def run_tables(mode, b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, idx, acts, waiting, info):
        """The compiled entry point of the state machine, holding the scorers of ``fam`` (see :func:`kernel_for`).

        ``mode``:

        * ``MODE_STEP`` — apply ``acts[j]`` at table ``idx[j]`` and advance it (finished tables skipped).  All
          or nothing: if some live table's action is not legal, nothing changes, ``info[1]`` is its position
          ``j`` and the result 0; otherwise ``info[0]`` is the number of tables stepped, ``info[1]`` -1.
        * ``MODE_ADVANCE`` — compute masks and play automatic moves at tables ``idx`` (after a deal).
        * ``MODE_RESUME`` — resume tables ``idx`` whose pendings the engine handled.
        * ``MODE_MASKS`` — write the masks of live tables ``idx`` into ``mask`` (pass a spare array) without
          changing any state, and the status of each (P_MASK_SCORE where the win bit needs the scorer) into
          ``acts[j]``.

        The tables left with a pending are listed in ``waiting``; returns their number.
        """
        E = (b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam)  # fam: typed as its literal
        if mode == MODE_MASKS:
            for j in range(idx.shape[0]):
                acts[j] = _compute_mask(E, idx[j])[0]
            return 0
        if mode == MODE_STEP:
            live = 0
            for j in range(idx.shape[0]):
                b = idx[j]
                if b8[b, O8_PHASE] == DONE:
                    continue
                a = acts[j]
                if a < 0 or a >= N_ACTIONS or not mask[b, a]:
                    info[0] = 0
                    info[1] = j
                    return 0
                live += 1
            info[0] = live
            info[1] = -1
        k = 0
        for j in range(idx.shape[0]):
            b = idx[j]
            if mode == MODE_STEP:
                if b8[b, O8_PHASE] == DONE:
                    continue
                status = _apply(E, b, acts[j])
                if status == P_NONE:
                    status = _advance(E, b, 0, -1)
            elif mode == MODE_ADVANCE:
                status = _advance(E, b, 0, -1)
            else:
                code = pend[b, 0]
                pend[b, 0] = P_NONE
                status = _resume(E, b, code)
            if status != P_NONE:
                if cfg[C_KW_SCORE] != 0 and (status == P_SELF_DRAW or status == P_CLAIM_WIN or status == P_EXHAUSTED):
                    status = _kw_end_if(E, b, status)
                elif status == P_EXHAUSTED and cfg[C_DRAW_ENDS] != 0:
                    status = _draw_end(E, b)
                elif cfg[C_GJ_SCORE] != 0 and (status == P_SELF_DRAW or status == P_CLAIM_WIN):
                    status = _gj_end_if(E, b, status)
                pend[b, 0] = status
                waiting[k] = b
                k += 1
        return k

    return run_tables


_ENTRIES = {fam: _entry(fam) for fam in range(FEAT_ALL + 1)}  # (compiled on first call only)
run_tables = _ENTRIES[FEAT_ALL]  # every scorer: any configuration


def kernel_for(cfg):
    """The compiled entry point for the configuration vector ``cfg`` (called as :data:`run_tables`): it holds only
    the scorers ``cfg`` switches on, so a cold start compiles only its family's code."""
    return _ENTRIES[features(cfg)]
