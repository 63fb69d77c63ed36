"""The departure stage of ``train.py``: fit a departure head to search labels and report what it gains.

The head, its features and its checkpoint entry are :mod:`agents.players.departures` (what a policy plays with);
this module owns what only training needs: :func:`fit_head` (least squares over an ensemble), :func:`label_gains`
(the head's inputs and targets from :func:`agents.training.distill.label_states` labels), :func:`realized_gains`
(held-out gains per threshold) and :func:`run_stage`; :func:`departure_stage` is that stage with ``train.py``'s ``departure_*`` arguments
(``train.py --departure_decisions N``, the ``long`` config; ``departures.json`` in the run folder;
``--departure_policy CKPT`` labels the states that checkpoint's player reaches, the ``exit`` config).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from agents.players.departures import (CANDIDATES, DEFAULTS, FEATURES, CandidateFeatures, _torch, choose, head_payload,
                                       in_scope, make_head, predict)
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
                features: str = FEATURES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x [N, K - 1, width], gain [N, K - 1], valid [N, K - 1])`` of :func:`agents.training.distill.label_states`
    labels (made with ``candidates = CANDIDATES``): the head's inputs (the feature set ``features``) for every
    labelled alternative, its paired gain over the choice, and which columns hold an alternative."""
    cand, ncand = np.asarray(labels["cand"]), np.asarray(labels["ncand"])
    if cand.shape[1] != CANDIDATES:
        raise ValueError(f"departure labels: {cand.shape[1]} candidates per decision, the head reads {CANDIDATES}")
    feats = CandidateFeatures(variant, options, features)
    x = np.concatenate([feats.pairwise(labels["obs"][i : i + batch], labels["mask"][i : i + batch],
                                       cand[i : i + batch], ncand[i : i + batch]) for i in range(0, len(cand), batch)])
    valid = np.arange(1, CANDIDATES)[None, :] < ncand[:, None]
    return x, np.asarray(labels["gain"])[:, 1:], valid


TAUS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
"""Thresholds the stage reports held-out gains for."""


def run_stage(variant: str, options: Any = None, *, decisions: int = 0, label_files=(), seed: int = 3000,
              tables: int = 64, label_prob: float = 0.25, worlds: int = 32, holdout: float = 0.1,
              tau: float = DEFAULTS["tau"], members: int = DEFAULTS["members"], hidden: int = DEFAULTS["hidden"],
              epochs: int = DEFAULTS["epochs"], fit_seed: int = 0, folder: Path | None = None, policy=None,
              log: Callable[[str], None] | None = None, features: str = FEATURES,
              scope: str = "all", label_scope: str = "all") -> tuple[dict, dict]:
    """Label ``decisions`` decisions (:func:`agents.training.distill.chunked_labels`: chunks of 5,000, chunk ``i`` with seed
    ``seed + i``; saved to ``folder/departure_labels.npz``; ``policy``, an agent or None, plays the tables: expert
    iteration, :mod:`agents.training.exit`) or read ``label_files``; fit the head on all but the last
    ``holdout`` share of them and report, on that share, what departing at each of :data:`TAUS` gains.  The head
    reads the feature set ``features`` and is fitted on, and departs at, the alternatives of its ``scope``
    (:func:`agents.players.departures.in_scope`); ``label_scope`` picks the decisions labelled
    (:func:`agents.training.distill.label_states`'s ``scope``: ``ready`` labels only those a ``ready`` head learns from).
    Returns ``(checkpoint part, report)``."""
    from agents.training.distill import chunked_labels

    cpu0 = time.process_time()
    labels = chunked_labels(variant, options, decisions=decisions, label_files=label_files, seed=seed, tables=tables,
                            label_prob=label_prob, worlds=worlds, candidates=CANDIDATES, verify_worlds=0, policy=policy,
                            scope=label_scope,
                            save_to=None if folder is None else Path(folder) / "departure_labels.npz",
                            name="departure labels", log=log)
    label_cpu = time.process_time() - cpu0
    meta = labels["meta"]
    n = len(labels["cand"])
    per_seat_hand = n / (float(meta["label_prob"]) * n_players(variant) * max(int(meta["hands"]), 1))
    x, gain, valid = label_gains(labels, variant, options, features=features)
    valid = valid & in_scope(x, features, scope)
    cut = n - int(round(holdout * n)) if holdout > 0 else n
    if cut < 2:
        raise ValueError(f"departure stage: {n} labelled decisions leave nothing to fit after a {holdout} holdout")
    head = fit_head(x[:cut], gain[:cut], valid[:cut], members=members, hidden=hidden, epochs=epochs, seed=fit_seed, log=log)
    report = {"labels": meta, "decisions": n, "fitted": cut, "held_out": n - cut, "label_cpu_seconds": round(label_cpu, 1),
              "labelled_decisions_per_seat_hand": round(per_seat_hand, 3), "tau": float(tau),
              "settings": {"members": members, "hidden": hidden, "epochs": epochs, "fit_seed": fit_seed, "holdout": holdout},
              "features": features, "scope": scope}
    if cut < n:
        pred = np.where(valid[cut:], predict(head, x[cut:]), -np.inf)
        report["held_out_gains"] = realized_gains(pred, gain[cut:], labels["ncand"][cut:], TAUS, per_seat_hand)
        if log:
            for r in report["held_out_gains"]:
                log(f"[departures] held out, tau {r['tau']:.2f}: departs {100 * r['departs']:.2f} %, gain "
                    f"{r['gain_per_decision']:+.4f} ± {r['ci95']:.4f} per decision, {r['gain_per_seat_hand']:+.3f} ± "
                    f"{r['ci95_per_seat_hand']:.3f} per seat-hand")
    report["cpu_seconds"] = round(time.process_time() - cpu0, 1)
    return (head_payload(head, tau=tau, variant=variant, options=options, meta={"seed": seed, **report["settings"]},
                         features=features, scope=scope), report)


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
        scope=args.departure_scope, label_prob=args.departure_label_prob, label_scope=args.departure_label_scope)
    (folder / "departures.json").write_text(json_text(report), encoding="utf-8")
    return part
