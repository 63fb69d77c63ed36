"""Tests of the heuristic-advice-v1 look-ahead features (agents/players/advice.py) and of advised policies.

The features are checked against what they summarise: the heuristic's own decision, its danger map and a
slow shanten recursion; an advised checkpoint must play exactly like the heuristic when its learned part is
zero, and refuse a feature set it does not know."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.players.advice import ADVICE_ROWS, ROWS, AdviceFeatures, advice_planes, advice_vector
from mjenv.encoding.shanten import shanten_reference
from mjenv.encoding import actions as A
from mjenv.engine import state as S
from mjenv.envs.vector import LearnerTables


def test_advice_planes_round_trip_every_action_id():
    ids = np.arange(A.N_ACTIONS)
    planes = advice_planes(ids)
    assert planes.shape == (A.N_ACTIONS, ADVICE_ROWS, 34)
    vec = advice_vector(planes)
    assert (vec == np.eye(A.N_ACTIONS, dtype=np.float32)).all()
    # A fixed-id action fills its scalar row in every column; a tile action one cell.
    assert planes[A.PASS].sum() == 34 and planes[A.PASS, 3 + A.PASS - A.PONG].all()
    assert planes[A.LIANG + 5].sum() == 1 and planes[A.LIANG + 5, 1, 5] == 1


def _states(variant="kawuxing3", tables=48, steps=120, seed=4):
    heuristic = make_agent("heuristic", variant)
    core = LearnerTables(variant, tables, opponent=heuristic, seed=seed)
    core.reset(seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        obs, mask = core.observe(), core.action_masks()
        yield obs, mask
        # Mostly the heuristic's move, sometimes a random legal one, so that varied states (and 亮倒) occur.
        act = heuristic.act(obs, mask)
        wild = rng.random(len(mask)) < 0.2
        act[wild] = (rng.random(mask.shape) * mask).argmax(1)[wild]
        core.step(act)


@pytest.mark.parametrize("variant", ["kawuxing3", "gejiu"])
def test_features_match_the_heuristic_and_a_slow_shanten(variant):
    feats = AdviceFeatures(variant)
    heuristic = make_agent("heuristic", variant)
    view = heuristic.view
    checked_shanten = danger_seen = 0
    for obs, mask in _states(variant, tables=24, steps=80):
        x = feats.encode(obs, mask)
        assert x.shape == (len(mask), ROWS, 34) and x.dtype == np.float32
        live = mask.any(1)
        advice = advice_vector(x[:, :ADVICE_ROWS])
        assert (advice[live].sum(1) == 1).all() and (x[~live] == 0).all()
        assert (advice[live].argmax(1) == heuristic.act(obs[live], mask[live])).all()
        d = view.decode(obs)
        danger = heuristic.danger(d, np.arange(len(mask)))
        assert np.allclose(x[live, ADVICE_ROWS], np.minimum(danger[live], 2) / 2)
        danger_seen += int((danger[live] > 0).any())
        own = np.flatnonzero(live & ((d.phase == S.TURN) | (d.phase == S.CLAIMED)))
        for r in own[:2]:
            hand = d.hand[r].astype(np.int64)
            row = x[r, ADVICE_ROWS + 1]
            assert (row[hand == 0] == 0).all()
            for t in np.flatnonzero(hand)[:3]:
                after = hand.copy()
                after[t] -= 1
                want = shanten_reference(after, int(d.n_melds[r, 0]), seven_pairs=heuristic._sp)
                assert row[t] == pytest.approx((min(want, 7) + 1) / 8)
                checked_shanten += 1
        not_own = np.flatnonzero(live & (d.phase != S.TURN) & (d.phase != S.CLAIMED))
        assert (x[not_own, ADVICE_ROWS + 1] == 0).all()
    assert checked_shanten > 50
    if variant == "kawuxing3":
        assert danger_seen > 0  # some states had a revealed player's waits to avoid


def test_extend_appends_the_rows_after_the_observation():
    feats = AdviceFeatures()
    obs, mask = next(_states(tables=4, steps=1))
    ext = feats.extend(obs, mask)
    assert ext.shape == (4, obs.shape[1] + ROWS, 34)
    assert (ext[:, : obs.shape[1]] == obs).all()
    assert (ext[:, obs.shape[1]:] == feats.encode(obs, mask)).all()
    flat = feats.extend(obs.reshape(4, -1), mask)  # flat observations are accepted too
    assert (flat == ext).all()


def _advised_payload(head_scale: float = 0.0, features: str = "heuristic-advice-v1"):
    torch = pytest.importorskip("torch")
    from agents.players.policy import checkpoint_payload, make_head, make_trunk
    from mjenv.encoding.observation import ObservationEncoder

    c, w = ObservationEncoder("kawuxing3").shape
    torch.manual_seed(0)
    trunk = make_trunk((c + ROWS, w), 8, 16, advice_row=c)
    head = make_head(16, advice=True, advice_weight=1.0)
    with torch.no_grad():
        head.linear.weight.mul_(head_scale)
        head.linear.bias.mul_(head_scale)
    return checkpoint_payload(trunk, head, variant="kawuxing3", options=None, obs_shape=(c + ROWS, w),
                              arch={"channels": 8, "hidden": 16, "advice": 1}, features=features)


def test_an_advised_policy_with_no_learned_part_plays_the_heuristic():
    from agents.players.policy import PolicyAgent

    agent = PolicyAgent(_advised_payload(0.0))
    heuristic = make_agent("heuristic")
    moves = 0
    for obs, mask in _states(tables=16, steps=60):
        live = mask.any(1)
        assert (agent.act(obs[live], mask[live]) == heuristic.act(obs[live], mask[live])).all()
        moves += int(live.sum())
    assert moves > 500
    # With a large learned part the policy departs from the advice somewhere (the test above is not vacuous).
    loud = PolicyAgent(_advised_payload(300.0))
    obs, mask = next(_states(tables=16, steps=1))
    assert (loud.act(obs, mask) != heuristic.act(obs, mask)).any()


def test_checkpoints_with_unknown_features_are_refused():
    from agents.players.policy import CheckpointError, PolicyAgent

    with pytest.raises(CheckpointError, match="features 'lookahead-v9' is not one of"):
        PolicyAgent(_advised_payload(features="lookahead-v9"))


def test_feature_set_v2_advises_the_flush_player():
    feats = AdviceFeatures("kawuxing3", version="heuristic-advice-v2")
    assert feats.version == "heuristic-advice-v2" and AdviceFeatures("kawuxing3").version == "heuristic-advice-v1"
    flush = make_agent("heuristic-flush")
    plain = make_agent("heuristic")
    differ = 0
    for obs, mask in _states(tables=16, steps=60, seed=6):
        live = mask.any(1)
        advice = advice_vector(feats.encode(obs, mask)[:, :ADVICE_ROWS]).argmax(1)
        assert (advice[live] == flush.act(obs[live], mask[live])).all()
        differ += int((advice[live] != plain.act(obs[live], mask[live])).sum())
    assert differ > 0  # the two feature sets do advise differently somewhere
    with pytest.raises(ValueError, match="unknown feature set"):
        AdviceFeatures("kawuxing3", version="heuristic-advice-v9")


def test_an_advised_v2_policy_with_no_learned_part_plays_the_flush_player():
    from agents.players.policy import PolicyAgent

    agent = PolicyAgent(_advised_payload(0.0, features="heuristic-advice-v2"))
    flush = make_agent("heuristic-flush")
    obs, mask = next(_states(tables=16, steps=1))
    for obs, mask in _states(tables=8, steps=30, seed=2):
        live = mask.any(1)
        assert (agent.act(obs[live], mask[live]) == flush.act(obs[live], mask[live])).all()


def test_the_shipped_yangzhou_checkpoint_plays_the_yangzhou_flush_player():
    """agents/checkpoints/yangzhou-default.pt reads heuristic-advice-v2; in Yangzhou that advisor is heuristic-flush
    with the flush plan credited 5 steps and all triplets 4 (the heuristic: 3 and 3).  Its network, the departure head
    set aside, plays heuristic-flush's moves, and those differ from the heuristic's; the head departs from them only
    where it predicts a gain over tau 2 (docs/experiments/four-player.md)."""
    from agents import CHECKPOINT_DIR

    agent = make_agent(str(CHECKPOINT_DIR / "yangzhou-default.pt"), "yangzhou")
    assert agent.features.version == "heuristic-advice-v2"
    assert agent.departures is not None and agent.checkpoint["departures"]["tau"] == 2.0
    agent.departures = None  # the network alone
    flush, plain = make_agent("heuristic-flush", "yangzhou"), make_agent("heuristic", "yangzhou")
    assert list(flush._bonus()) == [5, 5, 5, 0, 0, 4] and list(plain._bonus()) == [3, 3, 3, 0, 0, 3]
    differ = 0
    for obs, mask in _states("yangzhou", tables=4, steps=24, seed=3):
        live = mask.any(1)
        move = flush.act(obs[live], mask[live])
        assert (agent.act(obs[live], mask[live]) == move).all()
        differ += int((move != plain.act(obs[live], mask[live])).sum())
    assert differ > 0
