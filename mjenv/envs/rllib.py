"""An RLlib ``MultiAgentEnv`` over the engine: one table, every seat an agent, only the acting seat reports.

This module owns :class:`MahjongRLlibEnv` (needs ``ray[rllib]``: ``pip install -e ".[rllib]"``; RLlib is imported
when this module is).  Agents are ``"seat_0"`` … ``"seat_{n-1}"``.  At each step exactly one seat acts — the
engine's actor — and only that seat receives an observation, as RLlib's multi-agent API expects ("only acting
agents report").  An observation is a dict, the layout of RLlib's action-masking example module
(``ray.rllib.examples.rl_modules.classes.action_masking_rlm.ActionMaskingTorchRLModule``):

* ``"observations"``: the ``mjenv-obs-v1`` encoding of the table from that seat, flattened (``float32 [C*34]``);
* ``"action_mask"``: its legal actions as ``float32 [111]`` (1 = legal).

Rewards are money: each seat is paid, at every step, its money change since it was last paid (kong money when it
happens, the settlement at the end of the hand), so a seat's rewards over a hand add up to its money for the hand.
Seats are paid only once they have had a first observation; money that moves before that (rare: kong money
before a seat's first decision) is paid with that first observation.  An episode is one hand; it ends with
``terminateds["__all__"] = True`` and every seat that acted paid (the hand's result is ``env.last_result``).  Hands are seeded walls: episode ``k`` after
``reset(seed=s)`` is the wall of ``(s, k)`` with dealer ``k % n``, as in :mod:`mjenv.envs.vector`.

``env_config`` keys: ``variant`` (default ``kawuxing3``), ``ruleset``, ``preset``, ``options`` (a dict of rule
options), or ``rules`` (a :class:`mjenv.rules.Rules` value instead of those four), ``seed``.  ``examples/rllib_ppo.py`` trains RLlib's PPO on it with one shared masked policy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from mjenv.encoding.actions import N_ACTIONS
from mjenv.encoding.observation import encoder_for
from mjenv.engine.arguments import check_seed
from mjenv.engine.core import Engine, IllegalActionError
from mjenv.envs.learner import show_value
from mjenv.engine.state import DONE

_KEYS = {"variant", "ruleset", "preset", "options", "rules", "seed"}


class MahjongRLlibEnv(MultiAgentEnv):
    """One engine table as an RLlib multi-agent env (see the module docstring)."""

    def __init__(self, config: dict | None = None):
        super().__init__()
        config = dict(config or {})
        unknown = set(config) - _KEYS
        if unknown:
            raise ValueError(f"env_config: unknown key(s) {', '.join(sorted(unknown))}; valid: {', '.join(sorted(_KEYS))}")
        self.engine = Engine(config.get("variant"), 1, ruleset=config.get("ruleset"), preset=config.get("preset"),
                             options=config.get("options"), record_events=False, rules=config.get("rules"))
        self.rules = self.engine.rules
        self.variant = self.rules.variant
        self.n = self.engine.n
        self.encoder = encoder_for(self.engine)
        self.seed = check_seed(config.get("seed", 0))
        self.possible_agents = [f"seat_{i}" for i in range(self.n)]
        self.agents = list(self.possible_agents)
        box = spaces.Box(self.encoder.low.reshape(-1), self.encoder.high.reshape(-1), dtype=np.float32)
        space = spaces.Dict({"observations": box, "action_mask": spaces.Box(0.0, 1.0, (N_ACTIONS,), np.float32)})
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        self._episode = 0
        self._paid = np.zeros(self.n)
        self._seen = np.zeros(self.n, bool)

    def _deal(self) -> None:
        """Deal the next hand (again while a deal ends at once, e.g. a dealer's win on its initial tiles)."""
        while True:
            k = self._episode
            self._episode += 1
            self.engine.reset(seed=self.seed, table_ids=[k], dealer=k % self.n)
            if self.engine.state.phase[0] != DONE:
                break
        self._paid[:] = 0.0
        self._seen[:] = False

    def _observe(self) -> tuple[str, dict]:
        s = int(self.engine.state.actor[0])
        obs = self.encoder.encode(self.engine.state, np.array([s]), engine=self.engine)[0].reshape(-1)
        self._seen[s] = True
        return f"seat_{s}", {"observations": obs, "action_mask": self.engine.mask[0].astype(np.float32)}

    def _pay(self, seats) -> dict:
        money = self.engine.state.money[0]
        out = {f"seat_{s}": float(money[s] - self._paid[s]) for s in seats}
        self._paid[list(seats)] = money[list(seats)]
        return out

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Deal a hand; ``seed`` restarts the hand sequence from episode 0 of that seed.  Returns the acting seat's
        observation and an empty info dict for it."""
        if options:
            raise ValueError(f"MahjongRLlibEnv.reset takes no options, got {sorted(options)}")
        if seed is not None:
            self.seed = check_seed(seed)
            self._episode = 0
        self._deal()
        agent, obs = self._observe()
        return {agent: obs}, {agent: {}}

    def step(self, action_dict: dict[str, Any]):
        """Play the acting seat's action; returns ``(obs, rewards, terminateds, truncateds, infos)`` dicts."""
        st = self.engine.state
        actor = f"seat_{int(st.actor[0])}"
        if set(action_dict) != {actor}:
            raise ValueError(f"MahjongRLlibEnv.step: expected an action for {actor} only, got {sorted(action_dict)}")
        action = np.asarray(action_dict[actor])
        if action.size != 1 or not np.issubdtype(action.dtype, np.integer):  # 11.7 is not action 11; bools are not ids
            raise IllegalActionError(f"MahjongRLlibEnv.step: {actor}'s action must be one integer id "
                                     f"0..{N_ACTIONS - 1}, got {show_value(action_dict[actor])}")
        self.engine.step(action.astype(np.int64).reshape(1))
        if st.phase[0] == DONE:
            rewards = self._pay(np.flatnonzero(self._seen))  # a seat that never acted is not in RLlib's episode
            self.last_result = self.engine.results[0]  # (no per-agent info: seats that get no observation report none)
            return {}, rewards, {"__all__": True}, {"__all__": False}, {}
        agent, obs = self._observe()
        rewards = self._pay(np.flatnonzero(self._seen))
        return {agent: obs}, rewards, {"__all__": False}, {"__all__": False}, {agent: {}}
