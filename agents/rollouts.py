"""Counterfactual rollouts: exact one-decision advantages over a deterministic teacher, from duplicate tables.

This module owns :func:`counterfactual_pairs` and its command line.  Two tables of one batched :class:`~mjenv.engine.core.Engine` are dealt the same wall and
played by the same deterministic teacher (the heuristic) in lockstep.  At one decision of the learner seat
where the teacher's move has a natural alternative (:func:`alternative`), table A keeps the teacher's move and
table B plays the alternative; both then play on with the teacher to the end of the hand.  The learner's money
on B minus A is the advantage of the alternative *given the teacher's continuation*: the luck of the deal is
the same on both tables, so far fewer hands measure it than a policy gradient would need (rollout policy
improvement, Bertsekas & Tsitsiklis 1996; Tesauro & Galperin 1997).  A policy that departs from the teacher
exactly where that advantage is positive is better than the teacher (the policy improvement theorem), so these
numbers say where a learned policy can gain on the heuristic at all (docs/training.md has the measured table).

Command line: ``python -m agents.rollouts --pairs 2000`` prints the mean advantage of each kind of departure
with its 95 % CI.

Alternatives (only where legal): 亮倒 with the advised discard ↔ the same discard without 亮倒; pong ↔ pass;
a direct kong of the discard ↔ pass; a kong on one's own turn ↔ the teacher's best discard without it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjenv.encoding import actions as A
from mjenv.encoding.observation import encoder_for
from mjenv.engine.core import Engine

KINDS = ("liang", "no_liang", "pong", "no_pong", "kong", "no_kong")
"""Names of the departures :func:`alternative` offers, by the code it returns as its second value."""


def alternative(advice: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(alt int64 [B], kind int64 [B])``: the departure from each advised action (``-1`` where none applies)
    and its index in :data:`KINDS`."""
    advice = np.asarray(advice, dtype=np.int64)
    B = len(advice)
    rows = np.arange(B)
    alt = np.full(B, -1, dtype=np.int64)
    kind = np.full(B, -1, dtype=np.int64)

    def offer(sel: np.ndarray, target: np.ndarray, k: int) -> None:
        ok = sel & (target >= 0) & mask[rows, np.clip(target, 0, A.N_ACTIONS - 1)]
        alt[ok] = target[ok]
        kind[ok] = k

    is_discard = advice < A.LIANG
    is_liang = (advice >= A.LIANG) & (advice < A.KONG_SELF)
    offer(is_liang, advice - A.LIANG, KINDS.index("no_liang"))
    offer(is_discard, advice + A.LIANG, KINDS.index("liang"))
    offer(advice == A.PASS, np.full(B, A.PONG), KINDS.index("pong"))
    offer(advice == A.PONG, np.full(B, A.PASS), KINDS.index("no_pong"))
    offer(advice == A.KONG_CLAIM, np.full(B, A.PASS), KINDS.index("no_kong"))
    offer((advice == A.PASS) & (alt < 0), np.full(B, A.KONG_CLAIM), KINDS.index("kong"))
    return alt, kind


def counterfactual_pairs(variant: str, options: Any, teacher, pairs: int, *, seed: int = 0, first_wall: int = 0,
                         branch_prob: float = 0.5, batch_pairs: int = 512) -> dict:
    """Play ``pairs`` duplicate table pairs (wall ``first_wall + i``, learner seat ``i % n``) and branch each once.

    ``teacher`` must be deterministic (an ``act(obs, mask)`` whose move depends on the observation alone), so
    that the two tables of a pair stay identical until they branch.  At each learner decision with an
    :func:`alternative`, an unbranched pair branches with probability ``branch_prob`` (drawn from ``seed``).
    Returns ``obs float32 [N, C, 34]`` (the learner's observation where it branched), ``mask bool [N, 111]``,
    ``advice`` and ``alt`` (int64 [N]), ``kind`` (int64 [N], index into :data:`KINDS`) and ``advantage``
    (float64 [N]: the learner's hand money on the branch minus on the teacher's table), for the pairs that
    branched; ``pairs_played`` counts all.
    """
    if pairs < 1 or batch_pairs < 1 or not 0 < branch_prob <= 1:
        raise ValueError("counterfactual_pairs: pairs, batch_pairs >= 1 and 0 < branch_prob <= 1")
    rng = np.random.default_rng(seed)
    out = {k: [] for k in ("obs", "mask", "advice", "alt", "kind", "advantage")}
    for start in range(0, pairs, batch_pairs):
        P = min(batch_pairs, pairs - start)
        eng = Engine(variant, 2 * P, options=options, record_events=False)
        n = eng.n
        enc = encoder_for(eng)
        st = eng.state
        walls = first_wall + start + np.arange(P)
        eng.reset(seed=seed, tables=np.arange(2 * P), table_ids=np.concatenate([walls, walls]),
                  dealer=np.concatenate([walls, walls]) % n)
        learner = (start + np.arange(P)) % n
        branched = np.zeros(P, bool)
        rec: dict[str, list] = {k: [] for k in ("pair", "obs", "mask", "advice", "alt", "kind")}
        while True:
            live = np.flatnonzero(~eng.done)
            if not len(live):
                break
            obs = enc.encode(st, st.actor[live], live)
            mask = eng.mask[live]
            acts = np.asarray(teacher.act(obs, mask), dtype=np.int64)
            pair = live % P
            at_a = (live < P) & (st.actor[live] == learner[pair]) & ~branched[pair]
            cand = np.flatnonzero(at_a)
            if len(cand):
                alt, kind = alternative(acts[cand], mask[cand])
                go = (alt >= 0) & (rng.random(len(cand)) < branch_prob)
                for j, a_, k_ in zip(cand[go], alt[go], kind[go]):
                    p = int(live[j])
                    b_row = np.flatnonzero(live == p + P)
                    if not len(b_row):  # pragma: no cover - the twin table is always at the same decision
                        raise RuntimeError(f"pair {p}: the twin table is not at the same decision")
                    acts[b_row[0]] = a_
                    branched[p] = True
                    for key, val in (("pair", p), ("obs", obs[j]), ("mask", mask[j]), ("advice", acts[j]),
                                     ("alt", a_), ("kind", k_)):
                        rec[key].append(val)
            full = np.zeros(2 * P, dtype=np.int64)
            full[live] = acts
            eng.step(full)
        if rec["pair"]:
            p = np.asarray(rec["pair"])
            money = np.asarray([[eng.results[b]["deltas"][s] for b, s in ((q, learner[q]), (q + P, learner[q]))]
                                for q in p], dtype=np.float64)
            out["advantage"].append(money[:, 1] - money[:, 0])
            out["obs"].append(np.stack(rec["obs"]))
            out["mask"].append(np.stack(rec["mask"]))
            for key in ("advice", "alt", "kind"):
                out[key].append(np.asarray(rec[key], dtype=np.int64))
    data = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in out.items()}
    data["pairs_played"] = pairs
    return data


def summary(data: dict) -> list[dict]:
    """Per kind of departure: how many branch points, the mean advantage with its 95 % CI (normal), and the
    shares where the departure gained and lost money."""
    rows = []
    for k, name in enumerate(KINDS):
        a = np.asarray(data["advantage"])[np.asarray(data["kind"]) == k]
        if not len(a):
            continue
        ci = 1.96 * a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else float("nan")
        rows.append({"kind": name, "n": int(len(a)), "mean": float(a.mean()), "ci95": float(ci),
                     "gained": float((a > 0).mean()), "lost": float((a < 0).mean())})
    return rows


def main(argv=None) -> list[dict]:
    """``python -m agents.rollouts``: the advantage of each departure from the heuristic, printed as a table."""
    import argparse
    import time

    from agents import make_agent
    from agents.base import resolve_options

    ap = argparse.ArgumentParser(prog="python -m agents.rollouts", description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="kawuxing3")
    ap.add_argument("--pairs", type=int, default=2000, help="duplicate table pairs (hands) to branch")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--first-wall", type=int, default=0)
    ap.add_argument("--branch-prob", type=float, default=0.5)
    args = ap.parse_args(argv)
    if args.pairs < 1 or not 0 < args.branch_prob <= 1 or args.seed < 0 or args.first_wall < 0:
        ap.error("--pairs must be >= 1, --branch-prob in (0, 1], --seed and --first-wall >= 0")
    opts = resolve_options(args.variant, None)
    cpu = time.process_time()
    data = counterfactual_pairs(args.variant, opts, make_agent("heuristic", args.variant, opts), args.pairs,
                                seed=args.seed, first_wall=args.first_wall, branch_prob=args.branch_prob)
    rows = summary(data)
    print(f"{args.pairs} pairs, {len(data['advantage'])} branch points, {time.process_time() - cpu:.0f} CPU s; "
          "advantage = learner money with the departure minus with the heuristic's move")
    print(f"{'departure':<10} {'n':>6} {'mean':>8} {'95% CI':>8} {'gained':>7} {'lost':>6}")
    for r in rows:
        print(f"{r['kind']:<10} {r['n']:>6} {r['mean']:>+8.3f} {r['ci95']:>8.3f} {r['gained']:>7.2f} {r['lost']:>6.2f}")
    return rows


if __name__ == "__main__":
    main()
