"""Helpers for scripted engine games in tests: explicit walls from hands, named action scripts, and tables played
part-way by the compiled player."""

from __future__ import annotations

import numpy as np

from mjenv.encoding.actions import action_id, action_name
from mjenv.engine.core import Engine
from mjenv.engine.validate import validate
from mjenv.tiles import SEAT_LETTERS, parse_tiles


def make_wall(engine: Engine, hands: dict[str, str], dealer: int = 0, front: str = "", back: str = "") -> list[int]:
    """A wall dealing ``hands`` (seat letter -> 13 tiles, the dealer 14), then ``front`` as the next
    normal draws and ``back`` as the replacement tiles (first replacement first); the other tiles
    fill the middle of the live wall in ascending order."""
    n = engine.n
    seats = [(dealer + k) % n for k in range(n)]
    dealt = {s: parse_tiles(hands[SEAT_LETTERS[s]]) for s in seats}
    for s in seats:
        want = 14 if s == dealer else 13
        assert len(dealt[s]) == want, f"seat {SEAT_LETTERS[s]} is dealt {len(dealt[s])} tiles, not {want}"
    head = [t for s in seats for t in dealt[s][:13]] + [dealt[dealer][13]]
    head += parse_tiles(front)
    tail = parse_tiles(back)[::-1]
    left = list(np.repeat(np.arange(34), np.where(engine.kinds, 4, 0)))
    for t in head + tail:
        left.remove(t)
    return head + left + tail


def play(engine: Engine, script: list[str], table: int = 0) -> None:
    """Play ``"B pong"``-style steps (seat letter, action name) on one table, validating after each."""
    for line in script:
        seat, name = line.split(maxsplit=1)
        actor = int(engine.state.actor[table])
        assert SEAT_LETTERS[actor] == seat, f"{line!r}: seat {SEAT_LETTERS[actor]} is to act; legal: {legal_names(engine, table)}"
        actions = np.full(engine.batch_size, 0, dtype=np.int64)
        actions[:] = engine.mask.argmax(1)
        actions[table] = action_id(name)
        engine.step(actions)
        validate(engine)


def legal_names(engine: Engine, table: int = 0) -> list[str]:
    """Names of the legal actions at ``table``."""
    return [action_name(a) for a in np.flatnonzero(engine.mask[table])]


def transfers(engine: Engine, table: int = 0) -> list[tuple[str, str, float, str]]:
    """All money moves of the hand as (payer, payee, amount, reason), kong money first, in order."""
    out = []
    for ev in engine.events[table]:
        for tr in ev.get("transfers", []) if ev["type"] == "kong" else []:
            out.append((SEAT_LETTERS[tr["payer"]], SEAT_LETTERS[tr["payee"]], tr["amount"], tr["reason"]))
    res = engine.results[table]
    if res is not None:
        for tr in res["transfers"]:
            out.append((SEAT_LETTERS[tr["payer"]], SEAT_LETTERS[tr["payee"]], tr["amount"], tr["reason"]))
    return out


def fast_midgame(tables: int, steps: int, seed: int, variant: str = "kawuxing3") -> Engine:
    """``tables`` tables of ``variant`` dealt with ``seed`` after ``steps`` moves of the compiled player
    (:class:`agents.players.fastplay.FastPlayer`, the agent ``fast``) in every seat."""
    from agents import make_agent

    eng = Engine(variant, tables, record_events=False)
    eng.reset(seed=seed)
    fast = make_agent("fast", variant).player
    acts = np.zeros(tables, np.int64)
    for _ in range(steps):
        fast.decide(eng, out=acts)
        eng.step(acts)
    return eng
