"""Incremental batch window views on Delta (file_format='delta' with batch_size): a model that
was parquet becomes a Delta table partitioned by its batch column in one commit (built beside,
renamed into place, under location_root); a later run replaces its contiguous batches in one commit by predicate on
the batch column (REPLACE WHERE), the other batches' files untouched; a run after late input, a
backfill and a run redoing a failed batch each equal the full build; a failed batch commits
nothing; a Delta table not partitioned by the batch column is refused until --full-refresh,
which replaces the table in place."""

from __future__ import annotations

import random

from tests.functional.test_microbatch_windows import events
from tests.support.dbt_projects import errors

BEGIN = "2024-01-01"
N = "count(*) + count(assert_true(id <> {{ var('bad_id', -1) }})) as n"
WINDOWS = "\nunion all\n".join(
    f"select '{kind}' as kind, k, window_start, window_end, window_time, {N}, sum(v) as s\n"
    f"from {{{{ {call} }}}}\ngroup by k, window_start, window_end, window_time"
    for kind, call in [
        ("tumble", "window_views.tumble(ref('events'), 'ts', '7 hours', offset='1 hour')"),
        ("hop", "window_views.hop(ref('events'), 'ts', '2 hours', '5 hours', offset='30 minutes')"),
        ("session", "window_views.session(ref('events'), 'ts', '40 minutes', partition_by='k')"),
    ]
)
INC = (
    "{{{{ config(materialized='window_view', file_format='{format}', event_time='window_time', batch_size='day', "
    f"begin='{BEGIN}', lookback=var('lookback', 1), session_lookback='1 day', location_root='{{lake}}') }}}}}}}}\n"
)
COLUMNS = "kind, k, window_start, window_end, window_time, n, s"


def assert_equal_full(project) -> None:
    inc = f"select {COLUMNS} from {project.schema}.inc where window_time >= '{BEGIN}'"
    full = f"select {COLUMNS} from {project.schema}.full where window_time >= '{BEGIN}'"
    for a, b in ((inc, full), (full, inc)):
        only = project.spark.sql(f"{a} except all {b}").collect()
        assert not only, only[:5]
    assert project.spark.sql(inc).count() > 50


def writes(project) -> list:
    """The inc table's commits, oldest first: (operation, the predicate of a replace)."""
    rows = project.spark.sql(f"describe history {project.schema}.inc").collect()
    return [(r.operation, r.operationParameters.get("predicate")) for r in sorted(rows, key=lambda r: r.version)]


def batch_files(project) -> dict:
    """Each batch's data files: a batch replaced gets new ones."""
    rows = project.spark.sql(
        f"select window_time_day, collect_set(f) from (select window_time_day, input_file_name() as f "
        f"from {project.schema}.inc) group by 1"
    ).collect()
    return dict(sorted((r[0][:10], sorted(r[1])) for r in rows))


def test_delta_batches_replace_by_predicate_and_equal_the_full_build(project):
    lake = project.root / "lake"  # location_root: external tables, their files under it
    project.seed("events", events(random.Random(7), 200))
    project.write(
        "seeds/events.yml",
        "seeds:\n  - name: events\n    config:\n      event_time: ts\n"
        "      column_types: {id: int, k: string, ts: timestamp, v: int}\n",
    )
    project.model("inc", INC.format(format="parquet", lake=lake) + WINDOWS)
    project.model("full", "{{ config(materialized='window_view') }}\n" + WINDOWS)
    project.dbt("build")
    assert_equal_full(project)

    # the model switches to Delta, with a new day and late input two days back: the table is made
    # whole in one commit, beside the parquet one and renamed into place
    project.model("inc", INC.format(format="delta", lake=lake) + WINDOWS)
    events_table = f"{project.schema}.events"
    project.spark.sql(
        f"insert into {events_table} values (9001, 'a', timestamp'2024-01-03 15:00:00', 7), "
        "(9002, 'b', timestamp'2024-01-05 02:00:00', 3), (9003, 'c', timestamp'2024-01-05 09:30:00', -4)"
    )
    project.dbt("run", "--vars", "{lookback: 2}")
    assert_equal_full(project)
    detail = project.spark.sql(f"describe detail {project.schema}.inc").collect()[0]
    assert (detail.format, detail.partitionColumns) == ("delta", ["window_time_day"])
    assert writes(project) == [("CREATE TABLE AS SELECT", None), ("SET TBLPROPERTIES", None)]
    assert not project.spark.catalog.tableExists(f"{project.schema}.inc__wv_tmp")
    # the parquet table's batch folders went with it: the Delta table's one folder is left
    assert [p.name for p in (lake / "inc").iterdir()] == [detail.location.rsplit("/", 1)[1]]
    late, late_rows = batch_files(project), project.spark.sql(f"select * from {project.schema}.inc").count()
    assert sorted(late) == ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05"]

    # a middle day's input beyond the lookback: a backfill of that day alone
    project.spark.sql(f"insert into {events_table} values (9004, 'b', timestamp'2024-01-02 12:00:00', 11)")
    project.dbt("run", "--event-time-start", "2024-01-02", "--event-time-end", "2024-01-03")
    assert_equal_full(project)
    # the record of the range first (a plain run does not reach back to it), then the batch
    assert writes(project)[2:] == [
        ("SET TBLPROPERTIES", None),
        ("WRITE", "(window_time_day = '2024-01-02 00:00:00')"),
        ("SET TBLPROPERTIES", None),
    ]
    backfilled = batch_files(project)
    assert [d for d in late if late[d] != backfilled[d]] == ["2024-01-02"]
    # a reader of the version before it still sees that run's rows whole (Delta's snapshot)
    assert project.spark.sql(f"select * from {project.schema}.inc version as of 1").count() == late_rows

    # a batch that fails in a backfill of three days: the three as one commit nothing, then each
    # alone; the failed one's rows stay, the others are written, and the next run redoes it
    rows_before = sorted(project.spark.sql(f"select * from {project.schema}.inc").collect())
    result = project.dbt(
        "run", "-s", "inc", "--event-time-start", BEGIN, "--event-time-end", "2024-01-04",
        "--vars", "{bad_id: 9004}", ok=False,
    )  # fmt: skip
    text = errors(result)
    assert "window_view model 'inc': 1 of 3 batch(es) failed: 2024-01-02 00:00:00 (their rows are as they were" in text
    assert "The batch 2024-01-02 00:00:00 failed with: [USER_RAISED_EXCEPTION]" in text, text
    assert sorted(project.spark.sql(f"select * from {project.schema}.inc").collect()) == rows_before
    failed = batch_files(project)
    assert [d for d in backfilled if backfilled[d] != failed[d]] == ["2024-01-01", "2024-01-03"]
    # the next run redoes the failed batch alone, and its last two (lookback) in one commit
    project.dbt("run", "-s", "inc")
    redone = batch_files(project)
    assert [d for d in failed if failed[d] != redone[d]] == ["2024-01-02", "2024-01-04", "2024-01-05"]
    assert writes(project)[-3:] == [
        ("WRITE", "(window_time_day = '2024-01-02 00:00:00')"),
        ("WRITE", "(window_time_day IN ('2024-01-04 00:00:00', '2024-01-05 00:00:00'))"),
        ("SET TBLPROPERTIES", None),
    ]
    assert_equal_full(project)

    # another tool replaced the table with one not partitioned by the batch column: refused
    # until --full-refresh, which makes it whole again in one commit
    table = f"{project.schema}.inc"
    project.spark.sql(f"create table {table}_copy using delta as select * from {table}")
    project.spark.sql(f"drop table {table}")
    project.spark.sql(
        f"create table {table} using delta tblproperties ('window_views.batch_column' = 'window_time_day') "
        f"as select * from {table}_copy"
    )
    text = errors(project.dbt("run", "-s", "inc", ok=False))
    assert (
        f"window_view model 'inc': its table {table} is an unpartitioned Delta table, not partitioned by its batch "
        "column `window_time_day`" in text
    ), text
    assert "fix: run it with --full-refresh, which rebuilds the table partitioned by `window_time_day`" in text
    folder = project.spark.sql(f"describe detail {table}").collect()[0].location
    project.dbt("run", "-s", "inc", "--full-refresh")
    assert project.spark.sql(f"describe detail {table}").collect()[0].partitionColumns == ["window_time_day"]
    assert [op for op, _ in writes(project)][-2:] == ["CREATE OR REPLACE TABLE AS SELECT", "SET TBLPROPERTIES"]
    # replaced in place: the table another tool made keeps its folder (and its history)
    assert project.spark.sql(f"describe detail {table}").collect()[0].location == folder
    assert_equal_full(project)
