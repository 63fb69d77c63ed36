"""``mjenv score`` for the four-player families (mjenv.cli): Gejiu, Diedaohu, Yangzhou (both styles), Liuwei.

Worked examples of RULES.md §11 (E30-E48) through ``--json`` with exact values, illegal-but-well-formed hands
(exit 0, ``legal: false``), the missed-win and situation flags, and the usage errors (exit 2, one stderr line).
"""

from __future__ import annotations

import json

import pytest

from mjenv.cli import main


def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``mjenv argv...``."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def score_json(capsys, variant, hand, *flags):
    code, out, err = run(capsys, "score", "--variant", variant, hand, *flags, "--json")
    assert code == 0 and err == ""
    assert len(out.strip().splitlines()) == 1
    got = json.loads(out)
    assert {"legal", "reason", "reading", "fans", "value", "cap", "share"} <= set(got)
    return got


def usage_error(capsys, *argv) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mjenv: error: ")
    return lines[0]


# --------------------------------------------------------------------------------------------------
# Gejiu (§6, E30-E34)
# --------------------------------------------------------------------------------------------------


def test_gejiu_e30_pinghu(capsys):
    assert score_json(capsys, "gejiu", "123m456p789s234s5z +5z discard") == {
        "legal": True,
        "reason": None,
        "reading": "123m · 456p · 234s · 789s · pair 55z",
        "fans": {"pinghu": 2},
        "value": 2,
        "cap": None,
        "share": 2,
    }


@pytest.mark.parametrize("combine, value", [("multiply", 16), ("add", 12), ("max", 8)])
def test_gejiu_e31_qingyise_daduizi_each_combine(capsys, combine, value):
    got = score_json(capsys, "gejiu", "111p333p555p77p99p +9p self-draw", "--option", f"gejiu_combine={combine}")
    assert got["legal"] and got["fans"] == {"daduizi": 4, "qingyise": 8}
    assert (got["value"], got["cap"], got["share"]) == (value, None, value)
    assert got["reading"] == "111p · 333p · 555p · 999p · pair 77p"


def test_gejiu_e32_qixing_and_e33_longqidui(capsys):
    got = score_json(capsys, "gejiu", "47m147p14s123456z +7z discard")
    assert got["fans"] == {"qixing": 32} and (got["value"], got["share"]) == (32, 32)
    assert got["reading"] == "lanpai 47m147p14s1234567z"
    got = score_json(capsys, "gejiu", "1111s2233s5566s7s +7s discard")
    assert got["fans"] == {"qingyise": 8, "longqidui": 16} and (got["value"], got["share"]) == (64, 64)


def test_gejiu_e34_after_kong_and_base(capsys):
    hand = "234m567m999m5m [X 1111z] +5m self-draw"
    got = score_json(capsys, "gejiu", hand, "--after-kong")
    assert got["fans"] == {"hunyise": 4, "gangshanghua": 8} and (got["value"], got["share"]) == (16, 16)
    assert score_json(capsys, "gejiu", hand)["fans"] == {"hunyise": 4}
    # a bare --after-kong before the hand must not swallow it; the share is V·b
    code, out, err = run(capsys, "score", "--variant", "gejiu", "--after-kong", hand, "--option", "base=2", "--json")
    assert code == 0 and err == "" and json.loads(out)["share"] == 32


def test_gejiu_no_reading_is_a_result(capsys):
    got = score_json(capsys, "gejiu", "123m456p789s234s5z +6z discard")
    assert got == {
        "legal": False, "reason": "no winning reading", "reading": "", "fans": {}, "value": 0, "cap": None, "share": 0
    }


def test_gejiu_text_names_patterns_in_chinese(capsys):
    code, out, err = run(capsys, "score", "--variant", "gejiu", "111p333p555p77p99p +9p self-draw")
    assert code == 0 and err == ""
    assert "大对子 daduizi 4" in out and "清一色 qingyise 8" in out
    assert "value    16 (multiply" in out and "cap      none" in out and "share    16 per payer" in out
    assert "rules    gejiu, ruleset gejiu002" in out and "legal    yes" in out


# --------------------------------------------------------------------------------------------------
# Diedaohu (§7, E37-E42)
# --------------------------------------------------------------------------------------------------


def test_diedaohu_e37_hunduidui_self_draw(capsys):
    assert score_json(capsys, "diedaohu", "222m777m99m55z [P 111z] +5z self-draw") == {
        "legal": True,
        "reason": None,
        "reading": "222m · 777m · 555z · pair 99m + [P 111z]",
        "hand_class": "hunduidui",
        "fans": {"hunduidui": 4},
        "value": 4,
        "cap": None,
        "share": 4,
        "whole_balance": False,
        "baopai": None,
        "baopai_from": None,
    }


def test_diedaohu_e39_fengqing_jintang_and_yuanzi(capsys):
    hand = "333z55z66z [P 111z] [P 222z] +6z discard"
    got = score_json(capsys, "diedaohu", hand)
    assert got["fans"] == {"fengqing": 16} and (got["value"], got["share"], got["whole_balance"]) == (16, 16, False)
    got = score_json(capsys, "diedaohu", hand, "--option", "bankroll=100")
    assert got["legal"] and got["value"] == 16 and got["share"] is None and got["whole_balance"] is True
    code, out, _ = run(capsys, "score", "--variant", "diedaohu", hand, "--option", "bankroll=100")
    assert code == 0 and "风清 fengqing 16" in out and "whole balance" in out


def test_diedaohu_e42_seven_pairs_is_not_a_win(capsys):
    got = score_json(capsys, "diedaohu", "1133557799m22p4p +4p discard")
    assert got["legal"] is False and got["reason"].startswith("no winning reading")
    assert (got["fans"], got["value"], got["share"], got["reading"]) == ({}, 0, 0, "")
    code, out, err = run(capsys, "score", "--variant", "diedaohu", "1133557799m22p4p +4p discard")
    assert code == 0 and err == "" and "legal    no: no winning reading" in out


def test_diedaohu_e41_missed_win_and_dadiaoche(capsys):
    waiting = "55m77m [P 111p] [P 222s] [P 333z] +7m discard"
    assert score_json(capsys, "diedaohu", waiting)["legal"] is True
    got = score_json(capsys, "diedaohu", waiting, "--louhu")
    assert got["legal"] is False and "漏胡" in got["reason"] and got["value"] == 2
    # a self-draw is never locked; louhu: off switches the lock off
    assert score_json(capsys, "diedaohu", waiting.replace("discard", "self-draw"), "--louhu")["legal"] is True
    assert score_json(capsys, "diedaohu", waiting, "--louhu", "--option", "louhu=off")["legal"] is True
    # E41: B pongs 777m and discards 5m, keeping the single 5m; the 大吊车 exception lets it win on 5m
    single = "5m [P 111p] [P 222s] [P 333z] [P 777m] +5m discard"
    assert score_json(capsys, "diedaohu", single, "--louhu")["legal"] is False
    got = score_json(capsys, "diedaohu", single, "--dadiaoche")
    assert got["legal"] and got["fans"] == {"duiduihu": 2} and got["share"] == 2


def test_diedaohu_discarder_busted(capsys):
    got = score_json(capsys, "diedaohu", "222m777m99m55z [P 111z] +5z discard", "--discarder-busted")
    assert got["legal"] is False and "busted" in got["reason"]
    assert score_json(capsys, "diedaohu", "222m777m99m55z [P 111z] +5z self-draw", "--discarder-busted")["legal"]


# --------------------------------------------------------------------------------------------------
# Yangzhou, standard and new (§8-§9, E43-E45)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant, big, total", [("yangzhou", 75, 81), ("yangzhou_new", 110, 116)])
def test_yangzhou_e43_qinglong_self_draw(capsys, variant, big, total):
    got = score_json(capsys, variant, "123m456m789m345m9m +9m self-draw")
    small = ["menqing", "pinghu", "zimo", "yaotou", "lianfu", "laoshao"]
    assert got["legal"] and got["reason"] is None
    assert got["reading"] == "123m · 345m · 456m · 789m · pair 99m"
    assert got["fans"] == {"qinglong": big, **{f: 1 for f in small}}
    assert (got["big_fan_value"], got["small_fans"], got["total"]) == (big, small, total)
    assert (got["value"], got["cap"], got["share"]) == (total, None, total)


@pytest.mark.parametrize(
    "variant, how, total, legal, share",
    [
        ("yangzhou", "discard", 14, False, 28),
        ("yangzhou", "self-draw", 15, True, 15),
        ("yangzhou_new", "discard", 19, False, 38),
        ("yangzhou_new", "self-draw", 20, True, 20),
    ],
)
def test_yangzhou_e44_threshold_both_styles(capsys, variant, how, total, legal, share):
    got = score_json(capsys, variant, f"234p234p567s567m8s +8s {how}")
    assert (got["legal"], got["total"], got["value"], got["share"]) == (legal, total, total, share)
    assert got["big_fan_value"] == (10 if variant == "yangzhou" else 15)
    minimum = 15 if variant == "yangzhou" else 20
    assert got["reason"] == (None if legal else f"total {total} < min_fan {minimum}")
    assert ("zimo" in got["small_fans"]) == (how == "self-draw")


@pytest.mark.parametrize("variant, big, total", [("yangzhou", 15, 18), ("yangzhou_new", 20, 23)])
def test_yangzhou_e45_duiduihu_discard_one_to_two(capsys, variant, big, total):
    assert score_json(capsys, variant, "111m555s77z88s [P 999p] +7z discard") == {
        "legal": True,
        "reason": None,
        "reading": "111m · 555s · 777z · pair 88s + [P 999p]",
        "fans": {"duiduihu": big, "zige": 2, "jianke": 1},
        "big_fan_value": big,
        "small_fans": ["zige", "zige", "jianke"],
        "total": total,
        "value": total,
        "cap": None,
        "share": 2 * total,
        "baopai": None,
        "baopai_from": None,
    }


def test_yangzhou_ruleset_sets_the_style(capsys):
    got = score_json(capsys, "yangzhou", "111m555s77z88s [P 999p] +7z discard", "--ruleset", "yznew003")
    assert (got["big_fan_value"], got["total"]) == (20, 23)


def test_yangzhou_seat_and_round_wind(capsys):
    hand = "111m555s22z88s [P 999p] +2z discard"  # a set of 2z (South)
    assert score_json(capsys, "yangzhou", hand)["small_fans"] == ["zige", "zige"]
    got = score_json(capsys, "yangzhou", hand, "--seat-wind", "S")
    assert got["small_fans"] == ["zige", "zige", "menfeng"] and got["total"] == 18
    got = score_json(capsys, "yangzhou", "--round-wind", "s", "--seat-wind", "S", hand)
    assert got["small_fans"] == ["zige", "zige", "menfeng", "quanfeng"] and got["total"] == 19
    assert score_json(capsys, "yangzhou", hand, "--seat-wind", "N", "--round-wind", "E")["total"] == 17


def test_yangzhou_missed_win_and_no_seven_pairs(capsys):
    hand = "111m555s77z88s [P 999p] +7z discard"
    got = score_json(capsys, "yangzhou", hand, "--louhu")
    assert got["legal"] is False and "漏胡" in got["reason"] and got["total"] == 18
    assert score_json(capsys, "yangzhou", hand, "--dadiaoche")["legal"] is True
    assert score_json(capsys, "yangzhou", hand.replace("discard", "self-draw"), "--louhu")["legal"] is True
    got = score_json(capsys, "yangzhou_new", "1133557799m22p4p +4p discard")
    assert got["legal"] is False and got["total"] == 0 and got["fans"] == {}


def test_yangzhou_text_output(capsys):
    code, out, err = run(capsys, "score", "--variant", "yangzhou", "111m555s77z88s [P 999p] +7z discard")
    assert code == 0 and err == ""
    assert "对对胡 duiduihu 15" in out and "子格 zige 2" in out and "中发白 jianke 1" in out
    assert "value    18 (T = B 15 + small fans 3" in out and "share    36 from the discarder" in out
    code, out, _ = run(capsys, "score", "--variant", "yangzhou_new", "234p234p567s567m8s +8s discard")
    assert code == 0 and "一板 yiban 15" in out and "legal    no: total 19 < min_fan 20" in out


# --------------------------------------------------------------------------------------------------
# Liuwei (§10, E47-E48)
# --------------------------------------------------------------------------------------------------


def test_liuwei_e47_duiduihu_discard_peichong(capsys):
    assert score_json(capsys, "liuwei", "22m44s [P 111p] [P 999s] [P 333z] +2m discard") == {
        "legal": True,
        "reason": None,
        "reading": "222m · pair 44s + [P 111p] [P 999s] [P 333z]",
        "hand_class": "duiduihu",
        "fans": {"duiduihu": 2},
        "value": 2,
        "cap": None,
        "share": 10,
        "whole_balance": False,
        "peichong": 5,
    }


def test_liuwei_e48_pihu_self_draw_and_scaling(capsys):
    got = score_json(capsys, "liuwei", "123m456p789s234s5z +5z self-draw")
    assert got["fans"] == {"pihu": 1} and (got["share"], got["peichong"]) == (6, None)
    got = score_json(capsys, "liuwei", "22m44s [P 111p] [P 999s] [P 333z] +2m discard", "--option", "bankroll=100")
    assert (got["share"], got["peichong"]) == (20, 10)


def test_liuwei_fengqing_whole_balance_and_flags(capsys):
    got = score_json(capsys, "liuwei", "333z55z66z [P 111z] [P 222z] +6z discard")
    assert got["fans"] == {"fengqing": 16} and got["share"] is None and got["whole_balance"] is True
    assert got["peichong"] == 16
    hand = "22m44s [P 111p] [P 999s] [P 333z] +2m discard"
    got = score_json(capsys, "liuwei", hand, "--louhu")
    assert got["legal"] is False and "漏胡" in got["reason"] and got["share"] == 10
    assert score_json(capsys, "liuwei", hand, "--discarder-busted")["legal"] is False
    code, out, _ = run(capsys, "score", "--variant", "liuwei", hand)
    assert code == 0 and "对对胡 duiduihu 2" in out and "10 from the discarder (出冲), 5 from each other player" in out


# --------------------------------------------------------------------------------------------------
# Usage errors and help
# --------------------------------------------------------------------------------------------------

_GEJIU = "234m567m999m5m [X 1111z] +5m self-draw"
_DIEDAOHU = "222m777m99m55z [P 111z] +5z self-draw"


@pytest.mark.parametrize(
    "argv, fragment",
    [
        # flags of another family name the flag and the variants it applies to
        (["--variant", "gejiu", _GEJIU, "--liangdao"], "--liangdao applies to kawuxing3, kawuxing4 only"),
        (["--variant", "gejiu", _GEJIU, "--louhu"], "--louhu applies to diedaohu, yangzhou, yangzhou_new, liuwei"),
        (["--variant", "gejiu", _GEJIU, "--lock", "2"], "--lock applies to kawuxing3, kawuxing4"),
        (["123p456p789p23s77z +1s", "--seat-wind", "E"], "--seat-wind applies to yangzhou, yangzhou_new only"),
        (["123p456p789p23s77z +1s", "--variant", "kawuxing4", "--dadiaoche"], "--dadiaoche applies to"),
        (["--variant", "diedaohu", _DIEDAOHU, "--after-kong"], "--after-kong applies to kawuxing3, kawuxing4, gejiu"),
        (["--variant", "diedaohu", _DIEDAOHU, "--round-wind", "S"], "--round-wind"),
        (["--variant", "yangzhou", _DIEDAOHU, "--discarder-busted"], "--discarder-busted applies to diedaohu, liuwei"),
        (["--variant", "liuwei", _DIEDAOHU, "--konged"], "--konged"),
        # the Gejiu kong bloom: a self-draw, no chain position
        (["--variant", "gejiu", _GEJIU.replace("self-draw", "discard"), "--after-kong"], "self-draw"),
        (["--variant", "gejiu", _GEJIU, "--after-kong=2"], "chain position"),
        # bad values, options, rulesets, presets and hands
        (["--variant", "yangzhou", _DIEDAOHU, "--seat-wind", "X"], "--seat-wind"),
        (["--variant", "yangzhou", _DIEDAOHU, "--option", "cap=8"], "unknown option"),
        (["--variant", "yangzhou", _DIEDAOHU, "--option", "min_fan=-1"], "min_fan"),
        (["--variant", "diedaohu", _DIEDAOHU, "--ruleset", "kwx004"], "unknown ruleset"),
        (["--variant", "liuwei", _DIEDAOHU, "--preset", "crazy"], "unknown preset"),
        (["--variant", "diedaohu", "22m777m99m55q +5z discard"], "unexpected character"),
        (["--variant", "diedaohu", "55z99m [C 123m] [P 111z] [P 222m] +5z discard"], "no chi"),
        (["--variant", "yangzhou", "22m777m99m55z [P 111z]"], "no winning tile"),
        (["--variant", "liuwei", "222m777m99m5z [P 111z] +5z discard"], "concealed tiles"),
        (["--variant", "gejiu", "1111m2223m456m7m +1m discard"], "at most 4 copies"),
    ],
)
def test_usage_errors_exit_two_with_one_line(capsys, argv, fragment):
    assert fragment in usage_error(capsys, "score", *argv)


def test_help_lists_every_variant_with_its_rulesets(capsys):
    code, out, _ = run(capsys, "score", "--help")
    assert code == 0
    for name in ("gejiu", "diedaohu", "yangzhou", "yangzhou_new", "liuwei", "kawuxing3", "kawuxing4"):
        assert f"\n  {name} " in out
    for ruleset in ("gejiu002", "diedaohu003", "yzstd003", "yznew003", "liuwei003", "kwx004"):
        assert ruleset in out
    for flag in ("--louhu", "--dadiaoche", "--discarder-busted", "--seat-wind", "--round-wind"):
        assert flag in out
    for option in ("gejiu_combine", "bankroll", "min_fan", "yz_style"):
        assert option in out
