"""Departure labels valued in hands-true worlds (the real hands, only the live wall reshuffled):
``agents.training.distill.hands_true_worlds`` / ``label_states(world_source=...)``, the departure stage's
``--departure_world_source`` and the standalone ``agents.training.exit label --world_source``."""

import hashlib
import json

import numpy as np
import pytest

from agents.training import exit as X
from agents.training.distill import (WORLD_SOURCES, concat_labels, hands_true_worlds, label_states, load_labels,
                                     save_labels)
from mjenv.engine import state as S
from mjenv.engine.core import Engine

torch = pytest.importorskip("torch")


def _midgame(tables: int = 4, steps: int = 10, seed: int = 3) -> Engine:
    """An engine whose tables have been played ``steps`` steps by the compiled player (melds, rivers, a shorter wall)."""
    from agents.players.fastplay import FastPlayer

    eng = Engine("kawuxing3", tables, record_events=False)
    eng.reset(seed=seed, table_ids=np.arange(tables))
    player, acts = FastPlayer("kawuxing3"), np.zeros(tables, np.int64)
    for _ in range(steps):
        live = np.flatnonzero(eng.state.phase != S.DONE)
        player.decide(eng, live, out=acts)
        eng.step(acts)
    return eng


def test_hands_true_worlds_keep_every_hand_and_reshuffle_only_the_live_wall():
    eng = _midgame()
    b = int(np.flatnonzero(eng.state.phase != S.DONE)[0])
    roll = Engine("kawuxing3", 8, record_events=False)
    roll.reset(seed=0)
    hands_true_worlds(eng, b, roll, np.arange(8), seed=7)
    st, rs = eng.state, roll.state
    f, bk = int(st.front[b]), int(st.back[b])
    assert bk - f > 10
    for name in ("hand", "n_melds", "meld_kind", "meld_tile", "hidden", "lock", "revealed", "river", "river_len",
                 "money", "actor", "phase", "front", "back"):  # every seat's concealed tiles, melds, locks as they are
        assert np.array_equal(getattr(rs, name), np.repeat(getattr(st, name)[b : b + 1], 8, 0)), name
    true_wall = st.wall[b]
    assert (rs.wall[:, :f] == true_wall[:f]).all() and (rs.wall[:, bk:] == true_wall[bk:]).all()
    for r in range(8):  # the same multiset of live tiles, in another order
        assert np.array_equal(np.sort(rs.wall[r, f:bk]), np.sort(true_wall[f:bk]))
    assert not (rs.wall[:, f:bk] == true_wall[f:bk]).all(1).any()
    assert len({rs.wall[r, f:bk].tobytes() for r in range(8)}) == 8  # a fresh shuffle per world
    again = Engine("kawuxing3", 8, record_events=False)
    again.reset(seed=0)
    hands_true_worlds(eng, b, again, np.arange(8), seed=7)  # the same seed: the same shuffles
    assert np.array_equal(again.state.wall, rs.wall)
    hands_true_worlds(eng, b, again, np.arange(8), seed=8)
    assert not np.array_equal(again.state.wall, rs.wall)


def test_hands_true_labels_are_deterministic_and_label_the_same_states():
    kw = dict(decisions=24, tables=8, worlds=4, candidates=3, seed=4)
    a = label_states(**kw, world_source="hands_true")
    b = label_states(**kw, world_source="hands_true")
    for key in ("obs", "cand", "ncand", "value", "gain", "se", "played"):
        assert np.array_equal(a[key], b[key]), key
    assert a["meta"]["world_source"] == "hands_true" and a["meta"]["skipped"] == 0
    sampled = label_states(**kw)
    assert sampled["meta"]["world_source"] == "sampled"
    # the same tables and decisions (the self-play does not read the worlds), valued in other worlds
    for key in ("obs", "cand", "ncand", "played"):
        assert np.array_equal(a[key], sampled[key]), key
    assert not np.array_equal(a["gain"], sampled["gain"])
    valid = np.arange(3)[None, :] < a["ncand"][:, None]
    assert (a["gain"][:, 0] == 0).all() and (a["gain"][~valid] == 0).all() and (a["se"][:, 1:][valid[:, 1:]] >= 0).all()
    with pytest.raises(ValueError, match="world_source: 'true' is not one of sampled, hands_true"):
        label_states(decisions=2, world_source="true")
    with pytest.raises(ValueError, match="world_source: verification"):
        label_states(decisions=2, world_source="hands_true", verify_worlds=4)
    with pytest.raises(ValueError, match="valued in different worlds"):
        concat_labels([a, sampled])
    assert WORLD_SOURCES == ("sampled", "hands_true")


def test_sampled_labels_are_what_they_were():
    """The default source is the old code path: the labels of a small run are the ones main gave before the
    hands-true source existed (sha256 of their arrays, pinned)."""
    got = label_states(decisions=40, tables=8, worlds=3, candidates=3, seed=4)
    h = hashlib.sha256()
    for key in ("cand", "ncand", "gain", "se", "value"):
        h.update(np.ascontiguousarray(got[key]).tobytes())
    assert h.hexdigest() == "efdef9e62bca88180cd64cbbace9ac23af4edd436ea4fb42601ba2f6f28b3338"


def test_train_and_the_standalone_labeller_make_the_same_hands_true_head(tmp_path):
    import train
    from agents.players.policy import load_checkpoint
    from agents.script_args import ArgsError, parse_args

    args = train.Args(total_timesteps=0, bc_rounds=0, advice=True, advice_features="heuristic-advice-v2",
                      advice_weight=5.0, channels=4, hidden=8, value_hidden=4, departure_decisions=24,
                      departure_world_source="hands_true", departure_members=1, departure_hidden=4,
                      departure_epochs=1, departure_holdout=0.25, eval_every=0, final_eval_walls=1,
                      eval_opponents=["random"], out=str(tmp_path), run_name="t", progress=False, tensorboard=False,
                      curve=False, threads=1)
    train.train(args)
    labels = load_labels(tmp_path / "t" / "departure_labels.npz")
    assert labels["meta"]["world_source"] == "hands_true" and labels["meta"]["policy"] is None
    report = json.loads((tmp_path / "t" / "departures.json").read_text())
    assert report["world_source"] == "hands_true"
    trained = load_checkpoint(tmp_path / "t" / "final.pt")
    assert trained["departures"]["meta"]["world_source"] == "hands_true"
    # the standalone form (no policy: the compiled heuristic-flush player's states) labels the same decisions
    paths = X.label_chunks(None, seed=args.departure_seed, chunks=1, chunk=24, folder=tmp_path / "c",
                           world_source="hands_true")
    same = load_labels(paths[0])
    for key in ("obs", "cand", "gain", "played"):
        assert np.array_equal(same[key], labels[key]), key
    ck, rep = X.fit(paths, "agents/checkpoints/kawuxing3-default.pt", holdout=0.25, members=1, hidden=4, epochs=1,
                    fit_seed=args.seed)
    assert rep["world_source"] == "hands_true" and ck["departures"]["meta"]["world_source"] == "hands_true"
    assert all(torch.equal(ck["departures"]["state"][k], v) for k, v in trained["departures"]["state"].items())
    # label files of one source are not fitted as another
    with pytest.raises(ValueError, match="valued in hands_true worlds, not sampled"):
        from agents.training.departures import run_stage

        run_stage("kawuxing3", label_files=[str(paths[0])], holdout=0.25, members=1, hidden=4, epochs=1)
    with pytest.raises(ArgsError, match="--departure_world_source: 'true' is not one of sampled, hands_true"):
        train.check_args(train.Args(departure_decisions=10, advice=True, advice_features="heuristic-advice-v2",
                                    departure_world_source="true"))
    with pytest.raises(ValueError, match="compiled_states: give the policy"):
        X.label_chunks(None, seed=1, chunks=1, folder=tmp_path / "d", compiled_states=True)
    parsed, _ = parse_args(train.Args, ["--config", "long"], config_dir=train.CONFIG_DIR)
    assert parsed.departure_world_source == "sampled" and parsed.departure_merge == ""
    true, _ = parse_args(train.Args, ["--config", "truehead"], config_dir=train.CONFIG_DIR)
    assert (true.departure_world_source, true.departure_seed, true.departure_decisions, true.departure_tau) == \
        ("hands_true", 7450, 200_000, 0.0)
    assert true.departure_merge == "agents/checkpoints/kawuxing3-long.pt" and true.seed == parsed.seed
    # the truehead config is long's with only the departure labels' source, seeds, merge and threshold changed
    same = {k for k in vars(parsed) if k not in ("departure_world_source", "departure_seed", "departure_merge",
                                                  "departure_tau", "exp_name")}
    assert all(getattr(true, k) == getattr(parsed, k) for k in same)
    train.check_args(true)


def test_sampled_label_files_keep_their_meaning(tmp_path):
    """A label file written before the source was recorded reads as sampled and joins sampled labels."""
    got = label_states(decisions=6, tables=8, worlds=2, candidates=3, seed=2)
    old = dict(got, meta={k: v for k, v in got["meta"].items() if k != "world_source"})
    path = save_labels(tmp_path / "old.npz", old)
    joined = concat_labels([load_labels(path), got])
    assert len(joined["cand"]) == 12 and "world_source" not in joined["meta"]


def test_train_merges_the_fitted_head_with_a_checkpoints_head(tmp_path):
    """``--departure_merge CKPT``: the run's head is ``exit merge`` of that checkpoint's head and the fitted one, at
    ``departure_tau`` (what ``configs/train/truehead.toml`` ships)."""
    import train
    from agents.players.policy import PolicyAgent, load_checkpoint
    from agents.script_args import ArgsError

    default = "agents/checkpoints/kawuxing3-long.pt"  # (a 5-member head: the default until session 17)
    common = dict(total_timesteps=0, bc_rounds=0, advice=True, advice_features="heuristic-advice-v2", advice_weight=5.0,
                  channels=4, hidden=8, value_hidden=4, departure_decisions=16, departure_world_source="hands_true",
                  departure_members=2, departure_hidden=64, departure_epochs=1, departure_holdout=0.25,
                  departure_tau=0.0, eval_every=0, final_eval_walls=1, eval_opponents=["random"], out=str(tmp_path),
                  progress=False, tensorboard=False, curve=False, threads=1)
    train.train(train.Args(run_name="alone", **common))
    train.train(train.Args(run_name="merged", departure_merge=default, **common))
    alone = load_checkpoint(tmp_path / "alone" / "final.pt")["departures"]
    merged = load_checkpoint(tmp_path / "merged" / "final.pt")
    want = X.merge_heads([load_checkpoint(default)["departures"], alone], tau=0.0)
    assert merged["departures"]["arch"] == {"members": 7, "hidden": 64} and merged["departures"]["tau"] == 0.0
    assert all(torch.equal(merged["departures"]["state"][k], v) for k, v in want["state"].items())
    report = json.loads((tmp_path / "merged" / "departures.json").read_text())
    assert report["merged_with"] == {"checkpoint": default, "members": 7}
    assert PolicyAgent(str(tmp_path / "merged" / "final.pt"), "kawuxing3").departures.tau == 0.0
    with pytest.raises(ArgsError, match="--departure_merge: 'nope.pt' not found"):
        train.check_args(train.Args(departure_decisions=10, advice=True, advice_features="heuristic-advice-v2",
                                    departure_merge="nope.pt"))


def test_the_shipped_truehead_checkpoint_is_the_default_network_with_the_averaged_head():
    from agents.players.fasthead import FastHeadPlayer
    from agents.players.policy import PolicyAgent, load_checkpoint

    path = "agents/checkpoints/kawuxing3-truehead.pt"
    ck, default = load_checkpoint(path), load_checkpoint("agents/checkpoints/kawuxing3-long.pt")
    assert ck["checksum"] == "sha256:33a046e71cf718bf593b59a0a2527186cd1f2a39579fb3b55b10f782c6109377"
    assert all(torch.equal(ck["trunk"][k], v) for k, v in default["trunk"].items())
    dep = ck["departures"]
    assert dep["arch"] == {"members": 10, "hidden": 64} and dep["tau"] == 0.0
    assert [m.get("world_source", "sampled") for m in dep["meta"]["merged"]] == ["sampled", "hands_true"]
    for key in default["departures"]["state"]:  # the default's members come first, unchanged but for the input scale
        if key.startswith("members.0.") and not key.startswith("members.0.0."):
            assert torch.equal(dep["state"][key], default["departures"]["state"][key]), key
    assert PolicyAgent(path, "kawuxing3").departures.tau == 0.0
    assert FastHeadPlayer(path, "kawuxing3").variant == "kawuxing3"
