"""One table's state changes in the compiled game core: the deal, draws, discards, melds, kongs, a hand's end.

This module owns the common rules of docs/rules/common.md §1.6–§1.9 as single state changes on the packed
state: the deal (and the seeded walls), a draw, a discard and a 亮倒 discard with its face-down triplets,
the pong / chi / direct kong that takes a claimed tile, the three kongs with their chain positions, their
money (Kawuxing's fixed amounts here, Diedaohu's and Liuwei's bankroll-limited ones in
:mod:`mjenv.engine.ddend`) and replacement draws, Gejiu's face-up kong tiles, the revealed-kong test, the
event records, and what every hand settled in the kernel ends with (the won tile given to the nearest
winner, the hand closed: all of a drawn hand that pays nothing).  Which change comes next — claim windows
(:mod:`mjenv.engine.claims`), masks (:mod:`mjenv.engine.masks`), actions and automatic moves
(:mod:`mjenv.engine.flow`) — is decided above it.

Every function works on ONE table ``b`` of the packed buffers of :func:`mjenv.engine.state.allocate_packed`;
``E`` is the tuple of arrays every kernel function takes (see :func:`mjenv.engine.entry.kernel_for`).  The
order of every state change equals the numpy engine this replaced (kept as the test oracle in
tests/reference_engine.py; tests/differential.py compares the two step by step).
"""

from __future__ import annotations

import numpy as np

from mjenv.engine import handk
from mjenv.engine.codes import (
    C_HIDE_TRIPLETS,
    C_KINDS_BITS,
    C_KONG_LINK,
    C_KONG_MONEY,
    C_KONG_TILES,
    C_LIANG_KONG,
    C_N,
    C_RECORD,
    C_SEVEN_PAIRS,
    C_SPECIAL,
    C_WALL,
    EV_CHI,
    EV_COUNTS,
    EV_DEAL,
    EV_DISCARD,
    EV_DRAW,
    EV_END,
    EV_KONG,
    EV_PONG,
    EV_REVEAL,
    F_KONG_DOUBLING,
    KONG_MONEY_BANKROLL,
    KONG_MONEY_COMPILED,
    LIANG_KONG_KEEP_READY,
    LIANG_KONG_NONE,
    LINK_CHAIN,
    LINK_PER_HAND,
    N_ACTIONS,
    P_BOOKED,
    P_ENDED,
    P_EXHAUSTED,
    P_NONE,
    PEND_READING,
    PEND_ROUND_WIND,
)
from mjenv.engine.ddend import _bankroll_kong
from mjenv.engine.gates import entry_kernel, kernel
from mjenv.engine.jit import njit
from mjenv.engine.state import (
    ADDED_KONG,
    CHI_MELD,
    CLAIMED,
    CONCEALED_KONG,
    DIRECT_KONG,
    DONE,
    MAX_MELDS,
    MAX_RIVER,
    O16_BACK,
    O16_FRONT,
    O16_LOCK,
    O16_N_DISCARDS,
    O16_RIVER_LEN,
    O16_RIVER_TIME,
    O8_ACTOR,
    O8_AFTER_KONG,
    O8_CLAIM_FROM,
    O8_CLAIM_KONG_POS,
    O8_CLAIM_OPTS,
    O8_CLAIM_TILE,
    O8_CUR,
    O8_DADIAOCHE,
    O8_DEALER,
    O8_DRAWN,
    O8_HAND,
    O8_HIDDEN,
    O8_KONG_COUNT,
    O8_KONG_TILES,
    O8_MELDED,
    O8_MELD_KIND,
    O8_MELD_SRC,
    O8_MELD_TILE,
    O8_N_MELDS,
    O8_PHASE,
    O8_REVEALED,
    O8_REVEAL_SEQ,
    O8_RIVER,
    O8_TURNS,
    O8_WALL,
    PICK,
    PONG_MELD,
    TURN,
)


# ----------------------------------------------------------------------------------------- events
@kernel
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


@kernel
def _counts_events(ev, evn, cfg, b, h):
    """Two EV_COUNTS records holding the 34 counts ``h`` (6 per field, base 5)."""
    _event(ev, evn, cfg, b, EV_COUNTS, _base5(h, 0), _base5(h, 6), _base5(h, 12), _base5(h, 18))
    _event(ev, evn, cfg, b, EV_COUNTS, _base5(h, 24), _base5(h, 30), 0, 0)


@kernel
def _base5(h, start):
    v = 0
    for x in range(min(start + 6, 34) - 1, start - 1, -1):
        v = v * 5 + h[x]
    return v


# ----------------------------------------------------------------------------------------- deal
@entry_kernel  # (called by Python, on threads: Engine.reset's chunks)
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


@kernel
def _splitmix(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@entry_kernel  # (called by Python, on threads: Engine.reset's chunks)
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


@entry_kernel  # (called by Python, on threads: mjenv.engine.autoplay's chunks)
def deal_finished(lo, hi, seed, redeals, b8, b16, money, fresh8, fresh16, tiles, cfg, ev, evn, mask, pend, wind,
                  match_money, hand_number, session_over, balance, start, dealt, ids, walls, dealers):
    """Deal a new match on every finished table ``b`` in ``lo..hi-1`` (phase DONE), as ``Engine.reset`` with a seed
    does: the wall of id ``b + B × (redeals[b] + 1)`` under ``seed`` (``redeals[b]`` then counts it), dealt by seat
    ``id mod n``; the match rows cleared (``match_money``, ``hand_number``, ``session_over``, ``balance`` = ``start``,
    the pending row, Yangzhou's round wind ``wind`` when ``wind >= 0``).  Lists the tables dealt in
    ``dealt[lo:lo + k]`` (their ids, walls and dealers in the same rows of ``ids``, ``walls``, ``dealers``: scratch
    rows of this chunk) and returns ``k``.  The automatic moves after the deal are the caller's (``MODE_ADVANCE``)."""
    B = b8.shape[0]
    n = cfg[C_N]
    k = 0
    for b in range(lo, hi):
        if b8[b, O8_PHASE] == DONE:
            j = lo + k
            dealt[j] = b
            redeals[b] += 1
            wid = b + B * redeals[b]
            ids[j] = np.uint64(wid)
            dealers[j] = wid % n
            k += 1
    if k == 0:
        return 0
    seeded_walls(seed, ids[lo : lo + k], tiles, walls[lo : lo + k])
    deal_tables(b8, b16, money, fresh8, fresh16, dealt[lo : lo + k], walls[lo : lo + k], dealers[lo : lo + k], cfg,
                ev, evn, mask)  # fmt: skip
    for j in range(lo, lo + k):
        b = dealt[j]
        for i in range(match_money.shape[1]):
            match_money[b, i] = 0.0
            balance[b, i] = start
        hand_number[b] = 0
        session_over[b] = False
        for i in range(pend.shape[1]):
            pend[b, i] = 0
        if wind >= 0:
            pend[b, PEND_ROUND_WIND] = wind
    return k


# ----------------------------------------------------------------------------------------- helpers
@njit(cache=True, _nrt=False, inline="always")
def _hand(r8, s):
    return r8[O8_HAND + 34 * s : O8_HAND + 34 * s + 34]


@kernel
def _wait_bits(h, owned, cfg, tabs):
    """hand.wait_mask(h, seven_pairs, kinds, owned) as bits."""
    return handk.wait_bits(h, cfg[C_SEVEN_PAIRS] != 0, tabs) & cfg[C_KINDS_BITS] & handk.owned_bits(owned)


@kernel
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


@kernel
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


@kernel
def _complete_with(r8, cfg, tabs, s, t):
    """Seat ``s``'s concealed hand plus tile ``t`` is a winning shape (incl. special shapes)."""
    h = _hand(r8, s)
    comp = handk.is_complete_with(h, t, cfg[C_SEVEN_PAIRS] != 0, tabs)
    if not comp and cfg[C_SPECIAL] != 0:
        h[t] += 1
        comp = handk.lanpai(h)
        h[t] -= 1
    return comp


# ----------------------------------------------------------------------------------------- draws and discards
@kernel
def _draw(E, b, seat):
    """Normal draw for ``seat``; P_EXHAUSTED when the wall is empty (the entry point ends the hand)."""
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


@kernel
def _discard(E, b, t, liang):
    """The seat on turn discards ``t`` (a 亮倒 discard when ``liang``); the claim window opens after it (flow)."""
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


# ----------------------------------------------------------------------------------------- claimed tiles
@kernel
def _take_discard(r8, r16):
    """Remove the tile under claim from its discarder's river (it is always the last one)."""
    frm = r8[O8_CLAIM_FROM]
    r16[O16_RIVER_LEN + frm] -= 1
    r8[O8_RIVER + MAX_RIVER * frm + r16[O16_RIVER_LEN + frm]] = -1
    return r8[O8_CLAIM_TILE]


@kernel
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


@kernel
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


@kernel
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
@kernel
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


@kernel
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


@kernel
def _finish_kong(E, b, s, t, kind, discarder):
    """Kong money at its chain position (compiled for every family that pays any), then :func:`_kong_tail`."""
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
    _event(ev, evn, cfg, b, EV_KONG, s, t, kind * 8 + (discarder + 1), pos)
    return _kong_tail(E, b, s, pos)


@kernel
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


@kernel
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


# ----------------------------------------------------------------------------------------- hand ends
@kernel
def _pay(money, b, payer, payee, amount):
    money[b, payer] -= amount
    money[b, payee] += amount


@kernel
def _full_hand(E, b, s, w, add):
    """Write seat ``s``'s concealed counts, plus the tile ``w`` when ``add`` (a claimed tile not in the hand yet), to
    the scratch row ``scr[0]``: the complete hand a scorer values."""
    full = E[9][0]
    h = _hand(E[0][b], s)
    for x in range(34):
        full[x] = h[x]
    if add:
        full[w] += 1


@kernel
def _give_won_tile(r8, r16, frm, t, first, rob):
    """The won tile ``t`` leaves the discarder's river (a rob: the konger's hand) and joins the hand of ``first``,
    the nearest winner, so that the tiles stay conserved."""
    if rob:
        r8[O8_HAND + 34 * frm + t] -= 1
    else:
        r16[O16_RIVER_LEN + frm] -= 1
        r8[O8_RIVER + MAX_RIVER * frm + r16[O16_RIVER_LEN + frm]] = -1
    r8[O8_HAND + 34 * first + t] += 1


@entry_kernel  # (called by Python, on threads: mjenv.engine.threads' chunks and Engine._run)
def book_ended(waiting, k, every, pend, end_kind, win_reading, match_money, money):
    """Book the numbers of the hands among tables ``waiting[:k]`` that the kernel settled and ended (P_ENDED; with
    ``every``, every listed table's, the caller knowing they ended): the end kind (``end_kind[b]``), each seat's
    reading code (``win_reading[b]``) and the hand's money added to ``match_money[b]``; their code becomes P_BOOKED
    (tables already booked are left alone, and without ``every`` other pendings too).  With ``every`` the pending
    codes are then cleared (``pend[b, 0:2] = 0``: the booking's last compiled step).  Returns how many of the listed
    tables ended (P_ENDED or P_BOOKED; all of them with ``every``).

    :meth:`mjenv.engine.core.Engine._run` books the rest; the thread that stepped a chunk of tables books it here
    first, while its rows are in that core's cache."""
    n = match_money.shape[1]
    ended = 0
    for j in range(k):
        b = waiting[j]
        code = pend[b, 0]
        if code == P_ENDED or (every and code != P_BOOKED):
            pend[b, 0] = P_BOOKED
            end_kind[b] = pend[b, 1]
            for s in range(win_reading.shape[1]):
                win_reading[b, s] = pend[b, PEND_READING + s]
            for s in range(n):
                match_money[b, s] += money[b, s]
            code = P_BOOKED
        if code == P_BOOKED:
            ended += 1
        if every:
            pend[b, 0] = 0
            pend[b, 1] = 0
    return ended


@kernel
def _end_hand(E, b, kind):
    """End table ``b``'s hand, settled here, as ``kind`` (END_*): phase DONE, window and mask cleared, the EV_END
    record; returns P_ENDED with ``pend[b, 1]`` = ``kind``.  The engine books the session and builds the result
    when it is read.  A drawn hand of a family whose drawn hands pay nothing (Gejiu, Diedaohu, Yangzhou, Liuwei:
    their ``settle_draw`` has no transfers) is only this, with END_DRAW."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r8[O8_PHASE] = DONE
    for x in range(cfg[C_N]):
        r8[O8_CLAIM_OPTS + x] = 0
    for a in range(N_ACTIONS):
        mask[b, a] = False
    pend[b, 1] = kind
    _event(ev, evn, cfg, b, EV_END, kind, 0, 0, 0)
    return P_ENDED

