"""Input errors of the envs over ``LearnerTables`` (vector, SB3, single-agent; issue 22): actions that are not exactly
one integer id per table, bad seeds and calls after ``close()`` are refused with one line naming the field and the
env unchanged (checked by snapshot); an opponent policy that raises mid-step leaves the env refusing steps until a
reset, so a learner's action never plays an opponent's seat."""

from __future__ import annotations

import numpy as np
import pytest

import mjenv
from mjenv.engine.core import IllegalActionError
from mjenv.envs.single import MahjongSingleEnv
from mjenv.envs.vector import MahjongVectorEnv, random_policy
from tests.snapshots import assert_same, learner_snapshot

B = 4


def _sb3(**kw):
    pytest.importorskip("stable_baselines3")
    from mjenv.envs.sb3 import MahjongSB3VecEnv

    return MahjongSB3VecEnv("kawuxing3", B, **kw)


def _vector(**kw):
    return MahjongVectorEnv("kawuxing3", B, **kw)


def _step(env, actions):
    if hasattr(env, "step_async"):
        env.step_async(actions)
        return env.step_wait()
    return env.step(actions)


def _reset(env, seed=None):
    if hasattr(env, "step_async"):
        env.seed(seed)
        return env.reset()
    return env.reset(seed=seed)


def _legal(env) -> np.ndarray:
    return np.array([int(np.flatnonzero(m)[0]) for m in np.atleast_2d(env.action_masks())])


MAKERS = {"vector": _vector, "sb3": _sb3}


@pytest.fixture(params=sorted(MAKERS))
def batch_env(request):
    env = MAKERS[request.param](seed=3)
    _reset(env, 3)
    return env


def _coerced(legal: np.ndarray) -> list:
    """Actions that were once coerced into legal ones: each must now be refused, naming ``actions``."""
    return [
        legal + 0.7,  # 11.7 played as 11
        legal.astype(str),  # "11" played as 11
        [str(a) for a in legal],
        np.where(np.arange(B) == 0, np.nan, legal),  # NaN refused as id -9223372036854775808, with a warning
        legal.reshape(2, B // 2),  # flattened and played
        legal.reshape(B, 1),
        legal[:-1],
        np.ones(B, bool),
        [2**70] * B,
        "3",
        None,
        legal.astype(np.float32),
    ]


@pytest.mark.parametrize("k", range(12))
def test_non_integer_or_misshapen_actions_are_refused_and_change_nothing(batch_env, k):
    bad = _coerced(_legal(batch_env))[k]
    before = learner_snapshot(batch_env)
    with np.errstate(all="raise"), pytest.raises(IllegalActionError, match=r"^actions must be 4 integer ids 0\.\.110"):
        _step(batch_env, bad)
    if hasattr(batch_env, "step_async"):
        batch_env._actions = before["_actions"]  # SB3 keeps what step_async was given; the tables are what counts
    assert_same(before, learner_snapshot(batch_env))
    _step(batch_env, _legal(batch_env).astype(np.int32))  # integer ids of any integer dtype are fine


@pytest.mark.parametrize("action", [11.7, "11", np.nan, np.array([[3]]).astype(float), True])
def test_single_env_refuses_coercible_actions(action):
    env = MahjongSingleEnv()
    env.reset(seed=5)
    before = learner_snapshot(env)
    with pytest.raises(IllegalActionError, match="action must be one integer id"):
        env.step(action)
    assert_same(before, learner_snapshot(env))


def _all_envs():
    return [("vector", _vector(seed=1)), ("sb3", _sb3(seed=1)), ("single", MahjongSingleEnv())]


def test_step_and_reset_after_close_are_refused_by_every_env():
    for name, env in _all_envs() + [("aec", mjenv.env()), ("raw aec", mjenv.raw_env())]:
        if name in ("aec", "raw aec"):
            env.reset(seed=1)
            action = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
        else:
            _reset(env, 1)
            action = _legal(env) if name != "single" else int(_legal(env)[0])
        env.close()
        env.close()  # closing twice is allowed
        with pytest.raises(RuntimeError, match=r"step\(\) after close\(\)"):
            _step(env, action)
        with pytest.raises(RuntimeError, match=r"reset\(\) after close\(\)"):
            _reset(env, 2)
        with pytest.raises(RuntimeError, match=r"step\(\) after close\(\)"):  # a refused reset reopens nothing
            _step(env, action)


@pytest.mark.parametrize("seed", [2**64, -1, 1.5, True, "7", np.float64(2.0)])
def test_seeds_that_would_wrap_or_round_are_refused(seed):
    for name, env in _all_envs():
        _reset(env, 9)
        before = learner_snapshot(env)
        with pytest.raises(ValueError, match=r"^seed must be an integer 0\.\.2\*\*64-1 or None, got"):
            _reset(env, seed)
        assert_same(before, learner_snapshot(env))
    raw = mjenv.raw_env()
    with pytest.raises(ValueError, match=r"^seed must be an integer 0\.\.2\*\*64-1 or None"):
        raw.reset(seed=seed)
    with pytest.raises(ValueError, match=r"seed must be an integer 0\.\.2\*\*64-1 or None"):
        MahjongVectorEnv("kawuxing3", 2, seed=seed)


def test_the_largest_seed_is_not_seed_zero():
    walls = []
    for seed in (2**64 - 1, 0):
        env = _vector()
        env.reset(seed=seed)
        walls.append(env.core.engine.state.wall.copy())
    assert not np.array_equal(*walls)


class Flaky:
    """An opponent that raises on its ``fail_at``-th call, else plays uniformly at random."""

    uses_obs = False

    def __init__(self, fail_at: int):
        self.calls, self.fail_at, self.play = 0, fail_at, random_policy(0)

    def __call__(self, obs, mask):
        self.calls += 1
        if self.calls == self.fail_at:
            raise KeyError("opponent crashed")
        return self.play(obs, mask)


@pytest.mark.parametrize("maker", ["vector", "sb3", "single"])
def test_an_opponent_that_raises_mid_step_stops_the_env_until_reset(maker):
    opp = Flaky(fail_at=10**9)
    env = {"vector": _vector, "sb3": _sb3, "single": lambda **kw: MahjongSingleEnv(**kw)}[maker](opponent=opp)
    _reset(env, 4)
    opp.fail_at = opp.calls + 1  # the next opponent round raises, after the learners' actions were applied
    rng = np.random.default_rng(0)
    for _ in range(200):  # (a step may end on the learner's own turn without an opponent round)
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in np.atleast_2d(env.action_masks())])
        try:
            out = _step(env, acts if maker != "single" else int(acts[0]))
        except KeyError:
            break
        if maker == "single" and out[2]:
            env.reset()
    else:
        pytest.fail("the opponent was never asked")
    assert "KeyError" in env.core.broken
    before = learner_snapshot(env)
    with pytest.raises(RuntimeError, match=r"step\(\) refused: an earlier step or deal stopped half-way \(KeyError"):
        _step(env, acts if maker != "single" else int(acts[0]))
    assert_same(before, learner_snapshot(env))
    _reset(env, None)  # a fresh deal, and the env plays again
    assert env.core.broken is None
    acts = _legal(env) if maker != "single" else int(_legal(env)[0])
    _step(env, acts)


def test_an_opponent_that_raises_while_dealing_is_cleared_by_the_next_reset():
    opp = Flaky(fail_at=1)
    env = _vector(opponent=opp)
    with pytest.raises(KeyError):
        env.reset(seed=1)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(np.zeros(B, np.int64))
    env.reset(seed=1)
    env.step(_legal(env))
