"""What a streaming window view reads, computes and keeps: decided from the compiled SQL before
anything runs, so `dbt compile` refuses what a stream cannot honour with the runner's own words."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence

from sqlglot import exp

from dbt.adapters.window_views import analysis, overwindows, prefix, tvf
from dbt.adapters.window_views.config import WindowViewConfig
from dbt.adapters.window_views.errors import AnalysisError, ModelSqlError
from dbt.adapters.window_views.streaming import slicing
from dbt.adapters.window_views.upstream import Upstream

DAY = 86_400_000_000
FINGERPRINT_VERSION = 2
APPEND_ONLY_HINT = (
    "streaming window views read sources, append-only incremental models and streaming "
    "on_window_close window views"
)


@dataclass(frozen=True)
class StreamPlan:
    """The model SQL as a micro-batch runs it, and the window or over windows it maintains."""

    model: str
    config: WindowViewConfig
    sql: str  # the model SQL reading `view` instead of the upstream table
    output_sql: str  # `sql` with calls kept as prefix state reading it from `view` (prefix.py)
    source: str  # the upstream table, as the compiled SQL names it
    view: str
    window: Optional[tvf.WindowTvf]  # a window TVF model, or
    over: Optional[overwindows.OverPlan]  # an over-window model
    slicing: Optional[slicing.Slicing]  # a window_aggregate kept as pane partials: `view` holds them
    fingerprint: str

    @property
    def bucket_micros(self) -> int:
        """Output files are grouped by days of window_end (or event time): a whole number of days
        that holds the longest window."""
        return max(DAY, -(-self.window.span // DAY) * DAY) if self.window else DAY

    def describe(self) -> str:
        """The window as its call reads (kind, sizes), or the over-window calls."""
        return self.window.label() if self.window else "; ".join(self.over.calls)

    def fits(self, saved: Mapping[str, Any]) -> bool:
        """Whether a checkpoint's recorded model (model.json) is this one. A version 1 record
        fits when its window config is this one's and its SQL differs only in formatting."""
        if saved.get("fingerprint_version") == FINGERPRINT_VERSION:
            return saved.get("fingerprint") == self.fingerprint
        old_sql = saved.get("sql")
        if not isinstance(old_sql, str):
            return False
        old_output = prefix.rewrite(old_sql, self.over.prefix) if self.over is not None and self.over.prefix else old_sql
        try:
            same_sql = normalized(old_sql) == normalized(self.sql)
        except AnalysisError:
            return False
        return same_sql and saved.get("fingerprint") == _legacy_fingerprint(old_sql, old_output, self.config)

    def record(self) -> Dict[str, Any]:
        """What model.json keeps of the model, for `fits`."""
        return {"model": self.model, "fingerprint": self.fingerprint, "fingerprint_version": FINGERPRINT_VERSION, "sql": self.sql}


def check_upstream(model: str, upstream: Sequence[Upstream]) -> None:
    """Only append-only inputs: a table rewritten in place would replay its rows as new ones."""
    for node in upstream:
        rewritten = node.rewritten_in_place()
        if rewritten:
            raise ModelSqlError(
                model,
                f"upstream `{node.name}` is {rewritten}, which is rewritten in place, so a stream would read its "
                "rows again as new rows",
                f"{APPEND_ONLY_HINT} (e.g. materialized='incremental' with incremental_strategy='append')",
            )


def _fail(model: str, problem: str, fix: str) -> ModelSqlError:
    return ModelSqlError(model, problem, fix)


def _window(model: str, config: WindowViewConfig, windows: Sequence[tvf.WindowTvf], calls: Sequence[analysis.OverCall]) -> tvf.WindowTvf:
    window = windows[0]
    if config.watermark.column.lower() != window.time_col.strip("`").lower():
        raise _fail(
            model,
            f"the watermark column `{config.watermark.column}` is not the window's time column `{window.time_col}`",
            f"set watermark={{'column': '{window.time_col}', 'delay': '{config.watermark.delay}'}}",
        )
    for call in calls:
        if not any(analysis.is_column(p, c) for p in call.partition_by for c in ("window_start", "window_end")):
            raise _fail(
                model,
                f"`{call.sql}` is an over window across the windows of a window TVF, which streaming does not maintain",
                "partition it by window_start, window_end, or use execution='batch'",
            )
    return window


def _over(model: str, config: WindowViewConfig, tree: exp.Expression) -> overwindows.OverPlan:
    try:
        overwindows.ascending(tree, config.watermark.column)
        return overwindows.plan(tree, config.watermark.column)
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(model, exc, "see the README on streaming over windows") from exc


def _read_from_view(model: str, tree: exp.Expression) -> tuple:
    """Point the one upstream table at a temp view the micro-batch fills: (source, view)."""
    inputs = analysis.input_tables(tree)
    if len(inputs) != 1:
        names = ", ".join(f"{s}.{n}" if s else n for s, n in inputs) or "none"
        raise _fail(
            model,
            f"a streaming window view reads exactly one upstream table, this one reads {names}",
            "join or union the inputs in an upstream model, or use execution='batch'",
        )
    schema, name = inputs[0]
    references = [t for t in tree.find_all(exp.Table) if t.name == name and (t.db or None) == schema]
    if len(references) > 1:
        raise _fail(
            model,
            f"the SQL reads {schema}.{name} {len(references)} times; a stream is consumed once",
            "read it once (a self-join needs a batch window view), or use execution='batch'",
        )
    view = f"_wv_input_{hashlib.sha1(model.encode()).hexdigest()[:12]}"
    (table,) = references
    table.replace(exp.alias_(exp.to_table(view), table.alias or name, table=True))
    return (f"{schema}.{name}" if schema else name), view


def normalized(sql: str) -> str:
    """The query as sqlglot reads it: formatting and comments do not count."""
    return analysis.parse(sql).sql("spark", comments=False)


def _digest(parts: list) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def fingerprint(sql: str, output_sql: str, config: WindowViewConfig) -> str:
    """What decides that the state no longer fits the model: its normalized SQL and window
    config (not trigger or storage settings, nor formatting and comments)."""
    queries = [normalized(sql)] + ([normalized(output_sql)] if output_sql != sql else [])
    return _digest([FINGERPRINT_VERSION, *queries, config.emit, config.late_data, config.watermark.describe()])


def _legacy_fingerprint(sql: str, output_sql: str, config: WindowViewConfig) -> str:
    """Version 1 (before comments stopped counting): the SQL as written."""
    return _digest([sql, config.emit, config.late_data, config.watermark.describe()] + ([output_sql] if output_sql != sql else []))


def build(model: str, compiled_sql: str, config: WindowViewConfig, upstream: Sequence[Upstream]) -> StreamPlan:
    """The stream plan, or the ModelSqlError naming why this model cannot be streamed."""
    assert config.watermark is not None  # the config requires one for streaming
    check_upstream(model, upstream)
    try:
        tree = analysis.parse(compiled_sql)
    except AnalysisError as exc:
        raise _fail(model, str(exc), "write SQL that sqlglot's spark dialect reads") from exc
    windows = tvf.find(compiled_sql)
    try:
        own_calls = [c for c in analysis.over_calls(slicing.model_only(tree)) if not c.generated]
    except AnalysisError as exc:
        raise _fail(model, str(exc), "use a window TVF with GROUP BY, or window_views.window_aggregate") from exc
    if len(windows) > 1 or (not windows and not own_calls):
        raise _fail(
            model,
            f"execution='streaming' needs exactly one window TVF or over windows, found {len(windows)} window TVFs",
            "select from one window_views.tumble/hop/cumulate/session call, or compute window functions ordered by "
            "the watermark column",
        )
    window = _window(model, config, windows, own_calls) if windows else None
    over = None if windows else _over(model, config, tree)
    source, view = _read_from_view(model, tree)
    slices = _slicing(model, tree, window, view) if window is not None and window.via == "window_aggregate" else None
    sql = tree.sql("spark")
    output_sql = prefix.rewrite(sql, over.prefix) if over is not None and over.prefix else sql
    return StreamPlan(
        model, config, sql, output_sql, source, view, window, over, slices, fingerprint(sql, output_sql, config)
    )


def _slicing(model: str, tree: exp.Expression, window: tvf.WindowTvf, view: str) -> Optional[slicing.Slicing]:
    """A window_aggregate's pane state (`tree` then reads it from `view`), or None: input rows."""
    try:
        return slicing.plan(tree, window, view)
    except slicing.SlicingError as exc:
        raise _fail(model, exc.problem, exc.fix) from exc
