"""Where mjenv's compiled code is cached on this machine: a folder that works for read-only installs too, or none.

The compiled pieces (:mod:`mjenv.engine`, :mod:`mjenv.encoding`, the agents' kernels) are made by
:func:`mjenv.engine.jit.njit`, whose cache (:mod:`mjenv.engine.jitcache`) first looks in a local folder, then in
the precompiled store shipped with the package.  What a start compiles is written to the local folder, chosen
once per process, on first use, by :func:`compiled_cache_dir`:

1. ``$NUMBA_CACHE_DIR/mjenv`` when the user set ``NUMBA_CACHE_DIR`` (if it cannot be written: none, below);
2. else ``$XDG_CACHE_HOME/mjenv/compiled`` (``~/.cache/mjenv/compiled`` without ``XDG_CACHE_HOME``);
3. else ``mjenv/__pycache__/compiled`` beside the source, else ``<tempdir>/mjenv-compiled-<uid>``;
4. else none: the code compiles in memory at every start, with one warning (never an import error).

Entries are named by a fingerprint of the sources they were compiled from, so checkouts and installs of any
version can share one folder: each finds its own code.  Nothing here changes numba's own settings, so other numba
code in the same process caches as it always did.
"""

from __future__ import annotations

import os
import tempfile

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def writable_dir(path: str) -> bool:
    """Whether folder ``path`` exists or can be created, and a file can be written in it."""
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def user_cache_dir(environ=os.environ) -> str:
    """The per-user folder: ``$XDG_CACHE_HOME/mjenv/compiled`` or ``~/.cache/mjenv/compiled``."""
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mjenv", "compiled")


def choose_cache_dir(package_dir: str = PACKAGE_DIR, environ=os.environ) -> tuple[str | None, str | None]:
    """``(folder, None)`` for the local cache of the package at ``package_dir``, or ``(None, why)`` when no folder
    can be written (see the module docstring)."""
    user_set = environ.get("NUMBA_CACHE_DIR")
    if user_set:
        folder = os.path.join(user_set, "mjenv")
        return (folder, None) if writable_dir(folder) else (None, f"NUMBA_CACHE_DIR={user_set} cannot be written")
    for folder in (
        user_cache_dir(environ),
        os.path.join(package_dir, "__pycache__", "compiled"),
        os.path.join(tempfile.gettempdir(), f"mjenv-compiled-{_uid()}"),
    ):
        if writable_dir(folder):
            return folder, None
    return None, "no folder for compiled code can be written (the user cache, the package's, the temp folder)"


def _uid() -> str:
    return str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")


def compiled_cache_dir() -> tuple[str | None, str | None]:
    """The local cache of this installed package (:func:`choose_cache_dir` with this process's environment)."""
    return choose_cache_dir(PACKAGE_DIR, os.environ)
