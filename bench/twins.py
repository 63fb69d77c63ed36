"""How often the compiled player (``fast``) plays ``heuristic-flush``'s move, per variant, and why it differs.

Runs :func:`tests.test_twins.agreement` (``heuristic-flush`` self-play, 32 tables, walls of ``--seed``; the decisions
with two or more legal actions) and prints per variant the agreement, the floor ``tests/test_twins.py`` asserts,
and the differences by kind (``tie``: an exact tie of the ranking both compute, broken in float32 by the Python
player; ``exposure``: Diedaohu's deal-in exposure model, which the compiled player leaves out)::

    python bench/twins.py --decisions 20000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> None:
    """Print the agreement table (markdown)."""
    from tests.test_twins import FLOORS, agreement

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--decisions", type=int, default=20000, help="decisions with >= 2 legal actions per variant")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--variants", nargs="+", default=sorted(FLOORS))
    args = p.parse_args(argv)
    if args.decisions < 1:
        p.error(f"--decisions must be >= 1, got {args.decisions}")
    print("| variant | decisions | same move | agreement | floor (test) | ties | exposure | CPU s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for v in args.variants:
        t = time.process_time()
        same, n, kinds = agreement(v, args.decisions, seed=args.seed)
        extra = f" (unexplained: {kinds['first unexplained']})" if "unexplained" in kinds else ""
        print(f"| `{v}` | {n:,} | {same:,} | {100 * same / n:.2f} % | {100 * FLOORS[v]:.1f} % | {kinds.get('tie', 0)} "
              f"| {kinds.get('exposure', 0)} | {time.process_time() - t:.1f} |{extra}", flush=True)


if __name__ == "__main__":
    main()
