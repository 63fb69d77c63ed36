"""Search distillation (agents/training/distill.py): target construction on constructed values, the labelling self-play,
the fit, and a tiny train.py run with the stage."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.training.distill import (KINDS, decision_kinds, departure_table, label_states, load_labels, save_labels,
                            search_targets, target_actions, verified_targets)
from mjenv.encoding import actions as A


def test_search_targets_take_the_best_significant_alternative():
    gain = np.array([[0, 0.5, 0.9],    # both beat z*se; the larger wins
                     [0, 0.5, 0.9],    # column 2 is padding (ncand 2): only column 1 may win
                     [0, 0.3, 0.0],    # 0.3 < 1 * 0.4: keep
                     [0, -1.0, -0.2],  # no gain: keep
                     [0, 0.5, 0.45]])  # only column 2 clears its (smaller) standard error
    se = np.array([[0, 0.1, 0.1], [0, 0.1, 0.1], [0, 0.4, 0.1], [0, 0.1, 0.1], [0, 0.6, 0.1]])
    ncand = np.array([3, 2, 3, 3, 3])
    assert search_targets(gain, se, ncand, z=1.0).tolist() == [2, 1, 0, 0, 2]
    assert search_targets(gain, se, ncand, z=0.0).tolist() == [2, 1, 1, 0, 1]
    assert search_targets(gain, se, ncand, z=1.0, min_gain=0.6).tolist() == [2, 0, 0, 0, 0]
    assert search_targets(gain, se, ncand, z=6.0).tolist() == [2, 0, 0, 0, 0]  # 0.9 > 6 * 0.1 still


def test_verified_targets_need_the_fresh_worlds_to_agree():
    valt = np.array([1, 2, 2, 0, 1])
    vgain = np.array([0.9, 0.3, -0.5, 5.0, 0.9])
    vse = np.array([0.3, 0.3, 0.1, 0.1, 0.3])
    assert verified_targets(valt, vgain, vse, z=2.0).tolist() == [1, 0, 0, 0, 1]  # unscreened rows never depart
    assert verified_targets(valt, vgain, vse, z=0.5).tolist() == [1, 2, 0, 0, 1]
    assert verified_targets(valt, vgain, vse, z=2.0, min_gain=1.0).tolist() == [0, 0, 0, 0, 0]


def test_target_actions_keep_the_advice_and_depart_to_the_candidate():
    mask = np.zeros((3, A.N_ACTIONS), bool)
    mask[:, [3, 5, 7, A.PONG, A.PASS]] = True
    labels = {"cand": np.array([[3, 5, 7], [A.PASS, A.PONG, -1], [5, 3, 7]]), "ncand": np.array([3, 2, 3]),
              "gain": np.array([[0, 2.0, 0], [0, 0.1, 0], [0, 0.0, 0.1]]), "se": np.full((3, 3), 0.5),
              "mask": mask, "meta": {}}
    advice = np.array([5, A.PASS, 30])  # row 0: the advice differs from the player's choice; row 2: not legal
    action, departs, target = target_actions(labels, advice, z=1.0)
    assert target.tolist() == [1, 0, 0] and departs.tolist() == [True, False, False]
    assert action.tolist() == [5, A.PASS, 5]  # departure to column 1; keep = advice; illegal advice -> column 0
    with pytest.raises(ValueError, match="verify_worlds"):
        target_actions(labels, advice, verified=True)


def test_soft_targets_put_the_verified_probability_on_the_alternative():
    from agents.training.distill import soft_targets

    mask = np.zeros((3, A.N_ACTIONS), bool)
    mask[:, [3, 5, 7]] = True
    labels = {"cand": np.array([[3, 5, 7], [3, 5, 7], [3, 5, 7]]), "ncand": np.array([3, 3, 3]), "mask": mask,
              "valt": np.array([2, 1, 0]), "vgain": np.array([0.2, -0.2, 0.0]), "vse": np.array([0.1, 0.1, 0.0]),
              "meta": {"verify_worlds": 8}}
    keep, alt, p = soft_targets(labels, np.array([3, 5, 3]))
    assert keep.tolist() == [3, 5, 3] and alt.tolist() == [7, 5, 3]
    assert np.allclose(p, [0.97725, 0.02275, 0.0], atol=1e-4)  # Φ(2), Φ(-2); an unverified row keeps all


def test_decision_kinds_from_the_candidates():
    cand = np.array([[3, 5, 7], [3, A.LIANG + 3, 5], [A.KONG_SELF + 1, 3, -1], [A.PASS, A.PONG, A.KONG_CLAIM],
                     [A.PASS, A.PONG, -1], [A.PASS, A.CHI_LOW, A.CHI_MID], [A.KONGTILE_0, A.KONGTILE_1, -1],
                     [3, 5, A.LIANG + 3]])
    ncand = np.array([3, 3, 2, 3, 2, 3, 2, 2])  # the last row's 亮倒 is padding
    got = [KINDS[k] for k in decision_kinds(cand, ncand)]
    assert got == ["discard", "liang", "kong", "claim_kong", "pong", "chi", "pick", "discard"]


def test_label_states_is_deterministic_consistent_and_round_trips(tmp_path, capsys):
    kw = dict(decisions=10, tables=4, worlds=4, candidates=3, seed=3, verify_worlds=4, screen_z=0.0, label_prob=0.5)
    a = label_states(**kw)
    b = label_states(**kw)
    for k in ("obs", "mask", "cand", "value", "gain", "se", "valt", "vgain", "vse"):
        assert np.array_equal(a[k], b[k]), k
    n = a["meta"]["decisions"]
    assert n == 10 and a["obs"].shape[0] == n and (a["ncand"] >= 2).all()
    assert a["mask"][np.arange(n), a["cand"][:, 0]].all() and a["mask"][np.arange(n), a["cand"][:, 1]].all()
    # the gain over column 0 is the difference of the two candidates' values (paired over the same worlds)
    for c in (1, 2):
        ok = a["ncand"] > c
        assert np.allclose(a["gain"][ok, c], a["value"][ok, c] - a["value"][ok, 0], atol=1e-4)
    assert (a["valt"] > 0).any() and (a["vse"][a["valt"] > 0] >= 0).all()
    other = label_states(**{**kw, "seed": 4})
    assert not np.array_equal(other["obs"], a["obs"])
    path = save_labels(tmp_path / "l.npz", a)
    back = load_labels(path)
    assert all(np.array_equal(back[k], a[k]) for k in ("obs", "mask", "cand", "gain", "valt", "vgain", "kind"))
    assert back["meta"] == a["meta"]
    rows = {r["kind"]: r for r in departure_table(back, z=0.0, verify_z=0.0)}
    assert rows["all"]["decisions"] == n and rows["all"]["screened"] == int((a["valt"] > 0).sum())
    (tmp_path / "bad.npz").write_bytes(b"nope")
    with pytest.raises(ValueError, match="bad.npz: not a distillation label file"):
        load_labels(tmp_path / "bad.npz")
    from agents.training.distill import main

    assert main([str(path)]) == 0 and main([str(tmp_path / "bad.npz")]) == 2
    text = capsys.readouterr()
    assert f"| all | {n:,} |" in text.out and "screen z of the alternative" in text.out
    assert text.err.startswith("agents.training.distill: error: ") and "bad.npz" in text.err


def test_fit_learns_where_to_depart_from_the_advice():
    torch = pytest.importorskip("torch")
    from agents.training.distill import fit_distill

    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny net: more threads only wait on each other on a loaded machine
    rng = np.random.default_rng(0)
    n = 400
    x = rng.random((n, 8)).astype(np.float32)
    flag = x[:, 0] > 0.7  # the state feature that makes the departure right
    mask = np.zeros((n, A.N_ACTIONS), bool)
    mask[:, [3, 5]] = True
    action = np.where(flag, 5, 3)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU())
            self.head = torch.nn.Linear(16, A.N_ACTIONS)
            self.value = torch.nn.Linear(16, 1)

        def forward(self, t):
            z = self.body(t)
            return self.head(z), self.value(z).reshape(-1)

    try:
        rep = fit_distill(Net(), x, mask, action, np.where(flag, 0.5, 0.0), flag, epochs=40, batch_size=64, lr=2e-2,
                          holdout=0.2, seed=1)
    finally:
        torch.set_num_threads(threads)
    last = rep["epochs"][-1]
    assert rep["holdout"] == 80 and last["departure_recall"] >= 0.9 and last["keep_agreement"] >= 0.9
    assert last["policy_loss"] < rep["epochs"][0]["policy_loss"]


def test_train_runs_the_distillation_stage(tmp_path, capsys):
    pytest.importorskip("torch")
    import train
    from agents import make_agent

    args = train.Args(total_timesteps=0, bc_rounds=0, advice=True, advice_features="heuristic-advice-v2",
                      advice_weight=5.0, channels=4, hidden=8, value_hidden=4, distill_decisions=12, distill_tables=4,
                      distill_worlds=4, distill_verify_worlds=4, distill_screen_z=0.0, distill_z=0.0, distill_epochs=2,
                      eval_every=0, final_eval_walls=1, eval_opponents=["random"], out=str(tmp_path), run_name="d",
                      progress=False, tensorboard=False, curve=False, threads=1)
    summary = train.train(args)
    out = capsys.readouterr().out
    assert "[distill]" in out and "[distill fit 2/2]" in out
    folder = tmp_path / "d"
    report = json.loads((folder / "distill.json").read_text())
    assert report["labels"]["decisions"] == 12 and report["verified"] and len(report["fit"]["epochs"]) == 2
    assert summary["steps"] == 0  # no PPO stage
    assert load_labels(folder / "distill_labels.npz")["meta"]["seed"] == 2000
    agent = make_agent(str(folder / "final.pt"), "kawuxing3")
    assert agent.features is not None  # the advised network, stamped with its advisor
    again = train.train(train.Args(**{**vars(args), "run_name": "d2", "distill_decisions": 0,
                                      "distill_labels": [str(folder / "distill_labels.npz")]}))
    assert json.loads((tmp_path / "d2" / "distill.json").read_text())["departures"] == report["departures"]
    assert again["steps"] == 0


def test_the_distill_config_loads():
    import train
    from agents.script_args import parse_args

    args, config = parse_args(train.Args, ["--config", "distill"], config_dir=train.CONFIG_DIR)
    assert config == "distill" and args.distill_decisions == 20_000 and args.distill_seed == 2000
    assert args.advice and args.bc_teacher == "heuristic-flush" and args.total_timesteps == 0


def test_label_states_can_label_one_kind_and_verify_every_decision():
    got = label_states(decisions=4, tables=8, worlds=3, candidates=3, seed=1, verify_worlds=3,
                       screen_z=-np.inf, kinds=["pong"])
    assert (got["kind"] == KINDS.index("pong")).all() and (got["valt"] > 0).all()
    assert got["meta"]["kinds"] == ["pong"]
    with pytest.raises(ValueError, match="kinds: flower is not a decision kind"):
        label_states(decisions=1, kinds=["flower"])


def test_decision_plans_read_the_heuristics_plan_from_the_observation():
    from agents.training.distill import PLANS, decision_plans, plan_table
    from mjenv.encoding.observation import encode
    from tests.test_heuristic_families import deal

    hands = {"flush": "123456789s11z22z3z", "plain": "123m456p789s234m55p", "triplets": "111m222p333s44z55z6z"}
    obs = np.concatenate([encode(e, e.state.actor) for e in (deal("yangzhou", h) for h in hands.values())])
    assert [PLANS[c] for c in decision_plans(obs, "yangzhou")] == list(hands)
    with pytest.raises(ValueError, match="verify_worlds"):
        plan_table({"meta": {"verify_worlds": 0}})
