"""Scripted golden games with explicit walls: RULES.md §11 examples played through the engine,
checking exact transfers, plus one game per edge case met while building the engine."""

from __future__ import annotations

import numpy as np
import pytest

from mjenv.encoding.actions import PASS, action_id
from mjenv.engine.core import Engine
from mjenv.engine.validate import validate
from tests.engine_script import legal_names, make_wall, play, transfers


def engine(variant="kawuxing3", **kw) -> Engine:
    return Engine(variant, 1, **kw)


def deal(e: Engine, hands, front="", back="", dealer=0) -> Engine:
    e.reset(walls=[make_wall(e, hands, dealer=dealer, front=front, back=back)], dealer=dealer)
    validate(e)
    return e


def deltas(e: Engine) -> list[float]:
    return [float(x) for x in e.state.money[0]]


def tsumogiri_to_end(e: Engine) -> None:
    """Everybody discards the tile just drawn and passes every claim until the hand ends."""
    while not e.done[0]:
        st = e.state
        if st.phase[0] in (2, 3):
            a = PASS
        else:
            a = int(st.drawn[0])
        e.step(np.array([a]))
        validate(e)


def test_e11_baohu():
    e = deal(
        engine(),
        {"A": "234p567p345s66z78s1p", "B": "99p88p11s2s9s55z77z3p", "C": "99p88p11s22s44s5z77z"},
        front="3p",
    )
    play(e, ["A liang:1p", "B discard:9s", "A win"])
    assert transfers(e) == [("B", "A", 4.0, "baohu")]
    assert deltas(e) == [4.0, -4.0, 0.0]
    assert e.results[0]["winners"][0]["fans"] == {"liangdao": 2}
    assert e.results[0]["next_dealer"] == 0


def test_e14_revealed_direct_kong_then_gangkai():
    e = deal(
        engine(),
        {"A": "5556s123p456p789p5z", "B": "11p2p3p99p123s88s6z7z", "C": "44p77p8p234s4s99s6z7z"},
        front="2p5s",
        back="6s",
    )
    play(e, ["A liang:5z", "B discard:9p", "C discard:5s", "A kong", "A win"])
    assert transfers(e) == [("C", "A", 2.0, "kong_direct"), ("B", "A", 4.0, "selfdraw"), ("C", "A", 4.0, "selfdraw")]
    assert deltas(e) == [10.0, -4.0, -6.0]
    assert e.results[0]["winners"][0]["fans"] == {"gangkai": 2, "liangdao": 2}


E15_HANDS = {
    "A": "77p222s1p3p5p1s4s6s8s5z6z",
    "B": "999p7p2p4p6p3s5s7s9s77z",
    "C": "88p1p2p3p4p3s5s7s9s66z1s",
}


@pytest.mark.parametrize(
    "mode, expected",
    [("chain", [2.0, 3.0, -5.0]), ("self_consecutive", [8.0, -3.0, -5.0]), ("per_hand", [8.0, -3.0, -5.0]), ("off", [4.0, -1.0, -3.0])],
)
def test_e15_kong_chain_money(mode, expected):
    e = deal(engine(options={"gangshanggang": mode}), E15_HANDS, front="9s6s8s7p", back="2s9p4s")
    play(
        e,
        [
            "A discard:5z",
            "B discard:7p",
            "A pong",
            "A discard:5p",
            "B discard:6s",
            "C discard:8s",
            "A kong:7p",
            "A kong:2s",
            "A discard:9p",
            "B kong",
            "B discard:4s",
        ],
    )
    assert deltas(e) == expected
    kongs = [ev for ev in e.events[0] if ev["type"] == "kong"]
    assert [k["kind"] for k in kongs] == ["added", "concealed", "direct"]


def test_e16_gangpao():
    e = deal(
        engine(),
        {"A": "6666z5p123p99p456s9s", "B": "123p7p88p2345s6s9p5z", "C": "46p123s789s55z777z"},
        back="1s",
    )
    play(e, ["A kong:6z", "A discard:5p", "C win"])
    assert transfers(e) == [("B", "A", 2.0, "kong_concealed"), ("C", "A", 2.0, "kong_concealed"), ("A", "C", 4.0, "discard")]
    assert deltas(e) == [0.0, -2.0, 2.0]
    assert e.results[0]["winners"][0]["fans"] == {"kawuxing": 2, "gangpao": 2}
    assert e.results[0]["next_dealer"] == 2


def test_e17_rob_added_kong():
    e = deal(
        engine(),
        {"A": "55p123p789p11s4s66z2p", "B": "46p123s789s55z777z", "C": "123p789p23s56s89s5z"},
        front="9p5p6s8s5p",
    )
    play(
        e,
        ["A discard:4s", "B discard:9p", "C discard:5p", "A pong", "B pass", "A discard:1s", "B discard:6s", "C discard:8s", "A kong:5p", "B win"],
    )
    assert transfers(e) == [("A", "B", 4.0, "rob")]
    assert deltas(e) == [-4.0, 4.0, 0.0]
    assert e.results[0]["winners"][0]["fans"] == {"kawuxing": 2, "qianggang": 2}
    assert e.results[0]["next_dealer"] == 1


def test_e18_missed_win_higher_value_exception():
    # B passes a V=1 win on A's 6s (locked, M = 1); C pongs that 6s and discards 5s (V = 2 > 1).
    e = deal(
        engine(options={"kaikou": "none"}),
        {"A": "6s123p456p789p11s7z7z", "B": "4446s123p789p555z", "C": "66s5s22p33p99s88s6z9p"},
    )
    play(e, ["A discard:6s", "B pass", "C pong"])
    assert e.state.lock[0, 1] == 1
    play(e, ["C discard:5s", "B win"])
    assert transfers(e) == [("C", "B", 2.0, "discard")]


def test_e18_missed_win_refused_when_not_higher():
    # B waits 3s / 6s, both worth 1: after passing A's 3s it may not win on C's 6s.
    e = deal(
        engine(options={"kaikou": "none"}),
        {"A": "3s123p456p789p11s7z7z", "B": "123p789p555z45s99s", "C": "33s6s2p2p3p99s88s6z5z4p"},
    )
    play(e, ["A discard:3s", "B pass", "C pong"])
    assert e.state.lock[0, 1] == 1
    play(e, ["C discard:6s"])
    # B is not asked: the only claim it could make is refused by the lock; A (C's next player) draws.
    assert e.state.actor[0] == 0 and e.state.phase[0] == 0
    assert e.state.lock[0, 1] == 1
    assert [ev["seat"] for ev in e.events[0] if ev["type"] == "reply"] == [1, 2]


def test_e21_shuanglong_cap_16():
    e = deal(engine(), {"A": "1111p3333s55p77p9s9s", "B": "22p44p66p88p1s2s4s5z6z", "C": "22p44p66p88p5s6s7s6z7z"})
    play(e, ["A win"])
    assert transfers(e) == [("B", "A", 16.0, "selfdraw"), ("C", "A", 16.0, "selfdraw")]
    assert e.results[0]["winners"][0]["fans"] == {"shuanglong": 16}


E23_HANDS = {"A": "123p456p789p23s77z1s", "B": "46p123s789s55z666z", "C": "1p3p5p7p9p2s4s6s8s5z6z7z9s"}


@pytest.mark.parametrize("preset, expected", [("barbaric", [-2.0, 4.0, -2.0]), (None, [-2.0, 1.0, 1.0])])
def test_e23_drawn_hand_settlement(preset, expected):
    e = deal(engine(preset=preset), E23_HANDS)
    play(e, ["A liang:1s"])
    tsumogiri_to_end(e)
    assert e.results[0]["how"] == "draw"
    assert deltas(e) == expected
    assert e.results[0]["next_dealer"] == 0


def test_e24_crazy_each_pays_each():
    e = deal(engine(preset="crazy"), E23_HANDS, front="2p")
    play(e, ["A liang:1s", "B liang:2p"])
    tsumogiri_to_end(e)
    assert deltas(e) == [2.0, 4.0, -6.0]


def test_e24_crazy_liang_vs_liang_win():
    e = deal(engine(preset="crazy"), E23_HANDS, front="2p8s1s")
    play(e, ["A liang:1s", "B liang:2p", "C discard:8s", "A win"])
    assert transfers(e) == [("B", "A", 4.0, "selfdraw"), ("C", "A", 2.0, "selfdraw")]
    assert deltas(e) == [6.0, -4.0, -2.0]


E28_HANDS = {"A": "77p222s123p456s9s5z5p", "B": "999p7p2p4p6p3s5s7s9s77z", "C": "88p1p2p3p4p3s5s7s9s66z1s"}


@pytest.mark.parametrize("preset, expected, gangkai", [("barbaric", [18.0, -9.0, -9.0], 4), (None, [14.0, -7.0, -7.0], 2)])
def test_e28_gang_stack(preset, expected, gangkai):
    e = deal(engine(preset=preset), E28_HANDS, front="3s6s8s7p", back="2s9s")
    play(e, ["A discard:5z", "B discard:7p", "A pong", "A discard:5p", "B discard:6s", "C discard:8s", "A kong:7p", "A kong:2s", "A win"])
    assert e.results[0]["winners"][0]["fans"] == {"gangkai": gangkai}
    assert deltas(e) == expected


DOUBLE_WIN = {"A": "5p123p789p234p66s6z9p", "B": "46p123s789s55z777z", "C": "46p123s789s666z55z"}


def test_double_win_on_one_discard():
    e = deal(engine(), DOUBLE_WIN)
    play(e, ["A discard:5p", "B win", "C win"])
    assert transfers(e) == [("A", "B", 2.0, "discard"), ("A", "C", 2.0, "discard")]
    assert [w["seat"] for w in e.results[0]["winners"]] == [1, 2]
    assert e.results[0]["next_dealer"] == 0  # two winners: the discarder deals


def test_multi_win_off_keeps_the_nearest_winner():
    e = deal(engine(options={"multi_win": "off"}), DOUBLE_WIN)
    play(e, ["A discard:5p", "B win", "C win"])
    assert transfers(e) == [("A", "B", 2.0, "discard")]
    assert e.results[0]["next_dealer"] == 1


def test_claims_resolve_after_every_reply():
    # B could pong C's... here: B may pong A's 5p? No - B passes its win, C still wins: a pass never ends the window early.
    e = deal(engine(), DOUBLE_WIN)
    play(e, ["A discard:5p", "B pass", "C win"])
    assert transfers(e) == [("A", "C", 2.0, "discard")]
    assert e.state.lock[0, 1] == 2


def test_last_tile_no_kong_and_last_discard_only_for_a_win():
    hands = {"A": "55z1p2p4p5p7p8p1s2s4s5s7s8s", "B": "3p3p6p6p9p9p3s3s6s6s9s9s6z", "C": "777z5z1p2p4p5p7p8p1s2s4s"}
    e = deal(engine(), hands, back="7z")
    while int(e.wall_left()[0]) > 0 or e.state.phase[0] != 0 or e.state.cur[0] != 2:
        a = PASS if e.state.phase[0] in (2, 3) else int(e.state.drawn[0])
        e.step(np.array([a]))
        validate(e)
    assert e.state.hand[0, 2, 33] == 4  # C drew the last tile, the fourth 7z
    assert not any(n.startswith("kong") for n in legal_names(e))
    play(e, ["C discard:5z"])  # A holds 55z but may not pong the last discard
    assert e.results[0]["how"] == "draw"
    assert e.events[0][-2]["type"] == "discard"


def test_e29_added_kong_only_with_the_tile_just_drawn():
    e = deal(engine(), E28_HANDS, front="3s6s8s7p2p")
    play(e, ["A discard:5z", "B discard:7p", "A pong", "A discard:5p", "B discard:6s", "C discard:8s"])
    assert "kong:7p" in legal_names(e)
    play(e, ["A discard:9s", "B discard:2p"])
    e.step(np.array([int(e.state.drawn[0])]))  # C discards its draw
    while e.state.phase[0] in (2, 3):
        e.step(np.array([PASS]))
    assert e.state.actor[0] == 0 and e.state.hand[0, 0, 15] == 1
    assert "kong:7p" not in legal_names(e)


@pytest.mark.parametrize("timing, later", [("deferrable", True), ("immediate", False)])
def test_e29_concealed_kong_timing(timing, later):
    hands = {"A": "5555z123p456p789s1s", "B": "11p22p33s44s66s77s6z", "C": "99p88p2s3s5s7s9s6z6z8s3p"}
    e = deal(engine(options={"angang_timing": timing}), hands, front="4p4p1s")
    assert "kong:5z" in legal_names(e)
    play(e, ["A discard:1s", "B discard:4p", "C discard:4p"])
    assert e.state.actor[0] == 0 and e.state.phase[0] == 0
    assert ("kong:5z" in legal_names(e)) == later


def test_no_kong_right_after_a_pong():
    hands = {"A": "5555z123p456p78s11s", "B": "9p22p33s44s66s77s6z3p", "C": "99p88p2s3s5s7s9s6z6z8s4p"}
    e = deal(engine(), hands, front="1s")
    play(e, ["A discard:8s", "B discard:1s", "A pong"])
    assert e.state.phase[0] == 1
    assert not any(n.startswith("kong") for n in legal_names(e))


@pytest.mark.parametrize("hand, hidden", [("777s88s123p456p99p5z", [24]), ("777s89s123p456p99p5z", [])])
def test_e13_liang_keeps_unrelated_triplets_face_down(hand, hidden):
    e = deal(engine(), {"A": hand, "B": "11p22p33p44s55s66s6z", "C": "55p66p11s22s33s6z7z7z"})
    play(e, ["A liang:5z"])
    assert np.flatnonzero(e.state.hidden[0, 0]).tolist() == hidden
    reveal = next(ev for ev in e.events[0] if ev["type"] == "reveal")
    assert reveal["face_down"] == 3 * len(hidden)


@pytest.mark.parametrize("amount, paid", [("all_shares", 6.0), ("double", 4.0)])
def test_e26_baohu_four_players(amount, paid):
    e = deal(
        engine("kawuxing4", options={"baohu_amount": amount}),
        {"A": "234p567p345s66z78s1m", "B": "9s2m3m5m7m9m1p1p8p8p6z5z5z", "C": "2m3m5m7m9m9p9p8s8s2s2s7z7z", "D": "4m4m6m6m8m8m1s1s7z5z3p3p7p"},
        front="1m",
    )
    play(e, ["A liang:1m", "B discard:9s", "A win"])
    assert transfers(e) == [("B", "A", paid, "baohu")]
