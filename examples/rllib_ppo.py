"""Train RLlib's PPO (new API stack) on :class:`mjenv.envs.rllib.MahjongRLlibEnv`: one shared, action-masked policy
plays every seat of Kawuxing.

Needs ``pip install -e ".[rllib]"`` (``ray[rllib]`` and torch).  Every seat maps to the policy ``"shared"``, an
RLlib ``ActionMaskingTorchRLModule`` (it reads the ``action_mask`` half of the observation and gives illegal
actions a logit of ``FLOAT_MIN``).  The defaults are a smoke-sized run::

    python examples/rllib_ppo.py                      # 3 iterations of 400 env steps, prints the returns
    python examples/rllib_ppo.py --iterations 50 --batch 4000 --env_runners 2

Each iteration prints the iteration, env steps so far, episodes (hands) finished and the mean per-seat return
of the shared policy (money per hand: 0 on average, since self-play is zero-sum).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def build(iterations_batch: int = 400, env_runners: int = 0, hidden: int = 64, seed: int = 0, variant: str = "kawuxing3"):
    """The PPO algorithm object (``config.build_algo()``) for the shared masked policy on ``variant``."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    from mjenv.envs.rllib import MahjongRLlibEnv

    config = (
        PPOConfig()
        # (RLlib's pre-check steps random actions from the action space, which a masked game refuses)
        .environment(MahjongRLlibEnv, env_config={"variant": variant, "seed": seed}, disable_env_checking=True)
        .env_runners(num_env_runners=env_runners, rollout_fragment_length="auto")
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            "shared": RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                   model_config={"fcnet_hiddens": [hidden], "head_fcnet_hiddens": [hidden]})}))
        .training(train_batch_size_per_learner=iterations_batch, minibatch_size=min(128, iterations_batch), num_epochs=1,
                  lr=3e-4)
        .debugging(seed=seed)
    )
    return config.build_algo()


def main(argv: list[str] | None = None) -> list[dict]:
    """Train ``--iterations`` PPO iterations; returns one row per iteration (steps, hands, mean return)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--batch", type=int, default=400, help="env steps per iteration (train_batch_size_per_learner)")
    p.add_argument("--env_runners", type=int, default=0, help="Ray env-runner actors (0: sample in the driver)")
    p.add_argument("--variant", default="kawuxing3")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    import ray

    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    if not ray.is_initialized():
        here = str(Path(__file__).resolve().parents[1])
        ray.init(num_cpus=max(1, a.env_runners + 1), include_dashboard=False, logging_level="error",
                 runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(x for x in (here, os.environ.get("PYTHONPATH", "")) if x)}})
    algo = build(a.batch, a.env_runners, seed=a.seed, variant=a.variant)
    rows = []
    try:
        for i in range(a.iterations):
            res = algo.train()
            runners = res.get("env_runners", {})
            row = {"iteration": i + 1, "env_steps": int(res.get("num_env_steps_sampled_lifetime", 0)),
                   "hands": int(runners.get("num_episodes_lifetime", 0)),
                   "mean_seat_return": float(runners.get("agent_episode_returns_mean", {}).get("seat_0", float("nan")))}
            learner = res.get("learners", {}).get("shared", {})
            row["policy_loss"] = float(learner.get("policy_loss", float("nan")))
            rows.append(row)
            print(row, flush=True)
    finally:
        algo.stop()
    return rows


if __name__ == "__main__":
    main()
