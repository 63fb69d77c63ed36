"""Liuwei scoring and money (mjenv.rules.scoring.liuwei) against RULES.md §10 and the §11 examples E42, E47–E50.

Each worked example is one test named after it, asserting the class and the exact transfers and deltas.  Then
the 陪冲 table for every class, 风清 with and without a bankroll, the scaling by N / 50, each option of §10.6,
the dealer rule, and a property test (zero-sum settlements; balances never negative).
"""

from __future__ import annotations

import functools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mjenv.rules.options import load_rules
from mjenv.rules.scoring.diedaohu import DiedaohuContext, LouhuLock
from mjenv.rules.scoring.common import WinScore
from mjenv.rules.scoring.liuwei import (
    PAYMENTS,
    LiuweiScore,
    kong_money,
    nearest_winner,
    new_session,
    next_hand,
    scale,
    score_hand,
    settle_kong,
    settle_win,
    win_transfers,
)
from mjenv.tiles import parse_hand

A, B, C, D = 0, 1, 2, 3


@functools.lru_cache(maxsize=None)
def _rules(items):
    return load_rules("liuwei", None, None, dict(items))


def rules(**options):
    """Liuwei options with explicit overrides; cached (the ruleset is a TOML file)."""
    return _rules(tuple(sorted(options.items())))


DEFAULT = rules()
FULL = [50.0] * 4


def score(text, opts=DEFAULT, **ctx):
    """Score a notation hand; the context's ``how`` comes from the notation."""
    hand = parse_hand(text)
    return score_hand(hand, DiedaohuContext(how=hand.win_how, **ctx), opts)


def flows(settlement):
    """Transfers as comparable tuples."""
    return [(t.payer, t.payee, t.amount, t.reason) for t in settlement.transfers]


CLASS_HANDS = {
    "pihu": "123m456p789s234m5z +5z discard",
    "duiduihu": "22m44s [P 111p] [P 999s] [P 333z] +4s discard",
    "hunyise": "123m456m789m111z2z +2z discard",
    "qingyise": "123m456m789m234m5m +5m discard",
    "hunduidui": "222m777m99m55z [P 111z] +5z discard",
    "qingduidui": "111m333m555m777m9m +9m discard",
    "fengqing": "333z55z66z [P 111z] [P 222z] +6z discard",
}


# --------------------------------------------------------------------------------------------------
# §11 worked examples
# --------------------------------------------------------------------------------------------------


def test_e42_seven_pairs_is_not_a_win():
    s = score("1133557799m22p4p +4p discard")
    assert not s.legal and s.reading is None and s.fans == {} and "seven pairs" in s.reason


def test_e47_duiduihu_on_a_discard_peichong():
    s = score("22m44s [P 111p] [P 999s] [P 333z] +4s discard(A)")
    assert s.legal and s.hand_class == "duiduihu" and s.fans == {"duiduihu": 2}
    assert s.share == 10 and s.peichong == 5
    st_ = settle_win([(B, s)], "discard", A, DEFAULT, balances=FULL)
    assert flows(st_) == [(A, B, 10.0, "discard"), (C, B, 5.0, "peichong"), (D, B, 5.0, "peichong")]
    assert st_.deltas == (-10.0, 20.0, -5.0, -5.0)


def test_e48_pihu_self_draw():
    s = score("123m456p789s234m5z +5z self-draw")
    assert s.hand_class == "pihu" and s.share == 6 and s.peichong is None
    st_ = settle_win([(B, s)], "self-draw", None, DEFAULT, balances=FULL)
    assert flows(st_) == [(A, B, 6.0, "selfdraw"), (C, B, 6.0, "selfdraw"), (D, B, 6.0, "selfdraw")]
    assert st_.deltas == (-6.0, 18.0, -6.0, -6.0)


def test_e49_only_the_nearest_winner():
    assert nearest_winner(A, [D, C]) == C
    assert nearest_winner(A, []) is None
    s = score("123m456p789s234m5z +5z discard(A)")
    st_ = settle_win([(C, s)], "discard", A, DEFAULT, balances=FULL)
    # D pays as a 陪冲 player although it could have won too
    assert flows(st_) == [(A, C, 4.0, "discard"), (B, C, 2.0, "peichong"), (D, C, 2.0, "peichong")]
    assert st_.deltas == (-4.0, -2.0, 8.0, -2.0)
    with pytest.raises(ValueError, match="one winner"):
        win_transfers([(C, s), (D, s)], "discard", A, DEFAULT)


def test_e50_liuwei_kongs():
    first = settle_kong("direct", B, A, DEFAULT, balances=FULL)
    second = settle_kong("concealed", D, None, DEFAULT, balances=list(first.balances))
    assert flows(first) == [(A, B, 2.0, "kong_direct"), (C, B, 2.0, "kong_direct"), (D, B, 2.0, "kong_direct")]
    assert flows(second) == [(p, D, 4.0, "kong_concealed") for p in (A, B, C)]
    deltas = tuple(first.deltas[p] + second.deltas[p] for p in range(4))
    assert deltas == (-6.0, 2.0, -6.0, 10.0)
    assert second.balances == (44.0, 52.0, 44.0, 60.0)


# --------------------------------------------------------------------------------------------------
# The 陪冲 table (§10.4), scaling, 风清
# --------------------------------------------------------------------------------------------------

TABLE = {  # §10.4 at bankroll 50: self-draw each, discarder, each 陪冲 (风清 under 园子 below)
    "pihu": (6, 4, 2),
    "duiduihu": (10, 10, 5),
    "hunyise": (12, 12, 6),
    "hunduidui": (16, 16, 8),
    "qingyise": (16, 16, 8),
    "qingduidui": (16, 16, 8),
}


@pytest.mark.parametrize("cls", list(TABLE))
def test_payment_table(cls):
    selfdraw, discarder, peichong = TABLE[cls]
    s = score(CLASS_HANDS[cls].replace("discard", "self-draw"))
    assert s.hand_class == cls and s.share == selfdraw
    assert flows(settle_win([(A, s)], "self-draw", None, DEFAULT, balances=FULL)) == [
        (p, A, float(selfdraw), "selfdraw") for p in (B, C, D)
    ]
    s = score(CLASS_HANDS[cls])
    assert s.share == discarder and s.peichong == peichong
    assert flows(settle_win([(A, s)], "discard", C, DEFAULT, balances=FULL)) == [
        (C, A, float(discarder), "discard"), (B, A, float(peichong), "peichong"), (D, A, float(peichong), "peichong")
    ]


def test_table_matches_the_module_and_best_reading_by_money():
    assert {c: v for c, v in PAYMENTS.items() if c != "fengqing"} == TABLE
    # 111222333m: 清对对 rather than 清一色 (same money, larger V)
    s = score("111222333m444m5m +5m discard")
    assert s.hand_class == "qingduidui" and s.value == 8


def test_fengqing_with_a_bankroll():
    s = score(CLASS_HANDS["fengqing"].replace("discard", "self-draw"))
    assert s.hand_class == "fengqing" and s.share is None and s.to_json()["whole_balance"]
    st_ = settle_win([(A, s)], "self-draw", None, DEFAULT, balances=[50, 30, 70, 12.5])
    assert flows(st_) == [(B, A, 30.0, "selfdraw"), (C, A, 70.0, "selfdraw"), (D, A, 12.5, "selfdraw")]
    assert st_.session_over and st_.busted == (B, C, D)  # "自摸全部結束"
    s = score(CLASS_HANDS["fengqing"])
    assert s.share is None and s.peichong == 16
    st_ = settle_win([(A, s)], "discard", B, DEFAULT, balances=[50, 30, 70, 12.5])
    assert flows(st_) == [(B, A, 30.0, "discard"), (C, A, 16.0, "peichong"), (D, A, 12.5, "peichong")]
    assert st_.busted == (B, D) and st_.session_over  # two players busted
    assert [(t.payer, t.amount) for t in st_.unpaid] == [(D, 3.5)]


def test_option_bankroll_none_fengqing_amounts():
    none = rules(bankroll=None)
    assert scale(none) == 1.0
    s = score(CLASS_HANDS["fengqing"].replace("discard", "self-draw"), none)
    assert s.share == 96
    st_ = settle_win([(A, s)], "self-draw", None, none)
    assert st_.deltas == (288.0, -96.0, -96.0, -96.0) and st_.balances is None and not st_.session_over
    s = score(CLASS_HANDS["fengqing"], none)
    assert (s.share, s.peichong) == (64, 16)
    assert settle_win([(A, s)], "discard", B, none).deltas == (96.0, -64.0, -16.0, -16.0)


def test_option_bankroll_scales_every_amount():
    big = rules(bankroll=100)
    assert scale(big) == 2.0
    s = score(CLASS_HANDS["duiduihu"], big)
    assert (s.share, s.peichong) == (20, 10)
    assert [t.amount for t in kong_money("concealed", A, None, big)] == [8.0] * 3
    assert [t.amount for t in kong_money("added", A, None, big)] == [4.0] * 3
    # base multiplies on top: b · N / 50
    both = rules(bankroll=25, base=3)
    assert scale(both) == 1.5
    assert score(CLASS_HANDS["pihu"].replace("discard", "self-draw"), both).share == 9.0
    with pytest.raises(ValueError, match="balances"):
        settle_win([(A, s)], "discard", B, big)


def test_bankroll_limits_and_busted_discarder():
    s = score(CLASS_HANDS["qingyise"])
    st_ = settle_win([(A, s)], "discard", B, DEFAULT, balances=[50, 5, 0, 50])
    assert flows(st_) == [(B, A, 5.0, "discard"), (D, A, 8.0, "peichong")]
    assert st_.busted == (B, C) and st_.newly_busted == (B,) and st_.session_over
    # a busted player's discards cannot be won on (§10.4 → §7.7), and it pays no kong money
    assert not score(CLASS_HANDS["pihu"], discarder_busted=True).legal
    st_ = settle_kong("added", A, None, DEFAULT, balances=[50, 0, 50, 50])
    assert flows(st_) == [(C, A, 2.0, "kong_added"), (D, A, 2.0, "kong_added")]


def test_rob_konger_is_the_discarder():
    s = score("123m456p789s234m5z +5z rob(D)")
    st_ = settle_win([(A, s)], "rob", D, DEFAULT, balances=FULL)
    assert flows(st_) == [(D, A, 4.0, "rob"), (B, A, 2.0, "peichong"), (C, A, 2.0, "peichong")]


def test_option_louhu():
    locked = LouhuLock().passed()
    assert not score(CLASS_HANDS["pihu"], lock=locked).legal
    assert score(CLASS_HANDS["pihu"], rules(louhu="off"), lock=locked).legal
    assert score(CLASS_HANDS["pihu"].replace("discard", "self-draw"), lock=locked).legal


def test_option_rounds_and_dealer_stays_on_a_drawn_hand():
    session = new_session(DEFAULT, dealer=B)
    assert session.rounds == 8
    assert next_hand(session, [], DEFAULT).dealer == B  # "和牌和莊家胡牌連莊"
    assert next_hand(session, [B], DEFAULT).dealer == B
    assert next_hand(session, [D], DEFAULT).dealer == C
    hands = 0
    while not session.over:
        session = next_hand(session, [(session.dealer + 2) % 4], DEFAULT)
        hands += 1
    assert hands == 32 and session.round_wind == 30


def test_to_json_and_types():
    s = score(CLASS_HANDS["hunyise"])
    assert isinstance(s, WinScore) and isinstance(s, LiuweiScore)
    assert s.to_json() == {
        "legal": True,
        "reason": None,
        "reading": "123m · 456m · 789m · 111z · pair 22z",
        "hand_class": "hunyise",
        "fans": {"hunyise": 2},
        "value": 2,
        "cap": None,
        "share": 12,
        "whole_balance": False,
        "peichong": 6,
    }


def test_malformed_inputs_raise():
    with pytest.raises(ValueError, match="no chi"):
        score("123m456p789s5z [C 234m] +5z discard")
    s = score(CLASS_HANDS["pihu"].replace("discard", "self-draw"))
    with pytest.raises(ValueError, match="self-draw"):
        win_transfers([(A, s)], "discard", B, DEFAULT)
    with pytest.raises(ValueError, match="direct kong"):
        kong_money("direct", A, None, DEFAULT)
    with pytest.raises(ValueError, match="kong kind"):
        kong_money("exposed", A, None, DEFAULT)


# --------------------------------------------------------------------------------------------------
# Property
# --------------------------------------------------------------------------------------------------


_KONG = st.tuples(
    st.just("kong"), st.sampled_from(["direct", "added", "concealed"]), st.integers(0, 3), st.integers(1, 3)
)
_WIN = st.tuples(
    st.just("win"), st.sampled_from(["discard", "self-draw", "rob"]), st.sampled_from(list(CLASS_HANDS)),
    st.integers(0, 3), st.integers(1, 3),
)


@settings(max_examples=150, deadline=None)
@given(bankroll=st.sampled_from([None, 50, 20, 100, 12.5]), events=st.lists(_KONG | _WIN, min_size=1, max_size=12))
def test_settlements_zero_sum_and_bankrolls_never_negative(bankroll, events):
    opts = rules(bankroll=bankroll)
    start = [float(bankroll or 0)] * 4
    balances = list(start)
    for event in events:
        if event[0] == "kong":
            _, kind, konger, shift = event
            fed = (konger + shift) % 4 if kind == "direct" else None
            st_ = settle_kong(kind, konger, fed, opts, balances=balances)
        else:
            _, how, cls, winner, shift = event
            discarder = None if how == "self-draw" else (winner + shift) % 4
            busted = bankroll is not None and discarder is not None and balances[discarder] <= 0
            s = score(CLASS_HANDS[cls].replace("discard", how), opts, discarder_busted=busted)
            if not s.legal:
                assert busted  # the only refusal here: a busted discarder's tiles cannot be won on
                continue
            st_ = settle_win([(winner, s)], how, discarder, opts, balances=balances)
        assert math.isclose(sum(st_.deltas), 0.0, abs_tol=1e-9)
        assert all(t.amount > 0 for t in st_.transfers)
        for p in range(4):
            assert math.isclose(st_.balances[p], balances[p] + st_.deltas[p], abs_tol=1e-9)
        if bankroll is not None:
            assert all(b >= 0 for b in st_.balances)
            assert all(balances[t.payer] > 0 for t in st_.transfers)  # a busted player never pays
        balances = list(st_.balances)
        assert math.isclose(sum(balances), sum(start), abs_tol=1e-6)
