"""The serial share of a threaded engine loop: what of a B = 4096 step's CPU stays on the calling thread.

``Engine(..., threads=N)`` runs the kernel calls over many tables on N threads (:mod:`mjenv.engine.threads`), but a
loop's other work stays on one thread: the random choice of the actions (``ActionSampler``), the test for finished
tables (``engine.done``), re-dealing them (``Engine.reset`` of some 80 tables a step at B = 4096: the argument checks,
the walls, the deal and the automatic moves after it, all below the threads' 512-table threshold), the whole-step
action check (``MODE_CHECK``, before any chunk moves) and the booking of the hands that ended (``Engine._run``).  By
Amdahl's law a serial share s caps the speed-up on two threads at 1 / (s + (1 - s) / 2): 1.8× needs s ≤ 11 %.

This script plays bench/scaling.py's loop on one thread (``threads=1``, so that every piece is timed alone) and
reports the CPU time of each serial piece per step and as a share of the loop's CPU.  Run it in two checkouts to
compare them (``PYTHONPATH=/path/to/checkout python bench/serial_share.py``: it times ``Engine`` methods by name)::

    python bench/serial_share.py                       # kawuxing3, B = 4096, 1,500 steps
    python bench/serial_share.py --variant gejiu --steps 3000
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def measure(variant: str, batch: int, steps: int) -> tuple[dict[str, float], float]:
    """CPU seconds of each serial piece over ``steps`` steps, and of the whole loop."""
    from mjenv.engine import codes as K
    from mjenv.engine import core as C
    from mjenv.engine.core import Engine
    from mjenv.engine.sampling import ActionSampler

    eng = Engine(variant, batch, record_events=False, threads=1)
    acts = np.empty(batch, np.int64)
    sampler = ActionSampler(0)
    clock = time.process_time
    spent: dict[str, float] = {}

    def timed(name, fn):
        def call(*a, **k):
            t = clock()
            r = fn(*a, **k)
            spent[name] = spent.get(name, 0.0) + clock() - t
            return r
        return call

    eng._run = timed("booking the ended hands (Engine._run)", eng._run)
    eng.reset = timed("re-dealing finished tables (Engine.reset)", eng.reset)
    C.check_reset_args = timed("  of which its argument checks", C.check_reset_args)
    kernel = eng._entry()
    next_id = batch

    def loop(n: int) -> float:
        nonlocal next_id
        t0 = clock()
        for _ in range(n):
            t = clock()
            done = eng.done
            fin = done.any()
            spent["finished tables (engine.done)"] = spent.get("finished tables (engine.done)", 0.0) + clock() - t
            if fin:
                idx = np.flatnonzero(done)
                eng.reset(seed=0, tables=idx, table_ids=np.arange(next_id, next_id + len(idx)))
                next_id += len(idx)
            t = clock()
            a = sampler.sample(eng.mask, acts)
            t1 = clock()
            # the whole-step check a threaded step makes first (kept out of the loop's total below)
            kernel(K.MODE_CHECK, *eng._args, eng._all, a, eng._waiting, eng._info)
            t2 = clock()
            spent["sampling the actions (ActionSampler)"] = spent.get("sampling the actions (ActionSampler)", 0.0) + t1 - t
            spent["whole-step check (MODE_CHECK, threads > 1 only)"] = (
                spent.get("whole-step check (MODE_CHECK, threads > 1 only)", 0.0) + t2 - t1)
            eng.step(a)
            t0 += t2 - t1
        return clock() - t0

    eng.reset(seed=0)
    loop(300)  # warm-up: the tables spread over every point of a hand
    spent.clear()
    return spent, loop(steps)


def main() -> None:
    """Print the serial pieces per step and their share of the loop's CPU."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", default="kawuxing3")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=1500)
    args = ap.parse_args()
    if args.batch < 1 or args.steps < 1:
        ap.error("--batch and --steps must be >= 1")
    spent, total = measure(args.variant, args.batch, args.steps)
    print(f"| {args.variant}, B = {args.batch}, one thread | CPU µs per step | share of the loop |\n|---|---:|---:|")
    serial = 0.0
    order = ["finished tables (engine.done)", "re-dealing finished tables (Engine.reset)", "  of which its argument checks"]
    for name, sec in sorted(spent.items(), key=lambda x: order.index(x[0]) if x[0] in order else len(order)):
        print(f"| {name} | {1e6 * sec / args.steps:.1f} | {100 * sec / total:.1f} % |")
        if not name.startswith("  "):
            serial += sec
    print(f"| **serial in all** | {1e6 * serial / args.steps:.1f} | **{100 * serial / total:.1f} %** |")
    print(f"| the loop (a step with its kernel calls) | {1e6 * total / args.steps:.1f} | 100 % |")
    s = serial / total
    print(f"\nAmdahl's bound on two threads: {1 / (s + (1 - s) / 2):.2f}×")


if __name__ == "__main__":
    main()
