"""The fan row: how a compiled scorer hands the fans of a winner's chosen reading to the engine's results.

When a kernel settles a win it values the winner's best reading and, where the family's scorer is compiled this far,
writes that reading's fans into the winner's fan row, ``pend[b, PEND_FANS + FAN_SLOTS * s : ... + FAN_SLOTS]``
(:mod:`mjenv.engine.codes`): Kawuxing's fans (:func:`mjenv.engine.kwscore.reading_fans`), Gejiu's patterns
(:func:`mjenv.engine.gjscore.reading_fans`), the hand class of a Diedaohu or Liuwei win (``ddwin._dd_end``),
Yangzhou's big and small fans with T (:func:`mjenv.engine.yzscore.reading_fans`, which writes nothing when they would
not fit).  A row is written only when one reading alone is the best (no ``READING_TIE``).

=====================  ==============================================================================
``row[ROW_N]``         how many fans follow (0: none written; the result is then built by the Python scorer)
``row[ROW_VALUE]``     the hand value V of the reading (uncapped)
``row[ROW_CAP]``       its cap, 0 for none
``row[ROW_FANS + 2k]`` the k-th fan's id: its index in the family's fan order, in that order
``row[ROW_FANS+2k+1]`` that fan's contribution (as the Python scorer's ``WinScore.fans`` holds it)
=====================  ==============================================================================

:func:`read` turns a row back into the fans dict, V and the cap; only the fan names and the reading's text are
made in Python when a result is read.
"""

from __future__ import annotations

from mjenv.engine.jit import njit

ROW_N, ROW_VALUE, ROW_CAP, ROW_FANS = 0, 1, 2, 3
MAX_FANS = 12
"""The most fans one reading can hold in a row (Kawuxing: 7 of the reading and 4 situational at most; Yangzhou: 10
in 18,000 random hands of tests/test_yzscore.py — a reading with more is left to the Python scorer)."""
FAN_SLOTS = ROW_FANS + 2 * MAX_FANS


@njit(cache=True, _nrt=False)
def put(row, k, fan, value):
    """Write fan ``fan`` (its ``FAN_ORDER`` index) with contribution ``value`` as the ``k``-th fan of ``row``;
    returns ``k + 1``."""
    row[ROW_FANS + 2 * k] = fan
    row[ROW_FANS + 2 * k + 1] = value
    return k + 1


def read(row, names) -> tuple[dict[str, int], int, int | None] | None:
    """``(fans, V, cap)`` of a fan row (``cap`` None for none; ``names``: the family's fan ids in order:
    ``kawuxing.FAN_ORDER``, ``gejiu.PATTERN_ORDER``, the classes of ``diedaohu.CLASSES``, ``yangzhou.FAN_ORDER``), or
    ``None`` when no fans were written."""
    n = int(row[ROW_N])
    if n <= 0:
        return None
    vals = row[: ROW_FANS + 2 * n].tolist()
    fans = {names[vals[i]]: vals[i + 1] for i in range(ROW_FANS, ROW_FANS + 2 * n, 2)}
    return fans, vals[ROW_VALUE], vals[ROW_CAP] or None
