"""The uniform random agent: a seeded baseline that picks any legal action with equal probability."""

from __future__ import annotations

import numpy as np

from mjenv.engine.sampling import ActionSampler


class RandomAgent:
    """Uniform over the legal actions of each row; ``seed`` makes the choices reproducible.

    The choice is the compiled :class:`mjenv.engine.sampling.ActionSampler` (one pass over the mask, no
    per-table numpy work).
    """

    uses_obs = False  # lets the envs and the arena skip encoding observations for it

    def __init__(self, seed: int | None = 0, name: str = "random"):
        self.name = name
        self.sampler = ActionSampler(seed)

    def __call__(self, obs: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
        """Same as :meth:`act` (so the agent can be an env's opponent policy)."""
        return self.act(obs, mask)

    def act(self, obs: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
        """A uniformly random legal action per row (``obs`` is not looked at and may be ``None``)."""
        mask = np.asarray(mask, dtype=bool)
        if mask.ndim != 2:
            raise ValueError("mask must be bool [B, 111] with at least one legal action per row")
        before = self.sampler.state.copy()
        out = np.empty(mask.shape[0], np.int64)
        self.sampler.sample(mask, out)
        if (out < 0).any():
            self.sampler.state[:] = before  # a bad call leaves the stream where it was
            raise ValueError("mask must be bool [B, 111] with at least one legal action per row")
        return out
