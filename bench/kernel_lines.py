"""Where the step kernel's time goes, by compiled function and by source line (a sampling profile with ``perf``).

The shipped compiled code carries no symbols or line tables, so ``perf`` alone sees anonymous memory.  This script
compiles the variant's game core in its own process with debug information (``NUMBA_DEBUGINFO=1``, the shipped store
off, an empty build cache: every compiled function's object code then stays in memory), plays
``Engine.random_step`` at B tables pinned to one core while ``perf record -e cpu-clock`` samples the process, and
maps every sampled address to the compiled function whose object holds it and, through that object's line table
(``objdump -d -l``), to a source line.  The debug build is optimised as the shipped one (numba's ``-O3``); lines of
inlined callees are attributed to the callee's own line.  Needs ``perf`` (Linux; ``kernel.perf_event_paranoid`` ≤ 2)
and ``objdump``; the compile takes a few CPU minutes.  Usage::

    python bench/kernel_lines.py                          # kawuxing3, B = 4096, 15 CPU s sampled
    python bench/kernel_lines.py --variant gejiu --top 60
"""

from __future__ import annotations

import argparse
import bisect
import collections
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def _objects(folder: str) -> list[tuple[int, int, list[int], list[str], str]]:
    """(start, end, instruction offsets, their source lines, function) of every compiled function's object code in
    memory, written to ``folder`` for objdump."""
    import numba

    out, seen = [], set()
    for o in gc.get_objects():
        if not isinstance(o, numba.core.registry.CPUDispatcher):
            continue
        for cres in list(o.overloads.values()):
            lib = cres.library
            if id(lib) in seen:
                continue
            seen.add(id(lib))
            try:
                obj = lib._get_compiled_object()
                addr = lib.get_pointer_to_function(cres.fndesc.llvm_func_name)
            except Exception:  # noqa: BLE001 - loaded from a cache: no object in memory (not this build's code)
                continue
            path = os.path.join(folder, f"{len(seen)}.o")
            with open(path, "wb") as f:
                f.write(obj)
            sym = None
            for line in subprocess.run(["nm", path], capture_output=True, text=True).stdout.splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[2] == cres.fndesc.llvm_func_name:
                    sym = int(parts[0], 16)
            dis = subprocess.run(["objdump", "-d", "-l", "--section=.ltext", path], capture_output=True, text=True).stdout
            offs, lines, cur = [], [], "?"
            for line in dis.splitlines():
                if line.startswith("/"):
                    cur = line.strip().split(" ")[0]
                    continue
                m = re.match(r"\s+([0-9a-f]+):\t", line)
                if m:
                    offs.append(int(m.group(1), 16))
                    lines.append(cur)
            if sym is None or not offs:
                continue
            base = addr - sym
            out.append((base, base + offs[-1] + 16, offs, lines, o.py_func.__qualname__))
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", default="kawuxing3")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--seconds", type=float, default=15.0, help="CPU seconds sampled")
    ap.add_argument("--core", type=int, default=1, help="the core to pin to (-1: no pinning)")
    ap.add_argument("--top", type=int, default=40, help="source lines listed")
    args = ap.parse_args(argv)
    for tool in ("perf", "objdump", "nm"):
        if shutil.which(tool) is None:
            ap.error(f"{tool} is not installed")
    if args.batch < 1 or args.seconds <= 0:
        ap.error("--batch must be >= 1 and --seconds > 0")
    work = tempfile.mkdtemp(prefix="mjenv-kernel-lines-")
    os.environ.update(NUMBA_DEBUGINFO="1", MJENV_PRECOMPILED="0", MJENV_BUILD_CACHE=os.path.join(work, "cache"))
    if args.core >= 0:
        os.sched_setaffinity(0, {args.core})
    import warnings

    warnings.filterwarnings("ignore", message=".*Debug line information.*")
    from mjenv.engine.core import Engine
    from mjenv.engine.sampling import TableSampler

    print(f"compiling {args.variant} with debug information…", file=sys.stderr, flush=True)
    eng = Engine(args.variant, args.batch, record_events=False, threads=1)
    eng.reset(seed=0)
    sampler = TableSampler(0, args.batch)
    for _ in range(300):  # compiled, and the tables spread over their hands
        eng.random_step(sampler, seed=0)
    data = os.path.join(work, "perf.data")
    perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "4000", "-p", str(os.getpid()), "-o", data],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    time.sleep(1.0)
    t0 = time.process_time()
    while time.process_time() - t0 < args.seconds:
        eng.random_step(sampler, seed=0)
    perf.send_signal(2)
    perf.wait()
    objects = _objects(work)
    starts = [o[0] for o in objects]
    ips = [int(x, 16) for x in subprocess.run(["perf", "script", "-F", "ip", "-i", data], capture_output=True,
                                              text=True).stdout.split()]  # fmt: skip
    if not ips:
        raise SystemExit("perf recorded no samples (kernel.perf_event_paranoid?)")
    by_fn, by_file, by_line = collections.Counter(), collections.Counter(), collections.Counter()
    for ip in ips:
        i = bisect.bisect_right(starts, ip) - 1
        if i < 0 or ip >= objects[i][1]:
            continue
        base, _, offs, lines, fn = objects[i]
        j = bisect.bisect_right(offs, ip - base) - 1
        line = lines[j] if j >= 0 else "?"
        by_fn[fn] += 1
        by_file[line.rsplit(":", 1)[0].rsplit("/", 1)[-1]] += 1
        by_line[os.path.relpath(line) if line.startswith(os.getcwd()) else line] += 1
    n = len(ips)
    print(f"{args.variant}, B = {args.batch}: {n} samples, {100 * sum(by_fn.values()) / n:.1f} % in compiled code\n")
    for title, counts, top in (("compiled function (with what is inlined into it)", by_fn, 20),
                               ("source file", by_file, 15), ("source line", by_line, args.top)):  # fmt: skip
        print(f"| {title} | share of the samples |\n|---|---:|")
        for name, c in counts.most_common(top):
            print(f"| {name} | {100 * c / n:.1f} % |")
        print()
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
