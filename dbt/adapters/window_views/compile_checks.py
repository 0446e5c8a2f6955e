"""The window_view checks that need no Spark, run when dbt compiles a model, so `dbt compile`
fails on a bad model as `dbt run` and `dbt build` do, before anything runs.

dbt-core 1.11 gives adapters no hook in compilation: its tasks build `dbt.compilation.Compiler`
themselves and call `compile_node` for every node they compile. So this wraps that method
(installed once, when the plugin loads) and, after dbt has compiled a window_view model of a
`window_views` project, runs the same checks the materialization runs, raising the same messages
as a CompilationError naming the model. Checks that need Spark (output columns, the watermark
reached) stay in the materialization, which also still runs these ones.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, List, Mapping

from dbt_common.exceptions import CompilationError

from dbt.adapters.window_views import analysis, emit, overwindows, streaming
from dbt.adapters.window_views.analysis import AnalysisError
from dbt.adapters.window_views.config import ConfigError, WindowViewConfig

ADAPTER_TYPE = "window_views"
MATERIALIZATION = "window_view"
_MARK = "_window_views_compile_checks"


def _config(node: Any) -> Dict[str, Any]:
    """The config as the materialization sees it (`model['config']`, omit_none)."""
    return node.config.to_dict(omit_none=True)


def upstream_nodes(node: Any, manifest: Any) -> List[Dict[str, Any]]:
    """The model's direct inputs, as macros/_internal/upstream_nodes.sql gives them."""
    nodes = []
    for unique_id in node.depends_on.nodes:
        upstream = manifest.nodes.get(unique_id) or manifest.sources.get(unique_id)
        if upstream is None:
            continue
        config = upstream.config.to_dict(omit_none=True)
        kind = upstream.resource_type
        nodes.append({
            "name": upstream.name,
            "resource_type": getattr(kind, "value", kind),
            "materialized": config.get("materialized"),
            "incremental_strategy": config.get("incremental_strategy"),
            "execution": config.get("execution"),
            "emit": config.get("emit"),
        })
    return nodes


def check(name: str, compiled_sql: str, config: Mapping[str, Any], upstream: List[Mapping[str, Any]]) -> None:
    """Raise the error the materialization would raise for this model before needing Spark."""
    try:
        parsed = WindowViewConfig.from_model(name, dict(config))  # as adapter.validate_window_view
    except ConfigError as exc:
        raise CompilationError(str(exc)) from exc
    if parsed.execution == "streaming":
        # as adapter.run_streaming_window_view, before it starts anything
        try:
            streaming.check_layout(name, config)
            streaming.check_upstream(name, upstream)
            streaming.plan(name, compiled_sql, parsed)
        except streaming.StreamingError as exc:
            raise CompilationError(str(exc)) from exc
    elif parsed.emit == "on_window_close":
        # as adapter.plan_window_view, less the watermark reached and the output columns
        assert parsed.watermark is not None
        column = parsed.watermark.column
        try:
            tree = analysis.parse(compiled_sql)
            sql = tree.sql("spark") if overwindows.ascending(tree, column) else compiled_sql
            # "window_end" stands in for the output columns: whether the output has something to
            # close is checked at run time, where Spark describes the query
            emit.close_filter(sql, column, None, ["window_end"])
        except AnalysisError as exc:
            raise CompilationError(f"window_view model '{name}': {exc}") from exc


def _applies(compiler: Any, node: Any) -> bool:
    credentials = getattr(getattr(compiler, "config", None), "credentials", None)
    config = getattr(node, "config", None)
    return (
        getattr(credentials, "type", None) == ADAPTER_TYPE
        and getattr(config, "materialized", None) == MATERIALIZATION
        and isinstance(getattr(node, "compiled_code", None), str)
    )


def check_node(compiler: Any, node: Any, manifest: Any) -> None:
    if not _applies(compiler, node):
        return
    try:
        check(node.name, node.compiled_code, _config(node), upstream_nodes(node, manifest))
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
