"""What reading a finished hand's result costs: ``engine.results[b]`` once per hand, per variant, in CPU µs.

Every table of an ``Engine(variant, B, record_events=False)`` plays one hand to its end with random legal actions
(the compiled ``ActionSampler``), except that a seat that may win always wins (random play alone ends 80–99 % of
hands drawn, and a win's result is the costly one); then each table's result is read once and that reading alone is timed
(``time.process_time``), split by how the hand ended (a win or a drawn hand).  Repeated over fresh deals until
``--hands`` hands per variant were read.  The figure is what a caller pays on top of playing, e.g. a tournament
or a logger that looks at every result.  The playing is timed too (CPU µs per hand, sampling included): where a
family's wins are settled by the Python scorer during the step, the step pays what the reading then saves, so
compare play + read between versions of the engine.

    python bench/results.py                              # every variant, 4,096 hands each
    python bench/results.py --variants kawuxing3,gejiu --hands 20000
"""

from __future__ import annotations

import argparse
import time

from mjenv.encoding.actions import WIN
from mjenv.engine.core import Engine
from mjenv.engine.sampling import ActionSampler

VARIANTS = "kawuxing3,kawuxing4,gejiu,diedaohu,yangzhou,yangzhou_new,liuwei"


def measure(variant: str, hands: int, batch: int) -> dict:
    """CPU µs per result read (all hands, wins, drawn hands) and the counts, over ``hands`` hands."""
    eng = Engine(variant, batch, record_events=False)
    sampler = ActionSampler(0)
    cpu = {"win": 0.0, "draw": 0.0, "play": 0.0}
    count = {"win": 0, "draw": 0}
    deal = 0
    # warm-up: one deal played and every result read, so that the Python paths of wins are imported and warm
    eng.reset(seed=10**6)
    while not eng.done.all():
        mask = eng.mask
        actions = sampler.sample(mask)
        actions[mask[:, WIN]] = WIN
        eng.step(actions)
    _ = list(eng.results)
    while count["win"] + count["draw"] < hands:
        t = time.process_time()
        eng.reset(seed=deal)
        deal += 1
        while not eng.done.all():
            mask = eng.mask
            actions = sampler.sample(mask)
            actions[mask[:, WIN]] = WIN
            eng.step(actions)
        cpu["play"] += time.process_time() - t
        for b in range(batch):
            t = time.process_time()
            res = eng.results[b]
            dt = time.process_time() - t
            kind = "draw" if res["how"] == "draw" else "win"
            cpu[kind] += dt
            count[kind] += 1
    total = count["win"] + count["draw"]
    return {
        "all": 1e6 * (cpu["win"] + cpu["draw"]) / total,
        "win": 1e6 * cpu["win"] / max(count["win"], 1),
        "draw": 1e6 * cpu["draw"] / max(count["draw"], 1),
        "play": 1e6 * cpu["play"] / total,
        "hands": total,
        "wins": count["win"],
    }


def main() -> None:
    """Print one line per variant and a markdown table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default=VARIANTS)
    ap.add_argument("--hands", type=int, default=4096, help="results read per variant (default 4096)")
    ap.add_argument("--batch", type=int, default=512, help="tables played at once (default 512)")
    args = ap.parse_args()
    if args.hands < 1 or args.batch < 1:
        ap.error("--hands and --batch must be >= 1")
    rows = []
    for v in args.variants.split(","):
        r = measure(v, args.hands, args.batch)
        rows.append((v, r))
        print(f"{v:13s} {r['all']:7.1f} µs per result   wins {r['win']:7.1f} µs ({r['wins']} of {r['hands']})"
              f"   drawn {r['draw']:7.1f} µs   playing {r['play']:7.1f} µs per hand", flush=True)
    print("\n| variant | µs per result (CPU) | per win | per drawn hand | wins / hands | playing, µs per hand |"
          "\n|---|---:|---:|---:|---:|---:|")
    for v, r in rows:
        print(f"| {v} | {r['all']:.1f} | {r['win']:.1f} | {r['draw']:.1f} | {r['wins']:,} / {r['hands']:,} "
              f"| {r['play']:.1f} |")


if __name__ == "__main__":
    main()
