"""A streaming run: check the model's output against its tables and checkpoint, start the
Structured Streaming query with the batch writer, wait for what the trigger asks, and sum up
(result.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError
from pyspark.errors import AnalysisException
from pyspark.sql.types import StructType

from dbt.adapters.window_views.errors import ModelOutputError, ModelSqlError, StreamFailure
from dbt.adapters.window_views.kinds import model_kind
from dbt.adapters.window_views.model.config import LateData, OnChange
from dbt.adapters.window_views.names import RESERVED_PREFIX, is_reserved
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.query import ddl
from dbt.adapters.window_views.records import ModelRecord, RebuildStep
from dbt.adapters.window_views.spark.connect import is_connect
from dbt.adapters.window_views.spark.session import spark_gone
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.storage import filesystems, paths
from dbt.adapters.window_views.streaming.batch_writer import BatchWriter
from dbt.adapters.window_views.streaming.commit import checkpoint, rebuild
from dbt.adapters.window_views.streaming.commit.commits import CommitLog, read_record, unreadable
from dbt.adapters.window_views.streaming.commit.locations import Locations
from dbt.adapters.window_views.streaming.commit.lock import LockHeld, RunLock
from dbt.adapters.window_views.streaming.commit.run_context import StreamRun
from dbt.adapters.window_views.streaming.inputs import columns_read, idle, input_identity, kafka, sides
from dbt.adapters.window_views.streaming.output_store import store_of
from dbt.adapters.window_views.streaming.result import StreamResult, result_of
from dbt.adapters.window_views.streaming.shapes import pane_state
from dbt.adapters.window_views.streaming.spark_errors import (
    changed_input,
    s3_failure,
    spark_stopped,
    unwritable_checkpoint,
)

logger = AdapterLogger("WindowViews")
CHECKPOINT_SUFFIX = "__checkpoint"
LOCATION_PROPERTY = rebuild.LOCATION_PROPERTY


def locations(spark: Any, plan: StreamPlan, schema: str, identifier: str) -> Locations:
    """Where the files go: the table at location_root/<alias>, else in the schema's directory
    (any store Spark speaks: a local path, hdfs://, s3a://, ...); the late table and the
    checkpoint (unless checkpoint_location) beside it, so readers of the table's folder see only
    its data."""
    root = plan.config.location_root
    base = paths.normalize(root if root else spark.catalog.getDatabase(schema).locationUri)
    table = paths.join(base, identifier)
    configured = plan.config.checkpoint_location
    where = paths.normalize(configured) if configured else paths.sibling(table, CHECKPOINT_SUFFIX)
    return Locations(table=table, late=paths.sibling(table, "__late"), checkpoint=where)


def _drop(run: StreamRun, table: str, location: str) -> None:
    run.spark.sql(ddl.drop_table(table))
    run.fs.delete(location)


def _ensure_table(run: StreamRun, table: str, location: str, schema: Any, grows: bool = False) -> None:
    """Create the table over its location, or check the existing one still fits the SQL. One
    that `grows` (the late table, which keeps an input's rows whole) takes the columns an input
    gained: its rows from before have NULL there."""
    spark = run.spark
    if spark.catalog.tableExists(table):
        have = [(f.name.lower(), f.dataType.simpleString()) for f in spark.table(table).schema.fields]
        want = [(f.name.lower(), f.dataType.simpleString()) for f in schema.fields]
        wanted = dict(want)
        if grows and all(wanted.get(name) == kind for name, kind in have):
            names = {name for name, _ in have}
            added = [(f.name, f.dataType.simpleString()) for f in schema.fields if f.name.lower() not in names]
            if added:
                spark.sql(ddl.add_columns(table, added))
                spark.catalog.refreshTable(table)
            return
        store_of(run.plan).check_table(spark, run.model, table)
        if have != want:
            raise ModelSqlError(
                run.model,
                f"the columns of {table} ({', '.join(' '.join(c) for c in have)}) no longer match the model's "
                f"({', '.join(' '.join(c) for c in want)})",
                f"run `dbt run --full-refresh -s {run.model}` to rebuild it from all input",
            )
        return
    run.fs.mkdirs(location)
    store_of(run.plan).create(spark, table, location, schema)


def _check_output(plan: StreamPlan, out_schema: Any) -> None:
    """What only Spark can tell: the columns the model selects (the plan checked the columns
    the macros and the watermark name against the upstream table's)."""
    model, watermark = plan.model, plan.watermark
    names = {f.name.lower(): f for f in out_schema.fields}
    plan.config.check_event_time(model, [(f.name, f.dataType.simpleString()) for f in out_schema.fields])
    if plan.recomputes_rows:
        column = watermark.column.lower()
        if column not in names or names[column].dataType.simpleString() != "timestamp":
            raise ModelOutputError(
                model,
                "streaming over windows with emit='on_update' revise rows by their event time, so the model must "
                f"output the watermark column `{watermark.column}` unchanged",
                "add it to the select list",
            )
    windowed = model_kind.window_of(plan.kind) is not None
    bounds = ((plan.bounds.start, "window_start"), (plan.bounds.end, "window_end")) if windowed else ()
    for selected, bound in bounds:  # the plan found them by name, unless the model selects `*`
        if selected is None:  # rows joined to their window's result: closed by window_end alone
            continue
        if selected.lower() not in names or names[selected.lower()].dataType.simpleString() != "timestamp":
            raise ModelOutputError(
                model,
                f"execution='streaming' keeps results by window, so the model must output `{bound}` (a timestamp) "
                "from its window TVF",
                "add it to the select list and GROUP BY",
            )


def _check_inputs(plan: StreamPlan, sources: List[Any]) -> None:
    """The inputs' columns: none with the reserved prefix; over several inputs, each has the
    watermark column (their rows are one stream's)."""
    model, watermark = plan.model, plan.watermark
    for source in sources:
        for column in source.columns:
            if is_reserved(column):
                raise ModelSqlError(
                    model, f"input column `{column}` uses the reserved prefix {RESERVED_PREFIX}", "rename it"
                )
        if len(sources) > 1 and watermark.column.lower() not in {c.lower() for c in source.columns}:
            raise ModelSqlError(
                model,
                f"an input of a streaming window view over several inputs has no watermark column `{watermark.column}` "
                f"(it has {', '.join(source.columns)})",
                "give every input the event-time column the watermark names (in an upstream model)",
            )


def _output_schema(spark: Any, plan: StreamPlan) -> Any:
    """The model's output columns, from Spark describing its SQL over an empty input (the temp
    view the micro-batches fill lives in the query's own session; this one is dropped)."""
    inputs = sides.inputs_of(plan)
    rows = inputs.rows(lambda table: spark.table(table).limit(0))
    written = plan.rows or plan  # a TVF aggregate kept as panes has the columns of the model as written
    inputs.put(pane_state.partials(spark, written.slicing, rows) if written.slicing else rows, ["*"])
    try:
        return spark.sql(written.sql).schema
    finally:
        inputs.drop(spark)
        if written.slicing:
            spark.catalog.dropTempView(written.slicing.rows_view)


def _properties(spark: Any, table: str) -> Dict[str, str]:
    return {r[0]: r[1] for r in spark.sql(ddl.show_properties(table)).collect()}


def _recorded_location(spark: Any, table: str) -> Optional[str]:
    rows = [r for r in spark.sql(ddl.describe_extended(table)).collect() if r[0] == "Location"]
    return paths.normalize(rows[0][1]) if rows else None


def _check_moved(run: StreamRun, properties: Dict[str, str]) -> None:
    """A location that changed since the last run of the streaming table (location_root,
    checkpoint_location, alias, schema) would write new windows where the table does not read
    them: refuse before anything is written, even the lock."""
    model, where = run.model, run.where
    moved = []
    for what, table, new in (("table", run.target, where.table), ("late table", run.late_target, where.late)):
        recorded = properties.get(LOCATION_PROPERTY[what])  # what the last run wrote
        old: Optional[str]
        if recorded is not None:
            old = paths.normalize(recorded)
        elif run.spark.catalog.tableExists(table):
            old = _recorded_location(run.spark, table)
        else:
            continue
        if old is not None and old != new:
            moved.append((what, str(old), str(new)))
    old_checkpoint = properties.get(rebuild.CHECKPOINT_PROPERTY)
    if old_checkpoint and paths.normalize(old_checkpoint) != where.checkpoint:
        moved.append(("checkpoint", old_checkpoint, str(where.checkpoint)))
    if moved:
        what = "; ".join(f"its {w} is at {old} but the config now puts it at {new}" for w, old, new in moved)
        raise StreamFailure(
            model,
            f"{what}; the stream would write where the table does not read",
            "set location_root / checkpoint_location back to where they were, or run "
            f"`dbt run --full-refresh -s {model}` to rebuild the table, late table and checkpoint at the new "
            "location from all input (the old ones stay in use until it has caught up)",
        )


def _saved_model(run: StreamRun) -> Optional[ModelRecord]:
    try:
        return read_record(run.fs, run.where.model_file, ModelRecord, run.model)
    except storage.CorruptFile as exc:
        raise unreadable(run.model, exc) from None


def input_table(spark: Any, model: str, name: str) -> Any:
    """An input's table; one that does not exist is named (Spark's own error shows its plan)."""
    try:
        return spark.table(name)
    except AnalysisException as exc:
        if "TABLE_OR_VIEW_NOT_FOUND" not in str(exc):
            raise
        raise ModelSqlError(
            model,
            f"its input {name} does not exist",
            "create it (your loader's table; for a ref(), run the upstream model first), or point the source "
            "at the table that holds the rows",
        ) from None


def _schemas(spark: Any, plan: StreamPlan) -> Tuple[Any, Optional[Any]]:
    """The columns of the table and of the late table (None: late_data='drop'), checked."""
    store_of(plan).check_session(spark, plan.model)
    sources = [input_table(spark, plan.model, i.source) for i in plan.inputs]
    _check_inputs(plan, sources)
    out_schema = _output_schema(spark, plan)
    _check_output(plan, out_schema)
    # the window bounds the plan added to find closed windows are not the model's columns
    out_schema = StructType([f for f in out_schema.fields if f.name not in plan.bounds.hidden])
    if plan.config.late_data != LateData.TABLE:
        return out_schema, None
    # several inputs: the input a late row came from, and the row as JSON (sides.py)
    return out_schema, sides.inputs_of(plan).late_schema(spark, sources)


def _prepare(run: StreamRun) -> Any:
    """Tables and checkpoint ready for the stream; returns the model's output schema."""
    model, plan, fs, where = run.model, run.plan, run.fs, run.where
    # every check first: a refused model leaves the table in its place (a batch one too)
    out_schema, late_schema = _schemas(run.spark, plan)
    if run.full_refresh:
        _drop(run, run.target, where.table)
        _drop(run, run.late_target, where.late)
        storage.remove_children(fs, where.checkpoint, keep=(paths.name(where.lock),))
    saved = _saved_model(run)
    if saved is not None and not plan.fits(saved):
        raise StreamFailure(
            model,
            f"its SQL or window config changed since the checkpoint at {where.checkpoint} was written, so the state "
            "there no longer fits it",
            f"run `dbt run --full-refresh -s {model}` to rebuild it from all input, or set on_change='rebuild' "
            "to rebuild it beside the live table whenever the model changes",
        )
    for repair in checkpoint.check(model, where, fs):
        logger.warning(f"window_view model '{model}': {repair}")
    _ensure_table(run, run.target, where.table, out_schema)
    if late_schema is not None:
        _ensure_table(run, run.late_target, where.late, late_schema, grows=True)
    # after the tables' checks, whose messages say more of a changed input (its columns)
    input_identity.check(run, input_identity.identities(run))
    if saved is None:
        # no checkpoint (first run, or it was deleted): whatever files remain were computed from
        # input the new stream reads again, so start the tables empty
        for location in (where.table, where.late):
            store_of(plan).restart(run.spark, fs, location)
    if saved != plan.record():
        storage.write_json(fs, where.model_file, plan.record().to_json())
    return out_schema


def _await(query: Any, plan: StreamPlan, each_interval: Optional[Callable[[], Any]] = None) -> None:
    """Wait for what the trigger asks: everything new, or a processing-time loop up to its bound
    (calling `each_interval` at each trigger interval)."""
    trigger = plan.config.trigger
    if trigger.processing_time is None or trigger.max_duration is None:
        query.awaitTermination()
        return
    interval, bound = trigger.processing_time.micros / 1_000_000, trigger.max_duration.micros / 1_000_000
    if each_interval is None:
        query.awaitTermination(bound)
    else:
        deadline = time.monotonic() + bound
        while (left := deadline - time.monotonic()) > 0:
            # Spark waits whole milliseconds and refuses 0: a deadline less than 1 ms away waits 1 ms
            if query.awaitTermination(max(0.001, min(interval, left))):
                break
            try:
                each_interval()
            except BaseException:
                query.stop()
                raise
    # let a running micro-batch finish: stopping inside one only makes the next run replay it
    while query.isActive and query.status["isTriggerActive"]:
        time.sleep(0.2)
    query.stop()


@dataclass(frozen=True)
class Target:
    """The relation a streaming window view builds: its schema and name, and its late table."""

    schema: str
    identifier: str
    table: str  # as SQL names it
    late_table: str


def run(spark: Any, plan: StreamPlan, relation: Target, run_id: str, full_refresh: bool) -> StreamResult:
    """Start the stream, wait until it has processed what the trigger asks for, and sum up; one
    run at a time per checkpoint. (The adapter's entry: the one place the run is assembled.)"""
    where = locations(spark, plan, relation.schema, relation.identifier)
    fs = filesystems.for_client(spark)
    home = StreamRun(spark, fs, plan, where, relation.table, relation.late_table, run_id, full_refresh=full_refresh)
    home, live = _versions(home)
    lock = RunLock(fs, where.lock, run_id)
    _acquire(lock, home)
    try:
        return _run(home) if live is None else _run_live(home, live)
    except OSError as exc:
        raise StreamFailure(
            plan.model,
            f"cannot read or write its files ({exc.strerror or exc})",
            _storage_fix(exc, "make the table, late table and checkpoint locations readable and writable by Spark"),
            path=exc.filename or where.table,
        ) from None
    except DbtRuntimeError:
        raise
    except Exception:
        # Spark gone between the query's batches (a warm server killed): what ran then failed as
        # a refused connection, which says nothing of why
        gone = spark_gone(spark)
        if gone is None:
            raise
        raise spark_stopped(plan.model, gone, where.checkpoint) from None
    finally:
        _release(lock, spark)


def _versions(home: StreamRun) -> Tuple[StreamRun, Optional[StreamRun]]:
    """Slot 1's run (refreshed when another table is in the way) and the version the streaming
    table reads, and where (None: no streaming table yet), its locations checked unmoved."""
    spark, target = home.spark, home.target
    if not spark.catalog.tableExists(target):
        return home, None
    properties = _properties(spark, target)
    if properties.get("window_views.execution") != "streaming":
        # a batch window view or another table in the way: replace it, as dbt does
        return home.at(home.where, 1, full_refresh=True), None
    live = _live(home, properties)
    if not home.full_refresh:
        slot = rebuild.slot(home.where, live.version, _configured(home.plan))
        _check_moved(home.at(slot, live.version), properties)
    return home, live


def _acquire(lock: RunLock, home: StreamRun) -> None:
    """The run's lock taken, or why not: another run holds it, or the checkpoint is unwritable."""
    try:
        lock.acquire()
    except LockHeld as held:
        raise StreamFailure(
            home.model,
            f"another run of this model holds its checkpoint: {held}",
            "wait for that run to end; a lock left by a run that died is taken over by the next run "
            "(on the same host once its process is gone, from other hosts after 5 minutes without heartbeat)",
            path=str(lock.path),
        ) from None
    except OSError as exc:
        on_s3 = s3_failure(home.model, exc.strerror or str(exc), home.where.checkpoint)  # no chmod mends S3
        if on_s3 is not None:
            raise on_s3 from None
        raise StreamFailure(
            home.model,
            f"cannot write its checkpoint ({exc.strerror or exc})",
            _storage_fix(
                exc, "make the checkpoint directory writable for the user running dbt, or set checkpoint_location"
            ),
            path=home.where.checkpoint,
        ) from None


def _release(lock: RunLock, spark: Any) -> None:
    """The run's lock released; with Spark gone (its files out of reach through a Spark Connect
    server) it is left, for the next run to take over once this process is gone."""
    try:
        lock.release()
    except Exception:
        if spark_gone(spark) is None:
            raise


def _storage_fix(exc: OSError, otherwise: str) -> str:
    """The fix for a store Spark cannot reach: its Hadoop jars (or, without a JVM, pyarrow's)."""
    text = str(exc)
    if "no Hadoop filesystem for scheme" in text:
        return (
            "give the Spark session the store's Hadoop jars (s3a: hadoop-aws, abfss: hadoop-azure, gs: "
            "gcs-connector; spark.jars or spark.jars.packages) and its credentials; see docs/cluster.md"
        )
    if "pyarrow" in text:
        return "use a store pyarrow.fs reaches from the Spark Connect server (s3a, gs, abfss, hdfs, a local path)"
    return otherwise


def _configured(plan: StreamPlan) -> bool:
    return plan.config.checkpoint_location is not None


def _live(home: StreamRun, properties: Dict[str, str]) -> StreamRun:
    """The run at the version the streaming table reads, and its locations as the last run
    recorded them (a moved location_root leaves them elsewhere), else where its slot is."""
    version = rebuild.live_version(properties)
    table, where = properties.get(LOCATION_PROPERTY["table"]), properties.get(rebuild.CHECKPOINT_PROPERTY)
    if not table or not where:
        return home.at(rebuild.slot(home.where, version, _configured(home.plan)), version)
    late = properties.get(LOCATION_PROPERTY["late table"]) or paths.sibling(table, "__late")
    return home.at(Locations(table=table, late=late, checkpoint=where), version)


def _run_live(home: StreamRun, live: StreamRun) -> StreamResult:
    """A streaming table is there: finish what an earlier rebuild left, then stream on, or
    rebuild beside it (--full-refresh, or on_change='rebuild' after a change). `home`: slot 1's
    locations, whose checkpoint holds the run lock."""
    configured, lock_folder = _configured(home.plan), home.where.checkpoint
    next_version, next_slot = rebuild.other(home.where, live.where, configured)
    if rebuild.recover(live, next_slot, lock_folder):
        live = live.at(next_slot, next_version)
        next_version, next_slot = rebuild.other(home.where, live.where, configured)
    full_refresh = home.full_refresh
    if not full_refresh and home.plan.config.on_change == OnChange.REBUILD:
        saved = _saved_model(live)
        full_refresh = saved is not None and not home.plan.fits(saved)
    if not full_refresh:
        return _run(live)
    return _rebuild(live, live.at(next_slot, next_version), lock_folder)


def _rebuild(old: StreamRun, new: StreamRun, lock_folder: str) -> StreamResult:
    """Stream all input into the other slot while readers and the live checkpoint are left
    alone, then swap (rebuild.py); a processing-time trigger carries on once it has caught up."""
    fs, where = new.fs, new.where
    rebuild.retire(new.model, fs, old.where, lock_folder)  # an older version still waiting: its slot is this one
    rebuild.discard(fs, where, lock_folder)  # an earlier attempt's leftovers: start clean
    out_schema, late_schema = _schemas(new.spark, new.plan)
    fs.mkdirs(where.checkpoint)
    record = rebuild.mark(
        fs, rebuild.intent(old.where, where, new.version, out_schema, late_schema), RebuildStep.BUILDING
    )
    try:
        for location, columns in ((where.table, out_schema), (where.late, late_schema)):
            if columns is not None:
                store_of(new.plan).start(new.spark, fs, location, columns)
        storage.write_json(fs, where.model_file, new.plan.record().to_json())
        input_identity.record(new, input_identity.identities(new))
        _stream(new, out_schema, catch_up=True)
    except Exception:
        rebuild.discard(fs, where, lock_folder)  # nothing of the live version was touched
        raise
    rebuild.swap(new, record)
    if new.plan.config.trigger.processing_time is not None:
        return _run(new)
    return result_of(new)


def _run(run: StreamRun) -> StreamResult:
    out_schema = _prepare(run)
    _stream(run, out_schema, catch_up=False)
    run.spark.catalog.refreshTable(run.target)
    if run.plan.config.late_data == LateData.TABLE:
        run.spark.catalog.refreshTable(run.late_target)
    return result_of(run)


def _stream(run: StreamRun, out_schema: Any, catch_up: bool) -> None:
    """Run the query over what the trigger asks (`catch_up`: everything there is, once)."""
    spark, plan, where = run.spark, run.plan, run.where
    log = CommitLog(plan.model, where, run.run_id, run.fs)
    writer = BatchWriter(plan, where, run.run_id, out_schema)
    # several inputs: one query over their union, so its checkpoint keeps every source's offsets
    read = sides.inputs_of(plan).rows(columns_read.reader(plan, kafka.stream_reader(spark)))
    idle.finish(run, writer, log)  # an idle step a crashed run left, before Spark's next batch
    stream = (
        read.writeStream.foreachBatch(writer)
        .option("checkpointLocation", paths.spark_uri(where.spark_checkpoint))
        .queryName(f"window_view_{plan.model}_{run.run_id[:8]}")
    )
    trigger = plan.config.trigger
    if trigger.processing_time is None or catch_up:
        query = stream.trigger(availableNow=True).start()
    else:
        query = stream.trigger(processingTime=f"{trigger.processing_time.micros // 1000} milliseconds").start()
    # idle steps between Spark's batches need the writer in this process (not a Connect server's)
    between = None
    if plan.watermark.idle_timeout is not None and not is_connect(spark):
        between = lambda: idle.catch_up(run, writer, log)  # noqa: E731
    try:
        if catch_up:
            query.awaitTermination()
        else:
            _await(query, plan, between)
    except Exception as exc:  # awaitTermination raises the query's failure
        if writer.failure is not None:
            raise writer.failure from None
        raise _query_failed(run, exc) from None
    if writer.failure is not None:
        raise writer.failure
    failure = query.exception()
    if failure is not None and "InterruptedException" not in str(failure):
        raise _query_failed(run, failure)
    idle.catch_up(run, writer, log)


def empty(spark: Any, plan: StreamPlan, target: str) -> StreamResult:
    """`dbt run --empty`: the stream does not run and its table, late table and checkpoint are
    left as they are; a model that has no table yet gets an empty one (without the streaming
    marker, so the first real run replaces it) for downstream models and tests to read."""
    if not spark.catalog.tableExists(target):
        spark.createDataFrame([], _output_schema(spark, plan)).write.format("parquet").saveAsTable(target)
    result = StreamResult(empty=True)
    return result


def _query_failed(run: StreamRun, failure: Any) -> StreamFailure:
    """What a failed query says: Spark's reason, or that Spark itself stopped under it, which
    the query only reports as jobs cancelled or an internal error."""
    gone = spark_gone(run.spark)
    if gone is not None:
        return spark_stopped(run.model, gone, run.where.checkpoint)
    text = str(failure)
    named = unwritable_checkpoint(run.model, text, run.where.checkpoint) or changed_input(
        run.model, text, run.where.checkpoint
    )
    if named is not None:
        return named
    return StreamFailure(
        run.model,
        f"the streaming query failed: {_first_line(failure)}",
        "fix the cause and run again: committed micro-batches are kept, the failed one is redone",
        path=run.where.checkpoint,
    )


def _first_line(failure: Any) -> str:
    """Spark's message without its JVM stack trace."""
    text = str(failure.desc if hasattr(failure, "desc") else failure)
    return text.strip().splitlines()[0] if text.strip() else type(failure).__name__
