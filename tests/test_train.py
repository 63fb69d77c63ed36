"""Tests of train.py: its configs and argument parsing, the opponent pool, and a smoke run with a tiny budget
whose checkpoint is then played by the policy agent and evaluate.py."""

from __future__ import annotations

import csv
import importlib.util
import gc
import json
import warnings

import numpy as np
import pytest

import evaluate
import train
from agents import make_agent
from agents.training import sb3
from agents.script_args import ArgsError, parse_args
from mjenv.envs.vector import LearnerTables


def test_configs_load_and_the_command_line_overrides_them():
    args, config = parse_args(train.Args, ["--config", "advised", "--seed", "7", "--opponents", "random", "self",
                                           "--opponent_weights", "0.5", "0.5", "--no-tensorboard"], config_dir=train.CONFIG_DIR)
    assert config == "advised"
    assert args.seed == 7 and args.tensorboard is False
    assert args.opponents == ["random", "self"] and args.opponent_weights == [0.5, 0.5]
    assert args.total_timesteps == 8_192 and args.bc_rounds == 4  # from configs/train/advised.toml
    assert args.advice and args.advice_features == "heuristic-advice-v2" and args.bc_teacher == "heuristic-flush"
    # python train.py (no --config): the network-only recipe of kawuxing3-network-dh.pt
    default, config = parse_args(train.Args, [], config_dir=train.CONFIG_DIR, default_config="default")
    assert config == "default" and not default.advice and default.net == "resnet1d" and default.derived == "mjenv-hand-v1"
    assert default.netclone_sets == 2 and default.netclone_teacher.endswith("kawuxing3-long.pt")
    assert default.init_checkpoint.endswith("kawuxing3-network-hand.pt")
    assert (train.CONFIG_DIR.parents[1] / default.init_checkpoint).is_file()
    assert default.total_timesteps == 0 and default.bc_rounds == 0
    dh2, _ = parse_args(train.Args, ["--config", "network-dh2"], config_dir=train.CONFIG_DIR)  # kawuxing3-network-dh2.pt
    assert dh2.netclone_teacher.endswith("kawuxing3-default.pt") and dh2.init_checkpoint.endswith("kawuxing3-network-dh.pt")
    assert (dh2.netclone_sets, dh2.netclone_seed, dh2.netclone_holdout_seed, dh2.netclone_depart_weight) == (3, 921, 924, 3.0)
    selfplay, _ = parse_args(train.Args, ["--config", "selfplay"], config_dir=train.CONFIG_DIR)
    assert selfplay.total_timesteps >= 10 * 131_072 and selfplay.hidden >= args.hidden


def test_configs_have_one_section_per_stage_and_a_misplaced_key_is_an_error(tmp_path):
    """Every ``Args`` field belongs to exactly one section; the shipped configs keep every key in its section (a
    flat file still loads); a key under another section, an unknown section or a key given twice is refused."""
    import dataclasses
    import tomllib

    from agents.training.config import SECTIONS

    homes = [k for keys in SECTIONS.values() for k in keys]
    assert sorted(homes) == sorted(f.name for f in dataclasses.fields(train.Args))
    for name in ("default", "advised", "distill", "long", "selfplay"):  # the configs of train.py's stages
        path = train.CONFIG_DIR / f"{name}.toml"
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        assert set(data) <= set(SECTIONS) and all(isinstance(v, dict) for v in data.values()), path.name
        for sec, table in data.items():
            assert set(table) <= set(SECTIONS[sec]), (path.name, sec)
        parse_args(train.Args, ["--config", path.stem], config_dir=train.CONFIG_DIR)
    flat = tmp_path / "flat.toml"
    flat.write_text("seed = 3\nbc_rounds = 1\n", encoding="utf-8")
    args, _ = parse_args(train.Args, ["--config", str(flat)], config_dir=train.CONFIG_DIR)
    assert args.seed == 3 and args.bc_rounds == 1
    for text, message in (("[ppo]\nbc_rounds = 1\n", "\\[ppo\\] bc_rounds: this key belongs in \\[clone\\]"),
                          ("[stage9]\nseed = 1\n", "unknown section \\[stage9\\]"),
                          ("seed = 1\n[run]\nseed = 2\n", "seed is given twice")):
        bad = tmp_path / "bad.toml"
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(ArgsError, match=message):
            parse_args(train.Args, ["--config", str(bad)], config_dir=train.CONFIG_DIR)


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
    pool = sb3.OpponentPool(None, ["random", "heuristic"], [0.75, 0.25], agents, seed=5)
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
        sb3.OpponentPool(core, ["random", "heuristic"], [1.0], agents, seed=0)

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
    args = train.Args(trainer="sb3", total_timesteps=256, num_envs=8, n_steps=32, batch_size=128, n_epochs=1, channels=8, hidden=16,
                      value_hidden=8, opponents=["random", "heuristic", "self"], opponent_weights=[0.4, 0.3, 0.3],
                      snapshot_every=128, eval_every=256, eval_walls=1, final_eval_walls=2, eval_opponents=["random"],
                      save_every=128, out=str(tmp_path), run_name="smoke", progress=False, tensorboard=False,
                      export=str(tmp_path / "exported.pt"), threads=1)
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
    assert summary["precision"] == agent.meta["precision"] == "fp32"  # the SB3 path runs float32 under auto
    from agents.players.policy import CheckpointMismatch

    with pytest.raises(CheckpointMismatch, match="cap: trained 8, asked 16"):
        make_agent(str(folder / "final.pt"), "kawuxing3", {"cap": 16})
    out = evaluate.run(evaluate.Args(agents=[str(folder / "final.pt"), "random"], walls=1, out=str(tmp_path),
                                     run_name="ev", progress=False, plots=False, rating=False))
    assert {a["agent"] for a in out["agents"]} == {"final", "random"}


def test_learner_inputs_append_advice_then_oracle_rows():
    from agents.players.advice import AdviceFeatures
    from mjenv.encoding.observation import OracleEncoder

    heuristic = make_agent("heuristic")
    core = LearnerTables("kawuxing3", 6, seed=2, opponent=heuristic)
    core.reset(2)
    for _ in range(5):
        core.step(heuristic.act(core.observe(), core.action_masks()))
    obs, mask = core.observe(), core.action_masks()
    opts = heuristic.opts
    inputs = sb3.LearnerInputs("kawuxing3", opts, AdviceFeatures("kawuxing3", opts), oracle=True)
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
    args = train.Args(trainer="sb3", total_timesteps=256, num_envs=8, n_steps=32, batch_size=128, n_epochs=1, channels=8, hidden=16,
                      value_hidden=8, opponents=["heuristic", "self"], opponent_weights=[0.5, 0.5], snapshot_every=128,
                      eval_every=0, final_eval_walls=2, eval_opponents=["heuristic"], out=str(tmp_path), run_name="adv",
                      progress=False, tensorboard=False, curve=False, advice=True, advice_weight=50.0, oracle_critic=True,
                      bc_rounds=1, bc_tables=8, bc_steps=4, bc_policy_weight=0.0, bc_holdout=64, threads=1)
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
    from agents.players.advice import AdviceFeatures
    from mjenv.envs.vector import sb3_vec_env

    raw, scaled = (sb3_vec_env("kawuxing3", 8, seed=5, opponent=make_agent("heuristic")) for _ in range(2))
    opts = make_agent("heuristic").opts
    inputs = sb3.LearnerInputs("kawuxing3", opts, AdviceFeatures("kawuxing3", opts), oracle=False)
    wrapped = sb3.learner_vec_env(scaled, inputs, 0.1)
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


# ------------------------------------------------------------------------------------------ all-seat trainer


def test_seat_advantages_follow_each_seats_own_decisions():
    """Two seats' decisions interleaved in one buffer (0, 1, 0, 1, 0): each seat's returns discount its own rewards
    along its own sequence; seat 0's hand ends, seat 1's is cut by the rollout and bootstrapped."""
    from agents.training.ppo import seat_advantages

    reward = np.array([1.0, 10.0, 2.0, 20.0, 3.0])
    value = np.zeros(5)
    nxt = np.array([2, 3, 4, -1, -1])
    terminal = np.array([False, False, False, False, True])
    bootstrap = np.array([0.0, 0.0, 0.0, 100.0, 0.0])
    g = 0.5
    adv, ret = seat_advantages(reward, value, nxt, terminal, bootstrap, gamma=g, lam=1.0)
    assert np.allclose(ret, [1 + g * 2 + g * g * 3, 10 + g * 20 + g * g * 100, 2 + g * 3, 20 + g * 100, 3])
    assert np.allclose(adv, ret)  # zero values
    value = np.array([0.5, 1.0, -1.0, 2.0, 0.25])
    adv, ret = seat_advantages(reward, value, nxt, terminal, bootstrap, gamma=g, lam=0.0)  # one-step TD errors
    assert np.allclose(adv, [1 + g * -1.0 - 0.5, 10 + g * 2.0 - 1.0, 2 + g * 0.25 + 1.0, 20 + g * 100 - 2.0, 3 - 0.25])
    assert np.allclose(ret, adv + value)


def _seat_spec(**over):
    from agents.players.base import resolve_options
    from mjenv.encoding.observation import ObservationEncoder
    from mjenv.rules.options import options_to_dict

    opts = resolve_options("kawuxing3", None)
    spec = dict(variant="kawuxing3", options=options_to_dict(opts, "kawuxing3"),
                obs_shape=list(ObservationEncoder("kawuxing3", opts).shape), channels=4, hidden=8, value_hidden=4,
                advice=None, num_tables=12, n_steps=150, seed=3, gamma=1.0, gae_lambda=1.0, reward_scale=1.0,
                opponents=["heuristic"], opponent_weights=[1.0], frozen_share=0.3, threads=1)
    spec.update(over)
    return spec


def test_every_seats_rewards_add_up_to_its_money_for_the_hand():
    """Rollouts on the engine: each learner seat's samples of a finished hand carry rewards that add up to that
    seat's money for the hand (kong money and settlement), never another seat's; frozen seats give no samples."""
    pytest.importorskip("torch")
    from agents.training.ppo import SeatRollouts

    r = SeatRollouts(_seat_spec())
    batch = r.collect()
    st = batch["stats"]
    assert st["samples"] == len(batch["action"]) > 0 and st["hands"] >= 20
    total: dict = {}
    for e, s, rw in zip(batch["episode"], batch["seat"], batch["reward"]):
        total[(int(e), int(s))] = total.get((int(e), int(s)), 0.0) + float(rw)
    checked = [(e, s, m) for e, s, m in st["finished"] if (e, s) in total]
    assert len(checked) >= 40 and any(m != 0 for _, _, m in checked)
    assert all(abs(total[(e, s)] - m) < 1e-9 for e, s, m in checked)
    # every sample's successor is the same seat's next decision of the same hand
    k = np.flatnonzero(batch["nxt"] >= 0)
    j = batch["nxt"][k]
    assert (j > k).all() and (batch["seat"][j] == batch["seat"][k]).all() and (batch["episode"][j] == batch["episode"][k]).all()
    # a hand's frozen seats (played by the heuristic; finished lists learner seats only) leave no sample
    learners: dict = {}
    for e, s, _ in st["finished"]:
        learners.setdefault(e, set()).add(s)
    assert any(len(v) < 3 for v in learners.values()) and any(len(v) == 3 for v in learners.values())
    sampled = {(int(e), int(s)) for e, s in zip(batch["episode"], batch["seat"]) if int(e) in learners}
    assert all(s in learners[e] for e, s in sampled)
    assert "heuristic" in st["money"]


def test_sampled_actions_are_legal_and_follow_the_policy():
    """The rollouts' sampler (inverse CDF) never draws an action of probability 0, first and last columns included,
    and its frequencies match the probabilities."""
    torch = pytest.importorskip("torch")
    from agents.training.ppo import MASKED, sample_actions

    logits = torch.tensor([[0.0, 1.0, MASKED, 2.0, MASKED], [MASKED, 0.5, 0.5, MASKED, MASKED],
                           [MASKED, MASKED, MASKED, MASKED, 3.0]]).repeat(4000, 1)
    logp = torch.log_softmax(logits, 1)
    a = sample_actions(logp, torch.Generator().manual_seed(0))
    assert torch.gather(logits, 1, a[:, None]).gt(MASKED).all()
    freq = torch.bincount(a[0::3], minlength=5).double() / 4000
    assert torch.allclose(freq, logp[0].exp().double(), atol=0.03)
    assert (a[2::3] == 4).all()


def test_precision_auto_is_bf16_only_for_the_allseat_trainer_on_native_bfloat16(monkeypatch):
    """The default ``--precision auto`` resolves to bf16 for the all-seat trainer where the CPU computes bfloat16
    natively and to fp32 elsewhere and for the SB3 path; an explicit bf16 is refused without native bfloat16."""
    import agents.training.ppo as selfplay

    assert train.Args().precision == "auto"
    args = train.Args(total_timesteps=64, num_envs=2, n_steps=32, batch_size=32)
    for native, allseat in ((True, "bf16"), (False, "fp32")):
        monkeypatch.setattr(selfplay, "bf16_native", lambda native=native: native)
        assert selfplay.resolve_precision("auto", "allseat") == allseat
        assert selfplay.resolve_precision("auto", "sb3") == "fp32"
        assert selfplay.resolve_precision("fp32", "allseat") == "fp32"
        train.check_args(args)  # auto is accepted with or without native bfloat16
    with pytest.raises(ArgsError, match="--precision bf16: this CPU has no native bfloat16"):
        train.check_args(train.Args(precision="bf16", total_timesteps=64, num_envs=2, n_steps=32, batch_size=32))
    with pytest.raises(ArgsError, match="--precision: 'fp16' is not auto, fp32 or bf16"):
        train.check_args(train.Args(precision="fp16"))


def test_bf16_trunk_keeps_the_logits_and_the_advice_in_float32():
    """Under ``precision="bf16"`` only the trunk runs in bfloat16: the head (linear part plus advice weight ×
    advice) adds in float32, so the logits are not bfloat16-rounded, stay within rounding of the trunk's features
    of the float32 network's, and a weight-10 advice cannot be outvoted by rounding; the folded update path
    computes the same function."""
    torch = pytest.importorskip("torch")
    from agents.players.advice import ADVICE_ROWS
    from agents.training.ppo import SeatNet

    torch.manual_seed(0)
    shape, advice_row = (6 + ADVICE_ROWS, 34), 6
    nets = {p: SeatNet(shape, 4, 16, 8, advice_row, 10.0, precision=p) for p in ("fp32", "bf16")}
    nets["bf16"].load_state_dict(nets["fp32"].state_dict())
    x = torch.rand(64, shape[0], shape[1])
    x[:, advice_row:] = 0.0
    x[torch.arange(64), advice_row, torch.randint(0, 34, (64,))] = 1.0  # the advised discard, one tile per row
    x = x.reshape(64, -1)
    with torch.no_grad():
        (l32, v32), (l16, v16) = (nets[p](x) for p in ("fp32", "bf16"))
        tile, scalar, parts = nets["bf16"].fold_batch([x])
        folded, _ = nets["bf16"].folded(tile, scalar, *parts[0])
    assert l16.dtype == v16.dtype == torch.float32
    assert not torch.equal(l16, l16.to(torch.bfloat16).float())  # not rounded to bfloat16 after the head
    assert (l16 - l32).abs().max() < 0.05 and (v16 - v32).abs().max() < 0.05
    assert torch.equal(l16.argmax(1), l32.argmax(1))
    assert (folded - l16).abs().max() < 0.05


def test_a_rollout_reuses_its_sample_buffer_only_when_no_batch_holds_it():
    """A batch the caller keeps is never overwritten by the next rollout; once dropped, its buffer is reused."""
    pytest.importorskip("torch")
    from agents.training.ppo import SeatRollouts

    r = SeatRollouts(_seat_spec(num_tables=3, n_steps=10, frozen_share=0.0, opponents=["random"]))
    first = r.collect()
    kept = first["obs"].copy()
    second = r.collect()
    assert np.array_equal(first["obs"], kept) and not np.shares_memory(first["obs"], second["obs"])
    buffer = id(second["obs"].base)  # an id, not a reference: a reference would keep the buffer taken
    del first, second
    third = r.collect()
    assert id(third["obs"].base) == buffer


def test_the_update_reads_worker_parts_as_their_concatenation():
    """ppo_update on a merged batch whose observations stay a list of per-worker arrays trains the same weights,
    bit for bit, as on those arrays concatenated (what one worker's batch of all the samples would give)."""
    torch = pytest.importorskip("torch")
    from agents.training.ppo import SeatNet, SeatRollouts, merge_batches, ppo_update

    spec = _seat_spec(num_tables=3, n_steps=30, frozen_share=0.0, opponents=["random"])
    parts = [SeatRollouts(spec, w).collect() for w in (0, 1)]
    merged = merge_batches(parts)
    assert isinstance(merged["obs"], list) and len(merged["action"]) == sum(len(p["action"]) for p in parts)
    whole = dict(merged, obs=np.concatenate(merged["obs"]))
    weights = []
    for batch in (merged, whole):
        torch.manual_seed(0)
        net = SeatNet(spec["obs_shape"], 4, 8, 4)
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        logs = ppo_update(net, opt, batch, epochs=2, batch_size=32, clip_range=0.2, ent_coef=0.01, vf_coef=0.5,
                          max_grad_norm=0.5, lr=1e-3, rng=np.random.default_rng(5))
        assert all(np.isfinite(v) for v in logs.values())
        weights.append(net.state_dict())
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_allseat_smoke_run_trains_and_writes_a_playable_checkpoint(tmp_path):
    pytest.importorskip("torch")
    args = train.Args(total_timesteps=600, num_envs=8, n_steps=40, batch_size=128, n_epochs=1, channels=8, hidden=16,
                      value_hidden=8, opponents=["heuristic", "self"], opponent_weights=[0.5, 0.5], frozen_share=0.25,
                      snapshot_every=300, eval_every=0, final_eval_walls=1, eval_opponents=["random"], save_every=300,
                      out=str(tmp_path), run_name="all", progress=False, tensorboard=False, curve=False, bc_rounds=0,
                      threads=1)
    before = train.Args().trainer
    summary = train.train(args)
    assert before == "allseat" and summary["trainer"] == "allseat"
    assert summary["steps"] >= 600 and summary["iterations"] >= 2
    folder = tmp_path / "all"
    with open(folder / "progress.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == summary["iterations"] and all(np.isfinite(float(r["value_loss"])) for r in rows)
    agent = make_agent(str(folder / "final.pt"), "kawuxing3")
    assert agent.meta["algo"] == "allseat-ppo" and agent.meta["timesteps"] == summary["steps"]
    from agents.training.ppo import resolve_precision

    used = resolve_precision("auto", "allseat")  # the default, as resolved on this CPU, is what the run records
    recorded = json.loads((folder / "args.json").read_text())
    assert summary["precision"] == agent.meta["precision"] == recorded["precision"] == used
    assert recorded["precision_requested"] == "auto"
    assert len(list((folder / "checkpoints").glob("*.pt"))) >= 1


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="Ray is not installed (pip install -e .[ray])")
def test_one_ray_worker_gives_the_local_runs_result(tmp_path):
    """``--ray`` with one rollout worker (a Ray actor; the learner stays here) trains exactly the local run's
    weights for the same seed: same rollouts, same updates, bit for bit."""
    pytest.importorskip("torch")
    import ray
    import torch

    from agents.players.policy import load_checkpoint

    common = dict(total_timesteps=500, num_envs=6, n_steps=50, batch_size=128, n_epochs=1, channels=4, hidden=8,
                  value_hidden=4, opponents=["random", "self"], opponent_weights=[0.5, 0.5], frozen_share=0.3,
                  snapshot_every=250, eval_every=0, final_eval_walls=1, eval_opponents=["random"], out=str(tmp_path),
                  progress=False, tensorboard=False, curve=False, bc_rounds=0, threads=1, seed=4)
    local = train.train(train.Args(run_name="local", **common))
    try:
        remote = train.train(train.Args(run_name="ray", ray="local", ray_workers=1, **common))
        assert ray.cluster_resources()["CPU"] == 1
    finally:
        ray.shutdown()
    assert remote["steps"] == local["steps"] and remote["iterations"] == local["iterations"] >= 2
    a, b = (load_checkpoint(tmp_path / run / "final.pt") for run in ("local", "ray"))
    for part in ("trunk", "head"):
        assert all(torch.equal(a[part][k], b[part][k]) for k in a[part])
    assert a["checksum"] == b["checksum"]
    assert remote["rollout_worker_cpu_seconds"] > 0 and local["rollout_worker_cpu_seconds"] is None
