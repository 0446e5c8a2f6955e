"""Streaming over windows with emit='on_window_close' (RisingWave's EOWC OverWindow): the rows a
micro-batch emits, and the rows the state must keep for the frames still to come.

Rows wait in the retained input until the watermark passes their ORDER BY value and the last row
of their frame (emit.closing_rows). A partition's earliest unemitted row (or, with none, the next
row to arrive, later than W) is its cut: the state keeps the rows at or after the cut, and before
it only what a frame starting at the cut reaches back to: `n` rows (ROWS n PRECEDING, LAG(n)) or an
interval (RANGE <interval> PRECEDING). UNBOUNDED PRECEDING frames and ranking functions read the
whole partition, so their state is unbounded (a warning).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

from sqlglot import exp

from dbt.adapters.window_views import analysis, emit
from dbt.adapters.window_views.analysis import AnalysisError, OverCall
from dbt.adapters.window_views.intervals import epoch_micros

RANKING = (exp.RowNumber, exp.Rank, exp.DenseRank)


@dataclass(frozen=True)
class Reach:
    """How far back from a row one window call reads."""

    partition_by: Tuple[str, ...]
    order_by: Tuple[str, ...]  # the full ORDER BY, ascending
    rows: int = 0  # rows before the current one
    micros: int = 0  # RANGE interval before the current row's value
    unbounded: bool = False


@dataclass(frozen=True)
class OverPlan:
    watermark_column: str
    reaches: Tuple[Reach, ...]
    calls: Tuple[str, ...]

    @property
    def unbounded(self) -> List[str]:
        return [call for call, reach in zip(self.calls, self.reaches) if reach.unbounded]


def _unqualified(sql: str) -> str:
    node = analysis.parse(sql)
    for column in node.find_all(exp.Column):
        column.set("table", None)
    return node.sql("spark")


def _reach(call: OverCall) -> Reach:
    func = call.node.this
    while isinstance(func, (exp.IgnoreNulls, exp.RespectNulls)):
        func = func.this
    partition = tuple(_unqualified(p) for p in call.partition_by)
    order = tuple(_unqualified(o) for o, _ in call.order_by)
    if isinstance(func, RANKING):
        return Reach(partition, order, unbounded=True)
    if isinstance(func, exp.Lag):
        offset = func.args.get("offset")
        if offset is not None and not (isinstance(offset, exp.Literal) and not offset.is_string):
            raise AnalysisError(f"LAG offset in `{call.sql}` must be an integer literal")
        return Reach(partition, order, rows=int(offset.this) if offset is not None else 1)
    if isinstance(func, exp.Lead):
        return Reach(partition, order)
    start = call.frame.start
    if start.kind == "unbounded":
        return Reach(partition, order, unbounded=True)
    if start.kind == "current" or start.side == "following":
        return Reach(partition, order)
    if call.frame.kind == "rows":
        return Reach(partition, order, rows=start.rows or 0)
    return Reach(partition, order, micros=start.micros or 0)


def plan(tree: exp.Expression, watermark_column: str) -> OverPlan:
    """Check that every window call can be streamed and record how far back each one reads."""
    calls = [c for c in analysis.over_calls(tree) if not c.generated]
    selects = {id(c.select): c.select for c in calls}
    if len(selects) != 1:
        raise AnalysisError(
            "streaming over windows need all window functions in one SELECT; fix: compute them in one "
            "SELECT, or move the others to a downstream model"
        )
    (select,) = selects.values()
    source = select.args.get("from_")
    if select.args.get("group") is not None or select.args.get("joins") or not isinstance(getattr(source, "this", None), exp.Table):
        raise AnalysisError(
            "the SELECT with the window functions must read the upstream table directly (no GROUP BY, "
            "join or subquery in its FROM) for its rows to be kept as state; fix: move the rest to a "
            "downstream model"
        )
    for call in calls:
        if call.order_by and call.order_by[0][1]:
            raise AnalysisError(
                f"`{call.sql}` orders the watermark column descending: its frames reach rows that have not "
                "arrived; fix: order ascending and swap PRECEDING/FOLLOWING (FIRST_VALUE <-> LAST_VALUE)"
            )
        emit.closed_condition(call, watermark_column, 0)  # raises for calls whose rows never close
    return OverPlan(watermark_column, tuple(_reach(c) for c in calls), tuple(c.sql for c in calls))


def retain_sql(sql: str, over: OverPlan, view: str, reached: int) -> str:
    """SQL over `view` (the retained input) selecting the rows the state keeps at watermark `reached`."""
    tree = analysis.parse(sql)
    calls = [c for c in analysis.over_calls(tree) if not c.generated]
    select = calls[0].select.copy()
    for key in ("windows", "order", "limit", "distinct", "qualify"):
        select.set(key, None)
    select.set("expressions", [exp.Star()])
    closed = []
    for i, call in enumerate(calls):
        select = select.select(f"coalesce({emit.closed_condition(call, over.watermark_column, reached)}, false) AS _wv_closed_{i}", dialect="spark", copy=False)
        closed.append(f"_wv_closed_{i}")
    t = epoch_micros(f"`{over.watermark_column}`")
    future = reached + 1  # the next row to arrive is later than W
    # a row is emitted once every call's value for it is final
    emitted = " and ".join(closed)
    cuts, befores, keeps = [], [], []
    for i, reach in enumerate(over.reaches):
        if reach.unbounded:
            keeps.append("true")
            continue
        part = f"partition by {', '.join(reach.partition_by)}" if reach.partition_by else ""
        cuts.append(
            f"least(coalesce(min(case when not ({emitted}) then {t} end) over ({part}), {future}), {future}) AS _wv_cut_{i}"
        )
        keep = f"{t} >= _wv_cut_{i} - {reach.micros}"
        if reach.rows:
            # rows before the cut, counted back from it
            befores.append(
                f"sum(case when {t} < _wv_cut_{i} then 1 else 0 end) over ({part} order by "
                f"{', '.join(o + ' desc' for o in reach.order_by)} rows between unbounded preceding and current row) AS _wv_before_{i}"
            )
            keep = f"({keep} or _wv_before_{i} <= {reach.rows})"
        keeps.append(keep)
    query = select.sql("spark")
    for columns in (cuts, befores):
        if columns:
            query = f"select *, {', '.join(columns)} from ({query}) _wv_rows"
    hidden = closed + [c.rsplit(" AS ", 1)[1] for c in cuts + befores]
    return f"select * except ({', '.join(hidden)}) from ({query}) _wv_rows where {' or '.join(f'({k})' for k in keeps)}"
