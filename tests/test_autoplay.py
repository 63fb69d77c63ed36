"""``Engine.random_step`` (mjenv/engine/autoplay.py): the re-deal, the random actions and the step in one pass over the
tables' chunks; the same play as the three separate calls, bit-identical for every thread count."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

import mjenv
from mjenv.engine import autoplay
from mjenv.engine import threads as TH
from mjenv.engine.core import Engine
from mjenv.engine.sampling import TableSampler, table_legal_actions
from tests.test_threads import _equal

VARIANTS = mjenv.VARIANTS


@pytest.fixture
def small_shards(monkeypatch):
    """Chunks of a few tables, so that small batches run on several threads."""
    monkeypatch.setattr(TH, "MIN_TABLES", 4)


def _snapshot(eng: Engine, sampler: TableSampler) -> tuple:
    return (
        {f.name: getattr(eng.state, f.name).copy() for f in fields(eng.state)},
        eng.mask.copy(), eng.match_money.copy(), eng.balance.copy(), eng.session_over.copy(), eng.hand_number.copy(),
        eng.n_decisions, sampler.draws.copy(), sampler.actions.copy(),
    )  # fmt: skip


def _fused(variant, batch, seed, threads, steps, record_events=False):
    eng = Engine(variant, batch, threads=threads, record_events=record_events)
    eng.reset(seed=seed)
    sampler = TableSampler(seed + 1, batch)
    snaps = []
    for i in range(steps):
        eng.random_step(sampler, seed=seed)
        snaps.append(_snapshot(eng, sampler))
        if i % 7 == 0:  # the results and sessions of the hands ended so far (a read builds them)
            snaps.append((list(eng.results), list(eng.sessions)))
            if record_events:
                snaps.append([list(eng.events[b]) for b in range(batch)])
    return snaps


def _classic(variant, batch, seed, steps):
    """The same play as three engine calls: each finished table reset with the wall id and dealer ``random_step``
    gives it, the actions drawn by the sampler over every row, then a step."""
    eng = Engine(variant, batch, threads=1, record_events=False)
    eng.reset(seed=seed)
    sampler = TableSampler(seed + 1, batch)
    redeals = np.zeros(batch, np.int64)
    snaps = []
    for i in range(steps):
        done = np.flatnonzero(eng.done)
        if len(done):
            redeals[done] += 1
            ids = done + batch * redeals[done]
            eng.reset(seed=seed, tables=done, table_ids=ids, dealer=ids % eng.n)
        eng.step(sampler.sample(eng.mask))
        snaps.append(_snapshot(eng, sampler))
        if i % 7 == 0:
            snaps.append((list(eng.results), list(eng.sessions)))
    return snaps


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_step_equals_reset_sample_step(variant):
    """One thread: the fused step plays exactly what reset + sample + step play (state, masks, money, results,
    sessions, decisions, draws)."""
    steps = 260 if variant == "kawuxing3" else 160
    assert _equal(_fused(variant, 6, 3, 1, steps), _classic(variant, 6, 3, steps))


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_step_threads_equal_one_thread(variant, small_shards):
    for batch, seed in ((1, 1), (23, 2), (61, 4)):
        one = _fused(variant, batch, seed, 1, 150)
        assert _equal(one, _fused(variant, batch, seed, 2, 150)), (variant, batch, 2)
        assert _equal(one, _fused(variant, batch, seed, 3, 150)), (variant, batch, 3)


def _multi(variant, batch, seed, threads, steps, total, record_events=False):
    """``total`` steps of the fused loop played ``steps`` at a time; a snapshot after every call (with the results and
    sessions, and the events when recorded)."""
    eng = Engine(variant, batch, threads=threads, record_events=record_events)
    eng.reset(seed=seed)
    sampler = TableSampler(seed + 1, batch)
    snaps = []
    for _ in range(total // steps):
        eng.random_step(sampler, seed=seed, steps=steps)
        snaps.append(_snapshot(eng, sampler))
        snaps.append((list(eng.results), list(eng.sessions)))
        if record_events:
            snaps.append([list(eng.events[b]) for b in range(batch)])
    return snaps


@pytest.fixture
def small_blocks(monkeypatch):
    """Chunks of a few tables for calls of several steps, so that small batches run in many chunks on several
    threads."""
    monkeypatch.setattr(TH, "MIN_TABLES", 4)
    monkeypatch.setattr(autoplay, "PLAY_TABLES", 8)
    monkeypatch.setattr(autoplay, "PLAY_TAIL", 2)


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_steps_equal_single_steps(variant, small_blocks):
    """``steps=n`` plays what ``n`` calls of one step play (state, masks, money, results, sessions, decisions, draws
    after every call), on one, two and three threads, for odd batch sizes cut into many chunks."""
    total = 120
    for batch, seed, runs in ((23, 2, ((1, 8), (2, 8), (3, 8), (2, 3))), (61, 4, ((1, 5), (2, 8), (3, 3)))):
        one = _multi(variant, batch, seed, 1, 1, total)
        for threads, steps in runs:
            assert len(autoplay.play_bounds(batch, threads, steps)) > 3  # (several chunks)
            got = _multi(variant, batch, seed, threads, steps, total)
            want = [x for i in range(steps, total + 1, steps) for x in one[2 * i - 2 : 2 * i]]
            assert _equal(want, got), (variant, batch, threads, steps)


def test_random_steps_with_events_on_threads(small_blocks):
    for variant in ("kawuxing3", "yangzhou"):
        one = _multi(variant, 19, 5, 1, 1, 96, True)
        got = _multi(variant, 19, 5, 3, 8, 96, True)
        assert _equal([x for i in range(8, 97, 8) for x in one[3 * i - 3 : 3 * i]], got), variant


@pytest.mark.parametrize("variant", ["kawuxing3", "yangzhou", "liuwei"])
def test_random_steps_stopped_by_a_pending(variant, small_blocks, monkeypatch):
    """A chunk that meets a pending for Python stops there and the calling thread finishes it: the same play.  No
    family leaves such a pending today, so the chunks' booking here says one of every few ended hands is one (it is
    booked by ``Engine._run`` on the calling thread instead)."""
    import itertools

    made = []
    real_init = Engine.__init__

    def init(self, *a, **k):
        real_init(self, *a, **k)
        made.append(self)
        real = self._book_numbers
        calls = itertools.count()

        def book(waiting, k, every=False):
            ended = real(waiting, k, every)
            if waiting is not self._waiting and ended and next(calls) % 3 == 0:  # (a chunk's call, not _run's)
                return ended - 1
            return ended

        self._book_numbers = book

    one = _multi(variant, 23, 6, 1, 1, 96)
    monkeypatch.setattr(Engine, "__init__", init)
    for threads, steps in ((1, 1), (2, 1), (2, 8), (3, 4)):
        got = _multi(variant, 23, 6, threads, steps, 96)
        assert _equal([x for i in range(steps, 97, steps) for x in one[2 * i - 2 : 2 * i]], got), (threads, steps)
    assert made and all(e._book_numbers.__name__ == "book" for e in made)


def test_play_bounds():
    """Chunks cover the tables once, in order: one step as the engine's other calls; several steps capped for the
    cache, guided over the threads, the last ones small."""
    for k, threads, steps in ((4096, 2, 8), (4096, 1, 8), (4096, 3, 4), (4096, 2, 1), (300, 2, 8), (23, 2, 8), (1, 3, 5)):
        cuts = autoplay.play_bounds(k, threads, steps)
        sizes = np.diff(cuts)
        assert cuts[0] == 0 and cuts[-1] == k and (sizes > 0).all()
        if steps == 1:
            assert cuts == TH.bounds(k, threads)
        else:
            assert sizes.max() <= autoplay.PLAY_TABLES
    many = np.diff(autoplay.play_bounds(4096, 2, 8))
    assert many[-1] == autoplay.PLAY_TAIL and (np.diff(many) <= 0).all()
    assert autoplay.play_bounds(23, 2, 8) == [0, 23]  # (too little work to hand over)


def test_random_step_with_events_on_threads(small_shards):
    assert _equal(_fused("kawuxing3", 19, 5, 1, 120, True), _fused("kawuxing3", 19, 5, 3, 120, True))
    assert _equal(_fused("yangzhou", 19, 5, 1, 120, True), _fused("yangzhou", 19, 5, 3, 120, True))


def test_random_step_uses_the_threads(small_shards, monkeypatch):
    """A batch of many chunks runs them on the pool threads (the same results: the tests above)."""
    import threading

    seen = set()
    run = TH.run_chunks

    def spy(m, threads, chunk):
        def wrapped(w, i):
            seen.add(threading.get_ident())
            chunk(w, i)

        run(m, threads, wrapped)

    monkeypatch.setattr(TH, "run_chunks", spy)
    eng = Engine("kawuxing3", 64, threads=2, record_events=False)
    eng.reset(seed=1)
    sampler = TableSampler(0, 64)
    for _ in range(200):
        eng.random_step(sampler, seed=1)
        if len(seen) > 1:
            break
    assert len(seen) >= 2  # the calling thread and a pool thread (which one may change from step to step)


def test_random_step_refuses_bad_input():
    eng = Engine("kawuxing3", 4, record_events=False)
    with pytest.raises(RuntimeError, match="reset"):
        eng.random_step(TableSampler(0, 4), seed=0)
    eng.reset(seed=0)
    before = _snapshot(eng, TableSampler(0, 4))
    with pytest.raises(ValueError, match="4"):
        eng.random_step(TableSampler(0, 5), seed=0)
    with pytest.raises(ValueError, match="seed"):
        eng.random_step(TableSampler(0, 4), seed="x")
    for steps in (0, -2, True, 2.0, None):
        with pytest.raises(ValueError, match="steps"):
            eng.random_step(TableSampler(0, 4), seed=0, steps=steps)
    assert _equal(before, _snapshot(eng, TableSampler(0, 4)))
    with pytest.raises(ValueError, match="batch_size"):
        TableSampler(0, 0)
    with pytest.raises(ValueError, match="mask"):
        TableSampler(0, 4).sample(np.zeros((3, 111), bool))


def test_table_sampler_draws_do_not_depend_on_the_cut():
    rng = np.random.default_rng(0)
    mask = rng.random((50, 111)) < 0.05
    mask[7] = False
    whole = TableSampler(3, 50)
    a = whole.sample(mask).copy()
    assert a[7] == -1 and whole.draws[7] == 0
    legal = [np.flatnonzero(r) for r in mask]
    assert all(a[b] in legal[b] for b in range(50) if b != 7)
    parts = TableSampler(3, 50)
    out = np.full(50, -9, np.int64)
    for lo, hi in ((30, 50), (0, 11), (11, 30)):  # any order, any cut
        table_legal_actions(mask, lo, hi, parts.key, parts.draws, out)
    assert np.array_equal(out, a) and np.array_equal(parts.draws, whole.draws)
    # a row's next draws follow its own count only: uniform over its legal actions
    one = np.zeros((1, 111), bool)
    one[0, [3, 40, 90]] = True
    s = TableSampler(9, 1)
    counts = np.bincount([s.sample(one)[0] for _ in range(3000)], minlength=111)[[3, 40, 90]]
    assert counts.min() > 900
