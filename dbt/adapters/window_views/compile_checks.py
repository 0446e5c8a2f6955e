"""The window_view checks that need no Spark, run when dbt compiles a model, so `dbt compile`
fails on a bad model as `dbt run` and `dbt build` do, before anything runs.

dbt-core 1.11 gives adapters no hook in compilation: its tasks build `dbt.compilation.Compiler`
themselves and call `compile_node` for every node they compile. So this wraps that method
(installed once, when the plugin loads) and, after dbt has compiled a window_view model of a
`window_views` project, builds the model's plan (plan.py), whose checks raise the CompilationError the materialization
would raise. Checks that need Spark (output columns, the watermark reached) stay in the runners.
A window_view key (emit, watermark, ...) on a model of another materialization is refused here too,
instead of being ignored, and so is its over window over an input dbt filters to a time range (a
microbatch batch, compiled here batch by batch, or --sample), which nothing there widens.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, List

from dbt_common.exceptions import CompilationError

from dbt.adapters.window_views.plans import window_view as plan

ADAPTER_TYPE = "window_views"
_MARK = "_window_views_compile_checks"


def upstream_nodes(node: Any, manifest: Any) -> List[Dict[str, Any]]:
    """The model's direct inputs, as macros/_internal/upstream_nodes.sql gives them."""
    nodes = []
    for unique_id in node.depends_on.nodes:
        upstream = manifest.nodes.get(unique_id) or manifest.sources.get(unique_id)
        if upstream is not None:
            config = upstream.config.to_dict(omit_none=True)
            nodes.append({"name": upstream.name, "resource_type": upstream.resource_type, "config": config})
    return nodes


def _applies(compiler: Any, node: Any) -> bool:
    credentials = getattr(getattr(compiler, "config", None), "credentials", None)
    kind = getattr(node, "resource_type", None)
    return (
        getattr(credentials, "type", None) == ADAPTER_TYPE
        and getattr(kind, "value", kind) == "model"
        and isinstance(getattr(node, "compiled_code", None), str)
    )


def check_node(compiler: Any, node: Any, manifest: Any) -> None:
    """Build the plan of a window_view model (its checks raise), or refuse window_view keys on
    another model."""
    if not _applies(compiler, node):
        return
    config = node.config.to_dict(omit_none=True)  # as the materialization sees `model['config']`
    materialized = config.get("materialized")
    upstream = upstream_nodes(node, manifest) if materialized == plan.MATERIALIZATION else []
    try:
        plan.check_node(node.name, materialized, node.compiled_code, config, upstream)
    except CompilationError as exc:
        exc.add_node(node)
        raise


def install() -> bool:
    """Wrap Compiler.compile_node (once). Returns whether the wrap is in place."""
    try:
        from dbt.compilation import Compiler
    except ImportError:
        return False
    original = getattr(Compiler, "compile_node", None)
    if original is None:
        return False
    if getattr(original, _MARK, False):
        return True

    @functools.wraps(original)
    def compile_node(self: Any, node: Any, manifest: Any, *args: Any, **kwargs: Any) -> Any:
        compiled = original(self, node, manifest, *args, **kwargs)
        check_node(self, compiled, manifest)
        return compiled

    setattr(compile_node, _MARK, True)
    Compiler.compile_node = compile_node  # type: ignore[method-assign]
    return True
