"""Duplicate tournaments sharded over Ray tasks: a local Ray on this machine's cores, or a Ray cluster.

This module owns ``evaluate.py --ray``: it splits each tournament's walls × seatings into shards
(:func:`plan_shards`), plays every shard with :func:`agents.tournament.arena.play_duplicate` in a Ray task, and merges
the shards back into one :class:`~agents.tournament.arena.TournamentResult` with the records in the order a single
local run gives.  The hands are the same as a local run's with the same seed, whatever the number of
workers: walls are seeded by ``(seed, wall)`` and the agents' random draws by per-decision keys
(:mod:`agents.players.keyrng`), so neither depends on which process plays which hand.

Several tournaments (``evaluate.py --compare``: one per rule configuration) are submitted at once and
share the workers.  Checkpoint agents travel through Ray's object store: the driver ``ray.put``\\s each
checkpoint's bytes once and the workers rebuild the network from them (no file path has to exist on a
worker).  Workers must run the same mjenv code as the driver; a shard from a worker whose code differs is
an error.  Ray is imported only here, and only when a Ray run is asked for (``pip install -e .[ray]``).
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Sequence

from agents.tournament.arena import GameRecord, TournamentResult, play_duplicate, seatings
from mjenv.engine.threads import THREADS_ENV
from mjenv.rules.options import n_players

__all__ = ["Job", "Shard", "RayUnavailable", "plan_shards", "play_shard", "merge_shards", "play_on_ray", "code_fingerprint"]

_CODE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding the agents and mjenv packages


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster could not be reached."""


@dataclass
class Job:
    """One duplicate tournament to play: the arguments of :func:`agents.tournament.arena.play_duplicate`."""

    label: str
    agents: list
    variant: str
    options: Any
    walls: int
    seed: int = 0
    first_wall: int = 0
    batch_size: int = 256
    replay_dir: Path | None = None
    n_replays: int = 0


@dataclass(frozen=True)
class Shard:
    """Walls ``first_wall .. first_wall + walls - 1`` of job ``job`` under seatings ``seat_start .. seat_stop - 1``."""

    job: int
    first_wall: int
    walls: int
    seat_start: int
    seat_stop: int

    @property
    def hands(self) -> int:
        """Number of hands in the shard."""
        return self.walls * (self.seat_stop - self.seat_start)


def plan_shards(walls: int, n_seatings: int, n_shards: int, *, job: int = 0, first_wall: int = 0) -> list[Shard]:
    """Shards of near-equal size covering ``walls × n_seatings``: ``n_shards`` contiguous wall ranges with every
    seating while there are enough walls, else single walls each split into ``ceil(n_shards / walls)`` seating
    ranges (so at least ``n_shards``, fewer than ``n_shards + walls``, never more than the hands)."""
    if walls < 1 or n_seatings < 1:
        raise ValueError("walls: need at least one wall and one seating")
    n_shards = max(1, min(n_shards, walls * n_seatings))
    if n_shards <= walls:
        bounds = [round(i * walls / n_shards) for i in range(n_shards + 1)]
        return [Shard(job, first_wall + a, b - a, 0, n_seatings) for a, b in zip(bounds, bounds[1:]) if b > a]
    per_wall = min(n_seatings, math.ceil(n_shards / walls))
    cuts = [round(i * n_seatings / per_wall) for i in range(per_wall + 1)]
    return [Shard(job, first_wall + w, 1, a, b) for w in range(walls) for a, b in zip(cuts, cuts[1:]) if b > a]


def shard_count(hands: int, workers: int, jobs: int, batch_size: int) -> int:
    """Shards for one job of ``hands`` hands: enough to keep every worker busy (up to 4 per worker for load
    balance) while each shard, where possible, holds 4 batches so the engine's tables stay full."""
    want = max(math.ceil(workers / max(1, jobs)), hands // max(1, 4 * batch_size))
    if want > workers:
        want = math.ceil(want / workers) * workers  # whole rounds: no worker left idle at the end
    return max(1, min(want, 4 * workers, hands))


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of the ``agents`` and ``mjenv`` sources this process runs (Python files and rule data)."""
    h = hashlib.blake2b(digest_size=8)
    for pkg in ("agents", "mjenv"):
        root = _CODE_ROOT / pkg
        for p in sorted(list(root.rglob("*.py")) + list(root.rglob("*.toml"))):
            h.update(str(p.relative_to(_CODE_ROOT)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


# ------------------------------------------------------------------------------------------ agents in transit


def pack_agents(agents: Sequence[Any], put: Callable[[bytes], Any]) -> list[tuple]:
    """Agents in a form to send to workers: a checkpoint agent becomes ``("policy", put(bytes), settings, name)``
    (each distinct checkpoint is ``put`` once), any other agent is sent as itself (``("object", agent)``)."""
    from agents.players.policy import PolicyAgent

    packed: list[tuple] = []
    refs: dict[str, Any] = {}
    for a in agents:
        if isinstance(a, PolicyAgent):
            import torch

            buf = io.BytesIO()
            torch.save(a.checkpoint, buf)
            data = buf.getvalue()
            key = hashlib.blake2b(data, digest_size=16).hexdigest()
            if key not in refs:
                refs[key] = put(data)
            packed.append(("policy", refs[key], dict(a.settings), a.name))
        else:
            packed.append(("object", a))
    return packed


def unpack_agents(packed: Sequence[tuple], get: Callable[[Any], bytes]) -> list[Any]:
    """The agents of :func:`pack_agents`, rebuilt on a worker (``get`` turns a reference back into bytes)."""
    agents = []
    for item in packed:
        if item[0] == "policy":
            from agents.players.policy import PolicyAgent, load_checkpoint

            _, ref, settings, name = item
            agents.append(PolicyAgent(load_checkpoint(get(ref)), name=name, **settings))
        else:
            agents.append(item[1])
    return agents


# ------------------------------------------------------------------------------------------ shards


def play_shard(agents: Sequence[Any], job: Job, shard: Shard, want_replays: bool = False) -> dict:
    """Play one shard; records carry the game numbers of the whole job (wall-major, then seating), and the
    replays of its hands numbered below ``job.n_replays`` come back as ``{game: text}``."""
    plan = seatings(len(agents), n_players(job.variant))
    index = {s: i for i, s in enumerate(plan)}
    sub = plan[shard.seat_start:shard.seat_stop]
    with tempfile.TemporaryDirectory(prefix="mjenv-shard-") as tmp:
        res = play_duplicate(agents, job.variant, job.options, walls=shard.walls, seed=job.seed,
                             first_wall=shard.first_wall, batch_size=job.batch_size, seat_plan=sub,
                             replay_dir=tmp if want_replays else None, n_replays=shard.hands if want_replays else 0,
                             config=job.label)
        replays: dict[int, str] = {}
        for local, r in enumerate(res.records):
            r.game = (r.wall - job.first_wall) * len(plan) + index[r.seating]
            path = Path(tmp) / f"hand_{local:05d}.jsonl"
            if want_replays and r.game < job.n_replays and path.exists():
                replays[r.game] = path.read_text(encoding="utf-8")
    return {"records": res.records, "decisions": res.decisions, "seconds": res.seconds, "cpu_seconds": res.cpu_seconds,
            "replays": replays, "code": code_fingerprint(), "host": os.uname().nodename, "pid": os.getpid()}


def merge_shards(job: Job, names: list[str], parts: Sequence[dict], seconds: float) -> TournamentResult:
    """One result from the shards of ``job``: records in game order, every seating of a wall dealt the same
    tiles, replays written to ``job.replay_dir``; ``cpu_seconds`` sums the workers' CPU time."""
    records: list[GameRecord] = sorted((r for p in parts for r in p["records"]), key=lambda r: r.game)
    n_plan = len(seatings(len(names), n_players(job.variant)))
    if [r.game for r in records] != list(range(job.walls * n_plan)):
        raise AssertionError(f"{job.label}: the shards returned {len(records)} hands, expected {job.walls * n_plan}")
    digests: dict[int, str] = {}
    for r in records:
        if digests.setdefault(r.wall, r.wall_digest) != r.wall_digest:
            raise AssertionError(f"wall {r.wall} was dealt differently in two shards (duplicate broken)")
    if job.replay_dir is not None and job.n_replays > 0:
        Path(job.replay_dir).mkdir(parents=True, exist_ok=True)
        for p in parts:
            for g, text in p["replays"].items():
                path = Path(job.replay_dir) / f"hand_{g:05d}.jsonl"
                tmp = path.with_name(f".{path.name}.tmp")  # whole or absent, as the local run writes them
                tmp.write_text(text, encoding="utf-8")
                tmp.replace(path)
    return TournamentResult(records, names, n_players(job.variant), seconds, sum(p["decisions"] for p in parts),
                            job.label, sum(p["cpu_seconds"] for p in parts))


# ------------------------------------------------------------------------------------------ Ray


def _import_ray():
    try:
        import ray
    except ModuleNotFoundError:
        raise RayUnavailable("--ray needs Ray: pip install -e \".[ray]\"") from None
    return ray


def connect(address: str | None, workers: int = 0):
    """Start a local Ray with ``workers`` CPUs (0 = this machine's cores) when ``address`` is ``None`` or
    ``"local"``, else join the cluster at ``address`` (``auto``, ``HOST:6379`` or ``ray://HOST:10001``).
    Returns the ``ray`` module; a Ray already initialised in this process is used as it is."""
    ray = _import_ray()
    if ray.is_initialized():
        return ray
    if workers < 0:
        raise ValueError(f"ray_workers: must be 0 (all cores) or more, got {workers}")
    quiet = {"include_dashboard": False, "logging_level": "warning", "configure_logging": True}
    if address in (None, "", "local"):
        # Workers import the agents and mjenv packages from the same folder as this process.  They inherit the
        # environment of the Ray started here, so the folder goes on PYTHONPATH while it starts (and only then).  A
        # runtime_env would do the same but costs a second set of workers: the ones Ray starts ahead have none.
        before = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(x for x in (str(_CODE_ROOT), before) if x)
        try:
            ray.init(address="local", num_cpus=workers or os.cpu_count() or 1, **quiet)
        finally:
            if before is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = before
    else:
        try:
            ray.init(address=address, **quiet)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise RayUnavailable(f"ray: cannot join the cluster at {address!r} ({exc})") from None
    return ray


def _shard_task(ray):
    @ray.remote(num_cpus=1)
    def shard_task(packed: list, job: Job, shard: Shard, want_replays: bool) -> dict:
        os.environ[THREADS_ENV] = "1"  # a task holds one CPU: its engines run on one thread (mjenv.engine.threads)
        return play_shard(unpack_agents(packed, ray.get), job, shard, want_replays)

    return shard_task


def play_on_ray(jobs: Sequence[Job], *, address: str | None = None, workers: int = 0, progress: bool = True,
                shards_per_job: int | None = None,
                on_shard: Callable[[Shard, dict], None] | None = None) -> list[TournamentResult]:
    """Play ``jobs`` sharded over Ray (see the module docstring); one result per job, in order.

    ``workers``: CPUs of the local Ray (0 = all cores); on a cluster the most shards in flight at once
    (0 = as many as the cluster has CPUs).  ``shards_per_job`` overrides :func:`shard_count`.  A progress
    bar (tqdm) counts finished shards; ``on_shard(shard, part)`` sees each finished shard's
    :func:`play_shard` result (timings, host and pid of its worker).  The Ray started here is shut down at the end; one that was already
    running in this process is left running.
    """
    was_running = "ray" in sys.modules and sys.modules["ray"].is_initialized()
    ray = connect(address, workers)
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        in_flight = workers if (workers and address not in (None, "", "local")) else cpus
        task = _shard_task(ray)
        names = [[a.name for a in job.agents] for job in jobs]
        packed = [ray.put(pack_agents(job.agents, ray.put)) for job in jobs]
        bare = [ray.put(replace(job, agents=[], replay_dir=None)) for job in jobs]  # agents travel in `packed`
        shards: list[Shard] = []
        for j, job in enumerate(jobs):
            n_plan = len(seatings(len(job.agents), n_players(job.variant)))
            k = shards_per_job or shard_count(job.walls * n_plan, max(1, in_flight), len(jobs), job.batch_size)
            shards += plan_shards(job.walls, n_plan, k, job=j, first_wall=job.first_wall)
        bar = _bar(len(shards), progress)
        start = time.perf_counter()
        pending = list(shards)
        running: dict[Any, Shard] = {}
        parts: list[list[dict]] = [[] for _ in jobs]
        finished = [0.0] * len(jobs)
        me = code_fingerprint()
        while pending or running:
            while pending and len(running) < max(1, in_flight):
                s = pending.pop(0)
                job = jobs[s.job]
                first_game = (s.first_wall - job.first_wall) * len(seatings(len(job.agents), n_players(job.variant))) + s.seat_start
                running[task.remote(packed[s.job], bare[s.job], s, first_game < job.n_replays)] = s
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in done:
                s = running.pop(ref)
                part = ray.get(ref)
                if part["code"] != me:
                    raise RuntimeError(f"ray: the worker on {part['host']} runs different agents/mjenv code than this "
                                       f"process ({part['code']} vs {me}); install the same mjenv on every node")
                parts[s.job].append(part)
                if on_shard is not None:
                    on_shard(s, part)
                finished[s.job] = time.perf_counter() - start
                if bar is not None:
                    bar.update(1)
        if bar is not None:
            bar.close()
        return [merge_shards(job, names[j], parts[j], finished[j]) for j, job in enumerate(jobs)]
    finally:
        if not was_running:
            ray.shutdown()


def _bar(total: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ModuleNotFoundError:
        print("note: pip install tqdm for a progress bar", file=sys.stderr)
        return None
    return tqdm(total=total, desc="ray shards", unit="shard", dynamic_ncols=True, file=sys.stderr)
