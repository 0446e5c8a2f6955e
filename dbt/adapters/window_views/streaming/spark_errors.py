"""What stopped a micro-batch, said so a person can act on it: Spark's own error on one line,
a file of an input Spark cannot read as its table's schema says, Spark itself gone, the store
unreachable (S3's causes by name); a job cancelled by a processing-time run's end is no failure."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from py4j.protocol import Py4JError, Py4JJavaError
from pyspark.errors import PySparkException

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.query import ddl
from dbt.adapters.window_views.records import BatchId
from dbt.adapters.window_views.spark import s3
from dbt.adapters.window_views.spark.session import Stopped, spark_gone
from dbt.adapters.window_views.spark.spark_messages import before_context, without_internal
from dbt.adapters.window_views.storage import paths
from dbt.adapters.window_views.streaming.commit.locations import Locations
from dbt.adapters.window_views.streaming.inputs.batch_files import gone

# Spark's way of saying a job was stopped rather than failed (a processing-time run's query.stop())
CANCELLED = ("SPARK_JOB_CANCELLED", "OPERATION_CANCELED", "InterruptedException", "cancelled")
# Spark failing to read a data file of an input for what the file holds: the file is in `path`; a
# Parquet column it cannot read as the table's type also in `column`, `expectedType` (the table's)
# and `actualType` (Parquet's). NO_HINT: the reader's own error, in the cause (a column read by the
# row-based reader, a file that is not Parquet). GONE: a file removed since Spark listed it
TYPE_MISMATCH = "FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH"
GONE = "FAILED_READ_FILE.FILE_NOT_EXIST"
FILE_CONTENT = (TYPE_MISMATCH, "FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER", "FAILED_READ_FILE.NO_HINT", GONE)
CAUSES = 16  # how deep a Java cause chain is followed


@dataclass(frozen=True)
class SparkError:
    """One error of a failure's chain as Spark describes it: its condition (error class), the
    condition's parameters and its message."""

    condition: Optional[str]
    message: str
    parameters: Dict[str, str] = field(default_factory=dict)


def chain(exc: BaseException) -> List[SparkError]:
    """The failure and its causes, as Spark describes them: what PySpark raises for a Spark
    error (classic or Spark Connect), or the Java exception of a Py4JJavaError (a Spark error
    PySpark has no class for, such as a failed file read) and the exceptions that caused it."""
    if isinstance(exc, PySparkException):
        message = str(exc.getMessage() or exc) or type(exc).__name__
        return [SparkError(exc.getCondition(), message, dict(exc.getMessageParameters() or {}))]
    if isinstance(exc, Py4JJavaError):
        return list(_java_chain(exc.java_exception))
    return []


def _java_chain(error: Any) -> Iterator[SparkError]:
    from py4j.java_gateway import is_instance_of
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    for _ in range(CAUSES):
        if error is None:
            return
        message = str(error.getMessage() or error.toString())
        if gateway is not None and is_instance_of(gateway, error, "org.apache.spark.SparkThrowable"):
            yield SparkError(str(error.getCondition()), message, dict(error.getMessageParameters()))
        else:
            yield SparkError(None, message)
        error = error.getCause()


def _cancelled(errors: Sequence[SparkError]) -> bool:
    """A job stopped, by what the failure says or the condition of any error in its chain."""
    said = " ".join([errors[0].message if errors else "", *(e.condition or "" for e in errors)])
    return any(word in said for word in CANCELLED)


def spark_error(error: SparkError) -> str:
    """Spark's error class and message on one line, without the query context that follows it
    (`== SQL ... ==`, the plugin's SQL), a JVM stack or internal names:
    `[DIVIDE_BY_ZERO] Division by zero. ... SQLSTATE: 22012`."""
    text = before_context(error.message) or "an error without a message"
    if error.condition and not text.startswith("["):
        text = f"[{error.condition}] {text}"
    return without_internal(text)


def spark_stopped(model: str, gone: Stopped, path: str, batch: Optional[BatchId] = None) -> StreamFailure:
    """A stream stopped by Spark itself stopping (session.spark_gone says why)."""
    return StreamFailure(
        model,
        f"Spark stopped while the stream ran: {gone.why}",
        f"{gone.fix}: committed micro-batches are kept, the failed one is redone",
        batch=batch,
        path=path,
    )


# a file the JVM may not write, as its messages name it: java.io's `<file> (Permission denied)` on
# local disk, Hadoop's `AccessDeniedException: <file>` (object stores) and HDFS's `inode="<file>"`
_DENIED = re.compile(
    r"(?P<file>[^\s\"]+) \((?P<why>Operation not permitted|Permission denied|Read-only file system)\)"
    r"|AccessDeniedException: (?P<store>[^\s:]+:?[^\s:]*)|Permission denied: .*?inode=\"(?P<inode>[^\"]+)\""
)


def s3_failure(model: str, text: str, path: str) -> Optional[StreamFailure]:
    """S3 failing a streaming run (a bucket that does not exist, refused or no credentials, no
    endpoint answering: spark/s3.named) as S3's cause and fix, which making the checkpoint writable
    would not mend. `text`: Spark's or Hadoop's words, or the OSError the plugin's file operations
    raise (already named). None: no S3 failure."""
    said = s3.named(text) or (text if text.startswith(s3.NAMED) else None)
    if said is None:
        return None
    problem, _, fix = said.partition("; fix: ")
    return StreamFailure(model, problem, f"{fix}; then run again: committed micro-batches are kept", path=path)


def unwritable_checkpoint(model: str, text: str, checkpoint: str) -> Optional[StreamFailure]:
    """A failure of Spark's own checkpoint writes (its offsets and its sources' file logs, which
    Spark writes before any batch reaches the plugin) to a folder it may not write: the folder
    and the fix, not Spark's temporary file name; S3's own causes by name (s3_failure). None:
    Spark's text names no such file."""
    on_s3 = s3_failure(model, text, checkpoint)
    if on_s3 is not None:
        return on_s3
    for found in _DENIED.finditer(text):
        file = found.group("file") or found.group("store") or found.group("inode")
        if paths.within(file, checkpoint):
            why = found.group("why") or "access denied"
            return StreamFailure(
                model,
                f"cannot write its checkpoint ({why})",
                "make the checkpoint directory and everything under it writable for the user running dbt (and "
                "Spark's executors), or set checkpoint_location to a writable folder and run `dbt run "
                f"--full-refresh -s {model}`; then run again: committed micro-batches are kept",
                path=checkpoint,
            )
    return None


# Delta's streaming source reads the files a version adds: one that deleted or rewrote rows fails
_DELTA_CHANGED = re.compile(
    r"\[(?P<what>DELTA_SOURCE_IGNORE_DELETE|DELTA_SOURCE_TABLE_IGNORE_CHANGES)\].*?at version (?P<version>\d+)"
    r"(?:.*?The source table can be found at path (?P<path>\S+?)\.?(?:\s|$))?",
    re.DOTALL,
)
# an overwrite snapshot is what UPDATE, MERGE and a copy-on-write DELETE commit
_ICEBERG_CHANGED = re.compile(r"Cannot process (?P<what>delete|overwrite) snapshot: (?P<snapshot>\d+)")


@dataclass(frozen=True)
class _Change:
    """An input's version that deleted or updated rows, as its format's streaming source said."""

    table: str
    what: str
    version: str
    replays_history: bool  # a new stream of it reads every snapshot again, this one too


def changed_input(model: str, text: str, checkpoint: str) -> Optional[StreamFailure]:
    """A Delta or Iceberg input whose version deleted or updated rows, which a stream of the rows
    it appends cannot take back from the windows they are in: named, with the fix. None: Spark's
    text says no such thing."""
    change = _delta_change(text) or _iceberg_change(text)
    if change is None:
        return None
    if change.replays_history:
        fix = (
            "build the model in batch, which reads the table as it is now: execution='batch' (with batch_size, "
            "each run computes only the days it owes); a new stream of an Iceberg table reads every snapshot from "
            "its oldest, this one too, so a --full-refresh meets it again (docs/delta-iceberg.md)"
        )
    else:
        fix = (
            f"rebuild it from the table as it is now: `dbt run --full-refresh -s {model}` (it streams on from there); "
            "inputs whose rows change in place stream only through a rebuild for now (docs/delta-iceberg.md)"
        )
    return StreamFailure(
        model,
        f"{change.table} {change.what} rows in its {change.version}; a stream reads the rows an input "
        "appends, so the windows and rows built from the changed ones would stay as they were",
        fix,
        path=checkpoint,
    )


def _delta_change(text: str) -> Optional[_Change]:
    """Delta's streaming source names the version and the table's folder; a new stream of the
    table starts from its current version whole."""
    found = _DELTA_CHANGED.search(text)
    if found is None:
        return None
    what = "deleted" if found.group("what") == "DELTA_SOURCE_IGNORE_DELETE" else "updated"
    table = f"the Delta table at {found.group('path')}" if found.group("path") else "a Delta input"
    return _Change(table, what, f"version {found.group('version')}", replays_history=False)


def _iceberg_change(text: str) -> Optional[_Change]:
    """Iceberg's streaming source names the snapshot, not the table; its hint (skip such
    snapshots) would leave the windows wrong, so it is not passed on."""
    found = _ICEBERG_CHANGED.search(text)
    if found is None:
        return None
    what = "deleted" if found.group("what") == "delete" else "deleted or updated"
    return _Change("an Iceberg input", what, f"snapshot {found.group('snapshot')}", replays_history=True)


@dataclass(frozen=True)
class Mismatch:
    """A column a file of an input holds as another type than the input's table declares."""

    column: str
    table_type: str
    file_type: str


def _types(schema: Any) -> Dict[str, str]:
    """A schema's top-level columns and their types as SQL spells them (`INT`, `DECIMAL(10,2)`)."""
    return {f.name.lower(): f.dataType.simpleString().upper() for f in schema.fields}


def _column(spark_column: str) -> str:
    """Parquet's column path as Spark prints it (`[price]`, `[s, a]` for a struct's field)."""
    return ".".join(part.strip() for part in spark_column.strip("[]").split(","))


def _mismatch(
    read: SparkError, table: Dict[str, str], file: Optional[Dict[str, str]], illegal: Optional[str] = None
) -> Optional[Mismatch]:
    """The column Spark could not read as the table's type, with both types: the one Spark names
    (its types from the file's own schema where it was read, else the Parquet type Spark refused
    to read the schema for (`illegal`), else Parquet's physical type), or else the first column
    the file holds as another type."""
    if read.condition == TYPE_MISMATCH and read.parameters.get("column"):
        column = _column(read.parameters["column"])
        expected = read.parameters.get("expectedType", "").upper()
        physical = read.parameters.get("actualType", "another type")
        actual = (file or {}).get(column.lower()) or f"Parquet {illegal or physical}"
        return Mismatch(column, table.get(column.lower(), expected), actual)
    if file is None:
        return None
    for column, kind in table.items():
        if column in file and file[column] != kind:
            return Mismatch(column, kind, file[column])
    return None


def _input_of(spark: Any, file: str, inputs: Sequence[str]) -> str:
    """The input whose table holds `file`: the only one, or the one whose location it is under."""
    if len(inputs) == 1:
        return inputs[0]
    for name in inputs:
        try:
            described = spark.sql(ddl.describe_extended(name)).collect()
        except (PySparkException, Py4JError):  # not a table Spark describes: it cannot be the one
            continue
        rows = [r for r in described if r[0] == "Location"]
        if rows and paths.within(file, rows[0][1]):
            return name
    return " or ".join(inputs)


def _own_file(file: str, where: Locations) -> Optional[str]:
    """Which of the window view's own locations holds `file` (None: none: an input's file)."""
    owners = {"its checkpoint": where.checkpoint, "its table": where.table, "its late table": where.late}
    return next((o for o, at in owners.items() if paths.within(file, at)), None)


@dataclass(frozen=True)
class FailedBatch:
    """The micro-batch a failure stopped: its model, the model's inputs and locations."""

    model: str
    inputs: Tuple[str, ...]
    where: Locations
    batch_id: BatchId


def unreadable_file(spark: Any, errors: Sequence[SparkError], batch: FailedBatch) -> Optional[StreamFailure]:
    """A data file that Spark cannot read. An input's, as the input's table declares its columns
    (a loader wrote a column as another type, or a file that is not Parquet): the file, the
    input, the column and both types, and what to do with the file; or gone since the stream
    read it (each job of a batch reads its files again). One the window view wrote
    itself (its state, its table): torn or changed from outside, which no batch fixes, so the
    full refresh. None: not such a failure."""
    read = next((e for e in errors if e.condition in FILE_CONTENT), None)
    if read is None or not read.parameters.get("path"):
        return None
    file = read.parameters["path"]
    cause = next((e for e in errors[errors.index(read) + 1 :] if e.message.strip()), read)
    model, batch_id = batch.model, batch.batch_id
    owner = _own_file(file, batch.where)
    if owner is not None:
        return StreamFailure(
            model,
            f"a file of {owner}, which the window view wrote, cannot be read (torn or changed from outside): "
            f"{spark_error(cause)}",
            f"run `dbt run --full-refresh -s {model}` to rebuild the table, late table and checkpoint from all "
            "input; the current table stays readable until the rebuilt one replaces it",
            batch=batch_id,
            path=paths.shown(file),
        )
    name = _input_of(spark, file, batch.inputs)
    if read.condition == GONE:  # Spark's micro-batch is rows read, not kept: each job reads its files again
        return gone(model, batch_id, [file], name)
    table: Dict[str, str] = {}
    file_types: Optional[Dict[str, str]] = None
    illegal: Optional[str] = None
    try:
        table = _types(spark.table(name).schema)
        file_types = _types(spark.read.parquet(file).schema)
    except (PySparkException, Py4JError) as exc:  # a file Spark cannot read a schema from: the reason is Spark's below
        found = re.search(r"Illegal Parquet type: (.+?)\. SQLSTATE", str(exc))
        illegal = found.group(1) if found else None
    mismatch = _mismatch(read, table, file_types, illegal)
    redone = "then run again: committed micro-batches are kept, this one is redone"
    if mismatch is not None:
        # pandas and pyarrow write nanoseconds unless told otherwise; Spark reads micro- and milliseconds
        nanos = (
            " (nanosecond timestamps, which Spark does not read: write microseconds, e.g. pyarrow's "
            "`coerce_timestamps='us'`, pandas' `to_parquet(..., coerce_timestamps='us', "
            "allow_truncated_timestamps=True)`)"
            if "NANOS" in mismatch.file_type
            else ""
        )
        return StreamFailure(
            model,
            f"a file of its input {name} has the column `{mismatch.column}` as {mismatch.file_type}{nanos}, where "
            f"{name} declares {mismatch.table_type}, and Spark cannot read one as the other",
            f"move the file out of the folder of {name}, or rewrite it under the same name with "
            f"`{mismatch.column}` as {mismatch.table_type}; {redone}. If the file's type is the right one, give "
            f"{name} a type Spark reads every file as and run `dbt run --full-refresh -s {model}`",
            batch=batch_id,
            path=paths.shown(file),
        )
    return StreamFailure(
        model,
        f"a file of its input {name} cannot be read: {spark_error(cause)}",
        f"if the file is not Parquet with the columns of {name}, or is damaged, move it out of the folder of "
        f"{name} or rewrite it under the same name; {redone}",
        batch=batch_id,
        path=paths.shown(file),
    )


def batch_failure(
    spark: Any, exc: Exception, plan: StreamPlan, where: Locations, batch_id: BatchId
) -> Optional[StreamFailure]:
    """What stopped a batch. Spark itself gone comes first: what the batch calls then fails as
    a cancelled job, an internal error or a refused connection. None: not a failure (a
    processing-time run stopping cancels its jobs; the batch is redone next run), or not one of
    the batch's own (passed on)."""
    model = plan.model
    gone = spark_gone(spark)
    if gone is not None:
        return spark_stopped(model, gone, where.checkpoint, batch_id)
    errors = chain(exc)
    # Spark failed a job of the batch: an input's file it cannot read, the model's SQL on its rows, ...
    if isinstance(exc, PySparkException) or any(e.condition for e in errors):
        if _cancelled(errors):
            return None
        failed = FailedBatch(model, tuple(i.source for i in plan.inputs), where, batch_id)
        unreadable = unreadable_file(spark, errors, failed)
        if unreadable is not None:
            return unreadable
        first = next(e for e in errors if e.condition) if isinstance(exc, Py4JJavaError) else errors[0]
        return StreamFailure(
            model,
            f"Spark failed the micro-batch: {spark_error(first)}",
            "fix the model's SQL or the input rows it fails on, and run again: committed micro-batches are "
            "kept, this one is redone",
            batch=batch_id,
        )
    if isinstance(exc, OSError):  # the store: unreachable, refused, gone mid-publish
        return StreamFailure(
            model,
            f"cannot read or write its files ({exc.strerror or exc})",
            "make the table, late table and checkpoint locations reachable and writable, and run again: "
            "committed micro-batches are kept, this one is finished or redone",
            batch=batch_id,
            path=exc.filename or where.table,
        )
    return None
