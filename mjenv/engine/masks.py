"""Legal-action masks in the compiled game core (docs/rules/common.md §1.7–§1.9, the family rules they ask).

:func:`_compute_mask` writes one table's row of the mask (111 actions, :mod:`mjenv.engine.actions`): on
one's own turn the discards, the 亮倒 discards (:func:`mjenv.engine.handk.discard_ready_complete`, which reads
the hand's completion with them), the kongs allowed by their timing and the revealed-kong rule, and the self-draw
win (its fan minimum from :mod:`mjenv.engine.yzend`); after a claim the discards; in a claim window the replies
the window allows; in Gejiu's pick the face-up kong tiles.  It also counts the legal actions and names the highest, so that
:func:`mjenv.engine.flow._advance` plays a single legal action at once.
"""

from __future__ import annotations

import numpy as np

from mjenv.engine import handk
from mjenv.engine.codes import (
    A_CHI_LOW,
    A_KONGTILE_0,
    A_KONG_CLAIM,
    A_KONG_SELF,
    A_LIANG,
    A_PASS,
    A_PONG,
    A_WIN,
    C_ANGANG_IMMEDIATE,
    C_KINDS_BITS,
    C_LIANG,
    C_SELF_DRAW_MINIMUM,
    C_SEVEN_PAIRS,
    C_SPECIAL,
    N_ACTIONS,
)
from mjenv.engine.gates import kernel
from mjenv.engine.state import (
    ADDED_KONG,
    CLAIMED,
    CONCEALED_KONG,
    MAX_MELDS,
    O16_BACK,
    O16_FRONT,
    O8_ACTOR,
    O8_CLAIM_OPTS,
    O8_CUR,
    O8_DRAWN,
    O8_KONG_TILES,
    O8_MELDED,
    O8_MELD_KIND,
    O8_MELD_TILE,
    O8_N_MELDS,
    O8_PHASE,
    O8_REVEALED,
    O8_TURNS,
    PICK,
    PONG_MELD,
    TURN,
)
from mjenv.engine.table import _hand, _revealed_kong_ok
from mjenv.engine.yzend import yz_self_draw_if


@kernel
def _own_turn_mask(E, b, m):
    """Legal actions of the seat on turn (after a draw or a claim) into the cleared row ``m``.

    Returns ``(count, last)``: the number of legal actions and the highest one.
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
    complete = False  # is_complete(h), when the 亮倒 discards below read it with them
    have_complete = False
    if not rev:
        for x in range(34):  # branch-free (the row is cleared): which tiles are held is not predictable
            held = h[x] > 0
            m[x] = held
            count += held
            last = x if held else last
        if cfg[C_LIANG] != 0:
            owned_keep = 0  # handk.owned_bits of the owned counts (concealed + melded), in one pass
            melded = O8_MELDED + 34 * s
            for x in range(34):
                owned_keep |= np.int64(h[x] + r8[melded + x] < 4) << x
            sp = cfg[C_SEVEN_PAIRS] != 0
            bits, complete = handk.discard_ready_complete(h, sp, cfg[C_KINDS_BITS], owned_keep, tabs)
            have_complete = True
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
        win = complete if have_complete else handk.is_complete(h, cfg[C_SEVEN_PAIRS] != 0, tabs)
        if not win and cfg[C_SPECIAL] != 0:
            win = handk.lanpai(h)
        if win and cfg[C_SELF_DRAW_MINIMUM] != 0:  # (Yangzhou's fan minimum, the only family with one)
            win = yz_self_draw_if(E, b, s, drawn)
        if win:
            m[A_WIN] = True
            count += 1
            last = A_WIN
    return count, last


@kernel
def _compute_mask(E, b):
    """Write table ``b``'s mask row; returns ``(count, last)`` as :func:`_own_turn_mask`."""
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
        return count, last
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
    return count, A_PASS


