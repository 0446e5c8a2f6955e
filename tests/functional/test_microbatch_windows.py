"""The window macros under dbt's event-time filters (design §11, docs/batch.md "Incremental
batches, backfills and --sample"): plain microbatch models calling TUMBLE (an offset not aligned
to days), HOP (size not a multiple of the slide), CUMULATE, SESSION and window_aggregate, run by
day over random data, equal the full build of the same SQL; a backfill of a middle day restores
it; `--sample` emits only whole windows, each equal to the full build's. A window view's over
windows (ROWS, RANGE interval, LAG, LEAD, a running sum) run day by day under `--sample`, and
a middle range's backfill, equal its full build, as do running SUM/COUNT/MIN/MAX and the ranks
read over the range and a summary of the rows before it (ties at midnight, NULL keys and
values); an over window without a bound is refused."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from tests.support.dbt_projects import errors

START, END = "2024-01-01", "2024-01-04"
SAMPLE = ("2024-01-02 05:00:00", "2024-01-03 07:30:00")
WINDOWS = {
    "tumble": "window_views.tumble(ref('events'), 'ts', '7 hours', offset='1 hour')",
    "hop": "window_views.hop(ref('events'), 'ts', '2 hours', '5 hours', offset='30 minutes')",
    "cumulate": "window_views.cumulate(ref('events'), 'ts', '3 hours', '1 day', offset='-90 minutes')",
    "session": "window_views.session(ref('events'), 'ts', '40 minutes', partition_by='k', session_lookback='1 day')",
}
AGGREGATE = (
    "window_views.window_aggregate(ref('events'), {'kind': 'hop', 'time_col': 'ts', 'slide': '1 hour', "
    "'size': '3 hours', 'offset': '20 minutes'}, {'n': 'count(*)', 's': 'sum(v)'}, ['k'])"
)
MICROBATCH = (
    "{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='window_time', "
    f"batch_size='day', begin='{START}', partition_by=['d'], concurrent_batches=false) }}}}\n"
)
TABLE = "{{ config(materialized='table') }}\n"
# over windows of each reach: rows back, an interval back, rows back (LAG), rows ahead (LEAD),
# every row before (a running sum)
OVER = """{{ config(materialized='window_view') }}
select id, k, ts, v,
  sum(v) over (partition by k order by ts, id rows between 2 preceding and current row) as rows2,
  sum(v) over (partition by k order by ts range between interval 3 hours preceding and current row) as range3h,
  lag(v, 2) over (partition by k order by ts, id) as lag2,
  lead(v) over (partition by k order by ts, id) as lead1,
  sum(v) over (partition by k order by ts, id rows between unbounded preceding and current row) as running
from {{ ref('events') }}
"""
# calls summarised per partition before the range's start (over_reads.py, prefix.py): running
# SUM/COUNT/MIN/MAX and the ranks, with NULL partition keys (nullif) and values, ties on ts
PREFIX = """{{ config(materialized='window_view') }}
select id, k, ts, v,
  sum(v) over (partition by nullif(k, 'c') order by ts) as run_sum,
  count(nullif(v, 0)) over (partition by nullif(k, 'c') order by ts, id rows unbounded preceding) as run_count,
  min(nullif(v, 0)) over (partition by k order by ts) as run_min,
  max(v) over (order by ts, id) as run_max,
  row_number() over (partition by nullif(k, 'c') order by ts, id) as rn,
  rank() over (partition by k order by ts) as rk,
  dense_rank() over (partition by nullif(k, 'c') order by ts) as drk
from {{ ref('events') }}
"""


def windowed_sql(kind: str, call: str) -> str:
    return (
        f"select '{kind}' as kind, k, window_start, window_end, window_time, count(*) as n, sum(v) as s, "
        f"to_date(window_time) as d\nfrom {{{{ {call} }}}}\ngroup by k, window_start, window_end, window_time"
    )


# every window kind in one model, so a run costs one model's batches
ALL_WINDOWS = "\nunion all\n".join(
    [
        *(windowed_sql(kind, call) for kind, call in WINDOWS.items()),
        f"select 'aggregate' as kind, *, to_date(window_time) as d from {{{{ {AGGREGATE} }}}}",
    ]
)


def events(rng: random.Random, n: int) -> str:
    """Rows from before the first batch (20:00 the day before) to its end, three keys."""
    base = datetime(2023, 12, 31, 20, 0, 0)
    span = int((datetime(2024, 1, 4) - base).total_seconds())
    lines = ["id,k,ts,v"]
    for i in range(n):
        ts = base + timedelta(seconds=rng.randrange(span))
        lines.append(f"{i},{rng.choice('abc')},{ts.isoformat(sep=' ')},{rng.randint(-20, 20)}")
    # rows on the batch edges: midnight exactly (tied), and one microsecond before
    lines += [f"{n},a,2024-01-02 00:00:00,1", f"{n + 1},b,2024-01-02 23:59:59.999999,2"]
    lines += [
        f"{n + 2},a,2024-01-02 00:00:00,0",
        f"{n + 3},c,2024-01-03 00:00:00,5",
        f"{n + 4},c,2024-01-03 00:00:00,-5",
    ]
    return "\n".join(lines) + "\n"


def assert_same(project, a: str, b: str, where: str, kinds: frozenset = frozenset({*WINDOWS, "aggregate"})) -> None:
    cols = "kind, k, window_start, window_end, window_time, n, s, d"
    sa = f"select {cols} from {project.schema}.{a} where {where}"
    sb = f"select {cols} from {project.schema}.{b} where {where}"
    only_a = project.spark.sql(f"{sa} except all {sb}").collect()
    only_b = project.spark.sql(f"{sb} except all {sa}").collect()
    assert not only_a and not only_b, f"{a} vs {b}:\nonly in {a}: {only_a[:5]}\nonly in {b}: {only_b[:5]}"
    found = {r[0] for r in project.spark.sql(f"select distinct kind from ({sa})").collect()}
    assert found == kinds, found


def assert_same_rows(project, a: str, b: str) -> None:
    """Two queries (or tables) with the same rows, duplicates counted."""
    a, b = (f"select * from ({q})" if q.startswith("select") else f"select * from {q}" for q in (a, b))
    only_a = project.spark.sql(f"{a} except all {b}").collect()
    only_b = project.spark.sql(f"{b} except all {a}").collect()
    assert not only_a and not only_b, f"only in the first: {only_a[:5]}\nonly in the second: {only_b[:5]}"
    assert project.spark.sql(a).count() > 100


def count(project, table: str, where: str) -> int:
    return project.spark.sql(f"select * from {project.schema}.{table} where {where}").count()


def test_microbatch_backfill_and_sample_equal_the_full_build(project):
    project.seed("events", events(random.Random(7), 240))
    project.write(
        "seeds/events.yml",
        "seeds:\n  - name: events\n    config:\n      event_time: ts\n"
        "      column_types: {id: int, k: string, ts: timestamp, v: int}\n",
    )
    project.model("windows_mb", MICROBATCH + ALL_WINDOWS)
    project.model("windows_full", TABLE + ALL_WINDOWS)
    project.model("hop_view", "{{ config(materialized='window_view') }}\n" + windowed_sql("hop", WINDOWS["hop"]))
    project.model("over_view", OVER)
    project.model("prefix_view", PREFIX)
    in_range = f"window_time >= '{START}' and window_time < '{END}'"
    project.dbt("build", "--event-time-start", START, "--event-time-end", END)
    # over windows: the full build kept, then the window view run day by day under --sample
    over = f"{project.schema}.over"
    project.spark.sql(f"create table {over}_full using parquet as select * from {project.schema}.over_view")
    project.spark.sql(f"create table {over}_by_day using parquet as select * from {over}_full where false")
    prefix = f"{project.schema}.prefix"
    project.spark.sql(f"create table {prefix}_full using parquet as select * from {project.schema}.prefix_view")
    project.spark.sql(f"create table {prefix}_by_day using parquet as select * from {prefix}_full where false")
    for day in ("2024-01-01", "2024-01-02", "2024-01-03"):
        window = f"{{'start': '{day}', 'end': '{datetime.fromisoformat(day) + timedelta(days=1)}'}}"
        project.dbt("run", "--select", "over_view", "prefix_view", "--sample", window)
        project.spark.sql(f"insert into {over}_by_day select * from {project.schema}.over_view")
        project.spark.sql(f"insert into {prefix}_by_day select * from {project.schema}.prefix_view")
    in_days = f"ts >= '{START}' and ts < '{END}'"
    assert_same_rows(project, f"{over}_by_day", f"select * from {over}_full where {in_days}")
    assert_same_rows(project, f"{prefix}_by_day", f"select * from {prefix}_full where {in_days}")
    assert_same(project, "windows_mb", "windows_full", in_range)
    assert count(project, "windows_mb", f"not ({in_range})") == 0

    # a backfill of the middle day rebuilds its partition from the day and its reach alone
    project.spark.sql(f"alter table {project.schema}.windows_mb drop partition (d = '2024-01-02')")
    project.dbt("run", "--select", "windows_mb", "--event-time-start", "2024-01-02", "--event-time-end", "2024-01-03")
    assert_same(project, "windows_mb", "windows_full", in_range)

    # --sample rebuilds the full table: only the windows whose window_time the sample holds,
    # each whole (the microbatch table holds the full build's windows of the range)
    start, end = SAMPLE
    project.dbt(
        "run",
        "--select",
        "windows_full",
        "hop_view",
        "over_view",
        "prefix_view",
        "--sample",
        f"{{'start': '{start}', 'end': '{end}'}}",
    )
    # the over windows' backfill of a middle range, in place of the by-day rows there, is the full build
    assert_same_rows(
        project,
        f"select * from {over}_by_day where not (ts >= '{start}' and ts < '{end}') "
        f"union all select * from {project.schema}.over_view",
        f"select * from {over}_full where ts >= '{START}' and ts < '{END}'",
    )
    assert_same_rows(
        project,
        f"select * from {prefix}_by_day where not (ts >= '{start}' and ts < '{end}') "
        f"union all select * from {project.schema}.prefix_view",
        f"select * from {prefix}_full where {in_days}",
    )
    sampled = f"window_time >= '{start}' and window_time < '{end}'"
    assert_same(project, "windows_full", "windows_mb", sampled)
    assert count(project, "windows_full", f"not ({sampled})") == 0
    # a window view under --sample too
    assert_same(project, "hop_view", "windows_mb", f"{sampled} and kind = 'hop'", frozenset({"hop"}))
    assert count(project, "hop_view", f"not ({sampled})") == 0


def test_a_cut_window_is_refused_or_left_out(project):
    """A session under a batch filter needs session_lookback, and a session that may reach back
    past it is left out; a window over another column than the input's event_time cannot know
    its reach; a streaming window view does not run under --sample."""
    # a session from 22:00 to 01:00 every 20 minutes (longer than the lookback), and one at 05:00
    long = [datetime(2024, 1, 1, 22) + timedelta(minutes=20 * i) for i in range(10)]
    rows = [f"{i},a,{t},1,{t}" for i, t in enumerate([*long, datetime(2024, 1, 2, 5)])]
    project.seed("events", "id,k,ts,v,other\n" + "\n".join(rows) + "\n")
    project.write(
        "seeds/events.yml",
        "seeds:\n  - name: events\n    config:\n      event_time: ts\n"
        "      column_types: {id: int, k: string, ts: timestamp, v: int, other: timestamp}\n",
    )
    project.model(
        "no_lookback", TABLE + windowed_sql("session", "window_views.session(ref('events'), 'ts', '40 minutes')")
    )
    project.model(
        "short_lookback",
        "{{ config(materialized='table', session_lookback='1 hour') }}\n"
        + windowed_sql("session", "window_views.session(ref('events'), 'ts', '40 minutes')"),
    )
    project.model("other_time", TABLE + windowed_sql("tumble", "window_views.tumble(ref('events'), 'other', '1 hour')"))
    # over windows: in a plain table (no plugin macro widens it), and ordered by another column
    project.model(
        "over_table", TABLE + "select *, lag(v) over (partition by k order by ts) as p from {{ ref('events') }}"
    )
    project.model(
        "over_other",
        "{{ config(materialized='window_view') }}\n"
        "select *, lag(v) over (partition by k order by other) as p from {{ ref('events') }}",
    )
    # a stream reads each row once: under --sample its checkpoint would record the rest as read
    project.model(
        "stream_sampled",
        "{{ config(materialized='window_view', execution='streaming', watermark={'column': 'ts', 'delay': "
        "'1 minute'}) }}\n" + windowed_sql("tumble", "window_views.tumble(ref('events'), 'ts', '1 hour')"),
    )
    project.dbt("seed")
    result = project.dbt("run", "--sample", "{'start': '2024-01-02', 'end': '2024-01-03'}", ok=False)
    text = errors(result)
    assert (
        "window_view model 'stream_sampled': config 'execution' is 'streaming', but dbt filters its input "
        f"{project.schema}.events to a time range (--sample)" in text
    )
    assert "`--exclude config.execution:streaming`" in text
    assert not project.spark.catalog.tableExists(f"{project.schema}.stream_sampled")
    listed = project.dbt("ls", "--select", "config.execution:streaming", "--output", "name").result
    assert listed == ["stream_sampled"], listed
    assert (
        "model 'over_table': `LAG(v) OVER (PARTITION BY k ORDER BY ts)` reads an input dbt filters to a time range"
        in text
    )
    assert "fix: make this model materialized='window_view'" in text
    assert (
        "window_view model 'over_other': `LAG(v) OVER (PARTITION BY k ORDER BY other)` reads "
        f"{project.schema}.events, which dbt filters to a time range by its event_time `ts`" in text
    )
    assert "window_views.session: argument 'session_lookback' is required" in text
    assert "window_views.tumble: dbt filters the input" in text and "time_col is 'other'" in text
    # read from 23:00: the long session's first row read is within the gap of it, so it may be cut
    assert [r[2] for r in project.rows("short_lookback")] == [datetime(2024, 1, 2, 5)]
