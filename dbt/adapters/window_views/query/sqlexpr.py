"""SQL the plugin generates, built as sqlglot expressions (spark dialect): the few shapes its
queries are made of, so no module splices SQL text or reads names back out of it."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import List, Optional, Sequence, Tuple, Union

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import nth_value_from_sql
from sqlglot.dialects.spark import Spark
from sqlglot.generators.spark import SparkGenerator
from sqlglot.parsers.spark import SparkParser

from dbt.adapters.window_views import names

DIALECT = "spark"
ROWS = names.internal("rows")  # the alias of a wrapped query; nothing refers to it

# an output column: (alias, expression)
Named = Tuple[str, exp.Expression]
# an expression, or a Python value that stands for its literal
Value = Union[exp.Expr, int, bool]


def node(value: exp.Expr) -> exp.Expression:
    """sqlglot's parser and transforms are typed with its base class `Expr`; every node they make is an `Expression`."""
    if not isinstance(value, exp.Expression):
        raise TypeError(f"not a SQL expression node: {value!r}")
    return value


class ModelSql(Spark):
    """Spark SQL read with the standard window forms Spark lacks kept in the tree (GROUPS frames
    and EXCLUDE parse in Spark's dialect already; `nth_value(x, n) FROM FIRST | LAST` does not),
    so query/frames.py rewrites them; written back with them, so a message quotes them."""

    class Parser(SparkParser):
        SUPPORTS_NTH_VALUE_FROM_MODIFIER = True

    class Generator(SparkGenerator):
        SUPPORTS_WINDOW_EXCLUDE = True
        TRANSFORMS = {**SparkGenerator.TRANSFORMS, exp.NthValue: nth_value_from_sql}


def parse(text: str) -> exp.Expression:
    """SQL text as an expression: the plugin's templates and the fragments a plan keeps as text
    (a PARTITION BY expression); analysis.parse, dbt's compiled text, parses through it."""
    return node(sqlglot.parse_one(text, read=ModelSql))


def model_sql(tree: exp.Expr) -> str:
    """An expression as the model's SQL reads (ModelSql): for messages, never for Spark."""
    return tree.sql(ModelSql, comments=False)


def from_item(text: str) -> exp.Expression:
    """A FROM item Jinja rendered (a relation, or dbt's `(select ...) alias` of one filtered by
    event time) as an expression: read as what follows FROM."""
    return node(exp.select("*").from_(text, dialect=DIALECT).args["from_"].this)


def condition(text: str) -> exp.Expression:
    """A condition dbt rendered (its event-time filter) as an expression."""
    return node(exp.condition(text, dialect=DIALECT))


_WINDOW_FLOOR = parse("(:t - pmod(:t - :offset, :unit))")
_FLOOR_INDEX = parse("div(:key - pmod(:key, :size), :size)")
# every window boundary is computed in microseconds since the epoch (UTC); the macros' `_epoch_micros`
_EPOCH_MICROS = parse("unix_micros(cast(:value as timestamp))")


def to_sql(node: exp.Expr) -> str:
    """An expression as Spark SQL."""
    return apart(node).sql(DIALECT)


def apart(tree: exp.Expr) -> exp.Expr:
    """sqlglot writes Spark SQL with every CTE moved to the top, so CTEs of one name in different
    scopes (two pane plans' `_wv_panes`) would clash there: each such CTE gets its WITH's index."""
    counts = Counter(cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE))
    if all(count == 1 for count in counts.values()):
        return tree
    tree = tree.copy()
    # innermost WITH first (breadth-first, reversed): a scope's tables still named as written
    # refer to its own CTEs, not to those of a WITH nested in it, renamed already
    for index, with_ in reversed(list(enumerate(tree.find_all(exp.With)))):
        renamed = {
            cte.alias_or_name.lower(): f"{cte.alias_or_name}_{index}"
            for cte in with_.expressions
            if counts[cte.alias_or_name.lower()] > 1
        }
        for cte in with_.expressions:
            if cte.alias_or_name.lower() in renamed:
                cte.set("alias", exp.TableAlias(this=exp.to_identifier(renamed[cte.alias_or_name.lower()])))
        scope = with_.parent if with_.parent is not None else with_
        for table in scope.find_all(exp.Table):
            if not table.db and table.name.lower() in renamed:
                table.set("this", exp.to_identifier(renamed[table.name.lower()]))
    return tree


def column(name: str, table: Optional[str] = None) -> exp.Column:
    """A column by its name (of `table`), quoted: names come from configs and generated aliases."""
    return exp.column(name, table=table, quoted=True)


def qualified(value: exp.Expr, table: str) -> exp.Expression:
    """A copy of `value` with its unqualified columns qualified by `table`."""
    copy = node(value.copy())
    for found in copy.find_all(exp.Column):
        if not found.table:
            found.set("table", exp.to_identifier(table))
    return copy


def aliased(columns: Sequence[Named]) -> List[exp.Expression]:
    """Select-list items `expression AS alias`."""
    return [node(exp.alias_(e, name, quoted=True)) for name, e in columns]


def fill(template: exp.Expr, **values: exp.Expr) -> exp.Expression:
    """`template` with each placeholder `:name` replaced by a copy of `values[name]`."""
    return node(template.transform(lambda n: values[n.name].copy() if isinstance(n, exp.Placeholder) else n))


def epoch_micros(value: exp.Expr) -> exp.Expression:
    """A timestamp expression as microseconds since the epoch."""
    return fill(_EPOCH_MICROS, value=value)


def window_floor(t: exp.Expr, offset: Value, unit: Value) -> exp.Expression:
    """The latest window start at or before t (epoch micros): multiples of `unit` after `offset`,
    floored also before 1970 (pmod is never negative). The macros' `_window_floor`."""
    return fill(_WINDOW_FLOOR, t=t, offset=exp.convert(offset), unit=exp.convert(unit))


def window_bounds(start: exp.Expr, end: exp.Expr) -> List[exp.Expression]:
    """The window_start, window_end and window_time columns of [start, end) (epoch micros).
    The macros' `_window_bounds`."""
    time = exp.Sub(this=end.copy(), expression=exp.Literal.number(1))
    bounds = {"window_start": start.copy(), "window_end": end.copy(), "window_time": time}
    return [node(exp.alias_(exp.func("timestamp_micros", value), name)) for name, value in bounds.items()]


def floor_index(key: exp.Expr, size: int) -> exp.Expression:
    """The index of the interval of `size` that holds `key`, floored: negative before 1970."""
    return fill(_FLOOR_INDEX, key=key, size=exp.Literal.number(size))


def least(values: Sequence[Value]) -> exp.Expression:
    """LEAST of the values; one value is itself."""
    first, *rest = (exp.convert(v, copy=True) for v in values)
    return exp.Least(this=first, expressions=rest) if rest else node(first)


def coalesce(*values: Value) -> exp.Expression:
    """COALESCE of the values."""
    first, *rest = (exp.convert(v, copy=True) for v in values)
    return exp.Coalesce(this=first, expressions=rest)


def ordered(value: exp.Expr, descending: bool = False, nulls_first: Optional[bool] = None) -> exp.Ordered:
    """An ORDER BY item; NULLs by default where Spark puts them (first ascending, last descending)."""
    first = not descending if nulls_first is None else nulls_first
    return exp.Ordered(this=value.copy(), desc=descending or None, nulls_first=first)


def order_by(keys: Sequence[Tuple[str, bool, bool]]) -> List[exp.Ordered]:
    """A window's ORDER BY from its keys as a plan keeps them: (expression, descending, NULLS FIRST)."""
    return [ordered(parse(sql), descending, nulls_first) for sql, descending, nulls_first in keys]


def window(
    func: exp.Expr,
    partition_by: Sequence[exp.Expr] = (),
    order_by: Sequence[exp.Ordered] = (),
    frame: Optional[exp.WindowSpec] = None,
) -> exp.Window:
    """`func OVER (PARTITION BY ... ORDER BY ... frame)`."""
    return exp.Window(
        this=func.copy(),
        partition_by=[p.copy() for p in partition_by] or None,
        order=exp.Order(expressions=[o.copy() for o in order_by]) if order_by else None,
        spec=frame.copy() if frame is not None else None,
        over="OVER",
    )


def frame(kind: str, start: Tuple[object, Optional[str]], end: Tuple[object, Optional[str]]) -> exp.WindowSpec:
    """A frame `kind BETWEEN start AND end`; each bound is (value, side): ('UNBOUNDED',
    'PRECEDING'), ('CURRENT ROW', None), or (a literal or INTERVAL, 'PRECEDING'/'FOLLOWING')."""
    return exp.WindowSpec(kind=kind.upper(), start=start[0], start_side=start[1], end=end[0], end_side=end[1])


def replaced(tree: exp.Expression, node: exp.Expr, replacement: exp.Expression) -> exp.Expression:
    """`tree` with `node` (in it) replaced; the replacement itself when `node` is the tree."""
    if node is tree:
        return replacement
    node.replace(replacement)
    return tree


def wrap(
    query: exp.Expr,
    columns: Sequence[Named] = (),
    *,
    star: bool = True,
    hidden: Sequence[str] = (),
    where: Optional[exp.Expr] = None,
) -> exp.Select:
    """`SELECT [* [EXCEPT (hidden)],] columns FROM (query) WHERE where`: the query's rows with
    columns computed over them. A WITH on the query moves out, so the wrapper can stand where
    the query stood."""
    if not isinstance(query, exp.Query):
        raise TypeError(f"not a query: {query!r}")
    query = query.copy()
    with_ = query.args.get("with_")
    query.set("with_", None)
    selected = aliased(columns)
    if star:
        selected.insert(0, exp.Star(except_=[column(h) for h in hidden] or None))
    wrapper = exp.select(*selected).from_(query.subquery(ROWS, copy=False))
    if where is not None:
        wrapper = wrapper.where(where.copy(), copy=False)
    if with_ is not None:
        wrapper.set("with_", with_)
    return wrapper


def time_literal(t: datetime) -> exp.Expression:
    """A time bound as a typed literal. A string one Spark casts to the compared column's type,
    which for a DATE column drops the time of day (`d < '2024-01-05 01:00:00'` is `d < 2024-01-05`).
    A naive time as TIMESTAMP_NTZ, one with a zone (dbt's microbatch bounds) as TIMESTAMP: each
    compares with TIMESTAMP and TIMESTAMP_NTZ columns as the string did."""
    kind = "timestamp_ntz" if t.tzinfo is None else "timestamp"
    return exp.cast(exp.Literal.string(t.isoformat(sep=" ")), exp.DataType.build(kind, dialect="spark"))


def in_time_range(
    column: exp.Expression, start: Optional[datetime], end: Optional[datetime]
) -> Optional[exp.Expression]:
    """`column` in [start, end), its bounds typed (time_literal); None: no bound on either side."""
    bounds: List[exp.Expression] = [
        *([] if start is None else [exp.GTE(this=column.copy(), expression=time_literal(start))]),
        *([] if end is None else [exp.LT(this=column.copy(), expression=time_literal(end))]),
    ]
    if len(bounds) < 2:
        return bounds[0] if bounds else None
    return exp.And(this=bounds[0], expression=bounds[1])
