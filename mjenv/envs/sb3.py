"""stable-baselines3 adapter: a ``VecEnv`` over :class:`mjenv.envs.learner.LearnerTables`.

Importing this module needs stable-baselines3 (and so torch): install the ``train`` extra.  The rest
of mjenv never imports it; :func:`mjenv.envs.vector.sb3_vec_env` loads it on first use.

:class:`MahjongSB3VecEnv` is one engine batch, not a list of sub-envs: ``num_envs`` tables, each seen
from its learner seat (semantics as in :mod:`mjenv.envs.vector`).  Observations are flat
``float32 [C*34]`` by default so that ``MlpPolicy`` applies; ``action_masks()`` returns the learners'
legal actions, which is what sb3-contrib's ``MaskablePPO`` looks for::

    from sb3_contrib import MaskablePPO
    from mjenv.envs.vector import sb3_vec_env
    venv = sb3_vec_env("kawuxing3", 16, seed=0)
    MaskablePPO("MlpPolicy", venv).learn(100_000)

:func:`model_policy` turns a trained model into an opponent policy for self-play.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from mjenv.encoding.actions import N_ACTIONS
from mjenv.engine.arguments import check_seed
from mjenv.envs.learner import LearnerEnvCore, Policy
from mjenv.rules.value import Rules


class MahjongSB3VecEnv(LearnerEnvCore, VecEnv):
    """SB3 ``VecEnv`` with ``action_masks()``; episodes end per table and tables re-deal at once.

    ``step_wait`` returns per-env infos with ``action_mask``; an ended episode's info also carries
    ``terminal_observation`` (SB3's convention) and ``result`` (the engine's hand result).  Actions, seeds and
    calls after ``close()`` or after a step that failed half-way are refused as in :mod:`mjenv.envs.vector`.
    """

    def __init__(
        self,
        variant: str | Rules | None = None,
        num_envs: int = 8,
        *,
        ruleset: str | None = None,
        preset: str | None = None,
        options: Any = None,
        learner_seats: Sequence[int] | None = None,
        opponent: Policy | None = None,
        flatten: bool = True,
        oracle: bool = False,
        obs_version: str = "mjenv-obs-v1",
        seed: int | None = None,
        rules: Rules | None = None,
    ):
        space = self._build_core(
            variant, num_envs, flatten, ruleset=ruleset, preset=preset, options=options,
            learner_seats=learner_seats, opponent=opponent, oracle=oracle, obs_version=obs_version, seed=seed,
            rules=rules,
        )
        self.render_mode = None
        super().__init__(num_envs, space, spaces.Discrete(N_ACTIONS))
        self._actions: np.ndarray | None = None

    def seed(self, seed: int | None = None) -> list:
        """The seed of the next ``reset`` (an integer 0..2**64-1; ``None``: a random one), as SB3's ``VecEnv.seed``;
        anything else is refused with ``ValueError`` and the pending seed kept."""
        return super().seed(check_seed(seed))

    def reset(self) -> np.ndarray:
        """Deal every table: from the seed given to ``seed()`` if any (SB3 applies it at the next reset),
        else the next hands of the run."""
        self.core.reset(self._seeds[0])
        self._reset_seeds()
        masks = self.core.action_masks()
        self.reset_infos = [{"action_mask": masks[b]} for b in range(self.num_envs)]
        return self._obs(self.core.observe())

    def step_async(self, actions: np.ndarray) -> None:
        """Store the learners' actions for :meth:`step_wait`."""
        self._actions = np.asarray(actions)

    def step_wait(self):
        """Apply the stored actions; returns ``(obs, rewards, dones, infos)``."""
        reward, ended, final_info = self.core.step(self._actions)
        masks = self.core.action_masks()
        infos: list[dict] = [{"action_mask": masks[b]} for b in range(self.num_envs)]
        for b in np.flatnonzero(ended):
            infos[b]["terminal_observation"] = self._obs(self.core.last_final_obs[b : b + 1])[0]
            infos[b].update(final_info[b])
        return self._obs(self.core.observe()), reward.astype(np.float32), ended.copy(), infos

    def action_masks(self) -> np.ndarray:
        """``bool [num_envs, 111]``: the legal actions of every learner."""
        return self.core.action_masks()

    def close(self) -> None:
        """Nothing to release; later ``reset`` and ``step`` calls are refused."""
        self.core.close()

    # The VecEnv attribute protocol, answered for the one batch: "sub-env" i is table i.
    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        """The attribute of the env (the same for every table; ``action_masks`` per table)."""
        idx = self._indices(indices)
        if attr_name == "action_masks":
            return [self.action_masks] * len(idx)
        value = getattr(self, attr_name)
        return [value] * len(idx)

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        """Set an attribute of the env (shared by all tables)."""
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        """``action_masks`` returns one mask per table; other methods are called once and repeated."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in idx]
        value = getattr(self, method_name)(*method_args, **method_kwargs)
        return [value] * len(idx)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        """No gymnasium wrappers are involved."""
        return [False] * len(self._indices(indices))


def model_policy(model, *, flatten: bool = True, deterministic: bool = False) -> Policy:
    """An opponent policy from a maskable model (sb3-contrib ``MaskablePPO``), e.g. for self-play."""

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        x = obs.reshape(obs.shape[0], -1) if flatten else obs
        actions, _ = model.predict(x, action_masks=mask, deterministic=deterministic)
        return np.asarray(actions)

    return act
