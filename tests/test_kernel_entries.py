"""One compiled entry point per set of scorers (mjenv.engine.entry.kernel_for): which entry each variant gets,
and that the entries of two sets, compiled from one closure, are each loaded back from the compiled-code cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mjenv.engine import codes
from mjenv.engine import entry as K
from mjenv.engine.core import Engine

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "variant,want",
    [
        ("kawuxing3", K.FEAT_KW),
        ("kawuxing4", K.FEAT_KW),
        ("gejiu", K.FEAT_GJ),
        ("yangzhou", K.FEAT_YZ),
        ("diedaohu", 0),
        ("liuwei", 0),
    ],
)
def test_each_variant_compiles_only_its_scorers(variant, want):
    eng = Engine(variant, 2)
    assert K.features(eng._cfg) == want
    assert K.kernel_for(eng._cfg) is K._ENTRIES[want]
    eng.reset(seed=1)
    assert eng._kernel is K._ENTRIES[want]


def test_the_python_path_keeps_its_scorers_entry():
    """A configuration cleared after the engine was built (as the tests of the Python paths do) still runs: the
    flags decide at run time, the entry only has to hold every scorer they switch on."""
    eng = Engine("gejiu", 2)
    eng._cfg[codes.C_GJ_SCORE] = 0
    eng.reset(seed=1)
    assert eng._kernel is K._ENTRIES[0]


_CHILD = """
import hashlib, json, numpy as np
from mjenv.engine.core import Engine
from mjenv.engine.sampling import ActionSampler
out = {}
for variant in ("kawuxing3", "gejiu"):
    eng = Engine(variant, 8)
    eng.reset(seed=5)
    sampler = ActionSampler(3)
    h = hashlib.sha256()
    for i in range(60):
        eng.step(sampler.sample(eng.mask))
        done = np.flatnonzero(eng.done)
        if len(done):
            eng.reset(seed=i + 11, tables=done)
        h.update(eng._b8.tobytes()); h.update(eng._money.tobytes()); h.update(eng.mask.tobytes())
    st = eng._kernel.stats
    out[variant] = [h.hexdigest(), sum(st.cache_hits.values()), sum(st.cache_misses.values())]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_two_entries_of_one_closure_load_from_the_cache():
    """The cache keys a closure by the values of its cells: the Kawuxing and Gejiu entries (one source)
    are both found by a fresh process, which plays exactly as the one before."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))

    def run() -> dict:
        proc = subprocess.run([sys.executable, "-c", _CHILD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])

    first, second = run(), run()
    for variant in ("kawuxing3", "gejiu"):
        assert second[variant][0] == first[variant][0], variant
        assert second[variant][1] >= 1 and second[variant][2] == 0, (variant, second)  # loaded, not compiled
