"""Streaming window views into Iceberg tables (file_format='iceberg'), the scenarios of
tests/support/lakehouse_streaming.py: both emits equal the same model in batch over the input
minus the late rows, the late rows in an Iceberg late table; a run that fails after a batch's
Iceberg snapshots, before its commit record, is replayed without a row lost or doubled (each
snapshot carries the stream's id and the batch, and a table that has it is skipped); a
--full-refresh rebuilds beside the live table and swaps the catalog table to the new Iceberg
table, leaving none of the build's own catalog tables; over windows, sessions and a window join
write Iceberg tables as TUMBLE does."""

from __future__ import annotations

from dbt.adapters.window_views.storage import iceberg_stream
from tests.support.lakehouse_streaming import ICEBERG, emits_scenario, kinds_scenario


def test_streaming_into_iceberg_is_batch_minus_late_and_exactly_once(project, monkeypatch):
    emits_scenario(project, monkeypatch, ICEBERG)
    built = [t.name for t in project.spark.catalog.listTables() if t.name.startswith(iceberg_stream.BUILD_PREFIX)]
    assert built == [], built


def test_over_windows_sessions_and_joins_stream_into_iceberg(project):
    kinds_scenario(project, ICEBERG)
