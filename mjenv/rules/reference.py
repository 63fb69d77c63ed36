"""The rule reference generated from the code: option tables, fan tables and the ``mjenv rules`` command.

This module owns

* the option listing of a variant after its ruleset and preset (:func:`option_rows`), as plain text
  (:func:`options_text`) or Markdown (:func:`options_markdown`) — every option with its allowed values, its
  default and its meaning, all read from :mod:`mjenv.rules.options` (the meanings live in the options
  dataclasses' field metadata);
* the generated blocks of the rule pages in ``docs/rules/`` (one page per rule family, :data:`PAGES`): the
  option table of a family with one default column per ruleset, what each preset sets, and the fan / pattern /
  hand-class values of the scorers.  A page marks each block with
  ``<!-- generated: NAME -->`` … ``<!-- end generated -->``; :func:`refresh_page` rewrites the blocks and
  :func:`stale_pages` lists the pages whose blocks differ from the code (a test fails on any);
* the ``mjenv rules`` subcommand (:func:`add_rules_subcommand`, :func:`rules_main`), wired into
  :mod:`mjenv.cli`.

Pure rules: nothing here knows about the envs or compiled code; what differs between families (their page, value
tables and kong money) is read from the rules classes of :mod:`mjenv.rules.families`.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from mjenv.rules.families import rule_family
from mjenv.rules.options import (
    VARIANTS,
    OptionError,
    _format_value,
    get_variant,
    list_presets,
    list_rulesets,
    load_preset,
    load_rules,
    load_ruleset,
    option_info,
)

DOCS_DIR = Path(__file__).resolve().parents[2] / "docs" / "rules"
"""``docs/rules`` of a source checkout (absent from an installed wheel: ``--write-docs`` needs a checkout)."""


# --------------------------------------------------------------------------------------------------
# Option rows
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OptionRow:
    """One option of a variant as the reference lists it: its values spelled as in rules files."""

    name: str
    allowed: str
    default: str
    meaning: str


def option_rows(variant: str, ruleset: str | None = None, preset: str | None = None) -> list[OptionRow]:
    """Every option of ``variant`` with its value after ``ruleset`` (default: the variant's) and ``preset``.

    Options the variant does not have (``suits`` of ``kawuxing4``) are left out.  Unknown variants, rulesets
    and presets raise :class:`OptionError`.
    """
    spec = get_variant(variant)
    opts = load_rules(variant, ruleset, preset)
    return [
        OptionRow(i.name, i.allowed_text, _format_value(getattr(opts, i.name)), i.meaning)
        for i in option_info(spec.options_cls)
        if i.name not in spec.absent_options
    ]


def _setup_line(variant: str, ruleset: str | None, preset: str | None) -> str:
    spec = get_variant(variant)
    chosen = ruleset or spec.default_ruleset
    others = [r for r in list_rulesets(variant) if r != chosen]
    text = f"{variant}: {spec.description}\nruleset {chosen}" + (f" (others: {', '.join(others)})" if others else "")
    presets = list_presets(variant)
    text += f"; preset {preset or 'none'}" + (f" (available: {', '.join(presets)})" if presets else "")
    return text


def options_text(variant: str, ruleset: str | None = None, preset: str | None = None) -> str:
    """A plain-text table of :func:`option_rows` under a line naming the variant, ruleset and preset."""
    rows = [("option", "allowed values", "default", "meaning")]
    rows += [(r.name, r.allowed, r.default, r.meaning) for r in option_rows(variant, ruleset, preset)]
    widths = [max(len(row[c]) for row in rows) for c in range(3)]
    lines = [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}".rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 7)
    return _setup_line(variant, ruleset, preset) + "\n\n" + "\n".join(lines)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def options_markdown(variant: str, ruleset: str | None = None, preset: str | None = None) -> str:
    """:func:`option_rows` as a Markdown table (values in code spans)."""
    rows = option_rows(variant, ruleset, preset)
    chosen = ruleset or get_variant(variant).default_ruleset
    column = f"default (`{chosen}`" + (f" + `{preset}`)" if preset else ")")
    return _md_table(
        ["option", "allowed values", column, "meaning"],
        [[f"`{r.name}`", r.allowed, f"`{r.default}`", r.meaning] for r in rows],
    )


# --------------------------------------------------------------------------------------------------
# Generated blocks of the rule pages
# --------------------------------------------------------------------------------------------------


def _family_variants(family: str) -> list[str]:
    return [name for name, spec in VARIANTS.items() if spec.family == family]


def _family_rulesets(family: str) -> list[str]:
    """The rulesets of a family: each variant's default first (registry order), then the others sorted."""
    variants = _family_variants(family)
    defaults = list(dict.fromkeys(VARIANTS[v].default_ruleset for v in variants))
    return defaults + [r for r in list_rulesets(variants[0]) if r not in defaults]


def family_options_markdown(family: str) -> str:
    """The option table of a family: allowed values, the value in each of its rulesets, and the meaning.

    An option that one of the family's variants lacks says so in its meaning (``suits``: Kawuxing 3p only).
    """
    variants = _family_variants(family)
    first = variants[0]
    rulesets = _family_rulesets(family)
    values = {r: load_ruleset(first, r) for r in rulesets}
    rows = []
    for info in option_info(VARIANTS[first].options_cls):
        lacking = [v for v in variants if info.name in VARIANTS[v].absent_options]
        meaning = info.meaning + (f" (not an option of {', '.join(lacking)})" if lacking else "")
        cells = [f"`{_format_value(getattr(values[r], info.name))}`" for r in rulesets]
        rows.append([f"`{info.name}`", info.allowed_text, *cells, meaning])
    return _md_table(["option", "allowed values", *[f"`{r}`" for r in rulesets], "meaning"], rows)


def family_presets_markdown(family: str) -> str:
    """What each preset of a family sets (one column per preset); ``(none)`` when the family has none."""
    variant = _family_variants(family)[0]
    presets = list_presets(variant)
    if not presets:
        return "(this family has no presets)"
    values = {p: load_preset(variant, p) for p in presets}
    names = [i.name for i in option_info(VARIANTS[variant].options_cls) if any(i.name in v for v in values.values())]
    rows = [[f"`{n}`", *[f"`{_format_value(values[p][n])}`" if n in values[p] else "—" for p in presets]] for n in names]
    return _md_table(["option", *[f"`{p}`" for p in presets]], rows)


def _family_class(family: str):
    """The family's rules class (:mod:`mjenv.rules.families`), which owns its page, its value tables and its kong
    money."""
    return rule_family(family)


def fans_markdown(family: str) -> str:
    """A family's scoring table (fans, patterns or hand classes with their values) as Markdown."""
    header, rows = _family_class(family).fan_table()
    return _md_table(header, rows)


def extra_table_markdown(family: str, name: str) -> str:
    """One of a family's further value tables (``extra_tables``, e.g. Yangzhou's small fans) as Markdown."""
    header, rows = _family_class(family).extra_tables()[name]
    return _md_table(header, rows)


def kong_money_markdown(family: str) -> str:
    """A family's kong money per kind of kong at its default options, computed by the scorer's ``kong_money``."""
    cls = _family_class(family)
    if not cls.pays_kong_money:
        raise ValueError(f"family {family!r} has no kong money")
    opts = load_rules(_family_variants(family)[0])
    rows = []
    for kind in ("concealed", "added", "direct"):
        transfers = cls.default_kong_money(kind, opts)
        amounts = {_format_value(t.amount) for t in transfers}
        payers = "the discarder pays" if kind == "direct" and len(transfers) == 1 else "each other player pays"
        rows.append([kind, f"{payers} {', '.join(sorted(amounts))} b"])
    return _md_table(["kong", "kong money at default options"], rows)


FAMILY_NAMES: tuple[str, ...] = tuple(dict.fromkeys(spec.family for spec in VARIANTS.values()))
"""The rule families of the registered variants, in registry order."""

BLOCKS: dict[str, Callable[[], str]] = {}
"""Generated block name -> the function that renders it (filled below for every family)."""

for _family in FAMILY_NAMES:
    BLOCKS[f"options {_family}"] = lambda f=_family: family_options_markdown(f)
    BLOCKS[f"presets {_family}"] = lambda f=_family: family_presets_markdown(f)
    BLOCKS[f"fans {_family}"] = lambda f=_family: fans_markdown(f)
    if _family_class(_family).pays_kong_money:
        BLOCKS[f"kong money {_family}"] = lambda f=_family: kong_money_markdown(f)
    for _name in _family_class(_family).extra_tables():
        BLOCKS[f"{_name} {_family}"] = lambda f=_family, n=_name: extra_table_markdown(f, n)

PAGES: dict[str, str] = {f: _family_class(f).page for f in FAMILY_NAMES}
"""Rule family -> its page in ``docs/rules/`` (the family class's ``page``); ``common.md`` holds what all families
share."""

_BLOCK_RE = re.compile(r"(<!-- generated: (?P<name>[^>]*?) -->\n)(?P<body>.*?)(\n<!-- end generated -->)", re.S)


def refresh_page(text: str, where: str = "page") -> str:
    """``text`` with every generated block rewritten from the code; an unknown block name raises ``OptionError``."""

    def render(m: re.Match) -> str:
        name = m.group("name").strip()
        if name not in BLOCKS:
            raise OptionError(f"{where}: unknown generated block {name!r}; known blocks: {', '.join(BLOCKS)}")
        return m.group(1) + BLOCKS[name]() + m.group(4)

    return _BLOCK_RE.sub(render, text)


def page_blocks(text: str) -> list[str]:
    """Names of the generated blocks of a page, in order."""
    return [m.group("name").strip() for m in _BLOCK_RE.finditer(text)]


def _docs_dir(docs_dir: Path | str | None) -> Path:
    d = Path(docs_dir) if docs_dir is not None else DOCS_DIR
    if not d.is_dir():
        raise OptionError(f"rule pages directory {str(d)!r} does not exist (--write-docs works in a source checkout)")
    return d


def stale_pages(docs_dir: Path | str | None = None) -> list[str]:
    """File names of the pages in ``docs_dir`` whose generated blocks differ from the code."""
    d = _docs_dir(docs_dir)
    stale = []
    for page in sorted(d.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        if refresh_page(text, str(page)) != text:
            stale.append(page.name)
    return stale


def write_docs(docs_dir: Path | str | None = None) -> list[str]:
    """Rewrite the generated blocks of every page in ``docs_dir``; returns the names of the pages changed."""
    d = _docs_dir(docs_dir)
    changed = []
    for page in sorted(d.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        new = refresh_page(text, str(page))
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page.name)
    return changed


# --------------------------------------------------------------------------------------------------
# mjenv rules
# --------------------------------------------------------------------------------------------------

_DESCRIPTION = """\
List every rule option of a variant with its allowed values, its value after the ruleset and preset, and its
meaning.  The rules themselves are described in docs/rules/ (one page per family); the option tables there are
generated from the same code:

  mjenv rules                                   # kawuxing3, ruleset kwx004
  mjenv rules --variant kawuxing3 --ruleset qdjt001 --preset crazy
  mjenv rules --variant yangzhou_new --markdown
  mjenv rules --write-docs                      # refresh the generated tables of docs/rules/*.md
  mjenv rules --check-docs                      # exit 1 when docs/rules/*.md differ from the code"""


def add_rules_subcommand(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``rules [--variant V] [--ruleset R] [--preset P] [--markdown] [--write-docs] [--check-docs]``."""
    p = subparsers.add_parser(
        "rules",
        help="list the rule options of a variant (defaults after ruleset/preset, allowed values, meanings)",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--variant", default="kawuxing3", help=f"{', '.join(VARIANTS)} (default kawuxing3)")
    p.add_argument("--ruleset", default=None, help="ruleset (default: the variant's)")
    p.add_argument("--preset", default=None, help="preset applied on top of the ruleset")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table instead of text")
    docs = p.add_mutually_exclusive_group()
    docs.add_argument(
        "--write-docs", nargs="?", const="", default=None, metavar="DIR",
        help="rewrite the generated tables of the rule pages (default DIR: docs/rules of this checkout)",
    )
    docs.add_argument(
        "--check-docs", nargs="?", const="", default=None, metavar="DIR",
        help="exit 1 when a rule page's generated tables differ from the code",
    )
    return p


def rules_main(args: argparse.Namespace, out: Any = None) -> int:
    """Run ``mjenv rules``; 0 on success, 1 when ``--check-docs`` finds stale pages (bad input raises OptionError)."""
    out = out or sys.stdout
    if args.write_docs is not None:
        changed = write_docs(args.write_docs or None)
        print(f"rewrote {', '.join(changed)}" if changed else "docs/rules is up to date", file=out)
        return 0
    if args.check_docs is not None:
        stale = stale_pages(args.check_docs or None)
        if stale:
            print(f"stale rule pages: {', '.join(stale)}; run 'mjenv rules --write-docs'", file=out)
            return 1
        print("docs/rules is up to date", file=out)
        return 0
    render = options_markdown if args.markdown else options_text
    print(render(args.variant, args.ruleset, args.preset), file=out)
    return 0
