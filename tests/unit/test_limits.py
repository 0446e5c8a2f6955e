"""The limits the style holds (docs/style.md, "Limits the linter holds"), over the package's own
source: no class over 150 lines, no function over 5 parameters (self and cls not counted). Ruff
holds the parameters too (PLR0913); it has no class-length rule, so this test holds that one."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, List, Tuple

PACKAGE = Path(__file__).resolve().parents[2] / "dbt" / "adapters" / "window_views"
MAX_CLASS_LINES = 150
MAX_PARAMETERS = 5


def _modules() -> Iterator[Tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        yield name, ast.parse(path.read_text(), str(path))


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> int:
    args = function.args
    named = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    count = len(named) + (args.vararg is not None) + (args.kwarg is not None)
    # a method's own object (self, cls) is not a parameter a caller passes
    return count - 1 if in_class and named and named[0].arg in ("self", "cls") else count


def _walk(node: ast.AST, prefix: str, in_class: bool) -> Iterator[Tuple[str, ast.AST, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}.{child.name}"
            yield name, child, in_class
            yield from _walk(child, name, isinstance(child, ast.ClassDef))
        else:
            yield from _walk(child, prefix, in_class)


def _over_limits() -> Tuple[List[str], List[str]]:
    classes, functions = [], []
    for module, tree in _modules():
        for name, node, in_class in _walk(tree, module, False):
            if isinstance(node, ast.ClassDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_CLASS_LINES:
                    classes.append(f"{name} ({lines} lines)")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                count = _parameters(node, in_class)
                if count > MAX_PARAMETERS:
                    functions.append(f"{name} ({count} parameters)")
    return classes, functions


def test_no_class_is_over_150_lines():
    classes, _ = _over_limits()
    assert not classes, f"classes over {MAX_CLASS_LINES} lines (split a concern out): {', '.join(classes)}"


def test_no_function_takes_over_5_parameters():
    _, functions = _over_limits()
    assert not functions, (
        f"functions over {MAX_PARAMETERS} parameters (a small frozen dataclass for what travels together): "
        + ", ".join(functions)
    )


def test_the_limits_see_what_they_measure():
    """The walk finds methods in classes and counts a method's parameters without self."""
    tree = ast.parse("class C:\n    def m(self, a, b, c, d, e, f):\n        pass\ndef g(a, *b, c, **d):\n    pass\n")
    found = {name: (node, in_class) for name, node, in_class in _walk(tree, "x", False)}
    assert set(found) == {"x.C", "x.C.m", "x.g"}
    assert _parameters(*found["x.C.m"]) == 6 and _parameters(*found["x.g"]) == 4
