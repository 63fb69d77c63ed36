"""The variant registry: what the rest of mjenv needs to know about a variant before any rule is applied.

This module owns :class:`VariantSpec` (options class, number of players, default ruleset, tile kinds, the options
the variant lacks) and :data:`VARIANTS`, the implemented variants in order, declared here (:data:`SPECS`), and the
look-ups over them (:func:`get_variant`, :func:`n_players`, :func:`tile_kinds`, :func:`tile_count`).  Adding a
variant is an entry of :data:`SPECS`, its rules files and its rule page; a plugin may add one with
:func:`register_variants`.  The rule families' particulars (scorer, fans, rule page) are in
:mod:`mjenv.rules.families`; the engine's adapters in :mod:`mjenv.engine.family`.  Pure rules: it imports no
engine.  Read it through :mod:`mjenv.rules.options`, which re-exports every name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mjenv.rules.domains import OptionError, _did_you_mean
from mjenv.rules.option_classes import (
    DiedaohuOptions,
    GejiuOptions,
    KawuxingOptions,
    LiuweiOptions,
    RuleOptions,
    YangzhouOptions,
)
from mjenv.tiles import kinds_mask


@dataclass(frozen=True)
class VariantSpec:
    """What the rest of mjenv needs to know about a variant before any rule is applied.

    ``family`` matches ``meta.family`` of the ruleset/preset files the variant may use; ``absent_options``
    maps the fields of ``options_cls`` that this variant does not have to the reason (setting one is an
    error, and they stay at the class default); ``kinds`` maps an options value to the boolean ``[34]``
    tile-kind mask.
    """

    name: str
    family: str
    options_cls: type
    n_players: int
    default_ruleset: str
    kinds: Callable[[Any], np.ndarray]
    absent_options: Mapping[str, str] = field(default_factory=dict)
    description: str = ""


def kawuxing_kinds(suits: str) -> np.ndarray:
    """The Kawuxing tile kinds: the suits played and the dragons 5z 6z 7z, no winds (§3.2)."""
    return kinds_mask(suits, "567")


def all_kinds(_options: Any) -> np.ndarray:
    """All 34 kinds (136 tiles): Gejiu, Diedaohu, Yangzhou and Liuwei (§1.1)."""
    return kinds_mask("mps", "1234567")


SPECS: tuple[VariantSpec, ...] = (
    VariantSpec(
        name="kawuxing3",
        family="kawuxing",
        options_cls=KawuxingOptions,
        n_players=3,
        default_ruleset="kwx004",
        kinds=lambda o: kawuxing_kinds(o.suits),
        description="Kawuxing 卡五星, 3 players, two suits + 5z6z7z, 84 tiles (docs/rules/kawuxing.md §3)",
    ),
    VariantSpec(
        name="kawuxing4",
        family="kawuxing",
        options_cls=KawuxingOptions,
        n_players=4,
        default_ruleset="kwx004",
        kinds=lambda o: kawuxing_kinds("mps"),
        absent_options={"suits": "Kawuxing 4p always plays all three suits (docs/rules/kawuxing.md §4)"},
        description="Kawuxing 卡五星, 4 players, three suits + 5z6z7z, 120 tiles (docs/rules/kawuxing.md §4)",
    ),
    VariantSpec(
        name="gejiu",
        family="gejiu",
        options_cls=GejiuOptions,
        n_players=4,
        default_ruleset="gejiu002",
        kinds=all_kinds,
        description="Gejiu 个旧, 4 players, 136 tiles, 烂牌/七星, two face-up kong tiles (docs/rules/gejiu.md §6)",
    ),
    VariantSpec(
        name="diedaohu",
        family="diedaohu",
        options_cls=DiedaohuOptions,
        n_players=4,
        default_ruleset="diedaohu003",
        kinds=all_kinds,
        description="Diedaohu 跌倒胡, 4 players, 136 tiles, no chi, one class per hand (docs/rules/diedaohu.md §7)",
    ),
    VariantSpec(
        name="yangzhou",
        family="yangzhou",
        options_cls=YangzhouOptions,
        n_players=4,
        default_ruleset="yzstd003",
        kinds=all_kinds,
        description="Yangzhou-standard 标准扬州式, 4 players, 136 tiles, big + small fans, 15 to win (§8)",
    ),
    VariantSpec(
        name="yangzhou_new",
        family="yangzhou",
        options_cls=YangzhouOptions,
        n_players=4,
        default_ruleset="yznew003",
        kinds=all_kinds,
        description="Yangzhou-new 新扬州式, 4 players, 136 tiles, big + small fans, 20 to win (docs/rules/yangzhou.md §9)",
    ),
    VariantSpec(
        name="liuwei",
        family="liuwei",
        options_cls=LiuweiOptions,
        n_players=4,
        default_ruleset="liuwei003",
        kinds=all_kinds,
        description="Liuwei 六圩式, 4 players, 136 tiles, one winner, 陪冲 payments, bankroll 50 (docs/rules/liuwei.md §10)",
    ),
)
"""The implemented variants, in order (their families' order: kawuxing, gejiu, diedaohu, yangzhou, liuwei)."""


class _Registry(Mapping):
    """:data:`VARIANTS`: variant name -> :class:`VariantSpec`, in declaration order.  Read-only; filled from
    :data:`SPECS` and by :func:`register_variants`."""

    def __init__(self):
        self._specs: dict[str, VariantSpec] = {}

    def __getitem__(self, name: str) -> VariantSpec:
        return self._specs[name]

    def __iter__(self):
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def __repr__(self) -> str:
        return f"VARIANTS({list(self._specs)})"


VARIANTS: Mapping[str, VariantSpec] = _Registry()
"""Implemented variants by name (:data:`SPECS`, and any a plugin registered)."""


def register_variants(family: str, specs: Iterable[VariantSpec]) -> None:
    """Add the variants of rule family ``family``.  A spec of another family, or a name registered already,
    raises ``ValueError``."""
    registry = VARIANTS._specs  # type: ignore[attr-defined]
    for spec in specs:
        if spec.family != family:
            raise ValueError(f"variant {spec.name!r} says family {spec.family!r} but is declared by {family!r}")
        if spec.name in registry and registry[spec.name] is not spec:
            raise ValueError(f"variant {spec.name!r} is registered twice")
        registry[spec.name] = spec


for _spec in SPECS:
    register_variants(_spec.family, [_spec])


def variants_of(family: str) -> tuple[VariantSpec, ...]:
    """The variants of rule family ``family``, in registry order."""
    return tuple(spec for spec in VARIANTS.values() if spec.family == family)


def get_variant(variant: str) -> VariantSpec:
    """The :class:`VariantSpec` of ``variant``; an unknown name raises :class:`OptionError` listing the known ones."""
    spec = VARIANTS.get(variant) if isinstance(variant, str) else None
    if spec is not None:
        return spec
    known = ", ".join(VARIANTS)
    hint = _did_you_mean(variant, list(VARIANTS))
    raise OptionError(f"unknown variant {variant!r}{hint}; known variants: {known}")


def n_players(variant: str) -> int:
    """Number of players of ``variant``."""
    return get_variant(variant).n_players


def _check_options_type(spec: VariantSpec, options: Any) -> Any:
    if options is None:
        return spec.options_cls()
    if not isinstance(options, spec.options_cls):
        raise TypeError(
            f"variant {spec.name!r} takes {spec.options_cls.__name__}, got {type(options).__name__}"
        )
    return options


def tile_kinds(variant: str, options: RuleOptions | None = None) -> np.ndarray:
    """Boolean ``[34]`` mask of the tile kinds in play (``options`` defaults to the class defaults)."""
    spec = get_variant(variant)
    return spec.kinds(_check_options_type(spec, options))


def tile_count(variant: str, options: RuleOptions | None = None) -> int:
    """Number of tiles in the wall set: four copies of every kind in play."""
    return 4 * int(tile_kinds(variant, options).sum())
