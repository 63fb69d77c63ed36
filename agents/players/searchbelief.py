"""Belief over sampled worlds: weights from how likely each opponent's latest discard is in a world.

:meth:`mjenv.engine.core.Engine.sample_worlds` deals the unseen tiles uniformly, conditioned on the rules only: a
world does not agree with what the opponents' *play* reveals.  This module owns the cheap likelihood the search
agent (:mod:`agents.players.search`, ``belief=EPS``) uses to weight worlds:

* :func:`last_discards`: the opponents whose latest discard was made from exactly the hand they hold now plus that
  tile — public facts of the source table: the opponent is not the acting seat, has not declared 亮倒, its latest
  discard is the last tile of its river, and every discard since is still in a river (nothing was claimed since)
  and fewer than ``n − 1`` were made since (it has not drawn since);
* :func:`discard_weights`: for every world, each such opponent's hand before that discard (its world hand plus the
  tile, the rivers without that discard and the later ones) is put back on its turn in a scratch engine with every held tile's discard legal, and the policy that
  rolls out decides; the world's likelihood is the product over those opponents of 1 where the policy discards the
  tile it did, ``eps`` where it does not.

The search samples more worlds than it rolls out and keeps a weighted resample (``SearchAgent`` docstring).
Reading only the acting seat's view: the opponents' hands used are the *world's* hands, never the true table's.
"""

from __future__ import annotations

import numpy as np

from mjenv.encoding import actions as A
from mjenv.engine import state as S

__all__ = ["last_discards", "discard_weights", "resample"]


def last_discards(engine, table: int, seat: int) -> list[tuple[int, int, int]]:
    """``[(opponent, tile, time)]``: the opponents of ``seat`` at ``table`` whose hand now is their hand before their
    latest discard less that tile (module docstring); public facts, the same in every world of the table."""
    st = engine.state
    b = int(table)
    n = engine.n
    latest = int(st.n_discards[b]) - 1
    if latest < 0:
        return []
    times = []
    for o in range(n):
        k = int(st.river_len[b, o])
        times.extend(int(x) for x in st.river_time[b, o, :k])
    present = set(times)
    out = []
    for o in range(n):
        if o == seat or bool(st.revealed[b, o]):
            continue
        k = int(st.river_len[b, o])
        if k == 0:
            continue
        tau = int(st.river_time[b, o, k - 1])
        if latest - tau > n - 2:
            continue  # it has drawn since
        if any(x not in present for x in range(tau + 1, latest + 1)):
            continue  # a discard since was claimed: hands changed
        out.append((o, int(st.river[b, o, k - 1]), tau))
    return out


def discard_weights(worlds, rows, facts, player, scratch, eps: float) -> np.ndarray:
    """float64 [len(rows)]: each world's likelihood of the opponents' latest discards ``facts`` (from
    :func:`last_discards`) under ``player`` (``decide(engine, tables)``), ``eps`` per discard it would not make;
    ``scratch`` is an engine of the same rules with at least ``len(rows)`` tables (overwritten)."""
    rows = np.asarray(rows, dtype=np.int64)
    m = len(rows)
    w = np.ones(m)
    if not facts:
        return w
    idx = np.arange(m)
    ss = scratch.state
    for o, t, tau in facts:
        scratch._b8[:m] = worlds._b8[rows]  # the packed state is all the players read
        scratch._b16[:m] = worlds._b16[rows]
        ss.hand[idx, o, t] += 1
        for a in range(worlds.n):  # the rivers as they were: that discard and the later ones taken back
            k = int(worlds.state.river_len[rows[0], a])
            later = int((worlds.state.river_time[rows[0], a, :k] >= tau).sum())
            if later:
                ss.river[idx, a, k - later : k] = -1
                ss.river_len[idx, a] = k - later
        ss.n_discards[idx] = tau
        ss.cur[idx] = o
        ss.actor[idx] = o
        ss.phase[idx] = S.TURN
        ss.drawn[idx] = -1
        ss.turns[idx, o] -= 1
        ss.claim_tile[idx] = -1
        scratch.mask[idx] = False
        scratch.mask[idx, A.DISCARD : A.DISCARD + 34] = ss.hand[idx, o] > 0
        if m < scratch.batch_size:
            scratch._b8[m:, S.O8_PHASE] = S.DONE
            scratch.mask[m:] = False
        choice = player.decide(scratch, idx)[idx]
        w *= np.where(choice == A.DISCARD + t, 1.0, eps)
    return w


def resample(weights: np.ndarray, n: int, u: float) -> np.ndarray:
    """int64 [n]: systematic resample of ``n`` indices in proportion to ``weights`` (offset ``u`` in [0, 1)); all
    zero weights (``eps`` 0 and no world consistent): the first ``n``."""
    c = np.cumsum(np.asarray(weights, np.float64))
    if not c[-1] > 0:
        return np.arange(n, dtype=np.int64) % len(c)
    c /= c[-1]
    return np.minimum(np.searchsorted(c, (u + np.arange(n)) / n, side="right"), len(c) - 1).astype(np.int64)
