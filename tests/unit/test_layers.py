"""The plugin's layers only call downwards (docs/architecture.md): a module imports from its own
layer or below, and nothing below the runners imports pyspark."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "dbt" / "adapters" / "window_views"
PREFIX = "dbt.adapters.window_views"
LAYERS = {
    0: {"errors", "intervals", "paths", "upstream", "names", "__version__"},
    1: {"tvf", "sqlexpr", "analysis", "emit", "prefix", "overwindows", "panes", "config"},
    2: {"streaming.records", "streaming.slicing", "streaming.tvf_aggregate", "streaming.plan", "plan"},
    3: {
        "session",
        "watermark",
        "batch",
        "filesystems",
        "storage",
        "streaming",
        "streaming.commits",
        "streaming.model_query",
        "streaming.rebuild",
        "streaming.output",
        "streaming.state",
        "streaming.batch_writer",
        "streaming.runner",
        "streaming.lock",
        "streaming.checkpoint",
        "streaming.pane_state",
        "streaming.shuffles",
        "streaming.sides",
        "streaming.idle",
        "streaming.labels",
        "streaming.locations",
        "streaming.run_context",
        "streaming.late_rows",
        "streaming.spark_errors",
        "streaming.shapes",
        "streaming.window_shapes",
        "streaming.over_shapes",
        "streaming.prefix_state",
    },
    4: {"impl", "compile_checks", "connections", "__init__"},
}
LAYER = {name: layer for layer, names in LAYERS.items() for name in names}


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        yield name.removesuffix(".__init__") if name != "__init__" else name, path


def imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == PREFIX:
                yield from (alias.name for alias in node.names)
            elif node.module.startswith(PREFIX + "."):
                module = node.module[len(PREFIX) + 1 :]
                yield from (f"{module}.{a.name}" if f"{module}.{a.name}" in LAYER else module for a in node.names)
            else:
                yield "!" + node.module
        elif isinstance(node, ast.Import):
            yield from ("!" + alias.name for alias in node.names)


def test_every_module_has_a_layer():
    assert sorted(name for name, _ in modules() if name not in LAYER) == []


@pytest.mark.parametrize("name, path", list(modules()), ids=[n for n, _ in modules()])
def test_imports_go_down(name, path):
    for target in imports(path):
        if target.startswith("!"):
            if LAYER[name] < 3:
                assert not target[1:].startswith("pyspark"), f"{name} imports {target[1:]}"
            continue
        assert LAYER[target] <= LAYER[name], f"{name} (layer {LAYER[name]}) imports {target} (layer {LAYER[target]})"
