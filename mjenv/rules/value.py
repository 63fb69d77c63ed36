"""The ``Rules`` value: one variant's rules, resolved once and handed down to every layer.

:func:`load_rules` resolves a rule configuration — variant, ruleset, preset and explicit options, in the order of
docs/rules/common.md §1.11 (:func:`mjenv.rules.options.load_rules`) — into a :class:`Rules`: a frozen, hashable
value holding the variant, its family, the resolved options value, the number of players and the tile kinds in
play.  The public doors (``mjenv.env(...)``, ``Engine(...)``, the vector/SB3/RLlib env constructors, the CLI and
the scripts) call :func:`load_rules` once; below them the engine, the envs and the encoders take the value
(``rules=``) and never resolve the strings again.  :func:`load_rules` given a :class:`Rules` returns it unchanged,
so a door can call it whatever it was handed.

Two :class:`Rules` are equal (and hash equal) when their variant and resolved options are equal, however they
were named: ``load_rules("kawuxing3")`` equals ``load_rules("kawuxing3", ruleset="kwx004")``.

Pure rules: no engine, observation or env concepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mjenv.rules import options as O

__all__ = ["Rules", "load_rules", "door_rules", "resolution_count"]

DEFAULT_VARIANT = "kawuxing3"


@dataclass(frozen=True)
class Rules:
    """One variant's resolved rules (build it with :func:`load_rules`).

    ``variant`` the variant name; ``family`` its rule family (``VariantSpec.family``); ``options`` the resolved
    options value (a frozen dataclass of the family's options class); ``n_players``; ``kinds`` the tile kinds in
    play, ascending ids (0..33).  The fields after ``variant`` and ``options`` are derived from them and checked
    at construction.
    """

    variant: str
    options: Any
    family: str = field(default="", compare=False)
    n_players: int = field(default=0, compare=False)
    kinds: tuple[int, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        spec = O.get_variant(self.variant)
        if not isinstance(self.options, spec.options_cls):
            raise TypeError(f"variant {self.variant!r} takes {spec.options_cls.__name__}, got "
                            f"{type(self.options).__name__}")
        kinds = tuple(int(k) for k in np.flatnonzero(spec.kinds(self.options)))
        derived = {"family": spec.family, "n_players": spec.n_players, "kinds": kinds}
        for name, value in derived.items():
            given = getattr(self, name)
            if given in ("", 0, ()):
                object.__setattr__(self, name, value)
            elif given != value:
                raise ValueError(f"Rules({self.variant!r}): {name} is {value!r}, not {given!r}")

    @property
    def spec(self) -> O.VariantSpec:
        """The variant's :class:`~mjenv.rules.options.VariantSpec` (options class, default ruleset, ...)."""
        return O.get_variant(self.variant)

    @property
    def kinds_mask(self) -> np.ndarray:
        """Boolean ``[34]`` mask of the tile kinds in play (a fresh array: :func:`mjenv.rules.options.tile_kinds`)."""
        mask = np.zeros(34, dtype=bool)
        mask[list(self.kinds)] = True
        return mask

    @property
    def tile_count(self) -> int:
        """Number of tiles in the wall set: four copies of every kind in play."""
        return 4 * len(self.kinds)

    def options_dict(self) -> dict[str, Any]:
        """The options as ``{name: value}`` (:func:`mjenv.rules.options.options_to_dict`: without the options the
        variant lacks)."""
        return O.options_to_dict(self.options, self.variant)

    def __repr__(self) -> str:
        return f"Rules({self.variant!r}, {self.options!r})"


def load_rules(
    variant: str | Rules = DEFAULT_VARIANT,
    ruleset: str | None = None,
    preset: str | None = None,
    options: Mapping[str, Any] | Any = None,
) -> Rules:
    """The :class:`Rules` of ``variant``: its ruleset (default: the variant's), then ``preset``, then ``options``
    (docs/rules/common.md §1.11), resolved by :func:`mjenv.rules.options.load_rules`.

    ``options`` is a mapping of option values (Python values or command-line text), or a complete options value of
    the variant's options class (taken as it is; ``ruleset`` and ``preset`` must then be None).  ``variant`` given
    as a :class:`Rules` is returned unchanged; any other argument with it is an error.  Unknown variants, options,
    rulesets and presets and bad values raise :class:`~mjenv.rules.options.OptionError` naming the option and its
    allowed values.
    """
    if isinstance(variant, Rules):
        extra = [k for k, v in (("ruleset", ruleset), ("preset", preset), ("options", options)) if v is not None]
        if extra:
            raise TypeError(f"load_rules: given a Rules value, {', '.join(extra)} must be left out (it is resolved "
                            f"already: {variant!r})")
        return variant
    if options is not None and not isinstance(options, Mapping):
        spec = O.get_variant(variant)
        if not isinstance(options, spec.options_cls):
            raise TypeError(f"variant {variant!r} takes options as a mapping or a {spec.options_cls.__name__}, got "
                            f"{type(options).__name__}")
        if ruleset is not None or preset is not None:
            raise TypeError("load_rules: options is a complete options value; ruleset and preset must be left out")
        return Rules(variant, options)
    return Rules(variant, O.load_rules(variant, ruleset=ruleset, preset=preset, options=options))


def door_rules(
    variant: str | Rules | None = None,
    ruleset: str | None = None,
    preset: str | None = None,
    options: Mapping[str, Any] | Any = None,
    rules: Rules | None = None,
) -> Rules:
    """What a public door (``Engine(...)``, the env constructors, ``ObservationEncoder``) makes of its arguments:
    ``rules`` (a :class:`Rules`) when given — then ``ruleset``, ``preset`` and ``options`` must be left out and
    ``variant``, if given, must name its variant — else :func:`load_rules` of the others (``variant`` None:
    ``kawuxing3``; ``variant`` may itself be a :class:`Rules`)."""
    if rules is None:
        return load_rules(DEFAULT_VARIANT if variant is None else variant, ruleset, preset, options)
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be a Rules value (mjenv.rules.load_rules), got {type(rules).__name__}")
    extra = [k for k, v in (("ruleset", ruleset), ("preset", preset), ("options", options)) if v is not None]
    if extra:
        raise TypeError(f"given rules=, {', '.join(extra)} must be left out (the rules are resolved already)")
    if variant is not None and variant != rules and variant != rules.variant:
        raise ValueError(f"variant {variant!r} differs from the rules' variant {rules.variant!r}")
    return rules


def resolution_count() -> int:
    """How many rule configurations were resolved in this process (calls of
    :func:`mjenv.rules.options.load_rules`, which reads the ruleset and preset files); a test reads it to check
    that each layer hands the :class:`Rules` value down instead of resolving the strings again."""
    return O.resolution_count()
