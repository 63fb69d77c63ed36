"""The aims of the game reviewer (``mjenv review``, mjenv/review.py), measured; docs/review.md quotes the output.

* ``cost``: CPU seconds to review one seat of one hand at the default budget (128 worlds, 3 candidates per
  shortlist), over ``--hands`` hands of ``heuristic-flush`` in every seat, one seat per hand in turn
  (``time.process_time`` around :func:`mjenv.review.review_hands`, after a warm-up hand).  Aim: ≤ 1 CPU s.
* ``random``: hands of ``random`` in seat A against ``heuristic`` in the others (any variant), every seat
  reviewed; each player's mean estimated loss per decision with its 95 % interval over decisions.  Aim: random's
  mean larger, the intervals apart.
* ``kong``: the constructed decision of tests/test_review.py (the dealer gives a concealed kong up by discarding a
  5z: its kong money, 4, is lost; both keep the hand ready), reviewed at the default budget with several seeds,
  against the gap measured on ``--ref-worlds`` other worlds.  Aim: the loss interval holds that amount.

Usage::

    python bench/review.py cost --hands 20
    python bench/review.py random --variant kawuxing3 --hands 30
    python bench/review.py kong --seeds 20
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from agents import make_agent
from agents.players.search import SearchAgent
from agents.tournament.recording import write_replay_hands
from mjenv.encoding import actions as A
from mjenv.engine.core import Engine
from mjenv.replay import read_replay, write_replay
from mjenv.review import review_hands
from mjenv.tiles import parse_tiles


def play_hands(path: Path, variant: str, specs: list[str], seed: int, hands: int) -> list:
    """``hands`` fresh deals (walls ``seed``, ``seed + 1`` ...) played by ``specs`` (one agent per seat), written
    to ``path`` and read back."""
    return write_replay_hands(path, variant, specs, seed, hands)


def cost(args, tmp: Path) -> None:
    n = 3 if args.variant == "kawuxing3" else 4
    hands = play_hands(tmp / "cost.jsonl", args.variant, ["heuristic-flush"] * n, args.seed, args.hands + 1)
    review_hands(hands[:1], seats=[0])  # warm-up: compiles and loads everything
    secs, decs = [], []
    for i, rep in enumerate(hands[1:]):
        t = time.process_time()
        r = review_hands([rep], seats=[i % n])
        secs.append(time.process_time() - t)
        decs.append(len(r["decisions"]))
    secs = np.array(secs)
    print(f"{args.variant}: one seat of one hand at the default budget, {len(secs)} hands: CPU s mean {secs.mean():.3f}, "
          f"median {np.median(secs):.3f}, max {secs.max():.3f}; {np.mean(decs):.1f} decisions reviewed per seat-hand "
          f"({1e3 * secs.sum() / max(1, sum(decs)):.1f} ms each)")


def random_vs_heuristic(args, tmp: Path) -> None:
    n = 3 if args.variant == "kawuxing3" else 4
    specs = ["random"] + ["heuristic"] * (n - 1)
    hands = play_hands(tmp / "rh.jsonl", args.variant, specs, args.seed, args.hands)
    t = time.process_time()
    r = review_hands(hands, worlds=args.worlds, seed=args.seed)
    print(f"{args.variant}: random in seat A against heuristic, {args.hands} hands (walls {args.seed}..{args.seed + args.hands - 1}), "
          f"{args.worlds} worlds, {time.process_time() - t:.1f} CPU s")
    for s in r["seats"]:
        print(f"  seat {'ABCD'[s['seat']]} ({specs[s['seat']]}): {s['decisions']} decisions, mean loss {s['mean_loss']:.3f} "
              f"[{s['mean_loss_ci95'][0]:.3f}, {s['mean_loss_ci95'][1]:.3f}], {s['loss_per_hand']:.2f} per hand, "
              f"agrees with the search {100 * s['agreement']:.0f}%")


def kong(args, tmp: Path) -> None:
    eng = Engine("kawuxing3", 1, record_events=True)
    want = parse_tiles("5555z123p456p789p1s")
    rest = list(eng.tiles)
    for t in want:
        rest.remove(t)
    rest = list(np.random.default_rng(0).permutation(rest))
    wall = want[:13] + rest[:26] + [want[13]] + rest[26:]
    eng.reset(walls=[wall])
    kong_a, discard = A.KONG_SELF + parse_tiles("5z")[0], parse_tiles("5z")[0]
    ref = SearchAgent("kawuxing3").evaluate(eng, 0, [discard, kong_a], worlds=args.ref_worlds, seed=987654)
    d = ref[1] - ref[0]
    gap, se = float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d)))
    eng.step(np.array([discard]))
    fast = make_agent("fast").player
    acts = np.zeros(1, np.int64)
    while not eng.done[0]:
        fast.decide(eng, out=acts)
        eng.step(acts)
    write_replay(tmp / "kong.jsonl", eng, 0)
    hands = read_replay(tmp / "kong.jsonl")
    holds_money = holds_gap = 0
    widths = []
    for seed in range(args.seeds):
        first = review_hands(hands, seats=[0], seed=seed)["decisions"][0]
        lo, hi = first["ci95"]
        holds_money += lo <= 4 <= hi
        holds_gap += lo <= gap <= hi
        widths.append(hi - lo)
    print(f"kong given up (kong money 4): gap on {args.ref_worlds} other worlds {gap:.3f} ± {1.96 * se:.3f}; the review's "
          f"95 % interval (128 worlds) holds 4 for {holds_money} of {args.seeds} seeds and the gap for {holds_gap}; "
          f"mean width {np.mean(widths):.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=("cost", "random", "kong"))
    p.add_argument("--variant", default="kawuxing3")
    p.add_argument("--hands", type=int, default=20)
    p.add_argument("--worlds", type=int, default=128)
    p.add_argument("--seed", type=int, default=1000)
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--ref-worlds", type=int, default=4096)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        {"cost": cost, "random": random_vs_heuristic, "kong": kong}[args.what](args, Path(d))


if __name__ == "__main__":
    main()
