"""The import floors of the project, read from the source with ``ast``: no module imports a higher floor, and no
import cycle exists (README, "Layout").

The floors, from the ground up:

0. ``mjenv.tiles``, ``mjenv._numba_setup`` and ``mjenv._version``;
1. rules: ``mjenv.rules`` (options, the variant registry, hand analysis, scorers) — imports no engine;
2. engine: ``mjenv.engine`` (the compiled core and its action layout);
3. encoding and the formats: ``mjenv.encoding``, ``mjenv.replay``, ``mjenv.render``, ``mjenv.packing``,
   ``mjenv.dataset`` (the dataset format and its reading);
4. envs: ``mjenv.envs`` and the package's front door ``mjenv/__init__.py``;
5. agents: ``agents``;
6. top-level tools: ``mjenv.cli``, ``mjenv.play``, ``mjenv.viewer``, ``mjenv.review``, ``mjenv.tools``,
   ``train.py``, ``evaluate.py``.

Every import counts: module-level and inside functions, ``from . import x`` (relative), and string literals passed
to ``importlib.import_module`` / ``__import__``.  Imports under ``if TYPE_CHECKING:`` count too (they name a
dependency all the same).  A module may import its own floor and any floor below; modules of one floor must not
import each other in a cycle.  No module of ``mjenv/`` or ``agents/`` (nor ``train.py``, ``evaluate.py``) is over
900 lines.  Run as a script (``python tests/test_layers.py``) to print every upward import and
cycle.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FLOOR_NAMES = ("tiles", "rules", "engine", "encoding and formats", "envs", "agents", "tools")

# module-name prefix -> floor; the longest matching prefix wins.  A module of mjenv/ or agents/ matched by no
# prefix but the bare package is an error (give it a floor here).
FLOORS = {
    "mjenv.tiles": 0,
    "mjenv._numba_setup": 0,
    "mjenv._version": 0,
    "mjenv.rules": 1,
    "mjenv.engine": 2,
    "mjenv.encoding": 3,
    "mjenv.replay": 3,
    "mjenv.render": 3,
    "mjenv.packing": 3,
    "mjenv.dataset": 3,  # the mjenv-dataset-v1 format and its reading (writing plays agents: agents floor and up)
    "mjenv.envs": 4,
    "mjenv": 4,  # the package's front door (mjenv/__init__.py): env(), vector_env() ...
    "agents": 5,
    "mjenv.cli": 6,
    "mjenv.play": 6,
    "mjenv.viewer": 6,
    "mjenv.review": 6,
    "mjenv.tools": 6,
    "train": 6,
    "evaluate": 6,
}


def module_name(path: Path, root: Path = ROOT) -> str:
    """Dotted module name of the file ``path`` under ``root`` (``pkg/__init__.py`` -> ``pkg``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def floor_of(module: str) -> int | None:
    """The floor of a project module (longest matching prefix of :data:`FLOORS`), None for outside modules."""
    best = None
    for prefix, floor in FLOORS.items():
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, floor)
    return None if best is None else best[1]


def _resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    """Absolute name of ``from {'.' * level}{name} import ...`` written in ``module``."""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every name that ``source`` (the text of ``module``) imports, anywhere in the file: ``import x`` as ``x``,
    ``from x import y`` as ``x.y`` (a submodule, or a name of module ``x``: :func:`import_graph` tells which),
    relative imports made absolute, and the string passed to ``importlib.import_module`` / ``import_module`` /
    ``__import__`` (a literal, or a module-level constant of the same file)."""
    tree = ast.parse(source)
    constants = {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                 for t in node.targets if isinstance(t, ast.Name)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = _resolve_relative(module, is_package, node.level, node.module)
            for alias in node.names:
                found.add(base if alias.name == "*" else f"{base}.{alias.name}" if base else alias.name)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name in ("import_module", "__import__") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.add(arg.value)
                elif isinstance(arg, ast.Name) and arg.id in constants:
                    found.add(constants[arg.id])
    return found


def project_files(root: Path = ROOT) -> list[Path]:
    """The files the floors cover: ``mjenv/**``, ``agents/**``, ``train.py``, ``evaluate.py``."""
    files = sorted((root / "mjenv").rglob("*.py")) + sorted((root / "agents").rglob("*.py"))
    files += [root / name for name in ("train.py", "evaluate.py") if (root / name).exists()]
    return [f for f in files if "__pycache__" not in f.parts]


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """``{module: set of project modules it imports}`` from ``{module: (source, is_package)}``; an imported name
    that is not itself a module of ``sources`` (``mjenv.rules.options.get_variant``) counts as the nearest enclosing
    module of ``sources`` (``mjenv.rules.options``)."""
    known = set(sources)
    graph: dict[str, set[str]] = {}
    for module, (source, is_package) in sources.items():
        targets = set()
        for name in imports_of(source, module, is_package):
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """One line per import of a higher floor, and per module that has no floor."""
    problems = []
    for module in sorted(graph):
        floor = floor_of(module)
        if floor is None:
            problems.append(f"{module}: no floor (give it one in tests/test_layers.py FLOORS)")
            continue
        for target in sorted(graph[module]):
            tf = floor_of(target)
            if tf is not None and tf > floor:
                problems.append(f"{module} (floor {floor}, {FLOOR_NAMES[floor]}) imports {target} "
                                f"(floor {tf}, {FLOOR_NAMES[tf]})")
    return problems


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


def project_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """The import graph of the project's files (:func:`project_files`)."""
    sources = {module_name(f, root): (f.read_text(encoding="utf-8"), f.name == "__init__.py")
               for f in project_files(root)}
    return import_graph(sources)


def test_no_upward_imports():
    problems = upward_imports(project_graph())
    assert not problems, "upward imports:\n" + "\n".join(problems)


def test_no_import_cycles():
    cycles = import_cycles(project_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


MAX_LINES = 900
"""No module of ``mjenv/`` or ``agents/`` (nor the two scripts) is longer than this (issue 28: split by concern)."""


def long_modules(files: list[Path], limit: int = MAX_LINES) -> list[str]:
    """``"path: N lines"`` for each file of ``files`` over ``limit`` lines."""
    out = []
    for f in files:
        n = len(f.read_text(encoding="utf-8").splitlines())
        if n > limit:
            out.append(f"{f.relative_to(ROOT) if f.is_relative_to(ROOT) else f}: {n} lines")
    return out


def test_no_module_over_900_lines(tmp_path):
    assert not long_modules(project_files()), "split these by concern:\n" + "\n".join(long_modules(project_files()))
    big = tmp_path / "big.py"
    big.write_text("x = 1\n" * (MAX_LINES + 1))
    assert long_modules([big]) == [f"{big}: {MAX_LINES + 1} lines"]  # the check can fail


def test_the_checks_can_fail():
    """A fake tree with one upward import (engine -> envs, lazily inside a function, and one by importlib string)
    and one cycle: both checks name them."""
    sources = {
        "mjenv.engine.core": ("def f():\n    from mjenv.envs.aec import env\n", False),
        "mjenv.rules.options": ("import importlib\nimportlib.import_module('mjenv.engine.core')\n", False),
        "mjenv.envs.aec": ("from . import vector\n", False),
        "mjenv.envs.vector": ("from mjenv.envs.aec import raw_env\n", False),
        "mjenv.tiles": ("import numpy\n", False),
    }
    graph = import_graph(sources)
    problems = upward_imports(graph)
    assert any(p.startswith("mjenv.engine.core") and "mjenv.envs.aec" in p for p in problems)
    assert any(p.startswith("mjenv.rules.options") and "mjenv.engine.core" in p for p in problems)
    assert len(problems) == 2
    assert import_cycles(graph) == [["mjenv.envs.aec", "mjenv.envs.vector"]]
    assert upward_imports({"mjenv.nowhere_else": set()}) == []  # falls under the front door's floor
    assert "no floor" in upward_imports({"elsewhere": set()})[0]


def test_floors_cover_the_tree():
    """Every covered file has a floor, and the graph is not empty (the scan reads the real tree)."""
    graph = project_graph()
    assert "mjenv.engine.core" in graph and "mjenv.rules.options" in graph["mjenv.engine.core"] | {
        t for m in graph["mjenv.engine.core"] for t in graph.get(m, ())}
    assert all(floor_of(m) is not None for m in graph)


if __name__ == "__main__":
    g = project_graph()
    ups = upward_imports(g)
    cyc = import_cycles(g)
    print(f"{len(ups)} upward imports, {len(cyc)} cycles")
    for p in ups:
        print("  up:", p)
    for c in cyc:
        print("  cycle:", " <-> ".join(c))
    sys.exit(1 if ups or cyc else 0)
