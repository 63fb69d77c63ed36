"""The rules are resolved once per rule configuration (issue 28): ``evaluate.py`` and ``train.py`` resolve them at
the door (:func:`mjenv.rules.load_rules`) and hand the :class:`mjenv.rules.Rules` value down through the agents,
the arena, the trainer's stages and the checkpoints' checks, which never resolve the strings again.  A checkpoint
records its rules as a complete options record; a record equal to the run's rules is those rules, not a second
resolution (:func:`agents.players.base.resolve_rules`)."""

from __future__ import annotations

import pytest

from mjenv.rules import resolution_count

KAWUXING_CHECKPOINT = "agents/checkpoints/kawuxing3-default.pt"


def _resolutions(run) -> int:
    before = resolution_count()
    run()
    return resolution_count() - before


def test_evaluate_resolves_the_rules_once(tmp_path):
    """A short tournament of the shipped checkpoint (advisor and departure head checked under its rules) against
    the heuristic: one resolution."""
    pytest.importorskip("torch")
    import evaluate

    args = ["--agents", KAWUXING_CHECKPOINT, "heuristic", "--walls", "1", "--out", str(tmp_path), "--no-plots",
            "--no-progress", "--run_name", "one"]
    assert _resolutions(lambda: evaluate.main(args)) == 1


def test_evaluate_with_a_ruleset_and_options_resolves_once(tmp_path):
    import evaluate

    args = ["--variant", "gejiu", "--options", "base=2", "--agents", "heuristic", "random", "--walls", "1",
            "--out", str(tmp_path), "--no-plots", "--no-progress", "--run_name", "gejiu"]
    assert _resolutions(lambda: evaluate.main(args)) == 1


def test_evaluate_compare_resolves_each_configuration_once(tmp_path):
    """``--compare A B``: the run's own rules and each compared configuration, one resolution each."""
    import evaluate

    args = ["--compare", "kwx004", "suizhou000", "--agents", "heuristic", "random", "--walls", "1", "--out",
            str(tmp_path), "--no-plots", "--no-progress", "--run_name", "cmp"]
    assert _resolutions(lambda: evaluate.main(args)) == 3


def test_train_resolves_the_rules_once(tmp_path):
    """A tiny run of every all-seat stage the advised config has (cloning with the advisor's rows, PPO with
    rollouts, evaluations, the final checkpoint): one resolution."""
    pytest.importorskip("torch")
    import train

    argv = ["--config", "advised", "--bc_rounds", "1", "--bc_tables", "4", "--bc_steps", "4", "--bc_holdout", "16", "--total_timesteps", "64", "--num_envs", "4",
            "--n_steps", "16", "--batch_size", "32", "--final_eval_walls", "1", "--eval_every", "0", "--out",
            str(tmp_path), "--run_name", "tiny", "--no-progress", "--no-tensorboard", "--no-curve", "--threads", "1"]
    assert _resolutions(lambda: train.main(argv)) == 1


def test_agents_take_the_rules_value_and_the_old_keywords():
    """``make_agent(name, rules)`` plays under the value given (no resolution); ``make_agent(name, variant,
    options)`` still works and resolves once."""
    from agents import make_agent
    from mjenv.rules import load_rules

    rules = load_rules("liuwei", options={"base": 2})
    for name in ("heuristic", "heuristic-flush", "fast", "search"):
        before = resolution_count()
        agent = make_agent(name, rules)
        assert resolution_count() == before and agent.rules is rules
    before = resolution_count()
    old = make_agent("heuristic", "liuwei", {"base": 2})
    assert resolution_count() == before + 1 and old.rules == rules
    with pytest.raises(ValueError, match="differ from the rules given"):
        make_agent("heuristic", rules, {"base": 3})
