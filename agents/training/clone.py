"""Behaviour cloning: a warm start for ``train.py``'s policy, learned from a teacher agent on the batched engine.

This module owns the cloning step.  :func:`behaviour_clone` plays ``rounds`` rounds on
:class:`mjenv.envs.vector.LearnerTables` (every non-learner seat played by the teacher, by default the
heuristic); the learner seat's decisions are labelled with the teacher's action, and the network is fitted
to those labels (cross-entropy over the masked logits) and, when it has a value output, to the Monte-Carlo
return of each decision (money to the end of the hand × ``reward_scale``, discounted by ``gamma``).

The rounds follow DAgger: in round ``r`` the learner seat plays the teacher's action with probability
``beta = max(0, 1 - r / (rounds * teacher_fraction))`` and the network's own greedy action otherwise, so the
later rounds label the states the cloned policy itself reaches.  Nothing is kept between rounds except the
held-out set (the first ``holdout`` states of a separate seed), so memory stays at one round of observations.

:func:`agreement` is the share of states with at least two legal actions where a policy picks the teacher's
action; it is what the tests and ``train.py`` report.  :func:`clone_stage` is the stage as ``train.py``'s all-seat trainer runs
it (the ``bc_*`` arguments, ``clone.json``).  :func:`clone_from_dataset` fits the same losses to a
recorded ``mjenv dataset`` folder instead of live play (offline learning, docs/dataset.md).  Torch is imported on use only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from agents.players.policy import _torch


@dataclass
class CloneReport:
    """What :func:`behaviour_clone` did: states seen, losses and agreement per round, CPU seconds."""

    states: int = 0
    rounds: list[dict] = field(default_factory=list)
    holdout_agreement: float = float("nan")
    holdout_states: int = 0
    cpu_seconds: float = 0.0


def collect(core, teacher, steps: int, *, learner=None, beta: float = 1.0, gamma: float = 1.0,
            reward_scale: float = 1.0, rng: np.random.Generator | None = None, features=None) -> dict:
    """Play ``steps`` learner decisions on every table of ``core`` (a reset ``LearnerTables``).

    Returns ``obs float32 [N, C, 34]``, ``mask bool [N, 111]``, ``label int64 [N]`` (the teacher's action),
    ``ret float32 [N]`` (discounted return to the end of the hand, scaled) and ``has_ret bool [N]`` (False for
    decisions whose hand had not ended when collection stopped).  ``learner(obs, mask)`` plays the learner
    seat where a uniform draw exceeds ``beta``; the teacher plays it elsewhere.  With ``features`` (an object
    whose ``extend(obs, mask, core)`` appends input rows, e.g. :class:`agents.players.advice.AdviceFeatures`), the stored
    observations and the learner's input are the extended ones; the teacher always sees the plain observation.
    """
    rng = rng or np.random.default_rng(0)
    B = core.B
    obs_l, mask_l, lab_l, rew_l, end_l = [], [], [], [], []
    for _ in range(steps):
        obs = core.observe()
        mask = core.action_masks()
        label = np.asarray(teacher.act(obs, mask), dtype=np.int64)
        if features is not None:
            obs = features.extend(obs, mask, core)
        act = label
        if learner is not None and beta < 1.0:
            own = rng.random(B) >= beta
            if own.any():
                act = label.copy()
                act[own] = learner(obs[own], mask[own])
        reward, ended, _ = core.step(act)
        obs_l.append(obs)
        mask_l.append(mask)
        lab_l.append(label)
        rew_l.append(reward * reward_scale)
        end_l.append(ended)
    rew = np.asarray(rew_l, dtype=np.float64)
    end = np.asarray(end_l, dtype=bool)
    ret = np.zeros_like(rew)
    valid = np.zeros_like(end)
    g = np.zeros(B)
    ok = np.zeros(B, bool)
    for t in range(steps - 1, -1, -1):
        g = np.where(end[t], rew[t], rew[t] + gamma * g)
        ok = end[t] | ok
        ret[t] = g
        valid[t] = ok
    return {
        "obs": np.concatenate(obs_l).astype(np.float32),
        "mask": np.concatenate(mask_l),
        "label": np.concatenate(lab_l),
        "ret": ret.reshape(-1).astype(np.float32),
        "has_ret": valid.reshape(-1),
    }


def agreement(act: Callable[[np.ndarray, np.ndarray], np.ndarray], data: dict) -> tuple[float, int]:
    """(share of decisions with ≥ 2 legal actions where ``act`` picks ``data['label']``, how many there were)."""
    choice = data["mask"].sum(1) >= 2
    if not choice.any():
        return float("nan"), 0
    got = np.asarray(act(data["obs"][choice], data["mask"][choice]))
    return float((got == data["label"][choice]).mean()), int(choice.sum())


def behaviour_clone(forward: Callable, parameters, variant: str, options: Any, *, teacher=None, rounds: int = 8,
                    tables: int = 128, steps_per_round: int = 64, epochs: int = 2, batch_size: int = 512,
                    lr: float = 1e-3, vf_coef: float = 0.5, gamma: float = 0.995, reward_scale: float = 0.1,
                    teacher_fraction: float = 0.5, holdout: int = 4096, seed: int = 0,
                    log: Callable[[str], None] | None = None, features=None, policy_weight: float = 1.0) -> CloneReport:
    """Fit ``forward`` (``x float32 [N, C*34] -> (logits [N, 111], value [N] or None)``) to the teacher.

    ``parameters`` are the tensors to optimise (Adam, ``lr``).  Each round plays ``steps_per_round`` learner
    decisions on ``tables`` tables (see the module docstring for the DAgger mixing), then runs ``epochs``
    passes of minibatches of ``batch_size``.  Returns a :class:`CloneReport`; the held-out agreement is
    measured on ``holdout`` teacher-played states of another seed after the last round.  ``features`` (an
    ``extend(obs, mask, core)`` object) extends every observation the network sees (:func:`collect`).
    ``policy_weight`` scales the cross-entropy term: 0 fits the value head alone (an advised policy already
    follows its teacher, and sharpening it further would leave PPO nothing to explore).
    """
    import time

    from agents import make_agent
    from mjenv.envs.vector import LearnerTables

    torch = _torch()
    if rounds < 1 or tables < 1 or steps_per_round < 1 or epochs < 1 or batch_size < 1:
        raise ValueError("behaviour_clone: rounds, tables, steps_per_round, epochs and batch_size must be >= 1")
    cpu0 = time.process_time()
    teacher = teacher if teacher is not None else make_agent("heuristic", variant, options)
    opt = torch.optim.Adam(list(parameters), lr=lr)
    rng = np.random.default_rng(seed)
    report = CloneReport()

    def greedy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits, _ = forward(torch.as_tensor(obs.reshape(len(obs), -1)))
            logits = logits.masked_fill(~torch.as_tensor(mask), float("-inf"))
        return logits.argmax(1).numpy().astype(np.int64)

    core = LearnerTables(variant, tables, options=options, opponent=teacher, seed=seed)
    core.reset(seed)
    for r in range(rounds):
        beta = max(0.0, 1.0 - r / max(rounds * teacher_fraction, 1e-9))
        data = collect(core, teacher, steps_per_round, learner=greedy, beta=beta, gamma=gamma,
                       reward_scale=reward_scale, rng=rng, features=features)
        report.states += len(data["label"])
        x_all = torch.as_tensor(data["obs"].reshape(len(data["obs"]), -1))
        m_all = torch.as_tensor(data["mask"])
        y_all = torch.as_tensor(data["label"])
        g_all = torch.as_tensor(data["ret"])
        v_all = torch.as_tensor(data["has_ret"])
        losses, vlosses = [], []
        for _ in range(epochs):
            perm = torch.as_tensor(rng.permutation(len(y_all)))
            for i in range(0, len(perm), batch_size):
                idx = perm[i : i + batch_size]
                logits, value = forward(x_all[idx])
                logits = logits.masked_fill(~m_all[idx], float("-inf"))
                ce = torch.nn.functional.cross_entropy(logits, y_all[idx])
                losses.append(ce.item())
                loss = policy_weight * ce
                if value is not None and bool(v_all[idx].any()):
                    sel = v_all[idx]
                    vloss = torch.nn.functional.mse_loss(value.reshape(-1)[sel], g_all[idx][sel])
                    vlosses.append(vloss.item())
                    loss = loss + vf_coef * vloss
                opt.zero_grad()
                loss.backward()
                opt.step()
        acc, n = agreement(greedy, data)
        row = {"round": r, "beta": round(beta, 3), "states": len(y_all), "policy_loss": float(np.mean(losses)),
               "value_loss": float(np.mean(vlosses)) if vlosses else float("nan"), "agreement": acc}
        report.rounds.append(row)
        if log:
            log(f"[clone {r + 1}/{rounds}] beta {beta:.2f}  loss {row['policy_loss']:.3f}  value loss "
                f"{row['value_loss']:.3f}  agreement {100 * acc:.1f}% of {n} choices")
    held = LearnerTables(variant, min(tables, holdout), options=options, opponent=teacher, seed=seed + 7919)
    held.reset(seed + 7919)
    hdata = collect(held, teacher, max(1, -(-holdout // held.B)), gamma=gamma, reward_scale=reward_scale,
                    features=features)
    report.holdout_agreement, report.holdout_states = agreement(greedy, hdata)
    report.cpu_seconds = time.process_time() - cpu0
    if log:
        log(f"[clone] held-out agreement with the teacher {100 * report.holdout_agreement:.1f}% "
            f"({report.holdout_states} states with a choice), {report.states:,} states, {report.cpu_seconds:.0f} CPU s")
    return report



def clone_stage(net, args: Any, rules, features, folder: Path) -> CloneReport:
    """The cloning warm start of ``train.py``'s all-seat trainer: :func:`behaviour_clone` of ``args.bc_teacher`` (or,
    for ``advisor``, of ``features``' own advising player) into ``net`` (a :class:`agents.training.ppo.SeatNet`) with the ``bc_*`` arguments; writes ``clone.json`` in
    the run folder and returns the report.  ``rules``: the run's :class:`mjenv.rules.Rules`."""
    import json
    from dataclasses import asdict

    from agents import make_agent

    if args.bc_teacher == "advisor":  # the advice's own player, keywords and all (agents/players/advice.py)
        if features is None:
            raise ValueError("bc_teacher 'advisor' needs advice features (--advice)")
        teacher = features.heuristic
    else:
        teacher = make_agent(args.bc_teacher, rules, seed=args.seed + 3)
    net.train()
    report = behaviour_clone(
        net, net.parameters(), rules.variant, rules.options, teacher=teacher, rounds=args.bc_rounds, tables=args.bc_tables,
        steps_per_round=args.bc_steps, epochs=args.bc_epochs, lr=args.bc_lr, vf_coef=args.vf_coef, gamma=args.gamma,
        reward_scale=args.reward_scale, teacher_fraction=args.bc_teacher_fraction, seed=args.seed + 100,
        log=lambda m: print(m, flush=True), features=features, policy_weight=args.bc_policy_weight,
        holdout=args.bc_holdout)
    net.eval()
    (folder / "clone.json").write_text(json.dumps(asdict(report), indent=2), encoding="utf-8")
    return report


def clone_from_dataset(forward: Callable, parameters, folder, *, epochs: int = 1, batch_size: int = 512,
                       lr: float = 1e-3, vf_coef: float = 0.5, reward_scale: float = 0.1, seed: int = 0,
                       agents: list[int] | None = None, log: Callable[[str], None] | None = None) -> dict:
    """Fit ``forward`` (as :func:`behaviour_clone` takes it) to the actions of a ``mjenv dataset`` folder
    (docs/dataset.md): masked cross-entropy on the recorded action and, when the network has a value output,
    mean squared error to the recorded return × ``reward_scale``.  ``agents``: learn only the decisions of these
    agent indices (``meta.source.agents``; default all).  Shards are visited in a shuffled order, decisions
    shuffled within each (:func:`mjenv.dataset.iter_batches`), one shard in memory at a time.

    Returns ``{"decisions", "epochs", "policy_loss" (per epoch), "value_loss" (per epoch), "agreement"}`` —
    agreement: the share of the last epoch's decisions with at least two legal actions where the network's
    greedy choice, before its update, was the recorded action."""
    from mjenv.dataset import iter_batches

    torch = _torch()
    if epochs < 1 or batch_size < 1:
        raise ValueError("clone_from_dataset: epochs and batch_size must be >= 1")
    opt = torch.optim.Adam(list(parameters), lr=lr)
    out = {"decisions": 0, "epochs": epochs, "policy_loss": [], "value_loss": [], "agreement": float("nan")}
    for e in range(epochs):
        losses, vlosses, hits, choices, seen = [], [], 0, 0, 0
        for batch in iter_batches(folder, batch_size, seed=seed + e):
            keep = np.isin(batch["agent"], agents) if agents is not None else np.ones(len(batch["action"]), bool)
            if not keep.any():
                continue
            x = torch.as_tensor(batch["obs"][keep].reshape(int(keep.sum()), -1))
            m = torch.as_tensor(batch["mask"][keep])
            y = torch.as_tensor(batch["action"][keep])
            logits, value = forward(x)
            logits = logits.masked_fill(~m, float("-inf"))
            choice = m.sum(1) >= 2
            hits += int(((logits.argmax(1) == y) & choice).sum())
            choices += int(choice.sum())
            ce = torch.nn.functional.cross_entropy(logits, y)
            loss = ce
            losses.append(ce.item())
            if value is not None:
                g = torch.as_tensor(batch["ret"][keep] * reward_scale)
                vloss = torch.nn.functional.mse_loss(value.reshape(-1), g)
                vlosses.append(vloss.item())
                loss = loss + vf_coef * vloss
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += int(keep.sum())
        out["policy_loss"].append(float(np.mean(losses)) if losses else float("nan"))
        out["value_loss"].append(float(np.mean(vlosses)) if vlosses else float("nan"))
        out["agreement"] = hits / choices if choices else float("nan")
        out["decisions"] = seen
        if log:
            log(f"[clone from {folder} {e + 1}/{epochs}] loss {out['policy_loss'][-1]:.3f}  "
                f"agreement {100 * out['agreement']:.1f}% of {choices} choices, {seen:,} decisions")
    return out
