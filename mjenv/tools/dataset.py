"""Writing decision datasets (``mjenv dataset``): agents playing seeded walls, or replay files re-simulated, every
decision stored in the ``mjenv-dataset-v1`` format of :mod:`mjenv.dataset` (which reads them back).

Sources: :func:`write_from_play` plays agents on seeded walls (each wall once, seats as listed, or under every
seating with ``all_seatings``) through :func:`agents.tournament.arena.play_duplicate`; :func:`write_from_replays`
re-simulates ``mjenv-replay-v1`` files (:mod:`mjenv.replay`).  :func:`add_dataset_subcommand` and
:func:`dataset_main` are the ``mjenv dataset`` command line.  This is a top-floor tool: it plays agents.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Sequence

import numpy as np

from mjenv.dataset import FIELDS, FORMAT, N_ACTIONS, DatasetError, pack_planes


def _save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)


def _write_json(path: Path, obj: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


# ------------------------------------------------------------------------------------------ writing


def _new_folder(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DatasetError(f"--out {out}: exists and is not an empty folder; choose a new one")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatasetError(f"--out {out}: cannot create it ({exc.strerror or exc})") from None


class _Writer:
    """The arena's ``on_step`` / ``on_record`` hooks and the shard writer.

    Each decision is encoded straight into a slot of a preallocated buffer and stays there until its hand ends;
    then its slots join the ready queue with their reward (the seat's money from the hand, at its last decision
    of the hand) and return (that money, at every decision of the seat in the hand).  Every ``shard_size``
    ready decisions are packed from their slots (:func:`pack_planes`) into one shard file and the slots reused,
    so no observation is copied more than once and memory stays at about one shard plus the hands in play."""

    def __init__(self, out: str | Path, shard_size: int, meta: dict, shape: tuple[int, int], oracle_rows: int,
                 in_play: int = 16384):
        if shard_size < 1:
            raise DatasetError(f"--shard-size must be >= 1, got {shard_size}")
        self.out = Path(out)
        _new_folder(self.out)
        self.shard_size, self.meta, self.shape, self.oracle_rows = shard_size, meta, shape, oracle_rows
        # room for one shard of ready decisions plus the hands in play (about 48 decisions per table)
        self.cap = shard_size + in_play
        self.obs = np.empty((self.cap, *shape), np.float32)
        self.extra = np.empty((self.cap if oracle_rows else 0, oracle_rows, shape[1]), np.float32)
        self.mask = np.zeros((self.cap, N_ACTIONS), bool)
        self.cols = {k: np.zeros(self.cap, np.int64) for k in ("action", "seat", "hand", "step", "agent")}
        self.free: list[int] = list(range(self.cap - 1, -1, -1))
        self.slots_of: dict[int, list[np.ndarray]] = {}
        self.ready: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []  # slots, reward, ret, wall
        self.n_ready = 0
        self.shards: list[dict] = []
        self.decisions = 0

    def _grow(self, need: int) -> None:
        new = max(need, int(self.cap * 1.5) + 1024)
        self.obs = np.concatenate([self.obs, np.empty((new - self.cap, *self.shape), np.float32)])
        if self.oracle_rows:
            self.extra = np.concatenate([self.extra, np.empty((new - self.cap, self.oracle_rows, self.shape[1]), np.float32)])
        self.mask = np.concatenate([self.mask, np.zeros((new - self.cap, N_ACTIONS), bool)])
        for k, v in self.cols.items():
            self.cols[k] = np.concatenate([v, np.zeros(new - self.cap, np.int64)])
        self.free.extend(range(new - 1, self.cap - 1, -1))
        self.cap = new

    def on_step(self, eng, tables: np.ndarray, actions: np.ndarray, games: np.ndarray, steps: np.ndarray,
                agents: np.ndarray) -> None:
        """Record a batch of decisions (the arguments of the arena's ``on_step``)."""
        from mjenv.encoding.observation import encoder_for

        K = len(tables)
        if len(self.free) < K:
            self._grow(self.cap + K)
        slots = np.asarray(self.free[-K:][::-1], np.int64)
        del self.free[-K:]
        st = eng.state
        seats = st.actor[tables].astype(np.int64)
        if self.oracle_rows:
            full = encoder_for(eng, oracle=True).encode(st, seats, tables, engine=eng)
            self.obs[slots] = full[:, :self.shape[0]]
            self.extra[slots] = full[:, self.shape[0]:]
        elif K and slots[-1] - slots[0] == K - 1:  # consecutive slots: encode in place
            encoder_for(eng).encode(st, seats, tables, out=self.obs[slots[0]:slots[0] + K], engine=eng)
        else:
            self.obs[slots] = encoder_for(eng).encode(st, seats, tables, engine=eng)
        self.mask[slots] = eng.mask[tables]
        for k, v in (("action", actions), ("seat", seats), ("hand", games), ("step", steps), ("agent", agents)):
            self.cols[k][slots] = v
        for g in np.unique(games):
            self.slots_of.setdefault(int(g), []).append(slots[games == g])

    def on_record(self, record) -> None:
        """A hand ended (an :class:`agents.tournament.arena.GameRecord`, or anything with ``game``, ``wall``, ``deltas``)."""
        parts = self.slots_of.pop(int(record.game), [])
        if not parts:
            return
        slots = np.concatenate(parts)
        seats = self.cols["seat"][slots]
        money = np.asarray(record.deltas, np.float32)
        ret = money[seats]
        reward = np.zeros(len(slots), np.float32)
        for s in np.unique(seats):
            last = np.flatnonzero(seats == s)[-1]
            reward[last] = ret[last]
        self.ready.append((slots, reward, ret, int(record.wall)))
        self.n_ready += len(slots)
        while self.n_ready >= self.shard_size:
            self._write(self.shard_size)

    def _write(self, k: int) -> None:
        slots, reward, ret, wall = [], [], [], []
        got = 0
        while got < k:
            s, rw, rt, w = self.ready[0]
            take = min(k - got, len(s))
            slots.append(s[:take]), reward.append(rw[:take]), ret.append(rt[:take]), wall.append(np.full(take, w))
            if take == len(s):
                self.ready.pop(0)
            else:
                self.ready[0] = (s[take:], rw[take:], rt[take:], w)
            got += take
        idx = np.concatenate(slots)
        arrays = pack_planes(self.obs, "obs", idx)
        if self.oracle_rows:
            arrays |= pack_planes(self.extra, "oracle", idx)
        arrays["mask_bits"] = np.packbits(self.mask[idx], axis=1)
        cols = {k2: v[idx] for k2, v in self.cols.items()} | {"reward": np.concatenate(reward), "ret": np.concatenate(ret),
                                                               "wall": np.concatenate(wall)}
        for key, dtype in FIELDS.items():
            arrays[key] = cols[key].astype(dtype)
        name = f"shard_{len(self.shards):05d}.npz"
        _save_npz(self.out / name, arrays)
        self.shards.append({"file": name, "decisions": int(k)})
        self.decisions += int(k)
        self.n_ready -= k
        self.free.extend(idx.tolist())

    def finish(self, extra: dict | None = None) -> dict:
        """Write the last shard and meta.json (last of all); returns the meta."""
        if self.n_ready:
            self._write(self.n_ready)
        meta = {**self.meta, **(extra or {}), "format": FORMAT, "decisions": self.decisions, "shards": self.shards}
        _write_json(self.out / "meta.json", meta)
        return meta


def _new_writer(out, shard_size: int, variant: str, opts, oracle: bool, source: dict, tables: int = 1) -> _Writer:
    """A :class:`_Writer` for a new dataset folder with its meta (everything but the shard list)."""
    meta = _base_meta(variant, opts, oracle, source)
    return _Writer(out, shard_size, meta, tuple(meta["observation"]["shape"]),
                   meta["oracle"]["shape"][0] if oracle else 0, in_play=48 * tables + 256)


def _base_meta(variant: str, opts, oracle: bool, source: dict) -> dict:
    from mjenv.encoding.observation import OBS_VERSION, ORACLE_VERSION, ObservationEncoder, OracleEncoder
    from mjenv.rules.options import n_players, options_to_dict

    enc = ObservationEncoder(variant, opts)
    meta = {"format": FORMAT, "variant": variant, "players": n_players(variant), "options": options_to_dict(opts, variant),
            "observation": {"version": OBS_VERSION, "shape": list(enc.shape),
                            "blocks": {name: [sl.start, sl.stop] for name, sl in enc.slices.items()}},
            "oracle": None, "source": source,
            "fields": {"obs": "float32 [C, 34]", "mask": "bool [111]", **{k: np.dtype(v).name for k, v in FIELDS.items()}}}
    if oracle:
        o = OracleEncoder(variant, opts)
        meta["oracle"] = {"version": ORACLE_VERSION, "shape": [o.shape[0] - enc.shape[0], o.shape[1]],
                          "note": "the rows the oracle encoding adds after the v1 rows (oracle_obs = obs + these)"}
    return meta


def write_from_play(out: str | Path, agent_specs: Sequence[str], variant: str = "kawuxing3", options: Any = None, *,
                    walls: int = 100, seed: int = 0, first_wall: int = 0, all_seatings: bool = False,
                    oracle: bool = False, shard_size: int = 16384, batch_size: int = 256, progress=None) -> dict:
    """Play ``walls`` seeded walls with the agents and write every decision (see the module docstring).

    Seats: with as many agents as seats, agent ``i`` sits in seat ``i``; with fewer, the list repeats (``A B``
    at three seats: A B A); ``all_seatings`` replays each wall under every seating of :func:`agents.tournament.arena.seatings`
    instead.  Returns the meta.json content."""
    from agents import make_agent
    from agents.tournament.arena import play_duplicate, seatings
    from agents.players.base import resolve_options
    from mjenv.rules.options import n_players

    n = n_players(variant)
    if walls < 1:
        raise DatasetError(f"--walls must be >= 1, got {walls}")
    if not agent_specs:
        raise DatasetError("--agents: name at least one agent")
    opts = resolve_options(variant, options)
    distinct = list(dict.fromkeys(agent_specs))  # one agent object per distinct name, deciding for all its seats
    try:
        agents = [make_agent(s, variant, opts, seed=seed * 1000 + i) for i, s in enumerate(distinct)]
    except ValueError as exc:
        raise DatasetError(f"--agents: {exc}") from None
    if all_seatings:
        plan = seatings(len(agents), n)
    else:
        plan = [tuple(distinct.index(agent_specs[s % len(agent_specs)]) for s in range(n))]
    source = {"kind": "play", "agents": [a.name for a in agents], "seatings": [list(p) for p in plan], "walls": walls,
              "first_wall": first_wall, "seed": seed, "all_seatings": all_seatings}
    rec = _new_writer(out, shard_size, variant, opts, oracle, source, tables=min(batch_size, walls * len(plan)))
    cpu, start = time.process_time(), time.perf_counter()
    try:
        res = play_duplicate(agents, variant, opts, walls=walls, seed=seed, first_wall=first_wall, batch_size=batch_size,
                             seat_plan=plan, on_record=rec.on_record, on_step=rec.on_step, progress=progress,
                             scored=False)
    finally:
        for a in agents:
            if hasattr(a, "close"):
                a.close()
    return rec.finish({"hands": len(res.records), "seconds": time.perf_counter() - start,
                          "cpu_seconds": time.process_time() - cpu})


def write_from_replays(out: str | Path, files: Sequence[str | Path], *, oracle: bool = False,
                       shard_size: int = 16384) -> dict:
    """Re-simulate the hands of ``mjenv-replay-v1`` files and write their decisions (one variant and rule set
    for the whole dataset; a hand of other rules is an error naming its file).  ``wall`` is the header's
    ``table_id`` (the hand's index when it has none), ``agent`` the index of the header's agent name in
    ``meta.source.agents``."""
    from mjenv.engine.core import Engine
    from mjenv.replay import ReplayError, deal_header, read_replay

    hands = []
    for f in files:
        try:
            hands += read_replay(f)
        except (OSError, ReplayError) as exc:
            raise DatasetError(f"--from-replays {f}: {exc}") from None
    if not hands:
        raise DatasetError("--from-replays: no hands in the files given")
    h0 = hands[0].header
    opts = Engine(h0["variant"], 1, options=dict(h0["options"])).opts
    names: list[str] = []
    source = {"kind": "replays", "files": [str(f) for f in files], "agents": names}
    rec = _new_writer(out, shard_size, h0["variant"], opts, oracle, source)
    for k, rep in enumerate(hands):
        h = rep.header
        if h["variant"] != h0["variant"] or h["options"] != h0["options"]:
            raise DatasetError(f"--from-replays {rep.path}: its rules differ from {hands[0].path}'s; one rule set per dataset")
        eng = deal_header(h)
        agent_names = list(h.get("agents") or [])
        agent_idx = []
        for s in range(eng.n):
            name = agent_names[s] if s < len(agent_names) else "unknown"
            if name not in names:
                names.append(name)
            agent_idx.append(names.index(name))
        wall = h.get("table_id", k)
        wall = wall if isinstance(wall, int) else k
        for step, a in enumerate(rep.actions):
            actor, act = int(eng.state.actor[0]), int(a["action"])
            if eng.done[0] or int(a["seat"]) != actor or not (0 <= act < N_ACTIONS) or not eng.mask[0, act]:
                raise DatasetError(f"--from-replays {rep.path}: hand {k + 1} does not replay (mjenv replay --verify says why)")
            rec.on_step(eng, np.array([0]), np.array([act]), np.array([k]), np.array([step]), np.array([agent_idx[actor]]))
            eng.step(np.array([act]))
        if not eng.done[0]:
            raise DatasetError(f"--from-replays {rep.path}: hand {k + 1} stops before its end")
        rec.on_record(SimpleNamespace(game=k, wall=wall, deltas=[float(x) for x in eng.results[0]["deltas"]]))
    return rec.finish({"hands": len(hands)})


def add_dataset_subcommand(subparsers) -> argparse.ArgumentParser:
    """Add ``dataset`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "dataset", help="write a dataset of decisions (observation, mask, action, reward, ...) for offline learning",
        description="Play agents on seeded walls (or re-simulate replay files) and write every decision to a "
                    "sharded mjenv-dataset-v1 folder (docs/dataset.md).",
    )
    p.add_argument("--agents", nargs="+", default=["heuristic"], metavar="AGENT",
                   help="agents by seat (heuristic, random, a checkpoint *.pt, cmd:COMMAND); fewer than the seats repeat")
    p.add_argument("--walls", type=int, default=100, help="walls to play (each once, or under every seating)")
    p.add_argument("--out", required=True, help="dataset folder to create (must be new or empty)")
    p.add_argument("--from-replays", nargs="+", default=None, metavar="FILE",
                   help="re-simulate these mjenv-replay-v1 files instead of playing")
    p.add_argument("--variant", default="kawuxing3")
    p.add_argument("--ruleset", default=None)
    p.add_argument("--preset", default=None)
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--seed", type=int, default=0, help="wall seed: wall w is the engine's seeded wall (seed, w)")
    p.add_argument("--first-wall", type=int, default=0)
    p.add_argument("--all-seatings", action="store_true", help="replay every wall under every seating of the agents")
    p.add_argument("--oracle", action="store_true", help="also store the mjenv-oracle-v1 rows (every hand, the wall)")
    p.add_argument("--shard-size", type=int, default=16384, help="decisions per shard file (default 16384)")
    p.add_argument("--batch-size", type=int, default=256, help="tables played at once")
    p.set_defaults(func=dataset_main)
    return p


def dataset_main(args: argparse.Namespace) -> int:
    """Run ``mjenv dataset``; bad arguments raise ``ValueError`` naming the flag (exit 2 in the CLI)."""
    from mjenv.rules.options import load_rules, parse_option_assignments

    for flag, value, low in (("--walls", args.walls, 1), ("--seed", args.seed, 0), ("--first-wall", args.first_wall, 0),
                             ("--shard-size", args.shard_size, 1), ("--batch-size", args.batch_size, 1)):
        if value < low:
            raise DatasetError(f"{flag} must be >= {low}, got {value}")
    start, cpu = time.perf_counter(), time.process_time()
    if args.from_replays:
        meta = write_from_replays(args.out, args.from_replays, oracle=args.oracle, shard_size=args.shard_size)
    else:
        opts = load_rules(args.variant, args.ruleset, args.preset, parse_option_assignments(args.option))
        try:
            meta = write_from_play(args.out, args.agents, args.variant, opts, walls=args.walls, seed=args.seed,
                                   first_wall=args.first_wall, all_seatings=args.all_seatings, oracle=args.oracle,
                                   shard_size=args.shard_size, batch_size=args.batch_size)
        except ModuleNotFoundError as exc:
            raise DatasetError(f"--agents: needs an optional dependency ({exc})") from None
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    size = sum((Path(args.out) / s["file"]).stat().st_size for s in meta["shards"])
    print(f"wrote {meta['decisions']:,} decisions of {meta['hands']:,} hands to {args.out} in {len(meta['shards'])} "
          f"shard(s), {size / 1e6:.1f} MB, in {took:.1f} s ({cpu:.1f} CPU s; {meta['decisions'] / max(took, 1e-9):,.0f} "
          f"decisions/s)")
    return 0
