"""Train RLlib's PPO (new API stack) on :class:`mjenv.envs.rllib.MahjongRLlibEnv`: one shared, action-masked policy
plays every seat of Kawuxing.

Needs ``pip install -e ".[rllib]"`` (``ray[rllib]`` and torch).  Every seat maps to the policy ``"shared"``.  Two
models (``--model``):

* ``mlp`` (the default): RLlib's ``ActionMaskingTorchRLModule`` example, a dense network;
* ``resnet1d``: the network-only policy network (:class:`agents.training.rllib_module.ResNetMaskedModule`, the one
  ``network:PATH`` checkpoints play), fresh (``--channels --blocks --hidden``) or from a network-only checkpoint
  (``--init agents/checkpoints/kawuxing3-network.pt``); ``--save PATH`` writes the trained policy as a network-only
  ``mjenv-policy-v1`` checkpoint that ``python evaluate.py --agents network:PATH heuristic-flush`` plays.  The
  network also reads the derived hand rows ``mjenv-hand-v1`` where its checkpoint does
  (``--init agents/checkpoints/kawuxing3-network-hand.pt``) or with ``--derived mjenv-hand-v1``; the module computes
  them from the env's observation.

Both read the ``action_mask`` half of the observation and give illegal actions a logit of ``FLOAT_MIN``.  The
defaults are a smoke-sized run::

    python examples/rllib_ppo.py                      # 3 iterations of 400 env steps, prints the returns
    python examples/rllib_ppo.py --iterations 50 --batch 4000 --env_runners 2
    python examples/rllib_ppo.py --model resnet1d --init agents/checkpoints/kawuxing3-network.pt --lr 1e-5 \
        --iterations 20 --batch 4000 --save runs/rllib/network.pt
    python examples/rllib_ppo.py --model resnet1d --init agents/checkpoints/kawuxing3-network-hand.pt --lr 1e-5 \
        --iterations 20 --batch 4000 --save runs/rllib/network-hand.pt

Each iteration prints the iteration, env steps so far, episodes (hands) finished and the mean per-seat return
of the shared policy (money per hand: 0 on average, since self-play is zero-sum).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def module_spec(model: str = "mlp", hidden: int = 64, variant: str = "kawuxing3", resnet: dict | None = None):
    """The ``RLModuleSpec`` of the shared policy: RLlib's masked MLP example (``mlp``, ``hidden`` units), or the
    ``resnet1d`` network-only module with ``resnet`` as its extra ``model_config`` (``channels``, ``blocks``,
    ``hidden``, ``derived``, ``init``)."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    if model == "mlp":
        from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

        return RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                            model_config={"fcnet_hiddens": [hidden], "head_fcnet_hiddens": [hidden]})
    if model == "resnet1d":
        from agents.training.rllib_module import ResNetMaskedModule
        from mjenv.encoding.observation import ObservationEncoder

        obs_shape = ObservationEncoder(variant).shape
        return RLModuleSpec(module_class=ResNetMaskedModule,
                            model_config={"obs_shape": list(obs_shape), "variant": variant, **(resnet or {})})
    raise ValueError(f"--model must be mlp or resnet1d, got {model!r}")


def build(iterations_batch: int = 400, env_runners: int = 0, hidden: int = 64, seed: int = 0, variant: str = "kawuxing3",
          model: str = "mlp", resnet: dict | None = None, lr: float = 3e-4):
    """The PPO algorithm object (``config.build_algo()``) for the shared masked policy on ``variant``."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from mjenv.envs.rllib import MahjongRLlibEnv

    config = (
        PPOConfig()
        # (RLlib's pre-check steps random actions from the action space, which a masked game refuses)
        .environment(MahjongRLlibEnv, env_config={"variant": variant, "seed": seed}, disable_env_checking=True)
        .env_runners(num_env_runners=env_runners, rollout_fragment_length="auto")
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            "shared": module_spec(model, hidden, variant, resnet)}))
        .training(train_batch_size_per_learner=iterations_batch, minibatch_size=min(128, iterations_batch), num_epochs=1,
                  lr=lr)
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
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--model", choices=("mlp", "resnet1d"), default="mlp")
    p.add_argument("--channels", type=int, default=None, help="resnet1d channels (default 64, or the --init checkpoint's)")
    p.add_argument("--blocks", type=int, default=None, help="resnet1d residual blocks (default 4, or the checkpoint's)")
    p.add_argument("--hidden", type=int, default=None, help="resnet1d dense units (default 256, or the checkpoint's)")
    p.add_argument("--derived", default=None, choices=("mjenv-hand-v1",),
                   help="resnet1d: the network also reads these derived rows (default: none, or the --init checkpoint's)")
    p.add_argument("--init", default=None, help="resnet1d: start from this network-only checkpoint")
    p.add_argument("--save", default=None, help="resnet1d: write the trained policy here as a network-only checkpoint")
    a = p.parse_args(argv)
    if a.model != "resnet1d" and (a.init or a.save or a.channels or a.blocks or a.hidden or a.derived):
        p.error("--init, --save, --channels, --blocks, --hidden and --derived need --model resnet1d")
    resnet = {k: v for k, v in (("channels", a.channels), ("blocks", a.blocks), ("hidden", a.hidden), ("init", a.init),
                                ("derived", a.derived)) if v is not None}
    import ray

    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    if not ray.is_initialized():
        here = str(Path(__file__).resolve().parents[1])
        ray.init(num_cpus=max(1, a.env_runners + 1), include_dashboard=False, logging_level="error",
                 runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(x for x in (here, os.environ.get("PYTHONPATH", "")) if x)}})
    algo = build(a.batch, a.env_runners, seed=a.seed, variant=a.variant, model=a.model, resnet=resnet, lr=a.lr)
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
        if a.save:
            from agents.players.policy import save_checkpoint, tensor_checksum
            from agents.training.rllib_module import module_payload
            from mjenv.rules import load_rules

            payload = module_payload(algo.get_module("shared"), load_rules(a.variant),
                                     meta={"iterations": a.iterations, "env_steps": rows[-1]["env_steps"] if rows else 0,
                                           "seed": a.seed, "init": a.init or ""})
            print(f"wrote {save_checkpoint(a.save, payload)} ({tensor_checksum(payload)[:19]}…)", flush=True)
    finally:
        algo.stop()
    return rows


if __name__ == "__main__":
    main()
