"""The serial share of a threaded engine loop: what of a B = 4096 step's CPU stays on the calling thread.

``Engine(..., threads=N)`` runs the kernel calls over many tables on N threads (:mod:`mjenv.engine.threads`): a
step, and a re-deal of some tables (their walls, the deal and the automatic moves after it, in chunks of at least
``DEAL_MIN_TABLES``); ``ActionSampler(seed, threads=N)`` cuts its rows the same way.  A loop's other work stays on one
thread: the test for finished tables (``engine.done``), the rest of ``Engine.reset`` (argument checks, the match
rows, ``results``), the sampler's count of the rows with a legal action before each chunk (``chunk_states``), the
whole-step action check (``MODE_CHECK``, before any chunk moves) and the booking of the hands that ended
(``Engine._run``: the session and the lazy result; their numbers, ``table.book_ended``, are booked in the chunks).  By Amdahl's law a serial share s caps the speed-up on two threads at 1 / (s + (1 - s) / 2): 1.8×
needs s ≤ 11 %.  (The hand-over of each threaded call to the pool, ≈ 25 µs of CPU on this machine, is not counted.)

This script plays bench/scaling.py's loop on one thread (``threads=1``, so that every piece is timed alone) and
reports the CPU time of each piece per step and as a share of the loop's CPU; the pieces that run on the threads
are listed under their call as "on the threads", and only the rest counts as serial.  Run it in two checkouts to
compare them (``PYTHONPATH=/path/to/checkout python bench/serial_share.py``: it times ``Engine`` methods by name)::

    python bench/serial_share.py                       # kawuxing3, B = 4096, 1,500 steps
    python bench/serial_share.py --variant gejiu --steps 3000
    python bench/serial_share.py --loop fused          # Engine.random_step: one pass over the chunks a step
    python bench/serial_share.py --loop fused --per-call 8   # random_step(..., steps=8): one pass per 8 steps

``--loop fused`` plays ``Engine.random_step`` instead (:mod:`mjenv.engine.autoplay`: the re-deal, the draws and the
step inside each chunk of tables) on one thread, cut into the chunks two threads would take, and reports the CPU time
inside the chunks (on the threads) and outside them (serial: the booking of the ended hands, the join, the Python
around them).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


REDEAL = "re-dealing finished tables (Engine.reset)"
BOOKING = "booking the ended hands (Engine._run)"
SAMPLE = "sampling the actions (ActionSampler)"
PARALLEL = "  on the threads: "


def measure(variant: str, batch: int, steps: int) -> tuple[dict[str, float], float]:
    """CPU seconds of each piece over ``steps`` steps (names starting with two spaces: parts of the piece above),
    and of the whole loop."""
    from mjenv.engine import codes as K
    from mjenv.engine import core as C
    from mjenv.engine.core import Engine
    from mjenv.engine.sampling import ActionSampler, chunk_states
    from mjenv.engine import threads as TH

    eng = Engine(variant, batch, record_events=False, threads=1)
    acts = np.empty(batch, np.int64)
    sampler = ActionSampler(0, threads=1)
    clock = time.process_time
    spent: dict[str, float] = {}
    in_reset = [False]
    threaded_redeal = [True]

    def add(name, t):
        spent[name] = spent.get(name, 0.0) + clock() - t

    def timed(name, fn):
        def call(*a, **k):
            t = clock()
            r = fn(*a, **k)
            add(name, t)
            return r
        return call

    def reset(*a, **k):
        in_reset[0] = True
        threaded_redeal[0] = len(k.get("tables", ())) >= 2 * TH.DEAL_MIN_TABLES
        t = clock()
        try:
            return original_reset(*a, **k)
        finally:
            add(REDEAL, t)
            in_reset[0] = False

    def part(name, fn):  # a part of the re-deal: on the threads when the re-deal is cut, else serial
        def call(*a, **k):
            if not in_reset[0] or not threaded_redeal[0]:
                return fn(*a, **k)
            t = clock()
            r = fn(*a, **k)
            add(PARALLEL + name, t)
            return r
        return call

    original_reset = eng.reset
    eng._run = timed(BOOKING, eng._run)
    book_numbers = eng._book_numbers

    def numbers(waiting, k, every=False):  # the chunks' call (every=False); the booking's clearing call stays serial
        if every:
            return book_numbers(waiting, k, every)
        t = clock()
        r = book_numbers(waiting, k, every)
        add(PARALLEL + "its numbers (table.book_ended)", t)
        return r

    eng._book_numbers = numbers
    eng.reset = reset
    C.check_reset_args = timed("  of which its argument checks", C.check_reset_args)
    eng.seeded_walls = part("walls", eng.seeded_walls)
    kernel = eng._entry()
    next_id = batch
    state = np.zeros(1, np.uint64)
    cuts = np.asarray(TH.even_bounds(batch, 2, TH.MIN_TABLES), np.int64)
    starts = np.zeros(len(cuts) - 1, np.uint64)

    def loop(n: int) -> float:
        nonlocal next_id
        t0 = clock()
        for _ in range(n):
            t = clock()
            done = eng.done
            fin = done.any()
            add("finished tables (engine.done)", t)
            if fin:
                idx = np.flatnonzero(done)
                eng.reset(seed=0, tables=idx, table_ids=np.arange(next_id, next_id + len(idx)))
                next_id += len(idx)
            t = clock()
            a = sampler.sample(eng.mask, acts)
            t1 = clock()
            # what the threaded sampler does on the calling thread: count the legal rows before each chunk (kept out
            # of the loop's total, as the check below)
            chunk_states(eng.mask, state, cuts, starts)
            t2 = clock()
            # the whole-step check a threaded step makes first
            kernel(K.MODE_CHECK, *eng._args, eng._all, a, eng._waiting, eng._info)
            t3 = clock()
            spent[SAMPLE] = spent.get(SAMPLE, 0.0) + t1 - t
            spent["  its serial count (chunk_states, threads > 1 only)"] = spent.get(
                "  its serial count (chunk_states, threads > 1 only)", 0.0) + t2 - t1
            spent["whole-step check (MODE_CHECK, threads > 1 only)"] = (
                spent.get("whole-step check (MODE_CHECK, threads > 1 only)", 0.0) + t3 - t2)
            eng.step(a)
            t0 += t3 - t2 + t2 - t1
        return clock() - t0

    eng.reset(seed=0)
    loop(300)  # warm-up: the tables spread over every point of a hand (and the direct entries made)
    # the deal and the automatic moves of a re-deal, timed through the direct entries its chunks call
    eng._deal_kernel = part("the deal", eng._deal_kernel)
    step_kernel = eng._step_kernel

    def advance_or_step(mode, *rest):
        if mode == K.MODE_ADVANCE:
            return part("the automatic moves after it", step_kernel)(mode, *rest)
        return step_kernel(mode, *rest)

    eng._step_kernel = advance_or_step
    eng._step_args = (None,) * len(eng._step_args)  # (made again with the wrapped entry's call)
    spent.clear()
    return spent, loop(steps)


def measure_fused(variant: str, batch: int, steps: int, per_call: int = 1) -> tuple[dict[str, float], float]:
    """As :func:`measure` for the fused loop (``Engine.random_step``, ``per_call`` steps a call), cut as on two
    threads."""
    from mjenv.engine import autoplay as AP
    from mjenv.engine import threads as TH
    from mjenv.engine.core import Engine
    from mjenv.engine.sampling import TableSampler

    eng = Engine(variant, batch, record_events=False, threads=1)
    sampler = TableSampler(0, batch)
    clock = time.process_time
    spent: dict[str, float] = {}
    cuts = AP.play_bounds(batch, 2, per_call)
    run_chunks, play_bounds = TH.run_chunks, AP.play_bounds

    def chunks(m, threads, chunk):  # the chunks of two threads, run here one after another
        t = clock()
        run_chunks(m, 1, chunk)
        spent[CHUNKS] = spent.get(CHUNKS, 0.0) + clock() - t

    def booking(k):
        t = clock()
        run(k)
        spent[BOOKING] = spent.get(BOOKING, 0.0) + clock() - t

    run = eng._run
    eng.reset(seed=0)
    for _ in range(300):  # warm-up: every point of a hand, the entries loaded
        eng.random_step(sampler, seed=0)
    TH.run_chunks, AP.play_bounds, eng._run = chunks, lambda k, t, n: cuts, booking
    many = {"steps": per_call} if per_call > 1 else {}
    try:
        t0 = clock()
        for _ in range(steps // per_call):  # (``steps``: a multiple of ``per_call``)
            eng.random_step(sampler, seed=0, **many)
        total = clock() - t0
    finally:
        TH.run_chunks, AP.play_bounds = run_chunks, play_bounds
    spent[OTHER] = total - spent.get(CHUNKS, 0.0) - spent.get(BOOKING, 0.0)
    return spent, total


CHUNKS = "  on the threads: the chunks (re-deal, draws, step, their booking of numbers)"
OTHER = "the rest of random_step (join, results, Python around the calls)"


def main() -> None:
    """Print the serial pieces per step and their share of the loop's CPU."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", default="kawuxing3")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--loop", choices=("classic", "fused"), default="classic",
                    help="classic: reset + sampler + step; fused: Engine.random_step")
    ap.add_argument("--per-call", type=int, default=1, help="fused loop: steps per random_step call (its steps=)")
    args = ap.parse_args()
    if args.batch < 1 or args.steps < 1 or args.per_call < 1:
        ap.error("--batch, --steps and --per-call must be >= 1")
    if args.loop == "fused":
        args.steps = args.per_call * -(-args.steps // args.per_call)  # (whole calls)
        spent, total = measure_fused(args.variant, args.batch, args.steps, args.per_call)
        print(f"| {args.variant}, B = {args.batch}, random_step (steps={args.per_call}), one thread | CPU µs per step "
              "| share of the loop |")
        print("|---|---:|---:|")
        for name in (CHUNKS, BOOKING, OTHER):
            print(f"| {name} | {1e6 * spent.get(name, 0.0) / args.steps:.1f} | {100 * spent.get(name, 0.0) / total:.1f} % |")
        serial = total - spent.get(CHUNKS, 0.0)
        print(f"| **serial in all** | {1e6 * serial / args.steps:.1f} | **{100 * serial / total:.1f} %** |")
        print(f"| the loop | {1e6 * total / args.steps:.1f} | 100 % |")
        s = serial / total
        print(f"\nAmdahl's bound on two threads: {1 / (s + (1 - s) / 2):.2f}×")
        return
    spent, total = measure(args.variant, args.batch, args.steps)
    print(f"| {args.variant}, B = {args.batch}, one thread | CPU µs per step | share of the loop |\n|---|---:|---:|")
    serial = 0.0
    parts = {REDEAL: [PARALLEL + "walls", PARALLEL + "the deal", PARALLEL + "the automatic moves after it"],
             BOOKING: [PARALLEL + "its numbers (table.book_ended)"]}
    order = ["finished tables (engine.done)", REDEAL, "  of which its argument checks", *parts[REDEAL], SAMPLE,
             "  its serial count (chunk_states, threads > 1 only)", "whole-step check (MODE_CHECK, threads > 1 only)",
             BOOKING, *parts[BOOKING]]
    for name, sec in sorted(spent.items(), key=lambda x: order.index(x[0]) if x[0] in order else len(order)):
        print(f"| {name} | {1e6 * sec / args.steps:.1f} | {100 * sec / total:.1f} % |")
        if name in parts:  # serial: what its chunks on the threads do not do
            serial += sec - sum(spent.get(p, 0.0) for p in parts[name])
        elif name.startswith("  its serial count") or not name.startswith("  ") and name != SAMPLE:
            serial += sec
    print(f"| **serial in all** | {1e6 * serial / args.steps:.1f} | **{100 * serial / total:.1f} %** |")
    print(f"| the loop (a step with its kernel calls) | {1e6 * total / args.steps:.1f} | 100 % |")
    s = serial / total
    print(f"\nAmdahl's bound on two threads: {1 / (s + (1 - s) / 2):.2f}×")


if __name__ == "__main__":
    main()
