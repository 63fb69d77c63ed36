"""The ``mjenv`` console script: command-line access to the rules.

This module owns argument parsing, the human and JSON renderings of results, and the exit-code contract:
0 for any well-formed request (a hand that cannot win is a result, not an error), 2 with a single
``mjenv: error: ...`` line on stderr for malformed input (notation, options, variant, ruleset, preset).

Subcommands are registered in :data:`COMMANDS` (name -> (add-arguments function, run function)); a new one
(``replay``, ``play`` ...) adds an entry there.  Today: ``score`` (RULES.md §3.7-§3.10 for one hand).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence

from mjenv.rules.options import (
    OptionError,
    VARIANTS,
    describe_options,
    get_variant,
    list_presets,
    list_rulesets,
    load_rules,
    n_players,
    parse_option_assignments,
    tile_kinds,
)
from mjenv.rules.scoring.kawuxing import FANS, WinContext, score_hand, share
from mjenv.tiles import parse_hand

PROG = "mjenv"


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one ``mjenv: error: ...`` line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(message)


class _UsageError(Exception):
    """Malformed command line or input; printed as one line, exit status 2."""


# --------------------------------------------------------------------------------------------------
# score
# --------------------------------------------------------------------------------------------------

_SCORE_DESCRIPTION = """\
Score one Kawuxing winning hand: the best reading, its fans, the value V, the cap and the share one payer
pays before payer factors (min(V, cap) * b).  The hand is written in RULES.md §1.2 notation and must name
the winning tile and how it arrived, e.g.

  mjenv score "24p678s789s55z [P 333p] +3p discard"
  mjenv score "1122334456677p +5p self-draw" --option cap=none --json
  mjenv score "234p567p345s66z78s +9s discard" --liangdao --ruleset qdjt001 --preset crazy

A hand that cannot win (no winning reading, refused by kaikou or a missed-win lock) is reported with
legal: false and exit status 0; malformed input exits with status 2."""


def _kawuxing_variants() -> list[str]:
    """The variants that ``score`` handles: those of the Kawuxing family (other families score elsewhere)."""
    return [name for name, spec in VARIANTS.items() if spec.family == "kawuxing"]


def _kawuxing_epilog() -> str:
    """Rulesets, presets and options of Kawuxing, read from the rules files (so the help never goes stale)."""
    try:
        rulesets = ", ".join(list_rulesets("kawuxing3"))
        presets = ", ".join(list_presets("kawuxing3"))
        table = describe_options(get_variant("kawuxing3").options_cls)
    except OptionError as e:  # a broken rules directory must not break --help
        return f"(rulesets and presets unavailable: {e})"
    return (
        f"variants: {', '.join(_kawuxing_variants())}\n"
        f"rulesets: {rulesets} (default {get_variant('kawuxing3').default_ruleset})\n"
        f"presets:  {presets} (applied on top of the ruleset; --option overrides both)\n\n"
        f"options (--option name=value):\n{table}"
    )


def _add_score(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="score one Kawuxing winning hand",
        usage="%(prog)s HAND [--variant V] [--ruleset R] [--preset P] [--option NAME=VALUE]... [--liangdao]\n"
        "       [--after-kong [L]] [--last-tile] [--konged] [--discarder-liangdao] [--lock M] [--json]",
        description=_SCORE_DESCRIPTION,
        epilog=_kawuxing_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # optional only so that "--after-kong HAND" can be untangled in _run_score; a missing hand is an error there
    p.add_argument(
        "hand", nargs="?", help='(required) the hand with its winning tile, e.g. "24p678s789s55z [P 333p] +3p discard"'
    )
    p.add_argument("--variant", default="kawuxing3", help="kawuxing3 (default) or kawuxing4")
    p.add_argument("--ruleset", default=None, help="ruleset (default: the variant's, kwx004)")
    p.add_argument("--preset", default=None, help="preset applied on top of the ruleset")
    p.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help="set one option (repeatable)"
    )
    p.add_argument("--liangdao", action="store_true", help="the winner declared 亮倒 before this win")
    p.add_argument(
        "--after-kong",
        nargs="?",
        const="1",
        default="0",
        metavar="L",
        help="the win follows a kong at chain position L (default 1): "
        "杠上开花 on a self-draw, 杠上炮 on a discard",
    )
    p.add_argument("--last-tile", action="store_true", help="the win is on the last tile (海底捞, per option haidi)")
    p.add_argument("--konged", action="store_true", help="the winner made a kong earlier this hand (kaikou soft)")
    p.add_argument(
        "--discarder-liangdao", action="store_true", help="the discarder has declared 亮倒 (payer factor f_D)"
    )
    p.add_argument(
        "--lock", type=int, default=None, metavar="M", help="the winner is under a missed-win lock with value M"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def _number(x: float) -> float | int:
    """Whole amounts as ints, so JSON and text show ``8`` rather than ``8.0``."""
    return int(x) if float(x).is_integer() else x


def _after_kong(args: argparse.Namespace) -> int:
    """The chain position of ``--after-kong``; a bare flag placed before the hand swallows the hand, undo that."""
    text = args.after_kong
    if not re.fullmatch(r"[+-]?\d+", text):
        if args.hand is not None:
            raise _UsageError(f"--after-kong takes a chain position L >= 1, got {text!r}")
        args.hand, text = text, "1"
    position = int(text)
    if position < 0:
        raise _UsageError(f"--after-kong takes a chain position L >= 1, got {position}")
    return position


def _run_score(args: argparse.Namespace) -> int:
    kong_position = _after_kong(args)
    if args.hand is None:
        raise _UsageError("the following arguments are required: hand")
    if get_variant(args.variant).family != "kawuxing":
        raise _UsageError(
            f"score handles the Kawuxing variants only ({', '.join(_kawuxing_variants())}), not {args.variant!r}"
        )
    opts = load_rules(args.variant, args.ruleset, args.preset, parse_option_assignments(args.option))
    hand = parse_hand(args.hand, tile_kinds(args.variant, opts))
    if hand.win_tile is None:
        raise _UsageError("the hand has no winning tile; end it with e.g. '+3p discard', '+9p self-draw' or '+5p rob'")
    if kong_position and hand.win_how == "rob":
        raise _UsageError("--after-kong does not apply to a rob (robbing is its own fan, 抢杠胡)")
    ctx = WinContext(
        how=hand.win_how,
        revealed=args.liangdao,
        kong_position=kong_position,
        last_tile=args.last_tile,
        winner_has_konged=args.konged,
        discarder_revealed=args.discarder_liangdao,
        missed_win_lock=args.lock,
    )
    score = score_hand(hand, ctx, opts, n_players(args.variant))
    amount = _number(share(score, 1, opts))
    if args.json:
        out = {
            "legal": score.legal,
            "reason": score.reason,
            "reading": score.reading_text,
            "fans": score.fans,
            "value": score.value,
            "cap": score.cap,
            "share": amount,
        }
        print(json.dumps(out))
        return 0
    ruleset = args.ruleset or get_variant(args.variant).default_ruleset
    setup = f"{args.variant}, ruleset {ruleset}" + (f", preset {args.preset}" if args.preset else "")
    if args.option:
        setup += ", " + " ".join(args.option)
    fans = "  ".join(f"{FANS[f][0]} {f} ×{v}" for f, v in score.fans.items()) or "-"
    lines = [
        f"hand     {args.hand.strip()}",
        f"rules    {setup}",
        f"reading  {score.reading_text or '-'}",
        f"fans     {fans}",
        f"value    {score.value} ({opts.fan_combine})",
        f"cap      {'none' if score.cap is None else score.cap}",
        f"share    {amount} per payer before payer factors (min(V, cap) × b, b = {_number(opts.base)})",
        "legal    yes" if score.legal else f"legal    no: {score.reason}",
    ]
    print("\n".join(lines))
    return 0


# --------------------------------------------------------------------------------------------------
# Command table and entry point
# --------------------------------------------------------------------------------------------------

COMMANDS: dict[str, tuple[Callable[[argparse._SubParsersAction], None], Callable[[argparse.Namespace], int]]] = {
    "score": (_add_score, _run_score),
}


def build_parser() -> argparse.ArgumentParser:
    """The ``mjenv`` argument parser with one subparser per entry of :data:`COMMANDS`."""
    parser = _Parser(
        prog=PROG,
        description="mjenv: regional Chinese mahjong rules and environments (Kawuxing 卡五星 and others).",
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
