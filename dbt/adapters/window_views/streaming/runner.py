"""A streaming run: check the model's output against its tables and checkpoint, start the
Structured Streaming query with the batch writer, wait for what the trigger asks, and sum up."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional

from dbt.adapters.window_views import storage
from dbt.adapters.window_views.errors import ModelSqlError, StreamFailure
from dbt.adapters.window_views.streaming.batch_writer import BatchWriter
from dbt.adapters.window_views.streaming.commits import CommitLog, Locations
from dbt.adapters.window_views.streaming.plan import StreamPlan

EPOCH = dt.datetime(1970, 1, 1)


def describe_micros(micros: Optional[int]) -> str:
    if micros is None:
        return "none"
    return (EPOCH + dt.timedelta(microseconds=micros)).strftime("%Y-%m-%d %H:%M:%S")


@dataclass
class StreamResult:
    batches: int = 0
    rows_in: int = 0
    rows_out: int = 0
    late: int = 0
    watermark: Optional[int] = None
    properties: Dict[str, str] = field(default_factory=dict)

    def message(self) -> str:
        return (
            f"STREAM {self.batches} batch{'es' if self.batches != 1 else ''}, {self.rows_in:,} in, "
            f"{self.rows_out:,} out, {self.late:,} late, watermark {describe_micros(self.watermark)}"
        )


def locations(spark: Any, plan: StreamPlan, schema: str, identifier: str) -> Locations:
    """Where the table's files go: location_root/<alias>, else the schema's directory; the late
    table beside it; the checkpoint at checkpoint_location, else inside the table's folder."""
    root = plan.config.location_root
    base = root.rstrip("/") if root else spark.catalog.getDatabase(schema).locationUri
    table = storage.local_path(base) / identifier
    checkpoint = plan.config.checkpoint_location
    return Locations(
        table=table,
        late=table.with_name(table.name + "__late"),
        checkpoint=storage.local_path(checkpoint) if checkpoint else table / "_wv_checkpoint",
    )


def _drop(spark: Any, table: str, location: Path) -> None:
    spark.sql(f"drop table if exists {table}")
    storage.remove(location)


def _ensure_table(spark: Any, model: str, table: str, location: Path, schema: Any) -> None:
    """Create the table over its location, or check the existing one still fits the SQL."""
    if spark.catalog.tableExists(table):
        have = [(f.name.lower(), f.dataType.simpleString()) for f in spark.table(table).schema.fields]
        want = [(f.name.lower(), f.dataType.simpleString()) for f in schema.fields]
        if have != want:
            raise ModelSqlError(
                model,
                f"the columns of {table} ({', '.join(' '.join(c) for c in have)}) no longer match the model's "
                f"({', '.join(' '.join(c) for c in want)})",
                f"run `dbt run --full-refresh -s {model}` to rebuild it from all input",
            )
        return
    location.mkdir(parents=True, exist_ok=True)
    spark.catalog.createTable(table, path=location.as_uri(), source="parquet", schema=schema)


def _check_output(plan: StreamPlan, source: Any, out_schema: Any) -> None:
    """What only Spark can tell: the columns the model selects and the upstream table has."""
    model, watermark = plan.model, plan.config.watermark
    names = {f.name.lower(): f for f in out_schema.fields}
    if plan.over and plan.config.emit == "on_update":
        column = watermark.column.lower()
        if column not in names or names[column].dataType.simpleString() != "timestamp":
            raise ModelSqlError(
                model,
                "streaming over windows with emit='on_update' revise rows by their event time, so the model must "
                f"select the watermark column `{watermark.column}` unchanged",
                "add it to the select list",
            )
    for column in ("window_start", "window_end") if plan.window else ():
        if column not in names or names[column].dataType.simpleString() != "timestamp":
            raise ModelSqlError(
                model,
                f"execution='streaming' keeps results by window, so the model must select `{column}` (a timestamp) "
                "from its window TVF",
                "add it to the select list and GROUP BY",
            )
    needed = [("watermark column", watermark.column)]
    if plan.window is not None:
        needed += [("session partition_by column", key) for key in plan.window.partition_by]
    columns = {c.lower() for c in source.columns}
    for what, column in needed:
        if column.strip("`").lower() not in columns:
            raise ModelSqlError(
                model,
                f"the {what} `{column}` is not a column of {plan.source}, and the stream keeps {plan.source}'s rows "
                "as its state",
                f"compute `{column}` in an upstream model",
            )
    for column in source.columns:
        if column.lower().startswith("_wv_"):
            raise ModelSqlError(model, f"input column `{column}` uses the reserved prefix _wv_", "rename it")


def _prepare(spark: Any, plan: StreamPlan, target: str, late_target: str, where: Locations, full_refresh: bool) -> Any:
    """Tables and checkpoint ready for the stream; returns the model's output schema."""
    model = plan.model
    if not full_refresh and spark.catalog.tableExists(target):
        properties = {r[0]: r[1] for r in spark.sql(f"show tblproperties {target}").collect()}
        # a batch window view or another table in the way: replace it, as dbt replaces a table
        full_refresh = properties.get("window_views.execution") != "streaming"
    if full_refresh:
        _drop(spark, target, where.table)
        _drop(spark, late_target, where.late)
        storage.remove(where.checkpoint)
    saved = storage.read_json(where.model_file)
    if saved is not None and saved.get("fingerprint") != plan.fingerprint:
        raise StreamFailure(
            model,
            f"its SQL or window config changed since the checkpoint at {where.checkpoint} was written, so the state "
            "there no longer fits it",
            f"run `dbt run --full-refresh -s {model}` to rebuild it from all input",
        )
    source = spark.table(plan.source)
    source.limit(0).createOrReplaceTempView(plan.view)
    out_schema = spark.sql(plan.sql).schema
    _check_output(plan, source, out_schema)
    _ensure_table(spark, model, target, where.table, out_schema)
    if plan.config.late_data == "table":
        late_schema = source.selectExpr("*", "cast(null as bigint) as _batch_id", "cast(null as timestamp) as _watermark").schema
        _ensure_table(spark, model, late_target, where.late, late_schema)
    if saved is None:
        # no checkpoint (first run, or it was deleted): whatever files remain were computed from
        # input the new stream reads again, so start the tables empty
        for location in (where.table, where.late):
            for stale in storage.data_files(location):
                stale.unlink()
        storage.write_json(where.model_file, {"model": model, "fingerprint": plan.fingerprint, "sql": plan.sql})
    return out_schema


def _await(query: Any, plan: StreamPlan) -> None:
    """Wait for what the trigger asks: everything new, or a processing-time loop up to its bound."""
    trigger = plan.config.trigger
    if trigger.processing_time is None:
        query.awaitTermination()
        return
    query.awaitTermination(trigger.max_duration.micros / 1_000_000)
    # let a running micro-batch finish: stopping inside one only makes the next run replay it
    while query.isActive and query.status["isTriggerActive"]:
        time.sleep(0.2)
    query.stop()


def run(
    spark: Any, plan: StreamPlan, target: str, late_target: str, where: Locations, run_id: str, full_refresh: bool
) -> StreamResult:
    """Start the stream, wait until it has processed what the trigger asks for, and sum up."""
    out_schema = _prepare(spark, plan, target, late_target, where, full_refresh)
    log = CommitLog(where, run_id)
    stream = (
        spark.readStream.table(plan.source)
        .writeStream.foreachBatch(BatchWriter(plan, where, log, out_schema))
        .option("checkpointLocation", where.spark_checkpoint.as_uri())
        .queryName(f"window_view_{plan.model}_{run_id[:8]}")
    )
    trigger = plan.config.trigger
    if trigger.processing_time is None:
        query = stream.trigger(availableNow=True).start()
    else:
        query = stream.trigger(processingTime=f"{trigger.processing_time.micros // 1000} milliseconds").start()
    _await(query, plan)
    failure = query.exception()
    if failure is not None and "InterruptedException" not in str(failure):
        raise StreamFailure(
            plan.model,
            f"the streaming query failed: {failure.desc if hasattr(failure, 'desc') else failure}",
            "fix the cause and run again: committed micro-batches are kept, the failed one is redone",
        )
    spark.catalog.refreshTable(target)
    if plan.config.late_data == "table":
        spark.catalog.refreshTable(late_target)

    totals = log.run_totals()
    last = log.last() or {}
    result = StreamResult(
        batches=totals.get("batches", 0), rows_in=totals.get("rows_in", 0), rows_out=totals.get("rows_out", 0),
        late=totals.get("late", 0), watermark=last.get("watermark"),
    )
    result.properties = {
        "window_views.watermark_reached": describe_micros(result.watermark),
        "window_views.checkpoint": str(where.checkpoint),
        "window_views.late_table": late_target if plan.config.late_data == "table" else "none (late_data=drop)",
    }
    return result
