"""The package table of docs/architecture.md ("Packages and what each may call") is the code's:
every module of the plugin belongs to one row (its package, or a root module's own row), every
module imports only what its row's "may call" cell lists (or its own package), rows call only
rows of lower layers, the Spark-free rows never import pyspark, no package holds more than 12
modules, and no module imports another that imports it back (import cycles). A failure names the
module, what it imports and the row to update. The base layer (0) is what every row may call
without listing it, and the modules one row names together may call each other."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

from tests.support.dbt_projects import REPO

PACKAGE = REPO / "dbt" / "adapters" / "window_views"
PREFIX = "dbt.adapters.window_views"
DOC = REPO / "docs" / "architecture.md"
TABLE_TITLE = "## Packages and what each may call"
MOST_MODULES = 12  # a package with more is a flat bag again: split it by concern
MOST_CALLED = 9  # a "may call" cell longer than this says nothing


@dataclass(frozen=True)
class Row:
    """A row of the table: its layer, whether it may use Spark, and the rows it may call."""

    layer: int
    spark: bool
    may_call: Tuple[str, ...]
    group: str  # the row's first name: the modules of one row call each other freely


def module_name(path: Path) -> str:
    """A module by its path in the package without `.py` (`streaming/commit/lock`)."""
    return path.relative_to(PACKAGE).with_suffix("").as_posix()


MODULES: Dict[str, Path] = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def table_lines() -> List[str]:
    lines = DOC.read_text().splitlines()
    start = lines.index(TABLE_TITLE)
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            rows.append(line)
    return rows[2:]  # after the header and its |---| line


@functools.cache
def rows() -> Dict[str, Row]:
    """row name (`query`, `streaming/commit`, `errors` for errors.py) → its Row."""
    out: Dict[str, Row] = {}
    for line in table_lines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        assert len(cells) == 5, f"docs/architecture.md: a package table row without 5 cells: {line}"
        layer_cell, names_cell, _, spark_cell, may_call_cell = cells
        may_call = tuple(e.strip(" `") for e in may_call_cell.split(",") if e.strip(" `") not in ("", "-", "–"))
        keys = [name.rstrip("/").removesuffix(".py") for name in re.findall(r"`([^`]+)`", names_cell)]
        for key in keys:
            assert key not in out, f"docs/architecture.md: {key} has two rows in the package table"
            out[key] = Row(int(layer_cell.split()[0]), spark_cell.lower().startswith("yes"), may_call, keys[0])
    return out


def row_of_module(module: str) -> str:
    """The row a module belongs to: the deepest package row holding it, else its own row."""
    parts = module.split("/")
    for depth in range(len(parts) - 1, 0, -1):
        if "/".join(parts[:depth]) in rows():
            return "/".join(parts[:depth])
    return module


def imports(path: Path) -> Iterator[str]:
    """Every import in a module (at its top or inside a function): the plugin's modules by
    name, anything else as `!<module>`."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == PREFIX or node.module.startswith(PREFIX + "."):
                base = node.module[len(PREFIX) + 1 :].replace(".", "/")
                for alias in node.names:
                    name = f"{base}/{alias.name}".lstrip("/")
                    yield name if name in MODULES else (base if base in MODULES else f"{base}/__init__")
            else:
                yield "!" + node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield "!" + alias.name
        elif isinstance(node, ast.ImportFrom):
            raise AssertionError(f"{path}: a relative import; the plugin imports by absolute name")


def test_every_module_has_a_row():
    missing = sorted(m for m in MODULES if row_of_module(m) not in rows())
    assert not missing, f"docs/architecture.md's package table has no row for {', '.join(missing)}"


def test_every_row_holds_a_module():
    held = {row_of_module(m) for m in MODULES}
    stale = sorted(set(rows()) - held)
    assert not stale, f"docs/architecture.md's package table has rows that hold no module: {', '.join(stale)}"


def test_rows_call_only_downwards_and_few():
    for name, row in rows().items():
        unknown = [m for m in row.may_call if m not in rows()]
        assert not unknown, f"docs/architecture.md: {name} may call {', '.join(unknown)}, which has no row"
        upward = [f"{m} (layer {rows()[m].layer})" for m in row.may_call if rows()[m].layer >= row.layer]
        assert not upward, f"docs/architecture.md: {name} (layer {row.layer}) may call {', '.join(upward)}"
        assert len(row.may_call) <= MOST_CALLED, f"docs/architecture.md: {name} may call {len(row.may_call)} rows"


def test_packages_are_small():
    sizes: Dict[str, int] = {}
    for module in MODULES:
        if not module.endswith("__init__"):
            sizes[row_of_module(module)] = sizes.get(row_of_module(module), 0) + 1
    big = {name: n for name, n in sizes.items() if n > MOST_MODULES}
    assert not big, f"packages over {MOST_MODULES} modules: {big}"
    root = [m for m in MODULES if "/" not in m and m not in ("__init__", "__version__")]
    assert len(root) <= 10, f"{len(root)} modules at the package root: {', '.join(root)}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_are_in_the_table(name):
    own = row_of_module(name)
    if own not in rows():
        pytest.skip(f"{name} has no row (test_every_module_has_a_row)")
    row = rows()[own]
    called: Set[str] = set()
    for target in imports(MODULES[name]):
        if target.startswith("!"):
            assert row.spark or not target[1:].startswith(("pyspark", "py4j")), (
                f"{name} imports {target[1:]}: its row ({own}) is Spark-free in docs/architecture.md"
            )
        elif row_of_module(target) in rows() and rows()[row_of_module(target)].group != row.group:
            if rows()[row_of_module(target)].layer > 0:
                called.add(row_of_module(target))
    undocumented = sorted(called - set(row.may_call))
    assert not undocumented, (
        f"{name} imports {', '.join(undocumented)}, which its row ({own}) in docs/architecture.md's "
        f"package table does not list under 'may call' (it lists: {', '.join(row.may_call) or 'nothing'})"
    )


def test_no_import_cycles():
    graph = {name: {t for t in imports(path) if not t.startswith("!") and t != name} for name, path in MODULES.items()}
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    cycles: List[List[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)
