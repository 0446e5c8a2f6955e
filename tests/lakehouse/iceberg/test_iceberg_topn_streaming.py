"""A streaming keyed Top-N into an Iceberg table (file_format='iceberg'): each batch replaces the
rows of the keys whose top changed in one MERGE, a snapshot carrying the stream's id and the
batch, so the table equals the same model in batch over the input minus the late rows after
every run, and a batch replayed after its snapshots adds no second one."""

from __future__ import annotations

from tests.support.lakehouse_streaming import ICEBERG
from tests.support.lakehouse_topn import top_n_scenario


def test_a_streaming_top_n_into_iceberg_is_batch_minus_late_and_exactly_once(project, monkeypatch):
    top_n_scenario(project, monkeypatch, ICEBERG, versions=(2, 1))
