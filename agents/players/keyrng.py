"""Counter-based random numbers keyed by hand and decision, so a tournament does not depend on its batching.

This module owns the keys the arena (:func:`agents.tournament.arena.play_duplicate`) hands to agents that draw random
numbers (``takes_keys = True``), and the uniforms those agents draw from them.  A key names one decision:
the tournament seed, the wall, the seating and the decision's number within its hand.  An agent mixes its
own seed into the key, so its draws at that decision are the same whichever batch, shard, process or
machine plays the hand: a tournament split over Ray workers (:mod:`agents.tournament.distributed`) gives the same
hands as one played in a single batch.

The mixer is SplitMix64 (Steele, Lea and Flood 2014) on ``uint64`` arrays; uniforms keep its top 53 bits.
:func:`keyed_legal_actions` is the compiled uniform legal choice of the random agent (numba, ``cache=True``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from mjenv.engine.jit import njit

__all__ = ["mix", "salt_of", "seating_code", "table_keys", "decision_keys", "uniforms", "keyed_legal_actions"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def mix(x) -> np.ndarray:
    """SplitMix64 finaliser of ``x`` (any integer array; wraps modulo 2**64) as ``uint64``."""
    shape = np.shape(x)
    z = np.atleast_1d(np.asarray(x).astype(np.uint64)) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return (z ^ (z >> np.uint64(31))).reshape(shape)


def table_keys(seed: int, walls, seating_codes) -> np.ndarray:
    """One key per hand from the tournament ``seed``, its wall ids and its seating codes (:func:`seating_code`)."""
    s = mix(np.asarray([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64))
    w = np.asarray(walls, dtype=np.int64).astype(np.uint64)
    c = np.asarray(seating_codes, dtype=np.int64).astype(np.uint64)
    return mix(mix(s ^ w) ^ c)


def seating_code(seating: Sequence[int]) -> int:
    """An integer naming a seat assignment (agent index per seat; fewer than 64 agents)."""
    return sum(int(a) << (6 * s) for s, a in enumerate(seating))


def decision_keys(hand_keys, steps) -> np.ndarray:
    """Keys of decisions: the hand's key and the decision's number within the hand."""
    return mix(np.asarray(hand_keys, dtype=np.uint64) ^ mix(np.asarray(steps, dtype=np.int64).astype(np.uint64)))


def salt_of(seed: int) -> np.uint64:
    """The mixed ``uint64`` an agent's seed adds to every key it draws from."""
    return mix(np.asarray([int(seed) & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64))[0]


def uniforms(keys, n: int, salt: int = 0) -> np.ndarray:
    """``float64 [len(keys), n]`` uniforms in [0, 1), a pure function of each key, ``n`` and ``salt`` (an agent's seed)."""
    k = np.asarray(keys, dtype=np.uint64).reshape(-1, 1)
    salted = k ^ salt_of(salt)
    bits = mix(salted + np.arange(n, dtype=np.uint64) * _GOLDEN)
    return (bits >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


@njit(cache=True)
def keyed_legal_actions(mask, keys, salt, out):
    """Write a uniformly random legal action of every row of ``mask`` (bool ``[B, A]``) into ``out`` (int64
    ``[B]``): the ``(x mod c)``-th of the row's ``c`` legal actions in id order, ``x`` the SplitMix64 mix of
    the row's key xor ``salt`` (:func:`salt_of`).  Rows with no legal action get ``-1``; returns their number."""
    empty = 0
    legal = np.empty(mask.shape[1], np.int64)
    for i in range(mask.shape[0]):
        c = 0
        for a in range(mask.shape[1]):
            legal[c] = a
            c += mask[i, a]
        if c == 0:
            out[i] = -1
            empty += 1
            continue
        z = (keys[i] ^ salt) + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        z = z ^ (z >> np.uint64(31))
        out[i] = legal[np.int64(z % np.uint64(c))]
    return empty
