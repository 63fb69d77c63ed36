"""The long, randomized fuzz run: the property tests with fresh random examples and many more of them.

The README's test command runs every hypothesis test derandomized (fixed examples, ``tests/conftest.py``), so it
gives the same verdict everywhere.  This script is the hunt for new failures::

    python tests/fuzz_long.py                      # tests/test_fuzz.py, 20x the examples, a random seed (printed)
    python tests/fuzz_long.py --scale 5 --seed 7   # fewer examples, a given seed (to reproduce a run)
    python tests/fuzz_long.py --all                # every test file that uses hypothesis
    python tests/fuzz_long.py -- -x -n 2           # anything after -- goes to pytest

It sets ``MJENV_HYPOTHESIS_PROFILE=randomized`` and ``MJENV_FUZZ_SCALE`` (which multiplies the example counts of
``tests/test_fuzz.py``), passes ``--hypothesis-seed``, and exits with pytest's status.  A failure prints the
falsifying example; rerun with the same ``--seed`` to see it again.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def property_test_files() -> list[str]:
    """The test files that use hypothesis, relative to the repository root."""
    files = sorted((ROOT / "tests").glob("test_*.py"))
    return [str(p.relative_to(ROOT)) for p in files if "from hypothesis import" in p.read_text(encoding="utf-8")]


def main(argv: list[str] | None = None) -> int:
    """Run the randomized fuzz tests; returns pytest's exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(prog="python tests/fuzz_long.py", description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=20.0, help="multiplier of test_fuzz.py's example counts (20)")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: a random one, printed)")
    parser.add_argument("--all", action="store_true", help="every test file that uses hypothesis, not only test_fuzz.py")
    args = parser.parse_args(argv)
    if not args.scale > 0:
        parser.error(f"--scale must be > 0, got {args.scale}")
    seed = random.SystemRandom().randrange(2**32) if args.seed is None else args.seed
    files = property_test_files() if args.all else ["tests/test_fuzz.py"]
    env = {**os.environ, "MJENV_HYPOTHESIS_PROFILE": "randomized", "MJENV_FUZZ_SCALE": str(args.scale)}
    cmd = [sys.executable, "-m", "pytest", *files, f"--hypothesis-seed={seed}", *extra]
    print(f"fuzz_long: seed {seed}, scale {args.scale:g}, {len(files)} file(s); reproduce with --seed {seed}", flush=True)
    return subprocess.call(cmd, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
