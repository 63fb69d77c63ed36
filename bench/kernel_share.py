"""How much of the engine's CPU time at B = 4096 is spent inside the compiled kernels, per variant.

Random legal play (the compiled ``ActionSampler``), finished tables re-dealt at once, ``record_events=False``;
the kernel entry point is timed from inside the engine, so the rest is Python: judging and valuing wins,
settlements, ``results``, re-deals and the sampling.  CPU time (``time.process_time``), one thread (with
several, the kernel calls' CPU would count every thread's and the share pass 100 %).

    python bench/kernel_share.py [--variants kawuxing3,gejiu] [--seconds 8] [--batch 4096]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mjenv.engine import entry
from mjenv.engine.core import Engine
from mjenv.engine.sampling import ActionSampler

VARIANTS = "kawuxing3,kawuxing4,gejiu,diedaohu,yangzhou,yangzhou_new,liuwei"


def measure(variant: str, batch: int, seconds: float) -> tuple[float, float]:
    """(decisions per CPU second, share of CPU inside the kernels) of ``variant`` at ``batch`` tables."""
    inside = [0.0]
    original = entry.kernel_for

    def kernel_for(cfg):
        kernel = original(cfg)

        def timed(*args):
            t = time.process_time()
            try:
                return kernel(*args)
            finally:
                inside[0] += time.process_time() - t

        return timed

    entry.kernel_for = kernel_for
    try:
        # one thread: the kernel's timer reads this process's CPU clock, which counts every thread's time
        eng = Engine(variant, batch, record_events=False, threads=1)
        eng.reset(seed=0)
        sampler = ActionSampler(0)
        for i in range(30):  # warm up and spread the tables over all points of a hand
            eng.step(sampler.sample(eng.mask))
            done = np.flatnonzero(eng.done)
            if len(done):
                eng.reset(seed=i + 1, tables=done)
        inside[0] = 0.0
        decisions = 0
        t0 = time.process_time()
        while time.process_time() - t0 < seconds:
            acts = sampler.sample(eng.mask)
            decisions += int((~eng.done).sum())
            eng.step(acts)
            done = np.flatnonzero(eng.done)
            if len(done):
                eng.reset(seed=decisions, tables=done)
        total = time.process_time() - t0
    finally:
        entry.kernel_for = original
    return decisions / total, inside[0] / total


def main() -> None:
    """Print one line per variant."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default=VARIANTS)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--batch", type=int, default=4096)
    args = ap.parse_args()
    for v in args.variants.split(","):
        rate, share = measure(v, args.batch, args.seconds)
        print(f"{v:13s} {rate:10,.0f} decisions/s   in kernels {share:6.1%}   Python {1 - share:6.1%}", flush=True)


if __name__ == "__main__":
    main()
