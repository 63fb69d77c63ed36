"""Self-play PPO for mjenv (CleanRL-style single file): an all-seat PPO loop on the batched engine (the default,
``--trainer allseat``) or sb3-contrib ``MaskablePPO`` on the batched vector env (``--trainer sb3``).

This script owns training: the ``Args`` of a run (defaults from ``configs/train/default.toml``, another
config with ``--config long``, any field overridable as ``--field value``), the opponent pool, the
policy network wiring, periodic evaluation, logs and checkpoints.

The all-seat trainer (:func:`train_allseat`, its parts in :mod:`agents.training.ppo`): one shared policy plays every
seat of ``num_envs`` engine tables and every learner-seat decision is a sample; per-seat rewards (each seat's own
money) and GAE over each seat's own decisions; a share ``frozen_share`` of the seats, drawn per hand, is played by
the opponent pool; ``--ray [ADDRESS]`` runs the rollouts on ``ray_workers`` Ray actors with the learner here.
With ``distill_decisions > 0`` (``--config distill``) a search-distillation stage (:mod:`agents.training.distill`) runs
between the cloning warm start and PPO: self-play decisions labelled by the ``search`` agent's action values, the
network fitted to depart from its advice where a verified search departure gains.  With ``departure_decisions > 0``
(``--config long``, the shipped kawuxing3 policy) a departure head (:mod:`agents.players.departures`) is fitted on
search-valued decisions of heuristic-flush self-play and stored in the checkpoint: the policy then plays an
alternative from heuristic-flush's shortlist where the head predicts it gains.

What happens in the SB3 path:

* ``num_envs`` engine tables (:func:`mjenv.envs.vector.sb3_vec_env`), each with one learner seat (rotating
  over seats and dealers); the other seats are played by an **opponent pool** drawn per hand: ``random``,
  ``heuristic`` and ``self`` (frozen snapshots of the learner taken every ``snapshot_every`` steps, the
  last ``pool_size`` kept), with ``opponent_weights``;
* the policy is :func:`agents.players.policy.make_trunk` (1-D convolutions over the 34 tile columns + one dense
  layer) with a linear action head and a small value head; illegal actions are masked;
* rewards are the learner's money × ``reward_scale`` (the scale the cloning step fits the value head to);
  ``--advice`` appends the :mod:`agents.players.advice` look-ahead rows to the policy's input and adds the heuristic's
  advice to its logits with a learned weight; ``--oracle_critic`` gives the value head its own trunk over the
  observation plus the oracle rows (:class:`LearnerInputs`), which the policy never sees;
* every ``eval_every`` steps the greedy policy plays a duplicate tournament (:mod:`agents.tournament.arena`) against each
  of ``eval_opponents``; the score per hand with its 95% CI is printed and logged;
* logs go to ``<out>/<run>/``: ``progress.csv`` and TensorBoard events (SB3 logger), ``eval.csv``; checkpoints
  (``mjenv-policy-v1``, playable by ``evaluate.py`` and ``agents.make_agent``) to ``<out>/<run>/checkpoints/``
  and ``<out>/<run>/final.pt``; ``--export PATH`` copies the final one (e.g. to ``agents/checkpoints/``).

Needs the training extra: ``pip install torch==2.13.0 stable-baselines3 sb3-contrib tensorboard tqdm``.
See ``docs/training.md`` for the configs and measured results.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from agents import BUILTIN, make_agent
from agents.tournament.arena import json_text, pairwise, play_duplicate, summarize
from agents.players.policy import (DEFAULT_ARCH, PolicyAgent, check_compatible, checkpoint_payload, load_checkpoint, make_head,
                           make_trunk, save_checkpoint)
from mjenv.encoding.actions import N_ACTIONS
from agents.script_args import ArgsError, check_numbers, parse_args, usage_errors
from agents.training.ppo import resolve_precision
from mjenv.encoding.observation import OBS_VERSION, ObservationEncoder, OracleEncoder, encoder_for
from mjenv.rules.options import OptionError, load_rules, options_to_dict, parse_option_assignments

CONFIG_DIR = Path(__file__).resolve().parent / "configs" / "train"


@dataclass
class Args:
    """Self-play MaskablePPO training for mjenv (see the module docstring of train.py)."""

    exp_name: str = "ppo"
    """experiment name, part of the run folder name"""
    seed: int = 1
    """seed of the walls, the network initialisation and the opponents"""
    variant: str = "kawuxing3"
    """game variant: kawuxing3, kawuxing4, gejiu, diedaohu, yangzhou, yangzhou_new or liuwei"""
    ruleset: str | None = None
    """ruleset name (when not given: the variant's default; `mjenv rules --variant V` lists them)"""
    preset: str | None = None
    """preset name applied on top of the ruleset"""
    options: list[str] = field(default_factory=list)
    """explicit rule options as name=value"""
    total_timesteps: int = 320_000
    """learner decisions to train for"""
    num_envs: int = 64
    """engine tables played at once (one learner seat each)"""
    n_steps: int = 128
    """steps per table per rollout (rollout size = n_steps * num_envs)"""
    batch_size: int = 1024
    """minibatch size of the PPO update"""
    n_epochs: int = 4
    """PPO epochs per rollout"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to zero"""
    gamma: float = 0.995
    """discount per learner decision (a hand is about 18 of them)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_range: float = 0.2
    """PPO clip range"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    reward_scale: float = 0.1
    """rewards are money in base stakes times this (a hand moves up to about ±16)"""
    channels: int = DEFAULT_ARCH["channels"]
    """convolution channels of the trunk"""
    hidden: int = DEFAULT_ARCH["hidden"]
    """width of the trunk's dense layer (the policy features)"""
    value_hidden: int = 64
    """hidden layer of the value head"""
    init_checkpoint: str | None = None
    """start from this checkpoint's trunk and action head (same variant, options and architecture)"""
    opponents: list[str] = field(default_factory=lambda: ["random", "heuristic", "self"])
    """opponent pool: random, heuristic, self (past snapshots of the learner) or checkpoint paths"""
    opponent_weights: list[float] = field(default_factory=lambda: [0.6, 0.2, 0.2])
    """probability of each pool entry per hand"""
    snapshot_every: int = 80_000
    """steps between snapshots of the learner added to the 'self' pool"""
    pool_size: int = 5
    """snapshots kept in the 'self' pool"""
    eval_every: int = 80_000
    """steps between evaluations (0: only at the end)"""
    eval_walls: int = 40
    """walls per evaluation opponent (each played under 6 seatings in 3p)"""
    final_eval_walls: int = 100
    """walls of the final evaluation"""
    eval_opponents: list[str] = field(default_factory=lambda: ["heuristic", "random"])
    """opponents of the periodic and final evaluations"""
    save_every: int = 80_000
    """steps between checkpoints"""
    out: str = "runs/train"
    """output folder; each run writes into a subfolder"""
    run_name: str | None = None
    """subfolder name (default: <variant>__<exp_name>__<seed>__<unix time>)"""
    export: str | None = None
    """also copy the final checkpoint here (e.g. agents/checkpoints/kawuxing3-default.pt)"""
    threads: int = 2
    """torch CPU threads"""
    tensorboard: bool = True
    """write TensorBoard events (needs tensorboard)"""
    progress: bool = True
    """show a progress bar (needs tqdm)"""
    lr_final: float = 0.0
    """with anneal_lr: the learning rate reached at the end (linear from learning_rate)"""
    ent_coef_final: float | None = None
    """entropy bonus reached at the end, linearly from ent_coef (none: constant ent_coef)"""
    bc_rounds: int = 0
    """behaviour-cloning rounds before PPO (0: none; agents/training/clone.py), teacher = bc_teacher"""
    bc_teacher: str = "heuristic"
    """the agent cloned (a built-in name or a checkpoint path)"""
    bc_tables: int = 128
    """tables played per cloning round"""
    bc_steps: int = 48
    """learner decisions per table per cloning round"""
    bc_epochs: int = 2
    """passes over each round's states"""
    bc_lr: float = 1e-3
    """Adam learning rate of the cloning step"""
    bc_teacher_fraction: float = 0.5
    """DAgger: the teacher's share of the learner's moves falls from 1 to 0 over this fraction of the rounds"""
    bc_policy_weight: float = 1.0
    """weight of the cloning cross-entropy (0: the warm start fits the value head only, e.g. with --advice)"""
    curve: bool = True
    """write learning_curve.png (eval margins against steps; needs matplotlib)"""
    advice: bool = False
    """append the heuristic-advice-v1 look-ahead features (agents/players/advice.py) to the observation and add the
    heuristic's advice to the action logits with a learned weight"""
    advice_features: str = "heuristic-advice-v1"
    """with advice: the feature set (agents/players/advice.py FEATURE_SETS: v1 advises the heuristic's move, v2 the
    heuristic-flush player's)"""
    advice_weight: float = 2.0
    """with advice: the starting weight of the advice in the logits"""
    oracle_critic: bool = False
    """the value head reads, through its own trunk, the observation plus the oracle rows (every hand, the wall
    order); the policy never sees them and checkpoints hold the policy alone"""
    trainer: str = "allseat"
    """allseat: this file's PPO loop, one shared policy playing every seat of num_envs engine tables, each seat's
    decisions a sample (agents/training/ppo.py); sb3: sb3-contrib MaskablePPO with one learner seat per table"""
    frozen_share: float = 0.0
    """allseat: share of the seats, drawn per hand, played by the opponent pool instead of the learner"""
    ray: str | None = field(default=None, metadata={"const": "local"})
    """allseat: run the rollouts on Ray actors, the learner here (pip install -e .[ray]): bare --ray starts a
    local Ray, --ray ADDRESS joins a cluster (auto, HOST:6379 or ray://HOST:10001)"""
    ray_workers: int = 2
    """with --ray: rollout workers (Ray actors, one CPU each), each with num_envs tables and a copy of the policy"""
    precision: str = "auto"
    """allseat: arithmetic of the policy network's trunk in rollouts and updates: fp32, bf16 (bfloat16 autocast
    with float32 weights, heads and losses; needs a CPU with native bfloat16, AVX512-BF16 or AMX), or auto (bf16
    where the CPU has it, else fp32; the sb3 trainer always runs fp32); args.json, summary.json and the checkpoint's
    meta record the precision used"""
    distill_decisions: int = 0
    """allseat: search distillation after cloning (agents/training/distill.py): decisions of heuristic-flush self-play
    labelled by the search agent's action values (0: no distillation stage)"""
    distill_labels: list[str] = field(default_factory=list)
    """label files (agents.training.distill.save_labels, e.g. a run's distill_labels.npz) to fit instead of labelling afresh"""
    distill_seed: int = 2000
    """seed of the labelling self-play; chunk i of 5,000 decisions plays the walls of seed distill_seed + i"""
    distill_tables: int = 64
    """tables of the labelling self-play"""
    distill_label_prob: float = 0.25
    """probability that a decision with two or more candidates is labelled"""
    distill_worlds: int = 32
    """sampled worlds per candidate of the screening search (every candidate in the same worlds)"""
    distill_candidates: int = 3
    """candidates per labelled decision (the compiled player's shortlist, its own choice first)"""
    distill_verify_worlds: int = 128
    """fresh worlds in which the screen's best alternative is played again against the player's choice (0: none;
    targets then come from the screen)"""
    distill_screen_z: float = 0.5
    """standard errors by which the screen's best alternative must lead to be verified"""
    distill_z: float = 2.0
    """a departure from the advice is a target where its (verified) gain exceeds this many standard errors"""
    distill_min_gain: float = 0.0
    """and exceeds this much money per decision"""
    distill_epochs: int = 8
    """passes of the distillation fit over the labelled decisions"""
    distill_lr: float = 0.001
    """Adam learning rate of the distillation fit"""
    distill_departure_weight: float = 1.0
    """weight of a departure target in the cross-entropy (keeping the advice weighs 1)"""
    distill_soft: bool = False
    """soft targets (agents.training.distill.soft_targets): each verified alternative gets the probability that it gains,
    Φ(gain / standard error), instead of a hard departure at distill_z"""
    departure_decisions: int = 0
    """allseat: fit a departure head (agents/players/departures.py) on this many decisions of heuristic-flush self-play, each
    candidate of the player's shortlist valued by rollouts in shared sampled worlds (0: no departure head)"""
    departure_labels: list[str] = field(default_factory=list)
    """label files (e.g. a run's departure_labels.npz, or agents.training.distill.save_labels files made with 3 candidates)
    to fit the departure head on instead of labelling afresh"""
    departure_seed: int = 3000
    """seed of the departure labelling; chunk i of 5,000 decisions plays the walls of seed departure_seed + i"""
    departure_worlds: int = 32
    """sampled worlds per candidate in the departure labels"""
    departure_holdout: float = 0.1
    """share of the labelled decisions (the last chunks) kept out of the fit, on which the run reports the gain"""
    departure_tau: float = 0.1
    """the policy departs where the head's predicted gain over the advisor's choice exceeds this (money per hand)"""
    departure_members: int = 5
    """MLPs in the departure head's ensemble (their mean is the prediction)"""
    departure_hidden: int = 64
    """units per hidden layer of each member"""
    departure_epochs: int = 20
    """passes of each member's least-squares fit over the labelled alternatives"""


# ------------------------------------------------------------------------------------------ opponents


class OpponentPool:
    """The vector env's opponent policy: each hand (episode id) is given one pool entry, by weight.

    The env calls it with the rows of every table whose non-learner seat must act; which tables those are is
    read back from the env core (same ``actor != learner seat`` rule) so each row can be routed to the agent
    drawn for its table's hand.
    """

    uses_obs = True

    def __init__(self, core, entries: list[str], weights: Sequence[float], agents: dict[str, Any], seed: int):
        if len(entries) != len(weights):
            raise ValueError(f"{len(entries)} opponents but {len(weights)} weights")
        w = np.asarray(weights, dtype=np.float64)
        if (w < 0).any() or w.sum() <= 0:
            raise ValueError(f"opponent weights must be >= 0 with a positive sum, got {list(weights)}")
        self.core = core
        self.entries = list(entries)
        self.cum = np.cumsum(w / w.sum())
        self.agents = agents
        self.snapshots: list[Any] = []
        self.seed = seed
        self.hands = {e: 0 for e in entries}

    def entry_of(self, episodes: np.ndarray) -> np.ndarray:
        """Index into ``entries`` for each episode id (a fixed hash, so a hand keeps its opponent)."""
        u = ((episodes.astype(np.uint64) * np.uint64(2654435761) + np.uint64(self.seed * 97 + 13)) % np.uint64(2**32)) / 2**32
        return np.minimum(np.searchsorted(self.cum, u, side="right"), len(self.entries) - 1)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        st = self.core.engine.state
        tables = np.flatnonzero(st.actor != self.core.seat)
        if len(tables) != len(mask):
            raise RuntimeError("opponent pool: the env asked for other tables than actor != learner seat")
        episodes = self.core.episode[tables]
        which = self.entry_of(episodes)
        out = np.zeros(len(mask), dtype=np.int64)
        for k in np.unique(which):
            rows = np.flatnonzero(which == k)
            name = self.entries[k]
            if name == "self":
                if not self.snapshots:
                    agent = self.agents["random"]
                    out[rows] = agent.act(None, mask[rows])
                    continue
                pick = episodes[rows] % len(self.snapshots)
                for j in np.unique(pick):
                    sub = rows[pick == j]
                    out[sub] = self.snapshots[j].act(obs[sub], mask[sub])
            else:
                out[rows] = self.agents[name].act(obs[rows], mask[rows])
        return out

    def add_snapshot(self, agent, keep: int) -> None:
        """Add a frozen learner to the 'self' entry, keeping the newest ``keep``."""
        self.snapshots.append(agent)
        del self.snapshots[:-keep]


class LearnerInputs:
    """What the learner's networks read beyond the observation: the :mod:`agents.players.advice` rows (``--advice``,
    seen by policy and critic) and the oracle rows (``--oracle_critic``: every seat's hand, locks and the wall
    order, :class:`mjenv.encoding.observation.OracleEncoder`, read by the critic alone), appended in that order."""

    def __init__(self, variant: str, opts, features, oracle: bool):
        self.features = features
        self.oracle = oracle
        self.n_obs_rows = ObservationEncoder(variant, opts).shape[0]
        self.oracle_rows = OracleEncoder(variant, opts).shape[0] - self.n_obs_rows if oracle else 0
        self.active = features is not None or oracle
        self.extra_rows = (features.rows if features is not None else 0) + self.oracle_rows

    def extend(self, obs: np.ndarray, mask: np.ndarray, core=None) -> np.ndarray:
        """``float32 [B, rows, 34]`` for a batch ``obs`` of every table of ``core`` (a ``LearnerTables``), seen
        from its learner seats."""
        obs = np.asarray(obs, dtype=np.float32).reshape(len(mask), self.n_obs_rows, -1)
        parts = [obs]
        if self.features is not None:
            parts.append(self.features.encode(obs, mask))
        if self.oracle:
            if core is None or core.B != len(obs):
                raise ValueError("the oracle rows need the LearnerTables whose every table the batch shows")
            full = encoder_for(core.engine, True).encode(core.engine.state, core.seat, engine=core.engine)
            parts.append(full[:, self.n_obs_rows :])
        return np.concatenate(parts, axis=1)


def learner_vec_env(venv, inputs: LearnerInputs, reward_scale: float):
    """``venv`` (flat observations) as the learner sees it: rewards times ``reward_scale`` (so the value targets
    are those of the cloning warm start and the value loss does not swamp the policy's gradient under
    ``max_grad_norm``), and the :class:`LearnerInputs` rows appended to every observation.

    A terminal observation (a finished hand: no legal action) gets zero extra rows; PPO never bootstraps
    from it, since hands end and are not cut short."""
    from gymnasium import spaces
    from stable_baselines3.common.vec_env import VecEnvWrapper

    core = venv.core
    extra = inputs.extra_rows

    class LearnerVecEnv(VecEnvWrapper):
        """Scales the wrapped env's rewards and appends the learner's extra input rows to its observations."""

        def __init__(self):
            low = np.concatenate([venv.observation_space.low, np.zeros(extra * 34, np.float32)])
            high = np.concatenate([venv.observation_space.high, np.ones(extra * 34, np.float32)])
            super().__init__(venv, observation_space=spaces.Box(low, high, dtype=np.float32))
            self.core = core

        def _extend(self, obs):
            if not extra:
                return obs
            return inputs.extend(obs, venv.action_masks(), core).reshape(len(obs), -1)

        def reset(self):
            return self._extend(venv.reset())

        def step_wait(self):
            obs, rew, done, infos = venv.step_wait()
            for info in infos:
                if "terminal_observation" in info:
                    t = info["terminal_observation"]
                    info["terminal_observation"] = np.concatenate([t, np.zeros(extra * 34, np.float32)])
            return self._extend(obs), rew * np.float32(reward_scale), done, infos

        def action_masks(self):
            return venv.action_masks()

    return LearnerVecEnv()


# ------------------------------------------------------------------------------------------ warm start, curve


def warm_start(model, args: Args, opts, folder: Path, features=None):
    """Behaviour-clone ``args.bc_teacher`` into the PPO policy (trunk, action head and value head); writes
    ``clone.json`` in the run folder and returns the :class:`agents.training.clone.CloneReport`."""
    import torch

    from agents.training.clone import behaviour_clone

    pol = model.policy

    def forward(x):
        feats = pol.extract_features(x)
        if pol.share_features_extractor:
            latent_pi, latent_vf = pol.mlp_extractor(feats)
        else:  # the oracle critic: the value head has its own trunk over the wider input
            latent_pi, latent_vf = pol.mlp_extractor.forward_actor(feats[0]), pol.mlp_extractor.forward_critic(feats[1])
        return pol.action_net(latent_pi), pol.value_net(latent_vf)

    teacher = make_agent(args.bc_teacher, args.variant, opts, seed=args.seed + 3)
    pol.set_training_mode(True)
    report = behaviour_clone(
        forward, pol.parameters(), args.variant, opts, teacher=teacher, rounds=args.bc_rounds, tables=args.bc_tables,
        steps_per_round=args.bc_steps, epochs=args.bc_epochs, lr=args.bc_lr, vf_coef=args.vf_coef, gamma=args.gamma,
        reward_scale=args.reward_scale, teacher_fraction=args.bc_teacher_fraction, seed=args.seed + 100,
        log=lambda m: print(m, flush=True), features=features, policy_weight=args.bc_policy_weight)
    pol.set_training_mode(False)
    with torch.no_grad():  # PPO's own optimiser starts fresh on the cloned weights
        pol.optimizer = pol.optimizer_class(pol.parameters(), lr=model.lr_schedule(1), **pol.optimizer_kwargs)
    (folder / "clone.json").write_text(json.dumps(asdict(report), indent=2), encoding="utf-8")
    return report


def write_curve(rows: list[dict], path: Path, title: str) -> None:
    """Plot the evaluation margin (and its 95 % CI) against each opponent to ``path``: over training steps, and,
    when the rows carry ``cpu_seconds`` (the process's CPU time at each evaluation), over CPU minutes beside it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError:
        return
    axes_x = [("step", "learner steps (0 = after behaviour cloning)", 1.0)]
    if all("cpu_seconds" in r for r in rows):
        axes_x.append(("cpu_seconds", "CPU minutes of this process (training and evaluations)", 60.0))
    fig, axes = plt.subplots(1, len(axes_x), figsize=(7 * len(axes_x), 4), squeeze=False)
    for ax, (key, label, scale) in zip(axes[0], axes_x):
        for name in dict.fromkeys(r["opponent"] for r in rows):
            pts = [r for r in rows if r["opponent"] == name]
            x = np.array([float(r[key]) / scale for r in pts])
            y = np.array([r["margin"] for r in pts])
            e = np.array([r["margin_ci95"] for r in pts])
            ax.plot(x, y, marker="o", label=f"vs {name}")
            ax.fill_between(x, y - e, y + e, alpha=0.2)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xlabel(label)
        ax.set_ylabel("duplicate margin per hand (policy - opponent)")
        ax.legend()
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def duplicate_eval(learner, eval_agents: dict, args: Args, opts, step: int, walls: int, first_wall: int,
                   rows: list[dict], folder: Path, title: str) -> dict:
    """The greedy ``learner`` against each evaluation opponent in a duplicate tournament (``walls`` walls from
    ``first_wall``); prints one line per opponent, appends the rows to ``rows`` and rewrites ``eval.csv`` (and
    the learning curve).  Returns ``{opponent: row}``."""
    out = {}
    for name, opp in eval_agents.items():
        res = play_duplicate([learner, opp], args.variant, opts, walls=walls, seed=10_000 + args.seed,
                             first_wall=first_wall, batch_size=min(256, walls * 6))
        st = {s["agent"]: s for s in summarize(res)}["learner"]
        margin = next(p for p in pairwise(res))
        signed = margin["margin"] if margin["a"] == "learner" else -margin["margin"]
        row = {"step": step, "opponent": name, "score": st["mean"], "ci95": st["ci95"], "margin": signed,
               "margin_ci95": margin["ci95"], "win_rate": st["win_rate"], "deal_in_rate": st["deal_in_rate"],
               "liang_rate": st["liang_rate"], "hands": len(res.records), "cpu_seconds": round(time.process_time(), 1)}
        out[name] = row
        rows.append(row)
        print(f"[eval @ {step:>9,}] vs {name:<10} score/hand {st['mean']:+.3f} ± {st['ci95']:.3f}  "
              f"(margin {signed:+.3f} ± {margin['ci95']:.3f}, win {100 * st['win_rate']:.1f}%, "
              f"deal-in {100 * st['deal_in_rate']:.1f}%, {len(res.records)} hands)", flush=True)
    with open(folder / "eval.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    if args.curve:
        write_curve(rows, folder / "learning_curve.png", title)
    return out


# ------------------------------------------------------------------------------------------ all-seat trainer


def seat_spec(args: Args, opts, obs_shape, features) -> dict:
    """The plain-dict description of a rollout worker (:class:`agents.training.ppo.SeatRollouts`) for ``args``."""
    return {"variant": args.variant, "options": options_to_dict(opts, args.variant), "obs_shape": list(obs_shape),
            "channels": args.channels, "hidden": args.hidden, "value_hidden": args.value_hidden,
            "advice": features.version if features is not None else None, "num_tables": args.num_envs,
            "n_steps": args.n_steps, "seed": args.seed, "gamma": args.gamma, "gae_lambda": args.gae_lambda,
            "reward_scale": args.reward_scale, "opponents": list(args.opponents),
            "opponent_weights": list(args.opponent_weights), "frozen_share": args.frozen_share, "threads": args.threads,
            "precision": args.precision}


def train_allseat(args: Args, config: str | None, opts, folder: Path, run_name: str, obs_shape, features,
                  eval_agents: dict, init: dict | None) -> dict:
    """The all-seat PPO loop (``--trainer allseat``, :mod:`agents.training.ppo`): rollouts on ``num_envs`` tables
    (locally, or on ``ray_workers`` Ray actors with ``--ray``), then ``n_epochs`` of PPO on every learner-seat
    decision; snapshots, checkpoints and evaluations as in the SB3 path.  Returns the summary."""
    import torch

    from agents.training.ppo import SeatNet, SeatRollouts, merge_batches, ppo_update, remote_rollouts

    torch.set_num_threads(max(1, args.threads))
    torch.manual_seed(args.seed)
    spec = seat_spec(args, opts, obs_shape, features)
    advice_row = obs_shape[0] - features.rows if features is not None else None
    net = SeatNet(obs_shape, args.channels, args.hidden, args.value_hidden, advice_row, args.advice_weight,
                  precision=args.precision)
    if init is not None:
        net.trunk.load_state_dict(init["trunk"])
        net.head.load_state_dict(init["head"])
    arch = {"channels": args.channels, "hidden": args.hidden}
    clone_report = None
    if args.bc_rounds > 0:
        from agents.training.clone import behaviour_clone

        teacher = make_agent(args.bc_teacher, args.variant, opts, seed=args.seed + 3)
        net.train()
        clone_report = behaviour_clone(
            net, net.parameters(), args.variant, opts, teacher=teacher, rounds=args.bc_rounds, tables=args.bc_tables,
            steps_per_round=args.bc_steps, epochs=args.bc_epochs, lr=args.bc_lr, vf_coef=args.vf_coef, gamma=args.gamma,
            reward_scale=args.reward_scale, teacher_fraction=args.bc_teacher_fraction, seed=args.seed + 100,
            log=lambda m: print(m, flush=True), features=features, policy_weight=args.bc_policy_weight)
        net.eval()
        (folder / "clone.json").write_text(json.dumps(asdict(clone_report), indent=2), encoding="utf-8")
    distilled = distill_stage(net, args, opts, features, folder) if args.distill_decisions > 0 or args.distill_labels else None
    departures = departure_stage(args, opts, folder) if args.departure_decisions > 0 or args.departure_labels else None
    # SB3's Adam settings; the fused kernel takes a third of the time of the default per-tensor loop on CPU
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5, fused=True)
    rng = np.random.default_rng(args.seed)

    def payload(step: int, extra: dict | None = None) -> dict:
        meta = {"algo": "allseat-ppo", "run": run_name, "timesteps": int(step), "seed": args.seed,
                "config": config or "", "precision": args.precision, **(extra or {})}
        return checkpoint_payload(net.trunk, net.head, variant=args.variant, options=opts, obs_shape=obs_shape,
                                  arch=arch, meta=meta, features=features.version if features is not None else None,
                                  departures=departures)

    eval_rows: list[dict] = []
    title = f"{run_name} ({config or 'args'}, all-seat)"

    def evaluate(step: int, walls: int, first_wall: int) -> dict:
        learner = PolicyAgent(payload(step), args.variant, opts, deterministic=True, name="learner")
        return duplicate_eval(learner, eval_agents, args, opts, step, walls, first_wall, eval_rows, folder, title)

    ray = None
    if args.ray is not None:
        from agents.tournament.distributed import connect

        ray = connect(args.ray, args.ray_workers)
        workers = remote_rollouts(ray, spec, args.ray_workers)
    else:
        workers = [SeatRollouts(spec, 0)]
        torch.set_num_threads(max(1, args.threads))

    def on_workers(method: str, *a):
        if ray is None:
            return [getattr(w, method)(*a) for w in workers]
        return ray.get([getattr(w, method).remote(*a) for w in workers])

    if "self" in args.opponents and args.frozen_share > 0:
        on_workers("add_snapshot", payload(0), args.pool_size)
    if (clone_report is not None or distilled is not None or departures is not None) and args.eval_every > 0:  # the warm-started policy
        evaluate(0, args.eval_walls, 0)
    progress_rows: list[dict] = []
    steps = iteration = 0
    next_eval = args.eval_every if args.eval_every > 0 else None
    next_save, next_snap = args.save_every, args.snapshot_every
    started, cpu0 = time.perf_counter(), time.process_time()
    rollout_cpu = 0.0
    print(f"run {run_name}: {args.variant}, all-seat PPO ({args.precision}), {args.total_timesteps:,} samples, "
          f"{len(workers)} worker(s) × {args.num_envs} tables × {args.n_steps} steps, frozen share {args.frozen_share} "
          f"({dict(zip(args.opponents, args.opponent_weights))}), obs {OBS_VERSION} {tuple(obs_shape)}", flush=True)
    while steps < args.total_timesteps:
        state = {k: v.detach().clone() for k, v in net.state_dict().items()}
        if ray is None:
            parts = [w.collect(state) for w in workers]
            torch.set_num_threads(max(1, args.threads))
        else:
            ref = ray.put(state)
            parts = ray.get([w.collect.remote(ref) for w in workers])
        batch = merge_batches(parts)
        rollout_cpu += batch["stats"]["cpu"]
        frac = min(1.0, steps / args.total_timesteps)
        lr = args.lr_final + (args.learning_rate - args.lr_final) * (1 - frac) if args.anneal_lr else args.learning_rate
        ent = args.ent_coef if args.ent_coef_final is None else args.ent_coef + (args.ent_coef_final - args.ent_coef) * frac
        logs = ppo_update(net, optimizer, batch, epochs=args.n_epochs, batch_size=args.batch_size,
                          clip_range=args.clip_range, ent_coef=ent, vf_coef=args.vf_coef,
                          max_grad_norm=args.max_grad_norm, lr=lr, rng=rng)
        steps += batch["stats"]["samples"]
        iteration += 1
        money = {k: float(np.mean(v)) for k, v in batch["stats"]["money"].items() if v}
        row = {"iteration": iteration, "samples": steps, "hands": batch["stats"]["hands"], "lr": lr, "ent_coef": ent,
               **logs, "rollout_cpu": round(batch["stats"]["cpu"], 3), "cpu": round(time.process_time() - cpu0, 2),
               "wall": round(time.perf_counter() - started, 2), **{f"money_{k}": v for k, v in money.items()}}
        progress_rows.append(row)
        del parts, batch  # the rollout's sample buffer is free again: the next rollout reuses it (agents.training.ppo)
        if args.progress:
            print(f"[iter {iteration:>4}] {steps:>9,} samples  policy {logs['policy_loss']:+.4f}  value "
                  f"{logs['value_loss']:.4f}  entropy {logs['entropy']:.3f}  kl {logs['approx_kl']:.4f}  "
                  + " ".join(f"{k}:{v:+.2f}" for k, v in money.items()), flush=True)
        if steps >= next_snap:
            next_snap += args.snapshot_every
            if "self" in args.opponents and args.frozen_share > 0:
                on_workers("add_snapshot", payload(steps), args.pool_size)
        if steps >= next_save:
            next_save += args.save_every
            save_checkpoint(folder / "checkpoints" / f"step_{steps:09d}.pt", payload(steps))
        if next_eval is not None and steps >= next_eval:
            next_eval += args.eval_every
            evaluate(steps, args.eval_walls, 0)
    train_seconds, train_cpu = time.perf_counter() - started, time.process_time() - cpu0
    with open(folder / "progress.csv", "w", newline="", encoding="utf-8") as f:
        keys = list(dict.fromkeys(k for r in progress_rows for k in r))
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(progress_rows)
    print(f"trained {steps:,} samples in {train_seconds:.0f} s ({train_cpu:.0f} CPU s here"
          + (f", {rollout_cpu:.0f} CPU s in the rollout workers" if ray is not None else "") + ")", flush=True)
    final = evaluate(steps, args.final_eval_walls, 1_000_000)
    worker_cpu = round(rollout_cpu, 1) if ray is not None else None
    ck = payload(steps, {**final_meta(final, train_seconds, train_cpu), "rollout_worker_cpu_seconds": worker_cpu})
    return finish_run(args, folder, ck, {
        "run": run_name, "folder": str(folder), "trainer": "allseat", "precision": args.precision, "steps": steps,
        "seconds": train_seconds, "cpu_seconds": train_cpu, "rollout_worker_cpu_seconds": worker_cpu,
        "iterations": iteration, "final_eval": final, "options": options_to_dict(opts, args.variant)})


def distill_stage(net, args: Args, opts, features, folder: Path) -> dict:
    """Search distillation of ``net`` (:func:`agents.training.distill.run_stage` with the ``distill_*`` arguments); writes
    ``distill.json`` (and ``distill_labels.npz`` when it labels) in the run folder; returns the report."""
    import torch

    from agents.training.distill import run_stage

    torch.manual_seed(args.seed)
    report = run_stage(
        net, args.variant, opts, features=features, decisions=args.distill_decisions, label_files=args.distill_labels,
        seed=args.distill_seed, tables=args.distill_tables, label_prob=args.distill_label_prob,
        worlds=args.distill_worlds, candidates=args.distill_candidates, verify_worlds=args.distill_verify_worlds,
        screen_z=args.distill_screen_z, z=args.distill_z, min_gain=args.distill_min_gain, epochs=args.distill_epochs,
        lr=args.distill_lr, departure_weight=args.distill_departure_weight, vf_coef=args.vf_coef,
        reward_scale=args.reward_scale, folder=folder, fit_seed=args.seed, soft=args.distill_soft,
        log=lambda m: print(m, flush=True))
    net.eval()
    (folder / "distill.json").write_text(json_text(report), encoding="utf-8")
    return report


def departure_stage(args: Args, opts, folder: Path) -> dict:
    """The departure head (:func:`agents.training.departures.run_stage` with the ``departure_*`` arguments); writes
    ``departures.json`` (and ``departure_labels.npz`` when it labels) in the run folder; returns the head's
    checkpoint entry."""
    from agents.training.departures import run_stage

    part, report = run_stage(
        args.variant, opts, decisions=args.departure_decisions, label_files=args.departure_labels,
        seed=args.departure_seed, worlds=args.departure_worlds, holdout=args.departure_holdout, tau=args.departure_tau,
        members=args.departure_members, hidden=args.departure_hidden, epochs=args.departure_epochs, fit_seed=args.seed,
        folder=folder, log=lambda m: print(m, flush=True))
    (folder / "departures.json").write_text(json_text(report), encoding="utf-8")
    return part


def final_meta(final: dict, seconds: float, cpu: float) -> dict:
    """The training facts a final checkpoint's ``meta`` holds: times and the final evaluation rows."""
    return {"train_seconds": round(seconds, 1), "train_cpu_seconds": round(cpu, 1),
            "final_eval": {k: {kk: vv for kk, vv in v.items() if kk != "step"} for k, v in final.items()}}


def finish_run(args: Args, folder: Path, ck: dict, summary: dict) -> dict:
    """Save the final checkpoint ``ck`` as ``final.pt`` (and ``--export``), write ``summary.json`` (adding the
    checkpoint's path to ``summary``); returns the summary."""
    final_path = save_checkpoint(folder / "final.pt", ck)
    print(f"final checkpoint: {final_path}")
    if args.export:
        Path(args.export).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(final_path, args.export)
        print(f"exported to {args.export}")
    summary["checkpoint"] = str(final_path)
    (folder / "summary.json").write_text(json_text(summary), encoding="utf-8")
    return summary


# ------------------------------------------------------------------------------------------ main

BOUNDS = {
    "seed": (0, None), "total_timesteps": (0, None), "num_envs": (1, None), "n_steps": (1, None), "batch_size": (2, None),
    "n_epochs": (1, None), "learning_rate": (0, None), "gamma": (0, 1), "gae_lambda": (0, 1), "clip_range": (0, None),
    "ent_coef": (0, None), "vf_coef": (0, None), "max_grad_norm": (0, None), "reward_scale": (0, None),
    "channels": (1, None), "hidden": (1, None), "value_hidden": (1, None), "opponent_weights": (0, None),
    "snapshot_every": (1, None), "pool_size": (1, None), "eval_every": (0, None), "eval_walls": (1, None),
    "final_eval_walls": (1, None), "save_every": (1, None), "threads": (1, None),
    "lr_final": (0, None), "ent_coef_final": (0, None), "bc_rounds": (0, None), "bc_tables": (1, None),
    "bc_steps": (1, None), "bc_epochs": (1, None), "bc_lr": (0, None), "bc_teacher_fraction": (0, 1), "bc_policy_weight": (0, None), "advice_weight": (0, None),
    "frozen_share": (0, 1), "ray_workers": (1, None), "distill_decisions": (0, None), "distill_seed": (0, None),
    "distill_tables": (1, None), "distill_label_prob": (0, 1), "distill_worlds": (2, None),
    "distill_candidates": (2, None), "distill_verify_worlds": (0, None), "distill_screen_z": (0, None),
    "distill_z": (0, None), "distill_min_gain": (0, None), "distill_epochs": (1, None), "distill_lr": (0, None),
    "distill_departure_weight": (0, None), "departure_decisions": (0, None), "departure_seed": (0, None),
    "departure_worlds": (2, None), "departure_holdout": (0, 0.9), "departure_tau": (None, None),
    "departure_members": (1, None), "departure_hidden": (1, None), "departure_epochs": (1, None),
}
"""Allowed range of each numeric field (inclusive); :func:`check_args` enforces them."""


def check_args(args: Args):
    """The rule options of ``args``; raises :class:`~agents.script_args.ArgsError` naming the field for any value
    training cannot use (numbers out of range, unknown rules, opponent pool, checkpoint paths)."""
    check_numbers(args, BOUNDS)
    if args.trainer not in ("allseat", "sb3"):
        raise ArgsError(f"--trainer: {args.trainer!r} is not allseat or sb3")
    if args.trainer == "sb3" and args.ray is not None:
        raise ArgsError("--ray: only the allseat trainer runs on Ray (--trainer allseat)")
    if args.trainer == "allseat" and args.oracle_critic:
        raise ArgsError("--oracle_critic: only with --trainer sb3")
    if args.precision not in ("auto", "fp32", "bf16"):
        raise ArgsError(f"--precision: {args.precision!r} is not auto, fp32 or bf16")
    if args.precision == "bf16":
        if args.trainer != "allseat":
            raise ArgsError("--precision bf16: only with --trainer allseat")
        from agents.training.ppo import bf16_native

        if not bf16_native():
            raise ArgsError("--precision bf16: this CPU has no native bfloat16 (AVX512-BF16 or AMX); use fp32")
    if args.trainer == "sb3" and args.total_timesteps < 1:
        raise ArgsError("--total_timesteps: the sb3 trainer needs at least 1 (0, no PPO stage, is for --trainer allseat)")
    if args.trainer == "sb3" and (args.distill_decisions > 0 or args.distill_labels):
        raise ArgsError("--distill_decisions: search distillation runs in the allseat trainer (--trainer allseat)")
    if args.departure_decisions > 0 or args.departure_labels:
        if args.trainer != "allseat":
            raise ArgsError("--departure_decisions: the departure head is fitted in the allseat trainer (--trainer allseat)")
        if not args.advice or args.advice_features != "heuristic-advice-v2":
            raise ArgsError("--departure_decisions: needs --advice with --advice_features heuristic-advice-v2 (the head "
                            "departs from heuristic-flush's choice, which that network plays)")
    for path in args.departure_labels:
        if not Path(path).is_file():
            raise ArgsError(f"--departure_labels: {path!r} not found")
    if args.distill_verify_worlds == 1:
        raise ArgsError("--distill_verify_worlds: 0 (no verification) or at least 2 worlds")
    for path in args.distill_labels:
        if not Path(path).is_file():
            raise ArgsError(f"--distill_labels: {path!r} not found")
    if args.ray is not None:
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            raise ArgsError('--ray: Ray is not installed; pip install -e ".[ray]"')
    rollout = args.n_steps * args.num_envs
    if args.batch_size > rollout:
        raise ArgsError(f"--batch_size {args.batch_size} exceeds the rollout of --n_steps × --num_envs = {rollout}")
    if len(args.opponents) != len(args.opponent_weights):
        raise ArgsError(f"--opponent_weights: {len(args.opponent_weights)} weights for {len(args.opponents)} --opponents")
    if not args.opponents or sum(args.opponent_weights) <= 0:
        raise ArgsError("--opponent_weights: the pool needs at least one opponent with a positive weight")
    try:
        opts = load_rules(args.variant, ruleset=args.ruleset, preset=args.preset, options=parse_option_assignments(args.options))
    except OptionError as exc:
        raise ArgsError(str(exc)) from None
    for flag, names in (("--opponents", args.opponents), ("--eval_opponents", args.eval_opponents),
                        ("--bc_teacher", [args.bc_teacher])):
        for name in names:
            if name in BUILTIN or (name == "self" and flag == "--opponents"):
                continue
            if not name.endswith(".pt") or not Path(name).is_file():
                raise ArgsError(f"{flag}: {name!r} is neither {', '.join(BUILTIN)}{', self' if flag == '--opponents' else ''} "
                                "nor an existing checkpoint file (*.pt)")
    from agents.players.advice import FEATURE_SETS

    if args.advice_features not in FEATURE_SETS:
        raise ArgsError(f"--advice_features: {args.advice_features!r} is not one of {', '.join(FEATURE_SETS)}")
    if args.init_checkpoint is not None and not Path(args.init_checkpoint).is_file():
        raise ArgsError(f"--init_checkpoint: {args.init_checkpoint!r} not found")
    return opts


def main(argv: Sequence[str] | None = None) -> dict:
    """Train as configured by the command line; returns the final evaluation summary.

    Bad input is one ``train.py: error: ...`` line on stderr and exit status 2, before anything is written."""
    with usage_errors("train.py"):
        args, config = parse_args(Args, argv, config_dir=CONFIG_DIR, default_config="default")
        return train(args, config)


def train(args: Args, config: str | None = None) -> dict:
    """Run one training job (see the module docstring); returns the final evaluation summary.

    Bad arguments raise :class:`~agents.script_args.ArgsError` (:func:`check_args`) before anything is written."""
    opts = check_args(args)
    requested = args.precision
    args = replace(args, precision=resolve_precision(args.precision, args.trainer))
    try:
        import torch
        if args.trainer == "sb3":
            from sb3_contrib import MaskablePPO
            from stable_baselines3.common.callbacks import BaseCallback
            from stable_baselines3.common.logger import configure
            from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
        else:
            BaseFeaturesExtractor = torch.nn.Module
    except ModuleNotFoundError as exc:
        raise SystemExit(f"train.py needs {exc.name}: pip install torch==2.13.0 stable-baselines3 sb3-contrib tensorboard tqdm") from None
    from mjenv.envs.vector import sb3_vec_env

    torch.set_num_threads(max(1, args.threads))
    torch.manual_seed(args.seed)
    obs_shape = ObservationEncoder(args.variant, opts).shape
    features = None
    advice_row = None
    if args.advice:
        from agents.players.advice import AdviceFeatures

        features = AdviceFeatures(args.variant, opts, args.advice_features)
        advice_row = obs_shape[0]
        obs_shape = (obs_shape[0] + features.rows, obs_shape[1])
    inputs = LearnerInputs(args.variant, opts, features, args.oracle_critic)
    input_rows = obs_shape[0] + inputs.oracle_rows  # what the env gives; the policy reads the first obs_shape[0]
    arch = {"channels": args.channels, "hidden": args.hidden}
    run_name = args.run_name or f"{args.variant}__{args.exp_name}__{args.seed}__{int(time.time())}"
    folder = Path(args.out) / run_name

    class TrunkExtractor(BaseFeaturesExtractor):
        """SB3 wrapper around :func:`agents.players.policy.make_trunk` (its weights are what a checkpoint stores)."""

        def __init__(self, observation_space, channels: int, hidden: int, rows: int = obs_shape[0]):
            super().__init__(observation_space, features_dim=hidden + (N_ACTIONS if advice_row is not None else 0))
            self.width = rows * obs_shape[1]
            self.trunk = make_trunk((rows, obs_shape[1]), channels, hidden, advice_row)

        def forward(self, x):
            return self.trunk(x[:, : self.width])

    fixed = {"random": make_agent("random", args.variant, opts, seed=args.seed + 1)}
    init = None
    try:
        for name in args.opponents:
            if name not in ("random", "self") and name not in fixed:
                fixed[name] = make_agent(name, args.variant, opts, seed=args.seed + 2)
        eval_agents = {name: make_agent(name, args.variant, opts, seed=args.seed + 7) for name in args.eval_opponents}
        if args.init_checkpoint:
            init = load_checkpoint(args.init_checkpoint)
            check_compatible(init, args.variant, opts, where=args.init_checkpoint)
    except ValueError as exc:  # a checkpoint that is unreadable or was trained on other rules
        raise ArgsError(str(exc)) from None
    if init is not None and {k: int(v) for k, v in init["arch"].items()} != arch:
        raise ArgsError(f"--init_checkpoint: architecture {init['arch']} differs from --channels/--hidden {arch}")
    try:
        (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArgsError(f"--out / --run_name: cannot create {folder}: {exc.strerror or exc}") from None
    (folder / "args.json").write_text(json.dumps({"config": config, **asdict(args), "precision_requested": requested},
                                                   indent=2), encoding="utf-8")
    if args.trainer == "allseat":
        return train_allseat(args, config, opts, folder, run_name, obs_shape, features, eval_agents, init)
    # The pool is handed to the env at construction (an opponent set afterwards may be replaced by the env's
    # default at reset) and learns the env core, which it reads to route rows, right after.
    pool = OpponentPool(None, args.opponents, args.opponent_weights, fixed, args.seed)
    venv = sb3_vec_env(args.variant, args.num_envs, options=opts, seed=args.seed, opponent=pool)
    pool.core = venv.core
    venv = learner_vec_env(venv, inputs, args.reward_scale)

    # SB3 hands the schedule the remaining progress (1 -> 0).
    lr = ((lambda progress: args.lr_final + (args.learning_rate - args.lr_final) * progress) if args.anneal_lr
          else args.learning_rate)
    model = MaskablePPO(
        "MlpPolicy", venv, learning_rate=lr, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.n_epochs,
        gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip_range, ent_coef=args.ent_coef,
        vf_coef=args.vf_coef, max_grad_norm=args.max_grad_norm, seed=args.seed, device="cpu", verbose=0,
        policy_kwargs=dict(
            features_extractor_class=TrunkExtractor,
            features_extractor_kwargs=dict(channels=args.channels, hidden=args.hidden),
            net_arch=dict(pi=[], vf=[args.value_hidden]),
            activation_fn=torch.nn.ReLU,
            share_features_extractor=not args.oracle_critic,
        ),
    )
    if args.oracle_critic:  # the critic's trunk reads every input row, the policy's only the observation's
        model.policy.vf_features_extractor = TrunkExtractor(venv.observation_space, args.channels, args.hidden, input_rows)
    if advice_row is not None:  # the head that adds the advice
        model.policy.action_net = make_head(args.hidden, advice=True, advice_weight=args.advice_weight)
    if advice_row is not None or args.oracle_critic:  # an optimiser that knows the replaced modules
        pol = model.policy
        pol.optimizer = pol.optimizer_class(pol.parameters(), lr=model.lr_schedule(1), **pol.optimizer_kwargs)
    if init is not None:
        model.policy.features_extractor.trunk.load_state_dict(init["trunk"])
        model.policy.action_net.load_state_dict(init["head"])
    formats = ["csv"]
    if args.tensorboard:
        try:
            import tensorboard  # noqa: F401

            formats.append("tensorboard")
        except ModuleNotFoundError:
            print("note: tensorboard not installed; logging CSV only", file=sys.stderr)
    model.set_logger(configure(str(folder), formats))
    clone_report = warm_start(model, args, opts, folder, inputs if inputs.active else None) if args.bc_rounds > 0 else None

    def payload(step: int, extra: dict | None = None) -> dict:
        trunk = model.policy.features_extractor.trunk
        head = model.policy.action_net
        meta = {"algo": "MaskablePPO", "run": run_name, "timesteps": int(step), "seed": args.seed,
                "config": config or "", "precision": args.precision, **(extra or {})}
        return checkpoint_payload(trunk, head, variant=args.variant, options=opts, obs_shape=obs_shape, arch=arch, meta=meta,
                                  features=features.version if features is not None else None)

    def frozen(step: int, deterministic: bool, name: str) -> PolicyAgent:
        return PolicyAgent(payload(step), args.variant, opts, deterministic=deterministic, seed=args.seed + step, name=name)

    eval_rows: list[dict] = []

    def evaluate(step: int, walls: int, first_wall: int) -> dict:
        out = duplicate_eval(frozen(step, True, "learner"), eval_agents, args, opts, step, walls, first_wall, eval_rows,
                             folder, f"{run_name} ({config or 'args'})")
        for name, row in out.items():
            model.logger.record(f"eval/score_vs_{name}", row["score"])
            model.logger.record(f"eval/win_rate_vs_{name}", row["win_rate"])
        return out

    class Monitor(BaseCallback):
        """Progress bar, hand statistics per opponent, snapshots, checkpoints and evaluations."""

        def __init__(self):
            super().__init__()
            self.bar = None
            self.next_eval = args.eval_every if args.eval_every > 0 else None
            self.next_save = args.save_every
            self.next_snap = args.snapshot_every
            self.money: dict[str, list[float]] = {}

        def _on_training_start(self) -> None:
            if args.progress:
                try:
                    from tqdm import tqdm

                    self.bar = tqdm(total=args.total_timesteps, unit="step", dynamic_ncols=True, desc=run_name[:40])
                except ModuleNotFoundError:
                    print("note: pip install tqdm for a progress bar", file=sys.stderr)
            pool.add_snapshot(frozen(0, False, "self@0"), args.pool_size)
            if clone_report is not None and args.eval_every > 0:  # the curve starts at the cloned policy
                evaluate(0, args.eval_walls, 0)

        def _on_step(self) -> bool:
            step = self.num_timesteps
            if self.bar is not None:
                self.bar.update(min(step, args.total_timesteps) - self.bar.n)
            for info, done in zip(self.locals["infos"], self.locals["dones"]):
                episode = info.get("episode_id", info.get("episode"))
                if done and "result" in info and isinstance(episode, (int, np.integer)):
                    entry = pool.entries[int(pool.entry_of(np.array([episode]))[0])]
                    self.money.setdefault(entry, []).append(info["result"]["deltas"][info["seat"]])
            if step >= self.next_snap:
                self.next_snap += args.snapshot_every
                pool.add_snapshot(frozen(step, False, f"self@{step}"), args.pool_size)
            if step >= self.next_save:
                self.next_save += args.save_every
                save_checkpoint(folder / "checkpoints" / f"step_{step:09d}.pt", payload(step))
            if self.next_eval is not None and step >= self.next_eval:
                self.next_eval += args.eval_every
                evaluate(step, args.eval_walls, 0)
            return True

        def _on_rollout_end(self) -> None:
            if args.ent_coef_final is not None:  # linear entropy schedule (configs/train/*.toml)
                frac = min(1.0, self.num_timesteps / max(args.total_timesteps, 1))
                self.model.ent_coef = args.ent_coef + (args.ent_coef_final - args.ent_coef) * frac
                self.logger.record("train/ent_coef", self.model.ent_coef)
            for entry, vals in self.money.items():
                if vals:
                    self.logger.record(f"hands/money_vs_{entry}", float(np.mean(vals)))
                    self.logger.record(f"hands/count_vs_{entry}", len(vals))
            if self.bar is not None:
                parts = [f"{e}:{np.mean(v):+.2f}" for e, v in self.money.items() if v]
                self.bar.set_postfix_str(" ".join(parts))
            self.money = {}

        def _on_training_end(self) -> None:
            if self.bar is not None:
                self.bar.close()

    try:
        started = time.perf_counter()
        cpu0 = time.process_time()
        print(f"run {run_name}: {args.variant}, {args.total_timesteps:,} steps on {args.num_envs} tables, "
              f"opponents {dict(zip(args.opponents, args.opponent_weights))}, obs {OBS_VERSION} {obs_shape}", flush=True)
        model.learn(total_timesteps=args.total_timesteps, callback=Monitor())
        train_seconds = time.perf_counter() - started
        train_cpu = time.process_time() - cpu0
        steps = int(model.num_timesteps)
        print(f"trained {steps:,} steps in {train_seconds:.0f} s ({steps / train_seconds:.0f} steps/s, "
              f"{train_cpu:.0f} CPU s)", flush=True)

        final = evaluate(steps, args.final_eval_walls, 1_000_000)
        summary = finish_run(args, folder, payload(steps, final_meta(final, train_seconds, train_cpu)), {
            "run": run_name, "folder": str(folder), "trainer": "sb3", "precision": args.precision, "steps": steps,
            "seconds": train_seconds, "cpu_seconds": train_cpu, "final_eval": final,
            "options": options_to_dict(opts, args.variant)})
    finally:  # progress.csv and the TensorBoard files are open until the logger is closed
        model.logger.close()
        venv.close()
    return summary


if __name__ == "__main__":
    main()
