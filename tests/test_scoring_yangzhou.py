"""Yangzhou scoring and settlement (mjenv.rules.scoring.yangzhou) against RULES.md §8, §9 and §11 E42–E46.

Each worked example is one test named after it, asserting B, the small fans, T, legality and the exact
transfers and deltas in both styles.  Then every big fan and composite with its standard and new value, the
§8.6 combination rule, each small fan, each option of §8.11, and property tests (fans sum to T; legality is
B > 0 and T ≥ min_fan; settlements are zero-sum).
"""

from __future__ import annotations

import functools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mjenv.rules.options import load_rules
from mjenv.rules.scoring.diedaohu import LouhuLock, new_session, next_hand
from mjenv.rules.scoring.common import WinScore
from mjenv.rules.scoring.yangzhou import (
    BIG_FANS,
    COMPOSITES,
    FANS,
    SMALL_FANS,
    YangzhouContext,
    YangzhouScore,
    big_fan_value,
    liable_seat,
    round_wind,
    score_hand,
    score_win,
    seat_wind,
    settle_win,
    structure_fans,
    win_transfers,
)
from mjenv.tiles import Meld, parse_hand, parse_tiles, tile_id

A, B, C, D = 0, 1, 2, 3
EAST, SOUTH, WEST, NORTH = 27, 28, 29, 30


@functools.lru_cache(maxsize=None)
def _rules(variant, items):
    return load_rules(variant, None, None, dict(items))


def rules(variant="yangzhou", **options):
    """Yangzhou options with explicit overrides; cached (the rulesets are TOML files)."""
    return _rules(variant, tuple(sorted(options.items())))


STD = rules()
NEW = rules("yangzhou_new")


def score(text, opts=STD, **ctx):
    """Score a notation hand; the context's ``how`` comes from the notation."""
    hand = parse_hand(text)
    return score_hand(hand, YangzhouContext(how=hand.win_how, **ctx), opts)


def flows(settlement):
    """Transfers as comparable tuples."""
    return [(t.payer, t.payee, t.amount, t.reason) for t in settlement.transfers]


def big(s):
    """The big fans of a score's ``fans`` dict."""
    return {f: v for f, v in s.fans.items() if f in BIG_FANS}


# --------------------------------------------------------------------------------------------------
# §11 worked examples
# --------------------------------------------------------------------------------------------------


def test_e42_seven_pairs_is_not_a_win():
    for opts in (STD, NEW):
        s = score("1133557799m22p4p +4p self-draw", opts)
        assert not s.legal and s.reading is None and s.total == 0 and s.fans == {} and "seven pairs" in s.reason


def test_e43_qinglong_self_draw():
    small = ("menqing", "pinghu", "zimo", "yaotou", "lianfu", "laoshao")
    for opts, b_value, total in ((STD, 75, 81), (NEW, 110, 116)):
        s = score("123m456m789m345m9m +9m self-draw", opts)
        assert s.legal and s.reading_text == "123m · 345m · 456m · 789m · pair 99m"
        assert s.big_fan_value == b_value and big(s) == {"qinglong": b_value}
        assert s.small_fans == small and s.total == total and s.value == total and s.cap is None
        assert s.fans == {"qinglong": b_value, **{f: 1 for f in small}}
        st_ = settle_win([(A, s)], "self-draw", None, opts)
        assert flows(st_) == [(p, A, float(total), "selfdraw") for p in (B, C, D)]
        assert st_.deltas == (3.0 * total, -total, -total, -total)


def test_e44_the_threshold():
    hand = "234p234p567s567m8s +8s"
    small = ("menqing", "pinghu", "duanyao", "qixiang")
    for opts, yiban, need in ((STD, 10, 15), (NEW, 15, 20)):
        s = score(f"{hand} discard(B)", opts)
        assert s.big_fan_value == yiban and big(s) == {"yiban": yiban}
        assert s.small_fans == small and s.total == yiban + 4 == need - 1
        assert not s.legal and s.reason == f"total {need - 1} < min_fan {need}"
        s = score(f"{hand} self-draw", opts)
        assert s.small_fans == ("menqing", "pinghu", "zimo", "duanyao", "qixiang") and s.total == need
        assert s.legal
        st_ = settle_win([(A, s)], "self-draw", None, opts)
        assert flows(st_) == [(p, A, float(need), "selfdraw") for p in (B, C, D)]
        assert st_.deltas == (3.0 * need, -need, -need, -need)


def test_e45_duiduihu_on_a_discard_one_to_two():
    for opts, b_value, total in ((STD, 15, 18), (NEW, 20, 23)):
        s = score("111m555s77z88s [P 999p] +7z discard(B)", opts)
        assert s.legal and s.reading_text == "111m · 555s · 777z · pair 88s + [P 999p]"
        assert big(s) == {"duiduihu": b_value}
        assert s.small_fans == ("zige", "zige", "jianke") and s.fans["zige"] == 2 and s.total == total
        assert s.share == 2 * total
        st_ = settle_win([(A, s)], "discard", B, opts)
        assert flows(st_) == [(B, A, 2.0 * total, "discard")]
        assert st_.deltas == (2.0 * total, -2.0 * total, 0.0, 0.0)


def test_e46_baopai_for_qingyise():
    for opts, total in ((STD, 79), (NEW, 114)):
        s = score("55m99m [C 123m<B] [C 456m<B] [C 789m<B] +9m self-draw", opts)
        assert s.legal and big(s) == {"qinglong": total - 4}
        assert s.small_fans == ("zimo", "lianfu", "laoshao", "zige") and s.total == total
        assert s.baopai == "qingyise" and liable_seat(C, s) == B
        st_ = settle_win([(C, s)], "self-draw", None, opts)
        assert flows(st_) == [(B, C, 3.0 * total, "baopai")]
        assert st_.deltas == (0.0, -3.0 * total, 3.0 * total, 0.0)


# --------------------------------------------------------------------------------------------------
# Big fans (§8.5) and B (§8.6)
# --------------------------------------------------------------------------------------------------

# fan id -> a self-drawn hand whose B is exactly that fan (standard / new values from the §8.5 tables)
BIG_FAN_HANDS = {
    "qingyise": "123m345m567m789m1m +1m self-draw",
    "hunyise": "123m345m567m111z2z +2z self-draw",
    "fengqing": "111z222z333z444z5z +5z self-draw",
    "gangban": "123m123m123m123m5z +5z self-draw",
    "tieban": "234p234p234p567s8s +8s self-draw",
    "yiban": "234p234p567s567m8s +8s self-draw",
    "shuangbanban": "456m456m234p234p8s +8s self-draw",
    "shuangban_shuangxi": "456m456m456s456s8p +8p self-draw",
    "shuangban_shuanglao": "123p123p789p789p5s +5s self-draw",
    "shuangban_shuanglian": "345s345s678s678s5m +5m self-draw",
    "yitiaolong": "123s456s789s234m5p +5p self-draw",
    "banlong": "123m456m789m456m5p +5p self-draw",
    "sanfutong": "345m345p345s789s1z +1z self-draw",
    "sifutong": "345m345p345s345s1z +1z self-draw",
    "duiduihu": "111m555s77z88s [P 999p] +7z self-draw",
    "shuangpiao": "123s456s123m456m9p +9p self-draw",
    "hunlong": "123p456p789p111z2z +2z self-draw",
    "hunduidui": "111m333m555m111z2z +2z self-draw",
    "hunbanlong": "123s456s789s789s6z +6z self-draw",
    "hun_shuangbanban": "123m123m567m567m5z +5z self-draw",
    "huntieban": "234m234m234m111z5z +5z self-draw",
    "hun_shuangban_shuanglian": "123m123m456m456m5z +5z self-draw",
    "hun_shuangban_shuanglao": "123m123m789m789m5z +5z self-draw",
    "qingduidui": "111m333m555m777m9m +9m self-draw",
    "qinglong": "123m456m789m345m9m +9m self-draw",
    "shuangbanqing": "123m123m567m567m9m +9m self-draw",
    "qingbanlong": "123m456m789m789m5m +5m self-draw",
    "tiebanqing": "234m234m234m678m9m +9m self-draw",
}
VALUES = {  # the §8.5 tables, written out literally: standard, new
    "qingyise": (60, 80), "hunyise": (15, 20), "fengqing": (240, 320), "gangban": (480, 640),
    "tieban": (60, 80), "yiban": (10, 15), "shuangbanban": (30, 40), "shuangban_shuangxi": (60, 80),
    "shuangban_shuanglao": (60, 80), "shuangban_shuanglian": (60, 80), "yitiaolong": (15, 20),
    "banlong": (25, 45), "sanfutong": (15, 20), "sifutong": (30, 50), "duiduihu": (15, 20),
    "shuangpiao": (15, 20), "hunlong": (30, 50), "hunduidui": (30, 50), "hunbanlong": (45, 80),
    "hun_shuangbanban": (35, 70), "huntieban": (75, 110), "hun_shuangban_shuanglian": (75, 110),
    "hun_shuangban_shuanglao": (75, 110), "hun_shuangban_shuangxi": (75, 110), "qingduidui": (75, 110),
    "qinglong": (75, 110), "shuangbanqing": (80, 120), "qingbanlong": (85, 130), "tiebanqing": (120, 160),
}


def test_value_table_matches_the_rule_book():
    assert {f: v[2] for f, v in BIG_FANS.items()} == VALUES
    assert set(COMPOSITES.values()) <= set(BIG_FANS)
    assert all(FANS[f][0] for f in FANS) and set(FANS) == set(BIG_FANS) | set(SMALL_FANS)


@pytest.mark.parametrize("fan", list(BIG_FAN_HANDS))
def test_each_big_fan(fan):
    for opts, col in ((STD, 0), (NEW, 1)):
        s = score(BIG_FAN_HANDS[fan], opts)
        assert big(s) == {fan: VALUES[fan][col]} and s.big_fan_value == VALUES[fan][col]
        assert s.total == s.big_fan_value + sum(SMALL_FANS[f][2] for f in s.small_fans)


@pytest.mark.parametrize(
    "text, parts",
    [
        # listed nowhere: suit fan + structure fan summed (§8.6 step 5, CD)
        ("234m234m567m789m1m +1m self-draw", ("qingyise", "yiban")),
        ("123m123m789m789m5m +5m self-draw", ("qingyise", "shuangban_shuanglao")),
        ("123m123m456m456m9m +9m self-draw", ("qingyise", "shuangban_shuanglian")),
        ("234m234m567m789m1z +1z self-draw", ("hunyise", "yiban")),
    ],
)
def test_unlisted_combinations_are_summed(text, parts):
    for opts, col in ((STD, 0), (NEW, 1)):
        s = score(text, opts)
        assert big(s) == {f: VALUES[f][col] for f in parts}
        assert s.big_fan_value == sum(VALUES[f][col] for f in parts)


def test_fengqing_and_gangban_stand_alone():
    # 风清 is all triplets, but 对对胡 is not added; 钢板 with 清一色 stays 480 ("算作八清")
    assert big(score(BIG_FAN_HANDS["fengqing"])) == {"fengqing": 240}
    assert big(score("123m123m123m123m5m +5m self-draw")) == {"gangban": 480}
    assert big(score("123m123m123m123m5m +5m self-draw", NEW)) == {"gangban": 640}


def test_structure_fans_overlap_and_only_one_counts():
    sets = [("seq", tile_id("3s")), ("seq", tile_id("3s")), ("seq", tile_id("6s")), ("seq", tile_id("6s"))]
    assert structure_fans(sets) == ("yiban", "shuangbanban", "shuangban_shuanglian")
    assert big_fan_value(sets, None, STD) == (60, (("shuangban_shuanglian", 60),))
    dragon = [("seq", tile_id("1m")), ("seq", tile_id("4m")), ("seq", tile_id("7m")), ("seq", tile_id("4m"))]
    assert structure_fans(dragon) == ("yiban", "yitiaolong", "banlong")
    assert big_fan_value(dragon, "qingyise", NEW) == (130, (("qingbanlong", 130),))
    assert big_fan_value([("trip", 0), ("trip", 9), ("trip", 18), ("seq", 1)], None, STD) == (0, ())


def test_scored_reading_is_the_largest_total():
    # 111222333m reads as 123m x3 (混铁板 75) or as three concealed triplets (混一色 15 + 子格 x3)
    s = score("111222333m789m5z +5z self-draw")
    assert big(s) == {"huntieban": 75} and s.reading_text == "123m · 123m · 123m · 789m · pair 55z"


def test_no_big_fan_is_not_a_win():
    s = score("123m456p789s234s5z +5z self-draw", rules(min_fan=0))
    assert s.big_fan_value == 0 and not s.legal and "big fan" in s.reason
    assert s.small_fans == ("menqing", "zimo", "dudiao") and s.total == 3


# --------------------------------------------------------------------------------------------------
# Small fans (§8.4)
# --------------------------------------------------------------------------------------------------


def small(text, **ctx):
    return score(text, rules(min_fan=0), **ctx).small_fans


def test_yazi_closed_and_edge_waits_need_a_sole_wait():
    assert "yazi" in small("13m456p789s234s55z +2m discard")
    assert "yazi" in small("12m456p789s234s55z +3m discard")
    assert "yazi" in small("89m456p789s234s55z +7m discard")
    assert "yazi" not in small("23m456p789s234s55z +1m discard")  # open wait 1m/4m


def test_dudiao_single_wait_on_the_pair():
    assert small("123m456p789s234s5z +5z discard") == ("menqing", "dudiao")
    assert "dudiao" not in small("123m456p789s2345s +5s discard")  # two waits: 2s and 5s


def test_zige_winning_tile_placed_where_it_scores_best():
    # 1111m23m: on a discard the 1m can complete 123m, leaving 111m concealed
    assert small("111m23m456p789s55z +1m discard").count("zige") == 1
    # E45: 777z completed by the discard is not concealed; a self-draw is
    assert small("111m555s77z88s [P 999p] +7z discard").count("zige") == 2
    assert small("111m555s77z88s [P 999p] +7z self-draw").count("zige") == 3
    assert small("111m555s77z88s [P 999p] +7z rob(B)").count("zige") == 2


def test_suit_and_terminal_small_fans():
    assert small("123m456m789p234p5p +5p self-draw") == ("menqing", "pinghu", "zimo", "queyi", "lianfu")
    assert "queyi" not in small("123m456m789p234p5z +5z discard")  # honors present
    assert small("234m456m678p234p5s +5s discard") == ("menqing", "pinghu", "duanyao", "qixiang", "dudiao")
    assert small("234m456m678p234p9s +9s discard") == ("menqing", "pinghu", "yaotou", "qixiang", "dudiao")


def test_kongs_menqing_and_pinghu():
    assert small("456m789p234s5z [K 2222p<B] +5z discard") == ("minggang", "dudiao")
    assert small("456m789p234s5z [A 2222p] +5z discard") == ("minggang", "dudiao")
    assert small("456m789p234s5z [X 5555s] +5z discard") == ("menqing", "angang", "dudiao")
    assert score("456m789p234s5z [X 5555s] +5z discard", rules(min_fan=0)).fans["angang"] == 2
    # 平胡 with chi melds (no 门清); not with an honor pair
    assert small("456m789p2s [C 234s<D] [C 345m<D] +2s discard") == ("pinghu", "dudiao")
    assert small("456m789p5z [C 234s<D] [C 345m<D] +5z discard") == ("dudiao",)


def test_winds_and_dragons():
    assert small("111z456p789s234s5z +5z self-draw", seat_wind=EAST, round_wind=EAST) == (
        "menqing", "zimo", "zige", "menfeng", "quanfeng", "dudiao"
    )
    assert small("222z456p789s234s5z +5z discard", seat_wind=SOUTH, round_wind=EAST) == (
        "menqing", "zige", "menfeng", "dudiao"
    )
    assert small("333z456p789s234s5z +5z discard", seat_wind=SOUTH, round_wind=WEST) == (
        "menqing", "zige", "quanfeng", "dudiao"
    )
    assert "menfeng" not in small("444z456p789s234s5z +5z discard", seat_wind=SOUTH, round_wind=WEST)
    s = score("555z666z234s1z [P 777z<B] +1z discard")
    assert s.legal and s.fans == {"hunyise": 15, "zige": 2, "jianke": 3, "dudiao": 1} and s.total == 21


def test_seat_and_round_winds_from_the_session():
    assert [seat_wind(p, dealer=C) for p in range(4)] == [WEST, NORTH, EAST, SOUTH]
    assert [round_wind(r) for r in range(8)] == [EAST, SOUTH, WEST, NORTH] * 2
    session = new_session(STD, dealer=A)
    for _ in range(4):
        session = next_hand(session, [], STD)  # four drawn hands pass the deal once round the table
    assert session.round_wind == SOUTH and session.seat_wind(A) == EAST and session.dealer == A
    with pytest.raises(ValueError, match="wind"):
        YangzhouContext("discard", seat_wind=tile_id("5z"))


# --------------------------------------------------------------------------------------------------
# Options (§8.11) and settlement
# --------------------------------------------------------------------------------------------------


def test_option_min_fan():
    s = score("234p234p567s567m8s +8s discard(B)", rules(min_fan=10))
    assert s.legal and s.total == 14
    st_ = settle_win([(A, s)], "discard", B, rules(min_fan=10))
    assert flows(st_) == [(B, A, 28.0, "discard")]


def test_option_yz_style_on_the_standard_variant():
    s = score(BIG_FAN_HANDS["banlong"], rules(yz_style="new"))
    assert big(s) == {"banlong": 45}


def test_option_chi_off_rejects_chi_melds():
    with pytest.raises(ValueError, match="chi"):
        score("55m99m [C 123m<B] [C 456m<B] [C 789m<B] +9m self-draw", rules(chi="off"))


def test_option_baopai_off_and_discard_liability():
    text = "55m99m [C 123m<B] [C 456m<B] [C 789m<B] +9m"
    off = rules(baopai="off")
    s = score(f"{text} self-draw", off)
    assert s.baopai is None and liable_seat(C, s) is None
    assert flows(settle_win([(C, s)], "self-draw", None, off)) == [(p, C, 79.0, "selfdraw") for p in (A, B, D)]
    # on a discard by D, the liable B pays 2T and D pays nothing
    s = score(f"{text} discard(D)")  # 999m completed by the discard: no 子格
    assert s.total == 77 and s.baopai == "qingyise"
    assert flows(settle_win([(C, s)], "discard", D, STD)) == [(B, C, 154.0, "baopai")]
    # two chis are not enough
    assert score("55m99m789m [C 123m<B] [C 456m<B] +9m self-draw").baopai is None


def test_baopai_for_fengqing_fourth_pong():
    text = "5z [P 111z<C] [P 222z<C] [P 333z<D] [P 444z<B] +5z"
    s = score(f"{text} self-draw")
    assert s.baopai == "fengqing" and s.baopai_from == B and big(s) == {"fengqing": 240}
    total = s.total
    assert flows(settle_win([(A, s)], "self-draw", None, STD)) == [(B, A, 3.0 * total, "baopai")]
    s = score(f"{text} discard(C)")
    assert flows(settle_win([(A, s)], "discard", C, STD)) == [(B, A, 2.0 * s.total, "baopai")]
    # the fourth meld a kong made on a discard is not a pong: nobody is liable
    assert score("5z [P 111z<C] [P 222z<C] [P 333z<D] [K 4444z<B] +5z self-draw").baopai is None
    with pytest.raises(ValueError, match="source"):
        liable_seat(A, score("5z [P 111z] [P 222z] [P 333z] [P 444z] +5z self-draw"))


def test_rob_pays_two_t_from_the_konger():
    s = score("123m456m789m345m9m +9m rob(D)")
    assert s.total == 80 and s.share == 160
    assert flows(settle_win([(A, s)], "rob", D, STD)) == [(D, A, 160.0, "rob")]


def test_option_louhu():
    locked = LouhuLock().passed()
    assert not score("111m555s77z88s [P 999p] +7z discard(B)", lock=locked).legal
    assert score("111m555s77z88s [P 999p] +7z discard(B)", rules(louhu="off"), lock=locked).legal
    assert score("111m555s77z88s [P 999p] +7z self-draw", lock=locked).legal
    # 大吊车 after a chi in Yangzhou ("在吃，碰后造成大吊")
    lock = locked.discarded(parse_tiles("5z"), tile_id("5z"))
    s = score("5z [C 123m<D] [C 456m<D] [P 999m<B] [P 777z<C] +5z discard(B)", lock=lock)
    assert s.legal and s.total == 18
    assert not score("5z [C 123m<D] [C 456m<D] [P 999m<B] [P 777z<C] +5z discard(B)", lock=locked).legal


def test_option_multi_win_and_several_winners():
    s1 = score("111m555s77z88s [P 999p] +7z discard(B)")
    s2 = score("123m456m789m345m7z +7z discard(B)")
    st_ = settle_win([(A, s1), (C, s2)], "discard", B, STD)
    assert flows(st_) == [(B, A, 36.0, "discard"), (B, C, 2.0 * s2.total, "discard")]
    with pytest.raises(ValueError, match="multi_win"):
        win_transfers([(A, s1), (C, s2)], "discard", B, rules(multi_win="off"))


def test_option_base():
    opts = rules(base=0.5)
    s = score("111m555s77z88s [P 999p] +7z discard(B)", opts)
    assert s.share == 18.0
    assert flows(settle_win([(A, s)], "discard", B, opts)) == [(B, A, 18.0, "discard")]


def test_option_draw_dealer_and_rounds_via_the_session():
    opts = rules(draw_dealer="stay", rounds=8)
    session = new_session(opts, dealer=D)
    assert next_hand(session, [], opts).dealer == D
    while not session.over:
        session = next_hand(session, [(session.dealer + 1) % 4], opts)
    assert session.hands == 32 and session.round_wind == NORTH


def test_to_json_and_types():
    s = score("111m555s77z88s [P 999p] +7z discard(B)")
    assert isinstance(s, WinScore) and isinstance(s, YangzhouScore)
    assert s.to_json() == {
        "legal": True,
        "reason": None,
        "reading": "111m · 555s · 777z · pair 88s + [P 999p]",
        "fans": {"duiduihu": 15, "zige": 2, "jianke": 1},
        "big_fan_value": 15,
        "small_fans": ["zige", "zige", "jianke"],
        "total": 18,
        "value": 18,
        "cap": None,
        "share": 36,
        "baopai": None,
        "baopai_from": None,
    }


def test_malformed_inputs_raise():
    with pytest.raises(ValueError, match="concealed tiles"):
        score_win(parse_tiles("123m"), (), tile_id("5z"), YangzhouContext("discard"), STD)
    s = score("123m456m789m345m9m +9m self-draw")
    with pytest.raises(ValueError, match="exactly one"):
        settle_win([(A, s), (B, s)], "self-draw", None, STD)
    with pytest.raises(ValueError, match="discarder"):
        settle_win([(A, s)], "discard", A, STD)
    with pytest.raises(ValueError, match="not legal"):
        settle_win([(A, score("234p234p567s567m8s +8s discard(B)"))], "discard", B, STD)


# --------------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------------


@st.composite
def complete_hands(draw):
    """A random complete hand: four sets (some declared as chi / pong / kong melds) and a pair."""
    counts = [0] * 34
    sets = []
    while len(sets) < 4:
        if draw(st.booleans()):
            t = draw(st.integers(0, 33))
            if counts[t] <= 1:
                counts[t] += 3
                sets.append(("trip", t))
        else:
            t = draw(st.sampled_from([x for x in range(27) if x % 9 <= 6]))
            if all(counts[t + i] <= 3 for i in range(3)):
                for i in range(3):
                    counts[t + i] += 1
                sets.append(("seq", t))
    pairs = [t for t in range(34) if counts[t] <= 2]
    pair = draw(st.sampled_from(pairs))
    counts[pair] += 2
    used = list(counts)  # copies of each kind in the whole hand, before melds take theirs
    melds = []
    for kind, t in sets:
        mk = draw(st.sampled_from("-PKAX" if kind == "trip" else "-C"))
        if mk == "-" or (mk in "KAX" and used[t] != 3):
            continue  # a kong needs the fourth copy, which another set or the pair may hold
        if mk == "C":
            for i in range(3):
                counts[t + i] -= 1
            melds.append(Meld("C", (t, t + 1, t + 2), draw(st.integers(0, 3))))
        else:
            counts[t] -= 3
            melds.append(Meld(mk, (t,) * (3 if mk == "P" else 4), None if mk in "AX" else draw(st.integers(0, 3))))
    concealed = [t for t in range(34) for _ in range(counts[t])]
    w = draw(st.sampled_from(concealed))
    concealed.remove(w)
    return concealed, tuple(melds), w


@settings(max_examples=150, deadline=None)
@given(
    hand=complete_hands(),
    how=st.sampled_from(["discard", "self-draw", "rob"]),
    style=st.sampled_from(["yangzhou", "yangzhou_new"]),
    winds=st.tuples(st.integers(27, 30), st.integers(27, 30)),
    winner=st.integers(0, 3),
    shift=st.integers(1, 3),
)
def test_scoring_invariants_and_zero_sum(hand, how, style, winds, winner, shift):
    concealed, melds, w = hand
    opts = rules(style)
    s = score_win(concealed, melds, w, YangzhouContext(how, winds[0], winds[1]), opts)
    assert s.reading is not None
    assert sum(s.fans.values()) == s.total == s.value
    assert s.big_fan_value == sum(v for f, v in s.fans.items() if f in BIG_FANS)
    assert s.total == s.big_fan_value + sum(SMALL_FANS[f][2] for f in s.small_fans)
    assert s.legal == (s.big_fan_value > 0 and s.total >= opts.min_fan)
    assert ("zimo" in s.small_fans) == (how == "self-draw")
    if not s.legal:
        return
    if s.baopai == "fengqing" and s.baopai_from in (None, winner):
        return  # the random meld sources may name no seat or the winner itself
    discarder = None if how == "self-draw" else (winner + shift) % 4
    st_ = settle_win([(winner, s)], how, discarder, opts)
    assert math.isclose(sum(st_.deltas), 0.0, abs_tol=1e-9)
    expected = 3 * s.total if how == "self-draw" else 2 * s.total
    assert st_.deltas[winner] == expected and all(t.payee == winner for t in st_.transfers)
