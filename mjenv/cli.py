"""The ``mjenv`` console script: command-line access to the rules.

This module owns argument parsing, the human and JSON renderings of results, and the exit-code contract:
0 for any well-formed request (a hand that cannot win is a result, not an error), 2 with a single
``mjenv: error: ...`` line on stderr for malformed input (notation, options, variant, ruleset, preset, a flag
the chosen variant does not have).

Subcommands are registered in :data:`COMMANDS` (name -> (add-arguments function, run function)); a new one
(``replay``, ``play`` ...) adds an entry there; a command whose logic lives in its own module registers that
module's two functions.  Today: ``score`` (one winning hand of any variant, the rules of docs/rules/: Kawuxing
§3.7-§3.10, Gejiu §6, Diedaohu §7, Yangzhou §8-§9, Liuwei §10), ``replay`` (:mod:`mjenv.replay`), ``rules``
(the option reference, :mod:`mjenv.rules.reference`), ``play`` (a hand against the bots, :mod:`mjenv.play`),
``dataset`` (decisions for offline learning: :mod:`mjenv.tools.dataset` runs it, :mod:`mjenv.dataset` holds the
format) and ``review`` (a replay's decisions valued by search, :mod:`mjenv.review`).

``score`` reads each rule family from its class (:mod:`mjenv.rules.families`, ``VariantSpec.family``): how to
score one hand in a situation (``score_situation``), the JSON object (``score_json``), the text notes on value and
share, the fan names and whether values are factors; :data:`_FLAGS` spells the situation facts as flags
(``--liangdao``, ``--louhu``, ``--seat-wind`` ...), each applying to the families whose ``situation`` names it; a
flag given for another family is a usage error that names its variants.

The JSON object always has ``legal``, ``reason``, ``reading``, ``fans`` ({id: value}), ``value``, ``cap`` and
``share``; the Diedaohu, Liuwei and Yangzhou scorers add their own fields (``to_json()``: hand class, whole
balance, 陪冲 amount, Yangzhou's ``big_fan_value`` / ``small_fans`` / ``total``, liability).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mjenv.rules.families import RULE_FAMILIES, rule_family
from mjenv.tools.dataset import add_dataset_subcommand, dataset_main
from mjenv.play import add_play_subcommand, play_main
from mjenv.tools.replay_command import add_replay_subcommand, replay_main
from mjenv.review import add_review_subcommand, review_main
from mjenv.rules import reference
from mjenv.rules.reference import add_rules_subcommand, rules_main
from mjenv.rules.options import (
    OptionError,
    VARIANTS,
    describe_options,
    get_variant,
    list_presets,
    list_rulesets,
    load_rules,
    parse_option_assignments,
    tile_kinds,
)
from mjenv.tiles import WINDS, parse_hand

PROG = "mjenv"


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one ``mjenv: error: ...`` line and exit status 2.

    ``epilog_fn`` computes the epilog only when the help is shown (reading every rules file on each call of
    :func:`main` would make scoring one hand slow).
    """

    def __init__(self, *args: Any, epilog_fn: Callable[[], str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._epilog_fn = epilog_fn

    def format_help(self) -> str:
        if self._epilog_fn is not None:
            self.epilog = self._epilog_fn()
        return super().format_help()

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(message)


class _UsageError(Exception):
    """Malformed command line or input; printed as one line, exit status 2."""


# --------------------------------------------------------------------------------------------------
# score: situation flags
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Flag:
    """One situation flag of ``score``: its argparse spelling and the rule families it applies to."""

    name: str
    """The option string, e.g. ``"--after-kong"``."""
    help: str
    usage: str = ""
    """How the usage line writes it (``"--lock M"``); the bare name when empty."""
    kwargs: Mapping[str, Any] = field(default_factory=lambda: {"action": "store_true", "default": False})
    """``add_argument`` keywords; ``default`` is also the value that means "not given"."""

    @property
    def dest(self) -> str:
        return self.name.lstrip("-").replace("-", "_")

    @property
    def families(self) -> tuple[str, ...]:
        """The rule families whose scorer reads this fact (their class's ``situation``)."""
        return tuple(name for name, cls in RULE_FAMILIES.items() if self.dest in cls.situation)


_WIND_LETTERS = "ESWN"  # seat / round winds as written on the command line: 1z 2z 3z 4z

_FLAGS: tuple[_Flag, ...] = (
    _Flag("--liangdao", "the winner declared 亮倒 before this win"),
    _Flag(
        "--after-kong",
        "the win follows the winner's kong: Kawuxing, at chain position L (default 1), 杠上开花 on a self-draw, "
        "杠上炮 on a discard; Gejiu, 杠上花 on a self-draw (no L)",
        "--after-kong [L]",
        # optional value only so that "--after-kong HAND" can be untangled in _after_kong
        {"nargs": "?", "const": "1", "default": None, "metavar": "L"},
    ),
    _Flag("--last-tile", "the win is on the last tile (海底捞, per option haidi)"),
    _Flag("--konged", "the winner made a kong earlier this hand (kaikou soft)"),
    _Flag("--discarder-liangdao", "the discarder has declared 亮倒 (payer factor f_D)"),
    _Flag(
        "--lock",
        "the winner is under a missed-win lock with value M",
        "--lock M",
        {"type": int, "default": None, "metavar": "M"},
    ),
    _Flag(
        "--louhu",
        "the winner is under a missed-win lock (漏胡, §7.6): no discard or rob win",
    ),
    _Flag(
        "--dadiaoche",
        "the winner is locked but the 大吊车 exception holds for the winning tile (§7.6)",
    ),
    _Flag(
        "--discarder-busted",
        "园子: the discarder's balance is 0, its tiles cannot be won on (§7.7)",
    ),
    _Flag(
        "--seat-wind",
        "the winner's seat wind 门风 (default E)",
        "--seat-wind E|S|W|N",
        {"type": str.upper, "choices": tuple(_WIND_LETTERS), "default": None, "metavar": "E|S|W|N"},
    ),
    _Flag(
        "--round-wind",
        "the round wind 圈风 (default E)",
        "--round-wind E|S|W|N",
        {"type": str.upper, "choices": tuple(_WIND_LETTERS), "default": None, "metavar": "E|S|W|N"},
    ),
)


def _variants_of(family: str) -> list[str]:
    """The variants of one rule family, in registry order."""
    return [name for name, spec in VARIANTS.items() if spec.family == family]


def _check_flags(args: argparse.Namespace, family: str) -> None:
    """A situation flag given for a variant whose family it does not apply to is a usage error."""
    for flag in _FLAGS:
        if family not in flag.families and getattr(args, flag.dest) != flag.kwargs["default"]:
            variants = [v for f in flag.families for v in _variants_of(f)]
            raise _UsageError(f"{flag.name} applies to {', '.join(variants)} only, not {args.variant}")


def _after_kong(args: argparse.Namespace) -> int:
    """The chain position of ``--after-kong``; a bare flag placed before the hand swallows the hand, undo that."""
    text = args.after_kong
    if text is None:
        return 0
    if not re.fullmatch(r"[+-]?\d+", text):
        if args.hand is not None:
            raise _UsageError(f"--after-kong takes a chain position L >= 1, got {text!r}")
        args.hand, text = text, "1"
    position = int(text)
    if position < 1:
        raise _UsageError(f"--after-kong takes a chain position L >= 1, got {position}")
    return position


def _check_lock(args: argparse.Namespace) -> None:
    """``--lock M``: the value of the passed win, at least 1."""
    if args.lock is not None and args.lock < 1:
        raise _UsageError(f"--lock takes the value M >= 1 of the passed win, got {args.lock}")


def _wind(letter: str | None) -> int:
    """Tile id 27..30 of a wind letter E/S/W/N (East when not given)."""
    return WINDS[_WIND_LETTERS.index(letter or "E")]


# --------------------------------------------------------------------------------------------------
# score: arguments, help, run
# --------------------------------------------------------------------------------------------------

_SCORE_DESCRIPTION = """\
Score one winning hand of any variant: the best reading, its fans, the value V, the cap and the share one payer
pays (Kawuxing: before payer factors, min(V, cap) * b).  The hand is written in the notation of
docs/rules/common.md §1.2 and must name the winning tile and how it arrived, e.g.

  mjenv score "24p678s789s55z [P 333p] +3p discard"
  mjenv score "1122334456677p +5p self-draw" --option cap=none --json
  mjenv score "234p567p345s66z78s +9s discard" --liangdao --ruleset qdjt001 --preset crazy
  mjenv score --variant gejiu "111p333p555p77p99p +9p self-draw" --option gejiu_combine=add
  mjenv score --variant diedaohu "333z55z66z [P 111z] [P 222z] +6z discard" --option bankroll=100
  mjenv score --variant yangzhou_new "111m555s77z88s [P 999p] +7z discard" --seat-wind S --json
  mjenv score --variant liuwei "22m44s [P 111p] [P 999s] [P 333z] +2m discard" --louhu

The situation flags apply to some variants only (shown in brackets); another one is an error.  A hand that
cannot win (no winning reading, below the minimum, refused by kaikou or a missed-win lock) is reported with
legal: false and exit status 0; malformed input exits with status 2."""


def _family_label(family: str) -> str:
    return f"{family.capitalize()} ({', '.join(_variants_of(family))})"


def _score_usage() -> str:
    lines = ["%(prog)s HAND [--variant V] [--ruleset R] [--preset P] [--option NAME=VALUE]... [--json]"]
    for family in RULE_FAMILIES:
        flags = " ".join(f"[{f.usage or f.name}]" for f in _FLAGS if family in f.families)
        lines.append(f"  {_family_label(family)}: {flags}")
    return "\n       ".join(lines)


def _score_epilog() -> str:
    """Variants, rulesets, presets and options, read from the registry and rules files (so help never goes stale)."""
    try:
        width = max(map(len, VARIANTS))
        lines = ["variants (--variant V; ruleset R, the default first; presets P apply on top, --option over both):"]
        for name, spec in VARIANTS.items():
            rulesets = [spec.default_ruleset] + [r for r in list_rulesets(name) if r != spec.default_ruleset]
            presets = list_presets(name)
            lines.append(
                f"  {name:<{width}}  rulesets: {', '.join(rulesets)}; presets: {', '.join(presets) or 'none'}"
                f"\n  {'':<{width}}  {spec.description}"
            )
        for family in RULE_FAMILIES:
            variant = _variants_of(family)[0]
            table = describe_options(get_variant(variant).options_cls, variant)
            rules = f"rules: docs/rules/{reference.PAGES[family]}; mjenv rules --variant {variant}"
            lines.append(f"\noptions of {_family_label(family)} (--option name=value; {rules}):\n{table}")
    except OptionError as e:  # a broken rules directory must not break --help
        return f"(rulesets and presets unavailable: {e})"
    return "\n".join(lines)


def _add_score(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="score one winning hand (every variant)",
        usage=_score_usage(),
        description=_SCORE_DESCRIPTION,
        epilog_fn=_score_epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # optional only so that "--after-kong HAND" can be untangled in _after_kong; a missing hand is an error there
    p.add_argument(
        "hand", nargs="?", help='(required) the hand with its winning tile, e.g. "24p678s789s55z [P 333p] +3p discard"'
    )
    p.add_argument("--variant", default="kawuxing3", help=f"{', '.join(VARIANTS)} (default kawuxing3)")
    p.add_argument("--ruleset", default=None, help="ruleset (default: the variant's, e.g. kwx004)")
    p.add_argument("--preset", default=None, help="preset applied on top of the ruleset (Kawuxing)")
    p.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help="set one option (repeatable)"
    )
    for flag in _FLAGS:
        variants = ", ".join(v for f in flag.families for v in _variants_of(f))
        p.add_argument(flag.name, help=f"{flag.help} [{variants}]", **flag.kwargs)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def _run_score(args: argparse.Namespace) -> int:
    args.kong_position = _after_kong(args)
    if args.hand is None:
        raise _UsageError("the following arguments are required: hand")
    family_name = get_variant(args.variant).family
    family = rule_family(family_name)
    _check_flags(args, family_name)
    _check_lock(args)
    opts = load_rules(args.variant, args.ruleset, args.preset, parse_option_assignments(args.option))
    hand = parse_hand(args.hand, tile_kinds(args.variant, opts))
    if hand.win_tile is None:
        raise _UsageError("the hand has no winning tile; end it with e.g. '+3p discard', '+9p self-draw' or '+5p rob'")
    if args.kong_position and hand.win_how == "rob":
        raise _UsageError("--after-kong does not apply to a rob (robbing is its own fan, 抢杠胡)")
    args.seat_wind, args.round_wind = _wind(args.seat_wind), _wind(args.round_wind)  # tile ids, East by default
    score = family.score_situation(hand, args, opts, args.variant)
    out = family.score_json(score, opts)
    if args.json:
        print(json.dumps(out))
        return 0
    ruleset = args.ruleset or get_variant(args.variant).default_ruleset
    setup = f"{args.variant}, ruleset {ruleset}" + (f", preset {args.preset}" if args.preset else "")
    if args.option:
        setup += ", " + " ".join(args.option)
    mark = "×" if family.fan_factors else ""  # values that are factors
    names = family.fans()
    fans = "  ".join(f"{names[f][0]} {f} {mark}{v}" for f, v in score.fans.items()) or "-"
    lines = [
        f"hand     {args.hand.strip()}",
        f"rules    {setup}",
        f"reading  {score.reading_text or '-'}",
        f"fans     {fans}",
        f"value    {score.value} {family.value_note(score, opts)}",
        f"cap      {'none' if score.cap is None else score.cap}",
        f"share    {family.share_note(out, opts, hand.win_how)}",
        "legal    yes" if score.legal else f"legal    no: {score.reason}",
    ]
    print("\n".join(lines))
    return 0


# --------------------------------------------------------------------------------------------------
# Command table and entry point
# --------------------------------------------------------------------------------------------------

COMMANDS: dict[str, tuple[Callable[[argparse._SubParsersAction], None], Callable[[argparse.Namespace], int]]] = {
    "score": (_add_score, _run_score),
    "replay": (add_replay_subcommand, replay_main),
    "rules": (add_rules_subcommand, rules_main),
    "play": (add_play_subcommand, play_main),
    "dataset": (add_dataset_subcommand, dataset_main),
    "review": (add_review_subcommand, review_main),
}


def build_parser() -> argparse.ArgumentParser:
    """The ``mjenv`` argument parser with one subparser per entry of :data:`COMMANDS`."""
    parser = _Parser(
        prog=PROG,
        description="mjenv: regional Chinese mahjong rules and environments (Kawuxing 卡五星, Gejiu 个旧, Diedaohu 跌倒胡, "
        "Yangzhou 扬州式, Liuwei 六圩式).",
        epilog="Run 'mjenv <command> --help' for the options of a command.",
    )
    sub = parser.add_subparsers(dest="command", metavar="command", parser_class=_Parser)
    sub.required = True
    for add, _ in COMMANDS.values():
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status (0 ok, 2 malformed input)."""
    try:
        # a terminal that cannot show 卡五星 should get escapes, not a traceback
        sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    except (AttributeError, ValueError):
        pass
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return COMMANDS[args.command][1](args)
    except SystemExit as e:  # --help and --version end here
        return e.code if isinstance(e.code, int) else 0
    except (_UsageError, ValueError) as e:
        # NotationError and OptionError are ValueErrors: every malformed input ends here, as one line
        message = " ".join(str(e).split())
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
