"""One plan per window view: its config parsed once, its windows and over windows read from the
compiled SQL, its inputs, and (streaming) what the stream computes and keeps. Building the plan
runs every check that needs no Spark, so `dbt compile` (compile_checks.py) and the
materialization's runners (batch.py, streaming/runner.py) enforce each rule through one function.

The plan is memoized on its inputs: dbt compiles a model, then materializes it in the same
process, and both get the same plan object.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from sqlglot import exp

from dbt.adapters.window_views.errors import AnalysisError, ModelConfigError, ModelSqlError
from dbt.adapters.window_views.kinds import emit, model_kind, overwindows, registry, time_bucket
from dbt.adapters.window_views.model.config import (
    TIME_TYPES,
    Emit,
    Execution,
    WindowViewConfig,
    reject_window_view_keys,
)
from dbt.adapters.window_views.model.upstream import Upstream
from dbt.adapters.window_views.plans import batch_reads, over_reads
from dbt.adapters.window_views.query import analysis, frames, sqlexpr, tvf, window_columns
from dbt.adapters.window_views.query.analysis import FrameKind

if TYPE_CHECKING:  # imported where used: a batch model's compile and run skip its 25 ms import
    from dbt.adapters.window_views.plans import stream as stream_plan

MATERIALIZATION = "window_view"
# what a window's time column, the watermark and a RANGE interval frame's ORDER BY may be: Spark
# casts them to TIMESTAMP, and a string it cannot parse would silently become NULL (no window)
# a relation's columns as (name, Spark type), or None where only Spark can describe it
ColumnsOf = Callable[[Tuple[Optional[str], str]], Optional[List[Tuple[str, str]]]]
_CACHE: Dict[str, "WindowViewPlan"] = {}
_CACHE_SIZE = 512


@dataclass(frozen=True)
class ColumnUse:
    """A column the model names in a macro argument or the config, and the relation it must be
    a column of (None: any input of the model)."""

    where: str  # e.g. "window_views.tumble argument 'time_col'"
    column: str
    relation: Optional[Tuple[Optional[str], str]]
    via_cte: bool = False  # the TVF reads a CTE: its columns are known to Spark alone
    time: bool = False  # it must be one of TIME_TYPES
    derived: bool = False  # it may be computed by the model itself: checked only where an input has it


@dataclass(frozen=True)
class WindowViewPlan:
    model: str
    config: WindowViewConfig
    sql: str  # the compiled model SQL (batch: its over windows over a filtered read widened, over_reads.py)
    windows: Tuple[str, ...]  # the window TVFs the macros rendered, described
    over_calls: Tuple[str, ...]  # the model's own window function calls
    upstream: Tuple[Upstream, ...]
    stream: Optional[stream_plan.StreamPlan]  # execution='streaming'
    close_sql: Optional[str]  # batch on_window_close: the SQL with descending frames mirrored
    columns: Tuple[ColumnUse, ...]  # checked against the inputs before Spark runs the SQL
    inputs: Tuple[Tuple[Optional[str], str], ...]  # the relations read, (schema, name)
    batch_shape: Optional[batch_reads.BatchShape] = None  # batch_size: how one batch is computed
    query: Optional[exp.Expression] = None  # `sql` as a tree (None: beyond sqlglot); users copy it
    close_query: Optional[exp.Expression] = None  # `close_sql` as a tree
    time_bucket: bool = False  # a GROUP BY of a time bucket read as its TUMBLE (kinds/time_bucket.py)

    @classmethod
    def from_model(
        cls, model: str, compiled_code: str, config: Mapping[str, Any], upstream: Sequence[Mapping[str, Any]] = ()
    ) -> "WindowViewPlan":
        """The plan of dbt's compiled code for the model (parsed here, once), or the
        CompilationError (errors.py) naming the model, what and the fix."""
        inputs = tuple(Upstream.from_node(u) for u in upstream)
        key = json.dumps([model, compiled_code, dict(config), [repr(u) for u in inputs]], sort_keys=True, default=str)
        cached = _CACHE.get(key)
        if cached is None:
            if len(_CACHE) >= _CACHE_SIZE:
                _CACHE.clear()
            cached = _CACHE[key] = cls._build(model, _Compiled.of(model, compiled_code), config, inputs)
        return cached

    @classmethod
    def _build(
        cls, model: str, compiled: "_Compiled", config: Mapping[str, Any], upstream: Sequence[Upstream]
    ) -> "WindowViewPlan":
        parsed = WindowViewConfig.from_model(model, dict(config))
        compiled = _spark_frames(model, compiled, parsed)
        bucketed = _time_buckets(model, compiled, parsed)
        compiled, time_bucket = bucketed, bucketed is not compiled
        tree, analyzed = compiled.tree, compiled.analyzed
        columns: Tuple[ColumnUse, ...] = ()
        inputs: Tuple[Tuple[Optional[str], str], ...] = ()
        if analyzed is not None:
            inputs = tuple(analysis.input_tables(analyzed))
            columns = _column_uses(analyzed, parsed)
            _check_ctes_not_windowed(model, analyzed)
        if analyzed is not None and parsed.event_time is not None:
            _check_event_time_selected(model, parsed.event_time, analyzed)
        stream, close_sql, sql = None, None, compiled.code
        owned: Optional[exp.Expression] = None
        if parsed.execution is Execution.STREAMING:
            _check_unfiltered(model, analyzed)
            from dbt.adapters.window_views.plans import stream as stream_plan

            if tree is None:
                raise stream_plan.unreadable(model, compiled.required_error, upstream)
            stream = stream_plan.build(model, tree.copy(), compiled.windows, parsed, upstream)
        elif analyzed is not None:
            owned = _owned(model, tree)
            sql = _text(compiled, owned)
        close_query = None
        if stream is None and parsed.emit is Emit.ON_WINDOW_CLOSE:
            close_sql, close_query = _close_sql(model, compiled, owned, parsed)
        shape = _batches(model, compiled, parsed)
        labels = tuple(window.label() for window in compiled.windows)
        return cls(
            model,
            parsed,
            sql,
            labels,
            compiled.over,
            tuple(upstream),
            stream,
            close_sql,
            columns,
            inputs,
            batch_shape=shape,
            query=owned if owned is not None else tree,
            close_query=close_query,
            time_bucket=time_bucket,
        )

    @property
    def stream_plan(self) -> stream_plan.StreamPlan:
        """The plan of an execution='streaming' model (a batch model has none)."""
        if self.stream is None:
            raise ValueError(f"window_view model '{self.model}' is not a streaming window view")
        return self.stream

    @property
    def required_batch_shape(self) -> batch_reads.BatchShape:
        """The batch shape of an incremental batch window view (batch_size set)."""
        if self.batch_shape is None:
            raise ValueError(f"window_view model '{self.model}' has no batch_size")
        return self.batch_shape

    def check_columns(self, columns_of: ColumnsOf) -> None:
        """Every column a macro argument or the watermark names must exist where it is read, and a
        time column must be a time (_check_columns)."""
        _check_columns(self, columns_of)

    def properties(self) -> Dict[str, str]:
        """Table properties that describe the window view (also shown in `dbt docs`)."""
        properties = self.config.properties()
        if self.stream is not None:
            windowed = model_kind.window_of(self.stream.kind) is not None
            kind = "window_views.windows" if windowed else "window_views.over_windows"
            # over windows as the model writes them, not as frames.py rewrote them for Spark
            written = isinstance(self.stream.kind, model_kind.OverWindows) and self.over_calls
            properties[kind] = "; ".join(self.over_calls) if written else self.stream.describe()
            return properties
        if self.windows:
            properties["window_views.windows"] = "; ".join(self.windows)
        if self.over_calls:
            properties["window_views.over_windows"] = "; ".join(self.over_calls)
        return properties


def _check_columns(plan: WindowViewPlan, columns_of: ColumnsOf) -> None:
    """Every column a macro argument or the watermark names must exist where it is read, and a
    time column must be a time, checked before Spark runs the SQL (whose errors would show the
    macros' internal names, and which reads a string time as NULL: an empty table). A stream
    keeps its upstream table's rows as state, so there even a TVF over a CTE must name the
    table's columns. `columns_of(relation)` gives its columns and types, or None if unknown."""
    known = {relation: columns_of(relation) for relation in plan.inputs}
    _check_inputs_not_windowed(plan.model, plan.columns, known)
    for use in plan.columns:
        if use.via_cte and plan.stream is None:
            continue
        relations = [use.relation] if use.relation is not None else list(plan.inputs)
        if not relations or any(known.get(r) is None for r in relations):
            continue  # a relation Spark alone can describe
        typed = [(r, name, kind) for r in relations for name, kind in known[r] or ()]
        found = [(r, name, kind) for r, name, kind in typed if name.lower() == use.column.lower()]
        if found:
            if use.time:
                _check_time(plan.model, use, found)
            continue
        if use.derived:
            continue
        names = ", ".join(_relation_name(r) for r in relations)
        candidates = [name for _, name, _ in typed]
        if use.via_cte:
            raise ModelSqlError(
                plan.model,
                f"{use.where} names the column `{use.column}`, which {names} does not have, and the stream "
                f"keeps {names}'s rows as its state",
                f"compute `{use.column}` in an upstream model",
            )
        close = difflib.get_close_matches(use.column.lower(), [c.lower() for c in candidates], n=1, cutoff=0.7)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ModelSqlError(
            plan.model,
            f"{use.where} names the column `{use.column}`, which {names} does not have",
            f"{hint}{names} has: {', '.join(candidates)}",
        )


def _check_time(model: str, use: ColumnUse, found: Sequence[Tuple[Tuple[Optional[str], str], str, str]]) -> None:
    for relation, name, kind in found:
        if kind.lower() not in TIME_TYPES:
            raise ModelSqlError(
                model,
                f"{use.where} names the column `{name}` of {_relation_name(relation)}, which is "
                f"{kind.upper()}; it must be TIMESTAMP, TIMESTAMP_NTZ or DATE (Spark reads a value it cannot "
                "cast as NULL, which is in no window and no order)",
                f"cast it in an upstream model, e.g. `to_timestamp({name}) as {name}` (with the format for strings "
                f"Spark does not read: `to_timestamp({name}, 'dd/MM/yyyy HH:mm')`, epoch seconds: "
                f"`timestamp_seconds({name})`)",
            )


def _check_event_time_selected(model: str, column: str, tree: exp.Expression) -> None:
    """At compile time, what the SQL says: event_time must name a column the model selects (a
    `SELECT *` leaves that to the run, where Spark gives the output's columns)."""
    if not isinstance(tree, exp.Query) or any(s.is_star for s in tree.selects):
        return
    selected = tree.named_selects
    if column.lower() in (name.lower() for name in selected):
        return
    raise ModelConfigError(
        model,
        "event_time",
        f"= {column!r} is not a column the model selects (it selects: {', '.join(selected)})",
        "set event_time to window_start (window TVFs) or to the row time an over-window model selects",
    )


def _column_uses(tree: exp.Expression, config: WindowViewConfig) -> Tuple[ColumnUse, ...]:
    """The columns the TVF macros' arguments name, each with the relation its TVF reads (the
    marker comment heads the TVF's SELECT), and the watermark column."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    uses: List[ColumnUse] = []
    for select in tree.find_all(exp.Select):
        markers = [c for c in select.comments or [] if "window_views:tvf:" in c]
        table = select.find(exp.Table) if markers else None
        if table is None:
            continue
        via_cte = not table.db and table.name.lower() in ctes
        relation = None if via_cte else (table.db or None, table.name)
        for window in tvf.find("".join(f"/*{c}*/" for c in markers)):
            where = f"window_views.{window.kind} argument"
            uses.extend(
                ColumnUse(f"{where} '{arg}'", name, relation, via_cte, time=arg == "time_col")
                for arg, name in window.columns()
            )
    if config.watermark is not None:
        uses.append(ColumnUse("config 'watermark'", config.watermark.column, None, time=True))
    return tuple(uses) + _range_order_uses(tree)


def _check_ctes_not_windowed(model: str, tree: exp.Expression) -> None:
    """At compile time, what the SQL says: a window TVF over a CTE of the model that already
    selects window columns (an upstream table's are checked as the run starts, check_columns)."""
    ctes = {cte.alias_or_name.lower(): cte.this for cte in tree.find_all(exp.CTE)}
    for select in tree.find_all(exp.Select):
        window = tvf.on_node(select)
        table = select.find(exp.Table) if window else None
        query = ctes.get(table.name.lower()) if table is not None and not table.db else None
        if table is None or not isinstance(query, exp.Query) or any(s.is_star for s in query.selects):
            continue
        clash = window_columns.added_again(query.named_selects)
        if clash:
            raise _windowed_again(model, f"window_views.{window[0].kind}", table.name, clash)


def _check_inputs_not_windowed(
    model: str, uses: Sequence[ColumnUse], known: Mapping[Tuple[Optional[str], str], Optional[List[Tuple[str, str]]]]
) -> None:
    """A window TVF over an input table that already has window columns (its time_col's use
    names the relation the TVF reads)."""
    for use in uses:
        if use.relation is None or not use.where.endswith("argument 'time_col'"):
            continue
        clash = window_columns.added_again(c for c, _ in known.get(use.relation) or ())
        if clash:
            raise _windowed_again(model, use.where.split(" argument")[0], _relation_name(use.relation), clash)


def _windowed_again(model: str, macro: str, relation: str, clash: Sequence[str]) -> ModelSqlError:
    columns = ", ".join(f"`{c}`" for c in clash)
    return ModelSqlError(
        model,
        f"{macro} windows {relation}, which already has the column{'s' if len(clash) > 1 else ''} {columns}: "
        "the window adds its own, and Spark could not tell the two apart",
        f"read only the columns you need from {relation}, without them (or renamed, e.g. {clash[-1]} to "
        f"{relation.rsplit('.', 1)[-1]}_{clash[-1]}), and window that",
    )


def _range_order_uses(tree: exp.Expression) -> Tuple[ColumnUse, ...]:
    """The ORDER BY column of each over window whose RANGE frame has an interval offset: the
    interval is added to it, so it must be a time (a column the model computes is Spark's)."""
    try:
        calls = analysis.over_calls(tree)
    except AnalysisError:
        return ()
    uses = []
    for call in calls:
        bounds = (call.frame.start, call.frame.end)
        if call.generated or call.frame.kind is not FrameKind.RANGE or all(b.micros is None for b in bounds):
            continue
        order = call.node.args.get("order")
        keys = order.expressions if order is not None else []
        if len(keys) == 1 and isinstance(keys[0].this, exp.Column):
            where = f"the RANGE interval frame of `{call.shown}`"
            uses.append(ColumnUse(where, keys[0].this.name, None, time=True, derived=True))
    return tuple(uses)


def _relation_name(relation: Tuple[Optional[str], str]) -> str:
    return ".".join(p for p in relation if p)


def summary(properties: Mapping[str, str]) -> str:
    """The one-line description the table comment and the docs show."""
    return "Window view (" + ", ".join(f"{k.split('.', 1)[1]}: {v}" for k, v in properties.items()) + ")"


def _check_unfiltered(model: str, tree: Optional[exp.Expression]) -> None:
    """A stream reads each input row once and its checkpoint records it read: under dbt's time
    filter (--sample) it would record the rows the filter leaves out as read."""
    reads = over_reads.filtered_reads(tree) if tree is not None else []
    if reads:
        read = reads[0]
        raise ModelConfigError(
            model,
            "execution",
            f"is 'streaming', but dbt filters its input {read.table.sql('spark')} to a time range (--sample): a "
            "stream reads every input row once, so its checkpoint would record the rows left out as read",
            "fix: run it without --sample (leave streaming models out: `--exclude config.execution:streaming`), or "
            "sample a batch window view of the same SQL",
        )


def _check_whole_reads(model: str, tree: exp.Expression, config: WindowViewConfig) -> None:
    """With batch_size the run reads each batch's time range of its input tables itself and
    records the batches it wrote: dbt's empty (--empty) or sampled (--sample) read of an input
    would leave it batches of rows it never read, recorded as done."""
    empty = analysis.empty_reads(tree)
    sampled = [read.table for read in over_reads.filtered_reads(tree)]
    if not empty and not sampled:
        return
    flag, table = ("--empty", empty[0]) if empty else ("--sample", sampled[0])
    size = config.required_batches.size
    raise ModelConfigError(
        model,
        "batch_size",
        f"= '{size}' cannot run under dbt run {flag}: dbt reads {'.'.join(p.name for p in table.parts)} "
        f"{'as no rows' if empty else 'within the sample'}, but an incremental batch window view reads each batch's "
        "time range of its inputs itself and records the batches it wrote, so it would record batches of rows it "
        "never read as done",
        f"fix: run it without {flag} (leave such models out: `--exclude config.batch_size:{size}`)"
        + ("; its first run creates the table" if empty else ", or sample a copy of the model without batch_size"),
    )


def _owned(model: str, tree: Optional[exp.Expression]) -> Optional[exp.Expression]:
    """Batch: the query with the over windows over a read dbt filters to a time range (`--sample`)
    reading past the range as far as they reach, and keeping the rows the range owns (None: no
    such read, the compiled code runs as it is)."""
    assert tree is not None  # only a query sqlglot reads gets here
    try:
        return over_reads.owned(tree.copy())
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(model, exc, "see docs/batch.md on over windows under a filter") from exc


def _close_sql(
    model: str, compiled: "_Compiled", owned: Optional[exp.Expression], config: WindowViewConfig
) -> Tuple[str, exp.Expression]:
    """Batch on_window_close: descending frames over the watermark column mirrored to ascending
    ones (they close then), checked now as far as it goes without Spark; whether the output has
    something to close is checked when Spark describes the query. `owned`: the query a filtered
    read widened (_owned), else the compiled code's. Its text and its tree."""
    column = config.required_watermark.column
    fix = "see docs/configuration.md on emit='on_window_close' in batch"
    if owned is None and compiled.tree is None:
        raise ModelSqlError.from_analysis(model, compiled.required_error, fix)
    try:
        # the widened query as its Spark SQL reads back, as the batch runs it (CTEs at the top)
        tree = analysis.parse(sqlexpr.to_sql(owned)) if owned is not None else compiled.required_tree.copy()
        sql = tree.sql("spark") if overwindows.ascending(tree, column) else _text(compiled, owned)
        emit.close_filter(tree, column, None, ["window_end"])  # "window_end" stands in for the output
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(model, exc, fix) from exc
    return sql, tree


def _batches(model: str, compiled: "_Compiled", config: WindowViewConfig) -> Optional[batch_reads.BatchShape]:
    """An incremental batch window view's batches (None: no batch_size): its kind decided once by
    the registry, the kind's shape looked up."""
    if config.batches is None:
        return None
    tree = compiled.tree
    if tree is None:
        raise batch_reads.unreadable(model, compiled.required_error)
    _check_whole_reads(model, tree, config)
    kind = registry.batch_kind(model, tree, compiled.windows, config.emit is Emit.ON_WINDOW_CLOSE)
    return batch_reads.shape_of(model, tree, kind, config.batches)


def _spark_frames(model: str, compiled: "_Compiled", config: WindowViewConfig) -> "_Compiled":
    """The window forms Spark lacks (GROUPS, EXCLUDE, DISTINCT, FROM LAST) rewritten once, by
    query/frames.py, before any engine reads the tree: what they become is ROWS and RANGE frames
    over the order as written, which batches, filtered reads, on_window_close and streams reach
    and keep as they do the model's own. A call whose rewrite is out of a frame's reach (a rank
    of peer groups, a row number, the order reversed) is refused where a run reads or keeps only
    part of the input. `analyzed` stays the model's own tree, for the checks of its columns."""
    tree = compiled.tree
    if tree is None or not frames.calls(tree):
        return compiled
    try:
        rewritten = frames.rewrite(tree)
        partial = _partial_run(config, tree)
        if partial is not None:
            rewritten.refuse(*partial)
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(model, exc, "see docs/frames.md") from exc
    return dataclasses.replace(compiled, code=sqlexpr.to_sql(rewritten.tree), tree=rewritten.tree, analyzed=tree)


def _time_buckets(model: str, compiled: "_Compiled", config: WindowViewConfig) -> "_Compiled":
    """A GROUP BY of a time bucket of the watermark column (batches without one: of the bucket's) as
    the TUMBLE it is (kinds/time_bucket.py), where windows matter: a stream, batches,
    on_window_close; a batch of all rows runs it as written."""
    whole = config.execution is not Execution.STREAMING and config.batches is None
    column = config.watermark.column if config.watermark is not None else None  # None: batches, by the bucket's
    if compiled.tree is None or compiled.windows or (whole and (column is None or config.emit is Emit.ON_UPDATE)):
        return compiled
    try:
        on_update = config.execution is Execution.STREAMING and config.emit is Emit.ON_UPDATE
        tumbled = time_bucket.as_tumble(compiled.tree, column, on_update)
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(model, exc, "see docs/macros.md on a GROUP BY of a time bucket") from exc
    if tumbled is None:
        return compiled
    code = sqlexpr.to_sql(tumbled)
    return dataclasses.replace(compiled, code=code, tree=analysis.parse(code), windows=tuple(tvf.find(code)))


def _partial_run(config: WindowViewConfig, tree: exp.Expression) -> Optional[Tuple[str, str]]:
    """Why a run of the model reads or keeps part of its input, and the fix, for Rewrite.refuse."""
    if config.execution is Execution.STREAMING:
        return (
            "a stream computes over windows from the rows it keeps, those its frames reach back to in ascending "
            "order of time (and a summary of the rows before)",
            "compute it in a window_view with execution='batch'",
        )
    if config.batches is not None:
        return (
            "with batch_size each batch reads its input only as far as its frames reach in ascending order of time",
            "remove batch_size, so each run builds the whole table",
        )
    if over_reads.filtered_reads(tree):
        return (
            "dbt filters its input to a time range (a microbatch batch, --event-time-start/end or --sample), and "
            "the plugin reads past the range only as far as its frames reach in ascending order of time",
            "run it without the time filter",
        )
    if config.emit is Emit.ON_WINDOW_CLOSE:
        return (
            "emit='on_window_close' keeps the rows whose frames the watermark has closed, which it tells from "
            "frames in ascending order of time",
            "use emit='on_update'",
        )
    return None


def _text(compiled: "_Compiled", owned: Optional[exp.Expression]) -> str:
    """The query as Spark receives it: the widened one rendered, else dbt's compiled code."""
    return compiled.code if owned is None else sqlexpr.to_sql(owned)


@dataclass(frozen=True)
class _Compiled:
    """dbt's compiled code for a model, parsed once: its tree (None: sqlglot cannot parse it, and
    Spark may), `analyzed` (the tree where its over windows read too) and the window TVFs its
    macros' markers name (read from the text, as Spark runs what sqlglot cannot parse)."""

    code: str
    tree: Optional[exp.Expression]
    analyzed: Optional[exp.Expression]
    windows: Tuple[tvf.WindowTvf, ...]
    over: Tuple[str, ...] = ()  # the model's own window function calls
    error: Optional[AnalysisError] = None

    @classmethod
    def of(cls, model: str, compiled_code: str) -> "_Compiled":
        try:
            windows = tuple(tvf.find(compiled_code))
        except ValueError as exc:  # a marker of another plugin version, or damaged
            raise ModelSqlError.from_analysis(model, exc, "compile it with this plugin's window macros") from exc
        try:
            tree = analysis.parse(compiled_code)
        except AnalysisError as exc:
            return cls(compiled_code, None, None, windows, error=exc)
        try:
            over = tuple(call.sql for call in analysis.over_calls(tree) if not call.generated)
        except AnalysisError:  # Spark parses what sqlglot cannot; batch on_update does not need it
            return cls(compiled_code, tree, None, windows, analysis.written_calls(tree))
        return cls(compiled_code, tree, tree, windows, over)

    @property
    def required_tree(self) -> exp.Expression:
        assert self.tree is not None
        return self.tree

    @property
    def required_error(self) -> AnalysisError:
        assert self.error is not None
        return self.error


def check_node(
    model: str,
    materialized: Optional[str],
    compiled_code: str,
    config: Mapping[str, Any],
    upstream: Sequence[Mapping[str, Any]],
) -> None:
    """Every check of dbt's compiled code for a model of a window_views project that needs no Spark."""
    if materialized == MATERIALIZATION:
        WindowViewPlan.from_model(model, compiled_code, config, upstream)
        return
    reject_window_view_keys(model, materialized or "view", config)
    try:
        tree = analysis.parse(compiled_code)
    except AnalysisError:
        return  # SQL beyond sqlglot, which then cannot tell
    cut = over_reads.cut_over_window(tree)
    if cut is not None:
        raise ModelSqlError(
            model,
            f"`{cut}` reads an input dbt filters to a time range (a microbatch batch, --event-time-start/end or "
            "--sample), so its first rows would see the input cut at the range's start (and its last ones at the "
            "end), silently; only a window_view model reads past the range as far as its over windows reach",
            "make this model materialized='window_view', or compute the over window in a window_view model and "
            "read that from this one (its event_time set to the row time it selects); see docs/batch.md",
            label="model",
        )
