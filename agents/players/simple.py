"""The uniform random agent: a seeded baseline that picks any legal action with equal probability.

Called with ``keys`` (as the tournament arena does, :mod:`agents.players.keyrng`) its choice in each row depends only on
that row's key and the agent's seed, not on how the hands are batched; without keys it draws from its own
compiled stream (:class:`mjenv.engine.sampling.ActionSampler`).
"""

from __future__ import annotations

import numpy as np

from agents.players.keyrng import keyed_legal_actions, salt_of
from mjenv.engine.sampling import ActionSampler


class RandomAgent:
    """Uniform over the legal actions of each row; ``seed`` makes the choices reproducible.

    The choice is the compiled :class:`mjenv.engine.sampling.ActionSampler` (one pass over the mask, no
    per-table numpy work), or, with ``keys``, the compiled keyed choice of :mod:`agents.players.keyrng`.
    """

    uses_obs = False  # lets the envs and the arena skip encoding observations for it
    takes_keys = True  # the arena passes per-decision keys (agents.players.keyrng)

    def __init__(self, seed: int | None = 0, name: str = "random"):
        self.name = name
        self.seed = 0 if seed is None else int(seed)  # salts the keyed choice (seed None: as 0)
        self.sampler = ActionSampler(seed)

    def __call__(self, obs: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
        """Same as :meth:`act` (so the agent can be an env's opponent policy)."""
        return self.act(obs, mask)

    def act(self, obs: np.ndarray | None, mask: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action per row (``obs`` is not looked at and may be ``None``); ``keys``
        (``uint64 [B]``, one per decision) make each row's choice a function of its key and the seed alone."""
        mask = np.asarray(mask, dtype=bool)
        if mask.ndim != 2:
            raise ValueError("mask must be bool [B, 111] with at least one legal action per row")
        if keys is not None:
            keys = np.asarray(keys, dtype=np.uint64)
            if keys.shape != (mask.shape[0],):
                raise ValueError(f"keys: need one uint64 key per mask row ({mask.shape[0]}), got shape {keys.shape}")
            out = np.empty(mask.shape[0], np.int64)
            if keyed_legal_actions(mask, keys, salt_of(self.seed), out):
                raise ValueError("mask must be bool [B, 111] with at least one legal action per row")
            return out
        before = self.sampler.state.copy()
        out = np.empty(mask.shape[0], np.int64)
        self.sampler.sample(mask, out)
        if (out < 0).any():
            self.sampler.state[:] = before  # a bad call leaves the stream where it was
            raise ValueError("mask must be bool [B, 111] with at least one legal action per row")
        return out
