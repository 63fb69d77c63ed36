"""evaluate.py --compare ... --report (agents/tournament/report.py): per-wall measures with intervals over walls, paired
differences, skill margins with the hands needed, and report.md with its figures."""

from __future__ import annotations

import json

import numpy as np
import pytest

import evaluate
from agents.tournament.arena import GameRecord, TournamentResult, mean_ci
from agents.tournament.report import build_report, per_wall_measures, skill_margin


def _hand(wall, how, deltas, *, seating=(0, 1, 0), dealer=0, values=(), revealed=(False, False, False), discards=20,
          config="x"):
    winners = [i for i, d in enumerate(deltas) if d > 0][: len(values)]
    return GameRecord(game=0, wall=wall, seating=seating, dealer=dealer, deltas=list(deltas), how=how, winners=winners,
                      discarder=None, values=list(values), fans=[{} for _ in values], revealed=list(revealed),
                      baohu_paid=[0.0] * 3, kong_money=[0.0] * 3, discards=discards, wall_digest=str(wall), config=config)


def test_measures_are_per_wall_then_over_walls():
    recs = [_hand(0, "draw", [0, 0, 0]), _hand(0, "self-draw", [4, -2, -2], values=[2], discards=10),
            _hand(1, "discard", [-4, 4, 0], values=[4], dealer=1, revealed=(True, False, False), discards=30),
            _hand(1, "self-draw", [8, -4, -4], values=[8])]
    pw = per_wall_measures(recs)
    assert pw["draw"] == {0: 0.5, 1: 0.0} and pw["deal_in"] == {0: 0.0, 1: 0.5}
    assert pw["value"] == {0: 2.0, 1: 6.0} and pw["length"] == {0: 15.0, 1: 25.0}
    assert pw["dealer"] == {0: 2.0, 1: 6.0}  # wall 1: dealer B got +4, dealer A got +8
    assert pw["liang"][1] == pytest.approx(1 / 6)
    assert pw["variance"][0] == pytest.approx(np.mean([0, (16 + 4 + 4) / 3]))
    base = TournamentResult(recs, ["a", "b"], 3, 1.0, 1, "base")
    other = TournamentResult([_hand(r.wall, r.how, [2 * d for d in r.deltas], values=r.values, dealer=r.dealer,
                                    revealed=r.revealed, discards=r.discards, config="other") for r in recs],
                             ["a", "b"], 3, 1.0, 1, "other")
    rep = build_report([base, other], {})
    v0, v1 = rep["variants"]
    assert v0["measures"]["value"]["mean"] == pytest.approx(4.0)
    assert v0["measures"]["value"]["ci95"] == pytest.approx(mean_ci([2.0, 6.0])[1])
    # doubled money: the dealer's advantage doubles, paired wall by wall
    d = v1["vs_baseline"]["dealer"]
    assert d["mean"] == pytest.approx(4.0) and d["ci95"] == pytest.approx(mean_ci([2.0, 6.0])[1])
    assert v1["vs_baseline"]["length"]["mean"] == 0.0 and v0["values"] == {2: 1 / 3, 4: 1 / 3, 8: 1 / 3}


def test_skill_margin_and_the_hands_needed():
    recs = []
    for w, margin in enumerate([1.0, 3.0, 2.0, 2.0]):  # agent 0 gains `margin` per hand over agent 1 on wall w
        recs.append(_hand(w, "discard", [margin, -margin, 0.0], seating=(0, 1, 1)))
        recs.append(_hand(w, "discard", [margin, -margin, 0.0], seating=(0, 1, 1)))
    s = skill_margin(TournamentResult(recs, ["strong", "weak"], 3, 1.0, 1, "x"))
    # per wall: agent 0 averages +m, agent 1 averages (-m + 0) / 2 over its two seats -> difference 1.5 m
    diffs = 1.5 * np.array([1.0, 3.0, 2.0, 2.0])
    assert s["margin"] == pytest.approx(diffs.mean()) and s["ci95"] == pytest.approx(mean_ci(diffs)[1])
    walls = max(2, int(np.ceil((1.96 * diffs.std(ddof=1) / diffs.mean()) ** 2)))
    assert s["hands_needed"] == pytest.approx(walls * 2, rel=0.01)


def test_report_run_writes_report_md_and_figures(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    argv = ["--agents", "heuristic", "random", "--walls", "2", "--compare", "kwx004", "kwx004:cap=16", "--report",
            "--skill", "heuristic vs random", "--out", str(tmp_path), "--run_name", "rep", "--no-progress", "--no-rating"]
    assert evaluate.main(argv) == 0
    folder = tmp_path / "rep"
    text = (folder / "report.md").read_text(encoding="utf-8")
    assert "Rerun: `python evaluate.py --agents heuristic random --variant kawuxing3 --walls 2 --seed 0 --compare kwx004 " \
           "kwx004:cap=16 --report --skill 'heuristic vs random'`" in text
    assert "| win rate (%) |" in text and "| money variance |" in text and "kwx004:cap=16` − `kwx004`" in text
    assert "| `kwx004` | heuristic − random |" in text and "hands needed" in text
    for name in ("report_rates", "report_table", "report_values", "report_skill", "report_diff"):
        assert (folder / f"{name}.png").stat().st_size > 1000 and f"]({name}.png)" in text
    rep = json.loads((folder / "compare.json").read_text(encoding="utf-8"))["report"]
    assert [v["config"] for v in rep["variants"]] == ["kwx004", "kwx004:cap=16"]
    assert rep["variants"][0]["skill"][0]["hands"] == 2 * 6


def test_report_arguments_are_checked(capsys, tmp_path):
    assert evaluate.main(["--report", "--walls", "1", "--out", str(tmp_path)]) == 2
    assert "--report needs --compare" in capsys.readouterr().err
    assert evaluate.main(["--compare", "kwx004", "--report", "--skill", "heuristic", "--out", str(tmp_path)]) == 2
    assert "--skill 'heuristic': write a pair as 'STRONG vs WEAK'" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
