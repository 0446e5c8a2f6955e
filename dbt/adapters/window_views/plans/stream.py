"""What a streaming window view reads, computes and keeps: decided from the compiled SQL before
anything runs, so `dbt compile` refuses what a stream cannot honour with the runner's own words."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from enum import Enum
from typing import Dict, List, Optional, Sequence, Tuple

from sqlglot import exp

from dbt.adapters.window_views.errors import AnalysisError, ModelSqlError
from dbt.adapters.window_views.kinds import overwindows, own_window, prefix, topn
from dbt.adapters.window_views.model.config import Emit, Watermark, WindowViewConfig
from dbt.adapters.window_views.model.upstream import Upstream
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.plans import session_slicing, slicing, tvf_aggregate
from dbt.adapters.window_views.query import analysis, sqlexpr, tvf, window_columns
from dbt.adapters.window_views.query.shown import shown
from dbt.adapters.window_views.query.window_columns import Bound
from dbt.adapters.window_views.query.windows import Session, Via
from dbt.adapters.window_views.records import ModelRecord

HOUR = 3_600_000_000
DAY = 24 * HOUR
FINGERPRINT_VERSION = 2  # part of the digest: a change of what it covers changes every fingerprint
APPEND_ONLY_HINT = (
    "streaming window views read sources, append-only incremental models and streaming on_window_close window views"
)


def watermark_of(config: WindowViewConfig) -> Watermark:
    """A streaming model's watermark config (config.py requires one for streaming)."""
    assert config.watermark is not None
    return config.watermark


def is_session(window: tvf.WindowTvf) -> bool:
    """A SESSION window: where it ends follows its rows, not a row's time alone."""
    return window.last_end("t") is None


class InputShape(str, Enum):
    """How a model reads its upstream tables: one, a window join of several, or their UNION ALL."""

    SINGLE = "single"
    JOIN = "join"
    UNION = "union"


@dataclass(frozen=True)
class StreamInput:
    """An upstream table the stream reads, and the temp view the model SQL reads it from."""

    source: str  # the upstream table, as the compiled SQL names it
    view: str


@dataclass(frozen=True)
class WindowBounds:
    """The output columns a window TVF model's stream keys its windows by: the model's own,
    under whatever names it selects them, or columns the plan added to its select list
    (`hidden`), which no table row holds."""

    start: Optional[str] = Bound.START.value  # None: rows joined to their window's aggregate, closed by end
    end: str = Bound.END.value
    hidden: Tuple[str, ...] = ()


@dataclass(frozen=True)
class StreamPlan:
    """The model SQL as a micro-batch runs it, and the window or over windows it maintains."""

    model: str
    config: WindowViewConfig
    sql: str  # the model SQL reading the inputs' views instead of the upstream tables
    output_sql: str  # `sql` with calls kept as prefix state reading it from `view` (prefix.py)
    inputs: Tuple[StreamInput, ...]  # one, or several: a window join or a UNION ALL (`shape`)
    shape: InputShape
    window: Optional[tvf.WindowTvf]  # a window TVF model (a join: every side's, all equal), or
    over: Optional[overwindows.OverPlan]  # an over-window model
    slicing: Optional[slicing.Slicing]  # a window_aggregate kept as pane partials: `view` holds them
    fingerprint: str
    # a window TVF + GROUP BY kept as pane partials (tvf_aggregate.py): the model as written,
    # over input rows, whose output columns the stream's are
    rows: Optional["StreamPlan"] = None
    bounds: WindowBounds = WindowBounds()
    top_n: Optional[topn.TopN] = None  # a keyed Top-N: neither a window nor over windows
    # rows of the input joined to their own window's aggregate (own_window.py): both reads one view
    rows_to_window: Optional[own_window.RowsToWindow] = None

    @property
    def source(self) -> str:
        """The upstream table of a single-input model (the first input of several)."""
        return self.inputs[0].source

    @property
    def view(self) -> str:
        return self.inputs[0].view

    @property
    def watermark(self) -> Watermark:
        return watermark_of(self.config)

    @property
    def bucket_sizes(self) -> Dict[str, int]:
        """on_update groups output files in buckets of window_end (over windows: event time) and a
        micro-batch rewrites the buckets its changed rows fall in, so it costs about the hours
        its rows reach: a bucket is named by a letter for its size and its index. 'h': whole
        hours that hold the longest window (whole days for windows of a day or more); 'b': whole
        days, for the days an initial load writes before W's;
        a day moves to hours when a later batch rewrites it (output.py)."""
        span = self.window.span if self.window else 0
        days = max(DAY, -(-span // DAY) * DAY)
        return {"h": days if span >= DAY else max(HOUR, -(-span // HOUR) * HOUR), "b": days}

    @property
    def hold_horizon(self) -> int:
        """`on_update`: how far before W + 1 an initial load's hour buckets begin (output.py;
        every model: window TVFs and over windows), as the rows later batches rewrite stay within
        about one 'h' bucket of it. Over windows by partition also read it as how far before
        W + 1 a partition's own point lies when it is held back (overwindows.held_back_before)
        and as the size of the hours the state records a held-back partition's rows in."""
        return self.bucket_sizes["h"]

    @property
    def recomputes_rows(self) -> bool:
        """Over windows `on_update`: a batch recomputes every row from a point in event time,
        which the batch before recorded with its state (state.py)."""
        return self.over is not None and self.config.emit == Emit.ON_UPDATE

    def describe(self) -> str:
        """The window as its call reads (kind, sizes), or the over-window calls; over several
        inputs, how they are combined."""
        if self.window is not None:
            described = self.window.label()
        elif self.top_n is not None:
            described = f"{self.top_n.call} kept by {self.top_n.kept_by}"
        else:
            assert self.over is not None  # a plan has a window or over windows
            described = "; ".join(self.over.calls)
        if self.rows_to_window is not None:
            return f"{described} (its rows joined to their window's result)"
        if self.shape is InputShape.SINGLE:
            return described
        how = "window join" if self.shape is InputShape.JOIN else "union"
        return f"{described} ({how} of {', '.join(i.source for i in self.inputs)})"

    def fits(self, saved: ModelRecord) -> bool:
        """Whether a checkpoint's recorded model (model.json) is this one."""
        return saved.fingerprint == self.fingerprint

    def record(self) -> ModelRecord:
        """What model.json keeps of the model, for `fits`."""
        return ModelRecord(self.model, self.fingerprint, self.sql)


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


def _window(
    model: str, config: WindowViewConfig, windows: Sequence[tvf.WindowTvf], calls: Sequence[analysis.OverCall]
) -> tvf.WindowTvf:
    window = windows[0]
    if watermark_of(config).column.lower() != window.time_col.strip("`").lower():
        raise _fail(
            model,
            f"the watermark column `{watermark_of(config).column}` is not the window's time column `{window.time_col}`",
            f"set watermark={{'column': '{window.time_col}', 'delay': '{watermark_of(config).delay}'}}",
        )
    for call in calls:
        if not any(analysis.is_column(p, c) for p in call.partition_nodes for c in ("window_start", "window_end")):
            raise _fail(
                model,
                f"`{call.shown}` is an over window across the windows of a window TVF, which streaming does not maintain",
                "partition it by window_start, window_end, or use execution='batch'",
            )
    return window


def _over(model: str, config: WindowViewConfig, tree: exp.Expression) -> overwindows.OverPlan:
    try:
        overwindows.ascending(tree, watermark_of(config).column)
        return overwindows.plan(tree, watermark_of(config).column)
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(model, exc, "see the README on streaming over windows") from exc


def _ranking(model: str, config: WindowViewConfig, tree: exp.Expression) -> Optional[topn.Ranking]:
    """The model's keyed Top-N ranking, if it is one: kept current (emit='on_update'), as no row
    of it is ever final."""
    try:
        found = topn.find(tree, watermark_of(config).column)
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(model, exc, "use execution='batch'") from exc
    if found is not None and config.emit != Emit.ON_UPDATE:
        raise _fail(
            model,
            f"`{found.call.shown}` kept by `{found.kept_by}` is a keyed Top-N: a later row can take any of a key's places, "
            "so its partitions never close and no row of it is final, which emit='on_window_close' waits for",
            "set emit='on_update' (the table is then each key's current top rows), or use execution='batch'",
        )
    return found


def _references(tree: exp.Expression, schema: Optional[str], name: str) -> List[exp.Table]:
    return [t for t in tree.find_all(exp.Table) if t.name == name and (t.db or None) == schema]


def _read_from_views(
    model: str, tree: exp.Expression, tables: Sequence[Tuple[Optional[str], str]], self_join: bool
) -> Tuple[StreamInput, ...]:
    """Point each upstream table at a temp view the micro-batch fills with its rows (a self
    window join: every reference of its one input at the same view)."""
    base = internal(f"input_{hashlib.sha1(model.encode()).hexdigest()[:12]}")
    inputs = []
    for i, (schema, name) in enumerate(tables):
        references = _references(tree, schema, name)
        if len(references) > 1 and not self_join:
            raise _fail(
                model,
                f"the SQL reads {schema}.{name} {len(references)} times; a stream is consumed once",
                "read it once, window each read by the same TVF and join them on window_start and window_end "
                "(a self window join), or use execution='batch'",
            )
        view = base if len(tables) == 1 else f"{base}_{i}"
        for table in references:
            table.replace(exp.alias_(exp.to_table(view), table.alias or name, table=True))
        inputs.append(StreamInput(f"{schema}.{name}" if schema else name, view))
    return tuple(inputs)


MULTI_HINT = (
    "window every input with the same window TVF and join them on window_start and window_end (a window join), "
    "or UNION ALL the inputs into one window TVF"
)


@dataclass(frozen=True)
class _Reads:
    """What a model over several inputs reads: its tables, through which window TVFs, in its SQL."""

    model: str
    config: WindowViewConfig
    tree: exp.Expression
    tables: Sequence[Tuple[Optional[str], str]]
    windows: Sequence[tvf.WindowTvf]

    @property
    def names(self) -> str:
        return ", ".join(f"{s}.{n}" if s else n for s, n in self.tables)


def _shape(reads: _Reads) -> InputShape:
    """A model over several upstream tables, or one read several times: JOIN (a window join:
    each read windowed by the same TVF, joined on window_start and window_end, emitted when the
    window closes) or UNION (the inputs' rows UNION ALLed into one window TVF); anything else is
    refused."""
    model, config, tree, tables, windows = reads.model, reads.config, reads.tree, reads.tables, reads.windows
    names = reads.names
    if not windows:
        raise _fail(
            model,
            f"streaming over windows read one upstream table, this model reads {names}",
            "union the inputs in an upstream model, or use execution='batch'",
        )
    for window in windows:
        if is_session(window) or window.via is Via.WINDOW_AGGREGATE:
            what = "session windows" if is_session(window) else "window_views.window_aggregate"
            raise _fail(
                model,
                f"a streaming window view over several inputs ({names}) cannot use {what}",
                "use tumble, hop or cumulate with GROUP BY, or use execution='batch'",
            )
        if window.time_col.strip("`").lower() != watermark_of(config).column.lower():
            raise _fail(
                model,
                f"`{window.label()}` windows by `{window.time_col}`, but the watermark column is "
                f"`{watermark_of(config).column}`; over several inputs every window's time column is the watermark column",
                "window every input by the same column (rename it in an upstream model) and name it in watermark",
            )
    joins = list(tree.find_all(exp.Join))
    if len(windows) == 1 and not joins:
        distinct = [u for u in tree.find_all(exp.Union) if u.args.get("distinct")]
        if distinct:
            raise _fail(
                model,
                "a streaming window view reads its inputs' rows with UNION ALL, not UNION (DISTINCT)",
                "write UNION ALL, or deduplicate in an upstream model",
            )
        if any(
            t.find_ancestor(exp.Union) is None for t in tree.find_all(exp.Table) if (t.db or None, t.name) in tables
        ):
            raise _fail(model, f"it reads {names} but neither joins them by window nor unions them", MULTI_HINT)
        return InputShape.UNION
    _check_window_join(reads)
    return InputShape.JOIN


def _check_window_join(reads: _Reads) -> None:
    """A window join: each read windowed by its own TVF, the same window on every side, joined
    on window_start and window_end, emitted when the window closes."""
    model, config, tree, tables, windows = reads.model, reads.config, reads.tree, reads.tables, reads.windows
    names = reads.names
    joins = list(tree.find_all(exp.Join))
    count = sum(len(_references(tree, schema, name)) for schema, name in tables)
    if len(windows) != count:
        raise _fail(
            model,
            f"it reads {names} {count} times through {len(windows)} window TVF(s); a streaming window join windows "
            "each read by its own TVF",
            MULTI_HINT,
        )
    first = windows[0]
    for window in windows[1:]:
        if not window.same_bounds(first):
            raise _fail(
                model,
                f"a window join needs the same window on every side, but `{first.label()}` and `{window.label()}` differ",
                "window every side with the same TVF, size, slide and offset",
            )
    for join in joins:
        if not _on_window(join):
            raise _fail(
                model,
                f"`{shown(join)}` does not join its sides on window_start and window_end of their window "
                f"`{first.label()}`, so it is not a window join and a stream could not say when its result is final",
                "add `L.window_start = R.window_start and L.window_end = R.window_end` to its ON",
            )
    if config.emit != Emit.ON_WINDOW_CLOSE:
        raise _fail(
            model,
            "a streaming window join emits a window once it is closed on every side; emit='on_update' would revise "
            "joined rows as either side's rows arrive",
            "set emit='on_window_close'",
        )


def _on_window(join: exp.Join) -> bool:
    """Whether the join's ON holds `a.window_start = b.window_start` and the same of window_end
    (or USING both), under whatever names its sides select their window bounds."""
    using = {analysis.unqualified(c).strip("`").lower() for c in join.args.get("using") or []}
    found = {b for b in Bound if b.value in using}
    on = join.args.get("on")
    for condition in (
        c.unnest() for c in (on.flatten() if isinstance(on, exp.And) else [on] if on is not None else [])
    ):
        if (
            isinstance(condition, exp.EQ)
            and isinstance(condition.this, exp.Column)
            and isinstance(condition.expression, exp.Column)
            and condition.this.table != condition.expression.table
        ):
            left, right = window_columns.bound_of(condition.this), window_columns.bound_of(condition.expression)
            if left is not None and left is right:
                found.add(left)
    return found == set(Bound)


def _bounds(model: str, config: WindowViewConfig, tree: exp.Expression, needed: Sequence[Bound]) -> WindowBounds:
    """The output columns that are the window's bounds (`needed`: both, or window_end alone for
    rows joined to their window); a bound the model does not select is added to its select list
    (`tree`) as a hidden column, when the select list can read it and the stream only appends
    closed windows. A `SELECT *` leaves them to Spark (runner.py)."""
    if not isinstance(tree, exp.Select) or any(p.is_star for p in tree.expressions):
        return WindowBounds()
    found = window_columns.selected(tree)
    hidden = []
    for bound in (b for b in needed if b not in found):
        name = window_columns.hide(tree, bound) if config.emit == Emit.ON_WINDOW_CLOSE else None
        if name is None:
            why = (
                "emit='on_update' replaces a window's rows by its bounds"
                if config.emit == Emit.ON_UPDATE
                else f"its select list reads no `{bound.value}` (under any name)"
            )
            raise _fail(
                model,
                f"execution='streaming' keeps results by window, so the model must select `{bound.value}` (under any "
                f"name) from its window TVF: {why}",
                "add it to the select list and GROUP BY",
            )
        found[bound] = name
        hidden.append(name)
    return WindowBounds(found.get(Bound.START), found[Bound.END], tuple(hidden))


def normalized(sql: str) -> str:
    """The query as sqlglot reads it: formatting and comments do not count."""
    return analysis.parse(sql).sql("spark", comments=False)


def _digest(parts: list) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def fingerprint(sql: str, output_sql: str, config: WindowViewConfig) -> str:
    """What decides that the state no longer fits the model: its normalized SQL and window
    config (not trigger or storage settings, nor formatting and comments)."""
    queries = [normalized(sql)] + ([normalized(output_sql)] if output_sql != sql else [])
    return _digest([FINGERPRINT_VERSION, *queries, config.emit, config.late_data, watermark_of(config).describe()])


def build(model: str, compiled_sql: str, config: WindowViewConfig, upstream: Sequence[Upstream]) -> StreamPlan:
    """The stream plan, or the ModelSqlError naming why this model cannot be streamed."""
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
    tables = analysis.input_tables(tree)
    if not tables:
        raise _fail(
            model,
            "a streaming window view reads append-only upstream tables, this one reads none",
            "select from a ref() or source() that grows by appends, or use execution='batch'",
        )
    self_join = len(tables) == 1 and len(windows) > 1
    if self_join:  # FLIP-145's window join of a stream with itself: checked as any window join,
        _shape(_Reads(model, config, tree, tables, windows))  # then run over its one input's rows
    shape = _shape(_Reads(model, config, tree, tables, windows)) if len(tables) > 1 else InputShape.SINGLE
    if (len(windows) > 1 and shape is not InputShape.JOIN and not self_join) or (not windows and not own_calls):
        raise _fail(
            model,
            f"execution='streaming' needs exactly one window TVF or over windows, found {len(windows)} window TVFs",
            "select from one window_views.tumble/hop/cumulate/session call, or compute window functions ordered by "
            "the watermark column",
        )
    window = _window(model, config, windows, own_calls) if windows else None
    joined = _rows_to_window(model, config, tree, tables, window)
    ranking = None if windows else _ranking(model, config, tree)
    over = None if windows or ranking is not None else _over(model, config, tree)
    inputs = _read_from_views(model, tree, tables, self_join or joined is not None)
    # rendered once the input reads its view (in place: the ranking's nodes stay in the tree)
    top_n = None if ranking is None else ranking.top_n()
    needed = [Bound.END] if joined is not None else list(Bound)
    bounds = _bounds(model, config, tree, needed) if window is not None else WindowBounds()
    sql = tree.sql("spark")
    rewritten = prefix.rewrite(analysis.parse(sql), over.prefix) if over is not None and over.prefix else None
    output_sql = sql if rewritten is None else sqlexpr.to_sql(rewritten)
    digest = fingerprint(sql, output_sql, config)
    as_rows = StreamPlan(
        model,
        config,
        sql,
        output_sql,
        inputs,
        shape,
        window,
        over,
        None,
        digest,
        bounds=bounds,
        top_n=top_n,
        rows_to_window=joined,
    )
    if window is None or shape is not InputShape.SINGLE or len(windows) != 1 or joined is not None:
        return as_rows
    if window.via is Via.WINDOW_AGGREGATE:
        slices = _slicing(model, tree, window, inputs[0].view)
        return as_rows if slices is None else _sliced(as_rows, tree, window, slices, None)
    found = tvf_aggregate.rewrite(tree, window, inputs[0].view)
    if found is None:
        return as_rows
    tree, window = found
    slices = _slicing(model, tree, window, inputs[0].view)
    return as_rows if slices is None else _sliced(as_rows, tree, window, slices, as_rows)


def _rows_to_window(
    model: str,
    config: WindowViewConfig,
    tree: exp.Expression,
    tables: Sequence[Tuple[Optional[str], str]],
    window: Optional[tvf.WindowTvf],
) -> Optional[own_window.RowsToWindow]:
    """One input read as rows and through its one window TVF, the rows joined to their window's
    result (Nexmark's q7): emitted when the window closes, as only then is a row's result final."""
    if window is None or is_session(window) or window.via is Via.WINDOW_AGGREGATE or len(tables) != 1:
        return None
    if len(_references(tree, *tables[0])) != 2:
        return None
    try:
        found = own_window.find(tree, tables[0], watermark_of(config).column, window)
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(model, exc, "use execution='batch'") from exc
    if found is not None and config.emit != Emit.ON_WINDOW_CLOSE:
        raise _fail(
            model,
            f"it joins the rows `{found.rows}` to their window `{window.label()}`'s result, which is final only when "
            "the window closes; emit='on_update' would revise joined rows as the window's rows arrive",
            "set emit='on_window_close'",
        )
    return found


def _sliced(
    plan: StreamPlan, tree: exp.Expression, window: tvf.WindowTvf, slices: slicing.Slicing, rows: Optional[StreamPlan]
) -> StreamPlan:
    """`plan` keeping pane partials: `tree` reads them (slicing.plan pointed it at them)."""
    sql = tree.sql("spark")
    return dataclasses.replace(
        plan,
        sql=sql,
        output_sql=sql,
        window=window,
        slicing=slices,
        rows=rows,
        fingerprint=fingerprint(sql, sql, plan.config),
    )


def _slicing(model: str, tree: exp.Expression, window: tvf.WindowTvf, view: str) -> Optional[slicing.Slicing]:
    """A window_aggregate's pane state, or a session aggregate's session partials (`tree` then
    reads them from `view`), or None: input rows."""
    if isinstance(window, Session):
        return session_slicing.plan(tree, window, view)
    try:
        return slicing.plan(tree, window, view)
    except slicing.SlicingError as exc:
        raise _fail(model, exc.problem, exc.fix) from exc
