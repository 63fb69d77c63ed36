"""The threaded engine (mjenv/engine/threads.py): bit-identical to one thread for every variant, seed and batch size."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

import mjenv
from mjenv.engine import threads as TH
from mjenv.engine.core import Engine, IllegalActionError
from tests.differential import CONFIGS, _policy, _valid_config, config_id, play_both

VARIANTS = mjenv.VARIANTS


@pytest.fixture
def small_shards(monkeypatch):
    """Shards of 4 tables (re-deals: of 2), so that small batches run on several threads too."""
    monkeypatch.setattr(TH, "MIN_TABLES", 4)
    monkeypatch.setattr(TH, "DEAL_MIN_TABLES", 2)


def _same(a: Engine, b: Engine, where: str) -> None:
    for f in fields(a.state):
        x, y = getattr(a.state, f.name), getattr(b.state, f.name)
        assert np.array_equal(x, y), f"{where}: state.{f.name} differs"
    assert np.array_equal(a.mask, b.mask), f"{where}: mask differs"
    for name in ("match_money", "balance", "session_over", "hand_number"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), f"{where}: {name} differs"
    assert a.n_decisions == b.n_decisions


def _play(variant: str, batch: int, seed: int, threads: int, hands: int = 2):
    """Random play with win-taking over ``hands`` hands of each match; every step's state, and at each hand's end
    the results, events and sessions (compared by the caller through the returned snapshots)."""
    eng = Engine(variant, batch, threads=threads)
    rng = np.random.default_rng(seed)
    eng.reset(seed=seed)
    snaps = []
    for hand in range(hands):
        while not eng.done.all():
            acts = _policy(eng.mask, rng)
            # now and then only some tables move (the ``tables=`` form)
            if rng.random() < 0.2:
                sub = np.flatnonzero(rng.random(batch) < 0.6)
                eng.step(acts[sub], tables=sub)
            else:
                eng.step(acts)
            snaps.append(("step", {f.name: getattr(eng.state, f.name).copy() for f in fields(eng.state)},
                          eng.mask.copy(), eng.match_money.copy(), eng.balance.copy()))
        snaps.append(("end", list(eng.results), [list(eng.events[b]) for b in range(batch)], list(eng.sessions),
                      eng.session_over.copy(), eng.n_decisions))
        live = np.flatnonzero(~eng.session_over)
        if len(live):
            eng.next_hand(seed=seed + 100 + hand, tables=live)
        over = np.flatnonzero(eng.session_over & eng.done)
        if len(over):
            eng.reset(seed=seed + 200 + hand, tables=over)
    return snaps


def _equal(x, y) -> bool:
    if isinstance(x, np.ndarray):
        return np.array_equal(x, y)
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(_equal(x[k], y[k]) for k in x)
    if isinstance(x, (list, tuple)):
        return len(x) == len(y) and all(_equal(a, b) for a, b in zip(x, y))
    return x == y


@pytest.mark.parametrize("variant", VARIANTS)
def test_threads_equal_one_thread(variant, small_shards):
    for batch, seed in ((1, 1), (9, 2), (37, 3)):
        one = _play(variant, batch, seed, threads=1)
        many = _play(variant, batch, seed, threads=3)
        assert len(one) == len(many)
        for i, (a, b) in enumerate(zip(one, many)):
            assert _equal(a, b), f"{variant} B={batch} seed {seed}: snapshot {i} ({a[0]}) differs"


def test_shards_are_used(small_shards, monkeypatch):
    """The comparison above runs on several shards (a Shards that never cut would make it vacuous)."""
    calls = []
    original = TH.Shards.run

    def run(self, kernel, mode, idx, *rest):
        calls.append(self.count(len(idx)))
        return original(self, kernel, mode, idx, *rest)

    deals = []
    original_deal = TH.Shards.deal

    def deal(self, *args):
        deals.append(len(TH.deal_bounds(len(args[4]), self.threads)) - 1)
        return original_deal(self, *args)

    monkeypatch.setattr(TH.Shards, "run", run)
    monkeypatch.setattr(TH.Shards, "deal", deal)
    eng = Engine("kawuxing3", 16, threads=3)
    eng.reset(seed=0)
    eng.step(_policy(eng.mask, np.random.default_rng(0)))
    assert max(calls) > 1  # several chunks (guided: smaller towards the end), taken by the threads as they come free
    eng.reset(seed=1, tables=np.arange(3, 13))  # a re-deal of some tables: walls, deal and first moves in chunks
    assert deals and max(deals) > 1


def test_sampler_on_threads_draws_as_one_thread(small_shards):
    """``ActionSampler(threads=N)`` cuts a call's rows into chunks, each from its own point of the stream: the same
    actions and the same stream state as one thread, row for row (rows with no legal action included)."""
    from mjenv.engine.sampling import ActionSampler

    rng = np.random.default_rng(3)
    for rows in (7, 8, 41, 300):
        one, many = ActionSampler(5, threads=1), ActionSampler(5, threads=3)
        a, b = np.empty(rows, np.int64), np.empty(rows, np.int64)
        for _ in range(3):
            mask = rng.random((rows, 111)) < 0.06
            mask[rng.random(rows) < 0.2] = False
            one.sample(mask, a)
            many.sample(mask, b)
            assert np.array_equal(a, b) and one.state[0] == many.state[0]
        assert many._cuts is None if rows < 8 else len(many._cuts) > 2


@pytest.mark.parametrize("cfg", [c for c in CONFIGS if _valid_config(c)][::4], ids=config_id)
def test_differential_with_threads(cfg, small_shards):
    """The lockstep comparison against the reference engine (tests/differential.py) on a threaded engine."""
    assert play_both(cfg, hands=32, batch=16, seed=5, threads=3) > 0


def test_illegal_action_changes_nothing_with_threads(small_shards):
    eng = Engine("gejiu", 16, threads=4)
    eng.reset(seed=4)
    before = {f.name: getattr(eng.state, f.name).copy() for f in fields(eng.state)}
    acts = _policy(eng.mask, np.random.default_rng(1))
    live = np.flatnonzero(~eng.done)
    bad = int(live[-1])
    acts[bad] = int(np.flatnonzero(~eng.mask[bad])[0])  # the last shard's table: an illegal action
    with pytest.raises(IllegalActionError, match=f"table {bad}"):
        eng.step(acts)
    for f in fields(eng.state):
        assert np.array_equal(getattr(eng.state, f.name), before[f.name]), f.name


def test_thread_counts(monkeypatch):
    monkeypatch.setenv(TH.THREADS_ENV, "1")
    assert TH.default_threads() == 1
    assert Engine("kawuxing3", 4).threads == 1
    monkeypatch.setenv(TH.THREADS_ENV, "999")
    assert TH.default_threads() == TH.available_cores()
    monkeypatch.delenv(TH.THREADS_ENV)
    assert Engine("kawuxing3", 4).threads == TH.available_cores()
    assert Engine("kawuxing3", 4, threads=3).threads == 3
    for bad in (0, -1, 1.5, "2", True):
        with pytest.raises(ValueError, match="threads must be"):
            Engine("kawuxing3", 4, threads=bad)
    monkeypatch.setenv(TH.THREADS_ENV, "two")
    with pytest.raises(ValueError, match="MJENV_THREADS"):
        TH.default_threads()


@pytest.mark.parametrize("version", ["mjenv-obs-v1", "mjenv-obs-v2"])
def test_encoding_on_threads(version, small_shards):
    """Observations encoded in shards on the engine's threads equal one thread's, bit for bit."""
    from mjenv.encoding.compact import encoder_for

    eng = Engine("liuwei", 40, threads=3)
    eng.reset(seed=9)
    enc = encoder_for(eng, obs_version=version)
    rng = np.random.default_rng(9)
    for _ in range(30):
        seats = eng.state.actor.astype(np.int64)
        many = enc.encode(eng.state, seats, engine=eng)
        eng.threads = 1
        one = enc.encode(eng.state, seats, engine=eng)
        eng.threads = 3
        assert np.array_equal(many.view(np.uint8), one.view(np.uint8))
        if eng.done.all():
            break
        eng.step(_policy(eng.mask, rng))
