"""How often :meth:`agents.players.heuristic.HeuristicAgent.candidates` (read from the observation) lists the same top-k
actions as the compiled player's :meth:`agents.players.fastplay.FastPlayer.candidates` (read from the engine).

Plays ``--tables`` tables of ``--variant`` self-play with :class:`~agents.players.fastplay.FastPlayer` in every seat (walls
``(seed, i)``, dealer rotating, fresh walls as hands end) and, at every decision where either list has at least
two candidates, compares the two top-k lists: exact list, same set, same first candidate.  It also times both
Python calls (``time.process_time`` per decision, :meth:`~agents.players.heuristic.HeuristicAgent.act` as the peer).

    python bench/heuristic_candidates.py --variant kawuxing3 --decisions 20000
"""

from __future__ import annotations

import argparse
import collections
import time

import numpy as np


def measure(variant: str, decisions: int, tables: int = 64, k: int = 3, seed: int = 0, show: int = 0,
            time_act: bool = True) -> dict:
    """Agreement counts and CPU seconds over ``decisions`` compared decisions (see the module docstring)."""
    from agents import make_agent
    from agents.training.distill import KINDS, decision_kinds
    from agents.players.fastplay import FastPlayer
    from mjenv.encoding.observation import encoder_for
    from mjenv.engine import state as S
    from mjenv.engine.core import Engine

    heur = make_agent("heuristic-flush", variant)
    fast = FastPlayer(variant, heur.opts)
    eng = Engine(variant, tables, options=heur.opts, record_events=False)
    enc = encoder_for(eng)
    st = eng.state
    eng.reset(seed=seed, table_ids=np.arange(tables), dealer=np.arange(tables) % eng.n)
    next_wall = tables
    acts = np.full(tables, -1, np.int64)
    n = exact = same_set = first = first_vs_act = rows = 0
    t_cand = t_act = 0.0
    kinds: collections.Counter = collections.Counter()
    per_kind = {name: [0, 0] for name in KINDS}  # decision kind (by the compiled list): [decisions, exact]
    shown = 0
    while n < decisions:
        live = np.flatnonzero(st.phase != S.DONE)
        fast.decide(eng, live, out=acts)
        fa, fn = fast.candidates(eng, live, k)
        obs = enc.encode(st, st.actor[live].astype(np.int64), live, engine=eng)
        mask = eng.mask[live]
        rows += len(live)
        c0 = time.process_time()
        ha, hn = heur.candidates(obs, mask, k)
        t_cand += time.process_time() - c0
        if time_act:
            c0 = time.process_time()
            choice = heur.act(obs, mask)
            t_act += time.process_time() - c0
            first_vs_act += int((choice != ha[:, 0]).sum())
        sel = np.flatnonzero((fn >= 2) | (hn >= 2))
        n += len(sel)
        kind_of = decision_kinds(fa, fn)
        for i in sel:
            f, h = list(fa[i, : fn[i]]), list(ha[i, : hn[i]])
            exact += f == h
            per_kind[KINDS[kind_of[i]]][0] += 1
            per_kind[KINDS[kind_of[i]]][1] += f == h
            same_set += set(f) == set(h)
            first += int(f[0] == h[0])
            if f != h:
                kind = "own" if st.phase[live[i]] in (S.TURN, S.CLAIMED) else str(int(st.phase[live[i]]))
                kinds[(kind, "first" if f[0] != h[0] else ("set" if set(f) != set(h) else "order"))] += 1
                if shown < show:
                    shown += 1
                    print(f"table {live[i]} phase {int(st.phase[live[i]])}: fast {f} heuristic {h}")
        eng.step(acts)
        next_wall, _ = eng.deal_next_walls(seed, next_wall)
    return {"variant": variant, "decisions": n, "exact": exact, "same_set": same_set, "first": first,
            "first_vs_act": first_vs_act, "rows": rows, "per_kind": per_kind, "cand_s": t_cand, "act_s": t_act, "kinds": dict(kinds),
            "hands": int(next_wall)}


def main(argv=None) -> None:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", default="kawuxing3")
    ap.add_argument("--decisions", type=int, default=20_000)
    ap.add_argument("--tables", type=int, default=64)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=0, help="print this many disagreements")
    a = ap.parse_args(argv)
    r = measure(a.variant, a.decisions, a.tables, a.k, a.seed, a.show)
    n = r["decisions"]
    print(f"{a.variant}: {n:,} decisions with >= 2 candidates ({r['hands']:,} walls dealt), top-{a.k} lists: "
          f"exact {100 * r['exact'] / n:.2f} %, same set {100 * r['same_set'] / n:.2f} %, "
          f"first {100 * r['first'] / n:.2f} %; first != act(): {r['first_vs_act']}")
    print("by decision kind (exact / decisions): " + ", ".join(
        f"{name} {e:,}/{d:,}" for name, (d, e) in r["per_kind"].items() if d))
    print(f"disagreements by (phase, kind): {r['kinds']}")
    us = 1e6 / r["rows"]
    print(f"CPU per decision (all {r['rows']:,} of the run, batches of the live tables): candidates "
          f"{r['cand_s'] * us:.0f} us, act {r['act_s'] * us:.0f} us (ratio {r['cand_s'] / max(r['act_s'], 1e-9):.2f})")


if __name__ == "__main__":
    main()
