"""Plan-committed candidates, judged in hands-true worlds: what committing the searching seat to a plan is worth.

``record``: at decisions of the compiled improved player's self-play (``--policy`` in every seat) where the acting
seat has two or more legal actions and at least one plan's compiled player (:data:`agents.players.searchplans.PLANS`)
would move differently from the policy now, each candidate — the policy's continuation (candidate 0) and "this
seat plays plan P for the rest of the hand" (candidate 1 + P; every other seat keeps the policy,
:func:`agents.players.searchplans.rollout_plans`) — is rolled out in ``--worlds`` sampled worlds (what a search
sees; the same worlds for every candidate) and in ``--hands_true`` hands-true worlds (the real hands, the live wall
reshuffled: :func:`bench.search_truth.hands_true`'s worlds, an unbiased truth for a rule that does not look at
them).  The first divergent decision of each seat-hand is always taken, later ones with probability ``--prob``.

``judge``: at the first divergent decision of each seat-hand (one commitment per seat-hand: a clean per seat-hand
figure), the gain over the policy of (a) an oracle selector (half the hands-true worlds choose, the other half
judge), (b) a search over the sampled worlds (best mean, a change only when it beats the policy by ``z`` standard
errors), judged by the hands-true mean; for each plan alone and all together.

``record --liang_rule``: instead, every decision ``policy-search`` searches for its 亮倒 (its two candidates include
a 亮倒), with its runner-up as the last candidate; ``judge`` then compares ``policy-search``'s own rule there (the
runner-up at z 0) with the same plus the plans at several z, paired; with ``--ready_all N`` up to N further
candidates are recorded, the other discards that leave the hand ready, with 亮倒 and without (``valid`` marks them),
and judged the same way.  ``--by fast``: a plan is played by the
compiled player alone instead of the policy's decider under the plan's settings.

    python bench/plan_truth.py record --decisions 2000 --seed 70 --worlds 64 --hands_true 48 --by fast --out plans-70.npz
    python bench/plan_truth.py record --decisions 1500 --seed 70 --worlds 64 --hands_true 48 --plans dama --prob 1 --liang_rule --out lrule-70.npz
    python bench/plan_truth.py judge --records plans-70.npz lrule-70.npz
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def ci95(a) -> float:
    """Half-width of the normal 95 % interval of the mean of ``a``."""
    a = np.asarray(a, np.float64)
    return float(1.96 * a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else float("nan")


def _values(eng, b, seat, moves, plan_of, roll, player, cfgs, worlds_of, n, by="player") -> np.ndarray:
    """float64 [len(b), K, n]: seat ``seat[i]``'s money at table ``b[i]`` when it plays candidate k — the move
    ``moves[i, k]`` now, then plan ``plan_of[k]`` (-1: the policy) for the rest of the hand — in the ``n`` worlds
    ``worlds_of(i)`` gives (an engine, its rows to copy, and a wall order to put in or None)."""
    from agents.players.search import copy_tables
    from agents.players.searchplans import rollout_plans
    from mjenv.engine import state as S

    K = moves.shape[1]
    rows_per = K * n
    total = len(b) * rows_per
    plan = np.full(roll.batch_size, -1, np.int64)
    seats = np.zeros(roll.batch_size, np.int64)
    acts = np.zeros(roll.batch_size, np.int64)
    for i in range(len(b)):
        src, src_rows, wall = worlds_of(i)
        for k in range(K):
            r = np.arange(i * rows_per + k * n, i * rows_per + (k + 1) * n)
            copy_tables(src, src_rows, roll, r)
            if wall is not None:
                f, bk = wall[0], wall[1]
                roll.state.wall[r, f:bk] = wall[2]
            plan[r] = plan_of[k]
            seats[r] = seat[i]
            acts[r] = moves[i, k]
    roll._b8[total:, S.O8_PHASE] = S.DONE
    roll.mask[total:] = False
    roll.step(acts)
    rollout_plans(roll, player, seats, plan, cfgs, by=by)
    m = roll.state.money[:total].reshape(len(b), K, n, -1)
    return m[np.arange(len(b)), :, :, seat].astype(np.float32)


def record(a) -> None:
    """The ``record`` step (module docstring)."""
    import torch

    torch.set_num_threads(1)
    from agents.players.fasthead import FastHeadPlayer, head_decide_tables
    from agents.players.fastplay import decide_tables
    from agents.players.search import _checkpoint_path
    from agents.players.searchplans import parse_plans, plan_configs
    from mjenv.engine import state as S
    from mjenv.engine.core import Engine

    plans = parse_plans(a.plans)
    head = FastHeadPlayer(_checkpoint_path(a.policy), a.variant)
    f = head.fast
    cfgs = plan_configs(f.cfg, plans)
    X = a.ready_all if a.liang_rule else 0  # further candidates: the other ready discards, revealed or not
    P, K = len(plans), len(plans) + 1 + bool(a.liang_rule) + X
    plan_of = np.array([-1] + list(range(P)) + ([-1] if a.liang_rule else []) + [-1] * X, np.int64)
    if a.liang_rule:
        from agents import POLICY_SEARCH
        from agents.players.search import SearchAgent
        from mjenv.encoding import actions as A

        search = SearchAgent(a.variant, None, policy=a.policy, seed=a.seed, **POLICY_SEARCH)
        search.player = head
    tables = 64
    eng = Engine(a.variant, tables, options=f.opts, record_events=False)
    st = eng.state
    roll = Engine(a.variant, max(1, 16 * K * max(a.worlds, a.hands_true)), options=f.opts, record_events=False)
    roll.reset(seed=0)
    rng = np.random.default_rng([a.seed, 4141])
    eng.reset(seed=a.seed, table_ids=np.arange(tables), dealer=np.arange(tables) % eng.n)
    next_wall, count, hands = tables, 0, 0
    seen = np.zeros((tables, eng.n), bool)  # a divergent decision met in this seat-hand
    out = {k: [] for k in ("valid", "moves", "sampled", "htrue", "differ", "first", "phase", "hand", "seat", "wall_left")}
    n_div = n_first = 0
    hand_id = np.arange(tables)
    t0 = time.process_time()
    pol = np.zeros(tables, np.int64)
    pa = np.zeros(tables, np.int64)
    pool = []  # sample_worlds out= engines, one per decision of a batch
    while count < a.decisions:
        live = np.flatnonzero(st.phase != S.DONE)
        head.decide(eng, live, pol)
        multi = live[eng.mask[live].sum(1) >= 2]
        differ = np.zeros((len(multi), P), bool)
        pmove = np.zeros((len(multi), P), np.int64)
        for p in range(P):
            if a.by == "fast":
                decide_tables(eng._b8, eng._b16, eng.mask, multi, cfgs[p], f.kc, f._tab, f._tabs, f._best, f._gain,
                              pa)
            else:
                hargs = list(head._args(eng, multi, pa))
                hargs[4] = cfgs[p]
                head_decide_tables(*hargs)
            differ[:, p] = pa[multi] != pol[multi]
            pmove[:, p] = pa[multi]
        if a.liang_rule:  # policy-search's 亮倒 decisions: its two candidates include a 亮倒 (searched at liang_z)
            oc, on, _ = search._policy_order(eng, multi)
            lo = (oc >= A.LIANG) & (oc < A.LIANG + 34) & (np.arange(oc.shape[1])[None, :] < on[:, None])
            dv = lo.any(1) & (on >= 2)
            runner = oc[:, 1]
        else:
            dv = differ.any(1)
            runner = pol[multi]
        cand_b, cand_d = multi[dv], differ[dv]
        extra = np.repeat(pol[multi][:, None], X, 1)  # padding: the policy's move again (``valid`` False)
        evalid = np.zeros((len(multi), X), bool)
        for i in np.flatnonzero(dv) if X else ():
            m = eng.mask[multi[i]]
            ready = np.flatnonzero(m[A.LIANG : A.LIANG + 34])
            alts = [A.LIANG + t for t in ready] + [t for t in ready if m[t]]
            alts = [x for x in alts if x != pol[multi[i]] and x != runner[i]][:X]
            extra[i, : len(alts)] = alts
            evalid[i, : len(alts)] = True
        cand_m = np.concatenate([pol[multi][:, None], pmove] + ([runner[:, None]] if a.liang_rule else []) + [extra],
                                1)[dv]
        cand_valid = evalid[dv]
        seats_all = st.actor[cand_b].astype(np.int64)
        first = ~seen[cand_b, seats_all]
        seen[cand_b, seats_all] = True
        n_div += len(cand_b)
        n_first += int(first.sum())
        take = first | (rng.random(len(cand_b)) < a.prob)
        pick = np.flatnonzero(take)[: min(a.decisions - count, 16)]
        if len(pick):
            b, seat, moves = cand_b[pick], seats_all[pick], cand_m[pick]
            worlds = []
            for i in range(len(b)):
                w = eng.sample_worlds(int(b[i]), int(seat[i]), a.worlds, seed=int(rng.integers(2**62)),
                                      out=pool[i] if i < len(pool) else None)
                if i >= len(pool):
                    pool.append(w)
                worlds.append(w)
            vs = _values(eng, b, seat, moves, plan_of, roll, head, cfgs, lambda i: (worlds[i], np.arange(a.worlds), None), a.worlds,
                         a.by)
            perms = []
            for i in range(len(b)):
                fr, bk = int(st.front[b[i]]), int(st.back[b[i]])
                live_w = st.wall[b[i], fr:bk].copy()
                perms.append((fr, bk, np.stack([rng.permutation(live_w) for _ in range(a.hands_true)])))
            vh = _values(eng, b, seat, moves, plan_of, roll, head, cfgs,
                         lambda i: (eng, np.full(a.hands_true, b[i]), perms[i]), a.hands_true, a.by)
            out["sampled"].append(vs)
            out["htrue"].append(vh)
            out["differ"].append(cand_d[pick])
            out["moves"].append(moves)
            out["valid"].append(cand_valid[pick])
            out["first"].append(first[pick])
            out["phase"].append(st.phase[b].astype(np.int64))
            out["hand"].append(hand_id[b])
            out["seat"].append(seat)
            out["wall_left"].append((st.back[b] - st.front[b]).astype(np.int64))
            count += len(pick)
        eng.step(pol)
        done = np.flatnonzero(st.phase == S.DONE)
        seen[done] = False
        hand_id[done] = next_wall * 64 + np.arange(len(done))  # a fresh id per new hand (unique, not the wall's)
        next_wall, ended = eng.deal_next_walls(a.seed, next_wall)
        hands += ended
        if count and count % 100 < len(pick):
            print(f"{count} decisions, {hands} hands, {time.process_time() - t0:.0f} CPU s", flush=True)
    res = {k: np.concatenate(v) for k, v in out.items()}
    np.savez_compressed(a.out, **res, plans=np.array(plans), by=a.by, liang_rule=a.liang_rule, hands=hands, n_div=n_div, n_first=n_first,
                        prob=a.prob, seats=eng.n, cpu_s=time.process_time() - t0)
    print(f"saved {a.out}: {count} decisions, {hands} hands, {n_div} divergent decisions ({n_first} first), "
          f"{time.process_time() - t0:.0f} CPU s")


def _rule_gain(vs, vh, allowed, z, oracle):
    """Per decision: the hands-true gain over the policy of the candidate a rule picks among ``allowed`` plans (a
    change only when its paired gain beats the policy by ``z`` standard errors), and whether it changed.  The
    search reads the sampled worlds ``vs`` and is judged by the hands-true mean; the oracle reads half the
    hands-true worlds and is judged by the other half."""
    N, K, m = vh.shape
    if oracle:
        vs, vh = vh[:, :, : m // 2], vh[:, :, m // 2 :]
    judge = vh.mean(2)
    d_w = vs[:, 1:] - vs[:, :1]
    d = d_w.mean(2)
    if z > 0:
        se = d_w.std(2, ddof=1) / np.sqrt(vs.shape[2])
        d = np.where(d > z * se, d, 0.0)
    d = np.where(allowed, d, -np.inf)
    best = d.argmax(1)
    take = d[np.arange(N), best] > 0
    g = np.where(take, judge[np.arange(N), best + 1] - judge[:, 0], 0.0)
    return g, take


def _pick_z(vs, allowed, zs):
    """Per decision, the candidate (column of ``vs [N, K, n]``, 0 = the policy) a search picks: the best mean gain
    over column 0 among ``allowed [N, K]`` columns whose paired gain exceeds ``zs[k]`` standard errors; 0 if none."""
    d_w = vs - vs[:, :1]
    g = d_w.mean(2)
    se = d_w.std(2, ddof=1) / np.sqrt(vs.shape[2])
    ok = allowed & (g > np.asarray(zs)[None, :] * se) & (g > 0)
    ok[:, 0] = False
    g = np.where(ok, g, -np.inf)
    best = g.argmax(1)
    return np.where(ok.any(1), best, 0)


def _judge_liang(r, plans) -> None:
    """Rules at ``policy-search``'s 亮倒 decisions (a ``--liang_rule`` record): its own (the runner-up at z 0) against
    the same with the plans, and (``--ready_all``) the other ready discards, as further candidates, judged by the
    hands-true mean, paired."""
    vs, vh, differ = r["sampled"], r["htrue"], r["differ"]
    N, K, _ = vs.shape
    P = len(plans)
    R = 1 + P  # the runner-up's column; the other ready discards follow it
    valid = r["valid"] if "valid" in r.files and r["valid"].shape[1] else np.zeros((N, 0), bool)
    seat_hands = (float(r["hands"]) + 64) * int(r["seats"])
    truth = vh.mean(2)
    allowed = np.zeros((N, K), bool)
    allowed[:, R] = True
    base = _pick_z(vs, allowed, [0] * K)
    g0 = truth[np.arange(N), base] - truth[:, 0]
    print(f"  policy-search's rule (runner-up at z 0): changed {np.mean(base > 0):.0%}, gain over the policy "
          f"{g0.sum() / seat_hands:+.4f} per seat-hand ({g0.mean():+.3f} ± {ci95(g0):.3f} per decision)")

    def show(label, al, zs):
        c = _pick_z(vs, al, zs)
        g = truth[np.arange(N), c] - truth[:, 0]
        d = g - g0
        print(f"  {label}: changed {np.mean(c > 0):.0%} (to a further candidate {np.mean((c > 0) & (c != R)):.0%}); "
              f"gain over the policy {g.sum() / seat_hands:+.4f} per seat-hand; paired − policy-search's rule "
              f"{d.sum() / seat_hands:+.4f} per seat-hand ({d.mean():+.4f} ± {ci95(d):.4f} per decision)")

    for zp in (0, 0.5, 1, 2):
        al = allowed.copy()
        al[:, 1:R] = differ
        show(f"+ plans at z {zp}", al, [0] + [zp] * P + [0] * (K - R))
    if valid.shape[1]:
        print(f"  other ready discards: {valid.sum(1).mean():.2f} per decision")
        for zx in (0, 0.5, 1, 2):
            al = allowed.copy()
            al[:, R + 1 :] = valid
            show(f"+ the other ready discards at z {zx}", al, [0] * (R + 1) + [zx] * (K - R - 1))
    h = vh.shape[2] // 2
    tj = vh[:, :, h:].mean(2)
    al = allowed.copy()
    al[:, 1:R] = differ
    if valid.shape[1]:
        al[:, R + 1 :] = valid
    c = _pick_z(vh[:, :, :h], al, [0] * K)  # exact belief: half the hands-true worlds choose, the other half judge
    c1 = _pick_z(vh[:, :, :h], allowed, [0] * K)
    g = tj[np.arange(N), c] - tj[:, 0]
    g1 = tj[np.arange(N), c1] - tj[:, 0]
    print(f"  exact belief (half the hands-true worlds choose): runner-up only {g1.sum() / seat_hands:+.4f}, with every "
          f"further candidate {g.sum() / seat_hands:+.4f} per seat-hand")


def judge(a) -> None:
    """The ``judge`` step (module docstring)."""
    for path in a.records:
        r = np.load(path)
        if "liang_rule" in r.files and bool(r["liang_rule"]):
            print(f"{path}: {len(r['sampled'])} of policy-search's 亮倒 decisions, {int(r['hands'])} hands")
            _judge_liang(r, [str(p) for p in r["plans"]])
            continue
        plans = [str(p) for p in r["plans"]]
        vs, vh, differ, first = r["sampled"], r["htrue"], r["differ"], r["first"]
        seat_hands = (float(r["hands"]) + 64) * int(r["seats"])  # hands ended plus the 64 tables' hands in play
        prob = float(r["prob"])
        n_first, n_div = int(r["n_first"]), int(r["n_div"])
        print(f"{path}: {len(vs)} decisions ({int(first.sum())} first of a seat-hand), {int(r['hands'])} hands, "
              f"{n_div} divergent decisions met ({n_first} first), plans {plans}")
        true_gain = vh.mean(2)[:, 1:] - vh.mean(2)[:, :1]
        for p, name in enumerate(plans):
            sel = differ[:, p]
            print(f"  plan {name}: moves differ at {sel.mean():.0%}; true gain of committing where it differs "
                  f"{true_gain[sel, p].mean():+.3f} ± {ci95(true_gain[sel, p]):.3f} per decision; sampled believes "
                  f"{(vs.mean(2)[:, 1:] - vs.mean(2)[:, :1])[sel, p].mean():+.3f}")
        d = true_gain
        se = (vh[:, 1:] - vh[:, :1]).std(2, ddof=1) / np.sqrt(vh.shape[2])
        print(f"  decisions where some plan beats the policy by 2 standard errors of the hands-true worlds: "
              f"{((d > 2 * se) & differ).any(1).mean():.1%}")
        sets = [(name, [p]) for p, name in enumerate(plans)] + [("all", list(range(len(plans))))]
        for label, ps in sets:
            allowed = np.zeros_like(differ)
            allowed[:, ps] = differ[:, ps]
            for rule, oracle in (("oracle", True), ("sampled", False)):
                row = []
                for z in (0, 1, 2):
                    g, take = _rule_gain(vs, vh, allowed, z, oracle)
                    row.append(f"z {z}: changed {take[first].mean():.0%}, {g[first].sum() / seat_hands:+.3f} "
                               f"({g[first].mean():+.3f} ± {ci95(g[first]):.3f} per decision)")
                print(f"  {label:10s} {rule:8s} at the first divergent decision, per seat-hand: " + "; ".join(row))
        vd = (vs.mean(2)[:, 1:] - vs.mean(2)[:, :1])[differ]
        td = true_gain[differ]
        print(f"  correlation of sampled with hands-true gains: {np.corrcoef(vd, td)[0, 1]:.3f}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--decisions", type=int, default=600)
    r.add_argument("--seed", type=int, default=70)
    r.add_argument("--worlds", type=int, default=32)
    r.add_argument("--hands_true", type=int, default=32)
    r.add_argument("--prob", type=float, default=0.15)
    r.add_argument("--plans", default="plain+flush+flush4+triplets+triplets2")
    r.add_argument("--policy", default="kawuxing3-long.pt")
    r.add_argument("--liang_rule", action="store_true",
                   help="record policy-search's 亮倒 decisions (its two candidates include a 亮倒), its runner-up "
                        "as the last candidate")
    r.add_argument("--ready_all", type=int, default=0,
                   help="with --liang_rule: up to this many further candidates, the other discards that leave the "
                        "hand ready, with 亮倒 and without")
    r.add_argument("--by", default="player", choices=("player", "fast"),
                   help="a plan's moves: the policy's decider under the plan's settings, or the compiled player's")
    r.add_argument("--variant", default="kawuxing3")
    r.add_argument("--out", required=True)
    j = sub.add_parser("judge")
    j.add_argument("--records", nargs="+", required=True)
    a = p.parse_args(argv)
    {"record": record, "judge": judge}[a.cmd](a)


if __name__ == "__main__":
    main()
