"""Tests of mjenv.rules.hand: the lookup tables against a slow recursive reference, and RULES.md §11 examples."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mjenv.rules import hand
from mjenv.rules.hand import Reading
from mjenv.tiles import N_KINDS, counts_from_ids, kinds_mask, parse_tiles, tile_id

# ----------------------------------------------------------------------------------- reference
# Deliberately naive: remove any set that fits, anywhere, and recurse; every split is collected.


def _sets_fitting(counts: tuple[int, ...]):
    for t in range(N_KINDS):
        if counts[t] >= 3:
            yield ("trip", t), (t, t, t)
        if t < 27 and t % 9 <= 6 and counts[t] and counts[t + 1] and counts[t + 2]:
            yield ("seq", t), (t, t + 1, t + 2)


def _minus(counts: tuple[int, ...], tiles) -> tuple[int, ...]:
    out = list(counts)
    for t in tiles:
        out[t] -= 1
    return tuple(out)


@lru_cache(maxsize=500_000)
def ref_set_splits(counts: tuple[int, ...]) -> frozenset[tuple[tuple[str, int], ...]]:
    """Every multiset of sets (as a sorted tuple) that uses exactly these tiles."""
    if not any(counts):
        return frozenset({()})
    found = set()
    for s, tiles in _sets_fitting(counts):
        for rest in ref_set_splits(_minus(counts, tiles)):
            found.add(tuple(sorted(rest + (s,))))
    return frozenset(found)


def ref_readings(counts, seven_pairs: bool) -> set[Reading]:
    c = tuple(np.asarray(counts).tolist())
    found = set()
    for p in range(N_KINDS):
        if c[p] >= 2:
            for sets in ref_set_splits(_minus(c, (p, p))):
                found.add(Reading("standard", sets, p))
    if seven_pairs and sum(c) == 14 and all(x % 2 == 0 for x in c):
        found.add(Reading("seven_pairs", (), None, tuple(sorted(t for t in range(N_KINDS) for _ in range(c[t] // 2)))))
    return found


@lru_cache(maxsize=500_000)
def ref_sets_only(counts: tuple[int, ...]) -> bool:
    """Whether the tiles split into sets only (short-circuiting version of ``ref_set_splits``)."""
    return not any(counts) or any(ref_sets_only(_minus(counts, tiles)) for _, tiles in _sets_fitting(counts))


@lru_cache(maxsize=500_000)
def _ref_complete(c: tuple[int, ...], seven_pairs: bool) -> bool:
    if seven_pairs and sum(c) == 14 and all(x % 2 == 0 for x in c):
        return True
    return any(c[p] >= 2 and ref_sets_only(_minus(c, (p, p))) for p in range(N_KINDS))


def ref_complete(counts, seven_pairs: bool) -> bool:
    return _ref_complete(tuple(np.asarray(counts).tolist()), seven_pairs)


def ref_waits(concealed, seven_pairs: bool, kinds=None, owned=None) -> np.ndarray:
    c = np.asarray(concealed).tolist()
    own = c if owned is None else np.asarray(owned).tolist()
    out = np.zeros(N_KINDS, dtype=bool)
    for t in range(N_KINDS):
        if (kinds is None or kinds[t]) and own[t] < 4:
            c[t] += 1
            out[t] = _ref_complete(tuple(c), seven_pairs)
            c[t] -= 1
    return out


# ----------------------------------------------------------------------------------- helpers


def hc(text: str) -> np.ndarray:
    """Counts of a compact hand string, e.g. ``hc("123p55z")``."""
    return counts_from_ids(parse_tiles(text))


def waits_text(mask) -> set[str]:
    return {f"{t % 9 + 1}{'mpsz'[t // 9]}" for t in np.flatnonzero(mask)}


KW3 = kinds_mask(suits="ps", honors="567")
KINDS = {
    "all": kinds_mask(),
    "kawuxing3": KW3,
    "kawuxing4": kinds_mask(suits="mps", honors="567"),
    "one_suit": kinds_mask(suits="p", honors=""),  # dense multi-sided waits
    "suit_and_honors": kinds_mask(suits="s", honors="1234567"),
}


# ----------------------------------------------------------------------------------- strategies
# Each hand is built from one hypothesis byte string read as a sequence of small choices: one
# choice node per hand instead of dozens keeps generation cheap enough for >10,000 hands, and
# hypothesis still shrinks the bytes (towards zeros: fewer sets, low tiles).

_TILES = {name: [int(t) for t in np.flatnonzero(k)] for name, k in KINDS.items()}
_GROUPS = {  # every set of the kinds; sequences listed twice so that about half the sets are sequences
    name: [[t] * 3 for t in tiles]
    + 2 * [[t, t + 1, t + 2] for t in tiles if t < 27 and t % 9 <= 6 and KINDS[name][t + 1] and KINDS[name][t + 2]]
    for name, tiles in _TILES.items()
}
_KIND_NAMES = sorted(KINDS)
_HAND_BYTES = 40


class Choices:
    """Reads a byte string as successive choices (zeros once exhausted)."""

    def __init__(self, data: bytes):
        self.data, self.i = data, 0

    def pick(self, seq):
        b = self.data[self.i] if self.i < len(self.data) else 0
        self.i += 1
        return seq[b % len(seq)]


def built_complete(ch: Choices, kinds: str, max_sets: int = 4) -> np.ndarray:
    """A complete standard hand: up to ``max_sets`` random sets + a pair (sets that overflow 4 copies are skipped)."""
    c = np.zeros(N_KINDS, dtype=np.int64)
    c[ch.pick(_TILES[kinds])] += 2
    n_sets = ch.pick(range(max_sets + 1))
    added = 0
    for _ in range(3 * max_sets):
        if added == n_sets:
            break
        trial = c.copy()
        np.add.at(trial, ch.pick(_GROUPS[kinds]), 1)
        if trial.max() <= 4:
            c, added = trial, added + 1
    return c


def seven_pairs_hand(ch: Choices, kinds: str) -> np.ndarray:
    """Seven pairs (a kind picked twice gives a four-of-a-kind)."""
    c = np.zeros(N_KINDS, dtype=np.int64)
    tiles = _TILES[kinds]
    while c.sum() < 14:
        t = ch.pick(tiles)
        if c[t] > 2:  # exhausted choices keep picking the same tile: move on deterministically
            t = next(u for u in tiles if c[u] <= 2)
        c[t] += 2
    return c


def random_hand(ch: Choices, kinds: str, sizes) -> np.ndarray:
    """A size from ``sizes``, that many tiles picked from the kinds, at most 4 copies each."""
    size = ch.pick(sizes)
    tiles = _TILES[kinds]
    c = np.zeros(N_KINDS, dtype=np.int64)
    while c.sum() < size:
        t = ch.pick(tiles)
        if c[t] == 4:
            t = next(u for u in tiles if c[u] < 4)
        c[t] += 1
    return c


def remove_one(ch: Choices, c: np.ndarray) -> np.ndarray:
    c = c.copy()
    c[ch.pick(np.flatnonzero(c))] -= 1
    return c


def swap_one(ch: Choices, c: np.ndarray, kinds: str) -> np.ndarray:
    """Replace one tile by another kind (often breaks completeness, sometimes keeps it)."""
    c = remove_one(ch, c)
    c[ch.pick(np.flatnonzero(KINDS[kinds] & (c < 4)))] += 1
    return c


def _hand14(data: bytes) -> np.ndarray:
    ch = Choices(data)
    kinds = ch.pick(_KIND_NAMES)
    kind = ch.pick(["built", "built", "seven_pairs", "swapped", "swapped_pairs", "random"])
    if kind == "built":
        return built_complete(ch, kinds)
    if kind == "seven_pairs":
        return seven_pairs_hand(ch, kinds)
    if kind == "swapped":
        return swap_one(ch, built_complete(ch, kinds), kinds)
    if kind == "swapped_pairs":
        return swap_one(ch, seven_pairs_hand(ch, kinds), kinds)
    return random_hand(ch, kinds, [2, 5, 8, 11, 14])


def _hand13(data: bytes) -> np.ndarray:
    ch = Choices(data)
    kinds = ch.pick(_KIND_NAMES)
    kind = ch.pick(["ready", "ready", "seven_pairs", "random"])
    if kind == "ready":
        return remove_one(ch, built_complete(ch, kinds))
    if kind == "seven_pairs":
        return remove_one(ch, seven_pairs_hand(ch, kinds))
    return random_hand(ch, kinds, [1, 4, 7, 10, 13])


def _owned(c: np.ndarray, data: bytes) -> np.ndarray:
    """Own counts: the concealed tiles plus some melded copies (at most 4 in all)."""
    ch = Choices(data)
    owned = c.copy()
    for _ in range(ch.pick(range(5))):
        t = ch.pick(range(N_KINDS))
        owned[t] = min(4, owned[t] + ch.pick(range(1, 5)))
    return owned


_bytes = st.binary(min_size=_HAND_BYTES, max_size=_HAND_BYTES)
hand14 = _bytes.map(_hand14)  # 14, 11, 8, 5 or 2 tiles (concealed incl. the winning tile), mostly complete or nearly
hand13 = _bytes.map(_hand13)  # 13, 10, 7, 4 or 1 tiles, mostly ready (a complete hand minus one tile)
kinds_st = st.sampled_from(_KIND_NAMES)
built_st = st.tuples(_bytes, kinds_st).map(lambda a: built_complete(Choices(a[0]), a[1]))
owned_bytes = st.binary(min_size=12, max_size=12)


wait_kinds_st = st.one_of(
    st.none(),
    kinds_st.map(KINDS.get),
    st.lists(st.booleans(), min_size=N_KINDS, max_size=N_KINDS).map(lambda b: np.array(b, dtype=bool)),
)

BATCH = {"min_size": 30, "max_size": 40}
SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}

# ----------------------------------------------------------------------------------- property tests
# Hands compared against the reference: completion 160 x >= 30, waits 160 x >= 30,
# readings 120 x >= 10, after-discards 40 x >= 10 (x 34 discards): >= 11,200 hands, plus the
# 10,945 one-suit hands of the exhaustive table test.


@settings(max_examples=160, **SETTINGS)
@given(st.lists(hand14, **BATCH), st.booleans(), st.sampled_from([np.int8, np.uint8, np.int32, np.int64]))
def test_is_complete_matches_reference(hands, seven_pairs, dtype):
    batch = np.stack(hands).astype(dtype)
    got = hand.is_complete(batch, seven_pairs=seven_pairs)
    assert got.shape == (len(hands),) and got.dtype == bool
    for row, c in zip(got, batch):
        want = ref_complete(c, seven_pairs)
        assert row == want, c
        single = hand.is_complete(c, seven_pairs)
        assert type(single) is bool and single == want


@settings(max_examples=160, **SETTINGS)
@given(st.lists(st.tuples(hand13, owned_bytes), **BATCH), st.booleans(), wait_kinds_st, st.booleans())
def test_wait_mask_matches_reference(hands, seven_pairs, kinds, with_owned):
    batch = np.stack([c for c, _ in hands])
    owned = np.stack([_owned(c, b) for c, b in hands]) if with_owned else None
    got = hand.wait_mask(batch, seven_pairs=seven_pairs, kinds=kinds, owned=owned)
    assert got.shape == (len(hands), N_KINDS) and got.dtype == bool
    got_ready = hand.ready(batch, seven_pairs=seven_pairs, kinds=kinds, owned=owned)
    np.testing.assert_array_equal(got_ready, got.any(axis=1))
    for i, c in enumerate(batch):
        own = None if owned is None else owned[i]
        want = ref_waits(c, seven_pairs, kinds, own)
        assert np.array_equal(got[i], want), (c, own)
        assert np.array_equal(hand.wait_mask(c, seven_pairs, kinds, own), want), (c, own)
        assert hand.ready(c, seven_pairs, kinds, own) == want.any()


@settings(max_examples=40, **SETTINGS)
@given(st.lists(st.tuples(hand14, owned_bytes), min_size=10, max_size=16), st.booleans(), wait_kinds_st, st.booleans())
def test_wait_mask_after_discards_matches_wait_mask(hands, seven_pairs, kinds, with_owned):
    batch = np.stack([c for c, _ in hands])
    owned = np.stack([_owned(c, b) for c, b in hands]) if with_owned else None
    got = hand.wait_mask_after_discards(batch, seven_pairs=seven_pairs, kinds=kinds, owned=owned)
    assert got.shape == (len(hands), N_KINDS, N_KINDS) and got.dtype == bool
    np.testing.assert_array_equal(hand.ready_after_discards(batch, seven_pairs, kinds, owned), got.any(axis=2))
    for i, c in enumerate(batch):
        for d in range(N_KINDS):
            if c[d] == 0:
                assert not got[i, d].any()
                continue
            after = c.copy()
            after[d] -= 1
            own = None
            if owned is not None:
                own = owned[i].copy()
                own[d] -= 1
            assert np.array_equal(got[i, d], hand.wait_mask(after, seven_pairs, kinds, own)), (c, d)
        if i < 3:  # a few straight against the reference too
            d = int(np.flatnonzero(c)[0])
            after = c.copy()
            after[d] -= 1
            own = None if owned is None else owned[i] - np.eye(N_KINDS, dtype=owned.dtype)[d]
            np.testing.assert_array_equal(got[i, d], ref_waits(after, seven_pairs, kinds, own))
    for i, c in enumerate(batch):  # the one-hand path
        own = None if owned is None else owned[i]
        assert np.array_equal(hand.wait_mask_after_discards(c, seven_pairs, kinds, own), got[i]), c
        assert np.array_equal(hand.ready_after_discards(c, seven_pairs, kinds, own), got[i].any(axis=1)), c


@settings(max_examples=120, **SETTINGS)
@given(st.lists(st.one_of(hand14, built_st), min_size=10, max_size=14), st.booleans())
def test_readings_match_reference(hands, seven_pairs):
    for c in hands:
        got = hand.readings(c, seven_pairs)
        assert len(got) == len(set(got)), "duplicate readings"
        assert set(got) == ref_readings(c, seven_pairs)
        assert bool(got) == hand.is_complete(c, seven_pairs)
        for r in got:
            used = list(r.pairs) * 2 if r.kind == "seven_pairs" else [r.pair] * 2
            for kind, t in r.sets:
                used += [t, t + 1, t + 2] if kind == "seq" else [t] * 3
            np.testing.assert_array_equal(counts_from_ids(used), c)
            assert list(r.sets) == sorted(r.sets)


def test_suit_table_exhaustive_small_hands():
    """Every one-suit hand of up to 7 tiles: class, both add-one masks and the odd mask against the reference."""
    table = hand.tables()["wait"]
    codes = np.arange(5**9)
    digits = (codes[:, None] // 5 ** np.arange(9)) % 5
    small = digits.sum(axis=1) <= 7
    checked = 0
    for code, dig in zip(codes[small], digits[small]):
        c = tuple(int(x) for x in dig) + (0,) * 25
        entry = int(table[code])
        cls = (entry >> 9) & 3
        want = 0 if ref_sets_only(c) else (1 if ref_complete(c, False) else 2)
        assert cls == want, dig
        for i in range(9):
            if dig[i] < 4:
                plus = list(c)
                plus[i] += 1
                plus = tuple(plus)
                assert bool(entry >> (11 + i) & 1) == ref_complete(plus, False), (dig, i)
                assert bool(entry >> (20 + i) & 1) == ref_sets_only(plus), (dig, i)
            else:
                assert not entry >> (11 + i) & 1 and not entry >> (20 + i) & 1
        assert entry & 0x1FF == sum(1 << i for i in range(9) if dig[i] % 2)
        checked += 1
    assert checked == 10_945


def test_honor_table_exhaustive():
    table = hand.tables()["cls"][hand.HONOR_OFFSET :]
    codes = np.arange(5**7)
    digits = (codes[:, None] // 5 ** np.arange(7)) % 5
    sets_only = np.isin(digits, [0, 3]).all(axis=1)
    with_pair = (np.isin(digits, [0, 3]).sum(axis=1) == 6) & ((digits == 2).sum(axis=1) == 1)
    np.testing.assert_array_equal(table, np.where(sets_only, 0, np.where(with_pair, 1, 2)))


# ----------------------------------------------------------------------------------- RULES.md §11


@pytest.mark.parametrize(
    "concealed, melds, seven_pairs, waits",
    [
        ("123p789p46s88s555z", "", True, {"5s"}),  # E1
        ("123p456p789p23s77z", "", True, {"1s", "4s"}),  # E2
        ("1122334456677p", "", True, {"5p", "8p"}),  # E3
        ("1122334456677p", "", False, {"5p", "8p"}),
        ("1122334455566p", "", True, {"1p", "4p", "5p", "6p"}),  # E4
        ("22s45667p123p999p", "", True, {"5p", "8p"}),  # E5
        ("24p678s789s55z", "333p", True, {"3p"}),  # E6: the pong's 4th copy is still live
        ("345p678p11p99p", "333p", True, {"1p", "9p"}),  # E7
        ("777p89p123s456s55z", "", True, {"7p", "5z"}),  # E8
        ("7777p8p123s456s55z", "", True, {"6p", "9p"}),  # E9: the fifth 7p does not exist
        ("11p33p55s77s99s66z7z", "", True, {"7z"}),  # E10
        ("11p33p55s77s99s66z7z", "", False, set()),
        ("234p567p345s66z78s", "", True, {"6s", "9s"}),  # E11
        ("777s88s123p456p99p", "", True, {"8s", "9p"}),  # E13
        ("777s89s123p456p99p", "", True, {"7s", "9p"}),
        ("88s123p456p99p", "", True, {"8s", "9p"}),
        ("89s123p456p99p", "", True, {"7s"}),
        ("5556s123p456p789p", "", True, {"4s", "6s", "7s"}),  # E14
        ("6s123p456p789p", "5555s", True, {"6s"}),
        ("6s", "5555s444p333p999p", True, {"6s"}),  # 手抓一: one concealed tile
        ("1112345678999m", "", False, {f"{r}m" for r in range(1, 10)}),  # nine gates
    ],
)
def test_rule_book_waits(concealed, melds, seven_pairs, waits):
    c = hc(concealed)
    owned = c + hc(melds) if melds else None
    got = hand.wait_mask(c, seven_pairs=seven_pairs, kinds=kinds_mask(), owned=owned)
    assert waits_text(got) == waits
    assert waits_text(ref_waits(c, seven_pairs, None, owned)) == waits


def test_e3_readings():
    r = hand.readings(hc("11223344556677p"), seven_pairs=True)
    p = tile_id
    standard = {
        Reading("standard", (("seq", p("1p")), ("seq", p("1p")), ("seq", p("4p")), ("seq", p("4p"))), p("7p")),
        Reading("standard", (("seq", p("2p")), ("seq", p("2p")), ("seq", p("5p")), ("seq", p("5p"))), p("1p")),
        Reading("standard", (("seq", p("1p")), ("seq", p("1p")), ("seq", p("5p")), ("seq", p("5p"))), p("4p")),
    }
    sp = Reading("seven_pairs", (), None, tuple(p(f"{i}p") for i in range(1, 8)))
    assert set(r) == standard | {sp}
    assert r[-1] == sp
    assert set(hand.readings(hc("11223344556677p"))) == standard
    # winning on 8p instead: standard readings only
    r8 = hand.readings(hc("11223344566778p"), seven_pairs=True)
    assert r8 and all(x.kind == "standard" for x in r8)
    assert Reading("standard", (("seq", p("2p")), ("seq", p("2p")), ("seq", p("5p")), ("seq", p("6p"))), p("1p")) in r8


def test_e4_readings():
    r = set(hand.readings(hc("11223344555566p"), seven_pairs=True))
    sp = Reading("seven_pairs", (), None, tuple(tile_id(s) for s in ["1p", "2p", "3p", "4p", "5p", "5p", "6p"]))
    kawu = Reading("standard", (("seq", 9), ("seq", 9), ("seq", 12), ("seq", 12)), tile_id("5p"))
    assert sp in r and kawu in r
    assert r == ref_readings(hc("11223344555566p"), True)


def test_reading_text():
    (r,) = hand.readings(hc("123p789p456s88s555z"))
    assert hand.reading_text(r) == "123p · 789p · 456s · 555z · pair 88s"  # E1
    (r,) = hand.readings(hc("234p678s789s55z"))
    assert hand.reading_text(r, "[P 333p]") == "234p · 678s · 789s · pair 55z + [P 333p]"
    sp = [x for x in hand.readings(hc("11p33p55s77s99s66z77z"), True) if x.kind == "seven_pairs"]
    assert hand.reading_text(sp[0]) == "seven pairs 11p · 33p · 55s · 77s · 99s · 66z · 77z"


def test_e13_face_down_triplet():
    """§3.6 D2: a concealed triplet may stay down iff the wait set without it is unchanged."""
    for text, may_hide in (("777s88s123p456p99p", True), ("777s89s123p456p99p", False)):
        c = hc(text)
        without = c - hc("777s")
        same = np.array_equal(hand.wait_mask(c, True, KW3), hand.wait_mask(without, True, KW3))
        assert same == may_hide


def test_liang_discards_e14_and_seven_pairs():
    c = hc("5556s123p456p789p3z")  # drew 3z: discarding 3z (E14's waits) or 6s (single wait 3z) keeps it ready
    ready = hand.ready_after_discards(c, seven_pairs=True)
    assert waits_text(ready) == {"3z", "6s"}
    assert waits_text(hand.wait_mask_after_discards(c, True)[tile_id("6s")]) == {"3z"}
    assert waits_text(hand.wait_mask_after_discards(c, True)[tile_id("3z")]) == {"4s", "6s", "7s"}
    c = hc("11p33p55s77s99s66z7z1m")  # seven-pairs shape: discard 1m waits 7z, discard 7z waits 1m
    w = hand.wait_mask_after_discards(c, seven_pairs=True)
    assert waits_text(w[tile_id("1m")]) == {"7z"} and waits_text(w[tile_id("7z")]) == {"1m"}
    assert not hand.wait_mask_after_discards(c, seven_pairs=False).any()


# ----------------------------------------------------------------------------------- API details


def test_shapes_and_dtypes():
    c = hc("123p789p46s88s555z")
    for dtype in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.int64, np.uint64):
        assert waits_text(hand.wait_mask(c.astype(dtype))) == {"5s"}
        assert hand.wait_mask(np.stack([c, c]).astype(dtype)).shape == (2, N_KINDS)
    assert hand.is_complete(list(hc("123p789p456s88s555z"))) is True
    assert hand.wait_mask(np.zeros((0, N_KINDS), np.int8)).shape == (0, N_KINDS)
    assert hand.is_complete(np.zeros((0, N_KINDS), np.int8)).shape == (0,)
    assert hand.wait_mask_after_discards(hc("123p789p46s88s555z1m")).shape == (N_KINDS, N_KINDS)
    np.testing.assert_array_equal(hand.suit_codes(hc("12m5z")), [1 + 5, 0, 0, 5**4])
    assert hand.table_build_seconds() < 5


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.zeros(33, np.int8), r"expected shape \[34\] or \[N, 34\]"),
        (np.zeros((2, 35), np.int8), r"expected shape \[34\] or \[N, 34\]"),
        (np.zeros((2, 3, 34), np.int8), r"expected shape \[34\] or \[N, 34\]"),
        (np.zeros(34, np.float32), "integer"),
        (np.full(34, 5, np.int8), r"0\.\.4"),
        (np.full((3, 34), -1, np.int8), r"0\.\.4"),
    ],
)
def test_bad_input(bad, match):
    for fn in (hand.is_complete, hand.wait_mask, hand.ready, hand.wait_mask_after_discards):
        with pytest.raises(ValueError, match=match):
            fn(bad)


def test_no_fifth_copy():
    """A tile held four times concealed is never a wait, even when ``owned`` claims fewer."""
    for text, waits in (("1111p", set()), ("1111234p", {"4p"}), ("1111p567s", set())):
        c = hc(text)
        assert waits_text(hand.wait_mask(c)) == waits
        assert waits_text(hand.wait_mask(c, owned=np.zeros(N_KINDS, np.int8))) == waits


def test_bad_masks():
    c = hc("123p789p46s88s555z")
    with pytest.raises(ValueError, match="kinds"):
        hand.wait_mask(c, kinds=np.ones(27, bool))
    with pytest.raises(ValueError, match="owned"):
        hand.wait_mask(np.stack([c, c]), owned=np.zeros((3, N_KINDS), np.int8))
    with pytest.raises(ValueError, match=r"one hand"):
        hand.readings(np.stack([c, c]))
