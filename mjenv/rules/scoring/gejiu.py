"""Gejiu (个旧) shapes, scoring, settlement and dealer rotation: docs/rules/gejiu.md §6.4–§6.8, §6.10.

This module owns, for Gejiu and every option of §6.9 that touches shapes, value, money or the deal:

* the special shapes 烂牌 and 七星 (§6.6), batched for the engine — :func:`lanpai_mask`,
  :func:`qixing_mask`, :func:`lanpai_wait_mask` — and the complete Gejiu shape test and wait set
  (standard ∪ seven pairs ∪ 烂牌) — :func:`complete_mask`, :func:`wait_mask`;
* the patterns of a winning hand (§6.7) with their exclusive groups, their combination under
  ``gejiu_combine`` (§6.8) and the choice of the best reading (§1.6) — :func:`score_win`, :func:`score_hand`;
* the payments of a win, several winners included (§6.8) — :func:`settle_win`; a drawn hand pays nothing —
  :func:`settle_draw`; Gejiu has no kong money (§6.4), so there is no kong settlement here;
* the next dealer (§6.5, ``gejiu_multiwin_dealer``) — :func:`next_dealer`, with :func:`nearest_claimant`.

Pattern ids (the ``fans`` keys of :class:`~mjenv.rules.scoring.common.WinScore`) come from the English names of
the §6.7 table; ids, names and values are :data:`PATTERNS` (rendered in the generated tables of
docs/rules/gejiu.md).

The values live in :data:`PATTERNS` only: this scorer and its compiled twin :mod:`mjenv.engine.gjscore` (the value
V the engine's kernels settle Gejiu wins with) both read them. ``pinghu`` is listed only when no other pattern
applies (it is the base every other value is relative to, §6.8). Everything here is a pure function of tiles,
melds, a :class:`GejiuContext` and a ``GejiuOptions`` value; the engine tracks the face-up kong tiles and who
robbed what. ``WinScore``, ``Transfer`` and ``Settlement`` are the Kawuxing types, shared. Readings of unclear
rules are in ``docs/rules-notes.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mjenv.rules import hand as _hand
from mjenv.rules.hand import Reading, readings
from mjenv.rules.options import GejiuOptions
from mjenv.rules.scoring.common import HOWS, check_hand, hand_counts, meld_counts, notation_context
from mjenv.rules.scoring.common import Settlement, Transfer, WinScore, make_settlement
from mjenv.tiles import N_KINDS, Hand, Meld, format_tiles

__all__ = [
    "N_PLAYERS",
    "PATTERNS",
    "PATTERN_ORDER",
    "EXCLUSIVE_GROUPS",
    "REPLACES",
    "GejiuContext",
    "lanpai_mask",
    "qixing_mask",
    "lanpai_wait_mask",
    "complete_mask",
    "wait_mask",
    "score_win",
    "score_reading",
    "special_reading",
    "score_hand",
    "share",
    "settle_win",
    "settle_draw",
    "nearest_claimant",
    "next_dealer",
]

N_PLAYERS = 4

# Pattern id -> (Chinese name, English name, value), in the order of the §6.7 table.
PATTERNS: dict[str, tuple[str, str, int]] = {
    "pinghu": ("平胡", "plain", 2),
    "hunyise": ("混一色", "half flush", 4),
    "daduizi": ("大对子", "all triplets", 4),
    "yitiaolong": ("一条龙", "straight", 4),
    "yibangao": ("一般高", "twin sequences", 4),
    "lanpai": ("烂牌", "rotten hand", 4),
    "qingyise": ("清一色", "full flush", 8),
    "xiaoqidui": ("小七对", "seven pairs", 8),
    "longqidui": ("龙七对", "dragon seven pairs", 16),
    "shuanglong": ("双龙七对", "double dragon seven pairs", 32),
    "ziyise": ("字一色", "all honors", 32),
    "qixing": ("七星", "seven stars", 32),
    "gangshanghua": ("杠上花", "kong bloom", 8),
    "qianggang": ("抢杠", "robbing", 8),
}
PATTERN_ORDER: tuple[str, ...] = tuple(PATTERNS)

EXCLUSIVE_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"pinghu", "xiaoqidui", "longqidui", "shuanglong", "lanpai", "qixing"}),
    frozenset({"hunyise", "qingyise", "ziyise"}),
)
"""§6.7: at most one pattern of each group applies to a win (the shape group: exactly one, 平胡 shown only alone)."""

REPLACES: dict[str, frozenset[str]] = {
    "qixing": frozenset({"lanpai"}),
    "ziyise": frozenset({"daduizi"}),
}
"""§6.7: a pattern that applies drops the patterns it replaces (七星 > 烂牌; 字一色 > 大对子, CD)."""

_ROBS = ("add_kong", "replacement_tile")
_HONORS = slice(27, 34)


# --------------------------------------------------------------------------------------------------
# Context
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GejiuContext:
    """The situation of a Gejiu win that the tiles alone do not show."""

    how: str
    """``"discard"``, ``"self-draw"`` or ``"rob"`` (抢杠: the konger is the discarder)."""
    after_kong: bool = False
    """Self-draw only: the winning tile is the face-up kong tile the winner chose after its own kong (杠上花)."""
    rob: str | None = None
    """For ``how="rob"``: what was robbed — ``"add_kong"`` (the added tile of an added kong) or
    ``"replacement_tile"`` (the face-up kong tile the konger chose).  ``None`` = the kind the options allow
    (``gejiu_qianggang``).  A rob of the other kind is not a legal win (§6.4)."""

    def __post_init__(self) -> None:
        if self.how not in HOWS:
            raise ValueError(f"GejiuContext.how {self.how!r} is not one of {', '.join(HOWS)}")
        if self.after_kong and self.how != "self-draw":
            # Gejiu has no 杠上炮 (§6.8), and a robber did not make the kong
            raise ValueError("GejiuContext.after_kong applies only to a self-draw (杠上花)")
        if self.rob is not None:
            if self.how != "rob":
                raise ValueError(f"GejiuContext.rob is set ({self.rob!r}) but how is {self.how!r}, not 'rob'")
            if self.rob not in _ROBS:
                raise ValueError(f"GejiuContext.rob {self.rob!r} is not one of {', '.join(_ROBS)}")


# --------------------------------------------------------------------------------------------------
# 烂牌 / 七星 shapes and the Gejiu wait set (§6.6), batched
# --------------------------------------------------------------------------------------------------


def _batch(counts, name: str) -> tuple[np.ndarray, bool]:
    arr = np.asarray(counts)
    single = arr.ndim == 1
    if single:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != N_KINDS:
        raise ValueError(f"{name}: expected shape [34] or [N, 34] (tile counts), got {list(np.shape(counts))}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{name}: expected an integer array of tile counts, got dtype {arr.dtype}")
    return arr, single


def _spaced(c: np.ndarray) -> np.ndarray:
    """bool ``[N]``: no count above 1, and no two held suited tiles of one suit less than 3 ranks apart."""
    held = c > 0
    suits = held[:, :27].reshape(-1, 3, 9)
    gap1 = (suits[:, :, :-1] & suits[:, :, 1:]).any(axis=(1, 2))
    gap2 = (suits[:, :, :-2] & suits[:, :, 2:]).any(axis=(1, 2))
    return (c <= 1).all(axis=1) & ~gap1 & ~gap2


def lanpai_mask(counts) -> np.ndarray:
    """bool ``[N]`` (or a bool for one ``[34]`` hand): the 14 concealed tiles form 烂牌 (§6.6).

    烂牌: 14 tiles of 14 different kinds, any two suited tiles of one suit at least 3 ranks apart.
    七星 hands are 烂牌 too (see :func:`qixing_mask`).
    """
    c, single = _batch(counts, "counts")
    ok = _spaced(c) & (c.sum(axis=1) == 14)
    return bool(ok[0]) if single else ok


def qixing_mask(counts) -> np.ndarray:
    """bool ``[N]`` (or a bool): the hand is 烂牌 holding all seven honors (七星, §6.7)."""
    c, single = _batch(counts, "counts")
    ok = _spaced(c) & (c.sum(axis=1) == 14) & (c[:, _HONORS] == 1).all(axis=1)
    return bool(ok[0]) if single else ok


# For each tile t, the tiles that may not be held beside it in 烂牌: t itself and, for a suited t,
# the tiles of its suit within 2 ranks.
_LANPAI_BLOCK = np.zeros((N_KINDS, N_KINDS), dtype=bool)
for _t in range(N_KINDS):
    _LANPAI_BLOCK[_t, _t] = True
    if _t < 27:
        for _d in (-2, -1, 1, 2):
            if 0 <= _t % 9 + _d <= 8:
                _LANPAI_BLOCK[_t, _t + _d] = True
del _t, _d


def lanpai_wait_mask(concealed) -> np.ndarray:
    """bool ``[N, 34]`` (or ``[34]``): the tiles t for which 13 concealed tiles + t form 烂牌.

    Only a 13-tile hand (no melds) can wait on 烂牌; any other size gives an empty row.  The own-copy
    condition of §1.5 holds by itself (a 烂牌 wait is a kind the hand does not hold).
    """
    c, single = _batch(concealed, "concealed")
    base = _spaced(c) & (c.sum(axis=1) == 13)
    held = (c > 0).astype(np.int32)
    blocked = (held @ _LANPAI_BLOCK.astype(np.int32)) > 0
    out = ~blocked & base[:, None]
    return out[0] if single else out


def complete_mask(counts) -> np.ndarray:
    """bool ``[N]`` (or a bool): the concealed tiles (incl. the winning tile) form a Gejiu winning shape.

    Standard shape for any number of melds; seven pairs and 烂牌 need 14 concealed tiles, which is the same
    as having no melds, so one batch may mix hands with and without melds.
    """
    c, single = _batch(counts, "counts")
    ok = np.asarray(_hand.is_complete(c, seven_pairs=True)) | lanpai_mask(c)
    return bool(ok[0]) if single else ok


def wait_mask(concealed, owned=None) -> np.ndarray:
    """The Gejiu wait set W(H) of §1.5 as bool ``[N, 34]`` (or ``[34]``): standard ∪ seven pairs ∪ 烂牌.

    ``concealed`` holds 13 − 3m tiles; ``owned`` (concealed + melded, ``[N, 34]`` or ``[34]``) limits waits to
    kinds the player holds fewer than 4 of (default: the concealed counts).  Seven pairs and 烂牌 count only
    for 13-tile hands (no melds).
    """
    c, single = _batch(concealed, "concealed")
    own = None if owned is None else np.asarray(owned).reshape(c.shape)
    out = _hand.wait_mask(c, seven_pairs=True, owned=own) | lanpai_wait_mask(c)
    return out[0] if single else out


# --------------------------------------------------------------------------------------------------
# Patterns of one reading (§6.7) and their combination (§6.8)
# --------------------------------------------------------------------------------------------------


def _lanpai_reading(full: np.ndarray) -> Reading | None:
    """The 烂牌 reading of 14 concealed tiles (kind ``"lanpai"``, the 14 kinds in ``pairs``), if it has one."""
    if not lanpai_mask(full):
        return None
    return Reading("lanpai", (), None, tuple(int(t) for t in np.flatnonzero(full)))


def _meld_sets(melds: tuple[Meld, ...]) -> list[tuple[str, int]]:
    """Declared melds as reading sets: a chi is a sequence, a pong or any kong a triplet."""
    return [("seq" if m.kind == "C" else "trip", m.tile) for m in melds]


def _shape_patterns(r: Reading, full: np.ndarray, melds: tuple[Meld, ...]) -> list[str]:
    """The patterns that depend on the reading: the shape pattern and the structure patterns."""
    if r.kind == "lanpai":
        return ["qixing" if bool(qixing_mask(full)) else "lanpai"]
    if r.kind == "seven_pairs":
        fours = int((full == 4).sum())
        return ["shuanglong" if fours >= 2 else "longqidui" if fours == 1 else "xiaoqidui"]
    sets = list(r.sets) + _meld_sets(melds)
    seqs = [t for kind, t in sets if kind == "seq"]
    out = []
    if not seqs:
        out.append("daduizi")
    if any(all(s * 9 + k in seqs for k in (0, 3, 6)) for s in range(3)):
        out.append("yitiaolong")
    if len(set(seqs)) < len(seqs):
        out.append("yibangao")
    return out


def _suit_pattern(all_tiles: np.ndarray) -> str | None:
    """混一色, 清一色 or 字一色 of the whole hand (melds included), else ``None``."""
    suits = {int(t) // 9 for t in np.flatnonzero(all_tiles)}
    if suits == {3}:
        return "ziyise"
    if len(suits) == 1:
        return "qingyise"
    if len(suits) == 2 and 3 in suits:
        return "hunyise"
    return None


def _situational(ctx: GejiuContext) -> list[str]:
    """Patterns that apply to every reading alike (§1.6): 杠上花, 抢杠."""
    if ctx.after_kong:
        return ["gangshanghua"]
    if ctx.how == "rob":
        return ["qianggang"]
    return []


def _combine(patterns: list[str], opts: GejiuOptions) -> tuple[dict[str, int], int]:
    """Pattern dict (in §6.7 order) and hand value V under ``gejiu_combine`` (§6.8)."""
    found = set(patterns)
    for p in list(found):
        found -= REPLACES.get(p, frozenset())
    if not found:
        found = {"pinghu"}  # a standard reading with nothing else is 平胡
    fans = {p: PATTERNS[p][2] for p in PATTERN_ORDER if p in found}
    if opts.gejiu_combine == "multiply":
        # each listed value is the value of a hand with that pattern alone, i.e. base × (v / base) with the
        # base 平胡; values are powers of two, so the product stays an integer
        base = PATTERNS["pinghu"][2]
        value = base
        for p, v in fans.items():
            if p != "pinghu":
                value = value * v // base
    elif opts.gejiu_combine == "add":
        value = sum(fans.values())
    else:
        value = max(fans.values())
    return fans, value


# --------------------------------------------------------------------------------------------------
# score_win
# --------------------------------------------------------------------------------------------------


def _reading_text(r: Reading, melds_text: str) -> str:
    if r.kind == "lanpai":
        text = "lanpai " + format_tiles(r.pairs)
        return text + " + " + melds_text if melds_text else text
    return _hand.reading_text(r, melds_text)


def score_win(concealed, melds, win_tile: int, ctx: GejiuContext, opts: GejiuOptions) -> WinScore:
    """Score a possible Gejiu win: best reading (§1.6), patterns (§6.7), value V (§6.8), legality.

    ``concealed`` is a 34-count vector or a sequence of ids, *excluding* the winning tile; ``melds`` are
    :class:`mjenv.tiles.Meld` values (chi allowed).  Gejiu has no cap and no minimum: a hand with a winning
    reading is legal, except a rob of the kind ``gejiu_qianggang`` does not allow.  ``cap`` is ``None`` and
    ``value_d`` equals ``value``.  A hand that cannot exist raises ``ValueError``.
    """
    if not isinstance(opts, GejiuOptions):
        raise TypeError(f"Gejiu scoring takes GejiuOptions, got {type(opts).__name__}")
    if not isinstance(ctx, GejiuContext):
        raise TypeError(f"Gejiu scoring takes a GejiuContext, got {type(ctx).__name__}")
    counts = hand_counts(concealed)
    w = int(win_tile)
    if not 0 <= w < N_KINDS:
        raise ValueError(f"winning tile id {w} out of range 0..33")
    tables = (tuple(PATTERNS.items()), tuple(REPLACES.items()))
    legal, reason, reading, text, fans, value = _score_cached(counts.tobytes(), tuple(melds), w, ctx, opts, tables)
    return WinScore(legal, reason, reading, text, dict(fans), value, None, value)


@functools.lru_cache(maxsize=1 << 14)
def _score_cached(counts_bytes: bytes, melds: tuple[Meld, ...], w: int, ctx: GejiuContext, opts: GejiuOptions, tables):
    """The work of :func:`score_win`, memoized on its (hashable) arguments, the tables :data:`PATTERNS` and
    :data:`REPLACES` as they stand included (a changed table is never answered from the cache); returns a plain
    tuple."""
    counts = np.frombuffer(counts_bytes, dtype=np.int8)
    all_tiles = check_hand(counts, melds, w)  # Gejiu allows chi
    if ctx.after_kong and not any(m.is_kong for m in melds):
        raise ValueError("after_kong (杠上花) needs the kong the winner just made among its melds")
    full = counts.copy()
    full[w] += 1

    candidates = readings(full, seven_pairs=not melds)
    if not melds:
        lan = _lanpai_reading(full)
        if lan is not None:
            candidates.append(lan)
    if not candidates:
        return (False, "no winning reading", None, "", (), 0)
    return _best(full, melds, all_tiles, ctx, opts, candidates)


def score_reading(concealed, melds, win_tile: int, ctx: GejiuContext, opts: GejiuOptions, reading: Reading) -> WinScore:
    """:func:`score_win` of a hand (``concealed``: its 34 counts without the winning tile) whose best reading is
    known to be ``reading`` (the engine's compiled scorer found it, :func:`mjenv.engine.gjscore.best_reading`, for a
    hand the engine made): that reading alone is valued, and the hand is not checked again."""
    full = np.array(concealed, dtype=np.int8)
    full[int(win_tile)] += 1
    all_tiles = full.astype(np.int64) + meld_counts(melds)
    legal, reason, reading, text, fans, value = _best(full, tuple(melds), all_tiles, ctx, opts, [reading])
    return WinScore(legal, reason, reading, text, dict(fans), value, None, value)


def special_reading(full) -> Reading | None:
    """The 烂牌 reading of 14 concealed tiles (:func:`_lanpai_reading`), for the engine's reading codes."""
    return _lanpai_reading(np.asarray(full))


def _best(full: np.ndarray, melds: tuple[Meld, ...], all_tiles: np.ndarray, ctx: GejiuContext, opts: GejiuOptions,
          candidates) -> tuple:
    """The :func:`score_win` tuple of the complete hand ``full`` over the readings ``candidates``: the best one
    (§1.6), its patterns and value, and whether the rob is allowed."""
    common = _situational(ctx)
    suit = _suit_pattern(all_tiles)
    if suit is not None:
        common.append(suit)
    best = None
    for r in candidates:
        fans, value = _combine(_shape_patterns(r, full, melds) + common, opts)
        if best is None or value > best[0]:
            best = (value, r, fans)
    value, reading, fans = best
    text = _reading_text(reading, " ".join(str(m) for m in melds))
    reason = None
    if ctx.how == "rob" and ctx.rob is not None and ctx.rob != opts.gejiu_qianggang:
        reason = f"gejiu_qianggang {opts.gejiu_qianggang}: a rob of the {ctx.rob.replace('_', ' ')} is not a win"
    return (reason is None, reason, reading, text, tuple(fans.items()), value)


def score_hand(hand: Hand, ctx: GejiuContext | None, opts: GejiuOptions) -> WinScore:
    """:func:`score_win` of a parsed notation hand; without ``ctx`` the win is taken as plain ``hand.win_how``."""
    ctx = notation_context(hand, ctx, GejiuContext)
    return score_win(hand.concealed_counts(), hand.melds, hand.win_tile, ctx, opts)


# --------------------------------------------------------------------------------------------------
# Settlement (§6.8) and dealer rotation (§6.5)
# --------------------------------------------------------------------------------------------------


def share(score: WinScore, opts: GejiuOptions) -> float:
    """What one payer pays one winner: V · b (no cap, no payer factors)."""
    return float(score.value) * opts.base


def _check_seat(seat, what: str) -> int:
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < N_PLAYERS:
        raise ValueError(f"{what} must be a seat 0..{N_PLAYERS - 1}, got {seat!r}")
    return int(seat)


def settle_win(
    winners: Sequence[tuple[int, WinScore]], how: str, discarder: int | None, opts: GejiuOptions
) -> Settlement:
    """Payments of the win(s) of one event (§6.8).

    Self-draw: each of the three others pays V·b.  Discard: the discarder pays each winner V·b; rob: the konger
    (``discarder``) pays each robber V·b; nobody else pays.  Several winners on one discard or rob need
    ``multi_win: on`` (with ``off`` the engine keeps only :func:`nearest_claimant`).
    """
    if how not in HOWS:
        raise ValueError(f"how {how!r} is not one of {', '.join(HOWS)}")
    if not winners:
        raise ValueError("settle_win needs at least one winner (a drawn hand is settle_draw)")
    seats = [_check_seat(w, "a winner") for w, _ in winners]
    if len(set(seats)) != len(seats):
        raise ValueError(f"a seat wins twice in {seats}")
    if how == "self-draw":
        if len(winners) != 1:
            raise ValueError("a self-draw has exactly one winner")
        if discarder is not None:
            raise ValueError("a self-draw has no discarder")
    else:
        discarder = _check_seat(discarder, f"the discarder of a {how} win")
        if discarder in seats:
            raise ValueError(f"seat {discarder} cannot win on its own {how}")
        if len(winners) > 1 and opts.multi_win == "off":
            raise ValueError("multi_win off: only the nearest claimant wins (see nearest_claimant)")
    transfers: list[Transfer] = []
    for w, score in winners:
        if not score.legal:
            raise ValueError(f"seat {w}'s win is not legal ({score.reason}); it cannot be settled")
        amount = share(score, opts)
        if how == "self-draw":
            transfers += [Transfer(p, int(w), amount, "selfdraw") for p in range(N_PLAYERS) if p != w]
        else:
            transfers.append(Transfer(discarder, int(w), amount, how))
    return make_settlement(N_PLAYERS, transfers)


def settle_draw(opts: GejiuOptions) -> Settlement:
    """An exhaustive draw (流局) pays nothing in Gejiu: no ready-hand settlement and no kong money (§6.3–§6.8)."""
    if not isinstance(opts, GejiuOptions):
        raise TypeError(f"Gejiu settlement takes GejiuOptions, got {type(opts).__name__}")
    return make_settlement(N_PLAYERS, [])


def nearest_claimant(discarder: int, claimants: Sequence[int]) -> int:
    """The claimant met first going in turn order from the discarder's next player (§1.8)."""
    discarder = _check_seat(discarder, "the discarder")
    seats = {_check_seat(c, "a claimant") for c in claimants}
    if not seats:
        raise ValueError("nearest_claimant needs at least one claimant")
    if discarder in seats:
        raise ValueError(f"seat {discarder} cannot claim its own discard")
    return min(seats, key=lambda s: (s - discarder) % N_PLAYERS)


def next_dealer(dealer: int, winners: Sequence[int], discarder: int | None, opts: GejiuOptions) -> int:
    """The dealer of the next hand (§6.5).

    No winner (流局) → the dealer's next player.  One winner → the dealer stays if it won, else its next
    player deals.  Several winners on one discard or rob (``discarder`` = the discarder / konger) →
    ``gejiu_multiwin_dealer``: ``next_of_nearest_winner`` (the next player of the winner nearest to the
    discarder), ``nearest_winner`` (that winner), ``standard`` (as for one winner: stay if among them).
    """
    dealer = _check_seat(dealer, "the dealer")
    seats = [_check_seat(w, "a winner") for w in winners]
    if len(set(seats)) != len(seats):
        raise ValueError(f"a seat wins twice in {seats}")
    if len(seats) <= 1 or opts.gejiu_multiwin_dealer == "standard":
        return dealer if dealer in seats else (dealer + 1) % N_PLAYERS
    if discarder is None:
        raise ValueError("several winners need the discarder's seat (only a discard or a rob has several winners)")
    nearest = nearest_claimant(discarder, seats)
    if opts.gejiu_multiwin_dealer == "nearest_winner":
        return nearest
    return (nearest + 1) % N_PLAYERS
