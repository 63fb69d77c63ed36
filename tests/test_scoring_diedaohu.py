"""Diedaohu scoring and money (mjenv.rules.scoring.diedaohu) against RULES.md §7 and the §11 examples E37–E42.

Each worked example is one test named after it, asserting the class, the value and the exact transfers and
deltas.  Then the hand classes, each option of §7.9, the missed-win lock, the bankroll function, the dealer and
session helpers, and property tests (zero-sum settlements; 园子 balances never negative).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mjenv.rules.hand import is_complete
from mjenv.rules.options import load_rules
from mjenv.rules.scoring.diedaohu import (
    CLASSES,
    WHOLE_BALANCE,
    DiedaohuContext,
    DiedaohuScore,
    LouhuLock,
    Session,
    apply_bankroll,
    kong_money,
    new_session,
    next_dealer,
    next_hand,
    score_hand,
    score_win,
    settle_kong,
    settle_win,
    win_transfers,
    winners_in_order,
)
from mjenv.rules.scoring.common import Settlement, Transfer, WinScore
from mjenv.tiles import Meld, parse_hand, parse_tiles, tile_id

A, B, C, D = 0, 1, 2, 3
DEFAULT = load_rules("diedaohu")


@functools.lru_cache(maxsize=None)
def _rules(items):
    return load_rules("diedaohu", None, None, dict(items))


def rules(**options):
    """Diedaohu options with explicit overrides (Python values, e.g. bankroll=100); cached, the files are TOML."""
    return _rules(tuple(sorted(options.items())))


def score(text, opts=DEFAULT, **ctx):
    """Score a notation hand; the context's ``how`` comes from the notation."""
    hand = parse_hand(text)
    return score_hand(hand, DiedaohuContext(how=hand.win_how, **ctx), opts)


def flows(settlement):
    """Transfers as comparable tuples."""
    return [(t.payer, t.payee, t.amount, t.reason) for t in settlement.transfers]


# One hand of each class (§7.4), written so that the winning tile arrives by discard.
CLASS_HANDS = {
    "pihu": "123m456p789s234m5z +5z discard",
    "duiduihu": "111m222p333s444s5z +5z discard",
    "hunyise": "123m456m789m111z2z +2z discard",
    "qingyise": "123m456m789m234m5m +5m discard",
    "hunduidui": "222m777m99m55z [P 111z] +5z discard",
    "qingduidui": "111m333m555m777m9m +9m discard",
    "fengqing": "333z55z66z [P 111z] [P 222z] +6z discard",
}
# A 风清 whose fourth pong came from seat B: liable under fengqing_baopai (property test only).
FENGQING_FED_BY_B = "5z [P 111z<C] [P 222z<C] [P 333z<D] [P 444z<B] +5z discard"


# --------------------------------------------------------------------------------------------------
# §11 worked examples E37–E42
# --------------------------------------------------------------------------------------------------


def test_e37_hunduidui_self_draw():
    s = score("222m777m99m55z [P 111z] +5z self-draw")
    assert s.legal and s.hand_class == "hunduidui"
    assert s.fans == {"hunduidui": 4} and s.value == 4 and s.cap is None and s.share == 4
    assert s.reading.sets == (("trip", tile_id("2m")), ("trip", tile_id("7m")), ("trip", tile_id("5z")))
    assert s.reading.pair == tile_id("9m")
    st_ = settle_win([(A, s)], "self-draw", None, DEFAULT)
    assert flows(st_) == [(B, A, 4.0, "selfdraw"), (C, A, 4.0, "selfdraw"), (D, A, 4.0, "selfdraw")]
    assert st_.deltas == (12.0, -4.0, -4.0, -4.0)


def test_e38_kong_money():
    events = [
        settle_kong("added", A, None, DEFAULT),
        settle_kong("direct", B, C, DEFAULT),
        settle_kong("concealed", D, None, DEFAULT),
    ]
    assert flows(events[0]) == [(B, A, 0.5, "kong_added"), (C, A, 0.5, "kong_added"), (D, A, 0.5, "kong_added")]
    assert flows(events[1]) == [(C, B, 1.0, "kong_direct")]
    assert flows(events[2]) == [(p, D, 1.0, "kong_concealed") for p in (A, B, C)]
    deltas = tuple(sum(e.deltas[p] for e in events) for p in range(4))
    assert deltas == (0.5, -0.5, -2.5, 2.5)


def test_e39_fengqing():
    s = score("333z55z66z [P 111z] [P 222z] +6z discard(B)")
    assert s.legal and s.fans == {"fengqing": 16} and s.value == 16 and s.share == 16
    st_ = settle_win([(A, s)], "discard", B, DEFAULT)
    assert flows(st_) == [(B, A, 16.0, "discard")] and st_.deltas == (16.0, -16.0, 0.0, 0.0)

    yuanzi = rules(bankroll=100)
    s = score("333z55z66z [P 111z] [P 222z] +6z discard(B)", yuanzi)
    assert s.share is None and s.to_json()["whole_balance"] is True
    st_ = settle_win([(A, s)], "discard", B, yuanzi, balances=[100, 25, 100, 100])
    assert flows(st_) == [(B, A, 25.0, "discard")]
    assert st_.deltas == (25.0, -25.0, 0.0, 0.0)
    assert st_.balances == (125.0, 0.0, 100.0, 100.0)
    assert st_.busted == (B,) and st_.newly_busted == (B,)
    assert not st_.session_over  # a discarded 风清 does not end the session (§7.10 #9)


def test_e40_yuanzi_two_winners_short_discarder():
    opts = rules(bankroll=100)
    sb = score("22m44s [P 111p] [P 999s] [P 333z] +2m discard(A)", opts)
    sd = score("13m456m777m888m99m +2m discard(A)", opts)
    assert sb.hand_class == "duiduihu" and sb.value == 2
    assert sd.hand_class == "qingyise" and sd.value == 4
    # D first in the list: the payment order comes from the seats, not from the list
    st_ = settle_win([(D, sd), (B, sb)], "discard", A, opts, balances=[3, 100, 100, 100])
    assert flows(st_) == [(A, B, 2.0, "discard"), (A, D, 1.0, "discard")]
    assert st_.deltas == (-3.0, 2.0, 0.0, 1.0)
    assert st_.balances == (0.0, 102.0, 100.0, 101.0) and st_.busted == (A,)
    assert [(t.payer, t.payee, t.amount) for t in st_.unpaid] == [(A, D, 3.0)]
    # D as the dealer keeps the deal although underpaid
    assert next_dealer(D, [B, D], opts.draw_dealer) == D
    session = next_hand(Session(dealer=D, rounds=4), [B, D], opts)
    assert session.dealer == D and session.passes == 0


def test_e41_missed_win_and_dadiaoche():
    melds = "[P 111p] [P 222s] [P 333z]"
    could = score(f"55m77m {melds} +7m discard(A)")
    assert could.legal and could.hand_class == "duiduihu"
    lock = LouhuLock().passed()  # B pongs the 7m instead of winning
    assert lock.locked and lock.dadiaoche_tile is None
    # Without the exception, a locked B may not win on a discard
    assert not score(f"55m77m {melds} +7m discard(C)", lock=lock).legal
    lock = lock.discarded(parse_tiles("5m"), tile_id("5m"))  # B discards 5m keeping the single 5m
    assert lock.dadiaoche_tile == tile_id("5m")
    s = score(f"5m {melds} [P 777m] +5m discard(C)", lock=lock)
    assert s.legal and s.fans == {"duiduihu": 2} and s.value == 2
    st_ = settle_win([(B, s)], "discard", C, DEFAULT)
    assert flows(st_) == [(C, B, 2.0, "discard")] and st_.deltas == (0.0, 2.0, -2.0, 0.0)
    # Self-draw is never locked; the next own draw ends the lock
    assert score(f"55m77m {melds} +7m self-draw", lock=LouhuLock().passed()).legal
    assert lock.drew() == LouhuLock()


def test_e42_seven_pairs_is_not_a_win():
    s = score("1133557799m22p4p +4p discard")
    assert is_complete(np.bincount(parse_tiles("1133557799m22p44p"), minlength=34), seven_pairs=True)
    assert not s.legal and s.reading is None and s.value == 0 and s.fans == {}
    assert "seven pairs" in s.reason


# --------------------------------------------------------------------------------------------------
# Hand classes (§7.4) and the best reading
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", list(CLASS_HANDS))
def test_each_class(cls):
    s = score(CLASS_HANDS[cls])
    assert s.legal and s.hand_class == cls and s.fans == {cls: CLASSES[cls][2]} and s.value == CLASSES[cls][2]
    assert s.value_d == s.value and s.cap is None


def test_best_reading_prefers_all_triplets():
    # 111222333m reads as three triplets (清对对 8) or three sequences (清一色 4)
    s = score("111222333m444m5m +5m discard")
    assert s.hand_class == "qingduidui" and s.value == 8


def test_rob_is_paid_by_the_konger():
    s = score("123m456p789s234m5z +5z rob(C)")
    st_ = settle_win([(A, s)], "rob", C, DEFAULT)
    assert flows(st_) == [(C, A, 1.0, "rob")]


def test_to_json_fields():
    j = score(CLASS_HANDS["hunyise"]).to_json()
    assert j == {
        "legal": True,
        "reason": None,
        "reading": "123m · 456m · 789m · 111z · pair 22z",
        "hand_class": "hunyise",
        "fans": {"hunyise": 2},
        "value": 2,
        "cap": None,
        "share": 2,
        "whole_balance": False,
        "baopai": None,
        "baopai_from": None,
    }
    assert isinstance(score(CLASS_HANDS["pihu"]), WinScore)


def test_impossible_hands_raise():
    with pytest.raises(ValueError, match="no chi"):
        score("123m456p789s5z [C 234m] +5z discard")
    with pytest.raises(ValueError, match="concealed tiles"):
        score_win(parse_tiles("123m456p789s5z"), (), tile_id("5z"), DiedaohuContext("discard"), DEFAULT)
    with pytest.raises(ValueError, match="copies"):
        score("1111m456p789s234m +1m discard")
    with pytest.raises(ValueError, match="how"):
        DiedaohuContext("tsumo")


# --------------------------------------------------------------------------------------------------
# Options (§7.9)
# --------------------------------------------------------------------------------------------------


def test_option_base_scales_wins_and_kong_money():
    opts = rules(base=2.5)
    s = score(CLASS_HANDS["qingyise"], opts)
    assert s.share == 10.0
    assert flows(settle_win([(A, s)], "discard", B, opts)) == [(B, A, 10.0, "discard")]
    assert [t.amount for t in kong_money("added", A, None, opts)] == [1.25] * 3
    assert [t.amount for t in kong_money("direct", A, B, opts)] == [2.5]


def test_option_bankroll_limits_kong_money_and_busts():
    opts = rules(bankroll=10)
    st_ = settle_kong("concealed", A, None, opts, balances=[10, 0, 0.5, 10])
    # B is busted: it pays nothing ("但是沒有錢"); C pays what it has
    assert flows(st_) == [(C, A, 0.5, "kong_concealed"), (D, A, 1.0, "kong_concealed")]
    assert st_.busted == (B, C) and st_.newly_busted == (C,) and st_.session_over  # a second bust ends the session
    assert [(t.payer, t.amount) for t in st_.unpaid] == [(B, 1.0), (C, 0.5)]
    with pytest.raises(ValueError, match="balances"):
        settle_kong("concealed", A, None, opts)


def test_option_bankroll_busted_discarder_cannot_be_won_on():
    s = score(CLASS_HANDS["pihu"], rules(bankroll=50), discarder_busted=True)
    assert not s.legal and "busted" in s.reason
    # a busted player may still self-draw, and it is paid
    s = score("123m456p789s234m5z +5z self-draw", rules(bankroll=50), discarder_busted=True)
    assert s.legal
    st_ = settle_win([(A, s)], "self-draw", None, rules(bankroll=50), balances=[0, 50, 50, 50])
    assert st_.balances == (3.0, 49.0, 49.0, 49.0) and st_.busted == ()


def test_option_bankroll_fengqing_self_draw_stands_up():
    opts = rules(bankroll=100)
    s = score("111z222z333z444z5z +5z self-draw", opts)
    assert s.hand_class == "fengqing" and s.share is None
    st_ = settle_win([(A, s)], "self-draw", None, opts, balances=[40, 70, 60, 130])
    assert flows(st_) == [(B, A, 70.0, "selfdraw"), (C, A, 60.0, "selfdraw"), (D, A, 130.0, "selfdraw")]
    assert st_.balances == (300.0, 0.0, 0.0, 0.0) and st_.session_over
    # 紧淌: 16 each, nothing ends
    s = score("111z222z333z444z5z +5z self-draw")
    st_ = settle_win([(A, s)], "self-draw", None, DEFAULT)
    assert st_.deltas == (48.0, -16.0, -16.0, -16.0) and not st_.session_over


def test_option_draw_dealer():
    assert next_dealer(B, [], "rotate") == C
    assert next_dealer(B, [], "stay") == B
    assert next_dealer(B, [A], "stay") == C and next_dealer(B, [B], "rotate") == B
    s = next_hand(new_session(rules(draw_dealer="stay"), dealer=B), [], rules(draw_dealer="stay"))
    assert s.dealer == B and s.passes == 0 and s.hands == 1


@pytest.mark.parametrize("rounds", [4, 8])
def test_option_rounds_session_length(rounds):
    opts = rules(rounds=rounds)
    session = new_session(opts, dealer=C)
    winds = []
    while not session.over:
        winds.append(session.round_wind)
        session = next_hand(session, [], opts)  # every drawn hand passes the deal under rotate
    assert session.hands == 4 * rounds and session.passes == 4 * rounds
    expected = [27 + (h // 4) % 4 for h in range(4 * rounds)]
    assert winds == expected
    with pytest.raises(ValueError, match="over"):
        next_hand(session, [], opts)


def test_session_seat_wind_and_dealer_staying_does_not_pass_the_deal():
    opts = rules()
    s = new_session(opts, dealer=B)
    assert [s.seat_wind(p) for p in range(4)] == [30, 27, 28, 29]
    s = next_hand(s, [B], opts)
    assert s.dealer == B and s.passes == 0 and s.round_wind == 27
    s = next_hand(s, [C], opts)
    assert s.dealer == C and s.passes == 1
    assert next_hand(s, [C], opts, ended=True).over


def test_option_louhu_off():
    locked = LouhuLock().passed()
    assert not score(CLASS_HANDS["pihu"], lock=locked).legal
    assert score(CLASS_HANDS["pihu"], rules(louhu="off"), lock=locked).legal
    # a locked player may not rob either
    assert not score("123m456p789s234m5z +5z rob(C)", lock=locked).legal


def test_louhu_dadiaoche_only_on_the_discarded_tile():
    lock = LouhuLock().passed().discarded(parse_tiles("5m"), tile_id("5m"))
    assert not lock.forbids("discard", tile_id("5m"), DEFAULT)
    assert lock.forbids("discard", tile_id("6m"), DEFAULT)
    # keeping another single tile, or more tiles, gives no exception
    assert LouhuLock().passed().discarded(parse_tiles("6m"), tile_id("5m")).dadiaoche_tile is None
    assert LouhuLock().passed().discarded(parse_tiles("5m5m6m6m"), tile_id("5m")).dadiaoche_tile is None
    # an unlocked player needs no exception; passing again locks without it
    assert LouhuLock().discarded(parse_tiles("5m"), tile_id("5m")) == LouhuLock()
    assert lock.passed().dadiaoche_tile is None


def test_option_multi_win():
    assert winners_in_order(C, [B, D, A], "on") == (D, A, B)
    assert winners_in_order(C, [B, D, A], "off") == (D,)
    assert winners_in_order(C, [], "off") == ()
    opts = rules(multi_win="off")
    s = score(CLASS_HANDS["pihu"], opts)
    with pytest.raises(ValueError, match="multi_win"):
        win_transfers([(A, s), (B, s)], "discard", C, opts)
    st_ = settle_win([(A, s), (B, s)], "discard", C, DEFAULT)
    assert flows(st_) == [(C, A, 1.0, "discard"), (C, B, 1.0, "discard")]


def test_option_fengqing_baopai():
    on = rules(fengqing_baopai="on")
    text = "5z [P 111z<C] [P 222z<C] [P 333z<D] [P 444z<B] +5z self-draw"
    s = score(text, on)
    assert s.hand_class == "fengqing" and s.baopai == "fengqing" and s.baopai_from == B
    st_ = settle_win([(A, s)], "self-draw", None, on)
    assert flows(st_) == [(B, A, 48.0, "baopai")]
    # on a discard the liable player pays instead of the discarder
    s = score(text.replace("self-draw", "discard(D)"), on)
    assert flows(settle_win([(A, s)], "discard", D, on)) == [(B, A, 16.0, "baopai")]
    # off (default): no liability
    s = score(text, DEFAULT)
    assert s.baopai is None
    assert flows(settle_win([(A, s)], "self-draw", None, DEFAULT)) == [
        (B, A, 16.0, "selfdraw"), (C, A, 16.0, "selfdraw"), (D, A, 16.0, "selfdraw")
    ]
    # fewer than four melds (E39): nobody is liable
    assert score(CLASS_HANDS["fengqing"], on).baopai is None
    # under 园子 the liable player owes its whole balance, and a self-drawn 风清 still ends the session
    both = rules(fengqing_baopai="on", bankroll=100)
    s = score(text, both)
    st_ = settle_win([(A, s)], "self-draw", None, both, balances=[100, 80, 100, 100])
    assert flows(st_) == [(B, A, 80.0, "baopai")] and st_.session_over


def test_fengqing_baopai_needs_the_source():
    on = rules(fengqing_baopai="on")
    s = score("5z [P 111z] [P 222z] [P 333z] [P 444z] +5z self-draw", on)
    assert s.baopai == "fengqing" and s.baopai_from is None
    with pytest.raises(ValueError, match="source"):
        settle_win([(A, s)], "self-draw", None, on)


def test_settlement_refuses_illegal_or_malformed_wins():
    bad = score("1133557799m22p4p +4p discard")
    with pytest.raises(ValueError, match="not legal"):
        settle_win([(A, bad)], "discard", B, DEFAULT)
    good = score(CLASS_HANDS["pihu"])
    with pytest.raises(ValueError, match="own discard"):
        settle_win([(A, good)], "discard", A, DEFAULT)
    with pytest.raises(ValueError, match="exactly one"):
        settle_win([(A, good), (B, good)], "self-draw", None, DEFAULT)
    with pytest.raises(ValueError, match="direct kong"):
        kong_money("direct", A, A, DEFAULT)


def test_apply_bankroll_takes_rounding_residue_as_zero():
    """Non-binary amounts (Liuwei's N/50 scaling, 0.4 kong money) leave balances such as -1e-17 after a few
    payments: that is a busted 0, not bad input; a real debt (below -1e-9) or NaN is still refused."""
    residue = 0.1 + 0.2 - 0.3 - 1e-16  # about -4e-17
    assert residue < 0
    st_ = apply_bankroll([10, residue, 5, 5], [Transfer(B, A, 2.0, "discard")])
    assert flows(st_) == [] and B in st_.busted and st_.balances[B] == 0.0
    assert st_.balances == apply_bankroll([10, 0.0, 5, 5], [Transfer(B, A, 2.0, "discard")]).balances
    for bad in (-0.01, float("nan")):
        with pytest.raises(ValueError, match="cannot be negative"):
            apply_bankroll([10, bad, 5, 5], [Transfer(B, A, 2.0, "discard")])


def test_apply_bankroll_whole_balance_and_unlimited_mode():
    owed = [Transfer(B, A, WHOLE_BALANCE, "discard")]
    st_ = apply_bankroll([10, 7.5, 0, 0], owed)
    assert flows(st_) == [(B, A, 7.5, "discard")] and st_.busted == (B, C, D) and st_.session_over
    with pytest.raises(ValueError, match="balances"):
        apply_bankroll(None, owed, limit=False)
    st_ = apply_bankroll([0, 0, 0, 0], [Transfer(B, A, 5.0, "discard")], limit=False)
    assert st_.balances == (5.0, -5.0, 0.0, 0.0) and st_.busted == () and not st_.session_over
    st_ = apply_bankroll(None, [Transfer(B, A, 5.0, "discard")], limit=False)
    assert isinstance(st_, Settlement) and st_.balances is None and st_.deltas == (5.0, -5.0, 0.0, 0.0)


# --------------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------------

_KONG = st.tuples(
    st.just("kong"), st.sampled_from(["direct", "added", "concealed"]), st.integers(0, 3), st.integers(1, 3)
)
# a win: how, class ("fed" = the 风清 fed by B), the winner or discarder seat, and the winners' offsets from the
# discarder (a self-draw uses only the seat)
_WIN = st.tuples(
    st.just("win"),
    st.sampled_from(["discard", "self-draw", "rob"]),
    st.sampled_from([*CLASS_HANDS, "fed"]),
    st.integers(0, 3),
    st.lists(st.integers(1, 3), min_size=1, max_size=3, unique=True),
)


@settings(max_examples=150, deadline=None)
@given(
    bankroll=st.sampled_from([None, 3, 10, 50, 100, 37.5]),
    baopai=st.sampled_from(["on", "off"]),
    base=st.sampled_from([1, 0.5, 2]),
    events=st.lists(_KONG | _WIN, min_size=1, max_size=12),
)
def test_settlements_zero_sum_and_bankrolls_never_negative(bankroll, baopai, base, events):
    opts = rules(bankroll=bankroll, fengqing_baopai=baopai, base=base)
    start = [float(bankroll or 0)] * 4
    balances = list(start)
    for event in events:
        if event[0] == "kong":
            _, kind, konger, shift = event
            st_ = settle_kong(kind, konger, (konger + shift) % 4 if kind == "direct" else None, opts, balances=balances)
        else:
            _, how, cls, seat, shifts = event
            if how == "self-draw":
                discarder, winners = None, [seat]
            else:
                discarder, winners = seat, [(seat + k) % 4 for k in shifts]
            if cls == "fed" and B in winners:
                continue  # the feeder cannot be the winner of its own fed hand
            text = FENGQING_FED_BY_B if cls == "fed" else CLASS_HANDS[cls]
            busted = bankroll is not None and discarder is not None and balances[discarder] <= 0
            pairs = [(w, score(text.replace("discard", how), opts, discarder_busted=busted)) for w in winners]
            if not all(s.legal for _, s in pairs):
                assert busted  # the only refusal here: a busted discarder's tiles cannot be won on
                continue
            st_ = settle_win(pairs, how, discarder, opts, balances=balances)
        assert math.isclose(sum(st_.deltas), 0.0, abs_tol=1e-9)
        for p in range(4):
            flow = sum(t.amount for t in st_.transfers if t.payee == p) - sum(
                t.amount for t in st_.transfers if t.payer == p
            )
            assert math.isclose(flow, st_.deltas[p], abs_tol=1e-9)
            assert math.isclose(st_.balances[p], balances[p] + st_.deltas[p], abs_tol=1e-9)
        assert all(t.amount > 0 for t in st_.transfers)
        if bankroll is not None:
            assert all(b >= 0 for b in st_.balances)
            assert all(balances[t.payer] > 0 for t in st_.transfers)  # a busted player never pays
        balances = list(st_.balances)
        assert math.isclose(sum(balances), sum(start), abs_tol=1e-6)


def _complete_hands():
    """Random complete standard hands (4 sets + pair) with 0–4 melded pongs/kongs, for scoring invariants."""

    @st.composite
    def build(draw):
        counts = np.zeros(34, dtype=np.int64)
        sets = []
        for _ in range(4):
            for _attempt in range(20):
                if draw(st.booleans()):
                    t = draw(st.integers(0, 33))
                    if counts[t] + 3 <= 4:
                        counts[t] += 3
                        sets.append(("trip", t))
                        break
                else:
                    t = draw(st.sampled_from([x for x in range(27) if x % 9 <= 6]))
                    if all(counts[t + i] + 1 <= 4 for i in range(3)):
                        counts[t : t + 3] += 1
                        sets.append(("seq", t))
                        break
            else:
                return None
        pair = draw(st.sampled_from([t for t in range(34) if counts[t] + 2 <= 4] or [None]))
        if pair is None:
            return None
        counts[pair] += 2
        melds = []
        for kind, t in sets:
            if kind == "trip" and draw(st.booleans()):
                mk = draw(st.sampled_from("PKAX"))
                if mk != "P" and counts[t] != 3:
                    continue  # a kong needs the fourth copy, which a sequence already holds
                counts[t] -= 3
                melds.append(Meld(mk, (t,) * (3 if mk == "P" else 4), None if mk in "AX" else 1))
        concealed = [t for t in range(34) for _ in range(counts[t])]
        w = draw(st.sampled_from(concealed))
        concealed.remove(w)
        return concealed, tuple(melds), w

    return build().filter(lambda x: x is not None)


@settings(max_examples=150, deadline=None)
@given(hand=_complete_hands(), how=st.sampled_from(["discard", "self-draw", "rob"]))
def test_scoring_invariants_on_complete_hands(hand, how):
    concealed, melds, w = hand
    s = score_win(concealed, melds, w, DiedaohuContext(how), DEFAULT)
    assert s.legal and isinstance(s, DiedaohuScore)
    assert s.fans == {s.hand_class: CLASSES[s.hand_class][2]} and s.value == CLASSES[s.hand_class][2]
    every = np.bincount(list(concealed) + [w] + [t for m in melds for t in m.tiles], minlength=34)
    suits = {t // 9 for t in np.flatnonzero(every[:27])}
    honors = every[27:].any()
    # the class factors into a suit part and a triplet part (§7.4: 混对对 = 2 × 2, 清对对 = 4 × 2)
    suit_part = 16 if not suits else (4 if len(suits) == 1 and not honors else 2 if len(suits) == 1 else 1)
    if suits:
        assert s.value in (suit_part, 2 * suit_part)
    else:
        assert s.value == 16
