"""Batch window views as Delta tables (file_format='delta'): each build replaces the table in one
commit of its log (CREATE OR REPLACE), so a reader sees the previous version or the new one
whole, and the history shows one version a build; dbt-spark's partition_by, tblproperties and
location_root apply; a parquet window view switches to Delta by the rename swap, once."""

from __future__ import annotations

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


def source(project) -> None:
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(f"create table {project.schema}.bid (bidtime timestamp, price int) using parquet")
    project.write("models/sources.yml", sources_yml("bid"))
    bids(project, ("08:07", 2), ("08:11", 3), ("08:12", 1))


def detail(project, table: str):
    return project.spark.sql(f"describe detail {project.schema}.{table}").collect()[0]


def history(project, table: str):
    rows = project.spark.sql(f"describe history {project.schema}.{table}").collect()
    return [(r.version, r.operation) for r in sorted(rows, key=lambda r: r.version)]


def test_a_batch_window_view_is_replaced_in_one_delta_commit_a_build(project):
    source(project)
    project.model("revenue", REVENUE.format(config=""))
    project.dbt("run")
    assert detail(project, "revenue").format == "parquet"

    # parquet → Delta: the rename swap, once; then every build a CREATE OR REPLACE of the table
    delta = ", file_format='delta', partition_by=['window_start'], tblproperties={'team': 'auctions'}"
    project.model("revenue", REVENUE.format(config=delta))
    project.dbt("run")
    first = [(t("08:00"), t("08:10"), 1, 2), (t("08:10"), t("08:20"), 2, 4)]
    assert project.rows("revenue") == first
    table = detail(project, "revenue")
    assert (table.format, table.partitionColumns) == ("delta", ["window_start"])
    assert table.properties["team"] == "auctions"
    assert table.properties["window_views.execution"] == "batch"

    bids(project, ("08:25", 5))
    project.dbt("run")  # --full-refresh is the same build: a batch build always reads all input
    second = [*first, (t("08:20"), t("08:30"), 1, 5)]
    assert project.rows("revenue") == second
    assert history(project, "revenue") == [(0, "CREATE TABLE AS SELECT"), (1, "CREATE OR REPLACE TABLE AS SELECT")]
    # each version is one build whole: the one before the new bid holds exactly the first rows
    before = project.spark.sql(f"select * from {project.schema}.revenue version as of 0 order by all").collect()
    assert [tuple(r) for r in before] == first
    assert detail(project, "revenue").properties["team"] == "auctions"
    assert not project.spark.catalog.tableExists(f"{project.schema}.revenue__wv_tmp")


def test_location_root_keeps_one_folder_and_its_log(project, tmp_path):
    source(project)
    lake = tmp_path / "lake"
    project.model("revenue", REVENUE.format(config=f", file_format='delta', location_root='{lake}'"))
    project.dbt("run")
    bids(project, ("08:25", 5))
    project.dbt("run")
    assert detail(project, "revenue").location.removeprefix("file:") == str(lake / "revenue")
    assert [op for _, op in history(project, "revenue")][-1] == "CREATE OR REPLACE TABLE AS SELECT"
    assert project.rows("revenue")[-1] == (t("08:20"), t("08:30"), 1, 5)
    assert sorted(p.name for p in lake.iterdir()) == ["revenue"]

    # the metastore lost the table, its folder kept: the window view's own table is replaced
    project.spark.sql(f"drop table {project.schema}.revenue")
    project.dbt("run")
    assert len(history(project, "revenue")) == 3
    assert project.rows("revenue")[-1] == (t("08:20"), t("08:30"), 1, 5)


def test_a_delta_table_another_tool_left_in_the_folder(project, tmp_path):
    source(project)
    lake = tmp_path / "lake"
    project.spark.range(3).write.format("delta").save(str(lake / "revenue"))
    project.model("revenue", REVENUE.format(config=f", file_format='delta', location_root='{lake}'"))
    result = project.dbt("run", ok=False)
    assert (
        f"window_view model 'revenue': its folder {lake / 'revenue'} already holds a Delta table that no window "
        "view made (columns: id)" in errors(result)
    )
    assert "fix: move that table elsewhere or set another location_root" in errors(result)
    kept = project.spark.read.format("delta").load(str(lake / "revenue"))
    assert sorted(r.id for r in kept.collect()) == [0, 1, 2]


def test_readers_tests_contracts_and_show_on_a_delta_window_view(project):
    dbt_checks_and_readers(project, "delta", REVENUE, source, bids)
