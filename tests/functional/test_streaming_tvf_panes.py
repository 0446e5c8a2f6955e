"""A window TVF + GROUP BY (FLIP-145's window aggregation) streamed as pane partials
(streaming/tvf_aggregate.py), or a SESSION's as session partials (streaming/session_slicing.py):
the streamed table equals the same SQL run in batch over the input minus the late rows, column
types included (decimal sums and averages), while the state holds panes or open sessions, not
rows."""

from datetime import datetime
from typing import Any, List, Tuple

import pytest
from test_streaming_panes import deliver, ontime, random_deliveries, run

from tests.support.dbt_projects import sources_yml

WINDOWS = {
    "hop": "hop(source('raw', 'bid'), 'bidtime', '4 minutes', '10 minutes', '-1 minute')",
    "cumulate": "cumulate(source('raw', 'bid'), 'bidtime', '3 minutes', '12 minutes', '5 minutes')",
    "session": "session(source('raw', 'bid'), 'bidtime', '5 minutes', partition_by='item')",
}
SELECT = """
select item, window_start, window_end, window_time, sum(price) as price, count(*), max(price) - min(price) as spread,
       avg(price) as mean, count(price) as priced
from {{{{ window_views.{window} }}}}
group by window_start, window_end, window_time, item
"""


def make_project(project, kind: str, emit: str, delay: str = "3 minutes") -> None:
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(
        f"create table {project.schema}.bid (bidtime timestamp, price decimal(10, 2), item string) using parquet"
    )
    project.write("models/sources.yml", sources_yml("bid", "ontime"))
    select = SELECT.format(window=WINDOWS[kind])
    project.model(
        "stream",
        f"{{{{ config(materialized='window_view', execution='streaming', emit='{emit}', "
        f"watermark={{'column': 'bidtime', 'delay': '{delay}'}}) }}}}\n{select}",
    )
    # a view names its columns: `count(*)` as Spark names it, which the stream's column must be too
    batch = select.replace("'bid'", "'ontime'").replace("count(*),", "count(*) as `count(1)`,")
    project.model("batch", "{{ config(materialized='view') }}\n" + batch)


def assert_equals_batch(project, emit: str, watermark: str) -> None:
    schema, spark = project.schema, project.spark
    ontime(project, "stream")
    closed = f" where window_end <= timestamp'{watermark}'" if emit == "on_window_close" else ""
    stream, batch = spark.table(f"{schema}.stream"), spark.sql(f"select * from {schema}.batch{closed}")
    assert [(f.name, f.dataType) for f in stream.schema.fields] == [(f.name, f.dataType) for f in batch.schema.fields]
    assert sorted(map(tuple, stream.collect())) == sorted(map(tuple, batch.collect()))


def deliveries(seed: int, step: float = 0.25) -> List[List[tuple]]:
    """Four batches of 120 rows, about eight a minute (`step` 0.25) or more."""
    return random_deliveries(seed, batches=4, per_batch=120, step=step)


def stream_all(project, emit: str, batches: List[List[tuple]]) -> Tuple[int, Any]:
    """Deliver and stream each batch of rows, checking the table against batch; the late rows
    and the last run's result. The batch view is made after the first run, which makes the late
    table its input (`ontime`) reads."""
    late = 0
    for rows in batches:
        deliver(project, rows, scale=0.25)  # decimal(10, 2) prices
        node = run(project, "stream")
        if not project.spark.catalog.tableExists(f"{project.schema}.batch"):
            ontime(project, "stream")
            project.dbt("run", "-s", "batch")
        late += node.adapter_response["late_rows"]
        assert_equals_batch(project, emit, node.adapter_response["watermark"])
    return late, node


@pytest.mark.parametrize(
    "kind, emit",
    [("hop", "on_update"), ("hop", "on_window_close"), ("cumulate", "on_update"), ("cumulate", "on_window_close")],
)
def test_random_rows_stream_as_the_batch_sql(project, kind, emit):
    make_project(project, kind, emit)
    late, node = stream_all(project, emit, deliveries(seed=len(kind) + len(emit)))
    assert late > 0
    # the state is panes of open windows (three items x a few panes), not the rows
    assert 0 < node.adapter_response["state_rows"] <= 3 * 12


# SESSION gap 5 minutes by item, watermark delay 10 minutes. 1: A's rows make two open sessions
# (08:01-08:02, 08:10), B's one (08:13-08:15); W 08:05. 2: A 08:06 is after W, so not late, and
# within the gap of both of A's sessions, which it bridges into one; A 08:04 is late; C 08:30
# moves W to 08:20, which closes A's. 3: D 09:00 closes B's and C's.
SESSION_DELIVERIES = [
    [("08:01", 1, "A"), ("08:02", 2, "A"), ("08:10", 3, "A"), ("08:13", 4, "B"), ("08:15", 5, "B")],
    [("08:06", 6, "A"), ("08:04", 7, "A"), ("08:16", 8, "B"), ("08:30", 9, "C")],
    [("09:00", 1, "D")],
]


@pytest.mark.parametrize("emit", ["on_window_close", "on_update"])
def test_sessions_keep_one_partial_row_each_and_a_bridging_row_merges_two(project, emit):
    make_project(project, "session", emit, delay="10 minutes")
    kept, late = [], 0
    for rows in SESSION_DELIVERIES:
        deliver(project, [(f"2020-04-15 {hhmm}:00", price, item) for hhmm, price, item in rows])
        node = run(project, "stream")
        if not project.spark.catalog.tableExists(f"{project.schema}.batch"):
            ontime(project, "stream")
            project.dbt("run", "-s", "batch")
        kept.append(node.adapter_response["state_rows"])
        late += node.adapter_response["late_rows"]
        assert_equals_batch(project, emit, node.adapter_response["watermark"])
    # the open sessions, not their rows (5, 6 and 3 rows)
    assert kept == [3, 2, 1]
    assert late == 1
    a = project.spark.sql(
        f"select window_start, window_end, `count(1)` from {project.schema}.stream where item = 'A'"
    ).collect()
    assert [tuple(r) for r in a] == [(datetime(2020, 4, 15, 8, 1), datetime(2020, 4, 15, 8, 15), 4)]
