"""The numba decorator of the engine's compiled code: one specialization per argument *type*, not per constant.

Numba types a constant argument of a call between compiled functions as its literal (``f(E, b, 0, -1)`` is
typed ``f(..., Literal[int](0), Literal[int](-1))``) and compiles the callee once per distinct set of
constants, with all of its own callees again.  The kernels pass constants a lot (event kinds, meld kinds,
``rob`` flags, the scorers' ``how``), so a cold start compiled ``_event`` 20 times, ``kwscore.best_value`` 4
times and ``_advance`` twice.  :func:`njit` compiles such calls for the plain types (a literal's base type:
int64, bool) instead; the values, hence the behaviour, are the same.  A literal inside a tuple is kept: that
is how the kernels' ``E`` carries the compiled family (:func:`mjenv.engine.entry.kernel_for`).

``cache=True`` gives the function mjenv's cache (:mod:`mjenv.engine.jitcache`: the shipped precompiled store, a
local cache keyed by the sources of everything the code reads, checksums, healing) instead of numba's.  Every
cached compiled function of mjenv and its agents is made here (tests/test_compiled_cache.py checks).
"""

from __future__ import annotations

import numba
from numba.core import types

from mjenv.engine import jitcache


def _plain(t):
    return types.unliteral(t) if isinstance(t, types.Literal) else t


def njit(fn=None, **options):
    """``numba.njit(**options)`` whose calls from compiled code are typed with the literals' base types, cached
    by :class:`mjenv.engine.jitcache.CompiledCache` when ``cache=True``.  ``njit(signature, ...)`` compiles that
    signature at once and no other, as numba's does."""
    if fn is None or not callable(fn):
        return lambda f: _make(f, fn, dict(options))
    return _make(fn, None, dict(options))


def _make(fn, sigs, options):
    cache = options.pop("cache", False)
    dispatcher = numba.njit(**options)(fn)
    if cache:
        dispatcher._cache = jitcache.CompiledCache(dispatcher)
    # ``get_call_template`` is numba's dispatcher hook for typing calls from compiled code (numba 0.60-0.68
    # here); a numba without it keeps its own typing: the same behaviour, only a slower cold compile.
    typed_call = getattr(dispatcher, "get_call_template", None)
    if typed_call is not None:

        def get_call_template(args, kws):
            return typed_call(tuple(_plain(a) for a in args), {k: _plain(v) for k, v in kws.items()})

        dispatcher.get_call_template = get_call_template
    if sigs is not None:  # compiled (or loaded) now, through the cache above
        for sig in sigs if isinstance(sigs, list) else [sigs]:
            dispatcher.compile(sig)
        dispatcher.disable_compile()
    return dispatcher
