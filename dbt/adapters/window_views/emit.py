"""emit='on_window_close' in batch: keep only the windows and rows the watermark has closed.

A window is closed when window_end <= W. An over-window row is closed when its ORDER BY value
t <= W and the last row of its frame is closed too (RisingWave's EOWC conditions): ROWS n
FOLLOWING and LEAD(n) wait for the n-th following row, RANGE <interval> FOLLOWING for
t + interval <= W. Rows are filtered where the window functions are computed, so every
operator downstream sees only closed rows, as it would in streaming.
"""

from __future__ import annotations

from typing import List, Optional, Sequence

import sqlglot
from sqlglot import exp

from dbt.adapters.window_views.intervals import epoch_micros
from dbt.adapters.window_views.analysis import (
    PRECEDING_ONLY_FUNCTIONS,
    WHOLE_PARTITION_FUNCTIONS,
    AnalysisError,
    OverCall,
    is_column,
    over_calls,
    parse,
)

CLOSED = "_wv_closed"


def _window_end(call: OverCall) -> Optional[str]:
    """The window_end in a call's PARTITION BY: such a partition is complete when its window is."""
    return next((p for p in call.partition_by if is_column(p, "window_end")), None)


def _row_condition(call: OverCall, watermark_column: str, w: str) -> List[str]:
    """SQL conditions under which this call's value for a row is final."""
    window_end = _window_end(call)
    if window_end is not None:
        return [f"{epoch_micros(window_end)} <= {w}"]
    fix = (
        f"order the window by the watermark column `{watermark_column}` (ascending), or partition it "
        "by window_start, window_end of a window TVF"
    )
    if isinstance(call.node.this, WHOLE_PARTITION_FUNCTIONS):
        raise AnalysisError(f"`{call.sql}` depends on the whole partition, which never closes; fix: {fix}")
    if not call.order_by or not is_column(call.order_by[0][0], watermark_column):
        raise AnalysisError(f"`{call.sql}` is not ordered by the watermark column, so its rows never close; fix: {fix}")
    order_sql, descending = call.order_by[0]
    if descending:
        raise AnalysisError(
            f"`{call.sql}` orders the watermark column descending: its frames reach rows that have not arrived; "
            "fix: order ascending and swap PRECEDING/FOLLOWING (FIRST_VALUE <-> LAST_VALUE)"
        )
    t = epoch_micros(order_sql)
    conditions = [f"{t} <= {w}"]
    end = call.frame.end
    rows_ahead = call.lead_offset
    if rows_ahead is None and not isinstance(call.node.this, PRECEDING_ONLY_FUNCTIONS):
        if end.kind == "unbounded" and end.side == "following":
            raise AnalysisError(
                f"`{call.sql}` has a frame ending in UNBOUNDED FOLLOWING, which never closes; "
                "fix: end the frame at CURRENT ROW or a bounded FOLLOWING offset"
            )
        if end.is_following and call.frame.kind == "rows":
            rows_ahead = end.rows
        elif end.is_following:
            conditions.append(f"{t} + {end.micros} <= {w}")
    if rows_ahead:
        partition = f"partition by {', '.join(call.partition_by)} " if call.partition_by else ""
        # the full ORDER BY, so ties are ordered as in the call itself
        order = ", ".join(f"{o} desc" if d else o for o, d in call.order_by)
        ahead = f"lead({t}, {rows_ahead}) over ({partition}order by {order})"
        if isinstance(call.node.this, exp.IgnoreNulls) and call.lead_offset is not None:
            # LEAD(x, n) IGNORE NULLS is final once the n-th following row with a non-NULL x is
            value = call.node.this.this.this.sql("spark")
            ahead = f"lead(case when {value} is not null then {t} end, {rows_ahead}) ignore nulls over ({partition}order by {order})"
        conditions.append(f"coalesce({ahead} <= {w}, false)")
    return conditions


def _wrap(select: exp.Select, condition: str) -> exp.Expression:
    """select * except (_wv_closed) from (<select>, <condition> as _wv_closed) where _wv_closed"""
    inner = select.copy()
    with_ = inner.args.get("with_")
    if with_ is not None:
        inner.set("with_", None)
    inner = inner.select(f"{condition} AS {CLOSED}", dialect="spark", copy=False)
    outer = sqlglot.parse_one(f"SELECT * EXCEPT ({CLOSED}) FROM (SELECT 1) AS _wv_eowc WHERE {CLOSED}", read="spark")
    outer.args["from_"].this.set("this", inner)
    if with_ is not None:
        outer.set("with_", with_)
    return outer


def close_filter(sql: str, watermark_column: str, watermark_micros: Optional[int], output_columns: Sequence[str]) -> str:
    """The model SQL reduced to what the watermark W (in epoch micros; None: nothing seen) closed."""
    tree = parse(sql)
    w = "CAST(NULL AS BIGINT)" if watermark_micros is None else str(watermark_micros)
    calls = [call for call in over_calls(tree) if not call.generated]
    by_select: dict = {}
    for call in calls:
        by_select.setdefault(id(call.select), (call.select, []))[1].extend(_row_condition(call, watermark_column, w))
    for select, conditions in by_select.values():
        if conditions:
            condition = " AND ".join(dict.fromkeys(conditions))
            replacement = _wrap(select, condition)
            if select is tree:
                tree = replacement
            else:
                select.replace(replacement)
    columns = [c.lower() for c in output_columns]
    if "window_end" in columns:
        return f"SELECT * FROM ({tree.sql('spark')}) AS _wv_windows WHERE {epoch_micros('window_end')} <= {w}"
    if calls:
        return tree.sql("spark")
    if watermark_column.lower() in columns:
        return f"SELECT * FROM ({tree.sql('spark')}) AS _wv_rows WHERE {epoch_micros(watermark_column)} <= {w}"
    raise AnalysisError(
        "emit='on_window_close' needs a window to close: the output has no window_end column, no over "
        f"window and no watermark column `{watermark_column}`; fix: select window_end (window TVFs) "
        f"or `{watermark_column}`, or use emit='on_update'"
    )


def closing_rows(sql: str, watermark_column: str, previous: Optional[int], reached: int) -> str:
    """Streaming over windows: the model SQL reduced to the rows the watermark closes as it moves
    from `previous` to `reached`, so each row is emitted by exactly one micro-batch. A row closed
    at `previous` stays closed, as new rows all come after `previous`."""
    tree = parse(sql)
    calls = [call for call in over_calls(tree) if not call.generated]
    (select,) = {id(c.select): c.select for c in calls}.values()

    def closed_at(w: int) -> str:
        return " AND ".join(dict.fromkeys(c for call in calls for c in _row_condition(call, watermark_column, str(w))))

    condition = f"({closed_at(reached)})"
    if previous is not None:
        condition += f" AND NOT coalesce(({closed_at(previous)}), false)"
    replacement = _wrap(select, condition)
    if select is tree:
        return replacement.sql("spark")
    select.replace(replacement)
    return tree.sql("spark")


def closed_condition(call: OverCall, watermark_column: str, reached: int) -> str:
    """SQL over the call's own FROM: whether a row's value for this call is final at `reached`."""
    return " AND ".join(_row_condition(call, watermark_column, str(reached)))
