"""The departure stage of ``train.py``: fit a departure head to search labels and report what it gains.

The head, its features and its checkpoint entry are :mod:`agents.players.departures` (what a policy plays with);
this module owns what only training needs: :func:`fit_head` (least squares over an ensemble), :func:`label_gains`
(the head's inputs and targets from :func:`agents.training.distill.label_states` labels), :func:`win_labels` (the
labels of a head of scope ``win``: true-state rollouts at every win decision), :func:`realized_gains`
(held-out gains per threshold), :func:`merge_heads` (one head averaging several) and :func:`run_stage`; :func:`departure_stage` is that stage with ``train.py``'s ``departure_*`` arguments
(``train.py --departure_decisions N``, the ``long`` config; ``departures.json`` in the run folder;
``--departure_policy CKPT`` labels the states that checkpoint's player reaches, the ``exit`` config;
``--departure_world_source hands_true`` values the labels in hands-true worlds and ``--departure_merge CKPT`` averages
the fitted head with that checkpoint's, the ``truehead`` config).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from agents.players.departures import (ADVISOR, CANDIDATES, DEFAULTS, FEATURES, CandidateFeatures, _torch, choose,
                                       head_payload, in_scope, make_head, predict)
from mjenv.encoding import actions as A
from mjenv.rules.options import n_players

def fit_head(x: np.ndarray, gain: np.ndarray, valid: np.ndarray, *, members: int = DEFAULTS["members"],
             hidden: int = DEFAULTS["hidden"], epochs: int = DEFAULTS["epochs"], lr: float = DEFAULTS["lr"],
             weight_decay: float = DEFAULTS["weight_decay"], batch_size: int = DEFAULTS["batch_size"],
             clip: float = DEFAULTS["clip"], seed: int = 0, log: Callable[[str], None] | None = None):
    """Fit a :func:`make_head` ensemble by least squares: inputs ``x [N, K - 1, width]``, targets ``gain
    [N, K - 1]`` (the labels' paired gains over the choice, clipped to ±``clip``) where ``valid``.  Member ``i``
    starts from torch seed ``seed + i`` and sees its own shuffles.  Returns the head (in eval mode)."""
    torch = _torch()
    valid = np.asarray(valid, bool)
    xs = torch.as_tensor(np.asarray(x, np.float32)[valid])
    ys = torch.as_tensor(np.clip(np.asarray(gain, np.float32)[valid], -clip, clip))
    if len(xs) < 2:
        raise ValueError(f"departure head: need at least 2 labelled alternatives, got {len(xs)}")
    torch.manual_seed(seed)
    head = make_head(members, hidden, xs.shape[1])
    head.mean.copy_(xs.mean(0))
    head.scale.copy_(xs.std(0) + 1e-3)
    z = (xs - head.mean) / head.scale
    for i, member in enumerate(head.members):
        gen = torch.Generator().manual_seed(seed + i)
        for layer in member:
            if isinstance(layer, torch.nn.Linear):
                bound = 1.0 / np.sqrt(layer.in_features)
                with torch.no_grad():
                    layer.weight.uniform_(-bound, bound, generator=gen)
                    layer.bias.uniform_(-bound, bound, generator=gen)
        opt = torch.optim.AdamW(member.parameters(), lr=lr, weight_decay=weight_decay)
        for epoch in range(epochs):
            order = torch.randperm(len(z), generator=gen)
            total = 0.0
            for lo in range(0, len(z), batch_size):
                b = order[lo : lo + batch_size]
                loss = ((member(z[b]).squeeze(-1) - ys[b]) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += float(loss.detach()) * len(b)
            if log and epoch == epochs - 1:
                log(f"[departures] member {i + 1}/{members}: mean squared error {total / len(z):.3f} after {epochs} epochs")
    head.eval()
    return head


def merge_heads(parts: list[dict], *, tau: float | None = None) -> dict:
    """A ``"departures"`` entry whose prediction is the mean over all members of ``parts`` (entries of equal
    ``hidden``; heads of equal member counts weigh equally): each member's first layer absorbs its own head's input
    standardisation and takes the last part's, so the merged head reads the same inputs.  ``tau``: the merged head's
    threshold (default: the last part's).  Every part must carry the same fingerprint."""
    from agents.players.departures import FEATURES, _torch, make_head

    torch = _torch()
    if not parts:
        raise ValueError("merge_heads: no heads given")
    hidden = {int(p["arch"]["hidden"]) for p in parts}
    prints = {p.get("fingerprint") for p in parts}
    if len(hidden) != 1 or len(prints) != 1 or any(p.get("features") != FEATURES for p in parts):
        raise ValueError("merge_heads: the heads differ in hidden units, fingerprint or feature set")
    heads = []
    for p in parts:
        h = make_head(int(p["arch"]["members"]), int(p["arch"]["hidden"]))
        h.load_state_dict(p["state"])
        heads.append(h)
    out = make_head(sum(len(h.members) for h in heads), hidden.pop())
    mean, scale = heads[-1].mean.clone(), heads[-1].scale.clone()
    out.mean.copy_(mean)
    out.scale.copy_(scale)
    i = 0
    with torch.no_grad():
        for h in heads:
            for member in h.members:
                target = out.members[i]
                target.load_state_dict(member.state_dict())
                w, b = member[0].weight, member[0].bias  # W (x - m) / s + b, with x = z * scale + mean
                target[0].weight.copy_(w * (scale / h.scale)[None, :])
                target[0].bias.copy_(b + w @ ((mean - h.mean) / h.scale))
                i += 1
    out.eval()
    last = parts[-1]
    meta = {"merged": [p.get("meta", {}) for p in parts]}
    return {**{k: v for k, v in last.items() if k not in ("arch", "state", "meta", "tau")},
            "tau": float(last["tau"] if tau is None else tau),
            "arch": {"members": len(out.members), "hidden": int(out.members[0][0].out_features)},
            "state": {k: v.detach().cpu().clone() for k, v in out.state_dict().items()}, "meta": meta}


def realized_gains(pred: np.ndarray, gain: np.ndarray, ncand: np.ndarray, taus, per_seat_hand: float) -> list[dict]:
    """Per threshold: the share of decisions where :func:`choose` departs and the labelled gain of what it plays,
    per decision and per seat-hand (``per_seat_hand`` labelled decisions per seat and hand), with 95 % CIs over
    decisions.  On labels the head was not fitted on this is an unbiased estimate of what departing gains."""
    out = []
    for tau in taus:
        col = choose(pred, ncand, float(tau))
        got = np.where(col > 0, np.asarray(gain)[np.arange(len(col)), np.maximum(col - 1, 0)], 0.0)
        ci = 1.96 * got.std(ddof=1) / np.sqrt(len(got)) if len(got) > 1 else float("nan")
        out.append({"tau": float(tau), "departs": float((col > 0).mean()), "gain_per_decision": float(got.mean()),
                    "ci95": float(ci), "gain_per_seat_hand": float(got.mean() * per_seat_hand),
                    "ci95_per_seat_hand": float(ci * per_seat_hand)})
    return out


def label_gains(labels: dict, variant: str, options: Any = None, batch: int = 4096,
                features: str = FEATURES, advisor: str = ADVISOR) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x [N, K - 1, width], gain [N, K - 1], valid [N, K - 1])`` of :func:`agents.training.distill.label_states`
    labels (made with ``candidates = CANDIDATES``): the head's inputs (the feature set ``features``, the advisor of
    the advice set ``advisor`` reading the labelled shortlists) for every labelled alternative, its paired gain over
    the choice, and which columns hold an alternative."""
    cand, ncand = np.asarray(labels["cand"]), np.asarray(labels["ncand"])
    if cand.shape[1] != CANDIDATES:
        raise ValueError(f"departure labels: {cand.shape[1]} candidates per decision, the head reads {CANDIDATES}")
    feats = CandidateFeatures(variant, options, features, advisor)
    x = np.concatenate([feats.pairwise(labels["obs"][i : i + batch], labels["mask"][i : i + batch],
                                       cand[i : i + batch], ncand[i : i + batch]) for i in range(0, len(cand), batch)])
    valid = np.arange(1, CANDIDATES)[None, :] < ncand[:, None]
    return x, np.asarray(labels["gain"])[:, 1:], valid


def file_gains(label_files, variant: str, options: Any = None, features: str = FEATURES,
               advisor: str = ADVISOR) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray]:
    """``(labels, x, gain, valid)``: :func:`label_gains` of the label files joined, built one file at a time, and the
    joined labels **without** their observation planes (the head reads only its features): the memory of N decisions
    is their features, about 0.4 KB a decision, not the planes' 13.6 KB, so a million labels fit in a few GB.  The
    same arrays as :func:`label_gains` of :func:`agents.training.distill.concat_labels` of the files (the features
    are computed row by row)."""
    from agents.training.distill import concat_labels, load_labels

    parts, xs, gains, valids = [], [], [], []
    for f in label_files:
        part = load_labels(f)
        x, gain, valid = label_gains(part, variant, options, features=features, advisor=advisor)
        del part["obs"]
        parts.append(part)
        xs.append(x)
        gains.append(gain)
        valids.append(valid)
    if not parts:
        raise ValueError("file_gains: no label files given")
    return concat_labels(parts), np.concatenate(xs), np.concatenate(gains), np.concatenate(valids)


TAUS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0)
"""Thresholds the stage reports held-out gains for."""
WIN_CHUNK = 12_500
"""Hands per chunk of :func:`win_labels` (chunk ``i`` plays walls 0, 1, … of seed ``seed + i``)."""


def win_labels(variant: str, options: Any = None, *, decisions: int, seed: int, advisor: str = ADVISOR,
               chunk: int = WIN_CHUNK, log: Callable[[str], None] | None = None) -> dict:
    """Labels of a ``win`` head (:func:`agents.players.departures.win_shortlist`), in the format of
    :func:`agents.training.distill.label_states` (``se`` 0: one sample each): chunks of ``chunk`` hands of
    :func:`agents.training.rollouts.counterfactual_pairs` (departure ``win``, branch probability 1, the learner seat
    rotating), the advisor of the advice set ``advisor`` as the teacher, until ``decisions`` are labelled (the first
    ``decisions`` kept).  Each is the learner's first decision of its hand where a win is legal; its gain is the
    learner's money after the other side of the win minus after the advisor's move, both played on by the advisor
    from the **true** hidden state (unbiased: no world sampler, and the continuation is the advisor's own, 七星 wait
    included).  ``meta["seat_hands"]`` counts the learner seat-hands played."""
    from agents.players.advice import FEATURE_SETS as ADVICE_SETS, advisor_keywords
    from agents.players.heuristic import heuristic_player
    from agents.training.distill import LABEL_FORMAT, decision_kinds
    from agents.training.rollouts import counterfactual_pairs

    if int(decisions) < 1 or int(chunk) < 1:
        raise ValueError(f"win labels: need at least 1 decision and 1 hand per chunk, got {decisions} and {chunk}")
    cpu0 = time.process_time()
    teacher = heuristic_player(ADVICE_SETS[advisor], variant, options, **advisor_keywords(advisor, variant, options))
    parts, count, hands, i = [], 0, 0, 0
    while count < decisions:
        d = counterfactual_pairs(variant, teacher.rules.options, teacher, int(chunk), seed=int(seed) + i,
                                 branch_prob=1.0, departures=("win",), keep_obs=True)
        parts.append(d)
        count += len(d["advantage"])
        hands += int(chunk)
        i += 1
        if log:
            log(f"[departure labels] win chunk {i}: {len(d['advantage']):,} decisions, "
                f"{time.process_time() - cpu0:.0f} CPU s")
    n = int(decisions)
    obs = np.concatenate([p["obs"] for p in parts])[:n].astype(np.float32)
    mask = np.concatenate([p["mask"] for p in parts])[:n].astype(bool)
    cand = np.full((n, CANDIDATES), -1, np.int64)
    cand[:, 0] = np.concatenate([p["advice"] for p in parts])[:n]
    cand[:, 1] = np.concatenate([p["alt"] for p in parts])[:n]
    ncand = np.full(n, 2, np.int64)
    gain = np.zeros((n, CANDIDATES), np.float32)
    gain[:, 1] = np.concatenate([p["advantage"] for p in parts])[:n]
    zeros = np.zeros((n, CANDIDATES), np.float32)
    return {"obs": obs, "mask": mask, "cand": cand, "ncand": ncand, "value": zeros.copy(), "gain": gain,
            "se": zeros.copy(), "kind": decision_kinds(cand, ncand),
            "wall_left": np.concatenate([p["feat_wall_left"] for p in parts])[:n].astype(np.int16),
            "valt": np.zeros(n, np.int64), "vgain": np.zeros(n, np.float32), "vse": np.zeros(n, np.float32),
            "meta": {"format": LABEL_FORMAT, "variant": teacher.variant, "source": "true-state rollouts (win)",
                     "advisor": advisor, "decisions": n, "hands": hands, "seat_hands": hands, "steps": 0,
                     "tables": 0, "label_prob": 1.0, "worlds": 1, "candidates": CANDIDATES, "seed": int(seed),
                     "verify_worlds": 0, "skipped": 0, "screen_z": 0.0, "kinds": None, "scope": "win",
                     "policy": None, "rollout_player": None, "cpu_seconds": round(time.process_time() - cpu0, 1)}}


def run_stage(variant: str, options: Any = None, *, decisions: int = 0, label_files=(), seed: int = 3000,
              tables: int = 64, label_prob: float = 0.25, worlds: int = 32, holdout: float = 0.1,
              tau: float = DEFAULTS["tau"], members: int = DEFAULTS["members"], hidden: int = DEFAULTS["hidden"],
              epochs: int = DEFAULTS["epochs"], fit_seed: int = 0, folder: Path | None = None, policy=None,
              log: Callable[[str], None] | None = None, features: str = FEATURES,
              scope: str = "all", label_scope: str = "all", advisor: str = ADVISOR,
              world_source: str | None = "sampled") -> tuple[dict, dict]:
    """Label ``decisions`` decisions (:func:`agents.training.distill.chunked_labels`: chunks of 5,000, chunk ``i`` with seed
    ``seed + i``; saved to ``folder/departure_labels.npz``; ``policy``, an agent or None, plays the tables: expert
    iteration, :mod:`agents.training.exit`) or read ``label_files``; fit the head on all but the last
    ``holdout`` share of them and report, on that share, what departing at each of :data:`TAUS` gains.  The head
    reads the feature set ``features`` and is fitted on, and departs at, the alternatives of its ``scope``
    (:func:`agents.players.departures.in_scope`); ``label_scope`` picks the decisions labelled
    (:func:`agents.training.distill.label_states`'s ``scope``: ``ready`` labels only those a ``ready`` head learns from).
    ``advisor`` (:data:`agents.players.departures.ADVISORS`) is the advice set whose advisor's shortlist the head
    re-ranks.  ``world_source`` (:data:`agents.training.distill.WORLD_SOURCES`) values the labelled candidates in
    sampled worlds (the default) or hands-true worlds (the real hands, the live wall reshuffled: unbiased labels);
    the head's payload records a non-default source in its ``meta``; label files valued otherwise are refused
    (``world_source`` None: the files' own source).  A ``win`` head is labelled by :func:`win_labels` (``decisions`` of them, seed ``seed``; true-state
    rollouts of that advisor).  The other labels are the compiled player's (``heuristic-flush``, which has no 七星 wait) whichever it is: it
    plays the tables and the rollouts, so a ``heuristic-advice-v3`` head in Gejiu learns gains under v2's
    continuation; v3's shortlist differs from v2's only where a win is legal, where no head departs.
    Returns ``(checkpoint part, report)``."""
    from agents.training.distill import chunked_labels, save_labels

    cpu0 = time.process_time()
    save_to = None if folder is None else Path(folder) / "departure_labels.npz"
    if world_source is None and not label_files:
        world_source = "sampled"
    if scope == "win" and world_source not in ("sampled", None):
        raise ValueError(f"world_source: {world_source!r} is for sampled-world labels; a win head's labels are "
                         "true-state rollouts already")
    if scope == "win" and not label_files:  # true-state rollouts at every win decision (win_labels)
        labels = win_labels(variant, options, decisions=decisions, seed=seed, advisor=advisor, log=log)
        if save_to is not None:
            save_labels(save_to, labels)
    elif label_files:  # one file at a time, the planes dropped once the features are built (file_gains)
        labels, x, gain, valid = file_gains(label_files, variant, options, features=features, advisor=advisor)
        got = labels["meta"].get("world_source", "sampled")
        if world_source is not None and got != world_source:
            raise ValueError(f"departure labels: the files were valued in {got} worlds, not {world_source}")
    else:
        labels = chunked_labels(variant, options, decisions=decisions, seed=seed,
                                tables=tables, label_prob=label_prob, worlds=worlds, candidates=CANDIDATES,
                                verify_worlds=0, policy=policy, scope=label_scope, save_to=save_to,
                                name="departure labels", log=log, world_source=world_source)
    label_cpu = time.process_time() - cpu0
    meta = labels["meta"]
    n = len(labels["cand"])
    seat_hands = meta.get("seat_hands") or float(meta["label_prob"]) * n_players(variant) * max(int(meta["hands"]), 1)
    per_seat_hand = n / seat_hands
    if not label_files:
        x, gain, valid = label_gains(labels, variant, options, features=features, advisor=advisor)
    at_win = np.asarray(labels["mask"])[:, A.WIN, None]  # a win head departs only there, the others never
    valid = valid & in_scope(x, features, scope) & (at_win if scope == "win" else ~at_win)
    cut = n - int(round(holdout * n)) if holdout > 0 else n
    if cut < 2:
        raise ValueError(f"departure stage: {n} labelled decisions leave nothing to fit after a {holdout} holdout")
    head = fit_head(x[:cut], gain[:cut], valid[:cut], members=members, hidden=hidden, epochs=epochs, seed=fit_seed, log=log)
    report = {"labels": meta, "decisions": n, "fitted": cut, "held_out": n - cut, "label_cpu_seconds": round(label_cpu, 1),
              "labelled_decisions_per_seat_hand": round(per_seat_hand, 3), "tau": float(tau),
              "settings": {"members": members, "hidden": hidden, "epochs": epochs, "fit_seed": fit_seed, "holdout": holdout},
              "features": features, "scope": scope, "advisor": advisor}
    if cut < n:
        pred = np.where(valid[cut:], predict(head, x[cut:]), -np.inf)
        report["held_out_gains"] = realized_gains(pred, gain[cut:], labels["ncand"][cut:], TAUS, per_seat_hand)
        if log:
            for r in report["held_out_gains"]:
                log(f"[departures] held out, tau {r['tau']:.2f}: departs {100 * r['departs']:.2f} %, gain "
                    f"{r['gain_per_decision']:+.4f} ± {r['ci95']:.4f} per decision, {r['gain_per_seat_hand']:+.3f} ± "
                    f"{r['ci95_per_seat_hand']:.3f} per seat-hand")
    report["cpu_seconds"] = round(time.process_time() - cpu0, 1)
    report["world_source"] = labels["meta"].get("world_source", "sampled")
    head_meta = {"seed": seed, **report["settings"]}
    if report["world_source"] != "sampled":  # (a sampled head's payload is as it always was)
        head_meta["world_source"] = report["world_source"]
    return (head_payload(head, tau=tau, variant=variant, options=options, meta=head_meta,
                         features=features, scope=scope, advisor=advisor), report)


def departure_stage(args: Any, rules, folder: Path) -> dict:
    """The departure head (:func:`run_stage` with the ``departure_*`` arguments); writes
    ``departures.json`` (and ``departure_labels.npz`` when it labels) in the run folder; returns the head's
    checkpoint entry."""
    from agents.tournament.arena import json_text

    policy = None
    if args.departure_policy:  # expert iteration (agents.training.exit): that checkpoint's player plays the tables
        from agents.players.policy import PolicyAgent

        policy = PolicyAgent(args.departure_policy, rules.variant, rules.options)
    part, report = run_stage(
        rules.variant, rules.options, decisions=args.departure_decisions, label_files=args.departure_labels,
        seed=args.departure_seed, worlds=args.departure_worlds, holdout=args.departure_holdout, tau=args.departure_tau,
        members=args.departure_members, hidden=args.departure_hidden, epochs=args.departure_epochs, fit_seed=args.seed,
        folder=folder, policy=policy, log=lambda m: print(m, flush=True), features=args.departure_features,
        scope=args.departure_scope, label_prob=args.departure_label_prob, label_scope=args.departure_label_scope,
        advisor=args.advice_features, world_source=args.departure_world_source)
    if args.departure_merge:  # averaged with another checkpoint's head (theirs first), at departure_tau
        from agents.players.policy import load_checkpoint

        other = load_checkpoint(args.departure_merge).get("departures")
        if other is None:
            raise ValueError(f"--departure_merge: {args.departure_merge} has no departure head")
        part = merge_heads([other, part], tau=args.departure_tau)
        report["merged_with"] = {"checkpoint": str(args.departure_merge), "members": int(part["arch"]["members"])}
    (folder / "departures.json").write_text(json_text(report), encoding="utf-8")
    return part
