"""The foreachBatch function: one micro-batch, idempotent for its batch id.

1. classify the new rows against W, the watermark reached by the previous batch: a row whose
   first window is closed (over windows: whose ORDER BY value is at or before W) is late, and
   goes to the late table or is dropped, always counted (the write of the late rows counts the
   new rows and their event-time range as it reads them: no job of its own);
2. add the others to the retained input: the rows that a result still to be written needs;
3. run the model SQL over the retained rows (model_query.py), keeping what the batch changed
   (on_update) or closed (on_window_close), and stage it (output.py);
4. record the batch READY, publish its staged files, commit it (commits.py);
5. forget the rows no later result needs (state.py), and the state the commit replaced.

Mostly nothing is cached: each job reads the new files and the state again, which costs less
than caching them as a job of its own (adaptive execution materializes a cache as a stage). The
exceptions: a window_aggregate's merged panes (pane_state.py), an aggregation of every new row,
few rows to keep; and an over-window batch's retained rows, shuffled and sorted once for the
model's and the state's window passes (_sorted_once).
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import replace
from typing import Any, Dict, List, Optional

from dbt.adapters.events.logging import AdapterLogger
from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import Observation
from pyspark.sql import functions as F
from sqlglot import exp

from dbt.adapters.window_views import filesystems, sqlexpr, storage
from dbt.adapters.window_views.config import LateData
from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.filesystems import FileSystem
from dbt.adapters.window_views.intervals import describe_epoch_micros
from dbt.adapters.window_views.overwindows import OverPlan
from dbt.adapters.window_views.session import MORE_MEMORY, spark_gone
from dbt.adapters.window_views.streaming import idle, labels, pane_state, shuffles, sides
from dbt.adapters.window_views.streaming.commits import CommitLog
from dbt.adapters.window_views.streaming.locations import Locations
from dbt.adapters.window_views.streaming.model_query import ModelQuery, quoted
from dbt.adapters.window_views.streaming.output import Output
from dbt.adapters.window_views.streaming.plan import InputShape, StreamPlan
from dbt.adapters.window_views.streaming.records import BatchId, BatchRecord, Clocks, Publish
from dbt.adapters.window_views.streaming.state import State, held_rows_metric

logger = AdapterLogger("WindowViews")
T = exp.column("_wv_t")  # a new row's event time, epoch micros


def late_condition(plan: StreamPlan, w_prev: Optional[int]) -> exp.Expression:
    """Over `_wv_t` (event time, micros): whether a new row is kept aside at watermark `w_prev`
    (the late table, or dropped; counted either way). One rule for every model: a row without
    event time has no window and no place in an order, so it is kept aside with the rows that
    arrive for windows (over windows: ORDER BY values) the watermark has closed. So every input
    row reaches a window (or an over-window row) or the late count: rows in = placed + late."""
    missing = T.is_(exp.null())
    if w_prev is None:
        return missing
    closed = sqlexpr.parse(plan.window.late("_wv_t", w_prev)) if plan.window is not None else T <= w_prev
    return exp.or_(missing, closed)


# Spark's way of saying a job was stopped rather than failed (a processing-time run's query.stop())
CANCELLED = ("SPARK_JOB_CANCELLED", "OPERATION_CANCELED", "InterruptedException", "cancelled")
INTERNAL = re.compile(r"`?_wv_\w*`?")  # the plugin's views and columns, which the user never wrote


def _cancelled(exc: PySparkException) -> bool:
    text = f"{exc.getCondition() or ''} {exc}"
    return any(word in text for word in CANCELLED)


def spark_error(exc: PySparkException) -> str:
    """Spark's error class and message on one line, without the query context that follows it
    (`== SQL ... ==`, the plugin's SQL), a JVM stack or internal names:
    `[DIVIDE_BY_ZERO] Division by zero. ... SQLSTATE: 22012`."""
    lines = []
    for line in str(exc.getMessage() or exc).strip().splitlines():
        if line.startswith("==") or line.strip().startswith("at ") or line.startswith("JVM stacktrace"):
            break
        lines.append(line.strip())
    text = " ".join(line for line in lines if line) or type(exc).__name__
    condition = exc.getCondition()
    if condition and not text.startswith("["):
        text = f"[{condition}] {text}"
    return INTERNAL.sub("(internal)", text)


def spark_stopped(model: str, gone: str, path: str, batch: Optional[BatchId] = None) -> StreamFailure:
    """A stream stopped by Spark itself stopping (session.spark_gone says why)."""
    return StreamFailure(
        model,
        f"Spark stopped while the stream ran: {gone}",
        f"give Spark more memory ({MORE_MEMORY}) and run again, in a new dbt process: committed "
        "micro-batches are kept, the failed one is redone",
        batch=batch,
        path=path,
    )


def _sorted_once(spark: Any, retained: Any, over: OverPlan, view: str) -> Any:
    """An over-window batch's retained rows, clustered and sorted as every window pass over
    them reads them (OverPlan.sorted_by) and cached: the output's job shuffles and sorts them
    once, the state's pass reads them sorted, with no shuffle or sort of its own. It pays on an
    initial load, whose second sort of the history it saves (bench/README); a small batch
    breaks even. Calls over several PARTITION BYs or ORDER BYs are left to Spark."""
    spec = over.sorted_by
    if spec is None:
        return retained
    partition, order = spec
    retained.createOrReplaceTempView(view)
    # what a window pass requires of its input: its PARTITION BY ascending, then its ORDER BY
    # (bare column names, quoted here: sqlexpr.order_by would parse them as SQL)
    keys = [sqlexpr.ordered(sqlexpr.column(name)) for name in partition]
    keys += [sqlexpr.ordered(sqlexpr.column(name), desc, nulls_first) for name, desc, nulls_first in order]
    query = exp.select("*").from_(view)
    query.set("distribute", exp.Distribute(expressions=[sqlexpr.column(name) for name in partition]))
    query.set("sort", exp.Sort(expressions=keys))
    return spark.sql(sqlexpr.to_sql(query)).persist()


class BatchWriter:
    def __init__(self, plan: StreamPlan, where: Locations, run_id: str, schema: Any) -> None:
        self.plan = plan
        self.where = where
        self.run_id = run_id
        self.schema = schema  # the model's output columns
        self.failure: Optional[StreamFailure] = None  # what stopped a batch, for the runner to report
        self.batches = 0  # committed by this run
        self.session_settings: Optional[Dict[str, Optional[str]]] = None  # the stream's own, before shuffles.plan_for
        self.lock = threading.RLock()  # one batch at a time: Spark's, or an idle step of the runner's

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
        step with a READY record is finished as recorded). Returns what it committed."""
        return self._commit(fs, sides.input_rows(self.plan, spark.table).limit(0), step, watermark)

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
                self.failure = self._failure(df.sparkSession, exc, batch_id)
                if self.failure is None:
                    raise
                raise self.failure from None
        if ready is not None:
            self.batches += 1
            self._progress(batch_id, ready, time.monotonic() - started)
        return ready

    def _failure(self, spark: Any, exc: Exception, batch_id: BatchId) -> Optional[StreamFailure]:
        """What stopped a batch, said so a person can act on it. Spark itself gone comes first:
        what the batch calls then fails as a cancelled job, an internal error or a refused
        connection. None: not a failure (a processing-time run stopping cancels its jobs; the
        batch is redone next run), or not one of the batch's own (passed on)."""
        gone = spark_gone(spark)
        if gone is not None:
            return spark_stopped(self.plan.model, gone, self.where.checkpoint, batch_id)
        if isinstance(exc, PySparkException):  # Spark failed a job of the batch: the model's SQL on its rows, ...
            if _cancelled(exc):
                return None
            return StreamFailure(
                self.plan.model,
                f"Spark failed the micro-batch: {spark_error(exc)}",
                "fix the model's SQL or the input rows it fails on, and run again: committed micro-batches are "
                "kept, this one is redone",
                batch=batch_id,
            )
        if isinstance(exc, OSError):  # the store: unreachable, refused, gone mid-publish
            return StreamFailure(
                self.plan.model,
                f"cannot read or write its files ({exc.strerror or exc})",
                "make the table, late table and checkpoint locations reachable and writable, and run again: "
                "committed micro-batches are kept, this one is finished or redone",
                batch=batch_id,
                path=exc.filename or self.where.table,
            )
        return None

    def _progress(self, batch_id: BatchId, ready: BatchRecord, elapsed: float) -> None:
        """A log line per micro-batch: at info level while a stream runs on a processing-time
        trigger or catches up in several batches, at debug level for the usual one-batch run
        (dbt's own result line says the same)."""
        line = (
            f"window_view model '{self.plan.model}': micro-batch {batch_id}{' (idle)' if ready.idle else ''}: "
            f"{ready.rows_in:,} in, {ready.rows_out:,} out, {ready.late:,} late, watermark "
            f"{describe_epoch_micros(ready.watermark)}, {elapsed:.1f}s"
        )
        if self.plan.config.trigger.processing_time is not None or self.batches > 1:
            logger.info(line)
        else:
            logger.debug(line)

    def _write(self, df: Any, batch_id: BatchId, idle_watermark: Optional[int]) -> Optional[BatchRecord]:
        """Run or finish batch `batch_id`; returns what it committed (None: it was already)."""
        if self.log.committed(batch_id):
            return None  # a replay of a batch that completed
        previous = self.log.last(before=batch_id)
        ready = self.log.ready(batch_id)
        if ready is None:
            staged = self._stage(df, batch_id, previous, idle_watermark)
            # what publishing will do, fixed before it starts: a replay does exactly this
            publish = Publish(
                storage.plan_publish(self.fs, self.where.table, batch_id, staged.replaced_buckets),
                storage.plan_publish(self.fs, self.where.late, batch_id),
            )
            ready = replace(staged, publish=publish)
            self.log.mark_ready(batch_id, ready)
        assert ready.publish is not None  # every READY record names its publish
        storage.publish(self.fs, self.where.table, batch_id, ready.publish.table)
        storage.publish(self.fs, self.where.late, batch_id, ready.publish.late)
        self.log.commit(batch_id, ready)
        self.log.clean(batch_id, previous.state_batch if previous is not None else None, ready.state_batch)
        return ready

    def _unchanged(self, previous: Optional[BatchRecord]) -> BatchRecord:
        """A batch without rows: nothing changes, not even the idle clocks."""
        if previous is None:
            return BatchRecord(None, None, 0, 0, 0, 0, idle.no_clocks(self.plan))
        return BatchRecord(
            previous.watermark,
            previous.state_batch,
            0,
            0,
            0,
            previous.state_rows,
            previous.clocks,
            recompute=previous.recompute,
        )

    def _stage(
        self, df: Any, batch_id: BatchId, previous: Optional[BatchRecord], idle_watermark: Optional[int]
    ) -> BatchRecord:
        """Stage the batch's output and state; an idle step (`idle_watermark`) has no rows and
        moves W to the watermark given."""
        spark = df.sparkSession
        plan = self.plan
        w_prev = previous.watermark if previous is not None else None
        previous_state = previous.state_batch if previous is not None else None
        t = sqlexpr.epoch_micros(sqlexpr.column(plan.watermark.column))
        rows = df.selectExpr("*", sqlexpr.to_sql(exp.alias_(t, "_wv_t"))).selectExpr(
            "*", sqlexpr.to_sql(exp.alias_(late_condition(plan, w_prev), "_wv_late"))
        )
        # a window_aggregate's model SQL reads pane partials (slicing.py), other models input rows
        query = ModelQuery(plan, self.schema, plan.slicing.columns if plan.slicing else df.columns)
        if idle_watermark is None:
            with labels.step(spark, plan.model, batch_id, "new rows counted, late rows staged"):
                held = held_rows_metric(previous, query.partitioned_by, ~F.col("_wv_late"))
                stats = self._count_and_stage_late(rows, df.columns, batch_id, w_prev, held)
        else:
            stats = {"n": 0, "late": 0, "tmin": None, "tmax": None}
        if not stats["n"] and idle_watermark is None:
            return self._unchanged(previous)
        handled = stats["n"] + (previous.state_rows if previous is not None else 0)  # new and kept rows
        if idle_watermark is None:
            if self.session_settings is None:
                self.session_settings = shuffles.session_settings(spark)
            small = shuffles.plan_for(spark, handled, self.session_settings)
        else:  # an idle step runs in the user's session, whose settings stay its own
            small = shuffles.small(handled)
        fresh = rows.where("not _wv_late").drop("_wv_late")
        w_new = w_prev if idle_watermark is None else idle_watermark
        clocks: Clocks
        if idle_watermark is not None:  # no rows: the idle clocks stay (idle.py)
            clocks = previous.clocks if previous is not None else idle.no_clocks(plan)
        elif plan.shape is not InputShape.SINGLE:  # each input's W and idle clock, the model's W the least (sides.py)
            w_new, clocks = sides.watermark(plan, stats, previous, idle.now())
        else:
            if stats["tmax"] is not None:
                reached = stats["tmax"] - plan.watermark.delay.micros
                w_new = reached if w_prev is None else max(w_prev, reached)
            clocks = idle.arrival(w_new)
        state = State(plan, self.where, query, self.fs, small)
        retained = fresh.selectExpr("*", "true as _wv_new")
        if plan.slicing is not None:  # a window_aggregate keeps pane partials, not rows
            retained = pane_state.retained(spark, plan.slicing, fresh, state, previous_state)
        elif previous_state:
            old = state.rows(spark, previous_state, fresh.schema)
            retained = old.selectExpr("*", "false as _wv_new").unionByName(retained, allowMissingColumns=True)
        sorted_view = f"{plan.view}_sorted"
        if plan.over is not None and plan.shape is InputShape.SINGLE:
            retained = _sorted_once(spark, retained, plan.over, sorted_view)
        try:
            states = state.prefix_states(spark, fresh, previous_state)
            recompute = (
                state.recompute_from(previous, stats.get("held_hit"))
                if plan.recomputes_rows and stats["tmin"] is not None
                else None
            )
            with labels.step(spark, plan.model, batch_id, "output staged"):
                out, replaced = Output(plan, self.where, query, self.fs).stage(
                    spark, retained, batch_id, w_prev, w_new, stats["tmin"], stats["tmax"], states, recompute
                )
            with labels.step(spark, plan.model, batch_id, "state saved"):
                state_rows, recorded = state.save(retained.drop("_wv_new"), w_new, states, batch_id)
        finally:
            retained.unpersist()
            spark.catalog.dropTempView(sorted_view)
        return BatchRecord(
            watermark=w_new,
            state_batch=str(batch_id),
            rows_in=stats["n"],
            late=stats["late"],
            rows_out=out,
            state_rows=state_rows,
            clocks=clocks,
            replaced_buckets=tuple(replaced),
            recompute=recorded,
            idle=idle_watermark is not None,
        )

    def _count_and_stage_late(
        self, rows: Any, columns: list, batch_id: int, w_prev: Optional[int], extra: List[Any]
    ) -> Dict[str, Any]:
        """Count the new rows and the event-time range of those on time, and stage the late ones
        as they came, with the batch and the watermark that judged them (late_data='drop':
        nothing is written). Usually one job: the late rows' write counts what it reads. A
        first batch (no watermark yet) has late rows only where the event time is NULL, seldom:
        it counts from the event times alone (parquet reads that one column) and writes late
        rows only if there are any. `extra`: more counts over the new rows (State's
        held_rows_metric), made only after a batch with state, so never on a first batch."""
        late, t = F.col("_wv_late"), F.col("_wv_t")
        counts = [
            F.count(F.lit(1)).alias("n"),
            F.count_if(late).alias("late"),
            F.min(F.when(~late, t)).alias("tmin"),
            F.max(F.when(~late, t)).alias("tmax"),
        ]
        keep = self.plan.config.late_data == LateData.TABLE
        by_side = [sides.SIDE] if self.plan.shape is not InputShape.SINGLE else []
        if by_side:
            counts += sides.input_stats(self.plan, late, t)
        if w_prev is None:
            stats = rows.select("_wv_t", "_wv_late", *by_side).agg(*counts).first().asDict()
            if stats["late"] and keep:
                self._stage_late(rows, columns, batch_id, w_prev)
            return stats
        observation = Observation()
        observed = rows.observe(observation, *counts, *extra)
        if keep:
            self._stage_late(observed, columns, batch_id, w_prev)
        else:
            observed.select("_wv_t", "_wv_late", *by_side).write.format("noop").mode("overwrite").save()
        return observation.get

    def _stage_late(self, rows: Any, columns: list, batch_id: int, w_prev: Optional[int]) -> None:
        judged_by = (
            exp.func("timestamp_micros", exp.cast(exp.Literal.number(w_prev), "bigint"))
            if w_prev is not None
            else exp.cast(exp.null(), "timestamp")
        )
        metadata = [
            exp.alias_(exp.cast(exp.Literal.number(batch_id), "bigint"), "_batch_id"),
            exp.alias_(judged_by, "_watermark"),
            exp.alias_(exp.Literal.string("late"), storage.BUCKET),
        ]
        # several inputs: which one, and the row as JSON (sides.py); one input: its columns
        kept = sides.late_columns(self.plan) if self.plan.shape is not InputShape.SINGLE else quoted(columns)
        rows.where("_wv_late").selectExpr(*kept, *map(sqlexpr.to_sql, metadata)).write.partitionBy(storage.BUCKET).mode(
            "overwrite"
        ).parquet(str(storage.staging_dir(self.where.late, batch_id)))
