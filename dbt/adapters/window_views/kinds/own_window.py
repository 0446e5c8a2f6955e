"""Rows joined to their own window's aggregate (Nexmark's q7): one input read twice, once through
a window TVF (e.g. its MAX per window), once as rows, and a condition on the rows' time column
bounding each row to the window (`B.dateTime BETWEEN B1.window_end - INTERVAL '10' SECOND AND
B1.window_end`). A window's result then needs only that window's rows, read once: it is final
when the watermark passes window_end, which the condition may include (`inclusive_end`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Tuple

from sqlglot import exp

from dbt.adapters.window_views.errors import AnalysisError, IntervalError
from dbt.adapters.window_views.query import window_columns
from dbt.adapters.window_views.query.intervals import Interval
from dbt.adapters.window_views.query.shown import shown
from dbt.adapters.window_views.query.tvf import WindowTvf
from dbt.adapters.window_views.query.window_columns import Bound
from dbt.adapters.window_views.query.windows import WindowKind


@dataclass(frozen=True)
class RowsToWindow:
    """The raw read of the input, as the SQL names it, and how the condition bounds it."""

    rows: str  # the raw read's alias, e.g. `B`
    inclusive_end: bool  # a row at exactly window_end joins that window too


# comparisons as `column op other`: the operator read from the column's side, flipped if it is on the right
_FLIPPED: Dict[type, type] = {exp.LTE: exp.GTE, exp.LT: exp.GT, exp.GTE: exp.LTE, exp.GT: exp.LT}


def _conditions(select: exp.Select) -> Iterator[exp.Expr]:
    """The conjuncts of `select`'s WHERE and of its joins' ON."""
    clauses = [select.args.get("where"), *(j.args.get("on") for j in select.args.get("joins") or [])]
    for clause in clauses:
        if clause is None:
            continue
        condition = clause.this if isinstance(clause, exp.Where) else clause
        yield from (c.unnest() for c in (condition.flatten() if isinstance(condition, exp.And) else [condition]))


def _is_time_of(node: exp.Expression, rows: str, time_col: str) -> bool:
    return (
        isinstance(node, exp.Column)
        and node.table.lower() == rows.lower()
        and node.name.strip("`").lower() == time_col.strip("`").lower()
    )


def _comparisons(select: exp.Select, rows: str, time_col: str) -> List[Tuple[type, exp.Expression]]:
    """Each bound the conditions put on the raw rows' time column: (LTE / LT / GTE / GT, the other side)."""
    found: List[Tuple[type, exp.Expression]] = []
    for condition in _conditions(select):
        if isinstance(condition, exp.Between) and _is_time_of(condition.this, rows, time_col):
            found += [(exp.GTE, condition.args["low"]), (exp.LTE, condition.args["high"])]
        elif type(condition) in _FLIPPED:
            left, right = condition.this, condition.expression
            if _is_time_of(left, rows, time_col):
                found.append((type(condition), right))
            elif _is_time_of(right, rows, time_col):
                found.append((_FLIPPED[type(condition)], left))
    return found


def _is_bound(node: exp.Expression, bound: Bound) -> bool:
    return isinstance(node, exp.Column) and window_columns.bound_of(node) is bound


def _reach(node: exp.Expression) -> Optional[int]:
    """How far before window_end a lower bound lies (`window_end - INTERVAL ...`), micros."""
    if not (isinstance(node, exp.Sub) and _is_bound(node.this, Bound.END)):
        return None
    interval = node.expression
    if not isinstance(interval, exp.Interval):
        return None
    unit = interval.args.get("unit")
    try:
        return Interval.parse(f"{interval.this.name} {unit.name if unit is not None else ''}").micros
    except IntervalError:
        return None


def _from_start(other: exp.Expression, window: WindowTvf) -> bool:
    """Whether a lower bound is within the window: window_start, or (every window of one size:
    not a CUMULATE's) at most the window's size before window_end."""
    if _is_bound(other, Bound.START):
        return True
    reach = _reach(other)
    return reach is not None and window.kind is not WindowKind.CUMULATE and reach <= window.span


def _bounded(comparisons: List[Tuple[type, exp.Expression]], window: WindowTvf) -> Optional[bool]:
    """Whether the comparisons hold the rows within a window (from its start up to window_end):
    None if they do not, else whether window_end itself is in."""
    lower = any(op in (exp.GTE, exp.GT) and _from_start(other, window) for op, other in comparisons)
    upper = [op is exp.LTE for op, other in comparisons if op in (exp.LTE, exp.LT) and _is_bound(other, Bound.END)]
    if not lower or not upper:
        return None
    return all(upper)


def _in_tvf(table: exp.Table) -> bool:
    select = table.find_ancestor(exp.Select)
    return select is not None and window_columns.is_tvf(select)


def find(
    tree: exp.Expression, table: Tuple[Optional[str], str], time_col: str, window: WindowTvf
) -> Optional[RowsToWindow]:
    """The raw read of `table` (read twice: once by the window TVF `window`, once as rows and
    joined) bounded to the window by its select's conditions; None if the SQL reads it otherwise;
    an AnalysisError naming the join, if no condition bounds it."""
    schema, name = table
    reads = [t for t in tree.find_all(exp.Table) if t.name == name and (t.db or None) == schema]
    raw = [t for t in reads if not _in_tvf(t)]
    select = raw[0].find_ancestor(exp.Select) if len(raw) == 1 else None
    joins = select.args.get("joins") if select is not None else None
    if select is None or not joins:
        return None  # not raw rows joined to their window
    rows = raw[0].alias_or_name
    inclusive = _bounded(_comparisons(select, rows, time_col), window)
    if inclusive is None:
        end = window_columns.readable(select, Bound.END)
        end_sql = end.sql("spark") if end is not None else "window_end"
        column = f"{rows}.{time_col}"
        span = dict(window.texts).get("size", f"{window.span} microseconds")
        from_start = f"`{column} >= window_start AND {column} < {end_sql}`"
        conditions = (
            from_start
            if window.kind is WindowKind.CUMULATE
            else f"`{column} BETWEEN {end_sql} - INTERVAL '{span}' AND {end_sql}` (or {from_start})"
        )
        raise AnalysisError(
            f"`{shown(joins[0])}` joins the rows of {'.'.join(filter(None, table))} to their window "
            f"`{window.label()}`, but no condition holds each row within its window, so a stream could not "
            f"say when a joined row is final; fix: add {conditions} to its WHERE, or use execution='batch'"
        )
    return RowsToWindow(rows, inclusive)
