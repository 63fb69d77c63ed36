"""Network-only behaviour cloning: fit the :mod:`agents.players.resnet` policy to a teacher's decisions recorded by
``mjenv dataset``, and write a network-only ``mjenv-policy-v1`` checkpoint.

This module owns the cloning stage of the network-only policy: ``train.py``'s stage (``netclone_sets > 0``,
:func:`netclone_stage`, ``python train.py --config netclone``), also runnable on its own with a fresh network
(``python -m agents.training.netclone``, :class:`CloneArgs`, :func:`run`), from fresh weights or a checkpoint's
(``init``; ``train.py``: ``--init_checkpoint``):

* **data**: ``mjenv dataset`` folders of the teacher (a built-in agent or a checkpoint file) playing every seat (:func:`agents.tournament.recording.write_from_play`;
  made here from their seeds when a folder is missing, so a config reproduces its data).  Only decisions with at
  least two legal actions are kept (a forced move teaches nothing); their shards stay packed in memory (about
  0.9 KB a decision, :class:`PackedDecisions`) and are unpacked per minibatch;
* **fit**: masked cross-entropy to the teacher's action, Adam with a cosine learning-rate decay over the run's
  samples, minibatches drawn from a fresh permutation of all kept decisions each epoch; with ``depart_weight``, the
  decisions where the teacher departs from ``split_by``'s choice weigh that much more (:func:`departure_marks`);
* **derived rows** (``derived``, optional): ``mjenv-hand-v1`` (:mod:`mjenv.encoding.handfeat`, the public hand
  arithmetic) appended to each unpacked v1 observation, computed per minibatch from the v1 rows (the datasets
  stay as recorded); the checkpoint records it and :class:`agents.players.policy.PolicyAgent` computes the same
  rows at play time;
* **held out**: another seed's walls, never trained on; every ``eval_every`` samples the greedy policy's
  agreement with the teacher is measured there, overall, by decision kind (:func:`decision_kinds`), by whether
  an opponent's 亮倒 hand is face up (:data:`FACEUP`) and, with ``split_by``, by whether the teacher departs
  there from a hand-written player's choice (:func:`departs`; the teacher is then e.g. ``kawuxing3-default.pt``,
  whose gain over ``heuristic-flush`` lies in its departures), and logged
  with the samples and CPU seconds so far (the learning curve, ``curve.jsonl`` and ``curve.png``), and the
  network so far is written to ``latest.pt`` (``meta.partial`` true) so a long run can be stopped and used.

The checkpoint records the data, the held-out agreement and the CPU time in ``meta`` and is network-only (no
advice features, no departure head).  Torch is imported on use only.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from mjenv.encoding.actions import KONG_SELF, LIANG, PASS, WIN

KINDS = ("discard", "own-turn option", "claim")
"""Decision kinds of :func:`decision_kinds`: a turn where only discards are legal; a turn that also offers a
self-drawn win, a kong or 亮倒; a reply to another seat's tile (pong, kong, chi or win against pass)."""


FACEUP = ("no face-up hand", "face-up hand")
"""Splits of the held-out agreement by whether any opponent's 亮倒 hand is face up at the decision."""


def departs(data: "PackedDecisions", player: str, batch_size: int = 2048) -> np.ndarray:
    """``bool [len(data)]``: where the recorded action of each kept decision of ``data`` is not ``player``'s choice
    (``heuristic`` or ``heuristic-flush``, :func:`agents.players.heuristic.heuristic_player`, deciding from the same
    v1 observation): the teacher's departures from that player."""
    from agents.players.heuristic import heuristic_player

    ref = heuristic_player(player, data.meta["variant"], data.meta.get("options"))
    out = np.zeros(len(data), bool)
    for i in range(0, len(data), batch_size):
        b = data.batch(np.arange(i, min(i + batch_size, len(data))), derived=False)
        out[i:i + len(b["action"])] = np.asarray(ref.act(b["obs"], b["mask"])) != b["action"]
    return out


def faceup(obs: np.ndarray, encoder) -> np.ndarray:
    """``bool [N]``: an opponent of the observer has a face-up 亮倒 hand in each v1 observation ``obs [N, C, 34]``
    (``encoder``: the variant's :class:`mjenv.encoding.observation.ObservationEncoder`)."""
    rev = encoder.slices["reveal"].start
    return np.asarray(obs)[:, [rev + 7 * s for s in range(1, encoder.n)], 0].max(1) > 0.5


def decision_kinds(mask: np.ndarray) -> np.ndarray:
    """``int8 [N]`` index into :data:`KINDS` of each decision's legal-action mask ``bool [N, 111]``."""
    mask = np.asarray(mask, dtype=bool)
    special = mask[:, LIANG:KONG_SELF + 34].any(1) | mask[:, WIN]
    return np.where(mask[:, PASS], 2, np.where(special, 1, 0)).astype(np.int8)


class PackedDecisions:
    """The decisions with at least two legal actions of one or more ``mjenv dataset`` folders, kept packed.

    ``len()`` is the number kept; :meth:`batch` unpacks any of them (``obs float32 [k, C, 34]``, ``mask``,
    ``action``, ``kind``, ``faceup``), the observations extended by ``derived``'s rows when it is given (a
    :class:`mjenv.encoding.handfeat.HandFeatures`).  ``limit`` keeps only the first ``limit`` of them (in folder
    and shard order)."""

    def __init__(self, folders, limit: int | None = None, derived=None):
        from mjenv.dataset import N_ACTIONS, DatasetReader
        from mjenv.encoding.observation import ObservationEncoder

        self.shards: list[dict] = []
        rows: list[np.ndarray] = []
        self.decisions = 0
        self.meta = None
        for folder in folders:
            reader = DatasetReader(folder)
            if self.meta is None:
                self.meta = reader.meta
            for i in range(len(reader.sizes)):
                if limit is not None and sum(len(r) for r in rows) >= limit:
                    break
                d = reader.raw(i)
                mask = np.unpackbits(d["mask_bits"], axis=1, count=N_ACTIONS).astype(bool)
                self.decisions += len(mask)
                keep = np.flatnonzero(mask.sum(1) >= 2)
                if limit is not None:
                    keep = keep[: max(0, limit - sum(len(r) for r in rows))]
                self.shards.append({k: np.asarray(v) for k, v in d.items()})
                rows.append(keep)
        self.index = np.concatenate([np.stack([np.full(len(r), s), r], 1) for s, r in enumerate(rows)]).astype(np.int64) \
            if rows else np.zeros((0, 2), np.int64)
        if not len(self.index):
            raise ValueError(f"no decisions with two or more legal actions in {', '.join(map(str, folders))}")
        self.encoder = ObservationEncoder(self.meta["variant"], self.meta.get("options"))
        self.derived = derived
        if derived is not None and tuple(derived.v1_shape) != tuple(int(v) for v in self.shards[0]["obs_shape"]):
            raise ValueError(f"{derived.version} of {derived.variant} reads observations of shape {derived.v1_shape}, "
                             f"the datasets hold {tuple(int(v) for v in self.shards[0]['obs_shape'])}")

    def __len__(self) -> int:
        return len(self.index)

    @property
    def obs_shape(self) -> tuple[int, int]:
        """``(C, 34)`` of the observations :meth:`batch` gives (the derived rows included)."""
        C, W = (int(v) for v in self.shards[0]["obs_shape"])
        return (C + (self.derived.rows if self.derived is not None else 0), W)

    def batch(self, which: np.ndarray, derived: bool = True) -> dict[str, np.ndarray]:
        """The kept decisions ``which`` (positions ``0 .. len-1``), unpacked, in that order (the v1 rows alone when
        ``derived`` is false)."""
        from mjenv.dataset import unpack

        pairs = self.index[np.asarray(which, dtype=np.int64)]
        parts, order = [], []
        for s in np.unique(pairs[:, 0]):
            sel = np.flatnonzero(pairs[:, 0] == s)
            parts.append(unpack(self.shards[int(s)], pairs[sel, 1]))
            order.append(sel)
        inv = np.argsort(np.concatenate(order), kind="stable")
        out = {k: np.concatenate([p[k] for p in parts])[inv] for k in ("obs", "mask", "action")}
        out["kind"] = decision_kinds(out["mask"])
        out["faceup"] = faceup(out["obs"], self.encoder)
        if self.derived is not None and derived:
            out["obs"] = self.derived.extend(out["obs"])
        return out


def teacher_tag(teacher: str) -> str:
    """The name a dataset records for ``teacher`` and its folders carry: a built-in agent's name as given, a
    checkpoint path's file stem (``agents/checkpoints/kawuxing3-default.pt`` -> ``kawuxing3-default``, the name
    :func:`agents.make_agent` gives it)."""
    return Path(teacher).stem if str(teacher).endswith(".pt") else str(teacher)


def ensure_dataset(folder: str | Path, *, teacher: str, variant: str, options: Any, walls: int, seed: int,
                   first_wall: int = 0, log: Callable[[str], None] | None = None) -> Path:
    """``folder``, written by ``teacher`` (a built-in agent's name or a checkpoint path) in every seat on walls
    ``first_wall ..`` of ``seed`` unless it already holds a finished dataset (``meta.json``) of that source; a
    finished folder of another source is an error."""
    from agents.tournament.recording import write_from_play

    folder = Path(folder)
    meta_path = folder / "meta.json"
    if meta_path.is_file():
        src = json.loads(meta_path.read_text()).get("source", {})
        want = {"agents": [teacher_tag(teacher)], "seed": seed, "walls": walls, "first_wall": first_wall}
        have = {k: src.get(k) for k in want}
        if have != want:
            raise ValueError(f"{folder}: holds a dataset of {have}, not {want}; choose another folder")
        return folder
    t0 = time.process_time()
    meta = write_from_play(folder, [teacher], variant, options, walls=walls, seed=seed, first_wall=first_wall)
    if log:
        log(f"[data] {folder}: {meta['decisions']:,} decisions of {teacher} on {walls:,} walls (seed {seed}, from "
            f"{first_wall}) in {time.process_time() - t0:.0f} CPU s")
    return folder


def split_names(player: str) -> tuple[str, str]:
    """The names of the held-out split by :func:`departs` from ``player``: ``("follows P", "departs from P")``."""
    return (f"follows {player}", f"departs from {player}")


def agreement_by_kind(act: Callable[[np.ndarray, np.ndarray], np.ndarray], data: PackedDecisions,
                      batch_size: int = 2048, split: tuple[str, np.ndarray] | None = None) -> dict:
    """Greedy agreement of ``act(obs, mask)`` with the recorded actions of every kept decision of ``data``:
    ``{"all": share, "n": count, NAME: share, NAME + " n": count, ...}`` for each kind (:data:`KINDS`), each
    face-up split (:data:`FACEUP`) and, with ``split = (player, departs(data, player))``, each of
    :func:`split_names` ``(player)``."""
    names = KINDS + FACEUP + (split_names(split[0]) if split is not None else ())
    hits = np.zeros(len(names), np.int64)
    count = np.zeros(len(names), np.int64)
    for i in range(0, len(data), batch_size):
        b = data.batch(np.arange(i, min(i + batch_size, len(data))))
        got = np.asarray(act(b["obs"], b["mask"])) == b["action"]
        parts = [b["kind"], len(KINDS) + b["faceup"].astype(np.int64)]
        if split is not None:
            parts.append(len(KINDS) + len(FACEUP) + split[1][i:i + len(got)].astype(np.int64))
        group = np.concatenate(parts)
        hits += np.bincount(group, weights=np.concatenate([got] * len(parts)), minlength=len(names)).astype(np.int64)
        count += np.bincount(group, minlength=len(names))
    n = count[: len(KINDS)].sum()
    out = {"all": float(hits[: len(KINDS)].sum() / max(n, 1)), "n": int(n)}
    for k, name in enumerate(names):
        out[name] = float(hits[k] / count[k]) if count[k] else float("nan")
        out[name + " n"] = int(count[k])
    return out


@dataclass
class CloneArgs:
    """One network-only cloning run on its own (``python -m agents.training.netclone --field value ...``)."""

    exp_name: str = "netclone"
    """name of the run: its folder is ``runs/<exp_name>-<seed>``"""
    variant: str = "kawuxing3"
    """variant (its default rules)"""
    teacher: str = "heuristic-flush"
    """the player whose decisions are cloned (any agent name ``mjenv dataset`` takes)"""
    data_dir: str = "runs/data/netclone"
    """folder of the datasets (made there from their seeds when missing)"""
    train_walls: int = 25000
    """walls per training dataset"""
    train_sets: int = 1
    """training datasets: set ``i`` holds walls ``i * train_walls ..`` of ``train_seed``"""
    train_seed: int = 901
    """wall seed of the training data"""
    holdout_walls: int = 2000
    """walls of the held-out dataset"""
    holdout_seed: int = 902
    """wall seed of the held-out data (never trained on)"""
    limit: int = 0
    """train on at most this many decisions (with two or more legal actions; 0: all)"""
    channels: int = 64
    """convolution channels of the residual network"""
    blocks: int = 4
    """residual blocks"""
    hidden: int = 256
    """units of the dense feature layer"""
    epochs: float = 1.0
    """passes over the training decisions (a fraction stops part-way)"""
    batch_size: int = 512
    """decisions per minibatch"""
    lr: float = 0.002
    """Adam learning rate at the start"""
    lr_final: float = 0.00005
    """learning rate at the end (cosine decay over the run's samples)"""
    weight_decay: float = 0.0
    """Adam's weight decay"""
    eval_every: int = 250000
    """samples between held-out evaluations"""
    seed: int = 0
    """seed of the weights and the minibatch order"""
    device: str = "auto"
    """where the network trains: auto (CUDA when torch sees it), cpu, cuda or cuda:N"""
    threads: int = 1
    """torch CPU threads"""
    out: str = ""
    """checkpoint to write (default ``runs/<exp_name>-<seed>/policy.pt``)"""
    split_by: str = ""
    """also split the held-out agreement by whether the teacher's action is this player's choice on the same
    observation (heuristic or heuristic-flush; empty: no split): where the teacher departs from it"""
    depart_weight: float = 1.0
    """loss weight of the training decisions where the teacher departs from ``split_by``'s choice (1: all weigh
    the same; otherwise ``split_by`` is needed, and marking the training decisions costs one of its decisions each)"""
    derived: str = ""
    """derived observation rows the network also reads: empty (mjenv-obs-v1 alone) or mjenv-hand-v1
    (mjenv/encoding/handfeat.py, computed from the v1 rows per minibatch)"""
    init: str = ""
    """checkpoint whose network the fit starts from (empty: fresh weights); its architecture and derived rows must
    be the run's (``train.py``'s stage starts from ``--init_checkpoint`` the same way)"""


def load_data(teacher: str, variant: str, options: Any, data_dir, *, train_walls: int, train_sets: int, train_seed: int,
              holdout_walls: int, holdout_seed: int, limit: int = 0, derived: str = "",
              log: Callable[[str], None] = print):
    """``(train, held)`` :class:`PackedDecisions` of the teacher's datasets in ``data_dir`` (made from their seeds
    where missing, :func:`ensure_dataset`): ``train_sets`` sets of ``train_walls`` walls of ``train_seed`` (set ``i``
    from wall ``i * train_walls``), and ``holdout_walls`` walls of ``holdout_seed``; with ``derived``
    (:func:`derived_rows`) their observations carry those rows."""
    rows = derived_rows(derived, variant, options)
    data_dir = Path(data_dir)
    kw = dict(teacher=teacher, variant=variant, options=options, log=log)
    tag = teacher_tag(teacher)
    train_dirs = [ensure_dataset(data_dir / f"{variant}-{tag}-s{train_seed}-{i}", walls=train_walls, seed=train_seed,
                                 first_wall=i * train_walls, **kw) for i in range(train_sets)]
    held_dir = ensure_dataset(data_dir / f"{variant}-{tag}-s{holdout_seed}-held", walls=holdout_walls,
                              seed=holdout_seed, **kw)
    train = PackedDecisions(train_dirs, limit=limit or None, derived=rows)
    held = PackedDecisions([held_dir], derived=rows)
    log(f"[netclone] {len(train):,} training decisions with a choice (of {train.decisions:,}), {len(held):,} held out")
    return train, held


def derived_rows(name: str, variant: str, options: Any):
    """The :class:`mjenv.encoding.handfeat.HandFeatures` named ``name`` (``mjenv-hand-v1``), or None for ``""``; any
    other name is a ``ValueError`` listing the known ones."""
    from mjenv.encoding.handfeat import HAND_FEATURES, HandFeatures

    if not name:
        return None
    if name != HAND_FEATURES:
        raise ValueError(f"derived rows {name!r}: this mjenv computes {HAND_FEATURES!r} (or none: '')")
    return HandFeatures(variant, options)


def fit(trunk, head, train: PackedDecisions, held: PackedDecisions, *, epochs: float, batch_size: int, lr: float,
        lr_final: float, weight_decay: float = 0.0, eval_every: int, seed: int, folder: Path,
        log: Callable[[str], None] = print, snapshot: Callable[[int, dict], None] | None = None,
        split: tuple[str, np.ndarray] | None = None, weights: np.ndarray | None = None) -> dict:
    """Fit ``trunk`` and ``head`` (on their device) to the recorded actions of ``train`` (masked cross-entropy, Adam,
    cosine decay from ``lr`` to ``lr_final`` over ``epochs`` passes, minibatches from one permutation per pass seeded
    by ``seed``); every ``eval_every`` samples and at the end, the held-out agreement by kind (and by ``split``, see
    :func:`agreement_by_kind`) is appended to ``folder/curve.jsonl``; ``weights`` (one per training decision, or None)
    weigh each decision's cross-entropy in its minibatch (and ``snapshot(samples, agreement)`` called).  Returns ``{"curve", "samples",
    "fit_cpu_seconds"}``; the curve is also drawn to ``folder/curve.png``."""
    import torch

    device = next(trunk.parameters()).device
    params = list(trunk.parameters()) + list(head.parameters())
    opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    total = max(1, int(epochs * len(train)))
    rng = np.random.default_rng(seed)
    cpu0 = time.process_time()

    def greedy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            x = torch.as_tensor(obs.reshape(len(obs), -1)).to(device)
            logits = head(trunk(x)).float().cpu().masked_fill(~torch.as_tensor(mask), float("-inf"))
        return logits.argmax(1).numpy()

    curve: list[dict] = []
    fit_cpu = 0.0
    shown = KINDS + FACEUP + (split_names(split[0]) if split is not None else ())

    def evaluate(seen: int, loss: float) -> None:
        trunk.eval()
        head.eval()
        agree = agreement_by_kind(greedy, held, split=split)
        trunk.train()
        head.train()
        row = {"samples": seen, "fit_cpu_s": round(fit_cpu, 1), "cpu_s": round(time.process_time() - cpu0, 1),
               "train_loss": round(loss, 4), **{k: (round(v, 5) if isinstance(v, float) else v) for k, v in agree.items()}}
        curve.append(row)
        with open(folder / "curve.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")
        if snapshot is not None:
            snapshot(seen, agree)
        log(f"[netclone] {seen:>10,} samples  {fit_cpu:7.0f} fit CPU s  loss {loss:.4f}  held-out agreement "
            f"{100 * agree['all']:.2f} %  (" + ", ".join(f"{k} {100 * agree[k]:.1f} %" for k in shown) + ")")

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "curve.jsonl").write_text("")
    seen, next_eval, losses = 0, eval_every, []
    perm = rng.permutation(len(train))
    pos = 0
    trunk.train()
    head.train()
    while seen < total:
        t0 = time.process_time()
        if pos >= len(perm):
            perm, pos = rng.permutation(len(train)), 0
        idx = perm[pos : pos + min(batch_size, total - seen)]
        pos += len(idx)
        b = train.batch(idx)
        x = torch.as_tensor(b["obs"].reshape(len(idx), -1)).to(device)
        m = torch.as_tensor(b["mask"]).to(device)
        y = torch.as_tensor(b["action"]).to(device)
        frac = seen / total
        for g in opt.param_groups:
            g["lr"] = lr_final + 0.5 * (lr - lr_final) * (1 + np.cos(np.pi * frac))
        logits = head(trunk(x)).masked_fill(~m, -1e9)
        if weights is None:
            loss = torch.nn.functional.cross_entropy(logits, y)
        else:
            w = torch.as_tensor(weights[idx], dtype=logits.dtype).to(device)
            loss = (torch.nn.functional.cross_entropy(logits, y, reduction="none") * w).sum() / w.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        seen += len(idx)
        fit_cpu += time.process_time() - t0
        if seen >= next_eval or seen >= total:
            evaluate(seen, float(np.mean(losses[-200:])))
            next_eval += eval_every
    trunk.eval()
    head.eval()
    plot_curve(curve, folder / "curve.png", f"held-out agreement with the teacher ({len(train):,} decisions)")
    return {"curve": curve, "samples": seen, "fit_cpu_seconds": round(fit_cpu, 1)}


def summary_meta(teacher: str, train: PackedDecisions, fitted: dict, **facts) -> dict:
    """The checkpoint's ``meta`` entry of a cloning run: the teacher, the data, the final held-out agreement (overall
    and by kind), the samples and CPU seconds, and ``facts`` (seeds, walls, settings)."""
    final = fitted["curve"][-1]
    return {"stage": "netclone", "teacher": teacher, "train_decisions": len(train), "samples": fitted["samples"],
            "holdout_agreement": final["all"], "holdout_decisions": final["n"],
            "holdout_agreement_by_kind": {k: final[k] for k in KINDS + FACEUP if k in final},
            **({"holdout_agreement_by_split": {k: final[k] for k in final if k.startswith(("follows ", "departs from "))
                                               and not k.endswith(" n")}}
               if any(k.startswith("departs from ") for k in final) else {}),
            "fit_cpu_seconds": fitted["fit_cpu_seconds"], **facts}


def run(args: CloneArgs, log: Callable[[str], None] = print) -> dict:
    """The stage on its own (``python -m agents.training.netclone``): make or read the datasets, fit a fresh network,
    write the checkpoint and ``summary.json`` in ``runs/<exp_name>-<seed>/``; returns the summary."""
    import torch

    from agents.players.base import resolve_options
    from agents.players.policy import checkpoint_payload, resolve_device, save_checkpoint
    from agents.players.resnet import NET, make_resnet, parameter_count

    cpu0 = time.process_time()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    opts = resolve_options(args.variant, None)
    folder = Path("runs") / f"{args.exp_name}-{args.seed}"
    train, held = load_data(args.teacher, args.variant, opts, args.data_dir, train_walls=args.train_walls,
                            train_sets=args.train_sets, train_seed=args.train_seed, holdout_walls=args.holdout_walls,
                            holdout_seed=args.holdout_seed, limit=args.limit, derived=args.derived, log=log)
    split, weights = departure_marks(train, held, args.split_by, args.depart_weight, log)
    torch.manual_seed(args.seed)
    arch = {"net": NET, "channels": args.channels, "blocks": args.blocks, "hidden": args.hidden}
    trunk, head = make_resnet(train.obs_shape, arch)
    if args.init:
        load_init(trunk, head, args.init, arch, args.derived, opts, args.variant)
        log(f"[netclone] starting from {args.init}")
    trunk.to(device)
    head.to(device)
    log(f"[netclone] {NET} {args.channels}x{args.blocks}, hidden {args.hidden}: {parameter_count(trunk, head):,} "
        f"parameters; {int(args.epochs * len(train)):,} samples ({args.epochs} epochs) on {device}")

    def snapshot(seen: int, agree: dict) -> None:
        save_checkpoint(folder / "latest.pt", checkpoint_payload(
            trunk, head, variant=args.variant, options=opts, obs_shape=train.obs_shape, arch=arch,
            meta={"stage": "netclone", "teacher": args.teacher, "samples": seen, "holdout_agreement": agree["all"],
                  "partial": True}, derived=args.derived or None))

    fitted = fit(trunk, head, train, held, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
                 lr_final=args.lr_final, weight_decay=args.weight_decay, eval_every=args.eval_every, seed=args.seed,
                 folder=folder, log=log, snapshot=snapshot, split=split, weights=weights)
    meta = summary_meta(args.teacher, train, fitted, train_seed=args.train_seed,
                        train_walls=args.train_walls * args.train_sets, holdout_seed=args.holdout_seed,
                        holdout_walls=args.holdout_walls, cpu_seconds=round(time.process_time() - cpu0, 1),
                        args=asdict(args))
    payload = checkpoint_payload(trunk, head, variant=args.variant, options=opts, obs_shape=train.obs_shape,
                                 arch=arch, meta=meta, derived=args.derived or None)
    out = Path(args.out) if args.out else folder / "policy.pt"
    save_checkpoint(out, payload)
    summary = {"checkpoint": str(out), "checksum": payload["checksum"], **meta, "curve": fitted["curve"]}
    (folder / "summary.json").write_text(json.dumps(summary, indent=2))
    log(f"[netclone] wrote {out} ({payload['checksum'][:19]}…): held-out agreement "
        f"{100 * meta['holdout_agreement']:.2f} % of {meta['holdout_decisions']:,} decisions with a choice, "
        f"{fitted['fit_cpu_seconds']:.0f} fit CPU s")
    return summary


def departure_marks(train: PackedDecisions, held: PackedDecisions, split_by: str, depart_weight: float,
                    log: Callable[[str], None] = print) -> tuple[tuple[str, np.ndarray] | None, np.ndarray | None]:
    """``(split, weights)`` for :func:`fit`: the held-out split by the teacher's departures from ``split_by``'s
    choice (None without ``split_by``), and the per-decision loss weights (``depart_weight`` where the teacher
    departs, 1 elsewhere; None when ``depart_weight`` is 1).  A weight without ``split_by`` is a ``ValueError``."""
    if depart_weight != 1.0 and not split_by:
        raise ValueError("--depart_weight: name the player departed from with --split_by")
    if not split_by:
        return None, None
    split = (split_by, departs(held, split_by))
    log(f"[netclone] the teacher departs from {split_by} in {split[1].sum():,} of the {len(held):,} held-out "
        f"decisions ({100 * split[1].mean():.2f} %)")
    if depart_weight == 1.0:
        return split, None
    t0 = time.process_time()
    marked = departs(train, split_by)
    log(f"[netclone] the teacher departs from {split_by} in {marked.sum():,} training decisions "
        f"({100 * marked.mean():.2f} %), weighted {depart_weight} ({time.process_time() - t0:.0f} CPU s)")
    return split, np.where(marked, depart_weight, 1.0).astype(np.float32)


def load_init(trunk, head, path: str, arch: dict, derived: str, options: Any, variant: str) -> None:
    """Load the network of the checkpoint ``path`` into ``trunk`` and ``head`` (fresh ones of ``arch``); a checkpoint
    of other rules, another architecture or other derived rows is a ``ValueError`` saying which."""
    from agents.players.policy import check_compatible, load_checkpoint

    ck = load_checkpoint(path)
    check_compatible(ck, variant, options, where=path)
    if (ck.get("derived") or "") != (derived or ""):
        raise ValueError(f"--init {path}: its network reads derived rows {ck.get('derived') or 'none'!r}, "
                         f"the run's are {derived or 'none'!r}")
    if {k: ck["arch"].get(k) for k in arch} != arch:
        raise ValueError(f"--init {path}: architecture {ck['arch']} differs from the run's {arch}")
    trunk.load_state_dict(ck["trunk"])
    head.load_state_dict(ck["head"])


def netclone_stage(net, args: Any, opts, folder: Path, log: Callable[[str], None] = print) -> dict:
    """``train.py``'s network-only cloning stage (``netclone_sets > 0``): the ``netclone_*`` arguments' datasets,
    :func:`fit` of ``net.trunk`` and ``net.head`` (a :class:`agents.training.ppo.SeatNet` of a ``resnet1d``
    architecture); writes ``netclone.json`` and the curve in the run folder; returns the checkpoint meta entry."""
    cpu0 = time.process_time()
    train, held = load_data(args.netclone_teacher, args.variant, opts, args.netclone_data, train_walls=args.netclone_walls,
                            train_sets=args.netclone_sets, train_seed=args.netclone_seed,
                            holdout_walls=args.netclone_holdout_walls, holdout_seed=args.netclone_holdout_seed,
                            limit=args.netclone_limit, derived=getattr(args, "derived", ""), log=log)
    split, weights = departure_marks(train, held, getattr(args, "netclone_split_by", ""),
                                     getattr(args, "netclone_depart_weight", 1.0), log)
    fitted = fit(net.trunk, net.head, train, held, epochs=args.netclone_epochs, batch_size=args.netclone_batch_size,
                 lr=args.netclone_lr, lr_final=args.netclone_lr_final, eval_every=args.netclone_eval_every,
                 seed=args.seed, folder=folder / "netclone", log=log, split=split, weights=weights)
    meta = summary_meta(args.netclone_teacher, train, fitted, train_seed=args.netclone_seed,
                        train_walls=args.netclone_walls * args.netclone_sets, holdout_seed=args.netclone_holdout_seed,
                        holdout_walls=args.netclone_holdout_walls, cpu_seconds=round(time.process_time() - cpu0, 1))
    (folder / "netclone.json").write_text(json.dumps({**meta, "curve": fitted["curve"]}, indent=2), encoding="utf-8")
    return meta


def plot_curve(curve: list[dict], path: Path, title: str) -> None:
    """Held-out agreement (overall and by kind) against samples and fit CPU minutes, as a PNG (needs matplotlib;
    skipped with a note when it is missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError:
        print(f"[netclone] matplotlib missing: {path} not drawn", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, key, label, scale in ((axes[0], "samples", "training samples (millions)", 1e6),
                                  (axes[1], "fit_cpu_s", "fit CPU minutes", 60.0)):
        xs = [r[key] / scale for r in curve]
        for name in ("all", *KINDS):
            ax.plot(xs, [100 * r[name] for r in curve], marker="o" if name == "all" else None,
                    label="all decisions with a choice" if name == "all" else name)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("held-out agreement with the teacher (%)")
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """``python -m agents.training.netclone [--field value ...]`` (the fields of :class:`CloneArgs`)."""
    from agents.script_args import parse_args

    args, _ = parse_args(CloneArgs, argv)
    run(args, log=lambda s: print(s, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
