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


def _env_batch(hands: int = 2, seed: int = 3):
    """Observations and masks of every decision of a few random hands of the RLlib env (Kawuxing)."""
    from mjenv.envs.rllib import MahjongRLlibEnv

    env = MahjongRLlibEnv({"seed": seed})
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    rows, masks = [], []
    done = 0
    while done < hands:
        (agent,) = obs
        rows.append(obs[agent]["observations"])
        masks.append(obs[agent]["action_mask"])
        obs, _, term, _, _ = env.step({agent: int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))})
        if term["__all__"]:
            done += 1
            obs, _ = env.reset()
    return env, np.stack(rows), np.stack(masks)


def test_the_resnet_module_from_a_network_checkpoint_is_that_policy_and_saves_back_to_it(tmp_path):
    import torch
    from ray.rllib.core.columns import Columns

    from agents.players.policy import PolicyAgent, save_checkpoint, tensor_checksum, load_checkpoint
    from agents.training.rllib_module import ResNetMaskedModule, module_payload

    shipped = ROOT / "agents" / "checkpoints" / "kawuxing3-network.pt"
    env, obs, mask = _env_batch()
    space = env.observation_spaces["seat_0"]
    module = ResNetMaskedModule(observation_space=space, action_space=env.action_spaces["seat_0"],
                                model_config={"obs_shape": [100, 34], "init": str(shipped)})
    batch = {Columns.OBS: {"observations": torch.as_tensor(obs), "action_mask": torch.as_tensor(mask)}}
    with torch.no_grad():
        out = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].numpy()
        values = module.compute_values(batch)
    assert values.shape == (len(obs),) and torch.isfinite(values).all()
    agent = PolicyAgent(shipped, network_only=True)
    legal = mask.astype(bool)
    np.testing.assert_allclose(out[legal], agent.logits(obs.reshape(len(obs), 100, 34), legal)[legal], rtol=1e-5, atol=1e-5)
    assert (out[~legal] < -1e30).all()  # illegal actions get FLOAT_MIN
    # Back to a checkpoint: the same weights, a network-only checkpoint PolicyAgent plays.
    path = save_checkpoint(tmp_path / "back.pt", module_payload(module, env.rules))
    back = load_checkpoint(path)
    assert back["network_only"] is True and tensor_checksum(back) == tensor_checksum(load_checkpoint(shipped))
    assert (PolicyAgent(path, network_only=True).act(obs.reshape(len(obs), 100, 34), legal) == out.argmax(1)).all()


def test_the_resnet_module_refuses_a_checkpoint_it_cannot_be(tmp_path):
    from agents.training.rllib_module import resolve_model_config

    shipped = str(ROOT / "agents" / "checkpoints" / "kawuxing3-network.pt")
    with pytest.raises(ValueError, match="obs_shape"):
        resolve_model_config({})
    with pytest.raises(ValueError, match="is not a network-only resnet1d checkpoint"):
        resolve_model_config({"obs_shape": [100, 34], "init": str(ROOT / "agents" / "checkpoints" / "kawuxing3-default.pt")})
    with pytest.raises(ValueError, match="reads observations of shape"):
        resolve_model_config({"obs_shape": [122, 34], "init": shipped})
    with pytest.raises(ValueError, match="channels=32 disagrees"):
        resolve_model_config({"obs_shape": [100, 34], "init": shipped, "channels": 32})
    with pytest.raises(ValueError, match="checkpoint file not found"):
        resolve_model_config({"obs_shape": [100, 34], "init": str(tmp_path / "none.pt")})
    with pytest.raises(ValueError, match="derived='mjenv-hand-v1' disagrees"):
        resolve_model_config({"obs_shape": [100, 34], "init": shipped, "derived": "mjenv-hand-v1"})
    with pytest.raises(ValueError, match="derived='mjenv-hand-v9': must be one of"):
        resolve_model_config({"obs_shape": [100, 34], "derived": "mjenv-hand-v9"})
    with pytest.raises(ValueError, match="computed from kawuxing4's mjenv-obs-v1 rows"):
        resolve_model_config({"obs_shape": [100, 34], "derived": "mjenv-hand-v1", "variant": "kawuxing4"})
    shape, arch, ck, hand = resolve_model_config({"obs_shape": [100, 34], "blocks": 2})
    assert ck is None and hand is None and shape == (100, 34)
    assert arch == {"net": "resnet1d", "channels": 64, "blocks": 2, "hidden": 256}
    shape, _, _, hand = resolve_model_config({"obs_shape": [100, 34], "derived": "mjenv-hand-v1"})
    assert hand.version == "mjenv-hand-v1" and shape == (118, 34)


def test_the_resnet_module_computes_the_derived_rows_of_a_hand_checkpoint(tmp_path):
    """From ``kawuxing3-network-hand.pt`` (which reads ``mjenv-hand-v1``) the module computes the derived rows from
    the env's v1 observation: its logits are the checkpoint's as PolicyAgent plays it, and it saves back to it."""
    import torch
    from ray.rllib.core.columns import Columns

    from agents.players.policy import PolicyAgent, load_checkpoint, save_checkpoint, tensor_checksum
    from agents.training.rllib_module import ResNetMaskedModule, module_payload

    shipped = ROOT / "agents" / "checkpoints" / "kawuxing3-network-hand.pt"
    env, obs, mask = _env_batch()
    module = ResNetMaskedModule(observation_space=env.observation_spaces["seat_0"],
                                action_space=env.action_spaces["seat_0"],
                                model_config={"obs_shape": [100, 34], "init": str(shipped)})
    assert module.obs_shape == (118, 34)
    batch = {Columns.OBS: {"observations": torch.as_tensor(obs), "action_mask": torch.as_tensor(mask)}}
    with torch.no_grad():
        out = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].numpy()
        values = module.compute_values(batch)
    assert values.shape == (len(obs),) and torch.isfinite(values).all()
    legal = mask.astype(bool)
    agent = PolicyAgent(shipped, network_only=True)
    np.testing.assert_allclose(out[legal], agent.logits(obs.reshape(len(obs), 100, 34), legal)[legal], rtol=1e-5, atol=1e-5)
    back = load_checkpoint(save_checkpoint(tmp_path / "back.pt", module_payload(module, env.rules)))
    assert back["derived"] == "mjenv-hand-v1" and back["obs_shape"] == [118, 34]
    assert back["network_only"] is True and tensor_checksum(back) == tensor_checksum(load_checkpoint(shipped))


def test_rllib_ppo_trains_the_network_only_model_and_writes_a_checkpoint_that_plays(tmp_path):
    import ray

    from agents.players.policy import PolicyAgent, load_checkpoint
    from mjenv.encoding.observation import encode
    from mjenv.engine.core import Engine

    spec = importlib.util.spec_from_file_location("rllib_ppo", ROOT / "examples" / "rllib_ppo.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    out = tmp_path / "rl.pt"
    try:
        rows = example.main(["--model", "resnet1d", "--channels", "8", "--blocks", "1", "--hidden", "32",
                             "--derived", "mjenv-hand-v1", "--iterations", "1", "--batch", "200", "--save", str(out)])
    finally:
        ray.shutdown()
    assert rows[-1]["env_steps"] >= 200 and np.isfinite(rows[-1]["policy_loss"])
    ck = load_checkpoint(out)
    assert ck["network_only"] is True and ck["arch"] == {"net": "resnet1d", "channels": 8, "blocks": 1, "hidden": 32}
    assert ck["meta"]["algo"] == "RLlib PPO" and ck["meta"]["iterations"] == 1
    assert ck["derived"] == "mjenv-hand-v1" and ck["obs_shape"] == [118, 34]  # the module computed the hand rows
    agent = PolicyAgent(out, network_only=True)
    eng = Engine("kawuxing3", 4)
    eng.reset(seed=0)
    for _ in range(20):  # the saved policy plays legal moves
        act = agent.act(encode(eng, eng.state.actor), eng.mask)
        assert eng.mask[np.arange(4), act].all()
        eng.step(act)
    with pytest.raises(SystemExit):
        example.main(["--init", str(out)])  # --init needs --model resnet1d
