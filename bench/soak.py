"""Validator soak: one player in every seat, :func:`mjenv.engine.validate.validate` after every step.

B engine tables play whole matches: a finished table deals its match's next hand (``Engine.next_hand``: dealer
rotation, match money, sessions and 园子 balances carried), or a new match once its session is over.  After every
engine step the validator checks every table (tile conservation, zero-sum money, hand sizes, melds, the cached
mask against a fresh one, 园子 balances and session ends); every finished hand's result is read (built by the pure
scorer) and checked against the table: its deltas are the table's money and add up to 0, its ``session_over`` is the
engine's.  Random play rarely reaches the scoring paths (86-99 % of its hands end drawn), so the default player is
the heuristic; ``--player`` takes any agent name of :func:`agents.make_agent` (``fast`` is the compiled one).

Prints hands, decisions, hand ends by kind, invariant failures (the first one's message, then the soak stops
unless ``--keep-going``) and CPU seconds (``time.process_time``); exit status 1 when anything failed.

    python bench/soak.py --variant kawuxing3 --hands 2000 --player heuristic
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

import numpy as np


def soak(variant: str, hands: int, *, player: str = "heuristic", batch: int = 256, seed: int = 0, options=None,
         keep_going: bool = False, out=sys.stdout) -> dict:
    """Play at least ``hands`` hands of ``variant`` with ``player`` in every seat, validating after every step.

    Returns ``{"hands", "decisions", "ends", "failures", "first_failure", "cpu_s", "player", "variant", ...}``."""
    from agents import make_agent
    from agents.players.base import agent_act
    from mjenv.encoding.observation import encoder_for
    from mjenv.engine.core import Engine
    from mjenv.engine.validate import InvariantError, validate

    eng = Engine(variant, batch, options=options, record_events=False)
    agent = make_agent(player, variant, eng.opts, seed=seed)
    enc = encoder_for(eng) if getattr(agent, "uses_obs", True) else None
    failures, first = 0, None
    ends: Counter = Counter()
    n_hands = matches = 0
    deal_seed = seed * 1_000_003

    def failed(message: str) -> None:
        nonlocal failures, first
        failures += 1
        if first is None:
            first = message
            print(f"FAILED: {message}", file=out)

    t0 = time.process_time()
    eng.reset(seed=deal_seed, dealer=np.arange(batch, dtype=np.int64) % eng.n)
    decisions0 = eng.n_decisions
    while n_hands < hands and (failures == 0 or keep_going):
        live = np.flatnonzero(~eng.done)
        if len(live):
            st = eng.state
            obs = enc.encode(st, st.actor[live].astype(np.int64), live, engine=eng) if enc is not None else None
            acts = np.zeros(batch, np.int64)
            acts[live] = agent_act(agent, obs, eng.mask[live], engine=eng, tables=live)
            try:
                eng.step(acts)
                validate(eng)
            except (InvariantError, ValueError, RuntimeError) as exc:
                failed(f"{type(exc).__name__}: {exc}")
                if not keep_going:
                    break
        done = np.flatnonzero(eng.done)
        if not len(done):
            continue
        for b in done.tolist():
            res = eng.results[b]
            money = [float(x) for x in eng.state.money[b]]
            if res["deltas"] != money or abs(sum(money)) > 1e-9 or res["session_over"] != bool(eng.session_over[b]):
                failed(f"table {b}: result {res['how']} deltas {res['deltas']} / money {money} / session_over "
                       f"{res['session_over']} vs {bool(eng.session_over[b])}")
            ends[res["how"]] += 1
        n_hands += len(done)
        deal_seed += 1
        over = done[eng.session_over[done]]
        going = done[~eng.session_over[done]]
        if len(going):
            eng.next_hand(seed=deal_seed, tables=going, table_ids=going)
        if len(over):
            matches += len(over)
            eng.reset(seed=deal_seed, tables=over, table_ids=over + batch, dealer=over % eng.n)
    cpu = time.process_time() - t0
    report = {
        "variant": variant, "player": getattr(agent, "name", player), "batch": batch, "seed": seed, "hands": n_hands,
        "decisions": eng.n_decisions - decisions0, "ends": dict(ends), "sessions_ended": matches,
        "failures": failures, "first_failure": first, "cpu_s": round(cpu, 1),
    }
    return report


def main(argv=None) -> int:
    """Command line: ``--variant``, ``--hands``, ``--player``, ``--batch``, ``--seed``, ``--option k=v``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", default="kawuxing3")
    p.add_argument("--hands", type=int, default=2000, help="at least this many hands (whole steps of the batch)")
    p.add_argument("--player", default="heuristic", help="agent in every seat (agents.make_agent name; 'fast' is compiled)")
    p.add_argument("--batch", type=int, default=256, help="tables played at once")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--option", action="append", default=[], metavar="K=V", help="rule option override (repeatable)")
    p.add_argument("--keep-going", action="store_true", help="count failures instead of stopping at the first")
    a = p.parse_args(argv)
    options = dict(kv.split("=", 1) for kv in a.option) or None
    r = soak(a.variant, a.hands, player=a.player, batch=a.batch, seed=a.seed, options=options, keep_going=a.keep_going)
    ends = ", ".join(f"{k} {v}" for k, v in sorted(r["ends"].items()))
    print(f"{r['variant']}: player {r['player']}, {r['hands']} hands ({ends}), {r['decisions']} decisions, "
          f"{r['sessions_ended']} sessions ended, invariant failures {r['failures']}, {r['cpu_s']} CPU s "
          f"({r['hands'] / max(r['cpu_s'], 1e-9):.0f} hands/CPU s); batch {r['batch']}, seed {r['seed']}"
          + (f", options {options}" if options else ""))
    return 1 if r["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
