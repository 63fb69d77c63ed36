"""Paired rollouts of the all-seat trainer (``train.py --paired``): twin tables dealt the same wall, played on common
random draws until one learner decision branches, that decision a sample whose advantage is the twins' money
difference (docs/experiments/ppo.md, "Paired advantages").

This module owns :func:`collect_paired` (one paired rollout of a :class:`agents.training.ppo.SeatRollouts`, which
calls it when its spec has ``paired``), :func:`deal_pairs` (the next wall to both twins of each pair) and
:func:`encode_samples` (a learner sample's input).  The functions read and update the rollout worker ``r``'s engine,
network, random generators and per-pair state (``r.diverged``)."""

from __future__ import annotations

import time

import numpy as np

from agents.training.sampling import MASKED, sample_actions
from mjenv.encoding.actions import N_ACTIONS


def deal_pairs(r, pairs: np.ndarray) -> None:
    """Deal the next wall to every table ``Kp … Kp + K − 1`` of each group ``p`` of ``pairs`` (``K`` the spec's
    ``paired_branches``, 2 for twins: the tables of a group hold the same wall, the same dealer and the same seats),
    again while a deal ends at once."""
    from mjenv.engine.state import DONE

    K = branches(r.spec)
    while len(pairs):
        k = len(pairs)
        ep = r.next_episode + np.arange(k)
        r.next_episode += k
        tables = (K * pairs[:, None] + np.arange(K)).reshape(-1)
        r.engine.reset(seed=int(r.spec["seed"]), tables=tables, table_ids=np.repeat(ep, K), dealer=np.repeat(ep % r.n, K))
        r._episode[tables] = np.repeat(ep, K)
        r.learner[tables] = True
        r.entry[tables] = 0
        r.diverged[pairs] = -1
        pairs = pairs[r.engine.state.phase[K * pairs] == DONE]


def branches(spec: dict) -> int:
    """The tables of a paired group (``spec["paired_branches"]``, 2 — twins — when absent)."""
    return int(spec.get("paired_branches", 2))


def collect_paired(r) -> dict:
    """One paired rollout of the worker ``r`` (``spec["paired"]``), its batch shaped as :meth:`SeatRollouts.collect`'s.

    The tables are groups of ``K = paired_branches`` (2: twins ``2p, 2p + 1``) dealt the same wall, and every seat of
    every table samples the shared policy from the same uniform draw per group and step (common random numbers), so
    a group's tables play move for move alike until they **branch**: at a learner decision with two or more legal
    actions whose policy is not near-certain (``1 − max π ≥ paired_min``), with probability ``paired_rate``, table
    1 (twin A) plays its sampled action ``a = x_1`` and tables ``2 … m`` the actions ``x_2 … x_m`` drawn from the
    policy without replacement (each from the policy without the actions drawn before it), ``m = min(K, legal
    actions)``; tables past ``m`` copy table 1.  All play on (still on common draws) to the end of the hand.  With
    ``G_j`` the seat's money on table ``j`` from the decision on, ``R_j = 1 − π(x_1) − … − π(x_{j−1})`` and

        W = (π(x_2) G_2 + … + π(x_{m−1}) G_{m−1} + R_m G_m) / (1 − π(x_1)),

    ``W`` estimates ``E[Q(s, b) | b ≠ a]`` without bias (the sum-and-sample estimator: given ``x_1 … x_{m−1}``,
    ``x_m`` is drawn with probability ``π(x_m) / R_m``, so ``E[R_m G_m] = Σ π(b) Q(s, b)`` over the actions not yet
    drawn), and ``(1 − π(a)) (G_1 − W)`` estimates the advantage ``Q(s, a) − V(s)`` without bias, the luck of the
    wall and of the other seats' draws, shared by the group, partly cancelling.  With ``K = 2`` it is
    ``(1 − π(a)) (G_A − G_B)`` (docs/experiments/ppo.md, "Paired advantages"; "Several branches per state" for
    ``K > 2``).  With ``spec["paired_greedy"]`` every seat of a branched group plays its most likely action from the
    branch on, so the tables' differences are the branch's alone (no sampling noise after it) and the estimate is the
    advantage of ``a`` when the greedy policy plays on.  Only branch decisions are samples (``advantage`` that
    estimate × ``reward_scale``, ``ret`` the seat's money from the decision to the end on table 1); with
    ``spec["paired_samples"] == "all"`` every branch's action is a sample, with the advantage of
    :func:`all_branch_advantages` (× ``reward_scale``) and its table's money as ``ret``.

    New branches start in the first ``n_steps`` engine steps; then only the branched groups play on until their
    hands end (groups that have not branched keep their hands for the next rollout).  ``stats["paired"]`` holds
    the standard deviations of the paired advantage and of the Monte-Carlo one on the same samples (``ret`` −
    the critic's value): the variance the pairing removes; and per sample the branches' actions, their
    probabilities and money (``branch_action``, ``branch_pi``, ``branch_money``: ``[samples, K]``, −1 / 0 / 0
    past ``m``) and ``Σ π(b)²`` (``pi_sq``), from which bench/paired_advantages.py computes other estimators."""
    torch = r.torch
    from mjenv.engine.state import DONE

    cpu0 = time.process_time()
    spec, B, n, eng = r.spec, r.B, r.n, r.engine
    st = eng.state
    K = branches(spec)
    P = B // K
    rate, floor = float(spec.get("paired_rate", 0.1)), float(spec.get("paired_min", 0.02))
    greedy = bool(spec.get("paired_greedy", False))
    rec: dict[str, list] = {k: [] for k in ("obs", "mask", "action", "logp", "value", "seat", "episode", "table",
                                            "pi", "money0")}
    gains: dict[int, np.ndarray] = {}  # per sample: the seat's money at the end on each of its tables
    seat_of: list[int] = []  # the seat of each paired sample
    b_act: list[np.ndarray] = []  # per sample: the branches' actions x_1 … x_K (−1 past m)
    b_pi: list[np.ndarray] = []  # their probabilities π(x_j)
    b_sq: list[np.ndarray] = []  # Σ_b π(b)² of the branch decision
    b_logp: list[np.ndarray] = []  # log π(x_j)
    width = np.ones(P, np.int64)  # per group: the tables that play their own branch (m), while it is branched
    count = hands = steps = 0
    money: list[float] = []
    finished: list[tuple[int, int, float]] = []
    while True:
        live = st.phase != DONE
        div = r.diverged >= 0
        active = np.ones(P, bool) if steps < int(spec["n_steps"]) else div
        tables = np.flatnonzero(np.repeat(active, K) & live)
        if not len(tables):
            break
        # the policy runs on table 1 of every group and on the branch tables of the branched ones (before its branch,
        # and past m, a table plays as table 1)
        g_of = tables // K
        own = (tables % K == 0) | (div[g_of] & (tables % K < width[g_of]))
        T = tables[own]
        actor = st.actor.astype(np.int64)
        mask = eng.mask[T]
        x = encode_samples(r, T, actor[T], mask)
        u = torch.rand(P, K, generator=r.gen)
        with torch.inference_mode():
            logits, value = r.net(torch.from_numpy(x))
            logp_all = torch.log_softmax(logits.masked_fill_(~torch.from_numpy(mask), MASKED), 1)
            a = sample_actions(logp_all, None, u[torch.from_numpy(T // K), 0])
            if greedy:  # after a branch every seat plays its most likely action
                after = torch.from_numpy(div[T // K])
                a = torch.where(after, logp_all.argmax(1), a)
        acts = np.zeros(B, np.int64)
        acts[T] = a.numpy()
        lead = np.flatnonzero((T % K == 0) & ~div[T // K])  # rows of T: table 1 of a group not yet branched
        if len(lead):
            branch = np.zeros(len(lead), bool)
            if steps < int(spec["n_steps"]):
                pmax = logp_all[torch.from_numpy(lead)].max(1).values.exp().numpy()
                draw = r.rng.random(len(lead))
                branch = (mask[lead].sum(1) >= 2) & (1.0 - pmax >= floor) & (draw < rate)
            lead_acts = a.numpy()[lead]
            for j in range(1, K):
                acts[T[lead] + j] = lead_acts
            if branch.any():
                rb = lead[branch]
                rb_t = torch.from_numpy(rb)
                ra = a[rb_t]
                g = T[rb] // K
                m = np.minimum(K, mask[rb].sum(1))
                pi_all = logp_all[rb_t].exp().numpy().astype(np.float64)
                drawn = np.full((len(rb), K), -1, np.int64)
                drawn[:, 0] = ra.numpy()
                lp = logp_all[rb_t].clone()
                rows = torch.arange(len(rb))
                for j in range(1, K):  # x_j from the policy without x_1 … x_{j−1}, on the group's j-th draw
                    lp[rows, torch.from_numpy(drawn[:, j - 1])] = MASKED
                    ok = np.flatnonzero(m > j)
                    if not len(ok):
                        break
                    ok_t = torch.from_numpy(ok)
                    xj = sample_actions(torch.log_softmax(lp[ok_t], 1), None, u[torch.from_numpy(g[ok]), j]).numpy()
                    drawn[ok, j] = xj
                    acts[T[rb[ok]] + j] = xj
                pis = np.where(drawn >= 0, np.take_along_axis(pi_all, np.maximum(drawn, 0), 1), 0.0)
                b_act.append(drawn)
                b_pi.append(pis)
                b_sq.append((pi_all**2).sum(1))
                b_logp.append(np.take_along_axis(logp_all[rb_t].numpy(), np.maximum(drawn, 0), 1))
                width[g] = m
                la = logp_all[rb_t, ra]
                seat = actor[T[rb]]
                for key, val in (("obs", x[rb]), ("mask", mask[rb]), ("action", ra.numpy()), ("logp", la.numpy()),
                                 ("value", value[rb_t].numpy()), ("seat", seat), ("episode", r._episodes(T[rb])),
                                 ("table", T[rb]), ("pi", la.exp().numpy()),
                                 ("money0", st.money[T[rb], seat].astype(np.float64))):
                    rec[key].append(val)
                seat_of.extend(int(v) for v in seat)
                r.diverged[g] = count + np.arange(len(rb))
                count += len(rb)
        # a branched group's tables past m play as its table 1
        dup = tables[~own]
        dup = dup[div[dup // K]]
        if len(dup):
            acts[dup] = acts[dup - dup % K]
        eng.step(acts[tables], tables=tables)
        steps += 1
        both = (st.phase.reshape(P, K) == DONE).all(1) & active
        done = np.flatnonzero(both)
        if len(done):
            hands += len(done)
            for p in done:
                k = int(r.diverged[p])
                if k >= 0:
                    gains[k] = st.money[K * p : K * p + K, seat_of[k]].astype(np.float64)
                    width[p] = 1
                ep = int(r._episode[K * p])
                money.extend(float(v) for v in st.money[K * p, :n])
                finished.extend((ep, s, float(st.money[K * p, s])) for s in range(n))
            deal_pairs(r, done)
    out = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in rec.items()}
    obs_width = x.shape[1] if count == 0 else out["obs"].shape[1]
    out["obs"] = np.ascontiguousarray(out["obs"].reshape(count, obs_width), np.float32)
    out["mask"] = out["mask"].reshape(count, N_ACTIONS).astype(bool)
    for key in ("action", "seat", "episode", "table"):
        out[key] = out[key].astype(np.int64)
    ends = np.array([gains[k] for k in range(count)], np.float64).reshape(count, K)
    drawn = np.concatenate(b_act) if b_act else np.zeros((0, K), np.int64)
    pis = np.concatenate(b_pi) if b_pi else np.zeros((0, K))
    diff = branch_difference(ends, pis, drawn >= 0)
    g_a = ends[:, 0] - out.pop("money0")
    scale = float(spec["reward_scale"])
    pi = out.pop("pi").astype(np.float64)
    out["advantage"] = ((1.0 - pi) * diff * scale).astype(np.float32)
    out["ret"] = (g_a * scale).astype(np.float32)
    out["value"] = out["value"].astype(np.float32)
    out["logp"] = out["logp"].astype(np.float32)
    out.update(reward=out["ret"].copy(), nxt=np.full(count, -1, np.int64), terminal=np.ones(count, bool),
               bootstrap=np.zeros(count, np.float32))
    paired = {"adv_std_paired": float(np.std(out["advantage"])) if count else float("nan"),
              "adv_std_mc": float(np.std(out["ret"] - out["value"])) if count else float("nan"),
              "branch_action": drawn, "branch_pi": pis, "branch_money": np.where(drawn >= 0, ends - ends[:, :1] + g_a[:, None], 0.0),
              "pi_sq": np.concatenate(b_sq) if b_sq else np.zeros(0)}
    if spec.get("paired_samples", "first") == "all" and count:  # every branch a sample
        rows, j = np.nonzero(drawn >= 0)
        adv = all_branch_advantages(ends, pis, drawn >= 0)
        g = ends - (ends[:, :1] - g_a[:, None])  # the seat's money from the decision on, per table
        logps = np.concatenate(b_logp)
        out = {**{k: out[k][rows] for k in ("obs", "mask", "value", "seat", "episode")},
               "table": out["table"][rows] + j, "action": drawn[rows, j], "logp": logps[rows, j].astype(np.float32),
               "advantage": (adv[rows, j] * scale).astype(np.float32), "ret": (g[rows, j] * scale).astype(np.float32)}
        n_rows = len(rows)
        out.update(reward=out["ret"].copy(), nxt=np.full(n_rows, -1, np.int64), terminal=np.ones(n_rows, bool),
                   bootstrap=np.zeros(n_rows, np.float32))
        paired["adv_std_paired"] = float(np.std(out["advantage"]))
        count = n_rows
    out["stats"] = {"samples": count, "hands": hands, "cpu": time.process_time() - cpu0,
                    "money": {"all-seat": money} if money else {}, "finished": finished, "paired": paired,
                    "steps": steps}
    return out


def all_branch_advantages(ends: np.ndarray, pis: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """Every branch as a sample (``paired_samples = "all"``): ``[N, K]`` advantages, ``ω_i (G_i − c)`` for the
    branch ``x_i`` (0 past ``m``), where ``ω_i = π(x_i)`` for ``i < m``, ``ω_m = R_m = 1 − π(x_1) − … − π(x_{m−1})``
    and ``c`` is the ``π``-weighted mean of ``G_1 … G_{m−1}``.  ``Σ_i ω_i (G_i − c) ∇ log π(x_i)`` is the sum-and-sample
    estimate of the policy gradient ``Σ_a ∇π(a) Q(s, a)`` with a baseline that does not depend on the last draw,
    so it is unbiased although the samples are not drawn from ``π`` (docs/experiments/ppo.md, "Several branches per
    state"); PPO then scales these advantages without centring them (``ppo_update(center=False)``: a constant
    subtracted from samples not drawn from ``π`` would bias the gradient).  Arguments as
    :func:`branch_difference`'s."""
    N, K = ends.shape
    m = drawn.sum(1)
    rows = np.arange(N)
    before = drawn & (np.arange(K)[None] < (m - 1)[:, None])  # x_1 … x_{m−1}
    w = np.where(before, pis, 0.0)
    c = (w * ends).sum(1) / w.sum(1)
    w[rows, m - 1] = np.maximum(1.0 - w.sum(1), 0.0)  # R_m
    return np.where(drawn, w * (ends - c[:, None]), 0.0)


def branch_difference(ends: np.ndarray, pis: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """``G_1 − W`` per sample (:func:`collect_paired`): ``ends [N, K]`` the seat's money at the end on each table (or
    from the decision on: only differences count), ``pis [N, K]`` the probabilities ``π(x_j)`` of the actions the
    tables played at the branch, ``drawn [N, K]`` which tables played their own (``j < m``).  ``W`` weighs table
    ``j`` (``2 ≤ j < m``) by ``π(x_j)`` and table ``m`` by ``R_m = 1 − π(x_1) − … − π(x_{m−1})``, divided by their
    sum ``1 − π(x_1)``; with ``m = 2`` the weight is exactly 1 and ``G_1 − W`` is ``G_1 − G_2``."""
    N, K = ends.shape
    diff = ends[:, :1] - ends[:, 1:]  # G_1 − G_j
    m = drawn.sum(1)
    w = np.where(drawn[:, 1:], pis[:, 1:], 0.0)
    last = m - 2  # column of table m in the differences
    rows = np.arange(N)
    w[rows, last] = 1.0 - np.cumsum(pis, 1)[rows, last]  # R_m = 1 − π(x_1) − … − π(x_{m−1})
    w = np.maximum(w, 0.0)
    c = w / w.sum(1, keepdims=True)
    return (c * diff).sum(1) if K > 2 else (c * diff)[:, 0]


def encode_samples(r, tables: np.ndarray, seats: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A learner sample's input (flat ``float32``) for the acting ``seats`` of ``tables``: the observation, with
    the derived or advice rows after it, or the oracle rows for the oracle critic."""
    st, eng = r.engine.state, r.engine
    if r.features is None:
        obs = r.sample_encoder.encode(st, seats, tables, engine=eng)
    else:
        obs = r.features.extend(r.encoder.encode(st, seats, tables, engine=eng), mask)
    return np.ascontiguousarray(obs.reshape(len(tables), -1), np.float32)
