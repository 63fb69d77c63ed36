"""Tests of train.py: its configs and argument parsing, the opponent pool, and a smoke run with a tiny budget
whose checkpoint is then played by the policy agent and evaluate.py."""

from __future__ import annotations

import csv
import gc
import json
import time
import warnings

import numpy as np
import pytest

import evaluate
import train
from agents import make_agent
from agents.script_args import ArgsError, parse_args
from mjenv.envs.vector import LearnerTables


def test_configs_load_and_the_command_line_overrides_them():
    args, config = parse_args(train.Args, ["--config", "default", "--seed", "7", "--opponents", "random", "self",
                                           "--opponent_weights", "0.5", "0.5", "--no-tensorboard"], config_dir=train.CONFIG_DIR)
    assert config == "default"
    assert args.seed == 7 and args.tensorboard is False
    assert args.opponents == ["random", "self"] and args.opponent_weights == [0.5, 0.5]
    assert args.total_timesteps == 8_192 and args.bc_rounds == 4  # from configs/train/default.toml
    assert args.advice and args.advice_features == "heuristic-advice-v2" and args.bc_teacher == "heuristic-flush"
    long, _ = parse_args(train.Args, ["--config", "long"], config_dir=train.CONFIG_DIR)
    assert long.total_timesteps >= 10 * 131_072 and long.hidden >= args.hidden


def test_config_file_errors_name_the_key(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('total_timestep = 5\n', encoding="utf-8")
    with pytest.raises(ArgsError, match="unknown key\\(s\\) total_timestep; valid keys: .*total_timesteps"):
        parse_args(train.Args, ["--config", str(bad)], config_dir=train.CONFIG_DIR)
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('num_envs = "many"\n', encoding="utf-8")
    with pytest.raises(ArgsError, match="num_envs: expected int, got 'many'"):
        parse_args(train.Args, ["--config", str(wrong)], config_dir=train.CONFIG_DIR)
    with pytest.raises(ArgsError, match="config: 'nope' not found"):
        parse_args(train.Args, ["--config", "nope"], config_dir=train.CONFIG_DIR)


def test_opponent_pool_draws_one_entry_per_hand_by_weight():
    agents = {"random": make_agent("random", seed=1), "heuristic": make_agent("heuristic")}
    pool = train.OpponentPool(None, ["random", "heuristic"], [0.75, 0.25], agents, seed=5)
    which = pool.entry_of(np.arange(20_000))
    assert abs((which == 0).mean() - 0.75) < 0.02
    assert (pool.entry_of(np.arange(50)) == which[:50]).all()  # fixed per episode

    calls = {"random": 0, "heuristic": 0}

    class Counting:
        def __init__(self, name):
            self.name = name
            self.inner = agents[name]

        def act(self, obs, mask):
            calls[self.name] += len(mask)
            return self.inner.act(obs, mask)

    pool.agents = {k: Counting(k) for k in agents}
    core = LearnerTables("kawuxing3", 16, seed=3, opponent=pool)
    pool.core = core
    core.reset(3)
    rng = np.random.default_rng(0)
    for _ in range(40):
        m = core.action_masks()
        core.step((rng.random(m.shape) * m).argmax(1))
    assert calls["random"] > calls["heuristic"] > 0
    with pytest.raises(ValueError, match="2 opponents but 1 weights"):
        train.OpponentPool(core, ["random", "heuristic"], [1.0], agents, seed=0)

    # Each hand's opponent seats were all played by the entry drawn for it: heuristic hands are played as well
    # as the heuristic plays, random hands as badly as random (a learner that is itself random loses far more
    # against the former).
    money = {0: [], 1: []}
    learner = make_agent("random", seed=8)
    core.reset(4)
    while min(len(v) for v in money.values()) < 40:
        m = core.action_masks()
        _, ended, info = core.step(learner.act(None, m))
        for b in np.flatnonzero(ended):
            entry = int(pool.entry_of(np.array([info[b]["episode_id"]]))[0])
            money[entry].append(info[b]["result"]["deltas"][info[b]["seat"]])
    assert np.mean(money[1]) < np.mean(money[0]) - 1.5


def test_train_smoke_run_writes_a_playable_checkpoint(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    start = time.perf_counter()
    args = train.Args(total_timesteps=256, num_envs=8, n_steps=32, batch_size=128, n_epochs=1, channels=8, hidden=16,
                      value_hidden=8, opponents=["random", "heuristic", "self"], opponent_weights=[0.4, 0.3, 0.3],
                      snapshot_every=128, eval_every=256, eval_walls=1, final_eval_walls=2, eval_opponents=["random"],
                      save_every=128, out=str(tmp_path), run_name="smoke", progress=False, tensorboard=False,
                      export=str(tmp_path / "exported.pt"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        summary = train.train(args)
        gc.collect()
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert not [m for m in leaks if "progress.csv" in m], leaks  # the SB3 logger's files are closed
    text = capsys.readouterr().out
    assert "[eval @" in text and "vs random" in text
    folder = tmp_path / "smoke"
    assert (folder / "final.pt").exists() and (tmp_path / "exported.pt").exists()
    assert sorted(p.name for p in (folder / "checkpoints").glob("*.pt")) == ["step_000000128.pt", "step_000000256.pt"]
    assert summary["steps"] == 256
    with open(folder / "eval.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["opponent"] for r in rows] == ["random", "random"] and int(rows[-1]["hands"]) == 12
    assert (folder / "progress.csv").stat().st_size > 0
    assert json.loads((folder / "args.json").read_text())["total_timesteps"] == 256

    # The checkpoint records what it was trained on and plays through the registry and evaluate.py.
    agent = make_agent(str(folder / "final.pt"), "kawuxing3")
    assert agent.meta["timesteps"] == 256 and "final_eval" in agent.meta
    from agents.policy import CheckpointMismatch

    with pytest.raises(CheckpointMismatch, match="cap: trained 8, asked 16"):
        make_agent(str(folder / "final.pt"), "kawuxing3", {"cap": 16})
    out = evaluate.run(evaluate.Args(agents=[str(folder / "final.pt"), "random"], walls=1, out=str(tmp_path),
                                     run_name="ev", progress=False, plots=False, rating=False))
    assert {a["agent"] for a in out["agents"]} == {"final", "random"}
    assert time.perf_counter() - start < 90


def test_learner_inputs_append_advice_then_oracle_rows():
    from agents.advice import AdviceFeatures
    from mjenv.encoding.observation import OracleEncoder

    heuristic = make_agent("heuristic")
    core = LearnerTables("kawuxing3", 6, seed=2, opponent=heuristic)
    core.reset(2)
    for _ in range(5):
        core.step(heuristic.act(core.observe(), core.action_masks()))
    obs, mask = core.observe(), core.action_masks()
    opts = heuristic.opts
    inputs = train.LearnerInputs("kawuxing3", opts, AdviceFeatures("kawuxing3", opts), oracle=True)
    x = inputs.extend(obs, mask, core)
    c = obs.shape[1]
    oracle = OracleEncoder("kawuxing3", opts).encode(core.engine.state, core.seat, engine=core.engine)
    assert x.shape[1] == c + 14 + oracle.shape[1] - c == c + inputs.extra_rows
    assert (x[:, :c] == obs).all()
    assert (x[:, c : c + 14] == AdviceFeatures("kawuxing3", opts).encode(obs, mask)).all()
    assert (x[:, c + 14 :] == oracle[:, c:]).all()
    with pytest.raises(ValueError, match="every table"):
        inputs.extend(obs[:3], mask[:3], core)


def test_advised_run_with_an_oracle_critic(tmp_path):
    """A run with --advice --oracle_critic trains, and its checkpoint is a policy over observation + advice only;
    with an overwhelming advice weight the trained policy still plays exactly the heuristic (score 0 against it)."""
    pytest.importorskip("sb3_contrib")
    args = train.Args(total_timesteps=256, num_envs=8, n_steps=32, batch_size=128, n_epochs=1, channels=8, hidden=16,
                      value_hidden=8, opponents=["heuristic", "self"], opponent_weights=[0.5, 0.5], snapshot_every=128,
                      eval_every=0, final_eval_walls=2, eval_opponents=["heuristic"], out=str(tmp_path), run_name="adv",
                      progress=False, tensorboard=False, curve=False, advice=True, advice_weight=50.0, oracle_critic=True,
                      bc_rounds=1, bc_tables=8, bc_steps=4, bc_policy_weight=0.0)
    summary = train.train(args)
    final = summary["final_eval"]["heuristic"]
    assert final["score"] == 0.0 and final["hands"] == 12
    agent = make_agent(str(tmp_path / "adv" / "final.pt"), "kawuxing3")
    assert agent.checkpoint["features"] == "heuristic-advice-v1" and agent.checkpoint["obs_shape"] == [114, 34]
    assert float(agent.checkpoint["head"]["advice_weight"]) > 40


def test_learner_env_scales_rewards_like_the_cloning_targets():
    """PPO must see money × reward_scale, the scale the cloning step fits the value head to (an unscaled reward
    made the value loss ~100x larger and, under max_grad_norm, starved the policy's gradient)."""
    pytest.importorskip("stable_baselines3")
    from agents.advice import AdviceFeatures
    from mjenv.envs.vector import sb3_vec_env

    raw, scaled = (sb3_vec_env("kawuxing3", 8, seed=5, opponent=make_agent("heuristic")) for _ in range(2))
    opts = make_agent("heuristic").opts
    inputs = train.LearnerInputs("kawuxing3", opts, AdviceFeatures("kawuxing3", opts), oracle=False)
    wrapped = train.learner_vec_env(scaled, inputs, 0.1)
    o_raw, o_wr = raw.reset(), wrapped.reset()
    assert o_wr.shape == (8, o_raw.shape[1] + 14 * 34) and (o_wr[:, : o_raw.shape[1]] == o_raw).all()
    policy = make_agent("heuristic")
    total = 0.0
    for _ in range(60):
        act = policy.act(raw.core.observe(), raw.action_masks())
        raw.step_async(act)
        wrapped.step_async(act)
        (_, r1, d1, _), (_, r2, d2, _) = raw.step_wait(), wrapped.step_wait()
        assert (d1 == d2).all() and np.allclose(r2, 0.1 * r1)
        total += np.abs(r1).sum()
    assert total > 0
