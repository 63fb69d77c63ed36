"""Scripted golden games and random play for the 4-player variants (RULES.md §6–§10, §11 E30–E50)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from mjenv.engine.core import Engine
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


@pytest.mark.parametrize("variant", ["gejiu"])
@pytest.mark.parametrize("opts", [None, {"gejiu_qianggang": "replacement_tile"}, {"multi_win": "off", "gejiu_combine": "add"}])
def test_random_games_4p_variants(variant, opts):
    e = Engine(variant, 96, options=opts, record_events=False)
    results = play_random(e, 300, seed=zlib.crc32(f"{variant}/{opts}".encode()) % 1000)
    assert all(abs(sum(r["deltas"])) < 1e-9 for r in results)
    assert {"draw", "discard"} <= {r["how"] for r in results}
