"""Tests of packaging: every data file the library reads at run time is declared as package data, and (when
``MJENV_WHEEL_TEST=1``) a wheel built from this checkout works from a folder outside it (``.ci/wheel_smoke.py``).
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mjenv.rules import options as O

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("mjenv", "agents")


def _package_data() -> dict[str, list[str]]:
    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["setuptools"]["package-data"]


def _data_files(package: str) -> list[str]:
    """Files of a package that are not Python sources, relative to the package folder."""
    root = REPO / package
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_every_data_file_of_the_packages_is_declared_package_data(package):
    patterns = _package_data().get(package, [])
    files = _data_files(package)
    undeclared = [f for f in files if not any(fnmatch.fnmatch(f, pat) for pat in patterns)]
    assert not undeclared, f"{package}: files missing from [tool.setuptools.package-data]: {undeclared}"


def test_the_rule_files_ship_inside_the_package():
    assert O.PACKAGED_RULES_DIR == REPO / "mjenv" / "rules" / "data"
    assert "rules/data/*.toml" in _package_data()["mjenv"]
    shipped = {p.stem for p in O.PACKAGED_RULES_DIR.glob("*.toml")}
    # every variant's default ruleset is among the shipped files
    assert {spec.default_ruleset for spec in O.VARIANTS.values()} <= shipped
    assert not (REPO / "configs" / "rules").exists(), "one copy of the rule files: mjenv/rules/data only"


def test_rules_load_from_any_working_directory(tmp_path, monkeypatch):
    monkeypatch.delenv(O.RULES_DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    for variant in O.VARIANTS:
        assert O.load_rules(variant) == O.load_ruleset(variant, O.VARIANTS[variant].default_ruleset)


@pytest.mark.skipif(os.environ.get("MJENV_WHEEL_TEST") != "1", reason="set MJENV_WHEEL_TEST=1 (about a minute)")
def test_the_built_wheel_works_outside_the_checkout():
    proc = subprocess.run([sys.executable, str(REPO / ".ci" / "wheel_smoke.py")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all checks passed" in proc.stdout
