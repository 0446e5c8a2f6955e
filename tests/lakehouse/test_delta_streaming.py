"""Streaming window views into Delta tables (file_format='delta'): both emits equal the same
model in batch over the input minus the late rows, the late rows in a Delta late table; a run
that fails after a batch's Delta commits, before its commit record, is replayed without a row
lost or doubled (Delta's txnAppId / txnVersion); a --full-refresh rebuilds beside the live table
and swaps the catalog table to the new Delta table."""

from __future__ import annotations

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.storage import delta_stream
from tests.support.dbt_projects import errors, sources_yml

WINDOWS = """
{{{{ config(materialized='window_view', {config}emit='{emit}',
            watermark={{'column': 'bidtime', 'delay': '1 minute'}}) }}}}
select window_start, window_end, count(*) as bids, sum(price) as price
from {{{{ window_views.tumble(source('raw', '{source}'), 'bidtime', '10 minutes') }}}}
group by window_start, window_end
"""
STREAM = "execution='streaming', file_format='delta', late_data='table', "
EMITS = {"upd": "on_update", "eowc": "on_window_close"}


def bids(project, *rows) -> None:
    values = ", ".join(f"(timestamp'2020-04-15 {hhmm}:00', {price})" for hhmm, price in rows)
    project.spark.sql(f"insert into {project.schema}.bid values {values}")


def same_as_batch(project) -> None:
    """Each streaming table equals its batch twin over the input without the late rows."""
    schema = project.schema
    for name in EMITS:
        project.spark.sql(
            f"create or replace table {schema}.kept_{name} using delta as select * from {schema}.bid "
            f"except all select bidtime, price from {schema}.s_{name}__late"
        )
    project.dbt("run", "--threads", "2", "-s", *(f"b_{name}" for name in EMITS))
    for name in EMITS:
        assert project.rows(f"s_{name}") == project.rows(f"b_{name}"), name


def writes(project, table: str) -> int:
    """The table's Delta commits that wrote rows (a run also sets its table properties)."""
    found = project.spark.sql(f"describe history {project.schema}.{table}").collect()
    return sum(1 for commit in found if commit["operation"] == "WRITE")


def test_streaming_into_delta_is_batch_minus_late_and_exactly_once(project, monkeypatch):
    schema = project.schema
    project.spark.sql(f"create database if not exists {schema}")
    project.spark.sql(f"create table {schema}.bid (bidtime timestamp, price int) using delta")
    project.write("models/sources.yml", sources_yml("bid", *(f"kept_{name}" for name in EMITS)))
    for name, emit in EMITS.items():
        project.model(f"s_{name}", WINDOWS.format(config=STREAM, emit=emit, source="bid"))
        project.model(f"b_{name}", WINDOWS.format(config="", emit=emit, source=f"kept_{name}"))
    streams = ("--threads", "2", "-s", *(f"s_{name}" for name in EMITS))

    bids(project, ("08:07", 2), ("08:11", 3), ("08:03", 4))
    project.dbt("run", *streams)
    for name in EMITS:  # Delta tables, written by Delta's commits
        for table in (f"s_{name}", f"s_{name}__late"):
            assert delta_stream.provider(project.spark, f"{schema}.{table}") == "delta", table

    # the batch's Delta commits are made, then the run dies before its commit record: the
    # staged rows stay, as a kill right after the commits leaves them
    bids(project, ("08:25", 2), ("08:05", 9), ("08:14", 1))
    failed = set()
    removed = delta_stream.staging_removed

    def killed_after_commits(fs, location, batch):
        table = location.removesuffix("__late")
        if table in failed:
            removed(fs, location, batch)
        elif location.endswith("__late"):  # the late table's commit is the batch's last
            failed.add(table)
            raise StreamFailure(table.rsplit("/", 1)[-1], "injected fault after the Delta commits", "run again")

    monkeypatch.setattr(delta_stream, "staging_removed", killed_after_commits)
    assert "injected fault after the Delta commits" in errors(project.dbt("run", *streams, ok=False))
    assert len(failed) == 2
    versions = {name: writes(project, f"s_{name}") for name in EMITS}
    late_versions = {name: writes(project, f"s_{name}__late") for name in EMITS}
    monkeypatch.undo()
    # the rerun replays the batch: its staged rows are there, and Delta skips its commits
    (upd, eowc) = project.dbt("run", *streams).result
    assert upd.message.startswith("STREAM 1 batch, 3 in") and eowc.message.startswith("STREAM 1 batch, 3 in")
    for name in EMITS:
        assert writes(project, f"s_{name}") == versions[name], name
        assert writes(project, f"s_{name}__late") == late_versions[name], name
        assert [r[1] for r in project.rows(f"s_{name}__late")] == [9], name  # 08:05 after the 08:10 watermark
    same_as_batch(project)
    assert [r[2] for r in project.rows("s_upd")] == [2, 2, 1]  # 08:00, 08:10 and the open 08:20
    assert [r[2] for r in project.rows("s_eowc")] == [2, 2]

    # a rebuild beside the live table: the catalog table now reads the new version's Delta table,
    # streamed from all input in one batch (08:05 is on time then)
    project.dbt("run", "-s", "s_upd", "--full-refresh")
    assert delta_stream.provider(project.spark, f"{schema}.s_upd") == "delta"
    location = project.spark.sql(f"describe detail {schema}.s_upd").first()["location"]
    assert location.endswith("/s_upd__v2"), location
    assert [r[2:] for r in project.rows("s_upd")] == [(3, 15), (2, 4), (1, 2)]
    assert project.rows("s_upd__late") == []
