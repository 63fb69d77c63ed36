"""The all-seat trainer's oracle critic (``--oracle_critic``, agents/training/ppo.py): the value head reads the
observation plus the oracle rows through its own trunk, the policy never sees those rows, and checkpoints hold the
policy alone; tiny networks."""

from __future__ import annotations

import csv

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.players.policy import PolicyAgent, load_checkpoint  # noqa: E402
from agents.training.ppo import SeatNet, SeatRollouts, critic_rows, seat_spec  # noqa: E402
from mjenv.encoding.observation import ObservationEncoder, OracleEncoder  # noqa: E402
from mjenv.rules import load_rules  # noqa: E402

RULES = load_rules("kawuxing3")
SHAPE = ObservationEncoder(rules=RULES).shape


def test_critic_rows_are_the_oracle_encodings_extra_rows():
    extra = critic_rows(RULES)
    assert extra == OracleEncoder(rules=RULES).shape[0] - SHAPE[0] > 0
    assert critic_rows(load_rules("gejiu")) == OracleEncoder("gejiu").shape[0] - ObservationEncoder("gejiu").shape[0]


@pytest.mark.parametrize("net", [None, "resnet1d"])
def test_the_policy_ignores_the_oracle_rows_and_the_critic_reads_them(net):
    torch.manual_seed(0)
    extra = critic_rows(RULES)
    model = SeatNet(SHAPE, 8, 16, 8, net=net, blocks=1, critic_rows=extra)
    x = torch.rand(5, (SHAPE[0] + extra) * SHAPE[1])
    y = x.clone()
    y[:, SHAPE[0] * SHAPE[1]:] = torch.rand(5, extra * SHAPE[1])  # other hands, another wall
    with torch.no_grad():
        (lx, vx), (ly, vy) = model(x), model(y)
    assert torch.equal(lx, ly) and not torch.allclose(vx, vy)
    assert model.fold_batch([x]) is None  # folding is for the shared trunk only
    with pytest.raises(ValueError, match="needs a policy without advice rows"):
        SeatNet(SHAPE, 8, 16, 8, advice_row=SHAPE[0] - 14, critic_rows=extra)


def test_rollout_samples_hold_the_observation_then_the_oracle_rows():
    import train

    args = train.Args(net="resnet1d", channels=8, blocks=1, hidden=16, value_hidden=8, num_envs=4, n_steps=12,
                      opponents=["random"], opponent_weights=[1.0], oracle_critic=True, threads=1, precision="fp32")
    spec = seat_spec(args, RULES, SHAPE, None)
    assert spec["critic_rows"] == critic_rows(RULES)
    worker = SeatRollouts(spec)
    st, eng = worker.engine.state, worker.engine
    # the first step's samples are every table's actor, encoded before the step: compare with both encoders
    seats, tables = st.actor.astype(np.int64).copy(), np.arange(4)
    plain = ObservationEncoder(rules=RULES).encode(st, seats, tables, engine=eng)
    oracle = OracleEncoder(rules=RULES).encode(st, seats, tables, engine=eng)
    out = worker.collect()
    first = out["obs"][:4].reshape(4, -1, SHAPE[1])
    assert first.shape[1] == SHAPE[0] + critic_rows(RULES)
    assert (first[:, : SHAPE[0]] == plain).all() and (first == oracle).all()
    assert np.isfinite(out["value"]).all() and np.isfinite(out["advantage"]).all()


def test_an_oracle_critic_run_trains_a_network_only_policy_and_logs_explained_variance(tmp_path):
    import train
    from agents.script_args import ArgsError

    args = train.Args(net="resnet1d", channels=8, blocks=1, hidden=16, value_hidden=8, advice=False, seed=0,
                      total_timesteps=400, num_envs=8, n_steps=32, batch_size=128, n_epochs=2, learning_rate=0.001,
                      opponents=["random"], opponent_weights=[1.0], eval_every=0, final_eval_walls=1,
                      eval_opponents=["random"], out=str(tmp_path), run_name="oc", progress=False, tensorboard=False,
                      curve=False, threads=1, precision="fp32", device="cpu", oracle_critic=True)
    summary = train.train(args)
    assert summary["steps"] >= 400
    ck = load_checkpoint(tmp_path / "oc" / "final.pt")
    assert ck["network_only"] is True and ck["obs_shape"] == list(SHAPE)
    assert not any(k.startswith("critic") for k in ck["trunk"])  # the checkpoint holds the policy alone
    PolicyAgent(ck, network_only=True)
    with open(tmp_path / "oc" / "progress.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(np.isfinite(float(r["explained_variance"])) and float(r["adv_std"]) > 0 for r in rows)
    with pytest.raises(ArgsError, match="oracle critic needs a policy without advice rows"):
        train.check_args(train.Args(oracle_critic=True, advice=True))


def test_the_value_warm_up_fits_the_critic_and_leaves_the_policy_alone(tmp_path):
    import train
    from agents.script_args import ArgsError
    from agents.training.ppo import merge_batches, value_params, warm_value_head

    args = train.Args(net="resnet1d", channels=8, blocks=1, hidden=16, value_hidden=8, num_envs=8, n_steps=32,
                      batch_size=64, n_epochs=2, opponents=["random"], opponent_weights=[1.0], oracle_critic=True,
                      threads=1, precision="fp32", value_warmup=3, value_warmup_lr=0.01, total_timesteps=1, progress=False)
    spec = seat_spec(args, RULES, SHAPE, None)
    worker = SeatRollouts(spec)
    net = SeatNet(SHAPE, 8, 16, 8, net="resnet1d", blocks=1, critic_rows=spec["critic_rows"])
    names = {id(p) for p in value_params(net)}
    assert names == {id(p) for p in [*net.value.parameters(), *net.critic.parameters()]}
    policy_before = {k: v.clone() for k, v in net.state_dict().items() if k.startswith(("trunk", "head"))}
    rows = warm_value_head(net, args, lambda state: merge_batches([worker.collect(state)]))
    assert [r["rollout"] for r in rows] == [1, 2, 3] and all(r["samples"] > 0 for r in rows)
    after = net.state_dict()
    assert all(torch.equal(v, after[k]) for k, v in policy_before.items())  # the policy is untouched
    assert rows[-1]["explained_variance"] > rows[0]["explained_variance"]  # the fitted critic explains more
    assert warm_value_head(net, train.Args(value_warmup=2, total_timesteps=0), lambda s: {}) == []
    with pytest.raises(ArgsError, match="--value_warmup: only with --trainer allseat"):
        train.check_args(train.Args(trainer="sb3", value_warmup=1))
