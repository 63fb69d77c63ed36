"""Rule options, rulesets, presets and the variant registry (docs/rules/: common.md §1.11 and the options
sections of each family page, §3.13, §3.14, §4, §5, §6.9, §7.9, §8.11, §9, §10.6).

This module owns:

* the option dataclasses — one frozen dataclass per rule family (:class:`KawuxingOptions`,
  :class:`GejiuOptions`, :class:`DiedaohuOptions`, :class:`YangzhouOptions` for Yangzhou-standard and -new,
  :class:`LiuweiOptions`), one
  field per option of the rule book, named exactly as the option, holding the rule book's value spelling;
  every field carries its allowed values and a one-line meaning in ``field(metadata=...)``;
* the generic machinery over those dataclasses: validation (``__post_init__``), coercion of command-line
  strings, the error messages, ``options_to_dict`` and ``describe_options``;
* the loading of rulesets (complete assignments) and presets (partial overrides) from
  ``mjenv/rules/data/*.toml`` in the order of §1.11: ruleset → preset → explicit options;
* :class:`VariantSpec` (options class, number of players, default ruleset, tile kinds) and the variant registry
  :data:`VARIANTS`, which the rule families fill (each family class declares its variants).

It is pure rules: no engine, observation or env concepts.

A ruleset/preset file looks like::

    [meta]
    kind = "ruleset"            # or "preset"
    family = "kawuxing"
    name = "kwx004"             # must equal the file name without .toml
    source = "[004] ..."        # seed tag and a short description

    [options]
    cap = 8                     # TOML has no null: write cap = "none"
    ...

The files ship inside the package, in ``mjenv/rules/data/`` (:data:`PACKAGED_RULES_DIR`), so an installed wheel
finds them from any working directory.  ``$MJENV_RULES_DIR``, when set, names a directory used instead of them
(copy the shipped files there and add your own).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import numbers
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mjenv.tiles import kinds_mask

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pyproject pulls in tomli there
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = [
    "MAX_AMOUNT",
    "OptionError",
    "Choice",
    "PositiveNumber",
    "OptionalPositiveNumber",
    "NonNegativeInteger",
    "OptionInfo",
    "KawuxingOptions",
    "GejiuOptions",
    "DiedaohuOptions",
    "YangzhouOptions",
    "LiuweiOptions",
    "RuleOptions",
    "VariantSpec",
    "VARIANTS",
    "register_variants",
    "RULES_DIR_ENV",
    "PACKAGED_RULES_DIR",
    "get_variant",
    "n_players",
    "tile_kinds",
    "tile_count",
    "option_info",
    "option_names",
    "parse_option_value",
    "parse_option_assignments",
    "load_rules",
    "resolution_count",
    "load_ruleset",
    "load_preset",
    "list_rulesets",
    "list_presets",
    "rules_dir",
    "options_to_dict",
    "describe_options",
]


class OptionError(ValueError):
    """A bad option name or value, or a bad ruleset / preset / variant; the message names it and the alternatives."""

    def __init__(self, message: str, *, option: str | None = None, value: Any = None, allowed: tuple = ()):
        super().__init__(message)
        self.option = option
        self.value = value
        self.allowed = allowed


# --------------------------------------------------------------------------------------------------
# Value domains: what an option may hold, how it is spelled on a command line / in TOML.
# --------------------------------------------------------------------------------------------------


def _format_value(v: Any) -> str:
    """The rule book's spelling of a value: ``None`` is ``none``, numbers as written."""
    if v is None:
        return "none"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


@dataclass(frozen=True)
class Choice:
    """A closed list of values, each a ``str``, an ``int`` or ``None`` (spelled ``none``)."""

    values: tuple

    @staticmethod
    def _same_kind(a: Any, value: Any) -> bool:
        # bool is an int subclass and 8.0 == 8, but neither spells an allowed value of the rule book
        if a is None:
            return value is None
        if isinstance(a, str):
            return isinstance(value, str)
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)

    def accepts(self, value: Any) -> bool:
        """True when ``value`` is one of the values with a matching type (``True`` is not 1, ``8.0`` is not 8)."""
        return any(self._same_kind(a, value) and value == a for a in self.values)

    def type_problem(self, value: Any) -> str:
        """``" (a str; expected int or None)"`` when no value has the type of ``value``, else ``""``."""
        if any(self._same_kind(a, value) for a in self.values):
            return ""
        kinds = {"None" if a is None else type(a).__name__ for a in self.values}
        expected = " or ".join(sorted(kinds, key=lambda k: (k == "None", k)))
        return f" (a {type(value).__name__}; expected {expected})"

    def normalize(self, value: Any) -> Any:
        """Canonical Python value (numpy integers become ``int``)."""
        return value if value is None or isinstance(value, str) else int(value)

    def parse(self, text: str) -> Any:
        """The value whose spelling is ``text``; raises ``ValueError`` when none matches."""
        text = text.strip()
        for a in self.values:
            if _format_value(a) == text:
                return a
        raise ValueError(text)

    @property
    def text_only(self) -> bool:
        """True when every value is a string (then strings are values, never parsed)."""
        return all(isinstance(a, str) for a in self.values)

    def describe(self) -> str:
        """``8, 16, none``."""
        return ", ".join(_format_value(a) for a in self.values)


MAX_AMOUNT = 1_000_000
"""The largest ``base`` stake or ``bankroll``: every amount is a hand value times them, so ``base = 1e308`` made money
inf and NaN; under this bound a hand's money (a value times at most 10**6, times the balances' 10**6 b) stays many
orders of magnitude inside float64's range."""


@dataclass(frozen=True)
class PositiveNumber:
    """A number > 0 and at most :data:`MAX_AMOUNT` (int or float, not bool), stored as ``float``."""

    def accepts(self, value: Any) -> bool:
        """True for a real number with ``0 < value <= MAX_AMOUNT``."""
        return (
            isinstance(value, numbers.Real)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and 0 < value <= MAX_AMOUNT
        )

    def type_problem(self, value: Any) -> str:
        """``" (a str; expected int or float)"`` when ``value`` is not a real number, else ``""``."""
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return ""
        return f" (a {type(value).__name__}; expected int or float)"

    def normalize(self, value: Any) -> float:
        """``float(value)``, so that ``base=1`` and ``base=1.0`` are the same options."""
        return float(value)

    def parse(self, text: str) -> float:
        """``"2.5" -> 2.5``; raises ``ValueError`` on anything that is not a number in ``(0, MAX_AMOUNT]``."""
        v = float(text.strip())
        if not self.accepts(v):
            raise ValueError(text)
        return v

    @property
    def text_only(self) -> bool:
        """Numbers are never strings."""
        return False

    def describe(self) -> str:
        """Human wording of the domain."""
        return f"a number > 0, up to {MAX_AMOUNT}"


@dataclass(frozen=True)
class OptionalPositiveNumber:
    """``None`` (spelled ``none``) or a number in ``(0, MAX_AMOUNT]`` stored as ``float`` (e.g. the 园子 ``bankroll``)."""

    def accepts(self, value: Any) -> bool:
        """True for ``None`` or a real number in ``(0, MAX_AMOUNT]`` (not bool)."""
        return value is None or PositiveNumber().accepts(value)

    def type_problem(self, value: Any) -> str:
        """``" (a str; expected int, float or None)"`` when ``value`` is neither None nor a number, else ``""``."""
        if value is None or (isinstance(value, numbers.Real) and not isinstance(value, bool)):
            return ""
        return f" (a {type(value).__name__}; expected int, float or None)"

    def normalize(self, value: Any) -> float | None:
        """``None`` stays ``None``; numbers become ``float``."""
        return None if value is None else float(value)

    def parse(self, text: str) -> float | None:
        """``"none" -> None``, ``"50" -> 50.0``; raises ``ValueError`` on anything else."""
        return None if text.strip() == "none" else PositiveNumber().parse(text)

    @property
    def text_only(self) -> bool:
        """``none`` is a spelling, not a value: strings are always parsed."""
        return False

    def describe(self) -> str:
        """Human wording of the domain."""
        return f"none or a number > 0, up to {MAX_AMOUNT}"


@dataclass(frozen=True)
class NonNegativeInteger:
    """An integer >= 0 (not bool), stored as ``int`` (e.g. the Yangzhou threshold ``min_fan``)."""

    def accepts(self, value: Any) -> bool:
        """True for an integral value >= 0; ``15.0`` and ``True`` are not integers of the rule book."""
        return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0

    def type_problem(self, value: Any) -> str:
        """``" (a float; expected int)"`` when ``value`` is not an integer, else ``""``."""
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return ""
        return f" (a {type(value).__name__}; expected int)"

    def normalize(self, value: Any) -> int:
        """``int(value)`` (numpy integers become ``int``)."""
        return int(value)

    def parse(self, text: str) -> int:
        """``"15" -> 15``; raises ``ValueError`` on anything that is not a decimal integer >= 0."""
        text = text.strip()
        if not re.fullmatch(r"\+?\d+", text):
            raise ValueError(text)
        return int(text)

    @property
    def text_only(self) -> bool:
        """Integers are never strings."""
        return False

    def describe(self) -> str:
        """Human wording of the domain."""
        return "an integer >= 0"


Domain = Choice | PositiveNumber | OptionalPositiveNumber | NonNegativeInteger


def _opt(default: Any, domain: Domain, meaning: str) -> Any:
    """A dataclass field that records its domain and one-line meaning (read back by :func:`option_info`)."""
    return field(default=default, metadata={"domain": domain, "meaning": meaning})


def _choice(default: Any, values: tuple, meaning: str) -> Any:
    return _opt(default, Choice(values), meaning)


_ON_OFF = ("on", "off")
_OFF_ON = ("off", "on")


@dataclass(frozen=True)
class OptionInfo:
    """One option of an options class, as listed by the CLI and the docs."""

    name: str
    domain: Domain
    default: Any
    meaning: str

    @property
    def allowed_text(self) -> str:
        """The allowed values as the rule book writes them."""
        return self.domain.describe()


class _ValidatedOptions:
    """Mixin giving every options dataclass the same ``__post_init__`` validation and normalization."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            domain: Domain = f.metadata["domain"]
            value = getattr(self, f.name)
            if not domain.accepts(value):
                raise _bad_value(f.name, value, domain)
            norm = domain.normalize(value)
            if norm is not value:
                # frozen: the normalized value goes in through object.__setattr__
                object.__setattr__(self, f.name, norm)


def _bad_value(name: str, value: Any, domain: Domain, *, from_text: bool = False) -> OptionError:
    """The one error message for a value outside an option's domain (with the type when that is what is wrong)."""
    # parsed text has no type problem of its own: only its spelling can be wrong
    wrong_type = "" if from_text else domain.type_problem(value)
    allowed = domain.values if isinstance(domain, Choice) else ()
    return OptionError(
        f"option {name!r}: {value!r} is not allowed{wrong_type}; allowed values: {domain.describe()}",
        option=name,
        value=value,
        allowed=allowed,
    )


# --------------------------------------------------------------------------------------------------
# Kawuxing (3p and 4p): docs/rules/kawuxing.md §3.13. Defaults = ruleset kwx004.
# --------------------------------------------------------------------------------------------------

_SIGUI_SCOPES = ("win_tile", "qingyise_any", "any")


@dataclass(frozen=True)
class KawuxingOptions(_ValidatedOptions):
    """Options of Kawuxing 3p and 4p (docs/rules/kawuxing.md §3.13); defaults are ruleset ``kwx004``.

    Every field is named as the option and holds the rule book's spelling; ``cap`` is ``8``, ``16`` or
    ``None`` (``none``), ``base`` a float > 0, ``huang_liang_penalty`` the int ``0`` or ``1``.
    """

    suits: str = _choice("ps", ("ps", "mp", "ms"), "the two suits in play (p dots, s bamboo, m characters); 3p only")
    base: float = _opt(1.0, PositiveNumber(), "base stake b: every amount is a multiple of it")
    fan_combine: str = _choice(
        "multiply", ("multiply", "add"), "multiply: V is the product of the fans; add: their sum, then ×2 for 亮倒"
    )
    cap: int | None = _choice(8, (8, 16, None), "largest share one payer pays for one win, in b; none: no cap")
    cap_shuanglong_16: str = _choice("on", _ON_OFF, "on: a 双龙七对 reading is capped at 16 instead of 8")
    kaikou: str = _choice(
        "hard",
        ("none", "soft", "hard"),
        "discard and rob wins need V >= 2: hard always, soft until the winner has made a kong, none never",
    )
    louhu_exception: str = _choice(
        "higher", ("off", "higher"), "higher: a player locked by a missed win may still win a strictly higher hand"
    )
    multi_win: str = _choice("on", _ON_OFF, "on: everybody who claims a discard or rob wins; off: the nearest only")
    baohu: str = _choice("on", _ON_OFF, "包胡: whoever feeds a revealed (亮倒) player's win pays for everybody")
    baohu_liang_exempt: str = _choice("on", _ON_OFF, "on: no 包胡 when the feeder has revealed too")
    baohu_amount: str = _choice(
        "all_shares", ("all_shares", "double"), "包胡 pays every other player's share (n−1) or exactly two shares"
    )
    baohu_cap: str = _choice(
        "per_share", ("per_share", "total"), "包胡 under a cap: each share capped, or the total capped once"
    )
    liang_vs_liang: str = _choice("off", _OFF_ON, "亮对亮: a revealed payer pays ×2 to a revealed winner")
    liang_loser_double: str = _choice(
        "off", _OFF_ON, "a revealed payer pays ×2 to a winner who has not revealed (not in the source texts)"
    )
    liang_hide_triplets: str = _choice(
        "on", _ON_OFF, "on: at 亮倒, concealed triplets that do not change the waits may stay face down"
    )
    liang_kong: str = _choice(
        "keep_ready",
        ("keep_ready", "same_waits", "none"),
        "kongs after 亮倒: if the hand stays ready, only if the waits stay the same, or none",
    )
    tingtou: str = _choice(
        "off", ("off", "on", "each"), "ready-hand settlement at a drawn hand: off, the first revealer only, each revealer"
    )
    huang_liang_penalty: int = _choice(
        1, (0, 1), "1: at a drawn hand the first revealed player pays each other player 1 b (tingtou off)"
    )
    gangshanggang: str = _choice(
        "chain",
        ("off", "self_consecutive", "chain", "per_hand"),
        "which kongs double the kong money of the one before (杠上杠): linked chain, own consecutive kongs, every "
        "kong of the hand, none",
    )
    gang_stack: str = _choice("off", _OFF_ON, "杠上累番: 杠上开花 / 杠上炮 worth 2^L for the L-th kong of a chain, not ×2")
    angang_timing: str = _choice(
        "deferrable", ("deferrable", "immediate"), "a concealed kong on any later own turn, or only when the 4th arrives"
    )
    ming_sigui_scope: str = _choice(
        "qingyise_any", _SIGUI_SCOPES, "明四归一 needs the winning tile, or any tile in a 清一色 hand, or any tile"
    )
    an_sigui_scope: str = _choice(
        "qingyise_any", _SIGUI_SCOPES, "暗四归一 needs the winning tile, or any tile in a 清一色 hand, or any tile"
    )
    an_sigui_split: str = _choice(
        "any", ("any", "triplet_seq"), "the four 暗四归一 tiles: any split, or one triplet plus one sequence tile"
    )
    sigui_count: str = _choice(
        "once", ("once", "each"), "四归一 fans count once, or once per qualifying kind"
    )
    longqidui: str = _choice(
        "any_four", ("any_four", "win_tile"), "龙七对 with any four-of-a-kind, or only when the winning tile is the fourth"
    )
    shuanglong: str = _choice("on", _ON_OFF, "on: 双龙七对 (two fours) is ×16; off: it scores as 龙七对")
    shouzhuayi: str = _choice(
        "melded_x4",
        ("melded_x4", "pph_single_x2"),
        "手抓一: four melds and a single wait ×4, or any all-triplets single wait ×2 on top of 碰碰胡",
    )
    haidi: str = _choice(
        "zimo", ("off", "zimo", "zimo_and_pao"), "海底捞 ×2: never, self-draw of the last tile, or also its discard"
    )
    qianggang: str = _choice("on", _ON_OFF, "on: an added kong may be robbed (抢杠胡)")
    seat_rotation: str = _choice(
        "off", ("off", "winner_sits_out"), "match level, 3p with a fourth person: the winner sits out one hand"
    )
    escape_penalty: str = _choice(
        "off", _OFF_ON, "match level: a player who leaves pays each other 2 × cap (32 b without a cap)"
    )


# --------------------------------------------------------------------------------------------------
# The 4-player 136-tile families: the options sections §6.9, §7.9, §8.11, §9 and §10.6 of docs/rules/.
# --------------------------------------------------------------------------------------------------

_BASE_MEANING = "base stake b"
_MULTI_WIN_MEANING = "several winners on one discard/rob (off: only the nearest claimant wins)"


@dataclass(frozen=True)
class GejiuOptions(_ValidatedOptions):
    """Options of Gejiu 个旧 (docs/rules/gejiu.md §6.9); defaults are ruleset ``gejiu002``."""

    base: float = _opt(1.0, PositiveNumber(), _BASE_MEANING)
    gejiu_combine: str = _choice("multiply", ("multiply", "add", "max"), "how pattern values combine")
    gejiu_qianggang: str = _choice(
        "add_kong", ("add_kong", "replacement_tile"), "what 抢杠 robs: the added tile or the chosen kong tile"
    )
    gejiu_multiwin_dealer: str = _choice(
        "next_of_nearest_winner",
        ("next_of_nearest_winner", "nearest_winner", "standard"),
        "next dealer after several winners on one discard",
    )
    multi_win: str = _choice("on", _ON_OFF, _MULTI_WIN_MEANING)


_BANKROLL_MEANING = "园子: each player's session bankroll in b; none = 紧淌, unlimited"


@dataclass(frozen=True)
class DiedaohuOptions(_ValidatedOptions):
    """Options of Diedaohu 跌倒胡 (docs/rules/diedaohu.md §7.9); defaults are ruleset ``diedaohu003``.

    ``bankroll`` is ``None`` (``none``, 紧淌) or a float > 0.
    """

    base: float = _opt(1.0, PositiveNumber(), _BASE_MEANING)
    bankroll: float | None = _opt(None, OptionalPositiveNumber(), _BANKROLL_MEANING)
    draw_dealer: str = _choice(
        "rotate", ("rotate", "stay"), "dealer after a drawn hand: the next player deals (city), or the dealer stays (countryside)"
    )
    rounds: int = _choice(4, (4, 8), "rounds (圈) per session (一操)")
    louhu: str = _choice("on", _ON_OFF, "missed-win lock until the next own draw, 大吊车 exception")
    multi_win: str = _choice("on", _ON_OFF, _MULTI_WIN_MEANING)
    fengqing_baopai: str = _choice("off", _OFF_ON, "the Yangzhou 风清 liability (包牌) applied to Diedaohu")


@dataclass(frozen=True)
class YangzhouOptions(_ValidatedOptions):
    """Options of Yangzhou-standard and Yangzhou-new (docs/rules/yangzhou.md §8.11, §9); defaults are ruleset ``yzstd003``.

    ``yz_style`` picks the column of big-fan values (§8.5); ruleset ``yznew003`` (the default of variant
    ``yangzhou_new``) sets ``yz_style = "new"`` and ``min_fan = 20``.
    """

    base: float = _opt(1.0, PositiveNumber(), _BASE_MEANING)
    yz_style: str = _choice("standard", ("standard", "new"), "which column of big-fan values counts: 标准 (standard) or 新扬州式 (new)")
    min_fan: int = _opt(15, NonNegativeInteger(), "a win needs at least one big fan and a total T of at least min_fan")
    chi: str = _choice("on", _ON_OFF, "the discarder's next player may chi")
    baopai: str = _choice("on", _ON_OFF, "包牌 liability for 清一色 by three chis and for 风清")
    louhu: str = _choice("on", _ON_OFF, "missed-win lock until the next own draw, 大吊车 exception (as Diedaohu)")
    draw_dealer: str = _choice("rotate", ("rotate", "stay"), "dealer after a drawn hand: the next player deals, or the dealer stays")
    rounds: int = _choice(4, (4, 8), "rounds (圈) per session (一操); sets the round wind")
    multi_win: str = _choice("on", _ON_OFF, _MULTI_WIN_MEANING)


@dataclass(frozen=True)
class LiuweiOptions(_ValidatedOptions):
    """Options of Liuwei 六圩式 (docs/rules/liuwei.md §10.6); defaults are ruleset ``liuwei003``.

    ``bankroll`` is ``None`` (``none``) or a float > 0 (default 50: the 50-scale tables of §10.3–§10.4);
    ``rounds`` exists only as ``8`` ("六圩式一操都是8圈，沒有4圈"). Liuwei has no ``multi_win``: one winner
    per discard always (§10.1).
    """

    base: float = _opt(1.0, PositiveNumber(), _BASE_MEANING)
    bankroll: float | None = _opt(
        50.0, OptionalPositiveNumber(), "园子: each player's session bankroll in b; amounts scale N/50; none: unlimited"
    )
    rounds: int = _choice(8, (8,), "rounds (圈) per session, always 8")
    louhu: str = _choice("on", _ON_OFF, "missed-win lock until the next own draw, 大吊车 exception (as Diedaohu)")


RuleOptions = KawuxingOptions | GejiuOptions | DiedaohuOptions | YangzhouOptions | LiuweiOptions
"""Any family's options value."""


# --------------------------------------------------------------------------------------------------
# Variant registry.
# --------------------------------------------------------------------------------------------------


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


FAMILY_PLUGINS = "mjenv.engine.family"
"""The module whose rule-family classes declare the variants (:attr:`mjenv.engine.family.Family.variants`).  It is
imported on the first look-up, not here: it imports this module, and it holds plain Python (no compiled code)."""


class _Registry(Mapping):
    """:data:`VARIANTS`: variant name -> :class:`VariantSpec`, read from the rule families on first use.

    Each family class lists its variants (:attr:`~mjenv.engine.family.Family.variants`) and that module registers
    them with :func:`register_variants` when it is imported, so adding a variant touches its family, its options,
    its rules files and its rule page, never a list here.  Read-only; in the families' order.
    """

    def __init__(self):
        self._specs: dict[str, VariantSpec] = {}
        self._loading = False

    def _all(self) -> dict[str, VariantSpec]:
        if not self._specs and not self._loading:
            self._loading = True
            try:
                import importlib

                importlib.import_module(FAMILY_PLUGINS)
            finally:
                self._loading = False
        return self._specs

    def __getitem__(self, name: str) -> VariantSpec:
        return self._all()[name]

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __repr__(self) -> str:
        return f"VARIANTS({list(self._all())})"


VARIANTS: Mapping[str, VariantSpec] = _Registry()
"""Implemented variants by name, declared by the rule families (:func:`register_variants`)."""


def register_variants(family: str, specs: Iterable[VariantSpec]) -> None:
    """Add the variants of rule family ``family`` (called by the family plugins as they are defined).  A spec of
    another family, or a name registered already, raises ``ValueError``."""
    registry = VARIANTS._specs  # type: ignore[attr-defined]
    for spec in specs:
        if spec.family != family:
            raise ValueError(f"variant {spec.name!r} says family {spec.family!r} but is declared by {family!r}")
        if spec.name in registry and registry[spec.name] is not spec:
            raise ValueError(f"variant {spec.name!r} is registered twice")
        registry[spec.name] = spec


def kawuxing_kinds(suits: str) -> np.ndarray:
    """The Kawuxing tile kinds: the suits played and the dragons 5z 6z 7z, no winds (§3.2)."""
    return kinds_mask(suits, "567")


def all_kinds(_options: Any) -> np.ndarray:
    """All 34 kinds (136 tiles): Gejiu, Diedaohu, Yangzhou and Liuwei (§1.1)."""
    return kinds_mask("mps", "1234567")


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


# --------------------------------------------------------------------------------------------------
# Introspection, coercion, formatting — generic over any options dataclass.
# --------------------------------------------------------------------------------------------------


def option_info(options_cls: type) -> tuple[OptionInfo, ...]:
    """Every option of ``options_cls`` in declaration order, with its domain, default and meaning."""
    return tuple(
        OptionInfo(f.name, f.metadata["domain"], f.default, f.metadata["meaning"])
        for f in dataclasses.fields(options_cls)
    )


def option_names(options_cls: type) -> tuple[str, ...]:
    """Names of the options of ``options_cls`` in declaration order."""
    return tuple(f.name for f in dataclasses.fields(options_cls))


def _did_you_mean(name: Any, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(str(name), list(candidates), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_option(name: Any, valid: Iterable[str], where: str = "") -> OptionError:
    valid = list(valid)
    return OptionError(
        f"unknown option {name!r}{where}{_did_you_mean(name, valid)}; valid options: {', '.join(valid)}",
        option=str(name),
    )


def _domain_of(options_cls: type, name: str) -> Domain:
    for f in dataclasses.fields(options_cls):
        if f.name == name:
            return f.metadata["domain"]
    raise _unknown_option(name, option_names(options_cls))


def parse_option_value(options_cls: type, name: str, text: str) -> Any:
    """The Python value of option ``name`` written as ``text``: ``"none"`` → None, ``"16"`` → 16, ``"2.5"`` → 2.5.

    Raises :class:`OptionError` for an unknown option or a spelling that is not an allowed value.
    """
    domain = _domain_of(options_cls, name)
    if not isinstance(text, str):
        raise TypeError(f"parse_option_value takes the text of a value, got {type(text).__name__}")
    try:
        return domain.normalize(domain.parse(text))
    except ValueError:
        raise _bad_value(name, text.strip(), domain, from_text=True) from None


def _coerce(options_cls: type, name: str, value: Any) -> Any:
    """A value as given in Python, TOML or on a command line, turned into the field's type where it is a string."""
    domain = _domain_of(options_cls, name)
    if isinstance(value, str) and not domain.text_only:
        return parse_option_value(options_cls, name, value)
    return value


_ASSIGN_RE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\S(?:.*\S)?)\s*")


def parse_option_assignments(items: Iterable[str]) -> dict[str, str]:
    """``["cap=16", "kaikou=none"]`` → ``{"cap": "16", "kaikou": "none"}``; values stay text (load_rules coerces).

    A malformed item or a name given twice raises :class:`OptionError`.
    """
    if isinstance(items, str):
        # a bare string would otherwise be iterated character by character
        items = [items]
    out: dict[str, str] = {}
    for item in items:
        m = _ASSIGN_RE.fullmatch(item) if isinstance(item, str) else None
        if not m:
            raise OptionError(f"malformed option assignment {item!r}: expected name=value, e.g. 'cap=16'")
        name, value = m.group(1), m.group(2)
        if name in out:
            raise OptionError(f"option {name!r} is given twice ({out[name]!r} and {value!r})", option=name)
        out[name] = value
    return out


def options_to_dict(opts: RuleOptions, variant: str | None = None) -> dict[str, Any]:
    """JSON-friendly ``{name: value}`` of an options value (``cap`` ``None`` → ``"none"``).

    With ``variant`` the options that variant does not have (e.g. ``suits`` for ``kawuxing4``) are left out.
    """
    absent = get_variant(variant).absent_options if variant is not None else ()
    return {
        f.name: ("none" if getattr(opts, f.name) is None else getattr(opts, f.name))
        for f in dataclasses.fields(opts)
        if f.name not in absent
    }


def describe_options(options_cls: type, variant: str | None = None) -> str:
    """A plain-text table (option, allowed values, default, meaning) for CLI help and docs."""
    absent = get_variant(variant).absent_options if variant is not None else ()
    rows = [("option", "allowed values", "default", "meaning")]
    rows += [
        (i.name, i.allowed_text, _format_value(i.default), i.meaning)
        for i in option_info(options_cls)
        if i.name not in absent
    ]
    widths = [max(len(r[c]) for r in rows) for c in range(3)]
    lines = [
        f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}".rstrip() for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 7)
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# Ruleset / preset files.
# --------------------------------------------------------------------------------------------------

RULES_DIR_ENV = "MJENV_RULES_DIR"
PACKAGED_RULES_DIR = Path(__file__).resolve().parent / "data"
"""The ruleset and preset files shipped with the package (package data, listed in pyproject.toml)."""
_META_KEYS = ("kind", "family", "name", "source")
_KINDS = ("ruleset", "preset")
_NAME_RE = re.compile(r"[A-Za-z0-9_\-]+")


def rules_dir() -> Path:
    """Directory of the ruleset/preset files: ``$MJENV_RULES_DIR`` if set, else the package's own data directory."""
    env = os.environ.get(RULES_DIR_ENV)
    d = Path(env) if env else PACKAGED_RULES_DIR
    if not d.is_dir():
        raise OptionError(f"rules directory {str(d)!r} does not exist (set ${RULES_DIR_ENV} to override)")
    return d


@dataclass(frozen=True)
class _RuleFile:
    path: Path
    kind: str
    family: str
    name: str
    source: str
    options: dict[str, Any]


def _read_rule_file(path: Path) -> _RuleFile:
    """Parse one TOML file and check its shape (meta keys, kinds, name = file stem); option values are checked later."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise OptionError(f"{path}: not valid TOML: {e}") from None
    except UnicodeDecodeError as e:  # tomllib decodes the bytes itself and does not say which file
        raise OptionError(f"{path}: not UTF-8 text (byte {e.object[e.start:e.start + 1]!r} at offset {e.start})") from None
    extra = sorted(set(data) - {"meta", "options"})
    if extra:
        raise OptionError(f"{path}: unknown top-level table(s) {extra}; a rules file has [meta] and [options]")
    meta, opts = data.get("meta"), data.get("options")
    if not isinstance(meta, dict) or not isinstance(opts, dict):
        raise OptionError(f"{path}: a rules file needs a [meta] table and an [options] table")
    missing = [k for k in _META_KEYS if k not in meta]
    unknown = sorted(set(meta) - set(_META_KEYS))
    if missing or unknown:
        raise OptionError(
            f"{path}: [meta] must have exactly the keys {', '.join(_META_KEYS)}"
            + (f"; missing {missing}" if missing else "")
            + (f"; unknown {unknown}" if unknown else "")
        )
    bad = [k for k in _META_KEYS if not isinstance(meta[k], str) or not meta[k]]
    if bad:
        raise OptionError(f"{path}: [meta] {', '.join(bad)} must be non-empty strings")
    if meta["kind"] not in _KINDS:
        raise OptionError(f"{path}: [meta] kind {meta['kind']!r} is not allowed; allowed: {', '.join(_KINDS)}")
    if meta["name"] != path.stem:
        raise OptionError(f"{path}: [meta] name {meta['name']!r} must equal the file name {path.stem!r}")
    return _RuleFile(path, meta["kind"], meta["family"], meta["name"], meta["source"], dict(opts))


def _rule_files(spec: VariantSpec, kind: str) -> dict[str, _RuleFile]:
    files = (_read_rule_file(p) for p in sorted(rules_dir().glob("*.toml")))
    return {f.name: f for f in files if f.kind == kind and f.family == spec.family}


def list_rulesets(variant: str) -> list[str]:
    """Names of the rulesets available to ``variant`` (sorted)."""
    return sorted(_rule_files(get_variant(variant), "ruleset"))


def list_presets(variant: str) -> list[str]:
    """Names of the presets available to ``variant`` (sorted)."""
    return sorted(_rule_files(get_variant(variant), "preset"))


def _find_rule_file(spec: VariantSpec, kind: str, name: str) -> _RuleFile:
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise OptionError(f"{kind} name {name!r} is not a plain name (letters, digits, _ and -)")
    available = _rule_files(spec, kind)
    if name in available:
        return available[name]
    other = "preset" if kind == "ruleset" else "ruleset"
    hint = f" ({name!r} is a {other}, pass it as {other}=...)" if name in _rule_files(spec, other) else ""
    raise OptionError(
        f"unknown {kind} {name!r} for variant {spec.name!r}{hint}{_did_you_mean(name, available)}; "
        f"available {kind}s: {', '.join(sorted(available)) or '(none)'} (in {rules_dir()})"
    )


def _file_values(spec: VariantSpec, rf: _RuleFile) -> dict[str, Any]:
    """Option values of a file, names checked and strings coerced; errors name the file."""
    names = option_names(spec.options_cls)
    unknown = [k for k in rf.options if k not in names]
    if unknown:
        raise _unknown_option(unknown[0], names, where=f" in {rf.kind} {rf.name!r} ({rf.path})")
    if rf.kind == "ruleset":
        missing = [k for k in names if k not in rf.options]
        if missing:
            raise OptionError(
                f"ruleset {rf.name!r} ({rf.path}) must assign every option; missing: {', '.join(missing)}"
            )
    try:
        return {k: _coerce(spec.options_cls, k, v) for k, v in rf.options.items()}
    except OptionError as e:
        context = f"{rf.kind} {rf.name!r} ({rf.path})"
        raise OptionError(f"{context}: {e}", option=e.option, value=e.value, allowed=e.allowed) from None


def _replace(opts: Any, values: Mapping[str, Any], context: str) -> Any:
    if not values:
        return opts
    try:
        return dataclasses.replace(opts, **values)
    except OptionError as e:
        raise OptionError(f"{context}: {e}", option=e.option, value=e.value, allowed=e.allowed) from None


def load_ruleset(variant: str, name: str) -> RuleOptions:
    """The options of ruleset ``name`` alone (complete; options the variant lacks stay at the class default)."""
    spec = get_variant(variant)
    rf = _find_rule_file(spec, "ruleset", name)
    opts = _replace(spec.options_cls(), _file_values(spec, rf), f"ruleset {name!r} ({rf.path})")
    # rulesets are shared by 3p and 4p; an option the variant lacks goes back to the class default so
    # that equal rules compare equal whatever the file said about it
    defaults = {f.name: f.default for f in dataclasses.fields(opts) if f.name in spec.absent_options}
    return dataclasses.replace(opts, **defaults)


def load_preset(variant: str, name: str) -> dict[str, Any]:
    """The option values preset ``name`` sets (only those it lists), coerced to their Python types."""
    spec = get_variant(variant)
    rf = _find_rule_file(spec, "preset", name)
    values = _file_values(spec, rf)
    _reject_absent(spec, values, f"preset {name!r} ({rf.path})")
    # validate the values now so a bad preset is reported as such, not as a ruleset problem
    _replace(spec.options_cls(), values, f"preset {name!r} ({rf.path})")
    return values


def _reject_absent(spec: VariantSpec, values: Mapping[str, Any], where: str) -> None:
    for k in spec.absent_options:
        if k in values:
            raise OptionError(
                f"option {k!r} does not exist for variant {spec.name!r} ({where}): {spec.absent_options[k]}",
                option=k,
            )


_RESOLUTIONS = 0


def resolution_count() -> int:
    """How many times :func:`load_rules` ran in this process (the layers hand a resolved
    :class:`mjenv.rules.Rules` down instead of resolving again; tests count with this)."""
    return _RESOLUTIONS


def load_rules(
    variant: str,
    ruleset: str | None = None,
    preset: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> RuleOptions:
    """The options of ``variant``: ruleset (default: the variant's), then ``preset``, then ``options`` (§1.11).

    Explicit values may be Python values or command-line text (``"none"``, ``"16"``, ``"2.5"``).  Unknown
    names, bad values, unknown rulesets/presets and options the variant lacks raise :class:`OptionError`.
    Each call counts as one resolution (:func:`resolution_count`).
    """
    global _RESOLUTIONS
    _RESOLUTIONS += 1
    spec = get_variant(variant)
    explicit = dict(options or {})
    for meta in ("ruleset", "preset"):
        if meta in explicit:
            raise OptionError(f"{meta!r} is not an option; pass it as load_rules(..., {meta}=...)", option=meta)
    names = option_names(spec.options_cls)
    for k in explicit:
        if k not in names:
            raise _unknown_option(k, [n for n in names if n not in spec.absent_options], f" for variant {variant!r}")
    _reject_absent(spec, explicit, "given explicitly")
    explicit = {k: _coerce(spec.options_cls, k, v) for k, v in explicit.items()}

    opts = load_ruleset(variant, ruleset if ruleset is not None else spec.default_ruleset)
    if preset is not None:
        opts = _replace(opts, load_preset(variant, preset), f"preset {preset!r}")
    return _replace(opts, explicit, "explicit options")
