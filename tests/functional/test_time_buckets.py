"""A GROUP BY of a day of the event time with batch_size (docs/macros.md, "A GROUP BY of a time
bucket is a TUMBLE"): each batch reads its day and owns that day's rows, distinct counts with and
without FILTER included, so the table equals the model's full build as written after the first
run and after late input (the last days again, by lookback, and a new day); with
emit='on_window_close' it holds the days the watermark closed."""

from __future__ import annotations

import random

import yaml

from tests.functional.test_microbatch_windows import events
from tests.support.dbt_projects import errors

BEGIN = "2024-01-01"
DAYS = """select k, date_trunc('DAY', ts) as window_start, date_format(ts, 'yyyy-MM-dd') as day, count(*) as n,
  count(distinct v) as dv, count(distinct v) filter (where v > 0) as dv_pos, sum(v) as s
from {{ ref('events') }}
group by k, date_trunc('DAY', ts), date_format(ts, 'yyyy-MM-dd')
"""
BATCHES = f"event_time='window_start', batch_size='day', begin='{BEGIN}', lookback=var('lookback', 1)"
CLOSING = "emit='on_window_close', watermark={'column': 'ts', 'delay': '3 hours'}"


def config(*settings: str) -> str:
    return "{{ config(" + ", ".join(["materialized='window_view'", *settings]) + ") }}\n"


def assert_equal_full(project) -> None:
    schema, spark = project.schema, project.spark
    (w,) = spark.sql(f"select max(ts) - interval 3 hours from {schema}.events").collect()[0]
    full = f"select * from {schema}.full_days where window_start >= '{BEGIN}'"
    pairs = {
        "inc_days": full,
        "inc_close": f"{full} and window_start + interval 1 day <= '{w}'",
    }
    for table, expected in pairs.items():
        got = f"select k, window_start, day, n, dv, dv_pos, s from {schema}.{table}"
        only_got = spark.sql(f"{got} except all {expected}").collect()
        only_expected = spark.sql(f"{expected} except all {got}").collect()
        assert not only_got and not only_expected, (
            f"{table}: only batches {only_got[:5]}, only full {only_expected[:5]}"
        )
        assert spark.sql(got).count() >= 6


def test_batches_of_a_day_bucket_equal_its_full_build(project):
    project.seed("events", events(random.Random(5), 400))
    project.write(
        "seeds/events.yml",
        "seeds:\n  - name: events\n    config:\n      event_time: ts\n"
        "      column_types: {id: int, k: string, ts: timestamp, v: int}\n",
    )
    project.model("inc_days", config(BATCHES) + DAYS)
    project.model("inc_close", config(BATCHES, CLOSING) + DAYS)
    project.model("full_days", config() + DAYS)
    project.dbt("build")
    assert_equal_full(project)
    # late input for the day before the last (lookback 2) and a new day
    project.spark.sql(
        f"insert into {project.schema}.events values (9001, 'a', timestamp'2024-01-02 15:00:00', 7), "
        "(9002, 'b', timestamp'2024-01-04 02:00:00', 3), (9003, 'c', timestamp'2024-01-04 09:30:00', 7)"
    )
    project.dbt("run", "--vars", "{lookback: 2}")
    assert_equal_full(project)
    # a session in another zone would cut and label days locally: refused, the table as it was
    before = project.rows("inc_days")
    profiles = project.root / "profiles.yml"
    profile = profiles.read_text()
    zoned = yaml.safe_load(profile)
    zoned["wv_test"]["outputs"]["dev"]["server_side_parameters"]["spark.sql.session.timeZone"] = "America/New_York"
    profiles.write_text(yaml.safe_dump(zoned))
    try:
        text = errors(project.dbt("run", "-s", "inc_days", ok=False))
    finally:
        profiles.write_text(profile)
        project.spark.conf.set("spark.sql.session.timeZone", "UTC")
    assert "spark.sql.session.timeZone is 'America/New_York'" in text and "Traceback" not in text, text
    assert "window_views.tumble(..., offset=...)" in text, text
    assert project.rows("inc_days") == before
