"""The window forms Spark lacks (docs/frames.md) in runs over part of the input: an incremental
batch window view (batch_size) computes each day from the day widened by its frames' reach, and
the plugin's rewrite of a form is ROWS and RANGE frames that reach as the model's own do. On rows
with ties and NULLs in the time, NULL values and frames crossing midnight, the table after each
run equals its full build, and a run under dbt's time filter (--sample) the full build's rows
of its range; the forms whose rewrite reads each partition from its start or in reverse, or
computes a set in a subquery, are refused at compile time, saying why."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from tests.support.dbt_projects import errors

BEGIN = "2024-01-01"
BATCHES = f"event_time='ts', batch_size='day', begin='{BEGIN}', lookback=var('lookback', 1)"
# each form in reach; the RANGE frames cross midnight for the rows near it
FORMS = """select id, k, ts, v,
  sum(v) over (partition by k order by ts groups between unbounded preceding and current row) as g_run,
  rank() over (partition by k order by ts groups between 1 preceding and current row) as g_rank,
  count(v) over (partition by k order by ts, id rows between 2 preceding and 1 following exclude current row) as x_rows,
  sum(v) over (partition by k order by ts, id rows between unbounded preceding and current row exclude current row)
    as x_before,
  max(v) over (partition by k order by ts range between interval 3 hours preceding and interval 1 hour following
    exclude group) as x_group,
  avg(v) over (partition by k order by ts range between interval 2 hours preceding and current row exclude ties)
    as x_ties,
  count(distinct v % 5) over (partition by k order by ts, id rows between 3 preceding and current row) as d_rows,
  count(distinct v) filter (where v > 0) over (partition by k order by ts range between interval 4 hours preceding
    and current row) as d_range,
  min(distinct v) over (partition by k order by ts range between interval 5 hours preceding and current row) as d_min,
  nth_value(v, 2) from first over (partition by k order by ts, id rows between 3 preceding and current row) as nth2,
  nth_value(v, 1) from last ignore nulls over (partition by k order by ts, id rows between 2 preceding and
    1 following) as last1,
  sum(v) over (partition by k order by ts, id rows between 1 preceding and current row exclude no others) as others
from {{ ref('events') }}
"""
# a form out of reach (tests/unit/test_frames.py has each, in each run over part of the input)
REFUSED = (
    "sum(v) over (partition by k order by ts groups between 1 preceding and current row)",
    "the dense rank of its rows' peer groups from the partition's start",
)


def config(extra: str = "") -> str:
    return "{{ config(materialized='window_view'" + (", " + extra if extra else "") + ") }}\n"


def events(rng: random.Random, n: int) -> str:
    """Rows from the evening before the first batch to its third day, on the half hour (ties),
    3 keys, some NULL values, one NULL time (in every batch's prefix)."""
    base = datetime(2023, 12, 31, 20, 0)
    lines = ["id,k,ts,v"]
    for i in range(n):
        ts = base + timedelta(minutes=30 * rng.randrange(3 * 48 + 8))
        v = "" if rng.random() < 0.08 else str(rng.randint(-9, 20))
        lines.append(f"{i},{rng.choice('abc')},{ts:%Y-%m-%d %H:%M:%S},{v}")
    lines.append(f"{n},a,,4")
    return "\n".join(lines) + "\n"


def assert_equal_full(project) -> None:
    # the NULL-time row's output is the first batch's (it sorts before every time)
    owned = f"ts >= '{BEGIN}' or ts is null"
    columns = ", ".join(project.columns("full_forms"))  # the incremental table adds its batch column
    inc, full = (f"select {columns} from {project.schema}.{m} where {owned}" for m in ("inc_forms", "full_forms"))
    only_inc = project.spark.sql(f"{inc} except all {full}").collect()
    only_full = project.spark.sql(f"{full} except all {inc}").collect()
    assert not only_inc and not only_full, f"only incremental {only_inc[:3]}, only full {only_full[:3]}"
    assert project.spark.sql(inc).count() > 120


def test_incremental_batches_of_the_forms_in_reach_equal_the_full_build(project):
    project.seed("events", events(random.Random(5), 170))
    project.write(
        "seeds/events.yml",
        "seeds:\n  - name: events\n    config:\n      event_time: ts\n"
        "      column_types: {id: int, k: string, ts: timestamp, v: int}\n",
    )
    project.model("inc_forms", config(BATCHES) + FORMS)
    project.model("full_forms", config() + FORMS)
    project.model("refused", config(BATCHES) + f"select id, ts, {REFUSED[0]} as c from {{{{ ref('events') }}}}")
    project.dbt("build", "--exclude", "refused")
    assert_equal_full(project)

    # a new day, and late input a day before it, at and across midnight (lookback 2 reads it)
    project.spark.sql(
        f"insert into {project.schema}.events values (9001, 'a', timestamp'2024-01-02 23:30:00', 7), "
        "(9002, 'a', timestamp'2024-01-03 00:00:00', null), (9003, 'b', timestamp'2024-01-03 00:00:00', 3), "
        "(9004, 'c', timestamp'2024-01-04 01:00:00', -4), (9005, 'c', timestamp'2024-01-04 01:00:00', 12)"
    )
    project.dbt("run", "-s", "inc_forms", "full_forms", "--vars", "{lookback: 2}")
    assert_equal_full(project)

    # dbt's time filter (--sample): the full build's rows of the day, read past it as far as they reach
    full = f"{project.schema}.full_forms"
    project.spark.sql(f"create table {full}_kept using parquet as select * from {full}")
    project.dbt("run", "-s", "full_forms", "--sample", "{'start': '2024-01-02', 'end': '2024-01-03'}")
    day = "ts >= '2024-01-02' and ts < '2024-01-03'"
    sampled, kept = f"select * from {full}", f"select * from {full}_kept where {day}"
    assert project.spark.sql(f"{sampled} except all {kept}").count() == 0
    assert project.spark.sql(f"{kept} except all {sampled}").count() == 0 and project.spark.sql(kept).count() > 30

    said = errors(project.dbt("compile", "-s", "refused", ok=False))
    assert "window_view model 'refused': `SUM(v) OVER (PARTITION BY k ORDER BY ts groups" in said, said
    assert f"rewrites over {REFUSED[1]}" in said and "with batch_size each batch reads its input only" in said
    assert "fix: " in said and "or remove batch_size" in said and "_wv_" not in said, said
