"""Diedaohu and Liuwei wins in the compiled game core: valued and settled as their pure scorers do.

The compiled twin of ``diedaohu.settle_win`` / ``liuwei.settle_win`` as the engine's Python path calls them: the
hand class of the best reading (§7.4; :func:`_dd_class`), the owed transfers of §7.5 / §10.4 with the 风清
liability (:func:`_dd_owed`), applied through ``apply_bankroll``'s rules (the 园子 limit, payers in the order
they first owe, each one's debts from its next player on; :func:`_dd_end`), so that the money is bit-identical.
The pure scorers (:mod:`mjenv.rules.scoring.diedaohu`, :mod:`mjenv.rules.scoring.liuwei`) stay the reference:
the ``results`` dict of a hand settled here is built by them when read (from each winner's class and reading, which
:func:`_dd_end` writes, and the money before the win it keeps, ``codes.F_BALANCE``), and
tests/test_kernel_ends_4p.py plays the two paths in lockstep.
"""

from __future__ import annotations

from mjenv.engine.codes import (
    A_WIN,
    C_DD_END,
    C_DD_FLAGS,
    C_SINGLE_WINNER,
    DD_BAOPAI,
    DD_END_LIUWEI,
    DD_LIMIT,
    END_DISCARD,
    END_ROB,
    END_SELF_DRAW,
    F_BALANCE,
    F_DD_PAY,
    C_DD_V,
    P_SELF_DRAW,
    PEND_FANS,
    PEND_OVER,
    PEND_READING,
)
from mjenv.engine import fanrow, handk
from mjenv.engine.gates import kernel
from mjenv.engine.state import (
    ADDED_KONG,
    CHI_MELD,
    MAX_MELDS,
    MAX_SEATS,
    O8_CLAIM_FROM,
    O8_CLAIM_REPLY,
    O8_CLAIM_TILE,
    O8_CUR,
    O8_HAND,
    O8_MELD_KIND,
    O8_MELD_SRC,
    O8_MELD_TILE,
    O8_N_MELDS,
    O8_PHASE,
    PONG_MELD,
    ROB,
)
from mjenv.engine.table import _end_hand, _full_hand, _give_won_tile, _pay
from mjenv.rules.hand import READING_TIE

# Hand classes in diedaohu.CLASSES order (the first that applies, §7.4).
CLS_FENGQING, CLS_QINGDUIDUI, CLS_QINGYISE, CLS_HUNDUIDUI, CLS_HUNYISE, CLS_DUIDUIHU, CLS_PIHU = range(7)
_EPS = 1e-9  # diedaohu._EPS: a balance within this of 0 is busted



@kernel
def _dd_class(r8, s, w, add):
    """The §7.4 hand class (CLS_*) of seat ``s``'s win on ``w`` (added to its concealed tiles when ``add``), as
    ``diedaohu.best_class_reading`` finds it for Diedaohu's rank by V and Liuwei's by money alike: the suits and
    honours of every tile decide the class up to all-triplets, and the all-triplets class (worth more in both)
    applies when some reading is all triplets, i.e. the concealed tiles are one pair and triplets (the win is
    legal, so a standard reading exists)."""
    suits = 0
    honors = False
    pairs = 0
    other = False
    for x in range(34):
        c = r8[O8_HAND + 34 * s + x]
        if add and x == w:
            c += 1
        if c > 0:
            if x >= 27:
                honors = True
            else:
                suits |= 1 << (x // 9)
            if c == 2:
                pairs += 1
            elif c != 3:
                other = True
    for j in range(r8[O8_N_MELDS + s]):
        t = r8[O8_MELD_TILE + MAX_MELDS * s + j]
        if t >= 27:
            honors = True
        else:
            suits |= 1 << (t // 9)
        if r8[O8_MELD_KIND + MAX_MELDS * s + j] == CHI_MELD:
            other = True
    trip = pairs == 1 and not other
    if suits == 0:
        return CLS_FENGQING
    if suits == 1 or suits == 2 or suits == 4:
        if not honors:
            return CLS_QINGDUIDUI if trip else CLS_QINGYISE
        return CLS_HUNDUIDUI if trip else CLS_HUNYISE
    return CLS_DUIDUIHU if trip else CLS_PIHU


@kernel
def _dd_reading(E, b, s, w, add):
    """The code (``mjenv.rules.hand``'s reading codes) of the reading ``best_class_reading`` values seat ``s``'s
    win on ``w`` with: its all-triplets reading when there is one (the only reading of the best class), else the
    one reading; READING_TIE set when several readings share the class (the scorer's own order then picks)."""
    _full_hand(E, b, s, w, add)
    full = E[9][0]
    work = E[9][1]
    first = -1
    count = 0
    for p in range(34):
        if full[p] < 2:
            continue
        m = handk.reading_choices(full, p)
        for choice in range(1 << m):
            ok, _, _, ns = handk.reading_split(full, work, p, choice, m)
            if not ok:
                continue
            if ns == 0:
                return p << 5 | choice
            if first < 0:
                first = p << 5 | choice
            count += 1
    return first if count <= 1 else first | READING_TIE


@kernel
def _dd_fans(E, b, s):
    """Count the class :func:`_dd_end` put in seat ``s``'s fan row (``pend[b, PEND_FANS + FAN_SLOTS * s:]``,
    :mod:`mjenv.engine.fanrow`) when its reading code names one reading (not READING_TIE: the scorer then picks)."""
    code = E[4][b, PEND_READING + s]
    if code >= 0 and code & READING_TIE == 0:
        E[4][b, PEND_FANS + fanrow.FAN_SLOTS * s + fanrow.ROW_N] = 1


@kernel
def _dd_liable(E, b, s):
    """``diedaohu.fengqing_liability`` under ``fengqing_baopai`` for seat ``s``'s 风清 (its class already in
    ``pend[b, PEND_READING + s]``): the source seat of its fourth meld when that is a pong (or a pong later
    konged), else -1."""
    r8 = E[0][b]
    if E[7][C_DD_FLAGS] & DD_BAOPAI == 0 or E[4][b, PEND_READING + s] != CLS_FENGQING:
        return -1
    if r8[O8_N_MELDS + s] < 4:
        return -1
    kind = r8[O8_MELD_KIND + MAX_MELDS * s + 3]
    if kind != PONG_MELD and kind != ADDED_KONG:
        return -1
    return r8[O8_MELD_SRC + MAX_MELDS * s + 3]


@kernel
def _dd_owed(E, b, code, i):
    """The ``i``-th transfer (payer, payee, amount) that the win being settled owes before any bankroll limit, in
    the order of ``diedaohu.win_transfers`` / ``liuwei.win_transfers`` (payer -1 past the last).  Each winner's
    class is in ``pend[b, PEND_READING + s]``; amounts from ``F_DD_PAY``."""
    r8 = E[0][b]
    pend = E[4]
    cfg = E[7]
    fcfg = E[10]
    n = MAX_SEATS
    if code == P_SELF_DRAW:
        w = r8[O8_CUR]
        a = fcfg[F_DD_PAY + 3 * pend[b, PEND_READING + w]]
        liable = _dd_liable(E, b, w)
        if liable >= 0:
            if i == 0:
                return liable, w, a * 3  # the three shares (a whole balance stays one)
            return -1, -1, 0.0
        k = 0
        for p in range(n):
            if p != w:
                if k == i:
                    return p, w, a
                k += 1
        return -1, -1, 0.0
    frm = r8[O8_CLAIM_FROM]
    k = 0
    for d in range(1, n):
        s = (frm + d) % n
        if r8[O8_CLAIM_REPLY + s] != A_WIN:
            continue
        if k > 0 and cfg[C_SINGLE_WINNER] != 0:
            break
        c = pend[b, PEND_READING + s]
        if cfg[C_DD_END] == DD_END_LIUWEI:  # the discarder (出冲), then the two others (陪冲) in seat order
            if i == 0:
                return frm, s, fcfg[F_DD_PAY + 3 * c + 1]
            j = 1
            for p in range(n):
                if p != s and p != frm:
                    if j == i:
                        return p, s, fcfg[F_DD_PAY + 3 * c + 2]
                    j += 1
            return -1, -1, 0.0
        if k == i:
            liable = _dd_liable(E, b, s)
            return (frm if liable < 0 else liable), s, fcfg[F_DD_PAY + 3 * c + 1]
        k += 1
    return -1, -1, 0.0


@kernel
def _dd_pay(E, b, at, payer, payee, amount, limit):
    """Pay one owed transfer as ``apply_bankroll`` does: at most the payer's running balance (kept at ``at``)
    under 园子, nothing when that is 0."""
    fcfg = E[10]
    if limit:
        have = fcfg[at + payer]
        if have < amount:  # min(owed, balance) as the scorer takes it
            amount = have
    if amount > 0:
        _pay(E[2], b, payer, payee, amount)
        fcfg[at + payer] -= amount
        fcfg[at + payee] += amount


@kernel
def _dd_end(E, b, code):
    """Settle a Diedaohu or Liuwei win (P_SELF_DRAW or P_CLAIM_WIN) as the engine's Python path does
    (``settle_win`` through ``apply_win``: owed transfers of each winner's class, limited by the balances under
    园子, payers in the order they first owe, each one's debts from its next player on), the claimed tile joining
    the nearest winner's hand; end the hand and return P_ENDED with ``pend[b, 1]`` = END_*, ``pend[b,
    PEND_OVER]`` = whether the settlement ended the session (a second bust, a self-drawn 风清 under 园子), each
    winner's reading code in ``pend[b, PEND_READING + s]`` (-1 for the others), its class and V in its fan row
    (:func:`_dd_fans`) and the money before the win kept in ``fcfg`` for the result.  The claim window judged the
    wins legal already."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    n = MAX_SEATS
    limit = cfg[C_DD_FLAGS] & DD_LIMIT != 0
    pre = F_BALANCE + n * ((fcfg.shape[0] - F_BALANCE) // (3 * n)) + 2 * n * b  # this table's settle entries
    for p in range(n):
        fcfg[pre + p] = money[b, p]
        have = fcfg[F_BALANCE + n * b + p] + money[b, p]
        fcfg[pre + n + p] = have if have >= 0.0 else 0.0  # max(balance, 0.0)
        pend[b, PEND_READING + p] = -1
        pend[b, PEND_FANS + fanrow.FAN_SLOTS * p + fanrow.ROW_N] = 0
    stand_up = False
    if code == P_SELF_DRAW:
        s = r8[O8_CUR]
        pend[b, PEND_READING + s] = _dd_class(r8, s, 0, False)
        stand_up = limit and pend[b, PEND_READING + s] == CLS_FENGQING
    else:
        frm = r8[O8_CLAIM_FROM]
        t = r8[O8_CLAIM_TILE]
        for d in range(1, n):
            s = (frm + d) % n
            if r8[O8_CLAIM_REPLY + s] == A_WIN:
                pend[b, PEND_READING + s] = _dd_class(r8, s, t, True)
    if not limit:
        for i in range(n):
            payer, payee, a = _dd_owed(E, b, code, i)
            if payer < 0:
                break
            if a > 0:
                _pay(money, b, payer, payee, a)
    else:
        for i in range(n):
            payer, payee, a = _dd_owed(E, b, code, i)
            if payer < 0:
                break
            seen = False
            for j in range(i):
                if _dd_owed(E, b, code, j)[0] == payer:
                    seen = True
            if seen:
                continue
            for d in range(1, n):  # this payer's debts from its next player on
                for j in range(i, n):
                    pj, qj, aj = _dd_owed(E, b, code, j)
                    if pj < 0:
                        break
                    if pj == payer and (qj - payer) % n == d:
                        _dd_pay(E, b, pre + n, pj, qj, aj, True)
    busted = 0
    for p in range(n):
        if fcfg[pre + n + p] <= _EPS:
            busted += 1
        c = pend[b, PEND_READING + p]
        if c >= 0:  # a winner's class and its V, as its fan row holds them (counted below, with its reading)
            row = pend[b, PEND_FANS + fanrow.FAN_SLOTS * p : PEND_FANS + fanrow.FAN_SLOTS * (p + 1)]
            fanrow.put(row, 0, c, cfg[C_DD_V + c])
            row[fanrow.ROW_VALUE] = cfg[C_DD_V + c]
            row[fanrow.ROW_CAP] = 0
        pend[b, PEND_READING + p] = -1
    pend[b, PEND_OVER] = limit and (stand_up or busted >= 2)
    # each winner's reading code, for the result built when read (before the claimed tile moves)
    if code == P_SELF_DRAW:
        s = r8[O8_CUR]
        pend[b, PEND_READING + s] = _dd_reading(E, b, s, 0, False)
        _dd_fans(E, b, s)
        kind = END_SELF_DRAW
    else:
        for d in range(1, n):
            s = (r8[O8_CLAIM_FROM] + d) % n
            if r8[O8_CLAIM_REPLY + s] == A_WIN:
                pend[b, PEND_READING + s] = _dd_reading(E, b, s, r8[O8_CLAIM_TILE], True)
                _dd_fans(E, b, s)
                if E[7][C_SINGLE_WINNER] != 0:
                    break
        rob = r8[O8_PHASE] == ROB
        first = -1
        for d in range(1, n):
            s = (r8[O8_CLAIM_FROM] + d) % n
            if r8[O8_CLAIM_REPLY + s] == A_WIN:
                first = s
                break
        _give_won_tile(r8, E[1][b], r8[O8_CLAIM_FROM], r8[O8_CLAIM_TILE], first, rob)
        kind = END_ROB if rob else END_DISCARD
    return _end_hand(E, b, kind)
