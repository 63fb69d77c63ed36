"""Pieces shared by the scoring modules: the result types every scorer returns (:class:`WinScore`,
:class:`Transfer`, :class:`Settlement`, :func:`make_settlement`), turning hand arguments into tile counts, the
checks every hand must pass, the notation-hand entry point, and the result helpers of the Diedaohu family.

Only logic that is the same in every variant that uses it lives here; the rules that differ (which melds a
variant allows, foreign tiles, the classes and fans themselves) stay in the variant modules, which pass the
variant's wording in where an error message names the variant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from mjenv.rules.hand import Reading
from mjenv.tiles import N_KINDS, Hand, Meld, counts_from_ids, tile_name


@dataclass(frozen=True)
class WinScore:
    """The verdict on one possible win: legality, best reading, fans, value and cap."""

    legal: bool
    reason: str | None
    """Why the win is not legal (``None`` when legal)."""
    reading: Reading | None
    """Best reading (§1.6); ``None`` when the hand has no winning reading."""
    reading_text: str
    """The best reading written out, melds included, e.g. ``"234p · 678s · 789s · 55z + [P 333p]"``."""
    fans: dict[str, int]
    """Fan id -> its contribution to this win (a fan counted several times under ``sigui_count: each``
    shows the combined contribution); ``{"pihu": 1}`` when no fan applies."""
    value: int
    """V: the uncapped value of the best reading under ``fan_combine`` (0 when there is no reading)."""
    cap: int | None
    """Cap of the best reading (§3.8); ``None`` = no cap."""
    value_d: int
    """V_D = V · f_D for discard-type wins (what L3 and L4 compare); V for a self-draw."""


@dataclass(frozen=True)
class Transfer:
    """One payment: ``payer`` gives ``amount`` (units of money, b already applied) to ``payee``."""

    payer: int
    payee: int
    amount: float
    reason: str
    """``selfdraw``, ``discard``, ``rob``, ``baohu``, ``kong_concealed``, ``kong_added``, ``kong_direct``,
    ``draw_penalty`` or ``tingtou``."""


@dataclass(frozen=True)
class Settlement:
    """The transfers of one event and the resulting per-seat deltas (zero-sum)."""

    transfers: tuple[Transfer, ...]
    deltas: tuple[float, ...]


def make_settlement(n_players: int, transfers: Sequence[Transfer]) -> Settlement:
    """The :class:`Settlement` of a list of transfers (e.g. kong money and a win of one hand put together)."""
    deltas = [0.0] * n_players
    for t in transfers:
        if t.payer == t.payee or not (0 <= t.payer < n_players and 0 <= t.payee < n_players):
            raise ValueError(f"bad transfer {t} for {n_players} players")
        deltas[t.payer] -= t.amount
        deltas[t.payee] += t.amount
    return Settlement(tuple(transfers), tuple(deltas))


__all__ = [
    "HOWS",
    "NO_READING_REASON",
    "hand_counts",
    "meld_counts",
    "owned_counts",
    "check_melds",
    "check_concealed_size",
    "check_copies",
    "check_hand",
    "notation_context",
    "json_number",
    "class_score_json",
    "reading_result",
    "no_reading_result",
]

HOWS = ("discard", "self-draw", "rob")
"""How a win arrives, in every variant: on a discard, by a self-draw, or by robbing a kong."""

NO_READING_REASON = "no winning reading (standard shape only; seven pairs is not a win)"
"""The refusal of a Diedaohu-family hand (Diedaohu, Yangzhou, Liuwei) that has no standard reading."""

_Ctx = TypeVar("_Ctx")


# --------------------------------------------------------------------------------------------------
# Tile counts
# --------------------------------------------------------------------------------------------------


def hand_counts(concealed) -> np.ndarray:
    """A 34-count vector (int8) from a count vector or a sequence of tile ids (a hand never holds 34 tiles).

    Raises ``ValueError`` for a count vector with a negative count or a tile id outside 0..33.
    """
    arr = np.asarray(concealed)
    if arr.ndim == 1 and arr.shape[0] == N_KINDS:
        if (arr < 0).any():
            raise ValueError("a tile count vector cannot have negative counts")
        return arr.astype(np.int8)
    ids = arr.reshape(-1).astype(np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= N_KINDS):
        raise ValueError(f"tile ids must be in 0..33, got {ids.tolist()}")
    return counts_from_ids(ids)


def meld_counts(melds: Sequence[Meld]) -> np.ndarray:
    """34-count vector of the tiles in declared melds (kongs as 4)."""
    return counts_from_ids([t for m in melds for t in m.tiles])


def owned_counts(counts: np.ndarray, melds: Sequence[Meld]) -> np.ndarray:
    """The tiles a player owns (concealed ``counts`` plus its melds) as an int8 34-count vector, the ``owned``
    argument of :func:`mjenv.rules.hand.wait_mask` (a kind owned four times cannot be waited on, §1.5)."""
    return (counts.astype(np.int64) + meld_counts(melds)).astype(np.int8)


# --------------------------------------------------------------------------------------------------
# Hand checks (each raises ValueError for a hand that cannot occur)
# --------------------------------------------------------------------------------------------------


def check_melds(melds: Sequence[Meld], no_chi: str | None = None) -> None:
    """Every meld is a :class:`mjenv.tiles.Meld` and there are at most four of them.

    ``no_chi``: the error message for a chi meld in a variant (or option setting) without chi; ``None`` allows chi.
    """
    for m in melds:
        if not isinstance(m, Meld):
            raise ValueError(f"melds must be mjenv.tiles.Meld values, got {m!r}")
        if no_chi is not None and m.kind == "C":
            raise ValueError(no_chi)
    if len(melds) > 4:
        raise ValueError(f"a hand has at most 4 melds, got {len(melds)}")


def check_concealed_size(counts: np.ndarray, melds: Sequence[Meld]) -> None:
    """The concealed part, before the winning tile, holds 13 − 3m tiles for m melds."""
    need = 13 - 3 * len(melds)
    if int(counts.sum()) != need:
        raise ValueError(
            f"{len(melds)} meld(s) need {need} concealed tiles before the winning tile, got {int(counts.sum())}"
        )


def check_copies(counts: np.ndarray, melds: Sequence[Meld], extra: int | None) -> np.ndarray:
    """Every tile the player owns (``counts``, the melds and the tile ``extra`` when given) as an int64 34-count
    vector; ``ValueError`` when a kind appears more than four times."""
    total = counts.astype(np.int64) + meld_counts(melds)
    if extra is not None:
        total[extra] += 1
    over = np.flatnonzero(total > 4)
    if over.size:
        t = int(over[0])
        raise ValueError(f"{tile_name(t)} appears {int(total[t])} times (at most 4 copies exist)")
    return total


def check_hand(counts: np.ndarray, melds: Sequence[Meld], win_tile: int, no_chi: str | None = None) -> np.ndarray:
    """:func:`check_melds`, :func:`check_concealed_size` and :func:`check_copies` in that order; returns all the
    tiles of the hand (concealed, melds and ``win_tile``).  ``counts`` excludes ``win_tile``."""
    check_melds(melds, no_chi)
    check_concealed_size(counts, melds)
    return check_copies(counts, melds, int(win_tile))


# --------------------------------------------------------------------------------------------------
# Notation hands
# --------------------------------------------------------------------------------------------------


def notation_context(hand: Hand, ctx: _Ctx | None, make_context: Callable[..., _Ctx]) -> _Ctx:
    """The context to score a parsed notation hand with: ``ctx``, or without it a plain ``hand.win_how`` win
    (``make_context(how=...)``, a discard when the notation names none).  ``ValueError`` when the hand has no
    winning tile."""
    if hand.win_tile is None:
        raise ValueError("the hand has no winning tile (write it as e.g. '+3p discard')")
    if ctx is None:
        ctx = make_context(how=hand.win_how or "discard")
    return ctx


# --------------------------------------------------------------------------------------------------
# Results of the Diedaohu family (Diedaohu, Yangzhou, Liuwei)
# --------------------------------------------------------------------------------------------------


def json_number(x: float | None) -> float | int | None:
    """Whole amounts as ints so JSON shows ``4`` rather than ``4.0``; ``None`` stays ``None``."""
    if x is None:
        return None
    return int(x) if float(x).is_integer() else float(x)


def class_score_json(score: Any) -> dict:
    """The leading ``mjenv score --json`` fields of a score with a hand class and a share (Diedaohu, Liuwei):
    legality, reading, class, fans, value, cap and the share (``whole_balance`` when the share is ``None``)."""
    return {
        "legal": score.legal,
        "reason": score.reason,
        "reading": score.reading_text,
        "hand_class": score.hand_class,
        "fans": dict(score.fans),
        "value": score.value,
        "cap": score.cap,
        "share": json_number(score.share),
        "whole_balance": score.share is None,
    }


def reading_result(reading, reading_text: str, reason: str | None, fans: tuple, value: int, **extra) -> dict:
    """The fields of a :class:`WinScore` for a hand with a reading, as a dict
    (legal iff ``reason`` is ``None``; no cap; ``value_d`` equals ``value``), followed by the ``extra`` fields of
    the variant's score type."""
    return dict(
        legal=reason is None,
        reason=reason,
        reading=reading,
        reading_text=reading_text,
        fans=fans,
        value=value,
        cap=None,
        value_d=value,
        **extra,
    )


def no_reading_result(**extra) -> dict:
    """The fields of a score for a hand with no standard reading (not legal, value 0, no fans), as a dict,
    followed by the ``extra`` fields of the variant's score type."""
    return dict(
        legal=False,
        reason=NO_READING_REASON,
        reading=None,
        reading_text="",
        fans=(),
        value=0,
        cap=None,
        value_d=0,
        **extra,
    )
