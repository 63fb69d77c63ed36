"""AEC env input errors: bad reset options, seeds, actions, steps out of turn and replay paths raise the documented
error naming the argument, and the env is left exactly as it was."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import mjenv
from mjenv.engine.core import IllegalActionError, WallError
from tests.snapshots import assert_same, env_snapshot


@pytest.fixture
def env():
    e = mjenv.raw_env()
    e.reset(seed=3)
    return e


def _legal(env) -> int:
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])


RESET_ERRORS = [
    (dict(options={"dealer": 1.7}), ValueError, r"options\['dealer'\] must be a seat 0..2, got 1.7"),
    (dict(options={"dealer": 256}), ValueError, r"options\['dealer'\] must be a seat 0..2, got 256"),
    (dict(options={"dealer": -1}), ValueError, r"options\['dealer'\] must be a seat"),
    (dict(options={"dealer": "1"}), ValueError, r"options\['dealer'\] must be a seat"),
    (dict(options={"dealer": True}), ValueError, r"options\['dealer'\] must be a seat"),
    (dict(seed=-1), ValueError, r"seed must be an integer 0..2\*\*64-1 or None, got -1"),
    (dict(seed=1.5), ValueError, r"seed must be an integer 0..2\*\*64-1 or None, got 1.5"),
    (dict(seed=2**64), ValueError, r"seed must be an integer 0..2\*\*64-1 or None, got 18446744073709551616"),
    (dict(options=[1]), ValueError, "options must be a dict"),
    (dict(options={"wall": 5}), ValueError, r"options\['wall'\] must be a notation string or a list of tile ids"),
    (dict(options={"wall": [0.5] * 84}), WallError, "wall 0 must be integers"),
    (dict(options={"wall": [-3] * 84}), WallError, "wall 0: tile ids must be 0..33, got -3"),
    (dict(options={"wall": "1p2p"}), WallError, "wall 0 is not the kawuxing3 tile set"),
]


@pytest.mark.parametrize("kwargs,error,message", RESET_ERRORS)
def test_bad_reset_arguments_change_nothing(env, kwargs, error, message):
    env.step(_legal(env))
    before = env_snapshot(env)
    with pytest.raises(error, match=message):
        env.reset(**kwargs)
    assert_same(before, env_snapshot(env))


def test_reset_without_seed_after_a_refused_wall_deals_what_it_would_have(env):
    twin = mjenv.raw_env()
    twin.reset(seed=3)
    with pytest.raises(WallError):
        env.reset(options={"wall": "1p"})
    env.reset()
    twin.reset()
    assert np.array_equal(env.engine.state.wall, twin.engine.state.wall)


@pytest.mark.parametrize("action", [3.7, "3", True, None, np.float64(2.0), [3]])
def test_non_integer_actions_are_refused(env, action):
    before = env_snapshot(env)
    with pytest.raises(IllegalActionError, match="action must be an integer id 0..110"):
        env.step(action)
    assert_same(before, env_snapshot(env))


def test_numpy_integer_actions_work(env):
    env.step(np.int64(_legal(env)))


def test_step_before_reset_and_after_the_end(env):
    with pytest.raises(RuntimeError, match=r"step before reset\(\)"):
        mjenv.raw_env().step(0)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    before = env_snapshot(env)
    with pytest.raises(RuntimeError, match="after the hand is over"):
        env.step(0)
    assert_same(before, env_snapshot(env))


@pytest.mark.parametrize("bad", [1, 2.5, b"x"])
def test_record_replay_must_be_a_path(bad):
    with pytest.raises(ValueError, match="record_replay must be a file path"):
        mjenv.raw_env(record_replay=bad)
    assert not sys.stdout.closed


def test_record_replay_in_a_missing_folder_or_a_folder(tmp_path):
    with pytest.raises(ValueError, match="is not a file path in an existing folder"):
        mjenv.raw_env(record_replay=str(tmp_path / "nope" / "x.jsonl"))
    with pytest.raises(ValueError, match="is not a file path in an existing folder"):
        mjenv.raw_env(record_replay=tmp_path)


def test_record_replay_leaves_an_existing_file_alone_until_the_first_hand(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text("precious\n", encoding="utf-8")
    env = mjenv.env(record_replay=path)
    env.reset(seed=1)
    assert path.read_text(encoding="utf-8") == "precious\n"
    rng = np.random.default_rng(1)
    for hand in range(2):
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        env.reset(seed=2)
    text = path.read_text(encoding="utf-8")
    assert "precious" not in text and text.count('"type":"header"') == 2


@pytest.mark.parametrize("action", [3.7, True, "3", [1, 2], np.float32(1)])
def test_single_agent_env_refuses_non_integer_actions(action):
    env = mjenv.single_env()
    env.reset(seed=4)
    mask = env.action_masks().copy()
    with pytest.raises(IllegalActionError, match="action must be one integer id"):
        env.step(action)
    assert np.array_equal(env.action_masks(), mask)
    legal = int(np.flatnonzero(mask)[0])
    env.step(np.array(legal))  # what SB3's predict gives is fine
