"""Where numba keeps mjenv's compiled code: a cache directory that works for read-only installs too.

The compiled pieces (the kernels under :mod:`mjenv.engine.entry`, :mod:`mjenv.engine.handk`,
:mod:`mjenv.engine.sampling`, :mod:`mjenv.encoding.observation`) use ``numba.njit(cache=True)``: the first
start compiles them (tens of seconds) and writes the machine code to disk, later starts load it (about a
second).  By default numba writes beside the source, in the package's ``__pycache__`` folders.  When those
cannot be written (a system-wide or read-only install), this module, imported first by ``mjenv/__init__.py``
before anything imports numba-decorated code, points numba at a per-user folder instead:

1. ``$NUMBA_CACHE_DIR`` when the user set it (left alone);
2. else, if every package folder holding compiled code has a writable ``__pycache__``: numba's default;
3. else ``$XDG_CACHE_HOME/mjenv/numba`` (``~/.cache/mjenv/numba`` without ``XDG_CACHE_HOME``) if it can be
   created and written, else ``<tempdir>/mjenv-numba-<uid>``.

The choice is made by setting ``NUMBA_CACHE_DIR`` in ``os.environ`` (and ``numba.config.CACHE_DIR`` when
numba was imported already), which numba reads when each compiled function is defined.  Like numba's own
setting it applies to the whole process.  :data:`CACHE_DIR` records the folder chosen (``None``: numba's
default beside the source).
"""

from __future__ import annotations

import os
import sys
import tempfile

JIT_PACKAGES = ("engine", "encoding")
"""Sub-packages of mjenv that hold ``cache=True`` compiled code (their ``__pycache__`` must be writable)."""

CACHE_DIR: str | None = None
"""The fallback cache folder chosen at import, or ``None`` when numba caches beside the source."""


def writable_dir(path: str) -> bool:
    """Whether folder ``path`` exists or can be created, and a file can be written in it (numba's own test)."""
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def user_cache_dir(environ=os.environ) -> str:
    """The per-user fallback: ``$XDG_CACHE_HOME/mjenv/numba`` or ``~/.cache/mjenv/numba``."""
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mjenv", "numba")


def choose_cache_dir(package_dir: str, environ=os.environ) -> str | None:
    """The folder numba should cache mjenv's code in, or ``None`` for numba's default (see the module docstring)."""
    if environ.get("NUMBA_CACHE_DIR"):
        return None
    if all(writable_dir(os.path.join(package_dir, sub, "__pycache__")) for sub in JIT_PACKAGES):
        return None
    for folder in (user_cache_dir(environ), os.path.join(tempfile.gettempdir(), f"mjenv-numba-{_uid()}")):
        if writable_dir(folder):
            return folder
    return None  # nowhere to write: numba compiles on every start (its own cache search still runs)


def _uid() -> str:
    return str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")


def configure(package_dir: str | None = None) -> str | None:
    """Choose the cache folder for the package at ``package_dir`` (default: this one) and tell numba."""
    global CACHE_DIR
    folder = choose_cache_dir(package_dir or os.path.dirname(os.path.abspath(__file__)))
    if folder is not None:
        os.environ["NUMBA_CACHE_DIR"] = folder
        numba = sys.modules.get("numba")
        if numba is not None:  # numba read the environment when it was imported
            numba.config.CACHE_DIR = folder
    CACHE_DIR = folder
    return folder


configure()
