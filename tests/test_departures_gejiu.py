"""The Gejiu departure features ``candidate-features-v2`` (agents/players/departures.py): v1 and what each ready
hand's waits score, in the head, the checkpoint and train.py's arguments."""

import numpy as np
import pytest

from agents.players import departures as D
from mjenv.rules.scoring import gejiu as G
from tests.test_departures import shortlist_decisions

torch = pytest.importorskip("torch")

V2 = D.FEATURES_V2


@pytest.fixture(scope="module")
def gejiu_decisions():
    """Observations, masks and shortlists of Gejiu heuristic-flush self-play (decisions with >= 2 candidates)."""
    return shortlist_decisions("gejiu", n_tables=48, steps=90, seed=5, version=V2)


def test_v2_is_v1_then_the_wait_values_of_each_ready_hand(gejiu_decisions):
    feats, obs, mask, cand, ncand = gejiu_decisions
    assert feats.width == D.FEATURE_SETS[V2] == D.PAIR_FEATURES + 2 * D.WAIT_FEATURES
    x = feats.pairwise(obs, mask, cand, ncand)
    v1 = D.CandidateFeatures("gejiu").pairwise(obs, mask, cand, ncand)
    assert x.shape == (len(obs), D.CANDIDATES - 1, feats.width) and np.isfinite(x).all()
    np.testing.assert_array_equal(x[:, :, : D.PAIR_FEATURES], v1)
    w = feats.wait_values(obs, mask, cand, ncand)
    np.testing.assert_array_equal(x[:, :, D.PAIR_FEATURES : D.PAIR_FEATURES + D.WAIT_FEATURES], w[:, 1:])
    np.testing.assert_array_equal(x[:, :, D.PAIR_FEATURES + D.WAIT_FEATURES :], w[:, 1:] - w[:, :1])
    d = feats.view.decode(obs)
    live = d.live()
    kinds = D.candidate_kinds(cand)
    ready = valued = 0
    for i in range(len(obs)):
        for k in range(D.CANDIDATES):
            total, top, mean = w[i, k]
            if k >= ncand[i] or kinds[i, k] != 0:
                if kinds[i, k] != 5:  # only discards and passes leave a hand to wait with
                    assert total == top == mean == 0
                continue
            h = d.hand[i].astype(np.int8).copy()
            h[cand[i, k]] -= 1
            waits = G.wait_mask(h, h + d.meld_tiles[i, 0].astype(np.int8)) if h.sum() + 3 * d.n_melds[i, 0] == 13 \
                else np.zeros(34, bool)
            copies = float(live[i][waits].sum())
            if not copies:
                assert total == top == mean == 0
                continue
            ready += 1
            # every Gejiu win is legal and worth at least a 平胡 (V / 2 >= 1): the sum counts each live copy at
            # least once, and the mean is the sum over the live copies
            assert total >= copies and top >= mean >= 1 and mean * copies == pytest.approx(total, rel=1e-5)
            valued += mean > 1
    assert ready > 20 and valued >= 1


def test_v2_is_gejiu_only_and_unknown_sets_are_refused():
    import train
    from agents.script_args import ArgsError

    with pytest.raises(ValueError, match="not Gejiu"):
        D.CandidateFeatures("kawuxing3", version=V2)
    with pytest.raises(ValueError, match="is not one of"):
        D.CandidateFeatures("gejiu", version="candidate-features-v9")
    with pytest.raises(ArgsError, match="--departure_features: .*not Gejiu"):
        train.check_args(train.Args(variant="kawuxing4", departure_features=V2))
    with pytest.raises(ArgsError, match="--departure_features: 'nope' is not one of"):
        train.check_args(train.Args(departure_features="nope"))
    train.check_args(train.Args(variant="gejiu", departure_features=V2))


def test_a_v2_head_plays_in_a_gejiu_checkpoint_and_is_checked(tmp_path, gejiu_decisions):
    from agents.players.advice import ROWS
    from agents.players.policy import CheckpointError, PolicyAgent, checkpoint_payload, save_checkpoint
    from agents.training.ppo import SeatNet
    from mjenv.encoding.observation import ObservationEncoder

    feats, obs, mask, cand, ncand = gejiu_decisions
    shape = list(ObservationEncoder("gejiu").shape)
    shape[0] += ROWS
    net = SeatNet(shape, 4, 8, 4, advice_row=shape[0] - ROWS, advice_weight=50.0)

    def part(bias: float, inputs: int):
        head = D.make_head(members=1, hidden=4, inputs=inputs)
        with torch.no_grad():
            for p in head.parameters():
                p.zero_()
            head.members[0][-1].bias.fill_(bias)  # every alternative is predicted to gain `bias`
        return D.head_payload(head, tau=0.1, variant="gejiu", options=None, features=V2)

    def agent(dep):
        ck = checkpoint_payload(net.trunk, net.head, variant="gejiu", options=None, obs_shape=shape,
                                arch={"channels": 4, "hidden": 8}, features="heuristic-advice-v2", departures=dep)
        return PolicyAgent(save_checkpoint(tmp_path / "g.pt", ck), "gejiu")

    on = agent(part(+1.0, feats.width))
    assert on.departures.features.version == V2
    assert (on.act(obs, mask) == cand[:, 1]).all()  # predicted gains: always the advisor's second candidate
    assert (agent(part(-1.0, feats.width)).act(obs, mask) == cand[:, 0]).all()
    with pytest.raises(CheckpointError, match="does not read 64 inputs"):
        agent(part(+1.0, D.PAIR_FEATURES))  # a v1-wide head recorded as v2
    assert D.departure_fingerprint("gejiu", None, V2) != D.departure_fingerprint("gejiu", None)


def test_a_ready_scope_departs_only_between_ready_hands(gejiu_decisions):
    feats, obs, mask, cand, ncand = gejiu_decisions
    x = feats.pairwise(obs, mask, cand, ncand)
    w = feats.wait_values(obs, mask, cand, ncand)
    ok = np.arange(1, D.CANDIDATES)[None, :] < ncand[:, None]
    scope = D.in_scope(x, V2, "ready")
    np.testing.assert_array_equal(scope & ok, (w[:, 1:, 0] > 0) & (w[:, :1, 0] > 0) & ok)
    assert 0 < (scope & ok).sum() < ok.sum()
    assert D.in_scope(x, V2, "all").all()
    with pytest.raises(ValueError, match="ready and win need"):
        D.in_scope(x[:, :, : D.PAIR_FEATURES], D.FEATURES, "ready")
    part = D.head_payload(D.make_head(1, 4, feats.width), tau=0.1, variant="gejiu", options=None, features=V2,
                          scope="ready")
    assert part["scope"] == "ready" and D.check_part(part, "gejiu", None, "test") == []
    assert "scope 'near'" in " ".join(D.check_part({**part, "scope": "near"}, "gejiu", None, "test"))


def test_train_fits_a_ready_scoped_v2_head_on_gejiu_labels(tmp_path):
    import json

    import train
    from agents.script_args import ArgsError
    from agents.training.distill import label_states, save_labels

    labels = label_states("gejiu", decisions=120, tables=16, worlds=2, candidates=D.CANDIDATES, seed=6,
                          verify_worlds=0, label_prob=0.5)
    path = save_labels(tmp_path / "labels.npz", labels)
    args = train.Args(variant="gejiu", total_timesteps=0, bc_rounds=0, advice=True, advice_features="heuristic-advice-v2",
                      advice_weight=5.0, channels=4, hidden=8, value_hidden=4, departure_labels=[str(path)],
                      departure_members=1, departure_hidden=8, departure_epochs=2, departure_holdout=0.25,
                      departure_features=V2, departure_scope="ready", eval_every=0, final_eval_walls=1,
                      eval_opponents=["random"], out=str(tmp_path), run_name="g", progress=False, tensorboard=False,
                      curve=False, threads=1)
    train.train(args)
    report = json.loads((tmp_path / "g" / "departures.json").read_text())
    assert report["features"] == V2 and report["scope"] == "ready"
    ck = torch.load(tmp_path / "g" / "final.pt", map_location="cpu", weights_only=False)
    assert ck["departures"]["scope"] == "ready" and ck["departures"]["features"] == V2
    with pytest.raises(ArgsError, match="--departure_scope: 'ready' refused: .*ready and win need"):
        train.check_args(train.Args(variant="gejiu", departure_scope="ready"))


def test_ready_labels_pick_only_decisions_a_ready_head_learns_from():
    import train
    from agents.script_args import ArgsError
    from agents.training.distill import label_states, ready_pair_decisions

    labels = label_states("gejiu", decisions=40, tables=16, worlds=2, candidates=D.CANDIDATES, seed=6,
                          verify_worlds=0, label_prob=1.0, scope="ready")
    assert labels["meta"]["scope"] == "ready" and len(labels["cand"]) == 40
    feats = D.CandidateFeatures("gejiu", version=V2)
    obs, mask, cand, ncand = labels["obs"], labels["mask"], labels["cand"], labels["ncand"]
    d = feats.view.decode(np.asarray(obs, np.float32).reshape(len(mask), *feats.view.shape))
    assert ready_pair_decisions(d.hand, d.n_melds[:, 0], cand, ncand).all()
    # every labelled choice is a discard leaving a ready hand, and so is one of its alternatives
    kinds = D.candidate_kinds(cand)
    assert (kinds[:, 0] == 0).all() and ((kinds[:, 1:] == 0) & (np.arange(1, D.CANDIDATES) < ncand[:, None])).any(1).all()
    # the filter against the wait sets directly: a choice that does not leave a ready hand is refused
    hand = np.zeros((2, 34), np.int8)
    for t in (0, 1, 2, 3, 9, 10, 11, 18, 19, 20, 27, 27, 28, 28):
        hand[:, t] += 1
    # 1234m 123p 123s 东东 南南: discarding 1m or 4m leaves a ready hand (东 or 南), discarding a 南 does not
    cand2 = np.array([[0, 3, 28], [28, 0, 3]])
    np.testing.assert_array_equal(ready_pair_decisions(hand, np.zeros(2, int), cand2, np.array([3, 3])), [True, False])
    with pytest.raises(ValueError, match="not gejiu"):
        label_states("kawuxing4", decisions=1, tables=2, worlds=2, scope="ready")
    with pytest.raises(ArgsError, match="--departure_label_scope: 'ready' refused"):
        train.check_args(train.Args(variant="kawuxing4", departure_label_scope="ready"))
