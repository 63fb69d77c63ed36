"""The compiled Yangzhou verdict (mjenv.engine.yzscore) equals score_win's legality, T and B.

Random complete hands (narrow tile pools and sequence-heavy hands so that the 板 / 龙 / 副同 / 双飘 fans,
flushes, all-triplets and dragon or wind sets are frequent; chi, pong and the three kong kinds as melds),
hands built near the fan minimum, random seat and round winds, discard, rob and self-draw, missed-win locks
with and without a 大吊车 tile, and both value columns with several fan minimums.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from mjenv.engine import fanrow, handk
from mjenv.engine import yzscore as YZ
from mjenv.engine.family import settled_reading
from mjenv.rules.hand import READING_TIE
from mjenv.rules.options import YangzhouOptions
from mjenv.rules.scoring import yangzhou as Y
from mjenv.rules.scoring.diedaohu import LouhuLock
from mjenv.tiles import Meld
from tests.draws import pick

_MELD_KINDS = ((1, "P"), (2, "C"), (3, "K"), (4, "A"), (5, "X"))  # engine code, notation letter
_HOW = {"discard": YZ.HOW_DISCARD, "self-draw": YZ.HOW_SELF_DRAW, "rob": YZ.HOW_ROB}


def _random_hand(rng):
    """(full concealed counts incl. the winning tile, melds as (code, tile)) of a random complete hand."""
    while True:
        counts = np.zeros(34, np.int64)
        style = rng.random()
        if style < 0.3:  # one or two suits (flushes), maybe honors
            suits = rng.choice(3, size=int(rng.integers(1, 3)), replace=False)
            pool = [int(9 * s + r) for s in suits for r in range(9)]
            if rng.random() < 0.5:
                pool += list(rng.choice(np.arange(27, 34), size=int(rng.integers(1, 4)), replace=False))
        elif style < 0.4:  # honors only
            pool = list(range(27, 34))
        else:
            pool = list(rng.choice(34, size=int(rng.integers(3, 12)), replace=False))
        pool = [int(t) for t in pool]
        seq_bias = rng.random()
        melds = []
        n_melds = int(rng.integers(0, 5)) if rng.random() < 0.7 else 0
        starts = [t for t in pool if t < 27 and t % 9 <= 6]
        for k in range(4):
            if starts and rng.random() < seq_bias:
                t = pick(rng, starts)
                seq = True
            else:
                t = pick(rng, pool)
                seq = False
            if k < n_melds:
                if seq:
                    melds.append((2, t))
                    counts[t : t + 3] += 1
                else:
                    code = (1, 3, 4, 5)[int(rng.integers(0, 4))]
                    melds.append((code, t))
                    counts[t] += 4 if code >= 3 else 3  # counted for the copy limit, removed below
            elif seq:
                counts[t : t + 3] += 1
            else:
                counts[t] += 3
        counts[pick(rng, pool)] += 2
        if counts.max() > 4:
            continue
        for code, t in melds:
            if code == 2:
                counts[t : t + 3] -= 1
            else:
                counts[t] -= 4 if code >= 3 else 3
        return counts, melds


def _cases(seed, n_mixes, per_mix):
    rng = np.random.default_rng(seed)
    for _ in range(n_mixes):
        style = ("standard", "new")[int(rng.integers(2))]
        opts = YangzhouOptions(
            yz_style=style,
            min_fan=pick(rng, (0, 1, 10, 15, 16, 20, 25, 40)),
            louhu=("on", "off")[int(rng.integers(2))],
        )
        for _ in range(per_mix):
            full, melds = _random_hand(rng)
            w = int(pick(rng, np.flatnonzero(full)))
            h = full.copy()
            h[w] -= 1
            how = ("discard", "self-draw", "rob")[int(rng.choice(3, p=[0.5, 0.35, 0.15]))]
            locked = bool(rng.random() < 0.3)
            dd = None
            if locked and rng.random() < 0.5:
                dd = w if rng.random() < 0.6 else int(rng.integers(34))
            ctx = Y.YangzhouContext(how, 27 + int(rng.integers(4)), 27 + int(rng.integers(4)), LouhuLock(locked, dd))
            yield opts, h, w, melds, ctx


@functools.lru_cache(maxsize=None)
def _config(opts):
    """YZ.config of one options set, made once: the cases share their options."""
    return YZ.config(opts)


def _verdict(opts, h, w, melds, ctx):
    """(legal, T, B) from the compiled code."""
    mk = np.zeros((1, 4), np.int8)
    mt = np.zeros((1, 4), np.int8)
    for j, (code, t) in enumerate(melds):
        mk[0, j], mt[0, j] = code, t
    out = np.zeros((1, 3), np.int64)
    yc = _config(opts)
    YZ.best_batch(
        h.astype(np.int8)[None], np.array([w]), mk, mt, np.array([len(melds)]),
        np.array([ctx.how == "self-draw"]), np.array([ctx.seat_wind]), np.array([ctx.round_wind]), yc,
        handk.tables(), out,
    )
    qualifies, total, big = (bool(out[0, 0]), int(out[0, 1]), int(out[0, 2]))
    legal = qualifies
    if ctx.how != "self-draw":
        legal = bool(
            YZ.claim_batch_one(h.astype(np.int8), w, mk[0], mt[0], len(melds), ctx.seat_wind, ctx.round_wind,
                               ctx.lock.locked, -1 if ctx.lock.dadiaoche_tile is None else ctx.lock.dadiaoche_tile,
                               yc, handk.tables())
        )
    return legal, total, big


def _notation(melds):
    out = []
    for code, t in melds:
        letter = dict(_MELD_KINDS)[code]
        tiles = (t, t + 1, t + 2) if code == 2 else (t,) * (4 if code >= 3 else 3)
        out.append(Meld(letter, tiles))
    return tuple(out)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_verdict_equals_score_win(seed):
    checked = legal = 0
    for opts, h, w, melds, ctx in _cases(seed, 40, 150):
        want = Y.score_win(h, _notation(melds), w, ctx, opts)
        got = _verdict(opts, h, w, melds, ctx)
        assert got == (want.legal, want.total, want.big_fan_value), (opts, h.tolist(), w, melds, ctx, want)
        checked += 1
        legal += want.legal
    assert checked == 40 * 150
    assert 0.1 * checked < legal < 0.9 * checked  # both verdicts are common


def _near_minimum_cases(seed, n):
    """Legal-by-shape hands whose T lies within a few fans of the minimum (the verdict's edge)."""
    rng = np.random.default_rng(seed)
    found = 0
    while found < n:
        opts = YangzhouOptions(yz_style=("standard", "new")[int(rng.integers(2))])
        full, melds = _random_hand(rng)
        w = int(pick(rng, np.flatnonzero(full)))
        h = full.copy()
        h[w] -= 1
        how = ("discard", "self-draw", "rob")[int(rng.integers(3))]
        ctx = Y.YangzhouContext(how, 27 + int(rng.integers(4)), 27 + int(rng.integers(4)))
        s = Y.score_win(h, _notation(melds), w, ctx, opts)
        if s.big_fan_value == 0 or abs(s.total - opts.min_fan) > 3:
            continue
        for min_fan in (s.total - 1, s.total, s.total + 1):
            yield dataclasses.replace(opts, min_fan=min_fan), h, w, melds, ctx
        found += 1


def test_near_minimum():
    seen = set()
    for opts, h, w, melds, ctx in _near_minimum_cases(7, 1500):
        want = Y.score_win(h, _notation(melds), w, ctx, opts)
        got = _verdict(opts, h, w, melds, ctx)
        assert got == (want.legal, want.total, want.big_fan_value), (opts, h.tolist(), w, melds, ctx, want)
        seen.add(want.legal)
    assert seen == {True, False}


def _fans(opts, h, w, melds, ctx):
    """(reading code, fan row) from the compiled ``best`` and ``reading_fans``."""
    mk = np.zeros((1, 4), np.int8)
    mt = np.zeros((1, 4), np.int8)
    for j, (code, t) in enumerate(melds):
        mk[0, j], mt[0, j] = code, t
    codes = np.zeros(1, np.int64)
    rows = np.zeros((1, fanrow.FAN_SLOTS), np.int64)
    YZ.fans_batch(
        h.astype(np.int8)[None], np.array([w]), mk, mt, np.array([len(melds)]),
        np.array([ctx.how == "self-draw"]), np.array([ctx.seat_wind]), np.array([ctx.round_wind]), _config(opts),
        handk.tables(), codes, rows,
    )
    return int(codes[0]), rows[0]


@pytest.mark.parametrize("seed", [4, 5])
def test_reading_fans_equal_score_win(seed):
    """The fan row of the best reading (when one reading alone is the best) holds score_win's fans in its order and
    its T, and the score made from it (``yangzhou.score_settled``) is score_win's for every legal win."""
    rows = legal = 0
    seen = set()
    for opts, h, w, melds, ctx in _cases(seed, 30, 150):
        ctx = dataclasses.replace(ctx, lock=LouhuLock())  # the kernel settles wins it judged legal
        want = Y.score_win(h, _notation(melds), w, ctx, opts)
        code, row = _fans(opts, h, w, melds, ctx)
        if code < 0 or code & READING_TIE or not want.fans:  # (no fan at all: no big fan, never a win)
            assert int(row[fanrow.ROW_N]) == 0
            continue
        read = fanrow.read(row, Y.FAN_ORDER)
        assert read is not None, (h.tolist(), w, melds)
        fans, total, cap = read
        assert list(fans.items()) == list(want.fans.items()), (opts, h.tolist(), w, melds, ctx, want)
        assert (total, cap) == (want.total, None)
        r = settled_reading(h, w, code)
        assert r == want.reading
        if want.legal:
            assert Y.score_settled(r, _notation(melds), fans, total, ctx.how, opts) == want
            legal += 1
        rows += 1
        seen.update(fans)
    assert rows > 0.8 * 30 * 150 and legal > 0.1 * rows
    assert len(seen) >= 35  # most big fans and every small fan were written


def test_config_reads_the_scorer_tables():
    for style in ("standard", "new"):
        yc = YZ.config(YangzhouOptions(yz_style=style, min_fan=17))
        col = 1 if style == "new" else 0
        assert yc.shape == (YZ.N_YZ,) and yc[YZ.YZ_ON] == 1 and yc[YZ.YZ_MIN_FAN] == 17
        assert yc[YZ.YZ_COMBO_QING + YZ.STRUCTURE.index("tieban")] == Y.BIG_FANS["tiebanqing"][2][col]
        assert yc[YZ.YZ_COMBO_HUN + YZ.STRUCTURE.index("yiban")] == Y.BIG_FANS["hunyise"][2][col] + Y.BIG_FANS["yiban"][2][col]
    assert YZ.STRUCTURE is Y.STRUCTURE


@pytest.mark.parametrize("variant,options", [("yangzhou", {}), ("yangzhou_new", {}), ("yangzhou", {"min_fan": 0, "chi": "off"})])
def test_engine_verdicts_in_every_round(variant, options):
    """In whole games whose sessions stand in every round (round winds East..North; tests/differential.py plays
    first rounds only), each claim window's win bits and each self-draw win bit the kernel sets equal the
    Python scorer's legality for that state (the pendings the engine handled before)."""
    import dataclasses as dc

    from mjenv.encoding import actions as A
    from mjenv.engine.core import Engine
    from mjenv.engine.state import CLAIM, ROB, TURN
    from mjenv.rules import hand as H

    B = 48
    eng = Engine(variant, B, options=options)
    rng = np.random.default_rng(11)
    checked = {"window": 0, "self": 0, "complete": 0, "legal": 0}
    for rep in range(6):
        eng.reset(seed=rep)
        for b in range(B):  # move each session to a random point of its 4 rounds, then deal that hand
            eng.sessions[b] = dc.replace(eng.sessions[b], passes=int(rng.integers(0, 16)), dealer=int(rng.integers(4)))
        eng.reset(seed=100 + rep, continue_match=True, dealer=[s.dealer for s in eng.sessions])
        winds = {Y.round_wind(s.round_index) for s in eng.sessions}
        assert len(winds) == 4
        st = eng.state
        while not eng.done.all():
            for b in np.flatnonzero(~eng.done):
                if st.phase[b] in (CLAIM, ROB) and (st.claim_reply[b] < 0).all():
                    t = int(st.claim_tile[b])
                    for s in range(4):
                        if s == st.claim_from[b]:
                            continue
                        h = st.hand[b, s].copy()
                        h[t] += 1
                        complete = bool(H.readings(h))
                        want = complete and eng._claim_score(b, s, t, st.phase[b] == ROB).legal
                        checked["complete"] += complete
                        assert bool(st.claim_opts[b, s] & 1) == want, (b, s)
                        checked["window"] += 1
                        checked["legal"] += want
                elif st.phase[b] == TURN and eng.mask[b].any():
                    s = int(st.cur[b])
                    complete = bool(H.readings(st.hand[b, s]))
                    want = complete and eng._self_draw_score(b).legal
                    checked["complete"] += complete
                    assert bool(eng.mask[b, A.WIN]) == want, b
                    checked["self"] += 1
                    checked["legal"] += want
            eng.step(_greedy(eng, rng))
    assert checked["window"] > 500 and checked["self"] > 500 and checked["complete"] > 300, checked
    assert checked["legal"] > 20, checked


def _greedy(eng, rng, take=0.6):
    """A shape-greedy player, so that hands complete often: take a win with probability ``take`` (passing one locks the
    player), discard a tile that keeps the hand ready, else a lone tile, else any; pong / chi half the time."""
    from mjenv.encoding import actions as A
    from mjenv.rules import hand as H

    acts = np.zeros(eng.batch_size, np.int64)
    for b in np.flatnonzero(~eng.done):
        m = eng.mask[b]
        legal = np.flatnonzero(m)
        if m[A.WIN] and rng.random() < take:
            acts[b] = A.WIN
            continue
        discards = [a for a in legal if a < 34]
        if discards:
            h = eng.state.hand[b, int(eng.state.actor[b])]
            ready = H.ready_after_discards(h)
            keep = [a for a in discards if ready[a]]
            lone = [a for a in discards if h[a] == 1 and (a >= 27 or not any(
                0 <= a + d < 27 and (a + d) // 9 == a // 9 and h[a + d] for d in (-2, -1, 1, 2)))]
            pool = keep or lone or discards
            acts[b] = pool[rng.integers(len(pool))]
        else:
            claims = [a for a in legal if a not in (A.WIN, A.PASS)]
            acts[b] = claims[rng.integers(len(claims))] if claims and rng.random() < 0.5 else (
                A.PASS if m[A.PASS] else legal[rng.integers(len(legal))])
    return acts
