"""tests/draws.py gives what ``numpy.random.Generator.choice`` gives, draw for draw, so the case generators that use
it deal the same cases as before."""

from __future__ import annotations

import numpy as np

from tests.draws import pick


def test_pick_follows_the_choice_stream():
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    for n in (1, 2, 3, 7, 34, 136):
        for seq in (list(range(10, 10 + n)), tuple(range(n)), np.arange(n, dtype=np.int8), [f"k{i}" for i in range(n)]):
            for _ in range(50):
                assert pick(b, seq) == a.choice(seq)
    assert a.random() == b.random()  # nothing more or less was drawn
