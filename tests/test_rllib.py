"""The RLlib adapter (mjenv/envs/rllib.py): only the acting seat reports, masks ride in the observation, each
seat's rewards add up to its money, and RLlib's PPO trains a shared masked policy on it for a few iterations
(examples/rllib_ppo.py).  Skipped without ``ray[rllib]`` (``pip install -e .[rllib]``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.rllib  # .ci/run runs these after installing the rllib extra


@pytest.fixture(autouse=True)
def _needs_rllib():
    # Imported by the tests that run, not at collection: RLlib takes seconds to import, and each xdist worker
    # collects every module.
    pytest.importorskip("ray.rllib", reason="RLlib is not installed (pip install -e .[rllib])")


def test_only_the_acting_seat_reports_and_rewards_add_up_to_each_seats_money():
    from mjenv.envs.rllib import MahjongRLlibEnv

    env = MahjongRLlibEnv({"seed": 5})
    rng = np.random.default_rng(0)
    obs, infos = env.reset(seed=5)
    hands = 0
    paid = {a: 0.0 for a in env.possible_agents}
    while hands < 6:
        (agent,) = obs  # exactly one seat observes: the engine's actor
        assert agent == f"seat_{int(env.engine.state.actor[0])}" and set(infos) == {agent}
        o = obs[agent]
        assert env.observation_spaces[agent].contains(o)
        legal = np.flatnonzero(o["action_mask"])
        assert (o["action_mask"].astype(bool) == env.engine.mask[0]).all() and len(legal)
        obs, rewards, term, trunc, infos = env.step({agent: int(rng.choice(legal))})
        for a, r in rewards.items():
            paid[a] += r
        if term["__all__"]:
            assert obs == {} and not trunc["__all__"]
            deltas = env.last_result["deltas"]
            for s, a in enumerate(env.possible_agents):
                assert paid[a] == pytest.approx(deltas[s])
            hands += 1
            paid = {a: 0.0 for a in env.possible_agents}
            obs, infos = env.reset()
    with pytest.raises(ValueError, match="expected an action for seat_"):
        env.step({"seat_9": 0})
    with pytest.raises(ValueError, match="unknown key\\(s\\) variantt"):
        MahjongRLlibEnv({"variantt": "gejiu"})


def test_malformed_actions_and_seeds_are_refused_changing_nothing():
    from mjenv.engine.core import IllegalActionError
    from mjenv.envs.rllib import MahjongRLlibEnv

    env = MahjongRLlibEnv({"seed": 5})
    obs, _ = env.reset(seed=5)
    (agent,) = obs
    legal = int(np.flatnonzero(obs[agent]["action_mask"])[0])
    before = env.engine.state.actor.copy(), env.engine.mask.copy(), env.engine.wall_left().copy()
    for bad in (legal + 0.7, str(legal), float("nan"), True, [legal, legal]):
        with pytest.raises(IllegalActionError, match=f"{agent}'s action must be one integer id"):
            env.step({agent: bad})
    after = env.engine.state.actor, env.engine.mask, env.engine.wall_left()
    assert all((a == b).all() for a, b in zip(before, after))
    for seed in (2**64, -1, 1.5):
        with pytest.raises(ValueError, match="seed must be an integer 0..2\\*\\*64-1"):
            env.reset(seed=seed)
        with pytest.raises(ValueError, match="seed must be an integer"):
            MahjongRLlibEnv({"seed": seed})
    env.step({agent: legal})  # the refused calls left the hand playable


def test_rllib_ppo_trains_a_shared_masked_policy_for_a_few_iterations():
    import ray

    spec = importlib.util.spec_from_file_location("rllib_ppo", ROOT / "examples" / "rllib_ppo.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    try:
        rows = example.main(["--iterations", "2", "--batch", "200"])
    finally:
        ray.shutdown()
    assert [r["iteration"] for r in rows] == [1, 2]
    assert rows[-1]["env_steps"] >= 400 and rows[-1]["hands"] >= 2
    assert all(np.isfinite(r["policy_loss"]) for r in rows)
