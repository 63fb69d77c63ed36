"""Tiles: integer ids 0..33, 34-count vectors, and the hand notation of docs/rules/common.md §1.2.

Ids: ``0..8`` = 1m..9m, ``9..17`` = 1p..9p, ``18..26`` = 1s..9s, ``27..33`` = 1z..7z
(1z-4z East South West North, 5z White, 6z Green, 7z Red).  Inside the engine tiles are
always ids or count vectors; strings exist only at the edges (parsing user input,
rendering, tests).

Hand notation (docs/rules/common.md §1.2), whitespace-separated tokens in any order::

    24p678s789s55z [P 333p<B] [K 5555s<C] [A 7777p] [X 6666z] [C 345m<A] +3p discard(B)

* concealed groups: digits then a suit letter, any order, several tokens allowed;
* melds in brackets: ``P`` pong, ``C`` chi, ``K`` direct kong, ``A`` added kong,
  ``X`` concealed kong, optional ``<S`` source seat (A-D or 0-3);
* the winning tile: ``+3p discard``, ``+3p discard(B)``, ``+9p self-draw``, ``+5p rob(A)``.

Malformed input raises :class:`NotationError`, whose message names what is wrong and
where (the offending token and its character offset).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import numpy as np

N_KINDS = 34
SUIT_LETTERS = "mpsz"
DRAGONS = (31, 32, 33)  # 5z White, 6z Green, 7z Red
WINDS = (27, 28, 29, 30)
SEAT_LETTERS = "ABCD"

_UNICODE = (
    [chr(0x1F007 + i) for i in range(9)]  # characters
    + [chr(0x1F019 + i) for i in range(9)]  # dots
    + [chr(0x1F010 + i) for i in range(9)]  # bamboo
    + [chr(0x1F000 + i) for i in range(4)]  # winds E S W N
    + ["\U0001F006", "\U0001F005", "\U0001F004"]  # white, green, red dragon
)


class NotationError(ValueError):
    """A tile or hand string that cannot be read; the message says what and where."""


def tile_id(name: str) -> int:
    """Id of a single tile written like ``"5p"`` or ``"7z"``."""
    m = re.fullmatch(r"\s*([1-9])([mpsz])\s*", name)
    if not m:
        raise NotationError(f"not a tile: {name!r} (expected a digit and one of m p s z, e.g. '5p')")
    rank, suit = int(m.group(1)), m.group(2)
    if suit == "z" and rank > 7:
        raise NotationError(f"not a tile: {name!r} (honors are 1z..7z)")
    return SUIT_LETTERS.index(suit) * 9 + rank - 1


def tile_name(tid: int) -> str:
    """Notation of one tile id, e.g. ``13 -> "5p"``."""
    tid = int(tid)
    if not 0 <= tid < N_KINDS:
        raise ValueError(f"tile id {tid} out of range 0..33")
    return f"{tid % 9 + 1}{SUIT_LETTERS[tid // 9]}"


def tile_unicode(tid: int) -> str:
    """The Unicode mahjong glyph of a tile id."""
    return _UNICODE[int(tid)]


def kinds_mask(suits: str = "mps", honors: str = "1234567") -> np.ndarray:
    """Boolean ``[34]`` mask of the tile kinds a variant uses (e.g. Kawuxing-3p: ``suits="ps", honors="567"``)."""
    mask = np.zeros(N_KINDS, dtype=bool)
    for s in suits:
        base = SUIT_LETTERS.index(s) * 9
        mask[base : base + 9] = True
    for h in honors:
        mask[27 + int(h) - 1] = True
    return mask


def counts_from_ids(ids) -> np.ndarray:
    """34-count vector (int8) of a sequence of tile ids."""
    return np.bincount(np.asarray(ids, dtype=np.int64), minlength=N_KINDS).astype(np.int8)


def ids_from_counts(counts) -> list[int]:
    """Sorted list of tile ids of a 34-count vector."""
    counts = np.asarray(counts)
    return [t for t in range(N_KINDS) for _ in range(int(counts[t]))]


def format_counts(counts) -> str:
    """Canonical compact notation (m, p, s, z ascending) of a 34-count vector."""
    counts = np.asarray(counts)
    out = []
    for s, letter in enumerate(SUIT_LETTERS):
        digits = "".join(str(t % 9 + 1) * int(counts[t]) for t in range(s * 9, min(s * 9 + 9, N_KINDS)))
        if digits:
            out.append(digits + letter)
    return "".join(out)


def format_tiles(ids) -> str:
    """Canonical compact notation of a sequence of tile ids."""
    return format_counts(counts_from_ids(list(ids)))


def parse_tiles(text: str, offset: int = 0) -> list[int]:
    """Ids of a compact group string like ``"44556m789p55z"`` (any order of groups)."""
    ids: list[int] = []
    pending: list[tuple[int, int]] = []  # (rank, char position)
    for i, ch in enumerate(text):
        pos = offset + i
        if ch.isdigit():
            if ch == "0":
                raise NotationError(f"at {pos}: '0' is not a tile rank (ranks are 1..9)")
            pending.append((int(ch), pos))
        elif ch in SUIT_LETTERS:
            if not pending:
                raise NotationError(f"at {pos}: suit letter '{ch}' has no digits before it")
            for rank, rpos in pending:
                if ch == "z" and rank > 7:
                    raise NotationError(f"at {rpos}: '{rank}z' is not a tile (honors are 1z..7z)")
                ids.append(SUIT_LETTERS.index(ch) * 9 + rank - 1)
            pending = []
        else:
            raise NotationError(f"at {pos}: unexpected character {ch!r} in {text!r} (suit letters are m p s z)")
    if pending:
        raise NotationError(f"at {pending[-1][1]}: digits without a suit letter at the end of {text!r}")
    return ids


MELD_KINDS = {
    "P": "pong",
    "C": "chi",
    "K": "direct kong",
    "A": "added kong",
    "X": "concealed kong",
}


@dataclass(frozen=True)
class Meld:
    """A declared meld: ``kind`` is one of P C K A X (docs/rules/common.md §1.2), ``tiles`` its ids, ``source``
    the seat claimed from."""

    kind: str
    tiles: tuple[int, ...]
    source: int | None = None

    @property
    def tile(self) -> int:
        """The lowest tile of the meld (the only tile kind for pongs and kongs)."""
        return min(self.tiles)

    @property
    def is_kong(self) -> bool:
        """True for K, A and X melds."""
        return self.kind in "KAX"

    @property
    def is_concealed(self) -> bool:
        """True only for a concealed kong."""
        return self.kind == "X"

    def __str__(self) -> str:
        return _meld_text(self.kind, self.tiles, self.source)


@functools.lru_cache(maxsize=4096)
def _meld_text(kind: str, tiles: tuple[int, ...], source: int | None) -> str:
    """``str`` of a meld, kept once made (a result names the winner's melds, and the same few melds recur)."""
    src = f"<{SEAT_LETTERS[source]}" if source is not None else ""
    return f"[{kind} {format_tiles(list(tiles))}{src}]"


@dataclass(frozen=True)
class Hand:
    """A hand in notation form: concealed tile ids (sorted), declared melds, and optionally the winning tile.

    ``concealed`` excludes the winning tile; ``win_how`` is one of ``discard``, ``self-draw``, ``rob``.
    """

    concealed: tuple[int, ...]
    melds: tuple[Meld, ...] = ()
    win_tile: int | None = None
    win_how: str | None = None
    win_from: int | None = None
    _counts: np.ndarray = field(default=None, repr=False, compare=False)

    def concealed_counts(self, with_win: bool = False) -> np.ndarray:
        """34-count vector of the concealed tiles (plus the winning tile when ``with_win``)."""
        ids = list(self.concealed)
        if with_win and self.win_tile is not None:
            ids.append(self.win_tile)
        return counts_from_ids(ids)

    def all_counts(self, with_win: bool = True) -> np.ndarray:
        """34-count vector of every tile the player owns: concealed, melds (kongs as 4), winning tile."""
        ids = list(self.concealed) + [t for m in self.melds for t in m.tiles]
        if with_win and self.win_tile is not None:
            ids.append(self.win_tile)
        return counts_from_ids(ids)

    @property
    def is_self_draw(self) -> bool:
        """True when the winning tile was self-drawn."""
        return self.win_how == "self-draw"

    def __str__(self) -> str:
        return format_hand(self)


_MELD_RE = re.compile(r"\[\s*([PCKAX])\s+([0-9mpsz]+)\s*(?:<\s*([A-Da-d0-3])\s*)?\]")
_WIN_RE = re.compile(r"\+\s*([0-9][mpsz])\s*(?:(discard|self-draw|selfdraw|tsumo|rob)\s*(?:\(\s*([A-Da-d0-3])\s*\))?)?")


def _seat(tok: str) -> int:
    return int(tok) if tok.isdigit() else SEAT_LETTERS.index(tok.upper())


def parse_hand(text: str, kinds: np.ndarray | None = None) -> Hand:
    """Read a hand in docs/rules/common.md §1.2 notation.

    ``kinds`` is the variant's boolean ``[34]`` tile-kind mask (see :func:`kinds_mask`); a tile
    outside it is an error.  Raises :class:`NotationError` naming the problem and its position.
    """
    if not isinstance(text, str) or not text.strip():
        raise NotationError("empty hand string")
    concealed: list[int] = []
    melds: list[Meld] = []
    win_tile = win_how = win_from = None
    pos = 0
    n = len(text)
    while pos < n:
        ch = text[pos]
        if ch.isspace():
            pos += 1
            continue
        if ch == "[":
            end = text.find("]", pos)
            if end < 0:
                raise NotationError(f"at {pos}: '[' opens a meld that is never closed")
            m = _MELD_RE.fullmatch(text, pos, end + 1)
            if not m:
                raise NotationError(
                    f"at {pos}: malformed meld {text[pos:end + 1]!r} (expected e.g. '[P 555p<B]'; kinds P C K A X)"
                )
            melds.append(_make_meld(m.group(1), parse_tiles(m.group(2), m.start(2)), m.group(3), pos, text[pos : end + 1]))
            pos = end + 1
            continue
        if ch == "+":
            m = _WIN_RE.match(text, pos)
            if not m:
                raise NotationError(f"at {pos}: malformed winning tile {text[pos:pos + 20]!r} (expected e.g. '+3p discard')")
            if win_tile is not None:
                raise NotationError(f"at {pos}: a second winning tile")
            (win_tile,) = parse_tiles(m.group(1), m.start(1))
            if m.group(2) is None:
                rest = text[m.end():].split()
                word = rest[0] if rest and rest[0][:1].isalpha() else None
                if word is not None:
                    raise NotationError(f"at {m.end()}: unknown arrival {word!r} after '+{m.group(1)}' (use discard, self-draw or rob)")
                raise NotationError(
                    f"at {pos}: the winning tile '+{m.group(1)}' must say how it arrived: '+{m.group(1)} discard', "
                    f"'+{m.group(1)} self-draw' or '+{m.group(1)} rob'"
                )
            how = m.group(2)
            win_how = {"selfdraw": "self-draw", "tsumo": "self-draw"}.get(how, how)
            win_from = _seat(m.group(3)) if m.group(3) else None
            if win_how == "self-draw" and win_from is not None:
                raise NotationError(f"at {pos}: a self-drawn tile has no source seat")
            pos = m.end()
            continue
        end = pos
        while end < n and not text[end].isspace() and text[end] not in "[+":
            end += 1
        concealed.extend(parse_tiles(text[pos:end], pos))
        pos = end
    hand = Hand(tuple(sorted(concealed)), tuple(melds), win_tile, win_how, win_from)
    _check_hand(hand, kinds)
    return hand


def _make_meld(kind: str, ids: list[int], src: str | None, pos: int, tok: str) -> Meld:
    ids = sorted(ids)
    if kind == "P":
        ok = len(ids) == 3 and len(set(ids)) == 1
    elif kind == "C":
        ok = len(ids) == 3 and ids[0] < 27 and ids[0] // 9 == ids[2] // 9 and ids[1] == ids[0] + 1 and ids[2] == ids[0] + 2
    else:
        ok = len(ids) == 4 and len(set(ids)) == 1
    if not ok:
        need = {"P": "three identical tiles", "C": "three consecutive suited tiles"}.get(kind, "four identical tiles")
        raise NotationError(f"at {pos}: meld {tok!r} is not a {MELD_KINDS[kind]} (needs {need})")
    if kind == "X" and src is not None:
        raise NotationError(f"at {pos}: concealed kong {tok!r} cannot have a source seat")
    return Meld(kind, tuple(ids), _seat(src) if src else None)


def _check_hand(hand: Hand, kinds: np.ndarray | None) -> None:
    counts = hand.all_counts()
    over = np.flatnonzero(counts > 4)
    if over.size:
        t = int(over[0])
        raise NotationError(f"{tile_name(t)} appears {int(counts[t])} times (at most 4 copies exist)")
    if kinds is not None:
        bad = np.flatnonzero((counts > 0) & ~np.asarray(kinds, dtype=bool))
        if bad.size:
            raise NotationError(
                f"{tile_name(int(bad[0]))} is not used by this variant (its tiles: {format_counts(np.asarray(kinds, dtype=np.int8))})"
            )


def format_hand(hand: Hand) -> str:
    """Canonical notation of a :class:`Hand` (round-trips through :func:`parse_hand`)."""
    parts = []
    if hand.concealed:
        parts.append(format_tiles(hand.concealed))
    parts.extend(str(m) for m in hand.melds)
    if hand.win_tile is not None:
        src = f"({SEAT_LETTERS[hand.win_from]})" if hand.win_from is not None else ""
        parts.append(f"+{tile_name(hand.win_tile)} {hand.win_how}{src}")
    return " ".join(parts)
