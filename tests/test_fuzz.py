"""Property-based fuzzing of the public entry points (issue 10, part 4).

Every input either works or raises the documented error type with a message naming the field, and a refused call
leaves the state as it was:

=====================  ==========================================  =====================================
entry point            documented errors                           also checked
=====================  ==========================================  =====================================
hand notation          ``NotationError``                           a parsed hand round-trips
``mjenv score``        exit 2, one ``mjenv: error:`` line          ``load_rules``: ``OptionError`` naming it
replay reader          ``ReplayError`` (``FILE:LINE:``)            showing and verifying never crash
``Engine.reset/step``  ``ValueError`` (``WallError``,              engine state unchanged
                       ``IllegalActionError``), ``RuntimeError``
env ``reset/step``     ``ValueError`` (``WallError``,              env and engine state unchanged, in
                       ``IllegalActionError``), ``RuntimeError``   the AEC, vector, SB3, single-agent envs
checkpoint loader      ``CheckpointError``, ``CheckpointMismatch``  never the torch advice to unpickle
script arguments       ``ArgsError``; exit 2, one line             nothing written
=====================  ==========================================  =====================================
"""

from __future__ import annotations

import argparse
import io
import json
import os
import string
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import mjenv
from mjenv.cli import main as cli_main
from mjenv.engine.arguments import MAX_BATCH_SIZE
from mjenv.engine.core import Engine
from mjenv.replay import ReplayError, read_replay, verify_replay, write_replay
from mjenv.tools.replay_command import add_replay_subcommand, replay_main
from mjenv.rules.options import VARIANTS, OptionError, get_variant, load_rules, option_info
from mjenv.tiles import NotationError, format_hand, parse_hand
from tests.snapshots import assert_same, engine_snapshot, env_snapshot
from tests.test_replay import _play_batch
from tests.test_script_errors import exit_code

SCALE = float(os.environ.get("MJENV_FUZZ_SCALE", "1"))
"""Multiplies every example count (``MJENV_FUZZ_SCALE=20`` for a long hunt; the default keeps the file < 60 s)."""


def fuzz(examples: int = 40) -> settings:
    """Hypothesis settings of this file: ``examples`` × SCALE examples, no deadline."""
    return settings(max_examples=max(1, int(examples * SCALE)), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


FUZZ = fuzz()

# Values of every JSON type, small and nested.
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-300, 300) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(string.ascii_letters + string.digits + " -", max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(string.ascii_lowercase, max_size=6), inner, max_size=3),
    max_leaves=8,
)
# Python values an API might be handed by mistake.
JUNK = st.one_of(
    st.integers(-2**70, 2**70), st.floats(), st.booleans(), st.none(), st.text(max_size=6),
    st.lists(st.integers(-5, 40), max_size=5), st.lists(st.floats(-2, 5), max_size=3),
)


# ------------------------------------------------------------------------------------------ hand notation

NOTATION = st.lists(
    st.sampled_from(["1", "2", "3", "5", "9", "0", "m", "p", "s", "z", " ", "[", "]", "P ", "C ", "K ", "A ", "X ",
                     "<B", "<a", "+", "discard", "self-draw", "rob", "tsumo", "(C)", "(9)", "zimo", "x", "55z", "123p"]),
    max_size=14,
).map("".join)


@FUZZ
@given(NOTATION, st.sampled_from(sorted(VARIANTS)))
def test_hand_notation_parses_or_names_the_problem(text, variant):
    from mjenv.rules.options import tile_kinds

    try:
        hand = parse_hand(text, tile_kinds(variant))
    except NotationError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert parse_hand(format_hand(hand)) == hand


@FUZZ
@given(NOTATION)
def test_score_takes_any_hand_text_without_a_traceback(capsys, text):
    code = cli_main(["score", text, "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 2)
    if code == 2:
        assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("mjenv: error: ")
    else:
        assert isinstance(json.loads(out)["legal"], bool)


# ------------------------------------------------------------------------------------------ score options

def _option_names(variant: str) -> list[str]:
    return [o.name for o in option_info(get_variant(variant).options_cls)]


@st.composite
def option_assignments(draw):
    variant = draw(st.sampled_from(sorted(VARIANTS)))
    name = draw(st.sampled_from(_option_names(variant)) | st.text(string.ascii_lowercase + "_", min_size=1, max_size=8))
    value = draw(st.sampled_from(["none", "on", "off", "0", "-1", "1", "2.5", "8", "16", "hard", "soft", "add", "", "x",
                                  "1e9", "nan", "inf", "true"]))
    return variant, name, value


@FUZZ
@given(option_assignments())
def test_options_load_or_name_the_option(capsys, assignment):
    variant, name, value = assignment
    try:
        load_rules(variant, options={name: value})
    except OptionError as exc:
        assert name in str(exc) or "unknown option" in str(exc)
    family = get_variant(variant).family
    hand = {"kawuxing": "24p678s789s55z [P 333p] +3p discard"}.get(family, "123p456p789p234s55s +5s self-draw")
    code = cli_main(["score", hand, "--variant", variant, "--option", f"{name}={value}"])
    out, err = capsys.readouterr()
    assert code in (0, 2)
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("mjenv: error: ")


# ------------------------------------------------------------------------------------------ replay reader


@pytest.fixture(scope="module")
def replay_lines(tmp_path_factory):
    eng = _play_batch("kawuxing3", 4, 3)
    b = next(i for i in range(4) if any(e["type"] == "kong" for e in eng.events[i]) and eng.results[i]["how"] != "draw")
    path = tmp_path_factory.mktemp("fuzz") / "hand.jsonl"
    write_replay(path, eng, b, {"seed": 3, "table_id": b})
    return path.read_text(encoding="utf-8").splitlines()


def _replay_cli(argv):
    parser = argparse.ArgumentParser(prog="mjenv")
    add_replay_subcommand(parser.add_subparsers())
    return replay_main(parser.parse_args(argv), out=io.StringIO())


@st.composite
def replay_edits(draw, n_lines):
    """One edit of a replay file: a field set to any JSON value (nested one level into lists/objects), a line
    dropped, repeated or cut."""
    k = draw(st.integers(0, n_lines - 1))
    kind = draw(st.sampled_from(["field", "field", "field", "nested", "drop", "repeat", "cut"]))
    return k, kind, draw(st.text(string.ascii_lowercase + "_", min_size=1, max_size=10)), draw(JSON), draw(st.integers(0, 5))


@fuzz(60)
@given(data=st.data())
def test_replay_reader_shows_verifies_or_names_the_line(tmp_path, replay_lines, capsys, data):
    lines = list(replay_lines)
    k, kind, new_key, value, pick = data.draw(replay_edits(len(lines)))
    obj = json.loads(lines[k])
    keys = sorted(obj)
    key = data.draw(st.sampled_from(keys + [new_key]))
    if kind == "field":
        obj[key] = value
        lines[k] = json.dumps(obj)
    elif kind == "nested":
        inner = obj.get(key)
        if isinstance(inner, list) and inner:
            inner[pick % len(inner)] = value
        elif isinstance(inner, dict) and inner:
            inner[sorted(inner)[pick % len(inner)]] = value
        else:
            obj[key] = value
        lines[k] = json.dumps(obj)
    elif kind == "drop":
        del lines[k]
    elif kind == "repeat":
        lines.insert(k, lines[k])
    else:
        lines[k] = lines[k][: len(lines[k]) * pick // 6]
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        hands = read_replay(path)
    except ReplayError as exc:
        assert str(exc).startswith(f"{path}:") and "\n" not in str(exc)
        assert _replay_cli(["replay", str(path)]) == 2
        capsys.readouterr()
        return
    assert _replay_cli(["replay", str(path)]) in (0, 1)
    capsys.readouterr()
    for hand in hands:
        try:
            verify_replay(hand)
        except ReplayError as exc:
            assert str(exc).startswith(f"{path}")


# ------------------------------------------------------------------------------------------ engine arguments

TABLES = st.none() | st.lists(st.integers(-2, 4) | st.sampled_from([0.0, 1.5, True]), max_size=4) | JUNK


@FUZZ
@given(data=st.data())
def test_engine_step_arguments_work_or_change_nothing(data):
    eng = Engine("kawuxing3", 3)
    if data.draw(st.booleans()):
        eng.reset(seed=data.draw(st.integers(0, 50)))
    tables = data.draw(TABLES)
    legal = {b: np.flatnonzero(eng.mask[b]) for b in range(3)}
    rows = range(3) if tables is None else tables
    if data.draw(st.booleans()) and isinstance(rows, (list, range)) and all(type(b) is int and 0 <= b < 3 for b in rows):
        actions = [int(legal[b][0]) if len(legal[b]) else 0 for b in rows]
    else:
        actions = data.draw(st.lists(st.integers(-2, 120), min_size=0, max_size=4) | JUNK)
    before = engine_snapshot(eng)
    try:
        eng.step(actions, tables=tables)
    except (ValueError, RuntimeError) as exc:
        assert str(exc)
        assert_same(before, engine_snapshot(eng))


@FUZZ
@given(data=st.data())
def test_engine_reset_arguments_work_or_change_nothing(data):
    eng = Engine("kawuxing3", 3)
    eng.reset(seed=1)
    kwargs = {}
    for name, strategy in (("seed", st.none() | st.integers(-5, 2**65) | JUNK), ("dealer", st.integers(-1, 300) | JUNK),
                           ("tables", TABLES), ("table_ids", st.none() | st.lists(st.integers(-2, 9), max_size=4) | JUNK),
                           ("walls", st.none() | JUNK | st.lists(st.lists(st.integers(-1, 34), max_size=3), max_size=2)),
                           ("continue_match", st.booleans() | JUNK)):
        if data.draw(st.booleans()):
            kwargs[name] = data.draw(strategy)
    before = engine_snapshot(eng)
    try:
        eng.reset(**kwargs)
    except ValueError as exc:
        assert str(exc)
        assert_same(before, engine_snapshot(eng))


@FUZZ
@given(JUNK)
def test_engine_batch_size_works_or_is_named(size):
    assume(not (isinstance(size, int) and 16 < size <= MAX_BATCH_SIZE))  # valid, but gigabytes
    try:
        eng = Engine("kawuxing3", size)
    except ValueError as exc:
        assert "batch_size" in str(exc)
    else:
        assert eng.batch_size == size


# ------------------------------------------------------------------------------------------ env


@FUZZ
@given(data=st.data())
def test_env_reset_and_step_work_or_change_nothing(data):
    env = mjenv.raw_env()
    env.reset(seed=2)
    options = data.draw(st.none() | st.dictionaries(st.sampled_from(["dealer", "wall", "other"]),
                                                    st.integers(-2, 300) | JUNK | st.sampled_from(["1p2p", "123p"])))
    seed = data.draw(st.none() | st.integers(-3, 2**40) | JUNK)
    before = env_snapshot(env)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            env.reset(seed=seed, options=options)
        except ValueError as exc:
            assert str(exc)
            assert_same(before, env_snapshot(env))
    action = data.draw(st.integers(-1, 115) | JUNK)
    before = env_snapshot(env)
    try:
        env.step(action)
    except ValueError as exc:
        assert str(exc)
        assert_same(before, env_snapshot(env))


def _learner_env(kind: str):
    from mjenv.envs.single import MahjongSingleEnv
    from mjenv.envs.vector import MahjongVectorEnv

    if kind == "single":
        return MahjongSingleEnv()
    if kind == "sb3":
        pytest.importorskip("stable_baselines3")
        from mjenv.envs.sb3 import MahjongSB3VecEnv

        return MahjongSB3VecEnv("kawuxing3", 2, seed=1)
    return MahjongVectorEnv("kawuxing3", 2, seed=1)


ACTIONS = JUNK | st.lists(st.integers(-2, 115) | st.floats() | st.booleans() | st.text(max_size=2), max_size=4) | st.builds(
    lambda shape, dtype, fill: np.full(shape, fill).astype(dtype, casting="unsafe"),
    st.sampled_from([(), (1,), (2,), (1, 2), (2, 1), (4,)]), st.sampled_from(["int64", "int32", "uint8", "float64", "bool", "U2"]),
    st.integers(0, 110) | st.just(float("nan")),
)


@FUZZ
@given(data=st.data(), kind=st.sampled_from(["vector", "sb3", "single"]))
def test_learner_env_reset_and_step_work_or_change_nothing(data, kind):
    """The vector, SB3 and single-agent envs: any seed and any action either works or raises ``ValueError`` (the
    action errors are ``IllegalActionError``s) or ``RuntimeError`` with the env as it was."""
    from tests.snapshots import learner_snapshot

    env = _learner_env(kind)
    sb3 = kind == "sb3"
    env.reset() if sb3 else env.reset(seed=2)
    seed = data.draw(st.none() | st.integers(-3, 2**65) | JUNK)
    before = learner_snapshot(env)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy cast warnings on the way either
        try:
            if sb3:
                env.seed(seed)
                env.reset()
            else:
                env.reset(seed=seed)
        except ValueError as exc:
            assert str(exc) and "\n" not in str(exc)
            assert_same(before, learner_snapshot(env))
    masks = np.atleast_2d(env.action_masks())
    if data.draw(st.booleans()):
        legal = [int(np.flatnonzero(m)[0]) for m in masks]
        action = legal[0] if kind == "single" else legal
    else:
        action = data.draw(ACTIONS)
    before = learner_snapshot(env)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            if sb3:
                env.step_async(action)
                env.step_wait()
            else:
                env.step(action)
        except (ValueError, RuntimeError) as exc:
            assert str(exc) and "\n" not in str(exc)
            if sb3:
                env._actions = before["_actions"]
            assert_same(before, learner_snapshot(env))
            return
    if kind == "single" and not isinstance(action, (int, np.integer)):
        assert np.asarray(action).dtype.kind in "iu"  # only integer ids are ever played
    elif kind != "single":
        assert np.asarray(action).shape == (2,) and np.asarray(action).dtype.kind in "iu"


# ------------------------------------------------------------------------------------------ checkpoint loader


@pytest.fixture(scope="module")
def good_payload():
    pytest.importorskip("torch")
    from agents.players.policy import checkpoint_payload, make_head, make_trunk
    from mjenv.encoding.observation import ObservationEncoder

    opts = load_rules("kawuxing3")
    shape = ObservationEncoder("kawuxing3", opts).shape
    return checkpoint_payload(make_trunk(shape, 2, 4), make_head(4), variant="kawuxing3", options=opts,
                              obs_shape=shape, arch={"channels": 2, "hidden": 4})


@fuzz(30)
@given(data=st.data())
def test_checkpoint_loader_loads_or_names_the_problem(tmp_path, good_payload, data):
    import torch

    from agents.players.policy import REQUIRED_KEYS, CheckpointError, CheckpointMismatch, PolicyAgent, load_checkpoint

    path = tmp_path / "fuzz.pt"
    if data.draw(st.booleans()):
        path.write_bytes(data.draw(st.binary(max_size=64)))
    else:
        payload = dict(good_payload)
        for key in data.draw(st.lists(st.sampled_from(REQUIRED_KEYS + ("meta",)), max_size=3, unique=True)):
            if data.draw(st.booleans()):
                del payload[key]
            else:
                payload[key] = data.draw(JSON)
        torch.save(payload, path)
    try:
        ck = load_checkpoint(path)
    except CheckpointError as exc:
        assert str(path) in str(exc) and "weights_only" not in str(exc) and "\n" not in str(exc)
        return
    try:
        PolicyAgent(ck, "kawuxing3")
    except (CheckpointError, CheckpointMismatch) as exc:
        assert str(exc)


# ------------------------------------------------------------------------------------------ script arguments


def _argv(fields: list[str]):
    flag = st.sampled_from(fields + ["nosuch", "config"]).map(lambda f: f"--{f}")
    value = st.sampled_from(["-1", "0", "1", "2", "1.5", "nan", "x", "kawuxing4", "gejiu", "nope", "random", "heuristic",
                             "self", "kwx004", "crazy", "cap=16", "cap=zz", "default", "kwx004/simple", "a.pt", "true"])
    return st.lists(st.tuples(flag, st.lists(value, max_size=2)), max_size=3).map(
        lambda pairs: [x for f, vs in pairs for x in (f, *vs)])


@fuzz(40)
@given(data=st.data(), script=st.sampled_from(["evaluate", "train"]))
def test_script_arguments_are_accepted_or_refused_in_one_line(tmp_path, capsys, data, script):
    import dataclasses

    import evaluate
    import train
    from agents.script_args import ArgsError, parse_args

    module = evaluate if script == "evaluate" else train
    argv = data.draw(_argv([f.name for f in dataclasses.fields(module.Args) if f.name not in ("out", "run_name")]))
    try:
        kwargs = {"config_dir": train.CONFIG_DIR, "default_config": "default"} if script == "train" else {}
        args, _ = parse_args(module.Args, argv, **kwargs)
        module.check_args(args)
    except ArgsError:
        out = tmp_path / "out"
        assert exit_code(module.main, [*argv, "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"{script}.py: error: ")
        assert not out.exists()


@pytest.mark.skipif(os.environ.get("MJENV_HYPOTHESIS_PROFILE", "derandomized") != "derandomized",
                    reason="a randomized run (tests/fuzz_long.py)")
def test_property_tests_run_derandomized_in_the_readme_command():
    """The suite's hypothesis examples are fixed (tests/conftest.py): no random draw, no example database, so the
    README's command gives every machine the same verdict; the randomized hunt is tests/fuzz_long.py."""
    assert settings.default.derandomize and settings.default.database is None
    assert FUZZ.derandomize and FUZZ.database is None


def test_the_long_fuzz_script_refuses_a_bad_scale(capsys):
    from tests.fuzz_long import main, property_test_files

    with pytest.raises(SystemExit) as exc:
        main(["--scale", "0"])
    assert exc.value.code == 2 and "--scale must be > 0" in capsys.readouterr().err
    assert "tests/test_fuzz.py" in property_test_files() and "tests/test_hand.py" in property_test_files()
