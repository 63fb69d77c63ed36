"""Scripted golden games and random play for the 4-player variants (RULES.md §6–§10, §11 E30–E50)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from mjenv.encoding.actions import PASS
from mjenv.engine.core import CLAIM, ROB, Engine
from mjenv.engine.validate import validate
from tests.engine_script import legal_names, make_wall, play, transfers
from tests.test_engine import play_random


def deal(variant, hands, front="", back="", dealer=0, **kw) -> Engine:
    e = Engine(variant, 1, **kw)
    e.reset(walls=[make_wall(e, hands, dealer=dealer, front=front, back=back)], dealer=dealer)
    validate(e)
    return e


def test_e34_gejiu_kong_tile_choice_and_kong_bloom():
    e = deal(
        "gejiu",
        {"A": "1111z234m567m999m5m", "B": "2p2p3p3p4p4p2s2s3s3s4s4s6z", "C": "5p5p6p6p7p7p5s5s6s6s7s7s7z", "D": "8s8s9s9s1p1p2z2z3z3z4z4z6z"},
        back="5m8p",
    )
    assert e.state.kong_tiles[0].tolist() == [4, 16]  # 5m, 8p face up
    play(e, ["A kong:1z"])
    assert legal_names(e) == ["kongtile:0", "kongtile:1"]
    play(e, ["A kongtile:0"])
    assert e.state.kong_tiles[0, 1] == 16 and e.state.kong_tiles[0, 0] >= 0  # the last face-down tile turned up
    play(e, ["A win"])
    assert e.results[0]["winners"][0]["fans"] == {"hunyise": 4, "gangshanghua": 8}
    assert transfers(e) == [("B", "A", 16.0, "selfdraw"), ("C", "A", 16.0, "selfdraw"), ("D", "A", 16.0, "selfdraw")]


E36 = {
    "A": "3m5m7m2p4p6p8p2s4s6s8s6z7z7z",
    "B": "2m4m1p1p9p9p1s1s9s9s1z1z2z",
    "C": "3m3m3p3p5p5p3s3s5s5s3z3z4z",
    "D": "6m6m7p7p5z5z6z1z2z4z7s7s8m",
}


def test_e36_pong_beats_chi():
    e = deal("gejiu", E36)
    play(e, ["A discard:3m", "B chi_mid", "C pong"])
    assert e.state.cur[0] == 2 and e.state.phase[0] == 1
    assert e.state.n_melds[0].tolist() == [0, 0, 1, 0]


def test_e36_chi_when_nobody_pongs():
    e = deal("gejiu", E36)
    play(e, ["A discard:3m", "B chi_mid", "C pass"])
    assert e.state.cur[0] == 1 and e.state.meld_kind[0, 1, 0] == 2 and e.state.meld_tile[0, 1, 0] == 1  # chi 234m


def test_e36_win_beats_pong_and_chi():
    e = deal("gejiu", dict(E36, D="12m456p789p123s55z"))
    play(e, ["A discard:3m", "B chi_mid", "C pong", "D win"])
    assert transfers(e) == [("A", "D", 2.0, "discard")]
    assert e.state.n_melds[0].sum() == 0


def test_e32_qixing_on_a_discard():
    e = deal(
        "gejiu",
        {"A": "47m147p14s123456z9m", "B": "2m2m3m3m5p5p6p6p2s2s3s3s8m", "C": "5m5m6m6m2p2p3p3p5s5s6s6s8p", "D": "8s8s9s9s9p9p8m1m1m5z6z7z7z"},
        front="7z",
    )
    play(e, ["A discard:9m", "B discard:7z", "D pass", "A win"])
    assert e.results[0]["winners"][0]["fans"] == {"qixing": 32}
    assert transfers(e) == [("B", "A", 32.0, "discard")]


@pytest.mark.parametrize(
    "variant, opts",
    [
        ("gejiu", None),
        ("gejiu", {"gejiu_qianggang": "replacement_tile"}),
        ("gejiu", {"multi_win": "off", "gejiu_combine": "add"}),
        ("diedaohu", None),
        ("diedaohu", {"bankroll": "20", "draw_dealer": "stay"}),
        ("yangzhou", None),
        ("yangzhou", {"chi": "off", "min_fan": "10"}),
        ("yangzhou_new", None),
        ("liuwei", None),
    ],
)
def test_random_games_4p_variants(variant, opts):
    e = Engine(variant, 96, options=opts, record_events=False)
    results = play_random(e, 400, seed=zlib.crc32(f"{variant}/{opts}".encode()) % 1000)
    assert all(abs(sum(r["deltas"])) < 1e-9 for r in results)
    assert "draw" in {r["how"] for r in results}


def test_e41_diedaohu_missed_win_and_dadiaoche():
    e = deal(
        "diedaohu",
        {
            "A": "1p7m2p3p4p5s6s7s8m8m9s9s4p3p",
            "B": "1p1p2s2s3z3z5m5m7m7m9p4z6z",
            "C": "2s5m1m1m2m2m3m4m6m6p6p7p9m",
            "D": "1s1s2z2z4s4s5p5p8s8s7z7z3z",
        },
        front="8p9m6s1z3s4s5s",
    )
    play(
        e,
        [
            "A discard:1p", "B pong", "B discard:9p",
            "C discard:2s", "B pong", "B discard:4z",
            "C discard:9m", "D discard:3z", "B pong", "B discard:6z",
            "C discard:1z", "D discard:3s", "A discard:7m",
        ],
    )
    assert "win" in legal_names(e) and "pong" in legal_names(e)
    play(e, ["B pong"])  # B's only legal move then is to discard a 5m: played automatically
    assert e.events[0][-2] == {"type": "discard", "seat": 1, "tile": "5m", "liang": False}
    assert e.state.lock[0, 1] == 1 and e.state.dadiaoche[0, 1] == 4
    play(e, ["C discard:5m", "B win"])
    assert e.results[0]["winners"][0]["fans"] == {"duiduihu": 2}
    assert transfers(e)[-1] == ("C", "B", 2.0, "discard")


E44 = {
    "A": "234p234p567s567m8s1z",
    "B": "1m1m9m9m1p1p9p9p1s1s9s9s2z",
    "C": "2m2m3m3m5p5p6p6p2s2s3s3s3z",
    "D": "4m4m8m8m7p7p8p8p4s4s6z6z7z",
}


@pytest.mark.parametrize("variant, each", [("yangzhou_new", 20.0), ("yangzhou", 15.0)])
def test_e44_yangzhou_threshold_through_the_engine(variant, each):
    e = deal(variant, E44, front="8s4z5z8s")
    play(e, ["A discard:1z", "B discard:8s"])
    # A's discard win would total 19 (new) / 14 (standard): below the minimum, so A is never asked.
    assert not any(ev["type"] == "reply" and ev["seat"] == 0 for ev in e.events[0])
    play(e, ["C discard:4z", "D discard:5z", "A win"])
    assert transfers(e) == [(p, "A", each, "selfdraw") for p in "BCD"]


E47 = {
    "A": "4z1m2m3m5p6p7p7s8s9s6z6z7z7z",
    "B": "111m222p333s44z55z",
    "C": "4m5m6m1p1p8p8p1s1s5s5s9m9m",
    "D": "3m3m6s6s7m7m8m8m9p9p2s2s3p",
}


def test_e47_liuwei_peichong():
    e = deal("liuwei", E47)
    play(e, ["A discard:4z", "B win"])
    assert transfers(e) == [("A", "B", 10.0, "discard"), ("C", "B", 5.0, "peichong"), ("D", "B", 5.0, "peichong")]
    assert e.results[0]["next_dealer"] == 1


def test_e49_liuwei_only_the_nearest_winner():
    hands = dict(
        E47, A="4z1m2m3m5p6p7p7s8s9s7z7z2z2z", B="111m222p333s555z4z", C="111p222s333m666z4z", D="4m5m6m9m9m8p8p1s1s5s5s3p3p"
    )
    e = deal("liuwei", hands)
    play(e, ["A discard:4z", "B win", "C win"])
    assert [w["seat"] for w in e.results[0]["winners"]] == [1]


def test_diedaohu_seven_pairs_is_not_a_win():
    e = deal(
        "diedaohu",
        {"A": "1133557799m22p4p4p", "B": "2m2m4m4m6m6m8m8m3p3p5p5p1z", "C": "1s1s2s2s3s3s4s4s5s5s6s6s2z", "D": "7s7s8s8s9s9s6p6p7p7p8p8p3z"},
    )
    assert "win" not in legal_names(e)


@pytest.mark.parametrize("variant, opts", [("diedaohu", {"bankroll": "2"}), ("liuwei", {"bankroll": "10"}), ("yangzhou", None)])
def test_sessions_and_bankrolls_under_random_play(variant, opts):
    e = Engine(variant, 16, options=opts, record_events=False)
    rng = np.random.default_rng(5)
    e.reset(seed=11)
    hands = 0
    while hands < 64:
        e.step((rng.random(e.mask.shape) * e.mask).argmax(1))
        validate(e)
        if opts is not None:
            assert (e.balance + e.state.money >= -1e-9).all()
        done = np.flatnonzero(e.done)
        for b in done:
            hands += 1
            assert e.results[b]["session_over"] == bool(e.session_over[b])
            if opts is not None and ((e.balance[b] + e.state.money[b]) <= 1e-9).sum() >= 2:
                assert e.session_over[b]
        fresh = [b for b in done if e.session_over[b]]
        cont = [b for b in done if not e.session_over[b]]
        if cont:
            e.next_hand(seed=hands, tables=cont)
            assert all(e.state.dealer[b] == e.sessions[b].dealer for b in cont)
        if fresh:
            e.reset(seed=hands, tables=fresh)
            assert np.allclose(e.balance[fresh], e.family.starting_balance())


# 园子: kong money busts players in a hand that then ends drawn (RULES §7.7 "the session ends after the hand in which
# a second player is busted", source "有兩家都輸光，則這操牌結束"; docs/rules-notes.md D11).  A (dealer) holds
# 555p 777s; B discards 5p and A kongs it (B pays), then C discards 7s and A may kong again (C pays).
BUSTING = {
    "A": "1m2m3m4m9m5p5p5p7s7s7s1z2z3z",
    "B": "5p2p8p9p3s6s9s5m7m4z5z6z1s",
    "C": "7s1p3p6p2s4s8s6m8m2m7z1z9s",
    "D": "4p7p1s5s3m9m2z3z6z4m6m8m4z",
}


def _busting_hand(variant: str, options, balances, second_kong: bool) -> Engine:
    e = deal(variant, BUSTING, front="1m2m3m", back="1p2p", options=options)
    if balances is not None:  # a session already under way: these are the balances this hand starts from
        e.balance[0] = balances
    play(e, ["A discard:1z", "B discard:5p", "A kong", "A discard:2z", "B discard:1m", "C discard:7s"])
    play(e, ["A kong" if second_kong else "A pass"])
    while not e.done[0]:  # everybody discards the tile just drawn and passes every claim: a drawn hand
        e.step(np.array([PASS if e.state.phase[0] in (CLAIM, ROB) else int(e.state.drawn[0])]))
        validate(e)
    assert e.results[0]["how"] == "draw"
    return e


@pytest.mark.parametrize(
    "variant, options, balances, second_kong, busted, over",
    [
        ("diedaohu", {"bankroll": 1}, None, True, [1, 2], True),  # B busted by the first kong, C by the second
        ("diedaohu", {"bankroll": 1}, None, False, [1], False),  # one busted player does not end the session
        ("diedaohu", {"bankroll": 1, "draw_dealer": "stay"}, None, True, [1, 2], True),
        ("diedaohu", {"bankroll": "none"}, None, True, None, False),  # 紧淌: no balances, nobody is busted
        ("liuwei", None, [50.0, 0.5, 50.0, 0.3], False, [1, 3], True),  # one kong (each of three owes 2) busts B and D
        ("liuwei", None, [50.0, 2.5, 50.0, 0.3], False, [3], False),
    ],
)
def test_kong_money_busting_a_second_player_ends_the_session_after_a_drawn_hand(
    variant, options, balances, second_kong, busted, over
):
    e = _busting_hand(variant, options, balances, second_kong)
    if busted is not None:
        assert np.flatnonzero(e.balance[0] + e.state.money[0] <= 1e-9).tolist() == busted
    assert bool(e.session_over[0]) is over
    assert e.results[0]["session_over"] is over and e.sessions[0].over is over
    if over:
        with pytest.raises(ValueError, match=r"tables \[0\] finished their session"):
            e.next_hand(seed=1)
    else:
        e.next_hand(seed=1)
