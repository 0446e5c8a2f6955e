"""Over windows under dbt's event-time filter (`--sample`; a microbatch batch): the reads dbt
rendered filtered to [S, E) that feed `OVER (...)` calls ordered by that time, widened by the
calls' reach (reach.py) and the rows the range owns (row time in [S, E)) kept after the windows,
so each row is computed as over all input, by exactly one range. The calls that read every row
before the range's start and that prefix.py keeps as a per-partition summary (running totals,
ranks) read only what the other calls reach, plus one aggregate of the rows before that
(GROUP BY the partition: no sort, no window over all history), combined by prefix.py's algebra.

dbt renders a filtered ref/source as `(select * from <relation> where <filter>)`
(BaseRelation.render_event_time_filtered); a read is taken for one only where its filter is
exactly what dbt's own `_render_event_time_filtered` writes for the times it holds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Type

from dbt.adapters.base.relation import BaseRelation, EventTimeFilter
from sqlglot import exp

from dbt.adapters.window_views import names
from dbt.adapters.window_views.errors import AnalysisError
from dbt.adapters.window_views.kinds import prefix
from dbt.adapters.window_views.kinds.reach import (
    AheadEdge,
    AllPast,
    BackEdge,
    Edge,
    IntervalPast,
    NoRowsPast,
    OverCallReach,
    OverReach,
    RowsPast,
    as_datetime,
    micros,
)
from dbt.adapters.window_views.query import analysis, sqlexpr
from dbt.adapters.window_views.query.analysis import BoundKind, FrameBound, FrameKind, OverCall

ROW_TIME = names.internal("row_time")  # the owned rows' time, carried past the windows and dropped
_SUMMARISED = names.internal("summarised")  # the window's rows with their summaries
_BEFORE = names.internal("before")  # the rows before
_FIX_DIRECT = (
    "read the filtered input directly in the SELECT with the OVER window (`from {{ ref(...) }}`, or a CTE "
    "that is only `select * from {{ ref(...) }}`; no join, other CTE or subquery between them), or compute "
    "the over window in a window_view model upstream of the filtered one"
)


@dataclass(frozen=True)
class FilteredRead:
    """A subquery dbt rendered for a relation filtered to [start, end) by `column`."""

    node: exp.Subquery
    table: exp.Table
    column: str
    start: Optional[datetime]
    end: Optional[datetime]
    like: datetime  # a time in the zone dbt wrote the filter in (start or end: dbt writes one at least)


def _time(literal: exp.Expression) -> Optional[datetime]:
    if not (isinstance(literal, exp.Literal) and literal.is_string):
        return None
    try:
        return datetime.fromisoformat(literal.this)
    except ValueError:
        return None


def _field(compared: exp.Expression) -> bool:
    """A filter's field as dbt writes it: the column, or (the window macros' widened reads,
    filtered_reads.py) the column as a timestamp."""
    if isinstance(compared, exp.Cast):
        return isinstance(compared.this, exp.Column) and compared.to.is_type("timestamp", "timestamptz", "timestampltz")
    return isinstance(compared, exp.Column)


def _bounds(
    where: exp.Expression,
) -> Optional[Tuple[exp.Expression, Optional[datetime], Optional[datetime], datetime]]:
    """(field, start, end, either) of `field >= 'start' and field < 'end'` (or one side), as dbt
    writes it."""
    parts = [where.this, where.expression] if isinstance(where, exp.And) else [where]
    found: Dict[Type[exp.Expression], Tuple[exp.Expression, Optional[datetime]]] = {}
    for part in parts:
        if isinstance(part, (exp.GTE, exp.LT)) and _field(part.this):
            found[type(part)] = (part.this, _time(part.expression))
    if len(found) != len(parts) or any(t is None for _, t in found.values()):
        return None
    columns = {c.sql("spark") for c, _ in found.values()}
    if len(columns) != 1:
        return None
    column, either = next(iter(found.values()))
    assert either is not None  # checked above
    return column, found.get(exp.GTE, (column, None))[1], found.get(exp.LT, (column, None))[1], either


def filtered_reads(tree: exp.Expression) -> List[FilteredRead]:
    """Every read dbt rendered filtered by event time, as dbt renders them."""
    reads = []
    for node in tree.find_all(exp.Subquery):
        select = node.this
        if not (isinstance(select, exp.Select) and len(select.expressions) == 1 and select.expressions[0].is_star):
            continue
        source, where = getattr(select.args.get("from_"), "this", None), select.args.get("where")
        if not isinstance(source, exp.Table) or where is None or _extra(select):
            continue
        bounds = _bounds(where.this)
        if bounds is None:
            continue
        field, start, end, like = bounds
        if _dbt_filter(field.sql("spark"), start, end) == where.this:
            column = field.this if isinstance(field, exp.Cast) else field
            reads.append(FilteredRead(node, source, column.name, start, end, like))
    return reads


def _dbt_filter(field: str, start: Optional[datetime], end: Optional[datetime]) -> Optional[exp.Expression]:
    """`field` in [start, end) as dbt renders its filter (None: no bound on either side)."""
    rendered = BaseRelation._render_event_time_filtered(
        BaseRelation.create(identifier="_"), EventTimeFilter(field_name=field, start=start, end=end)
    )
    return sqlexpr.condition(rendered) if rendered else None


def dbt_filtered(table: exp.Table, column: str, start: datetime, end: datetime) -> exp.Subquery:
    """`table` read as dbt renders a relation filtered to [start, end) by `column` (an incremental
    batch window view's batch reads its over windows' input so, batch_reads.py)."""
    where = _dbt_filter(sqlexpr.to_sql(sqlexpr.column(column)), start, end)
    bare = table.copy()
    bare.set("alias", None)
    return exp.select("*").from_(bare).where(where).subquery(table.alias or None)


def _extra(select: exp.Select) -> bool:
    """Whether the SELECT has more than `* FROM ... WHERE ...` (dbt renders nothing else)."""
    return any(v for k, v in select.args.items() if k not in ("expressions", "from_", "where"))


# functions that ignore the frame: how far each reads, back and ahead
def _ranking(call: OverCall) -> OverCallReach:
    return OverCallReach(AllPast(), NoRowsPast())


def _whole(call: OverCall) -> OverCallReach:
    return OverCallReach(AllPast(), AllPast())


def _lag(call: OverCall) -> OverCallReach:
    back: OverReach = AllPast() if call.ignore_nulls else RowsPast(_offset(call), _partition(call))
    return OverCallReach(back, NoRowsPast())


def _lead(call: OverCall) -> OverCallReach:
    ahead: OverReach = AllPast() if call.ignore_nulls else RowsPast(_offset(call), _partition(call))
    return OverCallReach(NoRowsPast(), ahead)


_FRAMELESS: Dict[Type[exp.Expression], Callable[[OverCall], OverCallReach]] = {
    exp.RowNumber: _ranking,
    exp.Rank: _ranking,
    exp.DenseRank: _ranking,
    exp.Ntile: _whole,
    exp.PercentRank: _whole,
    exp.CumeDist: _whole,
    exp.Lag: _lag,
    exp.Lead: _lead,
}


def _offset(call: OverCall) -> int:
    return analysis.row_offset(call.func, call.shown)


def _partition(call: OverCall) -> Tuple[str, ...]:
    return tuple(analysis.unqualified(analysis.parse(p)) for p in call.partition_by)


def _past(bound: FrameBound, kind: FrameKind, call: OverCall) -> OverReach:
    """What a frame bound on the far side of the current row reads past the range's edge."""
    offset: Dict[FrameKind, OverReach] = {
        FrameKind.ROWS: RowsPast(bound.rows or 0, _partition(call)),
        FrameKind.RANGE: IntervalPast(bound.micros or 0),
    }
    by_kind: Dict[BoundKind, OverReach] = {BoundKind.UNBOUNDED: AllPast(), BoundKind.CURRENT: NoRowsPast()}
    return by_kind.get(bound.kind) or offset[kind]


def call_reach(call: OverCall) -> OverCallReach:
    """How far one call reads past the range: its function's reach, or its frame's."""
    frameless = _FRAMELESS.get(type(call.func))
    if frameless is not None:
        return frameless(call)
    start, end, kind = call.frame.start, call.frame.end, call.frame.kind
    # a frame wholly on one side (1 FOLLOWING AND 3 FOLLOWING) reads nothing past the other edge
    back = NoRowsPast() if start.side is analysis.Side.FOLLOWING else _past(start, kind, call)
    ahead = NoRowsPast() if end.side is analysis.Side.PRECEDING else _past(end, kind, call)
    return OverCallReach(back, ahead)


def _check_order(call: OverCall, column: str, relation: str) -> None:
    if call.order_by and analysis.is_column(call.order_nodes[0], column) and not call.order_by[0][1]:
        if not call.order_by[0][2]:
            raise AnalysisError(
                f"`{call.shown}` reads {relation}, which dbt filters to a time range by its event_time `{column}` (a "
                "microbatch batch or --sample), ordered NULLS LAST: a row with a NULL time would then follow every "
                "later range's rows, so no range could own it; fix: order by "
                f"`{column}` ascending with its NULLs first (Spark's default: drop NULLS LAST), or filter them out"
            )
        return
    raise AnalysisError(
        f"`{call.shown}` reads {relation}, which dbt filters to a time range by its event_time `{column}` (a "
        f"microbatch batch or --sample), but is not ordered by `{column}` ascending first, so no bound tells "
        "which rows before or after the range it needs; fix: order the window by "
        f"`{column}` first (ascending), or compute it in a model whose input is not filtered"
    )


# what makes a SELECT's rows other than its input's, one for one
_ROWS_CHANGED = (
    ("group", "GROUP BY"),
    ("distinct", "DISTINCT"),
    ("limit", "LIMIT"),
    ("joins", "a join"),
    ("laterals", "LATERAL VIEW"),
)


def _refuse_shape(select: exp.Select, calls: Sequence[OverCall], relation: str) -> None:
    """The SELECT whose windows read the filtered input keeps its rows one for one, so the rows the
    range owns are known after the windows."""
    for key, what in _ROWS_CHANGED:
        if select.args.get(key):
            raise AnalysisError(
                f"`{calls[0].shown}` reads {relation}, which dbt filters to a time range, in a query with {what}: the "
                f"rows the range owns are not known after it; fix: compute the over window in a query of its own "
                f"over the input, and the {what} in an outer one"
            )


def _relation(read: FilteredRead) -> str:
    return read.table.sql("spark")


class _Ranges:
    """Builds the widened read and the owned filter of one filtered read, as dbt writes times."""

    def __init__(self, read: FilteredRead) -> None:
        self.read = read

    @staticmethod
    def or_null(condition: Optional[exp.Expression], field: exp.Expression) -> Optional[exp.Expression]:
        """`condition`, or `field` NULL: a NULL time sorts before every time (design §11)."""
        if condition is None:
            return None
        return sqlexpr.node(exp.or_(condition, exp.Is(this=field.copy(), expression=exp.null())))

    def time(self, value: int) -> exp.Expression:
        return sqlexpr.time_literal(as_datetime(value, self.read.like))

    def between(self, field: exp.Expression, start: Optional[int], end: Optional[int]) -> Optional[exp.Expression]:
        """`field` in [start, end) (epoch micros; None: no bound on either side)."""
        like = self.read.like
        return sqlexpr.in_time_range(
            field,
            None if start is None else as_datetime(start, like),
            None if end is None else as_datetime(end, like),
        )


def _micros(t: Optional[datetime]) -> Optional[int]:
    return None if t is None else micros(t)


@dataclass(frozen=True)
class _Summary:
    """A SELECT's calls as its filtered read feeds them: each call's reach, and per call the
    prefix state (prefix.py) that stands for its rows before what the reaches read (None: read)."""

    reaches: Tuple[OverCallReach, ...]
    states: Tuple[Optional[prefix.PrefixCall], ...]

    @property
    def calls(self) -> List[prefix.PrefixCall]:
        return [state for state in self.states if state is not None]


def _summary(read: FilteredRead, calls: Sequence[OverCall], indices: Sequence[int]) -> _Summary:
    """The calls prefix.py can summarise read back only what their frame's end keeps; none is
    summarised when another call still scans every row before the range (a ROWS offset, LAG,
    NTILE), which reads them anyway, or the range has no start (--sample)."""
    reaches = tuple(call_reach(c) for c in calls)
    read_all = _Summary(reaches, (None,) * len(calls))
    if read.start is None:
        return read_all
    states = tuple(_state(index, call) for index, call in zip(indices, calls))
    summarised = tuple(
        reach if state is None else OverCallReach(_kept_back(call), reach.ahead)
        for call, reach, state in zip(calls, reaches, states)
    )
    if not any(states) or any(reach.back.scans_all for reach in summarised):
        return read_all
    return _Summary(summarised, states)


def _state(index: int, call: OverCall) -> Optional[prefix.PrefixCall]:
    order = tuple(analysis.unqualified(analysis.parse(o)) for o, _, _ in call.order_by)
    return prefix.classify(index, call, _partition(call), order)


def _kept_back(call: OverCall) -> OverReach:
    """What a summarised call still reads before the range: a frame ending before the current
    row (UNBOUNDED PRECEDING AND n PRECEDING) leaves the rows between its end and the range out."""
    end = call.frame.end
    if type(call.func) in _FRAMELESS or not end.is_offset(analysis.Side.PRECEDING):
        return NoRowsPast()
    return _past(end, call.frame.kind, call)


def _widened(
    read: FilteredRead, summary: _Summary, where: Optional[exp.Expression], before: Optional[exp.Expression]
) -> exp.Subquery:
    """The filtered read as the windows read it: the range, and past each edge what the calls
    reach; with the summaries of the rows before the back edge's reach (their rows filtered by
    `before`, the SELECT's WHERE), joined per partition."""
    reaches = summary.reaches
    ranges = _Ranges(read)
    # the row time in the wrappers below, as the plugin's own (analysis: `generated`)
    t = sqlexpr.column(read.column, sqlexpr.ROWS)
    start, end = _micros(read.start), _micros(read.end)
    # an open side (--sample with no start) has nothing past it
    edges: List[Edge] = [
        edge(at, t, ranges.time, names.internal(f"rank{i}"))
        for i, (edge, at) in enumerate(((BackEdge, start), (AheadEdge, end)))
        if at is not None
    ]
    scan = {type(edge): edge.scan(reaches) for edge in edges}
    past = [edge.kept(reaches) for edge in edges]
    rows = exp.select("*").from_(read.table.copy())
    field = exp.column(read.column)
    back = scan.get(BackEdge, start)
    scanned = ranges.between(field, back, scan.get(AheadEdge, end))
    # the NULL-time rows sort first: read wherever every row before the range is
    scanned = ranges.or_null(scanned, field) if back is None else scanned
    conditions = [c for c in (scanned, where) if c is not None]
    if conditions:
        rows = rows.where(exp.and_(*conditions), copy=False)
    ranks = [named for edge in edges for named in edge.ranks.values()]
    within = ranges.between(field, start, end)
    within = ranges.or_null(within, field) if start is None else within
    kept = exp.or_(*[c for c in (within, *past) if c is not None])
    query: exp.Query = sqlexpr.wrap(sqlexpr.wrap(rows, ranks), hidden=[name for name, _ in ranks], where=kept)
    states = summary.calls
    if states:
        earlier = ranges.or_null(ranges.between(field, None, scan[BackEdge]), field)
        prior = exp.select("*").from_(read.table.copy()).where(exp.and_(*[c for c in (earlier, before) if c]))
        groups = prefix.groups(states)
        aggregates = [
            prefix.aggregate(prior.subquery(_BEFORE), g, partition_by, calls)
            for g, (partition_by, calls) in enumerate(groups)
        ]
        query = prefix.joined(query, _SUMMARISED, aggregates, [p for p, _ in groups], states)
    return exp.Subquery(this=query, alias=read.node.args.get("alias"))


@dataclass(frozen=True)
class _Source:
    """The filtered read a SELECT's windows read, and the name the SELECT qualifies its columns by."""

    read: FilteredRead
    qualifier: Optional[str]


def _read_of(select: exp.Select, reads: Dict[int, FilteredRead], ctes: Dict[str, exp.Expression]) -> Optional[_Source]:
    """The filtered read in the SELECT's FROM: itself, or a CTE that is only `select * from` it and
    that nothing else reads (dbt's import CTE, `with events as (select * from {{ ref('events') }})`)."""
    source = getattr(select.args.get("from_"), "this", None)
    if not isinstance(source, exp.Expression):
        return None
    if id(source) in reads:
        return _Source(reads[id(source)], source.alias or None)
    name = source.name.lower() if isinstance(source, exp.Table) and not source.db else None
    body = ctes.get(name or "")
    # `select * from <read>` and nothing else: its rows are the read's, one for one
    if not isinstance(body, exp.Select) or _extra(body) or body.args.get("where") is not None:
        return None
    if len(body.expressions) != 1 or not body.expressions[0].is_star:
        return None
    inner = getattr(body.args.get("from_"), "this", None)
    reading = [t for t in select.root().find_all(exp.Table) if not t.db and t.name.lower() == name]
    if id(inner) not in reads or len(reading) != 1:
        return None
    return _Source(reads[id(inner)], source.alias or source.name)


def _fed(select: exp.Select, reads: Dict[int, FilteredRead], ctes: Dict[str, exp.Expression]) -> bool:
    """Whether a filtered read feeds the SELECT, directly or through its FROM and JOINs."""
    sources = [select.args.get("from_"), *(select.args.get("joins") or [])]
    return any(s is not None and _feeds(s, reads, ctes) for s in sources)


def _ctes(tree: exp.Expression) -> Dict[str, exp.Expression]:
    return {cte.alias_or_name.lower(): cte.this for cte in tree.find_all(exp.CTE)}


def _feeds(node: exp.Expression, reads: Dict[int, FilteredRead], ctes: Dict[str, exp.Expression]) -> bool:
    """Whether a filtered read lies under `node`, following the CTEs it names."""
    seen: set = set()
    stack = [node]
    while stack:
        current = stack.pop()
        for sub in current.find_all(exp.Subquery, exp.Table):
            if id(sub) in reads:
                return True
            name = sub.name.lower() if isinstance(sub, exp.Table) and not sub.db else None
            if name in ctes and name not in seen:
                seen.add(name)
                stack.append(ctes[name])
    return False


def owned(query: exp.Expression, owns_null_times: bool = False) -> Optional[exp.Expression]:
    """The model's query with every over window over a filtered read widened by its reach and
    its rows kept where the range owns them; None when no filtered read feeds an over window.
    A NULL-time row sorts before every time, so it is in every range's prefix; its own row is
    the range's with no start, or the one that `owns_null_times` (an incremental batch window
    view's first batch, design §11), which reads every row before it to compute it.
    Raises AnalysisError for an over window whose reach is unknown. `query` stays as it is."""
    tree = query.copy()
    reads = {id(r.node): r for r in filtered_reads(tree)}
    if not reads:
        return None
    calls = [c for c in analysis.over_calls(tree) if not c.generated]
    rewrites = _rewrites(tree, reads, calls)
    if not rewrites:
        return None
    index = {id(call): i for i, call in enumerate(calls)}
    for select, source, select_calls in rewrites:
        wrapper = _owned_select(select, source, select_calls, [index[id(c)] for c in select_calls], owns_null_times)
        tree = sqlexpr.replaced(tree, select, wrapper)
    return tree


def _rewrites(
    tree: exp.Expression, reads: Dict[int, FilteredRead], calls: Sequence[OverCall]
) -> List[Tuple[exp.Select, _Source, List[OverCall]]]:
    """Each SELECT whose over windows read a filtered read directly, with that read and its calls;
    refusing a SELECT that reads one otherwise, or whose shape or order leaves its rows unowned."""
    by_select: Dict[int, List[OverCall]] = {}
    for call in calls:
        by_select.setdefault(id(call.select), []).append(call)
    ctes = _ctes(tree)
    rewrites = []
    for select_calls in by_select.values():
        select = select_calls[0].select
        source = _read_of(select, reads, ctes)
        if source is None:
            if _fed(select, reads, ctes):
                raise AnalysisError(
                    f"`{select_calls[0].shown}` reads an input dbt filters to a time range (a microbatch batch or "
                    "--sample) through a join, CTE, subquery or window macro, so it would see the input cut at the "
                    f"range's start; fix: {_FIX_DIRECT}"
                )
            continue
        relation = _relation(source.read)
        _refuse_shape(select, select_calls, relation)
        for call in select_calls:
            _check_order(call, source.read.column, relation)
        rewrites.append((select, source, select_calls))
    return rewrites


def _owned_select(
    select: exp.Select, source: _Source, calls: Sequence[OverCall], indices: Sequence[int], owns_null_times: bool
) -> exp.Select:
    """The SELECT over its widened read (the read replaced in place), wrapped to keep the rows
    the range owns."""
    read = source.read
    # the NULL-time rows' owner reads as a range with no start: all that sorts before it
    reading = replace(read, start=None) if owns_null_times else read
    ranges = _Ranges(read)
    summary = _summary(reading, calls, indices)
    where = select.args.get("where")
    # the rows the windows see (counted past an edge, summarised): the SELECT's own filter first
    filtered = analysis.without_qualifiers(where.this) if where is not None else None
    read.node.replace(_widened(reading, summary, filtered if _counts(summary.reaches) else None, filtered))
    for call, state in zip(calls, summary.states):
        if state is not None:
            prefix.combine(call, state)
    time = sqlexpr.column(read.column, source.qualifier)
    carried = select.select(exp.alias_(time, ROW_TIME, quoted=True), copy=True)
    owned_rows = ranges.between(sqlexpr.column(ROW_TIME), _micros(read.start), _micros(read.end))
    if reading.start is None:
        owned_rows = ranges.or_null(owned_rows, sqlexpr.column(ROW_TIME))
    # a `*` in the SELECT shows the summaries' columns too
    shown = [name for state in summary.calls for name in state.columns()] if _starred(select) else []
    return sqlexpr.wrap(carried, hidden=[ROW_TIME, *shown], where=owned_rows)


def _starred(select: exp.Select) -> bool:
    """Whether the SELECT lists `*` (or `e.*`): every column of its input."""
    return any(isinstance(e, exp.Star) or isinstance(e.this, exp.Star) for e in select.expressions)


def _counts(reaches: Sequence[OverCallReach]) -> bool:
    return any(r.counts_rows for reach in reaches for r in (reach.back, reach.ahead))


def cut_over_window(tree: exp.Expression) -> Optional[str]:
    """A model of another materialization: the first over window call (as written) that reads a
    filtered read, directly or not, which it would see cut; None when there is none (or its
    windows are beyond sqlglot, which then cannot tell)."""
    try:
        reads = {id(r.node): r for r in filtered_reads(tree)}
        calls = [c for c in analysis.over_calls(tree) if not c.generated] if reads else []
    except AnalysisError:
        return None
    ctes = _ctes(tree)
    return next((call.shown for call in calls if _fed(call.select, reads, ctes)), None)
