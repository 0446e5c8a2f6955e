"""A window TVF with GROUP BY window_start, window_end (FLIP-145's window aggregation), read as
the window_aggregate it is (window_aggregation.py), so that a stream keeps one row of partial
aggregates per (keys, pane) as its state (slicing.py) instead of the open windows' input rows:
Flink plans the same query as its sliced window aggregate. A HOP 1h/5min then merges each row
into one pane, not twelve windows, and a micro-batch re-aggregates panes, not rows. HOP and
CUMULATE: a TUMBLE's rows are in one window each, and its stream measured slower kept as panes
(bench/history.md). SESSION grouped by exactly its partition_by: one row of partials per open
session (session_slicing.py), not its rows. Only the model's top-level SELECT is read this way;
anything else keeps input rows, as before: the same results, a larger state.
"""

from __future__ import annotations

from typing import Optional, Tuple

from sqlglot import exp

from dbt.adapters.window_views.kinds.partials import window_aggregation
from dbt.adapters.window_views.kinds.partials.slicing import PANES_CTE
from dbt.adapters.window_views.query import tvf


def _tvf_source(select: exp.Select, view: str) -> bool:
    """Whether `select` reads one window TVF subquery over the stream's `view`, and nothing else."""
    inner = window_aggregation.tvf_subquery(select)
    return inner is not None and {t.name for t in inner.find_all(exp.Table)} == {view}


def rewrite(tree: exp.Expression, window: tvf.WindowTvf, view: str) -> Optional[Tuple[exp.Expression, tvf.WindowTvf]]:
    """The model (`tree`, reading the stream's `view`) as a window_aggregate over `view`, and
    the window with its keys and measures (what slicing.plan needs); None when the model is not
    the plain TVF aggregate window_aggregation.py reads."""
    if not isinstance(tree, exp.Select) or not _tvf_source(tree, view):
        return None
    found = window_aggregation.read(tree, window)
    if found is None:
        return None
    panes_read = exp.Subquery(this=exp.select("*").from_(view), alias=exp.TableAlias(this=exp.to_identifier(PANES_CTE)))
    return exp.select(*found.projections).from_(panes_read), found.window
