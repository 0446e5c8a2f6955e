"""Window TVF models (TUMBLE / HOP / CUMULATE), their kinds as details: a session window's
rows, or its sessions' partials (session_slicing.py), and a window_aggregate's pane partials
(pane_state.py) in place of input rows."""

from __future__ import annotations

from typing import Any, Optional, Tuple

from sqlglot import exp

from dbt.adapters.window_views.kinds import model_kind
from dbt.adapters.window_views.kinds.model_kind import PaneAggregate, SessionAggregate, SessionWindows
from dbt.adapters.window_views.kinds.partials import session_slicing
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.query.tvf import WindowTvf
from dbt.adapters.window_views.query.windows import Session
from dbt.adapters.window_views.records import NewRowCounts
from dbt.adapters.window_views.streaming.shapes import pane_state
from dbt.adapters.window_views.streaming.shapes.base import NEW, Batch, ModelShape, Parts, Saved
from dbt.adapters.window_views.streaming.shapes.model_query import counted
from dbt.adapters.window_views.streaming.shapes.output import Staged, outside, within
from dbt.adapters.window_views.streaming.shapes.state import State

T = exp.column(internal("t"))  # a retained row's event time, epoch micros (a pane's start)
Region = Tuple[Any, exp.Expr, Optional[int], Optional[int]]  # rows, the windows, their ends' bounds


class WindowShape(ModelShape):
    """A window TVF model: windows a batch computes from the rows of the windows it touches."""

    def __init__(self, plan: StreamPlan) -> None:
        super().__init__(plan)
        window = model_kind.window_of(plan.kind)
        assert window is not None  # chosen for window TVF kinds
        self.window: WindowTvf = window
        # the output column that is the window's end, whatever the model names it
        self.window_end = sqlexpr.epoch_micros(sqlexpr.column(plan.bounds.end))

    def unclosed(self, retained: Any, w_new: int) -> Any:
        """The retained rows some open window needs: a row no later than w_new - span is in no
        open window; said of the time column itself, parquet skips the row groups that hold
        only such rows (of int64 timestamps: INT96 ones have no statistics)."""
        since = exp.cast(sqlexpr.column(self.plan.watermark.column), "timestamp") > exp.func(
            "timestamp_micros", exp.Literal.number(w_new - self.window.span)
        )
        return retained.where(sqlexpr.to_sql(exp.and_(since, self._last_end() > w_new)))

    def _last_end(self) -> exp.Expr:
        last_end = self.window.last_end(T.name)
        assert last_end is not None  # a window of fixed ends
        return sqlexpr.parse(last_end)

    def save(self, parts: Parts, batch: Batch) -> Saved:
        rows = batch.retained.drop(NEW)
        kept, count = counted(rows if batch.w_new is None else self.unclosed(rows, batch.w_new))
        parts.state.write(kept, list(batch.states), batch.id)
        return Saved(count())

    def _after(self, batch: Batch) -> exp.Expr:
        return self.window_end > batch.w_prev if batch.w_prev is not None else exp.true()


class TvfOnWindowClose(WindowShape):
    """Appends the windows the new W closes: final rows, written once."""

    def closing_rows(self, batch: Batch) -> Any:
        """The rows of the windows W closes: none ends before the last W minus a window."""
        if batch.w_prev is None:
            return batch.retained
        return batch.retained.where(sqlexpr.to_sql(T >= batch.w_prev - self.window.span))

    def stage(self, parts: Parts, batch: Batch) -> Staged:
        if not batch.closes:
            return 0, []
        closed = exp.and_(self._after(batch), self.window_end <= batch.w_new)
        result = parts.query.compute(batch.spark, self.closing_rows(batch), closed)
        return parts.output.append(result.drop(*self.plan.bounds.hidden)), []


class TvfOnUpdate(WindowShape):
    """Recomputes every window a new row falls in, and replaces those windows."""

    def __init__(self, plan: StreamPlan) -> None:
        super().__init__(plan)
        assert plan.bounds.start is not None  # only rows joined to their window lack it: on_window_close
        self.window_start = sqlexpr.epoch_micros(sqlexpr.column(plan.bounds.start))

    def region(self, batch: Batch) -> Region:
        """The rows the windows need, the windows (open ones only), and the bounds of their ends."""
        assert batch.tmin is not None and batch.tmax is not None  # a batch with new rows
        lo, hi = batch.tmin - self.window.span, batch.tmax + self.window.span
        rows = batch.retained.where(sqlexpr.to_sql(exp.and_(T >= lo, T < hi)))
        windows = exp.and_(self._after(batch), self.window_start >= lo, self.window_end <= hi)
        return rows, windows, (lo if batch.w_prev is None else max(lo, batch.w_prev)), hi

    def stage(self, parts: Parts, batch: Batch) -> Staged:
        if batch.tmin is None:
            return 0, []
        rows, windows, low, high = self.region(batch)
        result = parts.query.compute(batch.spark, rows, windows)
        return parts.output.upsert(result, outside(windows), self.window_end, within(low, high))


class SessionRows(WindowShape):
    """Session windows: their ends follow their rows, so no window bounds the rows a batch reads."""

    @property
    def session(self) -> Session:
        kind = self.plan.kind
        assert isinstance(kind, (SessionWindows, SessionAggregate))  # chosen for session kinds only
        return kind.window

    def unclosed(self, retained: Any, w_new: int) -> Any:
        """A row is needed while the session it belongs to (as far as the state knows) may still
        grow, i.e. its last row + gap is after W."""
        window = self.session
        keys = [sqlexpr.column(k) for k in window.partition_by]
        by_time = [sqlexpr.ordered(T)]
        starts = exp.If(
            this=sqlexpr.window(exp.Lag(this=T), keys, by_time) >= T - window.gap,
            true=exp.Literal.number(0),
            false=exp.Literal.number(1),
        )
        new, session, session_end = internal("new"), internal("session"), internal("session_end")
        rows = sqlexpr.frame("ROWS", ("UNBOUNDED", "PRECEDING"), ("CURRENT ROW", None))
        numbered = sqlexpr.window(exp.Sum(this=exp.column(new)), keys, by_time, rows)
        end = sqlexpr.window(exp.Max(this=T), [*keys, exp.column(session)]) + window.gap
        sessions = (
            retained.selectExpr("*", sqlexpr.to_sql(exp.alias_(starts, new)))
            .selectExpr("*", sqlexpr.to_sql(exp.alias_(numbered, session)))
            .selectExpr("*", sqlexpr.to_sql(exp.alias_(end, session_end)))
        )
        return sessions.where(sqlexpr.to_sql(exp.column(session_end) > w_new)).drop(new, session, session_end)


class SessionOnWindowClose(SessionRows, TvfOnWindowClose):
    def closing_rows(self, batch: Batch) -> Any:
        return batch.retained


class SessionOnUpdate(SessionRows, TvfOnUpdate):
    def region(self, batch: Batch) -> Region:
        return batch.retained, self._after(batch), batch.w_prev, None


class Partials(WindowShape):
    """Keeps partial aggregates (pane_state.py), not input rows: the new rows' partials merged
    with the state's."""

    def retained(self, spark: Any, fresh: Any, state: State, previous: Tuple[str, ...], counts: NewRowCounts) -> Any:
        kind = self.plan.kind
        assert isinstance(kind, (PaneAggregate, SessionAggregate))  # chosen for partials kinds
        return pane_state.retained(spark, kind.slicing, fresh, state, previous[-1] if previous else None)


class SessionPartials(Partials, SessionRows):
    """Session windows of decomposable aggregates keep one partial row per open session
    (session_slicing.py), merged with the batch's new rows as pane partials are."""

    def unclosed(self, retained: Any, w_new: int) -> Any:
        return retained.where(sqlexpr.to_sql(session_slicing.open_after(self.session, w_new)))


class SessionPartialsOnWindowClose(SessionPartials, SessionOnWindowClose):
    pass


class SessionPartialsOnUpdate(SessionPartials, SessionOnUpdate):
    pass


class PaneRows(Partials):
    """A window_aggregate (or a TVF aggregate read as one) keeps pane partials, not rows: a
    pane's start is its event time, so the window arithmetic picks and evicts panes."""

    def unclosed(self, retained: Any, w_new: int) -> Any:
        return retained.where(sqlexpr.to_sql(self._last_end() > w_new))


class PanesOnWindowClose(PaneRows, TvfOnWindowClose):
    pass


class PanesOnUpdate(PaneRows, TvfOnUpdate):
    pass
