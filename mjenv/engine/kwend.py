"""Kawuxing in the compiled game core: its claim-window verdicts and every hand end, settled here.

Beside :mod:`mjenv.engine.kwscore` (the compiled twin of :mod:`mjenv.rules.scoring.kawuxing`'s judging and
valuing), this module owns where the state machine asks it: :func:`_kw_window` judges and values the seats
that complete on a discarded or robbed tile (the engine's ``P_WINDOW`` handler, compiled), :func:`_kw_end`
settles a self-draw, a won discard or rob and a drawn hand (§3.10, §3.11 penalties and 讲听头) as
``kawuxing.settle_win`` / ``settle_draw`` do, transfers in the scorer's order so the money is bit-identical.
The gated entries (:data:`kw_window_if`, :data:`kw_end_if`; :func:`mjenv.engine.gates.gate`) are what the
rest of the kernels call, so that only an entry holding ``FEAT_KW`` compiles this.
"""

from __future__ import annotations

from mjenv.engine import fanrow, handk, kwscore
from mjenv.engine.codes import (
    A_WIN,
    C_KINDS_BITS,
    C_KW,
    C_N,
    END_DISCARD,
    END_DRAW,
    END_ROB,
    END_SELF_DRAW,
    F_KONG_DOUBLING,
    P_CLAIM_WIN,
    P_SELF_DRAW,
    PEND_FANS,
    PEND_READING,
)
from mjenv.engine.gates import (
    FEAT_KW,
    code_unchanged,
    false,
    gate,
    kernel,
)
from mjenv.engine.state import (
    MAX_MELDS,
    MAX_SEATS,
    O16_BACK,
    O16_CLAIM_VALUE,
    O16_FRONT,
    O16_LOCK,
    O8_AFTER_KONG,
    O8_CLAIM_FROM,
    O8_CLAIM_KONG_POS,
    O8_CLAIM_OPTS,
    O8_CLAIM_REPLY,
    O8_CLAIM_TILE,
    O8_CUR,
    O8_DRAWN,
    O8_KONG_COUNT,
    O8_MELDED,
    O8_MELD_KIND,
    O8_MELD_TILE,
    O8_N_MELDS,
    O8_PHASE,
    O8_REVEALED,
    O8_REVEAL_SEQ,
    ROB,
)
from mjenv.engine.table import _end_hand, _full_hand, _give_won_tile, _hand, _pay


@kernel
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


# ----------------------------------------------------------------------------------------- Kawuxing hand ends
@kernel
def _kw_best(E, b, s, w, add, how, kp, last):
    """``(V, cap, reading code)`` of seat ``s``'s best reading with tile ``w`` (added to its concealed hand when
    ``add``): :func:`mjenv.engine.kwscore.best_reading`."""
    r8 = E[0][b]
    _full_hand(E, b, s, w, add)
    return kwscore.best_reading(
        E[9][0], E[9][1], w,
        r8[O8_MELD_KIND + MAX_MELDS * s : O8_MELD_KIND + MAX_MELDS * s + MAX_MELDS],
        r8[O8_MELD_TILE + MAX_MELDS * s : O8_MELD_TILE + MAX_MELDS * s + MAX_MELDS],
        r8[O8_N_MELDS + s], r8[O8_REVEALED + s] != 0, kp, how, last, E[7][C_KW : C_KW + kwscore.N_KW],
    )


@kernel
def _kw_fans(E, b, s, w, how, kp, last, value, cap, rc):
    """Write the fans of seat ``s``'s reading of code ``rc`` (:func:`_kw_best` has just put its complete hand in
    ``scr[0]``), its V and cap into the seat's fan row ``pend[b, PEND_FANS + FAN_SLOTS * s:]``
    (:mod:`mjenv.engine.fanrow`); nothing when another reading has the same value (``READING_TIE``: the Python
    scorer's order then chooses)."""
    if rc < 0 or rc & kwscore._TIE:
        return
    r8 = E[0][b]
    row = E[4][b, PEND_FANS + fanrow.FAN_SLOTS * s : PEND_FANS + fanrow.FAN_SLOTS * (s + 1)]
    kwscore.reading_fans(
        E[9][0], E[9][1], w,
        r8[O8_MELD_KIND + MAX_MELDS * s : O8_MELD_KIND + MAX_MELDS * s + MAX_MELDS],
        r8[O8_MELD_TILE + MAX_MELDS * s : O8_MELD_TILE + MAX_MELDS * s + MAX_MELDS],
        r8[O8_N_MELDS + s], r8[O8_REVEALED + s] != 0, kp, how, last, E[7][C_KW : C_KW + kwscore.N_KW], rc, row,
    )
    row[fanrow.ROW_VALUE] = value
    row[fanrow.ROW_CAP] = cap


@kernel
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
            _full_hand(E, b, s, w, True)
            kc = cfg[C_KW : C_KW + kwscore.N_KW]
            v, c = kwscore.best_value(
                scr[0], scr[1], w,
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


@kernel
def _kw_end(E, b, code):
    """Settle a Kawuxing hand end (P_SELF_DRAW, P_CLAIM_WIN or P_EXHAUSTED) as the engine's Python path does
    (kawuxing.settle_win / settle_draw, the claimed tile joining the nearest winner's hand), end the hand and
    return P_ENDED with ``pend[b, 1]`` = END_* and in ``pend[b, PEND_READING + s]`` the code of the reading each
    winner ``s`` was valued with (-1 for the others), its fans in the seat's fan row (:func:`_kw_fans`).  Transfers
    are paid in the scorer's order, so the money is bit-identical."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    n = cfg[C_N]
    kc = cfg[C_KW : C_KW + kwscore.N_KW]
    base = fcfg[F_KONG_DOUBLING + 1]
    last = r16[O16_FRONT] >= r16[O16_BACK]
    for x in range(MAX_SEATS):
        pend[b, PEND_READING + x] = -1
        pend[b, PEND_FANS + fanrow.FAN_SLOTS * x + fanrow.ROW_N] = 0
    if code == P_SELF_DRAW:
        s = r8[O8_CUR]
        value, cap, rc = _kw_best(E, b, s, r8[O8_DRAWN], False, kwscore.HOW_SELF_DRAW, r8[O8_AFTER_KONG], last)
        pend[b, PEND_READING + s] = rc
        _kw_fans(E, b, s, r8[O8_DRAWN], kwscore.HOW_SELF_DRAW, r8[O8_AFTER_KONG], last, value, cap, rc)
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
            value, cap, rc = _kw_best(E, b, s, t, True, how, kp, (not rob) and last)
            pend[b, PEND_READING + s] = rc
            _kw_fans(E, b, s, t, how, kp, (not rob) and last, value, cap, rc)
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
        _give_won_tile(r8, r16, frm, t, first, rob)
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
    return _end_hand(E, b, kind)


kw_window_if = gate(FEAT_KW, _kw_window, false)
kw_end_if = gate(FEAT_KW, _kw_end, code_unchanged)
