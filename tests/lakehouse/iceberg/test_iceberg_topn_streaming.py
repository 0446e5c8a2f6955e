"""A streaming keyed Top-N into an Iceberg table (file_format='iceberg'): each batch replaces the
rows of the keys whose top changed in one MERGE, a snapshot carrying the stream's id and the
batch, so the table equals the same model in batch over the input minus the late rows after
every run, and a batch replayed after its snapshots adds no second one."""

from __future__ import annotations

from dbt.adapters.window_views.storage import iceberg_stream
from tests.support.lakehouse_topn import TopNFormat, top_n_scenario


def writes(project, table: str) -> int:
    """The table's snapshots a stream's batch made (they carry its commit)."""
    name = f"{project.schema}.{table}"
    project.spark.catalog.refreshTable(name)
    found = project.spark.sql(f"select summary from {name}.snapshots").collect()
    return sum(1 for snapshot in found if iceberg_stream.COMMIT_PROPERTY in snapshot["summary"])


def test_a_streaming_top_n_into_iceberg_is_batch_minus_late_and_exactly_once(project, monkeypatch):
    top_n_scenario(project, monkeypatch, TopNFormat("iceberg", "Iceberg snapshots", writes, versions=(2, 1)))
