"""Hand plans for the rule-based player: which tiles a hand keeps, and how far it is from winning that way.

This module owns the family-specific measures :class:`agents.players.heuristic.HeuristicAgent` uses on top of
:mod:`mjenv.encoding.shanten`:

* **烂牌 / 七星** (Gejiu, docs/rules/gejiu.md §6.6): :func:`lanpai_count` is the largest subset of a concealed
  hand of pairwise different kinds where two tiles of one suit are at least three ranks apart;
  :func:`lanpai_shanten` is ``13 - count`` (``-1`` complete, ``0`` ready, as for :func:`mjenv.encoding.shanten.shanten`)
  and :func:`lanpai_ukeire` counts the live tiles that raise the count.
* **flush plans** (混一色 / 清一色 in Gejiu, Diedaohu, Liuwei and Yangzhou): :func:`flush_allowed` gives, per
  suit, the kinds a one-suit-plus-honors hand may keep and whether the player's melds still allow it;
  :func:`plan_shanten` is the shanten of the hand restricted to those kinds, never below the number of
  off-plan tiles still to throw minus one (each needs a draw to replace it).
* **all-triplets plans** (对对胡 / 碰碰胡 / 大对子): :func:`triplets_shanten` is the shanten of a hand made of
  triplets or kongs and a pair only (no sequences, no seven pairs; any chi meld rules it out) and
  :func:`triplets_ukeire` counts the live tiles that lower it; :func:`triplets_shanten_slow` is the pair-enumerating
  reference the tests check them against.
"""

from __future__ import annotations

import numpy as np

from mjenv.encoding.shanten import shanten

SUIT_OF = np.where(np.arange(34) < 27, np.arange(34) // 9, 3)


def _best_spread() -> tuple[np.ndarray, np.ndarray]:
    """For every 9-bit rank mask of one suit: the largest subset with pairwise gaps >= 3, and for each rank
    whether adding it raises that size."""
    best = np.zeros(512, dtype=np.int64)
    for m in range(512):
        ranks = [r for r in range(9) if m >> r & 1]
        top = 0
        for sub in range(1, 1 << len(ranks)):
            pick = [ranks[i] for i in range(len(ranks)) if sub >> i & 1]
            if all(b - a >= 3 for a, b in zip(pick, pick[1:])):
                top = max(top, len(pick))
        best[m] = top
    gain = np.zeros((512, 9), dtype=bool)
    for m in range(512):
        for r in range(9):
            gain[m, r] = best[m | 1 << r] > best[m]
    return best, gain


_BEST, _GAIN = _best_spread()
_POW = 1 << np.arange(9)


def _suit_masks(h: np.ndarray) -> np.ndarray:
    """int [N, 3]: rank-presence bit masks of the three suits."""
    present = (h[:, :27] > 0).reshape(-1, 3, 9)
    return (present * _POW).sum(2)


def lanpai_count(h) -> np.ndarray:
    """int [N]: tiles of the largest 烂牌 subset of each concealed hand ``h [N, 34]``."""
    h = np.atleast_2d(np.asarray(h))
    return _BEST[_suit_masks(h)].sum(1) + (h[:, 27:] > 0).sum(1)


def lanpai_shanten(h, n_melds) -> np.ndarray:
    """int [N]: ``13 - lanpai_count`` for concealed hands (no melds), a large number otherwise."""
    h = np.atleast_2d(np.asarray(h))
    nm = np.broadcast_to(np.asarray(n_melds), (len(h),))
    return np.where(nm == 0, 13 - lanpai_count(h), 99)


def lanpai_ukeire(h, live) -> np.ndarray:
    """int [N]: live copies of the kinds whose draw raises each hand's 烂牌 count."""
    h = np.atleast_2d(np.asarray(h))
    live = np.atleast_2d(np.asarray(live))
    masks = _suit_masks(h)
    improving = np.zeros(h.shape, dtype=bool)
    for s in range(3):
        improving[:, 9 * s : 9 * s + 9] = _GAIN[masks[:, s]] & (h[:, 9 * s : 9 * s + 9] == 0)
    improving[:, 27:] = h[:, 27:] == 0
    return (improving * live).sum(1)


def flush_allowed(meld_tiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(allowed bool [3, 34], feasible bool [N, 3])``: the kinds a flush in suit s keeps (that suit and the
    honors), and whether each player's meld tiles ``[N, 34]`` all fit it."""
    allowed = np.zeros((3, 34), dtype=bool)
    for s in range(3):
        allowed[s] = (SUIT_OF == s) | (SUIT_OF == 3)
    mt = np.atleast_2d(np.asarray(meld_tiles)) > 0
    feasible = ~(mt[:, None, :] & ~allowed[None]).any(2)
    return allowed, feasible


def plan_shanten(h, n_melds, allowed, seven_pairs: bool) -> np.ndarray:
    """int [N]: shanten of ``h [N, 34]`` kept to ``allowed`` kinds (``[N, 34]`` or ``[34]``).

    It is never below the number of off-plan tiles (each needs a draw to replace it), minus one for a hand that
    is about to discard (``14 - 3 * melds`` tiles)."""
    h = np.atleast_2d(np.asarray(h))
    nm = np.broadcast_to(np.asarray(n_melds), (len(h),))
    allowed = np.broadcast_to(np.asarray(allowed, dtype=bool), h.shape)
    kept = np.where(allowed, h, 0).astype(np.int8)
    off = np.where(allowed, 0, h).sum(1).astype(np.int64)
    discarding = (h.sum(1) + 3 * nm) % 3 == 2
    return np.maximum(shanten(kept, nm, seven_pairs), off - discarding)


def triplets_shanten(h, n_melds, n_chi=0) -> np.ndarray:
    """int [N]: shanten of ``h [N, 34]`` towards four triplets/kongs and a pair (99 where a chi meld exists).

    With ``s = 4 - melds`` sets still to make, a kind kept towards a set uses at most 3 of its tiles and the pair
    at most 2, and the ``s + 1`` slots take distinct kinds; the best choice takes the ``s + 1`` kinds with the
    most tiles (capped at 3), one of them the pair, which loses a tile only when all of them are triplets.  The
    shanten is ``3s + 1`` minus the tiles so used (``-1`` complete, ``0`` ready).  Wherever enough lone tiles are
    held this is ``2s - 2 min(T, s) - min(P', s + 1 - min(T, s))`` with T kinds held >= 3 and P' kinds held 2 plus
    the triplets beyond s; it is larger only when the hand lacks the lone tiles to start the missing sets (a
    fourth copy is no start for another kind)."""
    h = np.atleast_2d(np.asarray(h))
    N = len(h)
    nm = np.broadcast_to(np.asarray(n_melds, dtype=np.int64), (N,))
    chi = np.broadcast_to(np.asarray(n_chi, dtype=np.int64), (N,))
    s = np.clip(4 - nm, 0, 4)
    c3 = -np.sort(-np.minimum(h, 3).astype(np.int64), axis=1)[:, :5]  # the five largest, descending
    cum = np.cumsum(c3, axis=1)
    used = cum[np.arange(N), s]  # the top s + 1 kinds
    all_triplets = c3[np.arange(N), s] == 3  # then the pair is a triplet kind missing nothing but one tile used
    used = used - all_triplets
    return np.where(chi > 0, 99, 3 * s + 1 - used)


def triplets_shanten_slow(counts, n_melds: int, n_chi: int = 0) -> int:
    """Reference for one hand: tries every pair kind, and for each the ``4 - melds`` other kinds that need the fewest
    tiles to become triplets (the cheapest set of that many kinds: no combination of kinds costs less)."""
    c = [int(x) for x in np.asarray(counts).reshape(-1)]
    if n_chi:
        return 99
    s = 4 - int(n_melds)
    missing = [max(0, 3 - x) for x in c]  # tiles a triplet of each kind still needs
    best = 99
    for pair in range(34):
        trips = sum(sorted(missing[k] for k in range(34) if k != pair)[:s])
        best = min(best, max(0, 2 - c[pair]) + trips - 1)
    return best


def triplets_ukeire(h, n_melds, live, n_chi=0) -> np.ndarray:
    """int [N]: live copies of the kinds held once or twice whose draw lowers :func:`triplets_shanten`."""
    h = np.atleast_2d(np.asarray(h))
    live = np.atleast_2d(np.asarray(live))
    N = len(h)
    nm = np.broadcast_to(np.asarray(n_melds, dtype=np.int64), (N,))
    chi = np.broadcast_to(np.asarray(n_chi, dtype=np.int64), (N,))
    base = triplets_shanten(h, nm, chi)
    improving = np.zeros(h.shape, dtype=bool)
    r_i, t_i = np.nonzero((h == 1) | (h == 2))
    if len(r_i):
        more = h[r_i].astype(np.int8)
        more[np.arange(len(r_i)), t_i] += 1
        improving[r_i, t_i] = triplets_shanten(more, nm[r_i], chi[r_i]) < base[r_i]
    return (improving * live).sum(1)
