"""The compiled player's hand arithmetic: shanten, ukeire and plan costs in numba, for :mod:`agents.players.fastplay`.

This module owns the player configuration vector's layout (``PC_*``, built by
:func:`agents.players.fastplay.player_config`) and the kernels the decisions call: the evaluation slots
(a prepared hand whose one-tile changes cost one table row each), standard / seven-pairs shanten and ukeire,
the 烂牌, flush and all-triplets plans, and the per-discard plan costs.  How the tables and slots work is told
in :mod:`agents.players.fastplay`'s docstring and in the comments below.
"""

from __future__ import annotations

import numpy as np

from mjenv.encoding import actions as A
from mjenv.engine.jit import njit

# Player configuration vector (int64), built by :func:`agents.players.fastplay.player_config`.
PC_N, PC_SP, PC_LANPAI, PC_FLUSH, PC_FLUSH_HONORS, PC_TRIP, PC_LIANG, PC_LIANG_LIVE, PC_LIANG_WALL = range(9)
PC_BAO_FLUSH, PC_BAO_FENGQING, PC_KINDS, PC_CHI = 9, 10, 11, 12
N_PC = 13


# ------------------------------------------------------------------------------------------- shanten

# ``tab`` is :func:`mjenv.encoding.shanten.block_tables`' joint table: a component's row is its *key*, the base-5 code of
# its counts, plus 5^9 for the honors.  Entry [h, n] is the best score with at most h heads and n blocks (all
# valid, monotone); the product of components is their max-plus product with heads and blocks added, and a
# hand's standard shanten is 2k minus its product's entry [1, k].
#
# A prepared hand ("evaluation slot" i) lives in rows of the work arrays, addressed by index: no array views
# and no array arguments of inlined functions in the hot loops (each costs atomic reference counts, which
# were a fifth of the player's time).
# ws[b:b+4]    (b = _slot_row(i)) the product of the three components other than j (``excl[j]``);
# ws[b+4:b+10] the products of two components, pair (a, c) at b + 4 + _PAIR[a, c] (0-1 and 2-3 always, the rest
#              on demand);
# wi[_EVI + i]: [0:4] component keys, [4] k = sets to make, [5] standard shanten, [6] pairs, [7] bit j =
#              component j is empty, [8] every pair product made.
_N_E = 10
_EVI = 49  # wi rows of the five slots' numbers (the rows before are the decisions' work rows)
_WS = 8 + 5 * _N_E  # ws rows: 8 scratch tables, then five slots (0-2 the flush plans, 3 the hand, 4 spare)
_POW5 = np.array([5**i for i in range(9)], np.int64)
_HONOR_KEY = 5**9  # the empty honors' key
_PAIR = np.array([[-1, 0, 1, 2], [0, -1, 3, 4], [1, 3, -1, 5], [2, 4, 5, -1]], np.int64)
# the pair of components other than (i, j), as the index into a slot's pair products
_REST = np.array([[-1, 5, 4, 3], [5, -1, 2, 1], [4, 2, -1, 0], [3, 1, 0, -1]], np.int64)


@njit(cache=True, inline="always")
def _slot_row(i):
    """First ws row of evaluation slot ``i`` (0-2 the flush plans, 3 the hand, 4 spare)."""
    return 8 + i * _N_E


@njit(cache=True)
def _key(h, j):
    """Component ``j``'s row of the joint table (see above)."""
    size = 7 if j == 3 else 9
    code = 0
    for x in range(size - 1, -1, -1):
        code = code * 5 + h[9 * j + x]
    return code + (_HONOR_KEY if j == 3 else 0)


@njit(cache=True, inline="always")
def _empty_key(j):
    return _HONOR_KEY if j == 3 else 0


@njit(cache=True)
def _mul(A, ia, ea, B, ib, eb, out, io, k):
    """``out[io] = A[ia] ⊗ B[ib]`` up to ``k`` blocks, where ``ea``/``eb`` say that the operand is the empty
    component's table (all zeros, the identity of ⊗): then a copy.  Returns whether the result is the identity."""
    if ea:
        for h in range(2):
            for n in range(k + 1):
                out[io, h, n] = B[ib, h, n]
        return eb
    if eb:
        for h in range(2):
            for n in range(k + 1):
                out[io, h, n] = A[ia, h, n]
        return False
    for n in range(k + 1):
        v0 = -128
        v1 = -128
        for i in range(n + 1):
            x0 = np.int64(A[ia, 0, i])
            x1 = np.int64(A[ia, 1, i])
            y0 = np.int64(B[ib, 0, n - i])
            y1 = np.int64(B[ib, 1, n - i])
            v0 = max(v0, x0 + y0)
            v1 = max(v1, max(x0 + y1, x1 + y0))
        out[io, 0, n] = v0
        out[io, 1, n] = v1
    return False


@njit(cache=True)
def _dot(tab, pk, ws, ie, k):
    """The score (2k - standard shanten) of the hand made of component ``tab[pk]`` and the rest, whose product
    is ``ws[ie]``.  (The hot loops write this out: an inlined call with array arguments costs reference counts.)"""
    best = -128
    for n in range(k + 1):
        best = max(best, max(np.int64(tab[pk, 0, n]) + ws[ie, 1, k - n], np.int64(tab[pk, 1, n]) + ws[ie, 0, k - n]))
    return best


@njit(cache=True)
def _pairs(h):
    p = 0
    for t in range(34):
        p += h[t] // 2
    return p


@njit(cache=True)
def _ev_prepare(h, nm, tab, ws, wi, slot):
    """Fill evaluation slot ``slot`` for hand ``h`` with ``nm`` melds (see the slot layout above)."""
    b = _slot_row(slot)
    r = _EVI + slot
    empty = 0
    for j in range(4):
        c = _key(h, j)
        wi[r, j] = c
        if c == _empty_key(j):
            empty |= 1 << j
    c0, c1, c2, c3 = wi[r, 0], wi[r, 1], wi[r, 2], wi[r, 3]
    e0, e1, e2, e3 = empty & 1 != 0, empty & 2 != 0, empty & 4 != 0, empty & 8 != 0
    k = 4 - nm
    el = _mul(tab, c0, e0, tab, c1, e1, ws, b + 4, k)  # components 0 and 1
    er = _mul(tab, c2, e2, tab, c3, e3, ws, b + 9, k)  # components 2 and 3
    _mul(tab, c1, e1, ws, b + 9, er, ws, b + 0, k)
    _mul(tab, c0, e0, ws, b + 9, er, ws, b + 1, k)
    _mul(ws, b + 4, el, tab, c3, e3, ws, b + 2, k)
    _mul(ws, b + 4, el, tab, c2, e2, ws, b + 3, k)
    wi[r, 4] = k
    wi[r, 5] = 2 * k - _dot(tab, c0, ws, b, k)
    wi[r, 6] = _pairs(h)
    wi[r, 7] = empty
    wi[r, 8] = 0


@njit(cache=True)
def _ev_pairs(tab, ws, wi, slot):
    """The four pair products :func:`_ev_prepare` leaves out (components 0-2, 0-3, 1-2, 1-3), once."""
    b = _slot_row(slot)
    r = _EVI + slot
    if wi[r, 8]:
        return
    k = wi[r, 4]
    empty = wi[r, 7]
    for a, c, q in ((0, 2, 1), (0, 3, 2), (1, 2, 3), (1, 3, 4)):
        _mul(tab, wi[r, a], (empty >> a) & 1 != 0, tab, wi[r, c], (empty >> c) & 1 != 0, ws, b + 4 + q, k)
    wi[r, 8] = 1


@njit(cache=True)
def _ev_after(t, tab, ws, wi, slot):
    """Standard shanten of the slot's hand less one ``t`` (held)."""
    r = _EVI + slot
    j = 3 if t >= 27 else t // 9
    k = wi[r, 4]
    pk = wi[r, j] - _POW5[t - 9 * j]
    ie = _slot_row(slot) + j
    best = -128
    for n in range(k + 1):
        best = max(best, max(np.int64(tab[pk, 0, n]) + ws[ie, 1, k - n], np.int64(tab[pk, 1, n]) + ws[ie, 0, k - n]))
    return 2 * k - best


@njit(cache=True)
def _ev_ukeire(h, t, nm, sp, live, allowed, tab, ws, wi, slot):
    """(shanten, live improving tiles, improving bits) of the slot's hand ``h`` less one ``t`` (``t < 0``: ``h``
    itself) over kinds ``allowed`` (bits): shanten standard, and seven pairs where ``sp`` and no melds.

    A draw in the discard's component is scored against the slot's product of the other three; a draw
    elsewhere against (the changed component ⊗ the slot's product of the remaining two), one product per
    component drawn in (scratch row 0)."""
    b = _slot_row(slot)
    r = _EVI + slot
    k = wi[r, 4]
    j = -1
    cj = 0
    if t >= 0:
        s_std = _ev_after(t, tab, ws, wi, slot)
        j = 3 if t >= 27 else t // 9
        cj = wi[r, j] - _POW5[t - 9 * j]
        pairs = wi[r, 6] - (1 if h[t] % 2 == 0 else 0)
        h[t] -= 1
    else:
        s_std = wi[r, 5]
        pairs = wi[r, 6]
    s7on = sp and nm == 0
    base = s_std
    if s7on:
        base = min(base, 6 - min(pairs, 7))
    std_ok = s_std == base  # else a draw would have to lower the standard shanten by two
    target = 2 * k - base + 1
    acc = 0
    bits = np.int64(0)
    for i in range(4):
        size = 7 if i == 3 else 9
        ci = cj if i == j else wi[r, i]
        ie = b + i
        ready = j < 0 or i == j
        for x in range(9 * i, 9 * i + size):
            if (allowed >> x) & 1 == 0 or h[x] >= 4 or live[x] <= 0:
                continue
            if h[x] == 0:  # drawing x can matter only next to a held tile of its suit, within two ranks
                if i == 3:
                    continue
                rx = x - 9 * i
                if not ((rx >= 2 and h[x - 2] > 0) or (rx >= 1 and h[x - 1] > 0) or (rx <= 7 and h[x + 1] > 0)
                        or (rx <= 6 and h[x + 2] > 0)):
                    continue
            imp = False
            if s7on and h[x] % 2 == 1 and 6 - min(pairs + 1, 7) < base:
                imp = True
            if not imp and std_ok:
                if not ready:
                    _ev_pairs(tab, ws, wi, slot)
                    rest_empty = True  # both of the remaining components empty
                    for c in range(4):
                        if c != i and c != j and (wi[r, 7] >> c) & 1 == 0:
                            rest_empty = False
                    _mul(tab, cj, cj == _empty_key(j), ws, b + 4 + _REST[i, j], rest_empty, ws, 0, k)
                    ie = 0
                    ready = True
                pk = ci + _POW5[x - 9 * i]
                for n in range(k + 1):
                    if (np.int64(tab[pk, 0, n]) + ws[ie, 1, k - n] >= target
                            or np.int64(tab[pk, 1, n]) + ws[ie, 0, k - n] >= target):
                        imp = True
                        break
            if imp:
                acc += live[x]
                bits |= np.int64(1) << x
    if t >= 0:
        h[t] += 1
    return base, acc, bits


@njit(cache=True)
def _shanten(h, nm, sp, tab, ws):
    """Shanten of ``h`` (standard, and seven pairs where ``sp`` and no melds); scratch rows 2-3."""
    c0 = _key(h, 0)
    c1 = _key(h, 1)
    c2 = _key(h, 2)
    c3 = _key(h, 3)
    k = 4 - nm
    _mul(tab, c2, c2 == 0, tab, c3, c3 == _HONOR_KEY, ws, 3, k)
    _mul(tab, c1, c1 == 0, ws, 3, False, ws, 2, k)
    s = 2 * k - _dot(tab, c0, ws, 2, k)
    if sp and nm == 0:
        s7 = 6 - min(_pairs(h), 7)
        if s7 < s:
            s = s7
    return s


@njit(cache=True)
def _ukeire(h, nm, sp, live, allowed, ws, wi, tab):
    """(shanten, live improving tiles, improving bits) of the hand ``h`` over kinds ``allowed`` (bits), in the
    spare slot."""
    _ev_prepare(h, nm, tab, ws, wi, 4)
    return _ev_ukeire(h, -1, nm, sp, live, allowed, tab, ws, wi, 4)


# ------------------------------------------------------------------------------------------- plans


@njit(cache=True, inline="always")
def _rank_mask(h, s):
    """Bit r set where suit ``s`` of ``h`` holds rank r (the index of the 烂牌 tables of :mod:`agents.players.plans`)."""
    m = 0
    for r in range(9):
        if h[9 * s + r] > 0:
            m |= 1 << r
    return m


@njit(cache=True)
def _lanpai_shanten(h, nm, best):
    if nm != 0:
        return 99
    cnt = 0
    for s in range(3):
        cnt += best[_rank_mask(h, s)]
    for t in range(27, 34):
        if h[t] > 0:
            cnt += 1
    return 13 - cnt


@njit(cache=True)
def _lanpai_ukeire(h, live, gain):
    acc = 0
    for s in range(3):
        m = _rank_mask(h, s)
        for r in range(9):
            if h[9 * s + r] == 0 and gain[m, r]:
                acc += live[9 * s + r]
    for t in range(27, 34):
        if h[t] == 0:
            acc += live[t]
    return acc


@njit(cache=True)
def _triplets_shanten(h, nm, nchi):
    if nchi > 0:
        return 99
    s = min(max(4 - nm, 0), 4)
    top = np.zeros(5, np.int64)  # the five largest min(count, 3), descending
    for t in range(34):
        c = min(h[t], 3)
        if c <= top[4]:
            continue
        i = 4
        while i > 0 and top[i - 1] < c:
            top[i] = top[i - 1]
            i -= 1
        top[i] = c
    used = 0
    for i in range(s + 1):
        used += top[i]
    if top[s] == 3:
        used -= 1
    return 3 * s + 1 - used


@njit(cache=True)
def _triplets_ukeire(h, nm, nchi, live):
    base = _triplets_shanten(h, nm, nchi)
    acc = 0
    for t in range(34):
        if h[t] == 1 or h[t] == 2:
            h[t] += 1
            if _triplets_shanten(h, nm, nchi) < base:
                acc += live[t]
            h[t] -= 1
    return acc


@njit(cache=True)
def _allowed_bits(p, cfg):
    """Kinds plan ``p`` keeps (0-2 a flush in that suit, else everything), as bits."""
    if p >= 3:
        return (np.int64(1) << 34) - 1
    bits = ((np.int64(1) << 9) - 1) << (9 * p)
    if cfg[PC_FLUSH_HONORS]:
        bits |= ((np.int64(1) << 7) - 1) << 27
    return bits


@njit(cache=True)
def _flush_feasible(mt, p, cfg):
    bits = _allowed_bits(p, cfg)
    for t in range(34):
        if mt[t] > 0 and (bits >> t) & 1 == 0:
            return False
    return True


@njit(cache=True)
def _plan_shanten(h, nm, p, cfg, tab, tmp, kept):
    """Shanten of ``h`` restricted to flush plan ``p``'s kinds, never below the off-plan tiles still to go."""
    bits = _allowed_bits(p, cfg)
    off = 0
    total = 0
    for t in range(34):
        total += h[t]
        if (bits >> t) & 1:
            kept[t] = h[t]
        else:
            kept[t] = 0
            off += h[t]
    s = _shanten(kept, nm, cfg[PC_SP] != 0, tab, tmp)
    discarding = 1 if (total + 3 * nm) % 3 == 2 else 0
    return max(s, off - discarding)


@njit(cache=True)
def _plan_costs(h, nm, mt, nchi, cfg, tab, best, tmp, kept, out):
    """Shanten of ``h`` under each plan (0-2 flush, 3 plain, 4 unused, 5 triplets; 99 = not available)."""
    for p in range(6):
        out[p] = 99
    out[3] = _shanten(h, nm, cfg[PC_SP] != 0, tab, tmp)
    if cfg[PC_LANPAI]:
        out[3] = min(out[3], _lanpai_shanten(h, nm, best))
    if cfg[PC_FLUSH] >= 0:
        for p in range(3):
            if _flush_feasible(mt, p, cfg):
                out[p] = _plan_shanten(h, nm, p, cfg, tab, tmp, kept)
    if cfg[PC_TRIP] > 0:
        out[5] = _triplets_shanten(h, nm, nchi)


@njit(cache=True)
def _discard_costs(h, nm, mt, nchi, m, cfg, tab, best_tab, ws, wi, kept, costs):
    """``costs[t, p]``: :func:`_plan_costs` of the hand after each legal discard t (rows of ``costs``), by one-tile
    tests against the hand's (and each flush's kept tiles') prepared slot, which the ukeire then reuse."""
    s7on = cfg[PC_SP] != 0 and nm == 0
    _ev_prepare(h, nm, tab, ws, wi, 3)
    pairs = wi[_EVI + 3, 6]
    for t in range(34):
        if not (m[t] or m[A.LIANG + t]):
            continue
        for p in range(6):
            costs[t, p] = 99
        s = _ev_after(t, tab, ws, wi, 3)
        if s7on:
            s = min(s, 6 - min(pairs - (1 if h[t] % 2 == 0 else 0), 7))
        costs[t, 3] = s
        if cfg[PC_LANPAI] or cfg[PC_TRIP] > 0:
            h[t] -= 1
            if cfg[PC_LANPAI]:
                costs[t, 3] = min(costs[t, 3], _lanpai_shanten(h, nm, best_tab))
            if cfg[PC_TRIP] > 0:
                costs[t, 5] = _triplets_shanten(h, nm, nchi)
            h[t] += 1
    if cfg[PC_FLUSH] < 0:
        return
    for p in range(3):
        if not _flush_feasible(mt, p, cfg):
            continue
        bits = _allowed_bits(p, cfg)
        off = 0
        for x in range(34):
            if (bits >> x) & 1:
                kept[x] = h[x]
            else:
                kept[x] = 0
                off += h[x]
        _ev_prepare(kept, nm, tab, ws, wi, p)
        kp = wi[_EVI + p, 6]
        base = wi[_EVI + p, 5]
        if s7on:
            base = min(base, 6 - min(kp, 7))
        for t in range(34):
            if not (m[t] or m[A.LIANG + t]):
                continue
            if (bits >> t) & 1:
                s = _ev_after(t, tab, ws, wi, p)
                if s7on:
                    s = min(s, 6 - min(kp - (1 if kept[t] % 2 == 0 else 0), 7))
                costs[t, p] = max(s, off)
            else:
                costs[t, p] = max(base, off - 1)


@njit(cache=True)
def _bonus(p, cfg):
    if p < 3:
        return max(cfg[PC_FLUSH], 0)
    if p == 5:
        return cfg[PC_TRIP]
    return 0


@njit(cache=True)
def _value_cost(h, nm, mt, nchi, cfg, tab, best, tmp, kept, costs):
    _plan_costs(h, nm, mt, nchi, cfg, tab, best, tmp, kept, costs)
    v = 999
    for p in range(6):
        if costs[p] < 99:
            c = costs[p] - _bonus(p, cfg)
            if c < v:
                v = c
    return v
