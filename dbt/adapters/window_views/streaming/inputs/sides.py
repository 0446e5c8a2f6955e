"""A model over several upstream tables (a window join, a UNION ALL) streams them as one: each
input's rows are put in one shape and unioned, so one Structured Streaming query reads every
source and its checkpoint keeps each source's offsets. Each micro-batch (and the state kept
between batches) is that shape; the model SQL reads it split back into the inputs' views.

The shape: `_wv_side` (the upstream table a row came from, as the SQL names it), the watermark
column (every input has it: the plan requires each window's time column to be it), and one struct
column per input, `_wv_in<i>`, holding the row on its own input's rows and NULL on the others'.

One watermark for the model: the smallest of the inputs' (each: its latest event time - delay,
moved on by its own idle clock with `idle_timeout`: idle.py), as an operator's watermark is the
minimum of its inputs' in Flink; an input that has no rows yet holds it back, so no window is
emitted before every input's rows for it could have arrived."""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.plans.stream import InputShape, StreamPlan
from dbt.adapters.window_views.records import Arrival, BatchRecord, Clocks, InputClocks, InputCounts, NewRowCounts
from dbt.adapters.window_views.streaming.inputs import idle
from dbt.adapters.window_views.streaming.inputs.columns_read import FILE

SIDE = internal("side")


def row_column(i: int) -> str:
    return internal(f"in{i}")


class OneInput:
    """A model over one upstream table: its rows as they are, its W from their event times."""

    def __init__(self, plan: StreamPlan) -> None:
        self.plan = plan

    def rows(self, read: Callable[[str], Any]) -> Any:
        """What a micro-batch reads; `read(table)` reads an input (a table, or its stream)."""
        return read(self.plan.source)

    def put(self, rows: Any, columns: Sequence[str]) -> None:
        """Put `rows` (its `columns`, SQL) where the model SQL reads its upstream table."""
        rows.select(*columns).createOrReplaceTempView(self.plan.view)

    def drop(self, spark: Any) -> None:
        """Drop the views `put` made."""
        spark.catalog.dropTempView(self.plan.view)

    def stats(self, late: Any, t: Any) -> List[Any]:
        """Counts of a batch's new rows besides the model's (none for one input)."""
        return []

    def counted(self, row: Any) -> Tuple[InputCounts, ...]:
        """What `stats` counted, from the row of the batch's counts."""
        return ()

    def late_columns(self, columns: Sequence[str]) -> List[str]:
        """A late row as the late table keeps it: the input's own columns."""
        return [f"`{c}`" for c in columns]

    def late_schema(self, spark: Any, sources: Sequence[Any]) -> Any:
        return (
            sources[0]
            .selectExpr("*", "cast(null as bigint) as _batch_id", "cast(null as timestamp) as _watermark")
            .schema
        )

    def no_clocks(self) -> Clocks:
        """The idle clock before any batch brought rows."""
        return Arrival()

    def watermark(self, counts: NewRowCounts, previous: Optional[BatchRecord], at: int) -> Tuple[Optional[int], Clocks]:
        """W after a batch with rows (`counts`: what its one job counted of them): their latest
        event time on time - delay, never back; the idle clock restarts at it (idle.py)."""
        w_new = previous.watermark if previous is not None else None
        if counts.tmax is not None:
            reached = counts.tmax - self.plan.watermark.delay.micros
            w_new = reached if w_new is None else max(w_new, reached)
        return w_new, Arrival(at, w_new)


class SeveralInputs(OneInput):
    """A window join or a UNION ALL of several upstream tables: their rows in one shape."""

    def rows(self, read: Callable[[str], Any]) -> Any:
        return combined(self.plan, read)

    def put(self, rows: Any, columns: Sequence[str]) -> None:
        to_views(self.plan, rows)

    def drop(self, spark: Any) -> None:
        drop_views(spark, self.plan)

    def stats(self, late: Any, t: Any) -> List[Any]:
        return input_stats(self.plan, late, t)

    def counted(self, row: Any) -> Tuple[InputCounts, ...]:
        return tuple(InputCounts(row[_N.format(i)], row[_TMAX.format(i)]) for i in range(len(self.plan.inputs)))

    def late_columns(self, columns: Sequence[str]) -> List[str]:
        return late_columns(self.plan)

    def late_schema(self, spark: Any, sources: Sequence[Any]) -> Any:
        return spark.createDataFrame([], LATE_SCHEMA).schema

    def no_clocks(self) -> Clocks:
        return InputClocks()

    def watermark(self, counts: NewRowCounts, previous: Optional[BatchRecord], at: int) -> Tuple[Optional[int], Clocks]:
        return watermark(self.plan, counts.inputs, previous, at)


def inputs_of(plan: StreamPlan) -> OneInput:
    """How the plan's input shape reaches a micro-batch, chosen once per plan."""
    return OneInput(plan) if plan.shape is InputShape.SINGLE else SeveralInputs(plan)


def combined(plan: StreamPlan, read: Callable[[str], Any]) -> Any:
    """Every input's rows in the one shape, unioned; `read(table)` reads an input (a table, or
    its stream)."""
    frames = [read(source.source) for source in plan.inputs]
    # a row's file (columns_read.py) is not the input's: beside the row, not in it
    columns = [[c for c in frame.columns if c != FILE] for frame in frames]
    types = [StructType([frame.schema[c] for c in cols]) for frame, cols in zip(frames, columns)]
    column = plan.watermark.column
    shaped = []
    for i, frame in enumerate(frames):
        rows = [
            (F.struct(*[frame[f"`{c}`"] for c in columns[i]]) if j == i else F.lit(None).cast(types[j])).alias(
                row_column(j)
            )
            for j in range(len(frames))
        ]
        file = [frame[FILE]] if FILE in frame.columns else []
        shaped.append(
            frame.select(F.lit(plan.inputs[i].source).alias(SIDE), frame[f"`{column}`"].alias(column), *rows, *file)
        )
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


_TMAX, _N = internal("tmax{}"), internal("n{}")  # per input: its latest event time on time, its rows
LATE_SCHEMA = "_side string, _row string, _batch_id bigint, _watermark timestamp"


def input_stats(plan: StreamPlan, late: Any, t: Any) -> List[Any]:
    """Per input, the latest event time of its rows on time and how many rows it brought, late
    ones included: any row restarts its idle clock (aggregates over a batch's rows)."""
    stats = []
    for i, source in enumerate(plan.inputs):
        of_input = F.col(SIDE) == source.source
        stats += [F.max(F.when(~late & of_input, t)).alias(_TMAX.format(i)), F.count_if(of_input).alias(_N.format(i))]
    return stats


def watermark(
    plan: StreamPlan, inputs: Sequence[InputCounts], previous: Optional[BatchRecord], at: int
) -> Tuple[Optional[int], InputClocks]:
    """The model's watermark after a batch with rows (at `at`, processing time), and what its
    commit keeps of each input: its W at its last rows (its latest event time - delay, or where
    its idle clock had moved it, if later) and when they arrived. The model's W is the least of
    the inputs' at `at`, so an input idle for longer than `idle_timeout` moves it on even in a
    batch that only the others brought rows to."""
    config = plan.watermark
    delay = config.delay.micros
    timeout = config.idle_timeout.micros if config.idle_timeout is not None else None
    before = previous.clocks if previous is not None and isinstance(previous.clocks, InputClocks) else InputClocks()
    bases, arrivals = dict(before.watermarks), dict(before.arrivals)
    for source, counts in zip((s.source for s in plan.inputs), inputs):
        if not counts.rows:
            continue  # no rows from this input: its W and clock stay
        reached = [counts.latest - delay] if counts.latest is not None else []
        if source in bases:
            reached.append(idle.own(bases[source], arrivals.get(source), timeout, at, plan.window))
        if reached:  # rows of an input without W yet that are all late (no event time) start no clock
            bases[source], arrivals[source] = max(reached), at
    clocks = InputClocks(bases, arrivals)
    lowest = idle.least(clocks, timeout, at, plan.window, [s.source for s in plan.inputs])
    committed = previous.watermark if previous is not None else None
    w_new = max((w for w in (committed, lowest) if w is not None), default=None)
    return w_new, clocks
