"""Every core for one engine: the compiled game core run over shards of the tables on a pool of threads.

``Engine(..., threads=N)`` cuts the tables of a kernel call (a step, the automatic moves after a deal, the
resumption after Python's pendings) into ``N`` contiguous shards and runs the compiled entry point
(:mod:`mjenv.engine.entry`, compiled with ``nogil=True``) on each at once: one on the calling thread, the others
on a process-wide pool (EnvPool's design: a thread pool stepping shards of environments).  Tables share no
state in the kernels but their scratch rows (``scr``), so each shard gets its own; a shard lists its tables
left with a pending in its own slice of ``waiting``, and the lists are joined in shard order, which is the
order one thread gives.  So results are bit-identical to ``threads=1`` (tests/test_threads.py; the
differential test runs with ``--threads``).  A step is checked whole first (``MODE_CHECK``), so an illegal action
still changes nothing.

How many threads: ``threads=None`` (the default of :class:`~mjenv.engine.core.Engine`, hence of the vector
envs, the trainers, the arena of ``evaluate.py`` and the search's rollouts) takes :func:`default_threads`: the
cores this process may run on, capped by the environment variable ``MJENV_THREADS`` (``MJENV_THREADS=1``:
one thread everywhere).  A call with fewer than :data:`MIN_TABLES` tables per thread uses fewer threads (one
below ``2 × MIN_TABLES``: the AEC env's single table pays nothing).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from mjenv.engine.codes import MODE_CHECK, MODE_STEP

THREADS_ENV = "MJENV_THREADS"
"""Environment variable capping the threads an engine uses by default (a positive integer)."""

MIN_TABLES = 64
"""Fewest tables a shard is given: below this a thread's start costs more than it saves (measured: bench/scaling.py)."""


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
    """Runs one engine's kernel calls over up to ``threads`` shards (see the module docstring).

    ``args`` is the engine's tuple of arrays every kernel call takes (``b8 … fcfg``, ``scr`` at ``scr_at``); each
    shard gets its own scratch and ``info``.
    """

    def __init__(self, threads: int, args: tuple, scr_at: int):
        self.threads = threads
        self._args = args
        self._scr_at = scr_at
        self._shard_args = []
        for i in range(threads):
            a = list(args)
            if i:
                a[scr_at] = np.zeros_like(args[scr_at])
            self._shard_args.append(tuple(a))
        self._infos = [np.zeros(2, np.int64) for _ in range(threads)]

    def count(self, k: int) -> int:
        """How many shards a call over ``k`` tables is cut into."""
        return len(bounds(k, self.threads)) - 1

    def run(self, kernel, mode: int, idx: np.ndarray, acts: np.ndarray, waiting: np.ndarray, info: np.ndarray) -> int:
        """``kernel(mode, *args, idx, acts, waiting, info)`` over shards of ``idx``: the same effect and return value
        (the tables left with a pending first in ``waiting``, in ``idx`` order) as one call."""
        k = len(idx)
        cuts = bounds(k, self.threads)
        m = len(cuts) - 1
        if m == 1:
            return kernel(mode, *self._args, idx, acts, waiting, info)
        if mode == MODE_STEP:  # all or nothing: check every action before any shard moves
            kernel(MODE_CHECK, *self._args, idx, acts, waiting, info)
            if info[1] >= 0:
                return 0
        step = len(acts) == k
        parts = []
        for i in range(m):
            lo, hi = cuts[i], cuts[i + 1]
            parts.append((kernel, mode, *self._shard_args[i], idx[lo:hi], acts[lo:hi] if step else acts,
                          waiting[lo:hi], self._infos[i]))  # fmt: skip
        counts = run_parts(parts)
        n = counts[0]
        for i in range(1, m):  # join the shards' lists in order (each is at the start of its slice)
            c = counts[i]
            if c:
                lo = cuts[i]
                waiting[n : n + c] = waiting[lo : lo + c]
                n += c
        return n


def run_parts(parts: list[tuple]) -> list:
    """``[f(*args) for f, *args in parts]``, the first on this thread and the others at once on the pool (each
    ``f`` a compiled function that releases the GIL)."""
    if len(parts) == 1:
        return [_call(parts[0])]
    pool = _pool(len(parts) - 1)
    futures = [pool.submit(_call, p) for p in parts[1:]]
    first = _call(parts[0])
    return [first] + [f.result() for f in futures]


def bounds(k: int, threads: int) -> list[int]:
    """The shard boundaries of ``k`` items over at most ``threads`` shards of at least :data:`MIN_TABLES` items."""
    m = max(1, min(threads, k // MIN_TABLES))
    return [k * i // m for i in range(m + 1)]


def _call(part: tuple):
    return part[0](*part[1:])
