"""Policy improvement of a network-only policy from rollout gains: every candidate's value, not one sampled action's.

This module owns the ``qfit`` stage: a network-only checkpoint (the *base*, e.g. ``kawuxing3-network-dh2.pt``) is
moved toward the candidates that the labels of :func:`agents.training.distill.label_states` value higher.  A label
is a decision the base reached in self-play with, for each candidate of the compiled player's shortlist, the mean
money the seat gained over candidate 0 when the candidate was played and the hand rolled out in ``worlds`` worlds
(``gain``).  With ``world_source="hands_true"`` the worlds hold the table's real hands and only the live wall is
reshuffled, so a gain is an unbiased estimate of the candidate's true value difference under the rollout player, and
averaged over the states the base reaches it is E[gain | observation]: what a network reading the observation can
learn, reading the opponents included.

The loss of a labelled decision is the *all-actions* policy gradient over its candidates plus an anchor:

    loss = - sum_c p(c) * gain_c / scale  +  kl * KL(base || policy)  +  share_kl * KL2(base's in || policy's in)

where ``p`` is the policy's softmax restricted to the decision's candidates, ``scale`` is the spread of the training
gains (recorded in the checkpoint), the first KL runs over every legal action and the second over the two-way split
"a shortlisted move or another": the labels value no move outside the shortlist, so the policy's share of those
moves is held at the base's (a weak ``kl`` alone let it grow by a third on held-out decisions).  The first term is linear in the gains, so their noise (a label's standard
error is about as large as the gains themselves) averages out over decisions instead of biasing the fit; it is the
exact expected policy gradient at the state given the gains, with no action sampled.

Held out: whole label files (other seeds' hands; ``--held`` names them, else the last ``--holdout`` share of
``--labels``).  On them the greedy move of the base and of the fitted policy are
each valued by the labels (the gain of the shortlist column it plays; moves outside the shortlist are counted
apart), and the paired difference is an unbiased estimate of the fit's one-step gain per labelled decision, which
``per_seat_hand`` turns into money per seat-hand with the labels' decision rate.  Torch is imported on use only.

```bash
python -m agents.training.qfit --labels DIR/labels-*.npz --base agents/checkpoints/kawuxing3-network-dh2.pt \
    --out NEW.pt --kl 1.0 --epochs 2
```
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

__all__ = ["QfitArgs", "load_label_set", "fit", "improve", "held_out_values", "compare", "split_files", "run", "qfit_stage", "main"]


@dataclass
class QfitArgs:
    """Settings of a ``qfit`` run (the command line's flags)."""

    labels: list[str] = field(default_factory=list)
    """Label files (:func:`agents.training.distill.save_labels`) of one world source."""
    base: str = ""
    """The network-only checkpoint fitted from and anchored to."""
    out: str = ""
    """Where the fitted checkpoint is written."""
    kl: float = 0.1
    """Weight of KL(base || policy) over the legal actions."""
    share_kl: float = 1.0
    """Weight of the KL between the base's and the policy's probability of a shortlisted move."""
    epochs: float = 2.0
    batch_size: int = 256
    lr: float = 3e-4
    lr_final: float = 0.0
    holdout: float = 0.1
    """Share of the label files (the last ones, by name) held out, unless ``held`` names them."""
    held: list[str] = field(default_factory=list)
    """Held-out label files named explicitly (e.g. hands-true labels to judge a fit on labels of another source)."""
    seed: int = 0
    threads: int = 1
    device: str = "cpu"


def load_label_set(paths, log: Callable[[str], None] = print) -> dict:
    """The label files ``paths`` as one set (:func:`agents.training.distill.concat_labels`; one world source) plus
    ``file int32 [N]``, the index of each decision's file.  Files without observations are refused."""
    from agents.training.distill import concat_labels, load_labels

    parts = []
    for i, p in enumerate(paths):
        d = load_labels(p)
        if "obs" not in d:
            raise ValueError(f"{p}: the labels carry no observations to fit a network on")
        d["file"] = np.full(len(d["cand"]), i, np.int32)
        parts.append(d)
    out = concat_labels(parts)
    out["file"] = np.concatenate([p["file"] for p in parts])
    log(f"[qfit] {len(out['cand']):,} labelled decisions from {len(parts)} files "
        f"({out['meta'].get('world_source', 'sampled')} worlds)")
    return out


def _network(ck: dict):
    """``(trunk, head, derived)`` of a network-only checkpoint (``derived``: its :class:`HandFeatures` or None)."""
    from agents.players.policy import CheckpointError, make_network
    from mjenv.encoding.handfeat import HandFeatures

    if ck.get("network_only") is not True:
        raise CheckpointError("qfit: the base must be a network-only checkpoint (network_only true)")
    trunk, head = make_network(tuple(ck["obs_shape"]), ck["arch"], None)
    trunk.load_state_dict(ck["trunk"])
    head.load_state_dict(ck["head"])
    derived = HandFeatures(ck["variant"], ck["options"]) if ck.get("derived") else None
    return trunk, head, derived


def _inputs(obs: np.ndarray, derived) -> np.ndarray:
    x = derived.extend(obs) if derived is not None else np.asarray(obs, np.float32)
    return x.reshape(len(x), -1)


def policy_logits(trunk, head, derived, obs: np.ndarray, mask: np.ndarray, batch: int = 4096) -> np.ndarray:
    """Masked logits ``float32 [N, A]`` (illegal at -inf) of a network over the v1 observations ``obs``."""
    import torch

    out = np.empty(mask.shape, np.float32)
    device = next(trunk.parameters()).device
    with torch.no_grad():
        for s in range(0, len(obs), batch):
            x = torch.as_tensor(_inputs(obs[s : s + batch], derived)).to(device)
            out[s : s + batch] = head(trunk(x)).float().cpu().numpy()
    out[~mask] = -np.inf
    return out


def held_out_values(logits: np.ndarray, labels: dict) -> dict:
    """The labels' value of each decision's greedy move: ``inside bool [N]`` (the move is one of the shortlist's
    columns), ``gain float64 [N]`` (its column's gain over candidate 0; NaN outside), ``greedy`` (the move) and
    ``share`` (the policy's probability of a shortlisted move)."""
    greedy = logits.argmax(1)
    cand = labels["cand"]
    k = np.arange(cand.shape[1])[None, :] < labels["ncand"][:, None]
    hit = (cand == greedy[:, None]) & k
    inside = hit.any(1)
    col = hit.argmax(1)
    gain = np.where(inside, labels["gain"][np.arange(len(cand)), col].astype(np.float64), np.nan)
    z = logits - logits.max(1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    share = np.where(k, np.take_along_axis(p, np.maximum(cand, 0), 1), 0.0).sum(1)
    return {"inside": inside, "gain": gain, "greedy": greedy, "share": share}


def per_seat_hand(meta: dict, n_seats: int) -> float:
    """Labelled decisions per seat-hand of the labels' self-play, divided by their labelling probability: the factor
    from a mean gain per labelled decision to money per seat-hand."""
    return float(meta["decisions"]) / float(meta["label_prob"]) / max(1, int(meta["hands"]) * n_seats)


def compare(base: dict, new: dict) -> dict:
    """Paired comparison of two policies' greedy values on the same held-out labels (decisions where both moves are
    in the shortlist): mean gain over candidate 0 for each, their difference with a 95 % CI, how often they differ."""
    both = base["inside"] & new["inside"]
    d = new["gain"][both] - base["gain"][both]
    n = int(both.sum())
    ci = 1.96 * d.std(ddof=1) / np.sqrt(n) if n > 1 else float("nan")
    return {"decisions": n, "base": float(base["gain"][both].mean()), "new": float(new["gain"][both].mean()),
            "diff": float(d.mean()), "diff_ci95": float(ci), "changed": float((base["greedy"] != new["greedy"]).mean()),
            "base_outside": float(1 - base["inside"].mean()), "new_outside": float(1 - new["inside"].mean()),
            "base_share": float(base["share"].mean()), "new_share": float(new["share"].mean())}


def fit(trunk, head, derived, train: dict, base_logp: np.ndarray, *, kl: float, share_kl: float, scale: float,
        epochs: float, batch_size: int, lr: float, lr_final: float, seed: int, log: Callable[[str], None] = print,
        every: int = 50_000, held: Callable[[int], None] | None = None) -> dict:
    """Fit ``trunk`` and ``head`` on the labelled decisions ``train`` (the loss of the module docstring; Adam with a
    cosine decay from ``lr`` to ``lr_final`` over ``epochs`` passes, minibatches from one permutation per pass seeded
    by ``seed``); ``base_logp`` are the base's log-probabilities over the legal actions (-inf elsewhere).  Every
    ``every`` samples the running losses are logged and ``held(samples)`` called.  Returns samples, CPU seconds and
    the last losses."""
    import torch

    device = next(trunk.parameters()).device
    params = list(trunk.parameters()) + list(head.parameters())
    opt = torch.optim.Adam(params, lr=lr)
    n = len(train["cand"])
    total = max(1, int(epochs * n))
    rng = np.random.default_rng(seed)
    k = train["cand"].shape[1]
    valid = np.arange(k)[None, :] < train["ncand"][:, None]
    gain = (train["gain"] / scale).astype(np.float32)
    cpu0 = time.process_time()
    seen, pos, perm, next_log = 0, 0, rng.permutation(n), every
    pgs, kls = [], []
    trunk.train()
    head.train()
    while seen < total:
        if pos >= n:
            perm, pos = rng.permutation(n), 0
        idx = np.sort(perm[pos : pos + min(batch_size, total - seen)])
        pos += len(idx)
        frac = seen / total
        for g in opt.param_groups:
            g["lr"] = lr_final + 0.5 * (lr - lr_final) * (1 + np.cos(np.pi * frac))
        x = torch.as_tensor(_inputs(train["obs"][idx], derived)).to(device)
        m = torch.as_tensor(train["mask"][idx]).to(device)
        logits = head(trunk(x)).masked_fill(~m, -1e9)
        logp = torch.log_softmax(logits, 1)
        lb = torch.as_tensor(base_logp[idx]).to(device)
        pb = torch.exp(lb)  # 0 where illegal
        kl_row = (pb * (torch.nan_to_num(lb, neginf=0.0) - logp)).masked_fill(~m, 0.0).sum(1)
        cand = torch.as_tensor(np.maximum(train["cand"][idx], 0)).to(device)
        v = torch.as_tensor(valid[idx]).to(device)
        cl = logits.gather(1, cand).masked_fill(~v, -1e9)
        pc = torch.softmax(cl, 1)
        pg_row = -(pc * torch.as_tensor(gain[idx]).to(device)).sum(1)
        q_in = torch.exp(logp.gather(1, cand)).masked_fill(~v, 0.0).sum(1).clamp(1e-6, 1 - 1e-6)
        b_in = pb.gather(1, cand).masked_fill(~v, 0.0).sum(1).clamp(1e-6, 1 - 1e-6)
        share_row = b_in * torch.log(b_in / q_in) + (1 - b_in) * torch.log((1 - b_in) / (1 - q_in))
        loss = pg_row.mean() + kl * kl_row.mean() + share_kl * share_row.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        pgs.append(pg_row.mean().item())
        kls.append(kl_row.mean().item())
        seen += len(idx)
        if seen >= next_log or seen >= total:
            next_log += every
            log(f"[qfit] {seen:>9,} samples  {time.process_time() - cpu0:6.0f} CPU s  policy term "
                f"{np.mean(pgs[-200:]):+.4f}  KL to base {np.mean(kls[-200:]):.4f}")
            if held is not None:
                trunk.eval()
                head.eval()
                held(seen)
                trunk.train()
                head.train()
    trunk.eval()
    head.eval()
    return {"samples": seen, "fit_cpu_seconds": round(time.process_time() - cpu0, 1),
            "policy_term": float(np.mean(pgs[-200:])), "kl_to_base": float(np.mean(kls[-200:]))}


def improve(trunk, head, derived, variant: str, files, held_files, *, kl: float, share_kl: float, epochs: float,
            batch_size: int, lr: float, lr_final: float, seed: int, log: Callable[[str], None] = print) -> dict:
    """Fit ``trunk`` and ``head`` (a network-only policy of ``variant``; ``derived``: its derived rows or None) in
    place on the label files ``files``, measuring on ``held_files`` before and every half pass; returns the stage's
    report (settings, data, the held-out curve and its last row)."""
    import torch

    cpu0 = time.process_time()
    data = load_label_set(files, log)
    held_data = load_label_set(held_files, log)
    for d in (data, held_data):
        if d["meta"]["variant"] != variant:
            raise ValueError(f"labels of {d['meta']['variant']!r}, the network plays {variant!r}")
    train = {k: v for k, v in data.items() if k != "meta"}
    held = {k: v for k, v in held_data.items() if k != "meta"}
    log(f"[qfit] {len(train['cand']):,} decisions to fit, {len(held['cand']):,} held out ({len(held_files)} files)")
    trunk.eval()
    head.eval()
    t0 = time.process_time()
    base_logits = policy_logits(trunk, head, derived, train["obs"], train["mask"])
    base_logp = base_logits - np.logaddexp.reduce(np.where(train["mask"], base_logits, -np.inf), axis=1, keepdims=True)
    base_held = held_out_values(policy_logits(trunk, head, derived, held["obs"], held["mask"]), held)
    log(f"[qfit] base logits in {time.process_time() - t0:.0f} CPU s")
    nonzero = train["gain"][:, 1:][train["ncand"][:, None] > np.arange(1, train["gain"].shape[1])[None, :]]
    scale = float(nonzero.std()) if len(nonzero) > 1 and nonzero.std() > 0 else 1.0
    rate = per_seat_hand(held_data["meta"], _players(variant))
    curve: list[dict] = []

    def measure(samples: int) -> None:
        row = compare(base_held, held_out_values(policy_logits(trunk, head, derived, held["obs"], held["mask"]), held))
        row["samples"] = samples
        row["per_seat_hand"] = row["diff"] * rate
        row["per_seat_hand_ci95"] = row["diff_ci95"] * rate
        curve.append(row)
        log(f"[qfit] held out: greedy gain {row['new']:+.4f} (base {row['base']:+.4f}) per labelled decision, "
            f"paired {row['diff']:+.4f} ± {row['diff_ci95']:.4f} ≈ {row['per_seat_hand']:+.3f} ± "
            f"{row['per_seat_hand_ci95']:.3f} per seat-hand; {100 * row['changed']:.1f} % of moves changed, "
            f"{100 * row['new_outside']:.1f} % outside the shortlist (base {100 * row['base_outside']:.1f} %), "
            f"shortlist probability {row['new_share']:.4f} (base {row['base_share']:.4f})")

    torch.manual_seed(seed)
    fitted = fit(trunk, head, derived, train, base_logp, kl=kl, share_kl=share_kl, scale=scale, epochs=epochs,
                 batch_size=batch_size, lr=lr, lr_final=lr_final, seed=seed, log=log, every=max(batch_size, len(train["cand"]) // 2),
                 held=measure)
    return {"stage": "qfit", "labels": [Path(f).name for f in files], "held_files": [Path(f).name for f in held_files],
            "world_source": data["meta"].get("world_source", "sampled"),
            "held_world_source": held_data["meta"].get("world_source", "sampled"),
            "train_decisions": len(train["cand"]), "gain_scale": scale, "kl": kl, "share_kl": share_kl, "epochs": epochs,
            "batch_size": batch_size, "lr": lr, "lr_final": lr_final, "seed": seed, **fitted, "held_out": curve[-1],
            "curve": curve, "cpu_seconds": round(time.process_time() - cpu0, 1)}


def split_files(labels, held=(), holdout: float = 0.1) -> tuple[list[str], list[str]]:
    """``(fit files, held-out files)``: ``held`` when given (none of them among ``labels``), else the last
    ``holdout`` share of ``labels`` by name (at least one, leaving at least one to fit)."""
    files = sorted(str(p) for p in labels)
    held_files = sorted(str(p) for p in held)
    if not files:
        raise ValueError("--labels: give label files to fit on (and held-out ones, or two or more to split)")
    if held_files:
        if set(held_files) & set(files):
            raise ValueError("--held: a held-out file is also among --labels")
        return files, held_files
    n_held = max(1, int(round(holdout * len(files))))
    if n_held >= len(files):
        raise ValueError(f"--labels: {len(files)} file(s) leave none to fit on after holding out {n_held}")
    return files[:-n_held], files[-n_held:]


def run(args: QfitArgs, log: Callable[[str], None] = print) -> dict:
    """The stage on its own: load the base, :func:`improve` it, write the checkpoint (its ``meta.qfit`` records the
    settings, the data and the held-out comparison); returns that entry with the checksum."""
    import torch

    from agents.players.policy import checkpoint_payload, load_checkpoint, resolve_device, save_checkpoint

    cpu0 = time.process_time()
    if not args.base or not args.out:
        raise ValueError("--base and --out are needed")
    if args.kl < 0 or args.share_kl < 0 or args.epochs <= 0 or args.batch_size < 1 or not 0 < args.holdout < 1:
        raise ValueError("need kl >= 0, share_kl >= 0, epochs > 0, batch_size >= 1 and 0 < holdout < 1")
    files, held_files = split_files(args.labels, args.held, args.holdout)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    ck = load_checkpoint(args.base)
    trunk, head, derived = _network(ck)
    device = resolve_device(args.device)
    trunk.to(device)
    head.to(device)
    entry = improve(trunk, head, derived, ck["variant"], files, held_files, kl=args.kl, share_kl=args.share_kl,
                    epochs=args.epochs,
                    batch_size=args.batch_size, lr=args.lr, lr_final=args.lr_final, seed=args.seed, log=log)
    entry.update({"base": str(args.base), "base_checksum": ck.get("checksum"),
                  "cpu_seconds": round(time.process_time() - cpu0, 1), "args": asdict(args)})
    meta_base = {k: v for k, v in ck.get("meta", {}).items() if k != "qfit"}
    payload = checkpoint_payload(trunk, head, variant=ck["variant"], options=ck["options"],
                                 obs_shape=ck["obs_shape"], arch=ck["arch"], meta={**meta_base, "qfit": entry},
                                 derived=ck.get("derived"))
    save_checkpoint(args.out, payload)
    log(f"[qfit] wrote {args.out} ({payload['checksum'][:19]}…) in {entry['cpu_seconds']:.0f} CPU s")
    return {**entry, "checksum": payload["checksum"]}


def qfit_stage(net, args: Any, rules, folder: Path, log: Callable[[str], None] = print) -> dict:
    """``train.py``'s qfit stage (``qfit_seeds`` given): the label chunks of ``qfit_seeds`` and ``qfit_held_seeds``
    (:func:`agents.training.exit.label_chunks`, made in ``qfit_labels`` where missing), then :func:`improve` on
    ``net.trunk`` and ``net.head`` (a :class:`agents.training.ppo.SeatNet` of a ``resnet1d`` architecture); writes
    ``qfit.json`` in the run folder and returns the checkpoint's meta entry."""
    from agents.training.exit import label_chunks
    from mjenv.encoding.handfeat import HandFeatures

    cpu0 = time.process_time()
    policy = args.qfit_policy or args.init_checkpoint
    paths = {}
    for seed in sorted(set(args.qfit_seeds) | set(args.qfit_held_seeds)):
        paths[seed] = label_chunks(policy, rules.variant, rules.options, seed=seed, chunks=1, folder=args.qfit_labels,
                                   chunk=args.qfit_chunk, worlds=args.qfit_worlds, label_prob=args.qfit_label_prob,
                                   kinds=args.qfit_kinds or None,
                                   rollout_policy=args.qfit_rollout_policy or None,
                                   world_source=args.qfit_world_source,
                                   policy_candidates=args.qfit_policy_candidates,
                                   rollout_network=args.qfit_rollout_network, device=args.device, log=log)[0]
    label_cpu = round(time.process_time() - cpu0, 1)
    derived = HandFeatures(rules) if args.derived else None
    entry = improve(net.trunk, net.head, derived, rules.variant, [paths[s] for s in args.qfit_seeds],
                    [paths[s] for s in args.qfit_held_seeds], kl=args.qfit_kl, share_kl=args.qfit_share_kl,
                    epochs=args.qfit_epochs,
                    batch_size=args.qfit_batch_size, lr=args.qfit_lr, lr_final=args.qfit_lr_final, seed=args.seed,
                    log=log)
    entry.update({"policy": str(policy), "rollout_policy": args.qfit_rollout_policy, "worlds": args.qfit_worlds,
                  "policy_candidates": args.qfit_policy_candidates,
                  "label_cpu_seconds_this_run": label_cpu, "cpu_seconds": round(time.process_time() - cpu0, 1)})
    if args.qfit_rollout_network:  # recorded only when set, so earlier configs rebuild the same meta
        entry["rollout_network"] = True
    (Path(folder) / "qfit.json").write_text(json.dumps(entry, indent=2), encoding="utf-8")
    return entry


def _players(variant: str) -> int:
    from mjenv.rules import load_rules

    return int(load_rules(variant).n_players)


def main(argv: list[str] | None = None) -> int:
    """``python -m agents.training.qfit``: see the module docstring."""
    p = argparse.ArgumentParser(prog="python -m agents.training.qfit", description=__doc__.split("\n\n")[0])
    p.add_argument("--labels", nargs="+", required=True)
    p.add_argument("--base", required=True)
    p.add_argument("--out", required=True)
    for f in ("kl", "share_kl", "epochs", "lr", "lr_final", "holdout"):
        p.add_argument(f"--{f}", type=float, default=getattr(QfitArgs, f))
    for f in ("batch_size", "seed", "threads"):
        p.add_argument(f"--{f}", type=int, default=getattr(QfitArgs, f))
    p.add_argument("--held", nargs="*", default=[], help="held-out label files (default: the last --holdout share)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--report", default=None, help="JSON file for the run's entry (default: OUT with .json)")
    a = p.parse_args(argv)
    args = QfitArgs(**{k: v for k, v in vars(a).items() if k != "report"})
    try:
        entry = run(args, log=lambda m: print(m, flush=True))
    except ValueError as exc:  # bad files, a base that is not network-only, bad settings: one line, nothing written
        print(f"{p.prog}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    Path(a.report or Path(args.out).with_suffix(".json")).write_text(json.dumps(entry, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
