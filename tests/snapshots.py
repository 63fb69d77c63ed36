"""Snapshots of an engine's or an env's whole state, to check that a refused call changed nothing."""

from __future__ import annotations

import copy

import numpy as np


def engine_snapshot(eng) -> dict:
    """Every numpy array of the engine copied, with its results, decision count, sessions and event counts."""
    snap = {k: v.copy() for k, v in vars(eng).items() if isinstance(v, np.ndarray)}
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


def assert_same(before: dict, after: dict) -> None:
    """Fail naming the first entry that differs."""
    assert before.keys() == after.keys()
    for key in before:
        a, b = before[key], after[key]
        same = np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
        assert same, f"{key} changed"
