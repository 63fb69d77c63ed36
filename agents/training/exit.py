"""Expert iteration for the departure head: label the states an improved player reaches, fit a new head on them.

A round of expert iteration (ExIt) here has three steps:

1. **States of the improved player.**  The tables are played in every seat by a policy checkpoint (e.g.
   ``kawuxing3-default.pt``, the advised network with its departure head, or a network-only clone), not by
   ``heuristic-flush``: :func:`agents.training.distill.label_states` with ``policy=``.  A decision is labelled with
   probability ``label_prob`` (the same rule as the departure stage of ``train.py``).
2. **The expert's values.**  Each candidate of ``heuristic-flush``'s shortlist (:data:`CANDIDATES`, its own choice
   first; the policy's move is one of them wherever the policy departs through a head) is played in the same
   ``worlds`` sampled worlds and rolled out to the end of the hand by the compiled player; the paired mean gain of
   each alternative over the choice is the label.  The policy's own column is kept (``played``).
   Round 2 rolls out with the improved player itself (``--rollout_policy CKPT``: its departure head compiled into
   the numba player, :class:`agents.players.fasthead.FastHeadPlayer`), so the labels value a departure followed by
   the improved player's play; ``--compiled_states`` has that compiled player play the tables as well.
   ``--rollout_network`` rolls out with the checkpoint's network itself (:meth:`PolicyAgent.rollout
   <agents.players.policy.PolicyAgent.rollout>`, about 9 times the CPU), for a network-only policy stronger than any
   compiled player.
3. **The apprentice.**  A departure head (:func:`agents.training.departures.fit_head`, the features and format of
   :mod:`agents.players.departures`) is fitted to those labels and put on a base checkpoint in place of its head.

The labels are saved chunk by chunk (chunk ``i`` of ``chunk`` decisions with seed ``seed + i``, one ``.npz`` per
chunk, :func:`agents.training.distill.save_labels`), so a run can stop at any time and resume; the same seed gives
the same labels.  ``train.py --departure_policy CKPT`` (``configs/train/exit.toml``) runs steps 1–3 as its departure
stage; this module is the standalone, resumable form:

```bash
python -m agents.training.exit label --policy agents/checkpoints/kawuxing3-default.pt --seed 5000 --chunks 60 --out DIR
python -m agents.training.exit label --policy agents/checkpoints/kawuxing3-default.pt --compiled_states \
    --rollout_policy agents/checkpoints/kawuxing3-default.pt --seed 7000 --chunks 25 --out DIR2   # round 2
python -m agents.training.exit fit --labels DIR/labels-*.npz --base agents/checkpoints/kawuxing3-default.pt --out NEW.pt
python -m agents.training.exit merge --checkpoints agents/checkpoints/kawuxing3-default.pt NEW.pt --out BOTH.pt
python -m agents.training.exit compare --labels DIR/labels-*.npz --checkpoints OLD.pt NEW.pt BOTH.pt
```

``merge`` (:func:`merge_heads`) averages heads fitted on different label sets (round 0's and round 1's) into one
head of the same format; ``compare`` (:func:`held_out`) measures heads paired on the held-out tenth of labels.

docs/experiments/expert-iteration.md documents the rounds.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from agents.players.departures import CANDIDATES, DEFAULTS
from agents.training.departures import merge_heads  # noqa: F401  (exit's ``merge``; it lives with the stage)
from agents.training.distill import KINDS

CHUNK = 5000
"""Labelled decisions per chunk file (as the departure stage's chunks)."""


def make_policy(policy, variant: str, options: Any = None, device: str = "cpu"):
    """A :class:`agents.players.policy.PolicyAgent` (greedy, its network on ``device``) for a checkpoint path; an
    agent object is returned as it is."""
    if policy is None or hasattr(policy, "act"):
        return policy
    from agents.players.policy import PolicyAgent

    return PolicyAgent(str(policy), variant, options, device=device)


def chunk_path(folder, seed: int) -> Path:
    """The file of the chunk labelled with ``seed``."""
    return Path(folder) / f"labels-{int(seed)}.npz"


def label_chunks(policy, variant: str = "kawuxing3", options: Any = None, *, seed: int, chunks: int, folder,
                 chunk: int = CHUNK, tables: int = 64, label_prob: float = 0.25, worlds: int = 32,
                 rollout_policy=None, compiled_states: bool = False, world_source: str = "sampled",
                 policy_candidates: int = 0, rollout_network: bool = False, device: str = "cpu",
                 kinds: list[str] | None = None, log: Callable[[str], None] | None = None) -> list[Path]:
    """Label ``chunks`` chunks of ``chunk`` decisions on the states ``policy`` (a checkpoint path or agent) reaches in
    every seat, chunk ``i`` with seed ``seed + i``, each saved to :func:`chunk_path`; a chunk whose file exists is
    kept as it is (resume).  ``rollout_policy``: a checkpoint whose compiled improved player
    (:class:`agents.players.fasthead.FastHeadPlayer`) plays the rollouts after each candidate (round 2), or such a
    player; None: the compiled ``heuristic-flush`` player.  ``compiled_states``: the tables are played by the
    compiled improved player of ``policy`` (a checkpoint path) instead of its :class:`PolicyAgent`.  ``policy`` None:
    the compiled ``heuristic-flush`` player plays the tables (the states of ``train.py --config long``'s labels).
    ``world_source``: the candidates are valued in ``sampled`` or ``hands_true`` worlds
    (:func:`agents.training.distill.label_states`).  ``policy_candidates``: that many of the policy's own most likely
    moves outside the shortlist are valued too (a network policy only; ``label_states``).  ``rollout_network``: the
    ``rollout_policy`` checkpoint's network plays the rollouts (:meth:`agents.players.policy.PolicyAgent.rollout`),
    not its compiled player.  ``device``: where the networks of checkpoint paths run (``auto``, ``cpu``, ``cuda``;
    a lent GPU takes the network rollouts' forward passes, their cost; labels made on another device agree to float
    rounding, not bit for bit).  ``kinds``: label only decisions of these kinds
    (:data:`agents.training.distill.KINDS`, e.g. ``["kong", "claim_kong"]``; None or empty: every kind), so the
    rollouts go where a label is worth most.  Returns the chunk files."""
    from agents.training.distill import label_states, save_labels

    if int(chunks) < 1 or int(chunk) < 1:
        raise ValueError(f"chunks and chunk: need at least 1 each, got {chunks} and {chunk}")
    if compiled_states and policy is None:
        raise ValueError("compiled_states: give the policy whose compiled player plays the tables (a checkpoint path)")
    if rollout_network and rollout_policy is None:
        raise ValueError("rollout_network: give the checkpoint whose network plays the rollouts (rollout_policy)")
    if compiled_states or (rollout_policy is not None and not hasattr(rollout_policy, "rollout") and not rollout_network):
        from agents.players.fasthead import FastHeadPlayer
    if compiled_states:
        if hasattr(policy, "act") and not isinstance(policy, FastHeadPlayer):
            raise ValueError("compiled_states: give the policy as a checkpoint path (its compiled player plays)")
        agent = policy if hasattr(policy, "act") else FastHeadPlayer(str(policy), variant, options)
    else:
        agent = make_policy(policy, variant, options, device)
    roller = rollout_policy
    if rollout_network:
        roller = make_policy(rollout_policy, variant, options, device)
    elif rollout_policy is not None and not hasattr(rollout_policy, "rollout"):
        roller = FastHeadPlayer(str(rollout_policy), variant, options)
    paths = []
    for i in range(int(chunks)):
        path = chunk_path(folder, seed + i)
        if not path.is_file():
            labels = label_states(variant, options, decisions=int(chunk), tables=tables, label_prob=label_prob,
                                  worlds=worlds, candidates=CANDIDATES, seed=seed + i, verify_worlds=0, policy=agent,
                                  rollout_player=roller, log=log, world_source=world_source,
                                  policy_candidates=policy_candidates, kinds=list(kinds) if kinds else None)
            save_labels(path, labels)
            if log:
                meta = labels["meta"]
                log(f"[exit] {path.name}: {meta['decisions']:,} decisions, {meta['hands']:,} hands, "
                    f"{meta['cpu_seconds']:.0f} CPU s; {played_summary(labels)}")
        paths.append(path)
    return paths


def played_gain(labels: dict) -> tuple[float, float, float]:
    """``(share, gain, ci95)``: the share of labelled decisions where the tables' player played an alternative of the
    shortlist (column > 0), and the labelled gain per decision of its moves over the shortlist's choice with a 95 %
    CI (0 where it played the choice; decisions where it played outside the shortlist count 0)."""
    played = np.asarray(labels["played"], np.int64)
    gain = np.asarray(labels["gain"], np.float64)
    col = np.maximum(played, 0)
    got = gain[np.arange(len(col)), col]
    ci = 1.96 * got.std(ddof=1) / np.sqrt(len(got)) if len(got) > 1 else float("nan")
    return float((played > 0).mean()), float(got.mean()), float(ci)


def played_summary(labels: dict) -> str:
    """One line: how often the tables' player departs from the shortlist's choice and what its moves gain."""
    if "played" not in labels:
        return "no played column"
    share, gain, ci = played_gain(labels)
    outside = float((np.asarray(labels["played"]) < 0).mean())
    return (f"its player departs at {100 * share:.2f} % ({100 * outside:.2f} % outside the shortlist), labelled gain "
            f"{gain:+.4f} ± {ci:.4f} per decision")


def fit(label_files, base, *, variant: str | None = None, holdout: float = 0.1, tau: float = DEFAULTS["tau"],
        members: int = DEFAULTS["members"], hidden: int = DEFAULTS["hidden"], epochs: int = DEFAULTS["epochs"],
        fit_seed: int = 0, log: Callable[[str], None] | None = None) -> tuple[dict, dict]:
    """Fit a departure head on ``label_files`` (:func:`agents.training.departures.run_stage`: the last ``holdout``
    share held out and reported per threshold) and put it on the checkpoint ``base`` (a path) in place of its head.
    Returns ``(checkpoint payload, report)``; the payload is stamped (checksum, fingerprints)."""
    from agents.players.policy import load_checkpoint, stamp
    from agents.players.base import resolve_rules
    from agents.training.departures import run_stage

    if not label_files:
        raise ValueError("label_files: none given")
    ck = load_checkpoint(base)
    if ck.get("features") != "heuristic-advice-v2":
        raise ValueError(f"{base}: its network does not play heuristic-flush's advice (features "
                         f"{ck.get('features')!r}), which a departure head departs from")
    rules = resolve_rules(variant or ck["variant"], ck["options"])
    part, report = run_stage(rules.variant, rules.options, label_files=[str(f) for f in label_files], holdout=holdout,
                             tau=tau, members=members, hidden=hidden, epochs=epochs, fit_seed=fit_seed, log=log,
                             world_source=None)
    report["label_files"] = [str(f) for f in label_files]
    report["base"] = str(base)
    part["meta"] = {**part.get("meta", {}), "exit": {"label_seeds": sorted({int(Path(f).stem.split("-")[-1])
                                                                           for f in label_files
                                                                           if Path(f).stem.split("-")[-1].isdigit()}),
                                                     "policy": report["labels"].get("policy")}}
    ck = dict(ck)
    ck["departures"] = part
    ck["meta"] = {**ck.get("meta", {}), "exit_base": Path(str(base)).name,
                  "exit_decisions": int(report["decisions"])}
    return stamp(ck), report


def held_out(label_files, heads: dict, *, variant: str = "kawuxing3", options: Any = None,
             holdout: float = 0.1) -> dict:
    """Per head (name -> ``"departures"`` entry), :func:`agents.training.departures.realized_gains` on the last
    ``holdout`` share of the labels of ``label_files`` (the share a :func:`fit` on them holds out): the same decisions
    for every head, so the heads are compared paired.  Returns ``{name: [per-threshold rows]}``, under
    ``"decisions"`` the number of held-out decisions, and under ``"paired"`` each later head's gain per seat-hand over
    the first's at their own thresholds (the difference per decision, with its 95 % CI over decisions)."""
    from agents.players.departures import choose, make_head, predict
    from agents.training.departures import TAUS, file_gains, realized_gains
    from mjenv.rules.options import n_players

    labels, x, gain, _ = file_gains(label_files, variant, options)  # one file at a time (no planes kept)
    n = len(labels["cand"])
    cut = n - int(round(holdout * n))
    meta = labels["meta"]
    per_seat_hand = n / (float(meta["label_prob"]) * n_players(variant) * max(int(meta["hands"]), 1))
    tail = {k: v[cut:] for k, v in labels.items() if k != "meta"}
    x, gain = x[cut:], gain[cut:]
    out: dict[str, Any] = {"decisions": n - cut}
    rows = np.arange(len(gain))
    first = None
    for name, part in heads.items():
        h = make_head(int(part["arch"]["members"]), int(part["arch"]["hidden"]))
        h.load_state_dict(part["state"])
        h.eval()
        pred = predict(h, x)
        out[name] = realized_gains(pred, gain, tail["ncand"], TAUS, per_seat_hand)
        col = choose(pred, tail["ncand"], float(part["tau"]))  # at the head's own threshold
        got = np.where(col > 0, gain[rows, np.maximum(col - 1, 0)], 0.0)
        if first is None:
            first = (name, got)
        else:
            d = (got - first[1]) * per_seat_hand
            out.setdefault("paired", {})[name] = {
                "against": first[0], "gain_per_seat_hand": float(d.mean()),
                "ci95_per_seat_hand": float(1.96 * d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else float("nan")}
    return out


def main(argv=None) -> int:
    """Command line: ``label`` (resumable chunk files), ``fit`` (a head on them, on a base checkpoint), ``merge`` and
    ``compare``."""
    ap = argparse.ArgumentParser(prog="python -m agents.training.exit", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    lab = sub.add_parser("label", help="label the states a policy reaches (chunk files)")
    lab.add_argument("--policy", default=None,
                     help="checkpoint whose player plays every seat (default: the compiled heuristic-flush player, "
                          "the states of train.py --config long)")
    lab.add_argument("--variant", default="kawuxing3")
    lab.add_argument("--seed", type=int, required=True, help="chunk i plays the walls of seed SEED + i")
    lab.add_argument("--chunks", type=int, required=True)
    lab.add_argument("--chunk", type=int, default=CHUNK, help="decisions per chunk")
    lab.add_argument("--worlds", type=int, default=32)
    lab.add_argument("--label_prob", type=float, default=0.25)
    lab.add_argument("--out", required=True, help="folder of the chunk files")
    lab.add_argument("--rollout_policy", default=None,
                     help="checkpoint whose compiled improved player (agents.players.fasthead) plays the rollouts "
                          "(round 2); default: the compiled heuristic-flush player")
    lab.add_argument("--compiled_states", action="store_true",
                     help="the tables are played by the policy's compiled improved player, not its PolicyAgent")
    lab.add_argument("--world_source", default="sampled", choices=("sampled", "hands_true"),
                     help="value the candidates in sampled worlds or in hands-true worlds (the real hands, the live "
                          "wall reshuffled)")
    lab.add_argument("--policy_candidates", type=int, default=0,
                     help="also value this many of the policy's own most likely moves outside the compiled player's "
                          "shortlist (a network policy)")
    lab.add_argument("--rollout_network", action="store_true",
                     help="the rollout_policy checkpoint's network plays the rollouts, not its compiled player "
                          "(about 9 times the CPU)")
    lab.add_argument("--kinds", nargs="+", default=None, choices=KINDS, metavar="KIND",
                     help=f"label only decisions of these kinds ({', '.join(KINDS)}; default every kind)")
    lab.add_argument("--threads", type=int, default=1, help="torch threads")
    lab.add_argument("--device", default="cpu",
                     help="where the networks run: auto (CUDA when torch sees it), cpu, cuda, cuda:N (default cpu)")
    f = sub.add_parser("fit", help="fit a departure head on label files and put it on a base checkpoint")
    f.add_argument("--labels", nargs="+", required=True)
    f.add_argument("--base", required=True, help="checkpoint whose head is replaced (an advised network)")
    f.add_argument("--out", required=True)
    f.add_argument("--report", default=None, help="JSON file for the fit's report (default: OUT with .json)")
    f.add_argument("--holdout", type=float, default=0.1)
    f.add_argument("--tau", type=float, default=DEFAULTS["tau"])
    f.add_argument("--members", type=int, default=DEFAULTS["members"])
    f.add_argument("--hidden", type=int, default=DEFAULTS["hidden"])
    f.add_argument("--epochs", type=int, default=DEFAULTS["epochs"])
    f.add_argument("--fit_seed", type=int, default=0)
    f.add_argument("--threads", type=int, default=1, help="torch threads")
    m = sub.add_parser("merge", help="one head averaging the heads of several checkpoints, on the first's network")
    m.add_argument("--checkpoints", nargs="+", required=True)
    m.add_argument("--tau", type=float, default=None)
    m.add_argument("--out", required=True)
    m.add_argument("--threads", type=int, default=1, help="torch threads")
    c = sub.add_parser("compare", help="the heads of checkpoints on the held-out share of label files, paired")
    c.add_argument("--labels", nargs="+", required=True)
    c.add_argument("--checkpoints", nargs="+", required=True)
    c.add_argument("--holdout", type=float, default=0.1)
    c.add_argument("--threads", type=int, default=1, help="torch threads")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    log = lambda m: print(m, flush=True)  # noqa: E731
    cpu0 = time.process_time()
    if args.cmd == "label":
        label_chunks(args.policy, args.variant, seed=args.seed, chunks=args.chunks, folder=args.out, chunk=args.chunk,
                     worlds=args.worlds, label_prob=args.label_prob, rollout_policy=args.rollout_policy,
                     compiled_states=args.compiled_states, world_source=args.world_source,
                     policy_candidates=args.policy_candidates, rollout_network=args.rollout_network,
                     device=args.device, kinds=args.kinds, log=log)
        log(f"[exit] labelled in {time.process_time() - cpu0:.0f} CPU s")
        return 0
    from agents.players.policy import load_checkpoint, save_checkpoint, stamp
    from agents.tournament.arena import json_text

    if args.cmd == "merge":
        cks = [load_checkpoint(p) for p in args.checkpoints]
        if any(ck.get("departures") is None for ck in cks):
            raise SystemExit("merge: every checkpoint needs a departure head")
        ck = dict(cks[0])
        ck["departures"] = merge_heads([c["departures"] for c in cks], tau=args.tau)
        ck["meta"] = {**ck.get("meta", {}), "exit_merged": [Path(p).name for p in args.checkpoints]}
        save_checkpoint(args.out, stamp(ck))
        log(f"[exit] {args.out}: {ck['checksum'][:19]}…, {ck['departures']['arch']['members']} members")
        return 0
    if args.cmd == "compare":
        heads = {Path(p).name: load_checkpoint(p)["departures"] for p in args.checkpoints}
        table = held_out(args.labels, heads, holdout=args.holdout)
        log(f"[exit] {table['decisions']:,} held-out decisions (the last {args.holdout:.0%} of the labels)")
        for name in heads:
            for r in table[name]:
                log(f"  {name:36s} tau {r['tau']:.2f}: departs {100 * r['departs']:5.2f} %, "
                    f"{r['gain_per_seat_hand']:+.3f} ± {r['ci95_per_seat_hand']:.3f} per seat-hand")
        for name, r in table.get("paired", {}).items():
            log(f"  paired, at their own tau: {name} − {r['against']} = {r['gain_per_seat_hand']:+.4f} ± "
                f"{r['ci95_per_seat_hand']:.4f} per seat-hand")
        return 0
    ck, report = fit(args.labels, args.base, holdout=args.holdout, tau=args.tau, members=args.members,
                     hidden=args.hidden, epochs=args.epochs, fit_seed=args.fit_seed, log=log)
    save_checkpoint(args.out, ck)
    report["checksum"] = ck["checksum"]
    report_path = Path(args.report) if args.report else Path(args.out).with_suffix(".json")
    report_path.write_text(json_text(report), encoding="utf-8")
    log(f"[exit] {args.out}: {ck['checksum'][:19]}…, {report['decisions']:,} decisions, "
        f"{time.process_time() - cpu0:.0f} CPU s; report {report_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
