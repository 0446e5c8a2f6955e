"""Incremental batch window views (docs/batch.md "Incremental batch window views"): a window_view
with batch_size computes its table day by day, each day's windows from the day widened by their
reach. On random data, TUMBLE, HOP (offsets not aligned to days), SESSION (read back its
session_lookback, a session chained across two midnights by later input), window_aggregate's HOP
and CUMULATE pane plans and over windows (ROWS,
a RANGE interval, LAG, LEAD; running SUM/COUNT/MIN/MAX and ranks over rows back to before 1970,
read as a per-partition summary) equal their full build after the first run, a run after late input
(the last day again, by lookback, and a new day), and a backfill of a middle day; a session
longer than its session_lookback allows fails its batch rather than be written short; with
emit='on_window_close' each run writes the windows its watermark closed; a batch that fails
leaves its rows and the other batches in place, and the next run redoes it; a begin after the
input and changed columns are refused before any batch runs, and --full-refresh rebuilds."""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from pathlib import Path

from tests.functional.test_microbatch_windows import PREFIX, events
from tests.support.dbt_projects import errors

BEGIN = "2024-01-01"
BATCHES = f"event_time='{{et}}', batch_size='day', begin='{BEGIN}', lookback=var('lookback', 1)"
# n counts the rows; on the row whose id is the var bad_id the batch that reads it fails
N = "count(*) + count(assert_true(id <> {{ var('bad_id', -1) }})) as n"
TVF = "\nunion all\n".join(
    f"select '{kind}' as kind, k, window_start, window_end, window_time, {N}, sum(v) as s\n"
    f"from {{{{ {call} }}}}\ngroup by k, window_start, window_end, window_time"
    for kind, call in [
        ("tumble", "window_views.tumble(ref('events'), 'ts', '7 hours', offset='1 hour')"),
        ("hop", "window_views.hop(ref('events'), 'ts', '2 hours', '5 hours', offset='30 minutes')"),
        ("session", "window_views.session(ref('events'), 'ts', '40 minutes', partition_by='k')"),
    ]
)
# window_aggregate's pane plans (HOP, CUMULATE), each window's extent within the TUMBLE's 7 hours
MEASURES = "{'n': 'count(*) + count(assert_true(id <> ' ~ var('bad_id', -1) ~ '))', 's': 'sum(v)'}"
TVF += "".join(
    f"\nunion all\nselect '{kind}' as kind, k, window_start, window_end, window_time, n, s\n"
    f"from {{{{ window_views.window_aggregate(ref('events'), {window}, {MEASURES}, ['k']) }}}}"
    for kind, window in [
        ("agg_hop", "{'kind': 'hop', 'time_col': 'ts', 'slide': '1 hour', 'size': '4 hours', 'offset': '20 minutes'}"),
        (
            "agg_cumulate",
            "{'kind': 'cumulate', 'time_col': 'ts', 'step': '90 minutes', 'size': '6 hours', 'offset': '3 hours'}",
        ),
    ]
)
# the longest session (a chain the late input makes, over a day) plus the gap
SESSIONS = ", session_lookback='2 days'"
OVER = """select id, k, ts, v,
  sum(v) over (partition by k order by ts, id rows between 2 preceding and current row) as rows2,
  sum(v) over (partition by k order by ts range between interval 3 hours preceding and current row) as range3h,
  lag(v, 2) over (partition by k order by ts, id) as lag2,
  lead(v) over (partition by k order by ts, id) as lead1
from {{ ref('events') }}
"""


def config(batches: str = "") -> str:
    return "{{ config(materialized='window_view'" + (", " + batches if batches else "") + ") }}\n"


def assert_equal_full(project) -> None:
    columns = "kind, k, window_start, window_end, window_time, n, s"
    project.spark.sql(f"create or replace temp view inc_w as select {columns} from {project.schema}.inc_windows")
    project.spark.sql(
        f"create or replace temp view inc_o as select id, k, ts, v, rows2, range3h, lag2, lead1 "
        f"from {project.schema}.inc_over"
    )
    project.spark.sql(f"create or replace temp view inc_p as select * except (ts_day) from {project.schema}.inc_prefix")
    for view, table in (("inc_w", "full_windows"), ("inc_o", "full_over"), ("inc_p", "full_prefix")):
        project.spark.sql(f"create or replace temp view {view}_full as select * from {project.schema}.{table}")
    # on_window_close: the windows the watermark (the input's latest time - 3 hours) closed
    (w,) = project.spark.sql(f"select max(ts) - interval 3 hours from {project.schema}.events").collect()[0]
    project.spark.sql(f"create or replace temp view inc_c as select {columns} from {project.schema}.inc_close")
    project.spark.sql(f"create or replace temp view inc_c_full as select * from inc_w_full where window_end <= '{w}'")
    where_w, where_o = f"window_time >= '{BEGIN}'", f"ts >= '{BEGIN}'"
    pairs = (
        ("inc_w", "inc_w_full", where_w),
        ("inc_o", "inc_o_full", where_o),
        ("inc_p", "inc_p_full", where_o),
        ("inc_c", "inc_c_full", where_w),
    )
    for a, b, where in pairs:
        sa, sb = f"select * from {a} where {where}", f"select * from {b} where {where}"
        only_a = project.spark.sql(f"{sa} except all {sb}").collect()
        only_b = project.spark.sql(f"{sb} except all {sa}").collect()
        assert not only_a and not only_b, f"{a}: only incremental {only_a[:5]}, only full {only_b[:5]}"
        assert project.spark.sql(sa).count() > 50
    kinds = {r[0] for r in project.spark.sql("select distinct kind from inc_w").collect()}
    assert kinds == {"tumble", "hop", "session", "agg_hop", "agg_cumulate"}, kinds


def batch_writes(project, model: str) -> tuple:
    """From dbt's debug log, the writes of `model`'s batches: those computed as one (the
    plugin's staged writes, by their directory), and those computed alone (dbt's statements)."""
    log = (project.root / "logs" / "dbt.log").read_text()
    entries = re.split(r"\n(?=\S*\d\d:\d\d:\d\d\.\d+ \[)", log)
    staged = [e for e in entries if re.search(rf"writing to \S*/{model}/\S*_wv_staging-\S*, a directory per", e)]
    alone = [e for e in entries if f"On model.wv_test.{model}: " in e and "INSERT OVERWRITE DIRECTORY" in e]
    return staged, alone


def locations(project, table: str, column: str) -> dict:
    """Each batch's partition directory: a batch recomputed gets a new one."""
    found = {}
    for row in project.spark.sql(f"show partitions {project.schema}.{table}").collect():
        key = row[0].split("=", 1)[1].replace("%3A", ":")
        rows = project.spark.sql(
            f"describe table extended {project.schema}.{table} partition ({column} = '{key}')"
        ).collect()
        found[key[:10]] = next(r[1] for r in rows if r[0] == "Location")
    return found


def test_incremental_batches_equal_the_full_build(project):
    # and rows before 1970, long before the first batch: only the summaries of the running calls read them
    early = "".join(f"{9500 + i},{k},1969-12-3{i % 2} 1{i}:00:00,{i - 2}\n" for i, k in enumerate("abcab"))
    project.seed("events", events(random.Random(11), 300) + early)
    project.write(
        "seeds/events.yml",
        "seeds:\n  - name: events\n    config:\n      event_time: ts\n"
        "      column_types: {id: int, k: string, ts: timestamp, v: int}\n",
    )
    project.model("inc_windows", config(BATCHES.format(et="window_time") + SESSIONS) + TVF)
    project.model("full_windows", config() + TVF)
    # inc_over keeps its files under location_root: an external table, its batches' directories there
    external = f"location_root='{project.root / 'external'}'"
    project.model("inc_over", config(BATCHES.format(et="ts") + ", " + external) + OVER)
    project.model("full_over", config() + OVER)
    prefix = PREFIX.split("\n", 1)[1]
    project.model("inc_prefix", config(BATCHES.format(et="ts")) + prefix)
    project.model("full_prefix", config() + prefix)
    closing = "emit='on_window_close', watermark={'column': 'ts', 'delay': '3 hours'}"
    project.model("inc_close", config(BATCHES.format(et="window_time") + SESSIONS + ", " + closing) + TVF)
    events_table = f"{project.schema}.events"
    project.dbt("build")
    assert_equal_full(project)
    # its HOP TVF's four batches are computed as one, in one write, from panes as its full
    # build is (tvf_panes.py)
    staged, alone = batch_writes(project, "inc_windows")
    assert len(staged) == 1 and not alone, (staged, alone)
    assert "lateral view inline" not in staged[0].lower() and "_wv_panes" in staged[0], staged
    first = locations(project, "inc_windows", "window_time_day")
    # the last window (7 hours from 2024-01-03 22:00) is owned by 2024-01-04
    assert sorted(first) == ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]
    # each batch's rows moved from the staged write to a directory of its own, the rest removed
    batches_dir = Path(next(iter(first.values())).removeprefix("file:")).parent
    assert sorted(p.name[:8] for p in batches_dir.iterdir()) == ["20240101", "20240102", "20240103", "20240104"]

    # a new day, late input two days before it (lookback 2), and rows 20 minutes apart from
    # key a's last one (less than the gap): its last session, written by the first run, grows
    # into the next day
    (last_a,) = project.spark.sql(f"select max(ts) from {events_table} where k = 'a'").collect()[0]
    chain = [last_a + timedelta(minutes=20 * i) for i in range(1, 200)]
    chain = [t for t in chain if t < datetime(2024, 1, 5, 1)]
    assert last_a > datetime(2024, 1, 3, 12) and len(chain) > 50
    project.spark.sql(
        f"insert into {events_table} values (9001, 'a', timestamp'2024-01-03 15:00:00', 7), "
        "(9002, 'b', timestamp'2024-01-05 02:00:00', 3), (9003, 'c', timestamp'2024-01-05 09:30:00', -4), "
        + ", ".join(f"({9100 + i}, 'a', timestamp'{t}', 1)" for i, t in enumerate(chain))
    )
    project.dbt("run", "--vars", "{lookback: 2}")
    assert_equal_full(project)
    late = locations(project, "inc_windows", "window_time_day")
    assert sorted(late) == ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05"]
    assert [d for d in first if first[d] != late[d]] == ["2024-01-03", "2024-01-04"]

    # input for a middle day, beyond the lookback: a backfill of that day alone takes it in
    project.spark.sql(f"insert into {events_table} values (9004, 'b', timestamp'2024-01-02 12:00:00', 11)")
    project.dbt("run", "--event-time-start", "2024-01-02", "--event-time-end", "2024-01-03")
    # a running total's or rank's rows on every later day count that input too: backfilled to the end
    project.dbt("run", "--select", "inc_prefix", "--event-time-start", "2024-01-02", "--event-time-end", "2024-01-06")
    assert_equal_full(project)
    backfilled = locations(project, "inc_windows", "window_time_day")
    assert [d for d in late if late[d] != backfilled[d]] == ["2024-01-02"]

    # a batch that fails (a row of 2024-01-02 that the SQL rejects) in a backfill of three days:
    # its rows stay as they were, the two others are written, and the run names it
    before = project.spark.sql(f"select * from {project.schema}.inc_windows").collect()
    result = project.dbt(
        "run",
        "--select",
        "inc_windows",
        "--event-time-start",
        BEGIN,
        "--event-time-end",
        "2024-01-04",
        "--vars",
        "{bad_id: 9004}",
        ok=False,
    )
    text = errors(result)
    assert "window_view model 'inc_windows': 1 of 3 batch(es) failed: 2024-01-02 00:00:00" in text, text
    assert "the next run redoes these). The batch 2024-01-02 00:00:00 failed with: [USER_RAISED_EXCEPTION]" in text
    assert sorted(project.spark.sql(f"select * from {project.schema}.inc_windows").collect()) == sorted(before)
    failed = locations(project, "inc_windows", "window_time_day")
    assert [d for d in backfilled if backfilled[d] != failed[d]] == ["2024-01-01", "2024-01-03"]
    # the three computed as one failed, so each ran alone: only 2024-01-02 failed
    log = (project.root / "logs" / "dbt.log").read_text()
    assert "inc_windows: batches 2024-01-01 00:00:00 to 2024-01-03 00:00:00 as one failed, so each runs alone: " in log
    assert not list(batches_dir.glob("_wv_staging-*"))
    # the next run redoes the failed batch, and its own last batches (lookback)
    project.dbt("run", "--select", "inc_windows")
    redone = locations(project, "inc_windows", "window_time_day")
    assert [d for d in failed if failed[d] != redone[d]] == ["2024-01-02", "2024-01-04", "2024-01-05"]
    assert_equal_full(project)

    # refused as the run starts, before any batch: a begin after the input, changed columns
    project.model("late_begin", config(BATCHES.format(et="window_time").replace(BEGIN, "2030-01-01") + SESSIONS) + TVF)
    project.model(
        "inc_over", config(BATCHES.format(et="ts") + ", " + external) + OVER.replace("ts, v,", "ts, v, v * 2 as v2,", 1)
    )
    # and, as its batch runs, a session that may begin before the batch's read (each key's rows
    # are less than 10 hours apart, so one session per key from the first row, read 10 hours back)
    long = "select * from {{ window_views.session(ref('events'), 'ts', '10 hours', partition_by='k') }}"
    project.model("long_sessions", config(BATCHES.format(et="window_time") + ", session_lookback='10 hours'") + long)
    text = errors(project.dbt("run", "--select", "late_begin", "inc_over", "long_sessions", ok=False))
    assert (
        "window_view model 'long_sessions': 2 of 5 batch(es) failed: 2024-01-04 00:00:00, 2024-01-05 00:00:00" in text
    ), text
    assert "The batch 2024-01-04 00:00:00 failed with: [USER_RAISED_EXCEPTION] a session ending at 2024-01-04 " in text
    assert "may begin before the batch's read (its first row read, 2024-01-03 " in text
    assert "is within the gap of the read's start, session_lookback '10 hours' before the batch)" in text
    assert "fix: raise the model's session_lookback to the longest session plus the gap" in text
    assert (
        "window_view model 'late_begin': config 'begin' = '2030-01-01 00:00:00' is after the latest input time" in text
    ), text
    assert "window_view model 'inc_over': its columns (id, k, ts, v, v2, rows2" in text
    assert "fix: run it with --full-refresh" in text
    # which recomputes every batch from begin, the new column too, beside the table, and swaps it
    # in: the old table's directories go
    old = set(locations(project, "inc_over", "ts_day").values())
    project.dbt("run", "--select", "inc_over", "--full-refresh")
    assert_equal_full(project)
    assert project.spark.sql(f"select * from {project.schema}.inc_over where v2 <> v * 2").count() == 0
    new = set(locations(project, "inc_over", "ts_day").values())
    assert not old & new and all(str(project.root / "external" / "inc_over") in d for d in new), new
    assert not any(Path(d.removeprefix("file:")).exists() for d in old), old

    # a --full-refresh whose batch fails leaves the table as it was: nothing of the rebuild is kept
    before = sorted(project.spark.sql(f"select * from {project.schema}.inc_windows").collect())
    kept = locations(project, "inc_windows", "window_time_day")
    result = project.dbt("run", "--select", "inc_windows", "--full-refresh", "--vars", "{bad_id: 9004}", ok=False)
    text = errors(result)
    assert "window_view model 'inc_windows': 1 of 5 batch(es) failed: 2024-01-02 00:00:00 (the table is as it " in text
    assert "was before this run: a rebuild replaces it only once every batch is written)" in text, text
    assert sorted(project.spark.sql(f"select * from {project.schema}.inc_windows").collect()) == before
    assert locations(project, "inc_windows", "window_time_day") == kept
    left = project.spark.sql(f"show tables in {project.schema} like '*wv_*'").where("not isTemporary").collect()
    assert not left, left


DATE_OVER = "select d, k, v, sum(v) over (partition by k order by d, v) as run from {{ ref('dated') }}\n"
DATE_SESSIONS = """select k, window_start, window_end, window_time, count(*) as n, sum(v) as s
from {{ window_views.session(ref('dated'), 'd', '1 day', partition_by='k') }}
group by k, window_start, window_end, window_time
"""


def test_a_date_time_column_is_cut_at_batch_bounds_as_a_timestamp(project):
    """A DATE column compared with a batch's bounds: Spark casts a string bound to the column's
    type, so `d < '2024-01-05 01:00:00'` read as `d < 2024-01-05` and hourly batches lost the
    last day's rows; a session's inclusive end (+1 microsecond) dropped the row at its end."""
    rows = "".join(f"2024-01-0{day},{k},{day * 10 + i}\n" for i, k in enumerate("ab") for day in (1, 2, 3, 5))
    project.seed("dated", "d,k,v\n" + rows)
    project.write(
        "seeds/dated.yml",
        "seeds:\n  - name: dated\n    config:\n      event_time: d\n      column_types: {d: date, k: string, v: int}\n",
    )
    project.model("date_over_h", config("event_time='d', batch_size='hour', begin='2024-01-01'") + DATE_OVER)
    project.model("date_over", config() + DATE_OVER)
    sessions = "event_time='window_time', batch_size='day', begin='2024-01-01', session_lookback='3 days'"
    project.model("date_sessions_d", config(sessions) + DATE_SESSIONS)
    project.model("date_sessions", config() + DATE_SESSIONS)
    # a plain microbatch model over the macro: dbt's own filter, widened by the plugin
    project.model(
        "date_sessions_mb",
        "{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='window_time', "
        "batch_size='day', begin='2024-01-01', partition_by=['day']) }}\n"
        + DATE_SESSIONS.replace("partition_by='k')", "partition_by='k', session_lookback='3 days')")
        .replace("count(*) as n", "to_date(window_time) as day, count(*) as n")
        .replace("group by k,", "group by to_date(window_time), k,"),
    )
    # dbt's microbatch runs from begin to today unless told where to end: five days, not three years
    project.dbt("build", "--exclude", "date_sessions_mb")
    project.dbt("run", "-s", "date_sessions_mb", "--event-time-start", "2024-01-01", "--event-time-end", "2024-01-06")
    project.dbt("run", "-s", "date_sessions_d", "--event-time-start", "2024-01-01", "--event-time-end", "2024-01-02")

    def rows_of(table: str, columns: str):
        return [
            tuple(r)
            for r in project.spark.sql(f"select {columns} from {project.schema}.{table} order by all").collect()
        ]

    assert len(rows_of("date_over", "*")) == 8
    assert rows_of("date_over_h", "d, k, v, run") == rows_of("date_over", "d, k, v, run")
    columns = "k, window_start, window_end, window_time, n, s"
    assert rows_of("date_sessions_d", columns) == rows_of("date_sessions", columns)
    assert rows_of("date_sessions_mb", columns) == rows_of("date_sessions", columns)


# every reach over a time column with NULLs: rows back and ahead, an interval, LAG, the running
# calls read as a summary of the rows before a batch, ranks
NULL_OVER = """select id, k, ts, v,
  sum(v) over (partition by k order by ts, id rows between 2 preceding and current row) as rows2,
  sum(v) over (partition by k order by ts range between interval 3 hours preceding and current row) as range3h,
  lag(v, 2) over (partition by k order by ts, id) as lag2,
  lead(v) over (partition by k order by ts, id) as lead1,
  sum(v) over (partition by k order by ts, id) as run_sum,
  count(*) over (partition by k order by ts) as run_n,
  rank() over (partition by k order by ts) as rk,
  row_number() over (partition by k order by ts, id) as rn
from {{ ref('timed') }}
"""


def test_rows_with_a_null_time_have_one_owner(project):
    """Design §11: a NULL-time row sorts first (ASC NULLS FIRST), so every later batch's prefix
    holds it, and the batch holding `begin` writes its own row: the table equals the full build,
    NULL-time rows included; --sample counts them before its range and writes none of them."""
    rng = random.Random(5)
    rows = events(rng, 160).replace("2023-12-31", "2024-01-01").splitlines()
    nulls = [f"{8000 + i},{k},,{i + 1}" for i, k in enumerate("aabca")]
    project.seed("timed", "\n".join(rows + nulls) + "\n")
    project.write(
        "seeds/timed.yml",
        "seeds:\n  - name: timed\n    config:\n      event_time: ts\n"
        "      column_types: {id: int, k: string, ts: timestamp, v: int}\n",
    )
    project.model("null_inc", config(BATCHES.format(et="ts")) + NULL_OVER)
    project.model("null_full", config() + NULL_OVER)
    project.model("null_sampled", config() + NULL_OVER)
    built = {r.node.name: r.message for r in project.dbt("build", "--exclude", "null_sampled").result}
    # the run writing the batch holding begin says what a full build says of them
    said = "; 5 rows with a NULL ts are ordered first by its over windows"
    assert built["null_inc"].endswith(said) and built["null_full"].endswith(said), built
    table = f"{project.schema}.null_inc"
    full = f"select * from {project.schema}.null_full"
    assert project.spark.sql(f"{full} where ts is null").count() == 5
    for query in (
        f"{full} except all select * except (ts_day) from {table}",
        f"select * except (ts_day) from {table} except all {full}",
    ):
        assert not project.spark.sql(query).collect(), query
    # a later run redoes the last batches (lookback; new input, or it has nothing to do): the
    # NULL-time rows stay written once
    project.spark.sql(f"insert into {project.schema}.timed values (9999, 'a', timestamp'2024-01-03 12:00:00', 1)")
    later = project.dbt("run", "--select", "null_inc").result[0].message
    assert project.spark.sql(f"select * from {table} where ts is null").count() == 5
    assert "NULL" not in later, later  # its batches do not hold begin
    # a sample of the second day: its rows as the full build's (the NULL-time rows before them counted)
    project.dbt("run", "--select", "null_sampled", "--sample", "{'start': '2024-01-02', 'end': '2024-01-03'}")
    sampled = f"select * from {project.schema}.null_sampled"
    within = f"{full} where ts >= '2024-01-02' and ts < '2024-01-03'"
    for query in (f"{within} except all {sampled}", f"{sampled} except all {within}"):
        assert not project.spark.sql(query).collect(), query
    assert project.spark.sql(sampled).count() > 30
    # an input whose every time is NULL (a parse without a format upstream) has no batch to write: the
    # build from begin fails naming it, before it makes the table
    project.seed("untimed", "\n".join([rows[0], *nulls]) + "\n")  # the header, then NULL times only
    project.write(
        "seeds/untimed.yml",
        "seeds:\n  - name: untimed\n    config:\n      event_time: ts\n"
        + "      column_types: {id: int, k: string, ts: timestamp, v: int}\n",
    )
    project.model("null_only", config(BATCHES.format(et="ts")) + NULL_OVER.replace("ref('timed')", "ref('untimed')"))
    text = errors(project.dbt("build", "-s", "untimed", "null_only", ok=False))
    assert "every one of the 5 rows it reads from" in text and "has a NULL `ts`" in text, text
    assert not project.spark.catalog.tableExists(f"{project.schema}.null_only")


TUMBLE = """select k, window_start, window_end, window_time, count(*) as n, sum(v) as s
from {{{{ window_views.tumble(ref('ev'), 'ts', '6 hours') }}}}
{where}group by k, window_start, window_end, window_time
"""


def test_a_run_with_nothing_new_to_read_writes_nothing(project):
    """docs/batch.md "Runs with no new input": a run whose inputs hold the files the last run
    read, with the same SQL, writes no batch; new input, a failed run's batches, a view input and
    SQL whose value changes from run to run (current_date) each make it compute."""
    project.seed("ev", events(random.Random(3), 80))
    project.write(
        "seeds/ev.yml",
        "seeds:\n  - name: ev\n    config:\n      event_time: ts\n"
        "      column_types: {id: int, k: string, ts: timestamp, v: int}\n",
    )
    project.model("ev_view", "{{ config(materialized='view') }}\nselect * from {{ ref('ev') }}\n")
    bad = "where id <> 9001 or assert_true(id <> {{ var('bad_id', -1) }}) is null\n"
    project.model("quiet", config(BATCHES.format(et="window_time")) + TUMBLE.format(where=bad))
    project.model(
        "over_view", config(BATCHES.format(et="window_time")) + TUMBLE.format(where="").replace("'ev'", "'ev_view'")
    )
    today = "where current_date() > date'2000-01-01'\n"
    project.model("volatile", config(BATCHES.format(et="window_time")) + TUMBLE.format(where=today))
    project.dbt("build")
    models = ("quiet", "over_view", "volatile")

    def said() -> dict:
        result = project.dbt("run", "--select", *models)
        return {r.node.name: r.adapter_response["_message"] for r in result.result}

    # the build made `ev` in this invocation, which dbt's cache then knows by name only: the
    # first run records what it read
    said()
    written = locations(project, "quiet", "window_time_day")
    skipped = "0 batch(es) written: no new input since the last run"
    again = said()
    assert again["quiet"] == skipped and again["over_view"] != skipped and again["volatile"] != skipped, again
    assert not again["over_view"].startswith("0 ") and not again["volatile"].startswith("0 "), again
    assert locations(project, "quiet", "window_time_day") == written
    # a new row: the last batches again (lookback 1) and the new row's
    project.spark.sql(f"insert into {project.schema}.ev values (9002, 'b', timestamp'2024-01-03 19:00:00', 2)")
    assert not said()["quiet"].startswith("0 ")
    assert said()["quiet"] == skipped
    # a run that fails the batch of a new row leaves it to redo, and records nothing of what it
    # read: the next run computes it. A failed batch's rows are as the last whole run wrote them
    project.spark.sql(f"insert into {project.schema}.ev values (9001, 'a', timestamp'2024-01-03 20:00:00', 4)")
    project.dbt("run", "--select", "quiet", "--vars", "{bad_id: 9001}", ok=False)
    assert not said()["quiet"].startswith("0 ")
    assert said()["quiet"] == skipped
    full = TUMBLE.format(where="")
    project.model("quiet_full", config() + full)
    project.dbt("run", "--select", "quiet_full")
    columns = "k, window_start, window_end, window_time, n, s"
    for a, b in (("quiet", "quiet_full"), ("quiet_full", "quiet")):
        sa, sb = (f"select {columns} from {project.schema}.{t} where window_time >= '{BEGIN}'" for t in (a, b))
        query = f"{sa} except all {sb}"
        assert not project.spark.sql(query).collect(), query
