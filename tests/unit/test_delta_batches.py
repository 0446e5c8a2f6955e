"""Delta's part of incremental batch window views, without Spark: a run's contiguous batches
replaced in one REPLACE WHERE commit, each alone when that fails, the record written at the first
failure; a write conflict named with the fix; a Delta table's DESCRIBE and SHOW PARTITIONS read
(its partition columns, its properties printed without spaces); one not partitioned by the batch
column refused."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.batch import delta_batches, incremental, predicate_batches
from dbt.adapters.window_views.batch.batch_table import BatchQueries, BatchRun, Described, Table, Writes
from dbt.adapters.window_views.errors import ModelOutputError
from dbt.adapters.window_views.plans.batches import RECORD_PROPERTY, BatchSpan, Selection
from dbt.adapters.window_views.plans.window_view import WindowViewPlan
from dbt.adapters.window_views.records import PendingBatches
from dbt.adapters.window_views.spark import lakehouse
from tests.unit.test_batches import H, marker, tvf_sql

CONFIG = {
    "materialized": "window_view",
    "file_format": "delta",
    "event_time": "window_time",
    "batch_size": "day",
    "begin": "2024-01-01",
}
OUTPUT = [("k", "string"), ("window_start", "timestamp"), ("window_end", "timestamp"), ("window_time", "timestamp")]
OUTPUT += [("n", "bigint")]
CONFLICT = (
    "An error occurred while calling o43.sql.\n: io.delta.exceptions.ConcurrentAppendException: "
    "[DELTA_CONCURRENT_APPEND.WITH_PARTITION_HINT] Transaction conflict detected. a concurrent WRITE added data to "
    "table s.t committed at version 7. The concurrent operation modified data in the partition "
    "[window_time_day=2024-01-02 00:00:00] that should have been read by this operation. SQLSTATE: 2D521\n\tat ..."
)


def plan() -> WindowViewPlan:
    return WindowViewPlan.from_model("m", tvf_sql(marker("tumble", size=H, offset=0)), CONFIG)


class Statements:
    """An adapter that keeps every statement and fails those holding a text of `failing` (with
    Delta's write conflict, if `conflict`)."""

    def __init__(self, *failing: str, conflict: bool = False) -> None:
        self.failing, self.conflict, self.statements = failing, conflict, []

    def execute(self, sql: str, fetch: bool = False):
        self.statements.append(sql)
        found = next((f for f in self.failing if f in sql), None)
        if found is not None:
            raise DbtRuntimeError(CONFLICT if self.conflict else f"[DIVIDE_BY_ZERO] in {found}")
        return None, SimpleNamespace(rows=[])


def days(*numbers: int) -> tuple:
    return tuple(BatchSpan(datetime(2024, 1, d), datetime(2024, 1, d + 1)) for d in numbers)


def write(adapter: Statements, batches: tuple) -> dict:
    made = plan()
    batch_run = BatchRun(adapter, made, "s.t", None, OUTPUT)
    queries = BatchQueries("m", made.required_batch_shape, None, lambda relation: None, OUTPUT)
    table = Table("s.t", "/lake/t", ("2024-01-01 00:00:00",), PendingBatches())
    writes = Writes(Selection(batches, "lookback"), queries, '{"pending": "all"}', "{}")
    return delta_batches.DELTA_BATCHES.write(batch_run, table, writes)


def test_contiguous_batches_are_replaced_in_one_commit_by_their_keys():
    adapter = Statements()
    assert write(adapter, days(1, 2, 4)) == {}
    inserts = [s for s in adapter.statements if s.startswith("INSERT")]
    assert len(inserts) == 2 and len(adapter.statements) == 2, adapter.statements
    assert "REPLACE WHERE `window_time_day` IN ('2024-01-01 00:00:00', '2024-01-02 00:00:00')" in inserts[0]
    assert "REPLACE WHERE `window_time_day` IN ('2024-01-04 00:00:00')" in inserts[1]


def test_batches_that_fail_as_one_run_alone_and_the_first_failure_writes_the_record():
    # the one statement holding the 2024-01-02 key alone fails, and the three-batch one
    adapter = Statements("IN ('2024-01-02 00:00:00') ", "'2024-01-01 00:00:00', '2024-01-02")
    failures = write(adapter, days(1, 2, 3))
    assert list(failures) == ["2024-01-02 00:00:00"]
    assert failures["2024-01-02 00:00:00"].startswith("[DIVIDE_BY_ZERO]")
    records = [s for s in adapter.statements if RECORD_PROPERTY in s]
    assert len(records) == 1 and "ALTER TABLE s.t SET TBLPROPERTIES" in records[0], adapter.statements
    assert len([s for s in adapter.statements if s.startswith("INSERT")]) == 4  # as one, then each alone


def test_a_write_conflict_is_named_with_the_fix():
    failures = write(Statements("REPLACE WHERE", conflict=True), days(2))
    text = failures["2024-01-02 00:00:00"]
    assert text.startswith(
        "another writer committed to the Delta table s.t while this batch was written (Delta Lake's "
    )
    assert "ConcurrentAppendException: [DELTA_CONCURRENT_APPEND.WITH_PARTITION_HINT] Transaction conflict" in text
    assert "fix: let one writer at a time write the table" in text and "it redoes this batch" in text
    writes = predicate_batches.FormatWrites(lakehouse.DELTA_LAKE, delta_batches.conflict, delta_batches.written)
    changed = DbtRuntimeError("[DELTA_METADATA_CHANGED] MetadataChangedException: ...")
    assert "(Delta Lake's MetadataChangedException: " in predicate_batches.failure(writes, changed, "s.t")
    assert predicate_batches.failure(writes, DbtRuntimeError("[DIVIDE_BY_ZERO] x"), "s.t") == "[DIVIDE_BY_ZERO] x"


@pytest.mark.parametrize(
    "partitioned, said",
    [
        ([], "is an unpartitioned Delta table, not"),
        (["window_start"], "is a Delta table partitioned by (window_start), not"),
    ],
)
def test_a_delta_table_not_partitioned_by_the_batch_column_is_refused(partitioned, said):
    batch_run = BatchRun(None, plan(), "s.t", None, OUTPUT)
    parts = delta_batches.DELTA_BATCHES
    parts.check(batch_run, Described([], {}, ["WINDOW_TIME_DAY"]))
    with pytest.raises(ModelOutputError) as raised:
        parts.check(batch_run, Described([], {}, partitioned))
    assert f"window_view model 'm': its table s.t {said} partitioned by its batch column `window_time_day`" in str(
        raised.value
    )
    assert "fix: run it with --full-refresh, which rebuilds the table partitioned by `window_time_day`" in str(
        raised.value
    )


class DeltaTable(Statements):
    """A Delta table as Spark describes it: properties without spaces, SHOW PARTITIONS values bare."""

    def execute(self, sql: str, fetch: bool = False):
        self.statements.append(sql)
        if sql.startswith("DESCRIBE"):
            properties = (
                "[delta.minReaderVersion=1,window_views.batch_column=window_time_day,"
                "window_views.latest_input_time=2024-01-02 05:00:00.000000]"
            )
            rows = [(c, t, None) for c, t in OUTPUT] + [("window_time_day", "string", None)]
            rows += [("# Partition Information", "", ""), ("# col_name", "data_type", "comment")]
            rows += [("window_time_day", "string", None), ("", "", ""), ("# Detailed Table Information", "", "")]
            rows += [("Location", "file:/lake/t", ""), ("Provider", "delta", ""), ("Table Properties", properties, "")]
            return None, SimpleNamespace(rows=rows)
        if sql.startswith("SHOW PARTITIONS"):
            return None, SimpleNamespace(rows=[["2024-01-01 00:00:00"], ["2024-01-02 00:00:00"]])
        return None, SimpleNamespace(rows=[])


def test_a_delta_tables_batches_and_properties_are_read():
    adapter = DeltaTable()
    table = incremental._existing(BatchRun(adapter, plan(), "s.t", None, OUTPUT), SimpleNamespace())
    assert table is not None
    assert table.written == ("2024-01-01 00:00:00", "2024-01-02 00:00:00")
    assert table.latest_input == datetime(2024, 1, 2, 5)
    # a parquet model's run finds a table of another format: rebuilt, as one of another shape
    parquet = WindowViewPlan.from_model(
        "m", tvf_sql(marker("tumble", size=H, offset=0)), {**CONFIG, "file_format": "parquet"}
    )
    assert incremental._existing(BatchRun(adapter, parquet, "s.t", None, OUTPUT), SimpleNamespace()) is None
