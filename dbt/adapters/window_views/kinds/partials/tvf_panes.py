"""Batch: each SELECT of a model that is a HOP or CUMULATE window aggregation
(window_aggregation.py) computed from panes, as `window_aggregate` is (panes.py). The TVF form
copies each row into every window holding it (five for Nexmark q5's 10 s / 2 s HOP, twelve for
a 1 h / 5 min one) before it aggregates; the pane plan aggregates the rows into pane partials
once and each window combines its panes'.

Only where that is the same value of the same type: counts, and min and max of anything; sum and
avg of integral, float and double columns (a decimal's sum of partial sums is of a wider type,
its avg rounds otherwise); approx_count_distinct never (merged sketches estimate otherwise). And
only over a window TVF of a table, or of its rows filtered (`(select * from t where ...)`, as an
incremental batch reads its range, batch_reads.py): any relation's windows are its panes'.
Anything else runs as written.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional, Tuple

from sqlglot import exp

from dbt.adapters.window_views import names
from dbt.adapters.window_views.kinds.partials import panes, window_aggregation
from dbt.adapters.window_views.query import tvf
from dbt.adapters.window_views.query.windows import Cumulate, Hop

Relation = Tuple[Optional[str], str]  # (schema, name), as analysis.input_tables gives them
# a table's column types by lower-cased name, or None where unknown
TypesOf = Callable[[Relation], Optional[Mapping[str, str]]]

_EXACT = ("tinyint", "smallint", "int", "integer", "bigint", "float", "double")  # DESCRIBE's type names
PANES = names.PANES


def paned(query: exp.Expression, types_of: TypesOf) -> Optional[exp.Expression]:
    """`query` with every window aggregation this module computes from panes rewritten so (a
    copy); None when there is none, so the query runs as written."""
    tree = query.copy()
    rewritten = [(select, over) for select in tree.find_all(exp.Select) if (over := _paned(select, types_of))]
    if not rewritten:
        return None
    for select, replacement in rewritten:
        if select is tree:
            tree = replacement
        else:
            select.replace(replacement)
    return tree


def _paned(select: exp.Select, types_of: TypesOf) -> Optional[exp.Select]:
    """`select` over its window's pane plan, or None where this module leaves it as written."""
    inner = window_aggregation.tvf_subquery(select)
    if inner is None:
        return None
    source = inner.args.get("from_")
    read = _read(source.this if source is not None else None)
    if read is None or inner.args.get("joins"):
        return None  # not the macro's subquery over a table
    relation, table = read
    try:
        windows = tvf.on_node(inner)
    except tvf.MarkerError:
        return None  # named when the plan is built
    if len(windows) != 1 or not isinstance(windows[0], (Hop, Cumulate)):
        return None
    found = window_aggregation.read(select, windows[0])
    if found is None:
        return None
    types = types_of((table.db or None, table.name))
    measures = panes.parse_measures(dict(found.window.measures))
    if types is None or not all(_exact(m.tree, types) for m in measures):
        return None
    window = found.window
    assert isinstance(window, (Hop, Cumulate))
    plan = panes.plan(relation.copy(), window, measures, list(found.keys))
    if plan.query is None:
        return None
    return exp.select(*found.projections).from_(plan.query.subquery(PANES))


def _read(relation: Optional[exp.Expression]) -> Optional[Tuple[exp.Expression, exp.Table]]:
    """What a TVF reads and the table whose column types it has: a table, or its rows filtered
    (`(select * from t where ...) as a`); None for anything else."""
    if isinstance(relation, exp.Table):
        return relation, relation
    if not isinstance(relation, exp.Subquery) or not isinstance(relation.this, exp.Select):
        return None
    rows = relation.this
    source = rows.args.get("from_")
    table = source.this if source is not None else None
    others = [k for k, v in rows.args.items() if v and k not in ("expressions", "from_", "where")]
    if not isinstance(table, exp.Table) or others or [p.is_star for p in rows.expressions] != [True]:
        return None
    return relation, table


def _exact(measure: exp.Expression, types: Mapping[str, str]) -> bool:
    """Whether the pane plan computes `measure` (one aggregate call) as the TVF form does: the
    same value of the same type."""
    calls = [a for a in measure.find_all(exp.AggFunc) if not a.find_ancestor(exp.AggFunc)]
    for call in calls:
        if isinstance(call, (exp.Count, exp.Min, exp.Max)):
            continue
        if not isinstance(call, (exp.Sum, exp.Avg)):
            return False
        argument = call.this
        if not isinstance(argument, exp.Column) or types.get(argument.name.lower(), "").lower() not in _EXACT:
            return False
    return True
