"""Tests of the duplicate tournament (agents/tournament/arena.py) and evaluate.py: seatings, identical walls, statistics,
confidence intervals, and smoke runs of the command line with tiny budgets."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter

import numpy as np
import pytest

import evaluate
from agents import make_agent
from agents.tournament.arena import mean_ci, pairwise, play_duplicate, seatings, summarize, t_quantile
from mjenv.engine.core import Engine
from mjenv.rules.families import rule_family
from mjenv.rules.options import VARIANTS, get_variant, load_rules
from mjenv.tiles import parse_tiles


# ------------------------------------------------------------------------------------------ seatings


@pytest.mark.parametrize("k, n, size", [(1, 3, 1), (2, 3, 6), (3, 3, 6), (4, 3, 24), (2, 4, 14), (4, 4, 24)])
def test_seatings_put_every_agent_in_every_seat_equally(k, n, size):
    plan = seatings(k, n)
    assert len(plan) == size == len(set(plan))
    for seat in range(n):
        per_agent = Counter(s[seat] for s in plan)
        assert len(set(per_agent.values())) == 1 and set(per_agent) == set(range(k))
    assert all(len(set(s)) == min(k, n) for s in plan)


# ------------------------------------------------------------------------------------------ duplicate walls


def test_every_seating_of_a_wall_is_dealt_the_same_tiles(tmp_path):
    agents = [make_agent("random", seed=1), make_agent("heuristic")]
    res = play_duplicate(agents, walls=3, seed=42, batch_size=5, replay_dir=tmp_path, n_replays=18)
    assert len(res.records) == 18
    by_wall: dict[int, set] = {}
    for r in res.records:
        by_wall.setdefault(r.wall, set()).add(r.wall_digest)
    assert all(len(d) == 1 for d in by_wall.values()) and len({next(iter(d)) for d in by_wall.values()}) == 3
    # Independently: the replay files hold the dealt wall, identical across the six seatings of each wall and
    # equal to a fresh engine's seeded wall (seed, wall id).
    from mjenv.replay import read_replay

    walls: dict[int, set] = {}
    seats_played: dict[int, set] = {}
    for path in sorted(tmp_path.glob("hand_*.jsonl")):
        (rep,) = read_replay(path)
        walls.setdefault(rep.header["table_id"], set()).add(rep.header["wall"])
        seats_played.setdefault(rep.header["table_id"], set()).add(tuple(rep.header["agents"]))
    assert sorted(walls) == [0, 1, 2]
    for w, texts in walls.items():
        (text,) = texts
        eng = Engine("kawuxing3", 1)
        eng.reset(seed=42, table_ids=[w])
        assert parse_tiles(text) == eng.state.wall[0].tolist()
        assert len(seats_played[w]) == 6  # six different seatings really played it


def test_duplicate_scores_are_zero_sum_and_deterministic():
    agents = [make_agent("heuristic"), make_agent("random", seed=3)]
    a = play_duplicate(agents, walls=4, seed=9, batch_size=7)
    b = play_duplicate([make_agent("heuristic"), make_agent("random", seed=3)], walls=4, seed=9, batch_size=24)
    assert all(abs(sum(r.deltas)) < 1e-9 for r in a.records)
    # Batch size does not change the games: walls are seeded per wall and the random agent's draws per decision
    # (agents/players/keyrng.py), so even its choices are the same.
    assert [(r.wall, r.seating, r.wall_digest, r.deltas, r.discards) for r in a.records] == \
        [(r.wall, r.seating, r.wall_digest, r.deltas, r.discards) for r in b.records]
    s = summarize(a)
    # Two agents at three seats over the six seatings: each sits 9 times per wall, so the means cancel.
    assert s[0]["hands"] == s[1]["hands"] == 36
    assert s[0]["mean"] == pytest.approx(-s[1]["mean"])


def test_summary_counts_match_the_records():
    agents = [make_agent("heuristic"), make_agent("random", seed=5)]
    res = play_duplicate(agents, walls=5, seed=1)
    s = {x["agent"]: x for x in summarize(res)}
    wins = Counter(res.names[r.seating[w]] for r in res.records for w in r.winners)
    dealins = Counter(res.names[r.seating[r.discarder]] for r in res.records if r.how in ("discard", "rob"))
    for name in res.names:
        assert s[name]["wins"] == wins[name]
        assert s[name]["deal_in_rate"] == pytest.approx(dealins[name] / s[name]["hands"])
    # 包胡 is paid only by a discarder who fed a revealed winner.
    for r in res.records:
        for seat, paid in enumerate(r.baohu_paid):
            if paid:
                assert r.discarder == seat and any(r.revealed[w] for w in r.winners)


# ------------------------------------------------------------------------------------------ confidence intervals


def test_mean_ci_known_case():
    m, hw = mean_ci([1, 2, 3, 4, 5])
    # mean 3, sample sd sqrt(2.5), t(0.975, 4) = 2.776: half-width 2.776 * sqrt(2.5 / 5)
    assert m == 3.0
    assert hw == pytest.approx(2.776 * np.sqrt(0.5), rel=1e-9)
    assert mean_ci([7.0])[1] != mean_ci([7.0])[1]  # nan below two samples
    assert t_quantile(30) == 2.042
    assert t_quantile(60) == pytest.approx(2.0003, abs=2e-3)
    assert t_quantile(1_000_000) == pytest.approx(1.959964, abs=1e-4)


def test_mean_ci_covers_the_true_mean_about_95_percent():
    rng = np.random.default_rng(0)
    hits = sum(abs(m - 1.0) <= hw for m, hw in (mean_ci(rng.normal(1.0, 2.0, size=12)) for _ in range(4000)))
    assert 0.935 < hits / 4000 < 0.965


def test_pairwise_orients_the_margin_and_pairs_by_wall():
    agents = [make_agent("random", seed=1), make_agent("heuristic")]
    res = play_duplicate(agents, walls=6, seed=3)
    (p,) = pairwise(res)
    assert p["a"] == "heuristic" and p["margin"] > 0 and p["walls"] == 6
    s = {x["agent"]: x["mean"] for x in summarize(res)}
    assert p["margin"] == pytest.approx(s["heuristic"] - s["random"])


# ------------------------------------------------------------------------------------------ the command line


def test_evaluate_smoke_run_writes_its_outputs(tmp_path, capsys):
    out = evaluate.run(evaluate.Args(agents=["random", "heuristic"], walls=2, out=str(tmp_path), run_name="r",
                                     progress=False, plots=False, rating=False))
    text = capsys.readouterr().out
    assert "score/hand ± 95% CI" in text and "heuristic" in text and "hands/s" in text
    folder = tmp_path / "r"
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary["hands"] == 12 and summary["hands_per_second"] > 0
    with open(folder / "hands.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 36
    for g in {r["game"] for r in rows}:
        assert abs(sum(float(r["delta"]) for r in rows if r["game"] == g)) < 1e-9
    with open(folder / "leaderboard.csv", encoding="utf-8") as f:
        board = {r["agent"]: r for r in csv.DictReader(f)}
    assert set(board) == {"random", "heuristic"}
    assert out["agents"][0]["hands"] == 18


def test_evaluate_command_line_with_options_ratings_and_plots(tmp_path, capsys):
    pytest.importorskip("openskill")
    pytest.importorskip("matplotlib")
    evaluate.main(["--agents", "heuristic", "random", "--walls", "3", "--out", str(tmp_path), "--run_name", "x",
                   "--preset", "crazy", "--options", "cap=16", "--no-progress", "--seed", "5"])
    text = capsys.readouterr().out
    folder = tmp_path / "x"
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary["options"]["cap"] == 16 and summary["options"]["kaikou"] == "hard"  # crazy, then cap=16
    r = summary["ratings"]
    assert r["heuristic"]["mu"] > r["random"]["mu"]
    assert (folder / "scores.png").stat().st_size > 1000 and (folder / "rates.png").exists()
    assert "rating" in text


def test_evaluate_compare_plays_the_same_walls_under_each_rule_set(tmp_path, capsys):
    out = evaluate.run(evaluate.Args(agents=["heuristic", "random"], walls=2, out=str(tmp_path), run_name="c",
                                     compare=["kwx004", "kwx004/simple", "default:kaikou=none,cap=none"],
                                     progress=False, plots=False))
    text = capsys.readouterr().out
    rows = out["rows"]
    assert [r["config"] for r in rows] == ["kwx004", "kwx004/simple", "default:kaikou=none,cap=none"]
    assert all(r["hands"] == 12 for r in rows)
    assert "win% heuristic" in text and "kwx004/simple" in text
    with open(tmp_path / "c" / "compare.csv", encoding="utf-8") as f:
        assert len(list(csv.DictReader(f))) == 3


def test_compare_with_the_default_agents_leaves_out_a_checkpoint_that_cannot_play(tmp_path, capsys):
    """``--compare kwx004 suizhou000`` with no ``--agents``: the default Kawuxing bot (``kawuxing3-network-qfit3.pt``)
    was trained on kwx004, so it cannot play suizhou000; the run plays random and heuristic and says so in one line."""
    pytest.importorskip("torch")
    out = evaluate.run(evaluate.Args(walls=1, out=str(tmp_path), run_name="c", compare=["kwx004", "suizhou000"],
                                     progress=False, plots=False))
    captured = capsys.readouterr()
    assert [r["config"] for r in out["rows"]] == ["kwx004", "suizhou000"]
    assert "win% random" in captured.out and "win% heuristic" in captured.out and "kawuxing3-network-qfit3" not in captured.out
    notes = [ln for ln in captured.err.splitlines() if ln.startswith("note:")]
    assert len(notes) == 1 and "kawuxing3-network-qfit3.pt (suizhou000) cannot play here: it was trained on other rule " \
        "options (" in notes[0] and "kaikou: trained 'hard', asked 'none'" in notes[0]
    # rules it was trained on: the checkpoint plays them all
    names = evaluate.default_agents("kawuxing3", [evaluate.parse_compare(c, "kawuxing3") for c in ("kwx004", "default")])
    assert names[:2] == ["random", "heuristic"] and names[2].endswith("kawuxing3-network-qfit3.pt")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_fans_are_named_from_each_variants_own_family(variant):
    """The leaderboard's "top fans" column names each fan from its variant's family table (Kawuxing's table
    used to label every variant, so Yangzhou showed "hunyise 77%, zige 37%")."""
    names = evaluate.fan_names(variant)
    table = rule_family(get_variant(variant).family).fans()
    assert list(names) == list(table) and all(names[f] == table[f][0] for f in table)
    assert all(not re.search(r"[a-z]", name) for name in names.values()), names  # Chinese names, no ids
    top = list(table)[:3]
    stats = [{"agent": "heuristic", "hands": 10, "mean": 1.0, "ci95": 0.5, "win_rate": 0.3, "deal_in_rate": 0.1,
              "self_draw_rate": 0.1, "liang_rate": 0.0, "baohu_paid_hands": 0, "baohu_paid": 0.0,
              "fans": {f: 0.5 for f in top}}]
    line = evaluate.leaderboard_text(stats, None, None, variant).splitlines()[-1]
    assert line.endswith(", ".join(f"{names[f]} 50%" for f in top))


def test_a_yangzhou_leaderboard_names_its_fans(tmp_path, capsys):
    evaluate.run(evaluate.Args(variant="yangzhou", agents=["heuristic", "random"], walls=2, out=str(tmp_path),
                               run_name="y", progress=False, plots=False, rating=False))
    row = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith(" 1 heuristic"))
    fans = row.split("n/a", 1)[1]
    assert "%" in fans and not re.search(r"[a-z]", fans), row  # e.g. 对对胡 47%, 中发白 47%, 混一色 47%


def test_parse_compare_specs():
    label, opts = evaluate.parse_compare("kwx004/crazy:cap=16", "kawuxing3")
    assert label == "kwx004/crazy:cap=16"
    assert opts == load_rules("kawuxing3", ruleset="kwx004", preset="crazy", options={"cap": 16})
    assert evaluate.parse_compare("default", "kawuxing3")[1] == load_rules("kawuxing3")
    with pytest.raises(Exception, match="nosuch"):
        evaluate.parse_compare("nosuch", "kawuxing3")
