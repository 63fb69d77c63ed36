"""The engine's list-like public views over its tables: ``engine.events``, ``engine.results``, ``engine.sessions``.

Each is what :class:`mjenv.engine.core.Engine` hands its callers in place of plain lists, so that what the kernels
write compactly (event records, hands they settled, session rows) becomes dicts and objects only when read:
:class:`EventLog` (one table's events), :class:`_EventLogs` (``engine.events``), :class:`_Results`
(``engine.results``) and :class:`_Sessions` (``engine.sessions``).  They read the engine through the few methods
and arrays named in their docstrings; this module does not import the engine.
"""

from __future__ import annotations

from collections.abc import Sequence as SequenceABC
from typing import Any

import numpy as np

from mjenv.engine import codes as K
from mjenv.engine.calls import _UNREAD

__all__ = ["EventLog"]


class EventLog(list):
    """One table's events of the current hand as dicts (docs/replay-format.md), converted when read.

    The engine writes compact records; the log turns them into dicts when it is fetched
    (``engine.events[b]``) or read, and caches them.  It is a ``list``, so ``json.dumps`` and friends
    take it as it was when fetched; reading it through its own methods (len, index, iteration)
    brings it up to date with the engine.  When the table is dealt again the log is completed and
    detached, so a log the caller holds keeps the hand it belonged to.
    """

    def __init__(self, engine: Any, b: int):
        super().__init__()
        self._engine: Any = engine  # the Engine; None once detached
        self._b = b
        self._done = 0

    def _sync(self) -> "EventLog":
        eng = self._engine
        if eng is not None:
            end = int(eng._evn[self._b])
            if end > K.EV_CAPACITY:
                raise RuntimeError(f"table {self._b}: more than {K.EV_CAPACITY} events in one hand")
            while self._done < end:
                self._done = eng._convert(self._b, self._done, self)
        return self

    def _detach(self) -> None:
        self._sync()
        self._engine = None

    def __len__(self) -> int:
        return list.__len__(self._sync())

    def __getitem__(self, i):
        return list.__getitem__(self._sync(), i)

    def __iter__(self):
        return list.__iter__(self._sync())

    def __eq__(self, other) -> bool:
        return list.__eq__(self._sync(), other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return list.__repr__(self._sync())


class _EventLogs(SequenceABC):
    """``engine.events``: one :class:`EventLog` per table."""

    def __init__(self, engine: Any):
        self._engine = engine

    def __len__(self) -> int:
        return self._engine.batch_size

    def __getitem__(self, b):
        if isinstance(b, slice):
            return [self[i] for i in range(*b.indices(len(self)))]
        return self._engine._log(int(b))




class _Results(list):
    """``engine.results``: per table the finished hand's result dict, or None while it plays.

    Hands the kernels settle themselves (every hand end) are stored as a marker and get their dict — fans, reading
    texts, transfers — when first read (``Engine._kernel_result``: the fans the kernel wrote for the reading it chose,
    :mod:`mjenv.engine.fanrow`, or the pure scorer valuing the readings when several tie), so a batch that never reads
    results never pays for them.  The state they are built from stays untouched until the table is dealt again,
    and a deal clears the entry first.  Reading through any list method gives the dicts.
    """

    def __init__(self, n: int, build):
        super().__init__([None] * n)
        self._build = build

    def _get(self, i: int):
        v = list.__getitem__(self, i)
        if v is _UNREAD:
            v = self._build(i % len(self))
            list.__setitem__(self, i, v)
        return v

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._get(j) for j in range(*i.indices(len(self)))]
        return self._get(i)

    def __iter__(self):
        return (self._get(i) for i in range(len(self)))

    def __contains__(self, x) -> bool:
        return any(v is x or v == x for v in self)

    def __eq__(self, other) -> bool:
        return list(self) == (list(other) if isinstance(other, list) else other)

    def __ne__(self, other) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))

    def __copy__(self) -> list:
        return list(self)

    def __deepcopy__(self, memo) -> list:
        import copy

        return copy.deepcopy(list(self), memo)

    def __reduce__(self):
        return (list, (list(self),))

    def index(self, x, *args) -> int:  # type: ignore[override]
        return list(self).index(x, *args)

    def count(self, x) -> int:  # type: ignore[override]
        return list(self).count(x)


class _Sessions(_Results):
    """``engine.sessions``: per table its session (一操) object, or None in families without sessions.

    The engine keeps the sessions as int64 rows ``(dealer, rounds, passes, hands, over)`` (``Engine._ses``) that
    the family starts and advances in batches (:meth:`~mjenv.engine.family.DiedaohuFamily.advance_drawn`); an
    entry's object is made from its row when it is read, and assigning an entry (the Python path of a won hand,
    a replay) writes the row too.
    """

    def __init__(self, n: int, build, rows: np.ndarray):
        super().__init__(n, build)
        self._rows = rows

    def __setitem__(self, i, v) -> None:
        if isinstance(i, slice):
            raise TypeError("engine.sessions entries are set one table at a time")
        list.__setitem__(self, i, v)
        if v is not None:
            self._rows[i] = (v.dealer, v.rounds, v.passes, v.hands, v.over)

    def _stale(self, rows) -> None:
        """Tables ``rows`` changed in the rows: their objects are made again when read."""
        for b in rows:
            list.__setitem__(self, b, _UNREAD)
