"""A training run's folder and evaluations: what every trainer of ``train.py`` writes the same way.

This module owns :func:`duplicate_eval` (the greedy learner against each evaluation opponent in a duplicate
tournament, rows appended to ``eval.csv``), :func:`write_curve` (``learning_curve.png``), :func:`write_progress`
(``progress.csv``), :func:`final_meta` (the training facts a final checkpoint holds) and :func:`finish_run`
(``final.pt``, ``--export`` and ``summary.json``).
"""

from __future__ import annotations

import csv
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.players.policy import save_checkpoint
from agents.tournament.arena import json_text, pairwise, play_duplicate, summarize


def write_curve(rows: list[dict], path: Path, title: str) -> None:
    """Plot the evaluation margin (and its 95 % CI) against each opponent to ``path``: over training steps, and,
    when the rows carry ``cpu_seconds`` (the process's CPU time at each evaluation), over CPU minutes beside it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError:
        return
    axes_x = [("step", "learner steps (0 = after behaviour cloning)", 1.0)]
    if all("cpu_seconds" in r for r in rows):
        axes_x.append(("cpu_seconds", "CPU minutes of this process (training and evaluations)", 60.0))
    fig, axes = plt.subplots(1, len(axes_x), figsize=(7 * len(axes_x), 4), squeeze=False)
    for ax, (key, label, scale) in zip(axes[0], axes_x):
        for name in dict.fromkeys(r["opponent"] for r in rows):
            pts = [r for r in rows if r["opponent"] == name]
            x = np.array([float(r[key]) / scale for r in pts])
            y = np.array([r["margin"] for r in pts])
            e = np.array([r["margin_ci95"] for r in pts])
            ax.plot(x, y, marker="o", label=f"vs {name}")
            ax.fill_between(x, y - e, y + e, alpha=0.2)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xlabel(label)
        ax.set_ylabel("duplicate margin per hand (policy - opponent)")
        ax.legend()
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def duplicate_eval(learner, eval_agents: dict, args: Any, rules, step: int, walls: int, first_wall: int,
                   rows: list[dict], folder: Path, title: str) -> dict:
    """The greedy ``learner`` against each evaluation opponent in a duplicate tournament (``walls`` walls from
    ``first_wall``); prints one line per opponent, appends the rows to ``rows`` and rewrites ``eval.csv`` (and
    the learning curve).  Returns ``{opponent: row}``."""
    out = {}
    for name, opp in eval_agents.items():
        res = play_duplicate([learner, opp], rules, walls=walls, seed=10_000 + args.seed,
                             first_wall=first_wall, batch_size=min(256, walls * 6))
        st = {s["agent"]: s for s in summarize(res)}["learner"]
        margin = next(p for p in pairwise(res))
        signed = margin["margin"] if margin["a"] == "learner" else -margin["margin"]
        row = {"step": step, "opponent": name, "score": st["mean"], "ci95": st["ci95"], "margin": signed,
               "margin_ci95": margin["ci95"], "win_rate": st["win_rate"], "deal_in_rate": st["deal_in_rate"],
               "liang_rate": st["liang_rate"], "hands": len(res.records), "cpu_seconds": round(time.process_time(), 1)}
        out[name] = row
        rows.append(row)
        print(f"[eval @ {step:>9,}] vs {name:<10} score/hand {st['mean']:+.3f} ± {st['ci95']:.3f}  "
              f"(margin {signed:+.3f} ± {margin['ci95']:.3f}, win {100 * st['win_rate']:.1f}%, "
              f"deal-in {100 * st['deal_in_rate']:.1f}%, {len(res.records)} hands)", flush=True)
    with open(folder / "eval.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    if args.curve:
        write_curve(rows, folder / "learning_curve.png", title)
    return out


def write_progress(rows: list[dict], path: Path) -> None:
    """Write the per-iteration rows of a trainer to ``path`` (CSV, the union of their keys as columns)."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        keys = list(dict.fromkeys(k for r in rows for k in r))
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def final_meta(final: dict, seconds: float, cpu: float) -> dict:
    """The training facts a final checkpoint's ``meta`` holds: times and the final evaluation rows."""
    return {"train_seconds": round(seconds, 1), "train_cpu_seconds": round(cpu, 1),
            "final_eval": {k: {kk: vv for kk, vv in v.items() if kk != "step"} for k, v in final.items()}}


def finish_run(args: Any, folder: Path, ck: dict, summary: dict) -> dict:
    """Save the final checkpoint ``ck`` as ``final.pt`` (and ``--export``), write ``summary.json`` (adding the
    checkpoint's path to ``summary``); returns the summary."""
    final_path = save_checkpoint(folder / "final.pt", ck)
    print(f"final checkpoint: {final_path}")
    if args.export:
        Path(args.export).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(final_path, args.export)
        print(f"exported to {args.export}")
    summary["checkpoint"] = str(final_path)
    (folder / "summary.json").write_text(json_text(summary), encoding="utf-8")
    return summary
