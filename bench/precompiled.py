"""Engine speed with the shipped precompiled code against code compiled for this machine's CPU, finely interleaved.

The shipped store (``mjenv/_compiled``, :mod:`mjenv.tools.build_cache`) holds machine code built for portable
x86-64 targets; a machine that sets ``MJENV_PRECOMPILED=0`` compiles for its own CPU instead (*host*).  This
script measures what the portable code costs, configuration by configuration (the ``KIND[:B][:VARIANT]`` specs of
``bench/throughput.py``: ``engine``, ``match``, ``obs``, ``aec``), in **CPU time** (``time.process_time``) of
processes pinned to one core, one process per *mode*:

* ``shipped``: an empty local cache (``NUMBA_CACHE_DIR`` a new folder) and the store, as after an install, with
  ``MJENV_CACHE_LOG=1``: a process that had to compile anything fails the script (it would not be measuring the
  store);
* ``host``: ``MJENV_PRECOMPILED=0``, the code compiled for this CPU into a local cache (kept with
  ``--cache-root``);
* ``cpu:NAME``: as *host*, compiled for LLVM CPU ``NAME`` (``NUMBA_CPU_NAME``, e.g. ``generic``, ``x86-64-v3``):
  what a store built for that target would run, without building one.

On a shared, loaded machine the load drifts more than the effect looked for, and a fresh process per run adds its
own noise, so every mode's process is set up once (``bench/throughput.py --serve``: warmed up, the tables spread
over their hands) and then the processes take turns on the core: each repetition runs every mode for
``--seconds`` of CPU time back to back (the order rotating), the others waiting idle.  The figure reported is the
median over repetitions of the **paired ratio** mode ÷ host (above 1: faster than the host-tuned code), with its
quartiles.  Usage::

    python bench/precompiled.py                                  # the default configurations and modes
    python bench/precompiled.py engine:4096 aec --reps 40 --seconds 0.5 --core 1
    python bench/precompiled.py engine:4096 --modes shipped,host,cpu:x86-64-v3,cpu:x86-64-v4
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THROUGHPUT = os.path.join(ROOT, "bench", "throughput.py")
DEFAULT_RUNS = ("engine:4096", "engine:1", "obs:4096", "aec")


def _env(mode: str, cache: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, MJENV_CACHE_LOG="1")
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    for k in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES"):
        env.pop(k, None)
    env["MJENV_PRECOMPILED"] = "1" if mode == "shipped" else "0"
    if mode.startswith("cpu:"):
        env["NUMBA_CPU_NAME"], env["NUMBA_CPU_FEATURES"] = mode[4:], ""
    return env


class Server:
    """One ``throughput.py --serve`` process of one mode."""

    def __init__(self, spec: str, mode: str, core: int, cache: str):
        self.mode = mode
        cmd = [sys.executable, THROUGHPUT, "--serve", spec, "--core", str(core)]
        self.err = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(cmd, env=_env(mode, cache), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, text=True)
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            raise SystemExit(f"{spec} ({mode}) did not start:\n{self.stderr()[-3000:]}")
        misses = [x for x in self.stderr().splitlines() if "cache miss" in x]
        if mode == "shipped" and misses:
            self.close()
            raise SystemExit(f"{spec}: the shipped store did not serve it ({mode}); it compiled:\n" + "\n".join(misses))

    def stderr(self) -> str:
        self.err.seek(0)
        return self.err.read()

    def run(self, seconds: float) -> float:
        """Decisions per CPU second over ``seconds`` more of play."""
        self.proc.stdin.write(f"{seconds}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"{self.mode} stopped:\n{self.stderr()[-3000:]}")
        return json.loads(line)["decisions_per_s"]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=60)
        self.err.close()


def _quartiles(xs: list[float]) -> tuple[float, float]:
    if len(xs) < 4:
        return min(xs), max(xs)
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def main(argv: list[str] | None = None) -> int:
    """Start one process per mode for each configuration, alternate them and print a table of paired ratios."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="*", default=list(DEFAULT_RUNS), help="configurations (bench/throughput.py specs)")
    p.add_argument("--modes", default="shipped,host", help="comma-separated: shipped, host, cpu:NAME (host always runs)")
    p.add_argument("--reps", type=int, default=30, help="repetitions: every mode once each (default 30)")
    p.add_argument("--seconds", type=float, default=0.5, help="CPU seconds per mode and repetition (default 0.5)")
    p.add_argument("--core", type=int, default=1, help="CPU core every process is pinned to")
    p.add_argument("--cache-root", default=None,
                   help="folder for the local caches of the compiling modes (kept for the next run; default temporary)")
    ns = p.parse_args(argv)
    modes = list(dict.fromkeys(["host"] + [m.strip() for m in ns.modes.split(",") if m.strip()]))
    ok = lambda m: m in ("shipped", "host") or (m.startswith("cpu:") and len(m) > 4)  # noqa: E731
    if ns.reps < 1 or ns.seconds <= 0 or not all(ok(m) for m in modes):
        p.error("--reps must be >= 1, --seconds > 0 and --modes shipped, host or cpu:NAME")
    others = [m for m in modes if m != "host"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="mjenv-bench-") as tmp:
        root = ns.cache_root or tmp
        print(f"# modes ÷ host-tuned code: {ns.reps} repetitions of {ns.seconds:g} CPU s per mode, interleaved in "
              f"long-lived processes on core {ns.core}; load average {os.getloadavg()[0]:.2f} at the start", flush=True)
        for spec in ns.runs:
            servers = {}
            try:
                for m in modes:  # the shipped mode starts from an empty local cache; the others keep theirs
                    cache = os.path.join(tmp, f"empty-{spec}") if m == "shipped" else os.path.join(root, m.replace(":", "-"))
                    servers[m] = Server(spec, m, ns.core, cache)
                figures = {m: [] for m in modes}
                for rep in range(ns.reps):
                    order = modes[rep % len(modes):] + modes[: rep % len(modes)]
                    for m in order:
                        figures[m].append(servers[m].run(ns.seconds))
            finally:
                for s in servers.values():
                    s.close()
            line = "  ".join(
                f"{m} {statistics.median([a / b for a, b in zip(figures[m], figures['host'])]):.3f}" for m in others)
            print(f"{spec:>20}: host {statistics.median(figures['host']):>10,.0f} decisions/s; median ratios {line}",
                  flush=True)
            rows.append((spec, figures))
        print(f"\nload average {os.getloadavg()[0]:.2f} at the end\n")
    print("| configuration | mode | decisions/s (median) | paired ratio ÷ host: median | quartiles |")
    print("|---|---|---:|---:|---|")
    for spec, f in rows:
        print(f"| {spec} | host | {statistics.median(f['host']):,.0f} | 1 | |")
        for m in others:
            ratios = [a / b for a, b in zip(f[m], f["host"])]
            q1, q3 = _quartiles(ratios)
            print(f"| {spec} | {m} | {statistics.median(f[m]):,.0f} | **{statistics.median(ratios):.3f}** | "
                  f"{q1:.3f}–{q3:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
