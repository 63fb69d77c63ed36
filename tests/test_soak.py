"""A small validator soak (bench/soak.py, issue 22): the heuristic in every seat, the validator after every step,
whole matches with sessions and 园子 balances; and the soak reports a broken invariant instead of passing it by."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import numpy as np
import pytest

from mjenv.engine.core import Engine

_spec = importlib.util.spec_from_file_location("bench_soak", Path(__file__).resolve().parents[1] / "bench" / "soak.py")
soak_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(soak_module)


@pytest.mark.parametrize(
    "variant, options, hands, batch",
    [("kawuxing3", None, 64, 32), ("diedaohu", {"bankroll": 2}, 48, 16)],  # 2 b each: sessions end by busting
)
def test_heuristic_soak_breaks_no_invariant(variant, options, hands, batch):
    r = soak_module.soak(variant, hands, player="heuristic", batch=batch, seed=3, options=options, out=io.StringIO())
    assert r["failures"] == 0, r["first_failure"]
    assert r["hands"] >= hands and r["decisions"] > 10 * r["hands"]
    assert sum(v for k, v in r["ends"].items() if k != "draw") > r["hands"] // 2  # wins: the scoring paths
    if options:
        assert r["sessions_ended"] > 0


def test_the_soak_reports_a_broken_invariant(monkeypatch):
    step = Engine.step
    calls = []

    def leaky_step(self, actions, tables=None):
        step(self, actions, tables)
        calls.append(1)
        if len(calls) == 7:
            self.state.money[1, 0] += 0.5  # money out of nowhere
    monkeypatch.setattr(Engine, "step", leaky_step)
    out = io.StringIO()
    r = soak_module.soak("kawuxing3", 64, player="heuristic", batch=4, seed=1, out=out)
    assert r["failures"] == 1 and r["first_failure"] == "InvariantError: table 1: money is not zero-sum"
    assert out.getvalue().startswith("FAILED: InvariantError: table 1")
    calls.clear()
    assert soak_module.main(["--variant", "kawuxing3", "--hands", "8", "--batch", "4"]) == 1  # exit status 1
    assert np.isfinite(r["cpu_s"])
