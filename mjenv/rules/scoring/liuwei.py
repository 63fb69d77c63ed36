"""Liuwei (六圩式) scoring and money: docs/rules/liuwei.md §10.2–§10.5.

This module owns, for variant ``liuwei``:

* the win payments of the 陪冲 table (§10.4): on a discard (or rob) the discarder (出冲) and the two other players
  (陪冲) all pay; on a self-draw each of the three others pays; 风清 costs whole balances under 园子 —
  :func:`score_win`, :func:`score_hand`, :func:`score_reading` (on a reading already chosen),
  :func:`win_transfers`, :func:`settle_win`;
* kong money on the 50-scale (§10.3) — :func:`kong_money`, :func:`settle_kong`;
* the scaling of every amount by N / 50 for ``bankroll: N`` (§10.4) — :func:`scale`;
* one winner per discard, the nearest claimant (§10.1) — :func:`nearest_winner`;
* dealer and session (§10.5): the dealer also stays after a drawn hand; 8 rounds — :func:`new_session`,
  :func:`next_hand`.

Hand shapes and classes, the missed-win lock, the busted-discarder rule and the 园子 bookkeeping are Diedaohu's
(§10.1–§10.2, §10.4 "as Diedaohu §7.7") and are imported from :mod:`mjenv.rules.scoring.diedaohu`
(:func:`~.diedaohu.best_class_reading`, :class:`~.diedaohu.DiedaohuContext`, :class:`~.diedaohu.LouhuLock`,
:func:`~.diedaohu.apply_bankroll`).

Hand classes (the ``fans`` ids) are Diedaohu's :data:`CLASSES` (V shown for reference); the money comes from the
50-scale table :data:`PAYMENTS`, per payer: self-draw each / discarder / each 陪冲 (both rendered in the generated
tables of docs/rules/liuwei.md).

Readings of unclear rules are recorded in ``docs/rules-notes.md`` (section "Liuwei").
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mjenv.rules.hand import reading_text
from mjenv.rules.scoring.common import (
    class_score_json,
    json_number,
    no_reading_result,
    notation_context,
    reading_result,
)
from mjenv.rules.scoring.diedaohu import (
    CLASSES,
    HOWS,
    KONG_KINDS,
    N_PLAYERS,
    WHOLE_BALANCE,
    BankrollSettlement,
    DiedaohuContext,
    Session,
    advance_session,
    apply_bankroll,
    apply_win,
    best_class_reading,
    check_hand,
    class_reading,
    hand_counts,
    new_session as diedaohu_new_session,
    win_refusal,
    winners_in_order,
)
from mjenv.rules.scoring.common import Transfer, WinScore
from mjenv.tiles import Hand, Meld

if TYPE_CHECKING:
    from mjenv.rules.options import LiuweiOptions

__all__ = [
    "FANS",
    "FAN_ORDER",
    "PAYMENTS",
    "KONG_MONEY",
    "LiuweiScore",
    "scale",
    "score_win",
    "score_reading",
    "score_settled",
    "score_hand",
    "nearest_winner",
    "win_transfers",
    "settle_win",
    "kong_money",
    "settle_kong",
    "new_session",
    "next_hand",
]

FANS = CLASSES
"""The fan ids ``mjenv score`` prints: the Diedaohu classes (§10.1 "胡牌方式和胡牌牌型同跌倒胡")."""
FAN_ORDER: tuple[str, ...] = tuple(CLASSES)

# Class -> (self-draw: each of the 3 others, discard: the discarder 出冲, discard: each 陪冲), 50-scale (§10.4).
# 风清's first two entries are the 紧淌 amounts of §10.4 (CD); under 园子 they are the payer's whole balance.
PAYMENTS: dict[str, tuple[int, int, int]] = {
    "fengqing": (96, 64, 16),
    "qingduidui": (16, 16, 8),
    "qingyise": (16, 16, 8),
    "hunduidui": (16, 16, 8),
    "hunyise": (12, 12, 6),
    "duiduihu": (10, 10, 5),
    "pihu": (6, 4, 2),
}

KONG_MONEY: dict[str, int] = {"direct": 2, "added": 2, "concealed": 4}
"""Kong money from each of the three others, 50-scale (§10.3: "無論是直杠還是碰后杠，每家支付2元", 暗杠 4)."""

# Reading choice (§1.6) by the money a class is worth here: 混一色 pays more than 对对胡 although both have V = 2.
_RANK = {cls: i for i, cls in enumerate(reversed(PAYMENTS))}


def scale(opts: LiuweiOptions) -> float:
    """Money per table unit: b · N / 50 for ``bankroll: N``, b under ``bankroll: none`` (§10.4)."""
    return opts.base * (opts.bankroll / 50.0 if opts.bankroll is not None else 1.0)


@dataclass(frozen=True)
class LiuweiScore(WinScore):
    """:class:`~mjenv.rules.scoring.common.WinScore` of a Liuwei win plus its class and the 陪冲-table amounts.

    ``fans`` is ``{class: V}`` with the Diedaohu V (§7.4); ``value`` and ``value_d`` are V; ``cap`` is ``None``.
    """

    hand_class: str | None
    """The §7.4 class id (``None`` without a reading)."""
    share: float | None
    """What each payer pays on a self-draw, or the discarder (出冲) pays on a discard / rob; ``None`` = the
    payer's whole balance (风清 under 园子)."""
    peichong: float | None
    """What each of the two other players (陪冲) pays on a discard / rob; ``None`` on a self-draw."""

    def to_json(self) -> dict:
        """A JSON-ready dict (the fields ``mjenv score --json`` prints)."""
        return {**class_score_json(self), "peichong": json_number(self.peichong)}


def score_win(concealed, melds, win_tile: int, ctx: DiedaohuContext, opts: LiuweiOptions) -> LiuweiScore:
    """Score a possible Liuwei win: class of the best-paying reading, legality (lock, busted discarder) and the
    amounts each payer owes (§10.4).

    ``concealed`` is a 34-count vector or a sequence of ids *excluding* the winning tile; ``melds`` are
    :class:`mjenv.tiles.Meld` values (no chi).  A hand without a standard reading returns ``legal=False``.
    """
    counts = hand_counts(concealed)
    r = _score_cached(counts.tobytes(), tuple(melds), int(win_tile), ctx, opts)
    return LiuweiScore(**{**r, "fans": dict(r["fans"])})


def score_reading(concealed, melds, win_tile: int, ctx: DiedaohuContext, opts, reading) -> LiuweiScore:
    """:func:`score_win` valued on ``reading`` alone, the reading ``best_class_reading`` picks (the engine's compiled
    core names it, so that a result is built without enumerating the others)."""
    counts = hand_counts(concealed)
    r = _score_cached(counts.tobytes(), tuple(melds), int(win_tile), ctx, opts, reading)
    return LiuweiScore(**{**r, "fans": dict(r["fans"])})


@functools.lru_cache(maxsize=1 << 14)
def _score_cached(counts_bytes: bytes, melds: tuple[Meld, ...], w: int, ctx: DiedaohuContext, opts, reading=None) -> dict:
    counts = np.frombuffer(counts_bytes, dtype=np.int8)
    check_hand(counts, melds, w, chi=False, variant="Liuwei")
    if reading is None:
        found = best_class_reading(counts, melds, w, _RANK.__getitem__)
    else:
        found = class_reading(counts, melds, w, reading)
    if found is None:
        return no_reading_result(hand_class=None, share=0.0, peichong=None)
    reading, cls = found
    reason = win_refusal(ctx.how, w, ctx.lock, ctx.discarder_busted, opts)
    return _class_result(reading, melds, cls, CLASSES[cls][2], ctx.how, reason, opts)


def score_settled(reading, melds, cls: str, value: int, how: str, opts) -> LiuweiScore:
    """The score of a win the engine's kernel settled (:mod:`mjenv.engine.ddwin`): ``reading``, its class ``cls`` and
    V ``value`` as the kernel found them (the win judged legal already), by ``how``, without valuing or judging the
    hand again."""
    r = _class_result(reading, tuple(melds), cls, value, how, None, opts)
    return LiuweiScore(**{**r, "fans": dict(r["fans"])})


def _class_result(reading, melds: tuple[Meld, ...], cls: str, value: int, how: str, reason: str | None, opts) -> dict:
    """The :class:`LiuweiScore` fields of a win by ``how`` on ``reading`` of class ``cls`` (V ``value``)."""
    selfdraw, discarder, peichong = PAYMENTS[cls]
    k = scale(opts)
    whole = cls == "fengqing" and opts.bankroll is not None
    if how == "self-draw":
        share, side = (None if whole else selfdraw * k), None
    else:
        share, side = (None if whole else discarder * k), peichong * k
    return reading_result(
        reading,
        reading_text=reading_text(reading, " ".join(str(m) for m in melds)),
        reason=reason,
        fans=((cls, value),),
        value=value,
        hand_class=cls,
        share=share,
        peichong=side,
    )


def score_hand(hand: Hand, ctx: DiedaohuContext | None, opts: LiuweiOptions) -> LiuweiScore:
    """:func:`score_win` of a parsed notation hand; without ``ctx`` the win is a plain ``hand.win_how``."""
    ctx = notation_context(hand, ctx, DiedaohuContext)
    return score_win(hand.concealed_counts(), hand.melds, hand.win_tile, ctx, opts)


def nearest_winner(discarder: int, claimants: Sequence[int]) -> int | None:
    """The one winner of a discard or rob (§10.1 "以最靠近出沖的人胡牌"): the first claimant in turn order from
    the discarder's next player; ``None`` when nobody claims.  The others still pay as 陪冲."""
    order = winners_in_order(discarder, claimants, "off")
    return order[0] if order else None


def win_transfers(
    winners: Sequence[tuple[int, LiuweiScore]], how: str, discarder: int | None, opts: LiuweiOptions
) -> list[Transfer]:
    """What the one win of an event owes (§10.4), before bankroll limits.

    Self-draw: each of the three others owes ``share`` (风清 under 园子: :data:`~.diedaohu.WHOLE_BALANCE`).
    Discard / rob: the discarder (konger) owes ``share`` and each of the two others owes ``peichong``.
    """
    if how not in HOWS:
        raise ValueError(f"how {how!r} is not one of {', '.join(HOWS)}")
    if len(winners) != 1:
        raise ValueError(f"Liuwei has exactly one winner per event (see nearest_winner), got {len(winners)}")
    (w, score), = winners
    w = int(w)
    if not 0 <= w < N_PLAYERS:
        raise ValueError(f"winner must be a seat 0..{N_PLAYERS - 1}, got {w}")
    if not score.legal:
        raise ValueError(f"seat {w}'s win is not legal ({score.reason}); it cannot be settled")
    amount = WHOLE_BALANCE if score.share is None else score.share
    others = [p for p in range(N_PLAYERS) if p != w]
    if how == "self-draw":
        return [Transfer(p, w, amount, "selfdraw") for p in others]
    if discarder is None or discarder == w or not 0 <= discarder < N_PLAYERS:
        raise ValueError(f"a {how} win needs the discarder's seat (not the winner's), got {discarder!r}")
    if score.peichong is None:
        raise ValueError("the score was computed for a self-draw; score the win as a discard or rob")
    out = [Transfer(discarder, w, amount, how)]
    out.extend(Transfer(p, w, score.peichong, "peichong") for p in others if p != discarder)
    return out


def settle_win(
    winners: Sequence[tuple[int, LiuweiScore]],
    how: str,
    discarder: int | None,
    opts: LiuweiOptions,
    balances: Sequence[float] | None = None,
) -> BankrollSettlement:
    """Payments of one win (§10.4) applied to the balances as in Diedaohu §7.7 (required under 园子, optional and
    unlimited under ``bankroll: none``); a self-drawn 风清 under 园子 ends the session."""
    return apply_win(win_transfers(winners, how, discarder, opts), winners, how, opts, balances)


def kong_money(kind: str, konger: int, discarder: int | None, opts: LiuweiOptions) -> list[Transfer]:
    """Kong money owed for one completed kong (§10.3): each of the three others pays 2 (direct or added, "明杠") or
    4 (concealed) on the 50-scale, times :func:`scale`.  ``discarder`` (the fed player of a direct kong) pays like
    the others; it is checked only so that the call matches :func:`~.diedaohu.kong_money`.  A robbed kong is not
    made and owes nothing."""
    if kind not in KONG_KINDS:
        raise ValueError(f"kong kind {kind!r} is not one of {', '.join(KONG_KINDS)}")
    konger = int(konger)
    if not 0 <= konger < N_PLAYERS:
        raise ValueError(f"konger must be a seat 0..{N_PLAYERS - 1}, got {konger}")
    if kind == "direct" and (discarder is None or discarder == konger or not 0 <= discarder < N_PLAYERS):
        raise ValueError(f"a direct kong needs the discarder's seat (not the konger's), got {discarder!r}")
    amount = KONG_MONEY[kind] * scale(opts)
    return [Transfer(p, konger, amount, f"kong_{kind}") for p in range(N_PLAYERS) if p != konger]


def settle_kong(
    kind: str, konger: int, discarder: int | None, opts: LiuweiOptions, balances: Sequence[float] | None = None
) -> BankrollSettlement:
    """Kong money of one kong applied to the balances (a busted player pays nothing, §7.7)."""
    return apply_bankroll(balances, kong_money(kind, konger, discarder, opts), limit=opts.bankroll is not None)


def new_session(opts: LiuweiOptions, dealer: int = 0) -> Session:
    """A fresh session: always 8 rounds (§10.5 "六圩式一操都是8圈")."""
    return diedaohu_new_session(opts, dealer)


def next_hand(session: Session, winners: Sequence[int], opts: LiuweiOptions, ended: bool = False) -> Session:
    """The session after a hand (§10.5): the dealer stays when it wins **or the hand is drawn** ("和牌和莊家胡牌
    連莊"); otherwise its next player deals.  ``ended``: the bankroll ended the session."""
    return advance_session(session, winners, "stay", ended)
