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
    python bench/results.py --trees /tmp/old,. --rounds 3   # two checkouts, alternated, medians per win

``--trees OLD,NEW`` runs this measurement in each checkout (its own ``bench/results.py`` and package, with an empty
``NUMBA_CACHE_DIR`` so that each runs its shipped compiled store), one process per checkout and variant, alternating
the checkouts ``--rounds`` times, and prints the median CPU µs per win and per drawn hand of each, and NEW ÷ OLD.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


_LINE = re.compile(r"^(\w+)\s+([\d.]+) µs per result\s+wins\s+([\d.]+) µs \((\d+) of (\d+)\)\s+drawn\s+([\d.]+) µs")


def _run_tree(tree: str, variant: str, hands: int, batch: int, cache: str) -> dict:
    """One measurement of ``variant`` in the checkout ``tree`` (a subprocess running that checkout's script)."""
    env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()), NUMBA_CACHE_DIR=cache)
    cmd = [sys.executable, "bench/results.py", "--variants", variant, "--hands", str(hands), "--batch", str(batch)]
    out = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = _LINE.match(line)
        if m and m.group(1) == variant:
            return {"win": float(m.group(3)), "draw": float(m.group(6)), "wins": int(m.group(4))}
    raise RuntimeError(f"{tree}: no result line for {variant} in\n{out}")


def compare_trees(trees: list[str], variants: list[str], hands: int, batch: int, rounds: int) -> None:
    """Alternate the checkouts ``rounds`` times per variant; print the medians and the ratio of the last to the first."""
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for v in variants:
            got: dict[str, list[dict]] = {t: [] for t in trees}
            for r in range(rounds):
                for t in trees:
                    got[t].append(_run_tree(t, v, hands, batch, os.path.join(cache, str(trees.index(t)))))
                    print(f"{v} round {r + 1} {t}: {got[t][-1]['win']:.1f} µs per win ({got[t][-1]['wins']} wins), "
                          f"{got[t][-1]['draw']:.1f} per drawn hand", flush=True)
            med = {t: {k: statistics.median(x[k] for x in got[t]) for k in ("win", "draw")} for t in trees}
            rows.append((v, med))
    head = " | ".join(f"{t}: per win | per drawn hand" for t in trees)
    print(f"\n| variant | {head} | {trees[-1]} ÷ {trees[0]}, per win |")
    print("|---|" + "---:|---:|" * len(trees) + "---:|")
    for v, med in rows:
        cells = " | ".join(f"{med[t]['win']:.1f} | {med[t]['draw']:.1f}" for t in trees)
        print(f"| {v} | {cells} | {med[trees[-1]]['win'] / med[trees[0]]['win']:.2f} |")


def main() -> None:
    """Print one line per variant and a markdown table (or, with ``--trees``, the checkouts compared)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default=VARIANTS)
    ap.add_argument("--hands", type=int, default=4096, help="results read per variant (default 4096)")
    ap.add_argument("--batch", type=int, default=512, help="tables played at once (default 512)")
    ap.add_argument("--trees", default=None, metavar="OLD,NEW", help="checkouts of mjenv to compare, alternated")
    ap.add_argument("--rounds", type=int, default=3, help="with --trees: runs of each checkout per variant (default 3)")
    args = ap.parse_args()
    if args.hands < 1 or args.batch < 1 or args.rounds < 1:
        ap.error("--hands, --batch and --rounds must be >= 1")
    if args.trees is not None:
        trees = args.trees.split(",")
        for t in trees:
            if not (Path(t) / "bench" / "results.py").is_file():
                ap.error(f"--trees: {t!r} is not a checkout of mjenv (no bench/results.py)")
        compare_trees(trees, args.variants.split(","), args.hands, args.batch, args.rounds)
        return
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
