"""Engine argument checks (mjenv/engine/arguments.py): bad batch sizes, reset and step arguments are refused with
a message naming the argument, and the engine is left exactly as it was."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mjenv.engine.core import Engine, IllegalActionError, WallError
from tests.snapshots import assert_same, engine_snapshot


@pytest.mark.parametrize("size", [1.5, "4", 0, -2, True, None, 4.0, 2**40])
def test_bad_batch_sizes_are_refused(size):
    with pytest.raises(ValueError, match=f"batch_size must be an integer 1..1048576, got {size!r}"):
        Engine("kawuxing3", size)


def test_numpy_batch_size_is_fine():
    assert Engine("kawuxing3", np.int64(3)).batch_size == 3


@pytest.fixture
def eng():
    e = Engine("kawuxing3", 3)
    e.reset(seed=5)
    return e


def _legal(e, tables):
    return np.array([int(np.flatnonzero(e.mask[b])[0]) for b in tables])


STEP_ERRORS = [
    (lambda e: ([0, 0], _legal(e, [0, 0])), ValueError, "tables lists table 0 more than once"),
    (lambda e: ([-1], _legal(e, [2])), ValueError, "tables must be indices 0..2, got -1"),
    (lambda e: ([3], _legal(e, [2])), ValueError, "tables must be indices 0..2, got 3"),
    (lambda e: ([0.5], _legal(e, [0])), ValueError, "tables must be integers"),
    (lambda e: ([True], _legal(e, [1])), ValueError, "tables must be integers"),
    (lambda e: ("0", _legal(e, [0])), ValueError, "tables must be integers"),
    (lambda e: (None, _legal(e, [0, 1, 2]).astype(float)), IllegalActionError, "actions must be integers"),
    (lambda e: (None, [True, False, True]), IllegalActionError, "actions must be integers"),
    (lambda e: (None, _legal(e, [0, 1])), ValueError, "expected 3 actions, got 2"),
    (lambda e: ([0], [[1]]), IllegalActionError, "actions must be integers"),
]


@pytest.mark.parametrize("make,error,message", STEP_ERRORS)
def test_bad_step_arguments_change_nothing(eng, make, error, message):
    tables, actions = make(eng)
    before = engine_snapshot(eng)
    with pytest.raises(error, match=message.replace("(", r"\(").replace("[", r"\[")):
        eng.step(actions, tables=tables)
    assert_same(before, engine_snapshot(eng))


def test_step_before_reset_is_an_error():
    e = Engine("kawuxing3", 2)
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        e.step([0, 0])
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        e.step([0], tables=[1])
    e.reset(seed=1, tables=[0])  # table 1 never dealt: stepping table 0 alone, or all, is fine
    e.step(_legal(e, [0]), tables=[0])
    e.step(np.concatenate([_legal(e, [0]), [0]]))


RESET_ERRORS = [
    (dict(dealer=1.7), ValueError, "dealer must be a seat 0..2, got 1.7"),
    (dict(dealer=True), ValueError, "dealer must be a seat 0..2, got True"),
    (dict(dealer=3), ValueError, "dealer must be a seat 0..2, got 3"),
    (dict(dealer=256), ValueError, "dealer must be a seat 0..2, got 256"),
    (dict(dealer=-1), ValueError, "dealer must be a seat 0..2, got -1"),
    (dict(dealer=[0, 1]), ValueError, "dealer has 2 entries for 3 tables"),
    (dict(dealer=[0, 1, 0.5]), ValueError, "dealer must be integers"),
    (dict(seed=1.5), ValueError, "seed must be an integer 0..2**64-1 or None, got 1.5"),
    (dict(seed="3"), ValueError, "seed must be an integer 0..2**64-1 or None"),
    (dict(seed=2**64), ValueError, "seed must be an integer 0..2**64-1 or None, got 18446744073709551616"),  # seed 0's walls
    (dict(seed=-1), ValueError, "seed must be an integer 0..2**64-1 or None, got -1"),  # seed 2**64-1's walls
    (dict(tables=[0, 0]), ValueError, "tables lists table 0 more than once"),
    (dict(tables=[5]), ValueError, "tables must be indices 0..2, got 5"),
    (dict(tables=[1.0]), ValueError, "tables must be integers"),
    (dict(table_ids=[1, 2]), ValueError, "table_ids has 2 entries for 3 tables"),
    (dict(table_ids=[1, -2, 3]), ValueError, "table_ids must be >= 0, got -2"),
    (dict(continue_match="yes"), ValueError, "continue_match must be True or False"),
    (dict(walls=[[0.5] * 84] * 3), WallError, "wall 0 must be integers"),
    (dict(walls=[[-1] * 84] * 3), WallError, "wall 0: tile ids must be 0..33, got -1"),
    (dict(walls=[[40] * 84] * 3), WallError, "wall 0: tile ids must be 0..33, got 40"),
    (dict(walls=5), WallError, "walls must be a list of walls"),
]


@pytest.mark.parametrize("kwargs,error,message", RESET_ERRORS)
def test_bad_reset_arguments_change_nothing(eng, kwargs, error, message):
    eng.step(_legal(eng, [0, 1, 2]))
    before = engine_snapshot(eng)
    with pytest.raises(error, match=re.escape(message)):
        eng.reset(**kwargs)
    assert_same(before, engine_snapshot(eng))


def test_good_arguments_in_numpy_and_python_types_still_work():
    e = Engine("kawuxing3", 2)
    e.reset(seed=np.int64(3), dealer=np.array([1, 2]), tables=np.array([0, 1]), table_ids=[7, 8])
    assert list(e.state.dealer) == [1, 2]
    walls = e.seeded_walls(3, [7, 8])
    f = Engine("kawuxing3", 2)
    f.reset(walls=walls, dealer=[1, 2])
    assert np.array_equal(f.state.wall, e.state.wall)
    f.reset(walls=[list(map(int, walls[0]))], tables=[0], dealer=np.int8(1))
    f.step(_legal(f, [1, 0]), tables=np.array([1, 0], dtype=np.int32))


def test_continue_match_refuses_tables_whose_session_is_over_before_changing_any():
    from mjenv.engine.validate import validate

    eng = Engine("diedaohu", 6, options={"bankroll": 0.5}, record_events=False)  # any kong money busts its payers
    eng.reset(seed=0)
    rng = np.random.default_rng(0)
    for hand in range(40):
        while not eng.done.all():
            eng.step((rng.random(eng.mask.shape) * eng.mask).argmax(1))
        validate(eng)
        if eng.session_over.any() and not eng.session_over.all():
            break
        eng.reset(seed=hand + 1, tables=np.flatnonzero(eng.session_over))
        eng.next_hand(seed=hand + 1, tables=np.flatnonzero(~eng.session_over))
    over = np.flatnonzero(eng.session_over).tolist()
    assert over and len(over) < 6
    before = engine_snapshot(eng)
    with pytest.raises(ValueError, match=re.escape(f"continue_match: tables {over} finished their session")):
        eng.reset(seed=5, continue_match=True)
    with pytest.raises(ValueError, match=re.escape(f"continue_match: tables {over[-1:]} finished")):
        eng.reset(seed=5, continue_match=True, tables=np.array([over[-1]]), dealer=np.array([0]))  # the fast path
    assert_same(before, engine_snapshot(eng))
    going = np.flatnonzero(~eng.session_over)
    eng.reset(seed=5, continue_match=True, tables=going, dealer=np.zeros(len(going), np.int64))


def test_many_tables_as_int64_arrays_are_checked_as_fully():
    # more than 16 tables as int64 arrays (a loop re-dealing np.flatnonzero(engine.done)) take the cheap checks of
    # arguments._fast_reset_args: the same refusals and the same deals as the full checks
    e = Engine("kawuxing3", 40, record_events=False)
    e.reset(seed=0)
    ids = np.arange(3, 40, 2, dtype=np.int64)  # 19 increasing tables
    bad = [
        (dict(tables=np.concatenate([ids, ids[:1]])), "more than once"),  # not increasing: the full check names it
        (dict(tables=np.concatenate([ids, [40]])), "tables must be indices 0..39, got 40"),
        (dict(tables=np.concatenate([[-1], ids])), "tables must be indices 0..39, got -1"),
        (dict(tables=ids, table_ids=np.concatenate([ids[1:], [-3]])), "table_ids must be >= 0, got -3"),
        (dict(tables=ids, dealer=np.full(len(ids), 3, np.int64)), "dealer must be a seat 0..2, got 3"),
    ]
    for kwargs, message in bad:
        before = engine_snapshot(e)
        with pytest.raises(ValueError, match=re.escape(message)):
            e.reset(seed=1, **kwargs)
        assert_same(before, engine_snapshot(e))
    dealers = (ids % 3).astype(np.int64)
    e.reset(seed=4, tables=ids, dealer=dealers, table_ids=ids + 100)
    f = Engine("kawuxing3", 40, record_events=False)
    f.reset(seed=0)
    f.reset(seed=4, tables=ids[::-1].tolist(), dealer=dealers[::-1].tolist(), table_ids=(ids + 100)[::-1].tolist())
    assert np.array_equal(e.state.wall, f.state.wall) and np.array_equal(e.state.dealer, f.state.dealer)
