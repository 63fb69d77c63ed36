"""Random self-play in one pass over the tables: the re-deal of finished tables, the random actions and the step,
all inside each chunk of tables on the engine's threads (:meth:`mjenv.engine.core.Engine.random_step`).

A loop of random play (the benchmarks, label and soak scripts) re-deals the tables whose hand is over, draws a
random legal action per table and steps.  Done as three engine calls, only the step is cut over the threads: the
re-deal of the ≈ 80 tables a step at B = 4096 finishes and the sampler's pass over every mask row stay on the calling
thread (≈ 10 % of a step's CPU, which caps two threads near 1.8×, docs/benchmarks.md "Threads"), and each cut call
pays a hand-over to the pool.  Here one hand-over serves all three: each chunk of tables (:func:`mjenv.engine.threads.bounds`)

1. deals a new match on its finished tables (:func:`mjenv.engine.table.deal_finished`: table ``b``'s ``j``-th such
   deal plays wall ``b + j × B`` of the seed, dealt by seat ``id mod n``) and plays their automatic moves,
2. draws each table's action from its own counter-based stream (:class:`mjenv.engine.sampling.TableSampler`),
3. steps its tables, and books the hands that ended (their numbers while the rows are in that core's cache, then
   the session and the lazy result: ``Engine._book_ended``);

the Python a deal needs per table (``results[b]`` back to None, a new session's row) runs in the chunk too, beside the
other thread's compiled calls.

Every table's work depends only on its own rows, the seed and its stream, so the results are bit-identical for every
thread count (tests/test_autoplay.py).  The rare pending a family leaves to Python stays for the calling thread: a
chunk lists such tables, the lists are joined and sorted (the same order for every cut) and ``Engine._run`` handles
them after the chunks; a chunk whose fresh deal left one (no family does today) stops after the deal, and the calling
thread then draws and steps that chunk itself.
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


def random_step(eng, sampler, seed: int) -> None:
    """One step of random play on every table of ``eng`` (see the module docstring and ``Engine.random_step``)."""
    B = eng.batch_size
    if sampler.batch_size != B:
        raise ValueError(f"the sampler draws for {sampler.batch_size} tables, the engine has {B}")
    if not eng._ever_dealt:
        raise RuntimeError("random_step before any hand was dealt: call reset() first")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int, got {seed!r}")
    play = eng._play
    if play is None:
        play = eng._play = _Play(eng)
    if eng._logs:  # complete the held logs of the tables about to be dealt: their events are read from the old hand
        for b in [b for b in eng._logs if eng._phase[b] == DONE]:
            eng._logs.pop(b)._detach()
    sh = eng._shards
    threads = 1 if sh is None else sh.threads
    cuts = TH.bounds(B, threads)
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
    counts, n_dealt, decided, blocked = [0] * m, [0] * m, [0] * m, [False] * m
    results, setitem, py_events, dealers = eng.results, list.__setitem__, eng._py_events, play.dealers
    record, sessions, book_ended = eng.record_events, eng._has_sessions, eng._book_ended

    def chunk(w: int, i: int) -> None:
        lo, hi = cuts[i], cuts[i + 1]
        a, info = args[w], infos[w]
        k = n_dealt[i] = deal(lo, hi, seed64, *deal_args)
        c = 0
        if k:
            rows = dealt[lo : lo + k]
            for b in rows.tolist():  # (the Python of a deal, per table: here, beside the other thread's kernels)
                setitem(results, b, None)
                if record and py_events[b]:
                    py_events[b] = []
            if sessions:
                eng.family.new_sessions(rows, dealers[lo : lo + k])
            c = kern(K.MODE_ADVANCE, *a, dealt[lo : lo + k], none, waiting[lo:hi], info)
            if c:
                if book(waiting[lo : lo + c], c) < c:  # a pending for Python: the calling thread goes on after it
                    counts[i], blocked[i] = c, True
                    return
                book_ended(waiting[lo : lo + c].copy())  # (every one ended: booked here)
                c = 0
        draw(mask, lo, hi, key, draws, acts)
        c = kern(K.MODE_STEP, *a, everyone[lo:hi], acts[lo:hi], waiting[lo:hi], info)
        if info.item(1) >= 0:  # pragma: no cover - a drawn action is legal
            raise RuntimeError(f"random_step drew an illegal action at table {lo + info.item(1)}")
        decided[i] = info.item(0)
        if c:
            if book(waiting[lo : lo + c], c) == c:  # every one ended: booked here (the session, the lazy result)
                book_ended(waiting[lo : lo + c].copy())
                c = 0
        counts[i] = c  # (a pending for Python: Engine._run after the join)

    TH.run_chunks(m, threads, chunk)
    k = TH.join(cuts, counts, waiting)
    eng.n_decisions += sum(decided)
    if k:
        waiting[:k].sort()  # (the same order for every cut)
        eng._run(k)
    for i in range(m):  # the chunks a pending stopped after their deal, now that Python has handled it
        if blocked[i]:
            lo, hi = cuts[i], cuts[i + 1]
            draw(mask, lo, hi, key, draws, acts)
            k = kern(K.MODE_STEP, *eng._args, everyone[lo:hi], acts[lo:hi], waiting, eng._info)
            eng.n_decisions += eng._info.item(0)
            if k:
                eng._run(k)
