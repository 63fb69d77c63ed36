"""Batched envs: Gymnasium VectorEnv, SB3 VecEnv (MaskablePPO), single-agent env; rewards and resets."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import mjenv
from mjenv.encoding.observation import ObservationEncoder
from mjenv.engine.core import IllegalActionError, seeded_wall
from mjenv.envs.single import MahjongSingleEnv
from mjenv.envs.vector import LearnerTables, MahjongVectorEnv, random_policy


def _legal(rng, mask):
    return (rng.random(mask.shape) * mask).argmax(-1)


# Random play that never passes up a win and prefers pong, kong and chi: hands that end with money moving
# even in variants whose only money is a win (Gejiu, Yangzhou).
_CLAIM_BONUS = np.zeros(111)
_CLAIM_BONUS[[102, 103, 104, 105, 106]] = 1.0
_CLAIM_BONUS[107] = 10.0


def _claim_happy(seed: int):
    rng = np.random.default_rng(seed)

    def act(obs, mask):
        return (mask * (rng.random(mask.shape) + _CLAIM_BONUS)).argmax(-1)

    act.uses_obs = False
    return act


def _run(env, steps, seed=0, policy=None):
    """Random legal play (or ``policy``); returns the finished episodes' (return, delta, seat) triples."""
    rng = np.random.default_rng(seed)
    totals = np.zeros(env.num_envs)
    episodes = []
    for _ in range(steps):
        act = _legal(rng, env.action_masks()) if policy is None else policy(None, env.action_masks())
        obs, rew, term, trunc, info = env.step(act)
        assert env.observation_space.contains(obs)
        assert not trunc.any()
        np.testing.assert_array_equal(info["action_mask"], env.action_masks())
        totals += rew
        for b in np.flatnonzero(term):
            fin = info["final_info"][b]
            assert info["_final_obs"][b] and info["final_obs"][b].shape == env.single_observation_space.shape
            episodes.append((totals[b], fin["result"]["deltas"][fin["seat"]], fin["seat"]))
            totals[b] = 0.0
    return episodes


@pytest.mark.parametrize(
    "variant,options,claim_happy,seed",
    [
        ("kawuxing3", None, False, 1),
        ("kawuxing4", None, False, 1),
        ("gejiu", None, True, 1),  # no kong money: only wins move money
        ("yangzhou", {"min_fan": 0}, True, 3),  # neither; a 15-fan win is too rare for random play
        ("liuwei", None, False, 1),  # bankroll 50, kong money
    ],
)
def test_episode_rewards_are_the_learner_seats_money(variant, options, claim_happy, seed):
    env = MahjongVectorEnv(variant, 12, options=options, seed=seed, opponent=_claim_happy(2) if claim_happy else None)
    obs, info = env.reset()
    assert obs.shape == (12,) + ObservationEncoder.for_engine(env.core.engine).shape
    episodes = _run(env, 100, policy=_claim_happy(3) if claim_happy else None)
    assert len(episodes) >= 12
    for ret, delta, _ in episodes:
        assert ret == pytest.approx(delta)
    assert any(d != 0 for _, d, _ in episodes)  # money did move, so the check has teeth
    assert {s for *_, s in episodes} == set(range(env.core.n))  # the learner rotates through the seats


def test_each_step_pays_only_the_learner_seats_money_change():
    env = MahjongVectorEnv("kawuxing3", 12, seed=7)
    env.reset()
    core = env.core
    rng = np.random.default_rng(3)
    for _ in range(60):
        before = core.engine.state.money[np.arange(12), core.seat].copy()
        _, rew, term, _, info = env.step(_legal(rng, env.action_masks()))
        live = ~term
        after = core.engine.state.money[np.arange(12), core.seat]
        np.testing.assert_allclose(rew[live], (after - before)[live])
        for b in np.flatnonzero(term):
            res = info["final_info"][b]["result"]
            assert rew[b] == pytest.approx(res["deltas"][info["final_info"][b]["seat"]] - before[b])


def test_same_seed_same_run_and_autoreset_walls_follow_the_episode_counter():
    a, b = MahjongVectorEnv("kawuxing3", 6, seed=5), MahjongVectorEnv("kawuxing3", 6, seed=5)
    oa, _ = a.reset()
    ob, _ = b.reset()
    rng = np.random.default_rng(0)
    for _ in range(40):
        act = _legal(rng, a.action_masks())
        ra = a.step(act)
        rb = b.step(act)
        np.testing.assert_array_equal(ra[0], rb[0])
        np.testing.assert_array_equal(ra[1], rb[1])
    eng = a.core.engine
    for t in range(6):
        ep = int(a.core.episode[t])
        want = seeded_wall(5, ep, eng.tiles)
        np.testing.assert_array_equal(eng.state.wall[t], want)
        assert eng.state.dealer[t] == ep % eng.n
    assert a.core.episode.max() >= 6  # tables were re-dealt with fresh episode ids
    np.testing.assert_array_equal(a.reset(seed=5)[0], oa)
    assert not np.array_equal(a.reset()[0], oa)  # no seed: the run goes on with new hands
    assert a.core.episode.min() >= 6


def test_learner_seats_and_the_opponent_policy_protocol():
    calls = []
    enc_holder = {}

    def opponent(obs, mask):
        enc = enc_holder["enc"]
        assert obs.ndim == 3 and obs.shape[1:] == enc.shape and mask.shape == (len(obs), 111)
        assert enc.block(obs, "seats")[:, -1].all()  # every row is seen from the seat that acts
        calls.append(len(obs))
        return np.argmax(mask, 1)

    env = MahjongVectorEnv("kawuxing4", 5, learner_seats=[2], opponent=opponent, seed=2)
    enc_holder["enc"] = env.core.encoder
    _, info = env.reset()
    assert (info["seat"] == 2).all()
    assert (env.core.engine.state.actor == 2).all()
    _run(env, 20)
    assert calls and (env.core.seat == 2).all()

    blind = random_policy(0)
    seen = []

    def no_obs(obs, mask):
        seen.append(obs)
        return blind(obs, mask)

    no_obs.uses_obs = False
    env2 = MahjongVectorEnv("kawuxing3", 3, opponent=no_obs, seed=0)
    env2.reset()
    env2.step(_legal(np.random.default_rng(0), env2.action_masks()))
    assert seen and all(o is None for o in seen)
    # An opponent installed after construction survives a seeded reset (only the default is re-seeded).
    env2.core.opponent = opponent
    enc_holder["enc"] = env2.core.encoder
    env2.reset(seed=4)
    assert env2.core.opponent is opponent


def test_illegal_actions_are_rejected():
    env = MahjongVectorEnv("kawuxing3", 2, seed=0)
    env.reset()
    bad = np.array([int(np.flatnonzero(~m)[0]) for m in env.action_masks()])
    with pytest.raises(IllegalActionError):
        env.step(bad)
    tables = LearnerTables("kawuxing3", 2, opponent=lambda obs, mask: np.full(len(mask), 110), seed=0)
    with pytest.raises(IllegalActionError, match="opponent"):
        tables.reset()
    with pytest.raises(ValueError):
        LearnerTables("kawuxing3", 2, learner_seats=[3])


def test_flatten_and_the_front_door_factories():
    env = mjenv.vector_env("kawuxing3", 3, flatten=True, seed=1)
    obs, _ = env.reset()
    assert obs.shape == (3, 100 * 34) and env.single_observation_space.shape == (100 * 34,)
    assert isinstance(env, MahjongVectorEnv)
    assert isinstance(mjenv.single_env(), MahjongSingleEnv)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"flatten": True, "variant": "kawuxing4"},
        {"learner_seats": [1], "preset": "simple"},
        {"variant": "gejiu"},
        {"variant": "yangzhou", "flatten": True},
        {"variant": "liuwei", "learner_seats": [2]},
    ],
)
def test_single_agent_env_passes_the_gymnasium_checker(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # infinite Box bounds for money are by design
        check_env(MahjongSingleEnv(**kwargs), skip_render_check=True)


def test_single_agent_env_episodes_illegal_actions_and_render():
    env = MahjongSingleEnv(render_mode="ansi")
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=4)
    ret, done_eps = 0.0, 0
    while done_eps < 3:
        obs, r, term, trunc, info = env.step(int(_legal(rng, env.action_masks())))
        ret += r
        if term:
            assert ret == pytest.approx(info["result"]["deltas"][info["seat"]])
            assert not env.action_masks().any()
            with pytest.raises(RuntimeError):
                env.step(0)
            ret, done_eps = 0.0, done_eps + 1
            obs, info = env.reset()
    assert "to act" in env.render()
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, r, term, _, info = env.step(illegal)
    assert term and r == -1.0 and info["illegal_action"]
    env.reset()
    strict = MahjongSingleEnv(illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError):
        strict.step(int(np.flatnonzero(~strict.action_masks())[0]))


def test_maskable_ppo_trains_on_the_sb3_vec_env():
    torch = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    from mjenv.envs.sb3 import model_policy

    torch.set_num_threads(1)
    venv = mjenv.sb3_vec_env("kawuxing3", 64, seed=0)
    assert is_masking_supported(venv)
    np.testing.assert_array_equal(get_action_masks(venv), venv.action_masks())
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=1024, n_epochs=1, seed=0, verbose=0)
    # SB3's default logger makes a /tmp/SB3-<date> folder on every learn(); a logger with no outputs leaves none.
    from stable_baselines3.common.logger import Logger

    model.set_logger(Logger(folder=None, output_formats=[]))
    model.learn(2048)
    assert model.num_timesteps >= 2048
    # Self-play: the trained model plays the other seats.
    selfplay = mjenv.sb3_vec_env("kawuxing3", 4, seed=1, opponent=model_policy(model))
    obs = selfplay.reset()
    for _ in range(5):
        act, _ = model.predict(obs, action_masks=selfplay.action_masks())
        obs, rew, done, infos = selfplay.step(act)
        assert obs.shape == (4, 100 * 34) and rew.dtype == np.float32
        for b in np.flatnonzero(done):
            assert "terminal_observation" in infos[b] and "result" in infos[b]


def test_an_env_whose_constructor_refused_its_arguments_closes_quietly():
    """gymnasium's ``VectorEnv.__del__`` calls ``close()`` on an object whose ``__init__`` raised: it must not raise
    again (pytest reported it as an unraisable AttributeError)."""
    from mjenv.envs.vector import MahjongVectorEnv

    with pytest.raises(ValueError):
        MahjongVectorEnv("kawuxing3", 0)
    half_made = MahjongVectorEnv.__new__(MahjongVectorEnv)
    half_made.close()
    assert half_made.closed
