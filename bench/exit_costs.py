"""What a round of expert iteration costs: labelling on a policy's states, and rollouts by a policy against the compiled player.

For the states (``--decisions`` labelled decisions each, :func:`agents.training.distill.label_states`, seed 9100):
the compiled player (``heuristic-flush``'s core) playing the tables, then each ``--policies`` checkpoint playing them
(expert iteration's states); it prints CPU ms per labelled decision and where each policy's move sits in the
compiled player's shortlist (column 0: its choice; -1: outside the shortlist).  For the rollouts: the same worlds
(``--decisions_rolled`` decisions of a mid-hand position, every candidate in 32 worlds) played to the end of the hand
by the compiled player, by the compiled improved player of each ``--fasthead`` checkpoint (its departure head in
numba, :class:`agents.players.fasthead.FastHeadPlayer`) and by each policy stepping the world tables in batches, CPU
ms per world table.  One torch thread; figures are CPU time (``time.process_time``) of this process, so they compare
within one run.  ``--decisions 0`` skips the states.

    python bench/exit_costs.py --decisions 1000 --policies agents/checkpoints/kawuxing3-default.pt agents/checkpoints/kawuxing3-network-dh.pt
    python bench/exit_costs.py --decisions 0 --decisions_rolled 16 --fasthead agents/checkpoints/kawuxing3-default.pt
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's agents, not an installed copy


def main(argv=None) -> int:
    """Measure and print (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--decisions", type=int, default=1000)
    ap.add_argument("--decisions_rolled", type=int, default=8)
    ap.add_argument("--policies", nargs="+", default=["agents/checkpoints/kawuxing3-long.pt"])
    ap.add_argument("--fasthead", nargs="*", default=[], help="checkpoints whose compiled improved player rolls out")
    args = ap.parse_args(argv)
    import torch

    from agents.players.fasthead import FastHeadPlayer
    from agents.players.keyrng import mix
    from agents.players.policy import PolicyAgent
    from agents.players.search import SearchAgent
    from agents.training.distill import label_states
    from mjenv.encoding.observation import encoder_for
    from mjenv.engine import state as S
    from mjenv.engine.core import Engine

    torch.set_num_threads(1)
    policies = [(p, PolicyAgent(p, "kawuxing3")) for p in args.policies]
    for name, p in (("compiled player", None), *policies) if args.decisions > 0 else ():
        t = time.process_time()
        lab = label_states("kawuxing3", decisions=args.decisions, seed=9100, policy=p)
        c = time.process_time() - t
        pl = lab["played"]
        print(f"states of {name}: {1000 * c / args.decisions:.2f} CPU ms per labelled decision; its move in column "
              + ", ".join(f"{k}: {100 * np.mean(pl == k):.1f} %" for k in (0, 1, 2, -1)), flush=True)

    search = SearchAgent("kawuxing3", candidates=3, worlds=32, seed=5)
    player = search.player
    eng = Engine("kawuxing3", 64, record_events=False)
    eng.reset(seed=777, table_ids=np.arange(64), dealer=np.arange(64) % 3)
    acts = np.full(64, -1, np.int64)
    for _ in range(12):
        live = np.flatnonzero(eng.state.phase != S.DONE)
        player.decide(eng, live, out=acts)
        eng.step(acts)
    live = np.flatnonzero(eng.state.phase != S.DONE)
    cand, ncand = player.candidates(eng, live, 3)
    todo = [i for i in range(len(live)) if ncand[i] >= 2][: args.decisions_rolled]
    seeds = [int(x) for x in mix(np.arange(len(todo), dtype=np.uint64))]
    compiled = [(f"compiled improved player of {c}", FastHeadPlayer(c)) for c in args.fasthead]
    for name, p in (("compiled player", None), *compiled, *policies):
        roll, ra, _, blocks = search._fill(eng, live, cand, ncand, todo, seeds, 32)
        t = time.process_time()
        roll.step(ra)
        if p is None:
            player.rollout(roll)
        elif isinstance(p, FastHeadPlayer):
            p.rollout(roll)
        else:
            enc, st = encoder_for(roll), roll.state
            a = np.full(len(st.phase), -1, np.int64)
            while (lv := np.flatnonzero(st.phase != S.DONE)).size:
                a[:] = -1
                a[lv] = p.act(enc.encode(st, st.actor[lv].astype(np.int64), lv, engine=roll), roll.mask[lv])
                roll.step(a)
        c = time.process_time() - t
        tables = sum(k * 32 for _, k in blocks)
        print(f"rollouts by {name}: {tables} world tables, {1e3 * c / tables:.3f} CPU ms per world table", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
