"""The ``Args`` of a ``train.py`` run: every field is a command-line flag (``--field value``) and a key of the
config files in ``configs/train/``, grouped there in one TOML section per stage (:data:`SECTIONS`); their bounds
(:data:`BOUNDS`) and the checks a run passes before anything is written (:func:`check_args`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from agents import BUILTIN
from agents.players.policy import DEFAULT_ARCH
from agents.script_args import ArgsError, check_numbers
from mjenv.rules import load_rules
from mjenv.rules.options import OptionError, parse_option_assignments

__all__ = ["Args", "SECTIONS", "BOUNDS", "check_args"]


SECTIONS = {
    "run": ("exp_name", "seed", "variant", "ruleset", "preset", "options", "trainer", "precision", "device", "threads", "out",
            "run_name", "export", "init_checkpoint", "ray", "ray_workers", "progress", "tensorboard", "curve"),
    "network": ("net", "channels", "blocks", "hidden", "value_hidden", "advice", "advice_features", "advice_weight",
                "oracle_critic", "derived"),
    "netclone": ("netclone_sets", "netclone_walls", "netclone_teacher", "netclone_seed", "netclone_holdout_walls",
                 "netclone_holdout_seed", "netclone_data", "netclone_limit", "netclone_epochs", "netclone_batch_size",
                 "netclone_lr", "netclone_lr_final", "netclone_eval_every", "netclone_split_by", "netclone_depart_weight"),
    "qfit": ("qfit_seeds", "qfit_held_seeds", "qfit_chunk", "qfit_policy", "qfit_rollout_policy", "qfit_rollout_network", "qfit_world_source",
             "qfit_worlds", "qfit_policy_candidates", "qfit_kinds", "qfit_label_prob", "qfit_labels", "qfit_kl", "qfit_share_kl", "qfit_epochs", "qfit_batch_size", "qfit_lr", "qfit_lr_final"),
    "clone": ("bc_rounds", "bc_teacher", "bc_tables", "bc_steps", "bc_epochs", "bc_lr", "bc_teacher_fraction",
              "bc_policy_weight", "bc_holdout"),
    "distill": ("distill_decisions", "distill_labels", "distill_seed", "distill_tables", "distill_label_prob",
                "distill_worlds", "distill_candidates", "distill_verify_worlds", "distill_screen_z", "distill_z",
                "distill_min_gain", "distill_epochs", "distill_lr", "distill_departure_weight", "distill_soft"),
    "departures": ("departure_decisions", "departure_labels", "departure_policy", "departure_seed", "departure_worlds",
                   "departure_holdout", "departure_tau", "departure_members", "departure_hidden", "departure_epochs",
                   "departure_features", "departure_scope", "departure_label_prob", "departure_label_scope",
                   "departure_world_source", "departure_merge"),
    "ppo": ("total_timesteps", "num_envs", "n_steps", "batch_size", "n_epochs", "learning_rate", "anneal_lr",
            "lr_final", "gamma", "gae_lambda", "clip_range", "ent_coef", "ent_coef_final", "vf_coef", "kl_coef",
            "value_warmup", "value_warmup_lr", "max_grad_norm", "reward_scale", "opponents", "opponent_weights", "frozen_share", "snapshot_every",
            "paired", "paired_rate", "paired_min", "paired_greedy", "paired_branches", "paired_samples",
            "pool_size", "save_every"),
    "eval": ("eval_every", "eval_walls", "final_eval_walls", "eval_opponents"),
}
"""The config files' sections (``[run]``, ``[network]``, one per stage, ``[eval]``) and the fields each holds; a key in
another section than its own is an error."""


@dataclass
class Args:
    """Self-play MaskablePPO training for mjenv (see the module docstring of train.py)."""

    config_sections: ClassVar[dict[str, tuple[str, ...]]] = SECTIONS

    # [run] the run: rules, trainer, threads, folders
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
    trainer: str = "allseat"
    """allseat: this file's PPO loop, one shared policy playing every seat of num_envs engine tables, each seat's
    decisions a sample (agents/training/ppo.py); sb3: sb3-contrib MaskablePPO with one learner seat per table"""
    precision: str = "auto"
    """allseat: arithmetic of the policy network's trunk in rollouts and updates: fp32, bf16 (bfloat16 autocast
    with float32 weights, heads and losses; needs a CPU with native bfloat16, AVX512-BF16 or AMX), or auto (bf16
    where the CPU has it, else fp32; the sb3 trainer always runs fp32); args.json, summary.json and the checkpoint's
    meta record the precision used"""
    device: str = "cpu"
    """where the network trains (cloning stages and PPO updates): auto (CUDA when torch sees it), cpu, cuda or cuda:N;
    rollouts and evaluations run on the CPU"""
    threads: int = 2
    """torch CPU threads"""
    out: str = "runs/train"
    """output folder; each run writes into a subfolder"""
    run_name: str | None = None
    """subfolder name (default: <variant>__<exp_name>__<seed>__<unix time>)"""
    export: str | None = None
    """also copy the final checkpoint here (e.g. agents/checkpoints/kawuxing3-default.pt)"""
    init_checkpoint: str | None = None
    """start from this checkpoint's trunk and action head (same variant, options and architecture)"""
    ray: str | None = field(default=None, metadata={"const": "local"})
    """allseat: run the rollouts on Ray actors, the learner here (pip install -e .[ray]): bare --ray starts a
    local Ray, --ray ADDRESS joins a cluster (auto, HOST:6379 or ray://HOST:10001)"""
    ray_workers: int = 2
    """with --ray: rollout workers (Ray actors, one CPU each), each with num_envs tables and a copy of the policy"""
    progress: bool = True
    """show a progress bar (needs tqdm)"""
    tensorboard: bool = True
    """write TensorBoard events (needs tensorboard)"""
    curve: bool = True
    """write learning_curve.png (eval margins against steps; needs matplotlib)"""

    # [network] the network and what it reads
    net: str = ""
    """the network: "" is agents/players/policy.py's two convolutions and a dense layer; resnet1d is
    agents/players/resnet.py's residual network (channels, blocks, hidden; network-only: no advice)"""
    channels: int = DEFAULT_ARCH["channels"]
    """convolution channels of the trunk"""
    blocks: int = 4
    """with net resnet1d: residual blocks"""
    hidden: int = DEFAULT_ARCH["hidden"]
    """width of the trunk's dense layer (the policy features)"""
    value_hidden: int = 64
    """hidden layer of the value head"""
    advice: bool = False
    """append the heuristic-advice-v1 look-ahead features (agents/players/advice.py) to the observation and add the
    heuristic's advice to the action logits with a learned weight"""
    advice_features: str = "heuristic-advice-v1"
    """with advice: the feature set (agents/players/advice.py FEATURE_SETS: v1 advises the heuristic's move, v2 the
    heuristic-flush player's)"""
    advice_weight: float = 2.0
    """with advice: the starting weight of the advice in the logits"""
    derived: str = ""
    """derived observation rows the policy also reads: "" (mjenv-obs-v1 alone) or mjenv-hand-v1 (the seat's public
    hand arithmetic, mjenv/encoding/handfeat.py; the netclone and all-seat PPO stages; the checkpoint records it)"""
    oracle_critic: bool = False
    """the value head reads, through its own trunk, the observation plus the oracle rows (every hand, the wall
    order); the policy never sees them and checkpoints hold the policy alone"""

    # [clone] stage 1: behaviour cloning (agents/training/clone.py)
    bc_rounds: int = 0
    """behaviour-cloning rounds before PPO (0: none; agents/training/clone.py), teacher = bc_teacher"""
    bc_teacher: str = "heuristic"
    """the agent cloned (a built-in name, a checkpoint path, or ``advisor``: the player whose move the advice rows
    carry, with its feature set's keywords, agents/players/advice.py ADVISOR_KEYWORDS; needs --advice)"""
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
    bc_holdout: int = 4096
    """teacher-played states of another seed on which the clone's held-out agreement is measured (the report only)"""

    # [netclone] stage 1b: network-only cloning from recorded decisions (agents/training/netclone.py)
    netclone_sets: int = 0
    """datasets of netclone_walls walls of the teacher in every seat to clone (0: no stage; needs net resnet1d)"""
    netclone_walls: int = 25000
    """walls per dataset (about 20 decisions each)"""
    netclone_teacher: str = "heuristic-flush"
    """the player cloned: a built-in agent's name or a checkpoint file (*.pt, e.g. kawuxing3-default.pt)"""
    netclone_seed: int = 901
    """wall seed of the training datasets (set i holds walls i * netclone_walls ..)"""
    netclone_holdout_walls: int = 2000
    """walls of the held-out dataset (agreement measured there, never trained on)"""
    netclone_holdout_seed: int = 902
    """wall seed of the held-out dataset"""
    netclone_data: str = "runs/data/netclone"
    """folder of the datasets (each made there from its seed when missing, reused when present)"""
    netclone_limit: int = 0
    """clone at most this many decisions (0: all)"""
    netclone_epochs: float = 1.0
    """passes over the decisions (a fraction stops part-way)"""
    netclone_batch_size: int = 512
    """decisions per minibatch"""
    netclone_lr: float = 0.002
    """Adam learning rate at the start (cosine decay to netclone_lr_final)"""
    netclone_lr_final: float = 0.00005
    """learning rate at the end"""
    netclone_eval_every: int = 250000
    """samples between held-out agreement measurements (the learning curve)"""
    netclone_split_by: str = ""
    """split the held-out agreement by the teacher's departures from this player's choice (heuristic or
    heuristic-flush; empty: none)"""
    netclone_depart_weight: float = 1.0
    """loss weight of the training decisions where the teacher departs from netclone_split_by's choice (1: none)"""

    # [qfit] stage 1c: policy improvement of the network-only policy from labelled candidate gains
    # (agents/training/qfit.py): label chunks of the network's self-play, then the all-actions policy gradient
    qfit_seeds: list[int] = field(default_factory=list)
    """label seeds of the chunks fitted on, one chunk each (none: no stage; needs --net resnet1d)"""
    qfit_held_seeds: list[int] = field(default_factory=list)
    """label seeds of the held-out chunks the fit is measured on (at least one with the stage)"""
    qfit_chunk: int = 5000
    """labelled decisions per chunk"""
    qfit_policy: str = ""
    """checkpoint whose self-play states are labelled ('': --init_checkpoint)"""
    qfit_rollout_policy: str = "agents/checkpoints/kawuxing3-long.pt"
    """checkpoint whose compiled improved player rolls out each candidate ('': the compiled heuristic-flush)"""
    qfit_rollout_network: bool = False
    """the qfit_rollout_policy checkpoint's network rolls out, not its compiled player (about 9x the CPU)"""
    qfit_world_source: str = "hands_true"
    """sampled or hands_true: the worlds the candidates are valued in (agents/training/distill.py)"""
    qfit_worlds: int = 32
    """worlds per candidate"""
    qfit_policy_candidates: int = 0
    """also label this many of the policy's own most likely moves outside the compiled player's shortlist"""
    qfit_kinds: list[str] = field(default_factory=list)
    """label only decisions of these kinds (agents/training/distill.py KINDS, e.g. kong claim_kong; empty: every kind)"""
    qfit_label_prob: float = 0.25
    """chance that a decision of a labelled kind with two or more candidates is labelled"""
    qfit_labels: str = "runs/data/qfit"
    """folder of the label chunks (made where missing, kept: a run resumes)"""
    qfit_kl: float = 0.1
    """weight of KL(start || policy) beside the policy-gradient term"""
    qfit_share_kl: float = 1.0
    """weight of the KL between the start's and the policy's probability of a shortlisted move (the labels value no
    other move)"""
    qfit_epochs: float = 2.0
    """passes over the labelled decisions"""
    qfit_batch_size: int = 256
    qfit_lr: float = 3e-4
    """Adam learning rate at the start (cosine decay to qfit_lr_final)"""
    qfit_lr_final: float = 0.0

    # [distill] stage 2a: search distillation (agents/training/distill.py)
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

    # [departures] stage 2b: the departure head (agents/training/departures.py)
    departure_decisions: int = 0
    """allseat: fit a departure head (agents/players/departures.py) on this many decisions of heuristic-flush self-play, each
    candidate of the player's shortlist valued by rollouts in shared sampled worlds (scope win: this many win decisions
    labelled by true-state rollouts; 0: no departure head)"""
    departure_labels: list[str] = field(default_factory=list)
    """label files (e.g. a run's departure_labels.npz, or agents.training.distill.save_labels files made with 3 candidates)
    to fit the departure head on instead of labelling afresh"""
    departure_policy: str = ""
    """a policy checkpoint whose player plays every seat of the labelled hands (expert iteration,
    agents/training/exit.py: the states an improved player reaches); empty: heuristic-flush's compiled player"""
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
    departure_features: str = "candidate-features-v1"
    """what the head reads (agents/players/departures.py FEATURE_SETS): candidate-features-v1, or candidate-features-v2
    (Gejiu only: v1 and what each ready hand's waits score)"""
    departure_scope: str = "all"
    """where the head is fitted and departs: all alternatives, ready (candidate-features-v2 only: an alternative that
    leaves a ready hand where the choice does too), or win (candidate-features-v2 only: where a win is legal, the
    advisor's move against the other side of the win, labelled by true-state rollouts: departure_decisions of them,
    seed departure_seed, agents/training/departures.py win_labels)"""
    departure_label_prob: float = 0.25
    """chance that a decision of the labelling self-play (within departure_label_scope) is labelled"""
    departure_label_scope: str = "all"
    """which decisions the labelling may pick: all, or ready (Gejiu: the choice and another candidate are discards that
    leave a ready hand, agents/training/distill.py ready_pair_decisions; the decisions a head of scope ready learns from)"""
    departure_world_source: str = "sampled"
    """where the labelled candidates are valued: sampled (worlds redrawn uniformly given what the seat sees) or hands_true
    (the real hands, only the live wall reshuffled: unbiased labels of the true gain; agents/training/distill.py
    hands_true_worlds)"""
    departure_merge: str = ""
    """a checkpoint whose departure head is averaged with the one fitted here (agents/training/departures.py merge_heads: its
    members first, then the new ones; the merged head departs at departure_tau); empty: the fitted head alone"""

    # [ppo] stage 3: PPO (agents/training/ppo.py; --trainer sb3: agents/training/sb3.py)
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
    lr_final: float = 0.0
    """with anneal_lr: the learning rate reached at the end (linear from learning_rate)"""
    gamma: float = 0.995
    """discount per learner decision (a hand is about 18 of them)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_range: float = 0.2
    """PPO clip range"""
    ent_coef: float = 0.01
    """entropy bonus"""
    ent_coef_final: float | None = None
    """entropy bonus reached at the end, linearly from ent_coef (none: constant ent_coef)"""
    vf_coef: float = 0.5
    """value loss weight"""
    kl_coef: float = 0.0
    """allseat: weight of KL(policy || the policy PPO started from) in the loss, an anchor to the warm start (mahjax's
    examples use 0.2); 0: none"""
    value_warmup: int = 0
    """allseat: rollouts before PPO whose samples fit only the value head (and the oracle critic's trunk) at
    value_warmup_lr, so PPO's first advantages come from a critic of the starting policy; the policy is unchanged
    by them and they are not counted in total_timesteps"""
    value_warmup_lr: float = 0.001
    """learning rate of the value warm-up"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    reward_scale: float = 0.1
    """rewards are money in base stakes times this (a hand moves up to about ±16)"""
    opponents: list[str] = field(default_factory=lambda: ["random", "heuristic", "self"])
    """opponent pool: random, heuristic, self (past snapshots of the learner) or checkpoint paths"""
    opponent_weights: list[float] = field(default_factory=lambda: [0.6, 0.2, 0.2])
    """probability of each pool entry per hand"""
    frozen_share: float = 0.0
    """allseat: share of the seats, drawn per hand, played by the opponent pool instead of the learner"""
    paired: bool = False
    """allseat: paired advantages (agents.training.paired.collect_paired): twin tables dealt the same wall
    play on common random draws until one learner decision branches (twin A its sampled action, twin B another);
    that decision is a sample whose advantage is (1 - pi(a)) x the seat's money on A less on B (pure self-play only)"""
    paired_rate: float = 0.1
    """with paired: the chance that an eligible decision of a pair not yet branched branches"""
    paired_min: float = 0.02
    """with paired: a decision is eligible to branch when 1 - its most likely action's probability is at least this"""
    paired_greedy: bool = False
    """with paired: after a branch every seat of both twins plays its most likely action (no sampling noise after the
    branch; the advantage of the branch's action when the greedy policy plays on)"""
    paired_branches: int = 2
    """with paired: the tables of a group dealt the same wall (2: twins); at a branch they play the sampled action and
    up to K - 1 others drawn from the policy without replacement, and the sample's advantage compares the first with
    an unbiased estimate of the others' mean (agents.training.paired.collect_paired); num_envs must be a multiple"""
    paired_samples: str = "first"
    """with paired: first (the branch decision's sampled action is the sample) or all (every branch's action is a
    sample, weighted so that the gradient stays unbiased: agents.training.paired.all_branch_advantages; advantages
    scaled, not centred)"""
    snapshot_every: int = 80_000
    """steps between snapshots of the learner added to the 'self' pool"""
    pool_size: int = 5
    """snapshots kept in the 'self' pool"""
    save_every: int = 80_000
    """steps between checkpoints"""

    # [eval] evaluations during and after training
    eval_every: int = 80_000
    """steps between evaluations (0: only at the end)"""
    eval_walls: int = 40
    """walls per evaluation opponent (each played under 6 seatings in 3p)"""
    final_eval_walls: int = 100
    """walls of the final evaluation"""
    eval_opponents: list[str] = field(default_factory=lambda: ["heuristic", "random"])
    """opponents of the periodic and final evaluations"""


BOUNDS = {
    "seed": (0, None), "total_timesteps": (0, None), "num_envs": (1, None), "n_steps": (1, None), "batch_size": (2, None),
    "n_epochs": (1, None), "learning_rate": (0, None), "gamma": (0, 1), "gae_lambda": (0, 1), "clip_range": (0, None),
    "ent_coef": (0, None), "vf_coef": (0, None), "max_grad_norm": (0, None), "reward_scale": (0, None),
    "channels": (1, None), "hidden": (1, None), "blocks": (1, None), "kl_coef": (0, None), "value_warmup": (0, None), "value_warmup_lr": (0, None), "netclone_sets": (0, None),
    "netclone_walls": (1, None), "netclone_seed": (0, None), "netclone_holdout_walls": (1, None),
    "netclone_holdout_seed": (0, None), "netclone_limit": (0, None), "netclone_epochs": (0, None),
    "netclone_batch_size": (1, None), "netclone_lr": (0, None), "netclone_lr_final": (0, None),
    "netclone_eval_every": (1, None), "qfit_chunk": (1, None), "qfit_worlds": (2, None), "qfit_policy_candidates": (0, None), "qfit_label_prob": (0, 1), "qfit_kl": (0, None), "qfit_share_kl": (0, None),
    "qfit_epochs": (0, None), "qfit_batch_size": (1, None), "qfit_lr": (0, None), "qfit_lr_final": (0, None), "netclone_depart_weight": (0, None), "value_hidden": (1, None), "opponent_weights": (0, None),
    "snapshot_every": (1, None), "pool_size": (1, None), "eval_every": (0, None), "eval_walls": (1, None),
    "final_eval_walls": (1, None), "save_every": (1, None), "threads": (1, None),
    "lr_final": (0, None), "ent_coef_final": (0, None), "bc_rounds": (0, None), "bc_tables": (1, None),
    "bc_steps": (1, None), "bc_epochs": (1, None), "bc_lr": (0, None), "bc_teacher_fraction": (0, 1), "bc_policy_weight": (0, None), "bc_holdout": (1, None), "advice_weight": (0, None),
    "frozen_share": (0, 1), "paired_rate": (0, 1), "paired_min": (0, 1), "paired_branches": (2, 8), "ray_workers": (1, None), "distill_decisions": (0, None), "distill_seed": (0, None),
    "distill_tables": (1, None), "distill_label_prob": (0, 1), "distill_worlds": (2, None),
    "distill_candidates": (2, None), "distill_verify_worlds": (0, None), "distill_screen_z": (0, None),
    "distill_z": (0, None), "distill_min_gain": (0, None), "distill_epochs": (1, None), "distill_lr": (0, None),
    "distill_departure_weight": (0, None), "departure_decisions": (0, None), "departure_seed": (0, None),
    "departure_worlds": (2, None), "departure_holdout": (0, 0.9), "departure_tau": (None, None),
    "departure_members": (1, None), "departure_hidden": (1, None), "departure_epochs": (1, None),
    "departure_label_prob": (0, 1),
}
"""Allowed range of each numeric field (inclusive); :func:`check_args` enforces them."""


def check_args(args: Args):
    """The :class:`mjenv.rules.Rules` of ``args``, resolved here once for the whole run; raises
    :class:`~agents.script_args.ArgsError` naming the field for any value training cannot use (numbers out of range,
    unknown rules, opponent pool, checkpoint paths)."""
    check_numbers(args, BOUNDS)
    if args.trainer not in ("allseat", "sb3"):
        raise ArgsError(f"--trainer: {args.trainer!r} is not allseat or sb3")
    if args.trainer == "sb3" and args.ray is not None:
        raise ArgsError("--ray: only the allseat trainer runs on Ray (--trainer allseat)")
    if args.trainer == "allseat" and args.oracle_critic and args.advice:
        raise ArgsError("--oracle_critic: the all-seat trainer's oracle critic needs a policy without advice rows (--advice false)")
    from agents.players.policy import KNOWN_NETS, resolve_device

    try:
        resolve_device(args.device)
    except ValueError as exc:
        raise ArgsError(f"--device: {exc}") from None
    if (args.net or None) not in KNOWN_NETS:
        raise ArgsError(f"--net: {args.net!r} is not one of {', '.join(repr(n or '') for n in KNOWN_NETS)}")
    if args.net and args.advice:
        raise ArgsError(f"--net {args.net}: a network-only architecture reads no advice (--no-advice)")
    if args.net and args.trainer != "allseat":
        raise ArgsError(f"--net {args.net}: only with --trainer allseat")
    if args.derived:
        from mjenv.encoding.handfeat import HAND_FEATURES

        if args.derived != HAND_FEATURES:
            raise ArgsError(f"--derived: {args.derived!r} is not {HAND_FEATURES!r} (or '' for none)")
        if args.trainer != "allseat" or args.advice or args.oracle_critic:
            raise ArgsError("--derived: only the all-seat trainer's policy without advice rows or an oracle critic "
                            "reads derived rows")
        if args.bc_rounds > 0 or args.distill_decisions > 0 or args.distill_labels or args.departure_decisions > 0 \
                or args.departure_labels:
            raise ArgsError("--derived: only the netclone, qfit and PPO stages read derived rows")
    if args.qfit_seeds:
        from agents.training.distill import WORLD_SOURCES as _SOURCES

        if args.net != "resnet1d":
            raise ArgsError("--qfit_seeds: the qfit stage improves a network-only policy (--net resnet1d)")
        if not args.qfit_held_seeds:
            raise ArgsError("--qfit_held_seeds: the qfit stage needs held-out chunks to measure the fit on")
        if set(args.qfit_seeds) & set(args.qfit_held_seeds):
            raise ArgsError("--qfit_held_seeds: a held-out seed is also among --qfit_seeds")
        if not (args.qfit_policy or args.init_checkpoint):
            raise ArgsError("--qfit_policy: name the checkpoint whose states are labelled (or give --init_checkpoint)")
        for key in ("qfit_policy", "qfit_rollout_policy"):
            if getattr(args, key) and not Path(getattr(args, key)).is_file():
                raise ArgsError(f"--{key}: {getattr(args, key)!r} not found")
        if args.qfit_rollout_network and not args.qfit_rollout_policy:
            raise ArgsError("--qfit_rollout_network: name the checkpoint whose network rolls out (--qfit_rollout_policy)")
        if args.qfit_world_source not in _SOURCES:
            raise ArgsError(f"--qfit_world_source: {args.qfit_world_source!r} is not one of {', '.join(_SOURCES)}")
        from agents.training.distill import KINDS as _KINDS

        for kind in args.qfit_kinds:
            if kind not in _KINDS:
                raise ArgsError(f"--qfit_kinds: {kind!r} is not a decision kind ({', '.join(_KINDS)})")
        if args.qfit_label_prob <= 0:
            raise ArgsError(f"--qfit_label_prob: a probability in (0, 1], got {args.qfit_label_prob}")
    if args.netclone_sets > 0 and args.net != "resnet1d":
        raise ArgsError("--netclone_sets: the network-only cloning stage fits --net resnet1d")
    if args.netclone_sets > 0 and args.netclone_teacher not in BUILTIN and not (
            args.netclone_teacher.endswith(".pt") and Path(args.netclone_teacher).is_file()):
        raise ArgsError(f"--netclone_teacher: {args.netclone_teacher!r} is not one of {', '.join(BUILTIN)} "
                        "nor a checkpoint file (*.pt)")
    if args.netclone_split_by not in ("", "heuristic", "heuristic-flush"):
        raise ArgsError(f"--netclone_split_by: {args.netclone_split_by!r} is not heuristic or heuristic-flush (or '')")
    if args.netclone_depart_weight != 1.0 and not args.netclone_split_by:
        raise ArgsError("--netclone_depart_weight: name the player departed from with --netclone_split_by")
    if args.value_warmup > 0 and args.trainer != "allseat":
        raise ArgsError("--value_warmup: only with --trainer allseat")
    if args.kl_coef > 0 and args.trainer != "allseat":
        raise ArgsError("--kl_coef: only with --trainer allseat")
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
        from agents.players.departures import ADVISORS

        if not args.advice or args.advice_features not in ADVISORS:
            raise ArgsError(f"--departure_decisions: needs --advice with --advice_features {' or '.join(ADVISORS)} (the "
                            "head departs from the choice of that set's advisor, heuristic-flush, which the network plays)")
    from agents.training.distill import WORLD_SOURCES

    if args.departure_world_source not in WORLD_SOURCES:
        raise ArgsError(f"--departure_world_source: {args.departure_world_source!r} is not one of "
                        f"{', '.join(WORLD_SOURCES)}")
    if args.departure_world_source != "sampled" and args.departure_scope == "win":
        raise ArgsError("--departure_world_source: a win head's labels are true-state rollouts already (keep sampled)")
    if args.departure_merge and not Path(args.departure_merge).is_file():
        raise ArgsError(f"--departure_merge: {args.departure_merge!r} not found")
    if args.departure_policy and not Path(args.departure_policy).is_file():
        raise ArgsError(f"--departure_policy: {args.departure_policy!r} not found")
    if args.departure_policy and args.departure_labels:
        raise ArgsError("--departure_policy: the label files are already labelled; give one or the other")
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
    if args.paired and (args.trainer != "allseat" or args.frozen_share > 0 or args.num_envs % 2):
        raise ArgsError("--paired: only with --trainer allseat, in pure self-play (--frozen_share 0) and an even --num_envs")
    if args.paired_branches != 2 and not args.paired:
        raise ArgsError(f"--paired_branches {args.paired_branches}: only with --paired (the tables of a paired group)")
    if args.paired_samples not in ("first", "all"):
        raise ArgsError(f"--paired_samples: {args.paired_samples!r} is not one of first, all")
    if args.paired_samples != "first" and not args.paired:
        raise ArgsError("--paired_samples: only with --paired")
    if args.paired and args.num_envs % args.paired_branches:
        raise ArgsError(f"--paired_branches {args.paired_branches}: --num_envs {args.num_envs} is not a multiple of it "
                        "(each group of that many tables is dealt one wall)")
    rollout = args.n_steps * args.num_envs
    if args.batch_size > rollout and not args.paired:
        raise ArgsError(f"--batch_size {args.batch_size} exceeds the rollout of --n_steps × --num_envs = {rollout}")
    if len(args.opponents) != len(args.opponent_weights):
        raise ArgsError(f"--opponent_weights: {len(args.opponent_weights)} weights for {len(args.opponents)} --opponents")
    if not args.opponents or sum(args.opponent_weights) <= 0:
        raise ArgsError("--opponent_weights: the pool needs at least one opponent with a positive weight")
    try:
        rules = load_rules(args.variant, ruleset=args.ruleset, preset=args.preset, options=parse_option_assignments(args.options))
    except OptionError as exc:
        raise ArgsError(str(exc)) from None
    for flag, names in (("--opponents", args.opponents), ("--eval_opponents", args.eval_opponents),
                        ("--bc_teacher", [args.bc_teacher])):
        for name in names:
            if name in BUILTIN or (name == "self" and flag == "--opponents"):
                continue
            if name == "advisor" and flag == "--bc_teacher":
                if not args.advice:
                    raise ArgsError("--bc_teacher advisor: clones the advice's own player, so it needs --advice")
                continue
            if not name.endswith(".pt") or not Path(name).is_file():
                raise ArgsError(f"{flag}: {name!r} is neither {', '.join(BUILTIN)}{', self' if flag == '--opponents' else ''} "
                                "nor an existing checkpoint file (*.pt)")
    from agents.players.advice import FEATURE_SETS

    if args.advice_features not in FEATURE_SETS:
        raise ArgsError(f"--advice_features: {args.advice_features!r} is not one of {', '.join(FEATURE_SETS)}")
    if args.init_checkpoint is not None and not Path(args.init_checkpoint).is_file():
        raise ArgsError(f"--init_checkpoint: {args.init_checkpoint!r} not found")
    from agents.players.departures import FEATURE_SETS as DEPARTURE_SETS, FEATURES_V2

    if args.departure_features not in DEPARTURE_SETS:
        raise ArgsError(f"--departure_features: {args.departure_features!r} is not one of {', '.join(DEPARTURE_SETS)}")
    if args.departure_features == FEATURES_V2 and rules.family != "gejiu":
        raise ArgsError(f"--departure_features: {FEATURES_V2} reads Gejiu's hand values; {rules.variant!r} is not Gejiu")
    if args.departure_scope not in ("all", "ready", "win") or (args.departure_scope != "all"
                                                               and args.departure_features != FEATURES_V2):
        raise ArgsError(f"--departure_scope: {args.departure_scope!r} refused: the scopes are all, ready and win, and "
                        f"ready and win need --departure_features {FEATURES_V2}")
    if args.departure_label_prob <= 0:
        raise ArgsError(f"--departure_label_prob: {args.departure_label_prob} refused: a probability in (0, 1]")
    if args.departure_label_scope not in ("all", "ready") or (args.departure_label_scope == "ready" and rules.family != "gejiu"):
        raise ArgsError(f"--departure_label_scope: {args.departure_label_scope!r} refused: the label scopes are all and "
                        f"ready, and ready reads Gejiu's wait sets")
    return rules
