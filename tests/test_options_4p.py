"""Tests of the 4-player option classes of mjenv.rules.options against RULES.md §6.9, §7.9, §8.11, §9, §10.6
and Appendix C, and of their rulesets in mjenv/rules/data/."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from mjenv.rules.options import (
    VARIANTS,
    DiedaohuOptions,
    GejiuOptions,
    KawuxingOptions,
    LiuweiOptions,
    OptionError,
    YangzhouOptions,
    describe_options,
    get_variant,
    list_presets,
    list_rulesets,
    load_rules,
    load_ruleset,
    n_players,
    option_info,
    option_names,
    options_to_dict,
    parse_option_value,
    tile_count,
    tile_kinds,
)

# The option tables of the rule book, written out literally: option -> (allowed values, default).
# ``None`` as allowed values marks an open numeric domain (tested separately).
TABLE_6_9 = {
    "base": (None, 1),
    "gejiu_combine": (("multiply", "add", "max"), "multiply"),
    "gejiu_qianggang": (("add_kong", "replacement_tile"), "add_kong"),
    "gejiu_multiwin_dealer": (("next_of_nearest_winner", "nearest_winner", "standard"), "next_of_nearest_winner"),
    "multi_win": (("on", "off"), "on"),
}
TABLE_7_9 = {
    "base": (None, 1),
    "bankroll": (None, None),
    "draw_dealer": (("rotate", "stay"), "rotate"),
    "rounds": ((4, 8), 4),
    "louhu": (("on", "off"), "on"),
    "multi_win": (("on", "off"), "on"),
    "fengqing_baopai": (("off", "on"), "off"),
}
TABLE_8_11 = {
    "base": (None, 1),
    "yz_style": (("standard", "new"), "standard"),
    "min_fan": (None, 15),
    "chi": (("on", "off"), "on"),
    "baopai": (("on", "off"), "on"),
    "louhu": (("on", "off"), "on"),
    "draw_dealer": (("rotate", "stay"), "rotate"),
    "rounds": ((4, 8), 4),
    "multi_win": (("on", "off"), "on"),
}
TABLE_10_6 = {
    "base": (None, 1),
    "bankroll": (None, 50),
    "rounds": ((8,), 8),
    "louhu": (("on", "off"), "on"),
}
# §9: Yangzhou-new is §8.11 with these two values.
YZNEW_DIFF = {"yz_style": "new", "min_fan": 20}

CLASSES = {
    GejiuOptions: TABLE_6_9,
    DiedaohuOptions: TABLE_7_9,
    YangzhouOptions: TABLE_8_11,
    LiuweiOptions: TABLE_10_6,
}
# variant -> (options class, default ruleset, the ruleset's values)
VARIANTS_4P = {
    "gejiu": (GejiuOptions, "gejiu002", {k: d for k, (_, d) in TABLE_6_9.items()}),
    "diedaohu": (DiedaohuOptions, "diedaohu003", {k: d for k, (_, d) in TABLE_7_9.items()}),
    "yangzhou": (YangzhouOptions, "yzstd003", {k: d for k, (_, d) in TABLE_8_11.items()}),
    "yangzhou_new": (YangzhouOptions, "yznew003", {**{k: d for k, (_, d) in TABLE_8_11.items()}, **YZNEW_DIFF}),
    "liuwei": (LiuweiOptions, "liuwei003", {k: d for k, (_, d) in TABLE_10_6.items()}),
}


# ----------------------------------------------------------------------------------------- tables


@pytest.mark.parametrize("cls", list(CLASSES), ids=lambda c: c.__name__)
def test_fields_are_the_rule_book_table_in_order(cls):
    table = CLASSES[cls]
    assert option_names(cls) == tuple(table)
    for info in option_info(cls):
        allowed, default = table[info.name]
        assert info.default == default
        # defaults are stored already normalized: floats for numbers > 0, ints for integers
        assert default is None or type(info.default) is type(info.domain.normalize(default))
        assert info.meaning and "§" not in info.meaning  # meanings stand alone; docs/rules pages hold the sections
        if allowed is not None:
            assert info.domain.values == allowed


@pytest.mark.parametrize("cls", list(CLASSES), ids=lambda c: c.__name__)
def test_every_allowed_value_is_accepted_and_others_rejected(cls):
    for name, (allowed, _) in CLASSES[cls].items():
        if allowed is None:
            continue
        for v in allowed:
            assert getattr(cls(**{name: v}), name) == v
        for bad in ("bogus", 3, None, True):
            if bad in allowed:
                continue
            with pytest.raises(OptionError, match=rf"option {name!r}: .* is not allowed.*allowed values: "):
                cls(**{name: bad})


def test_classes_are_frozen_and_hashable():
    for cls in CLASSES:
        opts = cls()
        with pytest.raises(dataclasses.FrozenInstanceError):
            opts.base = 2  # type: ignore[misc]
        assert hash(opts) == hash(cls())


def test_base_is_a_positive_number_everywhere():
    for cls in CLASSES:
        assert cls(base=2).base == 2.0 and isinstance(cls(base=2).base, float)
        for bad in (0, -1, float("nan"), float("inf"), "1", True):
            with pytest.raises(OptionError, match="option 'base'"):
                cls(base=bad)


def test_bankroll_is_none_or_a_positive_number():
    assert DiedaohuOptions().bankroll is None and LiuweiOptions().bankroll == 50.0
    for cls in (DiedaohuOptions, LiuweiOptions):
        assert cls(bankroll=100).bankroll == 100.0 and isinstance(cls(bankroll=100).bankroll, float)
        assert cls(bankroll=None).bankroll is None
        assert parse_option_value(cls, "bankroll", "none") is None
        assert parse_option_value(cls, "bankroll", "25.5") == 25.5
        for bad in (0, -50, float("inf"), True):
            with pytest.raises(OptionError, match=r"option 'bankroll': .* allowed values: none or a number > 0, up to 1000000"):
                cls(bankroll=bad)
        with pytest.raises(OptionError, match=r"\(a str; expected int, float or None\)"):
            cls(bankroll="50")
        for text in ("None", "0", "x", "-3"):
            with pytest.raises(OptionError, match="option 'bankroll'"):
                parse_option_value(cls, "bankroll", text)


def test_min_fan_is_a_non_negative_integer():
    assert YangzhouOptions(min_fan=10).min_fan == 10
    zero = YangzhouOptions(min_fan=np.int64(0)).min_fan
    assert zero == 0 and type(zero) is int
    for bad in (-1, 15.0, True, "15"):
        with pytest.raises(OptionError, match=r"option 'min_fan': .* allowed values: an integer >= 0"):
            YangzhouOptions(min_fan=bad)
    assert parse_option_value(YangzhouOptions, "min_fan", " 10 ") == 10
    for text in ("1.5", "-1", "x", "none"):
        with pytest.raises(OptionError, match="option 'min_fan'"):
            parse_option_value(YangzhouOptions, "min_fan", text)


def test_rounds_are_integers_and_liuwei_has_only_eight():
    assert parse_option_value(DiedaohuOptions, "rounds", "8") == 8
    assert load_rules("yangzhou", options={"rounds": "8"}).rounds == 8
    with pytest.raises(OptionError, match=r"option 'rounds': 4 is not allowed; allowed values: 8"):
        load_rules("liuwei", options={"rounds": 4})


# ----------------------------------------------------------------------------------------- registry


@pytest.mark.parametrize("variant", list(VARIANTS_4P))
def test_registry_entry(variant):
    cls, ruleset, _ = VARIANTS_4P[variant]
    spec = get_variant(variant)
    assert spec.name == variant and spec.options_cls is cls and spec.default_ruleset == ruleset
    assert n_players(variant) == 4 and spec.absent_options == {}
    assert tile_count(variant) == 136 and tile_count(variant, load_rules(variant)) == 136
    mask = tile_kinds(variant)
    assert mask.dtype == bool and mask.shape == (34,) and mask.all()
    with pytest.raises(TypeError, match=f"takes {cls.__name__}, got KawuxingOptions"):
        tile_kinds(variant, KawuxingOptions())


def test_every_variant_of_the_rule_book_is_registered():
    assert set(VARIANTS) == {"kawuxing3", "kawuxing4", "gejiu", "diedaohu", "yangzhou", "yangzhou_new", "liuwei"}
    import mjenv

    assert set(mjenv.VARIANTS) == set(VARIANTS)
    with pytest.raises(OptionError, match=r"unknown variant 'gejui' \(did you mean 'gejiu'\?\); known .*liuwei$"):
        load_rules("gejui")


# ----------------------------------------------------------------------------------------- rulesets


@pytest.mark.parametrize("variant", list(VARIANTS_4P))
def test_default_ruleset_is_the_rule_book_defaults(variant):
    cls, ruleset, values = VARIANTS_4P[variant]
    opts = load_rules(variant)
    assert opts == load_ruleset(variant, ruleset) == cls(**values)
    assert options_to_dict(opts) == {k: "none" if v is None else v for k, v in values.items()}


def test_class_defaults_are_the_default_rulesets():
    # the class defaults are the tables' defaults; Yangzhou's are the standard style (§8.11)
    for variant in ("gejiu", "diedaohu", "yangzhou", "liuwei"):
        assert load_rules(variant) == VARIANTS_4P[variant][0]()
    assert load_rules("yangzhou_new") == YangzhouOptions(yz_style="new", min_fan=20)


def test_rulesets_and_presets_per_family():
    assert list_rulesets("gejiu") == ["gejiu002"]
    assert list_rulesets("diedaohu") == ["diedaohu003"]
    assert list_rulesets("yangzhou") == list_rulesets("yangzhou_new") == ["yznew003", "yzstd003"]
    assert list_rulesets("liuwei") == ["liuwei003"]
    for variant in VARIANTS_4P:
        assert list_presets(variant) == []
    # a ruleset of another family is unknown to a variant
    with pytest.raises(OptionError, match=r"unknown ruleset 'kwx004' for variant 'gejiu'.*rulesets: gejiu002"):
        load_rules("gejiu", ruleset="kwx004")
    with pytest.raises(OptionError, match=r"unknown ruleset 'gejiu002' for variant 'kawuxing3'"):
        load_rules("kawuxing3", ruleset="gejiu002")
    # the two Yangzhou styles share one family: either ruleset loads under either variant
    assert load_rules("yangzhou", ruleset="yznew003") == load_rules("yangzhou_new")


def test_explicit_options_override_the_ruleset():
    opts = load_rules("yangzhou_new", options={"min_fan": "10", "chi": "off"})
    assert (opts.yz_style, opts.min_fan, opts.chi) == ("new", 10, "off")
    opts = load_rules("diedaohu", options={"bankroll": "100", "draw_dealer": "stay", "rounds": 8})
    assert (opts.bankroll, opts.draw_dealer, opts.rounds) == (100.0, "stay", 8)
    assert load_rules("liuwei", options={"bankroll": "none"}).bankroll is None
    assert load_rules("gejiu", options={"gejiu_combine": "max"}).gejiu_combine == "max"


def test_unknown_options_name_the_variant_and_suggest():
    with pytest.raises(OptionError, match=r"unknown option 'multiwin' for variant 'gejiu' \(did you mean 'multi_win'"):
        load_rules("gejiu", options={"multiwin": "on"})
    # Liuwei has no multi_win (one winner per discard, §10.1) and Kawuxing options belong to Kawuxing
    with pytest.raises(OptionError, match=r"'multi_win' for variant 'liuwei'.*options: base, bankroll, rounds, louhu$"):
        load_rules("liuwei", options={"multi_win": "on"})
    with pytest.raises(OptionError, match=r"unknown option 'cap' for variant 'yangzhou'"):
        load_rules("yangzhou", options={"cap": 8})


@pytest.mark.parametrize("variant", list(VARIANTS_4P))
def test_options_to_dict_round_trips(variant):
    opts = load_rules(variant)
    d = options_to_dict(opts, variant)
    assert json.loads(json.dumps(d)) == d
    assert load_rules(variant, options=d) == opts


def test_describe_options_of_the_new_classes():
    text = describe_options(DiedaohuOptions, "diedaohu")
    lines = text.splitlines()
    assert len(lines) == 2 + len(TABLE_7_9)
    bankroll = next(line for line in lines if line.startswith("bankroll "))
    assert "none or a number > 0, up to 1000000" in bankroll and " none " in bankroll
    min_fan = next(line for line in describe_options(YangzhouOptions).splitlines() if line.startswith("min_fan "))
    assert "an integer >= 0" in min_fan and " 15 " in min_fan
