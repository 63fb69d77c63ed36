"""Gejiu in the compiled game core: its claim windows and its wins, valued and settled here.

Beside :mod:`mjenv.engine.gjscore` (the compiled twin of :mod:`mjenv.rules.scoring.gejiu`'s valuing), this
module owns where the state machine asks it: :func:`_shape_window` opens the win on every complete shape
(§6.4, §6.8: no minimum, no missed-win lock), :func:`_gj_end` values and settles a self-draw or a won
discard / rob as ``gejiu.settle_win`` does.  Drawn Gejiu hands pay nothing (``table._end_hand``).  The gated
entry (:data:`gj_end_if`) is what the rest of the kernels call, so that only an entry holding ``FEAT_GJ``
compiles the scorer.
"""

from __future__ import annotations

from mjenv.engine import fanrow, gjscore
from mjenv.engine.codes import (
    A_WIN,
    C_GJ,
    C_N,
    C_SINGLE_WINNER,
    END_DISCARD,
    END_ROB,
    END_SELF_DRAW,
    F_BASE,
    P_SELF_DRAW,
    PEND_FANS,
    PEND_READING,
)
from mjenv.engine.gates import (
    FEAT_GJ,
    code_unchanged,
    gate,
    kernel,
)
from mjenv.engine.state import (
    MAX_MELDS,
    MAX_SEATS,
    O16_CLAIM_VALUE,
    O8_AFTER_KONG,
    O8_CLAIM_FROM,
    O8_CLAIM_OPTS,
    O8_CLAIM_REPLY,
    O8_CLAIM_TILE,
    O8_CUR,
    O8_DRAWN,
    O8_MELD_KIND,
    O8_MELD_TILE,
    O8_N_MELDS,
    O8_PHASE,
    ROB,
)
from mjenv.engine.table import _end_hand, _full_hand, _give_won_tile, _pay
from mjenv.rules.hand import READING_TIE


@kernel
def _shape_window(E, b, bits):
    """Gejiu (§6.4, §6.8: no minimum, no missed-win lock, a rob of the allowed kind): every seat of ``bits``
    whose hand completes on the tile may win it, as the engine's P_WINDOW handler found (claim bit 1, value 1)."""
    r8 = E[0][b]
    r16 = E[1][b]
    for s in range(E[7][C_N]):
        if (bits >> s) & 1:
            r8[O8_CLAIM_OPTS + s] |= 1
            r16[O16_CLAIM_VALUE + s] = 1


@kernel
def _gj_value(E, b, s, w, add, after_kong, rob):
    """Gejiu V of seat ``s``'s best reading with tile ``w`` (added to its concealed hand when ``add``), written with
    the code of that reading to ``pend[b, PEND_READING + s]`` and, when no other reading has the same value, its
    patterns to the seat's fan row ``pend[b, PEND_FANS + FAN_SLOTS * s:]`` (:mod:`mjenv.engine.fanrow`)."""
    r8 = E[0][b]
    _full_hand(E, b, s, w, add)
    value, code, bits = gjscore.best_reading(
        E[9][0], E[9][1],
        r8[O8_MELD_KIND + MAX_MELDS * s : O8_MELD_KIND + MAX_MELDS * s + MAX_MELDS],
        r8[O8_MELD_TILE + MAX_MELDS * s : O8_MELD_TILE + MAX_MELDS * s + MAX_MELDS],
        r8[O8_N_MELDS + s], after_kong, rob, E[7][C_GJ : C_GJ + gjscore.N_GJ],
    )
    E[4][b, PEND_READING + s] = code
    if code >= 0 and code & READING_TIE == 0:
        gjscore.reading_fans(bits, E[7][C_GJ : C_GJ + gjscore.N_GJ],
                             E[4][b, PEND_FANS + fanrow.FAN_SLOTS * s : PEND_FANS + fanrow.FAN_SLOTS * (s + 1)])
    return value


@kernel
def _gj_end(E, b, code):
    """Settle a Gejiu win (P_SELF_DRAW or P_CLAIM_WIN) as the engine's Python path does (``gejiu.settle_win``:
    V · b from each other seat on a self-draw, from the discarder / konger to each winner in turn order
    otherwise; the claimed tile joins the nearest winner's hand), end the hand and return P_ENDED with
    ``pend[b, 1]`` = END_* and each winner's reading code in ``pend[b, PEND_READING + s]`` (-1 for the others), its
    patterns in the seat's fan row.  Every complete shape is a legal win (§6.8), so no verdict is needed."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    n = cfg[C_N]
    base = fcfg[F_BASE]
    for x in range(MAX_SEATS):
        pend[b, PEND_READING + x] = -1
        pend[b, PEND_FANS + fanrow.FAN_SLOTS * x + fanrow.ROW_N] = 0
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
        _give_won_tile(r8, r16, frm, t, first, rob)
        kind = END_ROB if rob else END_DISCARD
    return _end_hand(E, b, kind)


gj_end_if = gate(FEAT_GJ, _gj_end, code_unchanged)
