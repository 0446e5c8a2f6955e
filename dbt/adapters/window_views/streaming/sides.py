"""A model over several upstream tables (a window join, a UNION ALL) streams them as one: each
input's rows are put in one shape and unioned, so one Structured Streaming query reads every
source and its checkpoint keeps each source's offsets. Each micro-batch (and the state kept
between batches) is that shape; the model SQL reads it split back into the inputs' views.

The shape: `_wv_side` (the upstream table a row came from, as the SQL names it), the watermark
column (every input has it: the plan requires each window's time column to be it), and one struct
column per input, `_wv_in<i>`, holding the row on its own input's rows and NULL on the others'.

One watermark for the model: the smallest of the inputs' (each: its latest event time - delay),
as an operator's watermark is the minimum of its inputs' in Flink; an input that has no rows yet
holds it back, so no window is emitted before every input's rows for it could have arrived."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from dbt.adapters.window_views.streaming.plan import StreamPlan

SIDE = "_wv_side"


def row_column(i: int) -> str:
    return f"_wv_in{i}"


def combined(plan: StreamPlan, read: Callable[[str], Any]) -> Any:
    """Every input's rows in the one shape, unioned; `read(table)` reads an input (a table, or
    its stream)."""
    frames = [read(source.source) for source in plan.inputs]
    types = [StructType(frame.schema.fields) for frame in frames]
    column = plan.config.watermark.column
    shaped = []
    for i, frame in enumerate(frames):
        rows = [
            (F.struct(*[frame[f"`{c}`"] for c in frame.columns]) if j == i else F.lit(None).cast(types[j])).alias(
                row_column(j)
            )
            for j in range(len(frames))
        ]
        shaped.append(frame.select(F.lit(plan.inputs[i].source).alias(SIDE), frame[f"`{column}`"].alias(column), *rows))
    union = shaped[0]
    for other in shaped[1:]:
        union = union.union(other)
    return union


def to_views(plan: StreamPlan, rows: Any) -> None:
    """Put each input's rows of `rows` (the one shape) where the model SQL reads that input."""
    for i, source in enumerate(plan.inputs):
        rows.where(F.col(SIDE) == source.source).select(f"{row_column(i)}.*").createOrReplaceTempView(source.view)


def drop_views(spark: Any, plan: StreamPlan) -> None:
    for source in plan.inputs:
        spark.catalog.dropTempView(source.view)


def late_columns(plan: StreamPlan) -> List[str]:
    """A late row as the late table of a model over several inputs keeps it: the input it came
    from (`_side`) and the row as JSON (`_row`), whatever each input's columns are."""
    row = "coalesce(" + ", ".join(f"to_json({row_column(i)})" for i in range(len(plan.inputs))) + ")"
    return [f"{SIDE} as _side", f"{row} as _row"]


LATE_SCHEMA = "_side string, _row string, _batch_id bigint, _watermark timestamp"


def latest_times(plan: StreamPlan, late: Any, t: Any) -> List[Any]:
    """Per input, the latest event time of its rows on time (aggregates over a batch's rows)."""
    return [F.max(F.when(~late & (F.col(SIDE) == s.source), t)).alias(f"_wv_tmax{i}") for i, s in enumerate(plan.inputs)]


def watermark(
    plan: StreamPlan, stats: Dict[str, Any], w_prev: Optional[int], previous: Optional[Dict[str, int]]
) -> Tuple[Optional[int], Dict[str, int]]:
    """The model's watermark after a batch, and each input's (its latest event time - delay),
    from the inputs' watermarks before it (`previous`) and the batch's latest times (`stats`)."""
    delay = plan.config.watermark.delay.micros
    reached = dict(previous or {})
    for i, source in enumerate(plan.inputs):
        latest = stats.get(f"_wv_tmax{i}")
        if latest is not None:
            reached[source.source] = max(reached.get(source.source, latest - delay), latest - delay)
    if any(source.source not in reached for source in plan.inputs):
        return w_prev, reached  # an input without rows yet: nothing closes
    lowest = min(reached[source.source] for source in plan.inputs)
    return (lowest if w_prev is None else max(w_prev, lowest)), reached
