"""The learner-seat core of the batched training envs: ``B`` engine tables, one learner seat each, the other
seats auto-played by an opponent policy (:class:`LearnerTables`), and what the envs over it share
(:class:`LearnerEnvCore`, :func:`random_policy`, the action checks).

The envs are :class:`mjenv.envs.vector.MahjongVectorEnv` (Gymnasium), :class:`mjenv.envs.sb3.MahjongSB3VecEnv`
(stable-baselines3) and :class:`mjenv.envs.single.MahjongSingleEnv`; their contract (seats, rewards, what a step
refuses) is specified in :mod:`mjenv.envs.vector`'s docstring.  A module of its own so that the SB3 env and the
Gymnasium one both build on it without importing each other.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from gymnasium import spaces

from mjenv.encoding.actions import N_ACTIONS
from mjenv.encoding.compact import encoder_for
from mjenv.encoding.observation import OBS_VERSION
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
        obs_version: str = OBS_VERSION,
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
        self.encoder = encoder_for(self.engine, oracle, obs_version)
        # Opponents read the v1 form (the built-in players and v1 checkpoints do); the learner gets obs_version's.
        self.opponent_encoder = encoder_for(self.engine, oracle)
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
        return spaces.Box(low, high, dtype=enc.dtype)

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
                        self.last_final_obs = np.zeros((self.B,) + self.encoder.shape, self.encoder.dtype)
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
            obs = self.opponent_encoder.encode(st, seats, opp, engine=self.engine) if uses_obs else None
            acts = np.asarray(self.opponent(obs, self.engine.mask[opp]))
            _step_tables(self.engine, opp, acts)
        return ended, final_reward, final_info

    def observe(self) -> np.ndarray:
        """``float32 [B, C, 34]`` (v2: ``uint8 [B, N]``): every table from its learner seat (all are at a learner
        decision)."""
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
