"""One batch of an incremental batch window view as SQL: the model's inputs read over the batch's
range widened by the windows' reach (reach.py, the rule the microbatch path's macros follow), and
the output rows whose event_time the batch holds kept, so each window or row is computed once,
whole, by the batch that owns it.

The model's kind is decided once (kinds/registry.batch_kind, at compile time, so a model that
cannot run by batches fails `dbt compile`) and its shape looked up here; a run asks the shape
for each batch's SQL.
- window TVFs (and window_aggregate's pane plans, which read their input once, under their
  window's marker): each input read from the first window start its owned windows need
  (`Reach.read`) to the batch's end. event_time window_time owns a window by window_time (the
  design's rule); window_end by window_end (window_time + 1 µs); window_start only where no
  window crosses a batch boundary (a TUMBLE whose size divides the batch), where it is the same.
  A session is owned by its end too (no later row can extend it), read back `session_lookback`;
  an owned session that may reach before that read fails its batch rather than be written short.
- over windows: the input read as dbt's own filter of the batch's range, which over_reads.py
  widens as under --sample and a microbatch batch.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from sqlglot import exp

from dbt.adapters.window_views.errors import AnalysisError, ModelConfigError, ModelSqlError
from dbt.adapters.window_views.kinds import emit, registry
from dbt.adapters.window_views.kinds.model_kind import BatchKind, WindowBatches
from dbt.adapters.window_views.kinds.reach import ReachError, TimeRange, as_datetime, micros, reach_of
from dbt.adapters.window_views.model.config import Batches, BatchSize
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.plans import over_reads
from dbt.adapters.window_views.plans.batches import BatchSpan
from dbt.adapters.window_views.query import analysis, sqlexpr, tvf
from dbt.adapters.window_views.query.intervals import Interval
from dbt.adapters.window_views.query.windows import Session, Tumble, Via, Window

_US = 1_000_000
# every batch boundary of a batch_size is a multiple of this from the epoch (months start at midnight)
_BOUNDARY: Dict[BatchSize, int] = {
    BatchSize.HOUR: 3600 * _US,
    BatchSize.DAY: 86400 * _US,
    BatchSize.MONTH: 86400 * _US,
    BatchSize.YEAR: 86400 * _US,
}
_WINDOW_COLUMNS = ("window_time", "window_end", "window_start")
_ROW = internal("row")  # the session macro's struct of an input row
# a window owned by its window_end's batch is the window whose window_time lies 1 µs before it
_SHIFT = {"window_time": 0, "window_end": -1, "window_start": 0}


@dataclass(frozen=True)
class Closing:
    """emit='on_window_close': a batch keeps the windows the watermark W closed (emit.py)."""

    column: str  # the watermark's
    reached: Optional[int]  # W in epoch micros; None: no event time seen, nothing closed
    output: Tuple[str, ...]  # the model's output columns

    def closed(self, query: exp.Expression) -> exp.Expression:
        """`query` keeping the windows W closed."""
        return emit.close_filter(query, self.column, self.reached, self.output)

    def holds_open(self, batch: BatchSpan) -> bool:
        """Whether the batch may own a window W has not closed (one ending after W)."""
        return self.reached is None or micros(batch.end) > self.reached


@dataclass(frozen=True)
class Read:
    """An input the batches read, by its time column: a run asks Spark its latest time."""

    table: str  # as the model's SQL names it
    column: str


class BatchShape(ABC):
    """How a model computes one batch."""

    event_time: str
    begin: Optional[datetime]  # the batches' first time: its batch writes the NULL-time rows

    @abstractmethod
    def sql(self, batch: BatchSpan, closing: Optional[Closing] = None, parts: Sequence[BatchSpan] = ()) -> str:
        """The batch's rows: the model over its widened inputs, owned rows only (closed ones only).
        `parts`: the batches `batch` spans, computed as one; what each would refuse alone, it refuses."""

    @property
    @abstractmethod
    def reads(self) -> Tuple[Read, ...]:
        """The inputs whose latest time decides the last batch."""

    @abstractmethod
    def last_time(self, latest_input: datetime) -> datetime:
        """The latest event_time the input up to `latest_input` makes (a window ending after it)."""

    def growing(self, batch: BatchSpan, latest_input: Optional[datetime]) -> bool:
        """Whether input after `latest_input` can change the batch's rows beyond what the next run's
        lookback redoes (a run keeps such a batch pending, so the next run redoes it)."""
        return False

    def owns_null_times(self, batch: BatchSpan) -> bool:
        """Whether the batch writes the rows whose event_time is NULL: the one holding `begin`
        (design §11: they sort first, so that batch is the first to see them)."""
        return self.begin is not None and batch.start <= self.begin < batch.end

    def holds(self, batch: BatchSpan) -> exp.Expression:
        """Whether a row's event_time lies in the batch (or is NULL, in the batch holding begin)."""
        field = sqlexpr.column(self.event_time)
        within = sqlexpr.in_time_range(field, batch.start, batch.end)
        assert within is not None  # both bounds given
        if self.owns_null_times(batch):
            return sqlexpr.node(exp.or_(within, exp.Is(this=field.copy(), expression=exp.null())))
        return within

    def owned(self, query: exp.Expression, batch: BatchSpan) -> str:
        """`query`'s rows whose event_time the batch holds, as Spark SQL."""
        if not isinstance(query, exp.Query):
            raise AnalysisError("the model's SQL is not a query")
        return sqlexpr.to_sql(sqlexpr.wrap(query, where=self.holds(batch)))


@dataclass(frozen=True)
class TvfShape(BatchShape):
    """A window TVF model's batches: each input read back as far as its owned windows reach."""

    base: exp.Expression  # the model's query, copied by each batch
    event_time: str
    windows: Tuple[Window, ...]
    read_list: Tuple[Read, ...]
    session_lookback: Optional[Interval] = None
    begin: Optional[datetime] = None

    def sql(self, batch: BatchSpan, closing: Optional[Closing] = None, parts: Sequence[BatchSpan] = ()) -> str:
        tree = self.base.copy()
        owned = self._owned(batch)
        for window, select, table in _tvf_reads(tree):
            assert isinstance(table, exp.Table)  # shape_of refused any other read
            reach = reach_of(window, self.session_lookback)
            read = reach.read(owned)
            assert read.start is not None and read.end is not None  # a batch is bounded
            start, end = as_datetime(read.start, batch.start), as_datetime(read.end, batch.start)
            table.replace(_filtered(table, window.time_col, start, end))
            # each batch's sessions known whole from its own read, as if it ran alone
            wholes = [(o, reach.whole_from(reach.read(o))) for o in map(self._owned, parts or [batch])]
            known = [(o, whole) for o, whole in wholes if whole is not None]
            if known:
                select.replace(_whole_or_fail(select, known, str(self.session_lookback)))
        if closing is not None:
            # closed as its Spark SQL reads back (CTEs at the top), as ever: in memory a lone pane
            # plan's frames read as the plugin's, which would change what such a batch runs
            tree = closing.closed(analysis.parse(sqlexpr.to_sql(tree)))
        return self.owned(tree, batch)

    def _owned(self, batch: BatchSpan) -> TimeRange:
        """The window_times the batch owns."""
        shift = _SHIFT[self.event_time.lower()]
        return TimeRange(micros(batch.start) + shift, micros(batch.end) + shift)

    @property
    def reads(self) -> Tuple[Read, ...]:
        return self.read_list

    def last_time(self, latest_input: datetime) -> datetime:
        # the last window holding the latest row: no later window holds a row yet, so a batch after
        # it would be empty (a TUMBLE ending at midnight opens no batch for the next day)
        column = self.event_time.lower()
        if column == "window_start":  # every window holding the row starts at or before it
            return latest_input
        end = max(w.last_end_at(micros(latest_input)) for w in self.windows)
        return as_datetime(end - 1 if column == "window_time" else end, latest_input)

    def growing(self, batch: BatchSpan, latest_input: Optional[datetime]) -> bool:
        # a window ending after the latest input can still take rows (a session can grow past
        # the batch, by gap after gap), whatever the lookback
        return latest_input is not None and batch.end > latest_input


@dataclass(frozen=True)
class OverBatchShape(BatchShape):
    """An over-window model's batches (not the streaming over_shapes.OverShape): dbt's filtered
    read of the batch's range, widened as far as the over windows reach (over_reads.py)."""

    base: exp.Expression  # the model's query, copied by each batch
    event_time: str
    read_list: Tuple[Read, ...]
    begin: Optional[datetime] = None

    def sql(self, batch: BatchSpan, closing: Optional[Closing] = None, parts: Sequence[BatchSpan] = ()) -> str:
        tree = self.base.copy()
        for table in registry.over_tables(tree):
            table.replace(over_reads.dbt_filtered(table, self.event_time, batch.start, batch.end))
        widened = over_reads.owned(analysis.parse(sqlexpr.to_sql(tree)), self.owns_null_times(batch))
        if widened is None:
            raise AnalysisError("no over window reads an input table directly")
        return self.owned(widened, batch)

    @property
    def reads(self) -> Tuple[Read, ...]:
        return self.read_list

    def last_time(self, latest_input: datetime) -> datetime:
        return latest_input


def _whole_or_fail(select: exp.Select, known: Sequence[Tuple[TimeRange, int]], lookback: str) -> exp.Select:
    """The session rows, failing the batch on a session a batch owns that may begin before that
    batch's read (`known`: each batch's owned window_times and earliest start known whole), so no
    session is written short."""
    owns = exp.or_(
        *(
            exp.and_(
                exp.GTE(this=_micros_of("window_time"), expression=exp.Literal.number(owned.start)),
                exp.LT(this=_micros_of("window_time"), expression=exp.Literal.number(owned.end)),
                exp.LT(this=_micros_of("window_start"), expression=exp.Literal.number(whole)),
            )
            for owned, whole in known
        )
    )
    message = exp.func(
        "concat",
        exp.Literal.string("a session ending at "),
        exp.cast(sqlexpr.column("window_end"), "string"),
        exp.Literal.string(" may begin before the batch's read (its first row read, "),
        exp.cast(sqlexpr.column("window_start"), "string"),
        exp.Literal.string(
            f", is within the gap of the read's start, session_lookback '{lookback}' before the batch) and would be "
            "written short; fix: raise the model's session_lookback to the longest session plus the gap"
        ),
    )
    check = exp.Case(ifs=[exp.If(this=owns, true=exp.func("raise_error", message))], default=exp.true())
    return sqlexpr.wrap(select, where=check)


def _micros_of(name: str) -> exp.Expression:
    return sqlexpr.epoch_micros(sqlexpr.column(name))


def _name(table: exp.Table) -> str:
    """The table as the model names it, without its alias."""
    bare = table.copy()
    bare.set("alias", None)
    return bare.sql("spark")


def _filtered(table: exp.Table, column: str, start: datetime, end: datetime) -> exp.Subquery:
    """`(select * from table where column >= start and column < end) as <table's name>`."""
    where = sqlexpr.in_time_range(sqlexpr.column(column), start, end)
    select = exp.select("*").from_(table.copy()).where(where)
    return select.subquery(table.alias_or_name)


def _tvf_reads(tree: exp.Expression) -> List[Tuple[Window, exp.Select, Optional[exp.Expression]]]:
    """Each window TVF, read from the marker heading its SELECT, the SELECT and what it reads."""
    found = []
    for select in list(tree.find_all(exp.Select)):
        markers = [c for c in select.comments or [] if "window_views:tvf:" in c]
        for window in tvf.find("".join(f"/*{c}*/" for c in markers)):
            found.append((window, select, _INPUTS[window.via](select)))
    return found


def _tvf_input(select: exp.Select) -> Optional[exp.Expression]:
    """What a TVF's SELECT reads: through the macro's own inner SELECTs (a session's, which carry
    each input row as `_wv_row`) down to the input."""
    source = getattr(select.args.get("from_"), "this", None)
    while isinstance(source, exp.Subquery) and _carries_rows(source.this):
        source = getattr(source.this.args.get("from_"), "this", None)
    return source


def _pane_plan_input(select: exp.Select) -> Optional[exp.Expression]:
    """What window_aggregate's pane plan (panes.py, under its marker's SELECT) reads: its one table
    that is not one of the plan's own CTEs (`_wv_panes`, ...); None if it reads none or several."""
    own = {cte.alias_or_name.lower() for cte in select.find_all(exp.CTE)}
    tables = [t for t in select.find_all(exp.Table) if t.db or t.name.lower() not in own]
    return tables[0] if len(tables) == 1 else None


# each window's input by what renders it: a window TVF macro, or window_aggregate's pane plan
_INPUTS: Dict[Optional[Via], Callable[[exp.Select], Optional[exp.Expression]]] = {
    None: _tvf_input,
    Via.WINDOW_AGGREGATE: _pane_plan_input,
}


def _carries_rows(query: exp.Expression) -> bool:
    return isinstance(query, exp.Select) and any(e.alias_or_name == _ROW for e in query.expressions)


def unreadable(model: str, exc: AnalysisError) -> ModelSqlError:
    """The refusal of a model with batch_size whose compiled code sqlglot cannot parse: its
    batches rewrite the query's tree."""
    return ModelSqlError.from_analysis(model, exc, "write the model's SQL as one query")


def shape_of(model: str, tree: exp.Expression, kind: BatchKind, batches: Batches) -> BatchShape:
    """The batches of the model's parsed query by its kind (registry.batch_kind), or the error
    naming what they cannot own and the fix."""
    shape: BatchShape
    if isinstance(kind, WindowBatches):
        shape = _tvf_shape(model, tree, kind.windows, batches)
    else:
        reads = tuple(Read(_name(t), batches.event_time) for t in kind.tables)
        shape = OverBatchShape(tree.copy(), batches.event_time, reads, batches.begin)
    try:  # the rewrite's own checks (an over window's reach, its ORDER BY), now rather than at the run
        shape.sql(BatchSpan(batches.begin, batches.begin + timedelta(hours=1)))
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(model, exc, "see docs/batch.md on incremental batch window views") from exc
    return shape


def _tvf_shape(model: str, tree: exp.Expression, windows: Tuple[Window, ...], batches: Batches) -> TvfShape:
    column = batches.event_time.lower()
    if column not in _WINDOW_COLUMNS:
        raise ModelConfigError(
            model,
            "event_time",
            f"= {batches.event_time!r} is not a window column, so a batch cannot tell which windows it owns",
            f"expected one of: {', '.join(_WINDOW_COLUMNS)} (window_time: each window is owned by the batch its "
            "last instant falls in)",
        )
    for window in windows:
        _check_session(model, window, batches)
        if column == "window_start" and not _inside(window, batches.size):
            raise ModelConfigError(
                model,
                "event_time",
                f"= 'window_start' with batch_size='{batches.size}': a {window.kind} window can start in one "
                f"{batches.size} and end in the next, so the batch of its window_start cannot own it whole",
                "expected one of: window_time, window_end (a window is owned by the batch it ends in)",
            )
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    found = _tvf_reads(tree)
    if len(found) != len(windows):  # a marker outside a TVF's SELECT: SQL copied, not rendered by the macro
        raise ModelSqlError(
            model,
            "with batch_size each window TVF must be the window macro's own SQL, which a batch reads over its range",
            "call window_views.tumble/hop/cumulate rather than copying their SQL",
        )
    reads: List[Read] = []
    for window, _, table in found:
        if not isinstance(table, exp.Table) or table.name.lower() in ctes:
            raise ModelSqlError(
                model,
                f"with batch_size its window_views.{(window.via or window.kind).value} must read an input table "
                "(a ref() or source()), which a batch reads over its range widened by the window's reach",
                "move the CTE's logic into an upstream model and window its ref()",
            )
        reads.append(Read(_name(table), window.time_col))
    return TvfShape(
        tree.copy(), batches.event_time, tuple(windows), tuple(reads), batches.session_lookback, batches.begin
    )


def _check_session(model: str, window: Window, batches: Batches) -> None:
    """A session's reach needs `session_lookback` (the model's config), at least the gap."""
    if not isinstance(window, Session):
        return
    gap = dict(window.texts).get("gap", f"{window.gap} µs")
    if batches.session_lookback is None:
        raise ModelConfigError(
            model,
            "session_lookback",
            f"is not set, and with batch_size its window_views.session (gap '{gap}') reads "
            "each batch's input back that far, since a session may start any time before the batch",
            "set session_lookback in the model's config (the macro's argument is for dbt's filtered reads) to the "
            "longest session plus the gap, e.g. '1 day'",
        )
    try:
        reach_of(window, batches.session_lookback)
    except ReachError as exc:
        raise ModelConfigError(
            model,
            "session_lookback",
            f"= '{batches.session_lookback}' is shorter than the gap '{gap}'",
            "set it to the longest session plus the gap",
        ) from exc


def _inside(window: Window, size: BatchSize) -> bool:
    """Whether no window crosses a batch boundary: a TUMBLE whose size divides every batch."""
    boundary = _BOUNDARY[size]
    return isinstance(window, Tumble) and boundary % window.size == 0 and window.offset % window.size == 0


def latest_input_sql(reads: Tuple[Read, ...], since: Optional[int] = None) -> str:
    """One row, one column: the latest time over the reads' tables in epoch micros (NULL: no rows;
    with `since`, epoch micros: no rows at or after it). Said of the time column itself, `since`
    lets parquet skip the row groups that end before it (int64 timestamps: INT96 ones have no
    statistics), so a run that knows the last run's latest time reads the new input."""
    maxima: List[exp.Query] = []
    for r in reads:
        query: exp.Query = exp.select(
            exp.alias_(sqlexpr.epoch_micros(exp.Max(this=sqlexpr.column(r.column))), "t", quoted=True)
        ).from_(exp.to_table(r.table, dialect="spark"))
        if since is not None:
            at = exp.func("timestamp_micros", exp.Literal.number(since))
            query = query.where(exp.GTE(this=exp.cast(sqlexpr.column(r.column), "timestamp"), expression=at))
        maxima.append(query)
    union: exp.Query = maxima[0]
    for query in maxima[1:]:
        union = exp.union(union, query, distinct=False)
    return sqlexpr.to_sql(exp.select(exp.Max(this=exp.column("t"))).from_(union.subquery("maxima")))
