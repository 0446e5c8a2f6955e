"""An Iceberg table as a streaming window view's input: the rows its snapshots append stream as a
folder's files do (stream = batch - late, the late rows in the late table); a snapshot that
deletes or overwrites rows is named with the fix: a batch build, which reads the table as it is
now (a new stream of an Iceberg table replays its history from its oldest snapshot, the delete
too)."""

from __future__ import annotations

import re

from tests.support.dbt_projects import errors, sources_yml
from tests.support.lakehouse_streaming import WINDOWS


def bids(project, table: str, *rows) -> None:
    values = ", ".join(f"(timestamp'2020-04-15 {hhmm}:00', {price})" for hhmm, price in rows)
    project.spark.sql(f"insert into {project.schema}.{table} values {values}")


def kept(project) -> None:
    """The batch twin's input: every bid but the late ones, as an Iceberg table too."""
    schema = project.schema
    project.spark.sql(
        f"create or replace table {schema}.bid_kept using iceberg as select * from {schema}.bid "
        f"except all select bidtime, price from {schema}.rev__late"
    )


def test_an_iceberg_input_streams_its_appends_and_names_a_delete(project):
    schema = project.schema
    project.spark.sql(f"create database if not exists {schema}")
    project.spark.sql(f"create table {schema}.bid (bidtime timestamp, price int) using iceberg")
    project.spark.sql(f"create table {schema}.bid_kept (bidtime timestamp, price int) using iceberg")
    project.write("models/sources.yml", sources_yml("bid", "bid_kept"))
    streaming = "execution='streaming', late_data='table', "
    project.model("rev", WINDOWS.format(emit="on_window_close", config=streaming, source="bid"))
    project.model("rev_batch", WINDOWS.format(emit="on_window_close", config="", source="bid_kept"))

    # two snapshots a run: the stream reads what each appended since its last run
    for delivery in ([("08:07", 2), ("08:11", 3)], [("08:25", 2), ("08:05", 9)]):
        bids(project, "bid", *delivery[:1])
        bids(project, "bid", *delivery[1:])
        (result,) = project.dbt("run", "-s", "rev").result
        assert result.message.startswith("STREAM 1 batch, 2 in"), result.message
        kept(project)
        project.dbt("run", "-s", "rev_batch")
        assert project.rows("rev") == project.rows("rev_batch")
    assert [r[1] for r in project.rows("rev__late")] == [9]  # 08:05 came after the 08:10 watermark
    assert len(project.rows("rev")) == 2

    # a snapshot that deletes rows: named, with the rebuild; the table is as it was
    before = project.rows("rev")
    project.spark.sql(f"delete from {schema}.bid where price = 3")
    text = errors(project.dbt("run", "-s", "rev", ok=False))
    assert re.search(r"an Iceberg input deleted rows in its snapshot \d+; a stream reads the rows", text), text
    assert "fix: build the model in batch, which reads the table as it is now: execution='batch'" in text, text
    assert "Cannot process" not in text and "skip" not in text, text
    assert project.rows("rev") == before
    # a --full-refresh streams the table's history again from its oldest snapshot: the same snapshot
    text = errors(project.dbt("run", "-s", "rev", "--full-refresh", ok=False))
    assert re.search(r"an Iceberg input deleted rows in its snapshot \d+", text), text
    assert project.rows("rev") == before
    # the fix: the same model in batch reads the table as it is now
    project.model("rev", WINDOWS.format(emit="on_window_close", config="", source="bid"))
    project.dbt("run", "-s", "rev")
    # 08:05 and 08:07 in the first window, 08:11 deleted, 08:25's window not yet closed (W = 08:24)
    assert [r[2:] for r in project.rows("rev")] == [(2, 11)], project.rows("rev")
