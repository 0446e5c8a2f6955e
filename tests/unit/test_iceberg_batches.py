"""Iceberg's part of incremental batch window views, without Spark: its batches listed from its
`partitions` metadata table, and its write conflicts named with the fix."""

from __future__ import annotations

from types import SimpleNamespace

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.batch import iceberg_batches, predicate_batches
from dbt.adapters.window_views.spark import lakehouse

WRITES = predicate_batches.FormatWrites(lakehouse.ICEBERG, iceberg_batches.conflict, iceberg_batches.written)


class Statements:
    def __init__(self) -> None:
        self.statements: list = []

    def execute(self, sql: str, fetch: bool = False):
        self.statements.append(sql)
        return None, SimpleNamespace(rows=[("2024-01-02 00:00:00",), ("2024-01-01 00:00:00",)])


def test_batches_written_are_the_partitions_metadata_tables_values():
    adapter = Statements()
    assert iceberg_batches.written(adapter, "s.t", "window_time_day") == ("2024-01-01 00:00:00", "2024-01-02 00:00:00")
    assert adapter.statements == ["SELECT partition.`window_time_day` FROM s.t.partitions"]


def test_a_write_conflict_is_named_with_the_fix_and_other_errors_are_not():
    commit = DbtRuntimeError(
        "org.apache.iceberg.exceptions.CommitFailedException: Cannot commit s.t because base metadata location "
        "'.../00003.metadata.json' is not same as the current table metadata location '.../00004.metadata.json'"
    )
    text = predicate_batches.failure(WRITES, commit, "s.t")
    assert text.startswith(
        "another writer committed to the Iceberg table s.t while this batch was written "
        "(Apache Iceberg's CommitFailedException: "
    )
    assert "fix: let one writer at a time write the table" in text
    found = DbtRuntimeError("ValidationException: Found conflicting files that can contain records matching ...")
    assert "(Apache Iceberg's ValidationException: " in predicate_batches.failure(WRITES, found, "s.t")
    other = DbtRuntimeError("ValidationException: Cannot find field 'x' in struct")
    assert predicate_batches.failure(WRITES, other, "s.t") == "ValidationException: Cannot find field 'x' in struct"
