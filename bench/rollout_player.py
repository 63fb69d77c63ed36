"""Speed of the compiled rollout player (agents/players/fastplay.py) against the Python heuristic, per decision.

B tables are dealt and played to the end with the fast player choosing every move; at every step both players
decide for the same live tables, timed apart in CPU seconds (``time.process_time``):

* ``fast``: :meth:`agents.players.fastplay.FastPlayer.decide` (reads the packed state directly);
* ``heuristic``: ``heuristic-flush``'s ``act`` on the observations, plus the encoding of those observations
  (its input; the fast player needs none), both shown.

Then whole rollouts (:meth:`FastPlayer.rollout`: decisions and engine steps) are timed on fresh deals: the
figure the search agent lives on.  Prints decisions per CPU second and the ratio.

    python bench/rollout_player.py --variant kawuxing3 --batch 256 --hands 2
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", default="kawuxing3")
    p.add_argument("--batch", type=int, default=256, help="tables (B)")
    p.add_argument("--hands", type=int, default=2, help="rounds of B hands for the per-decision timing")
    p.add_argument("--rollouts", type=int, default=8, help="rounds of B hands for the rollout timing")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)

    from agents import make_agent
    from agents.players.fastplay import FastPlayer
    from mjenv.encoding.observation import encoder_for
    from mjenv.engine.core import Engine

    eng = Engine(a.variant, a.batch, record_events=False)
    fast = FastPlayer(a.variant, eng.opts)
    heur = make_agent("heuristic-flush", a.variant, eng.opts)
    enc = encoder_for(eng)
    # warm both (compilation, lookup tables) before timing
    eng.reset(seed=a.seed + 10_000)
    live = np.flatnonzero(~eng.done)
    fast.decide(eng)
    heur.act(enc.encode(eng.state, eng.state.actor[live], live), eng.mask[live])

    t_fast = t_heur = t_enc = 0.0
    n_dec = 0
    for r in range(a.hands):
        eng.reset(seed=a.seed + r)
        acts = np.zeros(a.batch, np.int64)
        while not eng.done.all():
            live = np.flatnonzero(~eng.done)
            t0 = time.process_time()
            fast.decide(eng, out=acts)
            t1 = time.process_time()
            obs = enc.encode(eng.state, eng.state.actor[live], live)
            t2 = time.process_time()
            heur.act(obs, eng.mask[live])
            t3 = time.process_time()
            t_fast += t1 - t0
            t_enc += t2 - t1
            t_heur += t3 - t2
            n_dec += len(live)
            eng.step(acts)
    print(f"{a.variant}, B = {a.batch}, {a.hands * a.batch} hands, {n_dec:,} decisions (fast player's play)")
    print(f"  fast player        {n_dec / t_fast:12,.0f} decisions / CPU s  ({1e6 * t_fast / n_dec:7.2f} us each)")
    print(f"  heuristic-flush    {n_dec / t_heur:12,.0f} decisions / CPU s  ({1e6 * t_heur / n_dec:7.2f} us each)"
          f"  + encoding {1e6 * t_enc / n_dec:.2f} us")
    print(f"  ratio fast / heuristic: {t_heur / t_fast:,.0f}x  (with encoding: {(t_heur + t_enc) / t_fast:,.0f}x)")

    t0 = time.process_time()
    total = 0
    for r in range(a.rollouts):
        eng.reset(seed=a.seed + 1000 + r)
        total += fast.rollout(eng)
    t = time.process_time() - t0
    print(f"  rollouts (decisions + engine steps): {total / t:,.0f} decisions / CPU s, "
          f"{a.rollouts * a.batch / t:,.0f} hands / CPU s")


if __name__ == "__main__":
    main()
