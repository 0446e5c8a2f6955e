"""Over windows ordered by a STRING column: a RANGE frame with an offset cannot add it to text
(Spark's `Cannot resolve "RANGE BETWEEN ..."`), so it is refused; any other over window runs,
but dates as text sort as text (`05/06/2024` before `13/05/2024`), so it is warned of when the
values look like dates or times. The checks need the columns' types and a value, which the
runners give (`columns_of`, `first_value`); here is only what the tree says and the words."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

from sqlglot import exp

from dbt.adapters.window_views import names
from dbt.adapters.window_views.query import sqlexpr, time_nulls
from dbt.adapters.window_views.query.shown import shown

Relation = Tuple[Optional[str], str]
ColumnsOf = Callable[[Relation], Optional[List[Tuple[str, str]]]]
FirstValue = Callable[[exp.Expression], Optional[str]]  # a query's first row's value, or None
TEXT_TYPES = ("string", "varchar", "char")
_TIMELIKE = re.compile(r"^\s*(\d{1,4}[/.\-]\d{1,2}[/.\-]\d{1,4}|\d{1,2}:\d{2}(:\d{2})?)\b")


@dataclass(frozen=True)
class OrderUse:
    """An over window ordered by one column of the one table its SELECT reads."""

    column: str
    relation: Relation
    call: str  # as the user wrote it
    range_offset: bool  # a RANGE frame with an offset: the offset is added to the ORDER BY value


def order_uses(tree: exp.Expression) -> List[OrderUse]:
    """The model's over windows ordered by a single column of a table (a CTE's or a
    subquery's columns are Spark's to describe)."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    uses = []
    for window in tree.find_all(exp.Window):
        order = window.args.get("order")
        keys = order.expressions if order is not None else []
        if len(keys) != 1 or not isinstance(keys[0].this, exp.Column) or names.is_reserved(keys[0].this.name):
            continue
        select = window.find_ancestor(exp.Select)
        source = getattr(select.args.get("from_"), "this", None) if select is not None else None
        if select is None or select.args.get("joins") or not isinstance(source, exp.Table):
            continue
        if not source.db and source.name.lower() in ctes:
            continue
        spec = window.args.get("spec")
        kind = str(spec.args.get("kind") or "").lower() if spec is not None else ""
        bounds = [spec.args.get(k) for k in ("start", "end")] if spec is not None else []
        offset = kind == "range" and any(b not in (None, "CURRENT ROW", "UNBOUNDED") for b in bounds)
        uses.append(OrderUse(keys[0].this.name, (source.db or None, source.name), shown(window), offset))
    return uses


def _first_value_query(use: OrderUse) -> exp.Expression:
    column = sqlexpr.column(use.column)
    table = exp.table_(use.relation[1], db=use.relation[0], quoted=True)
    return exp.select(column).from_(table).where(exp.not_(exp.Is(this=column.copy(), expression=exp.null()))).limit(1)


def string_orders(
    tree: exp.Expression, columns_of: ColumnsOf, first_value: FirstValue
) -> Tuple[Optional[Tuple[str, str]], List[str]]:
    """(problem and fix of a RANGE offset frame ordered by text, or None; the warnings of other
    over windows ordered by text that holds dates or times, one a column)."""
    warned: List[str] = []
    seen: List[Tuple[Relation, str]] = []
    for use in order_uses(tree):
        kind = _type_of(columns_of(use.relation), use.column)
        if kind is None or kind.split("(")[0].lower() not in TEXT_TYPES:
            continue
        relation = ".".join(p for p in use.relation if p)
        if use.range_offset:
            value = first_value(_first_value_query(use))
            problem = (
                f"the RANGE frame of `{use.call}` orders by `{use.column}` of {relation}, which is {kind.upper()}: "
                "a RANGE offset is added to the ORDER BY value, which must be a number or a time"
            )
            return (problem, _cast(use.column, value)), warned
        key = (use.relation, use.column.lower())
        if key in seen:
            continue
        seen.append(key)
        value = first_value(_first_value_query(use))
        if value is not None and _TIMELIKE.match(value):
            warned.append(
                f"its over windows order by `{use.column}` of {relation}, which is {kind.upper()} of dates or times "
                f"(such as {value!r}): they sort as text (05/06 before 13/05), not in time; {_cast(use.column, value)}"
            )
    return None, warned


def _type_of(columns: Optional[Sequence[Tuple[str, str]]], column: str) -> Optional[str]:
    return next((kind for name, kind in columns or () if name.lower() == column.lower()), None)


def _cast(column: str, value: Optional[str]) -> str:
    formatted = time_nulls.formatted(column, value)
    return f"cast it to a time in an upstream model, e.g. `{formatted} as {column}`"
