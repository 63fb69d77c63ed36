"""bench/departure_diagnostics.py: the label-noise, sampler and calibration measurements of a departure head run on
small inputs and say what they measured; bad arguments are refused with a one-line error."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from agents.training.distill import label_states, save_labels

_spec = importlib.util.spec_from_file_location(
    "bench_departure_diagnostics", Path(__file__).resolve().parents[1] / "bench" / "departure_diagnostics.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.fixture(scope="module")
def label_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("diag") / "labels.npz"
    save_labels(path, label_states("gejiu", decisions=300, tables=16, label_prob=0.5, worlds=2, candidates=3, seed=4))
    return str(path)


def test_noise_labels_the_same_decisions_at_each_world_count(capsys):
    assert bench.main(["noise", "--variant", "gejiu", "--decisions", "60", "--seed", "3", "--worlds", "2", "4"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.strip().startswith(("2 |", "4 |"))]
    assert len(rows) == 2 and "correlation of the two labels" in out


def test_truth_compares_sampled_and_true_world_gains_and_reads_a_fitted_head(label_file, capsys):
    assert bench.main(["truth", "--variant", "gejiu", "--decisions", "80", "--seed", "5", "--worlds", "2",
                       "--labels", label_file, "--fit", "250", "--tau", "0.0"]) == 0
    out = capsys.readouterr().out
    assert "in the true world" in out and "head, tau 0:" in out


def test_truth_reads_every_ready_pair_in_scope_ready(capsys):
    assert bench.main(["truth", "--variant", "gejiu", "--scope", "ready", "--decisions", "40", "--seed", "5",
                       "--worlds", "2"]) == 0
    out = capsys.readouterr().out
    assert "40 decisions of walls of seed 5" in out and "scope ready" in out and "in the true world" in out
    with pytest.raises(SystemExit):
        bench.main(["truth", "--variant", "kawuxing4", "--scope", "ready"])


def test_calibration_bins_held_out_labels_by_predicted_gain(label_file, capsys):
    assert bench.main(["calibration", "--variant", "gejiu", "--labels", label_file, "--fit", "250", "--sizes", "100",
                       "--tau", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "50 held-out decisions" in out and "fit 100:" in out and "fit 250:" in out and "tau 0.1: departs" in out


def test_calibration_refuses_a_fit_that_leaves_nothing_held_out_and_a_checkpoint_without_held_labels(label_file):
    with pytest.raises(SystemExit, match="leaves none"):
        bench.main(["calibration", "--labels", label_file, "--fit", "300"])
    with pytest.raises(SystemExit, match="needs --held"):
        bench.main(["calibration", "--checkpoint", "agents/checkpoints/kawuxing4-default.pt"])
    with pytest.raises(SystemExit):
        bench.main(["truth", "--labels", label_file])  # a head needs --fit


def test_calibration_reads_a_win_head_over_its_advisor_on_win_labels(label_file, tmp_path, capsys):
    from agents.training.departures import win_labels

    held = save_labels(tmp_path / "win.npz", win_labels("gejiu", decisions=40, seed=11, advisor="heuristic-advice-v3",
                                                        chunk=150))
    ckpt = "agents/checkpoints/gejiu-default.pt"  # the shipped Gejiu head: scope win over heuristic-advice-v3
    assert bench.main(["calibration", "--variant", "gejiu", "--checkpoint", ckpt, "--held", str(held),
                       "--tau", "0"]) == 0
    out = capsys.readouterr().out
    assert "40 held-out decisions (40 alternatives)" in out and "tau 0: departs" in out
    with pytest.raises(SystemExit, match="reads win labels"):
        bench.main(["calibration", "--variant", "gejiu", "--checkpoint", ckpt, "--held", label_file])
