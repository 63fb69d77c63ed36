"""Random draws for the tests' case generators: the same values as ``numpy.random.Generator.choice`` on a short
sequence, from the same stream, without its cost.

``rng.choice(seq)`` converts ``seq`` to an array and checks its shape on every call (about 10 µs); the generators
call it a few hundred thousand times per test.  :func:`pick` draws ``rng.integers(len(seq))`` as ``choice`` does,
so a generator that uses it deals exactly the cases it dealt before (tests/test_draws.py checks the streams).
"""

from __future__ import annotations


def pick(rng, seq):
    """One element of ``seq`` (a list, tuple or 1-d array), the one ``rng.choice(seq)`` would return."""
    return seq[int(rng.integers(len(seq)))]
