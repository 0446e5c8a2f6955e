"""Streaming window_aggregate (window slicing): the state is per-pane partial aggregates, and the
streamed table equals the batch window_aggregate over the same input minus the late rows
(on_window_close: the windows the watermark closed). FLIP-145's bids delivered out of order, and
random rows with late ones, offsets and times before 1970."""

import random
from datetime import datetime, timedelta
from typing import List, Sequence

import pytest

from tests.support.dbt_projects import errors, sources_yml

EMITS = ["on_update", "on_window_close"]
WINDOWS = {
    "tumble": "{'kind': 'tumble', 'time_col': 'bidtime', 'size': '10 minutes'}",
    "hop": "{'kind': 'hop', 'time_col': 'bidtime', 'size': '10 minutes', 'slide': '4 minutes'}",
    "cumulate": "{'kind': 'cumulate', 'time_col': 'bidtime', 'size': '10 minutes', 'step': '2 minutes'}",
}
MEASURES = (
    "{'price': 'sum(price)', 'bids': 'count(*)', 'top': 'max(price)', 'low': 'min(price) + 0', "
    "'mean': 'avg(price)', 'prices': '%s'}"
)


def measures(window: str) -> str:
    """HLL sketches merged across panes for HOP and CUMULATE; not for TUMBLE, whose stream would
    keep rows for approx_count_distinct (its batch estimates with HLL++)."""
    return MEASURES % ("count(price)" if "'tumble'" in window else "approx_count_distinct(price)")


COLUMNS = "item, window_start, window_end, window_time, price, bids, top, low, mean, prices"
# FLIP-145's Bid table, delivered in three appends, out of order; (08:03, 9, 'L') arrives after
# the watermark (08:10) closed its first window
DELIVERIES = [
    [("08:07", 2, "A"), ("08:05", 4, "C")],
    [("08:11", 3, "B"), ("08:09", 5, "D")],
    [("08:13", 1, "E"), ("08:17", 6, "F"), ("08:03", 9, "L"), ("08:10", 7, "A"), ("08:21", 2, "C")],
]


def make_project(project, window: str, emit: str, delay: str = "1 minute") -> None:
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(f"create table {project.schema}.bid (bidtime timestamp, price int, item string) using parquet")
    project.write("models/sources.yml", sources_yml("bid", "ontime"))

    def aggregate(source: str) -> str:
        return f"window_views.window_aggregate(source('raw', '{source}'), {window}, {measures(window)}, ['item'])"

    project.model(
        "panes",
        f"""
        {{{{ config(materialized='window_view', execution='streaming', emit='{emit}',
                    watermark={{'column': 'bidtime', 'delay': '{delay}'}}) }}}}
        select * from {{{{ {aggregate("bid")} }}}}
        """,
    )
    # the batch window_aggregate over what the stream did not put aside as late
    project.model("batch", f"{{{{ config(materialized='view') }}}}\nselect * from {{{{ {aggregate('ontime')} }}}}")


def deliver(project, rows: Sequence[tuple], scale: float = 1) -> None:
    """Append `rows` (time, price or 'NULL', item) to the input, each price times `scale`."""
    values = ", ".join(
        f"(timestamp'{ts}', {price if price == 'NULL' else price * scale}, '{item}')" for ts, price, item in rows
    )
    project.spark.sql(f"insert into {project.schema}.bid values {values}")


def run(project, model: str = "panes"):
    (node,) = project.dbt("run", "-s", model).result
    return node


def ontime(project, model: str = "panes") -> None:
    """The input the stream did not put aside as late."""
    schema = project.schema
    project.spark.sql(
        f"create or replace view {schema}.ontime as select bidtime, price, item from {schema}.bid "
        f"except all select bidtime, price, item from {schema}.{model}__late"
    )


def assert_equals_batch(project, emit: str, watermark: str) -> None:
    schema = project.schema
    ontime(project)
    closed = f" where window_end <= timestamp'{watermark}'" if emit == "on_window_close" else ""
    stream = project.spark.sql(f"select {COLUMNS} from {schema}.panes").collect()
    batch = project.spark.sql(f"select {COLUMNS} from {schema}.batch{closed}").collect()
    assert sorted(map(tuple, stream)) == sorted(map(tuple, batch))


@pytest.mark.parametrize("emit", EMITS)
@pytest.mark.parametrize("kind", sorted(WINDOWS))
def test_flip145_bids_stream_as_batch(project, kind, emit):
    make_project(project, WINDOWS[kind], emit)
    late = 0
    for i, rows in enumerate(DELIVERIES):
        deliver(project, [(f"2020-04-15 {hhmm}:00", price, item) for hhmm, price, item in rows])
        node = run(project)
        if i == 0:
            ontime(project)
            project.dbt("run", "-s", "batch")  # a view over `ontime`, which each check redefines
        late += node.adapter_response["late_rows"]
        assert_equals_batch(project, emit, node.adapter_response["watermark"])
    assert late == 1


RANDOM_WINDOWS = {
    "hop": "{'kind': 'hop', 'time_col': 'bidtime', 'size': '10 minutes', 'slide': '4 minutes', 'offset': '-1 minute'}",
    "cumulate": "{'kind': 'cumulate', 'time_col': 'bidtime', 'size': '12 minutes', 'step': '3 minutes', 'offset': '5 minutes'}",
    "tumble": "{'kind': 'tumble', 'time_col': 'bidtime', 'size': '7 minutes', 'offset': '2 minutes'}",
}


def random_deliveries(seed: int, batches: int = 4, per_batch: int = 40, step: float = 1.5) -> List[List[tuple]]:
    """Rows around 1970-01-01 (before and after the epoch), three items, some NULL prices, each
    up to 15 minutes behind the stream (which moves up to `step` minutes a row): with a 3-minute
    delay, some arrive late."""
    rng = random.Random(seed)
    base = datetime(1969, 12, 31, 23, 30)
    deliveries, clock = [], 0.0
    for _ in range(batches):
        rows = []
        for _ in range(per_batch):
            clock += rng.uniform(0, step)
            ts = base + timedelta(minutes=clock - rng.uniform(0, 15), seconds=rng.randrange(60))
            price = "NULL" if rng.random() < 0.1 else rng.randrange(1, 50)
            rows.append((ts.strftime("%Y-%m-%d %H:%M:%S"), price, rng.choice("ABC")))
        deliveries.append(rows)
    return deliveries


@pytest.mark.parametrize(
    "kind, emit",
    [("hop", "on_update"), ("hop", "on_window_close"), ("cumulate", "on_window_close"), ("tumble", "on_update")],
)
def test_random_rows_with_late_ones_stream_as_batch(project, kind, emit):
    make_project(project, RANDOM_WINDOWS[kind], emit, delay="3 minutes")
    late, delivered = 0, 0
    for i, rows in enumerate(random_deliveries(seed=len(kind) * 10 + len(emit))):
        deliver(project, rows)
        delivered += len(rows)
        node = run(project)
        if i == 0:
            ontime(project)
            project.dbt("run", "-s", "batch")
        late += node.adapter_response["late_rows"]
        assert_equals_batch(project, emit, node.adapter_response["watermark"])
    assert late > 0
    # the state is panes of open windows (at most three items x a few panes), not the rows
    assert 0 < node.adapter_response["state_rows"] <= 3 * 10


def test_window_aggregate_over_a_cte_is_refused_at_compile_time(project):
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(f"create table {project.schema}.bid (bidtime timestamp, price int, item string) using parquet")
    project.write("models/sources.yml", sources_yml("bid"))
    project.model(
        "over_cte",
        """
        {{ config(materialized='window_view', execution='streaming',
                  watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
        with priced as (select * from {{ source('raw', 'bid') }} where price > 0)
        select * from {{ window_views.window_aggregate('priced',
            {'kind': 'hop', 'time_col': 'bidtime', 'size': '10 minutes', 'slide': '5 minutes'}, {'n': 'count(*)'}) }}
        """,
    )
    message = errors(project.dbt("compile", "-s", "over_cte", ok=False))
    assert "window_view model 'over_cte': window_aggregate reads priced (a CTE)" in message
    assert "fix: pass ref() or source() to window_aggregate" in message
