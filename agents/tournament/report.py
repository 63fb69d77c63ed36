"""The rule-variant report of ``evaluate.py --compare ... --report``: statistics over paired walls, with 95 %
intervals, in report.md and PNG plots.

This module owns the report's measures and their intervals.  Every measure is first computed per wall (over the
hands of that wall, every seating), then averaged over walls with a Student-t interval
(:func:`agents.tournament.arena.mean_ci`): the wall is the independent unit, and the same walls are played under every
variant, so a difference between two variants is the mean over walls of the per-wall differences, with its own
paired interval (the luck of the deal cancels).

Measures per variant (:data:`MEASURES`): win, draw, deal-in, self-draw and 亮倒 rates, the winning hand value
(mean, and its distribution), the dealer's advantage, the hand length, the money variance per hand, and the
skill measure: the duplicate margin of a stronger agent over a weaker one (per pair of ``--skill``), with the
number of hands a duplicate tournament needs for its 95 % interval to exclude zero.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from agents.tournament.arena import GameRecord, TournamentResult, mean_ci, t_quantile

# key -> (label, unit / note); computed per wall by per_wall_measures
MEASURES: dict[str, tuple[str, str]] = {
    "win": ("win rate", "share of hands won by someone"),
    "draw": ("draw rate", "share of hands drawn (wall exhausted)"),
    "deal_in": ("deal-in rate", "share of hands won on a discard or a robbed kong"),
    "self_draw": ("self-draw rate", "share of hands won by self-draw"),
    "liang": ("亮倒 rate", "share of seat-hands that declared 亮倒"),
    "value": ("hand value", "mean value V of the winning hands (per winner)"),
    "dealer": ("dealer advantage", "the dealer's money per hand, base stakes (0 = no advantage)"),
    "length": ("hand length", "discards per hand"),
    "variance": ("money variance", "mean squared money per seat per hand, base stakes²"),
}
RATES = ("win", "draw", "deal_in", "self_draw", "liang")


def per_wall_measures(records: Sequence[GameRecord]) -> dict[str, dict[int, float]]:
    """``{measure: {wall: value}}`` over the hands of each wall (``value``: NaN on a wall without a win)."""
    by_wall: dict[int, list[GameRecord]] = {}
    for r in records:
        by_wall.setdefault(r.wall, []).append(r)
    out: dict[str, dict[int, float]] = {k: {} for k in MEASURES}
    for w, rs in by_wall.items():
        n = len(rs)
        values = [v for r in rs for v in r.values]
        out["win"][w] = sum(r.how != "draw" for r in rs) / n
        out["draw"][w] = sum(r.how == "draw" for r in rs) / n
        out["deal_in"][w] = sum(r.how in ("discard", "rob") for r in rs) / n
        out["self_draw"][w] = sum(r.how == "self-draw" for r in rs) / n
        out["liang"][w] = float(np.mean([np.mean(r.revealed) for r in rs]))
        out["value"][w] = float(np.mean(values)) if values else float("nan")
        out["dealer"][w] = float(np.mean([r.deltas[r.dealer] for r in rs]))
        out["length"][w] = float(np.mean([r.discards for r in rs]))
        out["variance"][w] = float(np.mean([np.mean(np.square(r.deltas)) for r in rs]))
    return out


def _ci(values) -> dict:
    x = np.asarray([v for v in values if v == v], dtype=np.float64)
    m, hw = mean_ci(x)
    return {"mean": m, "ci95": hw, "walls": int(len(x))}


def _paired(a: dict[int, float], b: dict[int, float]) -> dict:
    """Mean over shared walls of ``a - b`` with its 95 % interval (walls where either is undefined are left out)."""
    return _ci([a[w] - b[w] for w in sorted(set(a) & set(b)) if a[w] == a[w] and b[w] == b[w]])


def skill_margin(result: TournamentResult) -> dict:
    """Duplicate margin of agent 0 over agent 1 (money per hand, mean over walls of the per-wall difference), its
    interval, and the hands needed to tell them apart at 95 %: the walls ``n`` at which ``t · sd / √n`` equals the
    margin, times the hands per wall."""
    from agents.tournament.arena import _per_wall_scores

    walls, per_wall = _per_wall_scores(result.records, 2)
    diff = per_wall[:, 0] - per_wall[:, 1]
    ok = ~np.isnan(diff)
    m, hw = mean_ci(diff[ok])
    sd = float(np.std(diff[ok], ddof=1)) if ok.sum() > 1 else float("nan")
    per_wall_hands = len(result.records) / max(1, len(walls))
    need = float("nan")
    if sd == sd and m != 0:
        need = math.ceil(max(2.0, (t_quantile(10**6) * sd / abs(m)) ** 2)) * per_wall_hands
    return {"strong": result.names[0], "weak": result.names[1], "margin": m, "ci95": hw, "sd_wall": sd,
            "walls": int(ok.sum()), "hands": len(result.records), "hands_needed": need,
            "per_wall": {int(w): float(d) for w, d in zip(walls, diff) if d == d}}


def build_report(results: Sequence[TournamentResult], skills: dict[str, list[TournamentResult]]) -> dict:
    """The report's numbers: per variant (``results``, in order, the first the baseline) every measure with its
    interval, the value distribution and the skill margins (``skills[config]``: one two-agent result per pair);
    per other variant its paired differences from the baseline."""
    variants = []
    for res in results:
        pw = per_wall_measures(res.records)
        values = Counter(v for r in res.records for v in r.values)
        wins = sum(values.values())
        variants.append({
            "config": res.config, "hands": len(res.records), "walls": len({r.wall for r in res.records}),
            "measures": {k: _ci(pw[k].values()) for k in MEASURES}, "per_wall": pw,
            "values": {int(v): c / wins for v, c in sorted(values.items())} if wins else {},
            "skill": [skill_margin(s) for s in skills.get(res.config, [])],
        })
    base = variants[0]
    for v in variants[1:]:
        v["vs_baseline"] = {k: _paired(v["per_wall"][k], base["per_wall"][k]) for k in MEASURES}
        v["skill_vs_baseline"] = [_paired(s["per_wall"], b["per_wall"]) for s, b in zip(v["skill"], base["skill"])]
    return {"baseline": base["config"], "variants": variants}


# ------------------------------------------------------------------------------------------ text


def _fmt(c: dict, pct: bool = False, digits: int = 3) -> str:
    if c["mean"] != c["mean"]:
        return "n/a"
    k = 100 if pct else 1
    hw = "" if c["ci95"] != c["ci95"] else f" ± {k * c['ci95']:.{1 if pct else digits}f}"
    return f"{k * c['mean']:.{1 if pct else digits}f}{hw}"


def _sig(c: dict) -> str:
    return " *" if c["ci95"] == c["ci95"] and abs(c["mean"]) > c["ci95"] else ""


def report_markdown(rep: dict, command: str, agents: Sequence[str], images: Sequence[str]) -> str:
    """report.md: the command, the definitions, the tables and the figures."""
    vs = rep["variants"]
    lines = [f"# Rule-variant report: {', '.join(v['config'] for v in vs)}", "",
             f"Rerun: `{command}`", "",
             f"Agents at the tables: {', '.join(agents)}.  {vs[0]['walls']} walls per variant, the same walls in each "
             f"(every seating of each wall), {vs[0]['hands']} hands per variant.  Every figure is a mean over walls of "
             "the per-wall value with its 95 % Student-t interval (± half-width); differences are paired by wall "
             f"(`*`: the interval excludes 0).  Baseline: `{rep['baseline']}`.", "",
             "## Rates, hand value, dealer, length, variance", "",
             "| measure | " + " | ".join(f"`{v['config']}`" for v in vs) + " |",
             "|---|" + "---|" * len(vs)]
    for k, (label, _) in MEASURES.items():
        pct = k in RATES
        lines.append(f"| {label}{' (%)' if pct else ''} | " + " | ".join(_fmt(v["measures"][k], pct) for v in vs) + " |")
    lines += ["", "Definitions: " + "; ".join(f"**{label}**: {note}" for label, note in MEASURES.values()) + ".", ""]
    if len(vs) > 1:
        lines += ["## Differences from the baseline (paired by wall)", "",
                  "| measure | " + " | ".join(f"`{v['config']}` − `{rep['baseline']}`" for v in vs[1:]) + " |",
                  "|---|" + "---|" * (len(vs) - 1)]
        for k, (label, _) in MEASURES.items():
            pct = k in RATES
            lines.append(f"| {label}{' (points)' if pct else ''} | " + " | ".join(
                _fmt(v["vs_baseline"][k], pct) + _sig(v["vs_baseline"][k]) for v in vs[1:]) + " |")
        for i, s in enumerate(vs[0]["skill"]):
            lines.append(f"| skill: {s['strong']} − {s['weak']} | " + " | ".join(
                _fmt(v["skill_vs_baseline"][i]) + _sig(v["skill_vs_baseline"][i]) for v in vs[1:]) + " |")
        lines.append("")
    if vs[0]["skill"]:
        lines += ["## Skill: how much the rules reward the better player", "",
                  "Duplicate tournaments of two agents on the same walls (money per hand of the first minus the "
                  "second); *hands needed*: the size of a duplicate tournament whose 95 % interval would just exclude "
                  "zero at this margin ((1.96 · sd over walls / margin)² walls × hands per wall).", "",
                  "| variant | pair | margin ± 95 % | sd over walls | hands needed |", "|---|---|---|---|---|"]
        for v in vs:
            for s in v["skill"]:
                need = "n/a" if s["hands_needed"] != s["hands_needed"] else f"{s['hands_needed']:,.0f}"
                c = {"mean": s["margin"], "ci95": s["ci95"]}
                lines.append(f"| `{v['config']}` | {s['strong']} − {s['weak']} | {_fmt(c)}{_sig(c)} | "
                             f"{s['sd_wall']:.3f} | {need} |")
        lines.append("")
    lines += ["## Winning hand values", "", "Share of wins by hand value V (uncapped):", "",
              "| V | " + " | ".join(f"`{v['config']}`" for v in vs) + " |", "|---|" + "---|" * len(vs)]
    keys = sorted({k for v in vs for k in v["values"]})
    for key in keys:
        lines.append(f"| {key} | " + " | ".join(f"{100 * v['values'].get(key, 0.0):.1f} %" for v in vs) + " |")
    lines += ["", "## Figures", ""] + [f"![{Path(p).stem}]({Path(p).name})" for p in images]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ plots


def grouped_bars(ax, x: np.ndarray, series: Sequence[tuple[str, Sequence[float], Sequence[float] | None]]) -> None:
    """Several bar series side by side at positions ``x``: ``(label, heights, error half-widths or None)``."""
    width = 0.8 / max(1, len(series))
    for i, (label, heights, errors) in enumerate(series):
        ax.bar(x + (i - (len(series) - 1) / 2) * width, heights, width, yerr=errors, capsize=3 if errors is not None else 0,
               label=label)


def report_plots(folder: Path, rep: dict, plt, save: Callable) -> list[Path]:
    """report_rates.png, report_table.png, report_values.png, report_skill.png (and report_diff.png with two or
    more variants), every bar with its 95 % interval; ``save(fig, path)`` writes a figure."""
    vs = rep["variants"]
    labels = [v["config"] for v in vs]
    x = np.arange(len(vs))
    paths = []

    def err(c):
        return 0.0 if c["ci95"] != c["ci95"] else c["ci95"]

    def done(fig, ax, name: str, ylabel: str, title: str) -> None:
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(fontsize=8, ncol=len(RATES) if name == "report_rates" else 1)
        fig.tight_layout()
        paths.append(save(fig, folder / f"{name}.png"))
        plt.close(fig)

    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(vs) * 1.5), 3.8))
    grouped_bars(ax, x, [(k.replace("_", "-").replace("liang", "liangdao"), [v["measures"][k]["mean"] for v in vs],
                          [err(v["measures"][k]) for v in vs]) for k in RATES])
    ax.set_xticks(x, labels, rotation=15)
    done(fig, ax, "report_rates", "share", "rates per hand (95% CI over walls)")

    fig, axes = plt.subplots(1, 4, figsize=(max(11, 2.2 * len(vs) * 4 / 2), 3.6))
    for ax, k in zip(axes, ("value", "dealer", "length", "variance")):
        ax.bar(x, [v["measures"][k]["mean"] for v in vs], yerr=[err(v["measures"][k]) for v in vs], capsize=5,
               color="tab:green" if k == "value" else "tab:gray")
        ax.axhline(0, color="black", lw=0.6)
        ax.set_title({"value": "mean winning value", "dealer": "dealer money / hand", "length": "discards / hand",
                      "variance": "money variance / hand"}[k], fontsize=9)
        ax.set_xticks(x, labels, rotation=25, ha="right", fontsize=7)
    fig.suptitle("95% CI over walls", fontsize=9)
    fig.tight_layout()
    paths.append(save(fig, folder / "report_table.png"))
    plt.close(fig)

    keys = sorted({k for v in vs for k in v["values"]})
    if keys:
        fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(keys) * len(vs)), 3.5))
        kx = np.arange(len(keys))
        grouped_bars(ax, kx, [(v["config"], [v["values"].get(k, 0.0) for k in keys], None) for v in vs])
        ax.set_xticks(kx, [str(k) for k in keys])
        ax.set_xlabel("winning hand value V")
        done(fig, ax, "report_values", "share of wins", "distribution of winning hand values")

    pairs = [f"{s['strong']} − {s['weak']}" for s in vs[0]["skill"]]
    if pairs:
        fig, ax = plt.subplots(figsize=(max(6, 1.5 * len(vs) * len(pairs)), 3.6))
        grouped_bars(ax, x, [(name, [v["skill"][i]["margin"] for v in vs], [err(v["skill"][i]) for v in vs])
                             for i, name in enumerate(pairs)])
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xticks(x, labels, rotation=15)
        done(fig, ax, "report_skill", "margin, money per hand", "skill: duplicate margin of the stronger agent (95% CI over walls)")

    if len(vs) > 1:
        keys = list(MEASURES)
        fig, axes = plt.subplots(1, len(keys), figsize=(2.0 * len(keys), 3.8))
        for ax, k in zip(axes, keys):
            d = [v["vs_baseline"][k] for v in vs[1:]]
            ax.errorbar(np.arange(len(d)), [c["mean"] for c in d], yerr=[err(c) for c in d], fmt="o", capsize=4)
            ax.axhline(0, color="black", lw=0.6)
            ax.set_title(MEASURES[k][0].replace("亮倒", "liangdao"), fontsize=8)
            ax.set_xticks(np.arange(len(d)), [v["config"] for v in vs[1:]], rotation=30, ha="right", fontsize=7)
        fig.suptitle(f"difference from {rep['baseline']} (paired by wall, 95% CI)", fontsize=9)
        fig.tight_layout()
        paths.append(save(fig, folder / "report_diff.png"))
        plt.close(fig)
    return paths
