"""What a streaming window view reads, computes and keeps: decided from the compiled SQL before
anything runs, so `dbt compile` refuses what a stream cannot honour with the runner's own words."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from dataclasses import dataclass
from enum import Enum
from typing import Dict, Optional, Sequence, Tuple

from sqlglot import exp

from dbt.adapters.window_views.errors import AnalysisError, ModelSqlError
from dbt.adapters.window_views.kinds import model_kind, overwindows, own_window, prefix, registry, topn
from dbt.adapters.window_views.kinds.model_kind import ModelKind
from dbt.adapters.window_views.kinds.partials import slicing
from dbt.adapters.window_views.kinds.registry import Table
from dbt.adapters.window_views.model.config import Emit, Watermark, WindowViewConfig
from dbt.adapters.window_views.model.upstream import Upstream
from dbt.adapters.window_views.names import internal
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
    """The model SQL as a micro-batch runs it, and the kind of model it keeps (model_kind.py)."""

    model: str
    config: WindowViewConfig
    query: exp.Expression  # the model's query reading the inputs' views instead of the upstream tables
    output: Optional[exp.Expression]  # `query` with calls kept as prefix state read from `view` (prefix.py)
    inputs: Tuple[StreamInput, ...]  # one, or several: a window join or a UNION ALL (`shape`)
    shape: InputShape
    kind: ModelKind  # decided once (registry.py): the engines look it up
    fingerprint: str
    bounds: WindowBounds = WindowBounds()

    def parsed(self) -> exp.Expression:
        """`query` as a tree of the caller's own (a copy): a micro-batch's rewrites change it."""
        return self.query.copy()

    @functools.cached_property
    def sql(self) -> str:
        """`query` as the Spark SQL a micro-batch runs, rendered once."""
        return self.query.sql("spark")

    @functools.cached_property
    def output_sql(self) -> str:
        """The SQL the stream writes the output of: `output` where the plan keeps prefix state."""
        return self.sql if self.output is None else sqlexpr.to_sql(self.output)

    @property
    def window(self) -> Optional[tvf.WindowTvf]:
        """The kind's window TVF (a join: every side's, all equal); None for over windows and a Top-N."""
        return model_kind.window_of(self.kind)

    @property
    def over(self) -> Optional[overwindows.OverPlan]:
        return self.kind.over if isinstance(self.kind, model_kind.OverWindows) else None

    @property
    def slicing(self) -> Optional[slicing.Slicing]:
        """Pane or session partials the kind keeps as its state: `view` holds them."""
        return model_kind.slicing_of(self.kind)

    @property
    def top_n(self) -> Optional[topn.TopN]:
        return self.kind.top_n if isinstance(self.kind, model_kind.KeyedTopN) else None

    @property
    def rows_to_window(self) -> Optional[own_window.RowsToWindow]:
        return self.kind.joined if isinstance(self.kind, model_kind.RowsToOwnWindow) else None

    @property
    def rows(self) -> Optional["StreamPlan"]:
        """A window TVF + GROUP BY kept as partials (tvf_aggregate.py): the model as written, over
        input rows, whose output columns the stream's are."""
        partials = (model_kind.PaneAggregate, model_kind.SessionAggregate)
        written = self.kind.written if isinstance(self.kind, partials) else None
        if written is None:
            return None
        return dataclasses.replace(
            self,
            query=written.query,
            output=None,
            kind=written.kind,
            fingerprint=fingerprint(written.query, None, self.config),
        )

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
        return isinstance(self.kind, model_kind.OverWindows) and self.config.emit == Emit.ON_UPDATE

    def describe(self) -> str:
        """The window as its call reads (kind, sizes), or the over-window calls; over several
        inputs, how they are combined."""
        described = model_kind.describe(self.kind)
        if self.shape is InputShape.SINGLE or isinstance(self.kind, model_kind.RowsToOwnWindow):
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


def _read_from_views(
    model: str, tree: exp.Expression, tables: Sequence[Table], self_join: bool
) -> Tuple[StreamInput, ...]:
    """Point each upstream table at a temp view the micro-batch fills with its rows (a self
    window join: every reference of its one input at the same view)."""
    base = internal(f"input_{hashlib.sha1(model.encode()).hexdigest()[:12]}")
    inputs = []
    for i, (schema, name) in enumerate(tables):
        references = registry.references(tree, schema, name)
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
    tables: Sequence[Table]
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
        if isinstance(window, Session) or window.via is Via.WINDOW_AGGREGATE:
            what = "session windows" if isinstance(window, Session) else "window_views.window_aggregate"
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
    count = sum(len(registry.references(tree, schema, name)) for schema, name in tables)
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
                else f"its output has no `{bound.value}` (under any name)"
            )
            raise _fail(
                model,
                f"execution='streaming' keeps results by window, so the model must output `{bound.value}` (under any "
                f"name) from its window TVF: {why}",
                "add it to the select list and GROUP BY",
            )
        found[bound] = name
        hidden.append(name)
    return WindowBounds(found.get(Bound.START), found[Bound.END], tuple(hidden))


def normalized(query: exp.Expr) -> str:
    """The query as sqlglot reads it: formatting and comments do not count."""
    return query.sql("spark", comments=False)


def _digest(parts: list) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def fingerprint(query: exp.Expression, output: Optional[exp.Expression], config: WindowViewConfig) -> str:
    """What decides that the state no longer fits the model: its normalized query (and `output`,
    the query the stream writes, where it is another) and window config (not trigger or storage
    settings, nor formatting and comments)."""
    # the output as Spark runs it: its CTEs of one name apart (sqlexpr.to_sql)
    queries = [normalized(query)] + ([normalized(sqlexpr.apart(output))] if output is not None else [])
    return _digest([FINGERPRINT_VERSION, *queries, config.emit, config.late_data, watermark_of(config).describe()])


def unreadable(model: str, exc: AnalysisError, upstream: Sequence[Upstream]) -> ModelSqlError:
    """The refusal of a streaming model whose compiled code sqlglot cannot parse (a stream plans
    from the query's tree), after the upstream check a readable model gets first."""
    check_upstream(model, upstream)
    return _fail(model, str(exc), "write SQL that sqlglot's spark dialect reads")


def build(
    model: str,
    tree: exp.Expression,
    windows: Sequence[tvf.WindowTvf],
    config: WindowViewConfig,
    upstream: Sequence[Upstream],
) -> StreamPlan:
    """The stream plan of the model's parsed query (changed in place: its reads point at the
    inputs' views) and the window TVFs its compiled code's markers name, or the ModelSqlError
    naming why this model cannot be streamed."""
    check_upstream(model, upstream)
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
    windows = list(windows)
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
    views = _Views(model, config, tree, tables)
    one_read = shape is InputShape.SINGLE and len(windows) == 1
    found = registry.Found(model, config, tree, tuple(windows), tuple(own_calls), tuple(tables), one_read, views)
    recognised = registry.recognise(found)
    query, kind = recognised.query, recognised.kind
    over = kind.over if isinstance(kind, model_kind.OverWindows) else None
    output = prefix.rewrite(query.copy(), over.prefix) if over is not None and over.prefix else None
    digest = fingerprint(query, output, config)
    return StreamPlan(model, config, query, output, views.inputs, shape, kind, digest, views.bounds)


class _Views:
    """Points the model's reads at the inputs' views once a recogniser claims it (registry.py),
    and keeps what that made: the inputs and the window's bounds."""

    def __init__(self, model: str, config: WindowViewConfig, tree: exp.Expression, tables: Sequence[Table]) -> None:
        self.model, self.config, self.tree, self.tables = model, config, tree, tables
        self.inputs: Tuple[StreamInput, ...] = ()
        self.bounds = WindowBounds()

    def __call__(self, reads_twice: bool, needed: Tuple[Bound, ...]) -> str:
        self.inputs = _read_from_views(self.model, self.tree, self.tables, reads_twice)
        if needed:
            self.bounds = _bounds(self.model, self.config, self.tree, needed)
        return self.inputs[0].view
