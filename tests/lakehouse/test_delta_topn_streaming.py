"""A streaming keyed Top-N into a Delta table (file_format='delta'): each batch replaces the
rows of the keys whose top changed in one MERGE, so the table equals the same model in batch
over the input minus the late rows after every run, and a batch replayed after its commits
(Delta's txnAppId / txnVersion, set for the MERGE) adds no second commit."""

from __future__ import annotations

from tests.support.lakehouse_topn import TopNFormat, top_n_scenario


def writes(project, table: str) -> int:
    """The table's Delta commits that wrote rows (a run also sets its table properties)."""
    found = project.spark.sql(f"describe history {project.schema}.{table}").collect()
    return sum(1 for commit in found if commit["operation"] in ("WRITE", "MERGE"))


def test_a_streaming_top_n_into_delta_is_batch_minus_late_and_exactly_once(project, monkeypatch):
    top_n_scenario(project, monkeypatch, TopNFormat("delta", "Delta commits", writes))
