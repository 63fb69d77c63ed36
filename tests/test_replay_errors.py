"""Replay input errors: header and event fields of the wrong type or range are a ReplayError at their line naming
the field; --verify names the first differing field; showing an edited file whose money does not add up says so."""

from __future__ import annotations

import argparse
import io
import json

import pytest

from mjenv.replay import ReplayError, first_difference, read_replay, verify_replay, write_replay
from mjenv.tools.replay_command import add_replay_subcommand, replay_main
from tests.test_replay import _play_batch


@pytest.fixture(scope="module")
def engine():
    return _play_batch("kawuxing3", 4, 3)


@pytest.fixture
def hand(tmp_path, engine):
    """A replay file of a hand with a kong and a win (so there is kong money and a settlement)."""
    b = next(i for i in range(engine.batch_size) if any(e["type"] == "kong" for e in engine.events[i])
             and engine.results[i]["how"] != "draw")
    path = tmp_path / "hand.jsonl"
    write_replay(path, engine, b, {"seed": 3, "table_id": b})
    return path


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def _rewrite(path, k, change):
    lines = _lines(path)
    obj = json.loads(lines[k])
    change(obj)
    lines[k] = json.dumps(obj)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _cli(argv):
    parser = argparse.ArgumentParser(prog="mjenv")
    add_replay_subcommand(parser.add_subparsers())
    out = io.StringIO()
    return replay_main(parser.parse_args(argv), out=out), out.getvalue()


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("dealer", 7, "header dealer must be a seat 0..2, got 7"),
        ("dealer", "x", "header dealer must be a seat 0..2, got 'x'"),
        ("dealer", True, "header dealer must be a seat 0..2, got True"),
        ("variant", "nosuch", "header variant: unknown variant 'nosuch'"),
        ("variant", 3, "header variant must be a string"),
        ("options", [], "header options must be an object"),
        ("wall", 5, "header wall must be a tile string"),
        ("wall", "1x", "header wall is not tile notation"),
        ("seed", -1, "header seed must be an integer >= 0"),
        ("agents", ["a"], "header agents must be a list of 3 names"),
        ("balances", [1, "x", 3], "header balances must be a list of 3 finite numbers"),
        ("session", {"dealer": 0}, "header session must be an object of integers"),
    ],
)
def test_bad_header_fields_are_named_at_line_1(capsys, hand, field, value, message):
    _rewrite(hand, 0, lambda h: h.__setitem__(field, value))
    with pytest.raises(ReplayError, match=r"hand.jsonl:1: " + message.replace("(", r"\(").replace("[", r"\[")):
        read_replay(hand)
    code, _ = _cli(["replay", str(hand)])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mjenv: error: ") and field in err[0]


@pytest.mark.parametrize(
    "kind,field,value,message",
    [
        ("draw", "seat", 5, "draw line: seat must be a seat 0..2, got 5"),
        ("draw", "tile", "9z", "draw line: tile is not tile notation"),
        ("discard", "liang", "yes", "discard line: liang must be true or false"),
        ("deal", "hands", ["1p"], "deal line: hands must be a list of 3 hands"),
        ("kong", "transfers", [{"payer": 0}], r"kong line: transfers\[0\].payee is missing"),
        ("end", "deltas", [1, 2], "end line: deltas must be a list of 3 finite numbers"),
        ("end", "how", "magic", "end line: how must be one of"),
        ("end", "winners", [{"seat": 0, "reading": "x", "fans": {}, "value": "big"}], r"end line: winners\[0\].value must be a finite number"),
        ("action", "action", "pong", "action line: action must be an integer action id"),
    ],
)
def test_bad_event_fields_are_named_at_their_line(hand, kind, field, value, message):
    lines = _lines(hand)
    k = next(i for i, ln in enumerate(lines) if json.loads(ln)["type"] == kind)
    _rewrite(hand, k, lambda ev: ev.__setitem__(field, value))
    with pytest.raises(ReplayError, match=rf"hand.jsonl:{k + 1}: {message}"):
        read_replay(hand)


def test_verify_names_the_differing_field(hand):
    lines = _lines(hand)
    k = next(i for i, ln in enumerate(lines) if json.loads(ln)["type"] == "end")
    old = json.loads(lines[k])["transfers"][0]["amount"]
    _rewrite(hand, k, lambda ev: ev["transfers"][0].__setitem__("amount", old + 1.0))
    with pytest.raises(ReplayError) as exc:
        verify_replay(read_replay(hand)[0])
    message = str(exc.value)
    assert message == f"{hand}:{k + 1}: end event differs: transfers[0].amount: recorded {old + 1.0!r}, re-simulated {old!r}"
    code, text = _cli(["replay", "--verify", str(hand)])
    assert code == 1 and "transfers[0].amount: recorded" in text


def test_first_difference_walks_objects_and_lists():
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == "a[1].b: recorded 2, re-simulated 3"
    assert first_difference({"a": [1]}, {"a": [1, 2]}) == "a: recorded 1 entries, re-simulated 2"
    assert first_difference({"a": 1, "x": 0}, {"a": 1}) == "x: recorded 0, not produced by the re-simulation"
    assert first_difference({"a": 1}, {"a": 1, "y": 2}) == "y: missing, re-simulated 2"
    assert first_difference({"a": 1.0}, {"a": 1}) is None


def test_showing_a_tampered_payment_says_it_does_not_add_up(hand, capsys):
    code, _ = _cli(["replay", str(hand)])
    assert code == 0 and capsys.readouterr().err == ""
    lines = _lines(hand)
    k = next(i for i, ln in enumerate(lines) if json.loads(ln)["type"] == "end")
    _rewrite(hand, k, lambda ev: ev["transfers"][0].__setitem__("amount", ev["transfers"][0]["amount"] + 1))
    code, text = _cli(["replay", str(hand)])
    assert code == 1
    assert f"hand 1 is inconsistent: {hand}:{k + 1}: the recorded transfers add up to" in text
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the file was altered" in err[0]
    page = hand.parent / "page.html"
    code, text = _cli(["replay", str(hand), "--html", str(page)])  # the page too: written, but not exit 0 in silence
    assert code == 1 and page.exists() and "wrote" in text
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"mjenv: error: hand 1: {hand}:{k + 1}: the recorded transfers add up to" + err[0].split("add up to", 1)[1]]
    assert err[0].endswith("; the file was altered (the page shows it as recorded)")
