"""Benchmark of mjenv.rules.hand: table build time, completion checks/s and wait sets/s.

Run on one core so that BLAS threads do not inflate the figures::

    taskset -c 0 python bench/hand_analysis.py            # all 136 tiles
    taskset -c 0 python bench/hand_analysis.py --wall kawuxing3

Hands are dealt from a shuffled wall (14 tiles for completion checks, 13 for wait sets); N = 1
passes one ``[34]`` hand, larger N a ``[N, 34]`` batch.  Each figure is the best of several timed
rounds of at least ``--min-seconds`` each, timed in process CPU time so that other load on a
shared machine does not count (pin to one core: BLAS threads would otherwise add CPU time).
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np

from mjenv.rules import hand
from mjenv.tiles import N_KINDS, kinds_mask

WALLS = {"all": kinds_mask(), "kawuxing3": kinds_mask(suits="ps", honors="567")}


@dataclass
class Args:
    """Command-line options."""

    wall: str = "all"
    """tile set to deal from: all (136 tiles) or kawuxing3 (84 tiles)"""
    sizes: tuple[int, ...] = (1, 1024, 65536)
    """batch sizes N"""
    min_seconds: float = 0.3
    """minimum duration of one timed round"""
    rounds: int = 5
    """timed rounds per figure (the best one is reported)"""
    seed: int = 0


def deal(n: int, tiles: int, kinds: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``[n, 34]`` int8 counts of ``tiles`` tiles dealt from a freshly shuffled wall per hand."""
    wall = np.repeat(np.flatnonzero(kinds), 4)
    order = np.argsort(rng.random((n, wall.size)), axis=1)[:, :tiles]
    ids = wall[order]
    counts = np.zeros((n, N_KINDS), dtype=np.int8)
    np.add.at(counts, (np.repeat(np.arange(n), tiles), ids.ravel()), 1)
    return counts


def per_second(fn, n: int, args: Args) -> float:
    """Hands per second of ``fn()`` on a batch of ``n`` hands (best round)."""
    fn()
    best = float("inf")
    for _ in range(args.rounds):
        calls, start = 0, time.process_time()
        while True:
            fn()
            calls += 1
            elapsed = time.process_time() - start
            if elapsed >= args.min_seconds:
                break
        best = min(best, elapsed / calls)
    return n / best


def cpu_name() -> str:
    """Processor model, as far as the platform tells."""
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return platform.processor() or "unknown"


def main(args: Args) -> None:
    """Print the figures as a Markdown table."""
    build = hand.table_build_seconds()
    kinds = WALLS[args.wall]
    rng = np.random.default_rng(args.seed)

    print(f"python {platform.python_version()}, numpy {np.__version__}, {cpu_name()}, wall={args.wall}")
    print(f"table build (first use in this process): {build * 1e3:.0f} ms\n")
    print("| N | is_complete /s | is_complete +7 pairs /s | wait_mask /s | wait_mask +7 pairs, kinds /s "
          "| wait_mask_after_discards (hands /s) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        h14 = deal(n, 14, kinds, rng)
        h13 = deal(n, 13, kinds, rng)
        if n == 1:  # a single hand is passed as [34], the form a per-table caller uses
            h14, h13 = h14[0], h13[0]
        calls = [
            lambda h14=h14: hand.is_complete(h14),
            lambda h14=h14: hand.is_complete(h14, seven_pairs=True),
            lambda h13=h13: hand.wait_mask(h13),
            lambda h13=h13: hand.wait_mask(h13, seven_pairs=True, kinds=kinds),
            lambda h14=h14: hand.wait_mask_after_discards(h14, seven_pairs=True, kinds=kinds),
        ]
        figures = [per_second(call, n, args) for call in calls]
        print(f"| {n} | " + " | ".join(f"{f:,.0f}" for f in figures) + " |")
        sys.stdout.flush()


def parse_args() -> Args:
    """Args from the command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--wall", choices=sorted(WALLS), default=Args.wall)
    p.add_argument("--sizes", type=int, nargs="+", default=list(Args.sizes))
    p.add_argument("--min-seconds", type=float, default=Args.min_seconds)
    p.add_argument("--rounds", type=int, default=Args.rounds)
    p.add_argument("--seed", type=int, default=Args.seed)
    ns = p.parse_args()
    return Args(ns.wall, tuple(ns.sizes), ns.min_seconds, ns.rounds, ns.seed)


if __name__ == "__main__":
    main(parse_args())
