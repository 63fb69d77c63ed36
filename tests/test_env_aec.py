"""PettingZoo AEC env: API and seed tests over every variant, ruleset and preset; rewards; observations."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import mjenv
from mjenv.encoding import actions as A
from mjenv.encoding.observation import ObservationEncoder
from mjenv.engine.core import IllegalActionError
from mjenv.replay import read_replay, verify_replay
from mjenv.rules.options import get_variant, list_presets, list_rulesets
from mjenv.tiles import parse_tiles, tile_name

IMPLEMENTED = mjenv.VARIANTS
MATRIX = [(v, None, None, None) for v in IMPLEMENTED]
# The default ruleset is the (v, None, None) case already.
MATRIX += [(v, r, None, None) for v in IMPLEMENTED for r in list_rulesets(v) if r != get_variant(v).default_ruleset]
MATRIX += [(v, None, p, None) for v in IMPLEMENTED for p in list_presets(v)]
# Options that switch on paths no ruleset or preset does: robbing Gejiu's chosen kong tile, a bankroll in
# Diedaohu, Liuwei without one.
MATRIX += [
    ("gejiu", None, None, {"gejiu_qianggang": "replacement_tile"}),
    ("diedaohu", None, None, {"bankroll": 10}),
    ("liuwei", None, None, {"bankroll": "none"}),
]


def test_the_matrix_covers_every_variant_ruleset_and_preset():
    for v in IMPLEMENTED:
        rulesets = set(list_rulesets(v)) - {get_variant(v).default_ruleset}
        assert {r for w, r, _, _ in MATRIX if w == v} - {None} == rulesets
        assert {p for w, _, p, _ in MATRIX if w == v} - {None} == set(list_presets(v))
    assert {"yangzhou", "yangzhou_new"} <= {v for v, r, _, _ in MATRIX if r is not None}  # yznew003 / yzstd003


@pytest.mark.parametrize("variant,ruleset,preset,options", MATRIX)
def test_pettingzoo_api_and_seed_tests(variant, ruleset, preset, options):
    with warnings.catch_warnings():
        # api_test warns about things that are by design here: all-zero masks of waiting agents,
        # negative money in a 2-D observation, the illegal-move wrapper's notice.
        warnings.simplefilter("ignore")
        api_test(mjenv.env(variant, ruleset=ruleset, preset=preset, options=options), num_cycles=60)
        seed_test(lambda: mjenv.env(variant, ruleset=ruleset, preset=preset, options=options), num_cycles=10)


def _play(env, rng, first=None):
    """Play a hand with random legal actions; returns the summed rewards per agent and the final infos."""
    totals = {a: 0.0 for a in env.possible_agents}
    infos = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            infos[agent] = info
            env.step(None)
            continue
        mask = obs["action_mask"]
        act = first.pop(0) if first else int((rng.random(mask.shape) * mask).argmax())
        env.step(act)
    return totals, infos


@pytest.mark.parametrize("variant", IMPLEMENTED)
def test_rewards_add_up_to_the_deltas_and_infos_carry_the_result(variant):
    env = mjenv.env(variant)
    rng = np.random.default_rng(0)
    for seed in range(3):
        env.reset(seed=seed)
        totals, infos = _play(env, rng)
        result = infos["player_0"]["result"]
        assert set(infos) == set(env.possible_agents)
        for i, a in enumerate(env.possible_agents):
            assert infos[a]["seat"] == i
            assert totals[a] == pytest.approx(result["deltas"][i])
        assert sum(result["deltas"]) == pytest.approx(0.0)
        assert {"how", "winners", "transfers", "deltas", "settlement_deltas", "next_dealer"} <= set(result)


def _kong_wall(variant: str = "kawuxing3") -> list[int]:
    """A wall where the dealer (seat 0) holds 1111p and may declare a concealed kong at once."""
    env = mjenv.raw_env(variant)
    tiles = list(env.engine.tiles)
    dealer = parse_tiles("1111p234567p89p1s")
    for t in dealer + parse_tiles("2s"):
        tiles.remove(t)
    rest = list(np.random.default_rng(5).permutation(tiles))
    n = env.engine.n
    return dealer + rest[: 13 * (n - 1)] + parse_tiles("2s") + rest[13 * (n - 1) :]


def test_kong_money_is_paid_at_once_and_the_hand_still_sums_to_its_deltas():
    env = mjenv.env()
    env.reset(options={"wall": _kong_wall(), "dealer": 0})
    assert env.agent_selection == "player_0"
    kong = A.action_id("kong:1p")
    assert env.observe("player_0")["action_mask"][kong] == 1
    env.step(kong)
    assert env.rewards == {"player_0": 4.0, "player_1": -2.0, "player_2": -2.0}
    assert env.agent_selection == "player_0"  # the replacement draw: still the dealer's turn
    _, reward, *_ = env.last()
    assert reward == 4.0  # accumulated since the dealer last acted: the kong money of this very step
    totals, infos = _play(env, np.random.default_rng(1))
    deltas = infos["player_0"]["result"]["deltas"]
    for i, a in enumerate(env.possible_agents):
        assert totals[a] == pytest.approx(deltas[i])  # last() of each agent includes the kong money


@pytest.mark.parametrize("variant", ["kawuxing4", "liuwei"])
def test_every_agent_observes_from_its_own_seat_and_only_the_actor_has_a_mask(variant):
    raw = mjenv.raw_env(variant)
    raw.reset(seed=3)
    enc = ObservationEncoder.for_engine(raw.engine)
    rng = np.random.default_rng(2)
    for _ in range(25):
        actor = raw.agent_selection
        for i, a in enumerate(raw.possible_agents):
            o = raw.observe(a)
            assert o["observation"].dtype == np.float32 and o["action_mask"].dtype == np.int8
            np.testing.assert_array_equal(o["observation"], enc.encode(raw.engine.state, [i], engine=raw.engine)[0])
            if variant == "liuwei":  # own seat wind: the dealer (seat 0) is East; the first round is East
                winds = enc.block(o["observation"], "winds")
                assert winds[0, 27 + i] == 1 and winds[1, 27] == 1 and winds.sum() == 2
            np.testing.assert_array_equal(enc.block(o["observation"], "hand").sum(0), raw.engine.state.hand[0, i])
            if a == actor:
                np.testing.assert_array_equal(o["action_mask"], raw.engine.mask[0].astype(np.int8))
                assert enc.block(o["observation"], "seats")[-1].all()
            else:
                assert not o["action_mask"].any()
                assert not enc.block(o["observation"], "seats")[-1].any()
        m = raw.observe(actor)["action_mask"]
        raw.step(int((rng.random(m.shape) * m).argmax()))
        if raw.terminations[raw.agent_selection]:
            break


def test_reset_options_explicit_wall_dealer_and_unknown_keys():
    raw = mjenv.raw_env()
    wall = _kong_wall()
    raw.reset(options={"wall": wall, "dealer": 2})
    assert raw.agent_selection == "player_2"
    assert raw.engine.state.hand[0, 2, parse_tiles("1p")[0]] == 4
    by_ids = raw.engine.state.hand.copy()
    raw.reset(options={"wall": "".join(tile_name(t) for t in wall), "dealer": 2})  # notation works too
    np.testing.assert_array_equal(raw.engine.state.hand, by_ids)
    with pytest.warns(UserWarning, match="ignored"):
        raw.reset(seed=1, options={"colour": "red"})
    raw.reset(seed=1)
    first = raw.engine.state.hand.copy()
    raw.reset()
    raw.reset(seed=1)
    np.testing.assert_array_equal(raw.engine.state.hand, first)


def test_illegal_actions_raw_raises_and_wrapped_ends_the_hand():
    raw = mjenv.raw_env()
    raw.reset(seed=0)
    illegal = int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        raw.step(illegal)
    env = mjenv.env()
    env.reset(seed=0)
    mover = env.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(illegal)
    assert all(env.terminations.values())
    assert env._cumulative_rewards[mover] == -1


def test_replays_recorded_by_the_env_verify(tmp_path):
    path = tmp_path / "hands.jsonl"
    env = mjenv.env(preset="crazy", record_replay=str(path))
    rng = np.random.default_rng(4)
    results = []
    for seed in (10, 11):
        env.reset(seed=seed)
        _, infos = _play(env, rng)
        results.append(infos["player_0"]["result"])
    env.reset(options={"wall": _kong_wall()})
    _, infos = _play(env, rng, first=[A.action_id("kong:1p")])
    results.append(infos["player_0"]["result"])
    hands = read_replay(path)
    assert len(hands) == 3
    assert [h.header["seed"] for h in hands] == [10, 11, None]
    assert hands[0].header["rules"] == {"ruleset": None, "preset": "crazy"}
    for h, res in zip(hands, results):
        assert verify_replay(h) == res
    assert hands[2].actions[0]["name"] == "kong:1p"
    single = tmp_path / "one.jsonl"
    env.unwrapped.save_replay(single)
    assert verify_replay(read_replay(single)[0]) == results[-1]


def test_render_modes(capsys):
    env = mjenv.env(render_mode="ansi")
    env.reset(seed=2)
    text = env.render()
    assert "player_0" in text and "money" in text and "to act" in text
    human = mjenv.env(render_mode="human")
    human.reset(seed=2)
    mask = human.observe(human.agent_selection)["action_mask"]
    human.step(int(np.flatnonzero(mask)[0]))
    assert "live wall" in capsys.readouterr().out
    with pytest.raises(ValueError):
        mjenv.raw_env(render_mode="rgb_array")


def test_module_docstring_is_the_manual():
    from mjenv.envs import aec

    for heading in ("Agents", "Actions", "Observations", "Rewards", "Version history"):
        assert heading in aec.__doc__
    assert mjenv.raw_env().metadata["name"] == "mjenv_kawuxing3_v1"


def test_observations_are_fresh_and_the_wrapper_reads_the_raw_env():
    """A kept observation does not change when the env steps on; the wrapper's per-step attributes are the
    raw env's, and raise like PettingZoo's order-enforcing wrapper before reset."""
    env = mjenv.env("kawuxing4")
    for name in ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos"):
        with pytest.raises(AttributeError, match="before reset"):
            getattr(env, name)
    env.reset(seed=1)
    raw = env.unwrapped
    kept = []
    for agent in env.agent_iter(40):
        obs, *_ = env.last()
        kept.append((obs, {k: v.copy() for k, v in obs.items()}))
        for name in ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos"):
            assert getattr(env, name) is getattr(raw, name)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    for obs, copy in kept:
        for k in obs:
            np.testing.assert_array_equal(obs[k], copy[k])
    assert not np.shares_memory(kept[0][0]["observation"], kept[1][0]["observation"])
    it = iter(env.agent_iter())
    next(it)
    with pytest.raises(AssertionError, match="need to call step"):
        next(it)


@pytest.mark.parametrize("variant", ["kawuxing3", "gejiu", "diedaohu"])
def test_the_observation_the_step_made_is_handed_out_once_and_equals_the_encoders(variant):
    """The step writes the acting seat's observation (v1 without sessions: ``encode_next``); ``last`` and ``observe``
    hand it out once and make a fresh equal one after that; every observation equals the batch encoder's row."""
    env = mjenv.env(variant)
    raw = env.unwrapped
    enc = ObservationEncoder.for_engine(raw.engine)
    rng = np.random.default_rng(5)
    for hand in range(3):
        env.reset(seed=hand)
        for agent in env.agent_iter():
            # by observe or by last first (every other step), then again by both
            first = raw.observe(agent) if hand % 2 else env.last()[0]
            seen = [first, raw.observe(agent), env.last()[0]]
            for i, a in enumerate(seen):
                for b in seen[i + 1 :]:
                    assert not np.shares_memory(a["observation"], b["observation"])
            seat = raw.agent_name_mapping[agent]
            want = enc.encode(raw.engine.state, np.array([seat]), np.array([0]), engine=raw.engine)[0]
            for got in seen:
                assert got["observation"].view(np.int32).tobytes() == want.view(np.int32).tobytes()
                np.testing.assert_array_equal(got["action_mask"], first["action_mask"])
            if env.terminations[agent]:
                env.step(None)
                continue
            legal = np.flatnonzero(first["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
