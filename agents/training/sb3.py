"""The SB3 trainer of ``train.py --trainer sb3``: sb3-contrib ``MaskablePPO`` on the batched vector env.

``num_envs`` engine tables (:func:`mjenv.envs.vector.sb3_vec_env`), each with one learner seat (rotating over
seats and dealers); the other seats are played by an **opponent pool** drawn per hand (:class:`OpponentPool`:
``random``, ``heuristic`` and ``self``, frozen snapshots of the learner taken every ``snapshot_every`` steps, the
last ``pool_size`` kept, with ``opponent_weights``).  The policy is :func:`agents.players.policy.make_trunk` with a
linear action head and a small value head; illegal actions are masked.  Rewards are the learner's money ×
``reward_scale``; ``--advice`` appends the :mod:`agents.players.advice` rows to the policy's input and adds the
advice to its logits with a learned weight; ``--oracle_critic`` gives the value head its own trunk over the
observation plus the oracle rows (:class:`LearnerInputs`), which the policy never sees.  ``progress.csv`` and
TensorBoard events come from SB3's logger.  The all-seat trainer (the default) is :mod:`agents.training.ppo`.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from agents import make_agent
from agents.players.policy import PolicyAgent, checkpoint_payload, make_head, make_trunk, resolve_device, save_checkpoint
from agents.training.runlog import duplicate_eval, final_meta, finish_run
from mjenv.encoding.actions import N_ACTIONS
from mjenv.encoding.observation import OBS_VERSION, ObservationEncoder, OracleEncoder, encoder_for


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


def warm_start(model, args: Any, rules, folder: Path, features=None):
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

    teacher = make_agent(args.bc_teacher, rules, seed=args.seed + 3)
    pol.set_training_mode(True)
    report = behaviour_clone(
        forward, pol.parameters(), rules.variant, rules.options, teacher=teacher, rounds=args.bc_rounds, tables=args.bc_tables,
        steps_per_round=args.bc_steps, epochs=args.bc_epochs, lr=args.bc_lr, vf_coef=args.vf_coef, gamma=args.gamma,
        reward_scale=args.reward_scale, teacher_fraction=args.bc_teacher_fraction, seed=args.seed + 100,
        log=lambda m: print(m, flush=True), features=features, policy_weight=args.bc_policy_weight,
        holdout=args.bc_holdout)
    pol.set_training_mode(False)
    with torch.no_grad():  # PPO's own optimiser starts fresh on the cloned weights
        pol.optimizer = pol.optimizer_class(pol.parameters(), lr=model.lr_schedule(1), **pol.optimizer_kwargs)
    (folder / "clone.json").write_text(json.dumps(asdict(report), indent=2), encoding="utf-8")
    return report


def train_sb3(args: Any, config: str | None, rules, folder: Path, run_name: str, obs_shape, features, advice_row,
              fixed: dict, eval_agents: dict, init: dict | None) -> dict:
    """Train with ``MaskablePPO`` (the module docstring): cloning warm start, PPO with the opponent pool, snapshots,
    checkpoints and evaluations; returns the summary.  ``obs_shape`` is the policy's input (observation plus
    advice rows), ``fixed`` the pool's built agents by name."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    from mjenv.envs.vector import sb3_vec_env

    opts = rules.options
    inputs = LearnerInputs(args.variant, opts, features, args.oracle_critic)
    input_rows = obs_shape[0] + inputs.oracle_rows  # what the env gives; the policy reads the first obs_shape[0]
    arch = {"channels": args.channels, "hidden": args.hidden}

    class TrunkExtractor(BaseFeaturesExtractor):
        """SB3 wrapper around :func:`agents.players.policy.make_trunk` (its weights are what a checkpoint stores)."""

        def __init__(self, observation_space, channels: int, hidden: int, rows: int = obs_shape[0]):
            super().__init__(observation_space, features_dim=hidden + (N_ACTIONS if advice_row is not None else 0))
            self.width = rows * obs_shape[1]
            self.trunk = make_trunk((rows, obs_shape[1]), channels, hidden, advice_row)

        def forward(self, x):
            return self.trunk(x[:, : self.width])

    # The pool is handed to the env at construction (an opponent set afterwards may be replaced by the env's
    # default at reset) and learns the env core, which it reads to route rows, right after.
    pool = OpponentPool(None, args.opponents, args.opponent_weights, fixed, args.seed)
    venv = sb3_vec_env(rules, args.num_envs, seed=args.seed, opponent=pool)
    pool.core = venv.core
    venv = learner_vec_env(venv, inputs, args.reward_scale)

    # SB3 hands the schedule the remaining progress (1 -> 0).
    lr = ((lambda progress: args.lr_final + (args.learning_rate - args.lr_final) * progress) if args.anneal_lr
          else args.learning_rate)
    model = MaskablePPO(
        "MlpPolicy", venv, learning_rate=lr, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.n_epochs,
        gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip_range, ent_coef=args.ent_coef,
        vf_coef=args.vf_coef, max_grad_norm=args.max_grad_norm, seed=args.seed, device=str(resolve_device(args.device)), verbose=0,
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
    clone_report = warm_start(model, args, rules, folder, inputs if inputs.active else None) if args.bc_rounds > 0 else None

    def payload(step: int, extra: dict | None = None) -> dict:
        trunk = model.policy.features_extractor.trunk
        head = model.policy.action_net
        meta = {"algo": "MaskablePPO", "run": run_name, "timesteps": int(step), "seed": args.seed,
                "config": config or "", "precision": args.precision, **(extra or {})}
        return checkpoint_payload(trunk, head, variant=args.variant, options=opts, obs_shape=obs_shape, arch=arch, meta=meta,
                                  features=features.version if features is not None else None)

    def frozen(step: int, deterministic: bool, name: str) -> PolicyAgent:
        return PolicyAgent(payload(step), rules, deterministic=deterministic, seed=args.seed + step, name=name)

    eval_rows: list[dict] = []

    def evaluate(step: int, walls: int, first_wall: int) -> dict:
        out = duplicate_eval(frozen(step, True, "learner"), eval_agents, args, rules, step, walls, first_wall, eval_rows,
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
            "options": rules.options_dict()})
    finally:  # progress.csv and the TensorBoard files are open until the logger is closed
        model.logger.close()
        venv.close()
    return summary
