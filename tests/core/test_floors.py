"""The core's floors: every import goes down a floor, no circles, small modules and functions (read with ``ast``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "brokerage"

# bottom to top; a module may import its own floor's packages and any floor below, never one above
FLOORS: tuple[tuple[str, ...], ...] = (
    ("brokerage.model",),
    ("brokerage.framework", "brokerage.checks"),
    ("brokerage.brokers", "brokerage.dirac"),
    ("brokerage.runs",),
    ("brokerage.whatif", "brokerage.diff", "brokerage.report", "brokerage.crosscheck"),
    ("brokerage.sim",),
    ("brokerage.synth",),
    ("brokerage.store",),
    ("brokerage.cli",),
)
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

# declarative tables: long because they list PanDA's own parameters, columns or schema, not because of logic
LONG_MODULES: dict[str, str] = {
    "brokerage.model.gdpconfig": "the gdpconfig registry: one Param row per PanDA key (about 200), each with its seed text",
    "brokerage.store.models": "SQLAlchemy tables named and shaped like PanDA's (one class per table)",
}
LONG_FUNCTIONS: dict[str, str] = {}

# the only function-level imports the core keeps: the CLI loads a command's dependencies when it runs, so
# `brokerage --help` starts without numpy, pandas, sqlalchemy or dask
DEFERRED_OK = ("brokerage.cli",)


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # imported core module
    line: int
    deferred: bool  # inside a function or class body, not at module level


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def core_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(CORE.rglob("*.py")) if "migrations" not in p.parts}


MODULES = core_modules()


def _resolve(module: str, node: ast.ImportFrom | ast.Import) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
        return
    if node.level:
        base = module.split(".")
        if not str(MODULES[module]).endswith("__init__.py"):
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, *([node.module] if node.module else [])])
    else:
        target = str(node.module)
    for alias in node.names:
        full = f"{target}.{alias.name}"
        yield full if full in MODULES else target


def _owner(name: str) -> str | None:
    while name and name not in MODULES:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return name or None


def imports() -> list[Import]:
    out = []
    for mod, path in MODULES.items():
        tree = ast.parse(path.read_text())
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for name in _resolve(mod, node):
                    target = _owner(name)
                    if target and target != mod and not mod.startswith(target + "."):
                        out.append(Import(mod, target, node.lineno, id(node) not in top))
    return out


IMPORTS = imports()


def floor(module: str) -> int:
    for i, packages in enumerate(FLOORS):
        if any(module == p or module.startswith(p + ".") for p in packages):
            return i
    raise AssertionError(f"{module} is on no floor: add its package to FLOORS")


def test_every_core_module_is_on_a_floor() -> None:
    """Every module of the core belongs to exactly one floor (the package root aside)."""
    for mod in MODULES:
        if mod != "brokerage":
            floor(mod)


def test_no_import_goes_up_a_floor() -> None:
    """A module imports only from its own floor or the floors below it."""
    up = [
        f"{i.source}:{i.line} imports {i.target} (floor {floor(i.target)} above {floor(i.source)})"
        for i in IMPORTS
        if i.source != "brokerage" and i.target != "brokerage" and floor(i.target) > floor(i.source)
    ]
    assert up == []


def test_nothing_imports_the_cli() -> None:
    """The command line is the top floor: no core module outside it imports it."""
    assert [
        f"{i.source}:{i.line}"
        for i in IMPORTS
        if i.target.startswith("brokerage.cli") and floor(i.source) < len(FLOORS) - 1
    ] == []


def test_no_function_level_imports_outside_the_cli() -> None:
    """Imports sit at module level, where circles show; only the CLI defers them to keep start-up light."""
    deferred = [
        f"{i.source}:{i.line} -> {i.target}" for i in IMPORTS if i.deferred and not i.source.startswith(DEFERRED_OK)
    ]
    assert deferred == []


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_even_counting_deferred_imports() -> None:
    """The core's import graph, function-level imports included, has no circle."""
    edges: dict[str, set[str]] = {}
    for i in IMPORTS:
        if i.target != "brokerage":
            edges.setdefault(i.source, set()).add(i.target)
    assert _cycles(edges) == []


def test_the_circle_finder_finds_a_circle() -> None:
    """The check above can fail: a two-module loop is reported."""
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_modules_are_small() -> None:
    """No core module is over 600 lines, except the declarative tables allowed above with a reason."""
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert sorted(set(long) - set(LONG_MODULES)) == []


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def test_functions_are_short() -> None:
    """No function in the core is over 80 lines, except the allowed declarative ones."""
    long = []
    for mod, path in MODULES.items():
        for fn in _functions(ast.parse(path.read_text())):
            n = (fn.end_lineno or fn.lineno) - fn.lineno + 1
            if n > MAX_FUNCTION_LINES and f"{mod}.{fn.name}" not in LONG_FUNCTIONS:
                long.append(f"{mod}.{fn.name}: {n} lines")
    assert long == []


@pytest.mark.parametrize("module", ["brokerage.model.snapshot", "brokerage.cli.main"])
def test_known_modules_are_found(module: str) -> None:
    """The walk sees the modules it judges (a moved tree would otherwise pass every check vacuously)."""
    assert module in MODULES


def test_the_app_and_benchmarks_do_not_import_the_cli() -> None:
    """The CLI is imported by nothing: the app's `serve` plugin and the benchmarks use the core, not the commands."""
    found = []
    for folder in ("app", "benchmarks", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                found += [f"{path.relative_to(ROOT)}:{node.lineno}" for n in names if n.startswith("brokerage.cli")]
    assert found == []
