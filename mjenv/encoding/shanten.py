"""Batched shanten (向听数) and tile acceptance (ukeire) by per-suit lookup tables.

This module owns the measure of "how far is a hand from ready" that the players (:mod:`agents.players`) and the
derived hand features of the observation (:mod:`mjenv.encoding.handfeat`) share: :func:`shanten` for ``[N, 34]``
concealed counts held with ``n_melds`` declared melds, :func:`ukeire` (which draws improve a hand and
how many live copies of them remain), and :func:`shanten_reference`, a slow whole-hand recursion the
tests compare the tables against.  ``mjenv.rules.hand`` answers exact questions (complete? waits?);
this module answers the approximate one a player needs before the hand is ready.

Definition.  A hand that needs ``k = 4 - n_melds`` more sets is split into blocks: ``M`` sets
(sequence or triplet), ``T`` partial sets (a pair, two adjacent or two-apart tiles of a suit), at most
one pair ``P`` set aside as the head, and loose tiles.  Standard shanten is
``2k - max(2M + min(T, k - M) + P)`` over all splits; seven pairs (only without melds; a four of a kind
is two pairs, docs/rules/common.md §1.4) is ``6 - min(pairs, 7)``.  The shanten of a hand is the smaller of the two.
``-1`` means complete, ``0`` ready.  The usual caveat of this formula applies: a partial set whose
missing tile the player already holds four of still counts.

Tables.  For every base-5 code of one suit (``5^9`` codes, only those with at most 14 tiles are
filled) and of the honors (``5^7``), ``table[code, P, M]`` is the largest ``T`` of a split of that
component into ``M`` sets and ``P`` heads (``NEG`` when impossible).  They are built by dynamic
programming over the tile total (a component's value comes from components with fewer tiles) in
about a second and cached in module globals; combining the four components is a max-plus
convolution over (head, sets), compiled per hand (numba, ``cache=True``).  :func:`block_tables` gives the same
tables in the form the compiled rollout player (:mod:`agents.players.fastplay`) combines faster (entry [h, n]: the best
score with at most h heads and n blocks), derived from these at first use.
"""

from __future__ import annotations

import threading
from functools import lru_cache

import numpy as np

from mjenv.engine.jit import njit

__all__ = ["shanten", "shanten_standard", "shanten_seven_pairs", "ukeire", "shanten_reference", "tables", "block_tables"]

NEG = -64  # "no split"; four NEGs summed stay far below any real value in int16
MAX_TILES = 14  # a concealed hand never holds more
_SUIT_CODES = 5**9

_lock = threading.Lock()
_tables: dict[str, np.ndarray] = {}
_blocks: dict[str, np.ndarray] = {}


def _build_component(n: int, sequences: bool) -> np.ndarray:
    """``int8 [5^n, 2, 5]``: max partial sets per (head, sets) for every code with at most 14 tiles."""
    size = 5**n
    powers = 5 ** np.arange(n, dtype=np.int64)
    # Only the codes of at most MAX_TILES tiles: grow the digit rows one position at a time.
    digits = np.zeros((1, 0), dtype=np.int8)
    for _ in range(n):
        grown = np.concatenate([np.hstack([digits, np.full((len(digits), 1), x, np.int8)]) for x in range(5)])
        digits = grown[grown.sum(1) <= MAX_TILES]
    codes = digits.astype(np.int64) @ powers
    total = digits.sum(1)
    order = np.argsort(total, kind="stable")
    bounds = np.searchsorted(total[order], np.arange(MAX_TILES + 2))
    val = np.full((size, 2, 5), NEG, dtype=np.int8)
    val[0, 0, 0] = 0

    def shift_m(v: np.ndarray) -> np.ndarray:  # one more complete set
        out = np.full_like(v, NEG)
        out[:, :, 1:] = v[:, :, :-1]
        return out

    def plus_t(v: np.ndarray) -> np.ndarray:  # one more partial set
        return np.where(v > NEG, v + 1, NEG).astype(np.int8)

    def as_head(v: np.ndarray) -> np.ndarray:  # the pair becomes the head
        out = np.full_like(v, NEG)
        out[:, 1, :] = v[:, 0, :]
        return out

    for t in range(1, MAX_TILES + 1):
        sel = order[bounds[t] : bounds[t + 1]]
        cs = codes[sel]
        d = digits[sel].astype(np.int64)
        low = np.argmax(d > 0, axis=1)  # every split assigns the copies of the lowest tile somewhere
        c0 = d[np.arange(len(cs)), low]
        p = powers[low]
        best = val[cs - p].copy()  # a loose copy of the lowest tile

        def offer(ok: np.ndarray, removed: np.ndarray, transform) -> None:
            if ok.any():
                cand = transform(val[cs[ok] - removed[ok]])
                best[ok] = np.maximum(best[ok], cand)

        offer(c0 >= 3, 3 * p, shift_m)
        offer(c0 >= 2, 2 * p, as_head)
        offer(c0 >= 2, 2 * p, plus_t)
        if sequences:
            nxt = np.minimum(low + 1, n - 1)
            nxt2 = np.minimum(low + 2, n - 1)
            d1 = np.where(low + 1 < n, d[np.arange(len(cs)), nxt], 0)
            d2 = np.where(low + 2 < n, d[np.arange(len(cs)), nxt2], 0)
            p1 = np.where(low + 1 < n, powers[nxt], 0)
            p2 = np.where(low + 2 < n, powers[nxt2], 0)
            offer((d1 > 0) & (d2 > 0), p + p1 + p2, shift_m)
            offer(d1 > 0, p + p1, plus_t)
            offer(d2 > 0, p + p2, plus_t)
        val[cs] = best
    return val


def tables() -> dict[str, np.ndarray]:
    """The cached tables ``{"suit": int8 [5^9, 2, 5], "honor": int8 [5^7, 2, 5]}`` (built on first call)."""
    if not _tables:
        with _lock:
            if not _tables:
                _tables["suit"] = _build_component(9, True)
                _tables["honor"] = _build_component(7, False)
    return _tables


def _blocks_form(val: np.ndarray) -> np.ndarray:
    """``int8 [codes, 2, 5]``: :func:`tables`' entries in the form the compiled player combines (see
    :func:`block_tables`); rows of codes with more than 14 tiles stay ``NEG``."""
    out = np.full(val.shape, NEG, np.int8)
    rows = np.flatnonzero(val[:, 0, 0] > NEG)  # filled codes (all tiles loose is always a split)
    v = val[rows].astype(np.int16)
    w = np.full((len(rows), 2, 5), NEG, np.int16)
    for h in range(2):
        for n in range(5):
            for m in range(n + 1):  # the most sets among splits of n blocks: the last m that fits wins
                ok = v[:, h, m] >= n - m  # NEG entries never fit
                w[ok, h, n] = n + m + h
    w = np.maximum.accumulate(w, axis=2)  # at most n blocks
    w[:, 1, :] = np.maximum(w[:, 1, :], w[:, 0, :])  # at most one head
    out[rows] = w
    return out


def block_tables() -> dict[str, np.ndarray]:
    """The tables of :func:`tables` in "blocks" form, for the compiled player (:mod:`agents.players.fastplay`):
    ``{"suit": int8 [5^9, 2, 5], "honor": int8 [5^7, 2, 5], "joint": both in one array, the honors' rows after
    the suits' (row 5^9 + code)}`` (20 MB, built on first call in about half a second).

    Entry ``[h, n]`` of a component is the most ``2M + T' + P`` its splits reach with at most ``h`` heads and at
    most ``n`` blocks (sets plus the partial sets counted, ``M + T' <= n``, ``T'`` at most the split's ``T``).
    The standard score ``2k - shanten = max(2M + min(T, k - M) + P)`` of a hand is then its components'
    max-plus product (heads and blocks added) read at ``[1, k]``: the ``min`` becomes the block budget, every
    entry is valid (0 at worst) and monotone, and one component's contribution against the product of the
    others (``e``) is ``max over (h, n) of p[h, n] + e[1 - h, k - n]`` — ``2(k + 1)`` additions."""
    if not _blocks:
        tb = tables()
        with _lock:
            if not _blocks:
                joint = np.concatenate([_blocks_form(tb["suit"]), _blocks_form(tb["honor"])])
                _blocks.update(joint=joint, suit=joint[:_SUIT_CODES], honor=joint[_SUIT_CODES:])
    return _blocks


def _as_batch(counts) -> tuple[np.ndarray, bool]:
    arr = np.asarray(counts)
    single = arr.ndim == 1
    if single:
        arr = arr[None]
    if arr.ndim != 2 or arr.shape[1] != 34:
        raise ValueError(f"counts: expected shape [34] or [N, 34], got {list(np.shape(counts))}")
    if arr.size and (arr.min() < 0 or arr.max() > 4):
        raise ValueError("counts: tile counts must lie in 0..4")
    if arr.size and arr.sum(1).max() > MAX_TILES:
        raise ValueError(f"counts: a concealed hand holds at most {MAX_TILES} tiles")
    return arr, single


@njit(cache=True, inline="always")
def conv_max_plus(a, b, out):
    """``out[h, m]``: the most partial sets of two components whose ``[2, 5]`` (head, sets) -> partial sets tables
    are ``a`` and ``b``, heads and sets added (one head and four sets at most): their max-plus product."""
    for h in range(2):
        for m in range(5):
            out[h, m] = NEG
    for h1 in range(2):
        for m1 in range(5):
            x = a[h1, m1]
            if x <= NEG:
                continue
            for h2 in range(2 - h1):
                for m2 in range(5 - m1):
                    y = b[h2, m2]
                    if y <= NEG:
                        continue
                    v = x + y
                    if v > out[h1 + h2, m1 + m2]:
                        out[h1 + h2, m1 + m2] = v


@njit(cache=True, nogil=True)
def standard_one(c, n_melds, suit, honor, acc, nxt):
    """Standard shanten of one hand ``c`` (integer ``[34]``) held with ``n_melds`` melds, from :func:`tables`'
    ``suit`` and ``honor``: the four components' entries combined by a max-plus convolution over (head, sets),
    then the formula of the module docstring.  ``acc`` and ``nxt`` are ``int16 [2, 5]`` work arrays."""
    for h in range(2):
        for m in range(5):
            acc[h, m] = NEG
    acc[0, 0] = 0  # the identity: no tiles, no sets, no head
    for j in range(4):
        code = 0
        size = 7 if j == 3 else 9
        for x in range(size - 1, -1, -1):
            code = code * 5 + c[9 * j + x]
        if code == 0:
            continue
        conv_max_plus(acc, honor[code] if j == 3 else suit[code], nxt)
        for h in range(2):
            for m in range(5):
                acc[h, m] = nxt[h, m]
    k = 4 - n_melds
    best = -1000
    for h in range(2):
        for m in range(min(k, 4) + 1):
            t = acc[h, m]
            if t <= NEG:
                continue
            score = 2 * m + min(t, k - m) + h
            if score > best:
                best = score
    return 2 * k - best


@njit(cache=True, nogil=True)
def _standard_rows(c, n_melds, suit, honor, out):
    """Standard shanten of every row of ``c`` (int8 ``[N, 34]``) into ``out`` (:func:`standard_one` per row).
    Compiled: a hand costs well under a microsecond here, against tens of numpy calls per batch."""
    acc = np.empty((2, 5), np.int16)
    nxt = np.empty((2, 5), np.int16)
    for i in range(c.shape[0]):
        out[i] = standard_one(c[i], n_melds[i], suit, honor, acc, nxt)


def shanten_standard(counts, n_melds) -> np.ndarray:
    """Standard-shape shanten ``int [N]`` (or an int) of concealed ``counts`` held with ``n_melds`` melds."""
    c, single = _as_batch(counts)
    out = _standard(c, np.broadcast_to(np.asarray(n_melds), (len(c),)))
    return int(out[0]) if single else out


def _standard(c: np.ndarray, n_melds: np.ndarray) -> np.ndarray:
    """:func:`shanten_standard` of validated ``[N, 34]`` counts (no checks: the agents' hot path)."""
    tb = tables()
    out = np.empty(len(c), np.int64)
    _standard_rows(
        np.ascontiguousarray(c, dtype=np.int8), np.ascontiguousarray(n_melds, dtype=np.int64), tb["suit"], tb["honor"], out
    )
    return out


def shanten_seven_pairs(counts) -> np.ndarray:
    """Seven-pairs shanten ``6 - min(pairs, 7)``, a four of a kind counting as two pairs; ``int [N]`` or an int."""
    c, single = _as_batch(counts)
    out = 6 - np.minimum((c // 2).sum(1), 7)
    return int(out[0]) if single else out.astype(np.int64)


def shanten(counts, n_melds=0, seven_pairs: bool = True) -> np.ndarray:
    """Shanten ``int [N]`` (or an int): the smaller of standard and, without melds, seven pairs.

    ``counts``: concealed tiles ``[N, 34]`` or ``[34]`` (3k+1 or 3k+2 of them); ``n_melds``: declared
    melds, an int or ``[N]``.  ``-1`` complete, ``0`` ready.
    """
    c, single = _as_batch(counts)
    out = _shanten(c, np.broadcast_to(np.asarray(n_melds), (len(c),)), seven_pairs)
    return int(out[0]) if single else out


def _shanten(c: np.ndarray, nm: np.ndarray, seven_pairs: bool) -> np.ndarray:
    out = _standard(c, nm)
    if seven_pairs:
        sp = 6 - np.minimum((c // 2).sum(1), 7)
        out = np.where(nm == 0, np.minimum(out, sp), out)
    return out


# A drawn tile can lower the shanten only next to (or on) a held tile of its suit: "near[t, u]" says that
# holding u makes drawing t useful.
_NEAR = np.zeros((34, 34), dtype=bool)
for _t in range(34):
    for _u in range(34):
        _NEAR[_t, _u] = _t == _u or (_t < 27 and _u < 27 and _t // 9 == _u // 9 and abs(_t - _u) <= 2)
_NEAR_T = np.ascontiguousarray(_NEAR.T, dtype=np.float32)


def ukeire(counts, n_melds, live, kinds=None, seven_pairs: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which draws lower the shanten of a 3k+1-tile hand, and how many live copies they have.

    ``live``: ``[N, 34]`` copies of each kind the player has not seen (four minus the visible ones);
    ``kinds``: bool ``[34]`` tile kinds in play (default all).  Returns ``(shanten [N], accepted [N],
    improving bool [N, 34])`` where ``accepted`` sums ``live`` over the improving kinds.  For a ready hand
    the improving kinds are its waits.
    """
    c, _ = _as_batch(counts)
    N = len(c)
    nm = np.broadcast_to(np.asarray(n_melds), (N,))
    base = _shanten(c, nm, seven_pairs)
    candidate = (c < 4) & ((c > 0).astype(np.float32) @ _NEAR_T > 0)
    if kinds is not None:
        candidate &= np.asarray(kinds, bool)[None, :]
    improving = np.zeros((N, 34), dtype=bool)
    rows, ts = np.nonzero(candidate)
    if len(rows):
        drawn = c[rows].astype(np.int8)
        drawn[np.arange(len(rows)), ts] += 1
        improving[rows, ts] = _shanten(drawn, nm[rows], seven_pairs) < base[rows]
    accepted = (improving * np.clip(np.asarray(live), 0, 4)).sum(1)
    return base, accepted, improving


# ------------------------------------------------------------------------------------ slow reference


def shanten_reference(counts, n_melds: int = 0, seven_pairs: bool = True) -> int:
    """The same number by a plain recursion over the whole hand (tests only; slow).

    Every split of the 34 counts is enumerated by deciding the use of the lowest remaining tile
    (loose, triplet, head, pair, sequence, two adjacent, two apart); the formula of the module docstring
    is applied to every (P, M, T) reached.
    """
    c = tuple(int(x) for x in np.asarray(counts).tolist())
    k = 4 - int(n_melds)
    best = min(2 * k - (2 * min(M, k) + min(T, k - min(M, k)) + P) for P, M, T in _splits(c) if M <= k)
    if seven_pairs and n_melds == 0:
        best = min(best, 6 - min(sum(x // 2 for x in c), 7))
    return best


@lru_cache(maxsize=200_000)
def _splits(c: tuple[int, ...]) -> frozenset[tuple[int, int, int]]:
    """Every (heads ≤ 1, sets, partial sets) reachable by splitting ``c``."""
    i = next((t for t in range(34) if c[t]), None)
    if i is None:
        return frozenset({(0, 0, 0)})
    out: set[tuple[int, int, int]] = set()

    def rest(*tiles: int) -> tuple[int, ...]:
        r = list(c)
        for t in tiles:
            r[t] -= 1
        return tuple(r)

    suited = i < 27
    out |= _splits(rest(i))
    if c[i] >= 3:
        out |= {(p, m + 1, t) for p, m, t in _splits(rest(i, i, i))}
    if c[i] >= 2:
        sub = _splits(rest(i, i))
        out |= {(1, m, t) for p, m, t in sub if p == 0}
        out |= {(p, m, t + 1) for p, m, t in sub}
    if suited and i % 9 <= 6 and c[i + 1] and c[i + 2]:
        out |= {(p, m + 1, t) for p, m, t in _splits(rest(i, i + 1, i + 2))}
    if suited and i % 9 <= 7 and c[i + 1]:
        out |= {(p, m, t + 1) for p, m, t in _splits(rest(i, i + 1))}
    if suited and i % 9 <= 6 and c[i + 2]:
        out |= {(p, m, t + 1) for p, m, t in _splits(rest(i, i + 2))}
    return frozenset(out)
