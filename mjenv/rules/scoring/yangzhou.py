"""Yangzhou (扬州式) scoring and settlement, standard and new: docs/rules/yangzhou.md §8.3–§8.9 and §9.

This module owns, for variants ``yangzhou`` (标准扬州式) and ``yangzhou_new`` (新扬州式), which differ only in
``yz_style`` (the big-fan value column) and ``min_fan``:

* the small fans of a reading (§8.4), with the seat and round winds as inputs (§8.3) — :class:`YangzhouContext`;
* the big fans (§8.5) and the big-fan value B of a reading (§8.6) — :func:`structure_fans`, :func:`big_fan_value`;
* the total T = B + small fans, legality (B > 0 and T ≥ ``min_fan``, the missed-win lock) and the choice of the
  scored reading (§8.7) — :func:`score_win`, :func:`score_hand` (:func:`score_reading` on a reading already chosen,
  :func:`score_settled` on the fans the engine's kernel found for it);
* the 1:2 payments (§8.8) and 包牌 liability (§8.9) — :func:`win_transfers`, :func:`settle_win`, :func:`liable_seat`;
* the winds of a seat and a round (§8.3) — :func:`seat_wind`, :func:`round_wind`.

Missed win, dealer and session rules are Diedaohu's (§8.2, §8.10): :class:`~.diedaohu.LouhuLock`,
:func:`~.diedaohu.next_hand`, :class:`~.diedaohu.Session` (whose ``round_wind`` / ``seat_wind`` feed the context).
There is no kong money (§8.12 #12) and no bankroll (紧淌).

Its compiled twin is :mod:`mjenv.engine.yzscore` (the fan minimum and the lock the engine judges while a hand
runs); both read the values of :data:`BIG_FANS`, :data:`SMALL_FANS`, :data:`COMPOSITES` and :data:`STRUCTURE`, the
twin through the engine's configuration vector (:func:`mjenv.engine.yzscore.config`).

Fan ids (snake_case pinyin; names of more than three syllables are split at the Chinese word boundary):

Big fans (大番) with their standard / new values are :data:`BIG_FANS` (suit fans, structure fans, then the listed
composites of :data:`COMPOSITES`); small fans (小番), the same in both styles, :data:`SMALL_FANS` (both rendered in
the generated tables of docs/rules/yangzhou.md).

A suit fan with a structure fan that has no listed composite is reported as both ids, their values summed
(§8.6 step 5, e.g. ``{qingyise: 60, yiban: 10}``).

Everything is a pure function of tiles, melds, a :class:`YangzhouContext` and a ``YangzhouOptions`` value.
Readings of unclear rules are recorded in ``docs/rules-notes.md`` (section "Yangzhou").
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mjenv.rules.hand import Reading, reading_text, readings, wait_mask
from mjenv.rules.scoring.common import (
    json_number,
    no_reading_result,
    notation_context,
    owned_counts,
    reading_result,
)
from mjenv.rules.scoring.diedaohu import (
    HOWS,
    N_PLAYERS,
    LouhuLock,
    check_hand,
    fengqing_liability,
    hand_counts,
    meld_counts,
)
from mjenv.rules.scoring.common import Settlement, Transfer, WinScore, make_settlement
from mjenv.tiles import DRAGONS, WINDS, Hand, Meld

if TYPE_CHECKING:
    from mjenv.rules.options import YangzhouOptions

__all__ = [
    "BIG_FANS",
    "SMALL_FANS",
    "FANS",
    "FAN_ORDER",
    "COMPOSITES",
    "STRUCTURE",
    "YangzhouContext",
    "YangzhouScore",
    "seat_wind",
    "round_wind",
    "structure_fans",
    "big_fan_value",
    "score_win",
    "score_reading",
    "score_settled",
    "score_hand",
    "liable_seat",
    "win_transfers",
    "settle_win",
]

# Big fan id -> (Chinese, English, (standard, new)), in the §8.5 table order.
BIG_FANS: dict[str, tuple[str, str, tuple[int, int]]] = {
    "qingyise": ("清一色", "full flush", (60, 80)),
    "hunyise": ("混一色", "half flush", (15, 20)),
    "fengqing": ("风清", "all honors", (240, 320)),
    "gangban": ("钢板", "four identical sequences", (480, 640)),
    "tieban": ("铁板", "three identical sequences", (60, 80)),
    "yiban": ("一板", "two identical sequences", (10, 15)),
    "shuangbanban": ("双板板", "two pairs of twins", (30, 40)),
    "shuangban_shuangxi": ("双板双喜", "two pairs of twins, same numbers", (60, 80)),
    "shuangban_shuanglao": ("双板双老", "two pairs of twins, old and young", (60, 80)),
    "shuangban_shuanglian": ("双板双连", "two pairs of twins, consecutive", (60, 80)),
    "yitiaolong": ("一条龙", "straight", (15, 20)),
    "banlong": ("板龙", "straight plus twin", (25, 45)),
    "sanfutong": ("三副同", "three-suit sequence", (15, 20)),
    "sifutong": ("四副同", "four of the same sequence", (30, 50)),
    "duiduihu": ("对对胡", "all triplets", (15, 20)),
    "shuangpiao": ("双飘", "double float", (15, 20)),
    "hunlong": ("混龙", "half-flush straight", (30, 50)),
    "hunduidui": ("混对对", "half-flush all triplets", (30, 50)),
    "hunbanlong": ("混板龙", "half-flush straight plus twin", (45, 80)),
    "hun_shuangbanban": ("混双板板", "half-flush two pairs of twins", (35, 70)),
    "huntieban": ("混铁板", "half-flush three identical sequences", (75, 110)),
    "hun_shuangban_shuanglian": ("混双板双连", "half-flush consecutive twins", (75, 110)),
    "hun_shuangban_shuanglao": ("混双板双老", "half-flush old-and-young twins", (75, 110)),
    "hun_shuangban_shuangxi": ("混双板双喜", "half-flush same-number twins", (75, 110)),
    "qingduidui": ("清对对", "pure all triplets", (75, 110)),
    "qinglong": ("清龙", "pure straight", (75, 110)),
    "shuangbanqing": ("双板清", "pure two pairs of twins", (80, 120)),
    "qingbanlong": ("清板龙", "pure straight plus twin", (85, 130)),
    "tiebanqing": ("铁板清", "pure three identical sequences", (120, 160)),
}

# (suit fan, structure fan) -> the composite the §8.5 table lists for them.
COMPOSITES: dict[tuple[str, str], str] = {
    ("hunyise", "yitiaolong"): "hunlong",
    ("hunyise", "duiduihu"): "hunduidui",
    ("hunyise", "banlong"): "hunbanlong",
    ("hunyise", "shuangbanban"): "hun_shuangbanban",
    ("hunyise", "tieban"): "huntieban",
    ("hunyise", "shuangban_shuanglian"): "hun_shuangban_shuanglian",
    ("hunyise", "shuangban_shuanglao"): "hun_shuangban_shuanglao",
    ("hunyise", "shuangban_shuangxi"): "hun_shuangban_shuangxi",
    ("qingyise", "duiduihu"): "qingduidui",
    ("qingyise", "yitiaolong"): "qinglong",
    ("qingyise", "shuangbanban"): "shuangbanqing",
    ("qingyise", "banlong"): "qingbanlong",
    ("qingyise", "tieban"): "tiebanqing",
}

STRUCTURE: tuple[str, ...] = (
    "tieban",
    "yiban",
    "shuangbanban",
    "shuangban_shuangxi",
    "shuangban_shuanglao",
    "shuangban_shuanglian",
    "yitiaolong",
    "banlong",
    "sanfutong",
    "sifutong",
    "duiduihu",
    "shuangpiao",
)
"""The structure fans (§8.5) in the order :func:`structure_fans` lists them; the compiled twin
(:mod:`mjenv.engine.yzscore`) numbers its structure bits by this order."""

# Small fan id -> (Chinese, English, fans per occurrence), in the §8.4 table order.
SMALL_FANS: dict[str, tuple[str, str, int]] = {
    "menqing": ("门清", "concealed hand", 1),
    "pinghu": ("平胡", "all sequences, no honors", 1),
    "zimo": ("自摸", "self-draw", 1),
    "yazi": ("丫子", "edge or closed sole wait", 1),
    "queyi": ("缺一", "missing one suit", 1),
    "yaotou": ("幺头", "terminal pair", 1),
    "duanyao": ("断幺", "no terminals or honors", 1),
    "qixiang": ("齐相", "same sequence in two suits", 1),
    "lianfu": ("连副", "two sequences three apart", 1),
    "laoshao": ("老少", "123 and 789 of one suit", 1),
    "zige": ("子格", "concealed triplet", 1),
    "minggang": ("明杠", "exposed kong", 1),
    "angang": ("暗杠", "concealed kong", 2),
    "menfeng": ("门风", "seat-wind set", 1),
    "quanfeng": ("圈风", "round-wind set", 1),
    "jianke": ("中发白", "dragon set", 1),
    "dudiao": ("独吊", "single wait on the pair", 1),
}

FANS: dict[str, tuple[str, str, tuple[int, int]]] = {
    **BIG_FANS,
    **{f: (cn, en, (v, v)) for f, (cn, en, v) in SMALL_FANS.items()},
}
"""Every fan id -> (Chinese, English, (standard value, new value)); ``mjenv score`` prints these names."""
FAN_ORDER: tuple[str, ...] = tuple(FANS)


def _col(opts) -> int:
    """Index of the value column: 0 standard, 1 new (§9)."""
    return 1 if opts.yz_style == "new" else 0


def _big(fan: str, col: int) -> int:
    return BIG_FANS[fan][2][col]


# --------------------------------------------------------------------------------------------------
# Context and result
# --------------------------------------------------------------------------------------------------


def seat_wind(seat: int, dealer: int) -> int:
    """Tile id of a seat's wind (门风, §8.3): the dealer is East 1z, its next player South 2z, then West, North."""
    return WINDS[0] + (int(seat) - int(dealer)) % N_PLAYERS


def round_wind(round_index: int) -> int:
    """Tile id of the round wind (圈风, §8.3) of the 0-based round: East, South, West, North, repeating."""
    return WINDS[0] + int(round_index) % 4


@dataclass(frozen=True)
class YangzhouContext:
    """The situation of a Yangzhou win that the tiles do not show."""

    how: str
    """``"discard"``, ``"self-draw"`` or ``"rob"`` (a rob counts as a discard, "算出沖")."""
    seat_wind: int = WINDS[0]
    """Tile id 27..30 of the winner's seat wind (:func:`seat_wind`)."""
    round_wind: int = WINDS[0]
    """Tile id 27..30 of the round wind (:func:`round_wind`)."""
    lock: LouhuLock = LouhuLock()
    """The winner's missed-win state (§8.2 → §7.6)."""

    def __post_init__(self) -> None:
        if self.how not in HOWS:
            raise ValueError(f"how {self.how!r} is not one of {', '.join(HOWS)}")
        for name in ("seat_wind", "round_wind"):
            if getattr(self, name) not in WINDS:
                raise ValueError(f"{name} must be a wind tile id 27..30 (1z..4z), got {getattr(self, name)!r}")


@dataclass(frozen=True)
class YangzhouScore(WinScore):
    """:class:`~mjenv.rules.scoring.common.WinScore` of a Yangzhou win plus B, the small fans, T and liability.

    ``fans`` holds the big fans that make B (one composite, one fan, or a suit fan and a structure fan) and the
    small fans with their combined value, so its values sum to T; ``value`` and ``value_d`` are T; ``cap`` is
    ``None``.
    """

    big_fan_value: int
    """B (§8.6); 0 when the reading has no big fan."""
    small_fans: tuple[str, ...]
    """The small fans in §8.4 order, an "each" fan once per occurrence (e.g. ``("zige", "zige", "jianke")``)."""
    total: int
    """T = B + the small fans (§8.7)."""
    share: float
    """What one payer pays for this win as it arrived: T·b on a self-draw, 2·T·b from the discarder (§8.8)."""
    baopai: str | None
    """``"qingyise"`` or ``"fengqing"`` when the win makes a player liable (§8.9, ``baopai: on``)."""
    baopai_from: int | None
    """The liable seat for 风清 (the fourth pong's source); for 清一色 it is always the winner's previous player,
    which only the settlement knows (``None`` here)."""

    def to_json(self) -> dict:
        """A JSON-ready dict (the fields ``mjenv score --json`` prints)."""
        return {
            "legal": self.legal,
            "reason": self.reason,
            "reading": self.reading_text,
            "fans": dict(self.fans),
            "big_fan_value": self.big_fan_value,
            "small_fans": list(self.small_fans),
            "total": self.total,
            "value": self.value,
            "cap": self.cap,
            "share": json_number(self.share),
            "baopai": self.baopai,
            "baopai_from": self.baopai_from,
        }


# --------------------------------------------------------------------------------------------------
# Big fans (§8.5, §8.6)
# --------------------------------------------------------------------------------------------------


def structure_fans(sets: Sequence[tuple[str, int]]) -> tuple[str, ...]:
    """The structure fans (§8.5) present in the four sets of a reading, melds included.

    ``sets`` are ``("seq", first_tile)`` or ``("trip", tile)`` (kongs as ``"trip"``).  钢板 is not a structure
    fan here (it stands alone, see :func:`big_fan_value`); several may hold at once (双板双连, 双板板 and 一板).
    """
    seqs = [t for kind, t in sets if kind == "seq"]
    count = Counter(seqs)
    found: set[str] = set()
    if 3 in count.values():
        found.add("tieban")
    if any(c >= 2 for c in count.values()):
        found.add("yiban")
    twins = sorted(t for t, c in count.items() if c == 2)
    if len(twins) == 2:
        found.add("shuangbanban")
        a, b = twins
        if a // 9 != b // 9 and a % 9 == b % 9:
            found.add("shuangban_shuangxi")
        if a // 9 == b // 9 and (a % 9, b % 9) == (0, 6):
            found.add("shuangban_shuanglao")
        if a // 9 == b // 9 and b - a == 3:
            found.add("shuangban_shuanglian")
    for s in range(3):
        dragon = (9 * s, 9 * s + 3, 9 * s + 6)
        if all(count[t] for t in dragon):
            found.add("yitiaolong")
            if len(seqs) == 4 and sum(count[t] for t in dragon) == 4:
                found.add("banlong")
    for r in range(7):
        if all(count[9 * s + r] for s in range(3)):
            found.add("sanfutong")
            if sum(count[9 * s + r] for s in range(3)) == 4:
                found.add("sifutong")
    if len(sets) == 4 and not seqs:
        found.add("duiduihu")
    if len(seqs) == 4 and _shuangpiao(count):
        found.add("shuangpiao")
    return tuple(f for f in STRUCTURE if f in found)


def _shuangpiao(count: Counter) -> bool:
    """Four sequences a-X, a-Y, c-X, c-Y in exactly two suits with {a, c} 连副 (c = a + 3) or 老少 ({1, 7})."""
    if len(count) != 4 or any(c != 1 for c in count.values()):
        return False
    by_suit: dict[int, set[int]] = {}
    for t in count:
        by_suit.setdefault(t // 9, set()).add(t % 9)
    if len(by_suit) != 2:
        return False
    x, y = by_suit.values()
    if x != y or len(x) != 2:
        return False
    a, c = sorted(x)
    return c - a == 3 or (a, c) == (0, 6)


def _suit_fan(all_counts: np.ndarray) -> str | None:
    """The hand's suit fan: 风清, 清一色, 混一色 or none (a property of the tiles, not of the reading)."""
    suits = {s for s in range(3) if all_counts[9 * s : 9 * s + 9].any()}
    honors = bool(all_counts[27:].any())
    if not suits:
        return "fengqing"
    if len(suits) == 1:
        return "hunyise" if honors else "qingyise"
    return None


def big_fan_value(
    sets: Sequence[tuple[str, int]], suit_fan: str | None, opts
) -> tuple[int, tuple[tuple[str, int], ...]]:
    """B of a reading (§8.6) and the big fans that make it, as ``(id, value)`` pairs summing to B.

    ``suit_fan`` is ``"fengqing"``, ``"qingyise"``, ``"hunyise"`` or ``None``.  风清 and 钢板 stand alone; otherwise
    B is the best structure fan, or with a suit fan the best of the suit fan alone and each (suit, structure)
    combination (the listed composite, else the sum); only one structure fan counts.
    """
    col = _col(opts)
    if suit_fan == "fengqing":
        return _big("fengqing", col), (("fengqing", _big("fengqing", col)),)
    if 4 in Counter(t for kind, t in sets if kind == "seq").values():
        return _big("gangban", col), (("gangban", _big("gangban", col)),)
    sigma = structure_fans(sets)
    options: list[tuple[int, tuple[tuple[str, int], ...]]] = []
    if suit_fan is None:
        options = [(_big(f, col), ((f, _big(f, col)),)) for f in sigma]
    else:
        options.append((_big(suit_fan, col), ((suit_fan, _big(suit_fan, col)),)))
        for f in sigma:
            combo = COMPOSITES.get((suit_fan, f))
            if combo is not None:
                options.append((_big(combo, col), ((combo, _big(combo, col)),)))
            else:
                parts = ((suit_fan, _big(suit_fan, col)), (f, _big(f, col)))
                options.append((parts[0][1] + parts[1][1], parts))
    if not options:
        return 0, ()
    # max keeps the first of equal values: the suit fan alone, then the table order of the structure fans
    return max(options, key=lambda o: o[0])


# --------------------------------------------------------------------------------------------------
# Small fans (§8.4)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Set:
    """One of the four sets of a reading, with where it came from (small fans tell a pong from a kept triplet)."""

    kind: str  # "seq" or "trip" (kongs included)
    tile: int
    origin: str  # "hand" (from the reading), "chi", "pong", "open_kong" (K, A), "concealed_kong" (X)


_MELD_ORIGIN = {"C": "chi", "P": "pong", "K": "open_kong", "A": "open_kong", "X": "concealed_kong"}


def _meld_sets(melds: Sequence[Meld]) -> list[_Set]:
    return [_Set("seq" if m.kind == "C" else "trip", m.tile, _MELD_ORIGIN[m.kind]) for m in melds]


def _placements(reading, w: int) -> list[tuple[str, int]]:
    """Where the winning tile can sit in a reading: ``("seq", first)``, ``("trip", t)`` or ``("pair", t)``."""
    out: list[tuple[str, int]] = []
    for kind, t in dict.fromkeys(reading.sets):
        if (kind == "trip" and t == w) or (kind == "seq" and t <= w <= t + 2 and t // 9 == w // 9):
            out.append((kind, t))
    if reading.pair == w:
        out.append(("pair", w))
    return out


def _edge_or_closed(first: int, w: int) -> bool:
    """w completes the sequence starting at ``first`` as its middle tile, as 3 after 1-2, or as 7 before 8-9."""
    pos = w - first
    return pos == 1 or (pos == 2 and first % 9 == 0) or (pos == 0 and first % 9 == 6)


def _small_fans(
    sets: list[_Set],
    pair: int,
    placement: tuple[str, int],
    all_counts: np.ndarray,
    melds: Sequence[Meld],
    w: int,
    sole_wait: bool,
    ctx: YangzhouContext,
) -> list[str]:
    """The small fans (§8.4) of one reading with the winning tile at ``placement``, one entry per occurrence."""
    honors = bool(all_counts[27:].any())
    seqs = [s.tile for s in sets if s.kind == "seq"]
    trips = [s for s in sets if s.kind == "trip"]
    suits = {s for s in range(3) if all_counts[9 * s : 9 * s + 9].any()}
    fans: list[str] = []
    if not any(m.kind in "CPKA" for m in melds):
        fans.append("menqing")
    if not honors and len(seqs) == 4:
        fans.append("pinghu")
    if ctx.how == "self-draw":
        fans.append("zimo")
    if sole_wait and placement[0] == "seq" and _edge_or_closed(placement[1], w):
        fans.append("yazi")
    if not honors and len(suits) == 2:
        fans.append("queyi")
    if pair < 27 and pair % 9 in (0, 8):
        fans.append("yaotou")
    terminals = [t for t in range(27) if t % 9 in (0, 8)]
    if not honors and not all_counts[terminals].any():
        fans.append("duanyao")
    if any(a // 9 != b // 9 and a % 9 == b % 9 for a in seqs for b in seqs):
        fans.append("qixiang")
    if any(a // 9 == b // 9 and b - a == 3 for a in seqs for b in seqs):
        fans.append("lianfu")
    if any(9 * s in seqs and 9 * s + 6 in seqs for s in range(3)):
        fans.append("laoshao")
    hand_trips = [s.tile for s in trips if s.origin == "hand"]
    if placement[0] == "trip" and ctx.how != "self-draw":
        # a triplet completed by another player's tile is not concealed (§8.4 子格)
        hand_trips.remove(placement[1])
    fans.extend("zige" for _ in hand_trips)
    fans.extend("minggang" for s in trips if s.origin == "open_kong")
    fans.extend("angang" for s in trips if s.origin == "concealed_kong")
    trip_tiles = [s.tile for s in trips]
    if ctx.seat_wind in trip_tiles:
        fans.append("menfeng")
    if ctx.round_wind in trip_tiles:
        fans.append("quanfeng")
    fans.extend("jianke" for t in trip_tiles if t in DRAGONS)
    if sole_wait and placement[0] == "pair":
        fans.append("dudiao")
    return fans


# --------------------------------------------------------------------------------------------------
# score_win (§8.7)
# --------------------------------------------------------------------------------------------------


def score_win(concealed, melds, win_tile: int, ctx: YangzhouContext, opts: YangzhouOptions) -> YangzhouScore:
    """Score a possible Yangzhou win: B, small fans, T, the scored reading and legality (§8.4–§8.7, §8.2).

    ``concealed`` is a 34-count vector or a sequence of ids *excluding* the winning tile; ``melds`` are
    :class:`mjenv.tiles.Meld` values (chi only with ``chi: on``).  The scored reading, with the winning tile
    placed where it scores best, is the legal one with the largest T (then the larger B).  A hand without a
    standard reading returns ``legal=False`` with T = 0; an impossible hand raises ``ValueError``.
    """
    counts = hand_counts(concealed)
    r = _score_cached(counts.tobytes(), tuple(melds), int(win_tile), ctx, opts, _tables_key())
    return YangzhouScore(**{**r, "fans": dict(r["fans"])})


def score_reading(concealed, melds, win_tile: int, ctx: YangzhouContext, opts, reading: Reading) -> YangzhouScore:
    """:func:`score_win` valued on ``reading`` alone (its placements of the winning tile all tried), the reading
    :func:`score_win` picks (the engine's compiled core names it, so that a result is built without enumerating
    the others)."""
    counts = hand_counts(concealed)
    r = _score_cached(counts.tobytes(), tuple(melds), int(win_tile), ctx, opts, _tables_key(), reading)
    return YangzhouScore(**{**r, "fans": dict(r["fans"])})


def score_settled(reading: Reading, melds, fans: dict[str, int], total: int, how: str, opts) -> YangzhouScore:
    """The score of a win the engine's kernel settled (:mod:`mjenv.engine.yzend`): ``reading``, its fans (big fans,
    then the small fans each with its count times its value, as :func:`score_win` lists them) and T ``total`` as the
    kernel found them (``yzscore.reading_fans``; the win judged legal already), without valuing or judging the hand
    again."""
    melds = tuple(melds)
    big_value = 0
    small: list[str] = []
    for f, v in fans.items():
        per = SMALL_FANS.get(f)
        if per is None:
            big_value += v
        else:
            small += [f] * (v // per[2])
    baopai, baopai_from = _baopai(_reading_suit_fan(reading, melds), melds, opts) if opts.baopai == "on" else (None, None)
    return YangzhouScore(
        **reading_result(
            reading,
            reading_text=reading_text(reading, " ".join(str(m) for m in melds)),
            reason=None,
            fans=dict(fans),
            value=total,
            big_fan_value=big_value,
            small_fans=tuple(small),
            total=total,
            share=float(total * (1 if how == "self-draw" else 2)) * opts.base,
            baopai=baopai,
            baopai_from=baopai_from,
        )
    )


def _reading_suit_fan(reading: Reading, melds: Sequence[Meld]) -> str | None:
    """:func:`_suit_fan` of the hand that ``reading`` (the concealed tiles with the winning tile) and ``melds`` make."""
    tiles = [t for _, t in reading.sets] + [reading.pair] + [m.tile for m in melds]
    suits = {t // 9 for t in tiles if t < 27}
    if not suits:
        return "fengqing"
    if len(suits) == 1:
        return "hunyise" if any(t >= 27 for t in tiles) else "qingyise"
    return None


def _tables_key() -> tuple:
    """The value tables as they stand now, so that a changed table is never answered from the cache."""
    return tuple(BIG_FANS.items()), tuple(SMALL_FANS.items()), tuple(COMPOSITES.items()), STRUCTURE


@functools.lru_cache(maxsize=1 << 14)
def _score_cached(
    counts_bytes: bytes, melds: tuple[Meld, ...], w: int, ctx: YangzhouContext, opts, tables, reading=None
) -> dict:
    """The work of :func:`score_win`, memoized on its arguments (``tables``: :func:`_tables_key`; ``reading``: only
    that reading, :func:`score_reading`)."""
    counts = np.frombuffer(counts_bytes, dtype=np.int8)
    check_hand(counts, melds, w, chi=opts.chi == "on", variant="Yangzhou with chi: off")
    full = counts.astype(np.int8).copy()
    full[w] += 1
    all_counts = full.astype(np.int64) + meld_counts(melds)
    sole_wait = int(wait_mask(counts, owned=owned_counts(counts, melds)).sum()) == 1
    suit_fan = _suit_fan(all_counts)
    msets = _meld_sets(melds)

    best = None
    for r in readings(full, seven_pairs=False) if reading is None else (reading,):
        sets = [_Set(kind, t, "hand") for kind, t in r.sets] + msets
        b_value, big_parts = big_fan_value([(s.kind, s.tile) for s in sets], suit_fan, opts)
        for placement in _placements(r, w):
            small = _small_fans(sets, r.pair, placement, all_counts, melds, w, sole_wait, ctx)
            total = b_value + sum(SMALL_FANS[f][2] for f in small)
            key = (b_value > 0 and total >= opts.min_fan, total, b_value)
            if best is None or key > best[0]:
                best = (key, r, b_value, big_parts, small, total)

    if best is None:
        return no_reading_result(big_fan_value=0, small_fans=(), total=0, share=0.0, baopai=None, baopai_from=None)
    _, reading, b_value, big_parts, small, total = best
    fans = dict(big_parts)
    for f in SMALL_FANS:
        n = small.count(f)
        if n:
            fans[f] = n * SMALL_FANS[f][2]
    reason = _refusal(ctx, opts, w, b_value, total)
    baopai, baopai_from = _baopai(suit_fan, melds, opts)
    return reading_result(
        reading,
        reading_text=reading_text(reading, " ".join(str(m) for m in melds)),
        reason=reason,
        fans=tuple(fans.items()),
        value=total,
        big_fan_value=b_value,
        small_fans=tuple(small),
        total=total,
        share=float(total * (1 if ctx.how == "self-draw" else 2)) * opts.base,
        baopai=baopai,
        baopai_from=baopai_from,
    )


def _refusal(ctx: YangzhouContext, opts, w: int, b_value: int, total: int) -> str | None:
    """Why a win with a reading is refused (§8.7, §8.2); ``None`` when it is legal."""
    if b_value == 0:
        return "no big fan (大番): a win needs at least one"
    if total < opts.min_fan:
        return f"total {total} < min_fan {opts.min_fan}"
    if ctx.lock.forbids(ctx.how, w, opts):
        return "missed-win lock (漏胡): no discard or rob win until the next own draw"
    return None


def _baopai(suit_fan: str | None, melds: Sequence[Meld], opts) -> tuple[str | None, int | None]:
    """The liability a win creates (§8.9): 清一色 with three chi melds, or 风清 completed by a fourth pong."""
    if opts.baopai != "on":
        return None, None
    if suit_fan == "qingyise" and sum(m.kind == "C" for m in melds) >= 3:
        return "qingyise", None
    if suit_fan == "fengqing":
        fed, source = fengqing_liability(melds)
        if fed:
            return "fengqing", source
    return None, None


def score_hand(hand: Hand, ctx: YangzhouContext | None, opts: YangzhouOptions) -> YangzhouScore:
    """:func:`score_win` of a parsed notation hand; without ``ctx`` the win is a plain ``hand.win_how`` by the East
    seat in the East round."""
    ctx = notation_context(hand, ctx, YangzhouContext)
    return score_win(hand.concealed_counts(), hand.melds, hand.win_tile, ctx, opts)


# --------------------------------------------------------------------------------------------------
# Settlement (§8.8, §8.9)
# --------------------------------------------------------------------------------------------------


def liable_seat(winner: int, score: YangzhouScore) -> int | None:
    """The seat that pays everything for this win under 包牌 (§8.9), or ``None``: the winner's previous player
    (上家) for 清一色 fed by three chis, the source of the fourth pong for 风清."""
    if score.baopai is None:
        return None
    if score.baopai == "qingyise":
        return (int(winner) - 1) % N_PLAYERS
    if score.baopai_from is None:
        raise ValueError(f"seat {winner}'s 风清 makes the feeder of its fourth pong liable, but that meld has no source")
    if score.baopai_from == winner:
        raise ValueError(f"seat {winner} cannot be liable for its own win")
    return int(score.baopai_from)


def win_transfers(
    winners: Sequence[tuple[int, YangzhouScore]], how: str, discarder: int | None, opts: YangzhouOptions
) -> list[Transfer]:
    """The payments of the win(s) of one event (§8.8, §8.9).

    Self-draw: each other player pays T·b.  Discard or rob: the discarder (konger) pays 2·T·b to each winner.
    包牌: the liable player pays everything instead (3·T·b on a self-draw, 2·T·b on a discard).  No cap, no kong
    money.
    """
    if how not in HOWS:
        raise ValueError(f"how {how!r} is not one of {', '.join(HOWS)}")
    if not winners:
        raise ValueError("a win needs at least one winner")
    seats = [int(w) for w, _ in winners]
    if len(set(seats)) != len(seats) or not all(0 <= w < N_PLAYERS for w in seats):
        raise ValueError(f"bad winners {seats}")
    if how == "self-draw" and len(winners) != 1:
        raise ValueError("a self-draw has exactly one winner")
    if how != "self-draw" and (discarder is None or not 0 <= discarder < N_PLAYERS or discarder in seats):
        raise ValueError(f"a {how} win needs the discarder's seat (not a winner's), got {discarder!r}")
    if opts.multi_win == "off" and len(winners) > 1:
        raise ValueError("multi_win is off: one discard has one winner (see diedaohu.winners_in_order)")
    b = opts.base
    out: list[Transfer] = []
    for w, score in winners:
        if not score.legal:
            raise ValueError(f"seat {w}'s win is not legal ({score.reason}); it cannot be settled")
        liable = liable_seat(w, score)
        t = float(score.total) * b
        if how == "self-draw":
            if liable is not None:
                out.append(Transfer(liable, w, (N_PLAYERS - 1) * t, "baopai"))
            else:
                out.extend(Transfer(p, w, t, "selfdraw") for p in range(N_PLAYERS) if p != w)
        else:
            payer = discarder if liable is None else liable
            out.append(Transfer(payer, w, 2 * t, how if liable is None else "baopai"))
    return out


def settle_win(
    winners: Sequence[tuple[int, YangzhouScore]], how: str, discarder: int | None, opts: YangzhouOptions
) -> Settlement:
    """The :class:`~mjenv.rules.scoring.common.Settlement` of :func:`win_transfers` (Yangzhou is 紧淌: no limits)."""
    return make_settlement(N_PLAYERS, win_transfers(winners, how, discarder, opts))
