"""Tests of the behaviour-cloning warm start (agents/training/clone.py) and of train.py with it: returns that add up to the
hand's money, a tiny cloning run that learns the heuristic's choices on held-out states, the schedules from the
config, and a smoke run writing clone.json and the learning curve."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import train  # noqa: E402
from agents import make_agent  # noqa: E402
from agents.training.clone import agreement, behaviour_clone, collect  # noqa: E402
from agents.players.policy import make_head, make_trunk  # noqa: E402
from mjenv.encoding.observation import ObservationEncoder  # noqa: E402
from mjenv.envs.vector import LearnerTables  # noqa: E402
from mjenv.rules.options import load_rules  # noqa: E402


def test_collect_labels_are_legal_and_returns_add_up_to_the_hand():
    teacher = make_agent("heuristic")
    core = LearnerTables("kawuxing3", 6, opponent=teacher, seed=4)
    core.reset(4)
    data = collect(core, teacher, 60, gamma=1.0, reward_scale=1.0)
    assert data["mask"][np.arange(len(data["label"])), data["label"]].all()
    assert data["obs"].shape == (360,) + ObservationEncoder("kawuxing3", load_rules("kawuxing3")).shape
    # Replay the same tables: each hand's first decision has a return equal to the learner's money for the hand.
    core = LearnerTables("kawuxing3", 6, opponent=teacher, seed=4)
    core.reset(4)
    first = np.ones(6, bool)
    starts, money = [], {}
    for t in range(60):
        for b in np.flatnonzero(first):
            starts.append((t * 6 + b, b, int(core.episode[b])))
        _, ended, info = core.step(teacher.act(core.observe(), core.action_masks()))
        first = ended.copy()
        for b in np.flatnonzero(ended):
            money[info[b]["episode_id"]] = info[b]["result"]["deltas"][info[b]["seat"]]
    checked = 0
    for k, b, ep in starts:
        if ep in money:
            assert data["has_ret"][k]
            assert data["ret"][k] == pytest.approx(money[ep], abs=1e-4)
            checked += 1
    assert checked >= 10
    assert not data["has_ret"][-6:].all()  # the unfinished hands at the end have no return


def test_tiny_cloning_run_agrees_with_the_heuristic_on_held_out_states():
    torch.manual_seed(0)
    opts = load_rules("kawuxing3")
    shape = ObservationEncoder("kawuxing3", opts).shape
    trunk, head = make_trunk(shape, 16, 64), make_head(64)

    def forward(x):
        return head(trunk(x)), None

    def greedy(obs, mask):
        with torch.no_grad():
            logits = head(trunk(torch.as_tensor(obs.reshape(len(obs), -1))))
        return logits.masked_fill(~torch.as_tensor(mask), float("-inf")).argmax(1).numpy()

    teacher = make_agent("heuristic")
    held = LearnerTables("kawuxing3", 32, opponent=teacher, seed=99)
    held.reset(99)
    before, n = agreement(greedy, collect(held, teacher, 16))
    assert n > 400
    report = behaviour_clone(forward, list(trunk.parameters()) + list(head.parameters()), "kawuxing3", opts,
                             rounds=3, tables=48, steps_per_round=24, epochs=3, holdout=512, seed=1)
    assert report.states == 3 * 48 * 24 and len(report.rounds) == 3
    assert report.rounds[-1]["policy_loss"] < report.rounds[0]["policy_loss"]
    # An untrained network agrees with the heuristic by chance (about one decision in ten); the clone far more.
    assert report.holdout_agreement > 0.35
    assert report.holdout_agreement > before + 0.2


def test_behaviour_clone_rejects_empty_runs():
    with pytest.raises(ValueError, match="rounds"):
        behaviour_clone(lambda x: (x, None), [torch.zeros(1, requires_grad=True)], "kawuxing3", None, rounds=0)


def test_train_with_cloning_writes_clone_report_curve_and_schedules(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    args = train.Args(total_timesteps=512,  # two all-seat iterations: the second one is past the schedule start
                      num_envs=8, n_steps=32, batch_size=128, n_epochs=1, channels=8, hidden=16,
                      value_hidden=8, opponents=["random", "heuristic"], opponent_weights=[0.5, 0.5],
                      snapshot_every=128, eval_every=256, eval_walls=1, final_eval_walls=1, eval_opponents=["random"],
                      save_every=256, out=str(tmp_path), run_name="bc", progress=False, tensorboard=False,
                      bc_rounds=1, bc_tables=8, bc_steps=8, bc_epochs=1, bc_holdout=64, ent_coef=0.02, ent_coef_final=0.0,
                      learning_rate=1e-3, lr_final=1e-4, threads=1)
    train.train(args)
    text = capsys.readouterr().out
    assert "[clone 1/1]" in text and "held-out agreement" in text
    assert "[eval @         0]" in text  # the curve starts at the cloned policy
    folder = tmp_path / "bc"
    report = json.loads((folder / "clone.json").read_text())
    assert report["states"] == 64 and 0.0 <= report["holdout_agreement"] <= 1.0
    pytest.importorskip("matplotlib")
    assert (folder / "learning_curve.png").stat().st_size > 1000
    rows = (folder / "progress.csv").read_text().splitlines()
    header = rows[0].split(",")
    column = header.index("ent_coef")  # the all-seat trainer's progress row (the default trainer)
    ent = [float(r.split(",")[column]) for r in rows[1:] if r.split(",")[column]]
    assert ent and ent[-1] < 0.02  # the entropy bonus followed its schedule
