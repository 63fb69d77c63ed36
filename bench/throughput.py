"""Throughput of the engine, the observation encoder and the AEC env; prints figures (and a markdown table).

Measures, each in a fresh subprocess pinned to one CPU core (like ``taskset -c 0``) so that peak
memory (``resource.getrusage`` max RSS) belongs to that configuration alone:

* ``engine:B`` — ``Engine(record_events=False)`` with B tables, uniformly random legal actions, finished
  tables re-dealt at once: decisions/s and hands/s, timed after a warm-up in which every table has
  finished one hand (so the tables are spread over all points of a hand: steady state);
* ``obs:B`` — the same plus the ``mjenv-obs-v1`` encoding of every acting seat after each step;
* ``aec`` — ``mjenv.env()`` (one table, wrapped as users get it), random legal actions, the acting
  agent's observation read with ``last()`` at every step.

The random action choice (one ``rng.random((B, 111))`` per step) is inside the timed loop, as it would be
for any policy.  Usage::

    python bench/throughput.py                      # default set, about a minute
    python bench/throughput.py --seconds 10 --markdown
    python bench/throughput.py --profile engine:4096  # where the time goes (cProfile, top functions)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from dataclasses import dataclass

DEFAULT_RUNS = ("engine:1", "engine:64", "engine:1024", "engine:4096", "obs:1024", "obs:4096", "aec")


@dataclass
class Args:
    """Command-line arguments."""

    runs: list[str]
    """configurations to run: engine:B, obs:B, aec"""
    seconds: float = 5.0
    """timed seconds per configuration (after a warm-up)"""
    variant: str = "kawuxing3"
    """variant to measure"""
    core: int = 0
    """CPU core to pin each run to"""
    markdown: bool = False
    """also print a markdown table for docs/benchmarks.md"""
    profile: str | None = None
    """run one configuration under cProfile instead and print the top functions"""


def _pin(core: int) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})


def _engine_loop(variant: str, batch: int, seconds: float, with_obs: bool) -> dict:
    import numpy as np

    from mjenv.encoding.observation import ObservationEncoder
    from mjenv.engine.core import Engine

    eng = Engine(variant, batch, record_events=False)
    enc = ObservationEncoder.for_engine(eng)
    out = np.empty((batch,) + enc.shape, np.float32)
    rng = np.random.default_rng(0)
    next_id = batch
    eng.reset(seed=0)

    redealt = np.zeros(batch, bool)

    def run(budget: float, until_redealt: bool = False) -> tuple[int, int, float]:
        nonlocal next_id
        d0, hands, t0 = eng.n_decisions, 0, time.perf_counter()
        while time.perf_counter() - t0 < budget and not (until_redealt and redealt.all()):
            done = eng.done
            if done.any():
                idx = np.flatnonzero(done)
                hands += len(idx)
                redealt[idx] = True
                eng.reset(seed=0, tables=idx, table_ids=np.arange(next_id, next_id + len(idx)))
                next_id += len(idx)
            if with_obs:
                enc.encode(eng.state, eng.state.actor, out=out)
            m = eng.mask
            eng.step((rng.random(m.shape) * m).argmax(1))
        return eng.n_decisions - d0, hands, time.perf_counter() - t0

    # Warm-up until every table has finished a hand: lookup tables are built and the tables are at
    # different points of their hands, so that hands/s is the steady-state rate.
    run(120.0, until_redealt=True)
    decisions, hands, dt = run(seconds)
    return {"decisions_per_s": decisions / dt, "hands_per_s": hands / dt, "seconds": dt, "decisions": decisions}


def _aec_loop(variant: str, seconds: float) -> dict:
    import numpy as np

    import mjenv

    env = mjenv.env(variant)
    rng = np.random.default_rng(0)
    decisions = hands = 0
    seed = 0

    def hand() -> int:
        nonlocal seed
        env.reset(seed=seed)
        seed += 1
        k = 0
        for _agent in env.agent_iter():
            obs, _r, term, trunc, _info = env.last()
            if term or trunc:
                env.step(None)
                continue
            mask = obs["action_mask"]
            env.step(int((rng.random(mask.shape) * mask).argmax()))
            k += 1
        return k

    hand()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        decisions += hand()
        hands += 1
    dt = time.perf_counter() - t0
    return {"decisions_per_s": decisions / dt, "hands_per_s": hands / dt, "seconds": dt, "decisions": decisions}


def run_one(spec: str, args: Args) -> dict:
    """Run one configuration in this process and return its figures."""
    _pin(args.core)
    kind, _, b = spec.partition(":")
    if kind == "aec":
        res = _aec_loop(args.variant, args.seconds)
    elif kind in ("engine", "obs"):
        res = _engine_loop(args.variant, int(b), args.seconds, with_obs=kind == "obs")
    else:
        raise SystemExit(f"unknown configuration {spec!r}; use engine:B, obs:B or aec")
    res["spec"] = spec
    res["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return res


def profile_one(spec: str, args: Args) -> None:
    """Run one configuration under cProfile and print the functions that take the time."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.runcall(run_one, spec, args)
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(20)
    stats.sort_stats("cumulative").print_stats(25)


def main(argv: list[str] | None = None) -> int:
    """Run every configuration in its own pinned subprocess and print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="*", default=list(DEFAULT_RUNS))
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--variant", default="kawuxing3")
    p.add_argument("--core", type=int, default=0)
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--profile", default=None)
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)  # internal: run one spec, print JSON
    ns = p.parse_args(argv)
    args = Args(ns.runs, ns.seconds, ns.variant, ns.core, ns.markdown, ns.profile)
    if ns.one:
        print(json.dumps(run_one(ns.one, args)))
        return 0
    if args.profile:
        profile_one(args.profile, args)
        return 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"# mjenv throughput: {args.variant}, {platform.processor() or platform.machine()}, "
        f"python {platform.python_version()}, load average {load:.2f} on {os.cpu_count()} cores, "
        f"{args.seconds:g} s per run, pinned to core {args.core}"
    )
    rows = []
    for spec in args.runs:
        cmd = [
            sys.executable,
            __file__,
            "--one",
            spec,
            "--seconds",
            str(args.seconds),
            "--variant",
            args.variant,
            "--core",
            str(args.core),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{spec:>12}: failed\n{proc.stderr.strip()}", file=sys.stderr)
            return 1
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.append(res)
        print(
            f"{spec:>12}: {res['decisions_per_s']:>12,.0f} decisions/s  {res['hands_per_s']:>10,.1f} hands/s"
            f"  peak RSS {res['peak_rss_mb']:,.0f} MB"
        )
    if args.markdown:
        print("\n| run | decisions/s | hands/s | peak RSS (MB) |\n|---|---:|---:|---:|")
        for r in rows:
            print(f"| {r['spec']} | {r['decisions_per_s']:,.0f} | {r['hands_per_s']:,.1f} | {r['peak_rss_mb']:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    raise SystemExit(main())
