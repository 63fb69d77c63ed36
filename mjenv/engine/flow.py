"""The actions and the automatic moves of the compiled game core: apply, advance, resume.

:func:`_apply` plays one action of a table's acting seat (a discard and its claim window, a kong and its
rob window, a Gejiu kong-tile pick, a reply in a window, a self-drawn win); :func:`_advance` recomputes the
mask (:mod:`mjenv.engine.masks`) and plays while the acting seat has exactly one legal action;
:func:`_resume` carries a table on after the engine handled its pending in Python (:mod:`mjenv.engine.codes`).
The state changes themselves are :mod:`mjenv.engine.table`'s, the windows :mod:`mjenv.engine.claims`'s.
"""

from __future__ import annotations

from mjenv.engine.claims import _next_claimant, _open_window, _reply
from mjenv.engine.codes import (
    A_KONGTILE_0,
    A_KONG_SELF,
    A_LIANG,
    A_WIN,
    C_ROB_ADDED,
    C_ROB_REPLACEMENT,
    EV_ADD_KONG,
    EV_PICK,
    N_ACTIONS,
    P_NONE,
    P_SELF_DRAW,
    P_WINDOW,
)
from mjenv.engine.gates import kernel
from mjenv.engine.masks import _compute_mask
from mjenv.engine.state import (
    ADDED_KONG,
    CLAIMED,
    CONCEALED_KONG,
    DONE,
    O16_BACK,
    O16_FRONT,
    O8_CUR,
    O8_HAND,
    O8_HIDDEN,
    O8_KONG_TILES,
    O8_PHASE,
    O8_ROB_REPLACEMENT,
    O8_WALL,
    PICK,
    TURN,
)
from mjenv.engine.table import (
    _add_meld,
    _complete_kong,
    _discard,
    _event,
    _finish_kong,
    _replacement,
)


@kernel
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


@kernel
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
@kernel
def _apply(E, b, a):
    """Apply action ``a`` of table ``b``'s acting seat; returns a pending code or P_NONE."""
    ph = E[0][b, O8_PHASE]
    if ph == TURN or ph == CLAIMED:
        if a < A_KONG_SELF:  # a discard, then the claim window on it
            t = a % 34
            s = E[0][b, O8_CUR]
            _discard(E, b, t, a >= A_LIANG)
            return _open_window(E, b, t, s, False)
        if a == A_WIN:
            return P_SELF_DRAW
        return _self_kong(E, b, a - A_KONG_SELF)
    if ph == PICK:
        return _pick(E, b, a - A_KONGTILE_0)
    return _reply(E, b, a)


@kernel
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
            count, last = _compute_mask(E, b)
        if count != 1:
            return P_NONE
        count = 0
        status = _apply(E, b, last)
        if status != P_NONE:
            return status


@kernel
def _resume(E, b, code):
    """Carry on table ``b`` after the engine handled pending ``code`` in Python."""
    if code == P_WINDOW:
        status = _next_claimant(E, b)
        if status != P_NONE:
            return status
    return _advance(E, b, 0, -1)  # (else the hand ended in Python)


