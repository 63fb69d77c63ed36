"""The compiled Gejiu value and patterns (mjenv/engine/gjscore.py) equal ``gejiu.score_win``'s on random winning hands:
standard readings with and without melds (chi, pong, the three kongs), seven pairs with fours, 烂牌 and 七星, by
discard, self-draw, kong bloom and robbing, under every ``gejiu_combine``."""

from __future__ import annotations

import numpy as np
import pytest

from mjenv.engine import fanrow, gjscore
from mjenv.engine import handk
from mjenv.engine.state import ADDED_KONG, CHI_MELD, CONCEALED_KONG, DIRECT_KONG, PONG_MELD
from mjenv.rules.options import load_rules
from mjenv.rules.scoring import gejiu as G
from mjenv.tiles import Meld

_LETTER = {PONG_MELD: "P", CHI_MELD: "C", DIRECT_KONG: "K", ADDED_KONG: "A", CONCEALED_KONG: "X"}


def _standard(rng):
    """A random complete standard hand: (full concealed counts, melds as (kind, tile))."""
    while True:
        counts = np.zeros(34, np.int64)
        melds = []
        n_melds = int(rng.integers(0, 5))
        ok = True
        suits = rng.choice(4, size=int(rng.integers(1, 4)), replace=False)  # few suits: flushes happen
        tiles = [t for t in range(34) if t // 9 in suits]
        for j in range(5):
            kind = "pair" if j == 4 else ("seq" if rng.random() < 0.5 else "trip")
            t = int(rng.choice(tiles))
            if kind == "seq":
                if t >= 27 or t % 9 > 6:
                    t = 9 * int(rng.integers(0, 3)) + int(rng.integers(0, 7))
                need = [t, t + 1, t + 2]
            else:
                need = [t] * (2 if kind == "pair" else 3)
            meld = j < n_melds
            if meld and kind == "trip" and rng.random() < 0.5:
                need = [t] * 4
            for x in need:
                counts[x] += 1
            if meld:
                mk = CHI_MELD if kind == "seq" else (PONG_MELD if len(need) == 3 else int(rng.choice([DIRECT_KONG, ADDED_KONG, CONCEALED_KONG])))
                melds.append((mk, t, need))
        if (counts > 4).any():
            continue
        full = counts.copy()
        for _, _, need in melds:
            for x in need:
                full[x] -= 1
        if ok:
            return full, melds


def _seven_pairs(rng):
    full = np.zeros(34, np.int64)
    for t in rng.choice(34, size=7):
        full[t] += 2
    if (full > 4).any():
        return _seven_pairs(rng)
    return full, []


def _lanpai(rng):
    while True:
        full = np.zeros(34, np.int64)
        honors = rng.random() < 0.3
        pool = list(range(27, 34)) if honors else []
        suited = [t for t in range(27)]
        rng.shuffle(suited)
        chosen = list(pool)
        for t in suited:
            if len(chosen) >= 14:
                break
            if all(not (c < 27 and c // 9 == t // 9 and abs(c - t) < 3) for c in chosen):
                chosen.append(t)
        for t in (list(range(27, 34)) if not honors else []):
            if len(chosen) < 14:
                chosen.append(t)
        full[chosen[:14]] = 1
        if handk.lanpai(full.astype(np.int8)):
            return full, []


@pytest.mark.parametrize("mode", ["multiply", "add", "max"])
def test_value_equals_the_scorer(mode):
    opts = load_rules("gejiu", options={"gejiu_combine": mode})
    rng = np.random.default_rng(["multiply", "add", "max"].index(mode))
    rows = []
    for i in range(1500):
        full, melds = (_standard, _standard, _seven_pairs, _lanpai)[i % 4](rng)
        w = int(rng.choice(np.flatnonzero(full)))
        has_kong = any(mk >= DIRECT_KONG for mk, _, _ in melds)
        how = str(rng.choice(["discard", "self-draw", "rob"]))
        after_kong = how == "self-draw" and has_kong and rng.random() < 0.5
        concealed = full.copy()
        concealed[w] -= 1
        ms = tuple(Meld(_LETTER[mk], tuple(need), None if mk in (CONCEALED_KONG,) else 1) for mk, t, need in melds)
        ctx = G.GejiuContext(how=how, after_kong=after_kong)
        score = G.score_win(concealed, ms, w, ctx, opts)
        rows.append((full, melds, after_kong, how == "rob", score.value if score.legal else 0, score))
    n = len(rows)
    fulls = np.array([r[0] for r in rows], np.int8)
    mks = np.zeros((n, 4), np.int8)
    mts = np.zeros((n, 4), np.int8)
    nms = np.zeros(n, np.int8)
    for i, (_, melds, _, _, _, _) in enumerate(rows):
        nms[i] = len(melds)
        for j, (mk, t, _) in enumerate(melds):
            mks[i, j], mts[i, j] = mk, t
    out = np.zeros(n, np.int64)
    gjscore.value_batch(
        fulls, mks, mts, nms, np.array([r[2] for r in rows]), np.array([r[3] for r in rows]), gjscore.config(opts), out
    )
    want = np.array([r[4] for r in rows])
    assert (want > 0).all()
    bad = np.flatnonzero(out != want)
    assert not len(bad), [(i, rows[i][:4], int(out[i]), int(want[i])) for i in bad[:3]]
    assert len(set(want.tolist())) >= 5  # many different values were compared
    # the fan rows the kernel writes for a result (gjscore.reading_fans): the scorer's patterns in its order and V
    fan_rows = np.zeros((n, fanrow.FAN_SLOTS), np.int64)
    gjscore.fans_batch(fulls, mks, mts, nms, np.array([r[2] for r in rows]), np.array([r[3] for r in rows]),
                       gjscore.config(opts), fan_rows)
    checked = 0
    for i, row in enumerate(rows):
        got = fanrow.read(fan_rows[i], G.PATTERN_ORDER)
        if got is not None:
            score = row[5]
            assert (list(got[0].items()), got[1], got[2]) == (list(score.fans.items()), score.value, None), row[:4]
            checked += 1
    assert checked > n * 0.9
