"""The numba cache folder: beside the source when writable, a per-user folder for read-only installs."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from mjenv import _numba_setup as N

PACKAGE = Path(__file__).resolve().parents[1] / "mjenv"

_CHILD = """
import json, numpy as np
import mjenv
from mjenv import _numba_setup
from mjenv.engine.sampling import random_legal_actions, seed_state
out = np.empty(3, np.int64)
random_legal_actions(np.ones((3, 5), bool), seed_state(0), out)
st = random_legal_actions.stats
print(json.dumps({"file": mjenv.__file__, "cache": _numba_setup.CACHE_DIR, "hits": sum(st.cache_hits.values()),
                  "misses": sum(st.cache_misses.values())}))
"""


def _read_only_copy(dest: Path) -> Path:
    """A copy of the package that cannot be written: chmod a-w, and (root ignores modes) a plain file
    where each ``__pycache__`` folder would go."""
    pkg = dest / "mjenv"
    shutil.copytree(PACKAGE, pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for folder in [pkg, *[p for p in pkg.rglob("*") if p.is_dir()]]:
        (folder / "__pycache__").write_text("not a folder: nothing can be cached here\n")
    for p in [pkg, *pkg.rglob("*")]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return pkg


def _run_child(site: Path, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env.update(PYTHONPATH=str(site), HOME=str(home), XDG_CACHE_HOME=str(home / "xdg"))
    proc = subprocess.run([sys.executable, "-c", _CHILD], cwd=home, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_read_only_install_caches_in_the_user_folder_and_loads_it_next_start(tmp_path):
    site, home = tmp_path / "site", tmp_path / "home"
    site.mkdir()
    home.mkdir()
    pkg = _read_only_copy(site)
    try:
        first = _run_child(site, home)
        fallback = home / "xdg" / "mjenv" / "numba"
        assert Path(first["file"]).resolve() == (pkg / "__init__.py").resolve()  # the copy, not the checkout
        assert first["cache"] == str(fallback)
        assert first["misses"] >= 1 and first["hits"] == 0  # compiled and written to the fallback folder
        assert any(p.name.startswith("sampling.random_legal_actions") for p in fallback.rglob("*.nbi"))
        second = _run_child(site, home)
        assert second["hits"] >= 1 and second["misses"] == 0  # the next start loads it: no second compile
        assert not list(pkg.rglob("*.nbi"))
    finally:
        for p in [pkg, *pkg.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)


def test_cache_dir_choice(tmp_path):
    pkg = tmp_path / "pkg"
    for sub in N.JIT_PACKAGES:
        (pkg / sub).mkdir(parents=True)
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert N.choose_cache_dir(str(pkg), env) is None  # writable: numba's default, beside the source
    assert N.choose_cache_dir(str(pkg), {**env, "NUMBA_CACHE_DIR": "/somewhere"}) is None  # the user's choice stands
    shutil.rmtree(pkg / "encoding" / "__pycache__")
    (pkg / "encoding" / "__pycache__").write_text("")
    assert N.choose_cache_dir(str(pkg), env) == str(tmp_path / "xdg" / "mjenv" / "numba")
    assert N.user_cache_dir({"XDG_CACHE_HOME": ""}) == os.path.join(os.path.expanduser("~"), ".cache", "mjenv", "numba")
    (tmp_path / "blocked").write_text("")  # a file where the user cache would go: the temp folder is next
    folder = N.choose_cache_dir(str(pkg), {"XDG_CACHE_HOME": str(tmp_path / "blocked")})
    assert folder is not None and os.path.basename(folder).startswith("mjenv-numba-")
