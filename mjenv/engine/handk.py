"""Compiled (numba) hand analysis of ONE hand, for the compiled engine's per-table functions.

This module owns the numba kernels that answer, for a single 34-count hand, the questions of
:mod:`mjenv.rules.hand` (is it complete, what does it wait on, which discards leave it ready) and
the Gejiu special shapes of :mod:`mjenv.rules.scoring.gejiu` (烂牌, 七星, the 烂牌 wait set).  It
holds no rules of its own: it reads the lookup tables that :mod:`mjenv.rules.hand` builds and
applies exactly the same bit logic, so results equal the numpy functions (tests/test_handk.py
checks that on real hands).

Every kernel is a plain ``@njit(cache=True)`` function (:mod:`mjenv.engine.jit`) over arrays, ints and bools, so other
njit code (the engine's per-table step) can call it.  The lookup tables travel as an argument
``tabs`` (the tuple :func:`tables` returns) rather than as globals: numba would freeze a global
array into the compiled code and its on-disk cache.

Two layers:

* bit masks (int64, bit t = tile id t): :func:`wait_bits`, :func:`discard_ready_bits` (and
  :func:`discard_ready_complete`, which answers :func:`is_complete` of the same hand from the same table
  reads), :func:`kinds_bits`, :func:`owned_bits`, :func:`lanpai_wait_bits` — cheapest for kernels that
  combine masks;
* the array forms mirroring :mod:`mjenv.rules.hand`: :func:`is_complete` (and :func:`is_complete_with`, a
  hand with one tile added, as the claim windows ask), :func:`wait_mask`, :func:`ready_after_discards`,
  :func:`lanpai`, :func:`qixing`, plus batched loops ``*_batch`` over ``[N, 34]`` hands (for tests and
  benchmarks);
* the standard readings of a complete hand, the one enumeration the compiled scorers
  (:mod:`mjenv.engine.kwscore`, :mod:`mjenv.engine.gjscore`, :mod:`mjenv.engine.yzscore`) walk:
  :func:`reading_choices` and :func:`reading_split`.

Arguments are not validated here (no exceptions inside the engine's hot loop): counts must lie in
0..4, ``kinds`` is bool ``[34]``, ``owned`` int ``[34]``, ``out`` a writable bool ``[34]``.
"""

from __future__ import annotations

import numpy as np

from mjenv.engine.jit import njit
from mjenv.rules import hand as _hand

__all__ = [
    "ALL_TILES",
    "discard_ready_bits",
    "discard_ready_complete",
    "is_complete",
    "is_complete_batch",
    "is_complete_with",
    "kinds_bits",
    "lanpai",
    "lanpai_batch",
    "lanpai_wait_bits",
    "owned_bits",
    "qixing",
    "qixing_batch",
    "reading_choices",
    "reading_split",
    "ready_after_discards",
    "ready_after_discards_batch",
    "tables",
    "wait_bits",
    "wait_mask",
    "wait_mask_batch",
]

ALL_TILES = (1 << 34) - 1  # int64 mask of all 34 tile ids
_HONOR_OFFSET = _hand.HONOR_OFFSET
# Entry layout of the wait table (see mjenv.rules.hand): odd-count mask bits 0-8, class bits 9-10,
# m1 (adding tile i makes the component class 1) bits 11-19, m0 (class 0) bits 20-28.
_CLS_SHIFT = 9
_M1_SHIFT = 11
_ODD_FLAG = 16  # completion table: class | 16 when some count is odd


def tables() -> tuple[np.ndarray, np.ndarray]:
    """The lookup tables the kernels take as ``tabs``: (wait table uint32, completion table uint8).

    They are :func:`mjenv.rules.hand.tables`' arrays (built on first use, ~0.1 s), not copies.
    """
    t = _hand.tables()
    return t["wait"], t["complete"]


# ----------------------------------------------------------------------------------- internals


_POW5 = (1, 5, 25, 125, 625, 3125, 15625, 78125, 390625)  # 5 ** i, i < 9


@njit(cache=True, inline="always")
def _code(h, lo, hi):
    """Base-5 code of the counts h[lo:hi] (digit i is h[lo + i]): a sum of independent products, which the core
    computes in parallel (Horner's rule chains every digit on the one before)."""
    code = 0
    for i in range(hi - lo):
        code += np.int64(h[lo + i]) * _POW5[i]
    return code


@njit(cache=True, inline="always")
def _total(h):
    total = 0
    for i in range(34):
        total += np.int64(h[i])
    return total


@njit(cache=True, inline="always")
def _bits_from_entries(e0, e1, e2, e3, total, seven_pairs):
    """34-bit wait mask (int64) of a hand from its four wait-table entries and tile total."""
    c0 = (e0 >> _CLS_SHIFT) & 3
    c1 = (e1 >> _CLS_SHIFT) & 3
    c2 = (e2 >> _CLS_SHIFT) & 3
    c3 = (e3 >> _CLS_SHIFT) & 3
    s = c0 + c1 + c2 + c3
    bits = 0
    # A component's own additions count only when the others sum to class 0 (read m1) or 1 (m0).
    o = s - c0
    if o < 2:
        bits |= (e0 >> (_M1_SHIFT + 9 * o)) & 0x1FF
    o = s - c1
    if o < 2:
        bits |= ((e1 >> (_M1_SHIFT + 9 * o)) & 0x1FF) << 9
    o = s - c2
    if o < 2:
        bits |= ((e2 >> (_M1_SHIFT + 9 * o)) & 0x1FF) << 18
    o = s - c3
    if o < 2:
        bits |= ((e3 >> (_M1_SHIFT + 9 * o)) & 0x1FF) << 27
    if seven_pairs and total == 13:
        # 13 tiles with exactly one odd count: that tile makes seven pairs (3 + 1 = two pairs).
        odd = (e0 & 0x1FF) | ((e1 & 0x1FF) << 9) | ((e2 & 0x1FF) << 18) | ((e3 & 0x1FF) << 27)
        if odd & (odd - 1) == 0:
            bits |= odd
    return bits


@njit(cache=True, inline="always")
def _spaced(h):
    """No count above 1 and no two held suited tiles of one suit less than 3 ranks apart (烂牌 spacing)."""
    for s in range(3):
        last = -9  # rank of the last held tile of this suit
        for r in range(9):
            x = h[9 * s + r]
            if x > 1:
                return False
            if x == 1:
                if r - last < 3:
                    return False
                last = r
    for t in range(27, 34):
        if h[t] > 1:
            return False
    return True


# ----------------------------------------------------------------------------------- bit masks


@njit(cache=True)
def kinds_bits(kinds):
    """int64 mask of a bool ``[34]`` kinds mask (bit t set where ``kinds[t]``)."""
    bits = 0
    for t in range(34):
        if kinds[t]:
            bits |= np.int64(1) << t
    return bits


@njit(cache=True)
def owned_bits(owned):
    """int64 mask of the tiles the player owns fewer than 4 of (``owned``: int ``[34]``, concealed + melded)."""
    bits = 0
    for t in range(34):
        if owned[t] < 4:
            bits |= np.int64(1) << t
    return bits


@njit(cache=True)
def wait_bits(h, seven_pairs, tabs):
    """int64 wait mask of concealed counts ``h`` (13, 10, 7, 4 or 1 tiles), before kinds/owned masks.

    Equals ``hand.wait_mask(h, seven_pairs)`` packed into bits; AND it with :func:`kinds_bits` and
    :func:`owned_bits` for the ``kinds`` / ``owned`` conditions.
    """
    wait = tabs[0]
    e0 = np.int64(wait[_code(h, 0, 9)])
    e1 = np.int64(wait[_code(h, 9, 18)])
    e2 = np.int64(wait[_code(h, 18, 27)])
    e3 = np.int64(wait[_code(h, 27, 34) + _HONOR_OFFSET])
    total = _total(h) if seven_pairs else 0
    return _bits_from_entries(e0, e1, e2, e3, total, seven_pairs)


@njit(cache=True, inline="always")
def _adds_waits(e, rest):
    """Whether a component with wait-table entry ``e``, unchanged by a discard elsewhere, can still give waits
    once the other components it is read with sum to class ``rest`` + c' (c' >= 0, the discarding component's
    class after the discard): its m1 field is read at sum 0 and its m0 field at sum 1 (:func:`_bits_from_entries`)."""
    if rest == 0:
        return (e >> _M1_SHIFT) & 0x3FFFF != 0  # m1 or m0
    if rest == 1:
        return (e >> (_M1_SHIFT + 9)) & 0x1FF != 0  # m0
    return False


@njit(cache=True, inline="always")
def _discards_may_wait(c0, c1, c2, c3, e0, e1, e2, e3, comp):
    """Whether some discard from component ``comp`` may leave a standard wait, from the hand's four entries and
    their classes: the component's own additions count only when the other three sum to class 0 or 1, and another
    component's only when its entry has additions that the classes around it can read (:func:`_adds_waits`).
    When False, every such discard leaves no standard wait, and its table entry need not be read."""
    so = c0 + c1 + c2 + c3 - (c0 if comp == 0 else (c1 if comp == 1 else (c2 if comp == 2 else c3)))
    if so < 2:
        return True
    if comp != 0 and _adds_waits(e0, so - c0):
        return True
    if comp != 1 and _adds_waits(e1, so - c1):
        return True
    if comp != 2 and _adds_waits(e2, so - c2):
        return True
    return comp != 3 and _adds_waits(e3, so - c3)


@njit(cache=True, inline="always")
def _discard_ready(h, k0, k1, k2, k3, e0, e1, e2, e3, seven_pairs, keep, owned_keep, wait):
    """:func:`discard_ready_bits` from the hand's four table codes ``k*`` and their wait-table entries ``e*``.

    A component whose discards cannot leave a standard wait (:func:`_discards_may_wait`) is not looked up again:
    its discards can only leave seven pairs' wait, read from the odd counts (a discard flips its tile's)."""
    total = _total(h) - 1 if seven_pairs else 0
    sp = seven_pairs and total == 13
    c0 = (e0 >> _CLS_SHIFT) & 3
    c1 = (e1 >> _CLS_SHIFT) & 3
    c2 = (e2 >> _CLS_SHIFT) & 3
    c3 = (e3 >> _CLS_SHIFT) & 3
    odd = (e0 & 0x1FF) | ((e1 & 0x1FF) << 9) | ((e2 & 0x1FF) << 18) | ((e3 & 0x1FF) << 27)
    out = 0
    for comp in range(4):
        std = _discards_may_wait(c0, c1, c2, c3, e0, e1, e2, e3, comp)
        if not std and not sp:
            continue
        lo = 9 * comp
        for i in range(9 if comp < 3 else 7):
            d = lo + i
            if h[d] == 0:
                continue
            dbit = np.int64(1) << d
            if std:
                step = np.int64(_POW5[i])
                if comp == 0:
                    bits = _bits_from_entries(np.int64(wait[k0 - step]), e1, e2, e3, total, seven_pairs)
                elif comp == 1:
                    bits = _bits_from_entries(e0, np.int64(wait[k1 - step]), e2, e3, total, seven_pairs)
                elif comp == 2:
                    bits = _bits_from_entries(e0, e1, np.int64(wait[k2 - step]), e3, total, seven_pairs)
                else:
                    bits = _bits_from_entries(e0, e1, e2, np.int64(wait[k3 - step]), total, seven_pairs)
            else:  # no standard wait: seven pairs' only (13 tiles, one odd count)
                bits = odd ^ dbit
                if bits & (bits - 1) != 0:
                    bits = 0
            if bits & keep & (owned_keep | dbit):
                out |= dbit
    return out


@njit(cache=True)
def discard_ready_bits(h, seven_pairs, keep, owned_keep, tabs):
    """int64 mask of the held tiles d whose discard leaves a non-empty wait set.

    ``h``: concealed counts before the discard (14, 11, 8, 5 or 2 tiles).  A wait t after
    discarding d counts where bit t of ``keep`` (kinds) is set and bit t of ``owned_keep`` (the
    tiles owned fewer than 4 times, before the discard) is set or t == d (the discard lowers d's
    own count).  Pass ``ALL_TILES`` for no condition.
    """
    wait = tabs[0]
    k0 = _code(h, 0, 9)
    k1 = _code(h, 9, 18)
    k2 = _code(h, 18, 27)
    k3 = _code(h, 27, 34) + _HONOR_OFFSET
    e0 = np.int64(wait[k0])
    e1 = np.int64(wait[k1])
    e2 = np.int64(wait[k2])
    e3 = np.int64(wait[k3])
    return _discard_ready(h, k0, k1, k2, k3, e0, e1, e2, e3, seven_pairs, keep, owned_keep, wait)


@njit(cache=True)
def discard_ready_complete(h, seven_pairs, keep, owned_keep, tabs):
    """``(discard_ready_bits(h, ...), is_complete(h, seven_pairs, tabs))`` from one reading of the hand's table
    entries (the mask of one's own turn asks both of the same hand): the completion is read from the wait
    table's class and odd-count fields, which the completion table holds too."""
    wait = tabs[0]
    k0 = _code(h, 0, 9)
    k1 = _code(h, 9, 18)
    k2 = _code(h, 18, 27)
    k3 = _code(h, 27, 34) + _HONOR_OFFSET
    e0 = np.int64(wait[k0])
    e1 = np.int64(wait[k1])
    e2 = np.int64(wait[k2])
    e3 = np.int64(wait[k3])
    bits = _discard_ready(h, k0, k1, k2, k3, e0, e1, e2, e3, seven_pairs, keep, owned_keep, wait)
    cls = ((e0 >> _CLS_SHIFT) & 3) + ((e1 >> _CLS_SHIFT) & 3) + ((e2 >> _CLS_SHIFT) & 3) + ((e3 >> _CLS_SHIFT) & 3)
    if cls == 1:
        return bits, True
    odd = (e0 | e1 | e2 | e3) & 0x1FF
    return bits, seven_pairs and odd == 0 and _total(h) == 14


@njit(cache=True)
def lanpai_wait_bits(h):
    """int64 mask of the tiles t for which 13 concealed tiles + t form 烂牌 (``gejiu.lanpai_wait_mask``).

    Empty unless ``h`` holds exactly 13 tiles, spaced as 烂牌 needs.
    """
    if _total(h) != 13 or not _spaced(h):
        return 0
    blocked = 0
    for t in range(34):
        if h[t]:
            blocked |= np.int64(1) << t
            if t < 27:
                r = t % 9
                for dr in (-2, -1, 1, 2):
                    if 0 <= r + dr <= 8:
                        blocked |= np.int64(1) << (t + dr)
    return ALL_TILES & ~blocked


# ----------------------------------------------------------------------------------- array forms


@njit(cache=True)
def is_complete(h, seven_pairs, tabs):
    """Whether concealed counts ``h`` (3k+2 tiles, incl. the winning tile) are complete: ``hand.is_complete``."""
    complete = tabs[1]
    s = (
        np.int64(complete[_code(h, 0, 9)])
        + np.int64(complete[_code(h, 9, 18)])
        + np.int64(complete[_code(h, 18, 27)])
        + np.int64(complete[_code(h, 27, 34) + _HONOR_OFFSET])
    )
    if (s & 15) == 1:
        return True
    return seven_pairs and s < _ODD_FLAG and _total(h) == 14


@njit(cache=True)
def is_complete_with(h, t, seven_pairs, tabs):
    """Whether concealed counts ``h`` (3k+1 tiles) plus one tile ``t`` are complete: ``is_complete`` of ``h`` with
    ``t`` added, ``h`` left as it is.

    The component of ``t`` is read first: when it is neither sets nor sets and a pair (class 2) and seven pairs
    cannot hold (off, or an odd count in it), the hand is not complete without reading the other three."""
    complete = tabs[1]
    comp = t // 9
    lo = 9 * comp
    hi = lo + 9 if comp < 3 else 34
    kt = _code(h, lo, hi) + _POW5[t - lo] + (_HONOR_OFFSET if comp == 3 else 0)
    et = np.int64(complete[kt])
    if (et & 3) == 2 and (not seven_pairs or et >= _ODD_FLAG):
        return False
    s = et
    if comp != 0:
        s += np.int64(complete[_code(h, 0, 9)])
    if comp != 1:
        s += np.int64(complete[_code(h, 9, 18)])
    if comp != 2:
        s += np.int64(complete[_code(h, 18, 27)])
    if comp != 3:
        s += np.int64(complete[_code(h, 27, 34) + _HONOR_OFFSET])
    if (s & 15) == 1:
        return True
    return seven_pairs and s < _ODD_FLAG and _total(h) == 13


@njit(cache=True)
def _write_bits(bits, out):
    for t in range(34):
        out[t] = (bits >> t) & 1 != 0


@njit(cache=True)
def wait_mask(h, seven_pairs, kinds, owned, tabs, out):
    """Write ``hand.wait_mask(h, seven_pairs=..., kinds=..., owned=...)`` into bool ``out[34]``.

    ``kinds`` (bool ``[34]``) and ``owned`` (int ``[34]``) may each be None (no condition), as in
    :mod:`mjenv.rules.hand`.  Returns True when the wait set is non-empty (``hand.ready``).
    """
    bits = wait_bits(h, seven_pairs, tabs)
    if kinds is not None:
        bits &= kinds_bits(kinds)
    if owned is not None:
        bits &= owned_bits(owned)
    _write_bits(bits, out)
    return bits != 0


@njit(cache=True)
def ready_after_discards(h, seven_pairs, kinds, owned, tabs, out):
    """Write ``hand.ready_after_discards(h, seven_pairs=..., kinds=..., owned=...)`` into bool ``out[34]``.

    ``h`` holds 3k+2 concealed tiles; ``out[d]``: d is held and discarding it leaves a ready hand.
    ``kinds`` / ``owned`` may be None.  Returns True when some discard does.
    """
    keep = ALL_TILES
    if kinds is not None:
        keep = kinds_bits(kinds)
    owned_keep = ALL_TILES
    if owned is not None:
        owned_keep = owned_bits(owned)
    bits = discard_ready_bits(h, seven_pairs, keep, owned_keep, tabs)
    _write_bits(bits, out)
    return bits != 0


@njit(cache=True)
def lanpai(h):
    """Whether the concealed counts form 烂牌 (14 kinds, suited tiles ≥ 3 ranks apart): ``gejiu.lanpai_mask``."""
    return _total(h) == 14 and _spaced(h)


@njit(cache=True)
def qixing(h):
    """Whether the hand is 烂牌 holding all seven honors (七星): ``gejiu.qixing_mask``."""
    for t in range(27, 34):
        if h[t] != 1:
            return False
    return lanpai(h)


# ----------------------------------------------------------------------------------- readings


@njit(cache=True)
def reading_choices(full, p):
    """How many tiles of the complete hand ``full`` are held three or more times once the pair ``p`` is taken
    out: each of them may be read as a triplet or not, so ``range(1 << m)`` numbers the candidate splits."""
    m = 0
    for t in range(34):
        if full[t] - (2 if t == p else 0) >= 3:
            m += 1
    return m


@njit(cache=True)
def reading_split(full, work, p, choice, m):
    """The standard reading of ``full`` with pair ``p`` and triplet choice ``choice`` (of
    :func:`reading_choices` ``m``): ``(ok, trips, seqs, n_seqs)``.

    Bit ``d`` of ``choice`` reads the d-th tile held three or more times (in increasing tile order) as a
    triplet; what is left of each tile then starts sequences.  ``trips`` / ``seqs``: int64 masks of the triplet
    tiles and of the sequences' first tiles; ``n_seqs`` counts the sequences, and ``work`` (an int8 row of 34)
    ends holding how many start at each tile.  ``ok`` is False for a split that fails and for one a smaller
    choice already gives (a choice bit beyond the tiles used), so that every reading comes once, as
    :func:`mjenv.rules.hand.readings` lists them.
    """
    for t in range(34):
        work[t] = full[t]
    work[p] -= 2
    trips = np.int64(0)
    seqs = np.int64(0)
    n_seqs = 0
    d = 0
    for i in range(34):
        n = work[i]
        if n == 0:
            continue
        tr = 0
        if n >= 3:
            tr = (choice >> d) & 1
            d += 1
        sq = n - 3 * tr
        if sq > 0:
            if i >= 27 or i % 9 > 6 or work[i + 1] < sq or work[i + 2] < sq:
                return False, trips, seqs, n_seqs
            work[i + 1] -= sq
            work[i + 2] -= sq
            seqs |= np.int64(1) << i
            n_seqs += sq
        if tr:
            trips |= np.int64(1) << i
        work[i] = sq if sq > 0 else 0
    if d < m and (choice >> d) != 0:
        return False, trips, seqs, n_seqs
    return True, trips, seqs, n_seqs


# ----------------------------------------------------------------------------------- batches


@njit(cache=True)
def is_complete_batch(hs, seven_pairs, tabs, out):
    """:func:`is_complete` of each row of ``hs`` ``[N, 34]`` into bool ``out[N]``."""
    for n in range(hs.shape[0]):
        out[n] = is_complete(hs[n], seven_pairs, tabs)


@njit(cache=True)
def wait_mask_batch(hs, seven_pairs, kinds, owneds, tabs, out):
    """:func:`wait_mask` of each row into ``out[N, 34]``; ``owneds`` is ``[N, 34]`` or None."""
    for n in range(hs.shape[0]):
        if owneds is None:
            wait_mask(hs[n], seven_pairs, kinds, None, tabs, out[n])
        else:
            wait_mask(hs[n], seven_pairs, kinds, owneds[n], tabs, out[n])


@njit(cache=True)
def ready_after_discards_batch(hs, seven_pairs, kinds, owneds, tabs, out):
    """:func:`ready_after_discards` of each row into ``out[N, 34]``; ``owneds`` is ``[N, 34]`` or None."""
    for n in range(hs.shape[0]):
        if owneds is None:
            ready_after_discards(hs[n], seven_pairs, kinds, None, tabs, out[n])
        else:
            ready_after_discards(hs[n], seven_pairs, kinds, owneds[n], tabs, out[n])


@njit(cache=True)
def lanpai_batch(hs, out):
    """:func:`lanpai` of each row of ``hs`` into bool ``out[N]``."""
    for n in range(hs.shape[0]):
        out[n] = lanpai(hs[n])


@njit(cache=True)
def qixing_batch(hs, out):
    """:func:`qixing` of each row of ``hs`` into bool ``out[N]``."""
    for n in range(hs.shape[0]):
        out[n] = qixing(hs[n])
