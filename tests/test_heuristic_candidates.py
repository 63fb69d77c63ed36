"""HeuristicAgent.candidates: the compiled player's ranked shortlist (agents.players.fastplay.FastPlayer.candidates), read
from the observation and mask alone, with act()'s choice first (bench/heuristic_candidates.py measures it at
scale)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from agents import make_agent
from mjenv.encoding.observation import encoder_for
from mjenv.engine.core import Engine

_spec = importlib.util.spec_from_file_location(
    "bench_heuristic_candidates", Path(__file__).resolve().parents[1] / "bench" / "heuristic_candidates.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_candidates_agree_with_the_compiled_ranking():
    r = bench.measure("kawuxing3", 600, tables=16, seed=5)
    assert r["decisions"] >= 600
    assert r["first_vs_act"] == 0  # the first candidate is always act()'s choice
    assert r["exact"] >= 0.97 * r["decisions"] and r["same_set"] >= 0.99 * r["decisions"]


def test_candidates_reject_a_bad_k():
    eng = Engine("kawuxing3", 2, record_events=False)
    eng.reset(seed=1)
    heur = make_agent("heuristic-flush", "kawuxing3", eng.opts)
    obs = encoder_for(eng).encode(eng.state, eng.state.actor, np.arange(2))
    with pytest.raises(ValueError, match="k: need at least 1"):
        heur.candidates(obs, eng.mask, 0)
    cand, n = heur.candidates(obs, eng.mask, 1)  # k = 1: act()'s choice alone
    assert cand.shape == (2, 1) and (n == 1).all() and (cand[:, 0] == heur.act(obs, eng.mask)).all()
