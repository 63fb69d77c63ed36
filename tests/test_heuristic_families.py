"""The heuristic's family-specific play on constructed hands: Gejiu 烂牌 and face-up kong tiles, chi, flush plans
(Yangzhou, Diedaohu), 包牌 exposure, and the plan measures of agents/players/plans.py."""

from __future__ import annotations

import numpy as np
import pytest

from agents.players.heuristic import HeuristicAgent
from agents.players.plans import flush_allowed, lanpai_count, lanpai_shanten, lanpai_ukeire, plan_shanten
from mjenv.encoding import actions as A
from mjenv.encoding.observation import encode
from mjenv.engine.core import Engine
from mjenv.tiles import parse_tiles
from tests.engine_script import make_wall, play


def counts(text: str) -> np.ndarray:
    """int8 [1, 34] counts of a tile string."""
    c = np.zeros((1, 34), dtype=np.int8)
    for t in parse_tiles(text):
        c[0, t] += 1
    return c


def deal(variant: str, a: str, b: str | None = None, avoid: str = "") -> Engine:
    """Seat A (dealer) gets ``a`` (14 tiles), seat B ``b`` if given; the other seats get tiles of other kinds than
    ``avoid`` (so they have no claim on the test's discard)."""
    e = Engine(variant, 1)
    left = list(np.repeat(np.arange(34), np.where(e.kinds, 4, 0)))
    hands = {"A": a}
    for t in parse_tiles(a) + (parse_tiles(b) if b else []):
        left.remove(t)
    if b:
        hands["B"] = b
    bad = set(parse_tiles(avoid)) if avoid else set()
    pool = [t for t in left if t not in bad]
    from mjenv.tiles import tile_name

    for seat in "BCD"[: e.n - 1]:
        if seat in hands:
            continue
        take, pool = pool[:13], pool[13:]
        # one copy of each kind at most, so nobody holds a pair of anything by construction of the test
        hands[seat] = "".join(tile_name(t) for t in take)
    e.reset(walls=[make_wall(e, hands)], dealer=0)
    return e


def decide(e: Engine, agent: HeuristicAgent, obs=None) -> int:
    obs = encode(e, e.state.actor) if obs is None else obs
    return int(agent.act(obs, e.mask)[0])


# ------------------------------------------------------------------------------------------ plan measures


def test_lanpai_measures():
    assert lanpai_count(counts("147m258p369s12345z"))[0] == 14
    assert lanpai_shanten(counts("147m258p369s12345z"), 0)[0] == -1
    assert lanpai_shanten(counts("147m258p369s1234z"), 0)[0] == 0  # 13 tiles, ready
    assert lanpai_shanten(counts("147m258p369s1234z"), 1)[0] > 13  # melds rule it out
    # 1m 2m 3m: only one of them counts (gaps of three); 1m 1m counts once
    assert lanpai_count(counts("123m11p"))[0] == 2
    live = np.full((1, 34), 4)
    # 147m258p369s1234z waits on the three missing honors (5z 6z 7z): 12 live copies
    assert lanpai_ukeire(counts("147m258p369s1234z"), live)[0] == 12


def test_flush_plan_shanten_counts_off_suit_tiles():
    allowed, feasible = flush_allowed(np.zeros((1, 34), dtype=np.int8))
    assert feasible.all()
    h = counts("12345678m111z7z5p")  # 13 tiles, one pinzu: flush in m needs one exchange at least
    assert plan_shanten(h, 0, allowed[0], False)[0] == 1
    assert plan_shanten(h, 0, allowed[1], False)[0] == 8  # eight manzu to replace
    melds = counts("456p456p456p")  # a pinzu meld rules out the manzu and souzu flushes
    _, feasible = flush_allowed(melds)
    assert feasible.tolist() == [[False, True, False]]


# ------------------------------------------------------------------------------------------ Gejiu


def test_gejiu_goes_for_lanpai():
    # 147m 258p 369s 1234z + a second 1m: throwing the 1m leaves a ready 烂牌 (5z 6z 7z); a player that only knew
    # the standard shape would keep the 1m pair.
    e = deal("gejiu", "147m258p369s1234z1m")
    assert decide(e, HeuristicAgent("gejiu")) == parse_tiles("1m")[0]


def test_gejiu_kongs_and_picks_the_face_up_tile_that_wins():
    # docs/rules/gejiu.md §6.3 and the golden game E34: face-up 5m and 8p; after the 1z kong the 5m completes the hand.
    e = Engine("gejiu", 1)
    hands = {"A": "1111z234m567m999m5m", "B": "2p2p3p3p4p4p2s2s3s3s4s4s6z", "C": "5p5p6p6p7p7p5s5s6s6s7s7s7z",
             "D": "8s8s9s9s1p1p2z2z3z3z4z4z6z"}
    e.reset(walls=[make_wall(e, hands, back="5m8p")], dealer=0)
    agent = HeuristicAgent("gejiu")
    assert decide(e, agent) == A.KONG_SELF + parse_tiles("1z")[0]
    play(e, ["A kong:1z"])
    assert e.mask[0, A.KONGTILE_0] and e.mask[0, A.KONGTILE_1]
    assert decide(e, agent) == A.KONGTILE_0  # 5m, not 8p
    play(e, ["A kongtile:0"])
    assert decide(e, agent) == A.WIN


def test_gejiu_chis_when_it_lowers_the_shanten():
    # A throws 3s; B holds 45s 456m 789m 11p and three lone honors: 345s makes it ready after a discard.
    e = deal("gejiu", "3s1z2z3z4z5z6z7z1m4m7m2p5p8p", "45s456m789m11p5z6z7z", avoid="3s")
    play(e, ["A discard:3s"])
    assert e.mask[0, A.CHI_LOW]
    assert decide(e, HeuristicAgent("gejiu")) == A.CHI_LOW


# ------------------------------------------------------------------------------------------ flush plans


@pytest.mark.parametrize("variant", ["yangzhou", "yangzhou_new", "diedaohu", "liuwei"])
def test_flush_plan_throws_the_off_suit_tiles(variant):
    # 12345678m 111z 45p 7z: the plain hand would throw the lone 7z; a 混一色 in manzu (worth the Yangzhou minimum
    # alone, twice a 屁胡 in Diedaohu) throws the pinzu instead at the same shanten.
    e = deal(variant, "12345678m111z45p7z")
    assert decide(e, HeuristicAgent(variant)) in (parse_tiles("4p")[0], parse_tiles("5p")[0])


def test_yangzhou_chi_follows_the_plan():
    # B aims at a manzu 混一色: chi of 3m (in plan) is taken, chi of 3p (breaks the plan) is not.
    e = deal("yangzhou", "3m1s2s3s4s5s6s7s8s9s1p2p4p9p", "12m456m789m11z5z6z7z", avoid="3m")
    play(e, ["A discard:3m"])
    assert e.mask[0, A.CHI_HIGH]
    assert decide(e, HeuristicAgent("yangzhou")) == A.CHI_HIGH
    e = deal("yangzhou", "3p1s2s3s4s5s6s7s8s9s1p2p4m9m", "1112345m666z45p7z", avoid="3p")
    play(e, ["A discard:3p"])
    assert e.mask[0, A.CHI_LOW]
    assert decide(e, HeuristicAgent("yangzhou")) == A.PASS


def test_yangzhou_avoids_baopai_exposure():
    # A's natural discard is the lone 9m (ready afterwards).  When the next player shows two manzu chis and
    # nothing else, a manzu discard could be the third chi of a 清一色 that A would pay in full (§8.9).
    e = deal("yangzhou", "9m123p456p789s11z22z")
    agent = HeuristicAgent("yangzhou")
    obs = encode(e, e.state.actor)
    assert decide(e, agent, obs) == parse_tiles("9m")[0]
    patched = obs.copy()
    enc = agent.view.encoder
    melds = patched[:, enc.slices["melds"], :].reshape(1, e.n, 5, 34)
    melds[0, 1, 1, parse_tiles("1m")[0]] = 1  # next player: chi 123m
    melds[0, 1, 1, parse_tiles("4m")[0]] = 1  # and chi 456m
    patched[:, enc.slices["melds"], :] = melds.reshape(1, -1, 34)
    assert agent.view.decode(patched).n_melds[0, 1] == 2
    assert decide(e, agent, patched) != parse_tiles("9m")[0]
    # Liability is a Yangzhou rule: with baopai off the 9m goes.
    assert decide(e, HeuristicAgent("yangzhou", {"baopai": "off"}), patched) == parse_tiles("9m")[0]


def test_heuristic_flush_plays_qingyise_only_in_kawuxing():
    """``heuristic-flush`` is the Kawuxing heuristic with a 2-step 清一色 credit; a Kawuxing flush keeps no
    dragons (清一色 has none, docs/rules/kawuxing.md §3.7); in Yangzhou it credits its plans more; elsewhere it is the
    family's own heuristic."""
    from agents import make_agent
    from agents.players.plans import SUIT_OF

    k = make_agent("heuristic-flush", "kawuxing3")
    assert k._flush_bonus == 2 and make_agent("heuristic", "kawuxing3")._flush_bonus is None
    allowed, feasible = k._flush_allowed(np.zeros((1, 34), np.int8))
    assert not allowed[:, SUIT_OF == 3].any() and allowed[0, SUIT_OF == 0].all() and feasible.all()
    mt = np.zeros((1, 34), np.int8)
    mt[0, 31] = 3  # a dragon pong rules every Kawuxing flush out
    assert not k._flush_allowed(mt)[1].any()
    for variant in ("gejiu", "liuwei", "diedaohu"):
        assert make_agent("heuristic-flush", variant)._flush_bonus == make_agent("heuristic", variant)._flush_bonus
    # Yangzhou's heuristic-flush credits its flush and all-triplets plans more (5 and 4 steps against 3 and 3:
    # docs/experiments/four-player.md)
    yz, base = make_agent("heuristic-flush", "yangzhou"), make_agent("heuristic", "yangzhou")
    assert (yz._flush_bonus, yz._triplets_bonus, base._flush_bonus, base._triplets_bonus) == (5, 4, 3, 3)


def test_seven_pairs_plan_is_off_unless_credited():
    """``qidui_bonus`` (a research knob) adds a seven-pairs plan column; without it the plan costs are unchanged."""
    from mjenv.encoding.shanten import shanten_seven_pairs

    h = np.zeros((2, 34), np.int8)
    for t in (9, 9, 11, 11, 13, 13, 18, 18, 20, 22, 24, 31, 32):
        h[:, t] += 1
    nm = np.array([0, 1])
    mt = np.zeros((2, 34), np.int8)
    plain = HeuristicAgent("kawuxing3")
    assert (plain._plan_costs(h, nm, mt)[:, 4] == 99).all() and plain._bonus()[4] == 0
    q = HeuristicAgent("kawuxing3", qidui_bonus=2)
    costs = q._plan_costs(h, nm, mt)
    assert costs[0, 4] == shanten_seven_pairs(h[0]) == 2 and costs[1, 4] == 99  # no seven pairs with a meld
    assert q._bonus()[4] == 2 and (costs[:, :4] == plain._plan_costs(h, nm, mt)[:, :4]).all()
