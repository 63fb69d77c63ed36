"""The ``mjenv replay FILE`` command: show a replay as text (move by move with ``--step``), verify it
(``--verify``), or write the viewer's HTML page (``--html``, :mod:`mjenv.viewer`).

A top-floor tool: it reads files with :mod:`mjenv.replay` (the format) and writes pages with :mod:`mjenv.viewer`.
"""

from __future__ import annotations

import argparse
import sys

from mjenv.replay import Replay, ReplayError, format_event, format_header, money_problem, read_replay, verify_replay

__all__ = ["add_replay_subcommand", "replay_main"]

_REPLAY_DOC = "Replays: JSON Lines files of whole hands, their reading, verification and text display."


def add_replay_subcommand(subparsers) -> argparse.ArgumentParser:
    """Add ``replay FILE [--step] [--verify] [--hand N]`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "replay", help="show or verify a replay file (JSON Lines)", description=_REPLAY_DOC
    )
    p.add_argument("file", help="replay file written by an env or evaluate.py")
    p.add_argument("--step", action="store_true", help="show one move at a time; press Enter for the next")
    p.add_argument("--verify", action="store_true", help="re-simulate every hand and check every event and payment")
    p.add_argument("--hand", type=int, default=None, help="only hand N (1-based) of a multi-hand file")
    p.add_argument(
        "--html",
        metavar="OUT",
        default=None,
        help="write a self-contained HTML page that steps through every hand (mjenv.viewer) instead of text",
    )
    p.add_argument(
        "--seat",
        type=int,
        default=None,
        help="with --html: open in this seat's view (0-based) instead of every hand face up",
    )
    p.set_defaults(func=replay_main)
    return p


def replay_main(args: argparse.Namespace, out=None, inp=None) -> int:
    """Run ``mjenv replay``; returns the exit code (0 ok, 1 verification failed or a shown hand — as text or in the
    ``--html`` page — whose money does not add up, 2 unreadable file)."""
    out = out or sys.stdout
    try:
        hands = read_replay(args.file)
    except (OSError, ReplayError) as exc:
        print(f"mjenv: error: {exc}", file=sys.stderr)
        return 2
    if args.hand is not None:
        if not 1 <= args.hand <= len(hands):
            print(
                f"mjenv: error: {args.file} has {len(hands)} hand(s); --hand {args.hand} is out of range",
                file=sys.stderr,
            )
            return 2
        chosen = [(args.hand, hands[args.hand - 1])]
    else:
        chosen = list(enumerate(hands, start=1))
    if getattr(args, "html", None):
        status = _write_html(args, [rep for _, rep in chosen], out)
        for i, rep in chosen if status == 0 else ():
            problem = money_problem(rep)
            if problem:  # the page shows what the file says; say that it cannot be what was played
                status = 1
                print(f"mjenv: error: hand {i}: {problem}; the file was altered (the page shows it as recorded)",
                      file=sys.stderr)
        return status
    if args.verify:
        bad = 0
        for i, rep in chosen:
            try:
                res = verify_replay(rep)
                n_act = len(rep.actions)
                print(f"hand {i}: OK ({n_act} decisions, {res['how']}, deltas {res['deltas']})", file=out)
            except ReplayError as exc:
                bad += 1
                print(f"hand {i}: FAILED: {exc}", file=out)
        return 1 if bad else 0
    status = 0
    for i, rep in chosen:
        print(format_header(rep) + ("  (Enter: next move)" if args.step else ""), file=out)
        for r in rep.records:
            for line in format_event(r, rep.header.get("agents") or (), rep.header.get("variant")):
                print(line, file=out)
            if args.step and r["type"] != "action" and r["type"] != "end":
                out.flush()
                if _wait_enter(inp) is False:
                    args.step = False
        problem = money_problem(rep)
        if problem:  # an edited file: say so beside the numbers that contradict each other
            status = 1
            print(f"  !! hand {i} is inconsistent: {problem}; the file was altered (mjenv replay --verify checks it)", file=out)
            print(f"mjenv: error: hand {i}: {problem}; the file was altered", file=sys.stderr)
    return status


def _write_html(args: argparse.Namespace, hands: list[Replay], out) -> int:
    """``replay --html OUT``: the page of :mod:`mjenv.viewer`; exit 2 on a bad ``--seat`` or an unwritable file."""
    from mjenv.viewer import write_html

    seat = getattr(args, "seat", None)
    n = len(hands[0].header.get("agents") or ()) or 4
    if seat is not None and not 0 <= seat < n:
        print(f"mjenv: error: --seat {seat} is out of range 0..{n - 1}", file=sys.stderr)
        return 2
    try:
        write_html(args.html, hands, source=str(args.file), seat=seat)
    except OSError as exc:
        print(f"mjenv: error: cannot write --html {args.html}: {exc.strerror}", file=sys.stderr)
        return 2
    except ReplayError as exc:
        print(f"mjenv: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.html} ({len(hands)} hand(s))", file=out)
    return 0


def _wait_enter(inp) -> bool:
    """Wait for Enter; False at end of input (the rest is then shown without pausing)."""
    line = (inp or sys.stdin).readline()
    return line != ""
