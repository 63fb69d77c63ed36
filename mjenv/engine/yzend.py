"""Yangzhou in the compiled game core: its claim-window verdicts, its self-draw fan minimum and its wins.

Beside :mod:`mjenv.engine.yzscore` (the compiled twin of :mod:`mjenv.rules.scoring.yangzhou`'s judging),
this module owns where the state machine asks it: :func:`_yz_window` judges the seats that complete on a
claimed tile (fan minimum, missed-win lock, 大吊车; the engine's ``P_WINDOW`` handler, compiled),
:func:`_yz_self_draw` the win bit of a self-draw's mask and :func:`_yz_end` settles a win as
``yangzhou.settle_win`` does (T of the best reading, §8.8 payments, the 包牌 of §8.9).  The round wind comes
from ``pend[b, PEND_ROUND_WIND]`` (written by the engine at each deal).  The gated entries
(:data:`yz_window_if`, :data:`yz_self_draw_if`, :data:`yz_end_if`) are what the rest of the kernels call, so
that only an entry holding ``FEAT_YZ`` compiles this.  The ``results`` dict of a hand settled here is built when
read from the fans it leaves in each winner's fan row (``yangzhou.score_settled``), by the pure scorer when a
reading ties.
"""

from __future__ import annotations

import numpy as np

from mjenv.engine import fanrow, yzscore
from mjenv.engine.codes import (
    A_WIN,
    C_DD_FLAGS,
    C_N,
    C_SINGLE_WINNER,
    C_YZ,
    DD_BAOPAI,
    END_DISCARD,
    END_ROB,
    END_SELF_DRAW,
    F_BASE,
    P_SELF_DRAW,
    PEND_FANS,
    PEND_OVER,
    PEND_READING,
    PEND_ROUND_WIND,
)
from mjenv.engine.gates import (
    FEAT_YZ,
    code_unchanged,
    false,
    gate,
    nothing,
    kernel,
)
from mjenv.engine.state import (
    ADDED_KONG,
    CHI_MELD,
    MAX_MELDS,
    MAX_SEATS,
    O8_CLAIM_FROM,
    O8_CLAIM_REPLY,
    O8_CLAIM_TILE,
    O8_CUR,
    O8_DRAWN,
    O8_MELD_SRC,
    O8_PHASE,
    PONG_MELD,
    ROB,
    O16_CLAIM_VALUE,
    O16_LOCK,
    O8_CLAIM_OPTS,
    O8_DADIAOCHE,
    O8_DEALER,
    O8_MELD_KIND,
    O8_MELD_TILE,
    O8_N_MELDS,
)
from mjenv.engine.table import _end_hand, _give_won_tile, _hand, _pay


@kernel
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


@kernel
def _yz_self_draw(E, b, s, w):
    """Yangzhou: the self-draw of seat ``s`` on ``w`` reaches the fan minimum (the win bit of its mask)."""
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


@kernel
def _yz_total(E, b, s, w, self_draw):
    """``(T, code)`` of seat ``s``'s best reading of its win on ``w`` (``yzscore.best``; a self-draw's ``w`` is in
    the hand already, a claimed one is not); when that code names one reading (no READING_TIE), its fans, T and no
    cap in the seat's fan row ``pend[b, PEND_FANS + FAN_SLOTS * s:]`` (``yzscore.reading_fans``,
    :mod:`mjenv.engine.fanrow`)."""
    r8 = E[0][b]
    scr = E[9]
    h = _hand(r8, s)
    for t in range(34):
        scr[3, t] = h[t]
    if self_draw:
        scr[3, w] -= 1
    mk = r8[O8_MELD_KIND + MAX_MELDS * s : O8_MELD_KIND + MAX_MELDS * s + MAX_MELDS]
    mt = r8[O8_MELD_TILE + MAX_MELDS * s : O8_MELD_TILE + MAX_MELDS * s + MAX_MELDS]
    seat_wind = np.int64(27 + (s - r8[O8_DEALER] + 4) % 4)
    yc = E[7][C_YZ : C_YZ + yzscore.N_YZ]
    _, total, _, code = yzscore.best(
        scr[3], scr[0], scr[1], scr[2], np.int64(w), mk, mt, r8[O8_N_MELDS + s], self_draw, seat_wind,
        E[4][b, PEND_ROUND_WIND], yc, E[8],
    )
    if code >= 0 and (code & yzscore._TIE) == 0:
        yzscore.reading_fans(
            scr[3], scr[0], scr[1], scr[2], np.int64(w), mk, mt, r8[O8_N_MELDS + s], self_draw, seat_wind,
            E[4][b, PEND_ROUND_WIND], yc, E[8], code, total,
            E[4][b, PEND_FANS + fanrow.FAN_SLOTS * s : PEND_FANS + fanrow.FAN_SLOTS * (s + 1)],
        )
    return total, code


@kernel
def _yz_liable(E, b, s, w, add):
    """``yangzhou.liable_seat`` of seat ``s``'s win on ``w`` (added to its hand when ``add``) under ``baopai``
    (§8.9): the previous seat for 清一色 with three chi melds, the source of the fourth meld (a pong, or a pong
    later konged) for 风清; -1 for none."""
    r8 = E[0][b]
    if E[7][C_DD_FLAGS] & DD_BAOPAI == 0:
        return -1
    h = _hand(r8, s)
    suits = 0
    honors = False
    for x in range(34):
        if h[x] > 0 or (add and x == w):
            if x >= 27:
                honors = True
            else:
                suits |= 1 << (x // 9)
    nm = r8[O8_N_MELDS + s]
    chis = 0
    for j in range(nm):
        t = r8[O8_MELD_TILE + MAX_MELDS * s + j]
        if t >= 27:
            honors = True
        else:
            suits |= 1 << (t // 9)
        if r8[O8_MELD_KIND + MAX_MELDS * s + j] == CHI_MELD:
            chis += 1
    if (suits == 1 or suits == 2 or suits == 4) and not honors and chis >= 3:
        return (s + MAX_SEATS - 1) % MAX_SEATS
    if suits == 0 and nm >= 4:
        kind = r8[O8_MELD_KIND + MAX_MELDS * s + 3]
        if kind == PONG_MELD or kind == ADDED_KONG:
            return r8[O8_MELD_SRC + MAX_MELDS * s + 3]
    return -1


@kernel
def _yz_end(E, b, code):
    """Settle a Yangzhou win (P_SELF_DRAW or P_CLAIM_WIN) as the engine's Python path does (``yangzhou.settle_win``:
    T·b from each other seat on a self-draw, 2·T·b from the discarder (konger) to each winner in turn order; the
    liable seat of 包牌 pays it all), the claimed tile joining the nearest winner's hand; end the hand and return
    P_ENDED with ``pend[b, 1]`` = END_* and each winner's reading code in ``pend[b, PEND_READING + s]`` (-1 for
    the others), its fans in the seat's fan row (:func:`_yz_total`).  The claim window and the mask judged the wins legal already."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    n = MAX_SEATS
    base = fcfg[F_BASE]
    pend[b, PEND_OVER] = 0
    for x in range(n):
        pend[b, PEND_READING + x] = -1
        pend[b, PEND_FANS + fanrow.FAN_SLOTS * x + fanrow.ROW_N] = 0
    if code == P_SELF_DRAW:
        s = r8[O8_CUR]
        w = r8[O8_DRAWN]
        total, pend[b, PEND_READING + s] = _yz_total(E, b, s, w, True)
        t = float(total) * base
        liable = _yz_liable(E, b, s, w, False)
        if liable >= 0:
            _pay(money, b, liable, s, (n - 1) * t)
        else:
            for p in range(n):
                if p != s:
                    _pay(money, b, p, s, t)
        kind = END_SELF_DRAW
    else:
        frm = r8[O8_CLAIM_FROM]
        tile = r8[O8_CLAIM_TILE]
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
            total, pend[b, PEND_READING + s] = _yz_total(E, b, s, tile, False)
            t = float(total) * base
            liable = _yz_liable(E, b, s, tile, True)
            _pay(money, b, frm if liable < 0 else liable, s, 2 * t)
        _give_won_tile(r8, E[1][b], frm, tile, first, rob)
        kind = END_ROB if rob else END_DISCARD
    return _end_hand(E, b, kind)


yz_window_if = gate(FEAT_YZ, _yz_window, nothing)
yz_self_draw_if = gate(FEAT_YZ, _yz_self_draw, false)
yz_end_if = gate(FEAT_YZ, _yz_end, code_unchanged)
