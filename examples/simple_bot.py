#!/usr/bin/env python3
"""An outside bot for mjenv, speaking the mjenv-bot-v1 JSON-lines protocol (docs/bots.md); no mjenv import.

It reads one JSON object per line on stdin and answers each with one JSON object on one line on stdout:
``hello`` -> ``{"name": ...}``; ``decide`` -> ``{"action": NAME}``, NAME one of the message's ``legal`` names.
Its play: win whenever it may; never claim (pass); on its turn discard the tile with the fewest neighbours in
its hand (honours and terminals first).  Try it:

    python evaluate.py --agents "cmd:python examples/simple_bot.py" heuristic random --walls 20
    mjenv play --opponents "cmd:python examples/simple_bot.py"

``--fail crash|hang|illegal`` makes it misbehave at its 5th decision (the tests use this).
"""

import json
import sys


def neighbours(tile: str, hand: list[str]) -> int:
    """How many tiles of the hand could make a set with ``tile`` (same tile, or within two of it in its suit)."""
    rank, suit = int(tile[0]), tile[1]
    score = 0
    for other in hand:
        r, s = int(other[0]), other[1]
        if s != suit:
            continue
        if r == rank:
            score += 2
        elif suit != "z" and abs(r - rank) <= 2:
            score += 1
    return score


def decide(view: dict) -> str:
    """The action name to play in one ``decide`` view."""
    legal = view["legal"]
    if "win" in legal:
        return "win"
    discards = [a for a in legal if a.startswith("discard:")]
    if not discards:
        return "pass" if "pass" in legal else legal[0]
    hand = view["hand"]

    def badness(action: str) -> tuple:
        tile = action.split(":")[1]
        rank, suit = int(tile[0]), tile[1]
        edge = 0 if suit == "z" else min(rank - 1, 9 - rank)
        return (neighbours(tile, hand) - 1, edge, tile)

    return min(discards, key=badness)


def main() -> None:
    fail = sys.argv[sys.argv.index("--fail") + 1] if "--fail" in sys.argv else None
    decisions = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            reply = {"name": "simple_bot" + (f"-{fail}" if fail else "")}
        else:
            decisions += 1
            action = decide(msg)
            if fail and decisions == 5:
                if fail == "crash":
                    sys.exit(3)
                if fail == "hang":
                    sys.stdin.read()  # never answers
                if fail == "illegal":
                    action = "kongtile:1"
            reply = {"action": action}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
