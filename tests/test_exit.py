"""Expert iteration for the departure head (agents/training/exit.py): labels on a policy's states, resumable chunks,
the fit on a base checkpoint, and train.py's --departure_policy."""

import json

import numpy as np
import pytest

from agents.training import exit as X
from agents.training.distill import label_states, load_labels

torch = pytest.importorskip("torch")

DEFAULT = "agents/checkpoints/kawuxing3-default.pt"


class FirstLegal:
    """A policy that plays the lowest legal action id (far from the compiled player, so the states differ)."""

    name = "first-legal"

    def act(self, obs, mask):
        return np.asarray(mask, bool).argmax(1).astype(np.int64)


def test_labels_follow_the_policy_that_plays_the_tables():
    own = label_states(decisions=30, tables=8, worlds=3, candidates=3, seed=11)
    other = label_states(decisions=30, tables=8, worlds=3, candidates=3, seed=11, policy=FirstLegal())
    assert (own["played"] == 0).all()  # the compiled player plays its own choice
    first = other["mask"].argmax(1)
    hit = other["cand"] == first[:, None]
    # the played column is where the policy's move sits in the shortlist, -1 where it is not in it
    assert (other["played"] == np.where(hit.any(1), hit.argmax(1), -1)).all()
    assert (other["played"] != 0).any()
    assert not np.array_equal(own["obs"], other["obs"])  # other moves, other states
    assert other["meta"]["policy"] == "first-legal" and own["meta"]["policy"] is None
    share, gain, ci = X.played_gain(other)
    col = np.maximum(other["played"], 0)
    assert share == pytest.approx((other["played"] > 0).mean())
    assert gain == pytest.approx(other["gain"][np.arange(30), col].mean())


def test_label_chunks_are_saved_per_seed_and_resumed(tmp_path):
    kw = dict(seed=20, chunks=2, folder=tmp_path, chunk=12, tables=8, worlds=3)
    paths = X.label_chunks(FirstLegal(), **kw)
    assert [p.name for p in paths] == ["labels-20.npz", "labels-21.npz"]
    first = load_labels(paths[1])
    stamp = paths[0].stat().st_mtime_ns
    paths[1].unlink()
    X.label_chunks(FirstLegal(), **kw)  # resumes: chunk 20 kept, chunk 21 labelled again, the same
    assert paths[0].stat().st_mtime_ns == stamp
    again = load_labels(paths[1])
    for key in ("obs", "cand", "gain", "played"):
        assert np.array_equal(first[key], again[key])
    with pytest.raises(ValueError, match="chunks and chunk"):
        X.label_chunks(FirstLegal(), seed=1, chunks=0, folder=tmp_path)


def test_label_chunks_of_chosen_kinds_label_only_those_decisions(tmp_path, capsys):
    from agents.training.distill import KINDS, decision_kinds

    kw = dict(seed=40, chunks=1, chunk=10, tables=8, worlds=3, label_prob=1.0)
    [path] = X.label_chunks(None, folder=tmp_path / "pong", kinds=["pong", "claim_kong"], **kw)
    labels = load_labels(path)
    codes = {KINDS.index("pong"), KINDS.index("claim_kong")}
    assert len(labels["kind"]) == 10 and set(labels["kind"].tolist()) <= codes
    assert (decision_kinds(labels["cand"], labels["ncand"]) == labels["kind"]).all()
    # every kind (the default) labels discards too, from the same walls
    [every] = X.label_chunks(None, folder=tmp_path / "all", **kw)
    assert KINDS.index("discard") in set(load_labels(every)["kind"].tolist())
    # the command line takes the kinds and refuses an unknown one in one line
    assert X.main(["label", "--seed", "40", "--chunks", "1", "--chunk", "10", "--worlds", "3", "--label_prob", "1",
                   "--kinds", "pong", "claim_kong", "--out", str(tmp_path / "cli")]) == 0
    cli = load_labels(tmp_path / "cli" / "labels-40.npz")
    assert set(cli["kind"].tolist()) <= codes
    with pytest.raises(SystemExit):
        X.main(["label", "--seed", "1", "--chunks", "1", "--kinds", "dragon", "--out", str(tmp_path / "bad")])
    assert "invalid choice: 'dragon'" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_fit_puts_a_new_head_on_the_base_checkpoint(tmp_path):
    from agents.players.policy import PolicyAgent, load_checkpoint, save_checkpoint

    paths = X.label_chunks(FirstLegal(), seed=30, chunks=2, folder=tmp_path, chunk=20, tables=8, worlds=3)
    ck, report = X.fit(paths, DEFAULT, holdout=0.25, members=2, hidden=8, epochs=2)
    assert report["decisions"] == 40 and report["fitted"] == 30 and report["labels"]["policy"] == "first-legal"
    base = load_checkpoint(DEFAULT)
    assert ck["departures"]["arch"] == {"members": 2, "hidden": 8}
    assert ck["departures"]["meta"]["exit"]["label_seeds"] == [30, 31]
    assert ck["checksum"] != base["checksum"] and ck["meta"]["exit_base"] == "kawuxing3-default.pt"
    for key in base["trunk"]:  # the network is the base's
        assert torch.equal(ck["trunk"][key], base["trunk"][key])
    agent = PolicyAgent(save_checkpoint(tmp_path / "new.pt", ck), "kawuxing3")
    assert agent.departures is not None and agent.departures.tau == 0.1
    table = X.held_out(paths, {"new": ck["departures"], "again": ck["departures"]}, holdout=0.25)
    assert table["decisions"] == 10 and table["new"] == table["again"]  # the same decisions for every head
    assert table["paired"]["again"] == {"against": "new", "gain_per_seat_hand": 0.0, "ci95_per_seat_hand": 0.0}
    fitted = {r["tau"]: r for r in report["held_out_gains"]}  # and the same as the fit's own held-out report
    assert all(r["departs"] == pytest.approx(fitted[r["tau"]]["departs"]) for r in table["new"])
    with pytest.raises(ValueError, match="does not play heuristic-flush's advice"):
        X.fit(paths, "agents/checkpoints/kawuxing3-network-dh.pt")
    with pytest.raises(ValueError, match="label_files: none given"):
        X.fit([], DEFAULT)


def test_file_gains_are_the_joined_labels_features_without_their_planes(tmp_path):
    from agents.training.departures import file_gains, label_gains
    from agents.training.distill import concat_labels

    paths = X.label_chunks(FirstLegal(), seed=40, chunks=3, folder=tmp_path, chunk=20, tables=8, worlds=3)
    joined = concat_labels([load_labels(p) for p in paths])
    labels, x, gain, valid = file_gains(paths, "kawuxing3")
    for got, want in zip((x, gain, valid), label_gains(joined, "kawuxing3", batch=7)):  # other batch bounds
        assert got.dtype == want.dtype and np.array_equal(got, want)
    assert "obs" not in labels and labels["meta"]["decisions"] == 60
    assert all(np.array_equal(labels[k], joined[k]) for k in ("mask", "cand", "ncand", "gain", "played"))
    with pytest.raises(ValueError, match="no label files"):
        file_gains([], "kawuxing3")


def test_train_labels_the_states_of_a_departure_policy(tmp_path):
    import train
    from agents.script_args import ArgsError, parse_args

    args = train.Args(total_timesteps=0, bc_rounds=0, advice=True, advice_features="heuristic-advice-v2",
                      advice_weight=5.0, channels=4, hidden=8, value_hidden=4, departure_decisions=24,
                      departure_policy=DEFAULT, departure_members=1, departure_hidden=4, departure_epochs=1,
                      departure_holdout=0.25, eval_every=0, final_eval_walls=1, eval_opponents=["random"],
                      out=str(tmp_path), run_name="x", progress=False, tensorboard=False, curve=False, threads=1)
    train.train(args)
    labels = load_labels(tmp_path / "x" / "departure_labels.npz")
    assert labels["meta"]["policy"] == "kawuxing3-default" and len(labels["played"]) == 24
    report = json.loads((tmp_path / "x" / "departures.json").read_text())
    assert report["labels"]["policy"] == "kawuxing3-default"
    # the standalone form labels the same decisions and fits the same head for the same seeds
    paths = X.label_chunks(DEFAULT, seed=args.departure_seed, chunks=1, chunk=24, folder=tmp_path / "c")
    same = load_labels(paths[0])
    for key in ("obs", "cand", "gain", "played"):
        assert np.array_equal(same[key], labels[key])
    ck, _ = X.fit(paths, DEFAULT, holdout=0.25, members=1, hidden=4, epochs=1, fit_seed=args.seed)
    trained = torch.load(tmp_path / "x" / "final.pt", weights_only=True)["departures"]["state"]
    assert all(torch.equal(ck["departures"]["state"][k], trained[k]) for k in trained)
    with pytest.raises(ArgsError, match="--departure_policy: 'nope.pt' not found"):
        train.check_args(train.Args(departure_decisions=10, advice=True, advice_features="heuristic-advice-v2",
                                    departure_policy="nope.pt"))
    exit_cfg, _ = parse_args(train.Args, ["--config", "exit"], config_dir=train.CONFIG_DIR)
    assert exit_cfg.departure_policy == "agents/checkpoints/kawuxing3-long.pt" and exit_cfg.departure_decisions > 0


def test_merged_heads_predict_the_mean_of_their_heads():
    from agents.players.departures import PAIR_FEATURES, head_payload, make_head, predict
    from agents.training.departures import fit_head

    rng = np.random.default_rng(0)
    parts, xs = [], []
    for shift in (0.0, 3.0):  # two label sets of other input scales
        x = (rng.normal(size=(300, 2, PAIR_FEATURES)) * (1 + shift) + shift).astype(np.float32)
        gain = x[..., 0] * 0.1 + rng.normal(size=(300, 2)) * 0.01
        head = fit_head(x, gain, np.ones((300, 2), bool), members=2, hidden=8, epochs=2, seed=int(shift))
        parts.append(head_payload(head, tau=0.1, variant="kawuxing3", options=None))
        xs.append(x)
    merged = X.merge_heads(parts, tau=0.2)
    assert merged["arch"] == {"members": 4, "hidden": 8} and merged["tau"] == 0.2
    heads = []
    for part in (*parts, merged):
        h = make_head(part["arch"]["members"], part["arch"]["hidden"])
        h.load_state_dict(part["state"])
        heads.append(h.eval())
    x = np.concatenate(xs)
    want = (predict(heads[0], x) + predict(heads[1], x)) / 2
    assert np.allclose(predict(heads[2], x), want, atol=1e-4)
    with pytest.raises(ValueError, match="differ in hidden units"):
        X.merge_heads([parts[0], {**parts[1], "arch": {"members": 2, "hidden": 16}}])
