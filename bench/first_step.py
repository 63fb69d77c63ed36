"""Start-up cost of the compiled code: the first (cold) and later (warm) first step of ``mjenv.env()``.

Each start is a fresh Python process that imports mjenv, builds ``mjenv.env(variant)``, resets it, reads
``last()``, plays one legal action and reads ``last()`` again: everything a user's first step pays.  The
processes point ``NUMBA_CACHE_DIR`` at one new temporary folder, so the first start finds nothing cached on this
machine (*cold*, as right after an install: it loads the precompiled code shipped with the package,
:mod:`mjenv.engine.jitcache`, or compiles where that does not apply) and the later ones load from that folder
(*warm*).  ``--no-precompiled`` ignores the shipped code (``MJENV_PRECOMPILED=0``), so the cold start compiles
everything it needs, as on a machine the shipped code does not serve.  Figures per phase in CPU seconds of the
child process (``time.process_time``; the machine is shared, so wall seconds are printed too), pinned to one
core.  Usage::

    python bench/first_step.py                       # kawuxing3, one cold and three warm starts
    python bench/first_step.py --variant gejiu --warm 5
    python bench/first_step.py --no-precompiled      # what compiling costs
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

_CHILD = r"""
import json, time
t = [(time.process_time(), time.perf_counter())]
import mjenv
t.append((time.process_time(), time.perf_counter()))
env = mjenv.env(VARIANT)
t.append((time.process_time(), time.perf_counter()))
env.reset(seed=0)
obs = env.last()[0]
t.append((time.process_time(), time.perf_counter()))
import numpy as np
env.step(int(np.flatnonzero(obs["action_mask"])[0]))
env.last()
t.append((time.process_time(), time.perf_counter()))
names = ["import mjenv", "mjenv.env()", "reset + last()", "first step + last()"]
print(json.dumps({n: [t[i + 1][0] - t[i][0], t[i + 1][1] - t[i][1]] for i, n in enumerate(names)}))
"""


def start(variant: str, cache_dir: str, core: int | None, precompiled: bool = True) -> dict:
    """One fresh process's phase times ``{phase: [cpu_s, wall_s]}`` with the local cache in ``cache_dir``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, MJENV_PRECOMPILED="1" if precompiled else "0")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    pre = (lambda: os.sched_setaffinity(0, {core})) if core is not None and hasattr(os, "sched_setaffinity") else None
    code = _CHILD.replace("VARIANT", repr(variant))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, preexec_fn=pre)
    if proc.returncode != 0:
        raise SystemExit(f"start failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Print one cold and ``--warm`` warm starts, phase by phase, and a markdown table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--variant", default="kawuxing3")
    p.add_argument("--warm", type=int, default=3, help="warm starts after the cold one")
    p.add_argument("--core", type=int, default=0, help="CPU core to pin the starts to (-1: no pinning)")
    p.add_argument("--no-precompiled", action="store_true", help="ignore the shipped precompiled code")
    ns = p.parse_args(argv)
    if ns.warm < 1:
        p.error("--warm must be at least 1")
    core = None if ns.core < 0 else ns.core
    with tempfile.TemporaryDirectory(prefix="mjenv-numba-bench-") as cache:
        pre = not ns.no_precompiled
        runs = [("cold", start(ns.variant, cache, core, pre))]
        runs += [(f"warm {i + 1}", start(ns.variant, cache, core, pre)) for i in range(ns.warm)]
    phases = list(runs[0][1])
    what = "shipped precompiled code ignored" if ns.no_precompiled else "shipped precompiled code used"
    print(f"# mjenv first step: {ns.variant} ({what}), CPU s (wall s) per phase, load average {os.getloadavg()[0]:.2f}")
    print("| start | " + " | ".join(phases) + " | total |")
    print("|---|" + "---:|" * (len(phases) + 1))
    for name, res in runs:
        cells = [f"{res[ph][0]:.2f} ({res[ph][1]:.2f})" for ph in phases]
        cpu = sum(v[0] for v in res.values())
        wall = sum(v[1] for v in res.values())
        print(f"| {name} | " + " | ".join(cells) + f" | {cpu:.2f} ({wall:.2f}) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
