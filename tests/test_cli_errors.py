"""``mjenv score`` input errors of issue 10: the arrival of the winning tile must be named, chain positions and lock
values are checked — each one line on stderr naming the problem, exit status 2."""

from __future__ import annotations

import pytest

from mjenv.cli import main
from mjenv.tiles import NotationError, parse_hand

HAND = "24p678s789s55z [P 333p] +3p"


@pytest.mark.parametrize(
    "argv, fragment",
    [
        ([HAND], "the winning tile '+3p' must say how it arrived: '+3p discard', '+3p self-draw' or '+3p rob'"),
        ([HAND + " zimo"], "unknown arrival 'zimo' after '+3p' (use discard, self-draw or rob)"),
        ([HAND + " discard", "--after-kong", "0"], "--after-kong takes a chain position L >= 1, got 0"),
        ([HAND + " discard", "--after-kong", "-3"], "--after-kong takes a chain position L >= 1, got -3"),
        ([HAND + " discard", "--lock", "-5"], "--lock takes the value M >= 1 of the passed win, got -5"),
        ([HAND + " discard", "--lock", "0"], "--lock takes the value M >= 1"),
        ([HAND + " discard", "--lock", "x"], "--lock: invalid int value"),
    ],
)
def test_score_input_errors_are_one_line(capsys, argv, fragment):
    code = main(["score", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mjenv: error: ") and fragment in lines[0]


def test_the_arrival_words_still_work(capsys):
    for how in ("discard", "self-draw", "rob", "tsumo", "selfdraw"):
        assert main(["score", f"{HAND} {how}", "--json"]) == 0
    assert main(["score", HAND + " discard", "--after-kong", "2"]) == 0
    assert main(["score", HAND + " discard", "--lock", "2"]) == 0
    capsys.readouterr()


def test_parse_hand_requires_the_arrival():
    with pytest.raises(NotationError, match="must say how it arrived"):
        parse_hand("11p +1p")
    with pytest.raises(NotationError, match="unknown arrival 'ron'"):
        parse_hand("11p +1p ron")
    assert parse_hand("11p +1p discard").win_how == "discard"
