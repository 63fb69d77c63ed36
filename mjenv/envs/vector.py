"""Batched training envs: one :class:`~mjenv.engine.core.Engine` batch behind a Gymnasium ``VectorEnv``.

This module owns

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
learner seat; ``action_masks()`` / ``info["action_mask"]`` are its legal actions.  The reward of a
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

from typing import Any, Callable, Sequence

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from mjenv.encoding.actions import N_ACTIONS
from mjenv.encoding.observation import encoder_for
from mjenv.engine.arguments import check_seed
from mjenv.engine.core import Engine, IllegalActionError
from mjenv.engine.sampling import ActionSampler
from mjenv.engine.state import DONE
from mjenv.rules.value import Rules

Policy = Callable[[Any, np.ndarray], np.ndarray]


def random_policy(seed: int | None = None) -> Policy:
    """An opponent that picks uniformly among the legal actions (``uses_obs = False``).

    The choice is the compiled :class:`~mjenv.engine.sampling.ActionSampler` (one pass over the mask rows, no
    ``[K, 111]`` temporaries), seeded with ``seed``; each call returns a fresh int64 ``[K]`` array."""
    sampler = ActionSampler(seed)

    def act(obs, mask: np.ndarray) -> np.ndarray:
        return sampler.sample(mask).copy()  # the sampler reuses its buffer

    act.uses_obs = False
    return act


def _step_tables(engine: Engine, tables: np.ndarray, actions: np.ndarray) -> None:
    """Step only ``tables`` of ``engine`` (the others keep waiting for their learner)."""
    try:
        engine.step(np.asarray(actions).reshape(-1).astype(np.int64), tables=tables)
    except IllegalActionError as exc:
        raise IllegalActionError(f"opponent policy chose an illegal action: {exc}") from None


def show_value(value: Any) -> str:
    """``repr(value)`` on one line, cut to 60 characters (for one-line error messages)."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def check_learner_actions(actions: Any, B: int) -> np.ndarray:
    """``actions`` as int64 ``[B]`` when it is exactly ``B`` integer action ids 0..110 (a list, or an integer array of
    shape ``(B,)``); otherwise :class:`~mjenv.engine.core.IllegalActionError` naming ``actions``: 11.7 is not
    action 11, ``"11"`` is text, NaN has no id, ``True`` is not 1, and a ``(2, B/2)`` array is not flattened."""

    if type(actions) is np.ndarray and actions.dtype == np.int64 and actions.shape == (B,):
        return actions  # the common call (ids out of range are illegal: the engine refuses them, naming the table)

    def refuse(what: str):
        raise IllegalActionError(f"actions must be {B} integer ids 0..{N_ACTIONS - 1}, one per table; got {what}")

    if isinstance(actions, (str, bytes)):
        refuse(show_value(actions))
    try:
        arr = np.asarray(actions)
    except (TypeError, ValueError):
        refuse(show_value(actions))
    if arr.dtype.kind == "O" and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in arr.flat):
        arr = np.asarray([x if 0 <= x < N_ACTIONS else -1 for x in arr.flat]).reshape(arr.shape)  # no int64 overflow
        if arr.dtype.kind == "O":  # (an empty object array)
            arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        refuse(f"{arr.dtype} values {show_value(actions)}")
    if arr.shape != (B,):
        refuse(f"shape {arr.shape}")
    bad = np.flatnonzero((arr < 0) | (arr >= N_ACTIONS))
    if len(bad):
        b = int(bad[0])
        refuse(f"{actions[b] if isinstance(actions, (list, tuple)) else arr[b]} for table {b}")
    return arr.astype(np.int64)


class LearnerTables:
    """``B`` tables, one learner seat each, opponents auto-played (see the module docstring)."""

    def __init__(
        self,
        variant: str | Rules | None = None,
        num_tables: int = 8,
        *,
        ruleset: str | None = None,
        preset: str | None = None,
        options: Any = None,
        learner_seats: Sequence[int] | None = None,
        opponent: Policy | None = None,
        oracle: bool = False,
        record_events: bool = False,
        seed: int | None = None,
        rules: Rules | None = None,
    ):
        self.engine = Engine(
            variant, num_tables, ruleset=ruleset, preset=preset, options=options, record_events=record_events,
            rules=rules,
        )
        self.rules = self.engine.rules
        self.n = self.engine.n
        self.B = num_tables
        self.encoder = encoder_for(self.engine, oracle)
        seats = tuple(range(self.n)) if learner_seats is None else tuple(int(s) for s in learner_seats)
        if not seats or any(not 0 <= s < self.n for s in seats):
            raise ValueError(f"learner_seats must be seats 0..{self.n - 1}, got {learner_seats!r}")
        self.learner_seats = seats
        seed = check_seed(seed)
        self._default_opponent = random_policy(seed)
        self.opponent = opponent if opponent is not None else self._default_opponent
        # Unseeded: a random seed, so that two unseeded envs do not play the same hands.
        self.seed = int(np.random.SeedSequence().entropy % 2**63) if seed is None else seed
        self.seat = np.zeros(num_tables, np.int64)
        self.episode = np.zeros(num_tables, np.int64)
        self.mark = np.zeros(num_tables)
        self.skipped_hands = 0
        self._next_episode = 0
        self.closed = False
        self.broken: str | None = None
        """Why the last step or deal stopped half-way (the tables are mid-round until a reset), or None."""

    def observation_space(self, flatten: bool = False) -> spaces.Box:
        """The Box of one learner's observation: ``[C, 34]``, or ``[C*34]`` with ``flatten``."""
        enc = self.encoder
        low, high = (enc.low.reshape(-1), enc.high.reshape(-1)) if flatten else (enc.low, enc.high)
        return spaces.Box(low, high, dtype=np.float32)

    def close(self) -> None:
        """Refuse every later ``reset`` and ``step`` (the tables hold only numpy arrays: nothing to release)."""
        self.closed = True

    def _check_open(self, call: str) -> None:
        if self.closed:
            raise RuntimeError(f"{call} after close(): this env is closed; make a new one")

    def _check_can_step(self) -> None:
        self._check_open("step()")
        if self.broken is not None:
            raise RuntimeError(
                f"step() refused: an earlier step or deal stopped half-way ({self.broken}), leaving opponent seats to "
                "play; call reset()"
            )

    def reset(self, seed: int | None = None) -> None:
        """Deal every table afresh.

        With ``seed`` (an integer 0..2**64-1) the run restarts from episode 0 of that seed (and the default opponent
        is re-seeded), so equal seeds give equal runs; without it the episode counter continues.
        """
        self._check_open("reset()")
        seed = check_seed(seed)
        if seed is not None:
            self.seed = seed
            if self.opponent is self._default_opponent:  # not one the caller installed since
                self.opponent = self._default_opponent = random_policy(seed)
            self._next_episode = 0
            self.skipped_hands = 0
        self.redeal()

    def redeal(self) -> None:
        """Deal the next hand on every table (episode counter continues) and play up to the learners."""
        self._check_open("reset()")
        self.broken = None
        self._deal(np.arange(self.B))
        self._guarded(self._run_opponents, np.zeros(self.B, bool))

    def _guarded(self, run, *args):
        """``run(*args)``, remembering in ``broken`` why it raised: the tables are then mid-round."""
        try:
            return run(*args)
        except BaseException as exc:  # KeyboardInterrupt included: it stops the round half-way as well
            self.broken = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
            raise

    def _deal(self, tables: np.ndarray) -> None:
        k = len(tables)
        ep = self._next_episode + np.arange(k)
        self._next_episode += k
        self.episode[tables] = ep
        self.seat[tables] = np.asarray(self.learner_seats)[(ep // self.n) % len(self.learner_seats)]
        self.engine.reset(seed=self.seed, tables=tables, table_ids=ep, dealer=ep % self.n)
        self.mark[tables] = 0.0

    def _run_opponents(self, awaiting: np.ndarray) -> tuple[np.ndarray, np.ndarray, list]:
        """Play non-learner seats until every table waits for its learner.

        ``awaiting[b]``: table b's learner has acted since its last observation (so a finished hand
        there is its episode's end).  Returns ``(ended, final_reward, final_info)`` for those.
        """
        st = self.engine.state
        ended = np.zeros(self.B, bool)
        final_reward = np.zeros(self.B)
        final_info: list = [None] * self.B
        self.last_final_obs = None
        while True:
            done = st.phase == DONE
            if done.any():
                fin = np.flatnonzero(done & awaiting)
                if len(fin):
                    ended[fin] = True
                    final_reward[fin] = st.money[fin, self.seat[fin]] - self.mark[fin]
                    if self.last_final_obs is None:
                        self.last_final_obs = np.zeros((self.B,) + self.encoder.shape, np.float32)
                    self.last_final_obs[fin] = self.encoder.encode(st, self.seat[fin], fin, engine=self.engine)
                    for b in fin:
                        final_info[b] = {
                            "result": self.engine.results[b],
                            "seat": int(self.seat[b]),
                            "episode_id": int(self.episode[b]),
                        }
                self.skipped_hands += int(np.count_nonzero(done & ~awaiting))
                awaiting[done] = False  # a new hand: its learner has not acted yet
                self._deal(np.flatnonzero(done))
                continue
            opp = np.flatnonzero(st.actor != self.seat)
            if not len(opp):
                break
            seats = st.actor[opp].astype(np.int64)
            uses_obs = getattr(self.opponent, "uses_obs", True)
            obs = self.encoder.encode(st, seats, opp, engine=self.engine) if uses_obs else None
            acts = np.asarray(self.opponent(obs, self.engine.mask[opp]))
            _step_tables(self.engine, opp, acts)
        return ended, final_reward, final_info

    def observe(self) -> np.ndarray:
        """``float32 [B, C, 34]``: every table from its learner seat (all are at a learner decision)."""
        return self.encoder.encode(self.engine.state, self.seat, engine=self.engine)

    def action_masks(self) -> np.ndarray:
        """``bool [B, 111]``: the learners' legal actions."""
        return self.engine.mask.copy()

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, list]:
        """Apply the learners' actions, play opponents, re-deal finished tables.

        Returns ``(reward [B], terminated [B], final_info list)``; the final observations of ended
        episodes are in ``last_final_obs``.
        """
        self._check_can_step()
        self.engine.step(check_learner_actions(actions, self.B))  # an illegal action changes nothing
        ended, final_reward, final_info = self._guarded(self._run_opponents, np.ones(self.B, bool))
        st = self.engine.state
        money = st.money[np.arange(self.B), self.seat]
        reward = np.where(ended, final_reward, money - self.mark)
        # A re-dealt table keeps its mark at 0, so money moved before the new learner's first decision
        # is paid with that decision's reward and the episode still adds up to its deltas.
        self.mark = np.where(ended, self.mark, money)
        return reward, ended, final_info


class LearnerEnvCore:
    """What the three envs over :class:`LearnerTables` share (:class:`MahjongVectorEnv`, the SB3 ``VecEnv``,
    :class:`~mjenv.envs.single.MahjongSingleEnv`): building the tables and the observation space, and shaping
    observations (``flatten``)."""

    core: LearnerTables
    flatten: bool

    def _build_core(self, variant: str | Rules | None, num_tables: int, flatten: bool, **kwargs) -> spaces.Box:
        """Make ``self.core`` (:class:`LearnerTables` of ``kwargs``) and return one learner's observation space."""
        self.core = LearnerTables(variant, num_tables, **kwargs)
        self.flatten = bool(flatten)
        return self.core.observation_space(self.flatten)

    def _obs(self, obs: np.ndarray) -> np.ndarray:
        """``[K, C, 34]`` observations as the env gives them (``[K, C*34]`` with ``flatten``)."""
        return obs.reshape(obs.shape[0], -1) if self.flatten else obs


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
        seed: int | None = None,
        render_mode: str | None = None,
        rules: Rules | None = None,
    ):
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r} not supported; use 'ansi' or None")
        self.single_observation_space = self._build_core(
            variant, num_envs, flatten, ruleset=ruleset, preset=preset, options=options,
            learner_seats=learner_seats, opponent=opponent, oracle=oracle, seed=seed, rules=rules,
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
        self.core.close()
        self.closed = True


def sb3_vec_env(variant: str | Rules | None = None, num_envs: int = 8, **kwargs):
    """A stable-baselines3 ``VecEnv`` (flat observations) with ``action_masks()``; needs stable-baselines3."""
    from mjenv.envs.sb3 import MahjongSB3VecEnv

    return MahjongSB3VecEnv(variant, num_envs, **kwargs)
