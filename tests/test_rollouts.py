"""Tests of agents/rollouts.py: the departures offered, and that the two tables of a pair play in lockstep
until they branch (a "departure" equal to the teacher's own move gains exactly nothing)."""

from __future__ import annotations

import numpy as np
import pytest

import agents.rollouts as R
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
