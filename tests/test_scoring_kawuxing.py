"""Kawuxing scoring and settlement (mjenv.rules.scoring.kawuxing) against RULES.md §3 and the §11 examples.

Each worked example E1–E28 that involves scoring or money is one test named after it, asserting fans, value
and the exact transfers and deltas, including every option/ruleset/preset line of the example.  Option tests
follow, then property tests (zero-sum settlements, scoring invariants on random complete hands).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mjenv.rules.hand import is_complete, reading_text
from mjenv.rules.options import KawuxingOptions, load_rules, n_players, tile_kinds
from mjenv.rules.scoring.common import WinScore, make_settlement
from mjenv.rules.scoring.kawuxing import (
    WinContext,
    hideable_triplets,
    kong_money,
    payer_factor,
    ready_value,
    score_hand,
    score_win,
    settle_draw,
    settle_win,
    share,
)
from mjenv.tiles import Meld, parse_hand, parse_tiles, tile_id

A, B, C, D = 0, 1, 2, 3
DEFAULT = load_rules("kawuxing3")
K3 = tile_kinds("kawuxing3", DEFAULT)


def rules(ruleset=None, preset=None, variant="kawuxing3", **options):
    """Options of a ruleset/preset with explicit overrides (Python values, e.g. cap=None)."""
    return load_rules(variant, ruleset, preset, options)


def score(text, opts=DEFAULT, variant="kawuxing3", **ctx):
    """Score a notation hand; the WinContext's ``how`` comes from the notation."""
    hand = parse_hand(text, tile_kinds(variant, opts))
    return score_hand(hand, WinContext(how=hand.win_how, **ctx), opts, n_players(variant))


def flows(settlement):
    """Transfers as comparable tuples."""
    return [(t.payer, t.payee, t.amount, t.reason) for t in settlement.transfers]


def selfdraw(winner, s, opts=DEFAULT, n=3, revealed=None):
    return settle_win(n, [(winner, s)], "self-draw", None, revealed or [False] * n, opts)


def discard(winner, s, discarder, opts=DEFAULT, n=3, revealed=None, how="discard"):
    return settle_win(n, [(winner, s)], how, discarder, revealed or [False] * n, opts)


def counts(text):
    return np.bincount(parse_tiles(text), minlength=34)


# --------------------------------------------------------------------------------------------------
# §11 worked examples, Kawuxing 3-player
# --------------------------------------------------------------------------------------------------


def test_e01_kawuxing_closed_wait():
    s = score("123p789p46s88s555z +5s discard(B)")
    assert s.legal and s.fans == {"kawuxing": 2} and s.value == 2 and s.cap == 8
    assert s.reading.sets == (("seq", tile_id("1p")), ("seq", tile_id("7p")), ("seq", tile_id("4s")), ("trip", tile_id("5z")))
    assert s.reading.pair == tile_id("8s")
    st_ = discard(A, s, B)
    assert flows(st_) == [(B, A, 2.0, "discard")]
    assert st_.deltas == (2.0, -2.0, 0.0)


def test_e02_value_one_needs_self_draw():
    refused = score("123p456p789p23s77z +4s discard(C)")
    assert not refused.legal and refused.value == 1 and refused.fans == {"pihu": 1}
    assert refused.reason == "kaikou hard: value 1 < 2 on a discard"
    s = score("123p456p789p23s77z +1s self-draw")
    assert s.legal and s.fans == {"pihu": 1} and s.value == 1
    assert s.reading.sets == tuple(("seq", tile_id(t)) for t in ("1p", "4p", "7p", "1s"))
    st_ = selfdraw(A, s)
    assert flows(st_) == [(B, A, 1.0, "selfdraw"), (C, A, 1.0, "selfdraw")]
    assert st_.deltas == (2.0, -1.0, -1.0)
    # kaikou: none -> the discard win is legal, C pays 1
    none = score("123p456p789p23s77z +4s discard(C)", rules(kaikou="none"))
    assert none.legal and flows(discard(A, none, C, rules(kaikou="none"))) == [(C, A, 1.0, "discard")]
    # kaikou: soft -> legal only after a kong of the winner
    soft = rules(kaikou="soft")
    assert not score("123p456p789p23s77z +4s discard(C)", soft).legal
    konged = score("123p456p789p23s77z +4s discard(C)", soft, winner_has_konged=True)
    assert konged.legal and flows(discard(A, konged, C, soft)) == [(C, A, 1.0, "discard")]


def test_e03_seven_pairs_beats_kawuxing():
    s = score("1122334456677p +5p self-draw")
    assert s.reading.kind == "seven_pairs"
    assert s.fans == {"qingyise": 4, "qidui": 4} and s.value == 16 and s.cap == 8
    st_ = selfdraw(A, s)
    assert flows(st_) == [(B, A, 8.0, "selfdraw"), (C, A, 8.0, "selfdraw")]
    assert st_.deltas == (16.0, -8.0, -8.0)
    # on a discard of 5p by B: B -> A 8
    on_discard = score("1122334456677p +5p discard(B)")
    assert flows(discard(A, on_discard, B)) == [(B, A, 8.0, "discard")]
    # cap: none -> 16 each
    nocap = rules(cap=None)
    s = score("1122334456677p +5p self-draw", nocap)
    assert s.cap is None and selfdraw(A, s, nocap).deltas == (32.0, -16.0, -16.0)
    # winning on 8p: only standard readings, 清一色 x4
    s8 = score("1122334456677p +8p self-draw")
    assert s8.reading.kind == "standard" and s8.fans == {"qingyise": 4} and s8.value == 4


def test_e04_equal_readings_longqidui_vs_kawuxing_an_sigui():
    s = score("1122334455566p +5p discard(B)")
    assert s.value == 32
    # both readings are worth 32; either may be reported
    assert s.fans in ({"qingyise": 4, "longqidui": 8}, {"qingyise": 4, "kawuxing": 2, "an_sigui": 4})
    st_ = discard(A, s, B)
    assert flows(st_) == [(B, A, 8.0, "discard")] and st_.deltas == (8.0, -8.0, 0.0)
    nocap = rules(cap=None)
    s = score("1122334455566p +5p discard(B)", nocap)
    assert flows(discard(A, s, B, nocap)) == [(B, A, 32.0, "discard")]


def test_e05_kawuxing_beside_longer_wait():
    s = score("22s45667p123p999p +5p discard(C)")
    assert s.fans == {"kawuxing": 2} and s.value == 2
    assert ("seq", tile_id("4p")) in s.reading.sets and ("seq", tile_id("5p")) in s.reading.sets
    st_ = discard(A, s, C)
    assert flows(st_) == [(C, A, 2.0, "discard")] and st_.deltas == (2.0, 0.0, -2.0)
    s8 = score("22s45667p123p999p +8p discard(C)")
    assert not s8.legal and s8.value == 1 and s8.fans == {"pihu": 1}


def test_e06_ming_sigui_win_tile():
    s = score("24p678s789s55z [P 333p] +3p discard(B)")
    assert s.legal and s.fans == {"ming_sigui": 2} and s.value == 2
    assert s.reading_text == "234p · 678s · 789s · pair 55z + [P 333p]"
    assert flows(discard(A, s, B)) == [(B, A, 2.0, "discard")]


def test_e07_ming_sigui_anywhere_in_qingyise():
    s = score("345p678p11p99p [P 333p] +9p self-draw")
    assert s.fans == {"qingyise": 4, "ming_sigui": 2} and s.value == 8
    assert selfdraw(A, s).deltas == (16.0, -8.0, -8.0)
    win_tile = rules(ming_sigui_scope="win_tile")
    s = score("345p678p11p99p [P 333p] +9p self-draw", win_tile)
    assert s.fans == {"qingyise": 4} and s.value == 4
    assert flows(selfdraw(A, s, win_tile)) == [(B, A, 4.0, "selfdraw"), (C, A, 4.0, "selfdraw")]
    anywhere = rules(ming_sigui_scope="any")
    assert score("345p678p11p99p [P 333p] +9p self-draw", anywhere).value == 8


def test_e08_an_sigui_by_discard():
    s = score("777p89p123s456s55z +7p discard(B)")
    assert s.fans == {"an_sigui": 4} and s.value == 4
    assert ("trip", tile_id("7p")) in s.reading.sets and ("seq", tile_id("7p")) in s.reading.sets
    assert flows(discard(A, s, B)) == [(B, A, 4.0, "discard")]
    s5z = score("777p89p123s456s55z +5z discard(B)")
    assert not s5z.legal and s5z.value == 1


def test_e09_idle_four_of_a_kind_scope():
    s = score("7777p8p123s456s55z +9p self-draw")
    assert s.fans == {"pihu": 1} and s.value == 1
    assert selfdraw(A, s).deltas == (2.0, -1.0, -1.0)
    suizhou = rules("suizhou000")
    s = score("7777p8p123s456s55z +9p self-draw", suizhou)
    assert s.fans == {"an_sigui": 4} and s.value == 4
    assert flows(selfdraw(A, s, suizhou)) == [(B, A, 4.0, "selfdraw"), (C, A, 4.0, "selfdraw")]


def test_e10_liangdao_seven_pairs():
    s = score("11p33p55s77s99s66z7z +7z self-draw", revealed=True)
    assert s.fans == {"qidui": 4, "liangdao": 2} and s.value == 8
    st_ = selfdraw(A, s, revealed=[True, False, False])
    assert flows(st_) == [(B, A, 8.0, "selfdraw"), (C, A, 8.0, "selfdraw")]
    assert st_.deltas == (16.0, -8.0, -8.0)


def test_e11_baohu():
    s = score("234p567p345s66z78s +9s discard(B)", revealed=True)
    assert s.legal and s.fans == {"liangdao": 2} and s.value == 2
    st_ = discard(A, s, B, revealed=[True, False, False])
    assert flows(st_) == [(B, A, 4.0, "baohu")]
    assert st_.deltas == (4.0, -4.0, 0.0)


def test_e12_no_baohu_between_revealed_and_liang_vs_liang():
    both = [True, True, False]
    s = score("234p567p345s66z78s +6s discard(B)", revealed=True, discarder_revealed=True)
    assert s.value == 2 and s.value_d == 2
    assert flows(discard(A, s, B, revealed=both)) == [(B, A, 2.0, "discard")]
    crazy = rules(preset="crazy")
    s = score("234p567p345s66z78s +6s discard(B)", crazy, revealed=True, discarder_revealed=True)
    assert s.value_d == 4 and payer_factor(True, True, crazy) == 2
    assert flows(discard(A, s, B, crazy, revealed=both)) == [(B, A, 4.0, "discard")]
    # liang_loser_double with A not revealed: a 屁胡 (V = 1) becomes legal on revealed B's discard
    loser = rules(liang_loser_double="on")
    plain = score("234p567p345s66z78s +6s discard(B)", loser, discarder_revealed=True)
    assert plain.value == 1 and plain.value_d == 2 and plain.legal
    assert not score("234p567p345s66z78s +6s discard(B)", loser).legal
    st_ = discard(A, plain, B, loser, revealed=[False, True, False])
    assert flows(st_) == [(B, A, 2.0, "discard")] and st_.deltas == (2.0, -2.0, 0.0)


def test_e13_face_down_triplet():
    assert hideable_triplets(counts("777s88s123p456p99p"), DEFAULT, K3) == (tile_id("7s"),)
    assert hideable_triplets(counts("777s89s123p456p99p"), DEFAULT, K3) == ()
    assert hideable_triplets(counts("777s88s123p456p99p"), rules(liang_hide_triplets="off"), K3) == ()


def test_e14_kong_by_revealed_player_then_gangkai():
    kong = kong_money(3, "direct", A, C, 1, DEFAULT)
    assert [(t.payer, t.payee, t.amount, t.reason) for t in kong] == [(C, A, 2.0, "kong_direct")]
    s = score("6s123p456p789p [K 5555s<C] +6s self-draw", revealed=True, kong_position=1)
    assert s.fans == {"liangdao": 2, "gangkai": 2} and s.value == 4
    assert s.reading.sets == tuple(("seq", tile_id(t)) for t in ("1p", "4p", "7p")) and s.reading.pair == tile_id("6s")
    win = selfdraw(A, s, revealed=[True, False, False])
    assert flows(win) == [(B, A, 4.0, "selfdraw"), (C, A, 4.0, "selfdraw")]
    assert make_settlement(3, kong + list(win.transfers)).deltas == (10.0, -4.0, -6.0)


def _e15(opts, b_position):
    transfers = (
        kong_money(3, "added", A, None, 1, opts)
        + kong_money(3, "concealed", A, None, 2, opts)
        + kong_money(3, "direct", B, A, b_position, opts)
    )
    return make_settlement(3, transfers)


def test_e15_kong_chain_money():
    chain = _e15(DEFAULT, 3)
    assert flows(chain) == [
        (B, A, 1.0, "kong_added"),
        (C, A, 1.0, "kong_added"),
        (B, A, 4.0, "kong_concealed"),
        (C, A, 4.0, "kong_concealed"),
        (A, B, 8.0, "kong_direct"),
    ]
    assert chain.deltas == (2.0, 3.0, -5.0)
    for ruleset in ("suizhou000", "qdjt001"):  # self_consecutive / per_hand: B's kong is its position 1
        opts = rules(ruleset)
        assert opts.gangshanggang in ("self_consecutive", "per_hand")
        assert _e15(opts, 1).deltas == (8.0, -3.0, -5.0)
    assert _e15(rules(gangshanggang="off"), 3).deltas == (4.0, -1.0, -3.0)


def test_e16_gangpao():
    kong = kong_money(3, "concealed", A, None, 1, DEFAULT)
    s = score("46p123s789s55z777z +5p discard(A)", kong_position=1)
    assert s.fans == {"kawuxing": 2, "gangpao": 2} and s.value == 4
    win = discard(C, s, A)
    assert flows(win) == [(A, C, 4.0, "discard")]
    assert make_settlement(3, kong + list(win.transfers)).deltas == (0.0, -2.0, 2.0)


def test_e17_rob_added_kong():
    s = score("46p123s789s55z777z +5p rob(A)")
    assert s.fans == {"kawuxing": 2, "qianggang": 2} and s.value == 4
    st_ = discard(B, s, A, how="rob")
    assert flows(st_) == [(A, B, 4.0, "rob")] and st_.deltas == (-4.0, 4.0, 0.0)


def test_e18_missed_win_lock_values():
    none = rules(kaikou="none")
    assert score("4446s123p789p555z +5s discard(A)", none).fans == {"kawuxing": 2}
    assert score("4446s123p789p555z +6s discard(A)", none).value == 1
    locked = score("4446s123p789p555z +6s discard(C)", none, missed_win_lock=1)
    assert not locked.legal and locked.reason.startswith("missed-win lock")
    higher = score("4446s123p789p555z +5s discard(C)", none, missed_win_lock=1)
    assert higher.legal and higher.value_d == 2
    assert flows(discard(B, higher, C, none)) == [(C, B, 2.0, "discard")]
    # default kaikou hard: the 6s win was never legal; a passed 5s locks with M = 2, a later 5s is refused
    assert not score("4446s123p789p555z +6s discard(A)").legal
    assert score("4446s123p789p555z +5s discard(A)").value_d == 2
    assert not score("4446s123p789p555z +5s discard(C)", missed_win_lock=2).legal
    # self-draws are never locked
    assert score("4446s123p789p555z +6s self-draw", missed_win_lock=2).legal


def test_e19_shouzhuayi():
    hand = "2p [P 111p] [P 999s] [P 555z] [P 777z] +2p discard(C)"
    s = score(hand)
    assert s.fans == {"shouzhuayi": 4} and s.value == 4
    assert flows(discard(A, s, C)) == [(C, A, 4.0, "discard")]
    suizhou = rules("suizhou000")
    s = score(hand, suizhou)
    assert s.fans == {"pengpeng": 2, "shouzhuayi": 2} and s.value == 4
    assert flows(discard(A, s, C, suizhou)) == [(C, A, 4.0, "discard")]


def test_e20_dasanyuan_xiaosanyuan():
    big = score("555z666z77z123p99p +7z discard(B)")
    assert big.fans == {"dasanyuan": 8} and big.value == 8
    assert flows(discard(A, big, B)) == [(B, A, 8.0, "discard")]
    small = score("555z666z77z123p99p +9p discard(B)")
    assert small.fans == {"xiaosanyuan": 4} and small.value == 4
    assert flows(discard(A, small, B)) == [(B, A, 4.0, "discard")]


def test_e21_shuanglong_cap_16():
    s = score("1111p3333s55p77p9s +9s self-draw")
    assert s.fans == {"shuanglong": 16} and s.value == 16 and s.cap == 16
    assert selfdraw(A, s).deltas == (32.0, -16.0, -16.0)
    rev = score("1111p3333s55p77p9s +9s self-draw", revealed=True)
    assert rev.value == 32 and rev.cap == 16
    assert flows(selfdraw(A, rev, revealed=[True, False, False])) == [
        (B, A, 16.0, "selfdraw"),
        (C, A, 16.0, "selfdraw"),
    ]


def test_e22_add_vs_multiply():
    hand = "1122335577994p +4p self-draw"
    add = rules("qdjt001")
    s = score(hand, add)
    assert s.fans == {"qingyise": 4, "qidui": 4} and s.value == 8
    assert selfdraw(A, s, add).deltas == (16.0, -8.0, -8.0)
    s = score(hand)
    assert s.value == 16 and selfdraw(A, s).deltas == (16.0, -8.0, -8.0)
    # revealed, preset barbaric (cap 16)
    add_b = rules("qdjt001", "barbaric")
    s = score(hand, add_b, revealed=True)
    assert s.value == 16 and s.cap == 16
    assert selfdraw(A, s, add_b, revealed=[True, False, False]).deltas == (32.0, -16.0, -16.0)
    mul_b = rules(preset="barbaric")
    s = score(hand, mul_b, revealed=True)
    assert s.value == 32 and s.cap == 16
    assert selfdraw(A, s, mul_b, revealed=[True, False, False]).deltas == (32.0, -16.0, -16.0)


E23_A = "123p456p789p23s77z"
E23_B = "46p123s789s55z666z"
E23_C = "159p159s567z26p26s"  # not ready


def test_e23_drawn_hand_tingtou_vs_penalty():
    barbaric = rules(preset="barbaric")
    ready = [ready_value(counts(h), (), barbaric, K3) for h in (E23_A, E23_B, E23_C)]
    assert ready == [(1, 16), (2, 16), None]
    st_ = settle_draw(3, [A], ready, barbaric)
    assert flows(st_) == [(A, B, 4.0, "tingtou"), (C, A, 2.0, "tingtou")]
    assert st_.deltas == (-2.0, 4.0, -2.0)
    ready = [ready_value(counts(h), (), DEFAULT, K3) for h in (E23_A, E23_B, E23_C)]
    assert ready == [(1, 8), (2, 8), None]
    st_ = settle_draw(3, [A], ready, DEFAULT)
    assert flows(st_) == [(A, B, 1.0, "draw_penalty"), (A, C, 1.0, "draw_penalty")]
    assert st_.deltas == (-2.0, 1.0, 1.0)


def test_e24_crazy_each_pays_each_and_liang_vs_liang():
    crazy = rules(preset="crazy")
    ready = [ready_value(counts(h), (), crazy, K3) for h in (E23_A, E23_B, E23_C)]
    assert ready == [(1, None), (2, None), None]
    st_ = settle_draw(3, [A, B], ready, crazy)
    assert flows(st_) == [(C, A, 2.0, "tingtou"), (C, B, 4.0, "tingtou")]
    assert st_.deltas == (2.0, 4.0, -6.0)
    s = score(E23_A + " +1s self-draw", crazy, revealed=True)
    assert s.fans == {"liangdao": 2} and s.value == 2 and s.cap is None
    win = selfdraw(A, s, crazy, revealed=[True, True, False])
    assert flows(win) == [(B, A, 4.0, "selfdraw"), (C, A, 2.0, "selfdraw")]
    assert win.deltas == (6.0, -4.0, -2.0)


# --------------------------------------------------------------------------------------------------
# §11 worked examples, Kawuxing 4-player, rulesets and presets
# --------------------------------------------------------------------------------------------------


def test_e25_kawuxing_when_five_completes_pair_4p():
    opts = rules(variant="kawuxing4")
    s = score("123m456m789m234m5m +5m self-draw", opts, "kawuxing4")
    assert s.fans == {"qingyise": 4, "kawuxing": 2} and s.value == 8
    assert s.reading.pair == tile_id("5m") and ("seq", tile_id("4m")) in s.reading.sets
    st_ = selfdraw(A, s, opts, n=4)
    assert flows(st_) == [(B, A, 8.0, "selfdraw"), (C, A, 8.0, "selfdraw"), (D, A, 8.0, "selfdraw")]
    assert st_.deltas == (24.0, -8.0, -8.0, -8.0)


def test_e26_baohu_four_players():
    opts = rules(variant="kawuxing4")
    s = score("234p567p345s66z78s +9s discard(B)", opts, "kawuxing4", revealed=True)
    assert s.value == 2
    rev = [True, False, False, False]
    st_ = discard(A, s, B, opts, n=4, revealed=rev)
    assert flows(st_) == [(B, A, 6.0, "baohu")] and st_.deltas == (6.0, -6.0, 0.0, 0.0)
    double = rules(variant="kawuxing4", baohu_amount="double")
    assert flows(discard(A, s, B, double, n=4, revealed=rev)) == [(B, A, 4.0, "baohu")]


def test_e27_longqidui_scope():
    qdjt = rules("qdjt001")
    s = score("1111p33s55s77s99s6p +6p self-draw")
    assert s.fans == {"longqidui": 8} and selfdraw(A, s).deltas == (16.0, -8.0, -8.0)
    s = score("1111p33s55s77s99s6p +6p self-draw", qdjt)
    assert s.fans == {"qidui": 4} and selfdraw(A, s, qdjt).deltas == (8.0, -4.0, -4.0)
    for opts in (DEFAULT, qdjt):
        s = score("111p33s55s77s99s66p +1p self-draw", opts)
        assert s.fans == {"longqidui": 8} and s.value == 8
        assert selfdraw(A, s, opts).deltas == (16.0, -8.0, -8.0)


def _e28(opts):
    transfers = kong_money(3, "added", A, None, 1, opts) + kong_money(3, "concealed", A, None, 2, opts)
    s = score("123p78s55z [A 7777p] [X 2222s] +9s self-draw", opts, kong_position=2)
    return s, make_settlement(3, transfers + list(selfdraw(A, s, opts).transfers))


def test_e28_gang_stack():
    s, st_ = _e28(rules(preset="barbaric"))
    assert s.fans == {"gangkai": 4} and s.value == 4
    assert flows(st_)[-2:] == [(B, A, 4.0, "selfdraw"), (C, A, 4.0, "selfdraw")]
    assert st_.deltas == (18.0, -9.0, -9.0)
    s, st_ = _e28(DEFAULT)
    assert s.fans == {"gangkai": 2} and s.value == 2
    assert st_.deltas == (14.0, -7.0, -7.0)


# --------------------------------------------------------------------------------------------------
# Options, one fan or money rule at a time
# --------------------------------------------------------------------------------------------------


def test_fan_combine_add_doubles_liangdao_last():
    add = rules(fan_combine="add", cap=None)
    s = score("345p678p11p99p [P 333p] +9p self-draw", add, revealed=True)
    assert s.fans == {"qingyise": 4, "ming_sigui": 2, "liangdao": 2} and s.value == (4 + 2) * 2
    assert score("123p456p789p23s77z +1s self-draw", add, revealed=True).value == 2


def test_cap_options():
    hand = "1111p3333s55p77p9s +9s self-draw"
    assert score(hand, rules(cap_shuanglong_16="off")).cap == 8
    assert score(hand, rules(cap=16)).cap == 16
    assert score(hand, rules(cap=None)).cap is None
    s = score(hand, rules(cap_shuanglong_16="off"))
    assert share(s, 1, rules(cap_shuanglong_16="off")) == 8.0


def test_shuanglong_off_scores_longqidui():
    s = score("1111p3333s55p77p9s +9s self-draw", rules(shuanglong="off"))
    assert s.fans == {"longqidui": 8} and s.cap == 8


def test_longqidui_win_tile_with_two_fours_and_shuanglong_off():
    opts = rules(longqidui="win_tile", shuanglong="off")
    assert score("1111p3333s55p77p9s +9s self-draw", opts).fans == {"qidui": 4}
    assert score("111p3333s55p77p99s +1p self-draw", opts).fans == {"longqidui": 8}


def test_an_sigui_split_triplet_seq():
    split = rules(an_sigui_split="triplet_seq")
    # E4's standard reading uses the four 5p as pair + two sequences: no 暗四归一 under triplet_seq
    s = score("1122334455566p +5p discard(B)", split)
    assert s.fans == {"qingyise": 4, "longqidui": 8} and s.value == 32
    assert score("777p89p123s456s55z +7p discard(B)", split).fans == {"an_sigui": 4}


def test_an_sigui_scope_win_tile_in_qingyise():
    # four 1p idle in a 清一色: counts with qingyise_any, not with win_tile
    hand = "1111p2p345p678p99p +3p self-draw"
    assert score(hand).fans == {"qingyise": 4, "an_sigui": 4}
    assert score(hand, rules(an_sigui_scope="win_tile")).fans == {"qingyise": 4}


def test_sigui_count_each():
    hand = "123p789p5p [P 111p] [P 999p] +5p self-draw"
    once = score(hand)
    assert once.fans == {"qingyise": 4, "ming_sigui": 2} and once.value == 8
    assert once.fans["ming_sigui"] == 2
    each = score(hand, rules(sigui_count="each"))
    assert each.fans["ming_sigui"] == 4 and each.value == once.value * 2
    add_each = score(hand, rules(sigui_count="each", fan_combine="add", cap=None))
    assert add_each.fans["ming_sigui"] == 2 + 2


def test_shouzhuayi_pph_single_without_melds():
    pph = rules(shouzhuayi="pph_single_x2")
    single = "111p222s333s555z7z +7z self-draw"
    assert score(single, pph).fans == {"pengpeng": 2, "shouzhuayi": 2}
    assert score(single).fans == {"pengpeng": 2}
    # a 对倒 wait (two pairs) is not a single wait
    assert score("111p222s333s55z77z +7z self-draw", pph).fans == {"pengpeng": 2}


def test_haidi_scopes():
    sd, dc = "123p456p789p23s77z +1s self-draw", "123p789p46s88s555z +5s discard(B)"
    assert score(sd, last_tile=True).fans == {"haidi": 2}
    assert score(dc, last_tile=True).fans == {"kawuxing": 2}
    pao = rules(haidi="zimo_and_pao")
    assert score(dc, pao, last_tile=True).fans == {"kawuxing": 2, "haidi": 2}
    assert score(sd, rules(haidi="off"), last_tile=True).fans == {"pihu": 1}


def test_gang_stack_gangpao():
    stack = rules(gang_stack="on")
    assert score("46p123s789s55z777z +5p discard(A)", stack, kong_position=3).fans == {"kawuxing": 2, "gangpao": 8}
    assert score("46p123s789s55z777z +5p discard(A)", kong_position=3).fans == {"kawuxing": 2, "gangpao": 2}


def test_qianggang_off_refuses_rob():
    s = score("46p123s789s55z777z +5p rob(A)", rules(qianggang="off"))
    assert not s.legal and s.reason.startswith("qianggang off")


def test_kaikou_soft_counts_kong_melds():
    soft = rules(kaikou="soft")
    assert score("123p456p23s77z [X 5555z] +4s discard(C)", soft).legal
    assert not score("123p456p23s77z [X 5555z] +4s discard(C)").legal


def test_louhu_exception_off():
    off = rules(kaikou="none", louhu_exception="off")
    s = score("4446s123p789p555z +5s discard(C)", off, missed_win_lock=1)
    assert not s.legal and "louhu_exception off" in s.reason


def test_payer_factor_both_options_is_two():
    both = rules(liang_vs_liang="on", liang_loser_double="on")
    assert payer_factor(True, True, both) == 2
    assert payer_factor(False, True, both) == 2
    assert payer_factor(True, False, both) == 1
    assert payer_factor(True, True, DEFAULT) == 1


def test_baohu_off_cap_total_and_exempt_off():
    s = score("11p33p55s77s99s66z7z +7z discard(B)", revealed=True)  # V = 8
    rev = [True, False, False]
    assert flows(discard(A, s, B, revealed=rev)) == [(B, A, 16.0, "baohu")]
    assert flows(discard(A, s, B, rules(baohu_cap="total"), revealed=rev)) == [(B, A, 8.0, "baohu")]
    assert flows(discard(A, s, B, rules(baohu="off"), revealed=rev)) == [(B, A, 8.0, "discard")]
    both = [True, True, False]
    assert flows(discard(A, s, B, rules(baohu_liang_exempt="off"), revealed=both)) == [(B, A, 16.0, "baohu")]


def test_base_scales_every_payment():
    b2 = rules(base=2.5)
    s = score("123p789p46s88s555z +5s discard(B)", b2)
    assert flows(discard(A, s, B, b2)) == [(B, A, 5.0, "discard")]
    assert [t.amount for t in kong_money(3, "concealed", A, None, 2, b2)] == [10.0, 10.0]
    assert settle_draw(3, [B], [None, (1, 8), None], b2).deltas == (2.5, -5.0, 2.5)


def test_multiple_winners_settled_independently():
    s1 = score("46p123s789s55z777z +5p discard(A)")  # V = 2
    s2 = score("123p456p9p666z555z +9p discard(A)", revealed=True)
    assert s2.legal and s2.value == 2
    st_ = settle_win(3, [(B, s1), (C, s2)], "discard", A, [False, False, True], DEFAULT)
    assert flows(st_) == [(A, B, 2.0, "discard"), (A, C, 4.0, "baohu")]
    assert st_.deltas == (-6.0, 2.0, 4.0)


def test_no_winning_reading():
    s = score("234p567p345s66z78s +5p discard(A)", revealed=True)
    assert not s.legal and s.reason == "no winning reading"
    assert s.value == 0 and s.fans == {} and s.reading is None and s.cap is None


def test_malformed_inputs_raise():
    with pytest.raises(ValueError, match="need 13 concealed tiles"):
        score_win(parse_tiles("123p"), (), tile_id("4p"), WinContext("discard"), DEFAULT)
    with pytest.raises(ValueError, match="not a tile of kawuxing3"):
        score_win(parse_tiles("123m456p789p23s77z"), (), tile_id("1s"), WinContext("self-draw"), DEFAULT)
    with pytest.raises(ValueError):
        WinContext("tsumo")
    with pytest.raises(ValueError, match="not legal"):
        settle_win(3, [(A, score("123p456p789p23s77z +4s discard(C)"))], "discard", C, [False] * 3, DEFAULT)
    with pytest.raises(ValueError):
        kong_money(3, "direct", A, None, 1, DEFAULT)


def test_score_win_accepts_ids_or_counts_and_returns_fresh_fans():
    ids = parse_tiles("123p789p46s88s555z")
    a = score_win(ids, (), tile_id("5s"), WinContext("discard"), DEFAULT)
    b = score_win(counts("123p789p46s88s555z"), (), tile_id("5s"), WinContext("discard"), DEFAULT)
    assert a == b
    a.fans["kawuxing"] = 99  # a caller's mutation must not leak into the memo
    assert score_win(ids, (), tile_id("5s"), WinContext("discard"), DEFAULT).fans == {"kawuxing": 2}


def test_ready_value_with_melds_and_hidden_triplet_with_melds():
    melds = (Meld("P", (11, 11, 11)),)  # [P 333p]
    assert ready_value(counts("24p678s789s55z"), melds, DEFAULT, K3) == (2, 8)
    assert ready_value(counts("123p456p789p23s55z"), (), DEFAULT, K3) == (1, 8)
    assert ready_value(counts("159p159s567z26p26s"), (), DEFAULT, K3) is None
    with pytest.raises(ValueError):  # 10 concealed tiles need one meld
        ready_value(counts("24p678s789s55z"), (), DEFAULT, K3)
    # 555z is unrelated to the waits of the rest, so it may stay face down
    assert hideable_triplets(counts("555z24p678s55s"), DEFAULT, K3, melds) == (tile_id("5z"),)
    assert hideable_triplets(counts("555z24p678s55s"), DEFAULT, K3) == (tile_id("5z"),)
    # seven pairs: the triplet of 1p is part of the 1p wait (four 1p = two pairs), so it must be shown
    assert hideable_triplets(counts("111p22p33p44s55s66s"), DEFAULT, K3) == ()
    with pytest.raises(ValueError):
        hideable_triplets(counts("555z24p678s55s5s"), DEFAULT, K3)


# --------------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------------

_STR_OPTIONS = {
    f.name: f.metadata["domain"].values
    for f in dataclasses.fields(KawuxingOptions)
    if f.name not in ("base", "suits")
}


@st.composite
def option_values(draw):
    values = {name: draw(st.sampled_from(allowed)) for name, allowed in _STR_OPTIONS.items()}
    values["base"] = draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))
    return KawuxingOptions(**values)


@st.composite
def win_scores(draw):
    value = draw(st.integers(1, 512))
    cap = draw(st.sampled_from([8, 16, None]))
    return WinScore(True, None, None, "", {}, value, cap, value)


def _check_balanced(settlement, n):
    expect = [0.0] * n
    for t in settlement.transfers:
        assert t.amount > 0 and t.payer != t.payee
        expect[t.payer] -= t.amount
        expect[t.payee] += t.amount
    assert settlement.deltas == pytest.approx(expect)
    assert sum(settlement.deltas) == pytest.approx(0.0, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    opts=option_values(),
    n=st.sampled_from([3, 4]),
    how=st.sampled_from(["self-draw", "discard", "rob"]),
    data=st.data(),
)
def test_settlement_zero_sum_and_deltas_match_transfers(opts, n, how, data):
    revealed = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if how == "self-draw":
        discarder = None
        winners = [data.draw(st.integers(0, n - 1))]
    else:
        discarder = data.draw(st.integers(0, n - 1))
        others = [s for s in range(n) if s != discarder]
        winners = data.draw(st.lists(st.sampled_from(others), min_size=1, max_size=n - 1, unique=True))
    pairs = [(w, data.draw(win_scores())) for w in winners]
    win = settle_win(n, pairs, how, discarder, revealed, opts)
    _check_balanced(win, n)
    assert all(t.payee in winners for t in win.transfers)

    kind = data.draw(st.sampled_from(["concealed", "added", "direct"]))
    konger = data.draw(st.integers(0, n - 1))
    kong_from = (konger + data.draw(st.integers(1, n - 1))) % n if kind == "direct" else None
    kong = kong_money(n, kind, konger, kong_from, data.draw(st.integers(1, 6)), opts)
    _check_balanced(make_settlement(n, kong), n)

    order = data.draw(st.permutations(range(n)))[: data.draw(st.integers(0, n))]
    ready = [
        data.draw(st.one_of(st.none(), st.tuples(st.integers(1, 64), st.sampled_from([8, 16, None]))))
        if s not in order
        else (data.draw(st.integers(1, 64)), data.draw(st.sampled_from([8, 16, None])))
        for s in range(n)
    ]
    _check_balanced(settle_draw(n, order, ready, opts), n)
    _check_balanced(make_settlement(n, list(win.transfers) + kong), n)


_KINDS3 = np.flatnonzero(K3)


_SEQ_STARTS = [int(t) for t in _KINDS3 if t < 27 and t % 9 <= 6]


def _random_complete_hand(rng):
    """A random complete 14-tile 3p hand: seven pairs (1 in 5) or four sets and a pair, at most 4 copies a kind."""
    while True:
        c = np.zeros(34, dtype=np.int64)
        sets = []
        if rng.random() < 0.2:
            for t in rng.choice(_KINDS3, size=7):
                c[t] += 2
        else:
            for _ in range(4):
                if rng.random() < 0.5:
                    t = int(rng.choice(_SEQ_STARTS))
                    sets.append(("seq", t))
                    c[[t, t + 1, t + 2]] += 1
                else:
                    t = int(rng.choice(_KINDS3))
                    sets.append(("trip", t))
                    c[t] += 3
            c[int(rng.choice(_KINDS3))] += 2
        if c.max() <= 4:
            return c, sets


@st.composite
def complete_hands(draw):
    """A complete hand from a drawn seed, with 0–2 of its triplets declared as pongs and a drawn winning tile."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    c, sets = _random_complete_hand(rng)
    n_pongs = draw(st.integers(0, 2))
    melds = []
    for kind, t in sets:
        if kind == "trip" and len(melds) < n_pongs:
            melds.append(Meld("P", (t, t, t)))
            c[t] -= 3
    w = draw(st.sampled_from([int(t) for t in np.flatnonzero(c)]))
    c[w] -= 1
    return c, tuple(melds), w


@settings(max_examples=60, deadline=None)
@given(hand=complete_hands(), opts=option_values(), how=st.sampled_from(["self-draw", "discard", "rob"]),
       revealed=st.booleans(), kong=st.integers(0, 3), last=st.booleans())
def test_scoring_invariants_on_complete_hands(hand, opts, how, revealed, kong, last):
    c, melds, w = hand
    opts = dataclasses.replace(opts, suits="ps")
    ctx = WinContext(how, revealed=revealed, kong_position=kong if how != "rob" else 0, last_tile=last)
    s = score_win(c, melds, w, ctx, opts)
    full = c.copy()
    full[w] += 1
    assert is_complete(full, seven_pairs=not melds)
    assert s.reading is not None and s.value >= 1 and s.fans
    if how == "self-draw":
        assert s.legal  # L2
    if opts.fan_combine == "multiply":
        assert s.value == int(np.prod(list(s.fans.values())))
    assert ("liangdao" in s.fans) == revealed
    seven_pair_fans = {"qidui", "longqidui", "shuanglong"} & set(s.fans)
    assert not (seven_pair_fans and {"pengpeng", "kawuxing", "an_sigui", "ming_sigui"} & set(s.fans))
    pay = share(s, 1, opts)
    assert pay > 0 and (s.cap is None or pay <= s.cap * opts.base)
    assert score_win(c, melds, w, ctx, opts) == s  # memoized result is stable
    assert s.reading_text == reading_text(s.reading, " ".join(str(m) for m in melds))
