"""emit='on_window_close' in batch: keep only the windows and rows the watermark has closed.

A window is closed when window_end <= W: the output column that is window_end under any name
(window_columns.py, as streaming keys windows), or a hidden one the model's select list reads.
An over-window row is closed when its ORDER BY value t <= W and the last row of its frame is
closed too (RisingWave's EOWC conditions): ROWS n FOLLOWING and LEAD(n) wait for the n-th
following row, RANGE <interval> FOLLOWING for t + interval <= W. Rows are filtered where the
window functions are computed, so every operator downstream sees only closed rows, as it would
in streaming.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, cast

from sqlglot import exp

from dbt.adapters.window_views import names
from dbt.adapters.window_views.query import sqlexpr, window_columns
from dbt.adapters.window_views.query.analysis import (
    PRECEDING_ONLY_FUNCTIONS,
    WHOLE_PARTITION_FUNCTIONS,
    AnalysisError,
    FrameKind,
    OverCall,
    Side,
    is_column,
    over_calls,
)
from dbt.adapters.window_views.query.sqlexpr import column, epoch_micros
from dbt.adapters.window_views.query.window_columns import Bound

CLOSED = names.internal("closed")


def _window_end(call: OverCall) -> Optional[exp.Expression]:
    """The window_end in a call's PARTITION BY: such a partition is complete when its window is."""
    return next((p for p in call.partition_nodes if is_column(p, "window_end")), None)


def _watermark(micros: Optional[int]) -> exp.Expression:
    """W in epoch micros; NULL (nothing closed) before any row was seen."""
    return exp.cast(exp.null(), "bigint") if micros is None else exp.Literal.number(micros)


def _row_condition(call: OverCall, watermark_column: str, w: exp.Expression) -> List[exp.Expression]:
    """Conditions under which this call's value for a row is final."""
    window_end = _window_end(call)
    if window_end is not None:
        return [epoch_micros(window_end) <= w]
    fix = (
        f"order the window by the watermark column `{watermark_column}` (ascending), or partition it "
        "by window_start, window_end of a window TVF"
    )
    if isinstance(call.func, WHOLE_PARTITION_FUNCTIONS):
        raise AnalysisError(f"`{call.shown}` depends on the whole partition, which never closes; fix: {fix}")
    if not call.order_by or not is_column(call.order_nodes[0], watermark_column):
        raise AnalysisError(
            f"`{call.shown}` is not ordered by the watermark column, so its rows never close; fix: {fix}"
        )
    _, descending, _ = call.order_by[0]
    if descending:
        raise AnalysisError(
            f"`{call.shown}` orders the watermark column descending: its frames reach rows that have not arrived; "
            "fix: order ascending and swap PRECEDING/FOLLOWING (FIRST_VALUE <-> LAST_VALUE)"
        )
    t = epoch_micros(call.order_nodes[0])
    conditions: List[exp.Expression] = [t <= w]
    end = call.frame.end
    rows_ahead = call.lead_offset
    if rows_ahead is None and not isinstance(call.func, PRECEDING_ONLY_FUNCTIONS):
        if end.is_unbounded(Side.FOLLOWING):
            raise AnalysisError(
                f"`{call.shown}` has a frame ending in UNBOUNDED FOLLOWING, which never closes; "
                "fix: end the frame at CURRENT ROW or a bounded FOLLOWING offset"
            )
        if end.is_following and call.frame.kind is FrameKind.ROWS:
            rows_ahead = end.rows
        elif end.is_following:
            conditions.append(t + end.micros <= w)
    if rows_ahead:
        conditions.append(sqlexpr.coalesce(_ahead(call, t, rows_ahead) <= w, exp.false()))
    return conditions


def _ahead(call: OverCall, t: exp.Expression, rows: int) -> exp.Window:
    """The ORDER BY value (epoch micros) `rows` rows after each row: the last its value reads."""
    partition = call.partition_nodes
    # the full ORDER BY, so ties are ordered as in the call itself
    order = [sqlexpr.ordered(n, desc, first) for n, (_, desc, first) in zip(call.order_nodes, call.order_by)]
    if call.ignore_nulls and call.lead_offset is not None:
        # LEAD(x, n) IGNORE NULLS is final once the n-th following row with a non-NULL x is
        value = exp.case().when(call.func.this.is_(exp.null()).not_(), t)
        return sqlexpr.window(
            exp.IgnoreNulls(this=exp.Lead(this=value, offset=exp.Literal.number(rows))), partition, order
        )
    return sqlexpr.window(exp.Lead(this=t.copy(), offset=exp.Literal.number(rows)), partition, order)


def _closed(calls: Sequence[OverCall], watermark_column: str, w: exp.Expression) -> exp.Expression:
    """Whether a row's values for all `calls` are final at W."""
    conditions = [c for call in calls for c in _row_condition(call, watermark_column, w)]
    # sqlglot types and_ as a Condition; what it builds is an expression node (an And or the one)
    return cast(exp.Expression, exp.and_(*dict.fromkeys(conditions)))


def _closed_rows(tree: exp.Expression, select: exp.Select, condition: exp.Expr) -> exp.Expression:
    """`tree` with `select` reduced to its rows where `condition` holds, computed beside its window
    functions so that everything downstream sees only those rows."""
    flagged = select.copy().select(exp.alias_(condition, CLOSED, quoted=True), copy=False)
    return sqlexpr.replaced(tree, select, sqlexpr.wrap(flagged, hidden=[CLOSED], where=column(CLOSED)))


def _selected_end(tree: exp.Expression, columns: Sequence[str]) -> Optional[str]:
    """The output column that is the windows' window_end, under any name; of a SELECT * only
    Spark knows the names (`columns`, lower case)."""
    found = window_columns.selected(tree).get(Bound.END) if isinstance(tree, exp.Select) else None
    return found or (Bound.END.value if Bound.END.value in columns else None)


def _hidden_end(tree: exp.Expression) -> Optional[str]:
    """A window_end the model does not select but its select list can read (Nexmark's q5), added
    to `tree` under a hidden name as a stream adds it; None if none."""
    if not isinstance(tree, exp.Select) or any(p.is_star for p in tree.expressions):
        return None
    return window_columns.hide(tree, Bound.END)


def close_filter(
    query: exp.Expression, watermark_column: str, watermark_micros: Optional[int], output_columns: Sequence[str]
) -> exp.Expression:
    """The model's query reduced to what the watermark W (in epoch micros; None: nothing seen)
    closed; `query` itself is left as it is."""
    tree = query.copy()
    columns = [c.lower() for c in output_columns]
    window_end = _selected_end(tree, columns)
    hidden: List[str] = []
    if window_end is None:
        window_end = _hidden_end(tree)
        hidden = [window_end] if window_end is not None else []
    w = _watermark(watermark_micros)
    calls = [call for call in over_calls(tree) if not call.generated]
    by_select: dict = {}
    for call in calls:
        by_select.setdefault(id(call.select), (call.select, []))[1].append(call)
    # innermost SELECT first: wrapping an outer one copies it, with its inner SELECTs as they are
    # then (over_calls lists outer calls before inner ones)
    for select, select_calls in reversed(list(by_select.values())):
        tree = _closed_rows(tree, select, _closed(select_calls, watermark_column, w))
    if window_end is not None:
        return sqlexpr.wrap(tree, hidden=hidden, where=epoch_micros(column(window_end)) <= w)
    if calls:
        return tree
    if watermark_column.lower() in columns:
        return sqlexpr.wrap(tree, where=epoch_micros(column(watermark_column)) <= w)
    raise AnalysisError(
        "emit='on_window_close' needs a window to close: the output has no window_end column (under any name), "
        f"no over window and no watermark column `{watermark_column}`; fix: add window_end (window TVFs) "
        f"or `{watermark_column}` to the output columns, or use emit='on_update'"
    )


def closing_rows(query: exp.Expression, watermark_column: str, previous: Optional[int], reached: int) -> exp.Expression:
    """Streaming over windows: the model's query reduced to the rows the watermark closes as it
    moves from `previous` to `reached`, so each row is emitted by exactly one micro-batch. A row
    closed at `previous` stays closed, as new rows all come after `previous`. `query` itself is
    left as it is."""
    tree = query.copy()
    calls = [call for call in over_calls(tree) if not call.generated]
    (select,) = {id(c.select): c.select for c in calls}.values()
    condition: exp.Expr = _closed(calls, watermark_column, _watermark(reached))
    if previous is not None:
        before = _closed(calls, watermark_column, _watermark(previous))
        condition = exp.and_(condition, exp.not_(sqlexpr.coalesce(exp.paren(before), exp.false())))
    return _closed_rows(tree, select, condition)


def row_closed(call: OverCall, watermark_column: str, reached: int) -> exp.Expression:
    """Over the call's own FROM: whether a row's value for this call is final at `reached`."""
    return _closed([call], watermark_column, _watermark(reached))


def closed_condition(call: OverCall, watermark_column: str, reached: int) -> str:
    """SQL over the call's own FROM: whether a row's value for this call is final at `reached`."""
    return sqlexpr.to_sql(row_closed(call, watermark_column, reached))
