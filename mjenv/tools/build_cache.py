"""Build the precompiled store shipped with the package (``mjenv/_compiled``), or check that it matches the sources.

Usage::

    python -m mjenv.tools.build_cache            # rebuild it: every variant, ≈ 5 CPU minutes, 2 processes
    python -m mjenv.tools.build_cache --check    # exit 1 (and say which) when a source changed since the build

Building runs :func:`exercise` for every variant in worker processes that compile for a generic x86-64 CPU
(``NUMBA_CPU_NAME=generic``: code any x86-64 machine runs) and write every compiled function to one fresh folder
(:data:`mjenv.engine.jitcache.BUILD_ENV`).  What the exercise reaches is what users reach: the AEC, vector and
single-agent envs, the engine with the compiled sampler and ``next_hand``, the observation encoder, and a small
duplicate tournament of every built-in agent (and the shipped checkpoints when torch is installed), which covers
the agents' kernels.  The entries are then compressed (LZMA) into ``mjenv/_compiled`` with a ``manifest.json``
recording the numba and Python versions, the CPU and each function's source fingerprint.  Finally a fresh process
with an empty local cache runs the exercise again: it must compile nothing, and only the entries it loads are kept
(the entry points: each holds the machine code of every function it calls, so the callees' own entries are only
needed to compile something new, which then compiles them too).

The store also serves the checkout's own tests (:data:`DIRECT_TESTS`): those that call the scorers' and the hand
arithmetic's compiled functions directly, outside any entry point, with their own signatures.  Built alone, those
entries would compile in every clean checkout's test run (about 100 CPU seconds in CI); the build runs the listed
tests in the generic-CPU worker, keeps the entries of mjenv's and the agents' functions they used, and the fresh
start runs them again: it must compile nothing there either.  A wheel install has no tests: this step is skipped.

It lives among the top-floor tools, not in the engine, because its exercise plays every floor (envs, agents).
Run it after changing any compiled code (tests/test_compiled_cache.py fails while the store is stale).  A
compiled module added to the package is covered once :func:`exercise` reaches its functions.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mjenv.engine import jitcache as J

CHEAP = {"search": "search:worlds=2,candidates=2"}
"""Built-in agents exercised with small settings (the same compiled code, less play)."""

GROUPS = (("kawuxing3", "kawuxing4"), ("gejiu",), ("diedaohu", "liuwei"), ("yangzhou", "yangzhou_new"))
"""Variants compiled in one worker (they share a family's entry point)."""


DIRECT_TESTS = (
    "tests/test_compiled_settlement.py::test_compiled_settlement_equals_the_scorer_on_random_wins[diedaohu-{}]",
    "tests/test_compiled_settlement.py::test_compiled_settlement_of_the_worked_examples"
    "[yangzhou-opts10-winners10-discard-1-None-deltas10]",
    "tests/test_compiled_settlement.py::test_compiled_yangzhou_settlement_equals_the_scorer_on_random_wins[yangzhou-{}]",
    "tests/test_compiled_settlement.py::test_hand_class_equals_best_class_reading",
    "tests/test_dataset.py::test_packing_is_lossless_for_every_kind_of_row",
    "tests/test_departures.py::test_train_fits_a_departure_head_from_labels",
    "tests/test_gjscore.py::test_value_equals_the_scorer[multiply]",
    "tests/test_handk.py::test_bit_forms_match_array_forms",
    "tests/test_handk.py::test_discard_ready_complete[kawuxing3-False]",
    "tests/test_handk.py::test_gejiu_shapes[kawuxing3]",
    "tests/test_handk.py::test_is_complete[kawuxing3-False]",
    "tests/test_handk.py::test_is_complete_with[kawuxing3-False]",
    "tests/test_handk.py::test_other_dtypes",
    "tests/test_handk.py::test_ready_after_discards",
    "tests/test_handk.py::test_wait_mask",
    "tests/test_kwscore.py::test_reading_fans_equal_score_win[3-4]",
    "tests/test_kwscore.py::test_verdict_equals_score_win[3-1]",
    "tests/test_sampling.py::test_the_buffer_fast_path_draws_what_the_general_path_draws",
    "tests/test_yzscore.py::test_reading_fans_equal_score_win[4]",
    "tests/test_yzscore.py::test_verdict_equals_score_win[1]",
)
"""Test node ids (from the checkout's root) whose direct calls of compiled functions the store serves too: the tests in
which a run of the whole suite with an empty local cache compiled something (one per set of signatures is enough).
A test added later that compiles in a clean checkout belongs here; ``MJENV_CACHE_LOG=1`` shows what compiles."""


def exercise(variant: str, folder: str | None = None) -> None:
    """Use ``variant`` the ways users do, so that every compiled function they reach is compiled (or loaded)."""
    import numpy as np

    import mjenv
    from agents import BUILTIN, make_agent, shipped_checkpoints
    from agents.tournament.arena import play_duplicate
    from mjenv.encoding.compact import CompactEncoder
    from mjenv.encoding.observation import ObservationEncoder
    from mjenv.engine.core import Engine
    from mjenv.engine import threads as TH
    from mjenv.engine.sampling import ActionSampler, TableSampler

    rng = np.random.default_rng(0)
    env = mjenv.env(variant)  # one table, observations from last()
    env.reset(seed=0)
    for _ in range(400):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    env.close()
    env = mjenv.env(variant, obs_version="mjenv-obs-v2")  # the compact observation's one-table path
    env.reset(seed=0)
    for _ in range(50):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    env.close()

    venv = mjenv.vector_env(variant, 2)  # batched, auto-reset
    venv.reset(seed=0)
    for _ in range(300):
        masks = venv.action_masks()
        venv.step(np.array([int(rng.choice(np.flatnonzero(m))) for m in masks]))
    venv.close()

    eng = Engine(variant, 4, record_events=False)  # the engine, the compiled sampler, continued matches
    enc = ObservationEncoder.for_engine(eng)
    sampler = ActionSampler(0)
    rows = 2 * TH.MIN_TABLES  # the sampler cut over threads (its chunk_states); the engine's threads share its entries
    ActionSampler(0, threads=2).sample(np.ones((rows, eng.mask.shape[1]), bool), np.empty(rows, np.int64))
    out = np.empty((4,) + enc.shape, np.float32)
    enc2 = CompactEncoder.for_engine(eng)  # mjenv-obs-v2
    out2 = np.empty((4,) + enc2.shape, np.uint8)
    eng.reset(seed=0)
    for _ in range(2000):
        idx = np.flatnonzero(eng.done)
        if len(idx):
            over = eng.session_over[idx]
            if (~over).any():
                eng.next_hand(seed=1, tables=idx[~over])
            if over.any():
                eng.reset(seed=2, tables=idx[over])
        enc.encode(eng.state, eng.state.actor, out=out, engine=eng)
        enc2.encode(eng.state, eng.state.actor, out=out2, engine=eng)
        eng.step(sampler.sample(eng.mask))
    eng.results  # noqa: B018 - reading results builds them
    play = Engine(variant, 4, record_events=False)  # random play in one pass (Engine.random_step: its deal and draws)
    play.reset(seed=0)
    table_sampler = TableSampler(0, 4)
    for _ in range(300):
        play.random_step(table_sampler, seed=0)
    from mjenv.encoding.handfeat import HandFeatures  # the derived hand rows (mjenv-hand-v1) of those observations

    HandFeatures(eng.rules).derive(out)

    names = list(BUILTIN)
    if importlib.util.find_spec("torch") is not None:  # the shipped checkpoints' policies
        names += [str(p) for p in shipped_checkpoints(variant)]
    agents = []
    for name in names:
        try:
            agents.append(make_agent(CHEAP.get(name, name), variant))
        except (ImportError, ValueError) as e:  # an agent this checkout cannot build: its code is not exercised
            print(f"build_cache: agent {name!r} left out: {e}", file=sys.stderr)
    n = eng.n
    with tempfile.TemporaryDirectory() as replays:  # each agent in one hand (not every seating: hundreds)
        for i in range(0, len(agents), n):
            group = agents[i : i + n]
            group += agents[: n - len(group)]
            play_duplicate(group, variant, walls=1, batch_size=1, replay_dir=replays, n_replays=1,
                           seat_plan=[tuple(range(n))])
    from agents.players.fastplay import FastPlayer  # its hand arithmetic door (tests/test_fastplay_hands.py)
    from mjenv.tiles import parse_tiles

    hand = np.bincount(parse_tiles("11123456789999p"), minlength=34)[None]  # 14 tiles: every path of the door
    FastPlayer(variant).hand_numbers(hand, 0, 4 - hand)
    if variant == "kawuxing3" and importlib.util.find_spec("torch") is not None:  # the compiled improved player
        from agents import CHECKPOINT_DIR
        from agents.players.fasthead import FastHeadPlayer

        fh = FastHeadPlayer(CHECKPOINT_DIR / "kawuxing3-default.pt")  # its feature check runs features_tables
        roll = Engine(variant, 4, record_events=False)
        roll.reset(seed=0, table_ids=np.arange(4), dealer=np.arange(4) % roll.n)
        fh.rollout(roll)
        fh.predict(np.zeros((1, 3, 25)), np.zeros((1, 8)), np.array([3]))


def _worker(variants: tuple[str, ...], folder: str, root: str) -> float:
    """Exercise ``variants`` in a fresh generic-CPU process writing to ``folder``; its CPU seconds."""
    env = dict(os.environ, NUMBA_CPU_NAME="generic", NUMBA_CPU_FEATURES="", **{J.BUILD_ENV: folder})
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    env.pop(J.PRECOMPILED_ENV, None)
    code = (
        "import json, time, resource; from mjenv.tools import build_cache as b; from mjenv.engine import jitcache as J; "
        f"[b.exercise(v) for v in {list(variants)!r}]; "
        "r = resource.getrusage(resource.RUSAGE_SELF); "
        "print(json.dumps([r.ru_utime + r.ru_stime, {n: c.describe() for n, c in J.SESSION.used.items()}]))"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"build_cache: exercising {', '.join(variants)} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _tests_code(tests: tuple[str, ...]) -> str:
    """Python code running ``tests`` with pytest in this process; exits with pytest's status when they fail."""
    return (
        "import sys, pytest; "
        f"rc = int(pytest.main(['-q', '-s', '-p', 'no:cacheprovider', '-p', 'no:xdist', '-o', 'addopts=', '-x', *{list(tests)!r}])); "
        "rc and sys.exit(rc); "
    )


def _direct_worker(folder: str, root: str) -> dict:
    """Run :data:`DIRECT_TESTS` in a fresh generic-CPU process writing to ``folder``; the entries of mjenv's and the
    agents' functions it used, described (``{}`` without a tests folder, e.g. from a wheel)."""
    tests = direct_tests(root)
    if not tests:
        return {}
    env = dict(os.environ, NUMBA_CPU_NAME="generic", NUMBA_CPU_FEATURES="", **{J.BUILD_ENV: folder})
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    env.pop(J.PRECOMPILED_ENV, None)
    code = (
        _tests_code(tests) + "import json; from mjenv.engine import jitcache as J; "
        "print(json.dumps({n: c.describe() for n, c in J.SESSION.used.items()}))"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"build_cache: the direct tests failed:\n{(proc.stdout + proc.stderr)[-4000:]}")
    used = json.loads(proc.stdout.strip().splitlines()[-1])
    return {n: d for n, d in used.items() if d["module"].split(".")[0] in ("mjenv", "agents")}


def direct_tests(root: str) -> tuple[str, ...]:
    """:data:`DIRECT_TESTS` when the checkout at ``root`` has them (every listed file must exist), else ``()``."""
    files = {t.split("::")[0] for t in DIRECT_TESTS}
    if not (Path(root) / "tests").is_dir():
        return ()
    missing = sorted(f for f in files if not (Path(root) / f).is_file())
    if missing:
        raise SystemExit(f"build_cache: DIRECT_TESTS names files that do not exist: {missing}")
    return DIRECT_TESTS


def _magic(root: str) -> list:
    """numba's codegen magic tuple of a generic-CPU process (what the entries are keyed by)."""
    env = dict(os.environ, NUMBA_CPU_NAME="generic", NUMBA_CPU_FEATURES="")
    code = "import json; from numba.core.registry import cpu_target as t; print(json.dumps(t.target_context.codegen().magic_tuple()))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=root)
    return json.loads(out.stdout.strip().splitlines()[-1])


def build(out: Path = J.SHIPPED_DIR, jobs: int = 2, work: str | None = None) -> dict:
    """Rebuild the shipped store in ``out`` (compiling in ``work``, kept for the next build when given); returns
    its manifest."""
    root = str(J.PACKAGE_DIR.parent)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mjenv-build-cache-") as tmp:
        folder = work or tmp
        Path(folder).mkdir(parents=True, exist_ok=True)
        with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
            results = list(pool.map(lambda g: _worker(g, folder, root), GROUPS))
            direct = _direct_worker(folder, root)  # after the exercise: what it compiled is loaded, not rebuilt
        cpu = sum(r[0] for r in results)
        described = {name: d for r in results for name, d in r[1].items()}  # every entry the workers used
        described.update(direct)
        entries = sorted(described)
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob(f"*{J.SUFFIX}"):
            old.unlink()
        for name in entries:  # as compiled; packed below, once the fresh start has shown which it loads
            J.write_atomic(out / name, (Path(folder) / name).read_bytes())
    magic = _magic(root)
    _write_manifest(out, magic, entries, described, cpu)
    used = _verify(root)  # what a fresh start loads: the entry points (the functions they call are inside them)
    # and what the direct tests call
    for p in out.glob(f"*{J.SUFFIX}"):
        if p.name not in used:
            p.unlink()
        else:
            J.write_atomic(p, J.compress_entry(p.read_bytes()))
    manifest = _write_manifest(out, magic, sorted(used), described, cpu)
    print(
        f"build_cache: {manifest['entries']} entries (of {len(entries)} the exercise used) of {len(manifest['functions'])} functions, "
        f"{manifest['bytes'] / 1e6:.1f} MB in {out} ({cpu:.0f} CPU s, {time.perf_counter() - t0:.0f} s wall); "
        "verified: a fresh start with an empty local cache compiles nothing"
    )
    return manifest


def _write_manifest(out: Path, magic: list, names: list[str], described: dict, cpu: float) -> dict:
    import numba

    functions = {}
    for name in names:
        funcid = name[: -len(J.SUFFIX)].rsplit("-", 2)[0]
        functions[funcid] = described[name]
    manifest = {
        "format": J.FORMAT,
        "numba": numba.__version__,
        "python": J._py(),
        "magic": magic,
        "functions": dict(sorted(functions.items())),
        "entries": len(names),
        "bytes": sum((out / n).stat().st_size for n in names),
        "build_cpu_s": round(cpu, 1),
    }
    J.write_atomic(out / J.MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode())
    return manifest


def _verify(root: str) -> set[str]:
    """A fresh process with an empty local cache runs the exercise of every variant: it must compile nothing.
    Returns the names of the shipped entries it loaded."""
    with tempfile.TemporaryDirectory(prefix="mjenv-verify-cache-") as empty:
        env = dict(os.environ, NUMBA_CACHE_DIR=empty)
        env.pop(J.PRECOMPILED_ENV, None)
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        variants = [v for g in GROUPS for v in g]
        code = f"from mjenv.tools import build_cache as b; [b.exercise(v) for v in {variants!r}]; "
        code += _tests_code(direct_tests(root)) if direct_tests(root) else ""
        # what loaded and what compiled, from the session itself (a test capturing stderr would hide a log line)
        code += "import json; from mjenv.engine import jitcache as J; print(json.dumps([sorted(J.SESSION.shipped_hits), J.SESSION.misses]))"
        proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"build_cache: the fresh start failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
    hits, misses = json.loads(proc.stdout.strip().splitlines()[-1])
    if misses:
        raise SystemExit("build_cache: the store does not serve a fresh start; these compiled:\n" + "\n".join(misses))
    return set(hits)


def stale(out: Path = J.SHIPPED_DIR) -> list[str]:
    """What differs between the shipped store and today's sources (empty: up to date)."""
    try:
        manifest = json.loads((out / J.MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        return [f"no readable {out / J.MANIFEST}: {e}"]
    import_compiled_modules()
    now = {c.funcid: c.fingerprint()[:16] for c in J.REGISTRY}
    problems = []
    for funcid, d in manifest["functions"].items():
        if funcid in now:
            if now[funcid] != d["fp"]:
                problems.append(f"{funcid}: its sources changed")
            continue
        # made when a function runs (a closure per family): that function's own sources decide
        outer = getattr(sys.modules.get(d["module"]), d["outer"] or "", None) if d.get("outer") else None
        if outer is None:
            problems.append(f"{funcid}: no longer exists")
        elif J.outer_digest(outer) != d["outer_fp"]:
            problems.append(f"{funcid}: the sources of {d['module']}.{d['outer']} changed")
    if manifest.get("format") != J.FORMAT:
        problems.append(f"entry format {manifest.get('format')} (this code reads {J.FORMAT})")
    return problems


def import_compiled_modules() -> None:
    """Import every module of mjenv and agents that holds compiled code (those that import the decorators of
    ``mjenv.engine.jit`` or ``mjenv.engine.gates``)."""
    for package in ("mjenv", "agents"):
        base = J.PACKAGE_DIR.parent / package
        for path in sorted(base.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            text = path.read_text(encoding="utf-8")
            if ("engine.jit import" in text or "engine.gates import" in text) and path.stem not in ("__main__", "build_cache"):
                mod = ".".join(path.relative_to(base.parent).with_suffix("").parts)
                importlib.import_module(mod)


def main(argv: list[str] | None = None) -> int:
    """Command line: build (default) or ``--check``."""
    p = argparse.ArgumentParser(prog="python -m mjenv.tools.build_cache", description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true", help="only say whether the shipped store matches the sources")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--work", default=None, help="compile in this folder and keep it: a rebuild reuses what did not change")
    ns = p.parse_args(argv)
    if ns.check:
        problems = stale()
        for line in problems:
            print(f"stale: {line}")
        print("the shipped compiled code is " + ("stale: run python -m mjenv.tools.build_cache" if problems else "up to date"))
        return 1 if problems else 0
    build(jobs=ns.jobs, work=ns.work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
