"""Rule options, rulesets, presets and the variant registry (docs/rules/: common.md §1.11 and the options
sections of each family page, §3.13, §3.14, §4, §5, §6.9, §7.9, §8.11, §9, §10.6): the one door to them.

This module owns:

* the generic machinery over the options dataclasses: coercion of command-line strings, the error messages,
  ``option_info``, ``options_to_dict`` and ``describe_options``;
* the loading of rulesets (complete assignments) and presets (partial overrides) from
  ``mjenv/rules/data/*.toml`` in the order of §1.11: ruleset → preset → explicit options (:func:`load_rules`,
  counted by :func:`resolution_count`).

and re-exports, so that every option name is read from here:

* the option vocabulary of :mod:`mjenv.rules.domains` (:class:`OptionError`, the domains of allowed values,
  the validation every options dataclass runs in ``__post_init__``);
* the option dataclasses of :mod:`mjenv.rules.option_classes` — one frozen dataclass per rule family
  (:class:`KawuxingOptions`, :class:`GejiuOptions`, :class:`DiedaohuOptions`, :class:`YangzhouOptions` for
  Yangzhou-standard and -new, :class:`LiuweiOptions`), one field per option of the rule book, named exactly as
  the option, holding the rule book's value spelling, with its allowed values and a one-line meaning;
* :class:`VariantSpec` and the variant registry :data:`VARIANTS` of :mod:`mjenv.rules.variants`.

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
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mjenv.rules.domains import (  # noqa: F401  (re-exported: this module is the door to the options)
    MAX_AMOUNT,
    Choice,
    Domain,
    NonNegativeInteger,
    OptionalPositiveNumber,
    OptionError,
    OptionInfo,
    PositiveNumber,
    _bad_value,
    _did_you_mean,
    _format_value,
)
from mjenv.rules.option_classes import (  # noqa: F401
    DiedaohuOptions,
    GejiuOptions,
    KawuxingOptions,
    LiuweiOptions,
    RuleOptions,
    YangzhouOptions,
)
from mjenv.rules.variants import (  # noqa: F401
    VARIANTS,
    VariantSpec,
    all_kinds,
    get_variant,
    kawuxing_kinds,
    n_players,
    register_variants,
    tile_count,
    tile_kinds,
)

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
