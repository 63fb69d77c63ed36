"""A PPO run's learning curve against its start: each saved checkpoint of a ``train.py`` run folder played against the
clone it started from (paired: the same walls under every seating, so the luck of the deal cancels) and against
``heuristic-flush``, on walls nobody trained on.

For each ``checkpoints/step_*.pt`` of ``--run`` (and the start, ``--clone``, as step 0) it reports the samples, the
run's CPU seconds at that point (``progress.csv``'s ``cpu``: the PPO stage's process time, one torch thread), the
duplicate margin of the checkpoint over the clone and over ``heuristic-flush`` per hand with their 95 % CIs over
walls.  Prints a markdown table and one JSON line; ``--png`` draws the two margins against samples and against CPU
seconds.  ``--cache FILE`` keeps the rows measured (by step, walls, seed and first wall) in a JSON file and measures
only the checkpoints not yet in it, so a curve can be followed while its run goes on.

    python bench/ppo_curve.py --run runs/train/ppo --clone agents/checkpoints/kawuxing3-network.pt --walls 500 --seed 52 --png curve.png
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from pathlib import Path


def margin(rules, a, b, walls: int, seed: int, first_wall: int) -> tuple[float, float]:
    """``a`` − ``b`` per hand over ``walls`` walls of ``seed`` from ``first_wall`` (every seating): (margin, 95 % CI)."""
    from agents.tournament.arena import pairwise, play_duplicate

    res = play_duplicate([a, b], rules, walls=walls, seed=seed, first_wall=first_wall, batch_size=256)
    p = pairwise(res)[0]
    sign = 1.0 if p["a"] == a.name else -1.0
    return sign * p["margin"], p["ci95"]


def main(argv=None) -> list[dict]:
    """Evaluate every checkpoint of a run against its clone and heuristic-flush; print the table, write the PNG."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True, help="a train.py run folder (checkpoints/step_*.pt, progress.csv)")
    ap.add_argument("--clone", required=True, help="the checkpoint the run started from")
    ap.add_argument("--variant", default="kawuxing3")
    ap.add_argument("--walls", type=int, default=500)
    ap.add_argument("--seed", type=int, default=52)
    ap.add_argument("--first_wall", type=int, default=0)
    ap.add_argument("--png", default="", help="write the curve here")
    ap.add_argument("--title", default="")
    ap.add_argument("--stride", type=int, default=1, help="measure every STRIDE-th checkpoint (and always the last)")
    ap.add_argument("--cache", default="", help="a JSON file of rows already measured (read, then rewritten)")
    ap.add_argument("--cached_only", action="store_true", help="measure nothing: table and PNG of the cache's rows")
    a = ap.parse_args(argv)
    import torch

    from agents import make_agent
    from mjenv.rules import load_rules

    torch.set_num_threads(1)  # one thread, as evaluate.py's network agents (more only spin on a shared machine)

    rules = load_rules(a.variant)
    run = Path(a.run)
    cpu_at = {}
    with open(run / "progress.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            cpu_at[int(row["samples"])] = float(row["cpu"])
    points = [(0, Path(a.clone))] + sorted((int(re.search(r"step_(\d+)", p.name).group(1)), p)
                                           for p in (run / "checkpoints").glob("step_*.pt"))
    if a.stride < 1:
        raise SystemExit(f"ppo_curve: --stride must be at least 1, not {a.stride}")
    saves = points[1:]
    points = points[:1] + [p for i, p in enumerate(saves) if (i + 1) % a.stride == 0 or i == len(saves) - 1
                           or a.cached_only]
    clone = make_agent(f"network:{a.clone}", rules, name="clone")
    hf = make_agent("heuristic-flush", rules)
    cache_path = Path(a.cache) if a.cache else None
    cached = json.loads(cache_path.read_text(encoding="utf-8")) if cache_path and cache_path.exists() else {}
    where = f"{run.name}:{Path(a.clone).name}:{a.walls}:{a.seed}:{a.first_wall}"
    rows = []
    for step, path in points:
        key = f"{step}@{where}"  # the run, its clone and the walls: a row is reused only for the same match
        if key in cached:
            rows.append(cached[key])
        elif a.cached_only:
            continue
        else:
            agent = make_agent(f"network:{path}", rules, name=f"step{step}")
            vs_clone = (0.0, 0.0) if step == 0 else margin(rules, agent, clone, a.walls, a.seed, a.first_wall)
            vs_hf = margin(rules, agent, hf, a.walls, a.seed, a.first_wall)
            cpu = 0.0 if step == 0 else cpu_at.get(step, max(v for k, v in cpu_at.items() if k <= step))
            rows.append({"samples": step, "cpu": round(cpu, 1), "vs_clone": vs_clone[0], "vs_clone_ci": vs_clone[1],
                         "vs_hf": vs_hf[0], "vs_hf_ci": vs_hf[1]})
            if cache_path:
                cached[key] = rows[-1]
                cache_path.write_text(json.dumps(cached, indent=1), encoding="utf-8")
        r = rows[-1]
        vs_clone, vs_hf, cpu = (r["vs_clone"], r["vs_clone_ci"]), (r["vs_hf"], r["vs_hf_ci"]), r["cpu"]
        print(f"| {step:,} | {cpu:,.0f} | {vs_clone[0]:+.3f} ± {vs_clone[1]:.3f} | {vs_hf[0]:+.3f} ± {vs_hf[1]:.3f} |",
              flush=True)
    print(json.dumps({"run": str(run), "walls": a.walls, "seed": a.seed, "first_wall": a.first_wall, "rows": rows}))
    if a.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
        for ax, key, label in ((axes[0], "samples", "PPO samples"), (axes[1], "cpu", "CPU seconds (one torch thread)")):
            x = [r[key] for r in rows]
            ax.errorbar(x, [r["vs_clone"] for r in rows], yerr=[r["vs_clone_ci"] for r in rows], marker="o",
                        capsize=3, label="− the clone (paired)")
            ax.errorbar(x, [r["vs_hf"] for r in rows], yerr=[r["vs_hf_ci"] for r in rows], marker="s", capsize=3,
                        label="− heuristic-flush")
            ax.axhline(0, color="grey", lw=0.8)
            ax.set_xlabel(label)
        axes[0].set_ylabel(f"margin per hand (95 % CI, {a.walls} walls of seed {a.seed})")
        axes[0].legend()
        fig.suptitle(a.title or f"{run.name}: PPO against its start")
        fig.tight_layout()
        fig.savefig(a.png, dpi=110)
    return rows


if __name__ == "__main__":
    main()
