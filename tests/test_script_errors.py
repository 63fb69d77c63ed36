"""Bad command lines of evaluate.py and train.py: one ``PROG: error: ...`` line naming the field, exit status 2,
nothing written; valid JSON output; help texts."""

from __future__ import annotations

import json
import re

import pytest

import evaluate
import train
from mjenv.rules.options import VARIANTS

EVAL_ERRORS = [
    (["--variant", "foo"], "unknown variant 'foo'"),
    (["--ruleset", "nope"], "unknown ruleset 'nope'"),
    (["--preset", "nope"], "preset 'nope'"),
    (["--options", "kaikou=zz"], "option 'kaikou'"),
    (["--options", "kaikou"], "kaikou"),
    (["--compare", "zzz"], "--compare 'zzz'"),
    (["--compare", "kwx004:cap=-4"], "--compare 'kwx004:cap=-4'"),
    (["--seed", "-1"], "--seed must be >= 0"),
    (["--walls", "0"], "--walls must be >= 1"),
    (["--walls", "-5"], "--walls must be >= 1"),
    (["--walls", "x"], "--walls: expected int"),
    (["--walls", "1.5"], "--walls: expected int"),
    (["--batch_size", "0"], "--batch_size must be >= 1"),
    (["--first_wall", "-1"], "--first_wall must be >= 0"),
    (["--replays", "-1"], "--replays must be >= 0"),
    (["--agents", "foo", "random"], "--agents 'foo': unknown agent"),
    (["--agents", "missing.pt", "random"], "--agents 'missing.pt': checkpoint 'missing.pt' not found"),
    (["--plots", "maybe"], "unrecognized arguments"),
    (["--nosuch", "1"], "unrecognized arguments: --nosuch"),
]


def exit_code(main, argv) -> int:
    """The exit status of a script's ``main`` (evaluate.py returns it, train.py raises ``SystemExit``)."""
    try:
        result = main(argv)
    except SystemExit as exc:
        return exc.code
    return result if isinstance(result, int) else 0


def _one_error_line(capsys, prog: str) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"{prog}: error: ")
    assert "Traceback" not in captured.err
    return lines[0]


@pytest.mark.parametrize("argv,message", EVAL_ERRORS, ids=[" ".join(a) for a, _ in EVAL_ERRORS])
def test_evaluate_bad_arguments_are_one_line_and_exit_2(tmp_path, capsys, argv, message):
    assert exit_code(evaluate.main, [*argv, "--out", str(tmp_path / "out"), "--no-progress", "--no-plots", "--no-rating"]) == 2
    assert message in _one_error_line(capsys, "evaluate.py")
    assert not (tmp_path / "out").exists()  # nothing written


def test_evaluate_checkpoint_errors_are_one_line(tmp_path, capsys):
    fake = tmp_path / "notes.pt"
    fake.write_text("not a checkpoint", encoding="utf-8")
    pytest.importorskip("torch")
    assert exit_code(evaluate.main, ["--agents", str(fake), "random", "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    line = _one_error_line(capsys, "evaluate.py")
    assert "notes.pt" in line and "weights_only" not in line
    assert not (tmp_path / "out").exists()


TRAIN_ERRORS = [
    (["--total_timesteps", "-1"], "--total_timesteps must be >= 0"),
    # (the sb3 trainer and distillation read the advised network: the default config's network-only net refuses them first)
    (["--config", "advised", "--trainer", "sb3", "--total_timesteps", "0"], "--total_timesteps: the sb3 trainer needs at least 1"),
    (["--config", "advised", "--trainer", "sb3", "--distill_decisions", "10"], "--distill_decisions: search distillation runs in the allseat"),
    (["--config", "advised", "--distill_labels", "missing.npz"], "--distill_labels: 'missing.npz' not found"),
    (["--distill_worlds", "1"], "--distill_worlds must be >= 2"),
    (["--distill_verify_worlds", "1"], "--distill_verify_worlds: 0 (no verification) or at least 2"),
    (["--batch_size", "0"], "--batch_size must be >= 2"),
    (["--batch_size", "100000"], "--batch_size 100000 exceeds the rollout"),
    (["--seed", "-1"], "--seed must be >= 0"),
    (["--variant", "foo"], "unknown variant 'foo'"),
    (["--options", "cap=zz"], "option 'cap'"),
    (["--gamma", "2"], "--gamma must be <= 1"),
    (["--learning_rate", "nan"], "--learning_rate: expected a finite number"),
    (["--num_envs", "0"], "--num_envs must be >= 1"),
    (["--opponents", "random", "--opponent_weights", "1", "2"], "--opponent_weights: 2 weights for 1 --opponents"),
    (["--opponents", "random", "--opponent_weights", "-1"], "--opponent_weights must be >= 0"),
    (["--opponents", "random", "--opponent_weights", "0"], "positive weight"),
    (["--opponents", "bogus", "--opponent_weights", "1"], "--opponents: 'bogus'"),
    (["--eval_opponents", "self"], "--eval_opponents: 'self'"),
    (["--init_checkpoint", "missing.pt"], "--init_checkpoint: 'missing.pt' not found"),
    (["--config", "nope"], "--config: 'nope' not found"),
    (["--trainer", "sb3"], "--net resnet1d: only with --trainer allseat"),
    (["--eval_walls", "0"], "--eval_walls must be >= 1"),
]


@pytest.mark.parametrize("argv,message", TRAIN_ERRORS, ids=[" ".join(a) for a, _ in TRAIN_ERRORS])
def test_train_bad_arguments_are_one_line_and_exit_2(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        train.main([*argv, "--out", str(tmp_path / "out"), "--no-progress", "--no-tensorboard"])
    assert exc.value.code == 2
    assert message in _one_error_line(capsys, "train.py")
    assert not (tmp_path / "out").exists()


def test_config_file_value_of_the_wrong_type_is_refused(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("num_envs = 1.5\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        train.main(["--config", str(bad), "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    assert "num_envs: expected int, got 1.5" in _one_error_line(capsys, "train.py")


def _strict_json(text: str):
    def bad_constant(name):
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=bad_constant)


def test_one_wall_writes_valid_json(tmp_path, capsys):
    evaluate.main(["--agents", "random", "heuristic", "--walls", "1", "--out", str(tmp_path), "--run_name", "one",
                   "--no-progress", "--no-plots", "--no-rating", "--quiet"])
    summary = _strict_json((tmp_path / "one" / "summary.json").read_text(encoding="utf-8"))
    assert summary["hands"] == 6
    assert all(a["ci95"] is None for a in summary["agents"])  # one wall: no interval
    evaluate.main(["--agents", "random", "heuristic", "--walls", "1", "--out", str(tmp_path), "--run_name", "cmp",
                   "--compare", "default", "kwx004/simple", "--no-progress", "--no-plots", "--quiet"])
    _strict_json((tmp_path / "cmp" / "compare.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("script,prog", [(evaluate, "evaluate.py"), (train, "train.py")])
def test_help_lists_every_variant_and_each_default_once(script, prog, capsys):
    assert exit_code(script.main, ["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert not re.search(r"\(default: [^)]*\) \(default:", text)
    assert "--walls" not in text or "(default: 300)" in text
    for variant in VARIANTS:
        assert variant in text
    assert text.count("(default: kawuxing3)") == 1
