"""The ``mjenv`` console script (mjenv.cli): ``score`` output, JSON contract and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mjenv.cli import main


def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``mjenv argv...``."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def score_json(capsys, *argv):
    code, out, err = run(capsys, "score", *argv, "--json")
    assert code == 0 and err == ""
    assert len(out.strip().splitlines()) == 1
    return json.loads(out)


def test_json_e06_ming_sigui(capsys):
    assert score_json(capsys, "24p678s789s55z [P 333p] +3p discard") == {
        "legal": True,
        "reason": None,
        "reading": "234p · 678s · 789s · pair 55z + [P 333p]",
        "fans": {"ming_sigui": 2},
        "value": 2,
        "cap": 8,
        "share": 2,
    }


def test_json_e03_value_above_cap_and_cap_none(capsys):
    got = score_json(capsys, "1122334456677p +5p self-draw")
    assert got["fans"] == {"qingyise": 4, "qidui": 4}
    assert (got["value"], got["cap"], got["share"]) == (16, 8, 8)
    assert got["reading"] == "seven pairs 11p · 22p · 33p · 44p · 55p · 66p · 77p"
    got = score_json(capsys, "1122334456677p +5p self-draw", "--option", "cap=none")
    assert (got["value"], got["cap"], got["share"]) == (16, None, 16)


def test_json_e11_liangdao(capsys):
    got = score_json(capsys, "234p567p345s66z78s +9s discard(B)", "--liangdao")
    assert got["legal"] and got["fans"] == {"liangdao": 2} and got["value"] == 2 and got["share"] == 2


def test_json_e21_shuanglong_cap_16(capsys):
    got = score_json(capsys, "1111p3333s55p77p9s +9s self-draw", "--liangdao")
    assert got["fans"] == {"shuanglong": 16, "liangdao": 2}
    assert (got["value"], got["cap"], got["share"]) == (32, 16, 16)


def test_json_e22_ruleset_and_preset(capsys):
    got = score_json(capsys, "1122335577994p +4p self-draw", "--ruleset", "qdjt001")
    assert (got["value"], got["cap"], got["share"]) == (8, 8, 8)
    got = score_json(
        capsys, "1122335577994p +4p self-draw", "--ruleset", "qdjt001", "--preset", "barbaric", "--liangdao"
    )
    assert (got["value"], got["cap"], got["share"]) == (16, 16, 16)


def test_json_e28_after_kong_position(capsys):
    hand = "123p78s55z [A 7777p] [X 2222s] +9s self-draw"
    assert score_json(capsys, hand, "--after-kong")["fans"] == {"gangkai": 2}
    got = score_json(capsys, hand, "--after-kong=2", "--preset", "barbaric")
    assert got["fans"] == {"gangkai": 4} and got["value"] == 4
    # flags before the hand: a bare --after-kong must not swallow it
    assert score_json(capsys, "--after-kong", hand)["fans"] == {"gangkai": 2}
    assert score_json(capsys, "--preset", "barbaric", "--after-kong", "2", hand)["fans"] == {"gangkai": 4}


def test_json_e25_four_players(capsys):
    got = score_json(capsys, "123m456m789m234m5m +5m self-draw", "--variant", "kawuxing4")
    assert got["fans"] == {"qingyise": 4, "kawuxing": 2} and got["value"] == 8


def test_json_last_tile(capsys):
    assert score_json(capsys, "123p456p789p23s77z +1s self-draw", "--last-tile")["fans"] == {"haidi": 2}


def test_not_legal_kaikou_exits_zero(capsys):
    got = score_json(capsys, "123p456p789p23s77z +4s discard")
    assert got["legal"] is False and got["reason"] == "kaikou hard: value 1 < 2 on a discard"
    assert got["value"] == 1 and got["fans"] == {"pihu": 1}
    assert score_json(capsys, "123p456p789p23s77z +4s discard", "--option", "kaikou=none")["legal"] is True


def test_not_legal_no_reading_exits_zero(capsys):
    got = score_json(capsys, "123p456p789p23s77z +5s discard")
    assert got == {
        "legal": False, "reason": "no winning reading", "reading": "", "fans": {}, "value": 0, "cap": None, "share": 0
    }
    code, out, err = run(capsys, "score", "123p456p789p23s77z +5s discard")
    assert code == 0 and "no winning reading" in out and err == ""


def test_text_output_names_fans_in_chinese(capsys):
    code, out, err = run(capsys, "score", "46p123s789s55z777z +5p rob")
    assert code == 0 and err == ""
    assert "卡五星 kawuxing ×2" in out and "抢杠胡 qianggang ×2" in out
    assert "value    4" in out and "cap      8" in out and "share    4" in out and "legal    yes" in out


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["score", "24p678s789s55q +3p"], "unexpected character"),
        (["score", "24p678s789s55z [P 333p]"], "no winning tile"),
        (["score", "24p678s789s55z +3p discard"], "concealed tiles"),
        (["score", "123m456p789p23s77z +4s discard"], "not used by this variant"),
        (["score", "123p456p789p23s77z +4s discard", "--option", "cap=3"], "'cap'"),
        (["score", "123p456p789p23s77z +4s discard", "--option", "capp=8"], "unknown option"),
        (["score", "123p456p789p23s77z +4s discard", "--option", "cap"], "malformed option"),
        (["score", "123p456p789p23s77z +4s discard", "--variant", "kawuxing5"], "unknown variant"),
        (["score", "123p456p789p23s77z +4s discard", "--variant", "gejiu", "--liangdao"], "--liangdao applies to kawuxing3"),
        (["score", "123p456p789p23s77z +4s discard", "--ruleset", "kwx005"], "unknown ruleset"),
        (["score", "123p456p789p23s77z +4s discard", "--preset", "wild"], "unknown preset"),
        (["score", "123p456p789p23s77z +4s discard", "--after-kong=-1"], "--after-kong"),
        (["score", "123p456p789p23s77z +4s", "--after-kong=x"], "--after-kong"),
        (["score", "46p123s789s55z777z +5p rob", "--after-kong"], "rob"),
        (["score", "123p456p789p23s77z +4s", "--bogus"], "unrecognized arguments"),
        (["score"], "required"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_malformed_input_exits_two_with_one_line(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mjenv: error: ") and fragment in lines[0]


def test_help_lists_rulesets_and_presets(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "score" in out
    code, out, _ = run(capsys, "score", "--help")
    assert code == 0
    for name in ("kwx004", "suizhou000", "qdjt001", "simple", "barbaric", "crazy", "kawuxing4", "ming_sigui_scope"):
        assert name in out


@pytest.mark.slow
def test_module_entry_point_exit_code_and_no_traceback():
    bad = subprocess.run([sys.executable, "-m", "mjenv.cli", "score", "24p +3p"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and bad.stderr.startswith("mjenv: error: ") and "Traceback" not in bad.stderr
