"""Random self-play in one pass over the tables: the re-deal of finished tables, the random actions and the step,
all inside each chunk of tables on the engine's threads (:meth:`mjenv.engine.core.Engine.random_step`).

A loop of random play (the benchmarks, label and soak scripts) re-deals the tables whose hand is over, draws a
random legal action per table and steps.  Done as three engine calls, only the step is cut over the threads: the
re-deal of the ≈ 80 tables a step at B = 4096 finishes and the sampler's pass over every mask row stay on the calling
thread (≈ 10 % of a step's CPU, which caps two threads near 1.8×, docs/benchmarks.md "Threads"), and each cut call
pays a hand-over to the pool.  Here one hand-over serves all three: each chunk of tables (:func:`play_bounds`)

1. deals a new match on its finished tables (:func:`mjenv.engine.table.deal_finished`: table ``b``'s ``j``-th such
   deal plays wall ``b + j × B`` of the seed, dealt by seat ``id mod n``) and plays their automatic moves,
2. draws each table's action from its own counter-based stream (:class:`mjenv.engine.sampling.TableSampler`),
3. steps its tables, and books the hands that ended (their numbers while the rows are in that core's cache, then
   the session and the lazy result: ``Engine._book_ended``);

the Python a deal needs per table (``results[b]`` back to None, a new session's row) runs in the chunk too, beside the
other thread's compiled calls.

``random_step(..., steps=n)`` plays ``n`` such steps in one call, each chunk playing all ``n`` on its tables before
the next chunk (tables share nothing, so no chunk waits for another between steps): one hand-over to the pool and
one wait for the last chunk serve ``n`` steps (chunks of at most :data:`PLAY_TABLES` tables, :func:`play_bounds`).
The same play as ``n`` calls of one step.

Every table's work depends only on its own rows, the seed and its stream, so the results are bit-identical for every
thread count and every ``steps`` (tests/test_autoplay.py).  The rare pending a family leaves to Python (none does
today) stays for the calling thread: a chunk that meets one stops there (after its deal or after its step), and after
the chunks the calling thread handles each stopped chunk's pendings (``Engine._run``), finishes its step and plays its
remaining steps; a table's play depends on its own rows only, so the order of the chunks changes nothing.
"""

from __future__ import annotations

import numpy as np

from mjenv.engine import codes as K
from mjenv.engine import table as T
from mjenv.engine import threads as TH
from mjenv.engine import yzscore
from mjenv.engine.calls import _direct_entry
from mjenv.engine.state import DONE


class _Play:
    """An engine's buffers and compiled entries for :func:`random_step`, made on its first call."""

    def __init__(self, eng):
        B = eng.batch_size
        self.redeals = np.zeros(B, np.int64)  # deals made here per table (the next wall id: b + B × (redeals + 1))
        self.dealt = np.zeros(B, np.int64)  # a chunk's dealt tables, at the chunk's rows
        self.ids = np.zeros(B, np.uint64)
        self.walls = np.zeros((B, eng.wall_size), np.int8)
        self.dealers = np.zeros(B, np.int64)
        wind = -1
        if eng._cfg[K.C_YZ + yzscore.YZ_ON]:  # the round wind of a new session (Yangzhou's judging reads it)
            from mjenv.rules.scoring import yangzhou as Y

            wind = int(Y.round_wind(0))
        start = float(eng.family.starting_balance())
        # every array argument of table.deal_finished after (lo, hi, seed)
        self.deal_args = (self.redeals, eng._b8, eng._b16, eng._money, eng._fresh8, eng._fresh16, eng.tiles, eng._cfg,
                          eng._ev, eng._evn, eng.mask, eng._pend, wind, eng.match_money, eng.hand_number,
                          eng.session_over, eng.balance, start, self.dealt, self.ids, self.walls, self.dealers)  # fmt: skip
        example = (0, 0, np.uint64(0), *self.deal_args)
        T.deal_finished(*example)  # (loaded or compiled for these types; deals nothing)
        self.deal = _direct_entry(T.deal_finished, example)


def random_step(eng, sampler, seed: int, steps: int = 1) -> None:
    """``steps`` steps of random play on every table of ``eng`` (see the module docstring and ``Engine.random_step``)."""
    B = eng.batch_size
    if sampler.batch_size != B:
        raise ValueError(f"the sampler draws for {sampler.batch_size} tables, the engine has {B}")
    if not eng._ever_dealt:
        raise RuntimeError("random_step before any hand was dealt: call reset() first")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int, got {seed!r}")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    n = int(steps)
    play = eng._play
    if play is None:
        play = eng._play = _Play(eng)
    sh = eng._shards
    threads = 1 if sh is None else sh.threads
    cuts = play_bounds(B, threads, n)
    m = len(cuts) - 1
    if sh is None:
        args, infos = [eng._args], [eng._info]
    else:
        args, infos = sh._worker_args, sh._infos
    kern = eng._step_kernel or eng._entry()
    deal, deal_args = play.deal, play.deal_args
    seed64 = np.uint64(int(seed) & ((1 << 64) - 1))
    draw, key, draws, acts = sampler.entry(), sampler.key, sampler.draws, sampler.actions
    book, waiting, dealt, everyone, none, mask = eng._book_numbers, eng._waiting, play.dealt, eng._all, eng._none, eng.mask
    counts, decided = [0] * m, [0] * m
    nxt = [0] * m  # the next step each chunk plays
    blocked = [0] * m  # 1: a chunk stopped after its deal left a pending for Python; 2: after its step did
    results, setitem, py_events, dealers = eng.results, list.__setitem__, eng._py_events, play.dealers
    record, sessions, book_ended, logs, phase = eng.record_events, eng._has_sessions, eng._book_ended, eng._logs, eng._phase

    def chunk(w: int, i: int) -> None:
        lo, hi = cuts[i], cuts[i + 1]
        a, info = args[w], infos[w]
        tables, row_acts, row_wait = everyone[lo:hi], acts[lo:hi], waiting[lo:hi]  # (views made once a call)
        for j in range(nxt[i], n):
            if logs:  # complete the held logs of the tables about to be dealt: their events are read from the old hand
                for b in list(logs):  # (a copy: another chunk may pop its own tables meanwhile)
                    if lo <= b < hi and phase[b] == DONE:
                        logs.pop(b)._detach()
            k = deal(lo, hi, seed64, *deal_args)
            if k:
                rows = dealt[lo : lo + k]
                for b in rows.tolist():  # (the Python of a deal, per table: here, beside the other thread's kernels)
                    setitem(results, b, None)
                    if record and py_events[b]:
                        py_events[b] = []
                if sessions:
                    eng.family.new_sessions(rows, dealers[lo : lo + k])
                c = kern(K.MODE_ADVANCE, *a, dealt[lo : lo + k], none, row_wait, info)
                if c:
                    if book(waiting[lo : lo + c], c) < c:  # a pending for Python: the calling thread goes on after it
                        counts[i], blocked[i], nxt[i] = c, 1, j
                        return
                    book_ended(waiting[lo : lo + c].copy())  # (every one ended: booked here)
            draw(mask, lo, hi, key, draws, acts)
            c = kern(K.MODE_STEP, *a, tables, row_acts, row_wait, info)
            if info.item(1) >= 0:  # pragma: no cover - a drawn action is legal
                raise RuntimeError(f"random_step drew an illegal action at table {lo + info.item(1)}")
            decided[i] += info.item(0)
            if c:
                if book(waiting[lo : lo + c], c) < c:  # a pending for Python: handled after the join
                    counts[i], blocked[i], nxt[i] = c, 2, j + 1
                    return
                book_ended(waiting[lo : lo + c].copy())  # (every one ended: booked here; the session, the result)
        nxt[i] = n

    TH.run_chunks(m, threads, chunk)
    eng.n_decisions += sum(decided)
    decided[:] = [0] * m
    # What a pending for Python stopped (no family leaves one today): the calling thread handles each stopped chunk's
    # pendings, finishes its step and plays its remaining steps.  Every table's play depends on its own rows only, so
    # handling one chunk's tables before another's gives what one thread gives.
    for i in range(m):
        while blocked[i]:
            lo, hi, c = cuts[i], cuts[i + 1], counts[i]
            waiting[:c] = waiting[lo : lo + c]
            eng._run(c)
            if blocked[i] == 1:  # the step of the chunk whose deal left the pending
                draw(mask, lo, hi, key, draws, acts)
                k = kern(K.MODE_STEP, *eng._args, everyone[lo:hi], acts[lo:hi], waiting, eng._info)
                eng.n_decisions += eng._info.item(0)
                if k:
                    eng._run(k)
                nxt[i] += 1
            blocked[i] = 0
            chunk(0, i)
            eng.n_decisions += decided[i]
            decided[i] = 0


PLAY_TABLES = 1024
"""Most tables a chunk of a call of several steps (:func:`play_bounds`) plays them on.  Each chunk-step passes the
GIL 4–6 times between its compiled calls, and on two free cores a thread waits for it ≈ 3–6 µs a chunk-step, so
fewer chunks pay less: with chunks of at most 256 tables (≈ 0.6 MB of rows, which stay in a core's 1 MB L2 cache
from one step to the next) two threads made 2.87 M decisions/s against 3.03 M with 1024 (193 rounds), and one
thread's CPU per decision was the same with either (docs/benchmarks.md, "Several steps a call")."""

PLAY_TAIL = 16
"""Fewest tables a chunk of a call of several steps is given (the last ones, :func:`play_bounds`): the thread that
finishes first waits for at most one such chunk's ``steps`` steps (16 × 8 table-steps ≈ 0.1 ms at B = 4096, against
≈ 13 ms of work per thread)."""


def play_bounds(k: int, threads: int, steps: int) -> list[int]:
    """The chunk boundaries of :func:`random_step` over ``k`` tables.  One step: :func:`mjenv.engine.threads.bounds`
    (each chunk's rows are touched once, so only the hand-over and the last chunk count).  Several steps: guided
    chunks (each ``1 / threads`` of the tables not yet given out), of at most :data:`PLAY_TABLES` tables (on one thread
    too) and at least :data:`PLAY_TAIL`; one thread's blocks when the call has fewer than ``2 ×``
    :data:`mjenv.engine.threads.MIN_TABLES` table-steps."""
    if steps == 1:
        return TH.bounds(k, threads)
    share = threads if threads > 1 and k * steps >= 2 * TH.MIN_TABLES else 1
    cuts, lo = [0], 0
    while lo < k:
        lo = min(k, lo + min(PLAY_TABLES, max(PLAY_TAIL, -(-(k - lo) // share))))
        cuts.append(lo)
    return cuts
