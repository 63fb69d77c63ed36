"""Diedaohu and Liuwei in the compiled game core: their claim windows and their bankroll-limited kong money.

The compiled twins of ``diedaohu.win_refusal`` (漏胡 with 大吊车, a busted discarder under 园子; §7.6, §7.7)
and ``diedaohu.settle_kong`` (``kong_money`` through ``apply_bankroll``) as the Python family adapter
(:class:`mjenv.engine.family.DiedaohuFamily`) asks them; their wins are settled by :mod:`mjenv.engine.ddwin`.
Yangzhou shares the lock but is judged by :mod:`mjenv.engine.yzend`.
"""

from __future__ import annotations

from mjenv.engine.codes import (
    C_KONG_ALL_PAY,
    C_KONG_LIMIT,
    C_LOUHU_WINDOW,
    C_N,
    F_BALANCE,
    LOUHU_BANKROLL,
    LOUHU_ON,
)
from mjenv.engine.gates import kernel
from mjenv.engine.state import (
    DIRECT_KONG,
    O16_CLAIM_VALUE,
    O16_LOCK,
    O8_CLAIM_OPTS,
    O8_DADIAOCHE,
)


@kernel
def _louhu_window(E, b, t, frm, bits):
    """Diedaohu / Liuwei (§7.6, §7.7, ``diedaohu.win_refusal``): a seat of ``bits`` whose hand completes on ``t``
    may win it unless its missed-win lock forbids (大吊车 tile excepted) or the discarder (robbed konger) is
    busted under 园子, as the engine's P_WINDOW handler found (claim bit 1, value 1)."""
    b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam = E
    r8 = b8[b]
    r16 = b16[b]
    n = cfg[C_N]
    rule = cfg[C_LOUHU_WINDOW]
    if rule & LOUHU_BANKROLL and fcfg[F_BALANCE + n * b + frm] + money[b, frm] <= 1e-9:
        return  # the busted discarder's tiles cannot be won on
    for s in range(n):
        if (bits >> s) & 1:
            dd = r8[O8_DADIAOCHE + s]
            if rule & LOUHU_ON and r16[O16_LOCK + s] > 0 and (dd < 0 or t != dd):
                continue
            r8[O8_CLAIM_OPTS + s] |= 1
            r16[O16_CLAIM_VALUE + s] = 1


@kernel
def _bankroll_kong(E, b, s, kind, discarder):
    """Diedaohu / Liuwei kong money (``settle_kong``: ``kong_money`` through ``apply_bankroll``): each payer in
    seat order pays what it owes, under 园子 at most its balance (start-of-hand balance plus this hand's money;
    it only pays here, so that is the scorer's running balance), zero payments left out.  The same
    transfers in the same order as the engine's Python path, so the money is bit-identical."""
    money = E[2]
    cfg = E[7]
    fcfg = E[10]
    n = cfg[C_N]
    owed = fcfg[kind - DIRECT_KONG]
    for p in range(n):
        if p == s or (kind == DIRECT_KONG and cfg[C_KONG_ALL_PAY] == 0 and p != discarder):
            continue
        a = owed
        if cfg[C_KONG_LIMIT] != 0:
            have = fcfg[F_BALANCE + n * b + p] + money[b, p]
            if have < a:  # min(owed, balance) as the scorer takes it
                a = have
        if a > 0:
            money[b, p] -= a
            money[b, s] += a



