"""The compiled-code cache (mjenv/engine/jitcache.py): the shipped store is current and serves a clean start,
entries are keyed by the sources they were made from, damaged entries heal, and no writable folder is no error."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from numba.core.caching import FunctionCache
from numba.core.dispatcher import Dispatcher

from mjenv import _numba_setup as N
from mjenv.engine import jitcache as J
from mjenv.tools import build_cache
from mjenv.engine.jit import njit

REPO = Path(__file__).resolve().parents[1]


def test_the_shipped_store_matches_the_sources():
    problems = build_cache.stale()
    assert not problems, (
        "the shipped precompiled code (mjenv/_compiled) is stale; run `python -m mjenv.tools.build_cache` "
        "and commit mjenv/_compiled:\n" + "\n".join(problems[:20])
    )
    manifest = json.loads((J.SHIPPED_DIR / J.MANIFEST).read_text())
    if J.SESSION.shipped() is None:
        warnings.warn(
            f"the shipped store was built for numba {manifest['numba']} / Python {manifest['python']}; this process "
            "cannot use it and compiles instead",
            stacklevel=1,
        )


def test_every_cached_compiled_function_uses_mjenvs_cache():
    build_cache.import_compiled_modules()
    numba_cached = []
    for name, mod in list(sys.modules.items()):
        if name.split(".")[0] not in ("mjenv", "agents"):
            continue
        for attr, val in list(vars(mod).items()):
            if isinstance(val, Dispatcher) and isinstance(val._cache, FunctionCache):
                numba_cached.append(f"{name}.{attr}")
    assert not numba_cached, f"use mjenv.engine.jit.njit(cache=True), not numba's: {numba_cached}"
    assert len(J.REGISTRY) > 50


def _child(code: str, env_extra: dict, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", J.PRECOMPILED_ENV, J.LOG_ENV)}
    env["PYTHONPATH"] = str(REPO)
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


_SAMPLE = """
import json, numpy as np
from mjenv.engine.sampling import random_legal_actions, seed_state
out = np.empty(3, np.int64)
random_legal_actions(np.ones((3, 5), bool), seed_state(0), out)
st = random_legal_actions.stats
print(json.dumps([sum(st.cache_hits.values()), sum(st.cache_misses.values()), st.cache_path]))
"""


@pytest.mark.slow
def test_a_clean_start_loads_the_shipped_code_and_compiles_nothing(tmp_path):
    code = """
import numpy as np, mjenv
env = mjenv.env("kawuxing3")
env.reset(seed=0)
obs = env.last()[0]
env.step(int(np.flatnonzero(obs["action_mask"])[0]))
"""
    proc = _child(code, {"NUMBA_CACHE_DIR": str(tmp_path / "empty"), J.LOG_ENV: "1"}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "cache miss" not in proc.stderr and "compiling" not in proc.stderr, proc.stderr


@pytest.mark.slow
def test_a_damaged_entry_is_discarded_with_one_warning_and_rebuilt(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "c"), J.PRECOMPILED_ENV: "0"}
    first = _child(_SAMPLE, env, tmp_path)
    assert first.returncode == 0, first.stderr
    hits, misses, folder = json.loads(first.stdout.splitlines()[-1])
    assert (hits, misses) == (0, 1)
    assert first.stderr.count("first run only") == 1  # the notice, once
    (entry,) = Path(folder).glob(f"*{J.SUFFIX}")
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0x10  # one flipped bit: not what was written
    entry.write_bytes(bytes(data))
    healed = _child(_SAMPLE, env, tmp_path)
    assert healed.returncode == 0, healed.stderr
    assert json.loads(healed.stdout.splitlines()[-1])[:2] == [0, 1]
    assert healed.stderr.count("CompiledCacheWarning") == 1 and "checksum mismatch" in healed.stderr
    again = _child(_SAMPLE, env, tmp_path)
    assert json.loads(again.stdout.splitlines()[-1])[:2] == [1, 0]  # rebuilt: loaded, no compile, no warning
    assert "Warning" not in again.stderr and "first run only" not in again.stderr


@pytest.mark.slow
def test_an_unwritable_numba_cache_dir_compiles_in_memory_with_one_warning(tmp_path):
    (tmp_path / "file").write_text("")
    proc = _child(_SAMPLE, {"NUMBA_CACHE_DIR": str(tmp_path / "file" / "x"), J.PRECOMPILED_ENV: "0"}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == [0, 1, None]
    assert proc.stderr.count("CompiledCacheWarning") == 1 and "compiling in memory" in proc.stderr


def _read_only_copy(site: Path) -> Path:
    """A copy of the package that cannot be written: a plain file where each ``__pycache__`` folder would go (root
    ignores file modes)."""
    import shutil

    pkg = site / "mjenv"
    shutil.copytree(REPO / "mjenv", pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for folder in [pkg, *[p for p in pkg.rglob("*") if p.is_dir()]]:
        (folder / "__pycache__").write_text("not a folder\n")
    return pkg


@pytest.mark.slow
def test_a_read_only_install_caches_in_the_user_folder_and_loads_it_next_start(tmp_path):
    pkg = _read_only_copy(tmp_path / "site")
    home = tmp_path / "home"
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(home / "xdg"), J.PRECOMPILED_ENV: "0", "PYTHONPATH": str(pkg.parent)}
    code = "import mjenv; print(mjenv.__file__)\n" + _SAMPLE
    first = _child(code, env, tmp_path)
    assert first.returncode == 0, first.stderr
    assert Path(first.stdout.splitlines()[0]).resolve() == (pkg / "__init__.py").resolve()  # the copy
    hits, misses, folder = json.loads(first.stdout.splitlines()[-1])
    assert (hits, misses) == (0, 1) and Path(folder) == home / "xdg" / "mjenv" / "compiled"
    assert list(Path(folder).glob(f"*{J.SUFFIX}"))
    second = _child(code, env, tmp_path)
    assert json.loads(second.stdout.splitlines()[-1]) == [1, 0, folder]  # loaded: no second compile
    assert "Warning" not in first.stderr + second.stderr


@pytest.mark.slow
def test_no_writable_folder_anywhere_is_no_import_error(tmp_path):
    """A read-only install (a file where each ``__pycache__`` would go, as root ignores modes), no writable HOME,
    user cache or temp folder: importing the engine works, compiling in memory with one warning."""
    site = _read_only_copy(tmp_path / "site").parent
    blocked = tmp_path / "blocked"
    blocked.write_text("")
    code = f"import tempfile; tempfile.tempdir = {str(blocked / 'tmp')!r}\nimport mjenv.engine.core\n" + _SAMPLE
    env = {"HOME": str(blocked), "XDG_CACHE_HOME": str(blocked / "xdg"), J.PRECOMPILED_ENV: "0", "PYTHONPATH": str(site)}
    proc = _child(code, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == [0, 1, None]
    assert proc.stderr.count("CompiledCacheWarning") == 1 and "can be written" in proc.stderr


def test_cache_dir_choice(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert N.choose_cache_dir(str(pkg), env) == (str(tmp_path / "xdg" / "mjenv" / "compiled"), None)
    mine = {**env, "NUMBA_CACHE_DIR": str(tmp_path / "mine")}
    assert N.choose_cache_dir(str(pkg), mine) == (str(tmp_path / "mine" / "mjenv"), None)  # the user's choice stands
    (tmp_path / "blocked").write_text("")  # a file where the user cache would go: the package's folder is next
    blocked = {"XDG_CACHE_HOME": str(tmp_path / "blocked")}
    assert N.choose_cache_dir(str(pkg), blocked) == (str(pkg / "__pycache__" / "compiled"), None)
    (pkg / "__pycache__").rename(pkg / "gone")
    (pkg / "__pycache__").write_text("")  # nor the package: the temp folder
    folder, _ = N.choose_cache_dir(str(pkg), blocked)
    assert Path(folder).name.startswith("mjenv-compiled-")
    folder, why = N.choose_cache_dir(str(pkg), {**blocked, "NUMBA_CACHE_DIR": str(tmp_path / "blocked" / "x")})
    assert folder is None and "NUMBA_CACHE_DIR" in why


def _module(tmp_path: Path, name: str, text: str):
    (tmp_path / f"{name}.py").write_text(text)
    # Python's own bytecode cache keys a module on its source's mtime in whole seconds and its size: an edit of the
    # same size within the second would import the stale bytecode, so drop it
    shutil.rmtree(tmp_path / "__pycache__", ignore_errors=True)
    sys.modules.pop(name, None)
    importlib.invalidate_caches()
    return importlib.import_module(name)


def test_the_fingerprint_follows_callees_and_constants_in_other_modules(tmp_path, monkeypatch):
    """numba keys a cached function on its own file only; an edit to a callee elsewhere must change the key."""
    monkeypatch.syspath_prepend(str(tmp_path))
    callee = "from mjenv.engine.jit import njit\nimport numpy as np\nTABLE = np.arange(4)\n\n@njit(cache=True)\ndef g(x):\n    return x + {}\n"
    caller = "from mjenv.engine.jit import njit\nimport fp_callee\n\n@njit(cache=True)\ndef f(x):\n    return fp_callee.g(x) + fp_callee.TABLE[1]\n"
    _module(tmp_path, "fp_callee", callee.format(1))
    before = J.fingerprint(_module(tmp_path, "fp_caller", caller).f)
    assert J.fingerprint(_module(tmp_path, "fp_caller", caller).f) == before  # stable
    _module(tmp_path, "fp_callee", callee.format(2))
    assert J.fingerprint(_module(tmp_path, "fp_caller", caller).f) != before  # the callee changed
    _module(tmp_path, "fp_callee", callee.format(1).replace("arange(4)", "arange(4) * 2"))
    assert J.fingerprint(_module(tmp_path, "fp_caller", caller).f) != before  # a table it reads changed
    _module(tmp_path, "fp_callee", callee.format(1))
    assert J.fingerprint(_module(tmp_path, "fp_caller", caller).f) == before


def test_entries_of_other_sources_are_kept_apart(tmp_path, monkeypatch):
    """One folder serves checkouts of different sources: each loads only its own code."""
    monkeypatch.syspath_prepend(str(tmp_path))
    session = _local_session(monkeypatch, tmp_path / "local")
    src = "from mjenv.engine.jit import njit\n\n@njit(cache=True)\ndef h(x):\n    return x * {}\n"
    assert _module(tmp_path, "fp_edit", src.format(3)).h(2) == 6
    mod = _module(tmp_path, "fp_edit", src.format(5))  # edited: the entry made from the old source is not this code
    assert mod.h(2) == 10 and sum(mod.h.stats.cache_misses.values()) == 1
    mod = _module(tmp_path, "fp_edit", src.format(3))  # back: its entry is still there
    assert mod.h(2) == 6 and sum(mod.h.stats.cache_hits.values()) == 1
    assert len(list(session.folder.glob("*.mjc"))) == 2
    old = next(session.folder.glob("*.mjc"))
    os.utime(old, (0, 0))  # unused for decades: the next process that compiles removes it
    session.pruned = False
    mod = _module(tmp_path, "fp_edit", src.format(7))
    assert mod.h(2) == 14 and not old.exists() and len(list(session.folder.glob("*.mjc"))) == 2


def _local_session(monkeypatch, folder: Path) -> J._Session:
    session = J._Session()
    session.folder, session.chosen, session.manifest_read = folder, True, True
    folder.mkdir(exist_ok=True)
    monkeypatch.setattr(J, "SESSION", session)
    return session


@pytest.mark.parametrize("damage", ["cut short", "not an entry", "valid checksum, unreadable contents"])
def test_each_kind_of_damage_is_discarded_and_rebuilt(tmp_path, monkeypatch, damage):
    monkeypatch.syspath_prepend(str(tmp_path))
    session = _local_session(monkeypatch, tmp_path / "local")
    src = "from mjenv.engine.jit import njit\n\n@njit(cache=True)\ndef k(x):\n    return x + 7\n"
    assert _module(tmp_path, "damage_k", src).k(1) == 8
    (entry,) = session.folder.glob("*.mjc")
    data = entry.read_bytes()
    if damage == "cut short":
        data = data[: len(data) // 3]
    elif damage == "not an entry":
        data = b"\0" * len(data)
    else:
        body = b"\x80\x05garbage"
        data = data[:5] + hashlib.sha256(body).digest() + body
    entry.write_bytes(data)
    mod = _module(tmp_path, "damage_k", src)
    with pytest.warns(J.CompiledCacheWarning, match="discarded damaged compiled code"):
        assert mod.k(1) == 8
    assert sum(mod.k.stats.cache_misses.values()) == 1  # compiled again ...
    mod = _module(tmp_path, "damage_k", src)
    assert mod.k(1) == 8 and sum(mod.k.stats.cache_hits.values()) == 1  # ... and written whole


def test_njit_with_a_signature_compiles_it_through_the_cache(tmp_path, monkeypatch):
    _local_session(monkeypatch, tmp_path)
    f = njit("int64(int64)", cache=True)(_double)
    assert f(np.int64(4)) == 8 and len(f.signatures) == 1
    with pytest.raises(TypeError):
        f(np.zeros(2))  # only the signature given: nothing else compiles
    assert list(tmp_path.glob("*.mjc"))


def _double(x):
    return 2 * x


def test_the_direct_tests_the_store_serves_exist():
    """Every test the build runs for its direct calls (build_cache.DIRECT_TESTS) is still there: a renamed one would
    stop the next build."""
    import re

    assert build_cache.direct_tests(str(REPO)) == build_cache.DIRECT_TESTS
    for node in build_cache.DIRECT_TESTS:
        path, name = node.split("::")
        func = name.split("[")[0]
        assert re.search(rf"^def {func}\(", (REPO / path).read_text(encoding="utf-8"), re.M), node
