"""Compiled random legal action sampling: legal, uniform, seeded, reproducible across batch splits."""

from __future__ import annotations

import numpy as np
import pytest

from mjenv.encoding import actions as A
from mjenv.engine.core import Engine
from mjenv.engine.sampling import ActionSampler, random_legal_actions, seed_state


def test_samples_are_legal_and_finished_rows_get_minus_one():
    rng = np.random.default_rng(0)
    mask = rng.random((500, A.N_ACTIONS)) < 0.05
    mask[::7] = False
    out = ActionSampler(3).sample(mask)
    empty = ~mask.any(1)
    assert (out[empty] == -1).all()
    assert mask[np.flatnonzero(~empty), out[~empty]].all()
    assert random_legal_actions(mask, seed_state(3), np.empty(500, np.int64)) == int(empty.sum())


def test_each_legal_action_is_equally_likely():
    """Chi-square over 60,000 draws of a row with 7 legal actions scattered over the 111 ids."""
    legal = np.array([0, 5, 33, 34, 102, 107, 108])
    mask = np.zeros((60_000, A.N_ACTIONS), bool)
    mask[:, legal] = True
    out = ActionSampler(11).sample(mask)
    counts = np.array([(out == a).sum() for a in legal])
    assert counts.sum() == len(out)
    expected = len(out) / len(legal)
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 22.5  # p = 0.001 at 6 degrees of freedom


def test_seeded_streams_repeat_and_do_not_depend_on_the_batch_split():
    rng = np.random.default_rng(1)
    mask = rng.random((64, A.N_ACTIONS)) < 0.1
    mask[:, A.PASS] = True
    whole = ActionSampler(42).sample(mask).copy()
    np.testing.assert_array_equal(ActionSampler(42).sample(mask), whole)
    split = ActionSampler(42)
    parts = [split.sample(mask[:10]).copy(), split.sample(mask[10:11]).copy(), split.sample(mask[11:]).copy()]
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    assert not np.array_equal(ActionSampler(43).sample(mask), whole)
    # One row given as a flat [A] mask (the AEC env's action_mask, int8) is the same draw.
    single = ActionSampler(42)
    assert single.sample(mask[0].astype(np.int8))[0] == whole[0]


def test_random_play_with_the_sampler_finishes_every_hand():
    eng = Engine("gejiu", 16, record_events=False)
    eng.reset(seed=2)
    sampler = ActionSampler(2)
    for _ in range(2000):
        if eng.done.all():
            break
        eng.step(sampler.sample(eng.mask))
    assert eng.done.all() and all(r is not None for r in eng.results)


def test_bad_arguments_are_rejected():
    s = ActionSampler(0)
    with pytest.raises(ValueError, match="mask must be"):
        s.sample(np.zeros((2, 3, 4), bool))
    with pytest.raises(ValueError, match="out must be int64"):
        s.sample(np.ones((2, 5), bool), out=np.empty(3, np.int64))


def test_the_buffer_fast_path_draws_what_the_general_path_draws():
    """``sample(mask, out)`` with the engine's C-contiguous bool mask (the compiled entry point) and every
    other form (int8, a strided view, no ``out``) consume the same stream and give the same actions."""
    rng = np.random.default_rng(4)
    mask = rng.random((40, A.N_ACTIONS)) < 0.1
    mask[:, A.PASS] = True
    out = np.empty(40, np.int64)
    fast = ActionSampler(9)
    general = ActionSampler(9)
    for _ in range(3):
        np.testing.assert_array_equal(fast.sample(mask, out), general.sample(mask.astype(np.int8)))
        assert fast.sample(mask, out) is out
        general.sample(mask)
    np.testing.assert_array_equal(fast.state, general.state)
    view = np.zeros((40, 2 * A.N_ACTIONS), bool)
    view[:, ::2] = mask  # a strided view: not the fast path, same draws
    np.testing.assert_array_equal(ActionSampler(1).sample(view[:, ::2], out).copy(), ActionSampler(1).sample(mask))
