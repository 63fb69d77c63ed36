"""Kawuxing hands settled in the kernel: ``engine.results`` entries built when read behave as plain dicts.

The differential test (tests/differential.py) compares every result with the reference engine's; here the
list protocol of :class:`mjenv.engine.core._Results` (indexing, slices, iteration, equality, copies, pickling)
and that nothing is built before it is read.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np

from mjenv.engine import core
from mjenv.engine.core import Engine
from mjenv.engine.sampling import ActionSampler


def _play_out(eng: Engine, seed: int = 0) -> None:
    sampler = ActionSampler(seed)
    while not eng.done.all():
        eng.step(sampler.sample(eng.mask))


def test_results_are_built_when_read_and_act_as_a_list():
    eng = Engine("kawuxing3", 16)
    eng.reset(seed=3)
    _play_out(eng)
    raw = [list.__getitem__(eng.results, b) for b in range(16)]
    assert all(r is core._UNREAD for r in raw)  # nothing built yet
    first = eng.results[0]
    assert isinstance(first, dict) and first["how"] in ("draw", "self-draw", "discard", "rob")
    assert eng.results[0] is first  # built once, then kept
    assert eng.results[-1] is eng.results[15]
    every = list(eng.results)
    assert all(isinstance(r, dict) for r in every)
    assert eng.results[2:5] == every[2:5]
    assert eng.results == every and not (eng.results != every)
    assert copy.deepcopy(eng.results) == every and type(copy.deepcopy(eng.results)) is list
    assert pickle.loads(pickle.dumps(eng.results)) == every
    assert first in eng.results and eng.results.index(first) == 0
    # the events' end record holds the same dict
    assert eng.events[0][-1] == {"type": "end", **first}
    # money, deltas and next dealer agree with the state
    for b, r in enumerate(every):
        assert r["deltas"] == [float(x) for x in eng.state.money[b]]
        assert np.allclose(eng.match_money[b], eng.state.money[b])


def test_next_hand_reads_the_lazy_result():
    eng = Engine("kawuxing4", 4, record_events=False)
    eng.reset(seed=5)
    _play_out(eng, 1)
    dealers = [list.__getitem__(eng.results, b) for b in range(4)]
    assert all(d is core._UNREAD for d in dealers)
    eng.next_hand(seed=6)
    assert all(r is None for r in eng.results)
    assert (eng.hand_number == 1).all()
