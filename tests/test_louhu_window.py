"""Diedaohu and Liuwei claim windows judged in the kernel (ddend._louhu_window) equal the Python scorer's legality.

Whole games with a shape-greedy player (hands complete often; passing a win locks the player), sessions with small
bankrolls (园子) so that discarders go bust, and ``louhu`` on and off: at the opening of each claim or rob window,
each seat's win bit equals ``family.score(...).legal`` (the pending the engine handled in Python before).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_yzscore import _greedy


@pytest.mark.parametrize(
    "variant,options",
    [
        ("diedaohu", {}),
        ("diedaohu", {"bankroll": 2, "louhu": "off"}),
        ("liuwei", {}),
        ("liuwei", {"bankroll": 1}),
    ],
)
def test_window_bits_equal_score_legality(variant, options):
    from mjenv.engine.core import Engine
    from mjenv.engine.state import CLAIM, ROB
    from mjenv.rules import hand as H

    B = 48
    eng = Engine(variant, B, options=options)
    rng = np.random.default_rng(5)
    checked = {"complete": 0, "legal": 0, "locked": 0, "busted": 0}
    st = eng.state
    eng.reset(seed=0)
    for hand in range(8):
        while not eng.done.all():
            for b in np.flatnonzero(~eng.done):
                if st.phase[b] in (CLAIM, ROB) and (st.claim_reply[b] < 0).all():
                    t, frm = int(st.claim_tile[b]), int(st.claim_from[b])
                    for s in range(eng.n):
                        if s == frm:
                            continue
                        h = st.hand[b, s].copy()
                        h[t] += 1
                        if not H.readings(h):
                            assert not st.claim_opts[b, s] & 1
                            continue
                        want = eng._claim_score(b, s, t, st.phase[b] == ROB).legal
                        assert bool(st.claim_opts[b, s] & 1) == want, (b, s)
                        checked["complete"] += 1
                        checked["legal"] += want
                        checked["locked"] += bool(st.lock[b, s] > 0)
                        checked["busted"] += eng.family._busted(b, frm)
            eng.step(_greedy(eng, rng, take=0.2))
        over = eng.session_over.copy()
        if over.any():
            eng.reset(seed=1000 + hand, tables=np.flatnonzero(over))
        rest = np.flatnonzero(~over)
        if len(rest):
            eng.next_hand(seed=100 + hand, tables=rest)
        if options.get("bankroll"):  # a bust (balance 0) at some tables: their tiles cannot be won on
            for b in np.flatnonzero(rng.random(B) < 0.3):
                eng.balance[b, int(rng.integers(eng.n))] = 0.0
    assert checked["complete"] > 100 and checked["legal"] > 20 and checked["locked"] >= 2, checked
    if options.get("bankroll"):
        assert checked["busted"] > 0, checked
