"""How the engine calls its compiled kernels and keeps what they settled: the direct entry of a numba dispatcher,
the marker of a results entry not read yet and what a session reads of a win the kernel settled.  Shared by :mod:`mjenv.engine.core` and
:mod:`mjenv.engine.worlds` (which makes engines of sampled worlds), below both.
"""

from __future__ import annotations

_UNREAD = object()  # a results entry of a hand settled in the kernel whose dict was not built yet


def _direct_entry(dispatcher, example_args: tuple):
    """The compiled machine code behind ``dispatcher`` for the argument types of ``example_args``, called without
    numba's per-call type dispatch (half of a B = 1 kernel call's fixed cost: 1.1 against 2.1 µs measured).

    Only for calls whose arguments have exactly those types, layouts included: the entry point checks dtypes but
    not memory layout.  When that signature is not compiled yet, or ``dispatcher`` is not a numba dispatcher
    (a test or benchmark may wrap it), the dispatcher itself is returned.
    """
    overloads = getattr(dispatcher, "overloads", None)
    typeof = getattr(dispatcher, "typeof_pyval", None)
    if not overloads or typeof is None:
        return dispatcher
    compiled = overloads.get(tuple(typeof(a) for a in example_args))
    return dispatcher if compiled is None else getattr(compiled, "entry_point", dispatcher)


class _SettledWin:
    """What a session's advance reads of a win the kernel settled: whether its settlement ended the session
    (``pend[b, PEND_OVER]``), as a ``BankrollSettlement`` says it."""

    __slots__ = ("session_over",)

    def __init__(self, session_over: bool):
        self.session_over = session_over
