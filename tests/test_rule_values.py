"""One source for each rule value: a changed table entry reaches the Python scorer and the compiled engine alike.

Each test changes one entry of a scorer's value table (``monkeypatch``), scores a hand with
:mod:`mjenv.rules.scoring` and plays the same hand in an :class:`~mjenv.engine.core.Engine` from a scripted wall:
the compiled code reads the values from the engine's configuration vector, built from the table when the engine
is made, so both must follow the change (and both must differ from the unchanged table's verdict).
"""

from __future__ import annotations

import numpy as np

from mjenv.encoding.actions import WIN
from mjenv.engine.core import Engine
from mjenv.rules.options import load_rules
from mjenv.rules.scoring import gejiu as G
from mjenv.rules.scoring import kawuxing as K
from mjenv.rules.scoring import yangzhou as Y
from mjenv.tiles import parse_tiles
from tests.engine_script import make_wall

_KW_HAND = "123p234p456p55p789p"  # the dealer's 14 tiles, 9p last (drawn): 清一色 and nothing else


def _counts(tiles: list[int]) -> np.ndarray:
    return np.bincount(np.asarray(tiles), minlength=34).astype(np.int8)


def _kawuxing_self_draw() -> tuple[int, float]:
    """(V by the Python scorer, the dealer's money after it self-draws in the engine) of :data:`_KW_HAND`."""
    tiles = parse_tiles(_KW_HAND)
    opts = load_rules("kawuxing3")
    value = K.score_win(_counts(tiles[:13]), (), tiles[13], K.WinContext("self-draw"), opts, 3).value
    eng = Engine("kawuxing3", 1)
    eng.reset(walls=[make_wall(eng, {"A": _KW_HAND, "B": "111s222s333s444s1p", "C": "555s666s777s888s1p"})])
    assert eng.mask[0, WIN], "the dealer's complete hand offers a self-draw"
    eng.step(np.array([WIN]))
    assert eng.results[0] is not None, "the self-draw ends the hand"
    return value, float(eng.match_money[0, 0])


def test_kawuxing_fan_value_reaches_scorer_and_engine(monkeypatch):
    value, money = _kawuxing_self_draw()
    assert (value, money) == (4, 8.0)  # 清一色 ×4, paid by each of the two others
    monkeypatch.setitem(K.FANS, "qingyise", ("清一色", "pure one suit", 2))
    value, money = _kawuxing_self_draw()
    assert (value, money) == (2, 4.0)


def _gejiu_self_draw() -> tuple[int, float]:
    """(V by the Python scorer, the dealer's money after it self-draws in the engine) of a 大对子 hand."""
    hand = "111m444m777m999m55m"  # 大对子 and 清一色 only, 5m drawn last
    tiles = parse_tiles(hand)
    opts = load_rules("gejiu")
    value = G.score_win(_counts(tiles[:13]), (), tiles[13], G.GejiuContext("self-draw"), opts).value
    eng = Engine("gejiu", 1)
    others = {"B": "111s222s333s444s9p", "C": "666s777s888s999s9p", "D": "111z222z333z444z9p"}
    eng.reset(walls=[make_wall(eng, {"A": hand, **others})])
    assert eng.mask[0, WIN], "the dealer's complete hand offers a self-draw"
    eng.step(np.array([WIN]))
    assert eng.results[0] is not None, "the self-draw ends the hand"
    return value, float(eng.match_money[0, 0])


def test_gejiu_pattern_value_reaches_scorer_and_engine(monkeypatch):
    value, money = _gejiu_self_draw()
    assert (value, money) == (16, 48.0)  # 大对子 4, 清一色 8: 2 x (4 / 2) x (8 / 2), from each of the three others
    cn, en, _ = G.PATTERNS["daduizi"]
    monkeypatch.setitem(G.PATTERNS, "daduizi", (cn, en, 8))
    value, money = _gejiu_self_draw()
    assert (value, money) == (32, 96.0)


def _yangzhou_self_draw_offered() -> tuple[bool, bool]:
    """(legal by the Python scorer, win offered by the compiled mask) for the dealer's 一条龙 self-draw."""
    hand = "123m456m123p55s789m"  # 一条龙 (15) + 门清 自摸 平胡 齐相 连副 老少: T = 21 >= min_fan 15
    tiles = parse_tiles(hand)
    opts = load_rules("yangzhou")
    ctx = Y.YangzhouContext("self-draw", Y.seat_wind(0, 0), Y.round_wind(0))
    legal = Y.score_win(_counts(tiles[:13]), (), tiles[13], ctx, opts).legal
    eng = Engine("yangzhou", 1)
    others = {"B": "111s222s333s444s9p", "C": "666s777s888s999s9p", "D": "111z222z333z444z9p"}
    eng.reset(walls=[make_wall(eng, {"A": hand, **others})])
    return legal, bool(eng.mask[0, WIN])


def test_yangzhou_big_fan_value_reaches_scorer_and_engine(monkeypatch):
    assert _yangzhou_self_draw_offered() == (True, True)
    cn, en, _ = Y.BIG_FANS["yitiaolong"]
    monkeypatch.setitem(Y.BIG_FANS, "yitiaolong", (cn, en, (5, 5)))  # T = 11 < 15: no longer a win
    assert _yangzhou_self_draw_offered() == (False, False)


def test_yangzhou_small_fan_value_reaches_scorer_and_engine(monkeypatch):
    cn, en, _ = Y.BIG_FANS["yitiaolong"]
    monkeypatch.setitem(Y.BIG_FANS, "yitiaolong", (cn, en, (5, 5)))
    cn, en, _ = Y.SMALL_FANS["laoshao"]
    monkeypatch.setitem(Y.SMALL_FANS, "laoshao", (cn, en, 5))  # T = 11 - 1 + 5 = 15: a win again
    assert _yangzhou_self_draw_offered() == (True, True)
