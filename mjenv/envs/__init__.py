"""Thin adapters over the engine: PettingZoo AEC env, Gymnasium / stable-baselines3 vector envs, single-agent env.

No rules live here; the adapters translate engine state into observations, masks and rewards.
The stable-baselines3 adapter (:mod:`mjenv.envs.sb3`) is imported only on use, so this package
works without stable-baselines3 and torch.
"""
