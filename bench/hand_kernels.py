"""Benchmark of mjenv.engine.handk: per-call cost from Python, per-hand cost inside a compiled loop, cold/warm start.

    taskset -c 0 python bench/hand_kernels.py                 # hands dealt from all 136 tiles
    taskset -c 0 python bench/hand_kernels.py --wall kawuxing3

Per-call figures time one kernel called from Python on one ``[34]`` int8 hand (numba's dispatch
included); loop figures time the ``*_batch`` kernels over ``--n`` hands (the per-hand kernels called
from compiled code, as the engine does).  Hands are dealt from a shuffled wall: 14 tiles for
completion checks and discards, 13 for wait sets.  Times are process CPU time, best of ``--rounds``.
Start-up: a fresh interpreter imports handk and calls every kernel once, with an empty numba cache
directory (cold: compiles) and then again with the same directory (warm: loads from disk).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

WALLS = {"all": ("mps", "1234567"), "kawuxing3": ("ps", "567")}

_START = """
import time
t0 = time.perf_counter()
import numpy as np
from mjenv.engine import handk
tabs = handk.tables()
t1 = time.perf_counter()
h = np.zeros(34, dtype=np.int8); h[:14] = 1
o = h.copy(); row = np.zeros(34, dtype=bool); kinds = np.ones(34, dtype=bool)
handk.is_complete(h, True, tabs)
handk.wait_mask(h, True, kinds, o, tabs, row)
handk.ready_after_discards(h, True, kinds, o, tabs, row)
handk.lanpai(h); handk.qixing(h); handk.lanpai_wait_bits(h)
t2 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.3f}")
"""


def deal(n: int, tiles: int, kinds: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``[n, 34]`` int8 counts of ``tiles`` tiles dealt from a freshly shuffled wall per hand."""
    wall = np.repeat(np.flatnonzero(kinds), 4)
    order = np.argsort(rng.random((n, wall.size)), axis=1)[:, :tiles]
    counts = np.zeros((n, 34), dtype=np.int8)
    np.add.at(counts, (np.repeat(np.arange(n), tiles), wall[order].ravel()), 1)
    return counts


def best(fn, reps: int, rounds: int) -> float:
    """Best CPU seconds per repetition of ``fn`` over ``rounds`` rounds of ``reps`` calls."""
    fn()
    out = float("inf")
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(reps):
            fn()
        out = min(out, (time.process_time() - t) / reps)
    return out


def start_times() -> tuple[tuple[float, float], tuple[float, float]]:
    """(import s, first calls s) of a fresh process with an empty cache (cold) and then a filled one (warm)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = []
        for _ in range(2):
            run = subprocess.run([sys.executable, "-c", _START], env=env, capture_output=True, text=True, check=True)
            imp, first = map(float, run.stdout.split())
            out.append((imp, first))
    return out[0], out[1]


def main() -> None:
    """Print the figures."""
    from mjenv.engine import handk
    from mjenv.rules import hand as H
    from mjenv.tiles import kinds_mask

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--wall", choices=list(WALLS), default="all")
    p.add_argument("--n", type=int, default=65536, help="hands per batch for the loop figures")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--no-start", action="store_true", help="skip the cold/warm start-up measurement")
    a = p.parse_args()
    suits, honors = WALLS[a.wall]
    kinds = kinds_mask(suits=suits, honors=honors)
    rng = np.random.default_rng(0)
    h14 = deal(a.n, 14, kinds, rng)
    h13 = deal(a.n, 13, kinds, rng)
    tabs = handk.tables()
    row = np.zeros(34, dtype=bool)
    out1 = np.zeros(a.n, dtype=bool)
    out34 = np.zeros((a.n, 34), dtype=bool)
    one14, one13 = h14[0], h13[0]

    cases = [
        ("is_complete, seven pairs",
         lambda: handk.is_complete(one14, True, tabs),
         lambda: handk.is_complete_batch(h14, True, tabs, out1),
         lambda: H.is_complete(one14, seven_pairs=True)),
        ("wait_mask, seven pairs + kinds + owned",
         lambda: handk.wait_mask(one13, True, kinds, one13, tabs, row),
         lambda: handk.wait_mask_batch(h13, True, kinds, h13, tabs, out34),
         lambda: H.wait_mask(one13, seven_pairs=True, kinds=kinds, owned=one13)),
        ("ready_after_discards, seven pairs + kinds + owned",
         lambda: handk.ready_after_discards(one14, True, kinds, one14, tabs, row),
         lambda: handk.ready_after_discards_batch(h14, True, kinds, h14, tabs, out34),
         lambda: H.ready_after_discards(one14, seven_pairs=True, kinds=kinds, owned=one14)),
        ("lanpai",
         lambda: handk.lanpai(one14),
         lambda: handk.lanpai_batch(h14, out1),
         None),
    ]
    print(f"wall {a.wall}, N = {a.n} for loops, CPU time, best of {a.rounds}")
    print(f"{'kernel':52s} {'from Python':>12s} {'in a loop':>11s} {'hand.py [34]':>13s}")
    for name, one, batch, ref in cases:
        py = best(one, 20000, a.rounds)
        loop = best(batch, 1, a.rounds) / a.n
        ref_s = f"{best(ref, 2000, a.rounds) * 1e6:10.1f} µs" if ref else f"{'-':>13s}"
        print(f"{name:52s} {py * 1e6:9.2f} µs {loop * 1e9:8.0f} ns {ref_s}")
    if not a.no_start:
        (ci, cf), (wi, wf) = start_times()
        print(f"start-up (wall clock): cold import {ci:.2f} s + first calls {cf:.2f} s (compile); "
              f"warm import {wi:.2f} s + first calls {wf:.2f} s (cache)")


if __name__ == "__main__":
    main()
