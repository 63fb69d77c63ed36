"""The README's test command works on a fresh machine, and CI runs exactly that command first.

A test module that imports a package none of the README's extras install passes wherever that package happens to
be installed (CI used to install the ``rllib`` extra, which brought scipy) and fails on a new user's machine.  So
every import in ``tests/`` must be the standard library, this repository, or a distribution that the core
dependencies or the extras named in the README's command install (a test that needs more skips with
``pytest.importorskip``, which is not an import statement).  ``.ci/run`` must install exactly those extras and run
exactly that pytest command before it installs anything else.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parent.parent

# Distribution name -> the top-level module it installs, where they differ.
MODULE_OF = {"pytest-xdist": "xdist", "stable-baselines3": "stable_baselines3", "sb3-contrib": "sb3_contrib"}
# Modules a distribution of the extras brings along (its own dependencies) that tests may import.
BROUGHT = {"pytest": {"_pytest", "pluggy"}, "torch": {"torchgen"}}


def readme_command() -> tuple[list[str], str]:
    """``(extras, pytest command)`` of the README's test command line."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    m = re.search(r'^pip install -e "\.\[([a-z,]+)\]" && (python -m pytest[^\n]*)$', text, re.M)
    assert m, "the README has no 'pip install -e \".[...]\" && python -m pytest ...' line"
    return m.group(1).split(","), m.group(2).strip()


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~; ]", requirement.strip(), maxsplit=1)[0].lower()


def provided_modules(extras: list[str]) -> set[str]:
    """Top-level modules of the core dependencies and of ``extras`` (from pyproject.toml)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = list(project["dependencies"])
    for extra in extras:
        reqs += project["optional-dependencies"][extra]
    mods = set()
    for req in reqs:
        name = _name(req)
        mods.add(MODULE_OF.get(name, name.replace("-", "_")))
        mods |= BROUGHT.get(name, set())
    return mods


def test_tests_import_only_what_the_readme_installs():
    extras, _ = readme_command()
    allowed = provided_modules(extras) | set(sys.stdlib_module_names)
    allowed |= {p.stem if p.suffix == ".py" else p.name for p in REPO.iterdir() if p.suffix == ".py" or p.is_dir()}
    missing = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top not in allowed and top != "tomli":  # tomli: the Python < 3.11 fallback of tomllib
                    missing.append(f"{path.relative_to(REPO)}:{node.lineno}: {name}")
    assert not missing, f"imports no extra of the README's command ({', '.join(extras)}) installs: {missing}"


def test_ci_runs_the_readme_command_before_anything_else():
    extras, command = readme_command()
    lines = [ln.strip() for ln in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
             if ln.strip() and not ln.strip().startswith("#")]
    installs = [i for i, ln in enumerate(lines) if "pip install" in ln]
    runs = [i for i, ln in enumerate(lines) if "-m pytest" in ln]
    assert installs and runs and installs[0] < runs[0]
    first = re.search(r'-e "\.\[([a-z,]+)\]"', lines[installs[0]])
    assert first and first.group(1).split(",") == extras, lines[installs[0]]
    assert lines[runs[0]].replace("python3 ", "python ") == command
    assert all(i > runs[0] for i in installs[1:]), "another install before the README's command ran"
