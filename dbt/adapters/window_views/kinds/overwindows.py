"""Streaming over windows (RisingWave's OverWindow): the rows a micro-batch emits, and the rows
the state must keep for the frames still to come.

Rows wait in the retained input until the watermark passes their ORDER BY value and the last row
of their frame (emit.closing_rows). A partition's earliest unemitted row (or, with none, the next
row to arrive, later than W) is its cut: the state keeps the rows at or after the cut, and before
it only what a frame starting at the cut reaches back to: `n` rows (ROWS n PRECEDING, LAG(n)) or an
interval (RANGE <interval> PRECEDING). Frames from UNBOUNDED PRECEDING and ranking functions keep
a per-partition summary of the rows evicted instead (prefix.py); the few calls no summary can
serve (LAST_VALUE, NTH_VALUE, collect_list over UNBOUNDED PRECEDING) keep the whole partition,
with a warning.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Type, cast

from sqlglot import exp

from dbt.adapters.window_views import names
from dbt.adapters.window_views.kinds import emit, prefix
from dbt.adapters.window_views.query import analysis, sqlexpr
from dbt.adapters.window_views.query.analysis import (
    AnalysisError,
    BoundKind,
    Frame,
    FrameBound,
    FrameKind,
    OrderKey,
    OverCall,
    Side,
)
from dbt.adapters.window_views.query.sqlexpr import Named, column, epoch_micros

RANKING = (exp.RowNumber, exp.Rank, exp.DenseRank)
KEEP = names.internal("keep")
RECOMPUTE_FROM = names.internal("from")  # on_update: the event time (epoch micros) the next batch recomputes from
EVERY = 1 << 62  # an interval reaching every row (epoch micros stay far from overflow)


@dataclass(frozen=True)
class StateReach:
    """How far back (and ahead) from a row one window call reads: what a stream's state keeps
    for it (kinds/reach.py's `Reach` is a batch's input range, another concept)."""

    partition_by: Tuple[str, ...]
    order_by: Tuple[OrderKey, ...]  # the full ORDER BY, unqualified
    rows: int = 0  # rows before the current one
    micros: int = 0  # RANGE interval before the current row's value
    unbounded: bool = False
    ahead_rows: int = 0  # rows after it (LEAD, ROWS n FOLLOWING): a new row changes rows this far back
    ahead_micros: int = 0  # RANGE interval after it


@dataclass(frozen=True)
class OverPlan:
    watermark_column: str
    reaches: Tuple[StateReach, ...]
    calls: Tuple[str, ...]
    prefix: Tuple[prefix.PrefixCall, ...] = ()  # calls kept as per-partition state
    closure: Optional[Tuple[str, ...]] = None  # PARTITION BY in which evicted rows must form a prefix
    # on_update: the PARTITION BY columns each partition recomputes by on its own, when a call
    # looks ahead (_partitioned); empty: one point in event time for all
    partitioned_by: Tuple[str, ...] = ()

    @property
    def unbounded(self) -> List[str]:
        return [call for call, reach in zip(self.calls, self.reaches) if reach.unbounded]

    @property
    def sorted_by(self) -> Optional[Tuple[Tuple[str, ...], Tuple[OrderKey, ...]]]:
        """The PARTITION BY column names and the ORDER BY keys every call shares, when they are
        plain columns: rows clustered and sorted by them are what each window pass over them
        (the model's, the state's) reads, with no shuffle or sort of its own. None when the
        calls differ or use expressions."""
        specs = {(r.partition_by, r.order_by) for r in self.reaches}
        if len(specs) != 1:
            return None
        ((partition, order),) = specs
        nodes = [analysis.parse(k) for k in (*partition, *(o for o, _, _ in order))]
        if not partition or not all(isinstance(n, exp.Column) for n in nodes):
            return None
        names = tuple(n.name for n in nodes)
        return names[: len(partition)], tuple(
            (name, desc, first) for name, (_, desc, first) in zip(names[len(partition) :], order)
        )


def _reach(
    index: int, call: OverCall, closure: Optional[Tuple[str, ...]]
) -> Tuple[StateReach, Optional[prefix.PrefixCall]]:
    func = call.func
    partition = tuple(analysis.unqualified(p) for p in call.partition_nodes)
    order = tuple(
        (analysis.unqualified(o), desc, nulls_first)
        for o, (_, desc, nulls_first) in zip(call.order_nodes, call.order_by)
    )
    if isinstance(func, (exp.Lag, exp.Lead)):
        n = analysis.row_offset(func, call.shown)
        if call.ignore_nulls:
            # the n-th non-NULL value may lie any number of rows away: LAG keeps the partition,
            # and a new non-NULL value changes LEAD for every row since the last one
            ahead = 0 if isinstance(func, exp.Lag) else EVERY
            return StateReach(partition, order, unbounded=True, ahead_micros=ahead), None
        return (
            StateReach(partition, order, rows=n)
            if isinstance(func, exp.Lag)
            else StateReach(partition, order, ahead_rows=n)
        ), None
    start, end = call.frame.start, call.frame.end
    rows = call.frame.kind is FrameKind.ROWS
    reach = StateReach(partition, order)
    if end.is_offset(Side.FOLLOWING) and not isinstance(func, RANKING):
        reach = _extended(reach, end, rows, ahead=True)
    state = None
    if isinstance(func, RANKING) or start.is_unbounded():
        state = prefix.classify(index, call, partition, tuple(o for o, _, _ in order))
        if state is not None and state.kind in prefix.TIE_SENSITIVE and closure not in (None, partition):
            state = None  # one prefix closure only: another PARTITION BY keeps its rows
        if state is None:
            return dataclasses.replace(reach, unbounded=True), None
    if isinstance(func, RANKING):
        pass  # ranks count the rows before: all in the state or the retained rows
    elif start.is_offset(Side.PRECEDING):
        reach = _extended(reach, start, rows)
    elif start.is_unbounded() and end.is_offset(Side.PRECEDING):
        # the rows between the frame's end and the cut stay, so every evicted row is in the frame
        reach = _extended(reach, end, rows)
    return reach, state


def _extended(reach: StateReach, bound: FrameBound, rows: bool, ahead: bool = False) -> StateReach:
    """`reach` reading as far as an offset bound: rows (ROWS) or micros (RANGE), back or ahead."""
    if ahead:
        if rows:
            return dataclasses.replace(reach, ahead_rows=bound.rows or 0)
        return dataclasses.replace(reach, ahead_micros=bound.micros or 0)
    if rows:
        return dataclasses.replace(reach, rows=bound.rows or 0)
    return dataclasses.replace(reach, micros=bound.micros or 0)


def plan(tree: exp.Expression, watermark_column: str) -> OverPlan:
    """Check that every window call can be streamed and record how far back each one reads."""
    calls = [c for c in analysis.over_calls(tree) if not c.generated]
    selects = {id(c.select): c.select for c in calls}
    if len(selects) != 1:
        raise AnalysisError(
            "streaming over windows need all window functions in one query; fix: compute them in one "
            "query, or move the others to a downstream model"
        )
    (select,) = selects.values()
    source = getattr(select.args.get("from_"), "this", None)
    if select.args.get("group") is not None or select.args.get("joins") or not isinstance(source, exp.Table):
        raise AnalysisError(
            "the query with the window functions must read the upstream table directly (no GROUP BY, "
            "join or subquery in its FROM) for its rows to be kept as state; fix: move the rest to a "
            "downstream model"
        )
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    if not source.db and source.name.lower() in ctes:
        raise AnalysisError(
            f"the query with the window functions reads the CTE `{source.name}`, but its rows are kept "
            "as state as the upstream table gives them; fix: compute the CTE in an upstream model, or read "
            "the upstream table directly in that query"
        )
    for call in calls:
        _check_order(call, watermark_column)
        emit.closed_condition(call, watermark_column, 0)  # raises for calls whose rows never close
    reaches, states = [], []
    closure: Optional[Tuple[str, ...]] = None
    for index, call in enumerate(calls):
        reach, state = _reach(index, call, closure)
        reaches.append(reach)
        if state is not None:
            states.append(state)
            if state.kind in prefix.TIE_SENSITIVE:
                closure = state.partition_by
    return OverPlan(
        watermark_column,
        tuple(reaches),
        tuple(c.sql for c in calls),
        tuple(states),
        closure,
        _partitioned(reaches, select),
    )


def _check_order(call: OverCall, watermark_column: str) -> None:
    """Refuse the orders a stream cannot keep, saying why: the watermark column descending (its
    frames reach ahead of W), or a ranking by another column over partitions that never close."""
    if not call.order_by:
        return
    order_sql, descending, _ = call.order_by[0]
    top_n = (
        "fix: keep its top rows in an outer query, `WHERE <its alias> <= N`, with emit='on_update' (a keyed "
        "Top-N, which a stream keeps), or use execution='batch'"
    )
    if analysis.is_column(call.order_nodes[0], watermark_column):
        if descending and isinstance(call.func, RANKING):
            raise AnalysisError(
                f"`{call.shown}` ranks rows by the watermark column descending, in partitions that never close: "
                f"every later row takes the first rank; {top_n}"
            )
        if descending:
            raise AnalysisError(
                f"`{call.shown}` orders the watermark column descending: its frames reach rows that have not "
                "arrived; fix: order ascending and swap PRECEDING/FOLLOWING (FIRST_VALUE <-> LAST_VALUE)"
            )
        return
    by_window = any(analysis.is_column(p, "window_end") for p in call.partition_nodes)
    if isinstance(call.func, RANKING) and not by_window:
        raise AnalysisError(
            f"`{call.shown}` ranks rows by `{order_sql}`, not by the watermark column `{watermark_column}`, in "
            "partitions that never close, so a later row can change the rank of any row; fix: keep its top rows "
            "in an outer query, `WHERE <its alias> <= N`, with emit='on_update' (a keyed Top-N, which a stream "
            "keeps), rank within the window_start, window_end of a window TVF, or use execution='batch'"
        )


def _partitioned(reaches: Sequence[StateReach], select: exp.Select) -> Tuple[str, ...]:
    """on_update: the PARTITION BY columns by which each partition keeps and recomputes its rows
    from its own point. It matters where a call looks ahead (LEAD, n FOLLOWING): a partition's
    last row waits for the next one, so one point for all partitions would stay at the last row
    of a partition that gets no more rows, and every partition keep every row since. Possible
    when every call has the one PARTITION BY, of plain columns the SELECT passes on unchanged
    (the output must hold them too: ModelQuery.partitioned_by)."""
    partitions = {r.partition_by for r in reaches}
    if len(partitions) != 1 or not any(r.ahead_rows or r.ahead_micros for r in reaches):
        return ()
    (partition,) = partitions
    star = any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
        for e in select.expressions
    )
    passed = {e.name.lower() for e in select.expressions if isinstance(e, exp.Column)} | {
        e.alias.lower()
        for e in select.expressions
        if isinstance(e, exp.Alias) and isinstance(e.this, exp.Column) and e.this.name.lower() == e.alias.lower()
    }
    names = []
    for sql in partition:
        node = analysis.parse(sql)
        if not isinstance(node, exp.Column) or not (star or node.name.lower() in passed):
            return ()
        names.append(node.name)
    return tuple(names)


def _input_rows(tree: exp.Expression) -> Tuple[exp.Select, List[OverCall]]:
    """The SELECT with the window functions reduced to `SELECT *` over its FROM and WHERE: the
    rows its windows see (a copy: `tree` stays as it is)."""
    calls = [c for c in analysis.over_calls(tree) if not c.generated]
    select = calls[0].select.copy()
    for key in ("windows", "order", "limit", "distinct", "qualify"):
        select.set(key, None)
    select.set("expressions", [exp.Star()])
    return select, calls


def _t(over: OverPlan) -> exp.Expression:
    """The watermark column of the model's input, in epoch micros."""
    return epoch_micros(column(over.watermark_column))


def _over(func: exp.Expression, partition_by: Sequence[str]) -> exp.Window:
    """`func` over a plan's (unqualified) PARTITION BY."""
    return sqlexpr.window(func, [sqlexpr.parse(p) for p in partition_by])


_TO_CURRENT = sqlexpr.frame("rows", ("UNBOUNDED", "PRECEDING"), ("CURRENT ROW", None))
_WHOLE = sqlexpr.frame("rows", ("UNBOUNDED", "PRECEDING"), ("UNBOUNDED", "FOLLOWING"))


def _rows_before(t: exp.Expression, bound: sqlexpr.Value, reach: StateReach) -> exp.Expression:
    """Per partition, how many rows come before `bound`, counted back from it (1 = the last one):
    those before `bound` in the partition, less those before this row, in the calls' own order, ties
    broken as they break them (a count run the other way would sort every row a second time)."""
    before = exp.case().when(t < bound, 1).else_(0)
    partition = [sqlexpr.parse(p) for p in reach.partition_by]
    order = sqlexpr.order_by(reach.order_by)
    # the total over the same ORDER BY as the count so far, with a whole-partition frame (summed
    # once per partition): Spark computes both in one window pass, where a total without the
    # ORDER BY is a pass of its own (an on_window_close flag pass at 10M rows: 5.3 -> 4.1 s)
    total = sqlexpr.window(exp.Sum(this=before.copy()), partition, order, _WHOLE)
    so_far = sqlexpr.window(exp.Sum(this=before.copy()), partition, order, _TO_CURRENT)
    return exp.paren(total - so_far + before)


def _changed_by(t: exp.Expression, bound: sqlexpr.Value, reach: StateReach) -> exp.Expr:
    """Whether a row at `bound` (epoch micros) lies within the row's FOLLOWING reach, so changes it."""
    condition: exp.Expr = t >= exp.convert(bound) - reach.ahead_micros
    if reach.ahead_rows:
        condition = exp.or_(condition, _rows_before(t, bound, reach) <= reach.ahead_rows)
    return condition


class _ReachedBack:
    """Whether a row lies within the PRECEDING reach of a frame starting at a bound column. A
    reach in rows counts rows back from the bound in a column of its own, one per partition,
    order and bound: calls that share them (the usual case) share its window passes, which Spark
    would compute once per copy. `columns` are those counts, for the query to compute first."""

    def __init__(self, t: exp.Expression) -> None:
        self.t = t
        self.columns: Dict[tuple, Named] = {}

    def condition(self, reach: StateReach, bound: str) -> exp.Expr:
        keep = self.t >= column(bound) - reach.micros
        if not reach.rows:
            return keep
        key = (reach.partition_by, reach.order_by, bound)
        if key not in self.columns:
            self.columns[key] = (
                names.internal(f"before_{len(self.columns)}"),
                _rows_before(self.t, column(bound), reach),
            )
        return exp.or_(keep, column(self.columns[key][0]) <= reach.rows)

    def wrap(self, query: exp.Select) -> exp.Select:
        """`query` with the row counts the conditions read."""
        return sqlexpr.wrap(query, list(self.columns.values())) if self.columns else query


def _distinct(conditions: Iterable[exp.Expr]) -> List[exp.Expr]:
    """The conditions, each once: calls that share a reach share its condition, which Spark
    would otherwise evaluate once per copy."""
    seen: Dict[str, exp.Expr] = {}
    for condition in conditions:
        seen.setdefault(condition.sql("spark"), condition)
    return list(seen.values())


def _any(conditions: Sequence[exp.Expr]) -> exp.Expression:
    """The conditions ORed (sqlglot types or_ as a Condition; what it builds is an expression node)."""
    return cast(exp.Expression, exp.or_(*conditions))


def _names(columns: Iterable[Named]) -> List[str]:
    return [name for name, _ in columns]


_ELIGIBLE = names.internal("eligible")
_OWN = names.internal("own")  # on_update: the earliest eligible time of a row's partition


def held_back_before(reached: int, horizon: int) -> int:
    """By partition (update_retain_sql): a partition whose own point lies before this, at
    watermark `reached`, is held back — its last row waits for a next one that has not come —
    and keeps its own point; the others share one."""
    return reached + 1 - horizon


def update_retain_sql(
    query: exp.Expression, over: OverPlan, reached: int, one_task: bool = True, horizon: Optional[int] = None
) -> str:
    """on_update: SQL over the retained rows flagging (`_wv_keep`) those the state keeps at watermark
    `reached`, with the point the next batch recomputes from in `RECOMPUTE_FROM`. A later row
    (after W) changes rows from its FOLLOWING reach back, and those read their frames' PRECEDING
    reach further back; the state keeps every row from the point. It is the earliest such row
    over all partitions, the same in every row, so the next batch recomputes every partition
    from it (no pass of its own to find it). By partition (`horizon`: OverPlan.partitioned_by),
    a partition whose own point is more than `horizon` before W + 1 — its last row waits for a
    next one that has not come — keeps its own point, which no longer holds the others back;
    the others share the earliest such row of the last `horizon`, where all their points lie
    (so a batch where no partition is held back still recomputes from one point). The earliest
    is a window over every row (`one_task`: they pass through one task, in the query's job) or a
    scalar subquery (a job of its own, for large batches whose shuffles are jobs of their own
    anyway: an initial load's history in one task is slow; by partition it reads the last
    `horizon` only)."""
    select, _ = _input_rows(query)
    t = _t(over)
    future = reached + 1
    # one column: the row's time where some call's reach makes a later row change it (reaches
    # that several calls share are tested once)
    changed = exp.or_(*_distinct(_changed_by(t, future, r) for r in over.reaches))
    flag = (_ELIGIBLE, exp.case().when(changed, t))
    eligible = column(_ELIGIBLE)
    rows = sqlexpr.wrap(select, [flag])
    hidden = [_ELIGIBLE]
    held = None if horizon is None else held_back_before(reached, horizon)
    recent = None if held is None else t >= held

    def earliest(first: exp.Expression) -> exp.Expression:
        return sqlexpr.least([sqlexpr.coalesce(first, future), future])

    if one_task:
        shared = eligible if recent is None else exp.case().when(recent.copy(), eligible)
        point = earliest(sqlexpr.window(exp.Min(this=shared)))
        query = rows
    else:
        # a row of the last `horizon` is changed by a later one or not whatever the rows before
        scanned = rows if recent is None else sqlexpr.wrap(select.where(recent.copy()), [flag])
        bound = sqlexpr.wrap(scanned, [(names.internal("bound"), earliest(exp.Min(this=eligible)))], star=False)
        point = exp.Subquery(this=bound)
        query, hidden = (rows, hidden) if recent is not None else (select, [])
    if recent is not None:
        partition = over.reaches[0].partition_by  # every call's (_partitioned)
        query = sqlexpr.wrap(query, [(_OWN, earliest(_over(exp.Min(this=eligible), partition)))])
        hidden = hidden + [_OWN]
        point = exp.case().when(column(_OWN) < held, column(_OWN)).else_(point)
    query = sqlexpr.wrap(query, [(RECOMPUTE_FROM, point)])
    if any(r.unbounded for r in over.reaches):
        return sqlexpr.to_sql(sqlexpr.wrap(query, [(KEEP, exp.true())], hidden=hidden))
    back = _ReachedBack(t)
    keeps = [back.condition(reach, RECOMPUTE_FROM) for reach in over.reaches]
    return _flagged(back.wrap(query), hidden + _names(back.columns.values()), keeps, over)


def _flagged(query: exp.Select, hidden: List[str], keeps: Sequence[exp.Expr], over: OverPlan) -> str:
    """The rows of `query` with `_wv_keep`: whether the state keeps them. Where a prefix summary
    needs whole ties in order (DENSE_RANK, FIRST_VALUE), every row from a partition's first kept
    one is kept too, so the evicted rows are a prefix of it."""
    keep = sqlexpr.coalesce(_any(_distinct(keeps)), exp.true())
    flagged = sqlexpr.wrap(query, [(KEEP, keep)], hidden=hidden)
    if over.closure is not None:
        t = _t(over)
        first = _over(exp.Min(this=exp.case().when(column(KEEP), t)), over.closure)
        closed = _any([column(KEEP), sqlexpr.coalesce(t >= first, exp.false())])
        flagged = sqlexpr.wrap(flagged, [(KEEP, closed)], hidden=[KEEP])
    return sqlexpr.to_sql(flagged)


def retain_sql(query: exp.Expression, over: OverPlan, reached: int) -> str:
    """on_window_close: SQL over the retained rows flagging (`_wv_keep`) those the state keeps at
    watermark `reached`, from the model's `query`."""
    select, calls = _input_rows(query)
    # over the call's own FROM, so beside the SELECT's own columns
    closed = [
        (f"{emit.CLOSED}_{i}", sqlexpr.coalesce(emit.row_closed(call, over.watermark_column, reached), exp.false()))
        for i, call in enumerate(calls)
    ]
    select = select.select(*sqlexpr.aliased(closed), copy=False)
    t = _t(over)
    future = reached + 1  # the next row to arrive is later than W
    # a row is emitted once every call's value for it is final
    emitted = exp.and_(*[column(name) for name in _names(closed)])
    # a partition's cut depends on its PARTITION BY alone: one column per distinct one
    cuts: Dict[Tuple[str, ...], Named] = {}
    back = _ReachedBack(t)
    keeps: List[exp.Expr] = []
    for reach in over.reaches:
        if reach.unbounded:
            keeps.append(exp.true())
            continue
        if reach.partition_by not in cuts:
            first = _over(exp.Min(this=exp.case().when(exp.not_(emitted), t)), reach.partition_by)
            cuts[reach.partition_by] = (
                names.internal(f"cut_{len(cuts)}"),
                sqlexpr.least([sqlexpr.coalesce(first, future), future]),
            )
        keeps.append(back.condition(reach, cuts[reach.partition_by][0]))
    query = sqlexpr.wrap(select, list(cuts.values())) if cuts else select
    return _flagged(
        back.wrap(query), _names(closed) + _names(cuts.values()) + _names(back.columns.values()), keeps, over
    )


# functions whose value over the reversed order is another function's over the ascending one
_MIRROR_FUNCTION: Dict[Type[exp.Expr], Type[exp.Expression]] = {
    exp.FirstValue: exp.LastValue,
    exp.LastValue: exp.FirstValue,
    exp.Lag: exp.Lead,
    exp.Lead: exp.Lag,
}
_SYMMETRIC = (exp.Sum, exp.Count, exp.Avg, exp.Min, exp.Max)


def _unit(micros: List[int]) -> Tuple[str, int]:
    """One unit for a frame's interval bounds: Spark refuses bounds of different interval types."""
    for unit, size in (("DAYS", 86_400_000_000), ("HOURS", 3_600_000_000), ("MINUTES", 60_000_000)):
        if all(m % size == 0 for m in micros):
            return unit, size
    return "SECONDS", 1_000_000


def _interval(micros: int, unit: Tuple[str, int]) -> exp.Interval:
    name, size = unit
    value = f"{micros / size:.6f}".rstrip("0").rstrip(".") if micros % size else str(micros // size)
    return exp.Interval(this=exp.Literal.string(value), unit=exp.Var(this=name))


def _mirrored(frame: Frame) -> exp.WindowSpec:
    """The frame seen from its other end: BETWEEN M PRECEDING AND N FOLLOWING <-> N PRECEDING AND M FOLLOWING."""
    unit = _unit([b.micros for b in (frame.start, frame.end) if b.micros is not None])

    def bound(b: FrameBound) -> Tuple[object, Optional[str]]:
        if b.kind is BoundKind.CURRENT:
            return "CURRENT ROW", None
        if b.is_unbounded():
            return "UNBOUNDED", "PRECEDING"
        # an offset bound has its side, and rows (ROWS) or micros (RANGE)
        assert b.side is not None and (b.rows is not None or b.micros is not None), b
        side = b.side.mirrored.value.upper()
        if b.rows is not None:
            return exp.Literal.number(b.rows), side
        return _interval(cast(int, b.micros), unit), side

    return sqlexpr.frame(frame.kind.value, bound(frame.end), bound(frame.start))


def ascending(tree: exp.Expression, watermark_column: str) -> List[str]:
    """Rewrite window calls ordered descending by the watermark column into the equivalent
    ascending ones where that makes them streamable: the order reversed, the frame mirrored
    (ROWS BETWEEN M PRECEDING AND N FOLLOWING <-> N PRECEDING AND M FOLLOWING), FIRST_VALUE <->
    LAST_VALUE and LAG <-> LEAD. Returns the calls rewritten."""
    rewritten = []
    for call in analysis.over_calls(tree):
        node = call.node
        order = node.args.get("order")
        if call.generated or node.args.get("alias") is not None or order is None or not call.order_by:
            continue
        if not (call.order_by[0][1] and analysis.is_column(call.order_nodes[0], watermark_column)):
            continue
        func, inner = node.this, call.func
        mirror = _MIRROR_FUNCTION.get(type(inner))
        if mirror is None and not isinstance(inner, _SYMMETRIC):
            continue
        spec = node.args.get("spec")
        if mirror not in (exp.Lag, exp.Lead):
            if call.frame.start.is_unbounded():
                continue  # mirrored, the frame would end in UNBOUNDED FOLLOWING: never closes
            spec = _mirrored(call.frame)
        before = node.sql("spark")
        if mirror is not None:
            func = sqlexpr.replaced(func, inner, mirror(**inner.args))
        flipped = order.copy()
        for ordered in flipped.expressions:
            desc = bool(ordered.args.get("desc"))
            nulls_first = ordered.args.get("nulls_first")
            if nulls_first is None:
                nulls_first = not desc  # Spark: NULLS FIRST ascending, NULLS LAST descending
            ordered.set("desc", not desc)
            ordered.set("nulls_first", not nulls_first)
        node.set("this", func)
        node.set("order", flipped)
        node.set("spec", spec)
        rewritten.append(f"{before} -> {node.sql('spark')}")
    return rewritten
