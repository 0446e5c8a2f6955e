"""The module table of docs/architecture.md ("Modules and what each may call") is the code's:
every module of the plugin is in it, every module imports only the modules its "may call" cell
lists (or its own), the layers only call downwards, and nothing below the runners imports
pyspark. A failure names the module, what it imports and the row to update."""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

from tests.support.dbt_projects import REPO

PACKAGE = REPO / "dbt" / "adapters" / "window_views"
PREFIX = "dbt.adapters.window_views"
DOC = REPO / "docs" / "architecture.md"
TABLE_TITLE = "## Modules and what each may call"
RUNNERS = 3  # the first layer that may import pyspark


@dataclass(frozen=True)
class Row:
    """A module's row of the table: its layer and the module names its "may call" cell allows."""

    layer: int
    may_call: Tuple[str, ...]


def module_name(path: Path) -> str:
    """A module as the table names it: its path in the package without `.py`
    (`streaming/plan`); a package's `__init__.py` keeps its file name (`streaming/__init__`)."""
    return path.relative_to(PACKAGE).with_suffix("").as_posix()


def package_modules() -> Dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


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


def table() -> Dict[str, Tuple[int, List[str]]]:
    """module → (layer, the raw entries of its "may call" cell). A row without a layer number is
    in the layer of the row above; a row may name several modules (`connections.py`, ...)."""
    out: Dict[str, Tuple[int, List[str]]] = {}
    layer = -1
    for line in table_lines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        assert len(cells) == 4, f"docs/architecture.md: a module table row without 4 cells: {line}"
        layer_cell, module_cell, _, may_call_cell = cells
        if layer_cell:
            layer = int(layer_cell.split()[0])
        # a remark in parentheses says why or what for: "filesystems (`is_connect`)"
        entries = [e.strip(" `") for e in re.sub(r"\([^)]*\)", "", may_call_cell).split(",")]
        for name in re.findall(r"`([^`]+)\.py`", module_cell):
            assert name not in out, f"docs/architecture.md: {name}.py has two rows in the module table"
            out[name] = (layer, [e for e in entries if e and e not in ("-", "–")])
    return out


def resolve(entry: str, modules: Set[str], layers: Dict[str, int]) -> List[str]:
    """The modules one "may call" entry stands for: `layer 1` every module of layer 1; a name with
    a slash the module at that path; a bare name the top-level module, else the one in
    streaming/ (`state` is streaming/state, `plan` is plan.py); an installed package (dbt_common)
    none of the plugin's."""
    match = re.fullmatch(r"layer (\d+)", entry)
    if match:
        return sorted(name for name, layer in layers.items() if layer == int(match.group(1)))
    for name in (entry, f"streaming/{entry}"):
        if name in modules:
            return [name]
    if importlib.util.find_spec(entry) is not None:
        return []
    raise AssertionError(f"docs/architecture.md: the 'may call' entry {entry!r} names no module of the plugin")


@functools.cache
def rows() -> Dict[str, Row]:
    parsed = table()
    layers = {name: layer for name, (layer, _) in parsed.items()}
    modules = set(package_modules())
    return {
        name: Row(layer, tuple(sorted({m for e in entries for m in resolve(e, modules, layers)})))
        for name, (layer, entries) in parsed.items()
    }


def package_module(name: str, modules: Set[str]) -> str:
    """The module an import of `name` runs: itself, or its package's `__init__`."""
    return name if name in modules else f"{name}/__init__".lstrip("/")


def imports(path: Path, modules: Set[str]) -> Iterator[str]:
    """Every import in a module's source (at its top or inside a function): the plugin's modules
    by their table name, anything else as `!<module>`."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == PREFIX or node.module.startswith(PREFIX + "."):
                base = node.module[len(PREFIX) + 1 :].replace(".", "/")
                for alias in node.names:
                    # `from dbt.adapters.window_views.streaming import state` imports a module
                    name = f"{base}/{alias.name}".lstrip("/")
                    yield name if name in modules else package_module(base, modules)
            else:
                yield "!" + node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PREFIX + "."):
                    yield package_module(alias.name[len(PREFIX) + 1 :].replace(".", "/"), modules)
                else:
                    yield "!" + alias.name
        elif isinstance(node, ast.ImportFrom):
            raise AssertionError(f"{path}: a relative import; the plugin imports by absolute name")


MODULES = package_modules()


def test_every_module_has_a_row():
    missing = sorted(set(MODULES) - set(rows()))
    assert not missing, f"docs/architecture.md's module table has no row for {', '.join(missing)}"


def test_every_row_is_a_module():
    stale = sorted(set(rows()) - set(MODULES))
    assert not stale, f"docs/architecture.md's module table has rows for modules that are gone: {', '.join(stale)}"


def row_of(name: str) -> Row:
    if name not in rows():
        pytest.skip(f"{name} has no row (test_every_module_has_a_row)")
    return rows()[name]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_the_table_calls_only_downwards(name):
    row, layer = row_of(name), {module: row.layer for module, row in rows().items()}
    upward = [f"{m} (layer {layer[m]})" for m in row.may_call if layer.get(m, 0) > row.layer]
    assert not upward, f"docs/architecture.md: {name} (layer {row.layer}) may call {', '.join(upward)}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_are_in_the_table(name):
    row = row_of(name)
    internal = set()
    for target in imports(MODULES[name], set(MODULES)):
        if target.startswith("!"):
            assert row.layer >= RUNNERS or not target[1:].startswith("pyspark"), (
                f"{name} (layer {row.layer}) imports {target[1:]}: only the runners (layer {RUNNERS} and up) use Spark"
            )
        elif target != name:
            internal.add(target)
    undocumented = sorted(internal - set(row.may_call))
    assert not undocumented, (
        f"{name} imports {', '.join(undocumented)}, which its row in docs/architecture.md's module table "
        f"does not list under 'may call' (it lists: {', '.join(row.may_call) or 'nothing'})"
    )
