"""The replay reader checks every field of every line kind (mjenv/replay.py, docs/replay-format.md).

Each field of each line kind — the header, every event type, the ``action`` line, and the fields of a winner and
a transfer — is set in turn to null, to a value of the wrong type and to a value of the right type but out of
range (a seat the table lacks, a tile the variant lacks, an action id past the last).  Reading the file must then
raise one :class:`ReplayError` naming the file and the line, and ``mjenv replay FILE`` must print exactly that one
``mjenv: error: FILE:LINE: ...`` line on stderr and exit 2: never a traceback, never a hand shown from a bad line.

The few cases the format allows stay readable and showable (``ALLOWED``): a null ``seed``, ``table_id``,
``agents`` or winner ``cap``.  Booleans and free text (a winner's ``reading``, a transfer's ``reason``, the
writer's ``mjenv_version``) have no range.
"""

from __future__ import annotations

import argparse
import copy
import io
import json

import pytest

from mjenv.replay import EVENT_FIELDS, ReplayError, read_replay, write_replay
from mjenv.tools.replay_command import add_replay_subcommand, replay_main
from tests.test_replay import _play_batch

# Values of the right type but out of range, per field (the fixtures are a Kawuxing-3p hand, whose tiles are the
# p and s suits and the dragons, and a Gejiu hand for chi and kong_pick).
OUT_OF_RANGE = {
    "seat": 3, "dealer": 3, "from": 3, "discarder": 3, "next_dealer": 3, "payer": 3, "payee": 3,
    "tile": "1m", "wall": "1m", "shown": "1m1m", "meld": "135s",
    "hands": ["1m", "1m", "1m"],
    "replacement": None, "liang": None, "session_over": None,  # booleans: no range
    "face_down": 15, "action": 111, "name": "discard:1m", "kind": "sideways", "position": 0, "slot": 2,
    "how": "nap", "winners": [], "transfers": [{"payer": 0, "payee": 0, "amount": 1.0, "reason": "x"}],
    "settlement_deltas": [0.0, 0.0], "deltas": [0.0, 0.0],
    "fans": {"pihu": -1}, "value": -1.0, "cap": 0, "amount": -1.0,
    "format": "mjenv-replay-v0", "variant": "kawuxing9", "options": {"cap": 7}, "seed": -1, "table_id": -1,
    "agents": ["a", "b"], "session": {"dealer": 0, "rounds": 1, "passes": -1, "hands": 0}, "balances": [1.0],
}
# A reply's ``action`` is an action name, not an id.
OUT_OF_RANGE_REPLY_ACTION = "teleport"
NO_RANGE = {"replacement", "liang", "session_over", "reading", "reason", "mjenv_version"}
# (line kind, field, mutation) the format allows: these read and show like the original.
ALLOWED = {("header", "seed", "null"), ("header", "table_id", "null"), ("header", "agents", "null"),
           ("winner", "cap", "null")}


def _wrong_type(value):
    """A value of another JSON type than ``value``'s."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, str):
        return 7
    if isinstance(value, (int, float)):
        return "1"
    if isinstance(value, list):
        return {"a": 1}
    if isinstance(value, dict):
        return "x"
    return "x"  # a null field (an end's discarder): a string is of no kind it may be


def _hand_lines(variant: str, kinds: set[str], seed: int, folder) -> list[dict]:
    """The lines of one hand of ``variant`` holding every line kind of ``kinds`` (an ``end`` on a discard win)."""
    for s in range(seed, seed + 40):
        eng = _play_batch(variant, 16, s)
        for b in range(eng.batch_size):
            lines = _lines_of(eng, b, folder / f"{variant}.jsonl")
            types = {ln["type"] for ln in lines}
            end = lines[-1]
            direct = any(ln["type"] == "kong" and ln["kind"] == "direct" for ln in lines)
            if kinds <= types and end["how"] == "discard" and end["transfers"] and ("kong" not in kinds or direct):
                return lines
    raise AssertionError(f"no {variant} hand with {kinds} in 40 batches")


def _lines_of(eng, b: int, path) -> list[dict]:
    """Table ``b``'s hand as the JSON objects of its replay lines."""
    write_replay(path, eng, b, {"seed": 1, "table_id": b})
    with open(path, encoding="utf-8") as f:
        return [json.loads(ln) for ln in f if ln.strip()]


@pytest.fixture(scope="module")
def hands(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fixtures")
    kw = _hand_lines("kawuxing3", {"reveal", "kong", "add_kong_declared", "reply", "pong", "draw"}, 0, folder)
    gj = _hand_lines("gejiu", {"chi", "kong_pick"}, 0, folder)
    return kw, gj


SEAT_FIELDS = {"seat", "dealer", "from", "discarder", "next_dealer", "payer", "payee"}


def _mutations(field: str, value, kind: str, n: int):
    """(label, value) of the three mutations of a field of a hand of ``n`` seats (Gejiu's: 4 seats, all 34 tiles,
    so its out-of-range tile is one past the honors)."""
    yield "null", None
    yield "wrong type", _wrong_type(value)
    if field in NO_RANGE:
        return
    if (kind, field) == ("reply", "action"):
        yield "out of range", OUT_OF_RANGE_REPLY_ACTION
    elif field in SEAT_FIELDS:
        yield "out of range", n
    elif n == 4 and field == "tile":
        yield "out of range", "8z"
    else:
        yield "out of range", OUT_OF_RANGE[field]


def _cases(hands):
    """(label, lines, line index, line kind, field) for every field of every line kind."""
    kw, gj = hands
    for lines in (kw, gj):
        seen = set()
        for i, line in enumerate(lines):
            kind = line["type"]
            if kind in seen or (lines is gj and kind != "chi" and kind != "kong_pick"):
                continue
            if kind == "kong" and line["kind"] != "direct":
                continue
            seen.add(kind)
            fields = [f for f in line if f != "type"]
            if kind != "header":
                fields += [k.rstrip("?") for k in EVENT_FIELDS[kind] if k.rstrip("?") not in line]
            for field in fields:
                yield kind, lines, i, (field,), line.get(field, True)
            if kind == "end":
                for field, value in line["winners"][0].items():
                    yield "winner", lines, i, ("winners", 0, field), value
                for field, value in line["transfers"][0].items():
                    yield "transfer", lines, i, ("transfers", 0, field), value


def _set(obj, keys, value):
    for k in keys[:-1]:
        obj = obj[k]
    obj[keys[-1]] = value


def test_every_field_of_every_line_kind_is_checked(tmp_path, hands, capsys):
    path = tmp_path / "hand.jsonl"
    parser = argparse.ArgumentParser(prog="mjenv")
    add_replay_subcommand(parser.add_subparsers())
    covered, problems = set(), []
    for kind, lines, i, keys, value in _cases(hands):
        n = len(lines[0]["agents"])
        for label, bad in _mutations(keys[-1], value, kind, n):
            mutated = copy.deepcopy(lines)
            _set(mutated[i], keys, bad)
            path.write_text("\n".join(json.dumps(ln, ensure_ascii=False) for ln in mutated) + "\n", encoding="utf-8")
            case = f"{kind} {'.'.join(map(str, keys))} {label} ({bad!r})"
            covered.add((kind, keys[-1]))
            capsys.readouterr()
            code = replay_main(parser.parse_args(["replay", str(path)]), out=io.StringIO())
            err = capsys.readouterr().err
            if (kind, keys[-1], label) in ALLOWED:
                read_replay(path)
                if code != 0 or err:
                    problems.append(f"{case}: allowed, yet exit {code}: {err!r}")
                continue
            try:
                read_replay(path)
            except ReplayError as exc:
                message = str(exc)
            else:
                problems.append(f"{case}: read without an error (mjenv replay exit {code})")
                continue
            if not message.startswith(f"{path}:{i + 1}: ") or "\n" in message:
                problems.append(f"{case}: {message!r}")
            if code != 2 or err != f"mjenv: error: {message}\n":
                problems.append(f"{case}: mjenv replay exit {code}, stderr {err!r}")
    assert not problems, "\n".join(problems)
    # every line kind, and every field the format names for it, was mutated
    for kind, fields in EVENT_FIELDS.items():
        for key in fields:
            assert (kind, key.rstrip("?")) in covered, (kind, key)
    for field in ("format", "variant", "options", "wall", "dealer", "seed", "table_id", "agents"):
        assert ("header", field) in covered, field
    assert {("winner", f) for f in ("seat", "reading", "fans", "value", "cap")} <= covered
    assert {("transfer", f) for f in ("payer", "payee", "amount", "reason")} <= covered


def test_lines_whose_fields_contradict_each_other_are_named(tmp_path, hands):
    """Fields right one by one but wrong together: a draw with a winner, a win on no tile, a claim from oneself,
    a direct kong from no one, an action line whose name is another action's."""
    kw, _ = hands
    path = tmp_path / "hand.jsonl"
    end = len(kw) - 1
    pong = next(i for i, ln in enumerate(kw) if ln["type"] == "pong")
    kong = next(i for i, ln in enumerate(kw) if ln["type"] == "kong" and ln["kind"] == "direct")
    act = next(i for i, ln in enumerate(kw) if ln["type"] == "action")
    cases = [
        (end, {"how": "draw"}, "tile must be null in an exhaustive draw"),
        (end, {"how": "self-draw"}, "discarder must be null in a self-draw"),
        (end, {"discarder": kw[end]["winners"][0]["seat"]}, "discarder must be the seat that lost the tile"),
        (pong, {"from": kw[pong]["seat"]}, "from must be another seat"),
        (kong, {"kind": "concealed"}, "from must be null for a concealed kong"),
        (act, {"name": "pass" if kw[act]["name"] != "pass" else "win"}, "name must be"),
    ]
    for i, change, message in cases:
        mutated = copy.deepcopy(kw)
        mutated[i].update(change)
        path.write_text("\n".join(json.dumps(ln, ensure_ascii=False) for ln in mutated) + "\n", encoding="utf-8")
        with pytest.raises(ReplayError, match=rf"hand.jsonl:{i + 1}: .*{message}"):
            read_replay(path)
    path.write_text("\n".join(json.dumps(ln, ensure_ascii=False) for ln in kw) + "\n", encoding="utf-8")
    assert len(read_replay(path)) == 1  # the unmutated hand reads: the mutations are what fail
