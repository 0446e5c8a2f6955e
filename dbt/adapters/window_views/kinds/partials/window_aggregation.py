"""A SELECT that is FLIP-145's window aggregation (a window TVF, GROUP BY window_start,
window_end and input columns, aggregates that decompose into panes), read as the
window_aggregate it is: its window with the group keys and measures, and its select items over
the window_aggregate's columns. Streaming keeps such a model's pane partials as its state
(streaming/tvf_aggregate.py); batch computes such a SELECT from panes (tvf_panes.py).

Only the plain form is read this way: the SELECT over the TVF alone, grouped by window_start,
window_end (and window_time) and input columns, selecting those and expressions of aggregates
that decompose into panes (count, sum, avg, min, max). Anything else (WHERE, HAVING, DISTINCT,
FILTER, over windows, approx_count_distinct, whose batch estimate a merged sketch does not
reproduce, ...) is not, and runs as written.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

from sqlglot import exp

from dbt.adapters.window_views.kinds.partials import panes
from dbt.adapters.window_views.names import internal, is_identifier, is_reserved
from dbt.adapters.window_views.query import analysis, sqlexpr, tvf
from dbt.adapters.window_views.query.windows import Cumulate, Hop, Session, Via

MEASURE = internal("a")  # the prefix of a measure column the reading names

WINDOW_COLUMNS = ("window_start", "window_end", "window_time")
# clauses of the aggregating SELECT that panes do not compute
_REFUSED = (
    "where",
    "having",
    "qualify",
    "order",
    "limit",
    "offset",
    "distinct",
    "windows",
    "joins",
    "laterals",
    "with_",
)


@dataclass(frozen=True)
class WindowAggregation:
    """The SELECT as a window_aggregate: its window (via window_aggregate, with the group keys
    and the measures, `_wv_a<n>` -> the aggregate) and its items over that aggregate's columns."""

    window: tvf.WindowTvf
    projections: Tuple[exp.Expression, ...]

    @property
    def keys(self) -> Tuple[str, ...]:
        return self.window.group_by


def tvf_subquery(select: exp.Select) -> Optional[exp.Select]:
    """The window TVF subquery `select` reads, if its FROM is one (its marker heads its SELECT)."""
    source = select.args.get("from_") or select.args.get("from")
    inner = source.this if source is not None else None
    if not isinstance(inner, exp.Subquery) or not isinstance(inner.this, exp.Select):
        return None
    return inner.this if any("window_views:tvf:" in c for c in inner.this.comments or []) else None


def read(select: exp.Select, window: tvf.WindowTvf) -> Optional[WindowAggregation]:
    """`select` (which reads the TVF of `window` alone) as its window_aggregate; None when it is
    not the plain form."""
    if not isinstance(window, (Hop, Cumulate, Session)) or window.via is not None:
        return None
    if any(select.args.get(k) for k in _REFUSED):
        return None
    if any(p.find(exp.Window) or p.is_star for p in select.expressions):  # over windows across the aggregate, `*`
        return None
    if any(is_reserved(p.alias_or_name) for p in select.expressions):
        return None  # a name like the plugin's own, which ModelQuery.conform drops
    grouped_by = _group_keys(select)
    if grouped_by is None:
        return None
    grouped = {k.lower() for k in grouped_by}
    keys = [k for k in grouped_by if k.lower() not in WINDOW_COLUMNS]
    if isinstance(window, Session) and {k.lower() for k in keys} != {k.lower() for k in window.partition_by}:
        return None  # grouped by more or fewer columns than the sessions are: a session's rows split or join
    measures: Dict[str, str] = {}
    projections = []
    for projection in select.expressions:
        rewritten = _measures(projection, grouped, measures)
        if rewritten is None:
            return None
        named = isinstance(rewritten, exp.Alias) or (isinstance(rewritten, exp.Column) and _name(rewritten) in grouped)
        if not named:  # any name but an internal one: ModelQuery.conform gives the model's own
            rewritten = sqlexpr.node(exp.alias_(rewritten, projection.sql("spark"), quoted=True))
        projections.append(rewritten)
    if not measures:
        return None  # windows without aggregates: nothing to keep as partials
    sliced = dataclasses.replace(
        window, via=Via.WINDOW_AGGREGATE, group_by=tuple(keys), measures=tuple(measures.items())
    )
    return WindowAggregation(sliced, tuple(projections))


def _name(column: exp.Column) -> str:
    return column.name.lower()


def _group_keys(select: exp.Select) -> Optional[List[str]]:
    """The GROUP BY's columns, if it is a plain list of columns holding window_start and
    window_end (no GROUPING SETS, ROLLUP, CUBE, expressions)."""
    group = select.args.get("group")
    if group is None or any(group.args.get(k) for k in ("grouping_sets", "cube", "rollup", "totals", "all")):
        return None
    aliases = {p.alias.lower(): p.this for p in select.expressions if isinstance(p, exp.Alias)}
    columns = []
    for e in group.expressions:
        if isinstance(e, exp.Literal) and e.is_int and 1 <= int(e.this) <= len(select.expressions):
            e = select.expressions[int(e.this) - 1].unalias()  # GROUP BY 1: the first output column
        if not isinstance(e, exp.Column):
            return None  # an expression
        aliased = aliases.get(_name(e))
        if aliased is not None and not (isinstance(aliased, exp.Column) and _name(aliased) == _name(e)):
            return None  # the output alias of another expression (Spark groups by it)
        columns.append(e)
    names = [_name(e) for e in columns]
    if not {"window_start", "window_end"} <= set(names):
        return None
    if not all(is_identifier(e.name) for e in columns):
        return None
    return list(dict.fromkeys(e.name for e in columns))


def _measures(projection: exp.Expression, grouped: Set[str], measures: Dict[str, str]) -> Optional[exp.Expression]:
    """`projection` reading the pane plan's output: each aggregate call replaced by a measure
    column (added to `measures`), every other column a group key or window column; None if an
    aggregate does not decompose or a column is neither."""
    projection = analysis.without_qualifiers(projection)
    calls = [a for a in projection.find_all(exp.AggFunc) if not a.find_ancestor(exp.AggFunc)]
    for call in calls:
        if isinstance(call.parent, exp.Filter) or panes.decompose(call) is None or isinstance(call, exp.ApproxDistinct):
            return None
        if any(_name(c) in WINDOW_COLUMNS for c in call.find_all(exp.Column)):
            return None  # an aggregate of the window columns: the panes have no such column
        name = f"{MEASURE}{len(measures)}"
        measures[name] = call.sql("spark")
        if call is projection:
            projection = exp.column(name)
        else:
            call.replace(exp.column(name))
    outside = [c for c in projection.find_all(exp.Column) if not c.name.startswith(MEASURE)]
    if any(_name(c) not in grouped for c in outside):
        return None
    return projection
