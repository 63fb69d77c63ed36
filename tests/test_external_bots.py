"""Outside bots (agents/players/external.py, docs/bots.md): the mjenv-bot-v1 line protocol, a duplicate tournament against
examples/simple_bot.py through evaluate.py, `mjenv play --opponents cmd:...`, and what a failing bot does."""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import evaluate
from agents import make_agent
from agents.players.external import BotError, seat_view
from agents.players.base import ObsView
from mjenv.engine.core import Engine
from mjenv.encoding.observation import encoder_for
from mjenv.play import add_play_subcommand, play_main

BOT = Path(__file__).resolve().parent.parent / "examples" / "simple_bot.py"
CMD = f"cmd:{sys.executable} {BOT}"


def _quiet(*extra):
    return ["--no-progress", "--no-plots", "--no-rating", "--quiet", *extra]


def test_the_view_names_what_the_seat_sees():
    eng = Engine("kawuxing3", 1)
    eng.reset(seed=3)
    enc = encoder_for(eng)
    rows = np.array([0])
    obs = enc.encode(eng.state, eng.state.actor[rows], rows)
    d = ObsView("kawuxing3").decode(obs)
    view = seat_view(d, 0, eng.mask[0])
    assert view["phase"] == "turn" and len(view["hand"]) == 14 and view["drawn"] in view["hand"]
    assert len(view["players"]) == 3 and all(p["melds"] == [] and p["liang"] is False for p in view["players"])
    assert set(view["legal"]) >= {f"discard:{t}" for t in view["hand"]}
    json.dumps(view)  # one JSON line


def test_duplicate_tournament_against_the_example_bot(tmp_path, capsys):
    assert evaluate.main(["--agents", CMD, "heuristic", "random", "--walls", "2", "--out", str(tmp_path),
                          "--run_name", "bot", *_quiet()]) == 0
    summary = json.loads((tmp_path / "bot" / "summary.json").read_text(encoding="utf-8"))
    stats = {a["agent"]: a for a in summary["agents"]}
    assert set(stats) == {"simple_bot", "heuristic", "random"}
    assert summary["hands"] == 12 and stats["simple_bot"]["hands"] == 12  # every seat of every wall
    assert abs(sum(a["mean"] * a["hands"] for a in summary["agents"])) < 1e-6  # zero-sum money


def test_bot_timeout_covers_the_hello(tmp_path, capsys):
    """A bot that never answers its hello stops the run after --bot_timeout seconds, not after a fixed 60 s."""
    hang = tmp_path / "hang.py"
    hang.write_text("import sys, time\nsys.stdin.readline()\ntime.sleep(120)\n", encoding="utf-8")
    start = time.monotonic()
    argv = ["--agents", f"cmd:{sys.executable} {hang}", "random", "--walls", "1", "--bot_timeout", "2",
            "--out", str(tmp_path), "--run_name", "r", *_quiet()]
    assert evaluate.main(argv) == 1
    assert time.monotonic() - start < 30
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "timed out (no answer within 2 s) at start-up (its hello)" in err[0], err


@pytest.mark.parametrize("fail,problem", [("crash", "exited (status 3) without answering"),
                                          ("hang", "timed out (no answer within 1.5 s)"),
                                          ("illegal", "answered the illegal action 'kongtile:1'")])
def test_a_failing_bot_stops_the_run_in_one_line_and_the_run_resumes(tmp_path, capsys, fail, problem):
    bot = tmp_path / "bot.py"
    shutil.copy(BOT, bot)
    argv = ["--agents", f"cmd:{sys.executable} {bot} --fail {fail}", "random", "--walls", "3", "--batch_size", "4",
            "--bot_timeout", "1.5", "--out", str(tmp_path), "--run_name", "r", *_quiet()]
    assert evaluate.main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert f"bot 'simple_bot-{fail}' {problem} at decision 5 (wall " in err[0] and ", seat " in err[0]
    assert "--resume" in err[0]
    folder = tmp_path / "r"
    assert not (folder / "summary.json").exists() and (folder / "records.jsonl").exists()
    kept = evaluate.load_records(folder)
    if fail != "crash":
        return  # one resume is enough: the crash case below
    # The bot is fixed; the run resumes from its folder and ends as if it had never stopped.
    bot.write_text(BOT.read_text(encoding="utf-8").replace('fail = sys.argv[sys.argv.index("--fail") + 1] if "--fail" in sys.argv else None',
                                                          "fail = None"), encoding="utf-8")
    assert evaluate.main(["--resume", str(folder), *_quiet()]) == 0
    resumed = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert evaluate.main(["--agents", f"cmd:{sys.executable} {BOT}", "random", "--walls", "3", "--out", str(tmp_path),
                          "--run_name", "straight", *_quiet()]) == 0
    straight = json.loads((tmp_path / "straight" / "summary.json").read_text(encoding="utf-8"))
    assert resumed["hands"] == straight["hands"] == 18
    assert [a["mean"] for a in resumed["agents"]] == pytest.approx([a["mean"] for a in straight["agents"]])
    final = {(r.wall, r.seating): r.deltas for r in evaluate.load_records(folder)}
    assert all(final[(r.wall, r.seating)] == r.deltas for r in kept)  # finished hands kept as they were played


def test_bot_failure_in_mjenv_play_is_one_line_and_writes_nothing(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    add_play_subcommand(parser.add_subparsers())
    save = tmp_path / "game.jsonl"
    args = parser.parse_args(["play", "--save", str(save), "--seat", "0", "--opponents",
                              f"cmd:{sys.executable} {BOT} --fail crash"])
    out = io.StringIO()
    assert play_main(args, inp=io.StringIO("1\n" * 200), out=out) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bot 'simple_bot-crash' exited (status 3) without answering at decision 5" in err[0]
    assert "the hand is void" in err[0] and not save.exists()


def test_the_example_bot_plays_a_hand_in_mjenv_play(tmp_path):
    parser = argparse.ArgumentParser()
    add_play_subcommand(parser.add_subparsers())
    args = parser.parse_args(["play", "--save", str(tmp_path / "g.jsonl"), "--seat", "1", "--opponents", CMD])
    out = io.StringIO()
    assert play_main(args, inp=io.StringIO("1\n" * 300), out=out) == 0
    assert "the others are simple_bot." in out.getvalue()
    header = json.loads((tmp_path / "g.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert header["agents"] == ["simple_bot", "you", "simple_bot"]


def test_bad_bot_commands_are_refused_naming_the_agent():
    with pytest.raises(ValueError, match="empty command"):
        make_agent("cmd:  ")
    bot = make_agent("cmd:/nonexistent/bot --x")
    mask = np.zeros((1, 111), bool)
    mask[0, 108] = True
    with pytest.raises(BotError, match=r"could not start \(/nonexistent/bot --x: .*\) at start-up \(its hello\)"):
        bot.act(np.zeros((1, *bot.view.shape), np.float32), mask)
