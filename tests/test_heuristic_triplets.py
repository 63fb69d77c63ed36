"""The heuristic's all-triplets plan (对对胡 / 碰碰胡 / 大对子): agents.players.plans.triplets_shanten and triplets_ukeire
against an enumerating reference and hand-checked cases, and the plan's discards and pongs on constructed hands."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.players.heuristic import HeuristicAgent
from agents.players.plans import triplets_shanten, triplets_shanten_slow, triplets_ukeire
from mjenv.encoding import actions as A
from mjenv.encoding.observation import encode
from mjenv.tiles import parse_tiles
from tests.engine_script import play
from tests.test_heuristic_families import counts, deal, decide


@pytest.mark.parametrize("text, melds, want", [
    ("111m222m333m444m55m", 0, -1),  # complete
    ("111m222m333m444m5m", 0, 0),  # 单吊 (tanki)
    ("111m222m333m44m55m", 0, 0),  # 双碰 (shanpon)
    ("1m2m3m4m5m6m7m8m9m1p2p3p4p", 0, 8),  # 13 singles
    ("11m22m33m44m55m66m77m", 0, 3),  # seven pairs: four become triplets, one stays the pair
    ("111m222m333m4444m", 0, 1),  # a fourth copy is no 单吊 wait (no fifth tile): a new pair is needed
    ("1111m2222m3333m44m", 0, 2),  # fourth copies start no other set: 444m and a new pair are missing
    ("5m", 4, 0),
    ("55m", 4, -1),
    ("11m22m5p", 3, 0),  # three melds, about to discard: the 5p goes, 双碰 on 1m / 2m
    ("123m456m789m11p22p", 0, 6),  # sequences count as singles: 8 - min(2 pairs, 5)
])
def test_triplets_shanten_golden(text, melds, want):
    h = counts(text)
    assert triplets_shanten(h, melds)[0] == want
    assert triplets_shanten_slow(h[0], melds) == want
    assert triplets_shanten(h, melds, n_chi=1)[0] == 99  # any chi meld rules the plan out


@st.composite
def hands(draw):
    melds = draw(st.integers(0, 4))
    size = 3 * (4 - melds) + draw(st.integers(1, 2))
    kinds = draw(st.lists(st.integers(0, 33), min_size=size, max_size=size))
    h = np.bincount(kinds, minlength=34)
    if h.max() > 4:  # no fifth copy: spread the excess over other kinds
        h = np.minimum(h, 4)
        while h.sum() < size:
            h[int(np.argmin(h))] += 1
    return h.astype(np.int8), melds


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands())
def test_triplets_shanten_matches_enumeration(case):
    h, melds = case
    assert triplets_shanten(h[None], melds)[0] == triplets_shanten_slow(h, melds)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands())
def test_triplets_ukeire_matches_draw_by_draw(case):
    h, melds = case
    live = np.where(h < 4, 4 - h, 0)
    base = triplets_shanten_slow(h, melds)
    want = sum(int(live[t]) for t in range(34) if h[t] in (1, 2)
               and triplets_shanten_slow(h + np.eye(34, dtype=np.int8)[t], melds) < base)
    assert triplets_ukeire(h[None], melds, live[None])[0] == want


def test_triplets_ukeire_counts_pairs_and_singles():
    live = np.full((1, 34), 4) - counts("111m22m55p88s9s3z")
    live[0, parse_tiles("9s")[0]] = 1  # two 9s seen elsewhere
    # 13 tiles, 1-shanten: any pair tile (2m 5p 8s) or single (9s 3z) improves, 111m does not
    assert triplets_ukeire(counts("111m22m55p88s9s3z"), 0, live)[0] == 2 + 2 + 2 + 1 + 3


# ------------------------------------------------------------------------------------------ play


def test_liuwei_triplets_plan_keeps_pairs():
    # 111m 44m 66m 55p 77z + 2m 8s 9s: the plain hand breaks the 7z pair (sequence shapes around 2m, 89s); with
    # the all-triplets plan (对对胡 pays about twice a 屁胡, docs/rules/liuwei.md §10.4) a single goes instead.
    hand = "1m1m1m2m4m4m6m6m5p5p8s9s7z7z"
    e = deal("liuwei", hand)
    assert decide(e, HeuristicAgent("liuwei", triplets_bonus=0)) == parse_tiles("7z")[0]
    assert decide(e, HeuristicAgent("liuwei", triplets_bonus=1)) in parse_tiles("2m8s9s")


def test_liuwei_triplets_plan_pongs_a_pair_tile():
    # B: 222m 55p 99p 11z + 4p 7p 4z 7z.  A throws 5p: the plain hand passes (the pong does not lower its
    # shanten), the all-triplets plan pongs.
    e = deal("liuwei", "5p4s5m8s8p2z3p3s6z6s6p8m7m1p", "2m2m2m4p5p5p7p9p9p1z1z4z7z", avoid="5p")
    play(e, ["A discard:5p"])
    assert e.mask[0, A.PONG]
    assert decide(e, HeuristicAgent("liuwei", triplets_bonus=0)) == A.PASS
    assert decide(e, HeuristicAgent("liuwei", triplets_bonus=1)) == A.PONG


def test_triplets_plan_off_with_zero_credit_or_a_chi_meld():
    h = counts("111m44m66m55p77z2m8s9s")
    nm, mt = np.array([0]), np.zeros((1, 34), np.int8)
    off = HeuristicAgent("liuwei", triplets_bonus=0)
    assert off._bonus()[5] == 0 and off._plan_costs(h, nm, mt)[0, 5] == 99
    on = HeuristicAgent("gejiu", triplets_bonus=2)
    assert on._bonus()[5] == 2 and on._plan_costs(h, nm, mt)[0, 5] == triplets_shanten(h, 0)[0] == 2
    assert on._plan_costs(h, nm, mt, n_chi=np.array([1]))[0, 5] == 99
    # After a real chi (Gejiu, docs/rules/gejiu.md §6.3) the decoded observation carries it, and the plan is out.
    e = deal("gejiu", "3s1z2z3z4z5z6z7z1m4m7m2p5p8p", "45s456m789m11p5z6z7z", avoid="3s")
    play(e, ["A discard:3s", "B chi_low"])
    d = on.view.decode(encode(e, e.state.actor))
    assert on._n_chi(d, np.array([0]))[0] == 1
    assert on._plan_costs(d.hand[:1].astype(np.int8), d.n_melds[:1, 0], d.meld_tiles[:1, 0], on._n_chi(d, np.array([0])))[0, 5] == 99


def test_family_defaults():
    """The measured defaults (docs/experiments/heuristic.md): Yangzhou 3 steps, Liuwei 1, none elsewhere."""
    want = {"yangzhou": 3, "yangzhou_new": 3, "liuwei": 1, "diedaohu": 0, "gejiu": 0, "kawuxing3": 0}
    assert {v: int(HeuristicAgent(v)._bonus()[5]) for v in want} == want
    assert HeuristicAgent("liuwei", triplets_bonus=0)._bonus()[5] == 0
