"""execution='streaming': rows appended to a source between `dbt run`s, every intermediate table
asserted, for each window kind and both emit modes (FLIP-145's Bid rows, delivered out of order)."""

from datetime import datetime
from typing import List, Sequence

import pytest

from conftest import errors

SOURCES = """
version: 2
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: bid
"""


def t(hhmm: str) -> datetime:
    h, m = hhmm.split(":")
    return datetime(2020, 4, 15, int(h), int(m))


def make_source(project) -> None:
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(
        f"create table {project.schema}.bid (bidtime timestamp, price int, item string) using parquet"
    )
    project.write("models/sources.yml", SOURCES)


def deliver(project, rows: Sequence[tuple]) -> None:
    """Append rows to the source as a new file, as an upstream loader would."""
    values = ", ".join(f"(timestamp'2020-04-15 {hhmm}:00', {price}, '{item}')" for hhmm, price, item in rows)
    project.spark.sql(f"insert into {project.schema}.bid values {values}")


def window_view(project, name: str, emit: str, select: str, late_data: str = "table") -> None:
    project.model(
        name,
        f"""
        {{{{ config(materialized='window_view', execution='streaming', emit='{emit}', late_data='{late_data}',
                    watermark={{'column': 'bidtime', 'delay': '1 minute'}}) }}}}
        {select}
        """,
    )


def run(project, name: str):
    result = project.dbt("run", "-s", name)
    (node,) = result.result
    return node


TUMBLE_SUM = """
select window_start, window_end, sum(price) as price, count(*) as bids
from {{ window_views.tumble(source('raw', 'bid'), 'bidtime', '10 minutes') }}
group by window_start, window_end
"""


def test_tumble_on_window_close(project):
    make_source(project)
    window_view(project, "tumble_eowc", "on_window_close", TUMBLE_SUM)
    deliver(project, [("08:07", 2, "A"), ("08:05", 4, "C")])
    node = run(project, "tumble_eowc")
    assert node.message == "STREAM 1 batch, 2 in, 0 out, 0 late, watermark 2020-04-15 08:06:00"
    assert project.rows("tumble_eowc") == []
    # 08:11 moves the watermark to 08:10: [08:00, 08:10) closes
    deliver(project, [("08:11", 3, "B"), ("08:09", 5, "D")])
    node = run(project, "tumble_eowc")
    assert project.rows("tumble_eowc") == [(t("8:00"), t("8:10"), 11, 3)]
    assert node.adapter_response["late_rows"] == 0
    # 08:08 arrives after its window closed: late, kept with its columns
    deliver(project, [("08:08", 9, "L"), ("08:13", 1, "E"), ("08:17", 6, "F"), ("08:21", 1, "G")])
    node = run(project, "tumble_eowc")
    assert node.message == "STREAM 1 batch, 4 in, 1 out, 1 late, watermark 2020-04-15 08:20:00"
    assert project.rows("tumble_eowc") == [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 10, 3)]
    late = project.spark.sql(f"select bidtime, price, item, _batch_id from {project.schema}.tumble_eowc__late").collect()
    assert [tuple(r)[:3] for r in late] == [(t("8:08"), 9, "L")]
    # nothing new: nothing changes
    node = run(project, "tumble_eowc")
    assert node.message.startswith("STREAM 0 batches, 0 in, 0 out, 0 late")
    assert project.rows("tumble_eowc") == [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 10, 3)]


def test_tumble_on_update(project):
    make_source(project)
    window_view(project, "tumble_upd", "on_update", TUMBLE_SUM)
    deliver(project, [("08:07", 2, "A"), ("08:05", 4, "C")])
    run(project, "tumble_upd")
    assert project.rows("tumble_upd") == [(t("8:00"), t("8:10"), 6, 2)]
    deliver(project, [("08:11", 3, "B"), ("08:09", 5, "D")])
    run(project, "tumble_upd")
    assert project.rows("tumble_upd") == [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 3, 1)]
    deliver(project, [("08:08", 9, "L"), ("08:13", 1, "E"), ("08:17", 6, "F")])
    node = run(project, "tumble_upd")
    assert node.adapter_response["late_rows"] == 1
    assert project.rows("tumble_upd") == [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 10, 3)]
