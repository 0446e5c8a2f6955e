"""One scenario for a streaming keyed Top-N into a table format (Delta, Iceberg): each batch
replaces the rows of the keys whose top changed in one MERGE, so the table equals the same model
in batch over the input minus the late rows after every run, and a batch replayed after its
commits adds no second one. Each format's test gives its LakeFormat (lakehouse_streaming.py)."""

from __future__ import annotations

from typing import Any, Optional, Tuple

from dbt.adapters.window_views.storage import delta_stream
from tests.support.dbt_projects import errors, sources_yml
from tests.support.lakehouse_streaming import LakeFormat, die_after_commits, insert, rows, streaming

TOP2 = """
{{{{ config(materialized='window_view', {config}emit='on_update',
            watermark={{'column': 'bidtime', 'delay': '1 minute'}}) }}}}
select * from (
  select *, row_number() over (partition by auction order by price desc, bidtime) as r
  from {{{{ source('raw', '{source}') }}}}
) where r <= 2
"""


def _same_as_batch(project: Any, fmt: LakeFormat) -> None:
    """The streaming table equals its batch twin over the input without the late rows."""
    schema = project.schema
    rows(project, "s_top__late")
    project.spark.sql(
        f"create or replace table {schema}.kept using {fmt.name} as select * from {schema}.bid "
        f"except all select bidtime, auction, price from {schema}.s_top__late"
    )
    project.dbt("run", "-s", "b_top")
    assert rows(project, "s_top") == rows(project, "b_top")


def top_n_scenario(project: Any, monkeypatch: Any, fmt: LakeFormat, versions: Optional[Tuple[int, int]] = None) -> None:
    """`versions`: the writes (table, late table) before the replay, where the format's test fixes them."""
    schema = project.schema
    project.spark.sql(f"create database if not exists {schema}")
    project.spark.sql(f"create table {schema}.bid (bidtime timestamp, auction int, price int) using {fmt.name}")
    project.write("models/sources.yml", sources_yml("bid", "kept"))
    project.model("s_top", TOP2.format(config=streaming(fmt), source="bid"))
    project.model("b_top", TOP2.format(config="", source="kept"))

    insert(project, "bid", ("08:07", 1, 2), ("08:11", 1, 3), ("08:03", 2, 4), ("08:12", 1, 1))
    project.dbt("run", "-s", "s_top")
    assert delta_stream.provider(project.spark, f"{schema}.s_top") == fmt.name
    _same_as_batch(project, fmt)

    # auction 1's top changes, auction 3 is new, auction 2 is untouched, 08:01 is late; the
    # batch's commits are made, then the run dies before its commit record
    insert(project, "bid", ("08:25", 1, 9), ("08:21", 3, 5), ("08:01", 2, 7))
    fault = f"injected fault after the {fmt.commits}"
    die_after_commits(monkeypatch, fault)
    assert fault in errors(project.dbt("run", "-s", "s_top", ok=False))
    found = fmt.writes(project, "s_top"), fmt.writes(project, "s_top__late")
    if versions is not None:
        assert found == versions, found  # one MERGE a batch, the late row's append
    monkeypatch.undo()
    (run,) = project.dbt("run", "-s", "s_top").result
    assert run.message.startswith("STREAM 1 batch, 3 in"), run.message
    assert (fmt.writes(project, "s_top"), fmt.writes(project, "s_top__late")) == found
    assert [r[2] for r in rows(project, "s_top__late")] == [7]
    _same_as_batch(project, fmt)

    insert(project, "bid", ("08:30", 3, 8), ("08:31", 3, 1), ("08:32", 2, 1))
    project.dbt("run", "-s", "s_top")
    _same_as_batch(project, fmt)
    assert sorted((r[1], r[2]) for r in rows(project, "s_top")) == [(1, 3), (1, 9), (2, 1), (2, 4), (3, 5), (3, 8)]
