"""The numba decorator of the engine's compiled code: one specialization per argument *type*, not per constant.

Numba types a constant argument of a call between compiled functions as its literal (``f(E, b, 0, -1)`` is
typed ``f(..., Literal[int](0), Literal[int](-1))``) and compiles the callee once per distinct set of
constants, with all of its own callees again.  The kernels pass constants a lot (event kinds, meld kinds,
``rob`` flags, the scorers' ``how``), so a cold start compiled ``_event`` 20 times, ``kwscore.best_value`` 4
times and ``_advance`` twice.  :func:`njit` compiles such calls for the plain types (a literal's base type:
int64, bool) instead; the values, hence the behaviour, are the same.  A literal inside a tuple is kept: that
is how the kernels' ``E`` carries the compiled family (:func:`mjenv.engine.entry.kernel_for`).
"""

from __future__ import annotations

import numba
from numba.core import types


def _plain(t):
    return types.unliteral(t) if isinstance(t, types.Literal) else t


def njit(fn=None, **options):
    """``numba.njit(**options)`` whose calls from compiled code are typed with the literals' base types."""
    if fn is None:
        return lambda f: njit(f, **options)
    dispatcher = numba.njit(**options)(fn)
    # ``get_call_template`` is numba's dispatcher hook for typing calls from compiled code (numba 0.60-0.68
    # here); a numba without it keeps its own typing: the same behaviour, only a slower cold compile.
    typed_call = getattr(dispatcher, "get_call_template", None)
    if typed_call is None:
        return dispatcher

    def get_call_template(args, kws):
        return typed_call(tuple(_plain(a) for a in args), {k: _plain(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher
