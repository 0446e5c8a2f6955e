"""A window TVF with GROUP BY window_start, window_end (FLIP-145's window aggregation), read as
the window_aggregate it is, so that a stream keeps one row of partial aggregates per (keys, pane)
as its state (slicing.py) instead of the open windows' input rows: Flink plans the same query as
its sliced window aggregate. A HOP 1h/5min then merges each row into one pane, not twelve
windows, and a micro-batch re-aggregates panes, not rows. HOP and CUMULATE: a TUMBLE's rows are
in one window each, and its stream measured slower kept as panes (bench/README.md). SESSION
grouped by exactly its partition_by: one row of partials per open session
(session_slicing.py), not its rows.

Only the plain form is read this way: the model's top-level SELECT over the TVF alone, grouped by
window_start, window_end (and window_time) and input columns, selecting those and expressions of
aggregates that decompose into panes (count, sum, avg, min, max). Anything else (WHERE, HAVING,
DISTINCT, FILTER, over windows, approx_count_distinct, whose batch estimate a merged sketch
does not reproduce, ...) keeps input rows, as before: the same results, a larger state.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Set, Tuple

from sqlglot import exp

from dbt.adapters.window_views import analysis, panes, sqlexpr, tvf
from dbt.adapters.window_views.names import internal, is_identifier, is_reserved
from dbt.adapters.window_views.streaming.slicing import PANES_CTE
from dbt.adapters.window_views.windows import Cumulate, Hop, Session, Via

MEASURE = internal("a")  # the prefix of a measure column the rewrite names

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


def _name(column: exp.Column) -> str:
    return column.name.lower()


def _tvf_source(select: exp.Select, view: str) -> bool:
    """Whether `select` reads one window TVF subquery (its marker heads the subquery's SELECT)
    over the stream's `view`, and nothing else."""
    source = select.args.get("from_") or select.args.get("from")
    inner = source.this if source is not None else None
    if not isinstance(inner, exp.Subquery) or not isinstance(inner.this, exp.Select):
        return False
    marked = any("window_views:tvf:" in c for c in inner.this.comments or [])
    tables = {t.name for t in inner.this.find_all(exp.Table)}
    return marked and tables == {view}


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


def rewrite(tree: exp.Expression, window: tvf.WindowTvf, view: str) -> Optional[Tuple[exp.Expression, tvf.WindowTvf]]:
    """The model (`tree`, reading the stream's `view`) as a window_aggregate over `view`, and
    the window with its keys and measures (what slicing.plan needs); None when the model is not
    the plain TVF aggregate this module reads."""
    if not isinstance(window, (Hop, Cumulate, Session)) or window.via is not None or not isinstance(tree, exp.Select):
        return None
    if any(tree.args.get(k) for k in _REFUSED) or not _tvf_source(tree, view):
        return None
    if any(p.find(exp.Window) or p.is_star for p in tree.expressions):  # over windows across the aggregate, `*`
        return None
    if any(is_reserved(p.alias_or_name) for p in tree.expressions):
        return None  # a name like the plugin's own, which ModelQuery.conform drops
    grouped_by = _group_keys(tree)
    if grouped_by is None:
        return None
    grouped = {k.lower() for k in grouped_by}
    keys = [k for k in grouped_by if k.lower() not in WINDOW_COLUMNS]
    if isinstance(window, Session) and {k.lower() for k in keys} != {k.lower() for k in window.partition_by}:
        return None  # grouped by more or fewer columns than the sessions are: a session's rows split or join
    measures: Dict[str, str] = {}
    projections = []
    for projection in tree.expressions:
        rewritten = _measures(projection, grouped, measures)
        if rewritten is None:
            return None
        named = isinstance(rewritten, exp.Alias) or (isinstance(rewritten, exp.Column) and _name(rewritten) in grouped)
        if not named:  # any name but an internal one: ModelQuery.conform gives the model's own
            rewritten = sqlexpr.node(exp.alias_(rewritten, projection.sql("spark"), quoted=True))
        projections.append(rewritten)
    if not measures:
        return None  # windows without aggregates: nothing to keep as partials
    panes_read = exp.Subquery(this=exp.select("*").from_(view), alias=exp.TableAlias(this=exp.to_identifier(PANES_CTE)))
    rewritten_tree = exp.select(*projections).from_(panes_read)
    sliced = dataclasses.replace(
        window, via=Via.WINDOW_AGGREGATE, group_by=tuple(keys), measures=tuple(measures.items())
    )
    return rewritten_tree, sliced
