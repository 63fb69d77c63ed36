"""Seeded uniform sampling of legal actions, compiled: one pass over the mask rows, no ``[B, 111]`` temporaries.

This module owns the random legal action choice that the random agent (:class:`agents.players.simple.RandomAgent`)
and the benchmarks use.  :func:`random_legal_actions` is a numba kernel (``cache=True``): for every row of a
bool mask it counts the legal actions ``c``, draws one 64-bit number from a SplitMix64 stream and takes the
``(x mod c)``-th legal action in id order (the bias of ``mod`` is below ``c / 2**64``).  A row with no legal
action (a finished table) gets ``-1``, which :meth:`mjenv.engine.core.Engine.step` ignores for finished tables.

The stream state is one ``uint64`` in a caller-owned array, advanced in place, so a seed gives the same
actions on every machine and every batch split: row ``i`` of a call consumes exactly one number when it has
a legal action.  :class:`ActionSampler` wraps the state with a seed and an output buffer.

The same property cuts one call over threads bit-identically (``ActionSampler(seed, threads=N)``; one thread by
default): SplitMix64's state after ``j`` numbers is the seed's plus ``j``
times its increment, so :func:`chunk_states` counts the rows with a legal action before each chunk of rows (one
vectorised pass) and gives each chunk its own starting state; the chunks then run :func:`random_legal_actions`
at once on :mod:`mjenv.engine.threads`' pool (its GIL released), as the engine's kernel calls do.  That count is a
serial pass over every row (at B = 4096 ≈ 33 µs hot and ≈ 80 µs in a loop whose step pushed the mask out of the
caches, against ≈ 180 µs for a whole one-thread call), so on two cores the threads save about what the hand-over to
the pool costs: the default stays on the calling thread (docs/benchmarks.md, "Threads"); many cores may pay.
"""

from __future__ import annotations

import numba
import numpy as np

from mjenv.engine import threads as TH
from mjenv.engine.jit import njit

__all__ = ["ActionSampler", "TableSampler", "chunk_states", "random_legal_actions", "seed_state", "table_legal_actions"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_MASK64 = (1 << 64) - 1


@njit(nogil=True)  # linked into its callers' cached code; no entry of its own
def _mix(z):
    """SplitMix64's output function: the scrambled 64-bit number of stream state ``z`` (uint64)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(nogil=True)  # linked into its callers' cached code; no entry of its own
def _legal_ids(row, legal):
    """Write the legal action ids of mask ``row`` (bool ``[A]``) in id order into ``legal`` (int64 ``[A]``) and
    return how many there are."""
    c = 0
    for a in range(row.shape[0]):  # branch-free: every id is written, only legal ones are kept
        legal[c] = a
        c += row[a]
    return c


@njit(cache=True, nogil=True)
def random_legal_actions(mask, state, out):
    """Write a uniformly random legal action of every row of ``mask`` (bool ``[B, A]``) into ``out`` (int64 ``[B]``).

    ``state`` (uint64 ``[1]``) is the SplitMix64 stream state, advanced once per row with a legal action.
    Rows with no legal action get ``-1``.  Returns the number of such rows.
    """
    empty = 0
    s = state[0]
    legal = np.empty(mask.shape[1], np.int64)
    for i in range(mask.shape[0]):
        c = _legal_ids(mask[i], legal)
        if c == 0:
            out[i] = -1
            empty += 1
            continue
        s += _GOLDEN
        out[i] = legal[np.int64(_mix(s) % np.uint64(c))]
    state[0] = s
    return empty


@njit(cache=True, nogil=True)
def chunk_states(mask, state, cuts, starts):
    """The stream state each chunk of rows starts from: ``starts[i]`` for rows ``cuts[i]`` to ``cuts[i + 1]`` of
    ``mask`` (bool ``[B, A]``), as one :func:`random_legal_actions` call over every row would reach them; ``state``
    (uint64 ``[1]``) is advanced past every row, as that call leaves it."""
    s = state[0]
    u8 = mask.view(np.uint8)
    n = mask.shape[1]
    for i in range(cuts.shape[0] - 1):
        starts[i] = s
        for r in range(cuts[i], cuts[i + 1]):
            c = 0
            for a in range(n):  # (a plain sum: vectorised)
                c += u8[r, a]
            if c:
                s += _GOLDEN
    state[0] = s


@njit(cache=True, nogil=True)
def table_legal_actions(mask, lo, hi, key, draws, out):
    """Write a uniformly random legal action of every row ``b`` in ``lo..hi-1`` of ``mask`` (bool ``[B, A]``) into
    ``out[b]`` (``-1`` for a row with no legal action): a counter-based draw, the ``(draws[b] + 1)``-th number of
    row ``b``'s own SplitMix64 stream, whose state starts at ``mix(key + (b + 1) × γ)``; ``draws[b]`` then counts
    it.  A row's draws depend on nothing but ``key``, ``b`` and how often it drew, so any cut of the rows over
    threads draws the same actions.  Returns the number of rows with no legal action."""
    empty = 0
    legal = np.empty(mask.shape[1], np.int64)
    for b in range(lo, hi):
        c = _legal_ids(mask[b], legal)
        if c == 0:
            out[b] = -1
            empty += 1
            continue
        d = draws[b] + 1
        draws[b] = d
        z = _mix(_mix(key + np.uint64(b + 1) * _GOLDEN) + np.uint64(d) * _GOLDEN)
        out[b] = legal[np.int64(z % np.uint64(c))]
    return empty


class TableSampler:
    """Seeded uniform choice among the legal actions of each table's mask row, one counter-based stream per table
    (:func:`table_legal_actions`): the draws of a table depend only on the seed, the table's index and how often it
    drew, so :meth:`mjenv.engine.core.Engine.random_step` draws them inside each chunk of tables on the engine's
    threads, bit-identically for every thread count.  (:class:`ActionSampler` draws from one stream in row order:
    the same law, other numbers.)

    ``TableSampler(seed, batch_size)``; ``sample(mask)`` draws one action per row of a bool ``[batch_size, A]``
    mask into ``actions`` (int64 ``[batch_size]``, reused) and returns it.
    """

    def __init__(self, seed: int | None, batch_size: int):
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.batch_size = int(batch_size)
        self.key = np.uint64(seed_state(seed)[0])
        """The uint64 key the tables' streams start from (:func:`seed_state` of the seed)."""
        self.draws = np.zeros(self.batch_size, np.int64)
        """int64 ``[B]``: how many numbers each table's stream has given."""
        self.actions = np.full(self.batch_size, -1, np.int64)
        """int64 ``[B]``: the last actions drawn (``-1``: a row with no legal action)."""
        self._entry = None

    def entry(self):
        """The compiled :func:`table_legal_actions` for C-contiguous ``(bool [B, A], int, int, uint64, int64 [B],
        int64 [B])``, without numba's type dispatch (loaded or compiled on the first call)."""
        if self._entry is None:
            args = (np.zeros((1, 1), np.bool_), 0, 0, np.uint64(0), np.zeros(1, np.int64), np.zeros(1, np.int64))
            table_legal_actions(*args)
            sig = tuple(numba.typeof(a) for a in args)
            self._entry = table_legal_actions.overloads[sig].entry_point
        return self._entry

    def sample(self, mask: np.ndarray) -> np.ndarray:
        """One uniformly random legal action per row of bool ``mask`` ``[batch_size, A]`` (``-1`` where none)."""
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.ndim != 2 or mask.shape[0] != self.batch_size:
            shape = getattr(mask, "shape", None)
            raise ValueError(f"mask must be a bool array [{self.batch_size}, A], got {getattr(mask, 'dtype', type(mask))} {shape}")
        self.entry()(np.ascontiguousarray(mask), 0, self.batch_size, self.key, self.draws, self.actions)
        return self.actions


_ENTRY = None


def _entry():
    """The compiled :func:`random_legal_actions` for C-contiguous ``(bool [B, A], uint64 [1], int64 [B])``,
    called without the dispatcher's type resolution (≈ 0.3 µs of a B = 1 call)."""
    global _ENTRY
    if _ENTRY is None:
        args = (np.zeros((1, 1), np.bool_), np.zeros(1, np.uint64), np.zeros(1, np.int64))
        random_legal_actions(*args)  # compiled (or loaded from the cache) for these types
        sig = tuple(numba.typeof(a) for a in args)
        _ENTRY = random_legal_actions.overloads[sig].entry_point
    return _ENTRY


def seed_state(seed: int | None) -> np.ndarray:
    """A fresh uint64 ``[1]`` stream state for ``seed`` (an int of any size; ``None``: from OS entropy)."""
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)
    # One SplitMix64 scramble, so that nearby seeds start far apart in the stream.
    z = (int(seed) + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return np.array([z ^ (z >> 31)], np.uint64)


class ActionSampler:
    """Seeded uniform choice among the legal actions of each mask row, compiled (see the module docstring).

    ``sample(mask)`` returns int64 ``[B]`` (``-1`` for rows with no legal action).  The result lives in a
    buffer the sampler reuses for the next call of the same ``B``; copy it to keep it.  ``sample(mask, out)``
    with a C-contiguous bool mask and int64 buffer (an engine's ``mask`` and the caller's action array) checks
    them once and calls the compiled kernel directly while the same two arrays come back (≈ 0.4 µs a call at
    B = 1 instead of ≈ 1.2 µs); reshaping either of them in place afterwards is not supported.

    ``threads``: such a call over at least ``2 ×`` :data:`mjenv.engine.threads.MIN_TABLES` rows runs in chunks on
    up to that many threads (the module docstring; ``None``: the cores, capped by ``MJENV_THREADS``; the default 1:
    the calling thread, which two cores do not beat).
    The actions and the stream are the same for every value.
    """

    def __init__(self, seed: int | None = 0, threads: int | None = 1):
        self.state = seed_state(seed)
        self.threads = TH.check_threads(threads)
        """Threads a call over many rows may run on (:mod:`mjenv.engine.threads`)."""
        self._out = np.empty(0, np.int64)
        unset = object()
        self._fast: tuple = (unset, unset)  # the last (mask, out) pair found fit for the entry point
        self._entry = None
        self._cuts: np.ndarray | None = None  # int64 chunk boundaries of that pair's rows when cut over threads
        self._starts = np.zeros(0, np.uint64)

    def sample(self, mask: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Uniformly random legal action per row of bool ``mask`` ``[B, A]`` (or ``[A]``: one row)."""
        if mask is self._fast[0] and out is self._fast[1]:
            # The pair checked last time (a batched loop passes the engine's mask and one buffer at every
            # step): the compiled entry point, without the checks and the dispatcher's type resolution.
            if self._cuts is None:
                self._entry(mask, self.state, out)
            else:
                self._sample_chunks(mask, out)
            return out
        if (
            type(mask) is np.ndarray
            and type(out) is np.ndarray
            and mask.dtype == np.bool_
            and out.dtype == np.int64
            and mask.ndim == 2
            and out.shape == (mask.shape[0],)
            and mask.flags.c_contiguous
            and out.flags.c_contiguous
        ):
            self._fast = (mask, out)
            self._entry = _entry()
            rows = mask.shape[0]
            self._cuts = None
            if self.threads > 1 and rows >= 2 * TH.MIN_TABLES:
                self._cuts = np.asarray(TH.even_bounds(rows, self.threads, TH.MIN_TABLES), np.int64)
                self._starts = np.zeros(len(self._cuts) - 1, np.uint64)
            if self._cuts is None:
                self._entry(mask, self.state, out)
            else:
                self._sample_chunks(mask, out)
            return out
        mask = np.asarray(mask)
        if mask.dtype != np.bool_:
            mask = mask.astype(bool)
        if mask.ndim == 1:
            mask = mask[None, :]
        if mask.ndim != 2:
            raise ValueError(f"mask must be [B, A] or [A], got shape {mask.shape}")
        if out is None:
            if self._out.shape[0] != mask.shape[0]:
                self._out = np.empty(mask.shape[0], np.int64)
            out = self._out
        elif out.shape != (mask.shape[0],) or out.dtype != np.int64:
            raise ValueError(f"out must be int64 [{mask.shape[0]}], got {out.dtype} {out.shape}")
        random_legal_actions(mask, self.state, out)
        return out

    def _sample_chunks(self, mask: np.ndarray, out: np.ndarray) -> None:
        """One call's rows in the chunks of ``_cuts``, on the threads: each from the state :func:`chunk_states` gives
        it (the same draws as one call)."""
        cuts, starts, entry = self._cuts, self._starts, self._entry
        chunk_states(mask, self.state, cuts, starts)
        bounds = cuts.tolist()

        def chunk(w: int, i: int) -> None:
            lo, hi = bounds[i], bounds[i + 1]
            entry(mask[lo:hi], starts[i : i + 1], out[lo:hi])

        TH.run_chunks(len(bounds) - 1, self.threads, chunk)
