"""The departure head (agents/players/departures.py): its features, its fit, its checkpoint entry and the policy that plays it."""

import json

import numpy as np
import pytest

from agents.players import departures as D
from agents.training import departures as DT
from mjenv.encoding.shanten import shanten
from mjenv.encoding import actions as A
from mjenv.encoding.observation import encoder_for
from mjenv.engine import state as S
from mjenv.engine.core import Engine

torch = pytest.importorskip("torch")


def shortlist_decisions(variant="kawuxing3", n_tables=16, steps=60, seed=3, version=D.FEATURES):
    """The features of ``version`` for ``variant``, and the observations, masks and the advisor's shortlists of
    heuristic-flush self-play (decisions with >= 2 candidates)."""
    feats = D.CandidateFeatures(variant, version=version)
    eng = Engine(variant, n_tables, record_events=False)
    eng.reset(seed=seed, dealer=np.arange(n_tables) % eng.n)
    enc, st = encoder_for(eng), eng.state
    obs, masks, cands, ncands = [], [], [], []
    for _ in range(steps):
        live = np.flatnonzero(st.phase != S.DONE)
        if not len(live):
            break
        o = enc.encode(st, st.actor[live].astype(np.int64), live, engine=eng)
        m = eng.mask[live]
        c, n = feats.advisor.candidates(o, m, D.CANDIDATES)
        keep = n >= 2
        obs.append(o[keep]), masks.append(m[keep]), cands.append(c[keep]), ncands.append(n[keep])
        eng.step(c[:, 0], tables=live)
    return feats, np.concatenate(obs), np.concatenate(masks), np.concatenate(cands), np.concatenate(ncands)


@pytest.fixture(scope="module")
def decisions():
    return shortlist_decisions()


def test_candidate_features_describe_the_hand_each_candidate_leaves(decisions):
    feats, obs, mask, cand, ncand = decisions
    per, decision = feats.per_candidate(obs, mask, cand, ncand)
    assert per.shape == (len(obs), D.CANDIDATES, D.CAND_FEATURES) and decision.shape == (len(obs), D.DECISION_FEATURES)
    x = feats.pairwise(obs, mask, cand, ncand)
    assert x.shape == (len(obs), D.CANDIDATES - 1, D.PAIR_FEATURES) and np.isfinite(x).all()
    d = feats.view.decode(obs)
    kinds = D.candidate_kinds(cand)
    checked = 0
    for i in range(len(obs)):
        for k in range(ncand[i]):
            assert per[i, k, kinds[i, k]] == 1 and per[i, k, : len(D.KINDS)].sum() == 1
            assert per[i, k, -1] == 1 and per[i, k, -2] == (k == 0)  # listed; the choice flag
            if kinds[i, k] <= 1:  # a discard or 亮倒 of tile t: the hand left is the hand less t
                t = cand[i, k] % 34
                h = d.hand[i].astype(np.int8).copy()
                h[t] -= 1
                assert per[i, k, len(D.KINDS)] == min(shanten(h, int(d.n_melds[i, 0])), 8)
                checked += 1
        assert (per[i, ncand[i]:] == 0).all()  # padding is zero
    assert checked > 100
    # the alternative's own features, then its difference from the choice's, then the decision's
    np.testing.assert_array_equal(x[:, :, : D.CAND_FEATURES], per[:, 1:])
    np.testing.assert_array_equal(x[:, :, D.CAND_FEATURES : 2 * D.CAND_FEATURES], per[:, 1:] - per[:, :1])
    np.testing.assert_array_equal(x[:, 0, 2 * D.CAND_FEATURES :], decision)


def test_candidate_kinds_and_choose():
    kinds = D.candidate_kinds(np.array([3, A.LIANG + 3, A.KONG_SELF + 3, A.PONG, A.KONG_CLAIM, A.PASS, A.WIN, -1]))
    assert [D.KINDS[k] for k in kinds] == ["discard", "liang", "kong", "pong", "claim_kong", "pass", "other", "other"]
    pred = np.array([[0.3, 0.5], [0.05, -1.0], [0.2, 0.9], [-0.1, -0.2]])
    # row 2 has only 2 candidates, so its third column never plays
    np.testing.assert_array_equal(D.choose(pred, np.array([3, 3, 2, 3]), 0.1), [2, 0, 1, 0])
    np.testing.assert_array_equal(D.choose(pred, np.array([3, 3, 3, 3]), 1.0), [0, 0, 0, 0])


def test_realized_gains_count_only_what_is_played():
    pred = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    gain = np.array([[0.5, 9.0], [9.0, -1.0], [9.0, 9.0]])
    (r,) = DT.realized_gains(pred, gain, np.array([3, 3, 3]), [0.5], per_seat_hand=2.0)
    assert r["departs"] == pytest.approx(2 / 3) and r["gain_per_decision"] == pytest.approx((0.5 - 1.0) / 3)
    assert r["gain_per_seat_hand"] == pytest.approx(2 * (0.5 - 1.0) / 3)


def test_fit_head_learns_a_planted_gain():
    rng = np.random.default_rng(0)
    n = 3000
    x = rng.normal(size=(n, 2, D.PAIR_FEATURES)).astype(np.float32)
    truth = np.where(x[..., 5] > 0.5, 1.0, -1.0)  # an alternative gains only where feature 5 is large
    gain = truth + rng.normal(scale=1.0, size=truth.shape)  # noisy, unbiased labels
    valid = np.ones((n, 2), bool)
    valid[::7, 1] = False
    head = DT.fit_head(x[:2500], gain[:2500], valid[:2500], members=2, hidden=32, epochs=20, seed=1)
    pred = D.predict(head, x[2500:])
    played = D.choose(pred, np.full(500, 3), 0.0)
    got = np.where(played > 0, truth[2500:][np.arange(500), np.maximum(played - 1, 0)], 0.0)
    departs = played > 0
    assert 0.2 < departs.mean() < 0.7 and got[departs].mean() > 0.8  # it departs where the planted gain is
    with pytest.raises(ValueError, match="need at least 2"):
        DT.fit_head(x[:1], gain[:1], valid[:1] & False)


def _advised_checkpoint(tmp_path):
    """A small advised network cloned from nothing (its advice weight makes it play heuristic-flush's moves)."""
    from agents.players.policy import checkpoint_payload
    from agents.training.ppo import SeatNet
    from mjenv.encoding.observation import ObservationEncoder
    from agents.players.advice import ROWS

    shape = list(ObservationEncoder("kawuxing3").shape)
    shape[0] += ROWS
    net = SeatNet(shape, 4, 8, 4, advice_row=shape[0] - ROWS, advice_weight=50.0)
    return net, shape, checkpoint_payload


def _head_part(bias: float):
    head = D.make_head(members=1, hidden=4)
    with torch.no_grad():
        for p in head.parameters():
            p.zero_()
        head.members[0][-1].bias.fill_(bias)  # every alternative is predicted to gain `bias`
    from agents.players.departures import head_payload

    return head_payload(head, tau=0.1, variant="kawuxing3", options=None)


def test_a_checkpoint_with_a_departure_head_plays_it_and_is_checked(tmp_path, decisions):
    from agents.players.policy import CheckpointError, PolicyAgent, load_checkpoint, save_checkpoint

    net, shape, checkpoint_payload = _advised_checkpoint(tmp_path)
    feats, obs, mask, cand, ncand = decisions

    def agent(part):
        ck = checkpoint_payload(net.trunk, net.head, variant="kawuxing3", options=None, obs_shape=shape,
                                arch={"channels": 4, "hidden": 8}, features="heuristic-advice-v2", departures=part)
        path = save_checkpoint(tmp_path / "p.pt", ck)
        return PolicyAgent(path, "kawuxing3"), load_checkpoint(path)

    plain, _ = agent(None)
    assert (plain.act(obs, mask) == cand[:, 0]).all()  # the advised network plays the advisor's choice
    keeps, _ = agent(_head_part(-1.0))  # predicted losses: never departs
    assert (keeps.act(obs, mask) == cand[:, 0]).all()
    departs, ck = agent(_head_part(+1.0))  # predicted gains: always plays the advisor's second candidate
    assert (departs.act(obs, mask) == cand[:, 1]).all()
    logits = departs.logits(obs, mask)
    assert (logits.argmax(1) == cand[:, 1]).all()
    # the departure tensors are under the checksum
    ck["departures"]["state"]["members.0.4.bias"] += 1.0
    with pytest.raises(CheckpointError, match="do not match their checksum"):
        PolicyAgent(ck, "kawuxing3")
    ck["departures"]["state"]["members.0.4.bias"] -= 1.0
    PolicyAgent(ck, "kawuxing3")
    # a changed shortlist or feature code is refused
    bad = json.loads(json.dumps({k: v for k, v in ck["departures"].items() if k != "state"}))
    ck["departures"] = {**bad, "state": ck["departures"]["state"], "fingerprint": "sha256:" + "0" * 64}
    with pytest.raises(CheckpointError, match="bad departure head: .*have changed since it was fitted"):
        PolicyAgent(ck, "kawuxing3")


def test_train_fits_a_departure_head_from_labels(tmp_path, capsys):
    import train
    from agents import make_agent
    from agents.training.distill import label_states, save_labels
    from agents.script_args import ArgsError, parse_args

    labels = label_states(decisions=40, tables=8, worlds=3, candidates=D.CANDIDATES, seed=4, verify_worlds=0)
    path = save_labels(tmp_path / "labels.npz", labels)
    args = train.Args(total_timesteps=0, bc_rounds=0, advice=True, advice_features="heuristic-advice-v2",
                      advice_weight=5.0, channels=4, hidden=8, value_hidden=4, departure_labels=[str(path)],
                      departure_members=2, departure_hidden=8, departure_epochs=2, departure_holdout=0.25,
                      eval_every=0, final_eval_walls=1, eval_opponents=["random"], out=str(tmp_path), run_name="h",
                      progress=False, tensorboard=False, curve=False, threads=1)
    summary = train.train(args)
    assert "[departures] held out, tau 0.10" in capsys.readouterr().out
    report = json.loads((tmp_path / "h" / "departures.json").read_text())
    assert report["decisions"] == 40 and report["fitted"] == 30 and len(report["held_out_gains"]) == len(DT.TAUS)
    assert summary["steps"] == 0
    agent = make_agent(str(tmp_path / "h" / "final.pt"), "kawuxing3")
    assert agent.departures is not None and agent.departures.tau == 0.1
    with pytest.raises(ArgsError, match="--departure_decisions: needs --advice"):
        train.check_args(train.Args(departure_decisions=10, advice=False))
    long, _ = parse_args(train.Args, ["--config", "long"], config_dir=train.CONFIG_DIR)
    assert long.departure_decisions == 200_000 and long.departure_seed == 3000 and long.total_timesteps == 0


def test_a_chi_candidate_leaves_the_hand_without_its_two_tiles():
    feats = D.CandidateFeatures("yangzhou")
    eng = Engine("yangzhou", 32, record_events=False)
    eng.reset(seed=2, dealer=np.arange(32) % 4)
    enc, st = encoder_for(eng), eng.state
    seen = 0
    for _ in range(120):
        live = np.flatnonzero(st.phase != S.DONE)
        if not len(live) or seen >= 5:
            break
        obs = enc.encode(st, st.actor[live].astype(np.int64), live, engine=eng)
        mask = eng.mask[live]
        cand, ncand = feats.advisor.candidates(obs, mask, D.CANDIDATES)
        per, _ = feats.per_candidate(obs, mask, cand, ncand)
        d = feats.view.decode(obs)
        for i, k in zip(*np.nonzero((cand >= A.CHI_LOW) & (cand <= A.CHI_HIGH))):
            low = d.claim_tile[i] - (cand[i, k] - A.CHI_LOW)
            h = d.hand[i].astype(np.int8).copy()
            for t in range(low, low + 3):
                h[t] -= t != d.claim_tile[i]
            assert per[i, k, len(D.KINDS)] == min(shanten(h, int(d.n_melds[i, 0]) + 1), 8)
            seen += 1
        eng.step(cand[:, 0], tables=live)
    assert seen >= 1
