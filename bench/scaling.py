"""Scaling of the threaded engine: decisions per second (wall and CPU) for each batch size × thread count, in one run.

Every configuration is an ``Engine(V, B, record_events=False, threads=T)`` playing random legal actions with
finished tables re-dealt at once, in one of two loops (``--loop``):

* ``fused`` (the default where the checkout has ``Engine.random_step``): ``engine.random_step(sampler, seed=0,
  steps=S)`` (``--steps``, default 8; an older checkout without ``steps``: one step a call), which re-deals the
  finished tables, draws the actions (:class:`mjenv.engine.sampling.TableSampler`) and steps, ``S`` times, all inside
  each chunk of tables on the engine's threads (:mod:`mjenv.engine.autoplay`);
* ``classic`` (bench/throughput.py's ``engine:B``; an older checkout's only loop): ``engine.reset`` of the finished
  tables, :class:`mjenv.engine.sampling.ActionSampler` as users make it (its default threads, except on one thread
  where ``T = 1``; ``--threaded sampler``: ``threads=T``), ``engine.step``;

optionally encoding every table's acting seat after each step (``--obs v1`` / ``--obs v2``, classic loop).  All
configurations live in this one process, warmed up first (compiled, tables spread over their hands), then
measured in turns for ``--seconds`` of wall time each, ``--passes`` times, medians reported:

* **wall** — decisions per second of wall time (what a user waits for);
* **CPU** — decisions per CPU second of the whole process (every thread's time: what the cores pay), and its ratio to
  the same B's ``threads=1`` rate (below 1: the threads' hand-overs, or cores slower when both run);
* **speed-up** — wall rate ÷ the same B's ``threads=1`` wall rate, measured in the same passes (medians of each), and
  pass by pass (the median and range of each pass's ratio: a pass's two rows ran seconds apart);
* **efficiency** — speed-up ÷ threads;
* **fastest tenth** — decisions per wall second over the fastest tenth of the steps (of the calls, in the fused loop:
  ``S`` steps each; those the machine's other work did not interrupt), and its speed-up: on a loaded machine, what the
  threads give when the cores are free.

The machine's load average is printed at each pass: a shared machine's other work takes cores from the threads,
so compare the ratios of one run, never absolute figures across runs.  ``--trees OLD,NEW`` measures checkouts of
mjenv side by side (each in its own process, set up once; their passes alternate, so both see the same load).  Usage::

    python bench/scaling.py                                   # B = 64, 512, 4096 × threads 1, 2; Kawuxing-3p
    python bench/scaling.py --batches 4096 --threads 1 2 4 --variant gejiu --markdown
    python bench/scaling.py --all-variants --batches 4096     # one row pair per variant
    python bench/scaling.py --batches 4096 --passes 5 --trees /tmp/old,.   # an older commit (a git worktree) beside this
    python bench/scaling.py --batches 4096 --serial redeal sampler   # those pieces on the calling thread
    python bench/scaling.py --batches 4096 --threaded sampler        # the sampler's rows cut over the engine's threads
    python bench/scaling.py --batches 4096 --loop classic            # reset + sample + step as three calls
    python bench/scaling.py --batches 4096 --steps 1                 # the fused loop one step a call
    python bench/scaling.py --batches 4096 --steps 1 8               # one and eight steps a call, side by side
    python bench/scaling.py --batches 4096 --play-tables 256         # chunks of up to 256 tables (default 1024)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np


def _fused(loop: str, obs: str) -> bool:
    """Whether this checkout plays the fused loop (``--loop``; ``auto``: where ``Engine.random_step`` exists)."""
    from mjenv.engine.core import Engine

    return loop == "fused" or (loop == "auto" and obs == "none" and hasattr(Engine, "random_step"))


def _runner(variant: str, batch: int, threads: int, steps: int, obs: str, serial: tuple = (), threaded: tuple = (),
            loop: str = "auto"):
    """A warmed-up configuration and ``run(seconds)`` → (decisions, wall s, CPU s)."""
    from mjenv.encoding.compact import encoder_for
    from mjenv.engine.core import Engine
    from mjenv.engine.sampling import ActionSampler

    eng = Engine(variant, batch, record_events=False, threads=threads)
    if _fused(loop, obs):
        return _fused_runner(eng, steps)
    enc = None
    if obs != "none":
        enc = encoder_for(eng, obs_version="mjenv-obs-v2" if obs == "v2" else "mjenv-obs-v1")
        out = np.empty((batch,) + enc.shape, enc.dtype)
    actions = np.empty(batch, np.int64)
    # the sampler as users make it (its default threads; on one thread in the one-thread rows), or on one thread
    # (--serial sampler), or on the engine's threads (--threaded sampler; its rows cut over them: the same draws)
    if "sampler" in serial or threads == 1:
        kw = {"threads": 1}
    else:
        kw = {"threads": threads} if "sampler" in threaded else {}
    try:
        sampler = ActionSampler(0, **kw)
    except TypeError:  # an older checkout (--trees), whose sampler ran on one thread
        sampler = ActionSampler(0)
    next_id = [batch]
    eng.reset(seed=0)

    def play(seconds: float, until_all_redealt: bool = False) -> tuple[int, float, float, float]:
        redealt = np.zeros(batch, bool)
        d0, w0, c0 = eng.n_decisions, time.perf_counter(), time.process_time()
        steps = []  # (decisions, wall s) of each step
        while True:
            t = time.perf_counter()
            d = eng.n_decisions
            done = eng.done
            if done.any():
                idx = np.flatnonzero(done)
                redealt[idx] = True
                eng.reset(seed=0, tables=idx, table_ids=np.arange(next_id[0], next_id[0] + len(idx)))
                next_id[0] += len(idx)
            if enc is not None:
                enc.encode(eng.state, eng.state.actor, out=out, engine=eng)
            eng.step(sampler.sample(eng.mask, actions))
            now = time.perf_counter()
            steps.append((eng.n_decisions - d, now - t))
            if now - w0 >= seconds and (not until_all_redealt or redealt.all()):
                break
        # the fastest tenth of the steps by decisions per second: what the code does when the cores are free
        rates = sorted(steps, key=lambda x: x[0] / x[1], reverse=True)[: max(1, len(steps) // 10)]
        best = sum(d for d, _ in rates) / sum(w for _, w in rates)
        return eng.n_decisions - d0, time.perf_counter() - w0, time.process_time() - c0, best

    play(0.0, until_all_redealt=True)  # warm-up
    return play


def _fused_steps(steps: int) -> int:
    """The steps a call of the fused loop plays in this checkout: ``steps``, or 1 where ``random_step`` has no
    ``steps``."""
    import inspect

    from mjenv.engine.core import Engine

    return steps if "steps" in inspect.signature(Engine.random_step).parameters else 1


def _fused_runner(eng, steps: int):
    """``run(seconds)`` of the fused loop (``Engine.random_step``, ``steps`` a call) on a warmed-up engine."""
    from mjenv.engine.sampling import TableSampler

    sampler = TableSampler(0, eng.batch_size)
    many = {"steps": steps} if _fused_steps(steps) > 1 else {}
    eng.reset(seed=0)
    hands = np.zeros(eng.batch_size, np.int64)

    def play(seconds: float, until_all_redealt: bool = False) -> tuple[int, float, float, float]:
        d0, w0, c0 = eng.n_decisions, time.perf_counter(), time.process_time()
        steps = []
        while True:
            t = time.perf_counter()
            d = eng.n_decisions
            if until_all_redealt:  # (one step a call: a hand that ends is seen in engine.done)
                eng.random_step(sampler, seed=0)
            else:
                eng.random_step(sampler, seed=0, **many)
            now = time.perf_counter()
            steps.append((eng.n_decisions - d, now - t))
            if until_all_redealt:
                np.add(hands, eng.done, out=hands)
            if now - w0 >= seconds and (not until_all_redealt or hands.all()):
                break
        rates = sorted(steps, key=lambda x: x[0] / x[1], reverse=True)[: max(1, len(steps) // 10)]
        best = sum(d for d, _ in rates) / sum(w for _, w in rates)
        return eng.n_decisions - d0, time.perf_counter() - w0, time.process_time() - c0, best

    play(0.0, until_all_redealt=True)  # warm-up: every table has finished a hand (and the entries are loaded)
    return play


def _loop_name(loop: str, obs: str) -> str:
    """This checkout's loop: ``classic``, ``fused`` (with ``steps``) or ``fused1`` (one step a call only)."""
    if not _fused(loop, obs):
        return "classic"
    return "fused" if _fused_steps(2) == 2 else "fused1"


def _label(loop: str, steps: int) -> str:
    """A table row's name of loop ``loop`` (:func:`_loop_name`) at ``steps`` a call."""
    if loop == "classic":
        return "classic loop"
    s = steps if loop == "fused" else 1
    return f"fused loop, {s} step{'s' if s > 1 else ''} a call"


def _serve(configs: list, obs: str, serial: tuple, threaded: tuple, loop: str) -> int:
    """One tree's process under ``--trees``: set every configuration up, say ``ready``, then for every line ``SECONDS``
    on stdin measure each configuration once and print their figures as one JSON line."""
    runners = [_runner(*c, obs, serial, threaded, loop) for c in configs]
    print("ready " + _loop_name(loop, obs), flush=True)
    for line in sys.stdin:
        print(json.dumps([run(float(line)) for run in runners]), flush=True)
    return 0


def _tree_process(tree: str, argv: list[str]):
    """A ``--serve`` process of this script importing mjenv from checkout ``tree``; returns ``measure(seconds)``."""
    rest = [a for i, a in enumerate(argv) if a != "--trees" and (i == 0 or argv[i - 1] != "--trees")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [tree, os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), *rest, "--serve"], cwd=tree, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    said = proc.stdout.readline().split()
    if not said or said[0] != "ready":
        raise SystemExit(f"scaling: the process for {tree} did not start")

    def measure(seconds: float) -> list:
        proc.stdin.write(f"{seconds}\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    return measure, said[1] if len(said) > 1 else "classic"


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", default="kawuxing3")
    ap.add_argument("--all-variants", action="store_true", help="every variant (overrides --variant)")
    ap.add_argument("--batches", type=int, nargs="+", default=[64, 512, 4096])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--obs", choices=("none", "v1", "v2"), default="none", help="encode every acting seat too")
    ap.add_argument("--seconds", type=float, default=3.0, help="wall seconds per configuration per pass")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--trees", default=None, metavar="PATH[,PATH...]", help="checkouts of mjenv measured side by side")
    ap.add_argument("--serial", nargs="+", default=[], choices=("redeal", "sampler"),
                    help="keep these pieces of the loop on the calling thread (to weigh what their threads give)")
    ap.add_argument("--threaded", nargs="+", default=[], choices=("sampler",),
                    help="put the sampler on the engine's threads (its default since 2026-12-06 evening: one thread)")
    ap.add_argument("--loop", choices=("auto", "fused", "classic"), default="auto",
                    help="fused: Engine.random_step; classic: reset + sampler + step (auto: fused where it exists)")
    ap.add_argument("--steps", type=int, nargs="+", default=[8],
                    help="steps per random_step call in the fused loop (default 8; 1: one a call; several: side by side)")
    ap.add_argument("--play-tables", type=int, default=None, metavar="N",
                    help="fused loop, several steps a call: most tables a chunk plays them on (autoplay.PLAY_TABLES)")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # internal: one tree's process (--trees)
    args = ap.parse_args(argv)
    if args.loop == "fused" and args.obs != "none":
        ap.error("--loop fused encodes no observations (--obs needs the classic loop)")
    if min(args.steps) < 1:
        ap.error("--steps must be at least 1")
    if args.play_tables is not None:
        if args.play_tables < 1:
            ap.error("--play-tables must be at least 1")
        from mjenv.engine import autoplay

        autoplay.PLAY_TABLES = args.play_tables
    if 1 not in args.threads:
        ap.error("--threads must include 1 (the speed-ups are measured against it)")
    import mjenv

    if "redeal" in args.serial:  # no re-deal is cut (mjenv.engine.threads.DEAL_MIN_TABLES)
        from mjenv.engine import threads as TH

        TH.DEAL_MIN_TABLES = 1 << 40
    variants = list(mjenv.VARIANTS) if args.all_variants else [args.variant]
    if not _fused(args.loop, args.obs):
        args.steps = [1]  # (the classic loop steps once a call)
    configs = [(v, b, t, s) for v in variants for b in args.batches for s in args.steps for t in args.threads]
    if args.serve:
        return _serve(configs, args.obs, tuple(args.serial), tuple(args.threaded), args.loop)
    given = args.trees.split(",") if args.trees else []
    trees = [os.path.abspath(t) for t in given] or [None]
    names = dict(zip(trees, given))
    for tree in trees:
        if tree is not None and not os.path.isdir(os.path.join(tree, "mjenv")):
            ap.error(f"--trees: {tree!r} is not a checkout of mjenv")
    print(f"cores available: {len(os.sched_getaffinity(0))}, load average before warm-up: "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", file=sys.stderr, flush=True)
    if trees == [None]:
        runners = {c: _runner(*c, args.obs, tuple(args.serial), tuple(args.threaded), args.loop) for c in configs}
        measure = {None: lambda seconds: [runners[c](seconds) for c in configs]}
        loops = {None: _loop_name(args.loop, args.obs)}
    else:
        made = {tree: _tree_process(tree, argv if argv is not None else sys.argv[1:]) for tree in trees}
        measure = {tree: m for tree, (m, _) in made.items()}
        loops = {tree: loop for tree, (_, loop) in made.items()}
    figures: dict = {(tree, c): [] for tree in trees for c in configs}
    loads = []
    for p in range(args.passes):
        loads.append(os.getloadavg()[0])
        for tree in trees:  # one after another: every configuration sees the same load, pass by pass
            for c, fig in zip(configs, measure[tree](args.seconds)):
                figures[tree, c].append(fig)
        print(f"pass {p + 1}/{args.passes} done, load average {loads[-1]:.1f}", file=sys.stderr, flush=True)
    rows = []
    for tree in trees:
        for c in configs:
            v, b, t, s = c
            fig, one = figures[tree, c], figures[tree, (v, b, 1, s)]
            wall = statistics.median(d / w for d, w, _, _ in fig)
            cpu = statistics.median(d / u for d, _, u, _ in fig)
            base = statistics.median(d / w for d, w, _, _ in one)
            best = statistics.median(x[3] for x in fig)
            best_base = statistics.median(x[3] for x in one)
            paired = [(d / w) / (d1 / w1) for (d, w, _, _), (d1, w1, _, _) in zip(fig, one)]  # pass by pass
            cpu_base = statistics.median(d / u for d, _, u, _ in one)
            loop = _label(loops[tree], s)
            label = f"{v}, {loop}" if tree is None else f"{v} ({names[tree]}, {loop})"
            rows.append({"variant": label, "batch": b, "threads": t, "wall": wall, "cpu": cpu, "speedup": wall / base,
                         "efficiency": wall / base / t, "best": best, "best_speedup": best / best_base,
                         "cpu_ratio": cpu / cpu_base, "paired": statistics.median(paired), "paired_lo": min(paired), "paired_hi": max(paired)})  # fmt: skip
    obs = {"none": "engine", "v1": "engine + obs-v1", "v2": "engine + obs-v2"}[args.obs]
    load = f"load average {min(loads):.1f}–{max(loads):.1f} during the passes"
    if args.markdown:
        print(f"{obs}, {args.passes} passes of {args.seconds:g} s per configuration, medians; {load}\n")
        print("| variant | B | threads | decisions/s (wall) | decisions/s (CPU) | CPU rate ÷ one thread's | speed-up (wall) "
              "| efficiency "
              "| fastest tenth of steps: decisions/s (wall) | its speed-up | speed-up pass by pass: median (range) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['variant']} | {r['batch']} | {r['threads']} | {r['wall']:,.0f} | {r['cpu']:,.0f} | "
                  f"{r['cpu_ratio']:.2f} | "
                  f"{r['speedup']:.2f}× | {r['efficiency']:.0%} | {r['best']:,.0f} | {r['best_speedup']:.2f}× | "
                  f"{r['paired']:.2f}× ({r['paired_lo']:.2f}–{r['paired_hi']:.2f}) |")
    else:
        print(f"{obs}; {load}")
        for r in rows:
            print(f"{r['variant']:30s} B={r['batch']:5d} threads={r['threads']}: {r['wall']:12,.0f} dec/s wall "
                  f"{r['cpu']:12,.0f} dec/CPU-s ({r['cpu_ratio']:.2f})  speed-up {r['speedup']:.2f}x  efficiency {r['efficiency']:.0%}  "
                  f"fastest tenth {r['best']:12,.0f} dec/s ({r['best_speedup']:.2f}x)  pass by pass "
                  f"{r['paired']:.2f}x ({r['paired_lo']:.2f}-{r['paired_hi']:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
