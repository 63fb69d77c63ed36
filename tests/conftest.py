"""Settings of the test session for the README's command, ``python -m pytest -n auto`` (pytest-xdist, one worker
per core), that change how fast the suite runs, never what a test checks.

* One torch / BLAS thread per worker.  The workers already fill the cores; a second thread per worker only
  spin-waits at every parallel region, which costs CPU without finishing sooner (under load the torch tests took
  up to 5x their single-thread CPU).  A test that sets torch's thread count (train.py does) is set back after it.
* The tests that take several seconds start first, and workers take tests 5 at a time, so that no long test
  starts near the end and becomes the run's tail while the other worker waits.  The list is measured
  (``--durations``, fresh clone, empty compiled cache); a name missing from it only changes the order.
* Property tests (hypothesis) run **derandomized**: the ``derandomized`` profile, loaded here, fixes every test's
  examples (a seed derived from the test) and keeps no example database, so the suite gives the same verdict on
  every machine and every run, and a submission cannot fail on a fuzz example that an unrelated bug let through.
  The randomized hunt is ``python tests/fuzz_long.py`` (profile ``randomized``, more examples, a printed seed);
  ``MJENV_HYPOTHESIS_PROFILE=randomized python -m pytest ...`` runs any test file that way.
* Tests marked ``slow`` start other processes (a local Ray, fresh interpreters loading the compiled-code cache, the
  console, an external bot): each pays an interpreter's start-up and imports again, a few seconds of CPU, so the
  README's command skips them (reported as skipped) and ``--runslow`` runs them; ``.ci/run`` runs them in its
  second step (``python -m pytest -n auto -m "slow or rllib" --runslow``).
* The randomized sweeps in ``SWEEPS`` (the same check over several seeds, variants or rule options, seconds a
  case) run **every k-th case** (most: the first only) in the README's command and every case with ``--runslow``:
  the other cases are marked ``slow`` here.  Every check still runs in the default suite; CI runs every case.
  The budget is the suite's time on the project's 2-core machine (under 4 minutes); these and the process-starting
  tests are the ones that cost the most (``--durations``).
"""

from __future__ import annotations

import os
import sys

import pytest

try:  # the dev extra installs hypothesis; without it only the property tests fail, at their import
    from hypothesis import settings as _hypothesis_settings
except ModuleNotFoundError:
    _hypothesis_settings = None
else:
    _hypothesis_settings.register_profile("derandomized", derandomize=True, database=None)
    _hypothesis_settings.register_profile("randomized", derandomize=False)
    _hypothesis_settings.load_profile(os.environ.get("MJENV_HYPOTHESIS_PROFILE", "derandomized"))

WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if WORKER:  # read by torch and numpy's BLAS when they start their thread pools
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

# Node-id prefixes of the long tests, longest first (seconds on an idle 2-core machine, cold compiled cache).
# The three that start a local Ray and the two other RLlib tests are the first SCHED_CHUNK: one worker runs them
# one after another (two local Rays at once would compete for the cores), and only that worker imports RLlib.
LONG_FIRST = (
    "tests/test_distributed.py::test_a_ray_run_gives_the_local_results",  # 18 s: Ray start-up and its workers
    "tests/test_train.py::test_one_ray_worker_gives_the_local_runs_result",  # 10 s
    "tests/test_rllib.py::",  # 7.5 s for RLlib's PPO
    "tests/test_yzscore.py::test_verdict_equals_score_win",  # 8 + 5 + 2.4 s (the first compiles the verdict)
    "tests/test_clone.py::test_train_with_cloning",  # 7.4 s
    "tests/test_departures.py::test_train_fits_a_departure_head_from_labels",  # 6.2 s
    "tests/test_departures.py::test_a_checkpoint_with_a_departure_head_plays_it_and_is_checked",  # 5.1 s
    "tests/test_train.py::test_advised_run_with_an_oracle_critic",  # 6 s
    "tests/test_kwscore.py::test_verdict_equals_score_win",  # 5.9 s
    "tests/test_handk.py::test_other_dtypes",  # 4.7 s
    "tests/test_clone.py::test_tiny_cloning_run",  # 4.6 s
    "tests/test_yzscore.py::test_near_minimum",  # 4.4 s
    "tests/test_compiled_cache.py::test_a_damaged_entry_is_discarded",  # 3.2 s
    "tests/test_worlds.py::test_worlds_keep_what_the_seat_sees_and_play_on",  # 7 x 2-3 s
    "tests/test_departures.py::test_fit_head_learns_a_planted_gain",  # 3.6 s
    "tests/test_distill.py::test_fit_learns_where_to_depart_from_the_advice",  # 3.2 CPU s
    "tests/test_heuristic_triplets.py::test_triplets_ukeire_matches_draw_by_draw",  # 2.7 s
    "tests/test_fuzz.py::test_script_arguments_are_accepted_or_refused_in_one_line",  # 2.6 s
    "tests/test_train.py::test_allseat_smoke_run",  # 2.3 s
    "tests/test_train.py::test_train_smoke_run",  # 2.3 s
)
# Randomized sweeps: the README's command runs every k-th case (k = FIRST: the first case only), --runslow runs all.
FIRST = 1 << 20
SWEEPS = {
    "tests/test_worlds.py::test_worlds_keep_what_the_seat_sees_and_play_on": FIRST,  # 7 variants, 4-6 s each
    "tests/test_worlds.py::test_the_true_table_as_a_world_derives_the_engines_locks_and_dadiaoche": FIRST,
    "tests/test_yzscore.py::test_verdict_equals_score_win": FIRST,  # 3 seeds
    "tests/test_yzscore.py::test_engine_verdicts_in_every_round": FIRST,
    "tests/test_yzscore.py::test_reading_fans_equal_score_win": FIRST,
    "tests/test_kwscore.py::test_verdict_equals_score_win": FIRST,
    "tests/test_compiled_settlement.py::test_compiled_settlement_equals_the_scorer_on_random_wins": FIRST,
    "tests/test_compiled_settlement.py::test_compiled_yangzhou_settlement_equals_the_scorer_on_random_wins": FIRST,
    "tests/test_louhu_window.py::test_window_bits_equal_score_legality": FIRST,
    "tests/test_review.py::test_every_variant": FIRST,
    "tests/test_kernel_ends_4p.py::test_compiled_equals_python_path_over_sessions": FIRST,
    "tests/test_viewer.py::test_frames_match_engine_after_every_step": FIRST,
    "tests/test_handfeat.py::test_features_equal_the_reference_on_random_play": FIRST,
    "tests/test_threads.py::test_threads_equal_one_thread": FIRST,
    "tests/test_threads.py::test_differential_with_threads": FIRST,
    "tests/test_autoplay.py::test_random_step_threads_equal_one_thread": FIRST,
    "tests/test_twins.py::test_the_compiled_player_plays_heuristic_flush_moves": FIRST,
    "tests/test_engine_differential.py::test_compiled_engine_equals_reference": 3,  # 44 rule configurations
    "tests/test_engine.py::test_random_games_keep_every_invariant": 3,  # variant x ruleset x preset
    "tests/test_observation.py::test_compiled_encoder_equals_the_numpy_encoder": 2,
    "tests/test_engine_4p.py::test_random_games_4p_variants": 2,
    "tests/test_result_readings.py::test_results_from_the_kernels_reading_equal_the_full_scorer": 2,
    "tests/test_advice.py::test_features_match_the_heuristic_and_a_slow_shanten": FIRST,
}
SCHED_CHUNK = 5  # tests a worker is sent at a time (xdist's --maxschedchunk; its default sends 1/8 of the suite)


def _rank(nodeid: str) -> int:
    for i, prefix in enumerate(LONG_FIRST):
        if nodeid.startswith(prefix):
            return i
    return len(LONG_FIRST)


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the tests marked slow (they start other processes; .ci/run runs them)")


def pytest_configure(config):
    # Only when the command line leaves it unset; the option exists when pytest-xdist is installed.
    if getattr(config.option, "maxschedchunk", "") is None:
        config.option.maxschedchunk = SCHED_CHUNK


def pytest_collection_modifyitems(session, config, items):
    case: dict[str, int] = {}
    for item in items:  # in pytest's order, before the sort: case i is the sweep's i-th parametrization
        base = item.nodeid.split("[", 1)[0]
        if base in SWEEPS:
            i = case[base] = case.get(base, -1) + 1
            if i % SWEEPS[base]:
                item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: _rank(item.nodeid))  # stable: the rest keep pytest's order
    if not config.getoption("--runslow"):
        skip = pytest.mark.skip(reason="slow: starts other processes; --runslow runs it (.ci/run does)")
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def _one_torch_thread_per_worker():
    yield
    torch = sys.modules.get("torch")
    if WORKER and torch is not None and torch.get_num_threads() != 1:
        torch.set_num_threads(1)
