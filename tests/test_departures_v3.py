"""Departure heads over ``heuristic-advice-v3``'s advisor (Gejiu's 七星 wait) and heads of scope ``win``
(agents/players/departures.py win_shortlist, agents/training/departures.py win_labels, the rollouts' ``win``)."""

import numpy as np
import pytest

from agents.players import departures as D
from mjenv.encoding import actions as A
from tests.test_departures import shortlist_decisions

torch = pytest.importorskip("torch")

V2, V3 = D.FEATURES_V2, "heuristic-advice-v3"


@pytest.fixture(scope="module")
def win_decisions():
    """Gejiu win decisions of the v3 advisor's self-play, with the other side of each win (true-state rollouts)."""
    from agents.training.departures import win_labels

    return win_labels("gejiu", decisions=60, seed=11, advisor=V3, chunk=150)


@pytest.fixture(scope="module")
def gejiu_decisions():
    return shortlist_decisions("gejiu", n_tables=24, steps=60, seed=5, version=V2)


def test_a_v3_head_reads_the_qixing_advisor_and_leaves_v2_heads_as_they_were():
    f3 = D.CandidateFeatures("gejiu", None, V2, V3)
    assert f3.advisor._qixing_wait == 10 and D.CandidateFeatures("gejiu", None, V2).advisor._qixing_wait is None
    assert D.CandidateFeatures("kawuxing3", None, D.FEATURES, V3).advisor._qixing_wait is None  # v3 is v2 there
    fp2 = D.departure_fingerprint("gejiu", None, V2)
    assert D.departure_fingerprint("gejiu", None, V2, D.ADVISOR) == fp2
    assert len({fp2, D.departure_fingerprint("gejiu", None, V2, V3),
                D.departure_fingerprint("gejiu", None, V2, V3, "win")}) == 3
    with pytest.raises(ValueError, match="advisor 'heuristic-advice-v1' is not one of"):
        D.CandidateFeatures("gejiu", None, V2, "heuristic-advice-v1")
    head = D.make_head(1, 4, f3.width)
    assert "advisor" not in D.head_payload(head, tau=0.1, variant="gejiu", options=None, features=V2)
    part = D.head_payload(head, tau=0.1, variant="gejiu", options=None, features=V2, advisor=V3, scope="win")
    assert part["advisor"] == V3 and D.check_part(part, "gejiu", None, "t") == []
    assert "advisor 'v9' is not one of" in " ".join(D.check_part({**part, "advisor": "v9"}, "gejiu", None, "t"))
    assert "changed since" in " ".join(D.check_part({**part, "scope": "all"}, "gejiu", None, "t"))
    assert "win need" in " ".join(D.check_part({**part, "features": D.FEATURES}, "gejiu", None, "t"))


def test_win_labels_pair_the_advisors_move_with_the_other_side_of_the_win(win_decisions, tmp_path):
    from agents.players.heuristic import heuristic_player
    from agents.training.distill import load_labels, save_labels

    lab = win_decisions
    assert len(lab["cand"]) == 60 and (lab["ncand"] == 2).all() and lab["meta"]["seat_hands"] >= 150
    mask, cand = lab["mask"], lab["cand"]
    assert mask[:, A.WIN].all() and (cand[:, 2] == -1).all()
    assert mask[np.arange(60), cand[:, 0]].all() and mask[np.arange(60), cand[:, 1]].all()
    takes = cand[:, 0] == A.WIN
    assert takes.any() and (cand[~takes, 1] == A.WIN).all() and (cand[takes, 1] != A.WIN).all()
    v3 = heuristic_player("heuristic-flush", "gejiu", None, qixing_wait=10)
    np.testing.assert_array_equal(v3.act(lab["obs"], mask), cand[:, 0])  # the teacher's own move first
    np.testing.assert_array_equal(D.win_shortlist(v3, lab["obs"], mask)[0], cand)
    assert np.isfinite(lab["gain"]).all() and (lab["gain"][:, 1] != 0).any() and (lab["gain"][:, [0, 2]] == 0).all()
    back = load_labels(save_labels(tmp_path / "w.npz", lab))
    np.testing.assert_array_equal(back["gain"], lab["gain"])
    assert back["meta"]["scope"] == "win" and back["meta"]["advisor"] == V3
    with pytest.raises(ValueError, match="need at least 1 decision"):
        from agents.training.departures import win_labels

        win_labels("gejiu", decisions=0, seed=1)


def _net(variant):
    from agents.players.advice import ROWS
    from agents.training.ppo import SeatNet
    from mjenv.encoding.observation import ObservationEncoder

    shape = list(ObservationEncoder(variant).shape)
    shape[0] += ROWS
    return SeatNet(shape, 4, 8, 4, advice_row=shape[0] - ROWS, advice_weight=50.0), shape


def _part(width, bias, **kw):
    head = D.make_head(members=1, hidden=4, inputs=width)
    with torch.no_grad():
        for p in head.parameters():
            p.zero_()
        head.members[0][-1].bias.fill_(bias)  # every alternative is predicted to gain `bias`
    return D.head_payload(head, tau=0.1, variant="gejiu", options=None, features=V2, **kw)


def test_a_win_head_departs_only_where_a_win_is_legal(tmp_path, win_decisions, gejiu_decisions):
    from agents.players.policy import CheckpointError, PolicyAgent, checkpoint_payload, save_checkpoint

    net, shape = _net("gejiu")
    width = D.FEATURE_SETS[V2]

    def agent(dep, features=V3):
        ck = checkpoint_payload(net.trunk, net.head, variant="gejiu", options=None, obs_shape=shape,
                                arch={"channels": 4, "hidden": 8}, features=features, departures=dep)
        return PolicyAgent(save_checkpoint(tmp_path / "w.pt", ck), "gejiu")

    lab = win_decisions
    obs, mask, cand = lab["obs"], lab["mask"], lab["cand"]
    plain = agent(None)
    np.testing.assert_array_equal(plain.act(obs, mask), cand[:, 0])  # the advised network plays v3's move
    on = agent(_part(width, +1.0, advisor=V3, scope="win"))
    np.testing.assert_array_equal(on.act(obs, mask), cand[:, 1])  # predicted gains: the other side of every win
    np.testing.assert_array_equal(agent(_part(width, -1.0, advisor=V3, scope="win")).act(obs, mask), cand[:, 0])
    _, gobs, gmask, gcand, _ = gejiu_decisions  # no win legal: a win head keeps the advisor's choice
    assert not gmask[:, A.WIN].any()
    np.testing.assert_array_equal(on.act(gobs, gmask), plain.act(gobs, gmask))
    # an all-scope v3 head departs on the ranking but never where a win is legal (v3 passes some for 七星)
    ranked = agent(_part(width, +1.0, advisor=V3))
    np.testing.assert_array_equal(ranked.act(obs, mask), cand[:, 0])
    assert (ranked.act(gobs, gmask) != plain.act(gobs, gmask)).any()
    # the head and the network must read the same advisor
    with pytest.raises(CheckpointError, match="re-ranks the shortlist of heuristic-advice-v2's advisor, but the "
                                              "network reads heuristic-advice-v3"):
        agent(_part(width, +1.0))
    with pytest.raises(CheckpointError, match="re-ranks the shortlist of heuristic-advice-v3's advisor"):
        agent(_part(width, +1.0, advisor=V3), features="heuristic-advice-v2")


def test_train_fits_a_win_head_over_the_v3_advisor(tmp_path, win_decisions):
    import json

    import train
    from agents.script_args import ArgsError
    from agents.training.distill import save_labels

    path = save_labels(tmp_path / "win.npz", win_decisions)
    args = train.Args(variant="gejiu", total_timesteps=0, bc_rounds=0, advice=True, advice_features=V3,
                      advice_weight=5.0, channels=4, hidden=8, value_hidden=4, departure_labels=[str(path)],
                      departure_members=1, departure_hidden=8, departure_epochs=2, departure_holdout=0.25,
                      departure_features=V2, departure_scope="win", eval_every=0, final_eval_walls=1,
                      eval_opponents=["random"], out=str(tmp_path), run_name="w", progress=False, tensorboard=False,
                      curve=False, threads=1)
    train.train(args)
    report = json.loads((tmp_path / "w" / "departures.json").read_text())
    assert report["scope"] == "win" and report["advisor"] == V3 and report["decisions"] == 60
    assert report["labelled_decisions_per_seat_hand"] == pytest.approx(60 / win_decisions["meta"]["seat_hands"],
                                                                       abs=1e-3)
    ck = torch.load(tmp_path / "w" / "final.pt", map_location="cpu", weights_only=False)
    assert ck["departures"]["scope"] == "win" and ck["departures"]["advisor"] == V3 and ck["features"] == V3
    with pytest.raises(ArgsError, match="--departure_scope: 'win' refused"):
        train.check_args(train.Args(variant="gejiu", departure_scope="win"))
    with pytest.raises(ArgsError, match="--departure_decisions: needs --advice with --advice_features "
                                        "heuristic-advice-v2 or heuristic-advice-v3"):
        train.check_args(train.Args(variant="gejiu", advice=True, advice_features="heuristic-advice-v1",
                                    departure_decisions=10))


def test_the_rollouts_win_departure_is_the_other_side_of_the_win():
    from agents.players.heuristic import heuristic_player
    from agents.training.rollouts import KINDS, counterfactual_pairs, main

    v3 = heuristic_player("heuristic-flush", "gejiu", None, qixing_wait=10)
    d = counterfactual_pairs("gejiu", v3.rules.options, v3, 120, seed=12, branch_prob=1.0, departures=("win",))
    assert len(d["advantage"]) > 10 and (d["kind"] == KINDS.index("win")).all()
    assert d["mask"][:, A.WIN].all() and ((d["advice"] == A.WIN) != (d["alt"] == A.WIN)).all()
    rows = main(["--variant", "gejiu", "--teacher", "heuristic-flush", "--qixing-wait", "10", "--pairs", "60",
                 "--seed", "12", "--departures", "win"])
    assert rows and rows[0]["kind"] == "win"
    with pytest.raises(SystemExit):
        main(["--variant", "kawuxing3", "--teacher", "heuristic-flush", "--qixing-wait", "10", "--pairs", "5"])
