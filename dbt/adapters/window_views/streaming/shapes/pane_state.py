"""A streaming window_aggregate's state between micro-batches (streaming/slicing.py): one row of
partial aggregates per (group keys, pane), the new rows' partials merged into it; a session
aggregate's the same way, one row per (key, open session) (streaming/session_slicing.py)."""

from __future__ import annotations

from typing import Any, Optional

from pyspark.sql import functions as F

from dbt.adapters.window_views.kinds.partials.slicing import Slicing
from dbt.adapters.window_views.names import PANE, internal
from dbt.adapters.window_views.streaming.shapes.state import State

# the state's event time: a pane's start, so that the window arithmetic on rows (which windows
# hold t, when the last one closes) picks and evicts panes as it would their rows
T = internal("t")


def _pane_time() -> Any:
    return F.col(PANE).alias(T)


def partials(spark: Any, slicing: Slicing, rows: Any) -> Any:
    """The pane partials of input `rows` (panes.py's own per-pane step)."""
    rows.drop(T).createOrReplaceTempView(slicing.rows_view)
    return spark.sql(slicing.partial_sql).select("*", _pane_time())


def retained(spark: Any, slicing: Slicing, fresh: Any, state: State, previous: Optional[str]) -> Any:
    """The panes after this batch: the partials of its `fresh` rows merged into the state of
    the `previous` batch. Cached: the output and the next state both read it, and it is small
    (panes, not rows)."""
    new = partials(spark, slicing, fresh)
    if previous is None:
        return new.persist()
    old = state.rows(spark, previous, new.schema)
    panes = old.unionByName(new)
    if slicing.keys:
        # by key: the merge (by key and pane) and the windows (by key) then need no other shuffle
        panes = panes.repartition(*[F.col(f"`{k}`") for k in slicing.keys])
    panes.createOrReplaceTempView(slicing.merge_view)
    merge = spark.sql(slicing.merge_sql)
    # a sum of sums widens its type (decimal precision): the state keeps the partials' own types
    columns = [F.col(f"`{f.name}`").cast(f.dataType).alias(f.name) for f in new.schema.fields if f.name != T]
    return merge.select(*columns).select("*", _pane_time()).persist()
