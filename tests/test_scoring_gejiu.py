"""Tests of mjenv.rules.scoring.gejiu against RULES.md §6 and the Gejiu worked examples E30–E35 of §11.

Worked examples first (each its own test: patterns, value, transfers, deltas), then the combination modes,
the exclusive groups, robbing, several winners, the dealer rule, and property tests of the 烂牌 / 七星 shapes
and the Gejiu wait set against slow references (hypothesis).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mjenv.rules import hand as H
from mjenv.rules.options import GejiuOptions, KawuxingOptions, load_rules
from mjenv.rules.scoring import gejiu as G
from mjenv.rules.scoring.gejiu import (
    EXCLUSIVE_GROUPS,
    PATTERNS,
    GejiuContext,
    complete_mask,
    lanpai_mask,
    lanpai_wait_mask,
    nearest_claimant,
    next_dealer,
    qixing_mask,
    score_hand,
    score_win,
    settle_draw,
    settle_win,
    wait_mask,
)
from mjenv.rules.scoring.common import Settlement, Transfer, WinScore
from mjenv.tiles import Meld, counts_from_ids, parse_hand, parse_tiles, tile_id

A, B, C, D = 0, 1, 2, 3
DEFAULT = load_rules("gejiu")
ADD = GejiuOptions(gejiu_combine="add")
MAX = GejiuOptions(gejiu_combine="max")


def score(text: str, opts: GejiuOptions = DEFAULT, **ctx) -> WinScore:
    hand = parse_hand(text)
    return score_hand(hand, GejiuContext(how=hand.win_how, **ctx), opts)


def counts(text: str) -> np.ndarray:
    return counts_from_ids(parse_tiles(text))


# ----------------------------------------------------------------------------------------- §11 E30–E35


def test_e30_pinghu():
    s = score("123m456p789s234s5z +5z discard(C)")
    assert s.legal and s.reason is None
    assert s.reading_text == "123m · 456p · 234s · 789s · pair 55z"
    assert s.fans == {"pinghu": 2} and s.value == 2 and s.cap is None and s.value_d == 2
    paid = settle_win([(A, s)], "discard", C, DEFAULT)
    assert paid.transfers == (Transfer(C, A, 2.0, "discard"),)
    assert paid.deltas == (2.0, 0.0, -2.0, 0.0)


def test_e31_qingyise_daduizi_self_draw_in_every_mode():
    text = "111p333p555p77p99p +9p self-draw"
    s = score(text)
    assert s.reading_text == "111p · 333p · 555p · 999p · pair 77p"
    assert s.fans == {"daduizi": 4, "qingyise": 8} and s.value == 16
    paid = settle_win([(A, s)], "self-draw", None, DEFAULT)
    assert paid.transfers == tuple(Transfer(p, A, 16.0, "selfdraw") for p in (B, C, D))
    assert paid.deltas == (48.0, -16.0, -16.0, -16.0)
    assert score(text, ADD).value == 12
    assert settle_win([(A, score(text, ADD))], "self-draw", None, ADD).deltas == (36.0, -12.0, -12.0, -12.0)
    assert score(text, MAX).value == 8


def test_e32_qixing():
    s = score("47m147p14s123456z +7z discard(B)")
    assert s.legal and s.fans == {"qixing": 32} and s.value == 32
    assert s.reading.kind == "lanpai" and s.reading_text == "lanpai 47m147p14s1234567z"
    assert bool(qixing_mask(counts("47m147p14s1234567z")))
    paid = settle_win([(A, s)], "discard", B, DEFAULT)
    assert paid.transfers == (Transfer(B, A, 32.0, "discard"),) and paid.deltas == (32.0, -32.0, 0.0, 0.0)


def test_e33_longqidui_qingyise():
    s = score("1111s2233s5566s7s +7s discard(D)")
    assert s.reading.kind == "seven_pairs"
    assert s.fans == {"qingyise": 8, "longqidui": 16} and s.value == 64
    assert settle_win([(A, s)], "discard", D, DEFAULT).deltas == (64.0, 0.0, 0.0, -64.0)
    # the two waits §11 gives for the hand
    waits = wait_mask(counts("1111s2233s5566s7s"))
    assert {i for i in np.flatnonzero(waits)} == {tile_id("4s"), tile_id("7s")}


def test_e34_gangshanghua_with_a_face_up_kong_tile():
    # A holds 1111z234m567m999m5m, declares [X 1111z] and chooses the face-up 5m
    s = score("234m567m999m5m [X 1111z] +5m self-draw", after_kong=True)
    assert s.reading_text == "234m · 567m · 999m · pair 55m + [X 1111z]"
    assert s.fans == {"hunyise": 4, "gangshanghua": 8} and s.value == 16
    paid = settle_win([(A, s)], "self-draw", None, DEFAULT)
    assert paid.deltas == (48.0, -16.0, -16.0, -16.0) and len(paid.transfers) == 3
    # without the kong it is a plain 混一色 self-draw
    assert score("234m567m999m5m [X 1111z] +5m self-draw").value == 4


def test_e35_yibangao_yitiaolong_in_every_mode():
    text = "123m123m456m789m5p +5p discard(C)"
    s = score(text)
    assert s.fans == {"yitiaolong": 4, "yibangao": 4} and s.value == 8
    assert settle_win([(A, s)], "discard", C, DEFAULT).transfers == (Transfer(C, A, 8.0, "discard"),)
    assert score(text, ADD).value == 8 and score(text, MAX).value == 4


# ----------------------------------------------------------------------------------------- combination modes

# hand -> (patterns, multiply, add, max)
MODE_TABLE = [
    ("123m456p789s234s5z +5z discard", {"pinghu": 2}, 2, 2, 2),
    ("123456789m678m5z +5z discard", {"hunyise": 4, "yitiaolong": 4}, 8, 8, 4),
    ("1122334455667z +7z discard", {"xiaoqidui": 8, "ziyise": 32}, 128, 40, 32),
    ("111z222z333z555z4z +4z discard", {"ziyise": 32}, 32, 32, 32),
    ("2233445566889p +9p discard", {"qingyise": 8, "xiaoqidui": 8}, 32, 16, 8),
    ("1111222244445m +5m discard", {"qingyise": 8, "shuanglong": 32}, 128, 40, 32),
    ("1111s2233s5566s7s +7s discard", {"qingyise": 8, "longqidui": 16}, 64, 24, 16),
    ("234m567m999m5m [X 1111z] +5m self-draw", {"hunyise": 4}, 4, 4, 4),
    ("147m258p369s1234z +5z rob", {"lanpai": 4, "qianggang": 8}, 16, 12, 8),
]


@pytest.mark.parametrize("text,fans,mult,add,mx", MODE_TABLE)
def test_combination_modes(text, fans, mult, add, mx):
    for opts, value in ((DEFAULT, mult), (ADD, add), (MAX, mx)):
        s = score(text, opts)
        assert s.legal and s.fans == fans and s.value == value, (opts.gejiu_combine, s)


def test_multiply_is_ratio_to_pinghu():
    # §6.8: every listed value is the value of a hand with that pattern alone
    s = score("22334455m66778p +8p discard")
    assert s.fans == {"xiaoqidui": 8} and s.value == 8
    s = score("111m333p555s777z9m +9m discard")
    assert s.fans == {"daduizi": 4} and s.value == 4
    s = score("123m456p789s234s5z +5z self-draw", after_kong=False)
    assert s.fans == {"pinghu": 2} and s.value == 2


# ----------------------------------------------------------------------------------------- exclusive groups


def test_qixing_replaces_lanpai_and_ziyise_replaces_daduizi():
    s = score("147m258p3s123456z +7z discard")
    assert s.fans == {"qixing": 32} and s.value == 32
    s = score("147m258p369s1234z +7z discard")
    assert s.fans == {"lanpai": 4} and s.value == 4
    s = score("111z222z555z666z7z +7z self-draw")
    assert s.fans == {"ziyise": 32} and s.value == 32  # all triplets, but 大对子 is replaced


def test_hunyise_needs_an_honor_and_qingyise_has_none():
    assert "hunyise" in score("123m456m789m123m1z +1z discard").fans
    s = score("123m456m789m123m1m +1m discard")
    assert "qingyise" in s.fans and "hunyise" not in s.fans
    assert "hunyise" not in score("123m456m789p123m1m +1m discard").fans


def test_melds_count_for_structure_and_suit_patterns():
    # 一条龙 and 一般高 from chi melds; 大对子 from pongs and kongs; chi breaks 大对子
    s = score("789m5z [C 123m<D] [C 456m<D] [C 123m<D] +5z discard")
    assert s.fans == {"hunyise": 4, "yitiaolong": 4, "yibangao": 4} and s.value == 16
    s = score("1m [P 222p] [K 3333s<B] [A 4444m] [X 7777z] +1m discard")
    assert s.fans == {"daduizi": 4} and s.value == 4
    assert score("11m77s [P 222p] [C 345s<D] [P 999m] +7s discard").fans == {"pinghu": 2}


def test_best_reading_is_chosen_per_section_1_6():
    # 111222333m: three triplets (平胡, the 456p breaks 大对子) or three 123m (一般高)
    s = score("111222333m456p7p +7p discard")
    assert s.fans == {"yibangao": 4} and s.reading_text.startswith("123m · 123m · 123m")
    # seven pairs beats the standard reading 123m 123m + 一般高 (8 > 4)
    s = score("112233m445566p7s +7s discard")
    assert s.reading.kind == "seven_pairs" and s.fans == {"xiaoqidui": 8}
    # with melds seven pairs and 烂牌 are impossible
    assert not score("1m4p7s1z [P 222p] [P 333s] [P 555s] +2z discard").legal


# ----------------------------------------------------------------------------------------- robbing, legality


def test_rob_pays_as_a_discard_by_the_konger():
    s = score("123m456p789s234s5z +5z rob(C)")
    assert s.fans == {"qianggang": 8} and s.value == 8
    paid = settle_win([(A, s)], "rob", C, DEFAULT)
    assert paid.transfers == (Transfer(C, A, 8.0, "rob"),) and paid.deltas == (8.0, 0.0, -8.0, 0.0)


@pytest.mark.parametrize("reading", ["add_kong", "replacement_tile"])
def test_qianggang_option_decides_which_rob_is_a_win(reading):
    opts = GejiuOptions(gejiu_qianggang=reading)
    other = "replacement_tile" if reading == "add_kong" else "add_kong"
    ok = score("123m456p789s234s5z +5z rob", opts, rob=reading)
    assert ok.legal and ok.fans == {"qianggang": 8}
    bad = score("123m456p789s234s5z +5z rob", opts, rob=other)
    assert not bad.legal and bad.reason.startswith(f"gejiu_qianggang {reading}")
    assert bad.value == 8  # the hand is still valued; only the win is refused
    # without the flag the rob is the one the options allow
    assert score("123m456p789s234s5z +5z rob", opts).legal


def test_not_a_winning_hand():
    s = score("123m456p789s234s5z +6z discard")
    assert not s.legal and s.reason == "no winning reading" and s.value == 0 and s.fans == {} and s.reading is None


def test_context_and_input_checks():
    with pytest.raises(ValueError, match="how"):
        GejiuContext("tsumo")
    with pytest.raises(ValueError, match="only to a self-draw"):
        GejiuContext("discard", after_kong=True)
    with pytest.raises(ValueError, match="rob is set"):
        GejiuContext("discard", rob="add_kong")
    with pytest.raises(ValueError, match="not one of"):
        GejiuContext("rob", rob="kong")
    with pytest.raises(TypeError, match="GejiuOptions"):
        score_win(counts("123m456p789s234s5z"), (), tile_id("5z"), GejiuContext("discard"), KawuxingOptions())
    with pytest.raises(TypeError, match="GejiuContext"):
        score_win(counts("123m456p789s234s5z"), (), tile_id("5z"), "discard", DEFAULT)
    with pytest.raises(ValueError, match="needs the kong"):
        score("123m456p789s234s5z +5z self-draw", after_kong=True)
    with pytest.raises(ValueError, match="need 13 concealed tiles"):
        score_win(counts("123m456p789s234s"), (), tile_id("5z"), GejiuContext("discard"), DEFAULT)
    with pytest.raises(ValueError, match="appears 5 times"):
        score_win(counts("1111m456p789s234s"), (), tile_id("1m"), GejiuContext("discard"), DEFAULT)
    # ids and count vectors are the same input
    ids = parse_tiles("123m456p789s234s5z")
    assert score_win(ids, (), tile_id("5z"), GejiuContext("discard"), DEFAULT).value == 2


# ----------------------------------------------------------------------------------------- settlement


def test_several_winners_on_one_discard():
    sa = score("123m456p789s234s5z +5z discard")
    sc = score("111p333p555p77p99p +9p discard")
    paid = settle_win([(A, sa), (C, sc)], "discard", B, DEFAULT)
    assert paid.transfers == (Transfer(B, A, 2.0, "discard"), Transfer(B, C, 16.0, "discard"))
    assert paid.deltas == (2.0, -18.0, 16.0, 0.0)
    with pytest.raises(ValueError, match="multi_win off"):
        settle_win([(A, sa), (C, sc)], "discard", B, GejiuOptions(multi_win="off"))


def test_base_stake_scales_payments():
    s = score("111p333p555p77p99p +9p self-draw", GejiuOptions(base=0.5))
    assert settle_win([(A, s)], "self-draw", None, GejiuOptions(base=0.5)).deltas == (24.0, -8.0, -8.0, -8.0)


def test_settle_win_checks():
    s = score("123m456p789s234s5z +5z discard")
    with pytest.raises(ValueError, match="own discard"):
        settle_win([(B, s)], "discard", B, DEFAULT)
    with pytest.raises(ValueError, match="exactly one winner"):
        settle_win([(A, s), (B, s)], "self-draw", None, DEFAULT)
    with pytest.raises(ValueError, match="discarder"):
        settle_win([(A, s)], "discard", None, DEFAULT)
    with pytest.raises(ValueError, match="not legal"):
        settle_win([(A, score("123m456p789s234s5z +6z discard"))], "discard", B, DEFAULT)


def test_drawn_hand_pays_nothing():
    paid = settle_draw(DEFAULT)
    assert paid == Settlement((), (0.0, 0.0, 0.0, 0.0))


# ----------------------------------------------------------------------------------------- dealer (§6.5)


def test_dealer_single_winner_and_draw():
    for opts in (DEFAULT, GejiuOptions(gejiu_multiwin_dealer="standard")):
        assert next_dealer(A, [A], None, opts) == A  # dealer self-draws: stays
        assert next_dealer(A, [C], B, opts) == B  # non-dealer wins: the dealer's next player deals
        assert next_dealer(D, [], None, opts) == A  # 流局: rotates, wrapping around
        assert next_dealer(B, [B], D, opts) == B


def test_dealer_after_several_winners():
    # A deals, C discards, A and B win: the winner nearest to C in turn order is A (C -> D -> A -> B)
    nxt = G.next_dealer
    assert nearest_claimant(C, [A, B]) == A and nearest_claimant(C, [B, A]) == A
    assert nxt(A, [A, B], C, DEFAULT) == B  # "點炮者最近的一個胡牌者下家為莊家"
    assert nxt(A, [A, B], C, GejiuOptions(gejiu_multiwin_dealer="nearest_winner")) == A
    assert nxt(A, [A, B], C, GejiuOptions(gejiu_multiwin_dealer="standard")) == A
    # D discards, B and C win, A deals: nearest is B
    assert nxt(A, [C, B], D, DEFAULT) == C
    assert nxt(A, [C, B], D, GejiuOptions(gejiu_multiwin_dealer="nearest_winner")) == B
    assert nxt(A, [C, B], D, GejiuOptions(gejiu_multiwin_dealer="standard")) == B
    # three winners on A's discard: nearest B; the dealer A cannot be among them
    assert nxt(A, [D, C, B], A, DEFAULT) == C
    with pytest.raises(ValueError, match="discarder"):
        nxt(A, [B, C], None, DEFAULT)
    with pytest.raises(ValueError, match="own discard"):
        nearest_claimant(A, [A, B])


# ----------------------------------------------------------------------------------------- shapes vs slow references


def slow_lanpai(c) -> bool:
    ids = [t for t in range(34) for _ in range(int(c[t]))]
    if len(ids) != 14 or len(set(ids)) != 14:
        return False
    return all(
        a // 9 != b // 9 or a >= 27 or abs(a - b) >= 3 for a, b in itertools.combinations(ids, 2)
    )


def slow_complete(c) -> bool:
    return bool(H.readings(np.asarray(c, dtype=np.int8), seven_pairs=True)) or slow_lanpai(c)


@st.composite
def near_lanpai(draw, size: int):
    """13 or 14 distinct-ish tiles, mostly 烂牌-like, sometimes broken by a close or repeated tile."""
    ids: list[int] = []
    for s in range(3):
        r = draw(st.integers(0, 2))
        while r <= 8:
            if draw(st.integers(0, 5)) > 0:
                ids.append(s * 9 + r)
            r += draw(st.sampled_from([3, 3, 3, 4]))
    ids += [t for t in range(27, 34) if draw(st.integers(0, 5)) > 0]
    ids = draw(st.permutations(ids))[:size]
    while len(ids) < size:
        ids.append(draw(st.integers(0, 33)))
    if draw(st.integers(0, 3)) == 0:
        i = draw(st.integers(0, size - 1))
        ids[i] = max(0, min(33, ids[i] + draw(st.sampled_from([-2, -1, 1, 2]))))
    return np.minimum(np.bincount(ids, minlength=34), 4).astype(np.int8)


random_hand = st.lists(st.integers(0, 135), min_size=14, max_size=14, unique=True).map(
    lambda xs: np.bincount([x // 4 for x in xs], minlength=34).astype(np.int8)
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(near_lanpai(14), random_hand))
def test_lanpai_and_qixing_masks_match_the_slow_reference(c):
    assert lanpai_mask(c) == slow_lanpai(c)
    assert qixing_mask(c) == (slow_lanpai(c) and all(c[t] == 1 for t in range(27, 34)))
    assert complete_mask(c) == slow_complete(c)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(near_lanpai(13), random_hand.map(lambda c: _drop_one(c))))
def test_wait_helpers_match_brute_force(c):
    lan = lanpai_wait_mask(c)
    full = wait_mask(c)
    for t in range(34):
        plus = c.copy()
        plus[t] += 1
        if plus[t] > 4:
            assert not lan[t] and not full[t]
            continue
        assert lan[t] == slow_lanpai(plus), t
        assert full[t] == slow_complete(plus), t


def _drop_one(c: np.ndarray) -> np.ndarray:
    c = c.copy()
    c[int(np.flatnonzero(c)[0])] -= 1
    return c


def test_batched_masks_equal_single_hands():
    rng = np.random.default_rng(7)
    hands14, hands13 = [], []
    for _ in range(200):
        ids = rng.permutation(136)[:14] // 4
        hands14.append(np.bincount(ids, minlength=34))
        hands13.append(np.bincount(ids[:13], minlength=34))
    hands14.append(counts("47m147p14s1234567z"))
    hands13.append(counts("47m147p14s123456z"))
    b14 = np.array(hands14, dtype=np.int8)
    b13 = np.array(hands13, dtype=np.int8)
    assert lanpai_mask(b14).shape == (201,) and lanpai_mask(b14)[-1] and qixing_mask(b14)[-1]
    assert [lanpai_mask(h) for h in b14] == lanpai_mask(b14).tolist()
    assert [complete_mask(h) for h in b14] == complete_mask(b14).tolist()
    np.testing.assert_array_equal(np.array([wait_mask(h) for h in b13]), wait_mask(b13))
    np.testing.assert_array_equal(np.array([lanpai_wait_mask(h) for h in b13]), lanpai_wait_mask(b13))
    # E32's hand: 7z makes 七星; 1m, 7s, 8s and 9s keep the ranks 3 apart and make 烂牌 (E32 names only 7z)
    assert np.flatnonzero(wait_mask(b13[-1])).tolist() == [tile_id(t) for t in ("1m", "7s", "8s", "9s", "7z")]
    assert score("47m147p14s123456z +8s discard").fans == {"lanpai": 4}


def test_wait_mask_with_melds_and_own_copies():
    # 10 concealed tiles (one meld elsewhere): no seven pairs, no 烂牌
    c = counts("2345m678p111z")
    assert np.flatnonzero(wait_mask(c)).tolist() == [tile_id("2m"), tile_id("5m")]
    # owning four 2m (three melded as a kong would be) removes the wait on 2m
    owned = c.copy()
    owned[tile_id("2m")] = 4
    assert np.flatnonzero(wait_mask(c, owned)).tolist() == [tile_id("5m")]
    # a 烂牌 wait never includes a held tile or a tile close to one
    full = lanpai_wait_mask(counts("147m258p369s1234z"))  # every suit holds three tiles: only honors are left
    assert np.flatnonzero(full).tolist() == [tile_id("5z"), tile_id("6z"), tile_id("7z")]
    assert not lanpai_wait_mask(counts("147m258p369s1134z")).any()  # a repeated honor is never 烂牌
    w = lanpai_wait_mask(counts("147m258p36s12345z"))
    assert np.flatnonzero(w).tolist() == [tile_id("9s"), tile_id("6z"), tile_id("7z")]


# ----------------------------------------------------------------------------------------- invariants


@st.composite
def complete_gejiu_hand(draw):
    """A random complete hand: standard (0–4 melds, chi included), seven pairs or 烂牌, with a winning tile."""
    shape = draw(st.sampled_from(["standard", "standard", "seven_pairs", "lanpai"]))
    melds: list[Meld] = []
    if shape == "lanpai":
        c = draw(near_lanpai(14))
        if not slow_lanpai(c):
            c = counts("147m258p369s12345z")
    elif shape == "seven_pairs":
        kinds = draw(st.lists(st.integers(0, 33), min_size=7, max_size=7))
        c = np.bincount(kinds * 2, minlength=34).astype(np.int8)
        if c.max() > 4:
            c = counts("11223344556677m")
    else:
        n_melds = draw(st.integers(0, 4))
        tiles: list[int] = []
        for i in range(4):
            if draw(st.booleans()):
                s, r = draw(st.integers(0, 2)), draw(st.integers(0, 6))
                group = [s * 9 + r, s * 9 + r + 1, s * 9 + r + 2]
                kind = "C"
            else:
                t = draw(st.integers(0, 33))
                kind = draw(st.sampled_from("PKAX"))
                group = [t] * (4 if kind in "KAX" else 3)
            if i < n_melds:
                melds.append(Meld(kind, tuple(group)))
                tiles += group
            else:
                tiles += group[:3]
        pair = draw(st.integers(0, 33))
        concealed = tiles[sum(len(m.tiles) for m in melds):] + [pair, pair]
        owned = np.bincount(tiles + [pair, pair], minlength=34)
        if owned.max() > 4:
            concealed, melds = parse_tiles("123m456p789s234s55z"), []
        c = np.bincount(concealed, minlength=34).astype(np.int8)
    w = draw(st.sampled_from(np.flatnonzero(c).tolist()))
    before = c.copy()
    before[w] -= 1
    how = draw(st.sampled_from(["discard", "self-draw", "rob"]))
    after_kong = how == "self-draw" and any(m.is_kong for m in melds) and draw(st.booleans())
    return before, tuple(melds), w, GejiuContext(how, after_kong=after_kong)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(complete_gejiu_hand())
def test_scoring_invariants_on_complete_hands(case):
    before, melds, w, ctx = case
    values = []
    for opts in (DEFAULT, ADD, MAX):
        s = score_win(before, melds, w, ctx, opts)
        assert s.legal and s.reading is not None and s.cap is None and s.value_d == s.value
        assert set(s.fans) <= set(PATTERNS) and all(v == PATTERNS[f][2] for f, v in s.fans.items())
        for group in EXCLUSIVE_GROUPS:
            assert len(group & set(s.fans)) <= 1
        assert not {"qixing", "lanpai"} <= set(s.fans) and not {"ziyise", "daduizi"} <= set(s.fans)
        assert "pinghu" not in s.fans or s.fans == {"pinghu": 2}
        # a special shape always shows its pattern; a standard reading shows none of the shape group
        shape = EXCLUSIVE_GROUPS[0] & set(s.fans)
        assert bool(shape - {"pinghu"}) == (s.reading.kind != "standard")
        assert ("qianggang" in s.fans) == (ctx.how == "rob") and ("gangshanghua" in s.fans) == ctx.after_kong
        if opts is DEFAULT:
            # V = 2 · Π v/2 on the scored reading; the best reading has the largest V
            assert s.value == 2 * math.prod(v // 2 for f, v in s.fans.items() if f != "pinghu")
        payer = None if ctx.how == "self-draw" else 1
        paid = settle_win([(0, s)], ctx.how, payer, opts)
        assert abs(sum(paid.deltas)) < 1e-9
        assert paid.deltas[0] == s.value * (3 if ctx.how == "self-draw" else 1)
        values.append(s.value)
    # patterns worth ≥ 4 each: a·b/2 ≥ a + b ≥ max(a, b), so the modes are ordered
    assert values[0] >= values[1] >= values[2]
