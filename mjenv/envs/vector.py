"""Batched training envs: one :class:`~mjenv.engine.core.Engine` batch behind a Gymnasium ``VectorEnv``.

This module owns (the learner core in :mod:`mjenv.envs.learner`, re-exported here)

* :class:`LearnerTables` — the shared core: ``B`` engine tables, each with one **learner seat**; the
  other seats are played by a batched **opponent policy** until every table waits for its learner.
  Finished tables are dealt again at once (the wall of table ``b``'s k-th hand is the wall of
  ``Engine.reset(seed=env_seed, table_ids=[episode])`` with a global episode counter, so a run is
  reproducible from its seed).
* :class:`MahjongVectorEnv` — a ``gymnasium.vector.VectorEnv`` over it (same-step autoreset);
* :func:`sb3_vec_env` — the stable-baselines3 ``VecEnv`` (:mod:`mjenv.envs.sb3`, imported on use
  so that mjenv works without stable-baselines3 and torch), which sb3-contrib ``MaskablePPO``
  trains on directly;
* :func:`random_policy` — the default opponent, uniformly random among legal actions.

Every constructor takes the rules as ``variant`` / ``ruleset`` / ``preset`` / ``options`` (resolved once, by the
engine) or as ``rules=`` (a resolved :class:`mjenv.rules.Rules`).

Sub-env ``b`` is table ``b`` seen from its learner seat.  An episode is one hand.  Observations are
the ``mjenv-obs-v1`` encoding (``float32 [C, 34]``, or ``[C*34]`` with ``flatten=True``) of the
learner seat, or with ``obs_version="mjenv-obs-v2"`` its compact bytes (``uint8 [N]``, :mod:`mjenv.encoding.compact`;
opponents still get v1); ``action_masks()`` / ``info["action_mask"]`` are its legal actions.  The reward of a
step is the learner seat's money change from its previous decision to its next one (or to the end
of the hand): kong money and settlements paid to or by that seat, never another seat's reward, so
an episode's rewards add up to the learner's ``deltas`` of the hand.

Learner seats: ``learner_seats=None`` rotates the learner through every seat; a list restricts it
(``[0]``: always seat 0).  The dealer rotates too: episode ``e`` has dealer ``e % n`` and learner
seat ``learner_seats[(e // n) % len(learner_seats)]``.  A hand that ends before its learner's first
decision (e.g. the dealer wins on its initial tiles) has no transition and is dealt again; it is
counted in ``skipped_hands``.

Opponent policy: any callable ``(obs float32 [K, C, 34], mask bool [K, 111]) -> actions int [K]``,
called once per round with every table whose non-learner seat must act.  A policy with attribute
``uses_obs = False`` receives ``obs=None`` (no encoding cost).  For self-play pass the learner's own
policy (e.g. :func:`mjenv.envs.sb3.model_policy`).

What a step refuses, changing nothing: learner actions that are not exactly ``B`` integer ids 0..110 (a float,
a string, NaN, a bool or an array of another shape is never rounded or flattened into one) and illegal ones
(:class:`~mjenv.engine.core.IllegalActionError`), a bad seed (``ValueError``), and any call after ``close()``
(``RuntimeError``).  A step that fails half-way — the opponent policy raised, or chose an illegal action,
after the learners' actions were applied — leaves the tables mid-round; every later ``step`` is then refused
(``RuntimeError`` naming the first failure) until ``reset``, so that a learner's action never plays an
opponent's seat.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from mjenv.encoding.actions import N_ACTIONS
from mjenv.encoding.observation import OBS_VERSION
from mjenv.engine.arguments import check_seed
from mjenv.envs.learner import (  # noqa: F401  (LearnerTables, random_policy ... are read from here too)
    LearnerEnvCore,
    LearnerTables,
    Policy,
    check_learner_actions,
    random_policy,
    show_value,
)
from mjenv.rules.value import Rules


class MahjongVectorEnv(LearnerEnvCore, VectorEnv):
    """Gymnasium ``VectorEnv`` over :class:`LearnerTables` (same-step autoreset; see the module docstring).

    ``step`` returns ``infos`` with ``action_mask`` (bool ``[B, 111]``), ``seat`` and ``episode_id`` for every
    sub-env, and for ended episodes ``final_obs`` / ``final_info`` (``{"result", "seat", "episode_id"}``)
    with their ``_final_obs`` / ``_final_info`` masks.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["ansi"]}

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
        flatten: bool = False,
        oracle: bool = False,
        obs_version: str = OBS_VERSION,
        seed: int | None = None,
        render_mode: str | None = None,
        rules: Rules | None = None,
    ):
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r} not supported; use 'ansi' or None")
        self.single_observation_space = self._build_core(
            variant, num_envs, flatten, ruleset=ruleset, preset=preset, options=options,
            learner_seats=learner_seats, opponent=opponent, oracle=oracle, obs_version=obs_version, seed=seed,
            rules=rules,
        )
        self.render_mode = render_mode
        self.num_envs = num_envs
        self.single_action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)

    def _infos(self) -> dict:
        return {
            "action_mask": self.core.action_masks(),
            "seat": self.core.seat.copy(),
            "episode_id": self.core.episode.copy(),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Deal every table; ``seed`` restarts the run from that seed (every later hand follows from it).

        Returns ``(obs, infos)``.
        """
        if options:
            raise ValueError(f"MahjongVectorEnv.reset takes no options, got {sorted(options)}")
        self.core._check_open("reset()")
        seed = check_seed(seed)
        if seed is not None:
            self._np_random_seed = seed
            self._np_random = np.random.default_rng(seed)
        self.core.reset(seed)
        return self._obs(self.core.observe()), self._infos()

    def step(self, actions):
        """One learner decision on every table; returns ``(obs, rewards, terminations, truncations, infos)``."""
        reward, ended, final_info = self.core.step(actions)
        infos = self._infos()
        if ended.any():
            fo = np.full(self.num_envs, None, dtype=object)
            fi = np.full(self.num_envs, None, dtype=object)
            for b in np.flatnonzero(ended):
                fo[b] = self._obs(self.core.last_final_obs[b : b + 1])[0]
                fi[b] = final_info[b]
            infos.update({"final_obs": fo, "_final_obs": ended.copy(), "final_info": fi, "_final_info": ended.copy()})
        return self._obs(self.core.observe()), reward.astype(np.float64), ended, np.zeros(self.num_envs, bool), infos

    def action_masks(self) -> np.ndarray:
        """``bool [num_envs, 111]`` legal actions of each learner (for sb3-contrib-style masking)."""
        return self.core.action_masks()

    def render(self) -> str | None:
        """Table 0 from its learner seat as text (``render_mode="ansi"``)."""
        if self.render_mode is None:
            return None
        from mjenv.render import render_table

        return render_table(self.core.engine, 0, int(self.core.seat[0]))

    def close(self, **kwargs) -> None:
        """Nothing to release; later ``reset`` and ``step`` calls are refused."""
        core = self.__dict__.get("core")  # absent when the constructor refused its arguments (gymnasium's __del__ closes)
        if core is not None:
            core.close()
        self.closed = True


def sb3_vec_env(variant: str | Rules | None = None, num_envs: int = 8, **kwargs):
    """A stable-baselines3 ``VecEnv`` (flat observations) with ``action_masks()``; needs stable-baselines3."""
    from mjenv.envs.sb3 import MahjongSB3VecEnv

    return MahjongSB3VecEnv(variant, num_envs, **kwargs)
