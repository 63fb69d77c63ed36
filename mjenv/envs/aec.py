"""PettingZoo AEC environment: one table of any mjenv variant, one hand per episode.

``mjenv.env(variant="kawuxing3", ruleset=None, preset=None, options=None, render_mode=None)`` returns
the env with PettingZoo's classic wrapper behaviour (illegal move → the mover gets -1 and the hand ends;
out-of-bounds actions asserted; call order enforced; one layer, :class:`_ClassicWrapper`, that reads
legality from the engine); ``mjenv.raw_env(...)`` the bare env, whose
``step`` raises :class:`~mjenv.engine.core.IllegalActionError` on an illegal action.  The env is a
thin adapter over :class:`~mjenv.engine.core.Engine` (batch size 1): no rule lives here.  The rules are resolved
once, by the engine (:func:`mjenv.rules.load_rules`), or handed in resolved: ``mjenv.env(rules=...)`` (a
:class:`mjenv.rules.Rules`, in place of variant, ruleset, preset and options).

Agents
    ``player_0`` … ``player_{n-1}`` = seats 0 … n-1 (n = 3 for ``kawuxing3``, 4 for every other variant);
    play passes from seat i to seat i+1.  The dealer is seat 0 unless ``reset(options={"dealer": d})``.
    ``agent_selection`` is the seat the engine waits for: the player on turn, or in a claim window
    each seat that may claim, in turn order from the discarder.  Moves nobody has to decide (draws,
    windows nobody can use, a revealed player's automatic discard, a single legal action) are played
    by the engine without asking.

Actions — ``Discrete(111)``, the layout of :mod:`mjenv.encoding.actions`:

    ========  ==============  =========================================================
    ids       name            meaning
    ========  ==============  =========================================================
    0–33      ``discard:T``   discard tile T
    34–67     ``liang:T``     discard T and declare 亮倒 (docs/rules/kawuxing.md §3.6)
    68–101    ``kong:T``      concealed or added kong of T on one's own turn
    102       ``pong``        pong the discard
    103       ``kong``        direct kong of the discard
    104–106   ``chi_*``       chi with the discard lowest / middle / highest (Gejiu, Yangzhou)
    107       ``win``         self-draw win, win on a discard, or rob a kong
    108       ``pass``        decline a claim
    109–110   ``kongtile:*``  after a Gejiu kong: take face-up kong tile 0 / 1 as the replacement
    ========  ==============  =========================================================

Observations — ``observe(agent)`` returns ``{"observation": float32 [C, 34], "action_mask": int8 [111]}``.
    ``observation`` is the ``mjenv-obs-v1`` encoding (:mod:`mjenv.encoding.observation`; ``oracle=True``
    gives ``mjenv-oracle-v1``; ``obs_version="mjenv-obs-v2"`` gives the same information as compact bytes,
    ``uint8 [N]``, :mod:`mjenv.encoding.compact`) from that agent's own seat, also for agents that are not acting, and
    contains only what that seat may know (docs/rules/common.md §1.12).  ``C`` = 100 for ``kawuxing3``, 122 for
    ``kawuxing4``, 121 for the other variants.  Blocks, in row order:

    ==========  ========  ================================================================
    block       rows      meaning
    ==========  ========  ================================================================
    hand        4         own concealed tiles (thermometer)
    drawn       1         tile the agent just drew
    kinds       1         tile kinds in play
    melds       5n        pongs / chis / direct, added, concealed kongs of every seat
    discards    5n        every seat's discards (thermometer) and their recency
    reveal      7n        亮倒 flags, face-up tiles, face-down tile counts per seat
    claim       3 + n     tile under claim, discard or rob, relative seat it comes from
    kong_chain  2         kong-chain positions (杠上杠 / 杠上炮 context)
    wall        2         live wall left, live wall empty
    kong_tiles  2         Gejiu's two face-up kong tiles
    seats       2n + 1    dealer, seat on turn, agent acts now
    winds       2         own seat wind, round wind (Diedaohu, Yangzhou, Liuwei)
    phase       7         phase (turn, claimed, claim, rob, done, pick), agent's first turn
    lock        2         own missed-win lock
    dadiaoche   1         own 大吊车 exception tile
    money       n         money so far per seat
    bankroll    2n        balances / starting bankroll and busted flags (园子)
    options     1–3       rule options that change play
    ==========  ========  ================================================================

    Seat blocks are in relative order (the agent first).  ``action_mask`` is the legal actions for the
    acting agent and all zeros for the others (and at the end of the hand).  Both arrays are new on every
    call: an observation kept across steps (a replay buffer, PettingZoo's ``api_test``) never changes.

Rewards
    Money, in units of the base stake, paid when it moves: kong money at the step that completes the
    kong, the settlement at the step that ends the hand.  ``rewards`` holds the money that moved in the
    last step; ``last()`` returns what accumulated since the agent last acted.  Over a hand each agent's
    rewards add up to its entry of the result's ``deltas`` (zero-sum), except when the wrapped env ends
    the hand for an illegal move (the mover gets -1, the others 0).

Termination
    Every agent terminates when the hand ends (a win or an exhaustive draw); there is no truncation.
    Each episode is one hand and the first hand of a fresh session (variants with sessions: East round,
    every balance at the starting bankroll).
    The final ``infos[agent]`` holds ``{"result": …, "seat": …}``: the engine's result (``how``,
    ``winners`` with reading, fans, value and cap, ``discarder``, ``tile``, ``transfers``,
    ``settlement_deltas``, ``deltas``, ``next_dealer``, ``session_over``).

Reset
    ``reset(seed=s)`` deals the wall of ``(s, 0)`` (the same hand as table 0 of ``Engine.reset(seed=s)``);
    without a seed the next hand's seed comes from the env's own generator (seeded by the last seed
    given).  ``reset(options={"wall": "...", "dealer": d})`` deals an explicit wall (tile ids or a
    notation string in the order the tiles leave the wall, see ``Engine.reset``); other keys of
    ``options`` are ignored with a warning.

Errors
    Bad input raises before anything changes, with a message naming the argument: ``ValueError`` for a
    ``seed`` that is not an integer >= 0, a ``dealer`` that is not a seat, a ``record_replay`` that is not a
    path in an existing folder; :class:`~mjenv.engine.core.WallError` (a ``ValueError``) for a wall that is
    not the variant's tile set; :class:`~mjenv.engine.core.IllegalActionError` (a ``ValueError``) for an
    action that is not an integer id or not legal.  ``RuntimeError``: ``step`` before ``reset`` or after
    every agent's hand is over.

Replays and rendering
    ``record_replay=PATH`` writes every finished hand to PATH (JSON Lines, ``docs/replay-format.md``;
    the env's first finished hand starts the file afresh, later hands are appended; constructing the env
    does not touch the file); ``save_replay(path)`` writes the
    hand just finished.  ``render_mode="ansi"`` makes ``render()`` return the table as text
    (:mod:`mjenv.render`; ``render_omniscient=True`` shows every hand), ``"human"`` prints it after
    every step.

Version history
    * ``mjenv_<variant>_v1`` — first version (observation ``mjenv-obs-v1``, replay ``mjenv-replay-v1``).
"""

from __future__ import annotations

import copy
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from mjenv.encoding.actions import N_ACTIONS
from mjenv.encoding.compact import encoder_for
from mjenv.encoding.observation import OBS_VERSION, encode_next
from mjenv.engine.calls import _direct_entry
from mjenv.engine.arguments import check_seed
from mjenv.engine.codes import EV_REVEAL
from mjenv.engine.core import _STEP_ACTS, Engine, IllegalActionError
from mjenv.engine.state import DONE
from mjenv.rules.value import Rules
from mjenv.render import render_table
from mjenv.replay import write_replay

ENV_VERSION = 1
RESET_OPTION_KEYS = ("wall", "dealer")
# dtype objects for the arrays made at every step: numpy converts a scalar type (np.float32) at each call (≈ 85 ns)
_F32, _I8 = np.dtype(np.float32), np.dtype(np.int8)


class raw_env(AECEnv):
    """The bare AEC env over one engine table (see the module docstring for the full specification)."""

    metadata = {"render_modes": ["ansi", "human"], "name": "mjenv_v1", "is_parallelizable": False, "render_fps": 1}

    def __init__(
        self,
        variant: str | Rules | None = None,
        ruleset: str | None = None,
        preset: str | None = None,
        options: Any = None,
        render_mode: str | None = None,
        *,
        oracle: bool = False,
        obs_version: str = OBS_VERSION,
        record_replay: str | None = None,
        render_omniscient: bool = False,
        rules: Rules | None = None,
    ):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} not supported; use one of {self.metadata['render_modes']}")
        self.engine = Engine(variant, 1, ruleset=ruleset, preset=preset, options=options, record_events=True, rules=rules)
        self.rules = self.engine.rules
        self.variant = variant = self.rules.variant
        self.ruleset = ruleset
        self.preset = preset
        self.render_mode = render_mode
        self.render_omniscient = render_omniscient
        self.metadata = dict(self.metadata, name=f"mjenv_{variant}_v{ENV_VERSION}")
        self.encoder = encoder_for(self.engine, oracle, obs_version)
        self._row = self.encoder.row_encoder(self.engine)
        # v1 without sessions: the compiled call that writes a fresh observation and its arguments per seat, which
        # observe and last make themselves (RowEncoder.one_call: one Python call fewer a decision, fewer arguments)
        self._row_call = self._row.one_call()
        self._obs_shape = self.encoder.shape
        n = self.engine.n
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        # Views read at every step (the engine's state and mask are fixed arrays updated in place).
        st = self.engine.state
        self._phase, self._actor, self._money_now = st.phase, st.actor, st.money[0]
        self._mask_row = self.engine.mask.view(np.int8)[0]
        self._act = np.zeros(1, np.int64)  # the action array handed to Engine.step, reused
        self._info = self.engine._info  # the kernel's counters (decisions, an illegal action's index)
        # Engine.step's common call is made here directly once the engine keeps the kernel arguments of ``_act`` (made
        # by its first step; one table has no shards over threads)
        self._one_call = self.engine._shards is None
        # One space object per agent, so that seeding one agent's space does not seed another's.
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(self.encoder.low, self.encoder.high, dtype=self.encoder.dtype),
                    "action_mask": spaces.Box(0, 1, (N_ACTIONS,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        if record_replay is not None:
            if not isinstance(record_replay, (str, os.PathLike)):
                raise ValueError(f"record_replay must be a file path (str or os.PathLike), got {record_replay!r}")
            target = Path(record_replay)
            if target.is_dir() or not target.parent.is_dir():
                raise ValueError(f"record_replay {str(target)!r} is not a file path in an existing folder")
        self.record_replay = record_replay
        self._replay_started = False  # the first finished hand starts the file afresh
        self._rng_seed: int | None = None  # the generator is made from this seed when first needed
        self._rng_made: np.random.Generator | None = np.random.default_rng()
        self._hand_seed: int | None = None
        # (engine event records before it, seat, action) of every decision (save_replay makes the event index)
        self._decisions: list[tuple[int, int, int]] = []
        self._zero_money = np.zeros(n).tobytes()
        self._money = self._zero_money  # money at the last settled step, as bytes (cheaper to compare)
        self._evn = self.engine._evn
        # The seat the engine waits for, or -1 once the hand is over: kept at every reset and step (the
        # env's engine moves only through them), so that observe and the legality check read no array.
        self._to_act = -1
        self._paid = False  # the last step moved money (rewards hold non-zero entries)
        self._paid_bits = np.zeros(n, np.int64)  # the money at the last settled step, its bits (encode_next reads them)
        # The observation of the seat to act made by the step (v1 without sessions: encode_next, which also says whether
        # the hand is over and whether money moved), handed out once by last or observe; None when there is none.
        self._next_obs: np.ndarray | None = None
        self._next_call = None
        if self._row_call is not None:
            self._next_args = (np.zeros(3, np.int64), *self._row_call[1][0][1:], self._paid_bits)
            scratch = np.empty(self._obs_shape, np.float32)
            encode_next(scratch, *self._next_args)  # compiled, or loaded, once (the state is all zeros here)
            self._next_call = _direct_entry(encode_next, (scratch, *self._next_args))
        self._has_reset = False
        self._closed = False

    @property
    def _rng(self) -> np.random.Generator:
        """The env's generator for unseeded resets: ``default_rng(last seed given)``, made on first use
        (a seeded reset does not pay for a generator it may never need)."""
        if self._rng_made is None:
            self._rng_made = np.random.default_rng(self._rng_seed)
        return self._rng_made

    # ------------------------------------------------------------------ PettingZoo API
    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent`` (the same object on every call)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """``Discrete(111)`` (the same object on every call)."""
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict:
        """``{"observation", "action_mask"}`` of ``agent`` from its own seat.

        Both arrays are fresh on every call: an observation kept by the caller does not change when
        the env steps on."""
        seat = self.agent_name_mapping[agent]
        mask = self._mask_row.copy() if seat == self._to_act else np.zeros(N_ACTIONS, _I8)
        return {"observation": self._observation(seat), "action_mask": mask}

    def _observation(self, seat: int) -> np.ndarray:
        """A fresh observation of the table from ``seat`` (``RowEncoder(seat)``; for v1 its compiled call made here, or
        the one the step made for the seat to act, handed out once)."""
        nxt = self._next_obs
        if nxt is not None and seat == self._to_act:
            self._next_obs = None
            return nxt
        rc = self._row_call
        if rc is None:
            return self._row(seat)
        out = np.empty(self._obs_shape, _F32)
        rc[0](out, *rc[1][seat])
        return out

    def _hand_over(self) -> bool:
        """The table's hand has ended (a scalar read; ``engine.done`` builds an array)."""
        return self._phase[0] == DONE

    def _legal(self, agent: str, action) -> bool:
        """Whether ``action`` (in range) is legal for ``agent`` now (what its ``action_mask`` says)."""
        return self._to_act == self.agent_name_mapping[agent] and self._mask_row[int(action)] != 0

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new hand: seeded, or an explicit ``options={"wall": ..., "dealer": d}``."""
        if self._closed:
            raise RuntimeError("reset() after close(): this env is closed; make a new one")
        if options is None:  # (the common call: a seeded or unseeded hand, dealer 0)
            dealer, wall = 0, None
        else:
            if not isinstance(options, dict):
                raise ValueError(f"options must be a dict (keys {', '.join(RESET_OPTION_KEYS)}), got {options!r}")
            unknown = sorted(set(options) - set(RESET_OPTION_KEYS), key=str)
            if unknown:
                warnings.warn(f"reset options {unknown} ignored; known keys: {', '.join(RESET_OPTION_KEYS)}", stacklevel=2)
            dealer = options.get("dealer", 0)
            n = self.engine.n
            if not isinstance(dealer, (int, np.integer)) or isinstance(dealer, (bool, np.bool_)) or not 0 <= dealer < n:
                raise ValueError(f"options['dealer'] must be a seat 0..{n - 1}, got {dealer!r}")
            wall = options.get("wall")
        check_seed(seed)
        if wall is not None and not isinstance(wall, (str, list, tuple, np.ndarray)):
            raise ValueError(f"options['wall'] must be a notation string or a list of tile ids, got {wall!r}")
        if seed is not None:
            rng, hand_seed = None, int(seed)
        else:  # draw from a copy: a refused wall leaves the env's generator where it was
            rng = copy.deepcopy(self._rng)
            hand_seed = int(rng.integers(2**31))
        if wall is not None:
            self.engine.reset(walls=[wall], dealer=int(dealer))
            self._hand_seed = None
        else:
            self.engine.reset(seed=hand_seed, dealer=int(dealer))
            self._hand_seed = hand_seed
        self._rng_made, self._rng_seed = rng, hand_seed
        self._has_reset = True
        self._decisions = []
        self._next_obs = None
        agents = self.possible_agents
        self.agents = agents[:]
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos = {a: {} for a in agents}
        self._money = self._zero_money
        self._paid_bits.fill(0)
        self._paid = False
        self.agent_selection = agents[self._actor.item(0)]
        self._settle_step()

    def step(self, action) -> None:
        """Apply ``action`` of ``agent_selection`` (``None`` for an agent whose hand is over).

        An action that is not an integer id (a float, a bool, a string) or not legal raises
        :class:`~mjenv.engine.core.IllegalActionError`; a step before ``reset`` or after every agent's hand
        is over raises ``RuntimeError``; in every case nothing changes."""
        if not self._has_reset:
            if self._closed:
                raise RuntimeError("step() after close(): this env is closed; make a new one")
            raise RuntimeError("step before reset(); call reset() first")
        if not self.agents:
            raise RuntimeError("step after the hand is over and every agent has left; call reset() for a new hand")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if type(action) is not int and (
            not isinstance(action, (int, np.integer)) or isinstance(action, (bool, np.bool_))
        ):
            raise IllegalActionError(f"{agent}: action must be an integer id 0..{N_ACTIONS - 1}, got {action!r}")
        act = int(action)
        if not 0 <= act < N_ACTIONS:  # not an action id: the engine's argument checks name it
            self.engine.step(np.array([act]))
            raise IllegalActionError(f"{agent}: action {act} is not an id 0..{N_ACTIONS - 1}")  # pragma: no cover
        self._step(agent, act)

    def _step(self, agent: str, act: int) -> None:
        """``step`` of a live agent with an action id ``0 <= act < 111`` (checked by the caller)."""
        at, seat = self._evn.item(0), self._to_act  # the engine's event records so far, the seat that decides
        act_arr = self._act
        act_arr[0] = act
        eng = self.engine
        args = eng._step_args
        if args[_STEP_ACTS] is act_arr and self._one_call:
            # Engine.step's common call (its arguments were made for this array at the first step), without its checks
            k = eng._step_kernel(*args)
            if self._info.item(1) >= 0:
                eng._refuse(eng._all, act_arr)  # IllegalActionError (nothing changed)
            eng.n_decisions += 1  # (info[0], the tables stepped: this live one, as the caller's _to_act says)
            if k:
                eng._run(k)
        else:
            eng.step(act_arr)  # raises IllegalActionError (nothing changed) for an illegal action
        self._cumulative_rewards[agent] = 0.0
        self._decisions.append((at, seat, act))
        nxt = self._next_call
        if nxt is not None:  # the next seat's observation, and whether the hand is over or money moved, in one call
            out = np.empty(self._obs_shape, _F32)
            code = nxt(out, *self._next_args)
            self._next_obs = out if code >= 0 else None
            if 0 <= code < 8 and not self._paid:  # most steps: no money moved, none had moved before, the hand goes on
                self._to_act = code
                self.agent_selection = self.possible_agents[code]
            else:
                self._settle_step()
        elif self._paid or self._phase.item(0) == DONE or self._money_now.tobytes() != self._money:
            self._settle_step()
        else:  # most steps: no money moved, none had moved before, the hand goes on
            self._to_act = seat = self._actor.item(0)
            self.agent_selection = self.possible_agents[seat]
        if self.render_mode is not None and self.render_mode == "human":  # (None == str is the slow comparison)
            self.render()

    def _settle_step(self) -> None:
        """Pay the money that moved, then point at the next decision or end the hand."""
        money = self._money_now.tobytes()
        if money != self._money:
            delta = self._money_now - np.frombuffer(self._money)
            self._money = money
            self._paid_bits[:] = self._money_now.view(np.int64)
        else:  # no money moved (most steps)
            delta = None
        if delta is not None and delta.any():
            self.rewards = {a: float(delta[i]) for i, a in enumerate(self.possible_agents) if a in self.agents}
            self._accumulate_rewards()
            self._paid = True
        elif self._paid:  # zero rewards again, nothing to accumulate
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._paid = False
        if self._phase.item(0) == DONE:
            result = self.engine.results[0]
            for a in self.agents:
                self.terminations[a] = True
                self.infos[a] = {"result": result, "seat": self.agent_name_mapping[a]}
            if self.record_replay is not None:
                self.save_replay(self.record_replay, append=self._replay_started)
                self._replay_started = True
            self._to_act = -1
        else:
            self._to_act = seat = self._actor.item(0)
            self.agent_selection = self.possible_agents[seat]

    def _dead_step(self) -> None:
        """``_was_dead_step(None)`` of the selected agent once the hand has ended by itself (every agent left is
        terminated, so the dead agents' order is ``agents``): the same effect in fewer steps."""
        agent = self.agent_selection
        del self.terminations[agent]
        del self.truncations[agent]
        del self.rewards[agent]
        del self._cumulative_rewards[agent]
        del self.infos[agent]
        agents = self.agents
        agents.remove(agent)
        if agents:
            if getattr(self, "_skip_agent_selection", None) is None:
                self._skip_agent_selection = agent
            self.agent_selection = agents[0]
        else:
            skip = getattr(self, "_skip_agent_selection", None)
            if skip is not None:
                self.agent_selection = skip
            self._skip_agent_selection = None
        rewards = self.rewards
        for a in rewards:
            rewards[a] = 0

    # ------------------------------------------------------------------ extras
    def save_replay(self, path, *, append: bool = False) -> None:
        """Write the hand just finished to ``path`` as a ``mjenv-replay-v1`` file."""
        if not self._has_reset:
            raise RuntimeError("save_replay before the first reset")
        extra = {
            "seed": self._hand_seed,
            "table_id": 0 if self._hand_seed is not None else None,
            "agents": self.possible_agents,
        }
        if self.ruleset is not None or self.preset is not None:
            extra["rules"] = {"ruleset": self.ruleset, "preset": self.preset}
        decisions = self._decision_records()
        write_replay(path, self.engine, 0, extra, decisions=decisions, append=append)

    def _decision_records(self) -> list[dict]:
        """The hand's decisions as replay records ``{"at", "seat", "action"}``: a decision's event index is the
        number of engine event records before it less two for every 亮倒 among them (one event written as three
        records, as :meth:`Engine.event_count` counts)."""
        ev = self.engine._ev[0, : self._evn.item(0), 0]
        reveals = np.flatnonzero(ev == EV_REVEAL)  # record positions of the 亮倒 events, ascending
        return [
            {"at": at - 2 * int(np.searchsorted(reveals, at)), "seat": seat, "action": act}
            for at, seat, act in self._decisions
        ]

    def render(self) -> str | None:
        """The table as text (``ansi``: returned; ``human``: printed)."""
        if self.render_mode is None:
            warnings.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'", stacklevel=2)
            return None
        seat = None if self.render_omniscient else self.agent_name_mapping.get(getattr(self, "agent_selection", None))
        text = render_table(self.engine, 0, seat, omniscient=self.render_omniscient, agents=self.possible_agents)
        if self.render_mode == "human":
            print(text, end="\n\n")
            return None
        return text

    def close(self) -> None:
        """Nothing to release (the engine holds only numpy arrays); later ``reset`` and ``step`` calls are refused."""
        self._closed = True
        self._has_reset = False


class _ClassicWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's classic wrapper stack in one layer: order enforcing, out-of-bounds actions asserted, an
    illegal move terminates the hand with ``illegal_reward`` for the mover.

    Behaves as ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(env, r)))`` but reads
    the legal actions from the engine instead of building an observation, and reaches the raw env
    directly instead of through three ``__getattr__`` layers (most of a step's cost once the engine is
    compiled): the attributes read at every step (``agents``, ``agent_selection``, ``rewards``,
    ``terminations``, ``truncations``, ``infos``) are properties, ``agent_iter`` reads the raw env, and a
    legal integer action goes straight to the raw env's step.
    """

    def __init__(self, env: raw_env, illegal_reward: float = -1):
        super().__init__(env)
        self._illegal_value = float(illegal_reward)
        self._terminated = False  # terminated by an illegal move

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Reset the raw env (see :meth:`raw_env.reset`)."""
        try:
            super().reset(seed=seed, options=options)
        except BaseException:  # refused: as before (the raw env is unchanged, or closed)
            self._has_reset = self.env._has_reset
            raise
        self._terminated = False

    def close(self) -> None:
        """Close the raw env; later ``reset`` and ``step`` calls are refused."""
        self._has_reset = False  # off the fast path of step
        super().close()

    def agent_iter(self, max_iter: int = 2**63) -> "_AgentIterable":
        """Iterate over the agent to act until the hand is over (``max_iter`` steps at most)."""
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _AgentIterable(self, max_iter)

    def last(self, observe: bool = True):
        """``(observation, cumulative reward, termination, truncation, info)`` of the agent to act."""
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        raw = self.env
        agent = raw.agent_selection
        if observe:  # raw.observe(agent), one call fewer
            seat = raw.agent_name_mapping[agent]
            if seat == raw._to_act:
                mask = raw._mask_row.copy()
                nxt = raw._next_obs
                if nxt is not None:  # (raw._observation(seat), one call fewer)
                    raw._next_obs = None
                    obs = {"observation": nxt, "action_mask": mask}
                else:
                    obs = {"observation": raw._observation(seat), "action_mask": mask}
            else:
                obs = {"observation": raw._observation(seat), "action_mask": np.zeros(N_ACTIONS, _I8)}
        else:
            obs = None
        return obs, raw._cumulative_rewards[agent], raw.terminations[agent], raw.truncations[agent], raw.infos[agent]

    def step(self, action) -> None:
        """Check the call order, the action's range and its legality, then step the raw env."""
        raw = self.env
        if type(action) is int and 0 <= action < N_ACTIONS and self._has_reset and not self._terminated:
            # The common step: a live hand (so no agent is dead yet), the acting agent, an id.  Its legality is the
            # step kernel's test (the mask the engine keeps): an illegal id is refused with nothing changed.
            agent = raw.agent_selection
            if raw._to_act == raw.agent_name_mapping[agent]:
                self._has_updated = True
                try:
                    raw._step(agent, action)
                except IllegalActionError:
                    self._illegal_move(raw, agent)
                return
        if action is None and raw._to_act < 0 and self._has_reset and not self._terminated and raw.agents:
            # An agent of a hand that ended by itself leaves (every agent left is terminated): PettingZoo's dead step
            self._has_updated = True
            raw._dead_step()
            return
        if not self._has_reset:
            if raw._closed:
                raw.step(action)  # refused, naming close()
            EnvLogger.error_step_before_reset()
        if not raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
            return
        self._has_updated = True
        agent = raw.agent_selection
        dead = raw.terminations[agent] or raw.truncations[agent]
        if type(action) is int and 0 <= action < N_ACTIONS:
            in_space = True
        else:
            in_space = action is not None and raw.action_spaces[agent].contains(action)
        assert (action is None and dead) or in_space, "action is not in action space"
        if self._terminated and dead:
            raw._was_dead_step(action)
        elif not dead and not raw._legal(agent, action):
            self._illegal_move(raw, agent)
        else:
            raw.step(action)

    def _illegal_move(self, raw: raw_env, agent: str) -> None:
        """End the hand for ``agent``'s illegal move: the mover gets ``illegal_reward``, every agent terminates
        (PettingZoo's ``TerminateIllegalWrapper``)."""
        EnvLogger.warn_on_illegal_move()
        raw._cumulative_rewards[agent] = 0
        raw.terminations = dict.fromkeys(raw.agents, True)
        raw.truncations = dict.fromkeys(raw.agents, True)
        raw.rewards = dict.fromkeys(raw.truncations, 0)
        raw.rewards[agent] = self._illegal_value
        raw._accumulate_rewards()
        raw._deads_step_first()
        self._terminated = True

    # The attributes every loop reads, as properties: ``OrderEnforcingWrapper.__getattr__`` runs only after a
    # failed lookup, then checks a set and goes through ``BaseWrapper.__getattr__`` (≈ 1 µs a read).
    def _before_reset(self, name: str):
        raise AttributeError(f"{name} cannot be accessed before reset")

    @property
    def agents(self) -> list[str]:
        """The raw env's ``agents``."""
        return self.env.agents if self._has_reset else self._before_reset("agents")

    @agents.setter
    def agents(self, value) -> None:
        self.env.agents = value

    @property
    def agent_selection(self) -> str:
        """The raw env's ``agent_selection``."""
        return self.env.agent_selection if self._has_reset else self._before_reset("agent_selection")

    @agent_selection.setter
    def agent_selection(self, value) -> None:
        self.env.agent_selection = value

    @property
    def rewards(self) -> dict:
        """The raw env's ``rewards``."""
        return self.env.rewards if self._has_reset else self._before_reset("rewards")

    @rewards.setter
    def rewards(self, value) -> None:
        self.env.rewards = value

    @property
    def terminations(self) -> dict:
        """The raw env's ``terminations``."""
        return self.env.terminations if self._has_reset else self._before_reset("terminations")

    @terminations.setter
    def terminations(self, value) -> None:
        self.env.terminations = value

    @property
    def truncations(self) -> dict:
        """The raw env's ``truncations``."""
        return self.env.truncations if self._has_reset else self._before_reset("truncations")

    @truncations.setter
    def truncations(self, value) -> None:
        self.env.truncations = value

    @property
    def infos(self) -> dict:
        """The raw env's ``infos``."""
        return self.env.infos if self._has_reset else self._before_reset("infos")

    @infos.setter
    def infos(self, value) -> None:
        self.env.infos = value


class _AgentIterable(AECOrderEnforcingIterable):
    """``agent_iter`` of :class:`_ClassicWrapper`: the order-enforcing iterator reading the raw env directly."""

    def __iter__(self) -> "_AgentIterator":
        return _AgentIterator(self.env, self.max_iter)


class _AgentIterator(AECOrderEnforcingIterator):
    """Yields the agent to act; checks, like PettingZoo's, that every agent yielded was stepped."""

    def __init__(self, env: _ClassicWrapper, max_iter: int):
        super().__init__(env, max_iter)
        self._raw = env.env

    def __next__(self) -> str:
        raw = self._raw
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        env = self.env
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return raw.agent_selection


def env(
    variant: str | Rules | None = None,
    ruleset: str | None = None,
    preset: str | None = None,
    options: Any = None,
    render_mode: str | None = None,
    **kwargs,
) -> AECEnv:
    """The AEC env with PettingZoo's classic wrapper behaviour (see the module docstring)."""
    return _ClassicWrapper(raw_env(variant, ruleset, preset, options, render_mode, **kwargs), illegal_reward=-1)
