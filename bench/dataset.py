"""Dataset writing speed: CPU seconds per decision of ``mjenv dataset`` with the compiled heuristic (``fast``) and,
as the peer in the same run, the Python ``heuristic``; prints decisions, CPU seconds and the ratio.

    python bench/dataset.py                     # 5,000 walls of fast, 200 of heuristic
    python bench/dataset.py --fast-walls 48500  # the 1 M-decision figure of docs/dataset.md
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from agents.tournament.recording import write_from_play


def measure(agent: str, walls: int, folder: Path) -> tuple[int, float, float]:
    """(decisions, CPU seconds, wall seconds) of writing ``walls`` walls of ``agent`` in every seat."""
    cpu, start = time.process_time(), time.perf_counter()
    meta = write_from_play(folder, [agent], walls=walls, seed=0)
    return meta["decisions"], time.process_time() - cpu, time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fast-walls", type=int, default=5000)
    p.add_argument("--heuristic-walls", type=int, default=200)
    args = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="mjenv-bench-dataset-"))
    try:
        write_from_play(root / "warm", ["fast"], walls=2)  # compile outside the measurement
        write_from_play(root / "warm-h", ["heuristic"], walls=2)
        rows = []
        for agent, walls in (("fast", args.fast_walls), ("heuristic", args.heuristic_walls)):
            n, cpu, wall = measure(agent, walls, root / agent)
            rows.append((agent, walls, n, cpu, wall))
            print(f"{agent:<10} {walls:>6} walls {n:>9,} decisions  {cpu:7.1f} CPU s  {wall:7.1f} s  "
                  f"{1e6 * cpu / n:6.1f} µs CPU per decision  ({n / cpu:,.0f} decisions per CPU s)")
        (_, _, nf, cf, _), (_, _, nh, ch, _) = rows
        print(f"fast writes {(ch / nh) / (cf / nf):.1f}x more decisions per CPU second than heuristic; "
              f"1 M decisions of fast: {1e6 * cf / nf:.0f} CPU s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
