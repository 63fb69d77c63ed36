"""How the kernels are compiled: their decorator, the sets of compiled scorers and the gates that leave the others out.

Every kernel function (:mod:`mjenv.engine.table`, :mod:`mjenv.engine.claims`, :mod:`mjenv.engine.masks`,
:mod:`mjenv.engine.flow`, the family pieces :mod:`mjenv.engine.kwend`, :mod:`mjenv.engine.gjend`,
:mod:`mjenv.engine.yzend`, :mod:`mjenv.engine.ddend`, :mod:`mjenv.engine.ddwin` and :mod:`mjenv.engine.entry`) is compiled by
:data:`kernel`: cached on disk, and without numba's reference counting (``_nrt=False``): the kernels allocate
nothing and make no array they return, and the atomic increments of views passed between functions had cost
about half of their time.  The entry points are compiled by :data:`entry_kernel`, the same releasing the GIL.

A cold start compiles only what its family needs.  Every kernel function that takes ``E`` is specialized on
the type of its last item, ``fam``: the literal set of compiled scorers (FEAT_*).  The calls that reach a
scorer go through a gate (:func:`gate`) that numba resolves while typing, from that literal: to the scorer
when the set holds it, else to a stub, so the scorer is neither typed nor compiled.  The rules keep one
source; the cfg flags still decide at run time, and the set only has to include every scorer they switch on
(:func:`mjenv.engine.entry.features`).
"""

from __future__ import annotations

import inspect

from numba.core import types as nb_types
from numba.extending import overload

from mjenv.engine.jit import njit

kernel = njit(cache=True, _nrt=False)
"""The decorator of every kernel function."""

entry_kernel = njit(cache=True, _nrt=False, nogil=True)
"""The decorator of the entry points Python calls (:mod:`mjenv.engine.entry`): :data:`kernel` releasing the GIL
while it runs, so that shards of tables run at once on threads (:mod:`mjenv.engine.threads`)."""

FEAT_KW, FEAT_YZ, FEAT_GJ = 1, 2, 4  # kwscore (windows, hand ends), yzscore (windows, self-draws), gjscore (ends)
FEAT_ALL = FEAT_KW | FEAT_YZ | FEAT_GJ


def _compiles(E, feature: int) -> bool:
    """While typing: whether the kernel being compiled for the tuple type ``E`` holds ``feature``."""
    fam = E.types[-1]
    return not isinstance(fam, nb_types.IntegerLiteral) or (fam.literal_value & feature) != 0


def gate(feature: int, on, off):
    """A function for the kernels that calls ``on`` where the kernel holds ``feature`` and ``off`` (same
    parameters, ``E`` first) elsewhere, chosen while typing.  ``off`` is only reached if a cfg flag enables what
    ``fam`` left out.  (Not ``inline="always"``: numba's inlining of it into ``_open_window``'s ``and`` lost the
    write of ``pend[b, 1]`` on the Python path, tests/test_kernel_ends_4p.py.)"""
    params = ", ".join(inspect.signature(on.py_func).parameters)
    ns: dict = {}
    exec(  # (explicit parameters, as the overload machinery likes them best)
        f"def gated({params}):\n    raise NotImplementedError('compiled code only')\n"
        f"def typed({params}):\n    fn = on if compiles(E, feature) else off\n"
        f"    def impl({params}):\n        return fn({params})\n    return impl\n",
        {"on": on, "off": off, "compiles": _compiles, "feature": feature, "__name__": on.__module__},
        ns,
    )
    gated = ns["gated"]
    gated.__name__ = gated.__qualname__ = on.__name__ + "_if"
    overload(gated, prefer_literal=True, jit_options={"_nrt": False})(ns["typed"])
    return gated


@kernel
def false(E, *args):
    """The stub of a gated verdict: no."""
    return False


@kernel
def nothing(E, *args):
    """The stub of a gated action: nothing."""
    return None


@kernel
def code_unchanged(E, b, code):
    """The stub of a gated hand end: the stop code stays (the engine's Python path takes it)."""
    return code
