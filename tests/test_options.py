"""Tests of mjenv.rules.options against RULES.md §1.11, §3.13, §3.14, §4, §5.1, §5.2 and Appendix C."""

from __future__ import annotations

import re

import dataclasses
import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mjenv.rules import options as O
from mjenv.rules.options import (
    VARIANTS,
    KawuxingOptions,
    OptionError,
    describe_options,
    list_presets,
    list_rulesets,
    load_preset,
    load_rules,
    load_ruleset,
    n_players,
    option_info,
    option_names,
    options_to_dict,
    parse_option_assignments,
    parse_option_value,
    tile_count,
    tile_kinds,
)
from mjenv.tiles import kinds_mask

# RULES.md §3.13, written out literally: option -> (allowed values, default of kwx004).
TABLE_3_13 = {
    "suits": (("ps", "mp", "ms"), "ps"),
    "base": (None, 1),
    "fan_combine": (("multiply", "add"), "multiply"),
    "cap": ((8, 16, None), 8),
    "cap_shuanglong_16": (("on", "off"), "on"),
    "kaikou": (("none", "soft", "hard"), "hard"),
    "louhu_exception": (("off", "higher"), "higher"),
    "multi_win": (("on", "off"), "on"),
    "baohu": (("on", "off"), "on"),
    "baohu_liang_exempt": (("on", "off"), "on"),
    "baohu_amount": (("all_shares", "double"), "all_shares"),
    "baohu_cap": (("per_share", "total"), "per_share"),
    "liang_vs_liang": (("off", "on"), "off"),
    "liang_loser_double": (("off", "on"), "off"),
    "liang_hide_triplets": (("on", "off"), "on"),
    "liang_kong": (("keep_ready", "same_waits", "none"), "keep_ready"),
    "tingtou": (("off", "on", "each"), "off"),
    "huang_liang_penalty": ((0, 1), 1),
    "gangshanggang": (("off", "self_consecutive", "chain", "per_hand"), "chain"),
    "gang_stack": (("off", "on"), "off"),
    "angang_timing": (("deferrable", "immediate"), "deferrable"),
    "ming_sigui_scope": (("win_tile", "qingyise_any", "any"), "qingyise_any"),
    "an_sigui_scope": (("win_tile", "qingyise_any", "any"), "qingyise_any"),
    "an_sigui_split": (("any", "triplet_seq"), "any"),
    "sigui_count": (("once", "each"), "once"),
    "longqidui": (("any_four", "win_tile"), "any_four"),
    "shuanglong": (("on", "off"), "on"),
    "shouzhuayi": (("melded_x4", "pph_single_x2"), "melded_x4"),
    "haidi": (("off", "zimo", "zimo_and_pao"), "zimo"),
    "qianggang": (("on", "off"), "on"),
    "seat_rotation": (("off", "winner_sits_out"), "off"),
    "escape_penalty": (("off", "on"), "off"),
}
KWX004 = {name: default for name, (_, default) in TABLE_3_13.items()}

# RULES.md §5.1: differences of suizhou000 from kwx004 (rows of the table equal to kwx004 are omitted).
SUIZHOU000_DIFF = {
    "ming_sigui_scope": "any",
    "an_sigui_scope": "any",
    "shuanglong": "off",
    "shouzhuayi": "pph_single_x2",
    "haidi": "off",
    "gangshanggang": "self_consecutive",
    "kaikou": "none",
    "huang_liang_penalty": 0,
    "escape_penalty": "on",
}
# RULES.md §5.1 rows that restate the kwx004 value (checked too, so a wrong edit of either table shows).
SUIZHOU000_SAME = {
    "fan_combine": "multiply",
    "longqidui": "any_four",
    "gang_stack": "off",
    "tingtou": "off",
    "louhu_exception": "higher",
    "angang_timing": "deferrable",
    "baohu_liang_exempt": "on",
    "cap": 8,
}
# RULES.md §5.2: differences of qdjt001 from kwx004.
QDJT001_DIFF = {
    "fan_combine": "add",
    "an_sigui_scope": "any",
    "an_sigui_split": "triplet_seq",
    "longqidui": "win_tile",
    "shuanglong": "off",
    "gangshanggang": "per_hand",
    "louhu_exception": "off",
    "angang_timing": "immediate",
    "huang_liang_penalty": 0,
    "kaikou": "none",
}
QDJT001_SAME = {
    "ming_sigui_scope": "qingyise_any",
    "shouzhuayi": "melded_x4",
    "haidi": "zimo",
    "baohu_liang_exempt": "on",
    "tingtou": "off",
    "gang_stack": "off",
    "liang_vs_liang": "off",
    "cap": 8,
}
RULESETS = {
    "kwx004": KWX004,
    "suizhou000": {**KWX004, **SUIZHOU000_DIFF},
    "qdjt001": {**KWX004, **QDJT001_DIFF},
}
# RULES.md §3.14.
PRESETS = {
    "simple": {"kaikou": "none", "tingtou": "off", "gang_stack": "off", "liang_vs_liang": "off", "cap": 8,
               "huang_liang_penalty": 0},
    "barbaric": {"kaikou": "soft", "tingtou": "on", "gang_stack": "on", "liang_vs_liang": "off", "cap": 16,
                 "huang_liang_penalty": 0},
    "crazy": {"kaikou": "hard", "tingtou": "each", "gang_stack": "on", "liang_vs_liang": "on", "cap": None,
              "huang_liang_penalty": 0},
}
REPO_RULES = Path(__file__).resolve().parents[1] / "mjenv" / "rules" / "data"


def as_dict(opts) -> dict:
    return {f.name: getattr(opts, f.name) for f in dataclasses.fields(opts)}


@pytest.fixture(autouse=True)
def _repo_rules_dir(monkeypatch):
    # tests must see the repo's files even if the developer's shell points MJENV_RULES_DIR elsewhere
    monkeypatch.delenv(O.RULES_DIR_ENV, raising=False)


# ----------------------------------------------------------------------------------------- defaults


def test_fields_are_exactly_the_options_of_3_13_in_order():
    assert option_names(KawuxingOptions) == tuple(TABLE_3_13)


def test_defaults_equal_table_3_13():
    assert as_dict(KawuxingOptions()) == KWX004
    assert isinstance(KawuxingOptions().base, float)


@pytest.mark.parametrize("name", list(TABLE_3_13))
def test_allowed_values_equal_table_3_13(name):
    allowed, default = TABLE_3_13[name]
    (info,) = [i for i in option_info(KawuxingOptions) if i.name == name]
    assert info.default == default
    assert info.meaning and "\n" not in info.meaning
    if allowed is None:
        assert isinstance(info.domain, O.PositiveNumber)
    else:
        assert info.domain.values == allowed
        for v in allowed:  # every allowed value is accepted
            assert getattr(KawuxingOptions(**{name: v}), name) == v


def test_options_are_frozen_and_hashable():
    opts = KawuxingOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.cap = 16  # type: ignore[misc]
    assert hash(opts) == hash(KawuxingOptions())
    assert KawuxingOptions(base=1) == KawuxingOptions(base=1.0)


# ----------------------------------------------------------------------------------------- rulesets


def test_list_rulesets_and_presets():
    for variant in ("kawuxing3", "kawuxing4"):
        assert list_rulesets(variant) == ["kwx004", "qdjt001", "suizhou000"]
        assert list_presets(variant) == ["barbaric", "crazy", "simple"]


def test_kwx004_file_equals_dataclass_defaults():
    assert load_ruleset("kawuxing3", "kwx004") == KawuxingOptions()
    assert load_rules("kawuxing3") == KawuxingOptions()


def test_rule_book_tables_are_consistent():
    for name, value in SUIZHOU000_SAME.items():
        assert KWX004[name] == value
    for name, value in QDJT001_SAME.items():
        assert KWX004[name] == value
    for name, value in {**SUIZHOU000_DIFF, **QDJT001_DIFF}.items():
        assert name in KWX004 and value in TABLE_3_13[name][0]


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_ruleset_equals_rule_book(ruleset):
    opts = load_rules("kawuxing3", ruleset=ruleset)
    assert as_dict(opts) == RULESETS[ruleset]
    assert load_ruleset("kawuxing3", ruleset) == opts


def test_ruleset_files_assign_every_option():
    import tomllib

    for name in RULESETS:
        with open(REPO_RULES / f"{name}.toml", "rb") as fh:
            data = tomllib.load(fh)
        assert set(data["options"]) == set(TABLE_3_13)
        assert data["meta"] == {**data["meta"], "kind": "ruleset", "family": "kawuxing", "name": name}
        assert data["meta"]["source"].startswith("[00")


@pytest.mark.parametrize("preset", list(PRESETS))
def test_preset_files_set_exactly_the_3_14_options(preset):
    assert load_preset("kawuxing3", preset) == PRESETS[preset]


@pytest.mark.parametrize("ruleset", list(RULESETS))
@pytest.mark.parametrize("preset", list(PRESETS))
def test_each_preset_on_each_ruleset(ruleset, preset):
    opts = load_rules("kawuxing3", ruleset=ruleset, preset=preset)
    assert as_dict(opts) == {**RULESETS[ruleset], **PRESETS[preset]}


def test_qdjt001_equals_itself_with_simple():
    # §5.2: kaikou, tingtou, gang_stack, liang_vs_liang, cap of qdjt001 are those of preset simple
    assert load_rules("kawuxing3", "qdjt001", "simple") == load_rules("kawuxing3", "qdjt001")


def test_order_ruleset_then_preset_then_explicit():
    # ruleset alone
    assert load_rules("kawuxing3", "suizhou000").kaikou == "none"
    # preset overrides the ruleset
    assert load_rules("kawuxing3", "suizhou000", "crazy").kaikou == "hard"
    # explicit overrides the preset
    opts = load_rules("kawuxing3", "suizhou000", "crazy", {"kaikou": "soft", "cap": 16})
    assert (opts.kaikou, opts.cap) == ("soft", 16)
    # what neither preset nor explicit options touch comes from the ruleset
    assert opts.shouzhuayi == "pph_single_x2" and opts.tingtou == "each"
    # explicit options alone on the default ruleset
    assert load_rules("kawuxing3", options={"tingtou": "on"}) == dataclasses.replace(
        KawuxingOptions(), tingtou="on"
    )


# ----------------------------------------------------------------------------------------- errors


def _bad_values(name):
    allowed, _ = TABLE_3_13[name]
    if allowed is None:
        return [0, -1, float("nan"), float("inf"), "1", True, None]
    if all(isinstance(v, str) for v in allowed):
        return ["bogus", "ON", True, 1, None]
    return [12, 2, "8", 8.0, True, "none"] if name == "cap" else [2, -1, "1", True, None, 1.0]


@pytest.mark.parametrize("name", list(TABLE_3_13))
def test_every_option_rejects_bad_values(name):
    allowed_text = O.Choice(TABLE_3_13[name][0]).describe() if TABLE_3_13[name][0] else "a number > 0, up to 1000000"
    for bad in _bad_values(name):
        with pytest.raises(OptionError) as ei:
            KawuxingOptions(**{name: bad})
        msg = str(ei.value)
        assert f"option {name!r}" in msg, msg
        assert repr(bad) in msg, msg
        assert f"allowed values: {allowed_text}" in msg, msg
        assert ei.value.option == name


def test_bad_value_message_format():
    with pytest.raises(OptionError, match=r"^option 'cap': 12 is not allowed; allowed values: 8, 16, none$"):
        KawuxingOptions(cap=12)
    with pytest.raises(OptionError, match=r"^option 'cap': '8' is not allowed \(a str; expected int or None\)"):
        KawuxingOptions(cap="8")
    with pytest.raises(OptionError, match=r"allowed values: none, soft, hard$"):
        load_rules("kawuxing3", options={"kaikou": "medium"})


def test_unknown_option():
    with pytest.raises(OptionError) as ei:
        load_rules("kawuxing3", options={"kaikuo": "none"})
    msg = str(ei.value)
    assert "'kaikuo'" in msg and "did you mean 'kaikou'" in msg and "valid options: suits, base," in msg


def test_ruleset_and_preset_are_not_options():
    for meta in ("ruleset", "preset"):
        with pytest.raises(OptionError, match=f"'{meta}' is not an option"):
            load_rules("kawuxing3", options={meta: "kwx004"})


def test_unknown_ruleset_and_preset():
    with pytest.raises(OptionError, match=r"unknown ruleset 'kwx005'.*did you mean 'kwx004'.*: kwx004, qdjt001, suiz"):
        load_rules("kawuxing3", ruleset="kwx005")
    with pytest.raises(OptionError, match=r"unknown preset 'wild'.*barbaric, crazy, simple"):
        load_rules("kawuxing3", preset="wild")
    with pytest.raises(OptionError, match=r"'simple' is a preset"):
        load_rules("kawuxing3", ruleset="simple")
    with pytest.raises(OptionError, match=r"'kwx004' is a ruleset"):
        load_rules("kawuxing3", preset="kwx004")
    with pytest.raises(OptionError, match="not a plain name"):
        load_rules("kawuxing3", ruleset="../kwx004")


def test_unknown_variant():
    for call in (lambda: load_rules("kawuxing5"), lambda: n_players("kawuxing5"), lambda: tile_kinds("kawuxing5")):
        with pytest.raises(OptionError) as ei:
            call()
        msg = str(ei.value)
        for name in ("kawuxing3", "kawuxing4", "gejiu", "diedaohu", "yangzhou", "yangzhou_new", "liuwei"):
            assert name in msg


def test_explicit_values_are_validated_with_context():
    with pytest.raises(OptionError, match=r"option 'cap': 12 is not allowed; allowed values: 8, 16, none"):
        load_rules("kawuxing3", options={"cap": 12})
    with pytest.raises(OptionError, match=r"option 'cap': '12' is not allowed; allowed values: 8, 16, none"):
        load_rules("kawuxing3", options={"cap": "12"})


# ----------------------------------------------------------------------------------------- 4 players


def test_kawuxing4_has_no_suits_option():
    with pytest.raises(OptionError, match=r"option 'suits' does not exist for variant 'kawuxing4'"):
        load_rules("kawuxing4", options={"suits": "ps"})
    with pytest.raises(OptionError, match=r"unknown option 'suitz'") as ei:
        load_rules("kawuxing4", options={"suitz": "ps"})
    assert "suits" not in str(ei.value).split("valid options:")[1]
    assert "suits" not in options_to_dict(load_rules("kawuxing4"), "kawuxing4")
    assert "suits" not in describe_options(KawuxingOptions, "kawuxing4")


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_kawuxing4_uses_the_same_rulesets_and_presets(ruleset):
    for preset in PRESETS:
        assert load_rules("kawuxing4", ruleset, preset) == load_rules("kawuxing3", ruleset, preset)


# ----------------------------------------------------------------------------------------- tiles


def test_variant_registry():
    assert n_players("kawuxing3") == 3 and n_players("kawuxing4") == 4
    for name in ("kawuxing3", "kawuxing4"):
        spec = VARIANTS[name]
        assert spec.name == name and spec.options_cls is KawuxingOptions and spec.default_ruleset == "kwx004"
    assert set(VARIANTS) == {"kawuxing3", "kawuxing4", "gejiu", "diedaohu", "yangzhou", "yangzhou_new", "liuwei"}


def test_tile_kinds_and_counts():
    assert tile_count("kawuxing3") == 84
    assert tile_count("kawuxing3", load_rules("kawuxing3")) == 84
    assert tile_count("kawuxing4") == 120
    np.testing.assert_array_equal(tile_kinds("kawuxing3"), kinds_mask("ps", "567"))
    np.testing.assert_array_equal(tile_kinds("kawuxing4"), kinds_mask("mps", "567"))
    mp = load_rules("kawuxing3", options={"suits": "mp"})
    mask = tile_kinds("kawuxing3", mp)
    assert mask.dtype == bool and mask.shape == (34,)
    # 1m-9m, 1p-9p and 5z 6z 7z (ids 31-33); no bamboo, no winds (ids 27-30)
    assert mask[:18].all() and not mask[18:27].any() and mask[31:].all() and not mask[27:31].any()
    np.testing.assert_array_equal(mask, kinds_mask("mp", "567"))
    assert tile_count("kawuxing3", mp) == 84
    np.testing.assert_array_equal(tile_kinds("kawuxing3", KawuxingOptions(suits="ms")), kinds_mask("ms", "567"))
    with pytest.raises(TypeError):
        tile_kinds("kawuxing3", {"suits": "mp"})


# ----------------------------------------------------------------------------------------- coercion


def test_parse_option_value():
    P = KawuxingOptions
    assert parse_option_value(P, "cap", "none") is None
    assert parse_option_value(P, "cap", "16") == 16 and isinstance(parse_option_value(P, "cap", "16"), int)
    assert parse_option_value(P, "huang_liang_penalty", "1") == 1
    assert parse_option_value(P, "base", "2.5") == 2.5
    assert parse_option_value(P, "base", "2") == 2.0
    assert parse_option_value(P, "kaikou", " none ") == "none"
    for name, text in [("cap", "12"), ("cap", "None"), ("base", "0"), ("base", "nan"), ("base", "x"),
                       ("huang_liang_penalty", "2"), ("kaikou", "medium")]:
        with pytest.raises(OptionError, match=rf"option {name!r}: .* is not allowed; allowed values"):
            parse_option_value(P, name, text)
    with pytest.raises(OptionError, match="did you mean 'cap'"):
        parse_option_value(P, "capp", "8")


def test_parse_option_assignments():
    assert parse_option_assignments(["cap=16", "kaikou=none"]) == {"cap": "16", "kaikou": "none"}
    assert parse_option_assignments([" base = 2.5 "]) == {"base": "2.5"}
    assert parse_option_assignments("cap=none") == {"cap": "none"}
    for bad in ["cap", "cap=", "=16", "cap 16", "1cap=16"]:
        with pytest.raises(OptionError, match="malformed option assignment"):
            parse_option_assignments([bad])
    with pytest.raises(OptionError, match="given twice"):
        parse_option_assignments(["cap=8", "cap=16"])


def test_string_values_from_a_command_line():
    cli = parse_option_assignments(["cap=none", "base=2.5", "huang_liang_penalty=0", "kaikou=soft", "suits=ms"])
    opts = load_rules("kawuxing3", options=cli)
    assert (opts.cap, opts.base, opts.huang_liang_penalty, opts.kaikou, opts.suits) == (None, 2.5, 0, "soft", "ms")
    assert load_rules("kawuxing3", options={"cap": "16"}).cap == 16
    assert load_rules("kawuxing3", options={"base": 3}).base == 3.0


def test_options_to_dict_is_json_friendly():
    opts = load_rules("kawuxing3", preset="crazy")
    d = options_to_dict(opts)
    assert d["cap"] == "none" and d["base"] == 1.0 and d["huang_liang_penalty"] == 0
    assert list(d) == list(TABLE_3_13)
    assert json.loads(json.dumps(d)) == d
    # the dict round-trips through load_rules as explicit options
    assert load_rules("kawuxing3", options=d) == opts


def test_describe_options_lists_every_option():
    text = describe_options(KawuxingOptions)
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["option", "allowed"]
    assert len(lines) == 2 + len(TABLE_3_13)
    cap_line = next(line for line in lines if line.startswith("cap "))
    assert "8, 16, none" in cap_line and "largest share" in cap_line
    assert any(line.startswith("base ") and "a number > 0, up to 1000000" in line for line in lines)


# ----------------------------------------------------------------------------------------- files


def _write(d: Path, name: str, kind: str, options: dict, meta_extra: str = "") -> None:
    def fmt(v):
        if v is None:
            return '"none"'
        return f'"{v}"' if isinstance(v, str) else str(v)

    body = "\n".join(f"{k} = {fmt(v)}" for k, v in options.items())
    (d / f"{name}.toml").write_text(
        textwrap.dedent(
            f"""\
            [meta]
            kind = "{kind}"
            family = "kawuxing"
            name = "{name}"
            source = "test"
            {meta_extra}
            [options]
            """
        )
        + body
        + "\n",
        encoding="utf-8",
    )


@pytest.fixture
def rules_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv(O.RULES_DIR_ENV, str(tmp_path))
    _write(tmp_path, "kwx004", "ruleset", KWX004)
    return tmp_path


def test_rules_dir_env_var(rules_tmp):
    assert O.rules_dir() == rules_tmp
    assert list_rulesets("kawuxing3") == ["kwx004"] and list_presets("kawuxing3") == []
    _write(rules_tmp, "mine", "ruleset", {**KWX004, "cap": 16})
    assert load_rules("kawuxing3", "mine").cap == 16


def test_default_rules_dir_is_the_package_data():
    assert O.rules_dir() == REPO_RULES


def test_ruleset_missing_an_option_is_an_error(rules_tmp):
    partial = dict(KWX004)
    del partial["haidi"]
    _write(rules_tmp, "partial", "ruleset", partial)
    with pytest.raises(OptionError, match=r"ruleset 'partial' .* must assign every option; missing: haidi"):
        load_rules("kawuxing3", "partial")


def test_ruleset_with_unknown_option_is_an_error(rules_tmp):
    _write(rules_tmp, "extra", "ruleset", {**KWX004, "haidii": "zimo"})
    with pytest.raises(OptionError, match=r"unknown option 'haidii' in ruleset 'extra'.*did you mean 'haidi'"):
        load_rules("kawuxing3", "extra")


def test_ruleset_with_bad_value_is_an_error(rules_tmp):
    _write(rules_tmp, "badcap", "ruleset", {**KWX004, "cap": 12})
    with pytest.raises(OptionError, match=r"ruleset 'badcap' .*option 'cap': 12 is not allowed"):
        load_rules("kawuxing3", "badcap")


def test_preset_with_unknown_or_bad_option_is_an_error(rules_tmp):
    _write(rules_tmp, "p1", "preset", {"kaikuo": "none"})
    with pytest.raises(OptionError, match=r"unknown option 'kaikuo' in preset 'p1'"):
        load_rules("kawuxing3", preset="p1")
    _write(rules_tmp, "p2", "preset", {"tingtou": "both"})
    with pytest.raises(OptionError, match=r"preset 'p2' .*option 'tingtou': 'both' is not allowed"):
        load_rules("kawuxing3", preset="p2")
    _write(rules_tmp, "p3", "preset", {"suits": "mp"})
    assert load_rules("kawuxing3", preset="p3").suits == "mp"
    with pytest.raises(OptionError, match=r"option 'suits' does not exist for variant 'kawuxing4'"):
        load_rules("kawuxing4", preset="p3")


def test_malformed_rule_files(rules_tmp):
    (rules_tmp / "broken.toml").write_text("[meta\n", encoding="utf-8")
    with pytest.raises(OptionError, match="not valid TOML"):
        list_rulesets("kawuxing3")
    (rules_tmp / "broken.toml").write_bytes(b'[meta]\nname = "broken\xff"\n')
    with pytest.raises(OptionError, match=re.escape(f"{rules_tmp / 'broken.toml'}: not UTF-8 text (byte b'\\xff' at offset")):
        list_rulesets("kawuxing3")
    (rules_tmp / "broken.toml").unlink()
    _write(rules_tmp, "wrongname", "ruleset", KWX004)
    (rules_tmp / "wrongname.toml").rename(rules_tmp / "other.toml")
    with pytest.raises(OptionError, match="must equal the file name 'other'"):
        load_rules("kawuxing3")
    (rules_tmp / "other.toml").unlink()
    _write(rules_tmp, "k", "variant", {})
    with pytest.raises(OptionError, match="kind 'variant' is not allowed"):
        list_presets("kawuxing3")
    (rules_tmp / "k.toml").unlink()
    _write(rules_tmp, "m", "preset", {}, meta_extra='author = "x"')
    with pytest.raises(OptionError, match=r"unknown \['author'\]"):
        list_presets("kawuxing3")


def test_missing_rules_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(O.RULES_DIR_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(OptionError, match="does not exist"):
        load_rules("kawuxing3")


def test_other_family_files_are_not_listed(rules_tmp):
    (rules_tmp / "gj.toml").write_text(
        '[meta]\nkind = "ruleset"\nfamily = "gejiu"\nname = "gj"\nsource = "test"\n[options]\n', encoding="utf-8"
    )
    assert list_rulesets("kawuxing3") == ["kwx004"]
    with pytest.raises(OptionError, match="unknown ruleset 'gj'"):
        load_rules("kawuxing3", "gj")


@pytest.mark.parametrize("variant, name, value", [("kawuxing3", "base", 1e308), ("kawuxing3", "base", "1e7"),
                                                  ("diedaohu", "bankroll", 1e300), ("liuwei", "base", 1_000_001)])
def test_amounts_that_would_make_money_infinite_are_refused(variant, name, value):
    with pytest.raises(OptionError, match=rf"option '{name}': .* allowed values: (none or )?a number > 0, up to 1000000"):
        load_rules(variant, options={name: value})
    assert getattr(load_rules(variant, options={name: 1_000_000}), name) == 1e6
