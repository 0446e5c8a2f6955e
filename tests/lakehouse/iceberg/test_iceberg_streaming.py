"""Streaming window views into Iceberg tables (file_format='iceberg'): both emits equal the same
model in batch over the input minus the late rows, the late rows in an Iceberg late table; a run
that fails after a batch's Iceberg snapshots, before its commit record, is replayed without a row
lost or doubled (each snapshot carries the stream's id and the batch, and a table that has it is
skipped); a --full-refresh rebuilds beside the live table and swaps the catalog table to the new
Iceberg table."""

from __future__ import annotations

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.storage import delta_stream, iceberg_stream
from tests.support.dbt_projects import errors, sources_yml

WINDOWS = """
{{{{ config(materialized='window_view', {config}emit='{emit}',
            watermark={{'column': 'bidtime', 'delay': '1 minute'}}) }}}}
select window_start, window_end, count(*) as bids, sum(price) as price
from {{{{ window_views.tumble(source('raw', '{source}'), 'bidtime', '10 minutes') }}}}
group by window_start, window_end
"""
STREAM = "execution='streaming', file_format='iceberg', late_data='table', "
EMITS = {"upd": "on_update", "eowc": "on_window_close"}


def bids(project, *rows) -> None:
    values = ", ".join(f"(timestamp'2020-04-15 {hhmm}:00', {price})" for hhmm, price in rows)
    project.spark.sql(f"insert into {project.schema}.bid values {values}")


def rows(project, table: str):
    """The table's rows as its latest snapshot has them (the session's catalog caches a table)."""
    project.spark.catalog.refreshTable(f"{project.schema}.{table}")
    return project.rows(table)


def same_as_batch(project) -> None:
    """Each streaming table equals its batch twin over the input without the late rows."""
    schema = project.schema
    for name in EMITS:
        rows(project, f"s_{name}__late")
        project.spark.sql(
            f"create or replace table {schema}.kept_{name} using iceberg as select * from {schema}.bid "
            f"except all select bidtime, price from {schema}.s_{name}__late"
        )
    project.dbt("run", "--threads", "2", "-s", *(f"b_{name}" for name in EMITS))
    for name in EMITS:
        assert rows(project, f"s_{name}") == project.rows(f"b_{name}"), name


def writes(project, table: str) -> int:
    """The table's snapshots a stream's batch made (they carry its commit)."""
    name = f"{project.schema}.{table}"
    project.spark.catalog.refreshTable(name)
    found = project.spark.sql(f"select summary from {name}.snapshots").collect()
    return sum(1 for snapshot in found if iceberg_stream.COMMIT_PROPERTY in snapshot["summary"])


def provider(project, table: str) -> str:
    return delta_stream.provider(project.spark, f"{project.schema}.{table}") or ""


def test_streaming_into_iceberg_is_batch_minus_late_and_exactly_once(project, monkeypatch):
    schema = project.schema
    project.spark.sql(f"create database if not exists {schema}")
    project.spark.sql(f"create table {schema}.bid (bidtime timestamp, price int) using iceberg")
    project.write("models/sources.yml", sources_yml("bid", *(f"kept_{name}" for name in EMITS)))
    for name, emit in EMITS.items():
        project.model(f"s_{name}", WINDOWS.format(config=STREAM, emit=emit, source="bid"))
        project.model(f"b_{name}", WINDOWS.format(config="", emit=emit, source=f"kept_{name}"))
    streams = ("--threads", "2", "-s", *(f"s_{name}" for name in EMITS))

    bids(project, ("08:07", 2), ("08:11", 3), ("08:03", 4))
    project.dbt("run", *streams)
    for name in EMITS:  # Iceberg tables, written by the stream's snapshots
        for table in (f"s_{name}", f"s_{name}__late"):
            assert provider(project, table) == "iceberg", table

    # the batch's snapshots are made, then the run dies before its commit record: the staged
    # rows stay, as a kill right after the snapshots leaves them
    bids(project, ("08:25", 2), ("08:05", 9), ("08:14", 1))
    failed = set()
    removed = delta_stream.staging_removed

    def killed_after_commits(fs, location, batch):
        table = location.removesuffix("__late")
        if table in failed:
            removed(fs, location, batch)
        elif location.endswith("__late"):  # the late table's snapshot is the batch's last
            failed.add(table)
            raise StreamFailure(table.rsplit("/", 1)[-1], "injected fault after the Iceberg snapshots", "run again")

    monkeypatch.setattr(delta_stream, "staging_removed", killed_after_commits)
    assert "injected fault after the Iceberg snapshots" in errors(project.dbt("run", *streams, ok=False))
    assert len(failed) == 2
    versions = {name: writes(project, f"s_{name}") for name in EMITS}
    late_versions = {name: writes(project, f"s_{name}__late") for name in EMITS}
    # a snapshot a batch with rows: on_update's MERGEs too, on_window_close's appends, the late row's
    assert versions == {"upd": 2, "eowc": 2} and late_versions == {"upd": 1, "eowc": 1}, (versions, late_versions)
    monkeypatch.undo()
    # the rerun replays the batch: its staged rows are there, and each table has its snapshot
    (upd, eowc) = project.dbt("run", *streams).result
    assert upd.message.startswith("STREAM 1 batch, 3 in") and eowc.message.startswith("STREAM 1 batch, 3 in")
    for name in EMITS:
        assert writes(project, f"s_{name}") == versions[name], name
        assert writes(project, f"s_{name}__late") == late_versions[name], name
        assert [r[1] for r in rows(project, f"s_{name}__late")] == [9], name  # 08:05 after the 08:10 watermark
    same_as_batch(project)
    assert [r[2] for r in rows(project, "s_upd")] == [2, 2, 1]  # 08:00, 08:10 and the open 08:20
    assert [r[2] for r in rows(project, "s_eowc")] == [2, 2]

    # a rebuild beside the live table: the catalog table now reads the new version's Iceberg
    # table, streamed from all input in one batch (08:05 is on time then)
    project.dbt("run", "-s", "s_upd", "--full-refresh")
    project.spark.catalog.refreshTable(f"{schema}.s_upd")  # another session made it
    assert provider(project, "s_upd") == "iceberg"
    location = iceberg_stream.catalog_location(project.spark, f"{schema}.s_upd")
    assert location is not None and location.endswith("/s_upd__v2"), location
    assert [r[2:] for r in rows(project, "s_upd")] == [(3, 15), (2, 4), (1, 2)]
    assert rows(project, "s_upd__late") == []
    # the build's own catalog tables are gone with the swap
    built = [t.name for t in project.spark.catalog.listTables() if t.name.startswith(iceberg_stream.BUILD_PREFIX)]
    assert built == [], built
    # and the stream goes on in the new version
    bids(project, ("08:31", 5))
    project.dbt("run", "-s", "s_upd")
    assert [r[2:] for r in rows(project, "s_upd")] == [(3, 15), (2, 4), (1, 2), (1, 5)]
