"""The compiled player's own hand arithmetic equals the Python one on random hands of every variant.

The compiled player (agents/players/fastplay.py) keeps its own copies of
shanten, ukeire and the plan shanten (blocks-form tables and prepared "evaluation slots", not the Python functions).
:meth:`~agents.players.fastplay.FastPlayer.hand_numbers` returns what those copies compute, and this property test
(hypothesis, derandomized in the suite) holds them to :mod:`mjenv.encoding.shanten` and :mod:`agents.players.plans`
on random hands of each variant's tiles: mostly near-complete (sets and a pair, then a few tiles swapped), with
0-4 melds, ready or about to discard, and live counts below 4.  Equal must be:

* shanten (standard, and seven pairs where the family counts them) of every hand;
* shanten, live improving tiles and the improving kinds (those with a live copy) of every 3k+1-tile hand;
* for every held tile of a 3k+2-tile hand, the standard shanten, shanten, live improving tiles and improving
  kinds of the hand less that tile, computed through the prepared slot as the decisions do;
* the all-triplets shanten and ukeire, the flush plans' shanten in each suit, and Gejiu's 烂牌 shanten and ukeire.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.players.fastplay import PC_FLUSH_HONORS, PC_LANPAI, PC_SP, FastPlayer
from agents.players.plans import lanpai_shanten, lanpai_ukeire, plan_shanten, triplets_shanten, triplets_ukeire
from mjenv.encoding.shanten import shanten, shanten_standard, ukeire
from mjenv.rules.options import VARIANTS, tile_kinds

SUIT = np.arange(34) // 9
BITS = np.int64(1) << np.arange(34, dtype=np.int64)
_PLAYERS: dict[str, FastPlayer] = {}


def _player(variant: str) -> FastPlayer:
    if variant not in _PLAYERS:
        _PLAYERS[variant] = FastPlayer(variant)  # the variant's default rules
    return _PLAYERS[variant]


def random_hands(rng: np.random.Generator, kinds: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(hands int8 [n, 34], melds [n])`` of the variant's ``kinds``: 14 - 3 x melds tiles (about to discard) or
    one fewer (ready to draw); seven in ten built as sets and a pair, then up to three tiles swapped."""
    ks = np.flatnonzero(kinds)
    hands = np.zeros((n, 34), np.int8)
    melds = rng.integers(0, 5, n)
    for i in range(n):
        size = 14 - 3 * melds[i] - rng.integers(0, 2)
        h = np.zeros(34, np.int64)
        if rng.random() < 0.7:
            for _ in range(4 - melds[i]):
                t = rng.choice(ks)
                if t < 27 and t % 9 <= 6 and kinds[t + 1] and kinds[t + 2] and rng.random() < 0.6:
                    h[t : t + 3] += 1
                else:
                    h[t] += 3
            h[rng.choice(ks)] += 2
            h = np.minimum(h, 4)
        while h.sum() > size:
            h[rng.choice(np.flatnonzero(h))] -= 1
        while h.sum() < size:
            t = rng.choice(ks)
            h[t] += h[t] < 4
        for _ in range(rng.integers(0, 4)):
            a, b = rng.choice(np.flatnonzero(h)), rng.choice(ks)
            if a != b and h[b] < 4:
                h[a] -= 1
                h[b] += 1
        hands[i] = h
    return hands, melds


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(sorted(VARIANTS)), st.integers(0, 2**32 - 1))
def test_fast_players_hand_numbers_equal_the_python_ones(variant, seed):
    fp = _player(variant)
    kinds, sp = tile_kinds(variant, fp.opts), bool(fp.cfg[PC_SP])
    rng = np.random.default_rng(seed)
    hands, melds = random_hands(rng, kinds, 48)
    live = (np.clip(4 - hands - rng.integers(0, 3, hands.shape), 0, 4) * kinds).astype(np.int64)
    got = fp.hand_numbers(hands, melds, live)

    assert (got["shanten"] == shanten(hands, melds, seven_pairs=sp)).all()
    draw = (hands.sum(1) + 3 * melds) % 3 == 1
    s, acc, imp = ukeire(hands[draw], melds[draw], live[draw], kinds, seven_pairs=sp)
    assert (got["ukeire_shanten"][draw] == s).all() and (got["ukeire"][draw] == acc).all()
    assert (got["improving"][draw] == ((imp & (live[draw] > 0)) @ BITS)).all()

    assert (got["triplets_shanten"] == triplets_shanten(hands, melds)).all()
    assert (got["triplets_ukeire"] == triplets_ukeire(hands, melds, live)).all()
    for p in range(3):
        allowed = (SUIT == p) | ((SUIT == 3) & bool(fp.cfg[PC_FLUSH_HONORS]))
        assert (got["flush_shanten"][:, p] == plan_shanten(hands, melds, allowed, sp)).all()
    if fp.cfg[PC_LANPAI]:
        assert (got["lanpai_shanten"] == lanpai_shanten(hands, melds)).all()
        concealed = melds == 0
        assert (got["lanpai_ukeire"][concealed] == lanpai_ukeire(hands[concealed], live[concealed])).all()

    checked = 0
    for i in np.flatnonzero(~draw):
        for t in np.flatnonzero(hands[i]):
            h = hands[i].copy()
            h[t] -= 1
            s, acc, imp = ukeire(h[None], melds[i], live[i][None], kinds, seven_pairs=sp)
            assert got["after_standard"][i, t] == shanten_standard(h[None], melds[i])[0]
            assert (got["after_shanten"][i, t], got["after_ukeire"][i, t]) == (s[0], acc[0])
            assert got["after_improving"][i, t] == ((imp[0] & (live[i] > 0)) @ BITS)
            checked += 1
        assert (got["after_shanten"][i, hands[i] == 0] == -1).all()
    assert checked > 0 or draw.all()


def test_hand_numbers_refuses_bad_hands():
    fp = _player("kawuxing3")
    for hands, melds, message in ((np.full((1, 34), 5), 0, "counts 0..4"), (np.zeros((1, 33)), 0, "shape"),
                                  (np.eye(34, dtype=int)[:1] * 4, 4, "n_melds")):
        with pytest.raises(ValueError, match=message):
            fp.hand_numbers(hands, melds, np.zeros((1, 34), int))
