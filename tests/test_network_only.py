"""Network-only policies: the ``network_only`` flag of checkpoints, the ``device`` argument, the residual
network (agents/players/resnet.py) and its cloning stage (agents/training/netclone.py), on tiny networks and datasets."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent, shipped_checkpoints

torch = pytest.importorskip("torch")

from agents.players.policy import (  # noqa: E402
    CheckpointError,
    PolicyAgent,
    checkpoint_payload,
    load_checkpoint,
    make_head,
    make_trunk,
    resolve_device,
    save_checkpoint,
)
from agents.players.resnet import NET, make_resnet  # noqa: E402
from mjenv.encoding.observation import ObservationEncoder, encode  # noqa: E402
from mjenv.engine.core import Engine  # noqa: E402
from mjenv.rules.options import load_rules  # noqa: E402

OPTS = load_rules("kawuxing3")
SHAPE = ObservationEncoder("kawuxing3", OPTS).shape
ARCH = {"net": NET, "channels": 4, "blocks": 1, "hidden": 8}


def _resnet_payload():
    torch.manual_seed(0)
    trunk, head = make_resnet(SHAPE, ARCH)
    return checkpoint_payload(trunk, head, variant="kawuxing3", options=OPTS, obs_shape=SHAPE, arch=ARCH)


def _play(agent, tables=4, steps=25):
    """Legal actions from ``agent`` on a few live tables (asserted), the actions returned."""
    eng = Engine("kawuxing3", tables)
    eng.reset(seed=5)
    played = []
    for _ in range(steps):
        if eng.done.all():
            break
        acts = agent.act(encode(eng, eng.state.actor), eng.mask)
        live = ~eng.done
        assert eng.mask[live, acts[live]].all()
        played.append(acts.copy())
        eng.step(np.where(live, acts, 0))
    return played


def test_a_network_only_payload_is_flagged_and_an_advised_one_is_not():
    assert _resnet_payload()["network_only"] is True
    plain = checkpoint_payload(make_trunk(SHAPE, 4, 8), make_head(8), variant="kawuxing3", options=OPTS,
                               obs_shape=SHAPE, arch={"channels": 4, "hidden": 8})
    assert plain["network_only"] is True


def test_network_only_refuses_a_checkpoint_whose_flag_is_false_or_absent(tmp_path):
    payload = _resnet_payload()
    path = save_checkpoint(tmp_path / "net.pt", payload)
    assert make_agent(f"network:{path}").checkpoint["network_only"] is True
    false = dict(payload, network_only=False)
    with pytest.raises(CheckpointError, match="not a network-only policy .its network_only flag is false"):
        PolicyAgent(false, network_only=True)
    PolicyAgent(false)  # the flag only matters when a network-only policy is asked for
    absent = {k: v for k, v in payload.items() if k != "network_only"}
    with pytest.raises(CheckpointError, match="records no network_only flag"):
        make_agent(f"network:{save_checkpoint(tmp_path / 'old.pt', absent)}")


def test_a_true_flag_beside_a_departure_head_or_advice_is_a_bad_checkpoint():
    payload = dict(_resnet_payload(), features="heuristic-advice-v2")
    with pytest.raises(CheckpointError, match="network_only is true but the policy reads advice"):
        PolicyAgent(payload)
    with pytest.raises(CheckpointError, match="network_only 'yes' is not true or false"):
        PolicyAgent(dict(_resnet_payload(), network_only="yes"))


def test_shipped_checkpoints_still_load_and_play_and_are_not_network_only():
    shipped = [p for p in shipped_checkpoints("kawuxing3")]
    assert shipped
    for path in shipped:
        agent = make_agent(str(path), "kawuxing3")
        _play(agent, tables=2, steps=10)
        if load_checkpoint(path).get("network_only") is not True:
            with pytest.raises(CheckpointError, match="not a network-only policy"):
                make_agent(f"network:{path}", "kawuxing3")


def test_the_device_argument():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="not one of auto, cpu, cuda"):
        resolve_device("tpu")
    agent = PolicyAgent(_resnet_payload(), device="cpu")
    assert next(agent.trunk.parameters()).device.type == "cpu"
    if torch.cuda.is_available():
        gpu = PolicyAgent(_resnet_payload(), device="cuda")
        assert next(gpu.trunk.parameters()).device.type == "cuda"
        assert [a.tolist() for a in _play(gpu, steps=8)] == [a.tolist() for a in _play(agent, steps=8)]
    else:
        with pytest.raises(ValueError, match="torch sees no CUDA device"):
            PolicyAgent(_resnet_payload(), device="cuda")
        with pytest.raises(ValueError, match="torch sees no CUDA device"):
            resolve_device("cuda:0")


def test_the_resnet_policy_plays_legal_moves_from_a_saved_checkpoint(tmp_path):
    path = save_checkpoint(tmp_path / "net.pt", _resnet_payload())
    agent = make_agent(str(path), "kawuxing3")
    assert agent.checkpoint["arch"]["net"] == NET
    assert _play(agent)


def test_the_tile_logits_score_each_tile_at_its_own_column():
    trunk, head = make_resnet(SHAPE, ARCH)
    with torch.no_grad():
        head.linear.weight.zero_()
        head.linear.bias.zero_()
        x = torch.rand(2, SHAPE[0] * SHAPE[1])
        z = trunk(x)
        out = head(z)
    assert out.shape == (2, 111)
    assert torch.equal(out[:, :102], z[:, ARCH["hidden"]:])
    assert torch.equal(out[:, 102:], torch.zeros(2, 9))


def test_netclone_learns_from_a_tiny_dataset(tmp_path):
    from agents.training.netclone import CloneArgs, KINDS, PackedDecisions, decision_kinds, departs, run

    args = CloneArgs(exp_name="t", data_dir=str(tmp_path / "data"), train_walls=12, train_sets=1, holdout_walls=4,
                     channels=8, blocks=1, hidden=16, epochs=3, batch_size=64, lr=0.003, eval_every=100,
                     device="cpu", out=str(tmp_path / "clone.pt"), split_by="heuristic")
    import os

    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        summary = run(args, log=lambda s: None)
    finally:
        os.chdir(here)
    curve = summary["curve"]
    assert curve[-1]["samples"] == summary["samples"] > 0 and len(curve) >= 2
    assert curve[-1]["train_loss"] < curve[0]["train_loss"]
    assert set(KINDS) <= set(curve[-1])
    # the split by the teacher's departures from heuristic (counts of both parts, and the checkpoint records them)
    last = curve[-1]
    assert last["follows heuristic n"] + last["departs from heuristic n"] == last["n"] > 0
    assert summary["holdout_agreement_by_split"]["follows heuristic"] == last["follows heuristic"]
    agent = make_agent(f"network:{tmp_path / 'clone.pt'}", "kawuxing3")
    assert agent.meta["stage"] == "netclone" and agent.meta["holdout_agreement"] == curve[-1]["all"]
    assert (tmp_path / "runs" / "t-0" / "curve.jsonl").read_text().count("\n") == len(curve)
    held = PackedDecisions([tmp_path / "data" / "kawuxing3-heuristic-flush-s902-held"])
    assert not departs(held, "heuristic-flush").any()  # the teacher itself, deciding from the recorded observations
    s, r = held.index[7]  # another legal action recorded at one decision: a departure there and nowhere else
    legal = np.flatnonzero(held.batch(np.array([7]))["mask"][0])
    held.shards[s]["action"][r] = legal[legal != held.shards[s]["action"][r]][0]
    assert np.flatnonzero(departs(held, "heuristic-flush")).tolist() == [7]
    mask = np.zeros((3, 111), bool)
    mask[0, [0, 5]] = True                 # discards only
    mask[1, [0, 107]] = True               # a turn with a self-drawn win
    mask[2, [102, 108]] = True             # a claim
    assert decision_kinds(mask).tolist() == [0, 1, 2]


def test_the_shipped_network_only_checkpoint_loads_and_plays():
    from agents import CHECKPOINT_DIR

    path = CHECKPOINT_DIR / "kawuxing3-network.pt"
    ck = load_checkpoint(path)
    assert ck["network_only"] is True and ck["arch"]["net"] == NET and not ck.get("features")
    assert ck["meta"]["teacher"] == "heuristic-flush" and 0.8 < ck["meta"]["holdout_agreement"] < 1.0
    assert _play(make_agent(f"network:{path}", "kawuxing3"))
    ppo = load_checkpoint(CHECKPOINT_DIR / "kawuxing3-network-ppo.pt")
    assert ppo["network_only"] is True and ppo["arch"] == ck["arch"] and ppo["meta"]["algo"] == "allseat-ppo"
    assert ppo["checksum"] != ck["checksum"]
    assert _play(make_agent(f"network:{CHECKPOINT_DIR / 'kawuxing3-network-ppo.pt'}", "kawuxing3"))
    hand = load_checkpoint(CHECKPOINT_DIR / "kawuxing3-network-hand.pt")  # the clone on the derived hand rows
    assert hand["network_only"] is True and hand["derived"] == "mjenv-hand-v1" and hand["arch"] == ck["arch"]
    assert hand["obs_shape"] == [SHAPE[0] + 18, SHAPE[1]] and hand["meta"]["holdout_agreement"] > 0.95
    assert _play(make_agent(f"network:{CHECKPOINT_DIR / 'kawuxing3-network-hand.pt'}", "kawuxing3"))
    dh = load_checkpoint(CHECKPOINT_DIR / "kawuxing3-network-dh.pt")  # the clone of the departure-head player
    assert dh["network_only"] is True and not dh.get("features") and dh.get("departures") is None
    assert dh["derived"] == "mjenv-hand-v1" and dh["arch"] == ck["arch"] and dh["obs_shape"] == hand["obs_shape"]
    assert dh["meta"]["teacher"] == "agents/checkpoints/kawuxing3-default.pt" and dh["meta"]["holdout_agreement"] > 0.9
    assert dh["meta"]["args"]["init"] == "agents/checkpoints/kawuxing3-network-hand.pt" and dh["checksum"] != hand["checksum"]
    assert _play(make_agent(f"network:{CHECKPOINT_DIR / 'kawuxing3-network-dh.pt'}", "kawuxing3"))
    # the clone of the session-17 default (python train.py --config network-dh2), warm-started from the dh clone
    dh2 = load_checkpoint(CHECKPOINT_DIR / "kawuxing3-network-dh2.pt")
    assert dh2["network_only"] is True and not dh2.get("features") and dh2.get("departures") is None
    assert dh2["derived"] == "mjenv-hand-v1" and dh2["arch"] == ck["arch"] and dh2["obs_shape"] == hand["obs_shape"]
    assert dh2["meta"]["config"] == "network-dh2" and dh2["meta"]["netclone"]["train_seed"] == 921
    assert dh2["meta"]["netclone"]["holdout_agreement"] > 0.85 and dh2["checksum"] != dh["checksum"]
    assert make_agent(f"network:{CHECKPOINT_DIR / 'kawuxing3-network-dh2.pt'}", "kawuxing3") is not None


def _tiny_train_args(tmp_path, **kw):
    import train

    base = dict(net="resnet1d", channels=8, blocks=1, hidden=16, value_hidden=8, advice=False, seed=0,
                netclone_sets=1, netclone_walls=12, netclone_holdout_walls=4, netclone_data=str(tmp_path / "data"),
                netclone_epochs=2, netclone_batch_size=64, netclone_lr=0.003, netclone_eval_every=200,
                total_timesteps=0, num_envs=8, n_steps=32, batch_size=128, n_epochs=2, learning_rate=0.001,
                opponents=["random"], opponent_weights=[1.0], eval_every=0, final_eval_walls=1,
                eval_opponents=["random"], out=str(tmp_path / "runs"), progress=False, tensorboard=False, curve=False,
                threads=1, precision="fp32", device="cpu")
    return train.Args(**{**base, **kw})


def test_train_py_netclone_stage_gives_the_standalone_stages_weights(tmp_path):
    """``python train.py --config netclone`` and ``python -m agents.training.netclone`` fit the same network
    (same seed, data and settings): the same checksum, and the run's checkpoint is network-only."""
    import os

    import train
    from agents.training.netclone import CloneArgs, run

    summary = train.train(_tiny_train_args(tmp_path, run_name="nc"))
    ck = load_checkpoint(tmp_path / "runs" / "nc" / "final.pt")
    assert ck["network_only"] is True and ck["arch"]["net"] == NET
    assert ck["meta"]["netclone"]["samples"] > 0 and summary["steps"] == 0
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        alone = run(CloneArgs(data_dir=str(tmp_path / "data"), train_walls=12, train_sets=1, holdout_walls=4,
                              channels=8, blocks=1, hidden=16, epochs=2, batch_size=64, lr=0.003, eval_every=200,
                              device="cpu", out=str(tmp_path / "alone.pt")), log=lambda s: None)
    finally:
        os.chdir(here)
    assert alone["checksum"] == ck["checksum"]


def test_a_short_ppo_run_with_a_kl_anchor_changes_the_network_only_policy(tmp_path):
    import train

    train.train(_tiny_train_args(tmp_path, run_name="clone"))
    clone = tmp_path / "runs" / "clone" / "final.pt"
    summary = train.train(_tiny_train_args(tmp_path, run_name="ppo", netclone_sets=0, init_checkpoint=str(clone),
                                           total_timesteps=500, kl_coef=0.2))
    assert summary["steps"] >= 500
    before, after = load_checkpoint(clone), load_checkpoint(tmp_path / "runs" / "ppo" / "final.pt")
    assert after["network_only"] is True and after["checksum"] != before["checksum"]
    import csv

    with open(tmp_path / "runs" / "ppo" / "progress.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(float(r["kl_anchor"]) >= 0 for r in rows) and float(rows[-1]["kl_anchor"]) > 0
    a, b = PolicyAgent(before), PolicyAgent(after)
    obs = np.random.default_rng(0).random((64, *SHAPE), dtype=np.float32)
    mask = np.ones((64, 111), bool)
    assert not np.allclose(a.logits(obs, mask), b.logits(obs, mask))


def test_train_py_device_flag():
    import train
    from agents.script_args import ArgsError

    with pytest.raises(ArgsError, match="--device: device 'gpu' is not one of auto, cpu, cuda"):
        train.check_args(train.Args(device="gpu"))
    if not torch.cuda.is_available():
        with pytest.raises(ArgsError, match="--device: device 'cuda': torch sees no CUDA device"):
            train.check_args(train.Args(device="cuda"))
    with pytest.raises(ArgsError, match="--netclone_sets: the network-only cloning stage fits --net resnet1d"):
        train.check_args(train.Args(netclone_sets=1))
    with pytest.raises(ArgsError, match="a network-only architecture reads no advice"):
        train.check_args(train.Args(net="resnet1d", advice=True))


def test_a_clone_on_the_derived_hand_rows_records_them_and_computes_them_at_play_time(tmp_path):
    """``--derived mjenv-hand-v1``: the checkpoint records the rows, its shape is v1's plus theirs, it stays
    network-only, and the agent's logits are its network on the observation extended by those rows."""
    from mjenv.encoding.handfeat import HAND_FEATURES, HandFeatures

    import train

    rows = HandFeatures("kawuxing3").rows
    summary = train.train(_tiny_train_args(tmp_path, run_name="hf", derived=HAND_FEATURES, total_timesteps=300))
    assert summary["steps"] >= 300  # the PPO stage's rollouts compute the rows too
    ck = load_checkpoint(tmp_path / "runs" / "hf" / "final.pt")
    assert ck["derived"] == HAND_FEATURES and ck["network_only"] is True
    assert ck["obs_shape"] == [SHAPE[0] + rows, SHAPE[1]] and ck["meta"]["netclone"]["samples"] > 0
    agent = make_agent(f"network:{tmp_path / 'runs' / 'hf' / 'final.pt'}", "kawuxing3")
    assert _play(agent)
    eng = Engine("kawuxing3", 3)
    eng.reset(seed=2)
    obs = encode(eng, eng.state.actor)
    with torch.no_grad():
        x = torch.as_tensor(HandFeatures("kawuxing3").extend(obs).reshape(3, -1))
        want = agent.head(agent.trunk(x)).masked_fill(~torch.as_tensor(eng.mask), float("-inf")).numpy()
    assert np.array_equal(agent.logits(obs, eng.mask), want)
    # an unknown version of the rows is refused, and so is a clone started from one without them
    with pytest.raises(CheckpointError, match="derived rows 'mjenv-hand-v9' are not one of .* a version mismatch"):
        PolicyAgent(dict(ck, derived="mjenv-hand-v9"))
    from agents.script_args import ArgsError

    with pytest.raises(ArgsError, match="--init_checkpoint: its network reads derived rows 'mjenv-hand-v1'"):
        train.train(_tiny_train_args(tmp_path, run_name="x", netclone_sets=0,
                                     init_checkpoint=str(tmp_path / "runs" / "hf" / "final.pt")))
    # train.py's stage and the stage on its own fit the same weights on the derived rows too (as for v1 above)
    import os

    from agents.training.netclone import CloneArgs, run

    staged = train.train(_tiny_train_args(tmp_path, run_name="hf0", derived=HAND_FEATURES))
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        alone = run(CloneArgs(data_dir=str(tmp_path / "data"), train_walls=12, train_sets=1, holdout_walls=4,
                              channels=8, blocks=1, hidden=16, epochs=2, batch_size=64, lr=0.003, eval_every=200,
                              device="cpu", derived=HAND_FEATURES, out=str(tmp_path / "alone.pt")), log=lambda s: None)
    finally:
        os.chdir(here)
    assert staged["steps"] == 0 and alone["checksum"] == load_checkpoint(tmp_path / "runs" / "hf0" / "final.pt")["checksum"]
    with pytest.raises(ArgsError, match="--derived: 'hand' is not 'mjenv-hand-v1'"):
        train.check_args(train.Args(derived="hand"))
    with pytest.raises(ArgsError, match="--derived: only the all-seat trainer's policy without advice"):
        train.check_args(train.Args(derived=HAND_FEATURES, advice=True))


def test_a_checkpoint_teacher_and_a_warm_start_give_the_same_weights_through_train_py_and_alone(tmp_path):
    """A checkpoint file as the cloned teacher (its datasets named by the file's stem, reused on a second run) and a
    warm start (``--init_checkpoint`` in train.py, ``init`` on its own) fit the same network both ways; a warm
    start of another architecture is refused."""
    import os

    import train
    from agents.script_args import ArgsError
    from agents.training.netclone import CloneArgs, run, teacher_tag

    train.train(_tiny_train_args(tmp_path, run_name="t0"))
    teacher = tmp_path / "runs" / "t0" / "final.pt"
    assert teacher_tag(str(teacher)) == "final" and teacher_tag("heuristic-flush") == "heuristic-flush"
    kw = dict(netclone_teacher=str(teacher), netclone_seed=5, netclone_holdout_seed=6, init_checkpoint=str(teacher))
    staged = train.train(_tiny_train_args(tmp_path, run_name="warm", **kw))
    assert staged["steps"] == 0 and (tmp_path / "data" / "kawuxing3-final-s5-0" / "meta.json").is_file()
    ck = load_checkpoint(tmp_path / "runs" / "warm" / "final.pt")
    assert ck["network_only"] is True and ck["meta"]["netclone"]["teacher"] == str(teacher)
    assert ck["checksum"] != load_checkpoint(teacher)["checksum"]
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        base = dict(teacher=str(teacher), data_dir=str(tmp_path / "data"), train_walls=12, train_sets=1, train_seed=5,
                    holdout_walls=4, holdout_seed=6, channels=8, blocks=1, hidden=16, epochs=2, batch_size=64,
                    lr=0.003, eval_every=200, device="cpu")
        alone = run(CloneArgs(**base, init=str(teacher), out=str(tmp_path / "alone.pt")), log=lambda s: None)
        fresh = run(CloneArgs(**base, out=str(tmp_path / "fresh.pt")), log=lambda s: None)
        with pytest.raises(ValueError, match="architecture .* differs from the run's"):
            run(CloneArgs(**{**base, "channels": 16}, init=str(teacher), out=str(tmp_path / "x.pt")), log=lambda s: None)
    finally:
        os.chdir(here)
    assert alone["checksum"] == ck["checksum"] != fresh["checksum"]
    with pytest.raises(ArgsError, match="--netclone_teacher: 'nobody.pt' is not one of .* nor a checkpoint file"):
        train.check_args(train.Args(net="resnet1d", advice=False, netclone_sets=1, netclone_teacher="nobody.pt"))


def test_depart_weight_weighs_the_teachers_departures_and_needs_split_by(tmp_path, monkeypatch):
    """``depart_weight`` marks the training decisions where the teacher departs from ``split_by``'s choice and
    weighs their cross-entropy: another network than the unweighted fit, the same as train.py's stage with
    ``netclone_depart_weight``; without the player to depart from it is refused."""
    from agents.training.netclone import CloneArgs, run

    monkeypatch.chdir(tmp_path)
    base = dict(data_dir=str(tmp_path / "data"), train_walls=12, train_sets=1, holdout_walls=4, channels=8, blocks=1,
                hidden=16, epochs=2, batch_size=64, lr=0.003, eval_every=200, device="cpu", split_by="heuristic")
    lines = []
    plain = run(CloneArgs(**base, out=str(tmp_path / "plain.pt")), log=lambda s: None)
    weighed = run(CloneArgs(**base, depart_weight=5.0, out=str(tmp_path / "w.pt")), log=lines.append)
    marked = [s for s in lines if "training decisions" in s and "weighted 5.0" in s]
    assert marked and int(marked[0].split(" in ")[1].split()[0].replace(",", "")) > 0
    assert weighed["checksum"] != plain["checksum"]
    import train
    from agents.script_args import ArgsError

    staged = train.train(_tiny_train_args(tmp_path, run_name="w", netclone_split_by="heuristic", netclone_depart_weight=5.0))
    assert staged["steps"] == 0 and load_checkpoint(tmp_path / "runs" / "w" / "final.pt")["checksum"] == weighed["checksum"]
    with pytest.raises(ArgsError, match="--netclone_depart_weight: name the player departed from"):
        train.check_args(train.Args(net="resnet1d", advice=False, netclone_sets=1, netclone_depart_weight=2.0))
    with pytest.raises(ValueError, match="--depart_weight: name the player departed from with --split_by"):
        run(CloneArgs(**{**base, "split_by": ""}, depart_weight=5.0, out=str(tmp_path / "x.pt")), log=lambda s: None)
