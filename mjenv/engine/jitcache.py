"""Where the engine's compiled code is kept and found again: a shipped precompiled store, a local cache, healing.

Every ``cache=True`` function of mjenv is made by :func:`mjenv.engine.jit.njit`, which gives its numba dispatcher a
:class:`CompiledCache` in place of numba's own file cache.  Looking up one compiled signature goes:

1. the **local cache** (the folder :mod:`mjenv._numba_setup` chooses: ``~/.cache/mjenv/compiled``,
   ``$NUMBA_CACHE_DIR/mjenv``, ...), machine code built on this machine for its CPU;
2. the **shipped store** (``mjenv/_compiled``, package data, so a wheel carries it), built by
   ``python -m mjenv.tools.build_cache`` for a generic x86-64 CPU (``NUMBA_CPU_NAME=generic``): any x86-64 Linux
   machine with the same Python and numba versions as the build loads it instead of compiling (a first start in
   about a second instead of a minute per rule family).  Elsewhere it is not used and the code compiles as before;
   ``MJENV_PRECOMPILED=0`` turns it off;
3. else numba compiles, says so once on stderr (``compiling the kawuxing3 game core, first run only…``), and the
   result is written to the local cache.

Entries are keyed by a **fingerprint** of what the compiled code was made from (:func:`fingerprint`): the
function's source text, its numba options, and, recursively, every compiled function, constant and array it
reads through its globals or closure.  Numba's own cache keys each function on its own file only, so an edit to
a callee in another module (``kwscore.py``) kept serving the caller's stale machine code; the fingerprint
changes with it.  The key also holds the signature, the CPU (numba's codegen "magic tuple") and the Python and
numba versions.

Each entry file carries a SHA-256 of its contents.  An entry that fails to load (damaged, cut short, not what was
written, or one numba cannot rebuild) is discarded with one warning (:class:`CompiledCacheWarning`) and compiled
again; with no writable folder at all, code compiles in memory (one warning) and the shipped store still serves.
"""

from __future__ import annotations

import builtins
import hashlib
import inspect
import json
import lzma
import os
import pickle
import sys
import time
import types as pytypes
import uuid
import warnings
from pathlib import Path

import numpy as np

FORMAT = 1
"""Version of the entry format and key; part of every key, so a change here orphans older entries."""

SUFFIX = ".mjc"
KEEP_DAYS = 30
"""Local entries not loaded for this many days are removed (by the next process that compiles something)."""
_HEADER = b"MJC1"
_RAW, _LZMA = 0, 1  # how the payload after the header is stored

PACKAGE_DIR = Path(__file__).resolve().parents[1]
SHIPPED_DIR = PACKAGE_DIR / "_compiled"
"""The shipped store: ``manifest.json`` and the ``*.mjc`` entries of :mod:`mjenv.tools.build_cache`."""

MANIFEST = "manifest.json"
PRECOMPILED_ENV = "MJENV_PRECOMPILED"
"""Set to ``0`` to ignore the shipped store (compile, or load the local cache, as without it)."""
LOG_ENV = "MJENV_CACHE_LOG"
"""Set to ``1`` to print every function compiled because no cache held it (what the shipped store lacks)."""
BUILD_ENV = "MJENV_BUILD_CACHE"
"""Set by :mod:`mjenv.tools.build_cache` in its workers: write entries to this folder, read nothing shipped."""


class CompiledCacheWarning(UserWarning):
    """The compiled-code cache could not be used as it is: a damaged entry was discarded, or nothing can be written."""


# ------------------------------------------------------------------------------------------------ fingerprints
_FP_MEMO: dict[tuple, bytes] = {}


def fingerprint(dispatcher) -> str:
    """Hex digest of what ``dispatcher``'s machine code is made from (see the module docstring), including how
    :mod:`mjenv.engine.jit` has numba type the calls between compiled functions."""
    h = hashlib.sha256(_function_digest(dispatcher.py_func, dispatcher.targetoptions, set())[0])
    h.update(_jit_source())
    return h.hexdigest()


def _jit_source() -> bytes:
    global _JIT_SOURCE
    if _JIT_SOURCE is None:
        _JIT_SOURCE = (Path(__file__).parent / "jit.py").read_bytes()
    return _JIT_SOURCE


_JIT_SOURCE: bytes | None = None


def outer_digest(fn) -> str:
    """16 hex digits of what a function that makes compiled functions when called is made from."""
    return _function_digest(fn, None, set())[0].hex()[:16]


def _ours(obj) -> bool:
    return (getattr(obj, "__module__", None) or "").split(".")[0] in ("mjenv", "agents")


def _code_names(code) -> list[str]:
    """Every global or attribute name ``code`` and the code objects nested in it use."""
    names = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            names += _code_names(c)
    return names


def _code_text(code) -> str:
    """A version-independent stand-in for the source of code made by ``exec`` (its names and constants)."""
    parts = [code.co_name, repr(code.co_varnames), repr(code.co_names)]
    for c in code.co_consts:
        parts.append(_code_text(c) if isinstance(c, pytypes.CodeType) else repr(c))
    return "\n".join(parts)


def _function_digest(fn, options, stack: set) -> tuple[bytes, bool]:
    """(digest, whether a cycle was cut below) of the Python function ``fn`` compiled with numba ``options``."""
    opts = None if options is None else repr(sorted((k, repr(v)) for k, v in options.items()))
    memo = _FP_MEMO.get((id(fn), opts))
    if memo is not None:
        return memo, False
    if id(fn) in stack:  # recursion: the name stands for the function
        return f"cycle:{fn.__module__}.{fn.__qualname__}".encode(), True
    stack.add(id(fn))
    h = hashlib.sha256(f"{fn.__module__}.{fn.__qualname__}".encode())
    try:
        h.update(inspect.getsource(fn).encode())
    except (OSError, TypeError):  # made by exec: no file to read
        h.update(_code_text(fn.__code__).encode())
    if opts is not None:
        h.update(opts.encode())
    cut = False
    glob = fn.__globals__
    names = sorted(set(_code_names(fn.__code__)))
    for name in names:
        if name in glob:
            val = glob[name]
        elif hasattr(builtins, name):
            h.update(b"B" + name.encode())
            continue
        else:
            continue  # an attribute name: read through its module below
        d, c = _value_digest(val, stack)
        h.update(name.encode() + d)
        cut |= c
        if isinstance(val, pytypes.ModuleType):
            for attr in names:  # module.attr: what the function may read through the module
                if attr != name and not attr.startswith("__") and hasattr(val, attr):
                    d, c = _value_digest(getattr(val, attr), stack)
                    h.update(f"{name}.{attr}".encode() + d)
                    cut |= c
    for cell in fn.__closure__ or ():
        try:
            d, c = _value_digest(cell.cell_contents, stack)
        except ValueError:  # an empty cell
            d, c = b"empty", False
        h.update(d)
        cut |= c
    module = sys.modules.get(fn.__module__)
    if module is None or module.__dict__ is not glob:  # made by exec with its own globals: all of them count
        for k in sorted(glob):
            if not k.startswith("__"):
                d, c = _value_digest(glob[k], stack)
                h.update(k.encode() + d)
                cut |= c
    stack.discard(id(fn))
    digest = h.digest()
    if not cut:
        _FP_MEMO[(id(fn), opts)] = digest
    return digest, cut


def _value_digest(v, stack: set) -> tuple[bytes, bool]:
    """(digest, cycle cut) of a value compiled code may read: its content, never its address."""
    from numba.core.dispatcher import Dispatcher

    if isinstance(v, Dispatcher):
        d, c = _function_digest(v.py_func, v.targetoptions, stack)
        return b"D" + d, c
    if isinstance(v, pytypes.FunctionType):
        if _ours(v):
            d, c = _function_digest(v, None, stack)
            return b"F" + d, c
        return f"f{v.__module__}.{v.__qualname__}".encode(), False
    if isinstance(v, pytypes.ModuleType):
        return b"M" + v.__name__.encode(), False
    if isinstance(v, np.ndarray):
        body = hashlib.sha256(np.ascontiguousarray(v).tobytes()).digest()
        return f"A{v.dtype.str}{v.shape}".encode() + body, False
    if isinstance(v, (tuple, list)):
        parts = [_value_digest(x, stack) for x in v]
        return b"T(" + b",".join(p[0] for p in parts) + b")", any(p[1] for p in parts)
    if isinstance(v, dict):
        parts = [(repr(k).encode(), _value_digest(x, stack)) for k, x in sorted(v.items(), key=lambda kv: repr(kv[0]))]
        return b"{" + b",".join(k + b":" + p[0] for k, p in parts) + b"}", any(p[1] for _, p in parts)
    if isinstance(v, type):
        return f"C{v.__module__}.{v.__qualname__}".encode(), False
    r = repr(v)
    if " at 0x" in r:  # an object whose repr is its address: its type is all that is stable
        r = f"{type(v).__module__}.{type(v).__qualname__}"
    return f"V{type(v).__name__}:{r}".encode(), False


# ------------------------------------------------------------------------------------------------ entry files
def _dump_entry(path: Path, key: str, payload) -> None:
    """Write one entry atomically: header, storage byte, SHA-256 of the stored bytes, then the stored bytes."""
    from numba.core.serialize import dumps

    body = dumps((key, payload))
    write_atomic(path, _HEADER + bytes([_RAW]) + hashlib.sha256(body).digest() + body)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename, so that no reader sees half of it."""
    tmp = path.with_name(f"{path.name}.tmp.{uuid.uuid4().hex[:12]}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def compress_entry(data: bytes) -> bytes:
    """The entry file ``data`` (as written to a local cache) with its payload LZMA-compressed, for the shipped store."""
    body = _checked_body(data)
    if data[4] == _LZMA:
        return data
    packed = lzma.compress(body, preset=9 | lzma.PRESET_EXTREME)
    return _HEADER + bytes([_LZMA]) + hashlib.sha256(packed).digest() + packed


def _checked_body(data: bytes) -> bytes:
    """The stored bytes of entry file ``data``; ``ValueError`` when the file is not what was written."""
    if len(data) < 37 or data[:4] != _HEADER:
        raise ValueError("not an mjenv compiled-code entry")
    if hashlib.sha256(data[37:]).digest() != data[5:37]:
        raise ValueError("checksum mismatch")
    return data[37:]


def _read_entry(path: Path, key: str):
    """The payload of the entry at ``path``; ``None`` when there is none or it holds another key; raises
    ``ValueError`` when the file is not what was written."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    body, kind = _checked_body(data), data[4]
    if kind == _LZMA:
        body = lzma.decompress(body)
    elif kind != _RAW:
        raise ValueError(f"unknown storage kind {kind}")
    stored_key, payload = pickle.loads(body)
    return payload if stored_key == key else None


# ------------------------------------------------------------------------------------------------ the stores
class _Session:
    """Process-wide state: the local folder (chosen on first use), the shipped manifest, what was said once."""

    def __init__(self):
        self.folder: Path | None = None
        self.why_memory: str | None = None
        self.chosen = False
        self.manifest: dict | None = None
        self.manifest_read = False
        self.warned: set[str] = set()
        self.announced: set[str] = set()
        self.subject = "mjenv's compiled code"
        self.pruned = False
        self.used: dict[str, CompiledCache] = {}  # local entries loaded or written: {file name: its cache}
        self.shipped_hits: set[str] = set()  # the shipped entries loaded (file names)
        self.misses: list[str] = []  # "function signature" of every lookup that found nothing (it compiles)

    def local(self) -> Path | None:
        if not self.chosen:
            from mjenv import _numba_setup

            build = os.environ.get(BUILD_ENV)
            if build:
                self.folder, self.why_memory = Path(build), None
                self.folder.mkdir(parents=True, exist_ok=True)
            else:
                folder, self.why_memory = _numba_setup.compiled_cache_dir()
                self.folder = None if folder is None else Path(folder)
            self.chosen = True
        return self.folder

    def shipped(self) -> dict | None:
        if not self.manifest_read:
            self.manifest_read = True
            off = os.environ.get(PRECOMPILED_ENV, "1").strip().lower() in ("0", "no", "false", "off")
            if not off and not os.environ.get(BUILD_ENV):
                try:
                    with open(SHIPPED_DIR / MANIFEST, encoding="utf-8") as f:
                        m = json.load(f)
                    import numba

                    if m.get("format") == FORMAT and m.get("numba") == numba.__version__ and m.get("python") == _py():
                        self.manifest = m
                except (OSError, ValueError):
                    self.manifest = None
        return self.manifest

    def prune(self, folder: Path) -> None:
        """Once per process that compiles: remove entries of ``folder`` unused for :data:`KEEP_DAYS` (other sources'
        code; a load refreshes an entry's time)."""
        if self.pruned:
            return
        self.pruned = True
        cutoff = time.time() - KEEP_DAYS * 86400
        for p in folder.glob(f"*{SUFFIX}"):
            try:
                if p.stat().st_mtime < cutoff:
                    p.unlink()
            except OSError:
                pass

    def warn_once(self, kind: str, message: str) -> None:
        if kind not in self.warned:
            self.warned.add(kind)
            warnings.warn(message, CompiledCacheWarning, stacklevel=2)

    def announce(self) -> None:
        if self.subject not in self.announced:
            self.announced.add(self.subject)
            print(f"mjenv: compiling {self.subject}, first run only…", file=sys.stderr, flush=True)


SESSION = _Session()


def set_subject(text: str) -> None:
    """Name what a compile from now on builds, for the one-line notice (e.g. ``"the kawuxing3 game core"``)."""
    SESSION.subject = text


def _py() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._" else "_" for ch in name)


REGISTRY: list = []
"""Every :class:`CompiledCache` made in this process (one per cached compiled function), in creation order."""


class CompiledCache:
    """numba's per-function cache interface (``load_overload``/``save_overload``) over the stores of this module."""

    def __init__(self, dispatcher):
        self._dispatcher = dispatcher
        self._enabled = True
        self._fp: str | None = None
        self._funcid: str | None = None
        REGISTRY.append(self)

    @property
    def funcid(self) -> str:
        """``module.qualname``, plus a digest of the closure's values for a function made in a loop (the kernels'
        entry points): what names this function's entries in a folder."""
        if self._funcid is None:
            fn = self._dispatcher.py_func
            name = f"{fn.__module__}.{fn.__qualname__}"
            if fn.__closure__:
                cells = hashlib.sha256()
                for cell in fn.__closure__:
                    try:
                        cells.update(_value_digest(cell.cell_contents, set())[0])
                    except ValueError:
                        cells.update(b"empty")
                name += "." + cells.hexdigest()[:8]
            self._funcid = _safe(name)
        return self._funcid

    # numba's _Cache interface -----------------------------------------------------------------------------
    @property
    def cache_path(self):
        """The local folder (``None``: compiling in memory)."""
        folder = SESSION.local()
        return None if folder is None else str(folder)

    def enable(self):
        self._enabled = True

    def disable(self):
        self._enabled = False

    def flush(self):
        """Remove this function's local entries."""
        folder = SESSION.local()
        if folder is not None:
            for p in folder.glob(f"{self.funcid}-*{SUFFIX}"):
                _unlink(p)

    def load_overload(self, sig, target_context):
        """The compiled result for ``sig`` from the local cache or the shipped store, else ``None`` (and the notice)."""
        target_context.refresh()
        if not self._enabled:
            return None
        codegen = target_context.codegen()
        folder = SESSION.local()
        if folder is not None:
            key = self.key(sig, codegen.magic_tuple())
            path = folder / self.filename(key)
            cres = self._load(path, key, target_context, local=True)
            if cres is not None:
                SESSION.used[path.name] = self
                return cres
        manifest = SESSION.shipped()
        if manifest is not None and tuple(manifest["magic"])[0] == codegen.magic_tuple()[0]:
            key = self.key(sig, tuple(manifest["magic"]))
            name = self.filename(key)
            cres = self._load(SHIPPED_DIR / name, key, target_context, local=False)
            if cres is not None:
                SESSION.shipped_hits.add(name)
                if os.environ.get(LOG_ENV):
                    print(f"mjenv: compiled-code cache hit: shipped {name}", file=sys.stderr, flush=True)
                return cres
        SESSION.announce()
        SESSION.misses.append(f"{self.funcid} {sig!r}")
        if os.environ.get(LOG_ENV):
            print(f"mjenv: compiled-code cache miss: {self.funcid} {sig!r}", file=sys.stderr, flush=True)
        return None

    def save_overload(self, sig, cres):
        """Write the compiled result for ``sig`` to the local cache (nothing when there is no writable folder)."""
        if not self._enabled or not _cachable(cres):
            return
        folder = SESSION.local()
        if folder is None:
            SESSION.warn_once("memory", f"mjenv: {SESSION.why_memory}; compiling in memory (again at every start)")
            return
        key = self.key(sig, cres.codegen.magic_tuple())
        try:
            SESSION.prune(folder)
            _dump_entry(folder / self.filename(key), key, cres._reduce())
            SESSION.used[self.filename(key)] = self
        except OSError as e:
            SESSION.warn_once("write", f"mjenv: cannot write compiled code to {folder} ({e}); compiling in memory")

    # ------------------------------------------------------------------------------------------------------
    def fingerprint(self) -> str:
        if self._fp is None:
            self._fp = fingerprint(self._dispatcher)
        return self._fp

    def describe(self) -> dict:
        """What the shipped store's manifest records of this function (for :func:`mjenv.tools.build_cache.stale`):
        its fingerprint and, for one made inside another function, that function's name and source digest."""
        fn = self._dispatcher.py_func
        out = {"fp": self.fingerprint()[:16], "module": fn.__module__, "outer": None, "outer_fp": None}
        if "<locals>" in fn.__qualname__:
            outer = getattr(sys.modules[fn.__module__], fn.__qualname__.split(".")[0], None)
            if outer is not None:
                out["outer"] = outer.__name__
                out["outer_fp"] = outer_digest(outer)
        return out

    def key(self, sig, magic) -> str:
        """The full key of ``sig`` compiled for the codegen ``magic`` (CPU) from today's sources."""
        import numba

        return repr((FORMAT, self.funcid, self.fingerprint(), repr(sig), tuple(magic), _py(), numba.__version__))

    def filename(self, key: str) -> str:
        """``<function>-<fingerprint 16>-<key 16>.mjc``."""
        return f"{self.funcid}-{self.fingerprint()[:16]}-{hashlib.sha256(key.encode()).hexdigest()[:16]}{SUFFIX}"

    def _load(self, path: Path, key: str, target_context, local: bool):
        from numba.core.compiler import CompileResult

        try:
            payload = _read_entry(path, key)
            if payload is None:
                return None
            cres = CompileResult._rebuild(target_context, *payload)
            if local and time.time() - path.stat().st_mtime > 86400:
                os.utime(path)  # in use: kept by the pruning
            return cres
        except Exception as e:  # damaged in any way: discard (local) or pass over (shipped), then compile
            where = "the local cache" if local else "the shipped store"
            SESSION.warn_once(
                f"damaged:{local}",
                f"mjenv: discarded damaged compiled code in {where} ({path.name}: {type(e).__name__}: {e}); "
                "compiling it again",
            )
            if local:
                _unlink(path)
            return None


def _cachable(cres) -> bool:
    return all(x.can_cache for x in cres.lifted) and not cres.library.has_dynamic_globals


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
