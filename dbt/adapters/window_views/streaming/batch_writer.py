"""The foreachBatch function: one micro-batch, idempotent for its batch id.

1. classify the new rows against W, the watermark reached by the previous batch (late_rows.py):
   late rows go to the late table or are dropped, always counted;
2. add the others to the retained input: the rows that a result still to be written needs;
3. run the model SQL over the retained rows (model_query.py), keeping what the batch changed
   (on_update) or closed (on_window_close), and stage it (output.py), as the model's shape
   does (strategies.py: one strategy per model kind and emit, chosen once per plan);
4. record the batch READY, publish its staged files, commit it (commits.py), through the table
   format's store (output_store.py: parquet folders, or Delta tables committed idempotently);
5. forget the rows no later result needs (state.py), and the state the commit replaced.

Mostly nothing is cached: each job reads the new files and the state again, which costs less
than caching them as a job of its own (adaptive execution materializes a cache as a stage). The
exceptions: a window_aggregate's merged panes (pane_state.py), an aggregation of every new row,
few rows to keep; and an over-window batch's retained rows, shuffled and sorted once for the
model's and the state's window passes (over_shapes.sorted_once).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, Optional, Set

from dbt.adapters.events.logging import AdapterLogger
from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import functions as F

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.names import RESERVED_PREFIX
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.query.intervals import describe_epoch_micros
from dbt.adapters.window_views.records import NO_NEW_ROWS, BatchId, BatchRecord
from dbt.adapters.window_views.storage import filesystems
from dbt.adapters.window_views.storage.filesystems import FileSystem
from dbt.adapters.window_views.streaming import labels, shuffles
from dbt.adapters.window_views.streaming.commit.commits import CommitLog
from dbt.adapters.window_views.streaming.commit.locations import Locations
from dbt.adapters.window_views.streaming.inputs import idle, sides
from dbt.adapters.window_views.streaming.inputs.columns_read import FILE, input_columns, reader
from dbt.adapters.window_views.streaming.late_rows import LATE, NewRows
from dbt.adapters.window_views.streaming.output_store import store_of
from dbt.adapters.window_views.streaming.shapes.base import Batch, Parts
from dbt.adapters.window_views.streaming.shapes.model_query import ModelQuery
from dbt.adapters.window_views.streaming.shapes.state import State, held_rows_metric
from dbt.adapters.window_views.streaming.shapes.strategies import shape_of
from dbt.adapters.window_views.streaming.spark_errors import batch_failure

logger = AdapterLogger("WindowViews")


class BatchWriter:
    def __init__(self, plan: StreamPlan, where: Locations, run_id: str, schema: Any) -> None:
        self.plan = plan
        self.where = where
        self.run_id = run_id
        self.schema = schema  # the model's output columns
        self.failure: Optional[StreamFailure] = None  # what stopped a batch, for the runner to report
        self.batches = 0  # committed by this run
        self.job_size = JobSize()
        self.lock = threading.RLock()  # one batch at a time: Spark's, or an idle step of the runner's
        self.inputs = sides.inputs_of(plan)
        self.shape = shape_of(plan)
        self.store = store_of(plan)  # the table format's: parquet folders or Delta tables

    def __getstate__(self) -> Dict[str, object]:  # shipped to a Spark Connect server: no lock
        return {k: v for k, v in self.__dict__.items() if k != "lock"}

    def __setstate__(self, state: Dict[str, object]) -> None:
        self.__dict__.update(state)
        self.lock = threading.RLock()

    def __call__(self, df: Any, batch_id: int) -> None:
        # the files, from where Spark runs this (a Spark Connect server's worker sees them, the
        # client may not): made here, as the writer is shipped there
        self._commit(filesystems.beside_spark(df.sparkSession), df, batch_id)

    def idle_step(self, spark: Any, fs: FileSystem, step: str, watermark: int) -> Optional[BatchRecord]:
        """Idle step `step` ("N.k", streaming/idle.py): no input rows, W advanced to `watermark`,
        the windows that closes emitted and the state trimmed, committed like a micro-batch (a
        step with a READY record is finished as recorded). Returns what it committed. It runs
        in the user's session, which a long-lived process keeps: the views it made are dropped."""
        before = _temp_views(spark)
        try:
            return self._commit(fs, self.inputs.rows(reader(self.plan, spark.table)).limit(0), step, watermark)
        finally:
            for view in _temp_views(spark) - before:
                spark.catalog.dropTempView(view)

    def _commit(
        self, fs: FileSystem, df: Any, batch_id: BatchId, idle_watermark: Optional[int] = None
    ) -> Optional[BatchRecord]:
        started = time.monotonic()
        # a processing-time run's idle steps run in the dbt process between Spark's batches
        with self.lock:
            self.fs = fs
            self.log = CommitLog(self.plan.model, self.where, self.run_id, self.fs)
            try:
                ready = self._write(df, batch_id, idle_watermark)
            except StreamFailure as exc:
                self.failure = exc
                raise
            except (PySparkException, OSError, Py4JError) as exc:
                self.failure = batch_failure(df.sparkSession, exc, self.plan, self.where, batch_id)
                if self.failure is None:
                    raise
                raise self.failure from None
        if ready is not None:
            self.batches += 1
            _progress(self.plan, batch_id, ready, time.monotonic() - started, self.batches)
        return ready

    def _write(self, df: Any, batch_id: BatchId, idle_watermark: Optional[int]) -> Optional[BatchRecord]:
        """Run or finish batch `batch_id`; returns what it committed (None: it was already)."""
        if self.log.committed(batch_id):
            return None  # a replay of a batch that completed
        previous = self.log.last(before=batch_id)
        ready = self.log.ready(batch_id)
        if ready is None:
            ready = self.store.planned(
                self.fs, self.where, batch_id, self._stage(df, batch_id, previous, idle_watermark)
            )
            self.log.mark_ready(batch_id, ready)
        self.store.publish(df.sparkSession, self.fs, self.where, batch_id, ready)
        self.log.commit(batch_id, ready)
        self.log.clean(batch_id, previous.state_folders if previous is not None else (), ready.state_folders)
        return ready

    def _stage(
        self, df: Any, batch_id: BatchId, previous: Optional[BatchRecord], idle_watermark: Optional[int]
    ) -> BatchRecord:
        """Stage the batch's output and state; an idle step (`idle_watermark`) has no rows and
        moves W to the watermark given."""
        spark, plan = df.sparkSession, self.plan
        w_prev = previous.watermark if previous is not None else None
        previous_states = previous.state_folders if previous is not None else ()
        previous_state = previous_states[-1] if previous_states else None
        new_rows = NewRows(plan, self.inputs, self.where, batch_id)
        rows = new_rows.judged(df, w_prev)
        # a window_aggregate's model SQL reads pane partials (slicing.py), other models input rows
        query = ModelQuery(plan, self.schema, plan.slicing.columns if plan.slicing else input_columns(df))
        if idle_watermark is None:
            with labels.step(spark, plan.model, batch_id, "new rows counted, late rows staged"):
                held = held_rows_metric(previous, query.partitioned_by, ~F.col(LATE))
                counts = new_rows.count_and_stage_late(rows, w_prev, held)
            if not counts.rows:
                return _unchanged(previous, self.inputs)
            w_new, clocks = self.inputs.watermark(counts, previous, idle.now())
        else:  # no rows: W moves to the one given, the idle clocks stay (idle.py)
            counts = NO_NEW_ROWS
            w_new = idle_watermark
            clocks = previous.clocks if previous is not None else self.inputs.no_clocks()
        state = State(
            plan, self.where, query, self.fs, self.job_size.small(spark, counts.rows, previous, idle_watermark)
        )
        fresh = rows.where(f"not {LATE}").drop(LATE, FILE)
        retained = self.shape.retained(spark, fresh, state, previous_states, counts)
        try:
            recompute = (
                self.shape.recompute(previous, counts.held_hit, query.partitioned_by)
                if counts.tmin is not None
                else None
            )
            batch = Batch(
                batch_id,
                spark,
                retained,
                w_prev,
                w_new,
                counts.tmin,
                counts.tmax,
                state.prefix_states(spark, fresh, previous_state),
                recompute,
                counts.rows,
                previous_states,
                previous.state_rows if previous is not None else 0,
            )
            parts = Parts(query, state, self.store.output(plan, self.where, self.fs, batch_id, w_new))
            with labels.step(spark, plan.model, batch_id, "output staged"):
                out, replaced = self.shape.stage(parts, batch)
            with labels.step(spark, plan.model, batch_id, "state saved"):
                saved = self.shape.save(parts, batch)
        finally:
            retained.unpersist()
            spark.catalog.dropTempView(f"{plan.view}_sorted")
        folders = saved.folders if saved.folders is not None else (str(batch_id),)
        return BatchRecord(
            watermark=w_new,
            state_batch=folders[-1] if folders else None,
            rows_in=counts.rows,
            late=counts.late,
            untimed=counts.untimed,
            rows_out=out,
            state_rows=saved.rows,
            clocks=clocks,
            replaced_buckets=tuple(replaced),
            recompute=saved.recompute,
            idle=idle_watermark is not None,
            state_parts=folders[:-1],
        )


class JobSize:
    """Whether a batch's new and kept rows are planned as one job (shuffles.py), by the stream's
    own session settings, read before the first batch changes them."""

    def __init__(self) -> None:
        self.session_settings: Optional[Dict[str, Optional[str]]] = None

    def small(self, spark: Any, new: int, previous: Optional[BatchRecord], idle_watermark: Optional[int]) -> bool:
        """Whether this batch (`new` rows; an idle step with `idle_watermark`) is one job."""
        handled = new + (previous.state_rows if previous is not None else 0)
        if idle_watermark is not None:  # an idle step runs in the user's session, whose settings stay its own
            return shuffles.small(handled)
        if self.session_settings is None:
            self.session_settings = shuffles.session_settings(spark)
        return shuffles.plan_for(spark, handled, self.session_settings)


def _temp_views(spark: Any) -> Set[str]:
    """The session's temporary views of the plugin's (internal names)."""
    return {t.name for t in spark.catalog.listTables(pattern=f"{RESERVED_PREFIX}*") if t.isTemporary}


def _unchanged(previous: Optional[BatchRecord], inputs: sides.OneInput) -> BatchRecord:
    """A batch without rows: nothing changes, not even the idle clocks."""
    if previous is None:
        return BatchRecord(None, None, 0, 0, 0, 0, inputs.no_clocks())
    return BatchRecord(
        previous.watermark,
        previous.state_batch,
        0,
        0,
        0,
        previous.state_rows,
        previous.clocks,
        recompute=previous.recompute,
        state_parts=previous.state_parts,
    )


def _progress(plan: StreamPlan, batch_id: BatchId, ready: BatchRecord, elapsed: float, batches: int) -> None:
    """A log line per micro-batch: at info level while a stream runs on a processing-time
    trigger or catches up in several batches (`batches`: committed by this run), at debug level
    for the usual one-batch run (dbt's own result line says the same)."""
    line = (
        f"window_view model '{plan.model}': micro-batch {batch_id}{' (idle)' if ready.idle else ''}: "
        f"{ready.rows_in:,} in, {ready.rows_out:,} out, {ready.late:,} late, watermark "
        f"{describe_epoch_micros(ready.watermark)}, {elapsed:.1f}s"
    )
    if plan.config.trigger.processing_time is not None or batches > 1:
        logger.info(line)
    else:
        logger.debug(line)
