"""A micro-batch's new rows judged against W, the watermark reached by the batch before: a row
whose first window is closed (over windows: whose ORDER BY value is at or before W) is late,
and goes to the late table or is dropped, always counted: one job that writes nothing counts the
new rows and their event-time range; the late rows, if any, are written by a second (read again
whole from their files when the stream reads only some of the input's columns: columns_read.py,
batch_files.py)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from pyspark.sql import functions as F
from sqlglot import exp

from dbt.adapters.window_views.kinds import model_kind
from dbt.adapters.window_views.model.config import LateData
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.records import BatchId, NewRowCounts
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.streaming.commit.locations import Locations
from dbt.adapters.window_views.streaming.inputs.batch_files import BatchFiles, changed
from dbt.adapters.window_views.streaming.inputs.columns_read import FILE
from dbt.adapters.window_views.streaming.inputs.sides import OneInput
from dbt.adapters.window_views.streaming.shapes.model_query import counted

T = internal("t")  # a new row's event time, epoch micros
LATE = internal("late")  # whether a new row is late
HELD_HIT = internal("held_hit")
LATE_FILES = internal("late_files")


def late_condition(plan: StreamPlan, w_prev: Optional[int]) -> exp.Expr:
    """Over T (event time, micros): whether a new row is kept aside at watermark `w_prev` (the
    late table, or dropped; counted either way). One rule for every model: a row without event
    time has no window and no place in an order, so it is kept aside with the rows that arrive
    for windows (over windows: ORDER BY values) the watermark has closed. So every input row
    reaches a window (or an over-window row) or the late count: rows in = placed + late."""
    t = exp.column(T)
    missing = t.is_(exp.null())
    if w_prev is None:
        return missing
    kind, window = plan.kind, model_kind.window_of(plan.kind)
    # a row at exactly a window's end that joins that window is late once the window closed
    at = f"{T} - 1" if isinstance(kind, model_kind.RowsToOwnWindow) and kind.joined.inclusive_end else T
    closed = sqlexpr.parse(window.late(at, w_prev)) if window is not None else t <= w_prev
    return exp.or_(missing, closed)


class NewRows:
    """The new rows of a micro-batch: judged, counted, the late ones staged."""

    def __init__(self, plan: StreamPlan, inputs: OneInput, where: Locations, batch_id: BatchId) -> None:
        self.plan = plan
        self.inputs = inputs
        self.where = where
        self.batch_id = batch_id

    def judged(self, df: Any, w_prev: Optional[int]) -> Any:
        """The rows with their event time (T) and whether they are late (LATE)."""
        t = sqlexpr.epoch_micros(sqlexpr.column(self.plan.watermark.column))
        return df.selectExpr("*", sqlexpr.to_sql(exp.alias_(t, T))).selectExpr(
            "*", sqlexpr.to_sql(exp.alias_(late_condition(self.plan, w_prev), LATE))
        )

    def count_and_stage_late(self, rows: Any, w_prev: Optional[int], held: Optional[Any]) -> NewRowCounts:
        """Count the new rows and the event-time range of those on time, and stage the late ones
        as they came, with the batch and the watermark that judged them (late_data='drop':
        nothing is written). The counts read only the columns they need (parquet skips the rest)
        in a job that writes nothing, so a bad file fails no write's task with its logs; the late
        rows, seldom any, are written only if there are some, since an empty write still costs a
        commit's files. `held`: the places of held-back partitions the new rows fall in
        (state.held_rows_metric), counted only after a batch with state."""
        late, t = F.col(LATE), F.col(T)
        counts = [
            F.count(F.lit(1)).alias("n"),
            F.count_if(late).alias("late"),
            F.count_if(t.isNull()).alias("untimed"),
            F.min(F.when(~late, t)).alias("tmin"),
            F.max(F.when(~late, t)).alias("tmax"),
            *self.inputs.stats(late, t),
            *([held.alias(HELD_HIT)] if held is not None else []),
        ]
        pruned = FILE in rows.columns  # columns_read.reader: the late rows are read again whole
        if pruned and self.plan.config.late_data == LateData.TABLE:
            counts.append(F.collect_set(F.when(late, F.col(FILE))).alias(LATE_FILES))
        row = rows.agg(*counts).first()
        found = NewRowCounts(
            row["n"],
            row["late"],
            row["tmin"],
            row["tmax"],
            self.inputs.counted(row),
            tuple(row[HELD_HIT]) if held is not None else None,
            untimed=row["untimed"],
        )
        if found.late and self.plan.config.late_data == LateData.TABLE:
            if pruned:
                self._stage_whole(rows.sparkSession, row[LATE_FILES], found.late, w_prev)
            else:
                self._stage_late(rows, [c for c in rows.columns if c not in (T, LATE)], w_prev)
        return found

    def _stage_whole(self, spark: Any, files: Sequence[str], late: int, w_prev: Optional[int]) -> None:
        """Stage the `late` late rows, read again whole from their `files`."""
        batch = BatchFiles(spark, self.plan, self.batch_id)
        whole = self.inputs.rows(batch.rows(files))
        staged = self._stage_late(self.judged(whole, w_prev), whole.columns, w_prev)
        if staged != late:
            raise changed(
                self.plan.model,
                self.batch_id,
                files,
                f"{late} late row(s) came from {len(files)} file(s) of {batch.inputs}, and reading them again "
                f"for the late table found {staged}",
            )

    def _stage_late(self, rows: Any, columns: Sequence[str], w_prev: Optional[int]) -> int:
        """Write the late rows of `rows` as the late table keeps them; how many it wrote."""
        judged_by = (
            exp.func("timestamp_micros", exp.cast(exp.Literal.number(w_prev), "bigint"))
            if w_prev is not None
            else exp.cast(exp.null(), "timestamp")
        )
        metadata = [
            exp.alias_(exp.cast(exp.Literal.number(self.batch_id), "bigint"), "_batch_id"),
            exp.alias_(judged_by, "_watermark"),
            exp.alias_(exp.Literal.string("late"), storage.BUCKET),
        ]
        kept = self.inputs.late_columns(columns)  # several inputs: which one, and the row as JSON (sides.py)
        late, written = counted(rows.where(LATE).selectExpr(*kept, *map(sqlexpr.to_sql, metadata)))
        late.write.partitionBy(storage.BUCKET).mode("overwrite").parquet(
            str(storage.staging_dir(self.where.late, self.batch_id))
        )
        return written()
