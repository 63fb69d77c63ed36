"""The agents package's rooms: every module is named in the docstrings and the README's layout, and none is over
900 lines (issue 28)."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import agents

ROOT = Path(agents.__file__).resolve().parent
ROOMS = ("players", "training", "tournament")


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages([str(ROOT)], "agents.") if not m.ispkg)


def test_every_module_is_listed_in_the_package_docstrings():
    doc = agents.__doc__
    for name in _modules():
        room = name.split(".")[1]
        assert name in doc or f"~{name}" in doc, f"{name} missing from agents/__init__.py's docstring"
        if room in ROOMS:
            pkg = __import__(f"agents.{room}", fromlist=["_"])
            assert f"~{name}" in pkg.__doc__, f"{name} missing from agents/{room}/__init__.py's docstring"


def test_readme_layout_names_every_room_and_module():
    text = (ROOT.parent / "README.md").read_text(encoding="utf-8")
    layout = text[text.index("Layout:"):]
    layout = layout[: layout.index("```", layout.index("```") + 3)]
    for room in ROOMS:
        assert f"agents/{room}/" in layout
    for name in _modules():
        assert name.split(".")[-1] in layout, f"{name} missing from the README's layout"


def test_no_agents_module_over_900_lines():
    for path in ROOT.rglob("*.py"):
        n = len(path.read_text(encoding="utf-8").splitlines())
        assert n <= 900, f"{path.relative_to(ROOT.parent)} has {n} lines"
