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
    """Deal the next wall to both tables ``2p, 2p + 1`` of each pair ``p`` of ``pairs`` (paired rollouts: the
    twins hold the same wall, the same dealer and the same seats), again while a deal ends at once."""
    from mjenv.engine.state import DONE

    while len(pairs):
        k = len(pairs)
        ep = r.next_episode + np.arange(k)
        r.next_episode += k
        tables = np.stack([2 * pairs, 2 * pairs + 1], 1).reshape(-1)
        r.engine.reset(seed=int(r.spec["seed"]), tables=tables, table_ids=np.repeat(ep, 2), dealer=np.repeat(ep % r.n, 2))
        r._episode[tables] = np.repeat(ep, 2)
        r.learner[tables] = True
        r.entry[tables] = 0
        r.diverged[pairs] = -1
        pairs = pairs[r.engine.state.phase[2 * pairs] == DONE]


def collect_paired(r) -> dict:
    """One paired rollout of the worker ``r`` (``spec["paired"]``), its batch shaped as :meth:`SeatRollouts.collect`'s.

    The tables are twins ``2p, 2p + 1`` dealt the same wall, and every seat of both samples the shared policy from the same uniform draw per pair and step (common random
    numbers), so the twins play move for move alike until they **branch**: at a learner decision with two or
    more legal actions whose policy is not near-certain (``1 − max π ≥ paired_min``), with probability
    ``paired_rate``, twin A plays its sampled action ``a`` and twin B an action ``b ≠ a`` drawn from the policy
    without ``a``.  Both then play on (still on common draws) to the end of the hand; the seat's money on A less
    on B, ``G_A − G_B``, has expectation ``Q(s, a) − E[Q(s, b) | b ≠ a]``, so ``(1 − π(a)) (G_A − G_B)`` is an
    unbiased estimate of the advantage ``Q(s, a) − V(s)`` in which the luck of the wall and of the other seats'
    draws, shared by the twins, partly cancels.  With ``spec["paired_greedy"]`` every seat of a branched pair plays
    its most likely action from the branch on, so the twins' difference is the branch's alone (no sampling noise
    after it) and the estimate is the advantage of ``a`` when the greedy policy plays on.  Only branch decisions
    are samples (``advantage`` that estimate × ``reward_scale``, ``ret`` the seat's money from the decision to the
    end on A).

    New branches start in the first ``n_steps`` engine steps; then only the branched pairs play on until their
    hands end (pairs that have not branched keep their hands for the next rollout).  ``stats["paired"]`` holds
    the standard deviations of the paired advantage and of the Monte-Carlo one on the same samples (``ret`` −
    the critic's value): the variance the pairing removes."""
    torch = r.torch
    from mjenv.engine.state import DONE

    cpu0 = time.process_time()
    spec, B, n, eng = r.spec, r.B, r.n, r.engine
    st = eng.state
    P = B // 2
    rate, floor = float(spec.get("paired_rate", 0.1)), float(spec.get("paired_min", 0.02))
    greedy = bool(spec.get("paired_greedy", False))
    rec: dict[str, list] = {k: [] for k in ("obs", "mask", "action", "logp", "value", "seat", "episode", "table",
                                            "pi", "money0")}
    gains: dict[int, tuple[float, float]] = {}
    seat_of: list[int] = []  # the seat of each paired sample
    count = hands = steps = 0
    money: list[float] = []
    finished: list[tuple[int, int, float]] = []
    while True:
        live = st.phase != DONE
        div = r.diverged >= 0
        active = np.ones(P, bool) if steps < int(spec["n_steps"]) else div
        tables = np.flatnonzero(np.repeat(active, 2) & live)
        if not len(tables):
            break
        # the policy runs on twin A of every pair and on twin B of the branched ones (before its branch, B is A)
        T = tables[(tables % 2 == 0) | div[tables // 2]]
        actor = st.actor.astype(np.int64)
        mask = eng.mask[T]
        x = encode_samples(r, T, actor[T], mask)
        u = torch.rand(P, 2, generator=r.gen)
        with torch.inference_mode():
            logits, value = r.net(torch.from_numpy(x))
            logp_all = torch.log_softmax(logits.masked_fill_(~torch.from_numpy(mask), MASKED), 1)
            a = sample_actions(logp_all, None, u[torch.from_numpy(T // 2), 0])
            if greedy:  # after a branch every seat plays its most likely action
                after = torch.from_numpy(div[T // 2])
                a = torch.where(after, logp_all.argmax(1), a)
        acts = np.zeros(B, np.int64)
        acts[T] = a.numpy()
        lead = np.flatnonzero((T % 2 == 0) & ~div[T // 2])  # rows of T: twin A of a pair not yet branched
        if len(lead):
            branch = np.zeros(len(lead), bool)
            if steps < int(spec["n_steps"]):
                pmax = logp_all[torch.from_numpy(lead)].max(1).values.exp().numpy()
                draw = r.rng.random(len(lead))
                branch = (mask[lead].sum(1) >= 2) & (1.0 - pmax >= floor) & (draw < rate)
            b_acts = a.numpy()[lead].copy()
            if branch.any():
                rb = lead[branch]
                rb_t = torch.from_numpy(rb)
                ra = a[rb_t]
                lp = logp_all[rb_t].clone()
                lp[torch.arange(len(rb)), ra] = MASKED
                b_acts[branch] = sample_actions(torch.log_softmax(lp, 1), None, u[torch.from_numpy(T[rb] // 2), 1]).numpy()
                la = logp_all[rb_t, ra]
                seat = actor[T[rb]]
                for key, val in (("obs", x[rb]), ("mask", mask[rb]), ("action", ra.numpy()), ("logp", la.numpy()),
                                 ("value", value[rb_t].numpy()), ("seat", seat), ("episode", r._episodes(T[rb])),
                                 ("table", T[rb]), ("pi", la.exp().numpy()),
                                 ("money0", st.money[T[rb], seat].astype(np.float64))):
                    rec[key].append(val)
                seat_of.extend(int(v) for v in seat)
                r.diverged[T[rb] // 2] = count + np.arange(len(rb))
                count += len(rb)
            acts[T[lead] + 1] = b_acts
        eng.step(acts[tables], tables=tables)
        steps += 1
        both = (st.phase[0::2] == DONE) & (st.phase[1::2] == DONE) & active
        done = np.flatnonzero(both)
        if len(done):
            hands += len(done)
            for p in done:
                k = int(r.diverged[p])
                if k >= 0:
                    s_k = seat_of[k]
                    gains[k] = (float(st.money[2 * p, s_k] - st.money[2 * p + 1, s_k]), float(st.money[2 * p, s_k]))
                ep = int(r._episode[2 * p])
                money.extend(float(m) for m in st.money[2 * p, :n])
                finished.extend((ep, s, float(st.money[2 * p, s])) for s in range(n))
            deal_pairs(r, done)
    out = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in rec.items()}
    obs_width = x.shape[1] if count == 0 else out["obs"].shape[1]
    out["obs"] = np.ascontiguousarray(out["obs"].reshape(count, obs_width), np.float32)
    out["mask"] = out["mask"].reshape(count, N_ACTIONS).astype(bool)
    for key in ("action", "seat", "episode", "table"):
        out[key] = out[key].astype(np.int64)
    diff = np.array([gains[k][0] for k in range(count)], np.float64)
    g_a = np.array([gains[k][1] for k in range(count)], np.float64) - out.pop("money0")
    scale = float(spec["reward_scale"])
    pi = out.pop("pi").astype(np.float64)
    out["advantage"] = ((1.0 - pi) * diff * scale).astype(np.float32)
    out["ret"] = (g_a * scale).astype(np.float32)
    out["value"] = out["value"].astype(np.float32)
    out["logp"] = out["logp"].astype(np.float32)
    out.update(reward=out["ret"].copy(), nxt=np.full(count, -1, np.int64), terminal=np.ones(count, bool),
               bootstrap=np.zeros(count, np.float32))
    paired = {"adv_std_paired": float(np.std(out["advantage"])) if count else float("nan"),
              "adv_std_mc": float(np.std(out["ret"] - out["value"])) if count else float("nan")}
    out["stats"] = {"samples": count, "hands": hands, "cpu": time.process_time() - cpu0,
                    "money": {"all-seat": money} if money else {}, "finished": finished, "paired": paired,
                    "steps": steps}
    return out


def encode_samples(r, tables: np.ndarray, seats: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A learner sample's input (flat ``float32``) for the acting ``seats`` of ``tables``: the observation, with
    the derived or advice rows after it, or the oracle rows for the oracle critic."""
    st, eng = r.engine.state, r.engine
    if r.features is None:
        obs = r.sample_encoder.encode(st, seats, tables, engine=eng)
    else:
        obs = r.features.extend(r.encoder.encode(st, seats, tables, engine=eng), mask)
    return np.ascontiguousarray(obs.reshape(len(tables), -1), np.float32)
