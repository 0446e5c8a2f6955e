"""Streaming window_aggregate by window slicing (Flink's slices): the state is one row of partial
aggregates per (group keys, pane), not input rows. A micro-batch aggregates its new rows into
pane partials, merges them into the pane state, and assembles windows from the merged panes with
panes.py's own plan (its `_wv_panes` step reads the pane state instead of input rows), so batch
and stream combine panes with the same SQL.

TUMBLE is planned as a HOP whose slide is its size: one pane per window. Measures that do not
decompose (e.g. count(DISTINCT x)) keep input rows as the state, as a window TVF does, and so
does a TUMBLE with approx_count_distinct (see `plan`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import List, Optional, Tuple

from sqlglot import exp

from dbt.adapters.window_views import names
from dbt.adapters.window_views.kinds.partials import panes
from dbt.adapters.window_views.query import sqlexpr, tvf
from dbt.adapters.window_views.query.windows import Cumulate, Hop, Tumble

PANES_CTE = names.PANES  # panes.plan's per-pane step; the window_aggregate subquery's alias too
# how a pane leaf (panes.decompose) merges with the same pane's partial from another batch
MERGE = {exp.Count: "sum", exp.Sum: "sum", exp.Min: "min", exp.Max: "max"}


class SlicingError(ValueError):
    """A window_aggregate a stream cannot keep as pane partials, with the fix."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(f"{problem}; fix: {fix}")
        self.problem = problem
        self.fix = fix


@dataclass(frozen=True)
class Slicing:
    """The SQL a micro-batch runs around the model SQL, which reads the pane state from the
    stream's view."""

    rows_view: str  # where the new rows go
    partial: exp.Expression  # the new rows' pane partials (reads rows_view)
    merge: exp.Expression  # one row per pane from the union of old and new partials (reads merge_view)
    merge_view: str
    columns: Tuple[str, ...]  # the pane state's columns: keys, [_wv_s,] _wv_p, partials
    keys: Tuple[str, ...]  # window_aggregate's group_by

    @functools.cached_property
    def partial_sql(self) -> str:
        return sqlexpr.to_sql(self.partial)

    @functools.cached_property
    def merge_sql(self) -> str:
        return sqlexpr.to_sql(self.merge)


def pane_subquery(tree: exp.Expression) -> Optional[exp.Subquery]:
    """The window_aggregate's subquery (its pane plan) in a model's SQL."""
    return next((s for s in tree.find_all(exp.Subquery) if s.alias_or_name == PANES_CTE), None)


def model_only(tree: exp.Expression) -> exp.Expression:
    """A copy of `tree` without the window_aggregate's pane plan: the model's own SQL, whose
    window functions are the user's (the pane plan's are the plugin's)."""
    copy = tree.copy()
    subquery = pane_subquery(copy)
    if subquery is not None:
        subquery.set("this", exp.select("*").from_(PANES_CTE))
    return copy


def _replanned(window: panes.Paned, relation: str) -> Optional[exp.Select]:
    """panes.py's plan of the window over `relation`, as a query with a `_wv_panes` CTE; None
    when a measure does not decompose."""
    # a TUMBLE as the HOP of one pane per window, so its panes are kept like a HOP's
    paned = window.as_hop() if isinstance(window, Tumble) else window
    measures = panes.parse_measures(dict(window.measures))
    planned = panes.plan(exp.to_table(relation), paned, measures, list(window.group_by))
    if planned.query is None:
        return None
    query = planned.query
    if not isinstance(query, exp.Select):
        raise TypeError(f"a pane plan is a query with a {PANES_CTE} CTE, got {planned.sql}")
    return query


def _is_sketch(leaf: exp.Expression) -> bool:
    return isinstance(leaf, exp.Anonymous) and leaf.name.lower() == "hll_sketch_agg"


def _merge(partial: exp.Select, pane_key: Tuple[str, ...], view: str) -> exp.Expression:
    """One row per `pane_key` (group keys, [_wv_s,] _wv_p), each partial merged as it combines."""
    merged: List[exp.Expr] = []
    for projection in partial.expressions:
        name = projection.alias_or_name
        if name in pane_key:
            merged.append(exp.column(name, quoted=True))
            continue
        leaf = projection.unalias()
        if _is_sketch(leaf):
            # sketches union; `true`: panes of one window may differ in lgConfigK
            combined: exp.Expr = exp.Anonymous(this="hll_union_agg", expressions=[exp.column(name), exp.true()])
        else:
            combined = exp.func(MERGE[type(leaf)], exp.column(name))
        merged.append(exp.alias_(combined, name))
    group = [exp.column(k, quoted=True) for k in pane_key]
    return exp.select(*merged).from_(view).group_by(*group)


def plan(tree: exp.Expression, window: tvf.WindowTvf, view: str) -> Optional[Slicing]:
    """Point the model's window_aggregate (in `tree`, whose upstream table already reads `view`)
    at the pane state in `view`, and return what a micro-batch runs to keep that state; None
    (tree unchanged) when the measures need input rows."""
    if not isinstance(window, (Tumble, Hop, Cumulate)):
        return None  # a SESSION's windows follow the rows: its state keeps them
    subquery = pane_subquery(tree)
    if subquery is None:
        raise ValueError(f"the model has no window_aggregate pane plan ({PANES_CTE}) to keep as pane partials")
    read = {t.name for t in subquery.find_all(exp.Table)} - panes.CTES
    if read != {view}:
        raise SlicingError(
            f"window_aggregate reads {', '.join(sorted(read))} (a CTE), and a stream keeps partial aggregates "
            "of its upstream table's rows",
            "pass ref() or source() to window_aggregate (compute the CTE in an upstream model)",
        )
    rows_view = f"{view}_rows"
    query = _replanned(window, rows_view)
    if query is None:
        return None
    cte = next(c for c in query.args["with_"].expressions if c.alias == PANES_CTE)
    partial = cte.this.copy()
    if isinstance(window, Tumble) and any(_is_sketch(p.unalias()) for p in partial.expressions):
        # batch TUMBLE runs approx_count_distinct itself (HLL++), whose estimate a merged sketch
        # does not reproduce: kept as rows, the stream runs the batch's SQL and estimates alike
        return None
    # a batch's new rows are few: aggregate them where they are (map-side), not after a shuffle
    for hint in list(partial.find_all(exp.Hint)):
        hint.pop()
    pane_key = tuple(p.alias_or_name for p in partial.expressions if not p.alias_or_name.startswith(panes.PARTIAL))
    cte.set("this", exp.select("*").from_(view))
    subquery.set("this", query)
    merge_view = f"{view}_merge"
    return Slicing(
        rows_view,
        partial,
        _merge(partial, pane_key, merge_view),
        merge_view,
        tuple(p.alias_or_name for p in partial.expressions),
        tuple(window.group_by),
    )
