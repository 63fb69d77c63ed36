"""Train a policy for mjenv: the wiring of the training stages, each in its own module under ``agents/training``.

This script owns the run: it reads the ``Args`` (:mod:`agents.training.config`: defaults, then a config file of
``configs/train/`` with ``--config NAME``, one TOML section per stage, then any ``--field value``), checks them
and resolves the rules once, builds the network, runs the stages in order and writes the run folder.

The stages of the all-seat trainer (``--trainer allseat``, the default):

1. **cloning** (``bc_rounds > 0``, :mod:`agents.training.clone`): DAgger-style behaviour cloning of ``bc_teacher``,
   the warm start of every shipped recipe; or, for the network-only ``--net resnet1d`` (``--config netclone``),
   **network-only cloning** (``netclone_sets > 0``, :mod:`agents.training.netclone`) from ``mjenv dataset``
   recordings of ``netclone_teacher``, with its held-out agreement curve; then, for a network-only policy,
   **qfit** (``qfit_seeds`` given, :mod:`agents.training.qfit`): label chunks of its own self-play whose every
   shortlisted candidate is valued by rollouts, and the all-actions policy gradient over them with a KL anchor;
2. **search distillation** (``distill_decisions > 0`` or ``--distill_labels``, ``--config distill``,
   :mod:`agents.training.distill`): self-play decisions labelled by the ``search`` agent's action values, the
   network fitted to depart from its advice where a verified search departure gains;
3. **the departure head** (``departure_decisions > 0`` or ``--departure_labels``, ``--config long``, the shipped
   kawuxing3 policy, :mod:`agents.training.departures`): a gain model over heuristic-flush's shortlist fitted on
   search-valued decisions and stored in the checkpoint; the policy plays an alternative where it predicts a gain;
4. **PPO** (``total_timesteps > 0``, :mod:`agents.training.ppo`, CleanRL-style in one file): one shared policy
   plays every seat of ``num_envs`` engine tables, every learner-seat decision is a sample; per-seat rewards and
   GAE over each seat's own decisions; a share ``frozen_share`` of the seats, drawn per hand, is played by the
   opponent pool; ``--ray [ADDRESS]`` runs the rollouts on ``ray_workers`` Ray actors with the learner here.

``--trainer sb3`` trains with sb3-contrib ``MaskablePPO`` on the vector env instead (:mod:`agents.training.sb3`).

Every ``eval_every`` samples, and at the end, the greedy policy plays a duplicate tournament against each of
``eval_opponents`` (:mod:`agents.training.runlog`).  Logs go to ``<out>/<run>/``: ``args.json``, ``eval.csv``,
``progress.csv``, a stage's report (``clone.json``, ``qfit.json``, ``distill.json``, ``departures.json``) and ``summary.json``;
checkpoints (``mjenv-policy-v1``, playable by ``evaluate.py`` and ``agents.make_agent``) to
``<out>/<run>/checkpoints/`` and ``<out>/<run>/final.pt``; ``--export PATH`` copies the final one (e.g. to
``agents/checkpoints/``).

Needs the training extra: ``pip install -e ".[train]"`` (torch; the SB3 trainer also stable-baselines3 and
sb3-contrib).  See ``docs/training.md`` for the configs and measured results.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Sequence

from agents import make_agent
from agents.players.policy import PolicyAgent, check_compatible, checkpoint_payload, load_checkpoint
from agents.script_args import ArgsError, parse_args, usage_errors
from agents.training.config import SECTIONS, Args, check_args
from agents.training.ppo import resolve_precision
from agents.training.runlog import duplicate_eval, final_meta, finish_run
from mjenv.encoding.observation import ObservationEncoder

__all__ = ["Args", "CONFIG_DIR", "check_args", "main", "train"]

CONFIG_DIR = Path(__file__).resolve().parent / "configs" / "train"


def main(argv: Sequence[str] | None = None) -> dict:
    """Train as configured by the command line; returns the final evaluation summary.

    Bad input is one ``train.py: error: ...`` line on stderr and exit status 2, before anything is written."""
    with usage_errors("train.py"):
        args, config = parse_args(Args, argv, config_dir=CONFIG_DIR, default_config="default", sections=SECTIONS)
        return train(args, config)


def train(args: Args, config: str | None = None) -> dict:
    """Run one training job (see the module docstring); returns the final evaluation summary.

    Bad arguments raise :class:`~agents.script_args.ArgsError` (:func:`check_args`) before anything is written."""
    rules = check_args(args)  # the rules, resolved once for the whole run and handed down
    requested = args.precision
    args = replace(args, precision=resolve_precision(args.precision, args.trainer))
    try:
        import torch

        if args.trainer == "sb3":
            import sb3_contrib  # noqa: F401
            import stable_baselines3  # noqa: F401
    except ModuleNotFoundError as exc:
        raise SystemExit(f"train.py needs {exc.name}: pip install torch==2.13.0 stable-baselines3 sb3-contrib tensorboard tqdm") from None

    # set-up: the network's input (observation, plus the advisor's rows with --advice), the opponents, the folder
    torch.set_num_threads(max(1, args.threads))
    torch.manual_seed(args.seed)
    obs_shape = ObservationEncoder(rules).shape
    features = advice_row = None
    if args.advice:
        from agents.players.advice import AdviceFeatures

        features = AdviceFeatures(args.variant, rules.options, args.advice_features)
        advice_row = obs_shape[0]
        obs_shape = (obs_shape[0] + features.rows, obs_shape[1])
    if args.derived:  # the derived rows the policy reads after the observation (mjenv/encoding/handfeat.py)
        from mjenv.encoding.handfeat import HandFeatures

        obs_shape = (obs_shape[0] + HandFeatures(rules).rows, obs_shape[1])
    arch = {"channels": args.channels, "hidden": args.hidden, **({"net": args.net, "blocks": args.blocks} if args.net else {})}
    run_name = args.run_name or f"{args.variant}__{args.exp_name}__{args.seed}__{int(time.time())}"
    folder = Path(args.out) / run_name
    fixed = {"random": make_agent("random", rules, seed=args.seed + 1)}
    init = None
    try:
        for name in args.opponents:
            if name not in ("random", "self") and name not in fixed:
                fixed[name] = make_agent(name, rules, seed=args.seed + 2)
        eval_agents = {name: make_agent(name, rules, seed=args.seed + 7) for name in args.eval_opponents}
        if args.init_checkpoint:
            init = load_checkpoint(args.init_checkpoint, rules)
            check_compatible(init, args.variant, rules.options, where=args.init_checkpoint)
    except ValueError as exc:  # a checkpoint that is unreadable or was trained on other rules
        raise ArgsError(str(exc)) from None
    if init is not None and (init.get("derived") or "") != args.derived:
        raise ArgsError(f"--init_checkpoint: its network reads derived rows {init.get('derived') or 'none'!r}, "
                        f"--derived is {args.derived or 'none'!r}")
    if init is not None and dict(init["arch"]) != arch:
        raise ArgsError(f"--init_checkpoint: architecture {init['arch']} differs from --channels/--hidden {arch}")
    try:
        (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArgsError(f"--out / --run_name: cannot create {folder}: {exc.strerror or exc}") from None
    (folder / "args.json").write_text(json.dumps({"config": config, **asdict(args), "precision_requested": requested},
                                                   indent=2), encoding="utf-8")
    if args.trainer == "sb3":
        from agents.training.sb3 import train_sb3

        return train_sb3(args, config, rules, folder, run_name, obs_shape, features, advice_row, fixed, eval_agents, init)
    return train_allseat(args, config, rules, folder, run_name, obs_shape, features, eval_agents, init)


def train_allseat(args: Args, config: str | None, rules, folder: Path, run_name: str, obs_shape, features,
                  eval_agents: dict, init: dict | None) -> dict:
    """The all-seat trainer: a :class:`~agents.training.ppo.SeatNet` (from ``init`` when given) through the stages
    the arguments ask for — cloning, distillation, the departure head, PPO — then the final evaluation, the
    final checkpoint and ``summary.json``.  Returns the summary."""
    import torch

    from agents.training.ppo import SeatNet, critic_rows, run_stage

    torch.set_num_threads(max(1, args.threads))
    torch.manual_seed(args.seed)
    advice_row = obs_shape[0] - features.rows if features is not None else None
    net = SeatNet(obs_shape, args.channels, args.hidden, args.value_hidden, advice_row, args.advice_weight,
                  precision=args.precision, net=args.net or None, blocks=args.blocks,
                  critic_rows=critic_rows(rules) if args.oracle_critic else 0)
    if init is not None:
        net.trunk.load_state_dict(init["trunk"])
        net.head.load_state_dict(init["head"])
    clone_report = distilled = departures = improved = None
    if args.netclone_sets > 0:
        from agents.players.policy import resolve_device
        from agents.training.netclone import netclone_stage

        clone_report = netclone_stage(net.to(resolve_device(args.device)), args, rules.options, folder)
    if args.qfit_seeds:
        from agents.players.policy import resolve_device
        from agents.training.qfit import qfit_stage

        improved = qfit_stage(net.to(resolve_device(args.device)), args, rules, folder)
    if args.bc_rounds > 0:
        from agents.training.clone import clone_stage

        clone_report = clone_stage(net, args, rules, features, folder)
    if args.distill_decisions > 0 or args.distill_labels:
        from agents.training.distill import distill_stage

        distilled = distill_stage(net, args, rules, features, folder)
    if args.departure_decisions > 0 or args.departure_labels:
        from agents.training.departures import departure_stage

        departures = departure_stage(args, rules, folder)

    def payload(step: int, extra: dict | None = None) -> dict:
        """The learner's checkpoint at ``step`` (its network, the departure head when fitted)."""
        meta = {"algo": "allseat-ppo", "run": run_name, "timesteps": int(step), "seed": args.seed,
                "config": config or "", "precision": args.precision, **(extra or {})}
        return checkpoint_payload(net.trunk, net.head, variant=rules.variant, options=rules.options, obs_shape=obs_shape,
                                  arch=net.arch, meta={**meta, **({"netclone": clone_report} if args.netclone_sets else {}),
                                                                   **({"qfit": improved} if improved else {})},
                                  features=features.version if features is not None else None, departures=departures,
                                  derived=args.derived or None)

    eval_rows: list[dict] = []
    title = f"{run_name} ({config or 'args'}, all-seat)"

    def evaluate(step: int, walls: int, first_wall: int) -> dict:
        """The greedy learner's duplicate evaluation against each of ``eval_opponents``."""
        learner = PolicyAgent(payload(step), rules, deterministic=True, name="learner")
        return duplicate_eval(learner, eval_agents, args, rules, step, walls, first_wall, eval_rows, folder, title)

    ppo = run_stage(net, args, rules, obs_shape, features, payload=payload, evaluate=evaluate, folder=folder,
                    warm=clone_report is not None or distilled is not None or departures is not None
                    or improved is not None)
    final = evaluate(ppo["steps"], args.final_eval_walls, 1_000_000)
    worker_cpu = ppo["rollout_worker_cpu_seconds"]
    ck = payload(ppo["steps"], {**final_meta(final, ppo["seconds"], ppo["cpu_seconds"]),
                                "rollout_worker_cpu_seconds": worker_cpu})
    return finish_run(args, folder, ck, {
        "run": run_name, "folder": str(folder), "trainer": "allseat", "precision": args.precision,
        "steps": ppo["steps"], "seconds": ppo["seconds"], "cpu_seconds": ppo["cpu_seconds"],
        "rollout_worker_cpu_seconds": worker_cpu, "iterations": ppo["iterations"], "final_eval": final,
        **({"value_warmup": ppo["value_warmup"]} if ppo["value_warmup"] else {}),
        "options": rules.options_dict()})


if __name__ == "__main__":
    main()
