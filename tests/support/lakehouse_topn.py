"""One scenario for a streaming keyed Top-N into a table format (Delta, Iceberg): each batch
replaces the rows of the keys whose top changed in one MERGE, so the table equals the same model
in batch over the input minus the late rows after every run, and a batch replayed after its
commits adds no second one. Each format's test gives its name and how to count its writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Tuple

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


@dataclass(frozen=True)
class TopNFormat:
    """A table format as the scenario uses it."""

    name: str  # file_format
    commits: str  # what its writes are called, in the injected fault's message
    writes: Callable[[Any, str], int]  # (project, table): the writes a stream's batches made
    versions: Optional[Tuple[int, int]] = None  # the writes (table, late table) before the replay, if checked


def rows(project: Any, table: str) -> Any:
    """The table's rows as its latest version has them (a session's catalog may cache a table)."""
    project.spark.catalog.refreshTable(f"{project.schema}.{table}")
    return project.rows(table)


def _bids(project: Any, *values: Tuple[str, int, int]) -> None:
    listed = ", ".join(f"(timestamp'2020-04-15 {hhmm}:00', {auction}, {price})" for hhmm, auction, price in values)
    project.spark.sql(f"insert into {project.schema}.bid values {listed}")


def _same_as_batch(project: Any, fmt: TopNFormat) -> None:
    """The streaming table equals its batch twin over the input without the late rows."""
    schema = project.schema
    rows(project, "s_top__late")
    project.spark.sql(
        f"create or replace table {schema}.kept using {fmt.name} as select * from {schema}.bid "
        f"except all select bidtime, auction, price from {schema}.s_top__late"
    )
    project.dbt("run", "-s", "b_top")
    assert rows(project, "s_top") == rows(project, "b_top")


def top_n_scenario(project: Any, monkeypatch: Any, fmt: TopNFormat) -> None:
    schema = project.schema
    project.spark.sql(f"create database if not exists {schema}")
    project.spark.sql(f"create table {schema}.bid (bidtime timestamp, auction int, price int) using {fmt.name}")
    project.write("models/sources.yml", sources_yml("bid", "kept"))
    stream = f"execution='streaming', file_format='{fmt.name}', late_data='table', "
    project.model("s_top", TOP2.format(config=stream, source="bid"))
    project.model("b_top", TOP2.format(config="", source="kept"))

    _bids(project, ("08:07", 1, 2), ("08:11", 1, 3), ("08:03", 2, 4), ("08:12", 1, 1))
    project.dbt("run", "-s", "s_top")
    assert delta_stream.provider(project.spark, f"{schema}.s_top") == fmt.name
    _same_as_batch(project, fmt)

    # auction 1's top changes, auction 3 is new, auction 2 is untouched, 08:01 is late; the
    # batch's commits are made, then the run dies before its commit record
    _bids(project, ("08:25", 1, 9), ("08:21", 3, 5), ("08:01", 2, 7))
    failed = []
    removed = delta_stream.staging_removed
    fault = f"injected fault after the {fmt.commits}"

    def killed_after_commits(fs: Any, location: str, batch: Any) -> None:
        if failed:
            removed(fs, location, batch)
        elif location.endswith("__late"):  # the late table's commit is the batch's last
            failed.append(location)
            raise StreamFailure("s_top", fault, "run again")

    monkeypatch.setattr(delta_stream, "staging_removed", killed_after_commits)
    assert fault in errors(project.dbt("run", "-s", "s_top", ok=False))
    versions = fmt.writes(project, "s_top"), fmt.writes(project, "s_top__late")
    if fmt.versions is not None:
        assert versions == fmt.versions, versions  # one MERGE a batch, the late row's append
    monkeypatch.undo()
    (run,) = project.dbt("run", "-s", "s_top").result
    assert run.message.startswith("STREAM 1 batch, 3 in"), run.message
    assert (fmt.writes(project, "s_top"), fmt.writes(project, "s_top__late")) == versions
    assert [r[2] for r in rows(project, "s_top__late")] == [7]
    _same_as_batch(project, fmt)

    _bids(project, ("08:30", 3, 8), ("08:31", 3, 1), ("08:32", 2, 1))
    project.dbt("run", "-s", "s_top")
    _same_as_batch(project, fmt)
    assert sorted((r[1], r[2]) for r in rows(project, "s_top")) == [(1, 3), (1, 9), (2, 1), (2, 4), (3, 5), (3, 8)]
