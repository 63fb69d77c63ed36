"""Engine behaviour over many games: random play under the validator for every ruleset and preset
(3 and 4 players), batch-vs-single equivalence, illegal actions and bad walls, validator sanity."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from mjenv.encoding.actions import N_ACTIONS, WIN, action_id
from mjenv.engine.core import Engine, IllegalActionError, WallError, seeded_wall
from mjenv.engine.validate import InvariantError, validate

RULESETS = ["kwx004", "suizhou000", "qdjt001"]
PRESETS = [None, "simple", "barbaric", "crazy"]


def random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random legal action per row; a legal win is taken half of the time so that hands end every way."""
    acts = (rng.random(mask.shape) * mask).argmax(1)
    win = mask[:, WIN] & (rng.random(len(mask)) < 0.5)
    return np.where(win, WIN, acts)


def play_random(engine: Engine, hands: int, seed: int, check=True) -> list[dict]:
    """Play until ``hands`` hands have finished, resetting finished tables; return their results."""
    rng = np.random.default_rng(seed)
    engine.reset(seed=seed)
    results, next_id = [], engine.batch_size
    while len(results) < hands:
        engine.step(random_actions(engine.mask, rng))
        if check:
            validate(engine)
        done = np.flatnonzero(engine.done)
        if len(done):
            results.extend(engine.results[b] for b in done)
            ids = np.arange(next_id, next_id + len(done))
            next_id += len(done)
            engine.reset(seed=seed, tables=done, table_ids=ids)
            if check:
                validate(engine)
    return results


@pytest.mark.parametrize("variant", ["kawuxing3", "kawuxing4"])
@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("preset", PRESETS)
def test_random_games_keep_every_invariant(variant, ruleset, preset):
    engine = Engine(variant, 128, ruleset=ruleset, preset=preset, record_events=False)
    results = play_random(engine, 400, seed=zlib.crc32(f"{variant}/{ruleset}/{preset}".encode()) % 1000)
    for r in results:
        assert abs(sum(r["deltas"])) < 1e-9
        assert abs(sum(r["settlement_deltas"])) < 1e-9
    hows = {r["how"] for r in results}
    assert {"draw", "self-draw", "discard"} <= hows


def test_batch_equals_single_tables():
    B = 6

    def policy(mask_row, rng):
        legal = np.flatnonzero(mask_row)
        return legal[rng.integers(len(legal))]

    batch = Engine("kawuxing3", B)
    batch.reset(seed=42)
    rngs = [np.random.default_rng(i) for i in range(B)]
    while not batch.done.all():
        acts = np.array([policy(batch.mask[i], rngs[i]) if not batch.done[i] else 0 for i in range(B)])
        batch.step(acts)
    for i in range(B):
        single = Engine("kawuxing3", 1)
        single.reset(seed=42, table_ids=[i])
        rng = np.random.default_rng(i)
        while not single.done[0]:
            single.step(np.array([policy(single.mask[0], rng)]))
        assert single.events[0] == batch.events[i]
        assert single.results[0] == batch.results[i]


def test_illegal_action_is_refused_and_changes_nothing():
    e = Engine("kawuxing3", 3)
    e.reset(seed=7)
    before = e.state.copy()
    mask = e.mask.copy()
    acts = mask.argmax(1)
    acts[1] = action_id("pong")
    with pytest.raises(IllegalActionError, match=r"table 1, seat \d: action pong is not legal"):
        e.step(acts)
    acts[1] = N_ACTIONS + 5
    with pytest.raises(IllegalActionError, match="table 1"):
        e.step(acts)
    for name in before.__dataclass_fields__:
        assert np.array_equal(getattr(before, name), getattr(e.state, name)), name
    assert np.array_equal(mask, e.mask)
    with pytest.raises(ValueError, match="expected 3 actions"):
        e.step(acts[:2])


def test_bad_walls_are_refused():
    e = Engine("kawuxing3", 1)
    good = list(e.tiles)
    with pytest.raises(WallError, match="84"):
        e.reset(walls=[good[:-1]])
    bad = good.copy()
    bad[0] = 0  # 1m is not a Kawuxing-3p tile
    with pytest.raises(WallError, match="1m: 1"):
        e.reset(walls=[bad])
    with pytest.raises(WallError, match="2 walls given for 1 tables"):
        e.reset(walls=[good, good])
    with pytest.raises(WallError, match="wall 0"):
        e.reset(walls=["12q"])
    with pytest.raises(ValueError, match="dealer"):
        e.reset(walls=[good], dealer=3)


def test_seeded_deal_is_documented_function_of_seed_and_index():
    e = Engine("kawuxing3", 2)
    e.reset(seed=5, table_ids=[10, 11])
    want = seeded_wall(5, 11, e.tiles)
    assert np.array_equal(e.state.wall[1], want)
    assert e.state.hand[1].sum() == 40 and e.state.hand[1, 0].sum() == 14


def test_validator_catches_corruption():
    e = Engine("kawuxing3", 2)
    e.reset(seed=1)
    validate(e)
    e.state.hand[1, 1, 10] += 1
    with pytest.raises(InvariantError, match="table 1: tiles not conserved"):
        validate(e)
    e.reset(seed=1)
    e.state.money[0, 0] += 1
    with pytest.raises(InvariantError, match="zero-sum"):
        validate(e)
    e.reset(seed=1)
    e.mask[0, :] = False
    with pytest.raises(InvariantError, match="empty legal mask"):
        validate(e)


def test_match_of_several_hands_rotates_the_dealer():
    e = Engine("kawuxing3", 4, record_events=False)
    rng = np.random.default_rng(3)
    e.reset(seed=9)
    totals = np.zeros((4, 3))
    for hand in range(3):
        while not e.done.all():
            e.step(random_actions(e.mask, rng))
        totals += e.state.money
        dealers = [r["next_dealer"] for r in e.results]
        assert np.allclose(e.match_money, totals)
        e.next_hand(seed=9, table_ids=np.arange(4) + 100 * (hand + 1))
        assert e.state.dealer.tolist() == dealers
        assert (e.hand_number == hand + 1).all()
    with pytest.raises(ValueError, match="no finished hand"):
        e.next_hand(tables=[0])


@pytest.mark.parametrize("batch", [1, 3])
def test_any_done_is_done_any(batch):
    """``Engine.any_done()`` (a scalar read at B = 1) answers ``engine.done.any()`` before the first deal, through
    whole hands (every step, including the one that ends a hand), and after re-deals of some tables."""
    engine = Engine("kawuxing3", batch, record_events=False)
    assert engine.any_done() is True and engine.done.all()
    rng = np.random.default_rng(5)
    engine.reset(seed=5)
    seen, next_id = set(), batch
    for _ in range(400):
        assert engine.any_done() is bool(engine.done.any())
        seen.add(engine.any_done())
        done = np.flatnonzero(engine.done)
        if len(done) and rng.random() < 0.5:
            engine.reset(seed=5, tables=done[:1], table_ids=[next_id])
            next_id += 1
            assert engine.any_done() is bool(engine.done.any())
        engine.step(random_actions(engine.mask, rng))
    assert seen == {False, True}


def test_step_reuses_the_arguments_of_the_same_action_array():
    """``Engine.step`` keeps the kernel arguments of its last common call's action array: one buffer refilled at
    every step plays exactly as a fresh array per step does; the same buffer reshaped in place, or holding an
    illegal action, is refused as any array would be, and nothing changes."""
    kept, fresh = Engine("kawuxing4", 4), Engine("kawuxing4", 4)
    kept.reset(seed=2)
    fresh.reset(seed=2)
    rng = np.random.default_rng(2)
    buf = np.zeros(4, np.int64)
    next_id = 4
    for i in range(300):
        acts = random_actions(kept.mask, rng).astype(np.int64)
        buf[:] = acts
        if i % 40 == 7:  # the same memory, another shape: not one action per table
            buf.shape = (4, 1)
            with pytest.raises(IllegalActionError, match="flat"):
                kept.step(buf)
            buf.shape = (4,)
        if i % 60 == 11:  # an illegal action in the kept buffer
            live = int(np.flatnonzero(~kept.done)[0])
            buf[live] = int(np.flatnonzero(~kept.mask[live])[0])
            with pytest.raises(IllegalActionError, match="not legal"):
                kept.step(buf)
            buf[:] = acts
        kept.step(buf)
        fresh.step(acts.copy())
        assert np.array_equal(kept.mask, fresh.mask) and np.array_equal(kept._b8, fresh._b8)
        assert np.array_equal(kept._b16, fresh._b16) and kept.n_decisions == fresh.n_decisions
        done = np.flatnonzero(kept.done)
        if len(done):
            assert kept.results[int(done[0])] == fresh.results[int(done[0])]
            for eng in (kept, fresh):
                eng.reset(seed=2, tables=done, table_ids=np.arange(next_id, next_id + len(done)))
            next_id += len(done)
    assert next_id > 8  # hands ended and were dealt again


def test_deal_next_walls_deals_consecutive_walls_onto_the_finished_tables():
    """``Engine.deal_next_walls`` gives each finished table the next wall id of the seed (dealer: the id modulo the
    seats), counts the hands that ended, leaves the live tables alone and returns the next unused id."""
    engine = Engine("kawuxing4", 8, record_events=False)
    engine.reset(seed=3, table_ids=np.arange(8), dealer=np.arange(8) % 4)
    rng = np.random.default_rng(3)
    next_wall, seen = 8, 0
    for _ in range(300):
        engine.step(random_actions(engine.mask, rng))
        done = np.flatnonzero(engine.done)
        live_hands = engine.state.hand[~engine.done].copy()
        before = next_wall
        next_wall, ended = engine.deal_next_walls(3, next_wall)
        assert ended == len(done) and next_wall == before + len(done)
        assert not engine.done.any()
        assert np.array_equal(engine.state.hand[np.setdiff1d(np.arange(8), done)], live_hands)
        for k, b in enumerate(done):
            assert np.array_equal(engine.state.wall[b], seeded_wall(3, before + k, engine.tiles))
            assert engine.state.dealer[b] == (before + k) % 4
        seen += ended
    assert seen > 0
    assert engine.deal_next_walls(3, next_wall) == (next_wall, 0)
