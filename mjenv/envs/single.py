"""Single-agent Gymnasium env: one seat against fixed opponents, one hand per episode.

:class:`MahjongSingleEnv` is :class:`mjenv.envs.learner.LearnerTables` with one table: the agent
plays the learner seat (``learner_seats``, default rotating through every seat from hand to hand),
the other seats are played by ``opponent`` (default: uniformly random legal actions).  Observation,
reward and episode semantics are those of :mod:`mjenv.envs.vector`; ``info["action_mask"]`` and
``action_masks()`` give the legal actions (sb3-contrib's ``ActionMasker`` / ``MaskablePPO`` read the
latter).

An illegal action ends the episode with reward ``illegal_reward`` (default -1) and
``info["illegal_action"] = True``; the hand is abandoned and the next ``reset`` deals a new one
(``illegal_action="raise"`` raises :class:`~mjenv.engine.core.IllegalActionError` instead).  An action that is
not one integer id is always refused, changing nothing; so are a bad seed and any call after ``close()``, and a
step after one that failed half-way (see :mod:`mjenv.envs.vector`) until ``reset``.
``reset(seed=s)`` makes the run reproducible: it fixes this and every later hand's wall and re-seeds
the default opponent.
"""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mjenv.encoding.actions import N_ACTIONS
from mjenv.engine.arguments import check_seed
from mjenv.engine.core import IllegalActionError
from mjenv.envs.learner import LearnerEnvCore, Policy, show_value
from mjenv.rules.value import Rules


class MahjongSingleEnv(LearnerEnvCore, gym.Env):
    """One learner seat against fixed opponents (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(
        self,
        variant: str | Rules | None = None,
        *,
        ruleset: str | None = None,
        preset: str | None = None,
        options: Any = None,
        learner_seats: Sequence[int] | None = None,
        opponent: Policy | None = None,
        flatten: bool = False,
        oracle: bool = False,
        obs_version: str = "mjenv-obs-v1",
        illegal_action: str = "terminate",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        rules: Rules | None = None,
    ):
        if illegal_action not in ("terminate", "raise"):
            raise ValueError(f"illegal_action must be 'terminate' or 'raise', got {illegal_action!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} not supported; use one of {self.metadata['render_modes']}")
        self.observation_space = self._build_core(
            variant, 1, flatten, ruleset=ruleset, preset=preset, options=options,
            learner_seats=learner_seats, opponent=opponent, oracle=oracle, obs_version=obs_version, rules=rules,
        )
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(N_ACTIONS)
        self._over = True
        self._fresh = False  # True once an ended hand has been followed by a dealt one

    def _obs(self, obs: np.ndarray) -> np.ndarray:
        return super()._obs(obs)[0]

    def _info(self) -> dict:
        return {"action_mask": self.core.action_masks()[0], "seat": int(self.core.seat[0])}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Deal a hand and play opponents up to the agent's first decision; returns ``(obs, info)``."""
        self.core._check_open("reset()")
        if options:
            raise ValueError(f"MahjongSingleEnv.reset takes no options, got {sorted(options)}")
        seed = check_seed(seed)
        super().reset(seed=seed)
        if seed is not None:
            self.core.reset(seed)
        elif not self._fresh or self.core.broken is not None:
            self.core.redeal()
        self._fresh = False
        self._over = False
        if self.render_mode == "human":
            self.render()
        return self._obs(self.core.observe()), self._info()

    def step(self, action):
        """One decision of the agent; returns ``(obs, reward, terminated, truncated, info)``."""
        self.core._check_can_step()
        if self._over:
            raise RuntimeError("step() after the episode ended; call reset()")
        arr = np.asarray(action)
        if arr.size != 1 or not np.issubdtype(arr.dtype, np.integer):  # 3.7 is not action 3; bools are not ids
            raise IllegalActionError(f"action must be one integer id 0..{N_ACTIONS - 1}, got {show_value(action)}")
        a = int(arr.reshape(-1)[0])
        if not (0 <= a < N_ACTIONS and self.core.engine.mask[0, a]):
            if self.illegal_action == "raise":
                raise IllegalActionError(f"action {a} is not legal for seat {int(self.core.seat[0])}")
            self._over = True
            info = self._info()
            info["illegal_action"] = True
            return self._obs(self.core.observe()), self.illegal_reward, True, False, info
        reward, ended, final_info = self.core.step(np.array([a]))
        if self.render_mode == "human":
            self.render()
        if ended[0]:
            self._over = True
            self._fresh = True  # the engine table already holds the next hand
            info = {"action_mask": np.zeros(N_ACTIONS, bool), **final_info[0]}
            return self._obs(self.core.last_final_obs[:1]), float(reward[0]), True, False, info
        return self._obs(self.core.observe()), float(reward[0]), False, False, self._info()

    def action_masks(self) -> np.ndarray:
        """``bool [111]``: the agent's legal actions (all False once the episode is over)."""
        return np.zeros(N_ACTIONS, bool) if self._over else self.core.action_masks()[0]

    def render(self) -> str | None:
        """The table from the agent's seat as text (``ansi``: returned; ``human``: printed)."""
        if self.render_mode is None:
            return None
        from mjenv.render import render_table

        text = render_table(self.core.engine, 0, int(self.core.seat[0]))
        if self.render_mode == "human":
            print(text, end="\n\n")
            return None
        return text

    def close(self) -> None:
        """Nothing to release; later ``reset`` and ``step`` calls are refused."""
        self.core.close()
