"""Gejiu's 七星 knobs of the heuristic (``qixing_wait``: pass a discard win of a six-honor 烂牌 to wait for 七星;
``lanpai_bonus``: a 烂牌 holding enough distinct honors read shorter), the ``heuristic-advice-v3`` feature set whose
advisor waits, cloning that advisor (``bc_teacher = "advisor"``) and the shipped Gejiu checkpoint
(docs/experiments/four-player.md, "Gejiu: where heuristic-flush leaves money")."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.players.advice import ADVICE_ROWS, AdviceFeatures, advice_vector, advisor_keywords
from agents.players.heuristic import HeuristicAgent, heuristic_player
from agents.players.plans import lanpai_shanten
from mjenv.encoding import actions as A
from mjenv.tiles import parse_tiles
from tests.test_advice import _states
from tests.test_heuristic_families import decide, deal


def test_the_credit_lowers_the_lanpai_shanten_only_with_enough_honors():
    h = np.zeros((3, 34), np.int8)
    h[:, [0, 3, 6, 10, 13, 16, 20, 23]] = 1  # 147m 258p 36s: eight suited tiles of a 烂牌
    h[0, 27:32] = 1  # five distinct honors
    h[1, 27:31] = 1  # four
    h[2, 27:32] = 1
    nm = np.array([0, 0, 1])  # the third holds a meld: no 烂牌 at all
    plain = heuristic_player("heuristic-flush", "gejiu")
    credited = heuristic_player("heuristic-flush", "gejiu", lanpai_bonus=1, lanpai_honors=5)
    base = lanpai_shanten(h, nm)
    assert (plain._lanpai_shanten(h, nm) == base).all()
    assert list(credited._lanpai_shanten(h, nm) - base) == [-1, 0, -1] and base[2] >= 90
    costs = credited._plan_costs(h, nm, np.zeros((3, 34), np.int8))[:, 3]
    assert costs[0] == base[0] - 1 and costs[1] == plain._plan_costs(h, nm, np.zeros((3, 34), np.int8))[1, 3]


def test_bad_credits_are_refused():
    with pytest.raises(ValueError, match="has no such shape"):
        HeuristicAgent("kawuxing3", lanpai_bonus=1)
    with pytest.raises(ValueError, match="lanpai_bonus must be >= 0"):
        HeuristicAgent("gejiu", lanpai_bonus=-1)
    with pytest.raises(ValueError, match="lanpai_honors in 0..7"):
        HeuristicAgent("gejiu", lanpai_bonus=1, lanpai_honors=8)


def test_the_credit_changes_moves_only_where_the_hand_holds_enough_honors():
    credited = heuristic_player("heuristic-flush", "gejiu", lanpai_bonus=1, lanpai_honors=5)
    flush = make_agent("heuristic-flush", "gejiu")
    differ = few = 0
    for obs, mask in _states("gejiu", tables=32, steps=80, seed=7):
        live = np.flatnonzero(mask.any(1))
        a, b = credited.act(obs[live], mask[live]), flush.act(obs[live], mask[live])
        honors = (flush.view.decode(obs[live]).hand[:, 27:] > 0).sum(1)
        # below five distinct honors the credit never applies, so the two players agree move for move
        assert (a[honors < 5] == b[honors < 5]).all()
        few += int((honors < 5).sum())
        differ += int((a != b).sum())
    assert differ > 0 and few > 0


def _discard_window(hand_a: str, hand_b: str, discard: str):
    """Seat A (dealer, 14 tiles) discards ``discard``; seat B (``hand_b``, 13 tiles) then sees its claim window."""
    from mjenv.encoding.observation import encode

    e = deal("gejiu", hand_a, hand_b, avoid=discard)
    e.step(np.array([parse_tiles(discard)[0]]))
    assert int(e.state.actor[0]) == 1 and e.mask[0, A.WIN]
    return e, encode(e, e.state.actor)


def test_qixing_wait_passes_a_six_honor_lanpai_win_and_takes_the_others():
    # B: 147m 258p 3s + 123456z (six honors), a ready 烂牌 that 6s/9s or the 7z (七星) complete; A throws the 9s.
    e, obs = _discard_window("112233445s369m6p9s", "147m258p3s123456z", "9s")
    waiting = heuristic_player("heuristic-flush", "gejiu", qixing_wait=10)
    flush = make_agent("heuristic-flush", "gejiu")
    assert decide(e, flush, obs) == A.WIN and decide(e, waiting, obs) == A.PASS
    assert waiting.qixing_waits(waiting.view.decode(obs), e.mask).tolist() == [True]
    assert decide(e, heuristic_player("heuristic-flush", "gejiu", qixing_wait=200), obs) == A.WIN  # too little wall
    # five honors (12345z + 147m 258p 369s less one): the 烂牌 is taken at once
    e, obs = _discard_window("112233445s369m6p9s", "147m258p36s12345z", "9s")
    assert decide(e, waiting, obs) == A.WIN


def test_bad_waits_are_refused():
    with pytest.raises(ValueError, match="qixing_wait is a wall count"):
        HeuristicAgent("kawuxing4", qixing_wait=10)
    with pytest.raises(ValueError, match="qixing_wait is a wall count"):
        HeuristicAgent("gejiu", qixing_wait=-1)


def test_v3_advises_the_waiting_player_in_gejiu_and_v2_elsewhere():
    assert advisor_keywords("heuristic-advice-v3", "gejiu") == {"qixing_wait": 10}
    assert advisor_keywords("heuristic-advice-v3", "kawuxing4") == {} == advisor_keywords("heuristic-advice-v2", "gejiu")
    v3 = AdviceFeatures("gejiu", version="heuristic-advice-v3")
    assert v3.heuristic._qixing_wait == 10 and make_agent("heuristic-flush", "gejiu")._qixing_wait is None
    for obs, mask in _states("gejiu", tables=16, steps=40, seed=7):
        live = np.flatnonzero(mask.any(1))
        advice = advice_vector(v3.encode(obs[live], mask[live])[:, :ADVICE_ROWS]).argmax(1)
        assert (advice == v3.heuristic.act(obs[live], mask[live])).all()
    v2, v3k = AdviceFeatures("kawuxing3", version="heuristic-advice-v2"), AdviceFeatures("kawuxing3", version="heuristic-advice-v3")
    for obs, mask in _states("kawuxing3", tables=8, steps=30, seed=2):
        assert (v2.encode(obs, mask) == v3k.encode(obs, mask)).all()


def test_cloning_the_advisor_needs_advice():
    import dataclasses

    import train
    from agents.script_args import ArgsError, parse_args

    args, _ = parse_args(train.Args, ["--config", "gejiu"], config_dir=train.CONFIG_DIR)
    assert args.bc_teacher == "advisor" and args.advice_features == "heuristic-advice-v3"
    assert (args.departure_decisions, args.departure_scope, args.departure_features) == (28000, "win", "candidate-features-v2")
    train.check_args(args)
    with pytest.raises(ArgsError, match="bc_teacher advisor"):
        train.check_args(dataclasses.replace(args, advice=False, departure_decisions=0))


def test_the_shipped_gejiu_checkpoint_plays_its_advisor_but_where_a_win_is_legal():
    """agents/checkpoints/gejiu-default.pt reads heuristic-advice-v3 and carries a departure head of scope win over that
    advisor: its network plays the waiting advisor's move (an advisor that differs from heuristic-flush only by
    ``qixing_wait``), and where a win is legal the head plays that move or the other side of the win."""
    from agents import CHECKPOINT_DIR
    from agents.players.departures import win_shortlist

    agent = make_agent(str(CHECKPOINT_DIR / "gejiu-default.pt"), "gejiu")
    assert agent.features.version == "heuristic-advice-v3"
    assert agent.departures.scope == "win" and agent.departures.features.advisor_set == "heuristic-advice-v3"
    advisor = agent.features.heuristic
    assert advisor._qixing_wait == 10 and advisor._bonus().tolist() == make_agent("heuristic-flush", "gejiu")._bonus().tolist()
    assert agent.departures.features.advisor._qixing_wait == 10
    seen = wins = 0
    for obs, mask in _states("gejiu", tables=16, steps=40, seed=5):
        live = np.flatnonzero(mask.any(1))
        got, want = agent.act(obs[live], mask[live]), advisor.act(obs[live], mask[live])
        win = mask[live, A.WIN]
        assert (got[~win] == want[~win]).all()
        cand, _ = win_shortlist(advisor, obs[live][win], mask[live][win])
        assert ((got[win] == cand[:, 0]) | (got[win] == cand[:, 1])).all()
        seen += len(live)
        wins += int(win.sum())
    assert seen > 0 and wins > 0
