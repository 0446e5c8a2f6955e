"""A streaming SESSION window + GROUP BY of decomposable aggregates (read by tvf_aggregate.py):
the state is one row of partial aggregates per (key, open session) -- its start, its last row's
time and panes.py's pane partials -- instead of the open sessions' rows.

A micro-batch's new rows are aggregated per (key, time) and merged into sessions; with a state,
those partials and the state's are merged again. A partial joins the session before it when it
starts within `gap` of the latest time seen so far (Spark's session merging), so a new row that
bridges two partials merges them, and the merged sessions are the ones the rows would make.
The model SQL then reads the sessions: window_start is the first time, window_end the last + gap.
"""

from __future__ import annotations

from typing import List, Optional

from sqlglot import exp

from dbt.adapters.window_views import names
from dbt.adapters.window_views.kinds.partials import panes
from dbt.adapters.window_views.kinds.partials.slicing import MERGE, Slicing, pane_subquery
from dbt.adapters.window_views.names import PANE, internal
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.query.windows import Session

START = PANE  # a session's first time, epoch micros: the pane start of pane_state's rows
LAST = internal("l")  # a session's last row time, epoch micros
TIME = internal("t")
FLAG = internal("new")  # a partial that starts a session
NUMBER = internal("session")  # the session's running number within its key

_UNBOUNDED = ("UNBOUNDED", "PRECEDING")


def _keys(window: Session) -> List[exp.Expression]:
    return [sqlexpr.column(k) for k in window.group_by]


def _merge(leaf: panes.Leaf) -> str:
    """How two sessions' partials of `leaf` merge (slicing's rule for two batches' panes)."""
    return next(how for kind, how in MERGE.items() if isinstance(leaf.pane, kind))


def _merged(source: exp.Expression, window: Session, leaves: List[panes.Leaf], columns: List[str]) -> exp.Select:
    """One row per session of the partials in `source`: a partial starts a new session unless it
    starts within `gap` of the latest time of the partials that start before it (a RANGE frame:
    ties agree whatever their order)."""
    keys, start, last = _keys(window), exp.column(START), exp.column(LAST)
    by_start = [sqlexpr.ordered(start)]
    before = sqlexpr.frame("RANGE", _UNBOUNDED, (exp.Literal.number(1), "PRECEDING"))
    latest = sqlexpr.window(exp.Max(this=last), keys, by_start, before)
    starts = exp.If(
        this=exp.LTE(this=exp.Sub(this=start, expression=latest), expression=exp.Literal.number(window.gap)),
        true=exp.Literal.number(0),
        false=exp.Literal.number(1),
    )
    flagged = exp.select(exp.Star(), exp.alias_(starts, FLAG)).from_(source)
    upto = sqlexpr.frame("RANGE", _UNBOUNDED, ("CURRENT ROW", None))
    numbered = sqlexpr.window(exp.Sum(this=exp.column(FLAG)), keys, by_start, upto)
    numbered_rows = exp.select(exp.Star(), exp.alias_(numbered, NUMBER)).from_(
        flagged.subquery(names.internal("flagged"))
    )
    merged = [exp.alias_(exp.func(_merge(leaf), exp.column(c)), c) for leaf, c in zip(leaves, columns)]
    return (
        exp.select(*keys, exp.alias_(exp.Min(this=start), START), exp.alias_(exp.Max(this=last), LAST), *merged)
        .from_(numbered_rows.subquery(names.internal("numbered")))
        .group_by(*[k.copy() for k in keys], exp.column(NUMBER))
    )


def plan(tree: exp.Expression, window: Session, view: str) -> Optional[Slicing]:
    """Point the model's session aggregate (in `tree`, as tvf_aggregate.rewrite made it) at the
    session partials in `view`, and return what a micro-batch runs to keep them; None (tree
    unchanged) when a measure does not decompose into partials that merge exactly."""
    found = panes.leaves(panes.parse_measures(dict(window.measures)))
    if isinstance(found, str) or any(leaf.combine not in ("count", "sum", "min", "max") for leaf in found[0]):
        return None  # approximate distinct counts: a merged sketch is not the batch's estimate
    by_leaf, outputs = found
    leaves, columns = list(by_leaf), list(by_leaf.values())
    subquery = pane_subquery(tree)
    if subquery is None:
        raise ValueError("the session aggregate has no pane subquery to keep as session partials")
    keys = _keys(window)
    time = sqlexpr.column(window.time_col.strip("`"))
    rows_view, merge_view = f"{view}_rows", f"{view}_merge"
    row_times = exp.select(exp.Star(), exp.alias_(sqlexpr.epoch_micros(time), TIME)).from_(rows_view)
    row_times = row_times.where(exp.Not(this=exp.Is(this=time.copy(), expression=exp.null())))
    if keys:  # shuffled once by key: the per-time partials and the merge's window both run in it
        row_times.set("hint", exp.Hint(expressions=[exp.Anonymous(this="REPARTITION", expressions=keys)]))
    per_time = (
        exp.select(
            *keys,
            exp.alias_(exp.column(TIME), START),
            exp.alias_(exp.column(TIME), LAST),
            *[exp.alias_(leaf.pane.copy(), c) for leaf, c in zip(leaves, columns)],
        )
        .from_(row_times.subquery(sqlexpr.ROWS))
        .group_by(*[k.copy() for k in keys], exp.column(TIME))
    )
    end = exp.Add(this=exp.column(LAST), expression=exp.Literal.number(window.gap))
    sessions = exp.select(*keys, *sqlexpr.window_bounds(exp.column(START), end), *outputs).from_(view)
    subquery.set("this", sessions)
    return Slicing(
        rows_view,
        _merged(per_time.subquery(names.internal("times")), window, leaves, columns),
        _merged(exp.to_table(merge_view), window, leaves, columns),
        merge_view,
        (*window.group_by, START, LAST, *columns),
        tuple(window.group_by),
    )


def open_after(window: Session, watermark: int) -> exp.Expr:
    """Over the state's columns: the session may still grow (its last time + gap is after W)."""
    end = exp.Add(this=exp.column(LAST), expression=exp.Literal.number(window.gap))
    return exp.GT(this=end, expression=exp.Literal.number(watermark))
