"""Yangzhou in the compiled game core: its claim-window verdicts and its self-draw fan minimum.

Beside :mod:`mjenv.engine.yzscore` (the compiled twin of :mod:`mjenv.rules.scoring.yangzhou`'s judging),
this module owns where the state machine asks it: :func:`_yz_window` judges the seats that complete on a
claimed tile (fan minimum, missed-win lock, 大吊车; the engine's ``P_WINDOW`` handler, compiled) and
:func:`_yz_self_draw` the win bit of a self-draw's mask.  The round wind comes from ``pend[b,
PEND_ROUND_WIND]`` (written by the engine at each deal).  The hand ends stay in Python (the engine's
``P_SELF_DRAW`` / ``P_CLAIM_WIN``).  The gated entries (:data:`yz_window_if`, :data:`yz_self_draw_if`) are
what the rest of the kernels call, so that only an entry holding ``FEAT_YZ`` compiles this.
"""

from __future__ import annotations

import numpy as np

from mjenv.engine import yzscore
from mjenv.engine.codes import C_N, C_YZ, PEND_ROUND_WIND
from mjenv.engine.gates import (
    FEAT_YZ,
    false,
    gate,
    nothing,
    kernel,
)
from mjenv.engine.state import (
    MAX_MELDS,
    O16_CLAIM_VALUE,
    O16_LOCK,
    O8_CLAIM_OPTS,
    O8_DADIAOCHE,
    O8_DEALER,
    O8_MELD_KIND,
    O8_MELD_TILE,
    O8_N_MELDS,
)
from mjenv.engine.table import _hand


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


yz_window_if = gate(FEAT_YZ, _yz_window, nothing)
yz_self_draw_if = gate(FEAT_YZ, _yz_self_draw, false)
