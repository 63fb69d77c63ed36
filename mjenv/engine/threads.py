"""Every core for one engine: the compiled game core run over chunks of the tables on a pool of threads.

``Engine(..., threads=N)`` cuts the tables of a kernel call (a step, the automatic moves after a deal, the
resumption after Python's pendings) into contiguous chunks (:data:`CHUNKS_PER_THREAD` per thread) and runs the
compiled entry point (:mod:`mjenv.engine.entry`, compiled with ``nogil=True``) on them at once: on the calling
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
"""Fewest tables a chunk is given.  Handing a call to the pool costs about 0.1 ms of CPU on this loaded machine: with
chunks of 128 tables a step of B = 512 paid 20 % more CPU than on one thread, at B = 4096 the difference was within
the noise (bench/scaling.py)."""

CHUNKS_PER_THREAD = 4
"""Chunks per thread: the threads take chunks as they come free, so one the machine holds back (a shared machine's
other work) delays the call by one small chunk, not by a whole shard."""


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
    thread gets its own scratch and ``info``.
    """

    def __init__(self, threads: int, args: tuple, scr_at: int):
        self.threads = threads
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
        args, infos = self._worker_args, self._infos

        def chunk(w: int, i: int) -> None:
            lo, hi = cuts[i], cuts[i + 1]
            counts[i] = kernel(mode, *args[w], idx[lo:hi], acts[lo:hi] if step else acts, waiting[lo:hi], infos[w])

        run_chunks(m, self.threads, chunk)
        n = counts[0]
        for i in range(1, m):  # join the chunks' lists in order (each is at the start of its slice)
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


def bounds(k: int, threads: int) -> list[int]:
    """The chunk boundaries of ``k`` items for ``threads`` threads: :data:`CHUNKS_PER_THREAD` chunks per thread, of at
    least :data:`MIN_TABLES` items (one chunk below ``2 × MIN_TABLES``)."""
    m = max(1, min(threads * CHUNKS_PER_THREAD, k // MIN_TABLES)) if threads > 1 else 1
    return [k * i // m for i in range(m + 1)]
