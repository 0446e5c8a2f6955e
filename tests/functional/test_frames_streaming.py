"""The window forms Spark lacks (docs/frames.md) in streaming over windows: the plugin's rewrite of
a form is ROWS and RANGE frames over the order as written, which the stream keeps state for as it
does for the model's own. Rows delivered out of order over three runs, with ties and NULLs; after
every run each stream (on_window_close, on_update) equals the batch view of the same emit mode
over the rows delivered so far minus the late ones, with state bounded by the frames; batch
on_window_close keeps rows of the on_update build. A form whose rewrite reads each partition
from its start or in reverse is refused at compile time, saying why."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from tests.support.dbt_projects import errors, sources_yml

CONFIG = "materialized='window_view', emit='{emit}', watermark={{'column': 'ts', 'delay': '2 minutes'}}"
# each form in reach, with bounded frames (a running GROUPS frame and a rank: a summary per partition)
FORMS = """select stock, ts, seq, price,
  sum(price) over (partition by stock order by ts groups between unbounded preceding and current row) as g_run,
  rank() over (partition by stock order by ts groups between 1 preceding and current row) as g_rank,
  count(price) over (partition by stock order by ts, seq rows between 2 preceding and 1 following
    exclude current row) as x_rows,
  max(price) over (partition by stock order by ts range between interval 3 minutes preceding
    and interval 1 minute following exclude group) as x_group,
  sum(price) over (partition by stock order by ts range between interval 2 minutes preceding and current row
    exclude ties) as x_ties,
  count(distinct price) over (partition by stock order by ts, seq rows between 3 preceding and current row) as d_rows,
  min(distinct price) over (partition by stock order by ts range between interval 4 minutes preceding and current row)
    as d_min,
  nth_value(price, 2) from first over (partition by stock order by ts, seq rows between 3 preceding and current row)
    as nth2,
  nth_value(price, 1) from last over (partition by stock order by ts, seq rows between 2 preceding and 1 following)
    as last1
from {{ source('raw', '{table}') }}
"""
# a form out of reach (tests/unit/test_frames.py has each, in each run over part of the input)
REFUSED = (
    "nth_value(price, 2) from last over (partition by stock order by ts, seq rows between 3 preceding and current row)",
    "its order reversed (its frame's last row first)",
)
EMITS = {"on_window_close": "close", "on_update": "upd"}


def setup(project) -> None:
    project.spark.sql(f"create database if not exists {project.schema}")
    for table in ("ticks", "ticks_kept"):
        project.spark.sql(
            f"create table {project.schema}.{table} (stock string, ts timestamp, seq int, price double) using parquet"
        )
    project.write("models/sources.yml", sources_yml("ticks", "ticks_kept"))
    for emit, short in EMITS.items():
        stream = "{{ config(" + CONFIG.format(emit=emit) + ", execution='streaming') }}\n"
        batch = "{{ config(" + CONFIG.format(emit=emit) + ") }}\n"
        project.model(f"forms_{short}_stream", stream + FORMS.replace("{table}", "ticks"))
        project.model(f"forms_{short}_batch", batch + FORMS.replace("{table}", "ticks_kept"))
    stream = "{{ config(" + CONFIG.format(emit="on_update") + ", execution='streaming') }}\n"
    project.model("refused", stream + f"select stock, ts, {REFUSED[0]} as c from {{{{ source('raw', 'ticks') }}}}")


def deliveries(rng: random.Random) -> list:
    """Three deliveries in time order, on whole minutes (ties), each with stragglers from the one
    before (late if the watermark passed them), NULL prices and a NULL stock."""
    start = datetime(2024, 1, 1, 9, 0)
    rows = []
    for seq in range(150):
        ts = start + timedelta(minutes=rng.randrange(45))
        price = None if rng.random() < 0.08 else float(rng.randrange(90, 100))
        rows.append((rng.choice(["A", "B", None]), ts, seq, price))
    rows.sort(key=lambda r: r[1])
    batches = [rows[i : i + 50] for i in range(0, 150, 50)]
    for i in range(1, len(batches)):
        stragglers = rng.sample(batches[i - 1], 4)
        batches[i - 1] = [r for r in batches[i - 1] if r not in stragglers]
        batches[i] = stragglers + batches[i]
    return batches


def values(batch: list) -> str:
    return ", ".join(
        f"({'null' if s is None else repr(s)}, timestamp'{ts:%Y-%m-%d %H:%M:%S}', {seq}, {'null' if p is None else p})"
        for s, ts, seq, p in batch
    )


def test_streams_of_the_forms_in_reach_equal_batch_after_every_run(project):
    setup(project)
    streams = [f"forms_{s}_stream" for s in EMITS.values()]
    batches = [f"forms_{s}_batch" for s in EMITS.values()]
    rng = random.Random(3)
    late, state = 0, {}
    for batch in deliveries(rng):
        rng.shuffle(batch)
        project.spark.sql(f"insert into {project.schema}.ticks values {values(batch)}")
        result = project.dbt("run", "-s", *streams)
        late += result.result[0].adapter_response["late_rows"]
        state = {r.node.name: r.adapter_response["state_rows"] for r in result.result}
        # the batch views' input: every row delivered but the late ones
        project.spark.sql(f"truncate table {project.schema}.ticks_kept")
        project.spark.sql(
            f"insert into {project.schema}.ticks_kept select * from {project.schema}.ticks "
            f"except all select stock, ts, seq, price from {project.schema}.forms_close_stream__late"
        )
        project.dbt("run", "-s", *batches)
        for stream, batch_view in zip(streams, batches):
            assert project.rows(stream, "stock, ts, seq") == project.rows(batch_view, "stock, ts, seq"), stream
    assert late > 0, "the stragglers were meant to make some rows late"
    assert len(project.rows("forms_upd_stream")) > 120 and len(project.rows("forms_close_stream")) > 100
    # bounded frames keep the rows they reach back to (and a summary per partition), not the history
    assert all(0 < rows < 60 for rows in state.values()), state
    # on_window_close keeps the rows the watermark closed, with their final values
    closed, updated = (f"select * from {project.schema}.forms_{s}_batch" for s in ("close", "upd"))
    assert project.spark.sql(f"{closed} except all {updated}").count() == 0

    said = errors(project.dbt("compile", "-s", "refused", ok=False))
    assert "window_view model 'refused': `NTH_VALUE(price, 2) FROM LAST OVER (PARTITION BY stock" in said, said
    assert f"rewrites over {REFUSED[1]}" in said and "a stream computes over windows from the rows it keeps" in said
    assert "or compute it in a window_view with execution='batch'" in said and "_wv_" not in said, said
