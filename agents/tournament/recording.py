"""Recording agents' play as a decision dataset: :func:`write_from_play` plays agents on seeded walls in duplicate
tournaments (:func:`agents.tournament.arena.play_duplicate`) and writes every decision in the ``mjenv-dataset-v1``
format of :mod:`mjenv.dataset` (through the arena's ``on_step`` / ``on_record`` hooks into a
:class:`~mjenv.dataset.DatasetWriter`).  ``mjenv dataset --agents ...`` runs it (:mod:`mjenv.tools.dataset`); the
network-only cloning stage records its teacher with it (:mod:`agents.training.netclone`).  :func:`write_replay_hands`
records hands played by agents as a replay file instead (the reviewer's tests and ``bench/review.py`` use it).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

from mjenv.dataset import DatasetError, open_writer

__all__ = ["write_from_play", "write_replay_hands"]


def write_from_play(out: str | Path, agent_specs: Sequence[str], variant: Any = "kawuxing3", options: Any = None, *,
                    walls: int = 100, seed: int = 0, first_wall: int = 0, all_seatings: bool = False,
                    oracle: bool = False, shard_size: int = 16384, batch_size: int = 256, progress=None) -> dict:
    """Play ``walls`` seeded walls with the agents and write every decision (see :mod:`mjenv.dataset` for the format).

    Seats: with as many agents as seats, agent ``i`` sits in seat ``i``; with fewer, the list repeats (``A B``
    at three seats: A B A); ``all_seatings`` replays each wall under every seating of :func:`agents.tournament.arena.seatings`
    instead.  Returns the meta.json content."""
    from agents import make_agent
    from agents.tournament.arena import play_duplicate, seatings
    from agents.players.base import resolve_rules

    rules = resolve_rules(variant, options)  # variant: a name, or the Rules resolved at the door
    variant, opts, n = rules.variant, rules.options, rules.n_players
    if walls < 1:
        raise DatasetError(f"--walls must be >= 1, got {walls}")
    if not agent_specs:
        raise DatasetError("--agents: name at least one agent")
    distinct = list(dict.fromkeys(agent_specs))  # one agent object per distinct name, deciding for all its seats
    try:
        agents = [make_agent(s, rules, seed=seed * 1000 + i) for i, s in enumerate(distinct)]
    except ValueError as exc:
        raise DatasetError(f"--agents: {exc}") from None
    if all_seatings:
        plan = seatings(len(agents), n)
    else:
        plan = [tuple(distinct.index(agent_specs[s % len(agent_specs)]) for s in range(n))]
    source = {"kind": "play", "agents": [a.name for a in agents], "seatings": [list(p) for p in plan], "walls": walls,
              "first_wall": first_wall, "seed": seed, "all_seatings": all_seatings}
    rec = open_writer(out, shard_size, variant, opts, oracle, source, tables=min(batch_size, walls * len(plan)))
    cpu, start = time.process_time(), time.perf_counter()
    try:
        res = play_duplicate(agents, rules, walls=walls, seed=seed, first_wall=first_wall, batch_size=batch_size,
                             seat_plan=plan, on_record=rec.on_record, on_step=rec.on_step, progress=progress,
                             scored=False)
    finally:
        for a in agents:
            if hasattr(a, "close"):
                a.close()
    return rec.finish({"hands": len(res.records), "seconds": time.perf_counter() - start,
                          "cpu_seconds": time.process_time() - cpu})


def write_replay_hands(path: str | Path, variant: Any, specs: Sequence[str], seed: int, hands: int = 1,
                       match: bool = False) -> list:
    """Play ``hands`` hands on one table with agents ``specs`` (one per seat), write them to the replay file ``path``
    and return them read back (:func:`mjenv.replay.read_replay`).

    Hand ``h`` is dealt from wall seed ``seed + h``; with ``match`` the hands continue one match (sessions and 园子
    balances carry over, :meth:`~mjenv.engine.core.Engine.next_hand`), else each is a fresh deal.  Seat ``i``'s agent
    is ``make_agent(specs[i], variant, seed=seed + i)``."""
    import numpy as np

    from agents import make_agent
    from agents.players.base import agent_act
    from mjenv.encoding.observation import encoder_for
    from mjenv.engine.core import Engine
    from mjenv.replay import read_replay, write_replay

    eng = Engine(variant, 1, record_events=True)
    agents = [make_agent(s, variant, seed=seed + i) for i, s in enumerate(specs)]
    enc = encoder_for(eng)
    rows = np.array([0])
    for h in range(hands):
        if h == 0 or not match:
            eng.reset(seed=seed + h)
        else:
            eng.next_hand(seed=seed + h)
        decisions = []
        while not eng.done[0]:
            seat = int(eng.state.actor[0])
            obs = enc.encode(eng.state, eng.state.actor[rows], rows, engine=eng)
            action = int(agent_act(agents[seat], obs, eng.mask[rows], engine=eng, tables=rows)[0])
            decisions.append({"at": eng.event_count(0), "seat": seat, "action": action})
            eng.step(np.array([action]))
        write_replay(path, eng, 0, {"seed": seed + h, "agents": list(specs)}, decisions=decisions, append=h > 0)
    return read_replay(path)
