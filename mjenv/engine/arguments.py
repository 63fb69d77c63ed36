"""Argument checks of the public :class:`~mjenv.engine.core.Engine` calls, kept apart from the game core.

This module owns what the engine accepts from its callers: a batch size, the arguments of ``reset`` (seed,
walls, dealer, tables, table ids) and of ``step`` (actions, tables).  Each check runs before the call
changes anything and returns the arguments normalized (integer numpy arrays), so a refused call leaves the
engine exactly as it was.  Errors name the argument and the offending value:

* ``ValueError`` — a value of the wrong type or range (a float or bool where an integer is needed, a table
  index outside ``0..B-1`` or listed twice, a dealer that is not a seat, a list of the wrong length);
* :class:`WallError` (a ``ValueError``) — a wall whose entries are not tile ids 0..33;
* :class:`IllegalActionError` (a ``ValueError``) — actions that are not integer ids;
* ``RuntimeError`` — ``step`` on tables that were never dealt (``reset`` first).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjenv.engine.state import DONE

__all__ = ["MAX_BATCH_SIZE", "MAX_SEED", "IllegalActionError", "WallError", "check_batch_size", "check_seed",
           "check_reset_args", "check_step_args"]


class IllegalActionError(ValueError):
    """An action the mask does not allow; the engine state is unchanged."""

    __module__ = "mjenv.engine.core"  # its public home (error messages and pickles name it there)


class WallError(ValueError):
    """An explicit wall that is not exactly the variant's tile multiset."""

    __module__ = "mjenv.engine.core"

MAX_BATCH_SIZE = 1 << 20
"""The most tables one engine holds (about 8 KB each with events recorded: 8 GB at the limit)."""

MAX_SEED = (1 << 64) - 1
"""The largest seed: walls are drawn from 64-bit SplitMix64 state, so a larger one would replay ``seed mod 2**64``."""


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _int_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a 1-D int64 array; ``ValueError`` naming ``name`` unless every entry is an integer."""
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be integers, got {value!r}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of integers, got {value!r}") from None
    if arr.size == 0:
        return np.zeros(0, np.int64)
    if arr.dtype == object and all(_is_int(x) for x in arr.reshape(-1)):
        try:
            arr = arr.astype(np.int64)
        except OverflowError:  # Python ints beyond int64
            raise ValueError(f"{name} out of range, got {_show(value)}") from None
    if not np.issubdtype(arr.dtype, np.integer) or arr.ndim > 1:
        raise ValueError(f"{name} must be integers (a flat list), got {_show(value)}")
    return arr.astype(np.int64).reshape(-1)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """``seed`` as an int in ``0..MAX_SEED`` or None; ``ValueError`` naming ``name`` for anything else (a float,
    a bool, a negative number or one of 2**64 or more, which would wrap onto another seed's walls)."""
    if seed is None:
        return None
    if not _is_int(seed) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"{name} must be an integer 0..2**64-1 or None, got {_show(seed)}")
    return int(seed)


def check_batch_size(batch_size: Any) -> int:
    """``batch_size`` as an int in ``1..MAX_BATCH_SIZE`` (a float, bool or string is refused, not rounded)."""
    if not _is_int(batch_size) or not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise ValueError(f"batch_size must be an integer 1..{MAX_BATCH_SIZE}, got {batch_size!r}")
    return int(batch_size)


def _check_tables(engine, tables: Any) -> np.ndarray | None:
    """``tables`` as distinct int64 indices in ``0..B-1`` (None stays None: every table)."""
    if tables is None:
        return None
    idx = _int_array(tables, "tables")
    B = engine.batch_size
    bad = idx[(idx < 0) | (idx >= B)]
    if bad.size:
        raise ValueError(f"tables must be indices 0..{B - 1}, got {int(bad[0])}")
    if idx.size > 1 and np.unique(idx).size != idx.size:
        uniq, counts = np.unique(idx, return_counts=True)
        raise ValueError(f"tables lists table {int(uniq[counts > 1][0])} more than once")
    return idx


_INT64 = np.dtype(np.int64)
_SMALL = 16  # up to this many entries, plain Python checks beat numpy's per-call cost


def _plain_indices(x: Any) -> bool:
    return type(x) is np.ndarray and x.dtype is _INT64 and x.ndim == 1


def _fast_reset_args(engine, seed: Any, walls: Any, dealer: Any, tables: Any, table_ids: Any, continue_match: Any):
    """The common ``reset`` call (a seed, no walls, int64 index arrays: more than :data:`_SMALL` tables given in
    increasing order, as ``np.flatnonzero(engine.done)`` gives them) checked with a few cheap tests, or ``None`` when
    the call is anything else or fails a test (:func:`check_reset_args` then finds and names the problem).

    A B = 1 env deals every 30-odd decisions; the full checks cost 48 µs a deal, about 2 µs a decision.  A loop over
    B = 4096 tables re-deals some 80 finished ones at every step; the full checks (``np.unique`` among them) cost
    135 µs a step there, 2.7 % of its CPU, all of it on the calling thread."""
    if walls is not None or type(continue_match) is not bool:
        return None
    if seed is not None and (type(seed) is not int or not 0 <= seed <= MAX_SEED):
        return None
    n, B = engine.n, engine.batch_size
    if tables is None:
        k = B
    elif _plain_indices(tables):
        k = tables.shape[0]
        if k <= _SMALL:
            rows = tables.tolist()
            if k and (min(rows) < 0 or max(rows) >= B or len(set(rows)) != k):
                return None
        elif tables[0] < 0 or tables[-1] >= B or not (tables[1:] > tables[:-1]).all():
            return None  # (more than _SMALL: increasing indices, as np.flatnonzero gives them, are distinct)
    else:
        return None
    if type(dealer) is int:
        if not 0 <= dealer < n:
            return None
    elif _plain_indices(dealer) and dealer.shape[0] == k:
        if k and (int(dealer.min()) < 0 or int(dealer.max()) >= n):
            return None
    else:
        return None
    if table_ids is not None:
        if not _plain_indices(table_ids) or table_ids.shape[0] != k or (k and int(table_ids.min()) < 0):
            return None
    return seed, walls, dealer, tables, table_ids


def check_reset_args(engine, seed: Any, walls: Any, dealer: Any, tables: Any, table_ids: Any, continue_match: Any):
    """``(seed, walls, dealer, tables, table_ids)`` of ``Engine.reset`` checked and normalized.

    ``seed`` is None or an integer 0..2**64-1; ``continue_match`` refuses tables whose session is over; ``walls`` None, one notation string, or one wall per table (a notation string
    or integer tile ids 0..33; whether it is the variant's tile set is checked by the engine); ``dealer`` one seat
    or one seat per table; ``tables`` distinct indices; ``table_ids`` non-negative integers, one per table.
    """
    fast = _fast_reset_args(engine, seed, walls, dealer, tables, table_ids, continue_match)
    if fast is not None:
        if continue_match:
            _check_sessions_go_on(engine, fast[3])
        return fast
    seed = check_seed(seed)
    if not isinstance(continue_match, (bool, np.bool_)):
        raise ValueError(f"continue_match must be True or False, got {continue_match!r}")
    idx = _check_tables(engine, tables)
    if continue_match:
        _check_sessions_go_on(engine, idx)
    k = engine.batch_size if idx is None else len(idx)
    if walls is not None and not isinstance(walls, str):
        if isinstance(walls, np.ndarray) and walls.ndim == 2:
            walls = list(walls)
        try:
            rows = list(walls)
        except TypeError:
            raise WallError(f"walls must be a list of walls, got {_show(walls)}") from None
        checked = []
        for i, w in enumerate(rows):
            if isinstance(w, str):
                checked.append(w)
                continue
            try:
                arr = _int_array(w, f"wall {i}")
            except ValueError as exc:
                raise WallError(f"{exc} (tile ids 0..33 or a notation string)") from None
            bad = arr[(arr < 0) | (arr > 33)]
            if bad.size:
                raise WallError(f"wall {i}: tile ids must be 0..33, got {int(bad[0])}")
            checked.append(arr)
        walls = checked
    if np.ndim(dealer) == 0 and not _is_int(dealer):
        raise ValueError(f"dealer must be a seat 0..{engine.n - 1}, got {dealer!r}")
    dealers = _int_array(dealer, "dealer")
    if np.ndim(dealer) == 0 and dealers.size != 1:
        raise ValueError(f"dealer must be a seat 0..{engine.n - 1}, got {dealer!r}")
    if np.ndim(dealer) > 0 and dealers.size != k:
        raise ValueError(f"dealer has {dealers.size} entries for {k} tables (give one seat, or one per table)")
    bad = dealers[(dealers < 0) | (dealers >= engine.n)]
    if bad.size:
        raise ValueError(f"dealer must be a seat 0..{engine.n - 1}, got {int(bad[0])}")
    dealer = int(dealers[0]) if np.ndim(dealer) == 0 else dealers
    if table_ids is not None:
        table_ids = _int_array(table_ids, "table_ids")
        if (table_ids < 0).any():
            raise ValueError(f"table_ids must be >= 0, got {int(table_ids[table_ids < 0][0])}")
        if walls is None and table_ids.size != k:
            raise ValueError(f"table_ids has {table_ids.size} entries for {k} tables")
    return seed, walls, dealer, idx, table_ids


def _check_sessions_go_on(engine, idx: np.ndarray | None) -> None:
    """``continue_match=True`` continues each table's session: refused, naming the tables, where it is over."""
    over = engine.session_over if idx is None else engine.session_over[idx]
    if over.any():
        rows = np.flatnonzero(over) if idx is None else idx[over]
        raise ValueError(
            f"continue_match: tables {rows.tolist()} finished their session; start a new one with continue_match=False"
        )


def check_step_args(engine, actions: Any, tables: Any):
    """``(actions, tables)`` of ``Engine.step`` checked and normalized: integer action ids, one per addressed
    table, and distinct table indices; ``RuntimeError`` when none of the addressed tables was ever dealt."""
    idx = _check_tables(engine, tables)
    try:
        acts = _int_array(actions, "actions")
    except ValueError as exc:
        raise IllegalActionError(f"{exc} (action ids 0..110)") from None
    k = engine.batch_size if idx is None else len(idx)
    if acts.size != k:
        raise ValueError(f"expected {k} actions, got {acts.size}")
    phase = engine.state.phase if idx is None else engine.state.phase[idx]
    rows = engine._all if idx is None else idx
    if rows.size and (phase == DONE).all() and all(engine.results[b] is None for b in rows.tolist()):
        raise RuntimeError("step before any hand was dealt on these tables; call reset() first")
    return acts, idx
