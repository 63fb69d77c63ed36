"""The uniform random agent: a seeded baseline that picks any legal action with equal probability."""

from __future__ import annotations

import numpy as np


class RandomAgent:
    """Uniform over the legal actions of each row; ``seed`` makes the choices reproducible."""

    uses_obs = False  # lets the envs and the arena skip encoding observations for it

    def __init__(self, seed: int | None = 0, name: str = "random"):
        self.name = name
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
        """Same as :meth:`act` (so the agent can be an env's opponent policy)."""
        return self.act(obs, mask)

    def act(self, obs: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
        """A uniformly random legal action per row (``obs`` is not looked at and may be ``None``)."""
        mask = np.asarray(mask, dtype=bool)
        if mask.ndim != 2 or not mask.any(1).all():
            raise ValueError("mask must be bool [B, 111] with at least one legal action per row")
        return (self.rng.random(mask.shape) * mask + mask * 1e-12).argmax(1).astype(np.int64)
