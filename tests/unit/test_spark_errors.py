"""A micro-batch's Spark error as the user sees it (spark_errors.spark_error), a job stopped by a
processing-time run's end told apart from a failure, and an input's file Spark cannot read
described by the column and both types (no Spark)."""

from types import SimpleNamespace

import pytest
from pyspark.errors import AnalysisException, PySparkException

from dbt.adapters.window_views.streaming.commit.locations import Locations
from dbt.adapters.window_views.streaming.spark_errors import (
    FailedBatch,
    SparkError,
    _cancelled,
    _mismatch,
    chain,
    changed_input,
    s3_failure,
    spark_error,
    unreadable_file,
    unwritable_checkpoint,
)


class Captured(PySparkException):
    """What pyspark raises for a JVM error: its condition and Spark's message."""

    def __init__(self, condition, message):
        super().__init__(message)
        self.condition, self.message = condition, message

    def getCondition(self):
        return self.condition

    def getMessage(self):
        return self.message

    def __str__(self):
        return self.message


def test_the_message_without_query_context_stack_or_internal_names():
    error = Captured(
        "INCONSISTENT_BEHAVIOR_CROSS_VERSION.PARSE_DATETIME_BY_NEW_PARSER",
        "[INCONSISTENT_BEHAVIOR_CROSS_VERSION.PARSE_DATETIME_BY_NEW_PARSER] You may get a different result:\n"
        "Fail to parse '2020-4-15' in `_wv_v_model`.\nSet \"spark.sql.legacy.timeParserPolicy\". SQLSTATE: 42K0B\n"
        "== SQL (line 1, position 12) ==\nselect to_date(item) from _wv_v_model\n           ^^^^\n"
        "\tat org.apache.spark.sql.errors.ExecutionErrors.failToParse(ExecutionErrors.scala:53)",
    )
    assert spark_error(chain(error)[0]) == (
        "[INCONSISTENT_BEHAVIOR_CROSS_VERSION.PARSE_DATETIME_BY_NEW_PARSER] You may get a different result: "
        "Fail to parse '2020-4-15' in (internal). Set \"spark.sql.legacy.timeParserPolicy\". SQLSTATE: 42K0B"
    )
    assert (
        spark_error(chain(Captured("DIVIDE_BY_ZERO", "Division by zero."))[0]) == "[DIVIDE_BY_ZERO] Division by zero."
    )
    assert spark_error(chain(Captured(None, ""))[0]) == "Captured"


def test_a_cancelled_job_is_not_a_failure():
    assert _cancelled(chain(Captured("SPARK_JOB_CANCELLED", "Job 3 cancelled part of cancelled job group")))
    assert _cancelled(chain(Captured(None, "java.lang.InterruptedException")))
    assert not _cancelled(chain(Captured("USER_RAISED_EXCEPTION", "price 400 is out of range")))
    # a Java exception Spark has no condition for, caused by the cancelled job
    wrapped = [SparkError(None, "java.util.concurrent.ExecutionException"), SparkError("SPARK_JOB_CANCELLED", "Job 3")]
    assert _cancelled(wrapped)


FILE = "file:///wh/s.db/bid/part%200.parquet"
WHERE = Locations("file:/wh/s.db/m", "file:/wh/s.db/m__late", "file:/wh/s.db/m__checkpoint")


def mismatch(column="[price]", expected="int", actual="BINARY"):
    parameters = {"path": FILE, "column": column, "expectedType": expected, "actualType": actual}
    return SparkError("FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH", "[FAILED_READ_FILE...]", parameters)


def test_a_column_of_another_type_is_named_with_both_types():
    table = {"bidtime": "TIMESTAMP", "price": "INT"}
    # the file's own type where its schema was read, else Parquet's physical type as Spark names it
    found = _mismatch(mismatch(), table, {"bidtime": "TIMESTAMP", "price": "STRING"})
    assert (found.column, found.table_type, found.file_type) == ("price", "INT", "STRING")
    assert _mismatch(mismatch(), table, None).file_type == "Parquet BINARY"
    # a struct's field, as Spark prints Parquet's column path
    nested = _mismatch(mismatch("[s, a]"), {"s": "STRUCT<A:INT>"}, None)
    assert (nested.column, nested.table_type) == ("s.a", "INT")
    # the row-based reader's error has no column: the first column the file holds as another type
    no_hint = SparkError("FAILED_READ_FILE.NO_HINT", "...", {"path": FILE})
    found = _mismatch(no_hint, table, {"price": "BIGINT", "item": "STRING"})
    assert (found.column, found.table_type, found.file_type) == ("price", "INT", "BIGINT")
    assert _mismatch(no_hint, table, {"price": "INT"}) is None


class Unreadable:
    """A session where neither the table's nor the file's schema can be read."""

    def table(self, name):
        raise AnalysisException(f"[TABLE_OR_VIEW_NOT_FOUND] {name}")


def test_a_file_that_is_not_parquet_is_named_with_sparks_reason():
    errors = [
        SparkError("FAILED_READ_FILE.NO_HINT", "Encountered error while reading file", {"path": FILE}),
        SparkError(None, "file:/wh/s.db/bid/part 0.parquet is not a Parquet file (length is too low: 8)"),
    ]
    failure = unreadable_file(Unreadable(), errors, FailedBatch("m", ("s.bid",), WHERE, 3))
    assert (
        "window_view model 'm' (micro-batch 3) at /wh/s.db/bid/part 0.parquet: a file of its input s.bid cannot be "
        "read: file:/wh/s.db/bid/part 0.parquet is not a Parquet file (length is too low: 8); fix: if the file is "
        "not Parquet with the columns of s.bid, or is damaged, move it out of the folder of s.bid"
    ) in str(failure), failure
    # a file gone since the stream read it is not the file's fault, nor the SQL's: the input changed
    gone = SparkError("FAILED_READ_FILE.FILE_NOT_EXIST", "File does not exist", {"path": FILE})
    assert (
        "window_view model 'm' (micro-batch 3) at /wh/s.db/bid/part 0.parquet: 1 file(s) of s.bid that this "
        "micro-batch read are gone: a file was changed or removed while the batch ran; fix: let the input only "
        "grow by new files, and run again: committed micro-batches are kept, this one is redone"
    ) in str(unreadable_file(Unreadable(), [gone], FailedBatch("m", ("s.bid",), WHERE, 3)))


def test_a_damaged_file_of_the_window_views_own_is_named_with_the_full_refresh():
    state = "file:/wh/s.db/m__checkpoint/window_views/state/4/part-0.parquet"
    errors = [
        SparkError("FAILED_READ_FILE.NO_HINT", "Encountered error while reading file", {"path": state}),
        SparkError(None, f"Checksum error: {state} at 3072"),
    ]
    failure = unreadable_file(Unreadable(), errors, FailedBatch("m", ("s.bid",), WHERE, 5))
    assert (
        "window_view model 'm' (micro-batch 5) at /wh/s.db/m__checkpoint/window_views/state/4/part-0.parquet: a "
        "file of its checkpoint, which the window view wrote, cannot be read (torn or changed from outside): "
        "Checksum error"
    ) in str(failure), failure
    assert "fix: run `dbt run --full-refresh -s m` to rebuild the table, late table and checkpoint" in str(failure)
    # an input's file is the input's: named as such
    assert "a file of its input s.bid" in str(
        unreadable_file(Unreadable(), [mismatch()], FailedBatch("m", ("s.bid",), WHERE, 5))
    )


def test_the_input_holding_the_file_is_found_by_its_location():
    class Described:
        def sql(self, statement):
            location = {"s.ask": "file:/wh/s.db/ask", "s.bid": "file:/wh/s.db/bid"}[statement.rsplit(" ", 1)[1]]
            rows = [("price", "int", None), ("Location", location, "")]
            return SimpleNamespace(collect=lambda: rows)

        def table(self, name):
            raise AnalysisException(f"[TABLE_OR_VIEW_NOT_FOUND] {name}")

    failure = unreadable_file(Described(), [mismatch()], FailedBatch("m", ("s.ask", "s.bid"), WHERE, 0))
    assert "a file of its input s.bid has the column `price` as Parquet BINARY, where s.bid declares INT" in str(
        failure
    )


def test_nanosecond_timestamps_are_named_as_such_with_how_to_write_them():
    class Nanos:
        """The table reads; the file's schema does not: Spark refuses its nanosecond timestamps."""

        def table(self, name):
            schema = SimpleNamespace(
                fields=[SimpleNamespace(name="bidtime", dataType=SimpleNamespace(simpleString=lambda: "timestamp"))]
            )
            return SimpleNamespace(schema=schema)

        @property
        def read(self):
            def parquet(file):
                raise AnalysisException(
                    "[PARQUET_TYPE_ILLEGAL] Illegal Parquet type: INT64 (TIMESTAMP(NANOS,false)). SQLSTATE: 42846"
                )

            return SimpleNamespace(parquet=parquet)

    failure = str(
        unreadable_file(Nanos(), [mismatch("[bidtime]", "timestamp", "INT64")], FailedBatch("m", ("s.bid",), WHERE, 2))
    )
    assert (
        "has the column `bidtime` as Parquet INT64 (TIMESTAMP(NANOS,false)) (nanosecond timestamps, which Spark does "
        "not read: write microseconds, e.g. pyarrow's `coerce_timestamps='us'`"
    ) in failure, failure
    assert "where s.bid declares TIMESTAMP" in failure


def test_an_analysis_errors_logical_plan_is_left_out():
    from dbt.adapters.window_views.spark.spark_messages import without_plan

    message = (
        "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with name `nosuch` cannot "
        "be resolved. Did you mean one of the following? [`price`, `item`]. SQLSTATE: 42703; line 3 pos 11;\n"
        "'CreateTable `spark_catalog`.`s`.`e2__wv_tmp`, ErrorIfExists\n+- 'Aggregate [window_start], ['sum('nosuch)]\n"
    )
    assert without_plan(message) == message.split(";\n")[0]
    assert without_plan("[DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012;\nProject [1]") == (
        "[DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012"
    )
    assert (
        without_plan("[USER_RAISED_EXCEPTION] too many SQLSTATE: P0001")
        == "[USER_RAISED_EXCEPTION] too many SQLSTATE: P0001"
    )


@pytest.mark.parametrize(
    "text",
    [
        "[STREAM_FAILED] Query [id = 1, runId = 2] terminated with exception: /wh/x__checkpoint/spark/sources/0/"
        ".2.0e84.tmp (Operation not permitted) SQLSTATE: XXKST",
        "terminated with exception: file:/wh/x__checkpoint/spark/offsets/.3.tmp (Permission denied)",
        "org.apache.hadoop.security.AccessControlException: Permission denied: user=dbt, access=WRITE, "
        'inode="/wh/x__checkpoint/spark/offsets":hdfs:supergroup:drwxr-xr-x',
        "java.nio.file.AccessDeniedException: gs://b/x__checkpoint/spark/offsets/3: getFileStatus on ...",
    ],
)
def test_spark_denied_its_checkpoint_names_the_folder_and_the_fix(text):
    checkpoint = "gs://b/x__checkpoint" if "gs://" in text else "/wh/x__checkpoint"
    failure = unwritable_checkpoint("x", text, checkpoint)
    assert failure is not None
    message = failure.msg
    assert message.startswith(f"window_view model 'x' at {checkpoint}: cannot write its checkpoint (")
    assert "make the checkpoint directory and everything under it writable" in message
    assert ".tmp" not in message and "runId" not in message


@pytest.mark.parametrize(
    "text, said, fix",
    [
        (
            "[STREAM_FAILED] Query [id = 1, runId = 2] terminated with exception: java.nio.file."
            "AccessDeniedException: s3a://b/x__checkpoint/spark/offsets/3: getFileStatus on s3a://b/x__checkpoint/"
            "spark/offsets/3: software.amazon.awssdk.services.s3.model.S3Exception: Forbidden (Service: S3, Status "
            "Code: 403):SignatureDoesNotMatch SQLSTATE: XXKST",
            "S3 refused this dbt's credentials for s3a://b/x__checkpoint/spark/offsets/3",
            "check s3.access_key_id and s3.secret_access_key",
        ),
        (
            "[STREAM_FAILED] Query [id = 1, runId = 2] terminated with exception: java.net.ConnectException: "
            "getFileStatus on s3a://b/x__checkpoint/spark/offsets: software.amazon.awssdk.core.exception."
            "SdkClientException: Unable to execute HTTP request: Connect to 127.0.0.1:9 [/127.0.0.1] failed: "
            "Connection refused SQLSTATE: XXKST",
            "no S3 endpoint answers at 127.0.0.1:9 for s3a://b/x__checkpoint/spark/offsets",
            "start the S3 service, or correct s3.endpoint",
        ),
        (
            # the plugin's own file operations raise S3's failure already named (storage/filesystems.py)
            "S3 bucket 'b' does not exist (at s3a://b/x__checkpoint/run.lock); fix: create it (aws s3 mb s3://b), "
            "or correct the bucket in the model's location_root",
            "S3 bucket 'b' does not exist (at s3a://b/x__checkpoint/run.lock)",
            "create it (aws s3 mb s3://b)",
        ),
    ],
    ids=["refused", "no-endpoint", "already-named"],
)
def test_s3_failing_a_stream_is_named_by_its_cause_not_the_checkpoint(text, said, fix):
    """S3 failing Spark's checkpoint writes: S3's cause and fix, not the checkpoint made writable
    (which would not mend it)."""
    checkpoint = "s3a://b/x__checkpoint"
    for failure in (unwritable_checkpoint("x", text, checkpoint), s3_failure("x", text, checkpoint)):
        assert failure is not None
        message = failure.msg
        assert message.startswith(f"window_view model 'x' at {checkpoint}: {said}; fix: {fix}"), message
        assert message.endswith("then run again: committed micro-batches are kept"), message
        assert "writable" not in message and "SQLSTATE" not in message, message
    assert s3_failure("x", "terminated with exception: /wh/x__checkpoint/.3.tmp (Permission denied)", "/wh") is None


def test_a_denied_file_outside_the_checkpoint_is_not_the_checkpoints():
    text = "terminated with exception: /data/input/part-0.parquet (Permission denied)"
    assert unwritable_checkpoint("x", text, "/wh/x__checkpoint") is None


@pytest.mark.parametrize(
    "text, said",
    [
        (
            "[STREAM_FAILED] Query [id = 1, runId = 2] terminated with exception: [DELTA_SOURCE_IGNORE_DELETE] "
            "Detected deleted data (for example part-00001-1e.snappy.parquet) from streaming source at version 3. "
            "This is currently not supported. If you'd like to ignore deletes, set the option 'ignoreDeletes' to "
            "'true'. The source table can be found at path file:/wh/s.db/bid. SQLSTATE: XXKST",
            "the Delta table at file:/wh/s.db/bid deleted rows in its version 3; a stream reads the rows",
        ),
        (
            "terminated with exception: [DELTA_SOURCE_TABLE_IGNORE_CHANGES] Detected a data update (for example "
            "part-0.parquet) in the source table at version 12. This is currently not supported.",
            "a Delta input updated rows in its version 12; a stream reads the rows",
        ),
        (
            "[STREAM_FAILED] Query [id = 1, runId = 2] terminated with exception: Cannot process delete snapshot: "
            "3065760062584831557, to ignore deletes, set streaming-skip-delete-snapshots=true SQLSTATE: XXKST",
            "an Iceberg input deleted rows in its snapshot 3065760062584831557; a stream reads the rows",
        ),
        (
            "terminated with exception: Cannot process overwrite snapshot: 77, to ignore overwrites, set "
            "streaming-skip-overwrite-snapshots=true",
            "an Iceberg input deleted or updated rows in its snapshot 77; a stream reads the rows",
        ),
    ],
)
def test_a_delta_or_iceberg_input_that_changed_rows_is_named_with_the_rebuild(text, said):
    failure = changed_input("rev", text, "/wh/rev__checkpoint")
    assert failure is not None
    assert failure.msg.startswith(f"window_view model 'rev' at /wh/rev__checkpoint: {said}"), failure.msg
    fix = "execution='batch'" if "Iceberg" in said else "`dbt run --full-refresh -s rev`"
    assert fix in failure.msg and "runId" not in failure.msg
    assert "skip" not in failure.msg and "ignoreDeletes" not in failure.msg  # those hints leave the windows wrong
    assert changed_input("rev", "[DIVIDE_BY_ZERO] Division by zero.", "/wh/rev__checkpoint") is None
