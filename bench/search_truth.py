"""Search over a policy, judged decision by decision in the true world: what a search rule really gains.

At ``--decisions`` decisions of the compiled improved player's self-play (``--policy``, a checkpoint with a
``candidate-features-v1`` head, playing every seat; a decision with a shortlist of two or more is taken with
probability 0.25, as the labeller takes them), this records, for the shortlist ordered as the policy search orders it
(:meth:`agents.players.search.SearchAgent._policy_order`: the policy's move first, the others by its head's predicted
gain):

* the head's predicted gains (``pred``);
* each candidate's hand money for the seat in ``--worlds`` sampled worlds (the same worlds for every candidate),
  rolled out by the improved player in every seat — what the search sees;
* each candidate's hand money in the **true** world (the table's real hidden state, the same candidates rolled out
  by the same player): one deterministic rollout each;
* with ``--hands_true M``: each candidate's money in ``M`` *hands-true worlds* (:func:`hands_true`: the real hands,
  only the live wall reshuffled; the same shuffles for every candidate), whose mean is the candidate's value given
  everything but the wall's order — a low-variance truth, and the worlds of a search whose belief about the
  opponents' hands were exact (half of them choose, the other half judge);
* with ``--belief EPS``: each candidate's money in the worlds of the search with ``belief=EPS, pool=--pool``
  (:mod:`agents.players.searchbelief`: ``pool`` × ``worlds`` sampled worlds, ``worlds`` kept by the likelihood of
  the opponents' latest discards), the same decisions and seeds (``bsampled``).

* with ``--belief_depth K`` / ``--keep distinct``: the belief reads up to K discards per opponent / keeps distinct
  worlds (``SearchAgent`` parameters of the same names);
* with ``--oracle ready|shanten|waits|tiles`` (a diagnostic that reads the TRUE table, never a playable belief):
  the pooled worlds weighted 1 where every opponent's hand shares that fact with its true hand (readiness; shanten
  class; readiness and waits) and ``--oracle_eps`` elsewhere, or (``tiles``) by exp(−``oracle_eps`` × the L1
  distance of the opponents' concealed counts to the true ones): how much a belief that knew that fact would be
  worth, recorded as the belief's values (``bsampled``).

A search rule (``near``: search only where the head's best predicted gain is within ``near`` of its ``tau``;
``n`` worlds; ``candidates``; ``z`` standard errors and ``margin`` money a candidate must gain over the policy's
move) is then replayed offline on the records: the rule's choice at each decision, its gain over the policy's
move in the sampled worlds (what the search believes) and in the true world (an unbiased estimate, over many
decisions, of the gain of one search decision followed by the policy's play), per searched decision and per
seat-hand.  Sampled worlds overrate the gain of the moves a search picks (the winner's curse, and worlds that
ignore what opponents' play reveals); the true world does not.  ``judge`` replays rules on a record with hands-true
worlds, judged by their mean, for the record's own worlds and those of ``--only_belief`` records of the same
decisions (paired against the sampled worlds); ``closeness`` measures, without rollouts, how near each belief's
kept worlds come to the opponents' true hands.

    python bench/search_truth.py record --decisions 4000 --seed 60 --worlds 128 --out truth-60.npz
    python bench/search_truth.py rules --records truth-60.npz
    python bench/search_truth.py record --decisions 2000 --seed 66 --worlds 64 --hands_true 64 --belief 0.1 --out truth-66b.npz
    python bench/search_truth.py record --decisions 2000 --seed 66 --worlds 64 --pool 4 --keep distinct --oracle waits --only_belief --out truth-66-or-waits.npz
    python bench/search_truth.py judge --record truth-66b.npz --beliefs truth-66-or-waits.npz
    python bench/search_truth.py closeness --decisions 400 --seed 68 --beliefs "latest=belief:0.1" "depth4=belief:0.1;depth:4"
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from agents.players.searchbelief import distinct, history_discards, last_discards  # noqa: E402
from mjenv.engine import state as _S  # noqa: E402

S_DONE_COL, S_DONE = _S.O8_PHASE, _S.DONE


def ci95(a) -> float:
    """Half-width of the normal 95 % interval of the mean of ``a``."""
    a = np.asarray(a, np.float64)
    return float(1.96 * a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else float("nan")


def record(a) -> None:
    """The ``record`` step (module docstring): self-play decisions with sampled-world and true-world values."""
    import torch

    torch.set_num_threads(1)
    from agents.players.departures import CANDIDATES as K
    from agents.players.keyrng import mix
    from agents.players.search import SearchAgent, true_outcomes
    from mjenv.engine import state as S
    from mjenv.engine.core import Engine

    search = SearchAgent(a.variant, None, candidates=K, worlds=a.worlds, seed=a.seed, policy=a.policy,
                         near=None if a.near < 0 else a.near)
    head = search.player
    bsearch = None
    if a.oracle:  # a diagnostic ceiling: worlds filtered by a fact of the TRUE hands (never a playable belief)
        bsearch = _oracle_search(a.oracle, a.oracle_eps)(a.variant, None, candidates=K, worlds=a.worlds, seed=a.seed,
                                                          policy=a.policy, belief=a.belief, pool=a.pool, keep=a.keep,
                                                          belief_depth=a.belief_depth)
        bsearch.player = head
    elif a.belief is not None or a.belief_net:  # the same search with the belief's weighted worlds (its own engines)
        bsearch = SearchAgent(a.variant, None, candidates=K, worlds=a.worlds, seed=a.seed, policy=a.policy,
                              belief=a.belief, pool=a.pool, belief_net=a.belief_net, temper=a.temper,
                              belief_depth=a.belief_depth, keep=a.keep)
        bsearch.player = head
    tables = 64
    eng = Engine(a.variant, tables, options=search.opts, record_events=False)
    st = eng.state
    roll = Engine(a.variant, tables * K, options=search.opts, record_events=False)
    rng = np.random.default_rng([a.seed, 2121])
    base = mix(np.asarray([a.seed], dtype=np.uint64))[0]
    eng.reset(seed=a.seed, table_ids=np.arange(tables), dealer=np.arange(tables) % eng.n)
    next_wall, count, hands, skipped, n_choice = tables, 0, 0, 0, 0
    out = {k: [] for k in ("cand", "ncand", "pred", "pbest", "sampled", "true", "wall_left", "htrue", "phase", "bsampled")}
    hroll = Engine(a.variant, max(1, K * a.hands_true), options=search.opts, record_events=False) if a.hands_true else None
    t0 = time.process_time()
    while count < a.decisions:
        live = np.flatnonzero(st.phase != S.DONE)
        acts = head.decide(eng, live)
        cand, ncand, near = search._policy_order(eng, live)
        ok = (ncand >= 2) & (rng.random(len(live)) < a.prob) & near
        n_choice += int((ncand >= 2).sum())
        pick = np.flatnonzero(ok)[: a.decisions - count]
        if len(pick):
            b, seats = live[pick], st.actor[live[pick]].astype(np.int64)
            seeds = [int(s) for s in mix(base ^ np.arange(count, count + len(b), dtype=np.uint64))]
            try:
                vals = (bsearch if a.only_belief else search)._values(eng, live, cand, ncand, list(pick), seeds,
                                                                        a.worlds)
            except RuntimeError as e:  # a state the sampler cannot reproduce: counted, not recorded
                print(f"skipped {len(pick)} decisions: {e}", flush=True)
                skipped += len(pick)
                vals = None
            if vals is not None:
                c = cand[pick]
                true = (np.full(c.shape, np.nan, np.float32) if a.only_belief else
                        true_outcomes(eng, b, seats, c, roll, head).astype(np.float32))
                sampled = np.full((len(b), K, a.worlds), np.nan, np.float32)
                for i, v in enumerate(vals):
                    sampled[i, : len(v)] = v
                    true[i, len(v):] = np.nan
                pred, pbest = _pred(search, eng, b, c, ncand[pick])
                out["pbest"].append(pbest)
                out["cand"].append(c)
                out["ncand"].append(ncand[pick])
                out["pred"].append(pred)
                out["sampled"].append(sampled)
                out["true"].append(true)
                out["wall_left"].append((st.back[b] - st.front[b]).astype(np.int16))
                out["phase"].append(st.phase[b].astype(np.int8))
                if bsearch is not None:
                    bv = vals if a.only_belief else bsearch._values(eng, live, cand, ncand, list(pick), seeds, a.worlds)
                    bs = np.full((len(b), K, a.worlds), np.nan, np.float32)
                    for i, v in enumerate(bv):
                        if v is not None:
                            bs[i, : len(v)] = v
                    out["bsampled"].append(bs)
                if hroll is not None:
                    h = np.full((len(b), K, a.hands_true), np.nan, np.float32)
                    for i in range(len(b)):
                        seed_i = [a.seed, 7200, count + i]
                        h[i, : len(vals[i])] = hands_true(eng, int(b[i]), int(seats[i]), c[i, : len(vals[i])],
                                                           a.hands_true, hroll, head, seed_i)
                    out["htrue"].append(h)
                count += len(b)
        eng.step(acts)
        next_wall, ended = eng.deal_next_walls(a.seed, next_wall)
        hands += ended
    arrays = {k: np.concatenate(v) for k, v in out.items() if v}
    np.savez_compressed(a.out, **arrays, hands=hands, skipped=skipped, seed=a.seed, worlds=a.worlds, tau=head.tau,
                        prob=a.prob, near=a.near, choices=n_choice,
                        cpu_s=time.process_time() - t0, policy=str(a.policy))
    print(f"{count:,} decisions ({hands:,} hands, {skipped} skipped) in {time.process_time() - t0:.0f} CPU s -> {a.out}")


def hand_facts(hands, n_melds, what: str) -> np.ndarray:
    """int64 [N, 35]: per concealed hand (``hands`` [N, 34]), what the oracle filter compares: ``ready`` (shanten
    0 or less), ``shanten`` (capped at 3), ``waits`` (ready, and for a ready hand its winning kinds)."""
    from mjenv.encoding.shanten import ukeire

    sh, _, imp = ukeire(np.asarray(hands, np.int8), np.asarray(n_melds), np.full((len(hands), 34), 4))
    out = np.zeros((len(hands), 35), np.int64)
    if what == "shanten":
        out[:, 0] = np.minimum(sh, 3)
    else:
        out[:, 0] = sh <= 0
        if what == "waits":
            out[:, 1:] = imp & (sh <= 0)[:, None]
    return out


def _oracle_search(what: str, eps: float):
    """A :class:`SearchAgent` subclass whose pooled worlds are weighted 1 where every opponent's hand has the true
    hand's ``what`` (:func:`hand_facts`), ``eps`` elsewhere (times its own belief's weights if it has one): how
    much a belief that knew that fact would be worth.  It reads the true table: a bench diagnostic only."""
    from agents.players.search import SearchAgent

    class OracleSearch(SearchAgent):
        def _weighs(self, facts) -> bool:
            return self.pool >= 2

        def _world_weights(self, engine, b, s, w, m, facts, seed):
            lik = super()._world_weights(engine, b, s, w, m, facts, seed)
            st, ws = engine.state, w.state
            if what == "tiles":  # soft: exp(-eps x L1 distance of the opponents' concealed counts to the truth)
                d = np.zeros(m)
                for o in range(engine.n):
                    if o != s:
                        d += np.abs(ws.hand[:m, o].astype(np.int64) - st.hand[b, o]).sum(1)
                return lik * np.exp(-eps * (d - d.min()))
            if what == "near":  # the same on the kinds near the seat's own tiles only, opponents' counts summed
                from mjenv.encoding.shanten import _NEAR

                kinds = _NEAR[:, st.hand[b, s] > 0].any(1)
                opp = [o for o in range(engine.n) if o != s]
                held = ws.hand[:m][:, opp][:, :, kinds].astype(np.int64).sum(1)
                d = np.abs(held - st.hand[b, opp][:, kinds].astype(np.int64).sum(0)).sum(1)
                return lik * np.exp(-eps * (d - d.min()))
            for o in range(engine.n):
                if o == s:
                    continue
                truth = hand_facts(st.hand[b : b + 1, o], st.n_melds[b : b + 1, o], what)
                got = hand_facts(ws.hand[:m, o], ws.n_melds[:m, o], what)
                lik *= np.where((got == truth).all(1), 1.0, eps)
            return lik

    return OracleSearch


def hands_true(eng, b: int, seat: int, cand, m: int, roll, player, seed) -> np.ndarray:
    """float64 [len(cand), m]: the seat's hand money after each candidate on table ``b`` in ``m`` *hands-true
    worlds*: the real table with every hand (opponents' hidden tiles, face-down triplets, locks) as it truly is and
    only the live wall's order (``front .. back``, replacement tiles included) shuffled afresh, the same ``m``
    shuffles for every candidate (common random numbers).  Their mean is the candidate's value given everything
    but the wall's order: the ground truth of a search whose belief about the opponents' hands is exact, and a
    low-variance estimate of the truth for a rule that does not look at it."""
    from agents.training.distill import hands_true_worlds

    k = len(cand)
    n = k * m
    for c in range(k):  # the same seed: the same m shuffles for every candidate
        hands_true_worlds(eng, b, roll, np.arange(c * m, (c + 1) * m), seed)
    acts = np.zeros(roll.batch_size, np.int64)
    acts[:n] = np.repeat(np.asarray(cand, np.int64), m)
    roll._b8[n:, S_DONE_COL] = S_DONE
    roll.mask[n:] = False
    roll.step(acts)
    player.rollout(roll)
    return roll.state.money[:n, seat].reshape(k, m)


def _pred(search, eng, b, cand, ncand) -> tuple[np.ndarray, np.ndarray]:
    """float32 [N, K]: the head's predicted gain of each ordered candidate over the shortlist's choice (its choice 0),
    and float32 [N]: the head's best predicted gain over the shortlist's alternatives (what ``near`` reads)."""
    from agents.players.departures import CAND_FEATURES, CANDIDATES as K, DECISION_FEATURES
    from agents.players.fasthead import features_tables

    head = search.player
    short, nshort = head.candidates(eng, b, K)
    per = np.zeros((len(b), K, CAND_FEATURES), np.float32)
    dec = np.zeros((len(b), DECISION_FEATURES), np.float32)
    f = head.fast
    features_tables(eng._b8, eng._b16, b, short, nshort, f.cfg, f._tab, f._tabs, per, dec)
    p = head.predict(per, dec, nshort)
    full = np.concatenate([np.zeros((len(b), 1), np.float32), p], 1)
    out = np.full((len(b), K), -np.inf, np.float32)
    for i in range(len(b)):
        for j in range(K):
            hit = np.flatnonzero(short[i] == cand[i, j])
            if cand[i, j] >= 0 and len(hit):
                out[i, j] = full[i, hit[0]]
    return out, p.max(1)


def choose(r: dict, near, n: int, k: int, z: float, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """``(searched bool [N], column int [N])``: where the rule searches and the column it plays (0: the policy's)."""
    tau, nc = float(r["tau"]), np.minimum(r["ncand"], k)
    searched = nc >= 2
    if near is not None:
        searched &= np.abs(r["pbest"].astype(np.float64) - tau) <= near
    v = r["sampled"][:, :k, :n].astype(np.float64)
    d = v[:, 1:] - v[:, :1]
    gain = d.mean(2)
    se = d.std(2, ddof=1) / np.sqrt(n)
    valid = np.arange(1, k)[None, :] < nc[:, None]
    gain = np.where(valid & (gain > z * se + margin), gain, -np.inf)
    col = np.where(np.isfinite(gain.max(1)) & searched, gain.argmax(1) + 1, 0)
    return searched, col


def rules(a) -> None:
    """The ``rules`` step (module docstring): every rule of the grid replayed on the records."""
    parts = [np.load(f) for f in a.records]
    r = {k: np.concatenate([p[k] for p in parts]) for k in ("cand", "ncand", "pred", "pbest", "sampled", "true")}
    r["tau"] = float(parts[0]["tau"])
    hands = sum(int(p["hands"]) for p in parts)
    N = len(r["ncand"])
    # decisions of the whole population each record stands for, per seat-hand (records of one kind only)
    per_seat_hand = N / (float(parts[0]["prob"]) if "prob" in parts[0] else 0.25) / (3 * max(hands, 1))
    W = r["sampled"].shape[2]
    print(f"{N:,} decisions of {hands:,} hands ({per_seat_hand:.2f} such decisions per seat-hand), "
          f"{W} worlds recorded")
    nears = [None if c < 0 else c for c in a.near]
    for near, n, k, z, margin in itertools.product(nears, [w for w in a.worlds if w <= W], a.candidates, a.z,
                                                    a.margin):
        searched, col = choose(r, near, n, k, z, margin)
        rows = np.arange(N)
        t = r["true"][rows, col] - r["true"][:, 0]
        t = np.where(col > 0, t, 0.0)
        v = r["sampled"][:, :, :n].astype(np.float64).mean(2)
        s = np.where(col > 0, v[rows, col] - v[:, 0], 0.0)
        ch = col > 0
        print(f"near {near!s:>5} n {n:3d} k {k} z {z:3.1f} margin {margin:4.2f}: searched {100 * searched.mean():5.1f} %, "
              f"changed {100 * ch.mean():5.2f} %; per change sampled {s[ch].mean() if ch.any() else 0:+.3f}, "
              f"true {t[ch].mean() if ch.any() else 0:+.3f} ± {ci95(t[ch]) if ch.sum() > 1 else 0:.3f}; "
              f"per seat-hand true {t.mean() * per_seat_hand:+.4f} ± {ci95(t) * per_seat_hand:.4f}")


def judge(a) -> None:
    """The ``judge`` step: search rules replayed on one record with hands-true worlds (``--hands_true``), choosing
    with its sampled worlds, its belief's worlds and those of each ``--beliefs`` record (``--only_belief`` records
    of the same decisions), each judged by the mean of the hands-true worlds; gains per seat-hand with 95 % CIs,
    paired against the sampled worlds; then how well each one's value difference (second candidate less the
    policy's) tracks the hands-true one (correlation over decisions)."""
    from mjenv.encoding import actions as A

    base = np.load(a.record)
    if "htrue" not in base.files:
        raise SystemExit(f"{a.record}: no hands-true worlds (record it with --hands_true M)")
    N = len(base["ncand"])
    psh = N / float(base["prob"]) / (3 * int(base["hands"]))
    ht = base["htrue"].astype(np.float64).mean(2)
    nc, c = base["ncand"], base["cand"]
    near = np.abs(base["pbest"].astype(np.float64) - float(base["tau"])) <= 0.1
    liang = (((c >= A.LIANG) & (c < A.LIANG + 34)) & (np.arange(c.shape[1])[None, :] < nc[:, None])).any(1)
    every = np.ones(N, bool)

    def pick(v, k, z, sel):
        d = v[:, 1:k] - v[:, :1]
        g, se = d.mean(2), d.std(2, ddof=1) / np.sqrt(v.shape[2])
        valid = np.arange(1, k)[None, :] < np.minimum(nc, k)[:, None]
        g = np.where(valid & (g > z * se), g, -np.inf)
        return np.where(np.isfinite(g.max(1)) & sel, g.argmax(1) + 1, 0)

    def gain(col):
        return np.where(col > 0, ht[np.arange(N), col] - ht[:, 0], 0.0)

    rules = {"every, 2 cand., z 1": lambda v: gain(pick(v, 2, 1, every)),
             "every, 3 cand., z 1": lambda v: gain(pick(v, 3, 1, every)),
             "near 0.1, z 1": lambda v: gain(pick(v, 2, 1, near)),
             "亮倒 decisions, z 0": lambda v: gain(pick(v, 2, 0, liang)),
             "near z 1 + 亮倒 z 0 (policy-search)": lambda v: np.where(liang, gain(pick(v, 2, 0, liang)),
                                                                    gain(pick(v, 2, 1, near)))}
    vals = {"sampled": base["sampled"]}
    if "bsampled" in base.files:
        vals["belief (record's own)"] = base["bsampled"]
    for f in a.beliefs:
        other = np.load(f)
        if not (other["cand"] == c).all():
            raise SystemExit(f"{f}: not the decisions of {a.record}")
        vals[Path(f).name] = other["bsampled"]
    print(f"{N:,} decisions of {int(base['hands']):,} hands ({psh:.2f} per seat-hand; {near.sum()} near, "
          f"{liang.sum()} with a 亮倒 candidate); gains per seat-hand, judged by the hands-true mean")
    ref = {}
    dt = ht[:, 1] - ht[:, 0]
    for name, v in vals.items():
        v = np.nan_to_num(v.astype(np.float64))
        print(f"  {name}")
        for label, rule in rules.items():
            g = rule(v)
            ref.setdefault(label, g)
            print(f"    {label:38s} {g.mean() * psh:+.3f} ± {ci95(g) * psh:.3f}; paired − sampled "
                  f"{(g - ref[label]).mean() * psh:+.3f} ± {ci95(g - ref[label]) * psh:.3f}")
        d = v[:, 1] - v[:, 0]
        ok = np.isfinite(dt) & (np.minimum(nc, 2) >= 2)
        print(f"    correlation of the value difference with the hands-true one: "
              f"{np.corrcoef(d[ok].mean(1), dt[ok])[0, 1]:.3f}")
    hv = base["htrue"].astype(np.float64)
    half = hv.shape[2] // 2
    col = pick(np.nan_to_num(hv[:, :, :half]), 2, 1, every)
    judged = hv[:, :, half:].mean(2)
    t = np.where(col > 0, judged[np.arange(N), col] - judged[:, 0], 0.0)
    print(f"  exact belief ({half} hands-true worlds choose, {half} others judge), every, 2 cand., z 1: "
          f"{t.mean() * psh:+.3f} ± {ci95(t) * psh:.3f}")


def closeness(a) -> None:
    """The ``closeness`` step: how near each belief's kept worlds come to the opponents' true hands, without
    rollouts.  At ``--decisions`` decisions of the improved player's self-play (walls of ``--seed``), ``--pool`` ×
    ``--worlds`` worlds are sampled; each belief keeps ``--worlds`` of them (``keep=distinct``); printed per belief:
    the mean over decisions of the kept worlds' L1 distance between the opponents' concealed counts and the true
    ones (summed over opponents; lower is nearer), its reduction from the uniform worlds' with a 95 % CI, and the
    same on the opponents' summed counts of the kinds near the seat's own tiles (what ``--oracle near`` matches), and
    the distinct worlds kept; for scale, the worlds of ``--oracle tiles --oracle_eps 0.5`` (which read the true
    hands)."""
    import torch

    torch.set_num_threads(1)
    from agents.players.fasthead import FastHeadPlayer
    from agents.players.search import SearchAgent
    from mjenv.engine import state as S
    from mjenv.engine.core import Engine

    head = FastHeadPlayer(a.policy)
    specs = {"uniform": None, "oracle tiles 0.5": None}
    for item in a.beliefs:
        name, _, kw = item.partition("=")
        specs[name] = kw
    agents = {}
    for name, kw in specs.items():
        if kw is None:
            continue
        opts = {k: v for k, v in (x.split(":") for x in kw.split(";") if x)}
        agents[name] = SearchAgent(a.variant, None, candidates=2, worlds=a.worlds, seed=a.seed, policy=a.policy,
                                   pool=a.pool, keep="distinct",
                                   belief=float(opts["belief"]) if "belief" in opts else None,
                                   belief_depth=int(opts.get("depth", 1)), belief_net=opts.get("net"),
                                   temper=float(opts.get("temper", 1.0)))
        agents[name].player = head
    B = 64
    eng = Engine(a.variant, B, options=head.opts, record_events=False)
    st = eng.state
    eng.reset(seed=a.seed, table_ids=np.arange(B), dealer=np.arange(B) % eng.n)
    rng = np.random.default_rng([a.seed, 2122])
    dist = {name: [] for name in specs}
    kept = {name: [] for name in specs}
    dnear = {name: [] for name in specs}
    from mjenv.encoding.shanten import _NEAR
    nxt, count, worlds = B, 0, None
    m = a.worlds * a.pool
    while count < a.decisions:
        live = np.flatnonzero(st.phase != S.DONE)
        acts = head.decide(eng, live)
        for b in live[rng.random(len(live)) < a.prob]:
            b, s = int(b), int(st.actor[b])
            seed = int(rng.integers(2**62))
            try:
                worlds = eng.sample_worlds(b, s, m, seed=seed, out=worlds)
            except RuntimeError:
                continue
            d = np.zeros(m)
            for o in range(eng.n):
                if o != s:
                    d += np.abs(worlds.state.hand[:m, o].astype(np.int64) - st.hand[b, o]).sum(1)
            opp = [o for o in range(eng.n) if o != s]
            kinds = _NEAR[:, st.hand[b, s] > 0].any(1)
            dn = np.abs(worlds.state.hand[:m][:, opp][:, :, kinds].astype(np.int64).sum(1)
                        - st.hand[b, opp][:, kinds].astype(np.int64).sum(0)).sum(1)
            for name in specs:
                if name == "uniform":
                    pick = np.arange(a.worlds)
                elif name == "oracle tiles 0.5":  # the --oracle tiles diagnostic's worlds (reads the true hands)
                    pick = distinct(np.exp(-0.5 * (d - d.min())), a.worlds, seed)
                else:
                    ag = agents[name]
                    if ag.belief is None:
                        facts = []
                    elif ag.belief_depth == 1:
                        facts = last_discards(eng, b, s)
                    else:
                        facts = history_discards(eng, b, s, ag.belief_depth)
                    pick = distinct(ag._world_weights(eng, b, s, worlds, m, facts, seed), a.worlds, seed)
                dist[name].append(d[pick].mean())
                dnear[name].append(dn[pick].mean())
                kept[name].append(len(set(pick.tolist())))
            count += 1
        eng.step(acts)
        nxt, _ = eng.deal_next_walls(a.seed, nxt)
    u, un = np.asarray(dist["uniform"]), np.asarray(dnear["uniform"])
    print(f"{count:,} decisions, {m} worlds sampled, {a.worlds} kept")
    for name in specs:
        x, xn = np.asarray(dist[name]), np.asarray(dnear[name])
        print(f"  {name:24s} L1 to the true hands {x.mean():6.3f}; nearer than uniform by {np.mean(u - x):+.3f} ± "
              f"{ci95(u - x):.3f}; on the kinds near the seat's tiles (opponents summed) {xn.mean():6.3f}, nearer by "
              f"{np.mean(un - xn):+.3f} ± {ci95(un - xn):.3f}; distinct kept {np.mean(kept[name]):.1f}")


def main(argv=None) -> int:
    """Command line: ``record``, ``rules``, ``judge`` or ``closeness``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--policy", default="agents/checkpoints/kawuxing3-long.pt")
    r.add_argument("--variant", default="kawuxing3")
    r.add_argument("--decisions", type=int, default=2000)
    r.add_argument("--seed", type=int, default=60)
    r.add_argument("--worlds", type=int, default=128)
    r.add_argument("--prob", type=float, default=0.25, help="share of the decisions with a choice recorded")
    r.add_argument("--near", type=float, default=-1.0,
                   help="record only decisions whose head's best predicted gain is within this of its tau (-1: all)")
    r.add_argument("--hands_true", type=int, default=0,
                   help="also roll each candidate out in this many hands-true worlds (real hands, wall reshuffled)")
    r.add_argument("--belief", type=float, default=None,
                   help="also record the values in the belief's worlds (SearchAgent belief=EPS, pool=--pool)")
    r.add_argument("--pool", type=int, default=4)
    r.add_argument("--oracle", default=None, choices=["ready", "shanten", "waits", "tiles", "near"],
                   help="diagnostic: weight pooled worlds by whether the opponents' hands share this fact of the TRUE "
                        "hands (--oracle_eps elsewhere; tiles: weight exp(-oracle_eps x L1 distance of the concealed "
                        "counts; near: of the opponents' summed counts of the kinds near the seat's own tiles)); recorded as the "
                        "belief's values")
    r.add_argument("--oracle_eps", type=float, default=0.01)
    r.add_argument("--keep", default="resample", help="how the belief keeps its worlds (SearchAgent keep)")
    r.add_argument("--belief_depth", type=int, default=1,
                   help="discards per opponent the belief reads (SearchAgent belief_depth; 1: the latest only)")
    r.add_argument("--belief_net", default=None, help="also (or with --belief) weight by this learned belief")
    r.add_argument("--temper", type=float, default=1.0)
    r.add_argument("--only_belief", action="store_true",
                   help="record the belief's values only (no true-world rollouts; join with an earlier record)")
    r.add_argument("--out", required=True)
    q = sub.add_parser("rules")
    q.add_argument("--records", nargs="+", required=True)
    q.add_argument("--near", type=float, nargs="+", default=[-1, 0.3, 0.15, 0.05], help="-1: every decision")
    q.add_argument("--worlds", type=int, nargs="+", default=[32, 64, 128])
    q.add_argument("--candidates", type=int, nargs="+", default=[2, 3])
    q.add_argument("--z", type=float, nargs="+", default=[0.0, 1.0, 2.0])
    q.add_argument("--margin", type=float, nargs="+", default=[0.0, 0.2])
    j = sub.add_parser("judge")
    j.add_argument("--record", required=True, help="a record with hands-true worlds")
    j.add_argument("--beliefs", nargs="*", default=[], help="--only_belief records of the same decisions")
    c = sub.add_parser("closeness")
    c.add_argument("--policy", default="agents/checkpoints/kawuxing3-long.pt")
    c.add_argument("--variant", default="kawuxing3")
    c.add_argument("--decisions", type=int, default=500)
    c.add_argument("--seed", type=int, default=68)
    c.add_argument("--worlds", type=int, default=64)
    c.add_argument("--pool", type=int, default=4)
    c.add_argument("--prob", type=float, default=0.1)
    c.add_argument("--beliefs", nargs="*", default=[],
                   help="NAME=belief:EPS;depth:K;net:PATH;temper:T (any of them), each kept distinct")
    a = p.parse_args(argv)
    {"record": record, "rules": rules, "judge": judge, "closeness": closeness}[a.cmd](a)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
