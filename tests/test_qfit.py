"""The qfit stage (agents/training/qfit.py): policy improvement of a network-only checkpoint from labelled candidate
gains, on a tiny network and synthetic labels over real observations."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.players.policy import (  # noqa: E402
    CheckpointError,
    PolicyAgent,
    checkpoint_payload,
    load_checkpoint,
    save_checkpoint,
)
from agents.players.resnet import NET, make_resnet  # noqa: E402
from agents.training.distill import LABEL_FORMAT, save_labels  # noqa: E402
from agents.training.qfit import QfitArgs, compare, held_out_values, per_seat_hand, run  # noqa: E402
from mjenv.encoding.handfeat import HAND_FEATURES, HandFeatures  # noqa: E402
from mjenv.encoding.observation import encode  # noqa: E402
from mjenv.engine.core import Engine  # noqa: E402
from mjenv.rules.options import load_rules  # noqa: E402
from tests.test_network_only import _play  # noqa: E402

OPTS = load_rules("kawuxing3")
LONG = Path(__file__).resolve().parents[1] / "agents" / "checkpoints" / "kawuxing3-long.pt"
ARCH = {"net": NET, "channels": 4, "blocks": 1, "hidden": 8}


def _base(path):
    """A tiny network-only resnet reading the derived hand rows, saved to ``path``."""
    shape = HandFeatures("kawuxing3", OPTS).shape
    torch.manual_seed(0)
    trunk, head = make_resnet(shape, ARCH)
    save_checkpoint(path, checkpoint_payload(trunk, head, variant="kawuxing3", options=OPTS, obs_shape=shape,
                                             arch=ARCH, derived=HAND_FEATURES))
    return path


def _labels(seed: int, favoured: int, n_tables: int = 16, steps: int = 30) -> dict:
    """Decisions with two or more legal actions from random play; candidates are the first three legal actions and
    the ``favoured`` column gains +1 over candidate 0 (the others -0.5), plus noise."""
    eng = Engine("kawuxing3", n_tables)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    obs, mask, cand, ncand = [], [], [], []
    for _ in range(steps):
        live = np.flatnonzero(~eng.done)
        if not len(live):
            break
        o = encode(eng, eng.state.actor)
        for b in live:
            legal = np.flatnonzero(eng.mask[b])
            if len(legal) >= 3:
                obs.append(o[b])
                mask.append(eng.mask[b].copy())
                cand.append(legal[:3])
                ncand.append(3)
        acts = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in eng.mask])
        eng.step(acts)
    n = len(cand)
    gain = np.full((n, 3), -0.5, np.float32)
    gain[:, 0] = 0
    gain[:, favoured] = 1.0
    gain[:, 1:] += rng.normal(0, 0.5, (n, 2)).astype(np.float32)
    z = np.zeros(n, np.float32)
    return {"obs": np.stack(obs).astype(np.float32), "mask": np.stack(mask), "cand": np.stack(cand).astype(np.int64),
            "ncand": np.array(ncand, np.int64), "value": gain.copy(), "gain": gain, "se": np.full_like(gain, 0.5),
            "kind": np.zeros(n, np.int8), "wall_left": np.zeros(n, np.int16), "valt": np.zeros(n, np.int64),
            "vgain": z, "vse": z, "played": np.zeros(n, np.int8),
            "meta": {"format": LABEL_FORMAT, "variant": "kawuxing3", "decisions": n, "hands": 10, "label_prob": 0.5,
                     "world_source": "hands_true"}}


def test_held_out_values_and_the_paired_comparison():
    labels = {"cand": np.array([[3, 5, -1], [1, 2, 4], [7, 8, 9]]), "ncand": np.array([2, 3, 3]),
              "gain": np.array([[0, 0.5, 9], [0, -1, 2], [0, 1, 1]], np.float32)}
    logits = np.full((3, 111), -np.inf, np.float32)
    logits[0, [3, 5, 6]] = [0, 1, -1]      # plays column 1 (+0.5)
    logits[1, [1, 2, 4]] = [0, 0, 3]       # plays column 2 (+2)
    logits[2, [7, 10]] = [0, 5]            # plays 10: outside the shortlist
    v = held_out_values(logits, labels)
    assert v["inside"].tolist() == [True, True, False]
    assert v["gain"][:2].tolist() == [0.5, 2.0] and np.isnan(v["gain"][2])
    base = held_out_values(np.where(np.isfinite(logits), 0.0, -np.inf).astype(np.float32) + np.eye(111)[[3, 1, 7]],
                           labels)
    assert base["gain"].tolist() == [0.0, 0.0, 0.0]
    c = compare(base, v)
    assert c["decisions"] == 2 and c["diff"] == pytest.approx(1.25) and c["changed"] == pytest.approx(1.0)
    assert c["new_outside"] == pytest.approx(1 / 3) and c["base_outside"] == 0.0
    assert v["share"][0] == pytest.approx(np.exp([0, 1]).sum() / np.exp([0, 1, -1]).sum()) and v["share"][2] < 0.01
    assert per_seat_hand({"decisions": 30, "label_prob": 0.5, "hands": 4}, 3) == pytest.approx(5.0)


def test_qfit_moves_the_policy_toward_the_higher_valued_candidate_and_the_anchor_holds_it(tmp_path):
    base = _base(tmp_path / "base.pt")
    files = [save_labels(tmp_path / f"labels-{s}.npz", _labels(s, favoured=2)) for s in (1, 2, 3)]
    out = {}
    for kl, share_kl in ((0.0, 1.0), (50.0, 1.0), (0.0, 0.0)):
        args = QfitArgs(labels=[str(f) for f in files], base=str(base), out=str(tmp_path / f"kl{kl}.pt"), kl=kl,
                        share_kl=share_kl, epochs=6, batch_size=64, lr=0.01, holdout=0.34)
        out[kl if share_kl else "free"] = run(args, log=lambda m: None)
    free, held = out[0.0]["held_out"], out[50.0]["held_out"]
    assert out[0.0]["held_files"] == ["labels-3.npz"] and out[0.0]["train_decisions"] > 100
    # without an anchor the greedy move goes to the favoured column on held-out decisions: a large paired gain
    assert free["diff"] > 0.3 and free["diff"] - free["diff_ci95"] > 0
    assert free["new"] > free["base"]
    # the anchor keeps it near the base: fewer moves changed, a smaller KL
    assert held["changed"] < free["changed"] and out[50.0]["kl_to_base"] < out[0.0]["kl_to_base"]
    # the share anchor holds the policy's probability of a shortlisted move at the base's; without it that drifts
    loose = out["free"]["held_out"]
    assert abs(free["new_share"] - free["base_share"]) < abs(loose["new_share"] - loose["base_share"])
    ck = load_checkpoint(tmp_path / "kl0.0.pt")
    assert ck["network_only"] is True and ck["derived"] == HAND_FEATURES
    assert ck["meta"]["qfit"]["world_source"] == "hands_true" and ck["meta"]["qfit"]["gain_scale"] > 0
    agent = PolicyAgent(str(tmp_path / "kl0.0.pt"), "kawuxing3", network_only=True)
    eng = Engine("kawuxing3", 4)
    eng.reset(seed=9)
    acts = agent.act(encode(eng, eng.state.actor), eng.mask)
    assert eng.mask[np.arange(4), acts].all()


def test_qfit_refuses_a_base_that_is_not_network_only_and_bad_settings(tmp_path, capsys):
    files = [save_labels(tmp_path / f"labels-{s}.npz", _labels(s, favoured=1, steps=6)) for s in (1, 2)]
    with pytest.raises(CheckpointError, match="network-only"):
        run(QfitArgs(labels=[str(f) for f in files], base=str(LONG), out=str(tmp_path / "o.pt")))
    base = str(_base(tmp_path / "base.pt"))
    with pytest.raises(ValueError, match="kl"):
        run(QfitArgs(labels=[str(f) for f in files], base=base, out=str(tmp_path / "o.pt"), kl=-1))
    with pytest.raises(ValueError, match="none to fit"):
        run(QfitArgs(labels=[str(files[0])], base=base, out=str(tmp_path / "o.pt")))
    with pytest.raises(ValueError, match="also among"):
        run(QfitArgs(labels=[str(files[0])], held=[str(files[0])], base=base, out=str(tmp_path / "o.pt")))
    assert not (tmp_path / "o.pt").exists()
    # held-out files named apart: the one file is fitted on, the other judged
    entry = run(QfitArgs(labels=[str(files[0])], held=[str(files[1])], base=base, out=str(tmp_path / "o.pt"),
                         epochs=1, batch_size=32), log=lambda m: None)
    assert entry["held_files"] == ["labels-2.npz"] and entry["labels"] == ["labels-1.npz"]
    # the command line: one line on stderr and exit status 2
    from agents.training.qfit import main

    assert main(["--labels", str(tmp_path / "missing.npz"), "--held", str(files[1]), "--base", base,
                 "--out", str(tmp_path / "m.pt")]) == 2
    assert "missing.npz" in capsys.readouterr().err and not (tmp_path / "m.pt").exists()


def test_train_py_qfit_stage_gives_the_standalone_weights_and_checks_its_arguments(tmp_path):
    """``train.py`` with ``qfit_seeds`` (label chunks already in ``qfit_labels``: nothing is relabelled) fits the same
    network as ``python -m agents.training.qfit`` on the same files and settings; bad stage arguments are refused."""
    import train
    from agents.script_args import ArgsError

    base = str(_base(tmp_path / "base.pt"))
    folder = tmp_path / "labels"
    files = [save_labels(folder / f"labels-{s}.npz", _labels(s, favoured=1, steps=12)) for s in (1, 2, 3)]
    args = train.Args(net="resnet1d", channels=4, blocks=1, hidden=8, value_hidden=8, advice=False,
                      derived=HAND_FEATURES, init_checkpoint=base, seed=0, qfit_seeds=[1, 2], qfit_held_seeds=[3],
                      qfit_labels=str(folder), qfit_kl=0.5, qfit_epochs=2, qfit_lr=0.01, qfit_batch_size=64,
                      total_timesteps=0, eval_every=0, final_eval_walls=1, eval_opponents=["random"],
                      opponents=["random"], opponent_weights=[1.0], out=str(tmp_path / "runs"), run_name="q",
                      progress=False, tensorboard=False, curve=False, threads=1, precision="fp32", device="cpu")
    train.train(args)
    ck = load_checkpoint(tmp_path / "runs" / "q" / "final.pt")
    assert ck["network_only"] is True and ck["meta"]["qfit"]["labels"] == ["labels-1.npz", "labels-2.npz"]
    assert (tmp_path / "runs" / "q" / "qfit.json").is_file()
    alone = run(QfitArgs(labels=[str(f) for f in files[:2]], held=[str(files[2])], base=base,
                         out=str(tmp_path / "alone.pt"), kl=0.5, epochs=2, lr=0.01, batch_size=64), log=lambda m: None)
    assert alone["checksum"] == ck["checksum"] != load_checkpoint(base)["checksum"]
    for bad, match in ((dict(qfit_held_seeds=[]), "held-out chunks"), (dict(qfit_held_seeds=[2]), "also among"),
                       (dict(net=""), "network-only"), (dict(qfit_world_source="dreams"), "not one of"),
                       (dict(qfit_rollout_network=True, qfit_rollout_policy=""), "whose network rolls out"),
                       (dict(qfit_kinds=["kong", "dragon"]), "'dragon' is not a decision kind"),
                       (dict(qfit_label_prob=0.0), "qfit_label_prob")):
        with pytest.raises(ArgsError, match=match):
            train.check_args(train.Args(**{**{k: getattr(args, k) for k in ("net", "advice", "derived",
                                                                              "init_checkpoint", "qfit_seeds",
                                                                              "qfit_held_seeds")}, **bad}))


@pytest.mark.parametrize("name,config,start_name,decisions", [
    ("kawuxing3-network-qfit.pt", "network-qfit", "kawuxing3-network-dh2.pt", 150_000),
    ("kawuxing3-network-qfit2.pt", "network-qfit2", "kawuxing3-network-qfit.pt", 120_000),
    ("kawuxing3-network-qfit3.pt", "network-qfit3", "kawuxing3-network-qfit2.pt", 285_000),
])
def test_the_shipped_qfit_checkpoints_load_and_play(name, config, start_name, decisions):
    """``kawuxing3-network-qfit.pt`` (``python train.py --config network-qfit``) and its second round
    ``kawuxing3-network-qfit2.pt`` and third ``kawuxing3-network-qfit3.pt`` (which also valued the policy's own moves
    outside the shortlist) are network-only, read the derived hand rows like the policy each started from,
    record their stage and differ from that start; they play legal moves."""
    import train
    from agents import CHECKPOINT_DIR, make_agent
    from agents.script_args import parse_args

    args, _ = parse_args(train.Args, ["--config", config], config_dir=train.CONFIG_DIR)
    assert args.init_checkpoint == f"agents/checkpoints/{start_name}" and len(args.qfit_seeds) == decisions // 5000
    ck = load_checkpoint(CHECKPOINT_DIR / name)
    start = load_checkpoint(CHECKPOINT_DIR / start_name)
    assert ck["network_only"] is True and ck["derived"] == start["derived"] == HAND_FEATURES
    assert ck["arch"] == start["arch"] and ck["checksum"] != start["checksum"]
    q = ck["meta"]["qfit"]
    assert ck["meta"]["config"] == config and q["world_source"] == "hands_true"
    assert q["train_decisions"] == decisions and q["held_out"]["per_seat_hand"] > 0
    assert q.get("policy_candidates", 0) == args.qfit_policy_candidates and q["worlds"] == args.qfit_worlds
    agent = make_agent(f"network:{CHECKPOINT_DIR / name}", "kawuxing3")
    assert _play(agent, tables=2, steps=10)


def test_policy_candidates_widen_the_shortlist_with_the_policys_own_moves(tmp_path):
    """``add_policy_candidates`` against a slow reference on random rows; ``label_states(policy_candidates=2)``
    labels the policy's greedy move at every labelled decision (it is always a candidate) and refuses a policy
    without logits."""
    from agents.training.distill import add_policy_candidates, label_states

    rng = np.random.default_rng(5)
    n, k, extra = 200, 3, 2
    mask = rng.random((n, 111)) < 0.08
    mask[np.arange(n), rng.integers(0, 111, n)] = True
    logits = rng.normal(size=(n, 111))
    cand = np.full((n, k), -1, np.int64)
    ncand = np.zeros(n, np.int64)
    for r in range(n):
        legal = np.flatnonzero(mask[r])
        picked = rng.permutation(legal)[: rng.integers(1, min(k, len(legal)) + 1)]
        cand[r, : len(picked)], ncand[r] = picked, len(picked)
    out, nout = add_policy_candidates(cand, ncand, logits, mask, extra)
    assert out.shape == (n, k + extra)
    for r in range(n):
        outside = [a for a in sorted(np.flatnonzero(mask[r]), key=lambda a: -logits[r, a]) if a not in cand[r, : ncand[r]]]
        want = list(cand[r, : ncand[r]]) + outside[:extra]
        assert nout[r] == len(want) and list(out[r, : nout[r]]) == want and (out[r, nout[r]:] == -1).all()

    _base(tmp_path / "base.pt")
    policy = PolicyAgent(str(tmp_path / "base.pt"), "kawuxing3")
    labels = label_states(decisions=16, tables=8, worlds=2, candidates=3, seed=4, policy=policy,
                          world_source="hands_true", policy_candidates=2)
    assert labels["cand"].shape == (16, 5) and labels["meta"]["policy_candidates"] == 2
    assert (labels["played"] >= 0).all() and (labels["ncand"] >= 2).all()
    valid = np.arange(5)[None, :] < labels["ncand"][:, None]
    assert (labels["gain"][:, 0] == 0).all() and (labels["gain"][~valid] == 0).all()
    assert (labels["se"][:, 1:][valid[:, 1:]] > 0).mean() > 0.5  # valued in worlds that differ
    with pytest.raises(ValueError, match="policy_candidates: the policy must be a network"):
        label_states(decisions=2, policy_candidates=1)
    with pytest.raises(ValueError, match="policy_candidates: need 0 or more"):
        label_states(decisions=2, policy=policy, policy_candidates=-1)


def test_a_network_rolls_out_each_table_as_it_would_alone(tmp_path):
    """``PolicyAgent.rollout`` plays every live table to the end of its hand with the network in every seat: four
    tables rolled out together end with the money each ends with rolled out alone (batched = single), every hand is
    zero-sum, and a policy of another variant is refused."""
    _base(tmp_path / "base.pt")
    agent = PolicyAgent(tmp_path / "base.pt", "kawuxing3", OPTS)
    batch = Engine("kawuxing3", 4, options=OPTS, record_events=False)
    batch.reset(seed=11, table_ids=np.arange(4), dealer=np.arange(4) % 3)
    decisions = agent.rollout(batch)
    from mjenv.engine import state as S

    assert decisions > 4 * 10 and (batch.state.phase == S.DONE).all()
    assert (batch.state.money.sum(1) == 0).all()
    for b in range(4):
        alone = Engine("kawuxing3", 1, options=OPTS, record_events=False)
        alone.reset(seed=11, table_ids=[b], dealer=[b % 3])
        agent.rollout(alone)
        np.testing.assert_array_equal(alone.state.money[0], batch.state.money[b])
    with pytest.raises(ValueError, match="this policy plays 'kawuxing3'"):
        agent.rollout(Engine("liuwei", 1, record_events=False))


def test_labels_rolled_out_by_the_network(tmp_path):
    """``exit label --rollout_network``: the rollout checkpoint's network, not its compiled player, plays the
    rollouts (the labels' meta names it); without a rollout checkpoint the option is refused."""
    from agents.training.distill import load_labels
    from agents.training.exit import label_chunks

    _base(tmp_path / "base.pt")
    with pytest.raises(ValueError, match="rollout_network: give the checkpoint"):
        label_chunks(tmp_path / "base.pt", "kawuxing3", OPTS, seed=3, chunks=1, folder=tmp_path, rollout_network=True)
    [path] = label_chunks(tmp_path / "base.pt", "kawuxing3", OPTS, seed=3, chunks=1, folder=tmp_path, chunk=6,
                          tables=8, worlds=2, rollout_policy=tmp_path / "base.pt", world_source="hands_true",
                          policy_candidates=1, rollout_network=True)
    labels = load_labels(path)
    assert labels["meta"]["rollout_player"] == "base" and labels["meta"]["decisions"] == 6
    assert np.isfinite(labels["gain"][labels["cand"] >= 0]).all()


def test_label_device(tmp_path):
    """``exit label --device``: the networks run where asked (``auto`` resolves to the CPU here, giving the CPU's
    labels exactly); a CUDA device torch does not see is refused before any chunk is written."""
    import torch

    from agents.training.distill import load_labels
    from agents.training.exit import label_chunks

    _base(tmp_path / "base.pt")
    kw = dict(chunks=1, chunk=4, tables=8, worlds=2, rollout_policy=tmp_path / "base.pt", world_source="hands_true",
              rollout_network=True)
    [cpu] = label_chunks(tmp_path / "base.pt", "kawuxing3", OPTS, seed=5, folder=tmp_path / "cpu", **kw)
    [auto] = label_chunks(tmp_path / "base.pt", "kawuxing3", OPTS, seed=5, folder=tmp_path / "auto", device="auto",
                          **kw)
    a, b = load_labels(cpu), load_labels(auto)
    assert a["meta"]["decisions"] == b["meta"]["decisions"] == 4
    if torch.cuda.is_available():  # the GPU's labels: to float rounding, so only their shape and finiteness
        assert b["gain"].shape == a["gain"].shape and np.isfinite(b["gain"]).all()
    else:
        np.testing.assert_array_equal(a["gain"], b["gain"])
        np.testing.assert_array_equal(a["cand"], b["cand"])
        with pytest.raises(ValueError, match="torch sees no CUDA device"):
            label_chunks(tmp_path / "base.pt", "kawuxing3", OPTS, seed=5, folder=tmp_path / "cuda", device="cuda",
                         **kw)
        assert not (tmp_path / "cuda").exists() or not any((tmp_path / "cuda").iterdir())
