"""Search over a policy, measured against that policy and heuristic-flush at one table (dev runs).

Plays ``--walls`` walls under every seating of three agents, one per seat: ``--spec`` (a ``search`` agent spec,
e.g. ``search:policy=kawuxing3-default.pt,near=0.2,worlds=64,candidates=2``), ``--base`` (the policy it searches
over, default ``kawuxing3-default.pt``) and ``--opponent`` (default ``heuristic-flush``).  Every hand has one seat
of each, so the three head-to-head margins (paired by wall, 95 % CI over walls) come from the same hands: the
search's gain over its policy is measured without a second run.  Prints them with the search's decisions,
searched and changed decisions and CPU ms per searched decision (``time.process_time`` inside the agent); ``--json``
also writes the per-wall differences.

    python bench/policy_search.py --spec search:policy=kawuxing3-default.pt,near=0.2 --walls 200 --seed 60
"""

from __future__ import annotations

import argparse
import json
import time


def main(argv=None) -> None:
    """Run the three-agent duplicate tournament and print the margins and the search's cost."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spec", required=True)
    p.add_argument("--base", default="kawuxing3-default.pt")
    p.add_argument("--opponent", default="heuristic-flush")
    p.add_argument("--variant", default="kawuxing3")
    p.add_argument("--walls", type=int, default=100)
    p.add_argument("--first_wall", type=int, default=0)
    p.add_argument("--seed", type=int, default=60)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--json", default=None, help="also write the figures to this file")
    a = p.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from agents import make_agent
    from agents.tournament.arena import _per_wall_scores, pairwise, play_duplicate

    agents = [make_agent(a.spec, a.variant, seed=a.seed), make_agent(a.base, a.variant), make_agent(a.opponent, a.variant)]
    names = [a.spec, a.base, a.opponent]
    t0 = time.process_time()
    res = play_duplicate(agents, a.variant, walls=a.walls, seed=a.seed, first_wall=a.first_wall, batch_size=a.batch)
    cpu = time.process_time() - t0
    st = agents[0].stats
    ms = 1e3 * st["cpu_s"] / max(st["searched"], 1)
    walls, per_wall = _per_wall_scores(res.records, 3)
    out = {"variant": a.variant, "spec": a.spec, "base": a.base, "opponent": a.opponent, "walls": a.walls,
           "first_wall": a.first_wall, "seed": a.seed, "hands": len(res.records), **st, "ms_per_searched": ms,
           "cpu_s_total": cpu, "margins": {}}
    print(f"{a.variant}, walls {a.first_wall}..{a.first_wall + a.walls - 1} of seed {a.seed} ({len(res.records)} hands)")
    for i, j in ((0, 1), (0, 2), (1, 2)):
        pw = next(r for r in pairwise(res) if {r["a"], r["b"]} == {res.names[i], res.names[j]})
        m = pw["margin"] if pw["a"] == res.names[i] else -pw["margin"]
        out["margins"][f"{names[i]} - {names[j]}"] = [m, pw["ci95"]]
        out[f"per_wall_{i}{j}"] = [float(d) for d in per_wall[:, i] - per_wall[:, j]]
        print(f"  {names[i]} - {names[j]} = {m:+.3f} ± {pw['ci95']:.3f} per hand")
    print(f"  decisions {st['decisions']:,}, searched {st['searched']:,}, changed {st['changed']:,}; "
          f"{ms:.1f} CPU ms per searched decision ({st['rollout_tables'] / max(st['searched'], 1):.0f} rollout tables "
          f"each); {cpu:.0f} CPU s in all")
    out["walls_list"] = [int(w) for w in walls]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
