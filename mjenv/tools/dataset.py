"""The ``mjenv dataset`` command line: agents playing seeded walls (:func:`agents.tournament.recording.write_from_play`)
or replay files re-simulated (:func:`mjenv.dataset.write_from_replays`), every decision written in the
``mjenv-dataset-v1`` format of :mod:`mjenv.dataset`.  A top-floor tool: it plays agents.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from mjenv.dataset import DatasetError, write_from_replays


def add_dataset_subcommand(subparsers) -> argparse.ArgumentParser:
    """Add ``dataset`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "dataset", help="write a dataset of decisions (observation, mask, action, reward, ...) for offline learning",
        description="Play agents on seeded walls (or re-simulate replay files) and write every decision to a "
                    "sharded mjenv-dataset-v1 folder (docs/dataset.md).",
    )
    p.add_argument("--agents", nargs="+", default=["heuristic"], metavar="AGENT",
                   help="agents by seat (heuristic, random, a checkpoint *.pt, cmd:COMMAND); fewer than the seats repeat")
    p.add_argument("--walls", type=int, default=100, help="walls to play (each once, or under every seating)")
    p.add_argument("--out", required=True, help="dataset folder to create (must be new or empty)")
    p.add_argument("--from-replays", nargs="+", default=None, metavar="FILE",
                   help="re-simulate these mjenv-replay-v1 files instead of playing")
    p.add_argument("--variant", default="kawuxing3")
    p.add_argument("--ruleset", default=None)
    p.add_argument("--preset", default=None)
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--seed", type=int, default=0, help="wall seed: wall w is the engine's seeded wall (seed, w)")
    p.add_argument("--first-wall", type=int, default=0)
    p.add_argument("--all-seatings", action="store_true", help="replay every wall under every seating of the agents")
    p.add_argument("--oracle", action="store_true", help="also store the mjenv-oracle-v1 rows (every hand, the wall)")
    p.add_argument("--shard-size", type=int, default=16384, help="decisions per shard file (default 16384)")
    p.add_argument("--batch-size", type=int, default=256, help="tables played at once")
    p.set_defaults(func=dataset_main)
    return p


def dataset_main(args: argparse.Namespace) -> int:
    """Run ``mjenv dataset``; bad arguments raise ``ValueError`` naming the flag (exit 2 in the CLI)."""
    from mjenv.rules import load_rules
    from mjenv.rules.options import parse_option_assignments

    for flag, value, low in (("--walls", args.walls, 1), ("--seed", args.seed, 0), ("--first-wall", args.first_wall, 0),
                             ("--shard-size", args.shard_size, 1), ("--batch-size", args.batch_size, 1)):
        if value < low:
            raise DatasetError(f"{flag} must be >= {low}, got {value}")
    start, cpu = time.perf_counter(), time.process_time()
    if args.from_replays:
        meta = write_from_replays(args.out, args.from_replays, oracle=args.oracle, shard_size=args.shard_size)
    else:
        rules = load_rules(args.variant, args.ruleset, args.preset, parse_option_assignments(args.option))  # once
        try:
            from agents.tournament.recording import write_from_play

            meta = write_from_play(args.out, args.agents, rules, walls=args.walls, seed=args.seed,
                                   first_wall=args.first_wall, all_seatings=args.all_seatings, oracle=args.oracle,
                                   shard_size=args.shard_size, batch_size=args.batch_size)
        except ModuleNotFoundError as exc:
            raise DatasetError(f"--agents: needs an optional dependency ({exc})") from None
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    size = sum((Path(args.out) / s["file"]).stat().st_size for s in meta["shards"])
    print(f"wrote {meta['decisions']:,} decisions of {meta['hands']:,} hands to {args.out} in {len(meta['shards'])} "
          f"shard(s), {size / 1e6:.1f} MB, in {took:.1f} s ({cpu:.1f} CPU s; {meta['decisions'] / max(took, 1e-9):,.0f} "
          f"decisions/s)")
    return 0
