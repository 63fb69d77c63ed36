"""Throughput of the engine, the observation encoder and the AEC env beside a peer, RiichiEnv, in one run.

One run measures every configuration asked for, each in a fresh subprocess pinned to the same CPU core
(``os.sched_setaffinity``), and prints decisions per second and the ratio to RiichiEnv's random play
measured in the same run.  Figures are **CPU time** of the measuring process (``time.process_time``): the
machine is shared, and CPU time is what a configuration costs whatever else runs.  Configurations
(``KIND[:B][:VARIANT]``, the variant defaulting to ``--variant``):

* ``riichienv`` — the peer: RiichiEnv (Rust core, ``pip install riichienv``; measured with 0.4.11) playing
  full 4-player hanchan games (``4p-red-half``, ``skip_mjai_logging=True``) with uniformly random legal
  actions; a decision is one seat choosing one action.  Skipped with a message when it is not installed
  (the ratios are then left out);
* ``aec[:V]`` — ``mjenv.env(V)`` (one table, wrapped as users get it), the acting agent's observation read
  with ``last()`` at every step, a random legal action from its ``action_mask`` (its nonzero ids, one picked
  with Python's ``random`` as the peer's loop picks from its legal actions);
* ``engine:B[:V]`` — ``Engine(V, B, record_events=False)``, a random legal action for every table from
  :class:`mjenv.engine.sampling.ActionSampler`, finished tables re-dealt at once (found with
  ``Engine.any_done()`` at every step, then ``Engine.done``);
* ``play:B[:V]`` — the same random play in one engine call a step, ``Engine.random_step`` (:mod:`mjenv.engine.autoplay`:
  the finished tables re-dealt, every table's action drawn by a :class:`mjenv.engine.sampling.TableSampler` and
  the step, in one pass over the tables; on one thread here, as every configuration);
* ``match:B[:V]`` — as ``engine`` but each finished table plays its match on with ``Engine.next_hand`` (a
  table whose session is over is dealt afresh), as tournaments and training with sessions do;
* ``obs:B[:V]`` — the same plus the ``mjenv-obs-v1`` encoding of every table's acting seat after each step,
  into one preallocated buffer;
* ``obs2:B[:V]`` — the same with the compact ``mjenv-obs-v2`` encoding (:mod:`mjenv.encoding.compact`).

Engine runs are timed after a warm-up in which every table has finished one hand (compilation done, tables
spread over all points of a hand); *decisions/hand* is the mean over every hand finished.  The random action
choice is inside the timed loop, as any policy would be.  Rows of a 4-player variant also show their time
per decision relative to Kawuxing-3p's same configuration (the aim: within 1.5).  ``--passes N`` measures
every configuration N times, alternating (peer first in each pass), and reports medians.  Usage::

    python bench/throughput.py                       # the default set (about 3 minutes)
    python bench/throughput.py --seconds 10 --passes 3 --markdown
    python bench/throughput.py engine:4096 obs:4096 --variant gejiu
    python bench/throughput.py --profile engine:4096:gejiu   # where the time goes (cProfile)
    python bench/throughput.py riichienv aec engine:1 --interleave 20 --seconds 1   # paired chunks, on a loaded machine
    python bench/throughput.py riichienv aec --interleave 20 --seconds 0.5 --trees /tmp/old,.   # two checkouts
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

FOUR_PLAYER = ("kawuxing4", "gejiu", "diedaohu", "yangzhou", "yangzhou_new", "liuwei")
DEFAULT_RUNS = (
    "riichienv",
    "aec",
    "engine:1",
    "engine:64",
    "engine:4096",
    *(f"engine:4096:{v}" for v in FOUR_PLAYER),
    "obs:4096",
    "obs2:4096",
)
PEER = "riichienv"


def _pin(core: int) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})


def parse_spec(spec: str, variant: str) -> tuple[str, int, str]:
    """``(kind, batch, variant)`` of a configuration string (see the module docstring)."""
    parts = spec.split(":")
    kind = parts[0]
    if kind == PEER and len(parts) == 1:
        return kind, 1, "riichi"
    if kind == "aec" and len(parts) <= 2:
        return kind, 1, parts[1] if len(parts) == 2 else variant
    if kind in ("engine", "play", "match", "obs", "obs2") and len(parts) in (2, 3) and parts[1].isdigit() and int(parts[1]) >= 1:
        return kind, int(parts[1]), parts[2] if len(parts) == 3 else variant
    raise SystemExit(f"configuration {spec!r}: use riichienv, aec[:VARIANT], engine:B[:VARIANT], play:B[:VARIANT], match:B[:VARIANT], obs:B[:VARIANT] or obs2:B[:VARIANT]")


# ----------------------------------------------------------------------------------------- the loops
def _riichienv_loop(seconds: float) -> dict:
    """RiichiEnv hanchan games with uniformly random legal actions, for ``seconds`` of CPU time."""
    return _riichienv_runner()(seconds)


def _riichienv_runner():
    """A warmed-up RiichiEnv loop and ``run(seconds)``, which plays hanchan games with uniformly random legal actions
    for that much CPU time (whole games) and returns the figures."""
    import importlib.metadata as md
    import random

    from riichienv import RiichiEnv

    rng = random.Random(0)
    next_game = 0

    def game(g: int) -> int:
        env = RiichiEnv(game_mode="4p-red-half", seed=g, skip_mjai_logging=True)
        obs = env.reset()
        k = 0
        while not env.done():
            acts = {}
            for pid, o in obs.items():
                legal = o.legal_actions()
                acts[pid] = legal[rng.randrange(len(legal))]
                k += 1
            obs = env.step(acts)
        env.scores()
        return k

    game(10**6)  # warm-up

    def run(seconds: float) -> dict:
        nonlocal next_game
        decisions = games = 0
        t0 = time.process_time()
        while time.process_time() - t0 < seconds:
            decisions += game(next_game)
            next_game += 1
            games += 1
        dt = time.process_time() - t0
        return {"decisions": decisions, "cpu_s": dt, "games": games, "version": md.version("riichienv")}

    return run


def _aec_loop(variant: str, seconds: float) -> dict:
    return _aec_runner(variant)(seconds)


def _aec_runner(variant: str):
    """A warmed-up AEC env and ``run(seconds)``, which plays on for that much CPU time and returns the figures."""
    import random

    import mjenv

    env = mjenv.env(variant)
    rng = random.Random(0)  # the same choice as the peer's loop: Python's generator over the legal ids
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
            legal = obs["action_mask"].nonzero()[0]
            env.step(int(legal[rng.randrange(len(legal))]))
            k += 1
        return k

    hand()  # warm-up

    def run(seconds: float) -> dict:
        decisions = hands = 0
        t0 = time.process_time()
        while time.process_time() - t0 < seconds:
            decisions += hand()
            hands += 1
        dt = time.process_time() - t0
        return {"decisions": decisions, "cpu_s": dt, "decisions_per_hand": decisions / max(hands, 1)}

    return run


def _engine_loop(variant: str, batch: int, seconds: float, with_obs: bool, match: bool = False,
                 compact: bool = False) -> dict:
    return _engine_runner(variant, batch, with_obs, match, compact)(seconds)


def _play_runner(variant: str, batch: int):
    """``play:B``: a warmed-up engine playing ``Engine.random_step`` and ``run(seconds)`` (CPU seconds), as
    :func:`_engine_runner`; decisions/hand from the re-deals the engine counts (no bookkeeping in the loop)."""
    import numpy as np

    from mjenv.engine.core import Engine
    from mjenv.engine.sampling import TableSampler

    eng = Engine(variant, batch, record_events=False, threads=1)
    sampler = TableSampler(0, batch)
    eng.reset(seed=0)
    eng.random_step(sampler, seed=0)  # (its buffers made)
    check_every = max(1, 256 // batch)
    totals = [0, 0]  # decisions and hands dealt by random_step over every run

    def run(budget: float, until_redealt: bool = False) -> tuple[int, float]:
        d0, t0, steps = eng.n_decisions, time.process_time(), 0
        h0 = 0 if eng._play is None else int(eng._play.redeals.sum())
        while steps % check_every or (time.process_time() - t0 < budget and not (until_redealt and eng._play.redeals.all())):
            eng.random_step(sampler, seed=0)
            steps += 1
        totals[0] += eng.n_decisions - d0
        totals[1] += int(eng._play.redeals.sum()) - h0
        return eng.n_decisions - d0, time.process_time() - t0

    run(600.0, until_redealt=True)  # warm-up: compiled, and every table has finished a hand

    def timed(seconds: float) -> dict:
        decisions, dt = run(seconds)
        return {"decisions": decisions, "cpu_s": dt, "decisions_per_hand": totals[0] / max(1, totals[1])}

    return timed


def _engine_runner(variant: str, batch: int, with_obs: bool, match: bool = False, compact: bool = False):
    """A warmed-up engine (see the module docstring) and ``run(seconds)``, which plays on for that much CPU time
    and returns the figures."""
    import numpy as np

    from mjenv.encoding.compact import CompactEncoder
    from mjenv.encoding.observation import ObservationEncoder
    from mjenv.engine.core import Engine
    from mjenv.engine.sampling import ActionSampler

    eng = Engine(variant, batch, record_events=False)
    enc = (CompactEncoder if compact else ObservationEncoder).for_engine(eng)
    obs = np.empty((batch,) + enc.shape, enc.dtype)
    actions = np.empty(batch, np.int64)
    sampler = ActionSampler(0)
    next_id = batch
    eng.reset(seed=0)
    redealt = np.zeros(batch, bool)
    # Every live table's seat decides once per step, so a hand's decisions are the steps from its deal to
    # its end: counted from the step number at each deal (no per-step bookkeeping inside the timed loop).
    steps = 0
    dealt_at = np.zeros(batch, np.int64)
    finished: list[np.ndarray] = []  # decisions of every hand played from its deal to its end

    # The CPU clock is read once per 256 decisions or so (every step from B = 256 on), as the peer's loop reads
    # it once per game: at B = 1 a clock read per step cost as much as the engine's own Python.
    check_every = max(1, 256 // batch)

    def run(budget: float, until_redealt: bool = False) -> tuple[int, float]:
        nonlocal next_id, steps
        d0, t0 = eng.n_decisions, time.process_time()
        while steps % check_every or (time.process_time() - t0 < budget and not (until_redealt and redealt.all())):
            if eng.any_done():  # (a scalar read at B = 1, where ``eng.done.any()`` built and reduced an array)
                idx = np.flatnonzero(eng.done)
                finished.append(steps - dealt_at[idx])
                redealt[idx] = True
                if match:  # the match goes on; a table whose session is over starts a new one
                    over = eng.session_over[idx]
                    if (~over).any():
                        eng.next_hand(seed=0, tables=idx[~over], table_ids=np.arange(next_id, next_id + (~over).sum()))
                    if over.any():
                        eng.reset(seed=0, tables=idx[over], table_ids=np.arange(next_id, next_id + over.sum()) + batch)
                else:
                    eng.reset(seed=0, tables=idx, table_ids=np.arange(next_id, next_id + len(idx)))
                dealt_at[idx] = steps + eng.done[idx]  # a hand over at its deal (no decision) counts 0
                next_id += len(idx)
            if with_obs:
                enc.encode(eng.state, eng.state.actor, out=obs, engine=eng)
            eng.step(sampler.sample(eng.mask, actions))
            steps += 1
        return eng.n_decisions - d0, time.process_time() - t0

    run(600.0, until_redealt=True)  # warm-up: compiled, and the tables spread over their hands

    def timed(seconds: float) -> dict:
        decisions, dt = run(seconds)
        return {"decisions": decisions, "cpu_s": dt, "decisions_per_hand": float(np.concatenate(finished).mean())}

    return timed


def serve(spec: str, variant: str, core: int) -> None:
    """Set one configuration up (pinned to ``core``), print ``ready``, then for every line ``SECONDS`` on stdin
    play on for that much CPU time and print its figures as JSON, until ``quit`` (``bench/precompiled.py``
    alternates several such processes on one core)."""
    _pin(core)
    kind, batch, var = parse_spec(spec, variant)
    if kind == PEER:
        run = _riichienv_runner()
    elif kind == "aec":
        run = _aec_runner(var)
    elif kind == "play":
        run = _play_runner(var, batch)
    elif kind in ("engine", "match", "obs", "obs2"):
        run = _engine_runner(var, batch, with_obs=kind in ("obs", "obs2"), match=kind == "match", compact=kind == "obs2")
    else:
        raise SystemExit(f"--serve takes riichienv, aec, engine, match or obs configurations, not {spec!r}")
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "quit":
            break
        res = run(float(line))
        print(json.dumps({**res, "decisions_per_s": res["decisions"] / res["cpu_s"]}), flush=True)


def run_one(spec: str, variant: str, seconds: float, core: int) -> dict:
    """Measure one configuration in this process (pinned to ``core``) and return its figures."""
    _pin(core)
    kind, batch, var = parse_spec(spec, variant)
    if kind == PEER:
        res = _riichienv_loop(seconds)
    elif kind == "aec":
        res = _aec_loop(var, seconds)
    elif kind == "play":
        res = _play_runner(var, batch)(seconds)
    else:
        res = _engine_loop(var, batch, seconds, with_obs=kind in ("obs", "obs2"), match=kind == "match",
                           compact=kind == "obs2")
    res.update(
        spec=spec,
        kind=kind,
        batch=batch,
        variant=var,
        decisions_per_s=res["decisions"] / res["cpu_s"],
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    )
    return res


def profile_one(spec: str, variant: str, seconds: float, core: int) -> None:
    """Run one configuration under cProfile and print the functions that take the time."""
    import cProfile
    import pstats

    prof = cProfile.Profile(time.process_time)  # CPU time, as the measurements (a loaded machine's waits left out)
    prof.runcall(run_one, spec, variant, seconds, core)
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(20)
    stats.sort_stats("cumulative").print_stats(25)


def _peer_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("riichienv") is not None


# ----------------------------------------------------------------------------------------- report
def _label(r: dict) -> str:
    if r["kind"] == PEER:
        return f"RiichiEnv {r.get('version', '')} random play (4p hanchan, skip log)".replace("  ", " ")
    if r["kind"] == "aec":
        return f"AEC env `mjenv.env()`, `last()` every step, {r['variant']}"
    what = {"engine": "engine", "play": "engine, `random_step` (one call a step)", "match": "engine, matches (next_hand)", "obs2": "engine + observations v2"}.get(
        r["kind"], "engine + observations")
    return f"{what}, B = {r['batch']}, {r['variant']}"


def summarize(passes: list[list[dict]]) -> list[dict]:
    """Median figures per configuration over the passes, with ratios to the peer and to kawuxing3."""
    rows: dict[str, dict] = {}
    for results in passes:
        for r in results:
            rows.setdefault(r["spec"], {**r, "runs": []})["runs"].append(r["decisions_per_s"])
    for row in rows.values():
        row["decisions_per_s"] = statistics.median(row["runs"])
    peer = next((r for r in rows.values() if r["kind"] == PEER), None)
    for row in rows.values():
        row["vs_peer"] = row["decisions_per_s"] / peer["decisions_per_s"] if peer else None
        ref = next(
            (
                r
                for r in rows.values()
                if r["kind"] == row["kind"] and r["batch"] == row["batch"] and r["variant"] == "kawuxing3"
            ),
            None,
        )
        fourp = row["variant"] in FOUR_PLAYER and ref is not None
        # Time per decision relative to Kawuxing-3p: above 1 the variant is slower.
        row["vs_kawuxing3"] = ref["decisions_per_s"] / row["decisions_per_s"] if fourp else None
    return list(rows.values())


def markdown(rows: list[dict]) -> str:
    """The figures as a markdown table for docs/benchmarks.md."""
    lines = [
        "| configuration | decisions/s (CPU) | ÷ RiichiEnv | time per decision ÷ Kawuxing-3p | decisions/hand | peak RSS (MB) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        peer = f"{r['vs_peer']:.3g}" if r["vs_peer"] is not None else "–"
        k3 = f"{r['vs_kawuxing3']:.2f}" if r["vs_kawuxing3"] is not None else ""
        dph = f"{r['decisions_per_hand']:.1f}" if "decisions_per_hand" in r else ""
        lines.append(
            f"| {_label(r)} | {r['decisions_per_s']:,.0f} | {peer} | {k3} | {dph} | {r['peak_rss_mb']:,.0f} |"
        )
    return "\n".join(lines)


def interleave(runs: list[str], variant: str, seconds: float, reps: int, core: int, trees: list[str] | None = None) -> None:
    """Set every configuration up once in its own pinned ``--serve`` process, then ``reps`` times run each for
    ``seconds`` of CPU time back to back (the peer first), and print per configuration the median over repetitions
    of its decisions/s and of its **paired ratio** to the peer's run of the same repetition, with the quartiles.

    On a loaded machine the load drifts within a pass; a ratio taken from chunks seconds apart follows it far less
    than whole passes minutes apart do.  ``trees`` (checkouts of mjenv, e.g. an older commit in a ``git worktree``):
    every configuration but the peer is served from each tree (its own ``bench/throughput.py``, its package first on
    ``PYTHONPATH``, an empty ``NUMBA_CACHE_DIR`` so that it runs its shipped compiled store as after an install), and
    each tree after the first is also compared with the first, repetition by repetition."""
    import tempfile

    runs = sorted(runs, key=lambda spec: spec != PEER)  # the peer first in every repetition
    jobs = [(spec, None) if spec == PEER or not trees else (spec, tree) for spec in runs for tree in (trees or [None])]
    jobs = list(dict.fromkeys(jobs))  # the peer once
    procs = {}
    for spec, tree in jobs:
        script, env = os.path.abspath(__file__), None
        if tree is not None:
            script = os.path.join(os.path.abspath(tree), "bench", "throughput.py")
            env = dict(os.environ, NUMBA_CACHE_DIR=tempfile.mkdtemp(prefix="mjenv-bench-cache-"))
            env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(tree)] + [x for x in [os.environ.get("PYTHONPATH")] if x])
        cmd = [sys.executable, script, "--serve", spec, "--variant", variant, "--core", str(core)]
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        if p.stdout.readline().strip() != "ready":
            raise SystemExit(f"{spec}{'' if tree is None else ' of ' + tree}: its serving process did not start")
        procs[spec, tree] = p
    rates: dict[tuple, list[float]] = {job: [] for job in procs}
    try:
        for _ in range(reps):
            for job, p in procs.items():
                p.stdin.write(f"{seconds}\n")
                p.stdin.flush()
                rates[job].append(json.loads(p.stdout.readline())["decisions_per_s"])
    finally:
        for p in procs.values():
            p.stdin.write("quit\n")
            p.stdin.flush()
            p.wait()

    def spread(ratios: list[float]) -> str:
        ratios = sorted(ratios)
        q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios[0],) * 3
        return f"{statistics.median(ratios):.3g} | {q1:.3g}–{q3:.3g}"

    peer = rates.get((PEER, None))
    print("| configuration | tree | decisions/s (CPU, median) | ÷ RiichiEnv, median of paired chunks | quartiles |")
    print("|---|---|---:|---:|---:|")
    for (spec, tree), r in rates.items():
        ratio = spread([a / b for a, b in zip(r, peer)]) if peer is not None and spec != PEER else " | "
        print(f"| {spec} | {tree or ''} | {statistics.median(r):,.0f} | {ratio} |")
    if trees and len(trees) > 1:
        print("\n| configuration | tree ÷ first tree | median of paired chunks | quartiles |\n|---|---|---:|---:|")
        for spec in runs:
            for tree in trees[1:] if spec != PEER else ():
                pairs = zip(rates[spec, tree], rates[spec, trees[0]])
                print(f"| {spec} | {tree} ÷ {trees[0]} | {spread([a / b for a, b in pairs])} |")


def main(argv: list[str] | None = None) -> int:
    """Run every configuration in its own pinned subprocess, alternating over the passes, and print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="*", default=list(DEFAULT_RUNS), help="configurations (see the module docstring)")
    p.add_argument("--seconds", type=float, default=5.0, help="CPU seconds timed per configuration, after a warm-up")
    p.add_argument("--variant", default="kawuxing3", help="variant of the configurations that name none")
    p.add_argument("--passes", type=int, default=1, help="measure every configuration this often, alternating")
    p.add_argument("--core", type=int, default=0, help="CPU core every configuration is pinned to")
    p.add_argument("--markdown", action="store_true", help="also print a markdown table")
    p.add_argument("--profile", default=None, help="run one configuration under cProfile instead")
    p.add_argument("--interleave", type=int, default=0, metavar="REPS",
                   help="warm serving processes taking turns, REPS chunks of --seconds each (see interleave())")
    p.add_argument("--trees", default=None, metavar="PATH[,PATH...]",
                   help="with --interleave: serve the configurations from each of these checkouts and compare them")
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)  # internal: run one spec, print JSON
    p.add_argument("--serve", default=None, help=argparse.SUPPRESS)  # internal: see serve()
    ns = p.parse_args(argv)
    if ns.seconds <= 0 or ns.passes < 1 or ns.interleave < 0:
        p.error("--seconds must be > 0, --passes >= 1 and --interleave >= 0")
    if ns.trees is not None:
        if not ns.interleave:
            p.error("--trees needs --interleave")
        for tree in ns.trees.split(","):
            if not os.path.isfile(os.path.join(tree, "bench", "throughput.py")):
                p.error(f"--trees: {tree!r} is not a checkout of mjenv (no bench/throughput.py)")
    for spec in ns.runs:
        parse_spec(spec, ns.variant)
    if ns.one:
        print(json.dumps(run_one(ns.one, ns.variant, ns.seconds, ns.core)))
        return 0
    if ns.serve:
        serve(ns.serve, ns.variant, ns.core)
        return 0
    if ns.profile:
        profile_one(ns.profile, ns.variant, ns.seconds, ns.core)
        return 0
    runs = list(ns.runs)
    if PEER in runs and not _peer_available():
        print("# RiichiEnv is not installed (pip install riichienv==0.4.11): peer skipped, no ratios", flush=True)
        runs.remove(PEER)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"# mjenv throughput: {platform.processor() or platform.machine()}, python {platform.python_version()}, "
        f"load average {load:.2f} on {os.cpu_count()} cores, {ns.seconds:g} CPU s per run, {ns.passes} pass(es), "
        f"pinned to core {ns.core}; figures in CPU time",
        flush=True,
    )
    if ns.interleave:
        interleave(runs, ns.variant, ns.seconds, ns.interleave, ns.core, ns.trees.split(",") if ns.trees else None)
        return 0
    passes = []
    for k in range(ns.passes):
        results = []
        for spec in runs:
            cmd = [sys.executable, os.path.abspath(__file__), "--one", spec, "--seconds", str(ns.seconds)]
            cmd += ["--variant", ns.variant, "--core", str(ns.core)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{spec}: failed\n{proc.stderr.strip()}", file=sys.stderr)
                return 1
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            results.append(res)
            peer = next((r for r in results if r["kind"] == PEER), None)
            ratio = f"  {res['decisions_per_s'] / peer['decisions_per_s']:8.3f}× RiichiEnv" if peer else ""
            print(
                f"pass {k + 1}  {spec:>26}: {res['decisions_per_s']:>12,.0f} decisions/s{ratio}"
                f"  peak RSS {res['peak_rss_mb']:,.0f} MB",
                flush=True,
            )
        passes.append(results)
    rows = summarize(passes)
    if ns.markdown or ns.passes > 1:
        print()
        print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    raise SystemExit(main())
