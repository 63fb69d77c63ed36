"""Every core for one engine: the compiled game core run over chunks of the tables on a pool of threads.

``Engine(..., threads=N)`` cuts the tables of a kernel call (a step, the automatic moves after a deal, the
resumption after Python's pendings) into contiguous chunks (:func:`bounds`: large first, smaller towards the end)
and runs the compiled entry point (:mod:`mjenv.engine.entry`, compiled with ``nogil=True``) on them at once: on the calling
thread and on a process-wide pool, each thread taking the next chunk as it comes free (EnvPool's design, a
thread pool stepping shards of environments, with dynamic scheduling as numba's and OpenMP's parallel loops
have).  Tables share no state in the kernels but their scratch rows (``scr``), so each thread gets its own; a
chunk lists its tables left with a pending in its own slice of ``waiting``, and the lists are joined in chunk
order, which is the order one thread gives.  So results are bit-identical to ``threads=1``
(tests/test_threads.py; the differential test runs with ``--threads``).  A step is checked whole first
(``MODE_CHECK``), so an illegal action still changes nothing.  The observation encoders cut their rows the same
way on the engine's threads (:meth:`mjenv.encoding.observation.ObservationEncoder.encode`).

How many threads: ``threads=None`` (the default of :class:`~mjenv.engine.core.Engine`, hence of the vector
envs, the trainers, the arena of ``evaluate.py`` and the search's rollouts) takes :func:`default_threads`: the
cores this process may run on, capped by the environment variable ``MJENV_THREADS`` (``MJENV_THREADS=1``:
one thread everywhere; Ray tasks set it, each holding one CPU).  A call over fewer than ``2 ×``
:data:`MIN_TABLES` tables runs on the calling thread alone (the AEC env's single table pays nothing).
"""

from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from mjenv.engine.codes import MODE_CHECK, MODE_STEP

THREADS_ENV = "MJENV_THREADS"
"""Environment variable capping the threads an engine uses by default (a positive integer)."""

MIN_TABLES = 256
"""A call over fewer than ``2 × MIN_TABLES`` tables stays on the calling thread (the guided chunks of a longer one
shrink to ``MIN_TABLES // TAIL_TABLES_DIVISOR``).  Handing a call to the pool costs about 0.1 ms of CPU on this loaded
machine: with chunks of 128 tables a step of B = 512 paid 20 % more CPU than on one thread, at B = 4096 the difference
was within the noise (bench/scaling.py)."""

GUIDE = 1
"""Guided chunks (OpenMP's ``schedule(guided)``): each chunk takes ``1 / (GUIDE × threads)`` of the tables not yet
given out, at least ``MIN_TABLES // TAIL_TABLES_DIVISOR``.  The threads take chunks as they come free, so a thread
the machine holds back (a shared machine's other work) delays the call by one small chunk, not by a whole shard, and
the last chunks, small, leave little of one thread's work for the other to wait on (with equal chunks of 512 tables
at B = 4096 one thread waited on average half a chunk at the end of every step), in few chunks (7 at B = 4096 on two
threads: each costs a few µs of Python holding the GIL)."""

TAIL_TABLES_DIVISOR = 4
"""The smallest chunk is ``MIN_TABLES // TAIL_TABLES_DIVISOR`` tables (64): a thread already running takes the next
chunk for a few µs of Python, far less than the hand-over of a call to the pool that :data:`MIN_TABLES` pays for."""


def available_cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """The threads an engine uses when not told: :func:`available_cores`, capped by ``MJENV_THREADS``."""
    cores = available_cores()
    cap = os.environ.get(THREADS_ENV, "").strip()
    if not cap:
        return cores
    try:
        n = int(cap)
    except ValueError:
        raise ValueError(f"{THREADS_ENV} must be a positive integer, got {cap!r}") from None
    if n < 1:
        raise ValueError(f"{THREADS_ENV} must be a positive integer, got {cap!r}")
    return min(n, cores)


def check_threads(threads) -> int:
    """``threads`` as a count (``None``: :func:`default_threads`); a clear error for anything but a positive int."""
    if threads is None:
        return default_threads()
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be a positive integer or None, got {threads!r}")
    return int(threads)


_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0
_POOL_LOCK = threading.Lock()


def _pool(workers: int) -> ThreadPoolExecutor:
    """The process-wide pool, with at least ``workers`` threads (grown by replacing it)."""
    global _POOL, _POOL_SIZE
    with _POOL_LOCK:
        if _POOL is None or _POOL_SIZE < workers:
            old = _POOL
            _POOL = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mjenv-shard")
            _POOL_SIZE = workers
            if old is not None:
                old.shutdown(wait=False)
        return _POOL


class Shards:
    """Runs one engine's kernel calls over chunks of the tables on up to ``threads`` threads (see the module docstring).

    ``args`` is the engine's tuple of arrays every kernel call takes (``b8 … fcfg``, ``scr`` at ``scr_at``); each
    thread gets its own scratch and ``info``.  ``book(waiting, c)``, when given, books the numbers of the hands a
    chunk's kernel call ended (:meth:`mjenv.engine.core.Engine._book_numbers`), on the thread that ran it.
    """

    def __init__(self, threads: int, args: tuple, scr_at: int, book=None):
        self.threads = threads
        self._book = book
        self._args = args
        self._worker_args = []
        for w in range(threads):
            a = list(args)
            if w:
                a[scr_at] = np.zeros_like(args[scr_at])
            self._worker_args.append(tuple(a))
        self._infos = [np.zeros(2, np.int64) for _ in range(threads)]

    def count(self, k: int) -> int:
        """How many chunks a call over ``k`` tables is cut into (1: one call on this thread)."""
        return len(bounds(k, self.threads)) - 1

    def run(self, kernel, mode: int, idx: np.ndarray, acts: np.ndarray, waiting: np.ndarray, info: np.ndarray) -> int:
        """``kernel(mode, *args, idx, acts, waiting, info)`` over chunks of ``idx``: the same effect and return value
        (the tables left with a pending first in ``waiting``, in ``idx`` order) as one call."""
        k = len(idx)
        cuts = bounds(k, self.threads)
        m = len(cuts) - 1
        if m == 1:
            return kernel(mode, *self._args, idx, acts, waiting, info)
        if mode == MODE_STEP:  # all or nothing: check every action before any chunk moves
            kernel(MODE_CHECK, *self._args, idx, acts, waiting, info)
            if info[1] >= 0:
                return 0
        step = len(acts) == k
        counts = [0] * m
        args, infos, book = self._worker_args, self._infos, self._book

        def chunk(w: int, i: int) -> None:
            lo, hi = cuts[i], cuts[i + 1]
            c = counts[i] = kernel(mode, *args[w], idx[lo:hi], acts[lo:hi] if step else acts, waiting[lo:hi], infos[w])
            if c and book is not None:
                book(waiting[lo:hi], c)

        run_chunks(m, self.threads, chunk)
        return join(cuts, counts, waiting)

    def deal(self, deal, walls_of, advance, deal_args: tuple, idx, walls, dealers, seed, ids, waiting, none) -> int:
        """A re-deal of tables ``idx`` in chunks (:func:`deal_bounds`) on the threads: each chunk makes its walls
        (``walls_of(seed, ids, tiles, walls)``, :func:`mjenv.engine.table.seeded_walls`; ``ids`` None: ``walls``
        given), deals them (``deal``: :func:`mjenv.engine.table.deal_tables` with ``deal_args`` = (b8, b16, money,
        fresh8, fresh16), (tiles, cfg, ev, evn, mask)) and plays their automatic moves (``advance``: the entry point,
        ``MODE_ADVANCE``).  The tables left with a pending are listed first in ``waiting``, as one thread lists
        them; returns their number."""
        from mjenv.engine.codes import MODE_ADVANCE

        cuts = deal_bounds(len(idx), self.threads)
        m = len(cuts) - 1
        counts = [0] * m
        head, (tiles, cfg, ev, evn, mask) = deal_args
        args, infos, book = self._worker_args, self._infos, self._book

        def chunk(w: int, i: int) -> None:
            lo, hi = cuts[i], cuts[i + 1]
            if ids is not None:
                walls_of(seed, ids[lo:hi], tiles, walls[lo:hi])
            deal(*head, idx[lo:hi], walls[lo:hi], dealers[lo:hi], cfg, ev, evn, mask)
            c = counts[i] = advance(MODE_ADVANCE, *args[w], idx[lo:hi], none, waiting[lo:hi], infos[w])
            if c and book is not None:
                book(waiting[lo:hi], c)

        run_chunks(m, self.threads, chunk)
        return join(cuts, counts, waiting)


def join(cuts: list[int], counts: list[int], waiting: np.ndarray) -> int:
    """Join the lists of tables left with a pending that chunks ``cuts`` wrote at the start of their slices of
    ``waiting`` (``counts[i]`` each) into one list at its start, in chunk order; returns its length."""
    n = counts[0]
    for i in range(1, len(counts)):
        c = counts[i]
        if c:
            lo = cuts[i]
            waiting[n : n + c] = waiting[lo : lo + c]
            n += c
    return n


def run_chunks(m: int, threads: int, chunk) -> None:
    """``chunk(w, i)`` for every chunk ``i`` in ``0..m-1``, on up to ``threads`` threads: this one and pool threads,
    each taking the next chunk not taken yet (``w``: which thread, for its own scratch).  A thread the machine
    holds back takes fewer chunks; which chunk runs where never changes a result.  ``chunk`` calls compiled
    code that releases the GIL."""
    workers = min(threads, m)
    if workers == 1:
        for i in range(m):
            chunk(0, i)
        return
    taken = itertools.count()  # next() of a count is atomic under the GIL

    def work(w: int) -> None:
        while True:
            i = next(taken)
            if i >= m:
                return
            chunk(w, i)

    pool = _pool(workers - 1)
    futures = [pool.submit(work, w) for w in range(1, workers)]
    work(0)
    for f in futures:
        f.result()


DEAL_MIN_TABLES = 256
"""Fewest tables a chunk of a re-deal is given (:meth:`Shards.deal`).  Dealing a table and playing its first automatic
moves costs ≈ 2 µs, but handing a call to the pool costs more than the ≈ 80 tables a loop at B = 4096 re-deals per
step save there: on the idle machine that loop ran 1.80–1.95× on two threads with its re-deals on the calling thread
and 1.53–1.73× with them cut (docs/benchmarks.md), so only a large re-deal (a reset, a match's next hand) is cut."""


def even_bounds(k: int, threads: int, least: int) -> list[int]:
    """The boundaries of up to ``2 × threads`` equal chunks of ``k`` items, of at least ``least`` items each (one chunk
    for fewer than twice that): for work even across the items (a re-deal, :func:`deal_bounds`; the sampler's rows)."""
    m = max(1, min(2 * threads, k // least)) if threads > 1 else 1
    return [k * i // m for i in range(m + 1)]


def deal_bounds(k: int, threads: int) -> list[int]:
    """The chunk boundaries of a re-deal of ``k`` tables: :func:`even_bounds` of at least :data:`DEAL_MIN_TABLES`."""
    return even_bounds(k, threads, DEAL_MIN_TABLES)


def bounds(k: int, threads: int) -> list[int]:
    """The chunk boundaries of ``k`` tables for ``threads`` threads: guided chunks (:data:`GUIDE`), each
    ``ceil(left / (GUIDE × threads))`` tables of the ``left`` not given out yet, at least ``MIN_TABLES //
    TAIL_TABLES_DIVISOR``; one chunk for one thread or fewer than ``2 ×`` :data:`MIN_TABLES` tables."""
    if threads <= 1 or k < 2 * MIN_TABLES:
        return [0, k]
    share = GUIDE * threads
    tail = max(1, MIN_TABLES // TAIL_TABLES_DIVISOR)
    cuts = [0]
    lo = 0
    while lo < k:
        lo = min(k, lo + max(tail, -(-(k - lo) // share)))
        cuts.append(lo)
    return cuts
