"""Benchmark of ``evaluate.py --ray``: one duplicate tournament played locally, then sharded over a local Ray.

Prints hands/s of both runs (wall clock), the CPU seconds each spent, a CPU-time speed-up that other load
on the machine does not distort (the local run's CPU seconds over the busiest worker's), and how busy the
machine was during each run (from ``/proc/stat``: all cores, ours, and the rest, i.e. other people's jobs
plus Ray's own daemons), then checks that both runs played the same hands.  Like Ray's workers, the local
run uses one OpenMP/BLAS thread unless ``OMP_NUM_THREADS`` is set::

    python bench/ray_tournament.py --walls 1000 --workers 2
    python bench/ray_tournament.py --agents heuristic random --walls 600

Agents default to what ``python evaluate.py`` plays: random, heuristic and the shipped checkpoint (when
torch is installed).  Needs the ray extra (``pip install -e .[ray]``).
"""

from __future__ import annotations

import os

# Ray runs its workers with one OpenMP/BLAS thread; give the local run the same, or its spare BLAS and torch
# threads spin on a loaded machine (2-3x the CPU time here).  Set OMP_NUM_THREADS yourself to override.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's packages, as evaluate.py sees them

from agents import make_agent, shipped_checkpoints  # noqa: E402
from agents.tournament.arena import play_duplicate  # noqa: E402
from agents.tournament.distributed import Job, play_on_ray  # noqa: E402


def cpu_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all cores from /proc/stat (``(0, 0)`` where there is none)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return 0, 0
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v[:8]) - idle, sum(v[:8])


class Load:
    """Average busy cores of the whole machine between ``start()`` and ``stop()``."""

    def start(self) -> "Load":
        """Begin measuring."""
        self.j0, self.t0 = cpu_jiffies(), time.perf_counter()
        return self

    def stop(self) -> float:
        """Average number of busy cores since :meth:`start`."""
        (b0, t0), (b1, t1) = self.j0, cpu_jiffies()
        return (os.cpu_count() or 1) * (b1 - b0) / (t1 - t0) if t1 > t0 else float("nan")


def agents_for(names: list[str]) -> list:
    """Agents seeded as evaluate.py seeds them (seed 0)."""
    return [make_agent(n, seed=i, **({"deterministic": True} if n.endswith(".pt") else {})) for i, n in enumerate(names)]


def main(argv=None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", nargs="*", default=None, help="agents (default: random, heuristic, shipped checkpoint)")
    p.add_argument("--walls", type=int, default=1000)
    p.add_argument("--workers", type=int, default=2, help="CPUs of the local Ray")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    names = a.agents
    if not names:
        names = ["random", "heuristic"]
        try:
            import torch  # noqa: F401
        except ModuleNotFoundError:
            pass
        else:
            names += [str(c) for c in shipped_checkpoints("kawuxing3")[:1]]

    print(f"{platform.node()}: {os.cpu_count()} cores, load average before {os.getloadavg()[0]:.2f}; agents "
          f"{', '.join(Path(n).name for n in names)}; {a.walls} walls, batch {a.batch_size}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")

    load = Load().start()
    local = play_duplicate(agents_for(names), walls=a.walls, seed=a.seed, batch_size=a.batch_size)
    busy_local = load.stop()
    hands = len(local.records)

    per_pid: dict[int, float] = defaultdict(float)
    shard_hands: list[int] = []

    def seen(shard, part):
        per_pid[part["pid"]] += part["cpu_seconds"]
        shard_hands.append(shard.hands)

    load = Load().start()
    t0, c0 = time.perf_counter(), time.process_time()
    (remote,) = play_on_ray([Job("bench", agents_for(names), "kawuxing3", None, a.walls, a.seed, 0, a.batch_size)],
                            workers=a.workers, progress=False, on_shard=seen)
    total_wall, driver_cpu = time.perf_counter() - t0, time.process_time() - c0
    busy_ray = load.stop()
    same = [(r.wall, r.seating, r.deltas, r.discards) for r in local.records] == \
        [(r.wall, r.seating, r.deltas, r.discards) for r in remote.records]

    worker_cpu = sum(per_pid.values())
    ours_ray = (worker_cpu + driver_cpu) / total_wall
    print(f"local: {hands} hands in {local.seconds:.1f} s = {local.hands_per_second:.1f} hands/s; CPU {local.cpu_seconds:.1f} s "
          f"({local.hands_per_cpu_second:.1f} hands per CPU s); machine busy {busy_local:.2f} cores of {os.cpu_count()}, "
          f"ours {local.cpu_seconds / local.seconds:.2f}, others {busy_local - local.cpu_seconds / local.seconds:.2f}")
    print(f"ray, {a.workers} workers, {len(shard_hands)} shards of {min(shard_hands)}–{max(shard_hands)} hands: "
          f"playing {remote.seconds:.1f} s = {hands / remote.seconds:.1f} hands/s; with Ray start and stop {total_wall:.1f} s "
          f"= {hands / total_wall:.1f} hands/s")
    print(f"  worker CPU in the playing loops {worker_cpu:.1f} s ({hands / worker_cpu:.1f} hands per CPU s), per worker "
          + ", ".join(f"{c:.1f}" for c in sorted(per_pid.values(), reverse=True)) + f" s; driver CPU {driver_cpu:.1f} s")
    print(f"  machine busy {busy_ray:.2f} cores, ours (workers' playing + driver) {ours_ray:.2f}, the rest "
          f"(other jobs, Ray's daemons and worker start-up) {busy_ray - ours_ray:.2f}")
    print(f"speed-up, wall clock: playing {local.seconds / remote.seconds:.2f}x, with Ray start and stop "
          f"{local.seconds / total_wall:.2f}x; CPU time (local CPU s / busiest worker's CPU s): "
          f"{local.cpu_seconds / max(per_pid.values()):.2f}x")
    print(f"same hands as the local run: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
