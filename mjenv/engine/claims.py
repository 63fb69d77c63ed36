"""Claim windows in the compiled game core: who may win, pong, kong or chi a tile, asked in turn, resolved by priority.

This module owns docs/rules/common.md §1.8 in the kernels: :func:`_open_window` finds who may claim a
discarded tile (or rob an added kong or a kong replacement tile) — the shapes from :mod:`mjenv.engine.handk`,
the wins judged by the family (:mod:`mjenv.engine.kwend`, :mod:`mjenv.engine.yzend`,
:mod:`mjenv.engine.ddend`, :mod:`mjenv.engine.gjend`, or the engine in Python: ``P_WINDOW``);
:func:`_next_claimant` asks the eligible seats in turn order; :func:`_resolve` gives the tile by priority
and carries the table on (the claimed meld, a won tile: ``P_CLAIM_WIN``, or nobody: the next draw or the
kong laid down).
"""

from __future__ import annotations

import numpy as np

from mjenv.engine import yzscore
from mjenv.engine.codes import (
    A_CHI_HIGH,
    A_CHI_LOW,
    A_KONG_CLAIM,
    A_PONG,
    A_WIN,
    C_CHI,
    C_KW_SCORE,
    C_LOUHU_WINDOW,
    C_N,
    C_WIN_ON_SHAPE,
    C_YZ,
    EV_REPLY,
    N_ACTIONS,
    P_CLAIM_WIN,
    P_NONE,
    P_WINDOW,
)
from mjenv.engine.ddend import _louhu_window
from mjenv.engine.gates import kernel
from mjenv.engine.gjend import _shape_window
from mjenv.engine.jit import njit
from mjenv.engine.kwend import kw_window_if
from mjenv.engine.state import (
    ADDED_KONG,
    CHI_MELD,
    CLAIM,
    DIRECT_KONG,
    O16_BACK,
    O16_CLAIM_VALUE,
    O16_FRONT,
    O16_LOCK,
    O8_ACTOR,
    O8_CLAIM_FROM,
    O8_CLAIM_OPTS,
    O8_CLAIM_REPLY,
    O8_CLAIM_TILE,
    O8_CUR,
    O8_PHASE,
    O8_REVEALED,
    O8_ROB_REPLACEMENT,
    PONG_MELD,
    ROB,
    TURN,
)
from mjenv.engine.table import (
    _claim_meld,
    _complete_kong,
    _complete_with,
    _direct_kong,
    _draw,
    _event,
    _hand,
    _revealed_kong_ok,
)
from mjenv.engine.yzend import yz_window_if


# Claim priority as data (docs/rules/common.md §1.8; mjx's table, Ron > Kan > Pon > Chi): the reply of the highest
# rank takes the tile, the nearest seat after the discarder keeping a tie; a pass ranks 0.  (Pong and kong never
# meet: one player holds the other copies.)
RANK_CHI, RANK_PONG, RANK_KONG, RANK_WIN = 1, 2, 3, 4
CLAIM_RANK = np.zeros(N_ACTIONS, np.int8)
CLAIM_RANK[A_CHI_LOW : A_CHI_HIGH + 1] = RANK_CHI
CLAIM_RANK[A_PONG] = RANK_PONG
CLAIM_RANK[A_KONG_CLAIM] = RANK_KONG
CLAIM_RANK[A_WIN] = RANK_WIN


# ----------------------------------------------------------------------------------------- claim windows
@njit(cache=True, _nrt=False, inline="always")
def _seat_after(frm, k, n):
    """``(frm + k) % n`` for a seat ``frm`` (0 <= frm < n) and 0 <= k < n, without a division."""
    s = frm + k
    return s - n if s >= n else s


@kernel
def claim_bits(r8, cfg, tabs, scr, s, t, next_player, can):
    """Seat ``s``'s claims of ``t`` other than a win: bits 2 pong, 4 direct kong, 8/16/32 chi low/mid/high (the
    discarder's ``next_player`` only); none unless ``can`` (a discard, not a rob, with a tile left to replace).
    Also used by :mod:`mjenv.engine.worlds` to re-open a window in a sampled world."""
    opts = 0
    if can:
        h = _hand(r8, s)
        cnt = h[t]
        rev = r8[O8_REVEALED + s] != 0
        if cnt >= 2 and not rev:
            opts |= 2
        if cnt == 3 and (not rev or _revealed_kong_ok(r8, cfg, tabs, scr, s, t, DIRECT_KONG)):
            opts |= 4
        if next_player and cfg[C_CHI] != 0 and t < 27:
            rank = t % 9
            if rank <= 6 and h[t + 1] > 0 and h[t + 2] > 0:
                opts |= 8
            if 1 <= rank <= 7 and h[t - 1] > 0 and h[t + 1] > 0:
                opts |= 16
            if rank >= 2 and h[t - 2] > 0 and h[t - 1] > 0:
                opts |= 32
    return opts


@kernel
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
        s = _seat_after(frm, k, n)
        if _complete_with(r8, cfg, tabs, s, t):
            to_score |= 1 << s
        opts = claim_bits(r8, cfg, tabs, scr, s, t, k == 1, not rob and can)
        r8[O8_CLAIM_OPTS + s] = opts
    r8[O8_PHASE] = ROB if rob else CLAIM
    if to_score:
        if cfg[C_KW_SCORE] != 0 and kw_window_if(E, b, t, frm, rob, to_score):
            return _next_claimant(E, b)
        if cfg[C_YZ + yzscore.YZ_ON] != 0:
            yz_window_if(E, b, t, to_score)
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


@kernel
def _next_claimant(E, b):
    """Point the window at its next unanswered eligible seat in turn order; resolve a finished window."""
    r8 = E[0][b]
    n = E[7][C_N]
    frm = r8[O8_CLAIM_FROM]
    for k in range(1, n):
        s = _seat_after(frm, k, n)
        if r8[O8_CLAIM_OPTS + s] > 0 and r8[O8_CLAIM_REPLY + s] < 0:
            r8[O8_ACTOR] = s
            return P_NONE
    return _resolve(E, b)


@kernel
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


@kernel
def _resolve(E, b):
    """Give the tile under claim by :data:`CLAIM_RANK` once every eligible seat replied, and carry the table on."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    n = cfg[C_N]
    frm = r8[O8_CLAIM_FROM]
    best = 0
    who = -1
    for k in range(1, n):  # the nearest seat after the discarder first: it keeps a tie
        s = _seat_after(frm, k, n)
        a = r8[O8_CLAIM_REPLY + s]
        if a >= 0 and CLAIM_RANK[a] > best:
            best = CLAIM_RANK[a]
            who = s
    if best == RANK_WIN:  # every seat that said win (who is paid: the hand end, multi_win)
        return P_CLAIM_WIN
    if best == 0:  # nobody claims
        for s in range(n):
            r8[O8_CLAIM_OPTS + s] = 0
        if r8[O8_PHASE] == CLAIM:
            return _draw(E, b, _seat_after(frm, 1, n))
        if r8[O8_ROB_REPLACEMENT] != 0:  # nobody took the replacement tile: the konger plays on
            r8[O8_ROB_REPLACEMENT] = 0
            r8[O8_PHASE] = TURN
            r8[O8_ACTOR] = r8[O8_CUR]
            r8[O8_CLAIM_TILE] = -1
            return P_NONE
        return _complete_kong(E, b, r8[O8_CUR], r8[O8_CLAIM_TILE], ADDED_KONG, -1)
    if best == RANK_KONG:
        return _direct_kong(E, b, who)
    if best == RANK_PONG:
        return _claim_meld(E, b, who, PONG_MELD, r8[O8_CLAIM_TILE])
    # only the discarder's next player may chi (its window offers nothing else)
    return _claim_meld(E, b, who, CHI_MELD, r8[O8_CLAIM_TILE] - (r8[O8_CLAIM_REPLY + who] - A_CHI_LOW))


