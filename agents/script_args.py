"""Command-line parsing for the single-file scripts (``train.py``, ``evaluate.py``): a typed ``Args``
dataclass in, argparse and TOML config files out.

Each field of the dataclass becomes ``--field`` (dashes also accepted); its help text is the string
literal written under the field (CleanRL's convention, read with ``ast``).  ``bool`` fields take
``--flag`` / ``--no-flag``; ``list[...]`` fields take several values; a field with ``metadata={"const": C}``
takes an optional value (the bare ``--field`` means ``C``).  Values come, later winning, from
the dataclass defaults, then ``--config NAME`` (``NAME`` or ``NAME.toml`` in the script's config folder,
or a path), then the command line.  An unknown key in a config file is an error that lists the fields.

Bad input is an :class:`ArgsError` naming the field; :func:`usage_errors` turns it into one
``PROG: error: ...`` line on stderr and exit status 2, the contract of every mjenv command line.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import math
import sys
import textwrap
import types
import typing
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["ArgsError", "check_numbers", "field_docs", "parse_args", "load_config", "usage_errors"]


class ArgsError(ValueError):
    """A bad command-line or config value; the message names the field (``--walls: ...``)."""


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are :class:`ArgsError` (one line, exit 2 under :func:`usage_errors`)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ArgsError(message)


@contextmanager
def usage_errors(prog: str) -> Iterator[None]:
    """Turn an :class:`ArgsError` raised inside into ``PROG: error: MESSAGE`` on stderr and ``SystemExit(2)``."""
    try:
        yield
    except ArgsError as exc:
        print(f"{prog}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        raise SystemExit(2) from None


def check_numbers(args: Any, bounds: Mapping[str, tuple[float | None, float | None]]) -> None:
    """Raise :class:`ArgsError` unless every named field (or each element of a list field) is a finite number
    within its ``(low, high)`` bounds (inclusive; ``None`` = unbounded)."""
    for name, (low, high) in bounds.items():
        value = getattr(args, name)
        for x in value if isinstance(value, (list, tuple)) else [value]:
            if x is None:
                continue
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise ArgsError(f"--{name}: expected a finite number, got {x!r}")
            if low is not None and x < low:
                raise ArgsError(f"--{name} must be >= {low}, got {x}")
            if high is not None and x > high:
                raise ArgsError(f"--{name} must be <= {high}, got {x}")


def field_docs(cls: type) -> dict[str, str]:
    """``{field: docstring}`` from the string literals that follow each annotated field of ``cls``."""
    try:
        src = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = ast.parse(src).body[0].body  # type: ignore[attr-defined]
    docs = {}
    for node, nxt in zip(body, body[1:] + [None]):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if isinstance(nxt, ast.Expr) and isinstance(getattr(nxt, "value", None), ast.Constant) and isinstance(nxt.value.value, str):
                docs[node.target.id] = " ".join(nxt.value.value.split())
    return docs


def _base_type(tp: Any) -> tuple[Any, bool, bool]:
    """(element type, is_list, optional) of a field annotation."""
    optional = False
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        optional = len(args) < len(typing.get_args(tp))
        tp = args[0]
        origin = typing.get_origin(tp)
    if origin in (list, tuple, Sequence):
        return typing.get_args(tp)[0], True, optional
    return tp, False, optional


def _convert(value: Any, tp: Any, name: str) -> Any:
    elem, is_list, optional = _base_type(tp)
    if value is None:
        if optional:
            return None
        raise ArgsError(f"{name}: a value is required")
    if is_list:
        if isinstance(value, str):
            value = [value]
        return [_convert(v, elem, name) for v in value]
    if optional and isinstance(value, str) and value.lower() in ("none", "null", ""):
        return None
    if elem is bool:
        if isinstance(value, bool):
            return value
        text = str(value).lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise ArgsError(f"{name}: expected true/false, got {value!r}")
    if elem in (int, float) and (isinstance(value, bool) or (elem is int and isinstance(value, float))):
        raise ArgsError(f"{name}: expected {elem.__name__}, got {value!r}")  # no silent 1.5 -> 1, true -> 1
    try:
        return elem(value)
    except (TypeError, ValueError):
        raise ArgsError(f"{name}: expected {getattr(elem, '__name__', elem)}, got {value!r}") from None


def load_config(cls: type, spec: str, config_dir: Path | None,
                sections: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """Values of a TOML config file for ``cls``: a flat table, the ``[args]`` table, or, with ``sections`` (section
    name -> the fields it holds; by default ``cls.config_sections`` when it has them), one table per section (keys
    outside any table are also read).  A key in another
    section than its own, an unknown section or a key given twice is an error naming it."""
    path = Path(spec)
    if not path.exists() and config_dir is not None:
        for cand in (config_dir / spec, config_dir / f"{spec}.toml"):
            if cand.exists():
                path = cand
                break
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in config_dir.glob("*.toml"))) if config_dir and config_dir.is_dir() else "none"
        raise ArgsError(f"--config: {spec!r} not found (configs in {config_dir}: {known})")
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ArgsError(f"--config: cannot read {path}: {exc}") from None
    data = data.get("args", data)
    names = {f.name for f in dataclasses.fields(cls)}
    sections = sections if sections is not None else getattr(cls, "config_sections", None)
    if sections is not None:
        data = _flatten_sections(data, sections, names, path)
    unknown = sorted(set(data) - names)
    if unknown:
        raise ArgsError(f"{path}: unknown key(s) {', '.join(unknown)}; valid keys: {', '.join(sorted(names))}")
    hints = typing.get_type_hints(cls)
    return {k: _convert(v, hints[k], f"{path}: {k}") for k, v in data.items()}


def _flatten_sections(data: dict, sections: Mapping[str, Sequence[str]], names: set[str], path: Path) -> dict:
    """The keys of a sectioned config file in one flat table (see :func:`load_config`)."""
    home = {k: sec for sec, keys in sections.items() for k in keys}
    flat = {k: v for k, v in data.items() if not isinstance(v, dict)}
    for sec, table in data.items():
        if not isinstance(table, dict):
            continue
        if sec not in sections:
            raise ArgsError(f"{path}: unknown section [{sec}]; sections: {', '.join(f'[{s}]' for s in sections)}")
        for k, v in table.items():
            if k in names and home.get(k) != sec:
                raise ArgsError(f"{path}: [{sec}] {k}: this key belongs in [{home.get(k)}]")
            if k in flat:
                raise ArgsError(f"{path}: {k} is given twice")
            flat[k] = v
    return flat


def parse_args(cls: type, argv: Sequence[str] | None = None, *, config_dir: Path | None = None,
               default_config: str | None = None, description: str | None = None,
               sections: Mapping[str, Sequence[str]] | None = None):
    """``(args, config)``: ``cls`` built from defaults, the TOML config (if any) and the command line.

    ``sections`` (section name -> its fields) lets the config files group their keys in tables (:func:`load_config`).
    Raises :class:`ArgsError` for an unknown flag, a value of the wrong type or a bad config file."""
    docs = field_docs(cls)
    hints = typing.get_type_hints(cls)
    parser = _Parser(description=description or (cls.__doc__ or "").strip())
    if config_dir is not None:
        parser.add_argument("--config", default=default_config,
                            help=f"TOML file of defaults (a name in {config_dir} or a path); the command line overrides it")
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        elem, is_list, _ = _base_type(tp)
        flags = [f"--{f.name}"] + ([f"--{f.name.replace('_', '-')}"] if "_" in f.name else [])
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)  # type: ignore[misc]
        help_text = docs.get(f.name, "") + ("" if default is None or default == [] else f" (default: {default})")
        if elem is bool and not is_list:
            parser.add_argument(*flags, dest=f.name, action=argparse.BooleanOptionalAction, default=None,
                                help=help_text)
        elif is_list:
            parser.add_argument(*flags, dest=f.name, nargs="*", default=None, help=help_text)
        elif "const" in f.metadata:  # an optional value: the bare flag means metadata["const"]
            parser.add_argument(*flags, dest=f.name, nargs="?", const=f.metadata["const"], default=None,
                                help=help_text)
        else:
            parser.add_argument(*flags, dest=f.name, default=None, help=help_text)
    ns = parser.parse_args(argv)
    values: dict[str, Any] = {}
    config = getattr(ns, "config", None)
    if config:
        values.update(load_config(cls, config, config_dir, sections))
    for f in dataclasses.fields(cls):
        v = getattr(ns, f.name)
        if v is not None:
            values[f.name] = _convert(v, hints[f.name], f"--{f.name}")
    return cls(**values), config
