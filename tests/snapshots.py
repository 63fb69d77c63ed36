"""Snapshots of an engine's or an env's whole state, to check that a refused call changed nothing."""

from __future__ import annotations

import copy

import numpy as np


_SCRATCH = ("_info", "_waiting", "_scratch")  # the kernels' work buffers, rewritten by every call: not state


def engine_snapshot(eng) -> dict:
    """Every numpy array of the engine copied (but its scratch buffers), with its results, decision count, sessions
    and event counts."""
    snap = {k: v.copy() for k, v in vars(eng).items() if isinstance(v, np.ndarray) and k not in _SCRATCH}
    snap["results"] = copy.deepcopy(eng.results)
    snap["n_decisions"] = eng.n_decisions
    snap["sessions"] = repr(eng.sessions)
    snap["events"] = [len(eng.events[b]) for b in range(eng.batch_size)] if eng.record_events else []
    return snap


def env_snapshot(env) -> dict:
    """The raw AEC env's engine and its own bookkeeping (agents, rewards, decisions, generator)."""
    raw = env.unwrapped
    snap = engine_snapshot(raw.engine)
    for key in ("agents", "rewards", "_cumulative_rewards", "terminations", "truncations", "_decisions", "_hand_seed",
                "_has_reset", "_replay_started"):
        snap[key] = copy.deepcopy(getattr(raw, key, None))
    snap["agent_selection"] = getattr(raw, "agent_selection", None)
    snap["rng"] = repr(raw._rng.bit_generator.state)
    return snap


def learner_snapshot(env) -> dict:
    """An env over :class:`~mjenv.envs.vector.LearnerTables` (vector, SB3 or single-agent): its tables' engine, the
    tables' own bookkeeping (seats, episodes, reward marks, seed, opponent, broken flag) and the env's."""
    core = env.core
    snap = engine_snapshot(core.engine)
    for key in ("seat", "episode", "mark"):
        snap["core." + key] = getattr(core, key).copy()
    for key in ("seed", "skipped_hands", "_next_episode", "broken", "closed", "opponent", "_default_opponent"):
        snap["core." + key] = getattr(core, key)
    for key in ("_over", "_fresh", "_seeds", "_actions"):
        if hasattr(env, key):
            value = getattr(env, key)
            snap[key] = value.copy() if isinstance(value, np.ndarray) else copy.copy(value)
    rng = getattr(env, "_np_random", None)
    snap["np_random"] = repr(rng.bit_generator.state) if rng is not None else None
    return snap


def assert_same(before: dict, after: dict) -> None:
    """Fail naming the first entry that differs."""
    assert before.keys() == after.keys()
    for key in before:
        a, b = before[key], after[key]
        same = np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
        assert same, f"{key} changed"
