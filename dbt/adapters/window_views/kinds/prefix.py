"""Incremental state for window calls that read a partition from its start: frames from
UNBOUNDED PRECEDING and the ranking functions (RisingWave keeps such aggregates per partition
instead of the rows they summarise).

A streaming batch computes its window calls over the retained rows only; the rows the state
evicted are summarised per partition (the call's PARTITION BY) in a small table, and each call
is rewritten to combine that summary with its value over the retained rows:

    SUM(x)          coalesce(s + SUM(x) OVER w, s, SUM(x) OVER w)
    ROW_NUMBER()    coalesce(n, 0) + ROW_NUMBER() OVER w      (RANK alike; DENSE_RANK: distinct keys)
    FIRST_VALUE(x)  the evicted prefix's first value, once there is one

This is exact because every evicted row comes before every row still to be written (it is
before the partition's cut, see overwindows.py) and inside its frame (a frame ending n rows or
an interval before the current row keeps that much of the partition). DENSE_RANK and
FIRST_VALUE also need the evicted rows to be a prefix of their partition, whole ties included,
which `overwindows` ensures by keeping every row from the first kept one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Dict, List, Optional, Sequence, Tuple, Type, Union

from sqlglot import exp

from dbt.adapters.window_views import names
from dbt.adapters.window_views.query import analysis, sqlexpr
from dbt.adapters.window_views.query.analysis import OverCall
from dbt.adapters.window_views.query.sqlexpr import Named, column


class PrefixKind(str, Enum):
    """How a call's evicted rows are summarised: by aggregate, or for ranking and FIRST_VALUE."""

    SUM = "sum"
    COUNT = "count"
    MIN = "min"
    MAX = "max"
    AVG = "avg"
    ROWS = "rows"  # ROW_NUMBER, RANK: the evicted rows counted
    DENSE_RANK = "dense_rank"
    FIRST_VALUE = "first_value"
    FIRST_VALUE_IGNORE_NULLS = "first_value_ignore_nulls"


def _templates(templates: Dict[str, Dict[str, str]]) -> Dict[PrefixKind, Dict[str, exp.Expression]]:
    parsed = {PrefixKind(k): {name: sqlexpr.parse(sql) for name, sql in cs.items()} for k, cs in templates.items()}
    assert set(parsed) == set(PrefixKind), "every kind has its templates"
    return parsed


# per kind: the state columns ({name: aggregate over the evicted rows of :x, ordered by :key}),
# how two states :a and :b merge, and the call rewritten (:L: the call over the retained rows;
# :LS/:LC: its SUM/COUNT for AVG; :s, :c, :n: the state columns)
_STATE = _templates(
    {
        "sum": {"s": "sum(:x)"},
        "count": {"s": "count(:x)"},
        "min": {"s": "min(:x)"},
        "max": {"s": "max(:x)"},
        "avg": {"s": "sum(:x)", "c": "count(:x)"},
        "rows": {"s": "count(1)"},
        "dense_rank": {"s": "count(distinct :key)"},
        "first_value": {"s": "min_by(:x, :key)", "n": "count(1)"},
        "first_value_ignore_nulls": {"s": "min_by(:x, case when :x is not null then :key end)"},
    }
)
_ADD = "coalesce(:a, 0) + coalesce(:b, 0)"
_SUM = "coalesce(:a + :b, :a, :b)"
_MERGE = _templates(
    {
        "sum": {"s": _SUM},
        "count": {"s": _ADD},
        "min": {"s": "least(:a, :b)"},
        "max": {"s": "greatest(:a, :b)"},
        "avg": {"s": _SUM, "c": _ADD},
        "rows": {"s": _ADD},
        "dense_rank": {"s": _ADD},
        "first_value": {"s": "case when coalesce(:an, 0) > 0 then :a else :b end", "n": _ADD},
        "first_value_ignore_nulls": {"s": "coalesce(:a, :b)"},
    }
)
_COMBINE = {
    PrefixKind(kind): sqlexpr.parse(sql)
    for kind, sql in {
        "sum": "coalesce(:s + :L, :s, :L)",
        "count": "coalesce(:s, 0) + :L",
        "min": "least(:s, :L)",
        "max": "greatest(:s, :L)",
        "avg": "coalesce(:s + :LS, :s, :LS) / nullif(coalesce(:c, 0) + :LC, 0)",
        "rows": "cast(coalesce(:s, 0) + :L as int)",  # a rank's type, not the count's bigint
        "dense_rank": "cast(coalesce(:s, 0) + :L as int)",
        "first_value": "case when coalesce(:n, 0) > 0 then :s else :L end",
        "first_value_ignore_nulls": "coalesce(:s, :L)",
    }.items()
}
_AGGREGATES: Dict[Type[exp.Expr], PrefixKind] = {
    exp.Sum: PrefixKind.SUM,
    exp.Count: PrefixKind.COUNT,
    exp.Min: PrefixKind.MIN,
    exp.Max: PrefixKind.MAX,
    exp.Avg: PrefixKind.AVG,
}
# the kinds whose state needs the evicted rows to be a whole prefix of the partition
TIE_SENSITIVE = (PrefixKind.DENSE_RANK, PrefixKind.FIRST_VALUE, PrefixKind.FIRST_VALUE_IGNORE_NULLS)


@dataclass(frozen=True)
class PrefixCall:
    """A window call kept as per-partition state; `index` is its place among the model's calls."""

    index: int
    kind: PrefixKind
    argument: Optional[str]  # the value expression, unqualified
    partition_by: Tuple[str, ...]  # unqualified
    order_by: Tuple[str, ...]  # ascending, unqualified

    def columns(self) -> Dict[str, exp.Expression]:
        """State column name -> aggregate over the evicted rows."""
        # each ORDER BY value led by whether it is set, so a NULL sorts first (a NULL time too,
        # design §11) whatever order the engine gives a struct's NULL fields
        fields = [
            f
            for o in self.order_by
            for f in (exp.Not(this=exp.Is(this=sqlexpr.parse(o), expression=exp.null())), sqlexpr.parse(o))
        ]
        values: Dict[str, exp.Expression] = {"key": exp.Struct(expressions=fields)}
        if self.argument is not None:
            values["x"] = sqlexpr.parse(self.argument)
        return {
            names.internal(f"{name}{self.index}"): sqlexpr.fill(t, **values) for name, t in _STATE[self.kind].items()
        }


def classify(
    index: int, call: OverCall, partition_by: Tuple[str, ...], order_by: Tuple[str, ...]
) -> Optional[PrefixCall]:
    """The call as prefix state, or None when it reads the partition in a way state cannot keep
    (LAST_VALUE, NTH_VALUE, collect_list, ...): those keep every row."""
    func, ignore_nulls = call.func, call.ignore_nulls
    if any(desc for _, desc, _ in call.order_by) or not all(nulls_first for _, _, nulls_first in call.order_by[1:]):
        # descending calls reach here only when they cannot be mirrored; the state orders rows by
        # a struct of the ORDER BY whose NULLs sort first (columns())
        return None
    if isinstance(func, (exp.RowNumber, exp.Rank)):
        return PrefixCall(index, PrefixKind.ROWS, None, partition_by, order_by)
    if isinstance(func, exp.DenseRank):
        return PrefixCall(index, PrefixKind.DENSE_RANK, None, partition_by, order_by)
    if not call.frame.start.is_unbounded():
        return None
    argument = func.this
    if argument is None or isinstance(argument, exp.Distinct) or len(func.expressions) > 0:
        return None
    kind = _AGGREGATES.get(type(func))
    if kind is not None and not ignore_nulls:
        return PrefixCall(index, kind, _unqualified(argument), partition_by, order_by)
    if isinstance(func, exp.FirstValue):
        first = PrefixKind.FIRST_VALUE_IGNORE_NULLS if ignore_nulls else PrefixKind.FIRST_VALUE
        return PrefixCall(index, first, _unqualified(argument), partition_by, order_by)
    return None


def _unqualified(node: exp.Expr) -> str:
    return "1" if isinstance(node, exp.Star) else analysis.unqualified(sqlexpr.node(node))  # COUNT(*) counts rows


def rewrite(query: exp.Expression, calls: Sequence[PrefixCall]) -> exp.Expression:
    """The model's query with each prefix call combined with its state columns (read from the
    input); `query` itself is left as it is."""
    tree = query.copy()
    over = [c for c in analysis.over_calls(tree) if not c.generated]
    for call in calls:
        combine(over[call.index], call)
    return tree


def combine(over: OverCall, call: PrefixCall) -> None:
    """Replaces `over` (the call `call` keeps) in its tree by its value over the rows it reads
    combined with its state columns, which its SELECT's input carries."""
    node = over.node
    values = {
        "L": exp.paren(node.copy()),
        **{name: column(names.internal(f"{name}{call.index}")) for name in ("s", "c", "n")},
    }
    if call.kind is PrefixKind.AVG:
        for name, func in (("LS", exp.Sum), ("LC", exp.Count)):
            part = node.copy()
            part.set("this", func(this=over.func.this.copy()))
            values[name] = exp.paren(part)
    node.replace(exp.paren(sqlexpr.fill(_COMBINE[call.kind], **values)))


def groups(calls: Sequence[PrefixCall]) -> List[Tuple[Tuple[str, ...], List[PrefixCall]]]:
    """The calls grouped by PARTITION BY: one state table per group."""
    by_partition: Dict[Tuple[str, ...], List[PrefixCall]] = {}
    for call in calls:
        by_partition.setdefault(call.partition_by, []).append(call)
    return list(by_partition.items())


def key(group: int, position: int) -> str:
    return f"{GROUP}{group}k{position}"


GROUP = names.internal("g")  # which group a row of `aggregate_all` is counted in, with several groups


def aggregate(
    view: Union[str, exp.Expression],
    group: int,
    partition_by: Tuple[str, ...],
    calls: Sequence[PrefixCall],
    where: Optional[exp.Expr] = None,
) -> exp.Select:
    """One group's state over the rows in `view` (the evicted ones; a name or a FROM-able
    expression). With `where`, over the rows it holds (a FILTER on each aggregate): every
    partition in `view` gets a row, which merges as no row where no row is evicted (count 0,
    NULL otherwise; see _MERGE)."""
    keys, values = _group_columns(group, partition_by, calls, where)
    source = exp.to_table(view) if isinstance(view, str) else view
    select = exp.select(*sqlexpr.aliased(keys + values)).from_(source)
    return select.group_by(*[k for _, k in keys]) if keys else select


def aggregate_all(
    view: str,
    groups: Sequence[Tuple[Tuple[str, ...], Sequence[PrefixCall]]],
    where: exp.Expr,
    carried: Sequence[exp.Expr] = (),
) -> exp.Select:
    """Every group's state over the rows of `view` where `where` holds, in one aggregate (one
    pass over rows the window functions that flag them produce), with the `carried` aggregates.
    With several groups `view` holds each row once per group, numbered in `GROUP`: a row counts
    in its group's partition only, and the other groups' keys and state columns are NULL in it.
    One group (the usual model) needs no numbering: its rows are the view's, unexploded, and
    the aggregate is the group's own (`aggregate`)."""
    if len(groups) == 1:
        ((partition_by, calls),) = groups
        return aggregate(view, 0, partition_by, calls, where).select(*carried)
    keys: List[Named] = []
    values: List[Named] = []
    for g, (partition_by, calls) in enumerate(groups):
        mine = exp.column(GROUP).eq(exp.Literal.number(g))
        group_keys, group_values = _group_columns(g, partition_by, calls, exp.and_(mine, where))
        keys += [(name, exp.case().when(mine.copy(), k)) for name, k in group_keys]
        values += group_values
    select = exp.select(exp.column(GROUP), *sqlexpr.aliased(keys + values), *carried).from_(exp.to_table(view))
    return select.group_by(exp.column(GROUP), *[k for _, k in keys])


def _group_columns(
    group: int, partition_by: Tuple[str, ...], calls: Sequence[PrefixCall], where: Optional[exp.Expr]
) -> Tuple[List[Named], List[Named]]:
    """A group's keys (its PARTITION BY) and state columns, the latter over the rows `where` holds."""
    keys = [(key(group, j), sqlexpr.parse(p)) for j, p in enumerate(partition_by)]
    values = [named for call in calls for named in call.columns().items()]
    if where is not None:
        values = [(name, _aggregates_filtered(value, where)) for name, value in values]
    return keys, values


def filtered(call: exp.Expr, where: exp.Expr) -> exp.Filter:
    """The aggregate `call` over the rows `where` holds."""
    return exp.Filter(this=call, expression=exp.Where(this=where.copy()))


def _aggregates_filtered(value: exp.Expr, where: exp.Expr) -> exp.Expression:
    """`value` with each aggregate call in it restricted to the rows `where` holds."""
    return value.transform(lambda node: filtered(node.copy(), where) if isinstance(node, exp.AggFunc) else node)


def aggregate_sql(view: str, group: int, partition_by: Tuple[str, ...], calls: Sequence[PrefixCall]) -> str:
    """`aggregate` over every row of `view`, as SQL text."""
    return sqlexpr.to_sql(aggregate(view, group, partition_by, calls))


@dataclass(frozen=True)
class StateGroup:
    """One state table: the prefix calls of one PARTITION BY (`groups`), at its index."""

    index: int
    partition_by: Tuple[str, ...]
    calls: Tuple[PrefixCall, ...]


def merge_sql(old: str, new: str, group: StateGroup, carried: Sequence[exp.Expr] = ()) -> str:
    """Two states of one group merged: the old one (`a`) and that of the rows evicted since
    (`b`), with the `carried` columns of either side."""
    keys = [key(group.index, j) for j in range(len(group.partition_by))]
    columns = [(k, sqlexpr.coalesce(column(k, "a"), column(k, "b"))) for k in keys]
    for call in group.calls:
        for name, template in _MERGE[call.kind].items():
            state = names.internal(f"{name}{call.index}")
            merged = sqlexpr.fill(
                template, a=column(state, "a"), b=column(state, "b"), an=column(names.internal(f"n{call.index}"), "a")
            )
            columns.append((state, merged))
    on = [exp.NullSafeEQ(this=column(k, "a"), expression=column(k, "b")) for k in keys]
    select = exp.select(*sqlexpr.aliased(columns), *carried).from_(exp.to_table(old).as_("a"))
    return sqlexpr.to_sql(select.join(exp.to_table(new).as_("b"), on=_all(on), join_type="full outer"))


def joined_sql(
    rows: str, states: Sequence[str], partitions: Sequence[Tuple[str, ...]], calls: Sequence[PrefixCall]
) -> str:
    """The retained rows with their partitions' state columns, as the rewritten calls read them."""
    return sqlexpr.to_sql(joined(exp.to_table(rows), rows, [exp.to_table(s) for s in states], partitions, calls))


def joined(
    rows: exp.Expr,
    name: str,
    states: Sequence[exp.Expr],
    partitions: Sequence[Tuple[str, ...]],
    calls: Sequence[PrefixCall],
) -> exp.Select:
    """`joined_sql` over FROM-able expressions: `rows` (known as `name`) and each group's state
    (a table, or a query such as `aggregate`)."""
    columns = [
        column(state, f"s{g}")
        for g, (_, group_calls) in enumerate(groups(calls))
        for call in group_calls
        for state in call.columns()
    ]
    source = rows.subquery(name) if isinstance(rows, exp.Query) else rows
    select = exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier(name)), *columns).from_(source)
    for g, (state, partition_by) in enumerate(zip(states, partitions)):
        on = [
            exp.NullSafeEQ(this=exp.paren(sqlexpr.parse(p)), expression=column(key(g, j), f"s{g}"))
            for j, p in enumerate(partition_by)
        ]
        alias = state.subquery(f"s{g}") if isinstance(state, exp.Query) else state.as_(f"s{g}")
        select = select.join(alias, on=_all(on), join_type="left", copy=False)
    return select


def _all(conditions: Sequence[exp.Expr]) -> exp.Expr:
    """The conditions ANDed; none is TRUE."""
    return exp.and_(*conditions) if conditions else exp.true()
