"""The options block of the ``mjenv-obs-v1`` encoding (:mod:`mjenv.encoding.observation`, whose docstring
specifies it): its columns for a variant's options (:func:`option_slots`: a flag column per allowed value of a
choice, a scaled numeric column per number) and their values (:func:`option_values`).  Read through
:mod:`mjenv.encoding.observation`, which re-exports every name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mjenv.rules.options import (
    Choice,
    NonNegativeInteger,
    OptionalPositiveNumber,
    PositiveNumber,
    option_info,
    options_to_dict,
)

__all__ = ["MATCH_LEVEL_OPTIONS", "NUMBER_SCALES", "OptionSlot", "option_slots", "option_values"]

MATCH_LEVEL_OPTIONS = frozenset({"seat_rotation", "escape_penalty"})
"""Options a single hand ignores (docs/rules/kawuxing.md §3.12): left out of the options block."""

NUMBER_SCALES = {"base": 1.0, "bankroll": 100.0, "min_fan": 20.0}
"""Divisor of each number-valued option in the options block, so that usual values land near 0.5–1
(``base`` 1; ``bankroll`` 50–200 b; ``min_fan`` 10–20).  A new number option needs an entry here."""


@dataclass(frozen=True)
class OptionSlot:
    """One column of the options block.

    A flag column is 1 when option ``name`` has ``value``; a ``numeric`` column holds the option's value
    divided by ``scale`` (0 while an optional number is ``none``).
    """

    name: str
    value: Any
    numeric: bool = False
    scale: float = 1.0


def _number_scale(name: str) -> float:
    if name not in NUMBER_SCALES:  # a new number option must be given a scale, not an arbitrary magnitude
        raise TypeError(f"option {name!r}: no observation scale for a number option; add it to NUMBER_SCALES")
    return NUMBER_SCALES[name]


def option_slots(variant: str, opts) -> tuple[OptionSlot, ...]:
    """The options block layout of ``variant``: its columns, options in declaration order.

    A choice takes one flag column per allowed value; a number (``base``, ``min_fan``) one numeric column;
    an optional number (``bankroll``) a flag column for ``none`` and a numeric column.  Options the variant
    lacks and match-level options (:data:`MATCH_LEVEL_OPTIONS`) are left out.
    """
    present = options_to_dict(opts, variant)
    slots: list[OptionSlot] = []
    for info in option_info(type(opts)):
        if info.name not in present or info.name in MATCH_LEVEL_OPTIONS:
            continue
        dom = info.domain
        if isinstance(dom, Choice):
            slots.extend(OptionSlot(info.name, v) for v in dom.values)
        elif isinstance(dom, (PositiveNumber, NonNegativeInteger)):
            slots.append(OptionSlot(info.name, None, numeric=True, scale=_number_scale(info.name)))
        elif isinstance(dom, OptionalPositiveNumber):
            slots.append(OptionSlot(info.name, None))
            slots.append(OptionSlot(info.name, None, numeric=True, scale=_number_scale(info.name)))
        else:  # a new domain kind must be given an encoding here, not silently dropped
            raise TypeError(f"option {info.name!r}: no observation encoding for domain {dom!r}")
    return tuple(slots)


def option_values(slots: tuple[OptionSlot, ...], opts) -> np.ndarray:
    """``float32 [len(slots)]``: the options block's columns for the options value ``opts``."""
    vec = np.zeros(len(slots), np.float32)
    for i, sl in enumerate(slots):
        v = getattr(opts, sl.name)
        if sl.numeric:
            vec[i] = 0.0 if v is None else float(v) / sl.scale
        else:  # type check: ``8 == 8.0`` and ``True == 1`` must not switch on another value's column
            vec[i] = float(v == sl.value and type(v) is type(sl.value))
    return vec
