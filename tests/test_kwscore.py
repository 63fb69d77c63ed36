"""The compiled Kawuxing claim verdict (mjenv.engine.kwscore) equals score_win's legality and V_D.

Random complete hands (standard and seven pairs, with pongs and the three kong kinds as melds), random
situations (discard or rob, 亮倒 of winner and discarder, kong chain position, last tile, locks) and random
option mixes over every option the verdict reads.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mjenv.engine import fanrow
from mjenv.engine import kwscore as KW
from mjenv.rules.options import KawuxingOptions, tile_kinds
from mjenv.rules.scoring import kawuxing as K
from mjenv.tiles import Meld
from tests.draws import pick

_CHOICES = {
    "fan_combine": ("multiply", "add"),
    "cap": (8, 16, None),
    "cap_shuanglong_16": ("on", "off"),
    "kaikou": ("none", "soft", "hard"),
    "louhu_exception": ("off", "higher"),
    "qianggang": ("on", "off"),
    "liang_vs_liang": ("off", "on"),
    "liang_loser_double": ("off", "on"),
    "gang_stack": ("off", "on"),
    "haidi": ("off", "zimo", "zimo_and_pao"),
    "ming_sigui_scope": ("win_tile", "qingyise_any", "any"),
    "an_sigui_scope": ("win_tile", "qingyise_any", "any"),
    "an_sigui_split": ("any", "triplet_seq"),
    "sigui_count": ("once", "each"),
    "longqidui": ("any_four", "win_tile"),
    "shuanglong": ("on", "off"),
    "shouzhuayi": ("melded_x4", "pph_single_x2"),
}
_MELD_KINDS = ((1, "P"), (3, "K"), (4, "A"), (5, "X"))  # engine code, notation letter


def _random_hand(rng, tiles, n_players):
    """(full concealed counts incl. the winning tile, melds as (code, tile)) of a random complete hand."""
    while True:
        counts = np.zeros(34, np.int64)
        if rng.random() < 0.15:  # seven pairs, maybe with fours, often one suit
            pool = tiles if rng.random() < 0.5 else [t for t in tiles if t // 9 == tiles[0] // 9]
            for _ in range(7):
                counts[pick(rng, pool)] += 2
            if counts.max() <= 4:
                return counts, []
            continue
        # narrow pools make triplets, fours, one-suit hands and dragons frequent
        pool = list(rng.choice(tiles, size=int(rng.integers(3, 9)), replace=False))
        melds = []
        n_melds = int(rng.integers(0, 5))
        ok = True
        for k in range(4):
            t = int(pick(rng, pool))
            if k < n_melds:
                code = _MELD_KINDS[int(rng.integers(0, 4))][0]
                melds.append((code, t))
                counts[t] += 4 if code >= 3 else 3  # counted for the copy limit, removed below
            elif rng.random() < 0.5 and t < 27 and t % 9 <= 6 and t + 2 in tiles:
                counts[t : t + 3] += 1
            else:
                counts[t] += 3
        counts[pick(rng, pool)] += 2
        if counts.max() > 4:
            ok = False
        if ok:
            for code, t in melds:
                counts[t] -= 4 if code >= 3 else 3
            return counts, melds


def _cases(seed, n_mixes, per_mix, n_players=3):
    rng = np.random.default_rng(seed)
    variant = f"kawuxing{n_players}"
    for _ in range(n_mixes):
        opts = KawuxingOptions(**{k: v[int(rng.integers(len(v)))] for k, v in _CHOICES.items()})
        tiles = [int(t) for t in np.flatnonzero(tile_kinds(variant, opts))]
        for _ in range(per_mix):
            full, melds = _random_hand(rng, tiles, n_players)
            held = np.flatnonzero(full)
            w = int(pick(rng, held))
            h = full.copy()
            h[w] -= 1
            how = "rob" if rng.random() < 0.2 else "discard"
            ctx = dict(
                how=how,
                revealed=bool(rng.random() < 0.3),
                kong_position=0 if how == "rob" or rng.random() < 0.7 else int(rng.integers(1, 4)),
                last_tile=how == "discard" and bool(rng.random() < 0.2),
                winner_has_konged=bool(rng.random() < 0.2),
                discarder_revealed=bool(rng.random() < 0.3),
                missed_win_lock=None if rng.random() < 0.7 else pick(rng, (1, 2, 4, 8, 16)),
            )
            yield opts, h, w, melds, ctx


@pytest.mark.parametrize("n_players,seed", [(3, 1), (3, 2), (4, 3)])
def test_verdict_equals_score_win(n_players, seed):
    checked = 0
    for opts, h, w, melds, ctx in _cases(seed, 40, 150, n_players):
        notation = tuple(Meld(dict(_MELD_KINDS)[code], (t,) * (4 if code >= 3 else 3)) for code, t in melds)
        want = K.score_win(h, notation, w, K.WinContext(**ctx), opts, n_players)
        mk = np.zeros((1, 4), np.int8)
        mt = np.zeros((1, 4), np.int8)
        for j, (code, t) in enumerate(melds):
            mk[0, j], mt[0, j] = code, t
        legal = np.zeros(1, bool)
        value_d = np.zeros(1, np.int64)
        KW.verdict_batch(
            h.astype(np.int8)[None], np.array([w]), mk, mt, np.array([len(melds)]),
            np.array([KW.HOW_ROB if ctx["how"] == "rob" else KW.HOW_DISCARD]), np.array([ctx["kong_position"]]),
            np.array([ctx["last_tile"]]), np.array([ctx["revealed"]]), np.array([ctx["discarder_revealed"]]),
            np.array([ctx["winner_has_konged"]]), np.array([ctx["missed_win_lock"] or 0]), KW.config(opts),
            legal, value_d,
        )
        got = (bool(legal[0]), int(value_d[0]))
        assert got == (want.legal, want.value_d), (opts, h.tolist(), w, melds, ctx, want)
        checked += 1
    assert checked == 40 * 150


def test_config_covers_every_option_read():
    opts = KawuxingOptions()
    kc = KW.config(opts)
    assert kc.shape == (KW.N_KW,)
    assert set(_CHOICES) <= {f.name for f in dataclasses.fields(KawuxingOptions)}


@pytest.mark.parametrize("n_players,seed", [(3, 4), (4, 5)])
def test_reading_fans_equal_score_win(n_players, seed):
    # the fans, V and cap the kernel writes for a result (kwscore.reading_fans into a fan row) are score_win's, in
    # its order, for discards, robs and self-draws under random option mixes (ties are left to the Python scorer)
    rng = np.random.default_rng(seed)
    hows = {"discard": KW.HOW_DISCARD, "rob": KW.HOW_ROB, "self-draw": KW.HOW_SELF_DRAW}
    checked = ties = 0
    mixes: dict = {}
    for opts, h, w, melds, ctx in _cases(seed, 30, 100, n_players):
        if rng.random() < 0.4:  # a self-draw: gangkai instead of gangpao, haidi under zimo, no lock
            ctx.update(how="self-draw", missed_win_lock=None, discarder_revealed=False,
                       last_tile=bool(rng.random() < 0.3))
        mixes.setdefault(opts, []).append((h, w, melds, ctx))
    for opts, cases in mixes.items():
        n = len(cases)
        fulls = np.zeros((n, 34), np.int8)
        mk = np.zeros((n, 4), np.int8)
        mt = np.zeros((n, 4), np.int8)
        for i, (h, w, melds, ctx) in enumerate(cases):
            fulls[i] = h
            fulls[i, w] += 1
            for j, (code, t) in enumerate(melds):
                mk[i, j], mt[i, j] = code, t
        rows = np.zeros((n, fanrow.FAN_SLOTS), np.int64)
        KW.fans_batch(
            fulls, np.array([c[1] for c in cases]), mk, mt, np.array([len(c[2]) for c in cases]),
            np.array([c[3]["revealed"] for c in cases]), np.array([c[3]["kong_position"] for c in cases]),
            np.array([hows[c[3]["how"]] for c in cases]), np.array([c[3]["last_tile"] for c in cases]),
            KW.config(opts), rows,
        )
        for i, (h, w, melds, ctx) in enumerate(cases):
            notation = tuple(Meld(dict(_MELD_KINDS)[code], (t,) * (4 if code >= 3 else 3)) for code, t in melds)
            want = K.score_win(h, notation, w, K.WinContext(**ctx), opts, n_players)
            got = fanrow.read(rows[i], K.FAN_ORDER)
            if got is None:
                ties += 1
                continue
            fans, value, cap = got
            assert (list(fans.items()), value, cap) == (list(want.fans.items()), want.value, want.cap), (
                opts, h.tolist(), w, melds, ctx, want)
            checked += 1
    assert checked > 2700 and ties < checked // 20
