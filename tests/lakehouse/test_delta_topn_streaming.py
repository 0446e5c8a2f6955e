"""A streaming keyed Top-N into a Delta table (file_format='delta'): each batch replaces the
rows of the keys whose top changed in one MERGE, so the table equals the same model in batch
over the input minus the late rows after every run, and a batch replayed after its commits
(Delta's txnAppId / txnVersion, set for the MERGE) adds no second commit."""

from __future__ import annotations

from tests.support.lakehouse_streaming import DELTA
from tests.support.lakehouse_topn import top_n_scenario


def test_a_streaming_top_n_into_delta_is_batch_minus_late_and_exactly_once(project, monkeypatch):
    top_n_scenario(project, monkeypatch, DELTA)
