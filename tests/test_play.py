"""``mjenv play``: answers by number, by name and by tile notation; bad answers re-prompt; the hand ends with the
settlement and a replay that verifies; scripted stdin through the real console entry point; bad flags exit 2."""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys

import pytest

from mjenv import cli
from mjenv.encoding import actions as A
from mjenv.play import add_play_subcommand, format_actions, parse_answer, play_main
from mjenv.replay import read_replay, verify_replay
from mjenv.tiles import parse_tiles


def _ids(*names: str) -> list[int]:
    return [A.action_id(n) for n in names]


def test_parse_answer_forms():
    legal = _ids("discard:3p", "discard:5s", "liang:5s", "kong:7p", "win")
    assert parse_answer("1", legal) == A.action_id("discard:3p")
    assert parse_answer("5", legal) == A.WIN
    assert parse_answer("d 3p", legal) == parse_answer("3p", legal) == parse_answer("D3P", legal) == A.action_id("discard:3p")
    assert parse_answer("discard:5s", legal) == A.action_id("discard:5s")
    assert parse_answer("liang 5s", legal) == parse_answer("l 5s", legal) == A.action_id("liang:5s")
    assert parse_answer("k 7p", legal) == parse_answer("kong", legal) == A.action_id("kong:7p")
    assert parse_answer("hu", legal) == parse_answer("win", legal) == A.WIN
    for bad in ("", "0", "6", "d 4p", "liang 3p", "pong", "pass", "zz", "d 9z", "x 3p"):
        assert parse_answer(bad, legal) is None, bad
    claim = _ids("pong", "kong", "chi_mid", "win", "pass")
    assert parse_answer("pong", claim) == parse_answer("p", claim) == parse_answer("peng", claim) == A.PONG
    assert parse_answer("kong", claim) == A.KONG_CLAIM
    assert parse_answer("chi", claim) == parse_answer("chi mid", claim) == A.CHI_MID
    assert parse_answer("chi low", claim) is None
    assert parse_answer("pass", claim) == parse_answer("x", claim) == parse_answer("guo", claim) == A.PASS
    assert parse_answer("kt 1", _ids("kongtile:0", "kongtile:1")) == A.KONGTILE_1
    assert "discard:3p" in format_actions(legal) and " 5) win" in format_actions(legal)


class _Player(io.StringIO):
    """Stdin of a person who reads the screen: answers the last list of legal actions in tile notation (win >
    亮倒 > pong/kong > discard of the first tile), after one bad answer at the first decision."""

    def __init__(self, out: io.StringIO):
        super().__init__()
        self.out = out
        self.answers: list[str] = []
        self.bad_sent = False

    def readline(self, *args) -> str:
        text = self.out.getvalue()
        block = text[text.rfind("Your move:"):]
        names = re.findall(r"\d+\) (\S+)", block)
        if not self.bad_sent:
            self.bad_sent = True
            return "d 9z\n"
        if "win" in names:
            ans = "hu"
        elif any(n.startswith("liang:") for n in names):
            ans = "liang " + next(n for n in names if n.startswith("liang:"))[6:]
        elif "pong" in names:
            ans = "pong"
        elif any(n.startswith("kong:") for n in names):
            ans = "k " + next(n for n in names if n.startswith("kong:"))[5:]
        elif names[0].startswith("discard:"):
            ans = "d " + self._loose([n[8:] for n in names if n.startswith("discard:")], block)
        else:
            ans = "1"
        self.answers.append(ans)
        return ans + "\n"


    def _loose(self, tiles: list[str], block: str) -> str:
        """The legal discard with the fewest tiles of its kind and neighbours in the hand shown on screen."""
        hand = parse_tiles(re.findall(r"hand: \S+ ([0-9mpsz]+)\b", self.out.getvalue())[-1])

        def keep(name: str) -> int:
            t = parse_tiles(name)[0]
            near = [u for u in hand if u // 9 == t // 9 and (t < 27 or u == t)]
            return sum(3 if u == t else 2 if abs(u - t) == 1 else 1 if abs(u - t) == 2 else 0 for u in near)

        return min(tiles, key=keep)


def _args(tmp_path, **kw) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_play_subcommand(parser.add_subparsers())
    argv = ["play", "--save", str(tmp_path / "game.jsonl")]
    for k, v in kw.items():
        argv += [f"--{k}", str(v)]
    return parser.parse_args(argv)


@pytest.mark.parametrize("variant,opponents", [("kawuxing3", "heuristic"), ("gejiu", "random"), ("kawuxing4", "heuristic")])
def test_a_whole_hand_in_tile_notation(tmp_path, variant, opponents):
    forms = set()
    for seed in range(5):
        out = io.StringIO()
        player = _Player(out)
        args = _args(tmp_path, variant=variant, seed=seed, seat=seed % 3, opponents=opponents)
        assert play_main(args, inp=player, out=out) == 0
        text = out.getvalue()
        assert "'d 9z' is not one of the legal actions" in text  # the bad answer was asked again
        assert "== the hand is over" in text and "deltas:" in text
        hand = read_replay(tmp_path / "game.jsonl")[0]
        assert verify_replay(hand)["deltas"] == hand.result["deltas"]
        me = seed % 3
        assert hand.header["agents"][me] == "you"
        assert f"You ({'ABCD'[me]}): {hand.result['deltas'][me]:+g}" in text
        # a seat sees its own draws only
        other = "ABCD"[(me + 1) % len(hand.header["agents"])]
        assert not re.search(rf"^{other} draws.*[1-9][mpsz]", text, re.M)
        assert re.search(rf"^{other} draws", text, re.M)
        forms |= {a.split()[0] for a in player.answers}
    assert "d" in forms
    if variant == "kawuxing3":
        assert {"liang", "hu"} & forms


@pytest.mark.slow
def test_scripted_stdin_through_the_console(tmp_path):
    """The real entry point with a fixed script on stdin: help, a bad answer, then always the first action."""
    save = tmp_path / "g.jsonl"
    script = "?\nt\nnonsense\n" + "1\n" * 400
    proc = subprocess.run(
        [sys.executable, "-m", "mjenv.cli", "play", "--seed", "5", "--seat", "B", "--opponents", "random", "--save", str(save)],
        input=script, capture_output=True, text=True, encoding="utf-8", timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "'nonsense' is not one of the legal actions" in proc.stdout
    assert "Replay saved to" in proc.stdout
    check = subprocess.run([sys.executable, "-m", "mjenv.cli", "replay", "--verify", str(save)],
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0 and "hand 1: OK" in check.stdout


def test_input_ending_or_quitting_writes_nothing(tmp_path):
    for text in ("", "1\nq\n"):
        out = io.StringIO()
        assert play_main(_args(tmp_path, seed=1), inp=io.StringIO(text), out=out) == 1
        assert "no replay written" in out.getvalue()
        assert not (tmp_path / "game.jsonl").exists()


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--seat", "3"], "--seat '3': expected 0..2 or A, B, C"),
        (["--opponents", "wizard"], "--opponents: unknown agent 'wizard'"),
        (["--variant", "nope"], "nope"),
        (["--option", "cap=seven"], "cap"),
        (["--opponents", "missing.pt"], "not found"),
    ],
)
def test_bad_flags_exit_2(argv, needle, capsys, tmp_path):
    assert cli.main(["play", "--save", str(tmp_path / "x.jsonl"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mjenv: error:") and needle in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.jsonl").exists()
