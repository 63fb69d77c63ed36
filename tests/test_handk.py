"""Tests of mjenv.engine.handk: the compiled single-hand kernels equal mjenv.rules.hand and the Gejiu shapes.

Hands are dealt from real walls (the 84 tiles of Kawuxing-3p and all 136), with 0-4 melds taken
from the same wall (so concealed hands have 3k+2 or 3k+1 tiles and ``owned`` counts include melded
copies, kongs and pongs of a held tile giving 4-owned kinds).  Most hands are built to be complete,
one tile off complete, seven pairs or 烂牌, so that every branch of the kernels is exercised; the
tests check that the mix really contains such hands.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mjenv.engine import handk
from mjenv.rules import hand as H
from mjenv.rules.scoring import gejiu as G
from mjenv.tiles import N_KINDS, kinds_mask
from tests.draws import pick

WALLS = {"kawuxing3": kinds_mask(suits="ps", honors="567"), "all": kinds_mask()}
TABS = handk.tables()
N_PER_WALL = 6000  # hands per wall and size class: 12,000 per function and setting


def _groups(kinds: np.ndarray) -> list[tuple[int, ...]]:
    """Every set (triplet or sequence) made of the wall's kinds."""
    ids = np.flatnonzero(kinds).tolist()
    out = [(t, t, t) for t in ids]
    out += [(t, t + 1, t + 2) for t in ids if t < 27 and t % 9 <= 6 and kinds[t + 1] and kinds[t + 2]]
    return out


def _take(avail: np.ndarray, tiles) -> bool:
    """Take ``tiles`` from the wall counts ``avail`` if all are there."""
    need = np.bincount(np.asarray(tiles), minlength=N_KINDS)
    if (need > avail).any():
        return False
    avail -= need
    return True


def _complete(rng, avail, kinds, n_tiles: int) -> np.ndarray | None:
    """A complete standard hand of ``n_tiles`` (3k+2) tiles from the wall, or None if it runs dry."""
    c = np.zeros(N_KINDS, dtype=np.int8)
    pairs = np.flatnonzero(avail >= 2)
    if not pairs.size:
        return None
    p = pick(rng, pairs)
    _take(avail, [p, p])
    c[p] += 2
    groups = _groups(kinds)
    for _ in range((n_tiles - 2) // 3):
        for _try in range(20):
            g = groups[rng.integers(len(groups))]
            if _take(avail, g):
                np.add.at(c, list(g), 1)
                break
        else:
            return None
    return c


def _seven_pairs(rng, avail) -> np.ndarray:
    c = np.zeros(N_KINDS, dtype=np.int8)
    while c.sum() < 14:
        t = pick(rng, np.flatnonzero(avail >= 2))
        _take(avail, [t, t])
        c[t] += 2
    return c


def _spaced_hand(rng, avail, kinds, n_tiles: int) -> np.ndarray:
    """Up to ``n_tiles`` distinct kinds, suited ones of a suit ≥ 3 ranks apart (a 烂牌 candidate)."""
    c = np.zeros(N_KINDS, dtype=np.int8)
    for t in rng.permutation(np.flatnonzero(kinds & (avail > 0))):
        if c.sum() == n_tiles:
            break
        if t < 27:
            lo, hi = t - t % 9, t - t % 9 + 9
            if c[max(lo, t - 2) : min(hi, t + 3)].any():
                continue
        c[t] += 1
        avail[t] -= 1
    return c


def _deal(rng, avail, n_tiles: int) -> np.ndarray:
    ids = np.repeat(np.arange(N_KINDS), avail)
    pick = rng.choice(ids, size=n_tiles, replace=False)
    c = np.bincount(pick, minlength=N_KINDS).astype(np.int8)
    avail -= c
    return c


def _move(rng, c, avail, remove: bool, add: bool) -> None:
    """Return one held tile to the wall and/or draw one tile from it."""
    if remove:
        t = pick(rng, np.flatnonzero(c))
        c[t] -= 1
        avail[t] += 1
    if add:
        t = pick(rng, np.flatnonzero(avail))
        c[t] += 1
        avail[t] -= 1


def _melds(rng, c, avail, kinds, m: int) -> np.ndarray:
    """Counts of ``m`` melds taken from the wall: pongs (often of a held kind), kongs and chows."""
    melded = np.zeros(N_KINDS, dtype=np.int8)
    groups = _groups(kinds)
    for _ in range(m):
        for _try in range(30):
            r = rng.random()
            if r < 0.35 and (cand := np.flatnonzero((c == 1) & (avail >= 3))).size:
                tiles = [pick(rng, cand)] * 3  # pong of a held kind: owned 4 times
            elif r < 0.55 and (cand := np.flatnonzero(avail == 4)).size:
                tiles = [pick(rng, cand)] * 4  # kong
            else:
                tiles = list(groups[rng.integers(len(groups))])
            if _take(avail, tiles):
                np.add.at(melded, tiles, 1)
                break
    return melded


def make_hands(wall: str, tiles_mod3: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` concealed hands (``[n, 34]`` int8, 3k+2 tiles if ``tiles_mod3 == 2`` else 3k+1) and their owned counts."""
    rng = np.random.default_rng(seed)
    kinds = WALLS[wall]
    hands = np.zeros((n, N_KINDS), dtype=np.int8)
    owned = np.zeros((n, N_KINDS), dtype=np.int8)
    for i in range(n):
        while True:
            avail = np.where(kinds, 4, 0).astype(np.int64)
            m = pick(rng, (0, 0, 0, 1, 2, 3, 4))
            size = 14 - 3 * m if tiles_mod3 == 2 else 13 - 3 * m
            kind = pick(rng, ("complete", "complete", "off_one", "seven_pairs", "spaced", "deal"))
            if (kind in ("seven_pairs", "spaced") and m) or (kind == "spaced" and wall != "all"):
                kind = "complete"  # 烂牌 needs 14 kinds: no melds, and more kinds than Kawuxing-3p's 9
            if kind == "deal":
                c = _deal(rng, avail, size)
            elif kind == "spaced":
                c = _spaced_hand(rng, avail, kinds, size)
                if c.sum() < size:
                    continue
                if rng.random() < 0.3:
                    _move(rng, c, avail, True, True)
            else:
                c = _seven_pairs(rng, avail) if kind == "seven_pairs" else _complete(rng, avail, kinds, 14 - 3 * m)
                if c is None:
                    continue
                if tiles_mod3 == 1:  # one tile short of complete: mostly ready
                    _move(rng, c, avail, True, kind == "off_one")
                    if kind == "off_one":
                        _move(rng, c, avail, True, False)
                elif kind == "off_one":  # one tile swapped: often ready after some discard
                    _move(rng, c, avail, True, True)
            if c.sum() != size:
                continue
            hands[i] = c
            owned[i] = c + _melds(rng, c, avail, kinds, m)
            break
    return hands, owned


@pytest.fixture(scope="module", params=list(WALLS))
def data(request):
    """Hands of both size classes from one wall (deterministic seeds)."""
    wall = request.param
    seed = 1 if wall == "all" else 2
    h14, o14 = make_hands(wall, 2, N_PER_WALL, seed)
    h13, o13 = make_hands(wall, 1, N_PER_WALL, seed + 10)
    rng = np.random.default_rng(seed + 20)
    random_kinds = rng.random(N_KINDS) < 0.8
    return {"wall": wall, "h14": h14, "o14": o14, "h13": h13, "o13": o13, "kinds": WALLS[wall], "random_kinds": random_kinds}


def _kinds(data, which: str):
    return None if which == "none" else data["kinds"] if which == "wall" else data["random_kinds"]


def test_hand_mix_covers_the_branches(data):
    """The generated hands really contain complete, ready, seven-pairs, 烂牌 and 4-owned cases."""
    h14, h13, o13, o14 = data["h14"], data["h13"], data["o13"], data["o14"]
    assert set(np.unique(h14.sum(1))) == {2, 5, 8, 11, 14}
    assert set(np.unique(h13.sum(1))) == {1, 4, 7, 10, 13}
    assert np.all(o14 >= h14) and np.all(o14 <= 4) and np.all(o13 <= 4)
    assert 0.2 < H.is_complete(h14).mean() < 0.8
    assert H.is_complete(h14, seven_pairs=True).sum() > H.is_complete(h14).sum() + 300
    assert 0.2 < H.ready(h13, seven_pairs=True).mean() < 0.9
    blocked = H.wait_mask(h13, owned=o13) != H.wait_mask(h13)
    assert blocked.any(1).sum() > 200  # the owned-4 rule removes waits in many hands
    if data["wall"] == "all":  # 烂牌 needs 14 kinds: only the full wall has them
        assert G.lanpai_mask(h14).sum() > 300
        assert G.lanpai_wait_mask(h13).any(1).sum() > 300
        assert G.qixing_mask(h14).sum() > 20


@pytest.mark.parametrize("seven_pairs", [False, True])
def test_is_complete(data, seven_pairs):
    for hs in (data["h14"], data["h13"]):  # 3k+1 hands are never complete: both must say so
        out = np.zeros(len(hs), dtype=bool)
        handk.is_complete_batch(hs, seven_pairs, TABS, out)
        np.testing.assert_array_equal(out, H.is_complete(hs, seven_pairs=seven_pairs))
    for h in data["h14"][:300]:  # the per-hand kernel called from Python, against the single-hand path
        assert handk.is_complete(h, seven_pairs, TABS) == H.is_complete(h, seven_pairs=seven_pairs)


@pytest.mark.parametrize("seven_pairs", [False, True])
@pytest.mark.parametrize("which_kinds", ["none", "wall", "random"])
@pytest.mark.parametrize("with_owned", [False, True])
def test_wait_mask(data, seven_pairs, which_kinds, with_owned):
    hs = data["h13"]
    kinds = _kinds(data, which_kinds)
    owned = data["o13"] if with_owned else None
    out = np.zeros(hs.shape, dtype=bool)
    handk.wait_mask_batch(hs, seven_pairs, kinds, owned, TABS, out)
    expected = H.wait_mask(hs, seven_pairs=seven_pairs, kinds=kinds, owned=owned)
    np.testing.assert_array_equal(out, expected)
    row = np.zeros(N_KINDS, dtype=bool)
    for i in range(200):
        own = None if owned is None else owned[i]
        ready = handk.wait_mask(hs[i], seven_pairs, kinds, own, TABS, row)
        np.testing.assert_array_equal(row, H.wait_mask(hs[i], seven_pairs=seven_pairs, kinds=kinds, owned=own))
        assert ready == row.any()


@pytest.mark.parametrize("seven_pairs", [False, True])
@pytest.mark.parametrize("which_kinds", ["none", "wall", "random"])
@pytest.mark.parametrize("with_owned", [False, True])
def test_ready_after_discards(data, seven_pairs, which_kinds, with_owned):
    hs = data["h14"]
    kinds = _kinds(data, which_kinds)
    owned = data["o14"] if with_owned else None
    out = np.zeros(hs.shape, dtype=bool)
    handk.ready_after_discards_batch(hs, seven_pairs, kinds, owned, TABS, out)
    expected = H.ready_after_discards(hs, seven_pairs=seven_pairs, kinds=kinds, owned=owned)
    np.testing.assert_array_equal(out, expected)
    assert expected.any(1).mean() > 0.2
    row = np.zeros(N_KINDS, dtype=bool)
    for i in range(200):
        own = None if owned is None else owned[i]
        some = handk.ready_after_discards(hs[i], seven_pairs, kinds, own, TABS, row)
        single = H.ready_after_discards(hs[i], seven_pairs=seven_pairs, kinds=kinds, owned=own)
        np.testing.assert_array_equal(row, single)
        assert some == row.any()


def test_bit_forms_match_array_forms(data):
    """wait_bits / discard_ready_bits with kinds_bits / owned_bits equal the array forms."""
    kinds = data["kinds"]
    kb = handk.kinds_bits(kinds)
    assert kb == sum(1 << int(t) for t in np.flatnonzero(kinds))
    row = np.zeros(N_KINDS, dtype=bool)
    for h, o in zip(data["h13"][:300], data["o13"][:300]):
        handk.wait_mask(h, True, kinds, o, TABS, row)
        bits = handk.wait_bits(h, True, TABS) & kb & handk.owned_bits(o)
        assert bits == sum(1 << int(t) for t in np.flatnonzero(row))
    for h, o in zip(data["h14"][:300], data["o14"][:300]):
        handk.ready_after_discards(h, False, kinds, o, TABS, row)
        bits = handk.discard_ready_bits(h, False, kb, handk.owned_bits(o), TABS)
        assert bits == sum(1 << int(t) for t in np.flatnonzero(row))


@pytest.mark.parametrize("seven_pairs", [False, True])
def test_discard_ready_complete(data, seven_pairs):
    """The own turn's pair of answers equals discard_ready_bits and is_complete, and the array forms."""
    kb = handk.kinds_bits(data["kinds"])
    row = np.zeros(N_KINDS, dtype=bool)
    complete = H.is_complete(data["h14"][:1500], seven_pairs=seven_pairs)
    assert complete.any() and not complete.all()
    for i, (h, o) in enumerate(zip(data["h14"][:1500], data["o14"][:1500])):
        ob = handk.owned_bits(o)
        bits, comp = handk.discard_ready_complete(h, seven_pairs, kb, ob, TABS)
        assert bits == handk.discard_ready_bits(h, seven_pairs, kb, ob, TABS)
        assert comp == complete[i]
        handk.ready_after_discards(h, seven_pairs, data["kinds"], o, TABS, row)
        assert bits == sum(1 << int(t) for t in np.flatnonzero(row))


@pytest.mark.parametrize("seven_pairs", [False, True])
def test_is_complete_with(data, seven_pairs):
    """A hand plus one tile: is_complete_with equals is_complete of the hand with the tile added, for every tile,
    and leaves the hand as it was."""
    hs = data["h13"][:400]
    pairs = [(i, t) for i in range(len(hs)) for t in range(N_KINDS) if hs[i, t] < 4]
    plus = hs[[i for i, _ in pairs]].copy()
    plus[np.arange(len(pairs)), [t for _, t in pairs]] += 1
    expected = H.is_complete(plus, seven_pairs=seven_pairs)
    before = hs.copy()
    got = [handk.is_complete_with(hs[i], t, seven_pairs, TABS) for i, t in pairs]
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(hs, before)
    wins = int(expected.sum())
    assert wins > 50  # the mix holds ready hands: both answers are exercised


def test_gejiu_shapes(data):
    h14, h13 = data["h14"], data["h13"]
    out = np.zeros(len(h14), dtype=bool)
    handk.lanpai_batch(h14, out)
    np.testing.assert_array_equal(out, G.lanpai_mask(h14))
    handk.qixing_batch(h14, out)
    np.testing.assert_array_equal(out, G.qixing_mask(h14))
    handk.lanpai_batch(h13, out)  # 13 tiles: never 烂牌
    assert not out.any()
    expected = G.lanpai_wait_mask(h13)
    for i in range(len(h13)):
        bits = handk.lanpai_wait_bits(h13[i])
        assert bits == sum(1 << int(t) for t in np.flatnonzero(expected[i]))
    for h in h14[:300]:
        assert handk.lanpai(h) == G.lanpai_mask(h)
        assert handk.qixing(h) == G.qixing_mask(h)


# ----------------------------------------------------------------------------------- property test

_hand_st = st.tuples(
    st.sampled_from(list(WALLS)),
    st.sampled_from([1, 2]),
    st.integers(0, 2**32 - 1),
    st.booleans(),
    st.sampled_from(["none", "wall", "random"]),
    st.booleans(),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_hand_st, st.lists(st.booleans(), min_size=N_KINDS, max_size=N_KINDS))
def test_property_single_hand(case, random_kinds):
    """Hypothesis picks wall, size class, seed and options; every per-hand kernel equals the numpy path."""
    wall, mod3, seed, seven_pairs, which_kinds, with_owned = case
    (h,), (o,) = make_hands(wall, mod3, 1, seed)
    kinds = None if which_kinds == "none" else WALLS[wall] if which_kinds == "wall" else np.array(random_kinds)
    own = o if with_owned else None
    row = np.zeros(N_KINDS, dtype=bool)
    if mod3 == 2:
        assert handk.is_complete(h, seven_pairs, TABS) == H.is_complete(h, seven_pairs=seven_pairs)
        handk.ready_after_discards(h, seven_pairs, kinds, own, TABS, row)
        np.testing.assert_array_equal(row, H.ready_after_discards(h, seven_pairs=seven_pairs, kinds=kinds, owned=own))
        kb = handk.ALL_TILES if kinds is None else handk.kinds_bits(kinds)
        ob = handk.ALL_TILES if own is None else handk.owned_bits(own)
        bits, comp = handk.discard_ready_complete(h, seven_pairs, kb, ob, TABS)
        assert bits == sum(1 << int(t) for t in np.flatnonzero(row))
        assert comp == H.is_complete(h, seven_pairs=seven_pairs)
        assert handk.lanpai(h) == G.lanpai_mask(h)
        assert handk.qixing(h) == G.qixing_mask(h)
    else:
        handk.wait_mask(h, seven_pairs, kinds, own, TABS, row)
        np.testing.assert_array_equal(row, H.wait_mask(h, seven_pairs=seven_pairs, kinds=kinds, owned=own))
        full = H.wait_mask(h, seven_pairs=seven_pairs)  # a tile completes the hand exactly when it is a wait
        for t in range(N_KINDS):
            if h[t] < 4:
                assert handk.is_complete_with(h, t, seven_pairs, TABS) == full[t]
        assert handk.lanpai_wait_bits(h) == sum(1 << int(t) for t in np.flatnonzero(G.lanpai_wait_mask(h)))


def test_other_dtypes():
    """Counts of any integer dtype give the same answers (numba compiles one version per dtype)."""
    h14, o14 = make_hands("all", 2, 50, 7)
    row = np.zeros(N_KINDS, dtype=bool)
    for dtype in (np.int64, np.uint8):
        for h, o in zip(h14.astype(dtype), o14.astype(dtype)):
            assert handk.is_complete(h, True, TABS) == H.is_complete(h, seven_pairs=True)
            handk.ready_after_discards(h, True, None, o, TABS, row)
            np.testing.assert_array_equal(row, H.ready_after_discards(h, seven_pairs=True, owned=o))


# ----------------------------------------------------------------------------------- on-disk cache

_EXERCISE = textwrap.dedent(
    """
    import numpy as np
    from mjenv.engine import handk
    tabs = handk.tables()
    h = np.zeros(34, dtype=np.int8); h[:14] = 1
    o = h.copy(); row = np.zeros(34, dtype=bool); kinds = np.ones(34, dtype=bool)
    handk.is_complete(h, True, tabs)
    handk.wait_mask(h, True, kinds, o, tabs, row)
    handk.ready_after_discards(h, True, kinds, o, tabs, row)
    handk.lanpai(h); handk.qixing(h); handk.lanpai_wait_bits(h)
    misses = sum(sum(f.stats.cache_misses.values()) for f in
                 (handk.is_complete, handk.wait_mask, handk.ready_after_discards, handk.lanpai, handk.qixing,
                  handk.lanpai_wait_bits))
    print("misses", misses)
    """
)


@pytest.mark.slow
def test_cache_reused_by_a_new_process():
    """cache=True works: once compiled, a fresh process loads the kernels from disk instead of compiling."""
    exec(compile(_EXERCISE, "<exercise>", "exec"), {})  # compiles (or loads) and writes the cache
    run = subprocess.run([sys.executable, "-c", _EXERCISE], capture_output=True, text=True, timeout=300, check=True)
    assert run.stdout.split()[-1] == "0", run.stdout + run.stderr
