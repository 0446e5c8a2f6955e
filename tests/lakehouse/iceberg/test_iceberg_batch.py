"""Batch window views as Iceberg tables (file_format='iceberg'): each build replaces the table in
one commit of its metadata (CREATE OR REPLACE, a new snapshot), so a reader sees the previous
snapshot or the new one whole; dbt-spark's partition_by, tblproperties and location_root apply; a
parquet window view switches to Iceberg by the rename swap, once. An Iceberg input of an
incremental batch window view is read again when it has new snapshots."""

from __future__ import annotations

import json
from datetime import datetime

from tests.support.dbt_projects import errors, sources_yml
from tests.support.lakehouse_checks import dbt_checks_and_readers

REVENUE = """
{{{{ config(materialized='window_view'{config}) }}}}
select window_start, window_end, count(*) as bids, sum(price) as price
from {{{{ window_views.tumble(source('raw', 'bid'), 'bidtime', '10 minutes') }}}}
group by window_start, window_end
"""


def t(hhmm: str) -> datetime:
    return datetime.fromisoformat(f"2020-04-15 {hhmm}")


def bids(project, *rows) -> None:
    values = ", ".join(f"(timestamp'2020-04-15 {hhmm}:00', {price})" for hhmm, price in rows)
    project.spark.sql(f"insert into {project.schema}.bid values {values}")


def source(project, using: str = "parquet") -> None:
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(f"create table {project.schema}.bid (bidtime timestamp, price int) using {using}")
    project.write("models/sources.yml", sources_yml("bid"))
    bids(project, ("08:07", 2), ("08:11", 3), ("08:12", 1))


def snapshots(project, table: str):
    rows = project.spark.sql(f"select snapshot_id from {project.schema}.{table}.snapshots order by committed_at")
    return [r.snapshot_id for r in rows.collect()]


def properties(project, table: str):
    return {r.key: r.value for r in project.spark.sql(f"show tblproperties {project.schema}.{table}").collect()}


def test_a_batch_window_view_is_replaced_in_one_iceberg_commit_a_build(project):
    source(project)
    project.model("revenue", REVENUE.format(config=""))
    project.dbt("run")
    assert "format" not in properties(project, "revenue")  # parquet

    # parquet → Iceberg: the rename swap, once; then every build a CREATE OR REPLACE of the table
    iceberg = ", file_format='iceberg', partition_by=['window_start'], tblproperties={'team': 'auctions'}"
    project.model("revenue", REVENUE.format(config=iceberg))
    project.dbt("run")
    first = [(t("08:00"), t("08:10"), 1, 2), (t("08:10"), t("08:20"), 2, 4)]
    assert project.rows("revenue") == first
    table = properties(project, "revenue")
    assert table["format"].startswith("iceberg/") and table["team"] == "auctions"
    assert table["window_views.execution"] == "batch"
    partitioned = project.spark.sql(f"describe {project.schema}.revenue").collect()
    assert [r.col_name for r in partitioned].count("window_start") == 2  # a column and the partition's

    bids(project, ("08:25", 5))
    project.dbt("run")
    second = [*first, (t("08:20"), t("08:30"), 1, 5)]
    assert project.rows("revenue") == second
    # one snapshot a build, in one table: the one before the new bid holds exactly the first rows
    (before, after) = snapshots(project, "revenue")
    old = project.spark.sql(f"select * from {project.schema}.revenue version as of {before} order by all").collect()
    assert [tuple(r) for r in old] == first
    assert properties(project, "revenue")["team"] == "auctions"
    assert not project.spark.catalog.tableExists(f"{project.schema}.revenue__wv_tmp")
    assert after == int(properties(project, "revenue")["current-snapshot-id"])

    # dbt docs: the row count and the window summary of the Iceberg table
    project.dbt("docs", "generate")
    catalog = json.loads((project.root / "target" / "catalog.json").read_text())
    assert catalog["errors"] is None
    stats = catalog["nodes"]["model.wv_test.revenue"]["stats"]
    assert stats["rows"]["value"] == 3
    assert "windows: tumble(time_col=bidtime, size=10 minutes)" in stats["window_view"]["value"]


def test_location_root_keeps_one_folder_and_refuses_another_tables(project, tmp_path):
    source(project)
    lake = tmp_path / "lake"
    project.model("revenue", REVENUE.format(config=f", file_format='iceberg', location_root='{lake}'"))
    project.dbt("run")
    bids(project, ("08:25", 5))
    project.dbt("run")
    assert project.rows("revenue")[-1] == (t("08:20"), t("08:30"), 1, 5)
    assert len(snapshots(project, "revenue")) == 2
    assert sorted(p.name for p in lake.iterdir()) == ["revenue"]
    assert sorted(p.name for p in (lake / "revenue").iterdir()) == ["data", "metadata"]

    # another tool's Iceberg table in the folder the model would take: named, left as it was
    other = tmp_path / "other"
    project.spark.sql(f"create table {project.schema}.theirs (id bigint) using iceberg location '{other / 'wv'}'")
    project.spark.sql(f"insert into {project.schema}.theirs values (1), (2)")
    project.spark.sql(f"drop table {project.schema}.theirs")  # the catalog forgets it; Iceberg keeps its files
    project.model("wv", REVENUE.format(config=f", file_format='iceberg', location_root='{other}'"))
    result = project.dbt("run", "-s", "wv", ok=False)
    assert (
        f"window_view model 'wv': its folder {other / 'wv'} already holds an Iceberg table that no window view "
        "made (columns: id)" in errors(result)
    )
    assert "fix: move that table elsewhere or set another location_root" in errors(result)
    assert (other / "wv" / "metadata").is_dir()


INCREMENTAL = """
{{ config(materialized='window_view', event_time='window_start', batch_size='day', begin='2020-04-14') }}
select window_start, window_end, count(*) as bids, sum(price) as price
from {{ window_views.tumble(source('raw', 'bid'), 'bidtime', '10 minutes') }}
group by window_start, window_end
"""


def windows(project, table: str):
    rows = project.spark.sql(f"select window_start, window_end, bids, price from {project.schema}.{table} order by 1")
    return [tuple(r) for r in rows.collect()]


def test_an_iceberg_input_with_a_new_snapshot_is_read_again(project):
    # an Iceberg table lists no files to Spark (inputFiles() is empty): its snapshot tells what
    # it holds, so a run after a new snapshot computes, and one with none writes nothing
    source(project, using="iceberg")
    project.model("revenue", INCREMENTAL)
    project.dbt("run")
    first = [(t("08:00"), t("08:10"), 1, 2), (t("08:10"), t("08:20"), 2, 4)]
    assert windows(project, "revenue") == first
    bids(project, ("08:25", 5))
    project.dbt("run")
    assert windows(project, "revenue") == [*first, (t("08:20"), t("08:30"), 1, 5)]
    (node,) = project.dbt("run").result
    assert node.adapter_response["_message"].startswith("0 batch(es) written: no new input since the last run")


def test_readers_tests_contracts_and_show_on_an_iceberg_window_view(project):
    dbt_checks_and_readers(project, "iceberg", REVENUE, source, bids)
