"""Cost of ``Engine.sample_worlds`` (mjenv/engine/worlds.py): CPU time per call of n worlds, the ``out=`` form.

Tables are played by uniformly random legal actions (:class:`mjenv.engine.sampling.ActionSampler`) to spread the
sample points over a hand; at each point the acting seat's worlds are sampled into one reused engine
(``out=``), as a search loop does.  Figures are **CPU time** (``time.process_time``) after a warm-up that
compiles everything, over ``--points`` sample points; printed: the mean per call, per world, and beside it the
cost of one engine step of the same ``n`` tables from those worlds (a peer measured in the same run: what one
decision of a rollout over the worlds costs), and the cost of a call without ``out=`` (a new engine each time).  The issue's aim: 256 worlds in at most 1 ms.  Usage::

    python bench/sample_worlds.py                      # kawuxing3, n = 256
    python bench/sample_worlds.py --variant gejiu --worlds 64 256 1024
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mjenv.engine.core import Engine
from mjenv.engine.sampling import ActionSampler


def sample_points(variant: str, k: int, seed: int) -> tuple[Engine, list[tuple[int, int]]]:
    """An engine of ``k`` tables stopped at random points of their hands, and the (table, acting seat) pairs."""
    eng = Engine(variant, k, record_events=False)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    sampler = ActionSampler(seed)
    stop = rng.integers(0, 40, k)
    for t in range(int(stop.max())):
        acts = sampler.sample(eng.mask)
        live = np.flatnonzero((stop > t) & ~eng.done)
        if not len(live):
            break
        eng.step(acts[live], tables=live)
    pts = [(b, int(eng.state.actor[b])) for b in range(k) if not eng.done[b]]
    return eng, pts


def measure(variant: str, n: int, points: int, seed: int) -> dict:
    eng, pts = sample_points(variant, points, seed)
    out = Engine(variant, n, options=eng.opts, record_events=False)
    b, s = pts[0]
    eng.sample_worlds(b, s, n, seed=0, out=out)  # warm-up: compile
    acts = np.zeros(n, np.int64)
    out.step(np.argmax(out.mask, 1).astype(np.int64))
    t0 = time.process_time()
    for i, (b, s) in enumerate(pts):
        eng.sample_worlds(b, s, n, seed=i, out=out)
    sample = (time.process_time() - t0) / len(pts)
    t0 = time.process_time()
    steps = 0
    for i, (b, s) in enumerate(pts):
        eng.sample_worlds(b, s, n, seed=i, out=out)
        np.argmax(out.mask, 1, out=acts)
        out.step(acts)
        steps += 1
    step = (time.process_time() - t0) / steps - sample
    few = pts[: max(1, len(pts) // 10)]
    t0 = time.process_time()
    for i, (b, s) in enumerate(few):
        eng.sample_worlds(b, s, n, seed=i)
    fresh = (time.process_time() - t0) / len(few)
    return {"variant": variant, "n": n, "points": len(pts), "call_ms": 1e3 * sample, "world_us": 1e6 * sample / n,
            "step_ms": 1e3 * step, "fresh_ms": 1e3 * fresh}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="kawuxing3")
    ap.add_argument("--worlds", type=int, nargs="+", default=[256])
    ap.add_argument("--points", type=int, default=200, help="sample points (tables stopped mid-hand)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(f"{'variant':<13} {'n':>6} {'points':>6} {'ms/call':>9} {'us/world':>9} {'step ms':>8} {'new ms':>8}  (CPU time)")
    for n in args.worlds:
        r = measure(args.variant, n, args.points, args.seed)
        print(f"{r['variant']:<13} {r['n']:>6} {r['points']:>6} {r['call_ms']:>9.3f} {r['world_us']:>9.2f} {r['step_ms']:>8.3f} {r['fresh_ms']:>8.3f}")


if __name__ == "__main__":
    main()
