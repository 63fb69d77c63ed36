"""The search's belief over a hand's history (``agents/players/searchbelief.py``: ``history_discards``,
``past_hands``, ``discard_weights`` with later discards, ``SearchAgent(belief_depth=...)``)."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.players.search import SearchAgent
from agents.players.searchbelief import discard_weights, history_discards, last_discards, past_hands
from mjenv.engine.core import Engine
from mjenv.engine.worlds import sample_worlds


def _play(seed, B=12, steps=40):
    """Yield ``(engine, table, seat)`` at every live decision of ``steps`` steps of the fast player's self-play."""
    eng = Engine("kawuxing3", B, record_events=False)
    eng.reset(seed=seed)
    fast = make_agent("fast").player
    acts = np.zeros(B, np.int64)
    for _ in range(steps):
        for b in np.flatnonzero(~eng.done):
            yield eng, int(b), int(eng.state.actor[b])
        fast.decide(eng, out=acts)
        eng.step(acts)


def test_history_facts_are_public_and_extend_the_latest_discards():
    """Facts are the opponents' river entries (tile and time), newest first, at most ``depth`` each, with the
    opponent's later discards; depth 1 keeps only facts without later discards, which are ``last_discards``' facts;
    a sampled world gives the same facts as the true table (they are public)."""
    deep = 0
    for eng, b, s in _play(seed=5):
        st = eng.state
        facts = history_discards(eng, b, s, 4)
        for o, t, tau, later in facts:
            k = int(st.river_len[b, o])
            times = list(st.river_time[b, o, :k])
            i = times.index(tau)
            assert o != s and not st.revealed[b, o] and st.river[b, o, i] == t
            assert list(later) == [int(x) for x in st.river[b, o, i + 1 : k]]
            deep += bool(later)
        assert [f[:3] for f in history_discards(eng, b, s, 1)] == [f for f in last_discards(eng, b, s)
                                                                   if f in [g[:3] for g in facts]]
        if facts:
            w = eng.sample_worlds(b, s, 1, seed=3)
            assert history_discards(w, 0, s, 4) == facts
    assert deep > 50
    eng = Engine("kawuxing3", 1, record_events=False)
    eng.reset(seed=1)
    with pytest.raises(ValueError, match="depth"):
        history_discards(eng, 0, 0, 0)


def test_past_hands_keep_the_tile_count_and_are_deterministic():
    """The hand before a discard holds the hand now plus one tile, drawn-since tiles taken from the hand now and the
    later discards only; the same ``rng`` seed gives the same hands; bad input is refused."""
    rng = np.random.default_rng(0)
    hands = np.zeros((50, 34), np.int8)
    for r in range(50):
        np.add.at(hands[r], rng.integers(0, 34, 13), 1)
    later = (5, 5, 20)
    got = past_hands(hands, 7, later, np.random.default_rng(1), tsumo=2.0)
    assert (got.sum(1) == 14).all() and (got >= 0).all()
    pool = hands.astype(int) + np.bincount(later, minlength=34)
    pool[:, 7] += 1
    assert (got <= pool).all()  # only tiles held now, discarded later or the discarded tile
    assert (got == past_hands(hands, 7, later, np.random.default_rng(1), tsumo=2.0)).all()
    assert (past_hands(hands, 7, (), rng) == hands + np.eye(34, dtype=np.int8)[7]).all()
    with pytest.raises(ValueError, match="same number"):
        past_hands(np.vstack([hands[:1], hands[:1] * 0]), 7, later, rng)
    with pytest.raises(ValueError, match="tsumo"):
        past_hands(hands, 7, later, rng, tsumo=0.0)
    with pytest.raises(ValueError, match="counts"):
        past_hands(hands[:, :10], 7, later, rng)


def test_history_weights_favour_the_true_hands_and_are_deterministic():
    """In the true table the player re-makes its earlier discards (with later ones) far more often than in
    uniformly sampled worlds (measured 0.89 / 0.23 at the default ``TSUMO``); weights lie in [eps, 1] and repeat
    for a seed."""
    fast = make_agent("fast").player
    scratch = Engine("kawuxing3", 32, record_events=False)
    scratch.reset(seed=0)
    true_w, world_w = [], []
    for eng, b, s in _play(seed=6, steps=50):
        facts = [f for f in history_discards(eng, b, s, 4) if f[3]]
        if not facts:
            continue
        f = facts[:1]
        true_w.append(discard_weights(sample_worlds(eng, b, s, 1, seed=1, _identity=True), [0], f, fast, scratch, 0.0,
                                      seed=9)[0])
        worlds = eng.sample_worlds(b, s, 32, seed=2)
        w1 = discard_weights(worlds, np.arange(32), f, fast, scratch, 0.25, seed=9)
        w2 = discard_weights(worlds, np.arange(32), f, fast, scratch, 0.25, seed=9)
        assert (w1 == w2).all() and np.isin(w1, (0.25, 1.0)).all()
        world_w.append((w1 == 1).mean())
    assert len(true_w) > 60
    assert np.mean(true_w) >= 0.7 and np.mean(world_w) < 0.45


def test_search_with_belief_depth_is_deterministic_and_refuses_bad_depth():
    """``belief_depth=K``: the worlds are weighted by up to K discards per opponent; the agent repeats itself for a
    seed; ``belief_depth`` < 1 is refused."""
    eng = Engine("kawuxing3", 8, record_events=False)
    eng.reset(seed=4)
    fast = make_agent("fast").player
    acts = np.zeros(8, np.int64)
    spec = "search:policy=kawuxing3-default.pt,worlds=4,candidates=2,belief=0.1,pool=4,belief_depth=4"
    a1, a2 = make_agent(spec, seed=3), make_agent(spec, seed=3)
    for step in range(40):
        live = np.flatnonzero(~eng.done)
        if step >= 16 and step % 4 == 0:
            keys = np.arange(len(live), dtype=np.uint64) * 31 + step
            got1 = a1.act(None, eng.mask[live], engine=eng, tables=live, keys=keys)
            got2 = a2.act(None, eng.mask[live], engine=eng, tables=live, keys=keys)
            assert (got1 == got2).all() and eng.mask[live, got1].all()
        fast.decide(eng, out=acts)
        eng.step(acts)
    assert a1.belief_depth == 4 and a1.stats["weighted"] > 0 and a1.stats == a2.stats | {"cpu_s": a1.stats["cpu_s"]}
    with pytest.raises(ValueError, match="belief_depth"):
        SearchAgent("kawuxing3", belief=0.1, belief_depth=0)


def test_distinct_keeps_distinct_worlds_by_weight():
    """``keep=distinct``: indices without repeats, zero weights only after every positive one, repeatable for a
    seed, heavier worlds kept more often; bad input refused (by the agent too)."""
    from agents.players.searchbelief import distinct

    w = np.array([0.0, 1.0, 0.1, 1.0, 0.0, 0.1, 1.0, 0.1])
    got = distinct(w, 5, seed=3)
    assert len(set(got.tolist())) == 5 and set(got[:3].tolist()) <= {1, 3, 6, 2, 5, 7}
    assert not {0, 4} & set(got.tolist())
    assert (distinct(w, 5, seed=3) == got).all()
    assert distinct(w, 8, seed=1)[-2:].tolist() == [0, 4]
    heavy = np.array([1.0] + [0.05] * 9)
    hits = sum(0 in distinct(heavy, 1, seed=s) for s in range(200))
    assert hits > 120  # 1 / (1 + 0.45) ≈ 0.69 of the draws
    for bad in ((w, 0), (w, 9), (np.array([1.0, -1.0]), 1), (np.array([np.nan, 1.0]), 1)):
        with pytest.raises(ValueError, match="distinct"):
            distinct(bad[0], bad[1], seed=0)
    with pytest.raises(ValueError, match="keep"):
        SearchAgent("kawuxing3", belief=0.1, keep="all")


def test_readiness_belief_weights_are_normalised_and_refuse_other_files(tmp_path):
    """``ReadinessBelief``: class probabilities sum to 1 per opponent; world weights lie in (0, 1] with the largest
    1, repeat for the same worlds; a file that is not a readiness head (the hands classifier's) is refused, and the
    agent loads either kind from ``belief_net``."""
    from agents.players.searchbelief import (BELIEF_FEATURES, SHANTEN_CLASSES, ReadinessBelief, public_features,
                                             shanten_class)

    rng = np.random.default_rng(0)
    sizes = [BELIEF_FEATURES, 16, SHANTEN_CLASSES]
    layers = {f"w{i}": rng.normal(0, 0.3, (a, b)).astype(np.float32) for i, (a, b) in enumerate(zip(sizes, sizes[1:]))}
    layers |= {f"b{i}": np.zeros(b, np.float32) for i, b in enumerate(sizes[1:])}
    good = tmp_path / "ready.npz"
    np.savez(good, depth=2, kind="shanten", **layers)
    other = tmp_path / "hands.npz"
    np.savez(other, depth=2, **layers)
    head = ReadinessBelief(good)
    eng = Engine("kawuxing3", 2, record_events=False)
    eng.reset(seed=3)
    fast = make_agent("fast").player
    acts = np.zeros(2, np.int64)
    for _ in range(12):
        fast.decide(eng, out=acts)
        eng.step(acts)
    assert not eng.done[0]
    s = int(eng.state.actor[0])
    p = head.probs(public_features(eng, 0, s))
    assert p.shape == (2, SHANTEN_CLASSES) and np.allclose(p.sum(1), 1)
    worlds = eng.sample_worlds(0, s, 64, seed=5)
    w = head.weights(eng, 0, s, worlds, np.arange(64))
    assert w.max() == 1.0 and (w > 0).all() and (head.weights(eng, 0, s, worlds, np.arange(64)) == w).all()
    c = shanten_class(worlds.state.hand[:64, (s + 1) % 3], worlds.state.n_melds[:64, (s + 1) % 3])
    assert c.min() >= 0 and c.max() < SHANTEN_CLASSES
    with pytest.raises(ValueError, match="readiness"):
        ReadinessBelief(other)
    assert isinstance(SearchAgent("kawuxing3", belief_net=str(good)).belief_net, ReadinessBelief)
    assert not isinstance(SearchAgent("kawuxing3", belief_net=str(other)).belief_net, ReadinessBelief)


def test_holdings_belief_weights_are_normalised_and_refuse_other_files(tmp_path):
    """``HoldingsBelief``: shares in (0, 1) per opponent and kind; world weights in (0, 1] with the largest 1,
    repeatable; worlds that differ only outside the kinds near the seat's tiles weigh the same; a file of another
    kind is refused, and the agent loads it from ``belief_net``."""
    from agents.players.searchbelief import BELIEF_FEATURES, HoldingsBelief, public_features

    rng = np.random.default_rng(1)
    sizes = [BELIEF_FEATURES, 16, 34]
    layers = {f"w{i}": rng.normal(0, 0.3, (a, b)).astype(np.float32) for i, (a, b) in enumerate(zip(sizes, sizes[1:]))}
    layers |= {f"b{i}": np.zeros(b, np.float32) for i, b in enumerate(sizes[1:])}
    good = tmp_path / "holdings.npz"
    np.savez(good, depth=2, kind="holdings", **layers)
    other = tmp_path / "shanten.npz"
    np.savez(other, depth=2, kind="shanten", **layers)
    head = HoldingsBelief(good)
    eng = Engine("kawuxing3", 2, record_events=False)
    eng.reset(seed=3)
    fast = make_agent("fast").player
    acts = np.zeros(2, np.int64)
    for _ in range(12):
        fast.decide(eng, out=acts)
        eng.step(acts)
    assert not eng.done[0]
    s = int(eng.state.actor[0])
    p = head.shares(public_features(eng, 0, s))
    assert p.shape == (2, 34) and (p > 0).all() and (p < 1).all()
    worlds = eng.sample_worlds(0, s, 64, seed=5)
    w = head.weights(eng, 0, s, worlds, np.arange(64))
    assert w.max() == 1.0 and (w > 0).all() and (head.weights(eng, 0, s, worlds, np.arange(64)) == w).all()
    assert len(np.unique(w)) >= 2  # the worlds are told apart
    with pytest.raises(ValueError, match="holdings"):
        HoldingsBelief(other)
    assert isinstance(SearchAgent("kawuxing3", belief_net=str(good)).belief_net, HoldingsBelief)
