"""Replays: JSON Lines files of whole hands, their reading, verification and text display.

This module owns the replay format ``mjenv-replay-v1`` (specified in ``docs/replay-format.md``):
a file holds one or more hands; each hand is a ``header`` line followed by the engine's event
objects (:attr:`mjenv.engine.core.Engine.events`) with an ``action`` line placed before the events
that each decision produced.  It provides

* :func:`write_replay` (used by the envs and by ``evaluate.py``) and :func:`read_replay`;
* :func:`verify_replay`: re-simulates every hand from its header's wall and its recorded
  decisions and checks every event, every payment and the final deltas;
* :func:`format_replay`, :func:`format_event`, :func:`format_header`: the game as readable text with Unicode
  tiles (the ``mjenv replay`` command that shows it move by move is :mod:`mjenv.tools.replay_command`).

A truncated or corrupt file, or a line whose fields have the wrong type or range (a dealer that is not a
seat, a tile that is not a tile), raises :class:`ReplayError` whose message starts with ``FILE:LINE:`` and
names the field; a re-simulation that differs names the first differing field
(``transfers[0].amount: recorded 3.0, re-simulated 2.0``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mjenv.encoding import actions as A
from mjenv.tiles import SEAT_LETTERS, NotationError, parse_tiles, tile_id, tile_name, tile_unicode

FORMAT = "mjenv-replay-v1"
EVENT_TYPES = (
    "deal",
    "draw",
    "discard",
    "reveal",
    "reply",
    "pong",
    "chi",
    "add_kong_declared",
    "kong",
    "kong_pick",
    "end",
)


class ReplayError(ValueError):
    """A replay file that cannot be read or does not re-simulate; the message names the file and line."""


EVENT_FIELDS: dict[str, dict[str, str]] = {
    "deal": {"dealer": "seat", "hands": "hands", "wall": "tiles"},
    "draw": {"seat": "seat", "tile": "tile", "replacement?": "bool"},
    "discard": {"seat": "seat", "tile": "tile", "liang": "bool"},
    "reveal": {"seat": "seat", "shown": "tiles", "face_down?": "hidden"},
    "reply": {"seat": "seat", "action": "action_name"},
    "pong": {"seat": "seat", "tile": "tile", "from": "seat"},
    "chi": {"seat": "seat", "tile": "tile", "from": "seat", "meld": "run"},
    "add_kong_declared": {"seat": "seat", "tile": "tile"},
    "kong": {"seat": "seat", "tile": "tile", "kind": "kong_kind", "from": "seat|null", "position": "position",
             "transfers": "transfers"},
    "kong_pick": {"seat": "seat", "slot": "slot", "tile": "tile"},
    "end": {"how": "how", "winners": "winners", "discarder": "seat|null", "tile": "tile|null", "transfers": "transfers",
            "settlement_deltas": "amounts", "deltas": "amounts", "next_dealer": "seat", "session_over?": "bool"},
    "action": {"seat": "seat", "action": "action", "name?": "str"},
}
"""The fields of each line type and their kinds (``?``: optional; ``|null``: may be null); checked on reading, type
and range (a seat of the table, a tile of the variant), together with the rules that tie fields of one line
together (:func:`_line_problem`), so that showing a file never fails on a field."""

END_HOWS = ("self-draw", "discard", "rob", "draw")
KONG_KINDS = ("concealed", "added", "direct")
_WINNER_FIELDS = {"seat": "seat", "reading": "str", "fans": "fans", "value": "amount", "cap?": "positive|null"}
_TRANSFER_FIELDS = {"payer": "seat", "payee": "seat", "amount": "amount", "reason": "str"}
_MAX_HIDDEN = 14  # face-down tiles of a 亮倒 reveal: at most a whole hand
_MAX_KONG_CHAIN = 16  # kongs in one chain of replacement draws: 4 kinds × 4 copies at most
_MAX_KONG_SLOTS = 2  # face-up kong tiles a konger chooses from (Gejiu, §6.3)


@dataclass(frozen=True)
class _Table:
    """What a field is checked against: the number of seats and the tile kinds of the hand's rules."""

    n: int
    kinds: np.ndarray | None = None  # bool [34]; None: any tile


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == x and abs(x) != float("inf")


def _tiles_problem(value: Any, table: _Table, one: bool) -> str | None:
    if not isinstance(value, str):
        return f"must be a tile string, got {value!r}"
    try:
        ids = parse_tiles(value) if value else []
    except NotationError as exc:
        return f"is not tile notation ({exc})"
    if one and len(ids) != 1:
        return f"must be one tile, got {value!r}"
    if table.kinds is not None:
        bad = [tile_name(t) for t in ids if not table.kinds[t]]
        if bad:
            return f"holds {', '.join(dict.fromkeys(bad))}, not a tile of this variant, in {value!r}"
    return None


def _field_problem(kind: str, value: Any, table: _Table | int) -> str | None:
    """Why ``value`` is not of ``kind`` (None when it is); ``table`` gives the seats and tile kinds in play."""
    if isinstance(table, int):
        table = _Table(table)
    n = table.n
    if kind.endswith("|null"):
        return None if value is None else _field_problem(kind[:-5], value, table)
    if kind == "seat":
        return None if _is_int(value) and 0 <= value < n else f"must be a seat 0..{n - 1}, got {value!r}"
    if kind == "count":
        return None if _is_int(value) and value >= 0 else f"must be an integer >= 0, got {value!r}"
    if kind == "hidden":
        ok = _is_int(value) and 0 <= value <= _MAX_HIDDEN
        return None if ok else f"must be an integer 0..{_MAX_HIDDEN}, got {value!r}"
    if kind == "position":
        ok = _is_int(value) and 1 <= value <= _MAX_KONG_CHAIN
        return None if ok else f"must be an integer 1..{_MAX_KONG_CHAIN}, got {value!r}"
    if kind == "slot":
        ok = _is_int(value) and 0 <= value < _MAX_KONG_SLOTS
        return None if ok else f"must be an integer 0..{_MAX_KONG_SLOTS - 1}, got {value!r}"
    if kind == "action":
        ok = _is_int(value) and 0 <= value < A.N_ACTIONS
        return None if ok else f"must be an integer action id 0..{A.N_ACTIONS - 1}, got {value!r}"
    if kind == "action_name":
        if not isinstance(value, str):
            return f"must be an action name, got {value!r}"
        try:
            A.action_id(value)
        except ValueError as exc:
            return f"is not an action name ({exc})"
        return None
    if kind == "kong_kind":
        return None if value in KONG_KINDS else f"must be one of {', '.join(KONG_KINDS)}, got {value!r}"
    if kind == "bool":
        return None if isinstance(value, bool) else f"must be true or false, got {value!r}"
    if kind == "str":
        return None if isinstance(value, str) else f"must be a string, got {value!r}"
    if kind == "number":
        return None if _is_number(value) else f"must be a finite number, got {value!r}"
    if kind == "amount":
        return None if _is_number(value) and value >= 0 else f"must be a finite number >= 0, got {value!r}"
    if kind == "positive":
        return None if _is_number(value) and value > 0 else f"must be a finite number > 0, got {value!r}"
    if kind == "how":
        return None if value in END_HOWS else f"must be one of {', '.join(END_HOWS)}, got {value!r}"
    if kind in ("tile", "tiles"):
        return _tiles_problem(value, table, kind == "tile")
    if kind == "run":
        problem = _tiles_problem(value, table, False)
        if problem:
            return problem
        ids = parse_tiles(value)
        ok = len(ids) == 3 and ids[0] < 27 and ids[1] == ids[0] + 1 and ids[2] == ids[0] + 2 and ids[0] // 9 == ids[2] // 9
        return None if ok else f"must be three suited tiles in a run, got {value!r}"
    if kind == "hands":
        if not (isinstance(value, list) and len(value) == n):
            return f"must be a list of {n} hands, got {value!r}"
        return next((f"[{i}] {p}" for i, h in enumerate(value) if (p := _field_problem("tiles", h, table))), None)
    if kind == "amounts":
        if not (isinstance(value, list) and len(value) == n and all(_is_number(x) for x in value)):
            return f"must be a list of {n} finite numbers, got {value!r}"
        return None
    if kind == "fans":
        if not (isinstance(value, dict) and all(_is_number(x) and x >= 0 for x in value.values())):
            return f"must be an object of fan values >= 0, got {value!r}"
        return None
    if kind in ("transfers", "winners"):
        fields = _TRANSFER_FIELDS if kind == "transfers" else _WINNER_FIELDS
        if not isinstance(value, list):
            return f"must be a list, got {value!r}"
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                return f"[{i}] must be an object, got {item!r}"
            problem = _fields_problem(item, fields, table)
            if problem:
                return f"[{i}].{problem}"
            if kind == "transfers" and item["payer"] == item["payee"]:
                return f"[{i}] pays seat {item['payer']} to itself"
        return None
    raise AssertionError(f"unknown field kind {kind!r}")


def _fields_problem(obj: dict, fields: dict[str, str], table: _Table | int) -> str | None:
    """``"NAME PROBLEM"`` for the first field of ``obj`` that is missing or of the wrong kind, else None."""
    for key, kind in fields.items():
        name = key.rstrip("?")
        if name not in obj:
            if key.endswith("?"):
                continue
            return f"{name} is missing"
        problem = _field_problem(kind, obj[name], table)
        if problem:
            return f"{name}{'' if problem.startswith('[') else ' '}{problem}"
    return None


def _line_problem(obj: dict, table: _Table) -> str | None:
    """The first problem of one line: a field of the wrong type or range (:data:`EVENT_FIELDS`), or fields that
    contradict each other (a win without a winning tile, a claim from the claimer's own seat, an action line whose
    name is not its action's)."""
    kind = obj["type"]
    problem = _fields_problem(obj, EVENT_FIELDS[kind], table)
    if problem:
        return problem
    if kind in ("pong", "chi") and obj["from"] == obj["seat"]:
        return f"from must be another seat than seat {obj['seat']}, got {obj['from']!r}"
    if kind == "chi" and obj["tile"] not in [tile_name(t) for t in parse_tiles(obj["meld"])]:
        return f"meld {obj['meld']!r} must hold the claimed tile {obj['tile']!r}"
    if kind == "kong":
        if obj["kind"] == "direct" and (obj["from"] is None or obj["from"] == obj["seat"]):
            return f"from must be the discarder's seat for a direct kong, got {obj['from']!r}"
        if obj["kind"] != "direct" and obj["from"] is not None:
            return f"from must be null for a {obj['kind']} kong, got {obj['from']!r}"
    if kind == "action" and "name" in obj and obj["name"] != A.action_name(obj["action"]):
        return f"name must be {A.action_name(obj['action'])!r} for action {obj['action']}, got {obj['name']!r}"
    if kind == "end":
        how, winners = obj["how"], obj["winners"]
        if how == "draw":
            for name in ("tile", "discarder"):
                if obj[name] is not None:
                    return f"{name} must be null in an exhaustive draw, got {obj[name]!r}"
            if winners:
                return f"winners must be empty in an exhaustive draw, got {winners!r}"
            return None
        if obj["tile"] is None:
            return f"tile must be the winning tile of a {how} win, got null"
        if not winners:
            return f"winners must list who won a {how} win, got []"
        seats = [w["seat"] for w in winners]
        if len(set(seats)) != len(seats):
            return f"winners name a seat twice: {seats}"
        if how == "self-draw":
            if len(winners) != 1:
                return f"winners must be one seat in a self-draw, got {seats}"
            if obj["discarder"] is not None:
                return f"discarder must be null in a self-draw, got {obj['discarder']!r}"
        elif obj["discarder"] is None or obj["discarder"] in seats:
            return f"discarder must be the seat that lost the tile in a {how} win, got {obj['discarder']!r}"
    return None


@dataclass
class Replay:
    """One hand of a replay file: its header, its records (events and ``action`` lines) and their line numbers."""

    header: dict
    records: list[dict] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    path: str = "<replay>"
    header_line: int = 1

    @property
    def events(self) -> list[dict]:
        """The engine events, without the ``action`` lines."""
        return [r for r in self.records if r["type"] != "action"]

    @property
    def actions(self) -> list[dict]:
        """The recorded decisions (``action`` lines) in order."""
        return [r for r in self.records if r["type"] == "action"]

    @property
    def result(self) -> dict | None:
        """The hand's result (the ``end`` event without its ``type``), or None."""
        end = next((r for r in self.records if r["type"] == "end"), None)
        return None if end is None else {k: v for k, v in end.items() if k != "type"}


# ---------------------------------------------------------------------------------------------- writing


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"cannot write {type(obj).__name__} to a replay")


def _dumps(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, default=_json_default, separators=(",", ":"))


def _normalize(obj: Any) -> Any:
    """The value as it reads back from JSON (tuples become lists, numpy scalars Python numbers)."""
    return json.loads(json.dumps(obj, default=_json_default))


SESSION_KEYS = ("dealer", "rounds", "passes", "hands")
"""Fields of a session (一操) as the header records it: :class:`mjenv.rules.scoring.diedaohu.Session`."""
PROTECTED_KEYS = ("type", "format", "variant", "options", "wall", "dealer", "session", "balances")


def session_at_deal(engine, table: int) -> dict | None:
    """Where table ``table``'s session stood when its current hand was dealt (None without sessions).

    The engine advances the session when a hand ends; for a finished hand this undoes that one step
    (the deal passed iff the next dealer differs, docs/rules/diedaohu.md §7.8), so the header can record the session
    the hand was played in: its round wind and how far the session had gone.
    """
    ses = engine.sessions[table]
    if ses is None:
        return None
    dealer = int(engine.state.dealer[table])
    passes, hands = int(ses.passes), int(ses.hands)
    if engine.results[table] is not None:
        passes -= int(int(ses.dealer) != dealer)
        hands -= 1
    return {"dealer": dealer, "rounds": int(ses.rounds), "passes": passes, "hands": hands}


def make_header(engine, table: int, header_extra: dict | None = None) -> dict:
    """The header of table ``table``'s current hand: format, variant, options, wall, dealer, agents.

    Variants with sessions add ``session`` (the session when the hand was dealt: it fixes the round wind)
    and, under a 园子 bankroll, ``balances`` (every seat's balance at the deal: it limits payments).
    """
    from mjenv._version import __version__
    from mjenv.rules.options import options_to_dict

    events = engine.events[table]
    if not events or events[0].get("type") != "deal":
        raise ReplayError(f"table {table} has no recorded deal (create the engine with record_events=True)")
    deal = events[0]
    header = {
        "type": "header",
        "format": FORMAT,
        "mjenv_version": __version__,
        "variant": engine.variant,
        "options": options_to_dict(engine.opts, engine.variant),
        "seed": None,
        "table_id": None,
        "wall": deal["wall"],
        "dealer": int(deal["dealer"]),
        "agents": [f"player_{i}" for i in range(engine.n)],
    }
    session = session_at_deal(engine, table)
    if session is not None:
        header["session"] = session
    if engine.family.starting_balance() > 0:
        header["balances"] = [float(x) for x in engine.balance[table]]
    for k, v in (header_extra or {}).items():
        if k in PROTECTED_KEYS:
            raise ValueError(f"header_extra may not override {k!r}")
        header[k] = v
    return _normalize(header)


def write_replay(
    path,
    engine,
    table: int = 0,
    header_extra: dict | None = None,
    *,
    decisions: Sequence[dict] | None = None,
    append: bool = False,
) -> None:
    """Write table ``table``'s finished hand to ``path`` as JSON Lines.

    ``decisions`` are ``{"at": event_index, "seat", "action"}`` records kept by the caller while it
    stepped; without them they are recovered by re-simulating the hand from its wall (a kept
    decision list saves that re-simulation).  ``header_extra`` adds header keys
    (``seed``, ``table_id``, ``agents`` or any caller field).  ``append`` adds the hand to an
    existing file.
    """
    header = make_header(engine, table, header_extra)
    if engine.results[table] is None:
        raise ReplayError(f"table {table}'s hand is still in play; a replay holds whole hands")
    events = _normalize(engine.events[table])
    if decisions is None:
        decisions = _derive_decisions(header, events)
    lines = [_dumps(header)]
    by_pos: dict[int, list[dict]] = {}
    for d in decisions:
        by_pos.setdefault(int(d["at"]), []).append(d)
    for i in range(len(events) + 1):
        for d in by_pos.get(i, ()):
            act = int(d["action"])
            lines.append(_dumps({"type": "action", "seat": int(d["seat"]), "action": act, "name": A.action_name(act)}))
        if i < len(events):
            lines.append(_dumps(events[i]))
    with open(path, "a" if append else "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------------------------- reading


def read_replay(path) -> list[Replay]:
    """Read every hand of a replay file.  Raises :class:`ReplayError` (``FILE:LINE: ...``) on bad input."""
    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ReplayError(f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start})") from None
    hands: list[Replay] = []
    cur: Replay | None = None
    lineno = 0
    table = _Table(0)
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReplayError(
                f"{path}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno}); file corrupt or truncated"
            ) from None
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            raise ReplayError(f"{path}:{lineno}: each line must be a JSON object with a 'type' field")
        kind = obj["type"]
        if kind == "header":
            if cur is not None:
                _check_complete(cur, lineno - 1)
            table = _check_header(obj, path, lineno)
            cur = Replay(header=obj, path=path, header_line=lineno)
            hands.append(cur)
            continue
        if cur is None:
            raise ReplayError(f"{path}:{lineno}: a {kind!r} line before any header line")
        if kind != "action" and kind not in EVENT_TYPES:
            raise ReplayError(
                f"{path}:{lineno}: unknown line type {kind!r} (known: header, action, {', '.join(EVENT_TYPES)})"
            )
        problem = _line_problem(obj, table)
        if problem:
            raise ReplayError(f"{path}:{lineno}: {kind} line: {problem}")
        if cur.records and cur.records[-1]["type"] == "end":
            raise ReplayError(f"{path}:{lineno}: a {kind!r} line after the hand's 'end' event")
        cur.records.append(obj)
        cur.lines.append(lineno)
    if cur is None:
        raise ReplayError(f"{path}:{max(lineno, 1)}: no header line (empty or not a replay file)")
    _check_complete(cur, lineno)
    return hands


def _check_header(h: dict, path: str, lineno: int) -> _Table:
    """Check the header's fields (type and range; its options resolve under its variant's rules, its wall holds
    each tile of those rules 4 times); returns what the hand's lines are checked against."""
    from mjenv.rules.options import OptionError, n_players

    if h.get("format") != FORMAT:
        raise ReplayError(
            f"{path}:{lineno}: unsupported replay format {h.get('format')!r} (this mjenv reads {FORMAT!r})"
        )
    for key in ("variant", "options", "wall", "dealer"):
        if key not in h:
            raise ReplayError(f"{path}:{lineno}: header lacks {key!r}")
    try:
        n = n_players(h["variant"]) if isinstance(h["variant"], str) else None
    except OptionError as exc:
        raise ReplayError(f"{path}:{lineno}: header variant: {exc}") from None
    if n is None:
        raise ReplayError(f"{path}:{lineno}: header variant must be a string, got {h['variant']!r}")
    if not isinstance(h["options"], dict):
        raise ReplayError(f"{path}:{lineno}: header options must be an object, got {h['options']!r}")
    try:
        table = _Table(n, _tile_kinds(h["variant"], json.dumps(h["options"], sort_keys=True)))
    except OptionError as exc:
        raise ReplayError(f"{path}:{lineno}: header options: {exc}") from None
    fields = {"wall": "tiles", "dealer": "seat", "seed?": "count|null", "table_id?": "count|null",
              "agents?": "agents|null", "session?": "session", "balances?": "amounts", "mjenv_version?": "str"}
    for key, kind in fields.items():
        name = key.rstrip("?")
        if name not in h:
            continue
        value = h[name]
        if kind == "agents|null":
            ok = value is None or (isinstance(value, list) and len(value) == n and all(isinstance(a, str) for a in value))
            problem = None if ok else f"must be a list of {n} names, got {value!r}"
        elif kind == "session":
            ok = isinstance(value, dict) and all(_is_int(value.get(k)) and value[k] >= 0 for k in SESSION_KEYS)
            problem = None if ok else f"must be an object of integers {', '.join(SESSION_KEYS)} >= 0, got {value!r}"
        else:
            problem = _field_problem(kind, value, table)
        if problem:
            raise ReplayError(f"{path}:{lineno}: header {name} {problem}")
    counts = np.bincount(parse_tiles(h["wall"]), minlength=34) if h["wall"] else np.zeros(34, np.int64)
    if not (counts == 4 * table.kinds).all():
        raise ReplayError(f"{path}:{lineno}: header wall must hold each of the variant's {int(table.kinds.sum())} "
                          f"tile kinds 4 times ({4 * int(table.kinds.sum())} tiles), got {int(counts.sum())} tiles")
    return table


@functools.lru_cache(maxsize=64)
def _tile_kinds(variant: str, options_json: str) -> np.ndarray:
    """The tile kinds in play under a header's variant and options (cached: a file repeats them hand after hand)."""
    from mjenv.rules.options import load_rules, tile_kinds

    kinds = tile_kinds(variant, load_rules(variant, options=json.loads(options_json)))
    kinds.flags.writeable = False
    return kinds


def _check_complete(rep: Replay, last_line: int) -> None:
    if not rep.records or rep.records[0]["type"] != "deal":
        raise ReplayError(f"{rep.path}:{rep.header_line + 1}: the hand must start with a 'deal' event")
    if rep.records[-1]["type"] != "end":
        raise ReplayError(
            f"{rep.path}:{last_line}: the hand that starts at line {rep.header_line} has no 'end' event"
            " (file truncated?)"
        )


# ---------------------------------------------------------------------------------------------- simulation


def deal_header(header: dict):
    """A one-table engine (recording events) dealt the header's hand: wall, dealer, options, session, balances.

    A header without ``session`` / ``balances`` is the first hand of a fresh session (or a variant without
    sessions).  Otherwise the session and the balances are installed first and the hand is dealt as the
    continuation of that session, so round wind and bankroll limits are those the hand was played under.
    """
    from mjenv.engine.core import Engine

    eng = Engine(header["variant"], 1, options=dict(header["options"]), record_events=True)
    wall, dealer = [header["wall"]], int(header["dealer"])
    session, balances = header.get("session"), header.get("balances")
    if session is None and balances is None:
        eng.reset(walls=wall, dealer=dealer)
        return eng
    fresh = eng.family.new_session(dealer)
    if session is not None:
        if fresh is None:
            raise ValueError(f"variant {header['variant']!r} has no sessions, but the header records one")
        missing = [k for k in SESSION_KEYS if k not in session]
        if missing:
            raise ValueError(f"header session lacks {', '.join(missing)}")
        fresh = dataclasses.replace(fresh, **{k: int(session[k]) for k in SESSION_KEYS})
    eng.sessions[0] = fresh
    eng.balance[0] = eng.family.starting_balance() if balances is None else np.asarray(balances, dtype=np.float64)
    eng.hand_number[0] = (int(session["hands"]) if session is not None else 0) - 1  # reset adds the hand
    eng.reset(walls=wall, dealer=dealer, continue_match=True)
    return eng


def _action_from_event(ev: dict, actor: int) -> int | None:
    """The decision of ``actor`` that produced event ``ev`` as its first consequence, if it is one."""
    kind = ev.get("type")
    if ev.get("seat") == actor:
        if kind == "discard":
            return (A.LIANG if ev.get("liang") else A.DISCARD) + tile_id(ev["tile"])
        if kind == "reply":
            return A.action_id(ev["action"])
        if kind == "add_kong_declared" or (kind == "kong" and ev.get("kind") == "concealed"):
            return A.KONG_SELF + tile_id(ev["tile"])
        if kind == "kong_pick":
            return A.KONGTILE_0 + int(ev["slot"])
    if kind == "end" and ev.get("how") == "self-draw" and any(w.get("seat") == actor for w in ev.get("winners", ())):
        return A.WIN
    return None


def _simulate(
    header: dict, records: list[dict], lines: list[int] | None, path: str, use_events: bool, header_line: int = 1
):
    """Re-play a hand; yields ``(position, seat, action)`` per decision and checks every engine event.

    With ``use_events`` the decisions are read off the events (for writing); otherwise from the
    ``action`` lines of ``records``.
    """
    events = [r for r in records if r["type"] != "action"]
    ev_lines = [ln for r, ln in zip(records, lines or [0] * len(records)) if r["type"] != "action"]
    act_recs = [(r, ln) for r, ln in zip(records, lines or [0] * len(records)) if r["type"] == "action"]
    try:
        eng = deal_header(header)
    except (ValueError, TypeError) as exc:  # unknown variant or option, a wall that is not the tile set
        raise ReplayError(f"{path}:{header_line}: cannot deal the header's hand: {exc}") from None
    pos = 0

    def where(i: int) -> str:
        return f"{path}:{ev_lines[i]}" if lines is not None and i < len(ev_lines) else f"{path}: event {i}"

    def check_new() -> None:
        nonlocal pos
        new = _normalize(eng.events[0][pos:])
        for j, ev in enumerate(new):
            i = pos + j
            if i >= len(events):
                raise ReplayError(f"{path}: the engine produced more events than recorded; next would be {ev}")
            if ev != events[i]:
                diff = first_difference(events[i], ev) or f"recorded {events[i]}, re-simulated {ev}"
                raise ReplayError(f"{where(i)}: {events[i].get('type')} event differs: {diff}")
        pos += len(new)

    check_new()
    k = 0
    while not eng.done[0]:
        actor = int(eng.state.actor[0])
        if use_events:
            if pos >= len(events):
                raise ReplayError(f"{path}: the events stop while seat {actor} has to decide")
            act = _action_from_event(events[pos], actor)
            if act is None:
                raise ReplayError(f"{where(pos)}: cannot read a decision of seat {actor} from {events[pos]}")
            ln = None
        else:
            if k >= len(act_recs):
                raise ReplayError(f"{path}: the actions stop while seat {actor} has to decide (file truncated?)")
            rec, ln = act_recs[k]
            k += 1
            act = int(rec["action"])
            if int(rec["seat"]) != actor:
                raise ReplayError(f"{path}:{ln}: action by seat {rec['seat']} but seat {actor} is to act")
        if not (0 <= act < A.N_ACTIONS) or not eng.mask[0, act]:
            legal = ", ".join(A.action_name(a) for a in np.flatnonzero(eng.mask[0]))
            name = A.action_name(act) if 0 <= act < A.N_ACTIONS else f"id {act}"
            at = f"{path}:{ln}" if ln else where(pos)
            raise ReplayError(f"{at}: action {name} of seat {actor} is not legal (legal: {legal})")
        yield pos, actor, act
        eng.step(np.array([act]))
        check_new()
    if not use_events and k != len(act_recs):
        raise ReplayError(f"{path}:{act_recs[k][1]}: action line after the hand is over")
    if pos != len(events):
        raise ReplayError(f"{where(pos)}: recorded events continue after the engine's hand ended")
    res = eng.results[0]
    if abs(sum(res["deltas"])) > 1e-9:
        raise ReplayError(f"{path}: final deltas {res['deltas']} are not zero-sum")
    paid = np.zeros(eng.n)
    for ev in events:
        for tr in ev.get("transfers", ()) if ev["type"] in ("kong", "end") else ():
            paid[tr["payer"]] -= tr["amount"]
            paid[tr["payee"]] += tr["amount"]
    if not np.allclose(paid, res["deltas"], atol=1e-9):
        raise ReplayError(f"{path}: the recorded transfers add up to {paid.tolist()}, not the deltas {res['deltas']}")


def first_difference(recorded: Any, produced: Any, at: str = "") -> str | None:
    """The first field where ``recorded`` and ``produced`` differ, as ``"transfers[0].amount: recorded 3.0,
    re-simulated 2.0"`` (None when they are equal)."""
    name = at or "the event"
    if isinstance(recorded, dict) and isinstance(produced, dict):
        for key in list(produced) + [k for k in recorded if k not in produced]:
            sub = f"{at}.{key}" if at else str(key)
            if key not in recorded:
                return f"{sub}: missing, re-simulated {produced[key]!r}"
            if key not in produced:
                return f"{sub}: recorded {recorded[key]!r}, not produced by the re-simulation"
            diff = first_difference(recorded[key], produced[key], sub)
            if diff:
                return diff
        return None
    if isinstance(recorded, list) and isinstance(produced, list):
        for i, (r, p) in enumerate(zip(recorded, produced)):
            diff = first_difference(r, p, f"{at}[{i}]")
            if diff:
                return diff
        if len(recorded) != len(produced):
            return f"{name}: recorded {len(recorded)} entries, re-simulated {len(produced)}"
        return None
    if recorded != produced:
        return f"{name}: recorded {recorded!r}, re-simulated {produced!r}"
    return None


def money_problem(rep: Replay) -> str | None:
    """Why the hand's money does not add up (deltas not zero-sum, or not what the recorded kong and settlement
    transfers give), naming the ``end`` line; None when it does.  A cheap check for display; ``--verify``
    re-simulates everything."""
    end_at = next((i for i, r in enumerate(rep.records) if r["type"] == "end"), None)
    if end_at is None:
        return None
    deltas = rep.records[end_at]["deltas"]
    line = f"{rep.path}:{rep.lines[end_at]}" if end_at < len(rep.lines) else rep.path
    paid = [0.0] * len(deltas)
    for r in rep.records:
        if r["type"] in ("kong", "end"):
            for tr in r["transfers"]:
                paid[tr["payer"]] -= tr["amount"]
                paid[tr["payee"]] += tr["amount"]
    if abs(sum(deltas)) > 1e-9:
        return f"{line}: the deltas {deltas} are not zero-sum"
    if any(abs(p - d) > 1e-9 for p, d in zip(paid, deltas)):
        return f"{line}: the recorded transfers add up to {[round(p, 9) for p in paid]}, not the deltas {deltas}"
    return None


def _derive_decisions(header: dict, events: list[dict]) -> list[dict]:
    return [
        {"at": pos, "seat": seat, "action": act}
        for pos, seat, act in _simulate(header, events, None, "<engine events>", use_events=True)
    ]


def verify_replay(replay: Replay) -> dict:
    """Re-simulate one hand from its header's wall and recorded decisions; check every event and payment.

    Returns the hand's result; raises :class:`ReplayError` naming the first line that differs.
    """
    for _ in _simulate(replay.header, replay.records, replay.lines, replay.path, False, replay.header_line):
        pass
    return replay.result


# ---------------------------------------------------------------------------------------------- text


def _tiles_text(notation: str) -> str:
    ids = parse_tiles(notation) if notation else []
    return f"{''.join(tile_unicode(t) for t in ids)} ({notation})" if ids else "-"


def _tile_text(name: str) -> str:
    return f"{tile_unicode(tile_id(name))} {name}"


def _seat(s: int, agents: Sequence[str]) -> str:
    return f"{SEAT_LETTERS[s]}" if not agents else f"{SEAT_LETTERS[s]} ({agents[s]})"


def _kong_tiles_at_deal(variant: str | None, wall: str) -> list[int]:
    """Gejiu's face-up kong tiles right after the deal (slot 0 first): the wall's last two tiles (§6.3)."""
    from mjenv.rules.families import rule_family
    from mjenv.rules.options import get_variant

    if variant is None:
        return []
    k = rule_family(get_variant(variant).family).kong_tiles
    return parse_tiles(wall)[::-1][:k] if k else []


def _multiplies(variant: str | None) -> bool:
    """Whether the family's fan values are multipliers (Kawuxing: ×2, ×4; its class's ``fan_factors``); the other
    families list pattern values, fan counts or hand-class values that combine by their own rules (Gejiu §6.8,
    Yangzhou §8.7, Diedaohu §7.4).  No variant: Kawuxing-3p's notation."""
    from mjenv.rules.families import rule_family
    from mjenv.rules.options import get_variant

    return variant is None or rule_family(get_variant(variant).family).fan_factors


def _fans_text(fans: dict, variant: str | None) -> str:
    if _multiplies(variant):
        return ", ".join(f"{k} ×{v}" for k, v in fans.items()) or "屁胡"
    return ", ".join(f"{k} {v:g}" for k, v in fans.items())


def format_event(ev: dict, agents: Sequence[str] = (), variant: str | None = None) -> list[str]:
    """Readable lines for one event or action record (``variant`` picks how fans and kong tiles read)."""
    kind = ev["type"]
    L = SEAT_LETTERS
    if kind == "deal":
        out = [f"Deal, dealer {L[ev['dealer']]}:"]
        out += [f"  {_seat(s, agents)}: {_tiles_text(h)}" for s, h in enumerate(ev["hands"])]
        kong_tiles = _kong_tiles_at_deal(variant, ev["wall"])
        if kong_tiles:
            shown = ", ".join(f"{i}: {_tile_text(tile_name(t))}" for i, t in enumerate(kong_tiles))
            out.append(f"  face-up kong tiles: {shown}")
        return out
    if kind == "action":
        return []  # the events that follow say what happened
    if kind == "draw":
        return [f"{L[ev['seat']]} draws {_tile_text(ev['tile'])}" + (" (replacement)" if ev.get("replacement") else "")]
    if kind == "discard":
        return [
            f"{L[ev['seat']]} discards {_tile_text(ev['tile'])}" + ("  and declares 亮倒" if ev.get("liang") else "")
        ]
    if kind == "reveal":
        down = f", {ev['face_down']} tiles face down" if ev.get("face_down") else ""
        return [f"{L[ev['seat']]} reveals {_tiles_text(ev['shown'])}{down}"]
    if kind == "reply":
        return [f"  {L[ev['seat']]}: {ev['action']}"]
    if kind == "pong":
        return [f"{L[ev['seat']]} pongs {_tile_text(ev['tile'])} from {L[ev['from']]}"]
    if kind == "chi":
        return [f"{L[ev['seat']]} chis {_tile_text(ev['tile'])} from {L[ev['from']]} into {_tiles_text(ev['meld'])}"]
    if kind == "kong_pick":
        return [f"{L[ev['seat']]} takes face-up kong tile {ev['slot']}: {_tile_text(ev['tile'])}"]
    if kind == "add_kong_declared":
        return [f"{L[ev['seat']]} declares an added kong of {_tile_text(ev['tile'])}"]
    if kind == "kong":
        src = f" from {L[ev['from']]}" if ev.get("from") is not None else ""
        pay = ", ".join(f"{L[t['payer']]}→{L[t['payee']]} {t['amount']:g}" for t in ev.get("transfers", ()))
        where = f"chain position {ev['position']}; {pay or 'no money'}"
        return [f"{L[ev['seat']]} {ev['kind']} kong {_tile_text(ev['tile'])}{src} ({where})"]
    if kind == "end":
        out = []
        if ev["how"] == "draw":
            out.append("Exhaustive draw (荒庄)")
        else:
            frm = f" from {L[ev['discarder']]}" if ev.get("discarder") is not None else ""
            out.append(f"{ev['how']} win on {_tile_text(ev['tile'])}{frm}")
            for w in ev["winners"]:
                fans = _fans_text(w["fans"], variant)
                cap = f" (cap {w['cap']})" if w.get("cap") is not None or _multiplies(variant) else ""
                out.append(f"  {L[w['seat']]} wins: {w['reading']}  [{fans}] value {w['value']:g}{cap}")
        for t in ev["transfers"]:
            out.append(f"  {L[t['payer']]} pays {L[t['payee']]} {t['amount']:g} ({t['reason']})")
        out.append("  deltas: " + ", ".join(f"{L[s]} {d:+g}" for s, d in enumerate(ev["deltas"])))
        over = "; the session is over" if ev.get("session_over") else ""
        out.append(f"  next dealer: {L[ev['next_dealer']]}{over}")
        return out
    return [json.dumps(ev, ensure_ascii=False)]


def format_header(rep: Replay) -> str:
    """One line naming the hand: variant, dealer, seed or explicit wall, agents; session and balances if any."""
    h = rep.header
    src = (
        f"seed {h['seed']}" + (f" table {h['table_id']}" if h.get("table_id") is not None else "")
        if h.get("seed") is not None
        else "explicit wall"
    )
    agents = ", ".join(f"{SEAT_LETTERS[i]}={a}" for i, a in enumerate(h.get("agents") or ()))
    text = f"== {h['variant']} hand ({src}), dealer {SEAT_LETTERS[h['dealer']]}; {agents}"
    ses = h.get("session")
    if ses:
        rnd = min(ses["passes"] // 4, ses["rounds"] - 1)
        text += f"; round {rnd + 1} of {ses['rounds']} ({'ESWN'[rnd % 4]} wind), hand {ses['hands'] + 1}"
    if h.get("balances") is not None:
        text += "; balances " + ", ".join(f"{SEAT_LETTERS[i]} {b:g}" for i, b in enumerate(h["balances"]))
    return text


def format_replay(rep: Replay) -> str:
    """The whole hand as text."""
    lines = [format_header(rep)]
    for r in rep.records:
        lines += format_event(r, (), rep.header.get("variant"))
    return "\n".join(lines)
