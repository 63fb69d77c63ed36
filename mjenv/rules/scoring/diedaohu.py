"""Diedaohu (跌倒胡) scoring and money: docs/rules/diedaohu.md §7.4–§7.8, and the Yangzhou-family pieces built on them.

This module owns, for Diedaohu:

* the hand class of a win (§7.4, one class per hand) and the best reading (§1.6) — :func:`score_win`,
  :func:`score_hand`, :func:`best_class_reading`, :func:`hand_class` (and on a reading already chosen:
  :func:`score_reading`, :func:`class_reading`);
* the payments of a win (§7.5), with the optional 风清 liability (``fengqing_baopai``, §8.9) —
  :func:`win_transfers`, :func:`settle_win`;
* kong money 米钱 (§7.5) — :func:`kong_money`, :func:`settle_kong`;
* the missed-win lock and its 大吊车 exception (§7.6) — :class:`LouhuLock`;
* the money modes 紧淌 and 园子 (§7.7): one pure function that applies owed transfers to balances, limits each
  payment by the payer's balance (several payees in turn order from the payer's next player), pays "whole
  balance" debts, reports busted players and ends the session on a second bust or a self-drawn 风清 (站起来) —
  :func:`apply_bankroll`, :class:`BankrollSettlement`, :data:`WHOLE_BALANCE`; whether a hand, drawn ones
  included, ended with two players busted — :func:`two_busted`;
* dealer, rounds and session (§7.8) — :func:`next_dealer`, :class:`Session`, :func:`new_session`,
  :func:`next_hand`, :func:`advance_session`, and the winners of one discard (§1.8) — :func:`winners_in_order`.

Yangzhou (§8.2 "打法和跌倒胡一樣") and Liuwei (§10.2 "和跌倒胡基本一樣") import the shared pieces from here:
:func:`check_hand`, :func:`hand_counts`, :func:`meld_counts`, :class:`LouhuLock`, :func:`win_refusal`,
:func:`fengqing_liability`, :func:`apply_bankroll`, :func:`apply_win`, the session helpers and :func:`winners_in_order`
(``hand_counts``, ``meld_counts`` and ``HOWS`` are :mod:`mjenv.rules.scoring.common`'s, re-exported here).

Hand classes (the ``fans`` ids, from the most valuable, the first that applies; value V under 紧淌, §7.4) are
:data:`CLASSES` (rendered in the generated tables of docs/rules/diedaohu.md).

Everything is a pure function of tiles, melds, a context and a ``DiedaohuOptions`` value; the engine tracks
the situation (locks, balances, the session) and passes it in.  Readings of unclear rules are recorded in
``docs/rules-notes.md`` (section "Diedaohu").
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mjenv.rules.hand import Reading, reading_text, readings
from mjenv.rules.scoring import common
from mjenv.rules.scoring.common import (
    HOWS,
    class_score_json,
    hand_counts,
    meld_counts,
    no_reading_result,
    notation_context,
    reading_result,
)
from mjenv.rules.scoring.common import Settlement, Transfer, WinScore, make_settlement
from mjenv.tiles import N_KINDS, Hand, Meld

if TYPE_CHECKING:
    from mjenv.rules.options import DiedaohuOptions

__all__ = [
    "CLASSES",
    "FANS",
    "FAN_ORDER",
    "N_PLAYERS",
    "HOWS",
    "WHOLE_BALANCE",
    "KONG_KINDS",
    "LouhuLock",
    "DiedaohuContext",
    "DiedaohuScore",
    "BankrollSettlement",
    "Session",
    "hand_counts",
    "meld_counts",
    "check_hand",
    "hand_class",
    "best_class_reading",
    "win_refusal",
    "fengqing_liability",
    "score_win",
    "score_reading",
    "score_settled",
    "class_reading",
    "score_hand",
    "win_transfers",
    "settle_win",
    "kong_money",
    "settle_kong",
    "apply_bankroll",
    "apply_win",
    "winners_in_order",
    "two_busted",
    "next_dealer",
    "new_session",
    "advance_session",
    "next_hand",
]

N_PLAYERS = 4

# Class id -> (Chinese, English, V under 紧淌), in the §7.4 order ("the first that applies").
CLASSES: dict[str, tuple[str, str, int]] = {
    "fengqing": ("风清", "all honors", 16),
    "qingduidui": ("清对对", "pure all-triplets", 8),
    "qingyise": ("清一色", "full flush", 4),
    "hunduidui": ("混对对", "half-flush all-triplets", 4),
    "hunyise": ("混一色", "half flush", 2),
    "duiduihu": ("对对胡", "all triplets", 2),
    "pihu": ("屁胡", "plain win", 1),
}
FANS = CLASSES
"""The fan ids ``mjenv score`` prints: in Diedaohu a hand's one class is its one fan."""
FAN_ORDER: tuple[str, ...] = tuple(CLASSES)

WHOLE_BALANCE = math.inf
"""Owed amount meaning "the payer's whole balance" (风清 under 园子); :func:`apply_bankroll` resolves it."""

KONG_KINDS = ("direct", "added", "concealed")
_KONG_MONEY = {"direct": 1.0, "added": 0.5, "concealed": 1.0}  # §7.5, in b
_EPS = 1e-9  # balances within this of 0 are busted (园子 amounts such as N/50 scaling are not exact in binary)


# --------------------------------------------------------------------------------------------------
# Hands: counts, validation, classes
# --------------------------------------------------------------------------------------------------


def check_hand(counts: np.ndarray, melds: Sequence[Meld], win_tile: int, *, chi: bool, variant: str) -> None:
    """Raise ``ValueError`` for a hand that cannot occur: a chi where the variant has none, more than four melds,
    a concealed part of the wrong size, or more than four copies of a tile.  ``counts`` excludes ``win_tile``."""
    if not 0 <= int(win_tile) < N_KINDS:
        raise ValueError(f"winning tile id {win_tile} out of range 0..33")
    no_chi = None if chi else f"{variant} has no chi here; a [C ...] meld cannot occur"
    common.check_hand(counts, melds, win_tile, no_chi)


def hand_class(reading: Reading, melds: Sequence[Meld], all_counts: np.ndarray) -> str:
    """The §7.4 class of one reading; ``all_counts`` holds every tile of the hand (melds and winning tile too)."""
    suits = {s for s in range(3) if all_counts[9 * s : 9 * s + 9].any()}
    honors = bool(all_counts[27:].any())
    if not suits:
        return "fengqing"
    # melds in this family are pongs and kongs, except Yangzhou's chi; a chi breaks all-triplets
    triplets = all(kind == "trip" for kind, _ in reading.sets) and all(m.kind != "C" for m in melds)
    if len(suits) == 1:
        if not honors:
            return "qingduidui" if triplets else "qingyise"
        return "hunduidui" if triplets else "hunyise"
    return "duiduihu" if triplets else "pihu"


def best_class_reading(
    counts: np.ndarray, melds: Sequence[Meld], win_tile: int, rank: Callable[[str], Any]
) -> tuple[Reading, str] | None:
    """The reading whose class ranks highest under ``rank`` (ties: the first in ``hand.readings`` order), with
    its class; ``None`` when the hand has no standard reading (seven pairs is never a win here, §7.4)."""
    full = counts.astype(np.int8).copy()
    full[int(win_tile)] += 1
    all_counts = full.astype(np.int64) + meld_counts(melds)
    best = None
    for r in readings(full, seven_pairs=False):
        cls = hand_class(r, melds, all_counts)
        if best is None or rank(cls) > rank(best[1]):
            best = (r, cls)
    return best


def fengqing_liability(melds: Sequence[Meld]) -> tuple[bool, int | None]:
    """Whether a 风清 hand makes a feeder liable (§8.9 "碰誰第四副牌，成風清則誰包牌"), and who: the fourth
    declared meld was a pong (kept, or later upgraded to an added kong), and its source seat pays (``None`` when
    the meld records no source)."""
    if len(melds) < 4 or melds[3].kind not in ("P", "A"):
        return False, None
    return True, melds[3].source


# --------------------------------------------------------------------------------------------------
# Missed win (§7.6) and the context of a win
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LouhuLock:
    """One player's missed-win (漏胡) state (§7.6); the engine keeps one per seat and replaces it on events.

    ``locked``: the player passed a legal discard or rob win since its last draw, so it may not win on a discard
    or rob (self-draw is never locked; pong and kong stay allowed).  ``dadiaoche_tile``: the 大吊车 exception —
    while locked, the player claimed (pong, or chi in Yangzhou) and discarded a tile X that left the single
    tile X in its hand; it may then win on X.
    """

    locked: bool = False
    dadiaoche_tile: int | None = None

    def passed(self) -> LouhuLock:
        """After the player did not take a legal discard or rob win (passing an illegal win changes nothing)."""
        return LouhuLock(True, None)

    def drew(self) -> LouhuLock:
        """After the player's own draw (a kong replacement tile included): the lock ends."""
        return LouhuLock()

    def discarded(self, concealed_after, tile: int) -> LouhuLock:
        """After the player discarded ``tile`` leaving ``concealed_after`` (ids or counts): sets the 大吊车
        exception when the hand is now the single tile ``tile`` (four melds, "吊的是同一張牌")."""
        if not self.locked:
            return self
        counts = hand_counts(concealed_after)
        if int(counts.sum()) == 1 and counts[int(tile)] == 1:
            return LouhuLock(True, int(tile))
        return LouhuLock(True, None)

    def forbids(self, how: str, win_tile: int, opts) -> bool:
        """True when this lock refuses a win on ``win_tile`` arriving by ``how`` under ``opts.louhu``."""
        if opts.louhu != "on" or not self.locked or how == "self-draw":
            return False
        return self.dadiaoche_tile is None or int(win_tile) != self.dadiaoche_tile


@dataclass(frozen=True)
class DiedaohuContext:
    """The situation of a Diedaohu or Liuwei win that the tiles do not show."""

    how: str
    """``"discard"``, ``"self-draw"`` or ``"rob"`` (robbing an added kong)."""
    lock: LouhuLock = LouhuLock()
    """The winner's missed-win state (§7.6)."""
    discarder_busted: bool = False
    """园子: the discarder (robbed konger) has a balance of 0, so its tiles cannot be won on (§7.7)."""

    def __post_init__(self) -> None:
        if self.how not in HOWS:
            raise ValueError(f"how {self.how!r} is not one of {', '.join(HOWS)}")


def win_refusal(how: str, win_tile: int, lock: LouhuLock, discarder_busted: bool, opts) -> str | None:
    """Why a win with a standard reading is still refused in Diedaohu / Liuwei (``None`` = legal):
    the missed-win lock (§7.6) or a busted discarder (§7.7)."""
    if lock.forbids(how, win_tile, opts):
        return "missed-win lock (漏胡): no discard or rob win until the next own draw"
    if how != "self-draw" and discarder_busted:
        return "the discarder is busted (园子): its tiles cannot be won on"
    return None


# --------------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DiedaohuScore(WinScore):
    """:class:`~mjenv.rules.scoring.common.WinScore` of a Diedaohu win, plus its class, share and liability.

    ``fans`` is ``{class: V}``; ``value`` is V and ``value_d`` equals it (no payer factors); ``cap`` is ``None``.
    """

    hand_class: str | None
    """The §7.4 class id (``None`` without a reading)."""
    share: float | None
    """What one payer owes: V·b; ``None`` = the payer's whole balance (风清 under 园子)."""
    baopai: str | None
    """``"fengqing"`` when ``fengqing_baopai`` is on and the 风清 was completed by a pong of a fourth meld."""
    baopai_from: int | None
    """The liable seat (the source of that fourth meld)."""

    def to_json(self) -> dict:
        """A JSON-ready dict (the fields ``mjenv score --json`` prints)."""
        return {**class_score_json(self), "baopai": self.baopai, "baopai_from": self.baopai_from}


def _class_value(cls: str) -> int:
    return CLASSES[cls][2]


def score_win(concealed, melds, win_tile: int, ctx: DiedaohuContext, opts: DiedaohuOptions) -> DiedaohuScore:
    """Score a possible Diedaohu win: best reading by V (§1.6), class and V (§7.4), legality (§7.6, §7.7).

    ``concealed`` is a 34-count vector or a sequence of ids *excluding* the winning tile; ``melds`` are
    :class:`mjenv.tiles.Meld` values (no chi).  A hand without a standard reading returns ``legal=False`` with
    value 0; an impossible hand raises ``ValueError``.
    """
    counts = hand_counts(concealed)
    r = _score_cached(counts.tobytes(), tuple(melds), int(win_tile), ctx, opts)
    return DiedaohuScore(**{**r, "fans": dict(r["fans"])})


def score_reading(concealed, melds, win_tile: int, ctx: DiedaohuContext, opts, reading: Reading) -> DiedaohuScore:
    """:func:`score_win` valued on ``reading`` alone, the reading :func:`best_class_reading` picks (the engine's
    compiled core names it, so that a result is built without enumerating the others)."""
    counts = hand_counts(concealed)
    r = _score_cached(counts.tobytes(), tuple(melds), int(win_tile), ctx, opts, reading)
    return DiedaohuScore(**{**r, "fans": dict(r["fans"])})


def class_reading(counts: np.ndarray, melds: Sequence[Meld], win_tile: int, reading: Reading) -> tuple[Reading, str]:
    """``(reading, its class)``, as :func:`best_class_reading` returns it when ``reading`` is its pick."""
    full = counts.astype(np.int64)
    full[int(win_tile)] += 1
    return reading, hand_class(reading, melds, full + meld_counts(melds))


@functools.lru_cache(maxsize=1 << 14)
def _score_cached(
    counts_bytes: bytes, melds: tuple[Meld, ...], w: int, ctx: DiedaohuContext, opts, reading: Reading | None = None
) -> dict:
    counts = np.frombuffer(counts_bytes, dtype=np.int8)
    check_hand(counts, melds, w, chi=False, variant="Diedaohu")
    if reading is None:
        found = best_class_reading(counts, melds, w, _class_value)
    else:
        found = class_reading(counts, melds, w, reading)
    if found is None:
        return no_reading_result(hand_class=None, share=0.0, baopai=None, baopai_from=None)
    reading, cls = found
    reason = win_refusal(ctx.how, w, ctx.lock, ctx.discarder_busted, opts)
    return _class_result(reading, melds, cls, _class_value(cls), reason, opts)


def score_settled(reading: Reading, melds, cls: str, value: int, how: str, opts) -> DiedaohuScore:
    """The score of a win the engine's kernel settled (:mod:`mjenv.engine.ddwin`): ``reading``, its class ``cls`` and
    V ``value`` as the kernel found them (the win judged legal already), without valuing or judging the hand again
    (``how`` is not read: Diedaohu's shares are the same for every kind of win)."""
    r = _class_result(reading, tuple(melds), cls, value, None, opts)
    return DiedaohuScore(**{**r, "fans": dict(r["fans"])})


def _class_result(reading: Reading, melds: tuple[Meld, ...], cls: str, value: int, reason: str | None, opts) -> dict:
    """The :class:`DiedaohuScore` fields of a win on ``reading`` of class ``cls`` (V ``value``)."""
    fed, liable = fengqing_liability(melds) if cls == "fengqing" and opts.fengqing_baopai == "on" else (False, None)
    return reading_result(
        reading,
        reading_text=reading_text(reading, " ".join(str(m) for m in melds)),
        reason=reason,
        fans=((cls, value),),
        value=value,
        hand_class=cls,
        # under 园子 a 风清 costs the payer its whole balance (§7.7), so there is no fixed share
        share=None if cls == "fengqing" and opts.bankroll is not None else float(value) * opts.base,
        baopai="fengqing" if fed else None,
        baopai_from=liable,
    )


def score_hand(hand: Hand, ctx: DiedaohuContext | None, opts: DiedaohuOptions) -> DiedaohuScore:
    """:func:`score_win` of a parsed notation hand; without ``ctx`` the win is a plain ``hand.win_how``."""
    ctx = notation_context(hand, ctx, DiedaohuContext)
    return score_win(hand.concealed_counts(), hand.melds, hand.win_tile, ctx, opts)


# --------------------------------------------------------------------------------------------------
# Money: owed transfers, 园子 bankroll
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BankrollSettlement(Settlement):
    """A :class:`~mjenv.rules.scoring.common.Settlement` of what was actually paid, with the 园子 bookkeeping.

    Under 紧淌 without tracked balances ``balances`` is ``None`` and nothing is ever busted.
    """

    balances: tuple[float, ...] | None
    """Each seat's balance after the event."""
    busted: tuple[int, ...]
    """Seats whose balance is 0 after the event (园子 only)."""
    newly_busted: tuple[int, ...]
    """Seats busted by this event."""
    session_over: bool
    """The session (一操) ends after this hand: a second player is busted, or a self-drawn 风清 (站起来)."""
    unpaid: tuple[Transfer, ...]
    """The part of each owed transfer that the payer's balance could not cover."""


def _check_seat(seat: Any, what: str) -> int:
    if not isinstance(seat, (int, np.integer)) or not 0 <= int(seat) < N_PLAYERS:
        raise ValueError(f"{what} must be a seat 0..{N_PLAYERS - 1}, got {seat!r}")
    return int(seat)


def apply_bankroll(
    balances: Sequence[float] | None,
    owed: Sequence[Transfer],
    *,
    limit: bool = True,
    stand_up: bool = False,
) -> BankrollSettlement:
    """Apply the owed transfers of one event (a kong or a win) to the balances (§7.7).

    With ``limit`` (园子) each payer pays at most its balance; a payer's debts are paid in turn order from its
    next player ("以最靠近這一家的人先拿錢"), each ``min(owed, what is left)``; an amount of
    :data:`WHOLE_BALANCE` takes whatever is left.  A seat whose balance ends at 0 is busted; the session ends
    when two seats are busted, or when ``stand_up`` (a self-drawn 风清 under 园子, "站起來").  Without ``limit``
    (紧淌) everything owed is paid; ``balances`` may then be ``None`` (not tracked).  Zero payments are left out
    of the transfers; shortfalls are listed in ``unpaid``.
    """
    owed = list(owed)
    for t in owed:
        _check_seat(t.payer, "payer")
        _check_seat(t.payee, "payee")
        if not t.amount >= 0:
            raise ValueError(f"owed amounts must be >= 0, got {t}")
    if balances is None:
        if limit:
            raise ValueError("园子 (a bankroll) needs the players' balances")
        if any(math.isinf(t.amount) for t in owed):
            raise ValueError("a whole-balance debt needs the players' balances")
        s = make_settlement(N_PLAYERS, [t for t in owed if t.amount > 0])
        return BankrollSettlement(s.transfers, s.deltas, None, (), (), False, ())
    bal = [float(x) for x in balances]
    if len(bal) != N_PLAYERS:
        raise ValueError(f"balances has {len(bal)} entries for {N_PLAYERS} players")
    if limit and any(not x >= -_EPS for x in bal):
        raise ValueError(f"园子 balances cannot be negative, got {bal}")
    if limit:  # a balance a hair below 0 is the rounding residue of earlier payments (e.g. 0.4 kong money): 0
        bal = [max(x, 0.0) for x in bal]
    if not limit and any(math.isinf(t.amount) for t in owed):
        raise ValueError("a whole-balance debt exists only under 园子")
    before = {p for p in range(N_PLAYERS) if limit and bal[p] <= _EPS}

    paid: list[Transfer] = []
    unpaid: list[Transfer] = []
    payers = list(dict.fromkeys(t.payer for t in owed))
    for payer in payers:
        mine = sorted((t for t in owed if t.payer == payer), key=lambda t: (t.payee - payer) % N_PLAYERS)
        for t in mine:
            amount = min(t.amount, bal[payer]) if limit else t.amount
            if amount > 0:
                paid.append(Transfer(t.payer, t.payee, amount, t.reason))
                bal[payer] -= amount
                bal[t.payee] += amount
            if t.amount > amount and not math.isinf(t.amount):
                unpaid.append(Transfer(t.payer, t.payee, t.amount - amount, t.reason))
    s = make_settlement(N_PLAYERS, paid)
    busted = tuple(p for p in range(N_PLAYERS) if limit and bal[p] <= _EPS)
    newly = tuple(p for p in busted if p not in before)
    over = limit and (stand_up or len(busted) >= 2)
    return BankrollSettlement(s.transfers, s.deltas, tuple(bal), busted, newly, over, tuple(unpaid))


def two_busted(balances) -> np.ndarray:
    """Whether two or more seats are busted (balance 0 within 1e-9, §7.7) — a hand that ends so ends the session
    ("有兩家都輸光，則這操牌結束"), however it ended: by a win, or drawn after kong money busted them (a drawn
    hand moves no other money).  ``balances``: ``[4]`` (gives a 0-d bool array) or ``[K, 4]`` (gives ``[K]``)."""
    return (np.asarray(balances, dtype=np.float64) <= _EPS).sum(axis=-1) >= 2


def winners_in_order(discarder: int, claimants: Sequence[int], multi_win: str) -> tuple[int, ...]:
    """The winners of one discard or rob among the players who declared a win (§1.8): all of them in turn order
    from the discarder's next player with ``multi_win: on``, else only the nearest one."""
    discarder = _check_seat(discarder, "discarder")
    seats = sorted({_check_seat(c, "claimant") for c in claimants}, key=lambda c: (c - discarder) % N_PLAYERS)
    if discarder in seats:
        raise ValueError(f"seat {discarder} cannot win on its own discard")
    if multi_win not in ("on", "off"):
        raise ValueError(f"multi_win must be 'on' or 'off', got {multi_win!r}")
    return tuple(seats) if multi_win == "on" else tuple(seats[:1])


def _check_winners(winners: Sequence[tuple[int, WinScore]], how: str, discarder: int | None) -> None:
    if how not in HOWS:
        raise ValueError(f"how {how!r} is not one of {', '.join(HOWS)}")
    if not winners:
        raise ValueError("a win needs at least one winner")
    seats = [_check_seat(w, "winner") for w, _ in winners]
    if len(set(seats)) != len(seats):
        raise ValueError(f"a seat appears twice among the winners {seats}")
    if how == "self-draw" and len(winners) != 1:
        raise ValueError("a self-draw has exactly one winner")
    if how != "self-draw":
        _check_seat(discarder, f"the discarder of a {how} win")
        if discarder in seats:
            raise ValueError(f"seat {discarder} cannot win on its own discard")
    for w, score in winners:
        if not score.legal:
            raise ValueError(f"seat {w}'s win is not legal ({score.reason}); it cannot be settled")


def win_transfers(
    winners: Sequence[tuple[int, DiedaohuScore]], how: str, discarder: int | None, opts: DiedaohuOptions
) -> list[Transfer]:
    """What the win(s) of one event owe (§7.5), before any bankroll limit.

    Self-draw: each other player owes the share; discard or rob: the discarder / konger owes each winner one
    share.  A share of ``None`` (风清 under 园子) is owed as :data:`WHOLE_BALANCE`.  Under ``fengqing_baopai`` the
    liable player owes everything instead: three shares on a self-draw, the one share on a discard.
    """
    _check_winners(winners, how, discarder)
    if opts.multi_win == "off" and len(winners) > 1:
        raise ValueError("multi_win is off: one discard has one winner (see winners_in_order)")
    out: list[Transfer] = []
    for w, score in winners:
        amount = WHOLE_BALANCE if score.share is None else score.share
        liable = _liable(w, score)
        if how == "self-draw":
            if liable is not None:
                # the liable player owes what the three would have paid; a whole balance stays a whole balance
                out.append(Transfer(liable, w, amount * (N_PLAYERS - 1), "baopai"))
            else:
                out.extend(Transfer(p, w, amount, "selfdraw") for p in range(N_PLAYERS) if p != w)
        elif liable is not None:
            out.append(Transfer(liable, w, amount, "baopai"))
        else:
            out.append(Transfer(discarder, w, amount, how))
    return out


def _liable(winner: int, score) -> int | None:
    if score.baopai is None:
        return None
    if score.baopai_from is None:
        raise ValueError(
            f"seat {winner}'s 风清 makes the feeder of its fourth pong liable, but that meld has no source seat"
        )
    liable = _check_seat(score.baopai_from, "the liable seat")
    if liable == winner:
        raise ValueError(f"seat {winner} cannot be liable for its own win")
    return liable


def settle_win(
    winners: Sequence[tuple[int, DiedaohuScore]],
    how: str,
    discarder: int | None,
    opts: DiedaohuOptions,
    balances: Sequence[float] | None = None,
) -> BankrollSettlement:
    """Payments of the win(s) of one event (§7.5, §7.7): :func:`win_transfers` applied by :func:`apply_bankroll`.

    Under 园子 (``opts.bankroll`` set) ``balances`` is required and limits every payment; a self-drawn 风清 ends
    the session.  Under 紧淌 ``balances`` is optional and only tracked.
    """
    return apply_win(win_transfers(winners, how, discarder, opts), winners, how, opts, balances)


def apply_win(
    owed: Sequence[Transfer],
    winners: Sequence[tuple[int, WinScore]],
    how: str,
    opts,
    balances: Sequence[float] | None = None,
) -> BankrollSettlement:
    """Apply what the win(s) of one event owe to the balances (§7.7; Liuwei §10.4 "as Diedaohu"): limited under
    园子 (``opts.bankroll`` set), where a self-drawn 风清 (the first winner's ``hand_class``) ends the session;
    unlimited under 紧淌."""
    yuanzi = opts.bankroll is not None
    stand_up = yuanzi and how == "self-draw" and winners[0][1].hand_class == "fengqing"
    return apply_bankroll(balances, owed, limit=yuanzi, stand_up=stand_up)


def kong_money(kind: str, konger: int, discarder: int | None, opts: DiedaohuOptions) -> list[Transfer]:
    """Kong money 米钱 owed for one completed kong (§7.5): ``direct`` 1·b from the discarder, ``added`` (回头杠)
    0.5·b from each other player, ``concealed`` 1·b from each.  A robbed kong is not made and owes nothing."""
    if kind not in KONG_KINDS:
        raise ValueError(f"kong kind {kind!r} is not one of {', '.join(KONG_KINDS)}")
    konger = _check_seat(konger, "konger")
    amount = _KONG_MONEY[kind] * opts.base
    if kind == "direct":
        discarder = _check_seat(discarder, "the discarder of a direct kong")
        if discarder == konger:
            raise ValueError("a direct kong is made on another player's discard")
        return [Transfer(discarder, konger, amount, "kong_direct")]
    return [Transfer(p, konger, amount, f"kong_{kind}") for p in range(N_PLAYERS) if p != konger]


def settle_kong(
    kind: str, konger: int, discarder: int | None, opts: DiedaohuOptions, balances: Sequence[float] | None = None
) -> BankrollSettlement:
    """Kong money of one kong, paid at once ("現刮現") and limited by balances under 园子 (a busted player pays
    nothing, §7.7)."""
    owed = kong_money(kind, konger, discarder, opts)
    return apply_bankroll(balances, owed, limit=opts.bankroll is not None)


# --------------------------------------------------------------------------------------------------
# Dealer, rounds, session (§7.8)
# --------------------------------------------------------------------------------------------------

EAST = 27


def next_dealer(dealer: int, winners: Sequence[int], draw_dealer: str) -> int:
    """The next hand's dealer: the dealer stays if it is among the winners (paid or not, §7.7); after a drawn hand
    (no winners) it stays under ``draw_dealer: stay`` and passes under ``rotate``; otherwise its next player deals."""
    dealer = _check_seat(dealer, "dealer")
    if draw_dealer not in ("rotate", "stay"):
        raise ValueError(f"draw_dealer must be 'rotate' or 'stay', got {draw_dealer!r}")
    if not winners:
        return dealer if draw_dealer == "stay" else (dealer + 1) % N_PLAYERS
    if dealer in [_check_seat(w, "winner") for w in winners]:
        return dealer
    return (dealer + 1) % N_PLAYERS


@dataclass(frozen=True)
class Session:
    """Where a session (一操) stands: the current dealer, how often the deal has passed, whether it is over.

    A round (圈) ends when the deal has passed through all four seats, i.e. after every 4 passes (§7.8, §8.3).
    """

    dealer: int
    rounds: int
    passes: int = 0
    """Times the deal has passed to the next player since the session began."""
    hands: int = 0
    """Hands played so far."""
    over: bool = False

    @property
    def round_index(self) -> int:
        """0-based index of the current round (the last one once the session is over)."""
        return min(self.passes // N_PLAYERS, self.rounds - 1)

    @property
    def round_wind(self) -> int:
        """The round wind's tile id: 1z East in the first round, then 2z, 3z, 4z, repeating with 8 rounds (§8.3)."""
        return EAST + self.round_index % 4

    def seat_wind(self, seat: int) -> int:
        """The seat wind's tile id: the dealer is East (1z), its next player South, then West, North (§8.3)."""
        return EAST + (_check_seat(seat, "seat") - self.dealer) % N_PLAYERS


def new_session(opts, dealer: int = 0) -> Session:
    """A fresh session with ``opts.rounds`` rounds and ``dealer`` dealing first."""
    return Session(_check_seat(dealer, "dealer"), int(opts.rounds))


def advance_session(session: Session, winners: Sequence[int], draw_dealer: str, ended: bool = False) -> Session:
    """The session after a hand with ``winners`` (empty = drawn hand); ``ended`` = the bankroll ended it
    (:attr:`BankrollSettlement.session_over`).  It is over after ``4 · rounds`` passes of the deal."""
    if session.over:
        raise ValueError("the session is over")
    dealer = next_dealer(session.dealer, winners, draw_dealer)
    passes = session.passes + (dealer != session.dealer)
    over = bool(ended) or passes >= N_PLAYERS * session.rounds
    return Session(dealer, session.rounds, passes, session.hands + 1, over)


def next_hand(session: Session, winners: Sequence[int], opts: DiedaohuOptions, ended: bool = False) -> Session:
    """:func:`advance_session` under the Diedaohu rules (``opts.draw_dealer``); Yangzhou uses it too (§8.10)."""
    return advance_session(session, winners, opts.draw_dealer, ended)
