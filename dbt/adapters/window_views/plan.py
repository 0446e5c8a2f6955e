"""One plan per window view: its config parsed once, its windows and over windows read from the
compiled SQL, its inputs, and (streaming) what the stream computes and keeps. Building the plan
runs every check that needs no Spark, so `dbt compile` (compile_checks.py) and the
materialization's runners (batch.py, streaming/runner.py) enforce each rule through one function.

The plan is memoized on its inputs: dbt compiles a model, then materializes it in the same
process, and both get the same plan object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from dbt.adapters.window_views import analysis, emit, overwindows, tvf
from dbt.adapters.window_views.config import WindowViewConfig, reject_window_view_keys
from dbt.adapters.window_views.errors import AnalysisError, ModelSqlError
from dbt.adapters.window_views.streaming import plan as stream_plan
from dbt.adapters.window_views.upstream import Upstream

MATERIALIZATION = "window_view"
_CACHE: Dict[str, "WindowViewPlan"] = {}
_CACHE_SIZE = 512


@dataclass(frozen=True)
class WindowViewPlan:
    model: str
    config: WindowViewConfig
    sql: str  # the compiled model SQL
    windows: Tuple[str, ...]  # the window TVFs the macros rendered, described
    over_calls: Tuple[str, ...]  # the model's own window function calls
    upstream: Tuple[Upstream, ...]
    stream: Optional[stream_plan.StreamPlan]  # execution='streaming'
    close_sql: Optional[str]  # batch on_window_close: the SQL with descending frames mirrored

    @classmethod
    def from_model(
        cls, model: str, compiled_sql: str, config: Mapping[str, Any], upstream: Sequence[Mapping[str, Any]] = ()
    ) -> "WindowViewPlan":
        """The plan, or the CompilationError (errors.py) naming the model, what and the fix."""
        inputs = tuple(Upstream.from_node(u) for u in upstream)
        key = json.dumps([model, compiled_sql, dict(config), [repr(u) for u in inputs]], sort_keys=True, default=str)
        cached = _CACHE.get(key)
        if cached is None:
            if len(_CACHE) >= _CACHE_SIZE:
                _CACHE.clear()
            cached = _CACHE[key] = cls._build(model, compiled_sql, config, inputs)
        return cached

    @classmethod
    def _build(cls, model: str, compiled_sql: str, config: Mapping[str, Any], upstream: Sequence[Upstream]) -> "WindowViewPlan":
        parsed = WindowViewConfig.from_model(model, dict(config))
        try:
            tree = analysis.parse(compiled_sql)
            over = tuple(call.sql for call in analysis.over_calls(tree) if not call.generated)
        except AnalysisError:
            tree, over = None, ()  # Spark parses what sqlglot cannot; batch on_update does not need it
        stream, close_sql = None, None
        if parsed.execution == "streaming":
            stream = stream_plan.build(model, compiled_sql, parsed, upstream)
        elif parsed.emit == "on_window_close":
            close_sql = _close_sql(model, compiled_sql, parsed)
        return cls(
            model, parsed, compiled_sql, tuple(analysis.tvf_markers(compiled_sql)), over, tuple(upstream), stream, close_sql
        )

    def properties(self) -> Dict[str, str]:
        """Table properties that describe the window view (also shown in `dbt docs`)."""
        properties = self.config.properties()
        if self.stream is not None:
            kind = "window_views.windows" if self.stream.window else "window_views.over_windows"
            properties[kind] = self.stream.describe()
            return properties
        if self.windows:
            properties["window_views.windows"] = "; ".join(self.windows)
        if self.over_calls:
            properties["window_views.over_windows"] = "; ".join(self.over_calls)
        return properties


def summary(properties: Mapping[str, str]) -> str:
    """The one-line description the table comment and the docs show."""
    return "Window view (" + ", ".join(f"{k.split('.', 1)[1]}: {v}" for k, v in properties.items()) + ")"


def _close_sql(model: str, compiled_sql: str, config: WindowViewConfig) -> str:
    """Batch on_window_close: descending frames over the watermark column mirrored to ascending
    ones (they close then), checked now as far as it goes without Spark; whether the output has
    something to close is checked when Spark describes the query."""
    column = config.watermark.column
    try:
        tree = analysis.parse(compiled_sql)
        sql = tree.sql("spark") if overwindows.ascending(tree, column) else compiled_sql
        emit.close_filter(sql, column, None, ["window_end"])  # "window_end" stands in for the output
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(model, exc, "see the README on emit='on_window_close'") from exc
    return sql


def check_node(model: str, materialized: Optional[str], compiled_sql: str, config: Mapping[str, Any], upstream: Sequence[Mapping[str, Any]]) -> None:
    """Every check of a model of a window_views project that needs no Spark."""
    if materialized == MATERIALIZATION:
        WindowViewPlan.from_model(model, compiled_sql, config, upstream)
    else:
        reject_window_view_keys(model, materialized or "view", config)
