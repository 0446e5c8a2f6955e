"""A streaming keyed Top-N into a Delta table (file_format='delta'): each batch replaces the
rows of the keys whose top changed in one MERGE, so the table equals the same model in batch
over the input minus the late rows after every run, and a batch replayed after its commits
(Delta's txnAppId / txnVersion, set for the MERGE) adds no second commit."""

from __future__ import annotations

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.storage import delta_stream
from tests.support.dbt_projects import errors, sources_yml

TOP2 = """
{{{{ config(materialized='window_view', {config}emit='on_update',
            watermark={{'column': 'bidtime', 'delay': '1 minute'}}) }}}}
select * from (
  select *, row_number() over (partition by auction order by price desc, bidtime) as r
  from {{{{ source('raw', '{source}') }}}}
) where r <= 2
"""
STREAM = "execution='streaming', file_format='delta', late_data='table', "


def bids(project, *rows) -> None:
    values = ", ".join(f"(timestamp'2020-04-15 {hhmm}:00', {auction}, {price})" for hhmm, auction, price in rows)
    project.spark.sql(f"insert into {project.schema}.bid values {values}")


def same_as_batch(project) -> None:
    """The streaming table equals its batch twin over the input without the late rows."""
    schema = project.schema
    project.spark.sql(
        f"create or replace table {schema}.kept using delta as select * from {schema}.bid "
        f"except all select bidtime, auction, price from {schema}.s_top__late"
    )
    project.dbt("run", "-s", "b_top")
    assert project.rows("s_top") == project.rows("b_top")


def writes(project, table: str) -> int:
    """The table's Delta commits that wrote rows (a run also sets its table properties)."""
    found = project.spark.sql(f"describe history {project.schema}.{table}").collect()
    return sum(1 for commit in found if commit["operation"] in ("WRITE", "MERGE"))


def test_a_streaming_top_n_into_delta_is_batch_minus_late_and_exactly_once(project, monkeypatch):
    schema = project.schema
    project.spark.sql(f"create database if not exists {schema}")
    project.spark.sql(f"create table {schema}.bid (bidtime timestamp, auction int, price int) using delta")
    project.write("models/sources.yml", sources_yml("bid", "kept"))
    project.model("s_top", TOP2.format(config=STREAM, source="bid"))
    project.model("b_top", TOP2.format(config="", source="kept"))

    bids(project, ("08:07", 1, 2), ("08:11", 1, 3), ("08:03", 2, 4), ("08:12", 1, 1))
    project.dbt("run", "-s", "s_top")
    assert delta_stream.provider(project.spark, f"{schema}.s_top") == "delta"
    same_as_batch(project)

    # auction 1's top changes, auction 3 is new, auction 2 is untouched, 08:01 is late; the
    # batch's commits are made, then the run dies before its commit record
    bids(project, ("08:25", 1, 9), ("08:21", 3, 5), ("08:01", 2, 7))
    failed = []
    removed = delta_stream.staging_removed

    def killed_after_commits(fs, location, batch):
        if failed:
            removed(fs, location, batch)
        elif location.endswith("__late"):  # the late table's commit is the batch's last
            failed.append(location)
            raise StreamFailure("s_top", "injected fault after the Delta commits", "run again")

    monkeypatch.setattr(delta_stream, "staging_removed", killed_after_commits)
    assert "injected fault after the Delta commits" in errors(project.dbt("run", "-s", "s_top", ok=False))
    versions = writes(project, "s_top"), writes(project, "s_top__late")
    monkeypatch.undo()
    (run,) = project.dbt("run", "-s", "s_top").result
    assert run.message.startswith("STREAM 1 batch, 3 in"), run.message
    assert (writes(project, "s_top"), writes(project, "s_top__late")) == versions
    assert [r[2] for r in project.rows("s_top__late")] == [7]
    same_as_batch(project)

    bids(project, ("08:30", 3, 8), ("08:31", 3, 1), ("08:32", 2, 1))
    project.dbt("run", "-s", "s_top")
    same_as_batch(project)
    assert sorted((r[1], r[2]) for r in project.rows("s_top")) == [(1, 3), (1, 9), (2, 1), (2, 4), (3, 5), (3, 8)]
