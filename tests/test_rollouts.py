"""Tests of agents/training/rollouts.py: the departures offered, and that the two tables of a pair play in lockstep
until they branch (a "departure" equal to the teacher's own move gains exactly nothing)."""

from __future__ import annotations

import numpy as np
import pytest

import agents.training.rollouts as R
from agents import make_agent
from mjenv.encoding import actions as A


def _mask(*ids):
    m = np.zeros(A.N_ACTIONS, bool)
    m[list(ids)] = True
    return m


def test_alternatives_of_each_advised_move():
    advice = np.array([A.LIANG + 4, 4, 4, A.PASS, A.PONG, A.KONG_CLAIM, A.PASS, A.WIN, A.PASS])
    mask = np.stack([
        _mask(4, A.LIANG + 4), _mask(4, A.LIANG + 4), _mask(4, 5), _mask(A.PONG, A.PASS), _mask(A.PONG, A.PASS),
        _mask(A.KONG_CLAIM, A.PONG, A.PASS), _mask(A.KONG_CLAIM, A.PASS), _mask(A.WIN, A.PASS), _mask(A.PASS),
    ])
    alt, kind = R.alternative(advice, mask)
    assert alt.tolist() == [4, A.LIANG + 4, -1, A.PONG, A.PASS, A.PASS, A.KONG_CLAIM, -1, -1]
    names = [R.KINDS[k] if k >= 0 else None for k in kind]
    assert names == ["no_liang", "liang", None, "pong", "no_pong", "no_kong", "kong", None, None]


def test_pairs_branch_once_and_measure_the_departure():
    h = make_agent("heuristic")
    data = R.counterfactual_pairs("kawuxing3", h.opts, h, 60, seed=3, branch_prob=1.0, batch_pairs=32)
    n = len(data["advantage"])
    assert 30 <= n <= 60 and data["pairs_played"] == 60
    assert data["obs"].shape == (n, 100, 34) and data["mask"].shape == (n, A.N_ACTIONS)
    assert (data["alt"] != data["advice"]).all()
    assert data["mask"][np.arange(n), data["alt"]].all() and data["mask"][np.arange(n), data["advice"]].all()
    assert np.isfinite(data["advantage"]).all() and (data["advantage"] != 0).any()
    rows = R.summary(data)
    assert sum(r["n"] for r in rows) == n


def test_twin_tables_stay_identical_until_they_branch(monkeypatch):
    """With a 'departure' that is the teacher's own move, the twin plays exactly the same hand: advantage 0."""
    real = R.alternative

    def same_move(advice, mask):
        alt, kind = real(advice, mask)
        return np.where(alt >= 0, advice, -1), kind

    monkeypatch.setattr(R, "alternative", same_move)
    h = make_agent("heuristic")
    data = R.counterfactual_pairs("kawuxing3", h.opts, h, 40, seed=5, branch_prob=1.0)
    assert len(data["advantage"]) >= 20 and (data["advantage"] == 0).all()


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="branch_prob"):
        R.counterfactual_pairs("kawuxing3", None, make_agent("heuristic"), 10, branch_prob=0)
    with pytest.raises(SystemExit):
        R.main(["--pairs", "0"])


def test_discard_departures_are_legal_plain_discards_other_than_the_advice():
    h = make_agent("heuristic")
    data = R.counterfactual_pairs("kawuxing3", h.opts, h, 48, seed=7, branch_prob=0.3, batch_pairs=24,
                                  departures=R.DISCARD_KINDS, keep_obs=False)
    n = len(data["advantage"])
    assert n >= 48 and "obs" not in data
    kinds = {R.KINDS[k] for k in data["kind"]}
    assert {"discard2", "fold", "safe_keep"} <= kinds <= set(R.DISCARD_KINDS)
    assert (data["advice"] < A.LIANG).all() and (data["alt"] < A.LIANG).all()
    assert (data["alt"] != data["advice"]).all()
    assert data["mask"][np.arange(n), data["alt"]].all()
    for f in R.FEATURES:
        assert len(data[f"feat_{f}"]) == n
    flush = data["kind"] == R.KINDS.index("flush")
    assert (data["feat_flush_gap"][flush] <= 3).all() and (data["feat_flush_gap"][~flush] == 99).all()
    # Each twin branches at most once per wall.
    key = data["wall"] * 16 + data["kind"]
    assert len(np.unique(key)) == n
    by = R.summary(data, "opp_revealed")
    assert sum(r["n"] for r in by) == n


def test_second_choice_is_the_teachers_ranking_without_the_advised_tile():
    h = make_agent("heuristic")
    hand = np.zeros(34, np.int8)
    from mjenv.engine import state as S
    d = h.view.decode(np.zeros((1, *h.view.shape), np.float32))
    # A one-row decoded state: own turn, 14 tiles, nothing else seen.
    for t in (9, 10, 11, 18, 19, 20, 21, 22, 23, 13, 13, 31, 15, 26):  # kawuxing3 plays 1-9p, 1-9s, dragons
        hand[t] += 1
    d.hand = hand[None].copy()
    d.phase = np.array([S.TURN])
    d.wall_left = np.array([30])
    mask = np.zeros((1, A.N_ACTIONS), bool)
    mask[0, np.flatnonzero(hand)] = True
    advice = h.decide(d, mask)
    assert advice[0] < A.LIANG
    alt, _ = R.discard_alternative("discard2", h, d, mask, advice)
    m2 = mask.copy()
    m2[0, advice[0]] = False
    assert alt[0] == h.decide(d, m2)[0] != advice[0]
    for kind in ("fold", "safe_keep", "flush"):
        alt, _ = R.discard_alternative(kind, h, d, mask, advice)
        assert alt[0] == -1 or (mask[0, alt[0]] and alt[0] != advice[0])
    with pytest.raises(ValueError, match="kind"):
        R.discard_alternative("pong", h, d, mask, advice)


def test_tile_danger_reads_the_wall():
    h = make_agent("heuristic")
    d = h.view.decode(np.zeros((1, *h.view.shape), np.float32))
    d.hand = np.zeros((1, 34), np.int8)
    danger = R.tile_danger(d)[0]
    # Nothing seen: a middle tile has 4 pair ways and 3 sequences of 4 ways each; a terminal one sequence;
    # a dragon pairs only; a kind not in play nothing.
    assert danger[13] == 4 + 3 * 4 and danger[9] == 4 + 4 and danger[31] == 4 and danger[0] == 0
    d.hand[0, 31] = 4
    d.hand[0, 14] = 4  # every 6p held: 7p keeps only the sequence 7-8-9 (5-6-7 and 6-7-8 need a 6p)
    danger = R.tile_danger(d)[0]
    assert danger[31] == 0 and danger[15] == 4 + 4


def test_twin_given_the_advised_discard_gains_exactly_nothing(monkeypatch):
    real = R.discard_alternative

    def same_move(kind, teacher, d, mask, advice):
        alt, gap = real(kind, teacher, d, mask, advice)
        return np.where(alt >= 0, advice, -1), gap

    monkeypatch.setattr(R, "discard_alternative", same_move)
    h = make_agent("heuristic")
    data = R.counterfactual_pairs("kawuxing3", h.opts, h, 30, seed=8, branch_prob=0.3,
                                  departures=("discard2", "fold"), keep_obs=False)
    assert len(data["advantage"]) >= 30 and (data["advantage"] == 0).all()


def test_unknown_departure_is_refused():
    with pytest.raises(ValueError, match="departures"):
        R.counterfactual_pairs("kawuxing3", None, make_agent("heuristic"), 10, departures=("nope",))


@pytest.mark.parametrize("variant", ["diedaohu", "liuwei"])
def test_no_win_twin_passes_a_discard_win_and_loses_on_average(variant):
    """``no_win``: where the teacher takes a win on another player's discard, the twin plays the teacher's move
    with the win removed (a pass, or a pong/kong), never its own-turn self-draw; the branch points record the
    live copies of the waits.  Passing loses on average (the measured tables are in docs/experiments/heuristic.md)."""
    h = make_agent("heuristic", variant)
    data = R.counterfactual_pairs(variant, h.opts, h, 160, seed=1, branch_prob=1.0, departures=("no_win",))
    n = len(data["advantage"])
    assert n >= 10
    assert (data["kind"] == R.KINDS.index("no_win")).all() and (data["advice"] == A.WIN).all()
    assert (data["alt"] != A.WIN).all() and data["mask"][np.arange(n), data["alt"]].all()
    assert data["mask"][:, A.PASS].all()  # claim windows only: a self-draw offers no pass
    assert ((data["feat_live_waits"] >= 0) & (data["feat_live_waits"] <= 4 * 34)).all()
    assert data["advantage"].mean() < 0
