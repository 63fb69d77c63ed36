"""Invariant checks of an engine's state, run after every step in tests (pgx ``_validate`` style).

:func:`validate` raises :class:`InvariantError` describing the first broken invariant:
tile conservation (hands + melds + rivers + live wall = the variant's tile multiset), zero-sum
money, hand sizes per phase, declared melds equal to their tile counts, the cached legal mask
equal to a from-scratch recomputation, no empty mask at a live table, and under 园子 no balance below 0 and no
session going on after a hand that left two players busted.
"""

from __future__ import annotations

import numpy as np

from mjenv.engine import state as S


class InvariantError(AssertionError):
    """A broken engine invariant; the message names the table and the invariant."""


def validate(engine) -> None:
    """Check every invariant on every table of ``engine``; raise :class:`InvariantError` on the first failure."""
    st = engine.state
    B, n = engine.batch_size, engine.n
    rows = np.arange(B)
    want = np.where(engine.kinds, 4, 0)

    def fail(bad: np.ndarray, what: str) -> None:
        if bad.any():
            b = int(np.flatnonzero(bad)[0])
            raise InvariantError(f"table {b}: {what}")

    fail(st.front > st.back, "wall front past back")
    pos = np.arange(st.river.shape[2])
    in_river = pos[None, None, :] < st.river_len[:, :, None]
    fail(((st.river < 0) & in_river).any((1, 2)) | ((st.river != -1) & ~in_river).any((1, 2)), "a river is corrupt")
    counts = st.hand.sum(1, dtype=np.int64) + st.melded.sum(1, dtype=np.int64)
    river_tiles = np.where(in_river, st.river, 34).reshape(B, -1).astype(np.int64)
    counts += _row_bincount(river_tiles)
    wpos = np.arange(st.wall.shape[1])
    live_wall = (wpos[None, :] >= st.front[:, None]) & (wpos[None, :] < st.back[:, None])
    counts += _row_bincount(np.where(live_wall, st.wall, 34).astype(np.int64))
    counts += _row_bincount(np.where(st.kong_tiles >= 0, st.kong_tiles, 34).astype(np.int64))
    fail((counts != want[None]).any(1), "tiles not conserved across hands, melds, rivers and wall")
    fail(((st.hand < 0) | (st.hand > 4)).any((1, 2)), "a hand count is outside 0..4")
    fail(np.abs(st.money.sum(1)) > 1e-9, "money is not zero-sum")
    _check_melds(st, B)

    live = st.phase != S.DONE
    size = st.hand.sum(2, dtype=np.int64) + 3 * st.n_melds
    phase = st.phase
    holder = (np.arange(n)[None, :] == st.cur[:, None]) & ((phase == S.TURN) | (phase == S.CLAIMED) | (phase == S.ROB))[:, None]
    fail(live & (size != np.where(holder, 14, 13)).any(1), "a seat holds the wrong number of tiles for the phase")
    fail(live & ~engine.mask.any(1), "empty legal mask in a live state")
    fail(~live & engine.mask.any(1), "finished table has legal actions")
    window = live & ((phase == S.CLAIM) | (phase == S.ROB))
    actor = st.actor.astype(np.int64)
    bad_window = (actor == st.claim_from) | (st.claim_opts[rows, actor] == 0) | (st.claim_reply[rows, actor] != -1)
    fail(window & bad_window, "claim window asks a seat that cannot claim")
    fail(live & ~window & (st.actor != st.cur), "actor is not the seat on turn")
    turn = live & (st.phase == S.TURN)
    drawn = np.maximum(st.drawn, 0).astype(np.int64)
    fail(turn & ((st.drawn < 0) | (st.hand[rows, st.cur.astype(np.int64), drawn] < 1)), "the drawn tile is not in the hand")
    fail((st.hidden & ((st.hand < 3) | ~st.revealed[:, :, None])).any((1, 2)), "a face-down triplet is not held")

    if getattr(engine.opts, "bankroll", None) is not None:  # 园子 (§7.7)
        bal = engine.balance + st.money
        fail((bal < -1e-9).any(1), "a 园子 balance is below 0")
        ended = ~live & np.array([list.__getitem__(engine.results, b) is not None for b in range(B)])
        fail(ended & ((bal <= 1e-9).sum(1) >= 2) & ~engine.session_over, "a hand left two players busted, yet the session goes on")

    fresh = np.zeros_like(engine.mask)
    idx = np.flatnonzero(live)
    if len(idx):
        fresh[idx] = engine._compute_masks(idx)
    fail((fresh != engine.mask).any(1), "cached mask differs from a from-scratch recomputation")


def _row_bincount(tiles: np.ndarray) -> np.ndarray:
    """Per-row counts of ids 0..33 in ``tiles`` [B, K] (34 marks an empty slot)."""
    B = tiles.shape[0]
    flat = (np.arange(B)[:, None] * 35 + tiles).reshape(-1)
    return np.bincount(flat, minlength=B * 35).reshape(B, 35)[:, :34]


def _check_melds(st, B: int) -> None:
    k = st.n_melds[:, :, None]
    slot = np.arange(S.MAX_MELDS)[None, None, :]
    if ((slot < k) != (st.meld_kind != 0)).any():
        b = int(np.flatnonzero(((slot < k) != (st.meld_kind != 0)).any((1, 2)))[0])
        raise InvariantError(f"table {b}: meld slots disagree with n_melds")
    bi, si, ji = np.nonzero(st.meld_kind)
    kinds = st.meld_kind[bi, si, ji]
    tiles = st.meld_tile[bi, si, ji].astype(np.int64)
    chi = kinds == S.CHI_MELD
    cell = (bi * st.melded.shape[1] + si) * 34  # each (table, seat)'s 34 counts, flattened
    where = np.concatenate([cell[chi] + tiles[chi] + off for off in range(3)] + [cell[~chi] + tiles[~chi]])
    weight = np.concatenate([np.ones(3 * int(chi.sum()), np.int64), np.where(kinds[~chi] >= S.DIRECT_KONG, 4, 3)])
    melded = np.bincount(where, weights=weight, minlength=st.melded.size).reshape(st.melded.shape)
    bad = (melded != st.melded).any((1, 2))
    if bad.any():
        raise InvariantError(f"table {int(np.flatnonzero(bad)[0])}: melded counts disagree with the declared melds")
