"""Throughput of the engine, the observation encoder and the AEC env; prints figures (and a markdown table).

Measures, for each variant asked for, each configuration in a fresh subprocess pinned to one CPU core
(like ``taskset -c 0``) so that peak memory (``resource.getrusage`` max RSS) belongs to that configuration
alone:

* ``engine:B`` — ``Engine(record_events=False)`` with B tables, uniformly random legal actions, finished
  tables re-dealt at once: decisions/s, timed after a warm-up in which every table has finished one hand
  (so the tables are spread over all points of a hand: steady state), and hands/s = decisions/s ÷ the mean
  decisions of a hand (over every hand finished in the warm-up and the timed run);
* ``obs:B`` — the same plus the ``mjenv-obs-v1`` encoding of every acting seat after each step;
* ``aec`` — ``mjenv.env()`` (one table, wrapped as users get it), random legal actions, the acting
  agent's observation read with ``last()`` at every step.

The random action choice (one ``rng.random((B, 111))`` per step) is inside the timed loop, as it would be
for any policy.  Every variant plays its default rules.  With several variants the markdown table also
compares each run with the same run of ``kawuxing3`` (the issue's aim: 4-player variants within a factor
of 1.5 of Kawuxing-3p).  The load average of the machine is printed before and after each run: the figures
are only comparable on a quiet machine.  Usage::

    python bench/throughput.py                      # default set, kawuxing3, about a minute
    python bench/throughput.py --seconds 10 --markdown
    python bench/throughput.py engine:4096 obs:4096 --variants all --markdown   # every variant
    python bench/throughput.py --profile engine:4096 --variant gejiu  # where the time goes (cProfile)
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
    """variant to measure (``--profile`` and ``--one``)"""
    variants: list[str] | None = None
    """variants to measure, each with every configuration (default: ``[variant]``; ``all``: every variant)"""
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
    length = np.zeros(batch, np.int64)  # decisions so far in each table's current hand
    finished: list[np.ndarray] = []  # decisions of every hand played from its deal to its end

    def run(budget: float, until_redealt: bool = False) -> tuple[int, int, float]:
        nonlocal next_id
        d0, hands, t0 = eng.n_decisions, 0, time.perf_counter()
        while time.perf_counter() - t0 < budget and not (until_redealt and redealt.all()):
            done = eng.done
            if done.any():
                idx = np.flatnonzero(done)
                hands += len(idx)
                finished.append(length[idx])
                length[idx] = 0
                redealt[idx] = True
                eng.reset(seed=0, tables=idx, table_ids=np.arange(next_id, next_id + len(idx)))
                next_id += len(idx)
            if with_obs:
                enc.encode(eng.state, eng.state.actor, out=out, engine=eng)
            m = eng.mask
            length[~eng.done] += 1  # every live table's seat decides once per step
            eng.step((rng.random(m.shape) * m).argmax(1))
        return eng.n_decisions - d0, hands, time.perf_counter() - t0

    # Warm-up until every table has finished a hand: lookup tables are built and the tables are at
    # different points of their hands.
    run(300.0, until_redealt=True)
    decisions, hands, dt = run(seconds)
    # hands/s = decisions/s ÷ decisions per hand.  Counting the hands that end inside the window instead
    # is noisy at large B: a 4-player hand takes about 100 decisions per table, so B = 4096 tables need
    # ~400 k decisions (several seconds) per round of hands, and finished hands arrive in waves.
    per_hand = float(np.concatenate(finished).mean())
    return {
        "decisions_per_s": decisions / dt,
        "hands_per_s": decisions / dt / per_hand,
        "decisions_per_hand": per_hand,
        "hands_in_window": hands,
        "seconds": dt,
        "decisions": decisions,
    }


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
    return {
        "decisions_per_s": decisions / dt,
        "hands_per_s": hands / dt,
        "decisions_per_hand": decisions / max(hands, 1),
        "seconds": dt,
        "decisions": decisions,
    }


def run_one(spec: str, args: Args) -> dict:
    """Run one configuration of ``args.variant`` in this process and return its figures."""
    _pin(args.core)
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    kind, _, b = spec.partition(":")
    if kind == "aec":
        res = _aec_loop(args.variant, args.seconds)
    elif kind in ("engine", "obs"):
        res = _engine_loop(args.variant, int(b), args.seconds, with_obs=kind == "obs")
    else:
        raise SystemExit(f"unknown configuration {spec!r}; use engine:B, obs:B or aec")
    res["spec"] = spec
    res["variant"] = args.variant
    res["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    res["load"] = [load_before, os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")]
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


def _markdown(rows: list[dict]) -> str:
    """The figures as a markdown table; with several variants, each run's ratio to the same run of kawuxing3."""
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    ref = {r["spec"]: r for r in rows if r["variant"] == "kawuxing3"}
    compare = len(variants) > 1 and bool(ref)
    head = "| variant | run | decisions/s | decisions/hand | hands/s | peak RSS (MB) | load (before → after) |"
    rule = "|---|---|---:|---:|---:|---:|---|"
    if compare:
        head += " kawuxing3 ÷ variant, decisions/s | kawuxing3 ÷ variant, hands/s |"
        rule += "---:|---:|"
    lines = [head, rule]
    for r in rows:
        line = (
            f"| {r['variant']} | {r['spec']} | {r['decisions_per_s']:,.0f} | {r['decisions_per_hand']:.1f} "
            f"| {r['hands_per_s']:,.1f} "
            f"| {r['peak_rss_mb']:,.0f} | {r['load'][0]:.1f} → {r['load'][1]:.1f} |"
        )
        if compare:
            k3 = ref.get(r["spec"])
            if k3 is None:
                line += " | |"
            else:
                line += (
                    f" {k3['decisions_per_s'] / r['decisions_per_s']:.2f} |"
                    f" {k3['hands_per_s'] / max(r['hands_per_s'], 1e-9):.2f} |"
                )
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run every configuration of every variant in its own pinned subprocess and print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="*", default=list(DEFAULT_RUNS))
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--variant", default="kawuxing3")
    p.add_argument("--variants", nargs="+", default=None, help="several variants, or 'all'")
    p.add_argument("--core", type=int, default=0)
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--profile", default=None)
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)  # internal: run one spec, print JSON
    ns = p.parse_args(argv)
    variants = ns.variants or [ns.variant]
    if variants == ["all"]:
        from mjenv import VARIANTS

        variants = list(VARIANTS)
    args = Args(ns.runs, ns.seconds, ns.variant, variants, ns.core, ns.markdown, ns.profile)
    if ns.one:
        print(json.dumps(run_one(ns.one, args)))
        return 0
    if args.profile:
        profile_one(args.profile, args)
        return 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"# mjenv throughput: {', '.join(variants)}, {platform.processor() or platform.machine()}, "
        f"python {platform.python_version()}, load average {load:.2f} on {os.cpu_count()} cores, "
        f"{args.seconds:g} s per run, pinned to core {args.core}"
    )
    rows = []
    for variant in variants:
        for spec in args.runs:
            cmd = [
                sys.executable,
                __file__,
                "--one",
                spec,
                "--seconds",
                str(args.seconds),
                "--variant",
                variant,
                "--core",
                str(args.core),
            ]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{variant} {spec}: failed\n{proc.stderr.strip()}", file=sys.stderr)
                return 1
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append(res)
            print(
                f"{variant:>12} {spec:>12}: {res['decisions_per_s']:>12,.0f} decisions/s"
                f"  {res['hands_per_s']:>10,.1f} hands/s  peak RSS {res['peak_rss_mb']:,.0f} MB"
                f"  load {res['load'][0]:.1f} → {res['load'][1]:.1f}",
                flush=True,
            )
    if args.markdown:
        print()
        print(_markdown(rows))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    raise SystemExit(main())
