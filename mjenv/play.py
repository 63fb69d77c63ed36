"""``mjenv play``: a person plays one seat of a hand in the terminal against the built-in bots.

This module owns the human seat's loop: at each of its decisions it prints what happened since its last one
(from that seat's view: other seats' draws are not shown, nor their passes), the table from its seat
(:func:`mjenv.render.render_table`) and the legal actions by name, numbered.  An answer is read as

* a number from the list;
* an action name (``discard:3p``, ``liang:5s``, ``kong:7p``, ``pong``, ``kong``, ``chi_low``, ``win``, ``pass``,
  ``kongtile:0``);
* or a short form: ``d 3p`` / ``3p`` (discard), ``l 5s`` / ``liang 5s``, ``k 7p`` / ``kong 7p`` (kong of one's own),
  ``p`` / ``peng`` (pong), ``hu`` / ``h`` / ``zimo`` (win), ``x`` / ``guo`` (pass), ``chi`` when one chi is legal,
  ``kt 0`` (take face-up kong tile 0);

``?`` lists the actions again, ``t`` shows the table, ``q`` gives up.  Anything else is answered with one line and
asked again.  The other seats are played by :func:`agents.make_agent` (``heuristic``, ``random``, a checkpoint, or
an outside bot ``cmd:COMMAND``, docs/bots.md: one that fails voids the hand, exit status 1).
The hand ends with the settlement (every transfer, the fans, the deltas) and is written as a replay
(:func:`mjenv.replay.write_replay` with the decisions kept while playing) that ``mjenv replay --verify``
accepts and ``mjenv replay --html`` shows.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TextIO

import numpy as np

from mjenv.encoding import actions as A
from mjenv.replay import format_event
from mjenv.tiles import SEAT_LETTERS, NotationError, tile_id, tile_name, tile_unicode

_WORDS = {
    "p": "pong", "peng": "pong", "pung": "pong",
    "h": "win", "hu": "win", "zimo": "win", "ron": "win", "tsumo": "win",
    "x": "pass", "guo": "pass", "skip": "pass", "no": "pass",
    "gang": "kong",
}
_TILE_FAMILY = {"d": "discard", "discard": "discard", "da": "discard", "l": "liang", "liang": "liang",
                "k": "kong", "kong": "kong", "gang": "kong"}


class GaveUp(Exception):
    """The player typed ``q`` or the input ended before the hand was over."""


def parse_answer(text: str, legal: list[int]) -> int | None:
    """The legal action id an answer names, or None (``legal``: the numbered list, in order)."""
    raw = text.strip().lower()
    if not raw:
        return None
    if raw.isdigit():
        k = int(raw)
        return legal[k - 1] if 1 <= k <= len(legal) else None
    word = _WORDS.get(raw, raw)
    try:
        a = A.action_id(word)
    except ValueError:
        a = None
    if a is not None:
        if a in legal:
            return a
        if word == "kong":  # no kong of the discard: a kong of one's own, if only one is possible
            own = [x for x in legal if A.KONG_SELF <= x < A.KONG_SELF + 34]
            return own[0] if len(own) == 1 else None
        return None
    if word == "chi":
        chis = [x for x in legal if A.CHI_LOW <= x <= A.CHI_HIGH]
        return chis[0] if len(chis) == 1 else None
    m = re.fullmatch(r"(?:(chi)[\s:_]*(low|mid|high)|(kt|kongtile)[\s:]*([01]))", raw)
    if m:
        name = f"chi_{m.group(2)}" if m.group(1) else f"kongtile:{m.group(4)}"
        a = A.action_id(name)
        return a if a in legal else None
    m = re.fullmatch(r"(?:([a-z]+)[\s:]*)?([1-9][mpsz])", raw)
    if m:
        family = _TILE_FAMILY.get(m.group(1) or "d")
        if family is None:
            return None
        try:
            a = A.action_id(f"{family}:{m.group(2)}")
        except ValueError:
            return None
        return a if a in legal else None
    return None


def _label(a: int) -> str:
    name = A.action_name(a)
    family, _, tile = name.partition(":")
    if tile and family in ("discard", "liang", "kong"):
        try:
            return f"{name} {tile_unicode(tile_id(tile))}"
        except NotationError:
            return name
    return name


def format_actions(legal: list[int]) -> str:
    """The numbered list of legal actions, four to a line."""
    cells = [f"{i:>2}) {_label(a):<14}" for i, a in enumerate(legal, start=1)]
    return "\n".join("  " + "".join(cells[i : i + 4]).rstrip() for i in range(0, len(cells), 4))


def narrate(ev: dict, me: int, variant: str) -> list[str]:
    """Lines for one event as seat ``me`` may see it (others' draws without the tile, others' replies hidden)."""
    kind = ev["type"]
    L = SEAT_LETTERS
    if kind == "action":
        return []
    if kind == "deal":
        return [f"Deal: dealer {L[ev['dealer']]}; you are seat {L[me]}"]
    if kind == "draw" and ev["seat"] != me:
        return [f"{L[ev['seat']]} draws" + (" a replacement" if ev.get("replacement") else "")]
    if kind == "draw":
        return [f"You draw {tile_unicode(tile_id(ev['tile']))} {ev['tile']}" + (" (replacement)" if ev.get("replacement") else "")]
    if kind == "reply" and ev["seat"] != me:
        return []
    return format_event(ev, (), variant)


def add_play_subcommand(subparsers) -> argparse.ArgumentParser:
    """Add ``play [--variant V] [--ruleset R] [--preset P] [--option K=V] [--seat S] [--opponents O] [--seed N]
    [--save FILE]`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "play",
        help="play one seat of a hand in the terminal against the bots",
        description="Play one seat of a hand in the terminal against the bots; the hand is saved as a replay.",
    )
    p.add_argument("--variant", default="kawuxing3", help="kawuxing3 (default), kawuxing4, gejiu, diedaohu, ...")
    p.add_argument("--ruleset", default=None, help="ruleset name (default: the variant's default ruleset)")
    p.add_argument("--preset", default=None, help="preset applied on top of the ruleset")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a rule option, applied last")
    p.add_argument("--seat", default="0", help="your seat: 0..n-1 or A..D (default 0 = A, the dealer)")
    p.add_argument(
        "--opponents", default="heuristic",
        help="heuristic (default), random, heuristic-flush, fast, search (or search:worlds=N,...; docs/search.md), policy-search, a "
        "checkpoint file (*.pt), or an outside bot 'cmd:COMMAND' (docs/bots.md)",
    )
    p.add_argument("--bot-timeout", type=float, default=10.0, metavar="S",
                   help="seconds an outside bot (cmd:...) may take per decision (default 10)")
    p.add_argument("--seed", type=int, default=0, help="wall seed (the same seed deals the same wall)")
    p.add_argument(
        "--save", default=None, metavar="FILE", help="replay file to write (default: play_<variant>_<seed>.jsonl)"
    )
    p.set_defaults(func=play_main)
    return p


def _seat(text: str, n: int) -> int:
    t = str(text).strip().upper()
    s = SEAT_LETTERS.index(t) if len(t) == 1 and t in SEAT_LETTERS else int(t) if t.isdigit() else -1
    if not 0 <= s < n:
        raise ValueError(f"--seat {text!r}: expected 0..{n - 1} or {', '.join(SEAT_LETTERS[:n])}")
    return s


def play_main(args: argparse.Namespace, inp: TextIO | None = None, out: TextIO | None = None) -> int:
    """Run ``mjenv play``: 0 when the hand was played to its end and saved, 1 when the player gave up or an
    outside bot failed (one line naming it and the decision; the hand is void, nothing is written).

    Bad arguments (variant, rules, seat, opponents) raise ``ValueError`` naming the flag (exit 2 in the CLI).
    """
    from mjenv.engine.core import Engine
    from mjenv.rules.options import load_rules, n_players, parse_option_assignments

    inp = inp or sys.stdin
    out = out or sys.stdout
    opts = load_rules(args.variant, ruleset=args.ruleset, preset=args.preset, options=parse_option_assignments(args.option))
    n = n_players(args.variant)
    me = _seat(args.seat, n)
    bot = _opponent(args.opponents, args.variant, opts, args.seed, getattr(args, "bot_timeout", 10.0))
    save = Path(args.save or f"play_{args.variant}_{args.seed}.jsonl")
    eng = Engine(args.variant, 1, options=opts, record_events=True)
    eng.reset(seed=args.seed)
    names = [("you" if s == me else bot.name) for s in range(n)]
    print(f"mjenv play: {args.variant}, seed {args.seed}; you are seat {SEAT_LETTERS[me]}; the others are {bot.name}.",
          file=out)
    print("Answer with a number, an action name, or e.g. 'd 3p', 'liang 5s', 'pong', 'hu', 'pass'; "
          "'?' lists the actions, 't' the table, 'q' gives up.", file=out)
    from agents.players.external import BotError

    try:
        decisions = _loop(eng, me, bot, names, inp, out)
    except GaveUp as exc:
        print(f"mjenv play: {exc}; no replay written.", file=out)
        return 1
    except BotError as exc:  # the hand cannot go on without that seat: it is voided
        print(f"mjenv play: error: {exc}; the hand is void, no replay written", file=sys.stderr)
        return 1
    finally:
        if hasattr(bot, "close"):
            bot.close()
    res = eng.results[0]
    print("\n== the hand is over", file=out)
    mine = res["deltas"][me]
    print(f"You ({SEAT_LETTERS[me]}): {mine:+g}", file=out)
    header = {"seed": args.seed, "table_id": 0, "agents": names,
              "rules": {"ruleset": args.ruleset, "preset": args.preset}}
    from mjenv.replay import write_replay

    try:
        write_replay(save, eng, 0, header, decisions=decisions)
    except OSError as exc:
        raise ValueError(f"--save {save}: cannot write the replay ({exc.strerror})") from None
    print(f"Replay saved to {save} (check it: mjenv replay --verify {save}; "
          f"watch it: mjenv replay {save} --html {save.with_suffix('.html')})", file=out)
    return 0


def _opponent(spec: str, variant: str, opts, seed: int, bot_timeout: float = 10.0):
    from agents import make_agent

    kwargs = {}
    if spec.startswith("cmd:"):
        if not bot_timeout > 0:
            raise ValueError(f"--bot-timeout must be > 0 seconds, got {bot_timeout}")
        kwargs["timeout"] = bot_timeout
    try:
        return make_agent(spec, variant, opts, seed=seed, **kwargs)
    except ImportError as exc:
        raise ValueError(f"--opponents {spec!r} needs an optional dependency: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"--opponents: {exc}") from None


def _loop(eng, me: int, bot, names: list[str], inp: TextIO, out: TextIO) -> list[dict]:
    """Play the hand to its end; returns the decisions (``{"at", "seat", "action"}``) for the replay."""
    from agents.players.base import agent_act
    from mjenv.encoding.observation import encoder_for
    from mjenv.render import render_table

    enc = encoder_for(eng)
    st = eng.state
    decisions: list[dict] = []
    told = 0
    rows = np.array([0])
    while not eng.done[0]:
        actor = int(st.actor[0])
        events = eng.events[0]
        for ev in list(events)[told:]:
            for line in narrate(ev, me, eng.variant):
                print(line, file=out)
        told = len(events)
        if actor == me:
            table = render_table(eng, 0, seat=me, agents=names)
            table = "\n".join(ln for ln in table.splitlines() if not ln.startswith("legal for"))
            a = _ask(table, [int(x) for x in np.flatnonzero(eng.mask[0])], inp, out)
        else:
            obs = enc.encode(st, st.actor[rows], rows, engine=eng) if getattr(bot, "uses_obs", True) else None
            a = int(agent_act(bot, obs, eng.mask[rows], engine=eng, tables=rows)[0])
            if not eng.mask[0, a]:
                raise RuntimeError(f"opponent {bot.name!r} chose the illegal action {A.action_name(a)}")
        decisions.append({"at": eng.event_count(0), "seat": actor, "action": a})
        eng.step(np.array([a]))
    for ev in list(eng.events[0])[told:]:
        for line in narrate(ev, me, eng.variant):
            print(line, file=out)
    return decisions


def _ask(table: str, legal: list[int], inp: TextIO, out: TextIO) -> int:
    """Show the table and the numbered legal actions; read answers until one names a legal action."""
    print("\n" + table, file=out)
    print("Your move:\n" + format_actions(legal), file=out)
    while True:
        print("> ", end="", file=out)
        out.flush()
        line = inp.readline()
        if line == "":
            raise GaveUp("the input ended before the hand was over")
        text = line.strip()
        if text.lower() in ("q", "quit", "exit"):
            raise GaveUp("you gave up")
        if text in ("?", "help"):
            print(format_actions(legal), file=out)
            continue
        if text.lower() in ("t", "table"):
            print(table, file=out)
            continue
        a = parse_answer(text, legal)
        if a is not None:
            return a
        print(f"{text!r} is not one of the legal actions: type 1..{len(legal)}, a name such as "
              f"{A.action_name(legal[0])!r}, or '?' for the list", file=out)
