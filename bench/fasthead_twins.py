"""How often the compiled improved player (``agents/players/fasthead.py``) plays ``PolicyAgent``'s move on kawuxing3-default.pt.

Runs :func:`tests.test_fasthead.agreement` (``PolicyAgent`` self-play, 32 tables, walls of ``--seed``; the decisions
with two or more legal actions) and prints the agreement, the floor ``tests/test_fasthead.py`` asserts, the
differences by kind (``advisor``: the compiled and the Python ``heuristic-flush`` choices tie exactly, so the
shortlists differ; ``network``: the advised network does not play the advisor's choice; ``tau``: a predicted gain
within float32 rounding of ``tau``), how often the compiled player departs, and the CPU time::

    python bench/fasthead_twins.py --decisions 4000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> None:
    """Print the agreement (one markdown row)."""
    import torch

    from agents.players.fasthead import FastHeadPlayer
    from tests.test_fasthead import CKPT, FLOOR, agreement

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--decisions", type=int, default=4000, help="decisions with >= 2 legal actions")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    if args.decisions < 1:
        p.error(f"--decisions must be >= 1, got {args.decisions}")
    torch.set_num_threads(1)
    t = time.process_time()
    player = FastHeadPlayer(CKPT)
    same, n, kinds = agreement(player, args.decisions, seed=args.seed)
    made, read, departed = (int(x) for x in player.stats)
    extra = f" (unexplained: {kinds['first unexplained']})" if "unexplained" in kinds else ""
    print("| decisions | same move | agreement | floor (test) | advisor | network | tau | compiled departs | CPU s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {n:,} | {same:,} | {100 * same / n:.2f} % | {100 * FLOOR:.1f} % | {kinds.get('advisor', 0)} | "
          f"{kinds.get('network', 0)} | {kinds.get('tau', 0)} | {100 * departed / max(made, 1):.2f} % of its decisions | "
          f"{time.process_time() - t:.1f} |{extra}")


if __name__ == "__main__":
    main()
