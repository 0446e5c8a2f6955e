"""Streaming window views into Delta tables (file_format='delta'), the scenarios of
tests/support/lakehouse_streaming.py: both emits equal the same model in batch over the input
minus the late rows, the late rows in a Delta late table; a run that fails after a batch's Delta
commits, before its commit record, is replayed without a row lost or doubled (Delta's txnAppId /
txnVersion); a --full-refresh rebuilds beside the live table and swaps the catalog table to the
new Delta table; over windows, sessions and a window join write Delta tables as TUMBLE does."""

from __future__ import annotations

from tests.support.lakehouse_streaming import DELTA, emits_scenario, kinds_scenario


def test_streaming_into_delta_is_batch_minus_late_and_exactly_once(project, monkeypatch):
    emits_scenario(project, monkeypatch, DELTA)


def test_over_windows_sessions_and_joins_stream_into_delta(project):
    kinds_scenario(project, DELTA)
