"""Rollout throughput of ``train.py --ray``: all-seat rollout workers as Ray actors, 1 worker against 2.

This starts one local Ray with as many CPUs as the largest worker count of ``--workers`` (default 1 and 2), builds
that many :class:`agents.training.ppo.SeatRollouts` actors exactly as ``train.py --ray`` does (``--tables`` tables and
``--n_steps`` steps each, the default network, self-play in every seat), warms them up with one rollout, then
runs ``--iterations`` rounds; a round runs one iteration with the first W actors for each worker count W in turn
(alternating, so that the machine's changing load does not favour one count): each iteration broadcasts the
weights (``ray.put`` once, every worker reads the same object), collects every worker's samples and merges them
in the driver, as the trainer's loop does before its PPO update.

Figures, per iteration (medians): the samples; each worker's CPU seconds inside ``collect`` (``time.process_time``
in the actor) and its whole process's CPU seconds over the iteration (``collect`` plus handing the result to Ray's
object store and Ray's own threads in that process); the driver's CPU seconds for the broadcast, the wait and the
merge; and the wall time.  The throughput in CPU time is samples / (the slowest worker's CPU + the driver's CPU):
what the iteration costs on its critical path when every process has a core of its own, independent of what else
runs on the machine; it is given three ways: ``collect`` alone, ``collect`` + driver (the headline figure), and
worker process + driver.  The wall-clock rate is printed too, but on a shared machine it measures the load.  The
last line is one JSON object ``{"1": samples/CPU s, "2": …, "ratio": …, "ratio_collect": …, "ratio_process": …}``
(the rates and ``ratio`` with the driver counted)::

    python bench/ray_rollouts.py                        # 64 tables × 128 steps per worker, 3 rounds
    python bench/ray_rollouts.py --workers 1 2 4 --iterations 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def measure(counts: list[int], a: argparse.Namespace) -> dict[int, dict]:
    """One local Ray with ``max(counts)`` CPUs and as many rollout actors; ``a.iterations`` rounds, each running one
    iteration on the first W actors for every W of ``counts`` in turn (so a change of the machine's load hits
    every W alike); medians per W."""
    import torch

    import train
    from agents.tournament.distributed import connect
    from agents.training.ppo import SeatNet, merge_batches, remote_rollouts, seat_spec
    from mjenv.encoding.observation import ObservationEncoder
    from mjenv.rules import load_rules

    rules = load_rules("kawuxing3")
    shape = ObservationEncoder(rules).shape
    args = train.Args(num_envs=a.tables, n_steps=a.n_steps, opponents=["self"], opponent_weights=[1.0], threads=1,
                      seed=a.seed)
    spec = seat_spec(args, rules, shape, None)
    net = SeatNet(shape, args.channels, args.hidden, args.value_hidden)
    ray = connect("local", max(counts))
    rows: dict[int, list[dict]] = {w: [] for w in counts}
    try:
        actors = remote_rollouts(ray, spec, max(counts))
        state = ray.put({k: v.detach().clone() for k, v in net.state_dict().items()})
        ray.get([w.collect.remote(state) for w in actors])  # warm-up: compiled code loaded, buffers touched
        for _ in range(a.iterations):
            for workers in counts:
                used = actors[:workers]
                before = ray.get([w.process_cpu.remote() for w in used])
                cpu0, wall0 = time.process_time(), time.perf_counter()
                ref = ray.put({k: v.detach().clone() for k, v in net.state_dict().items()})
                batch = merge_batches(ray.get([w.collect.remote(ref) for w in used]))
                driver, wall = time.process_time() - cpu0, time.perf_counter() - wall0
                after = ray.get([w.process_cpu.remote() for w in used])
                rows[workers].append({"samples": batch["stats"]["samples"], "worker_cpu": max(batch["stats"]["worker_cpu"]),
                                      "worker_process_cpu": max(y - x for x, y in zip(before, after)),
                                      "driver_cpu": driver, "wall": wall})
                del batch
    finally:
        ray.shutdown()
    out = {}
    for workers, rs in rows.items():
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        med["worker_rate"] = med["samples"] / med["worker_cpu"]
        med["cpu_rate"] = med["samples"] / (med["worker_cpu"] + med["driver_cpu"])
        med["process_rate"] = med["samples"] / (med["worker_process_cpu"] + med["driver_cpu"])
        med["wall_rate"] = med["samples"] / med["wall"]
        out[workers] = med
    return out


def main(argv: list[str] | None = None) -> dict:
    """Measure every worker count (see the module docstring); prints a table and, last, the JSON line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to measure")
    p.add_argument("--tables", type=int, default=64, help="engine tables per worker")
    p.add_argument("--n_steps", type=int, default=128, help="steps per table per rollout")
    p.add_argument("--iterations", type=int, default=3, help="measured rounds (one rollout per worker count each)")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    if min(a.workers) < 1 or a.tables < 1 or a.n_steps < 1 or a.iterations < 1:
        p.error("--workers, --tables, --n_steps and --iterations must be >= 1")
    results = measure(sorted(set(a.workers)), a)
    print(f"{'workers':>7} {'samples':>8} {'collect CPU s':>13} {'process CPU s':>13} {'driver CPU s':>12} "
          f"{'samples/CPU s: collect':>22} {'+ driver':>9} {'process + driver':>16} {'wall s':>7} {'samples/wall s':>14}")
    for w, r in results.items():
        print(f"{w:>7} {r['samples']:>8,.0f} {r['worker_cpu']:>13.3f} {r['worker_process_cpu']:>13.3f} "
              f"{r['driver_cpu']:>12.3f} {r['worker_rate']:>22,.0f} {r['cpu_rate']:>9,.0f} {r['process_rate']:>16,.0f} "
              f"{r['wall']:>7.2f} {r['wall_rate']:>14,.0f}")
    out = {str(w): round(r["cpu_rate"], 1) for w, r in results.items()}
    if 1 in results and 2 in results:
        for key, rate in (("ratio", "cpu_rate"), ("ratio_collect", "worker_rate"), ("ratio_process", "process_rate")):
            out[key] = round(results[2][rate] / results[1][rate], 2)
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
