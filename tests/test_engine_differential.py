"""The compiled engine against the numpy engine it replaced, step by step (see tests/differential.py).

A short lockstep run of every configuration here; the full proof (≥ 10,000 hands per configuration)
is ``python -m tests.differential --hands 10000``.
"""

from __future__ import annotations

import numpy as np
import pytest

from mjenv.engine import codes as K
from mjenv.engine import entry
from tests.differential import CONFIGS, _valid_config, config_id, play_both

VALID = [c for c in CONFIGS if _valid_config(c)]


def test_every_variant_is_covered():
    assert {c[0] for c in VALID} == {"kawuxing3", "kawuxing4", "gejiu", "diedaohu", "yangzhou", "yangzhou_new", "liuwei"}
    assert len(VALID) == len(CONFIGS)  # no configuration silently dropped


@pytest.mark.parametrize("cfg", VALID, ids=[config_id(c) for c in VALID])
def test_compiled_engine_equals_reference(cfg):
    assert play_both(cfg, hands=48, batch=16, seed=7) > 0


def test_the_comparison_has_teeth(monkeypatch):
    """A one-line rule change in the compiled core (no chi from the discarder's next player) is caught."""
    cfg = ("gejiu", None, None, {})
    cfg_vector = []
    original = entry.kernel_for

    def kernel_for(cfg_arr):
        kernel = original(cfg_arr)

        def no_chi(*args):
            cfg_vector.append(int(cfg_arr[K.C_CHI]))
            cfg_arr[K.C_CHI] = 0
            return kernel(*args)

        return no_chi

    monkeypatch.setattr(entry, "kernel_for", kernel_for)
    with pytest.raises(AssertionError, match="differs"):
        play_both(cfg, hands=64, batch=16, seed=3)
    assert cfg_vector and cfg_vector[0] == 1
    assert np.all(np.asarray(cfg_vector[1:]) == 0)


def test_event_count_counts_events_not_records():
    from mjenv.engine.core import Engine

    eng = Engine("kawuxing3", 8)
    eng.reset(seed=2)
    rng = np.random.default_rng(2)
    revealed = 0
    while not eng.done.all():
        acts = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in eng.mask])
        # prefer 亮倒 so that reveals (three records each) happen
        for b in range(8):
            liang = np.flatnonzero(eng.mask[b, 34:68])
            if len(liang):
                acts[b] = 34 + liang[0]
        eng.step(acts)
        for b in range(8):
            assert eng.event_count(b) == len(eng.events[b])
        revealed = max(revealed, int(eng.state.revealed.sum()))
    assert revealed > 0
