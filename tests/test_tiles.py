"""Tile ids and the hand notation of RULES.md §1.2: parsing, formatting, round trips, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mjenv.tiles import (
    Hand,
    Meld,
    NotationError,
    counts_from_ids,
    format_hand,
    format_tiles,
    ids_from_counts,
    kinds_mask,
    parse_hand,
    parse_tiles,
    tile_id,
    tile_name,
    tile_unicode,
)

KWX3 = kinds_mask("ps", "567")


def test_ids_and_names():
    assert [tile_id(x) for x in ("1m", "9m", "1p", "5p", "9s", "1z", "5z", "7z")] == [0, 8, 9, 13, 26, 27, 31, 33]
    assert all(tile_id(tile_name(t)) == t for t in range(34))
    assert tile_unicode(tile_id("7z")) == "\U0001F004"  # red dragon 中
    assert tile_unicode(tile_id("1p")) == "\U0001F019"


def test_parse_groups_any_order():
    assert parse_tiles("44556m789p55z") == [3, 3, 4, 4, 5, 15, 16, 17, 31, 31]
    assert format_tiles(parse_tiles("55z789p44556m")) == "44556m789p55z"


def test_parse_full_hand():
    h = parse_hand("[P 333p<B] 24p678s789s55z +3p discard(B)", KWX3)
    assert h.melds == (Meld("P", (11, 11, 11), 1),)
    assert format_tiles(h.concealed) == "24p677889s55z"
    assert (h.win_tile, h.win_how, h.win_from) == (11, "discard", 1)
    assert h.all_counts()[11] == 4
    for text in ("[K 5555p<C] 123s", "[A 5555p] [X 6666z] 11s +9p self-draw", "[C 345m<A] 11z +5p rob(A)"):
        assert format_hand(parse_hand(text)) == format_hand(parse_hand(format_hand(parse_hand(text))))


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("12x", "unexpected character 'x'"),
        ("5555p [P 555p]", "5p appears 7 times"),
        ("[P 556p]", "is not a pong"),
        ("[C 135m]", "is not a chi"),
        ("[K 555p]", "is not a direct kong"),
        ("[X 5555p<A]", "cannot have a source"),
        ("8z", "'8z' is not a tile"),
        ("0p", "'0' is not a tile rank"),
        ("[P 555p", "never closed"),
        ("123", "digits without a suit"),
        ("p", "has no digits"),
        ("1m", "1m is not used by this variant"),
        ("", "empty hand"),
        ("11p +3p discard +4p discard", "second winning tile"),
        ("11p +3p self-draw(B)", "no source seat"),
    ],
)
def test_malformed_hands_say_what_and_where(text, fragment):
    with pytest.raises(NotationError, match=fragment.replace("(", r"\(")):
        parse_hand(text, KWX3)


def test_error_positions():
    with pytest.raises(NotationError, match="at 10"):
        parse_hand("123p 456s q", KWX3)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 33), min_size=1, max_size=14))
def test_counts_round_trip(ids):
    counts = counts_from_ids(ids)
    assert ids_from_counts(counts) == sorted(ids)
    if counts.max() <= 4:
        assert parse_tiles(format_tiles(ids)) == sorted(ids)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 33), min_size=1, max_size=13, unique=True), st.integers(0, 33), st.sampled_from(["discard", "self-draw", "rob"]))
def test_hand_round_trip(ids, win, how):
    hand = Hand(tuple(sorted(ids)), (), win, how, None)
    if hand.all_counts().max() > 4:
        return
    assert parse_hand(format_hand(hand)) == hand


def test_kinds_mask_counts():
    assert int(KWX3.sum()) * 4 == 84
    assert int(kinds_mask("mps", "567").sum()) * 4 == 120
    assert int(kinds_mask().sum()) * 4 == 136
    assert np.array_equal(np.flatnonzero(kinds_mask("mp", "")), np.arange(18))
