"""Strength and cost of the search agent: a duplicate tournament against a baseline, and the CPU time per searched
decision.

Plays ``--walls`` walls (every seating, agents/tournament/arena.py) of ``--spec`` (a ``search`` agent spec, e.g.
``search:worlds=128``, or any other agent name as a reference run, its search figures then 0) against ``--opponent`` (default ``heuristic-flush``) and prints the head-to-head margin with
its 95 % CI over walls, how many decisions the search agent made, searched and changed, and the CPU milliseconds
per searched decision (``time.process_time`` inside the agent: world sampling, rollouts and all).

    python bench/search.py --spec search --walls 1000
    python bench/search.py --spec search:worlds=8 --walls 300 --first_wall 20000
"""

from __future__ import annotations

import argparse
import json
import time


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spec", default="search")
    p.add_argument("--opponent", default="heuristic-flush")
    p.add_argument("--variant", default="kawuxing3")
    p.add_argument("--walls", type=int, default=100)
    p.add_argument("--first_wall", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--json", default=None, help="also write the figures to this file")
    a = p.parse_args(argv)
    try:  # a checkpoint's policy: one torch thread
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass

    from agents import make_agent
    from agents.tournament.arena import _per_wall_scores, pairwise, play_duplicate

    search = make_agent(a.spec, a.variant, seed=a.seed)
    opp = make_agent(a.opponent, a.variant)
    t0 = time.process_time()
    res = play_duplicate([search, opp], a.variant, walls=a.walls, seed=a.seed, first_wall=a.first_wall,
                         batch_size=a.batch)
    cpu = time.process_time() - t0
    pw = pairwise(res)[0]
    margin = pw["margin"] if pw["a"] == search.name else -pw["margin"]
    st = getattr(search, "stats", None) or {"decisions": 0, "searched": 0, "changed": 0, "cpu_s": 0.0,
                                             "rollout_tables": 0}  # a policy without search (a reference run)
    ms = 1e3 * st["cpu_s"] / max(st["searched"], 1)
    out = {"variant": a.variant, "spec": a.spec, "opponent": a.opponent, "walls": a.walls,
           "first_wall": a.first_wall, "seed": a.seed, "hands": len(res.records), "margin": margin,
           "ci95": pw["ci95"], **st, "ms_per_searched": ms, "cpu_s_total": cpu}
    walls, per_wall = _per_wall_scores(res.records, 2)
    out["per_wall"] = {int(w): float(d) for w, d in zip(walls, per_wall[:, 0] - per_wall[:, 1])}
    print(f"{a.variant}: {a.spec} - {a.opponent} = {margin:+.3f} ± {pw['ci95']:.3f} per hand over {a.walls} walls "
          f"({a.first_wall}..{a.first_wall + a.walls - 1}, seed {a.seed}; {len(res.records)} hands)")
    print(f"  decisions {st['decisions']:,}, searched {st['searched']:,}, changed {st['changed']:,}; "
          f"{ms:.1f} CPU ms per searched decision ({st['rollout_tables'] / max(st['searched'], 1):.0f} rollout tables "
          f"each); {cpu:.0f} CPU s in all")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
