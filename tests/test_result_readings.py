"""Results built from the reading the compiled core valued each win with (mjenv/engine/kwscore.py, gjscore.py,
ddwin.py, yzscore.py).

The kernels that settle the wins of every family record the code of each winner's best reading
(``mjenv.rules.hand``'s reading codes, ``Engine._win_reading``); a result read later values that reading alone
(``kawuxing.score_reading``, ``gejiu.score_reading``, ``diedaohu.score_reading``, ``liuwei.score_reading``,
``yangzhou.score_reading``) instead of every reading; every family's kernel also writes that reading's fans, V and
cap (``kwscore.reading_fans``, ``gjscore.reading_fans``, ``ddwin._dd_end``, ``yzscore.reading_fans``;
``mjenv.engine.fanrow``), and its results are made from them.  Here the codes name exactly
the readings the Python scorer enumerates, and every result equals the one the full scorer builds.
"""

from __future__ import annotations

import numpy as np
import pytest

from mjenv.encoding import actions as A
from mjenv.engine import codes as K
from mjenv.engine import state as S
from mjenv.engine.core import Engine
from mjenv.engine.family import settled_reading
from mjenv.rules import hand as H


def _complete_hands(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Random complete 14-tile hands (four sets and a pair), many with tiles held three or four times."""
    out = []
    while len(out) < n:
        c = np.zeros(34, np.int8)
        sets = 0
        if rng.random() < 0.4:  # a sequence three times: also three triplets
            s, r = int(rng.integers(3)), int(rng.integers(7))
            c[9 * s + r : 9 * s + r + 3] += 3
            sets = 3
        for _ in range(4 - sets):
            if rng.random() < 0.5:
                t = int(rng.integers(34))
                c[t] += 3
            else:
                s, r = int(rng.integers(3)), int(rng.integers(7))
                c[9 * s + r : 9 * s + r + 3] += 1
        c[int(rng.integers(34))] += 2
        if c.max() <= 4:
            out.append(c)
    return out


def test_reading_codes_name_exactly_the_readings_of_the_scorer():
    rng = np.random.default_rng(5)
    several = 0
    for full in _complete_hands(rng, 300):
        want = {r for r in H.readings(full) if r.kind == "standard"}
        got = {H.reading_of_choice(full, p, c) for p in range(34) if full[p] >= 2 for c in range(16)} - {None}
        assert got == want, H.format_tiles([t for t in range(34) for _ in range(full[t])])
        several += len(want) > 1
    assert several > 10  # hands with more than one reading were met


def test_codes_decode_to_readings_and_ties_fall_back():
    full = np.array([2 if t in (0, 1, 2, 9, 10, 11, 27) else 0 for t in range(34)], np.int8)  # seven pairs
    concealed = full.copy()
    concealed[27] -= 1
    assert settled_reading(concealed, 27, H.READING_SEVEN_PAIRS << 5) == H.seven_pairs_reading(full)
    assert settled_reading(concealed, 27, H.READING_SEVEN_PAIRS << 5 | H.READING_TIE) is None
    assert settled_reading(concealed, 27, -1) is None
    # 112233m 112233p 77z read with pair 7z as sequences: pair 27, no triplet choice
    r = settled_reading(concealed, 27, 27 << 5)
    assert r == H.Reading("standard", (("seq", 0), ("seq", 0), ("seq", 9), ("seq", 9)), 27)


# Kawuxing under an option mix that changes most fans' values and how they combine (the kernel's fan rows).
_KW_MIX = {"fan_combine": "add", "cap": 16, "gang_stack": "on", "haidi": "zimo_and_pao", "sigui_count": "each",
           "ming_sigui_scope": "any", "an_sigui_scope": "any", "shouzhuayi": "pph_single_x2", "longqidui": "win_tile"}


@pytest.mark.parametrize(
    "variant,batch,options",
    [("kawuxing3", 64, None), ("kawuxing4", 64, None), ("kawuxing3", 64, _KW_MIX), ("gejiu", 64, None),
     ("gejiu", 256, {"gejiu_combine": "max", "multi_win": "off"}),
     ("diedaohu", 640, None), ("liuwei", 640, None), ("yangzhou", 2048, None)],
)
def test_results_from_the_kernels_reading_equal_the_full_scorer(variant, batch, options):
    # (Diedaohu and Liuwei: random play wins about one hand in a hundred, Yangzhou one in 250, hence the batch)
    eng = Engine(variant, batch, record_events=False, options=options)
    rng = np.random.default_rng(1)
    wins = single = rows = 0
    deals = 6 if options is None else 3
    for deal in range(deals):
        eng.reset(seed=deal)
        while not eng.done.all():
            mask = eng.mask
            keys = np.where(mask, rng.random(mask.shape), -1.0)  # a uniform legal action per table, in one pass
            acts = keys.argmax(axis=1)
            acts[mask[:, A.WIN]] = A.WIN
            eng.step(acts)
        for b in range(eng.batch_size):
            if eng._end_kind[b] in (K.END_SELF_DRAW, K.END_DISCARD, K.END_ROB):
                wins += 1
                codes = eng._win_reading[b].copy()
                single += int(((codes >= 0) & (codes & H.READING_TIE == 0)).any())
                rows += int((eng._pend[b, K.PEND_FANS :: K.FAN_SLOTS][: S.MAX_SEATS] > 0).any())
                fast = eng._kernel_result(b)
                eng._win_reading[b] = -1  # every reading valued, as before the codes (and the fan rows)
                full = eng._kernel_result(b)
                assert fast == full, f"deal {deal} table {b}"
                assert [list(w["fans"].items()) for w in fast["winners"]] == [
                    list(w["fans"].items()) for w in full["winners"]]
                eng._win_reading[b] = codes
    assert wins > 20 and single > wins // 2
    # the results are made from the kernel's fan rows
    assert rows == single
