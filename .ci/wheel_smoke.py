"""Wheel smoke test: build the wheel, install it into a fresh venv and use it from a folder outside the checkout.

This script owns the check that a normal (non-editable) install works on its own: every file the library
reads at run time (ruleset/preset TOMLs, the shipped checkpoint) must be inside the wheel.  It

1. copies the checkout's source files (not ``.git``, ``build/``, caches) to a temporary folder, so that stale
   ``build/`` contents can never leak into the wheel, and runs ``pip wheel . --no-deps -w DIR`` there;
2. creates a venv with ``--system-site-packages`` (to reuse numpy, torch ... already installed) and installs
   the wheel into it with ``--no-deps --force-reinstall``;
3. from an empty folder outside the checkout, with ``PYTHONPATH`` and ``$MJENV_RULES_DIR`` cleared, checks that
   ``mjenv`` is imported from the venv (not the checkout), creates an env of every variant (their rules load
   from the wheel; only Kawuxing-3p is dealt, so only its compiled entry point is built: the test suite deals
   and plays every family, and compiling all four again here cost ≈ 3 more CPU minutes), runs ``mjenv score``
   and ``mjenv rules``, plays one hand into a replay file, verifies it with ``mjenv replay --verify`` and turns it
   into a page with ``mjenv replay --html``, plays a hand with ``mjenv play`` from scripted stdin, and
   loads the shipped checkpoint when torch is available.

Any failure prints the failing command with its output and exits 1.  Run by ``.ci/run``; the test suite runs
it when ``MJENV_WHEEL_TEST=1`` (``tests/test_packaging.py``).  Usage: ``python .ci/wheel_smoke.py [--keep]``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_SKIP = shutil.ignore_patterns(
    ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", "runs", ".venv", "*.pyc"
)

# run inside the venv from the outside folder: the env of every variant, one hand written as a replay
_PLAY = r"""
import sys
from pathlib import Path
import numpy as np
import mjenv

venv = Path(sys.argv[1]).resolve()
where = Path(mjenv.__file__).resolve()
assert venv in where.parents, f"mjenv was imported from {where}, not from the wheel installed in {venv}"
for variant in mjenv.VARIANTS:  # every variant's rules and presets load from the wheel
    e = mjenv.env(variant=variant)
    e.close()
e = mjenv.env(record_replay="game.jsonl")
e.reset(seed=3)
rng = np.random.default_rng(0)
for agent in e.agent_iter():
    obs, reward, terminated, truncated, info = e.last()
    if terminated or truncated:
        e.step(None)
        continue
    e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
print("envs of", len(mjenv.VARIANTS), "variants ok; one hand written to game.jsonl")
"""

_CHECKPOINT = r"""
import importlib.util, sys
if importlib.util.find_spec("torch") is None:
    print("torch not installed: checkpoint check skipped")
    sys.exit(0)
import agents
from pathlib import Path
venv = Path(sys.argv[1]).resolve()
shipped = sorted(agents.CHECKPOINT_DIR.glob("*.pt"))
assert shipped, f"no checkpoint shipped in {agents.CHECKPOINT_DIR}"
assert venv in shipped[0].resolve().parents, f"checkpoint {shipped[0]} is not the wheel's"
print("shipped checkpoints:", ", ".join(p.name for p in shipped))
"""


class SmokeFailure(Exception):
    """A step of the smoke test failed; the message holds the command and its output."""


def _run(cmd: list[str], *, cwd: Path, env: dict[str, str], stdin: str | None = None) -> str:
    """Run ``cmd`` (``stdin``: text to feed it); its stdout, or :class:`SmokeFailure` with everything it printed."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, input=stdin)
    if proc.returncode != 0:
        raise SmokeFailure(
            f"command failed (exit {proc.returncode}) in {cwd}: {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"
        )
    return proc.stdout


def _clean_env() -> dict[str, str]:
    """The environment without anything that could point Python or mjenv back at the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MJENV_RULES_DIR", "PYTHONHOME")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def build_and_check(work: Path) -> list[str]:
    """Build, install and exercise the wheel under ``work``; returns one line per passed step."""
    env = _clean_env()
    done: list[str] = []
    src, wheels, venv, outside = work / "src", work / "wheels", work / "venv", work / "outside"
    shutil.copytree(REPO, src, ignore=_SKIP)
    _run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--quiet", "-w", str(wheels)], cwd=src, env=env)
    (wheel,) = wheels.glob("mjenv-*.whl")
    done.append(f"built {wheel.name}")

    _run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], cwd=work, env=env)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python, console = str(bindir / "python"), str(bindir / "mjenv")
    pip_install = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run(pip_install + ["--no-deps", "--force-reinstall", str(wheel)], cwd=work, env=env)
    done.append("installed it into a fresh venv")

    outside.mkdir()
    _run([python, "-c", "import mjenv; mjenv.env()"], cwd=outside, env=env)
    out = _run([python, "-c", _PLAY, str(venv)], cwd=outside, env=env)
    done.append(out.strip())
    out = _run([console, "score", "24p678s789s55z [P 333p] +3p discard", "--json"], cwd=outside, env=env)
    if '"legal": true' not in out:
        raise SmokeFailure(f"mjenv score gave an unexpected answer:\n{out}")
    done.append("mjenv score ok")
    out = _run([console, "rules", "--variant", "gejiu"], cwd=outside, env=env)
    if "gejiu_combine" not in out or "gejiu002" not in out:
        raise SmokeFailure(f"mjenv rules does not list the Gejiu options and ruleset:\n{out}")
    done.append("mjenv rules ok")
    out = _run([console, "replay", "--verify", "game.jsonl"], cwd=outside, env=env)
    if "OK" not in out:
        raise SmokeFailure(f"mjenv replay --verify did not verify the hand:\n{out}")
    done.append("mjenv replay --verify: " + out.strip())
    _run([console, "replay", "game.jsonl", "--html", "game.html"], cwd=outside, env=env)
    page = (outside / "game.html").read_text(encoding="utf-8")
    if "const DATA = {" not in page or '"frames"' not in page:
        raise SmokeFailure("mjenv replay --html did not write the page with its data (viewer_template.html missing?)")
    done.append(f"mjenv replay --html: {len(page)} bytes")
    _run([console, "play", "--seed", "1", "--save", "played.jsonl"], cwd=outside, env=env, stdin="1\n" * 400)
    out = _run([console, "replay", "--verify", "played.jsonl"], cwd=outside, env=env)
    if "OK" not in out:
        raise SmokeFailure(f"the hand played with mjenv play does not verify:\n{out}")
    done.append("mjenv play (scripted stdin) + --verify ok")
    done.append(_run([python, "-c", _CHECKPOINT, str(venv)], cwd=outside, env=env).strip())
    return done


def main(argv: list[str] | None = None) -> int:
    """Run the smoke test in a temporary folder (kept with ``--keep``); 0 when every step passed."""
    keep = "--keep" in (argv if argv is not None else sys.argv[1:])
    work = Path(tempfile.mkdtemp(prefix="mjenv-wheel-"))
    try:
        for line in build_and_check(work):
            print(f"wheel smoke: {line}")
    except (SmokeFailure, ValueError) as e:
        print(f"wheel smoke: FAILED: {e}", file=sys.stderr)
        return 1
    finally:
        if keep:
            print(f"wheel smoke: work folder kept at {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("wheel smoke: all checks passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
