"""execution='streaming': rows appended to a source between `dbt run`s, every intermediate table
asserted, for each window kind and both emit modes (FLIP-145's Bid rows, delivered out of order)."""

import shutil
import threading
from datetime import datetime
from typing import Sequence

import pytest

from dbt.adapters.window_views.storage.paths import local_path
from dbt.adapters.window_views.streaming import late_rows, shuffles
from dbt.adapters.window_views.streaming.inputs import batch_files
from tests.support.dbt_projects import errors, sources_yml


def t(hhmm: str) -> datetime:
    h, m = hhmm.split(":")
    return datetime(2020, 4, 15, int(h), int(m))


def make_source(project) -> None:
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(f"create table {project.schema}.bid (bidtime timestamp, price int, item string) using parquet")
    project.write("models/sources.yml", sources_yml("bid"))


def deliver(project, rows: Sequence[tuple]) -> None:
    """Append rows to the source as a new file, as an upstream loader would."""
    values = ", ".join(f"(timestamp'2020-04-15 {hhmm}:00', {price}, '{item}')" for hhmm, price, item in rows)
    project.spark.sql(f"insert into {project.schema}.bid values {values}")


def as_select(rows: Sequence[tuple]) -> str:
    """The rows `deliver` takes as one SELECT (for a file landed outside Spark's catalog)."""
    return " union all ".join(
        f"select timestamp'2020-04-15 {hhmm}:00' as bidtime, {price} as price, '{item}' as item"
        for hhmm, price, item in rows
    )


def ticking(project, name: str, emit: str, max_duration: str) -> None:
    """TUMBLE_SUM on a processing-time trigger of 1 second, run for `max_duration`."""
    project.model(
        name,
        f"""
        {{{{ config(materialized='window_view', execution='streaming', emit='{emit}',
                    watermark={{'column': 'bidtime', 'delay': '1 minute'}},
                    trigger={{'processing_time': '1 second', 'max_duration': '{max_duration}'}}) }}}}
        """
        + TUMBLE_SUM,
    )


def run_seen(project, name: str, seen):
    """`dbt run -s name` in this process, each of dbt's events passed to `seen`."""
    from dbt.cli.main import dbtRunner

    return dbtRunner(callbacks=[seen]).invoke(
        ["run", "-s", name, "--project-dir", str(project.root), "--profiles-dir", str(project.root)]
    )


def window_view(project, name: str, emit: str, select: str, late_data: str = "table", idle_timeout: str = "") -> None:
    idle = f", 'idle_timeout': '{idle_timeout}'" if idle_timeout else ""
    project.model(
        name,
        f"""
        {{{{ config(materialized='window_view', execution='streaming', emit='{emit}', late_data='{late_data}',
                    watermark={{'column': 'bidtime', 'delay': '1 minute'{idle}}}) }}}}
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
    late = project.spark.sql(
        f"select bidtime, price, item, _batch_id from {project.schema}.tumble_eowc__late"
    ).collect()
    assert [tuple(r)[:3] for r in late] == [(t("8:08"), 9, "L")]
    # nothing new: nothing changes
    node = run(project, "tumble_eowc")
    assert node.message.startswith("STREAM 0 batches, 0 in, 0 out, 0 late")
    assert project.rows("tumble_eowc") == [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 10, 3)]


def test_small_micro_batches_plan_their_shuffles_in_the_stream_s_own_session(project):
    """A micro-batch of few rows runs without adaptive re-planning or code generation (shuffles.py); the setting is
    the streaming query's session's, so the session dbt runs everything else in keeps its own."""
    spark = project.spark
    own = {key: spark.conf.get(key, None) for key in shuffles.KEYS}  # code generation too
    make_source(project)
    window_view(project, "tumble_small", "on_update", TUMBLE_SUM)
    deliver(project, [("08:07", 2, "A"), ("08:05", 4, "C")])
    run(project, "tumble_small")
    deliver(project, [("08:11", 3, "B")])
    run(project, "tumble_small")
    assert project.rows("tumble_small") == [(t("8:00"), t("8:10"), 6, 2), (t("8:10"), t("8:20"), 3, 1)]
    assert {key: spark.conf.get(key, None) for key in own} == own


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


def test_on_update_loads_the_past_in_days_and_writes_hours_from_the_day_later_batches_rewrite(project):
    """An initial load groups on_update files by day ('b' buckets) before the day W is in, and
    by hour ('h') from it, where the next batches rewrite: they read and write the hours their
    rows reach, a day they do not touch stays as it was, and no row is lost or doubled."""
    make_source(project)
    window_view(project, "tumble_moved", "on_update", TUMBLE_SUM)

    def deliver_at(*rows):
        values = ", ".join(f"(timestamp'{when}', {price}, 'A')" for when, price in rows)
        project.spark.sql(f"insert into {project.schema}.bid values {values}")

    def files():  # each window's file
        names = project.spark.sql(
            f"select window_start, input_file_name() as f from {project.schema}.tumble_moved"
        ).collect()
        return {r.window_start: r.f.rsplit("/", 1)[1] for r in names}

    deliver_at(("2020-04-15 08:05:00", 1), ("2020-04-15 09:05:00", 2), ("2020-04-16 10:05:00", 4))
    run(project, "tumble_moved")
    loaded = files()
    assert {(start.day, name[0]) for start, name in loaded.items()} == {(15, "b"), (16, "h")}  # no day mixed
    deliver_at(("2020-04-16 10:15:00", 8), ("2020-04-16 10:06:00", 16))
    run(project, "tumble_moved")
    deliver_at(("2020-04-16 10:25:00", 32), ("2020-04-16 10:16:00", 64))
    run(project, "tumble_moved")
    after = files()
    assert {start: name for start, name in after.items() if start.day == 15} == {
        start: name for start, name in loaded.items() if start.day == 15
    }  # 04-15's day untouched
    assert {name[0] for start, name in after.items() if start.day == 16} == {"h"}
    day = lambda d, hh, mm: datetime(2020, 4, d, hh, mm)  # noqa: E731
    assert project.rows("tumble_moved") == [
        (day(15, 8, 0), day(15, 8, 10), 1, 1),
        (day(15, 9, 0), day(15, 9, 10), 2, 1),
        (day(16, 10, 0), day(16, 10, 10), 20, 2),
        (day(16, 10, 10), day(16, 10, 20), 72, 2),
        (day(16, 10, 20), day(16, 10, 30), 32, 1),
    ]


def windowed(tvf: str) -> str:
    return f"""
select window_start, window_end, sum(price) as price, count(*) as bids
from {{{{ window_views.{tvf} }}}}
group by window_start, window_end
"""


KINDS = {
    "hop": "hop(source('raw', 'bid'), 'bidtime', '5 minutes', '10 minutes')",
    "cumulate": "cumulate(source('raw', 'bid'), 'bidtime', '2 minutes', '10 minutes')",
    "session": "session(source('raw', 'bid'), 'bidtime', '3 minutes')",
}
DELIVERIES = [
    [("08:07", 2, "A"), ("08:05", 4, "C")],  # W 08:06
    [("08:11", 3, "B"), ("08:09", 5, "D")],  # W 08:10
    [("08:08", 9, "L"), ("08:13", 1, "E"), ("08:17", 6, "F"), ("08:21", 1, "G")],  # 08:08 is late; W 08:20
]


def w(start: str, end: str, price: int, bids: int) -> tuple:
    return (t(start), t(end), price, bids)


# each model's table after each delivery, worked out by hand from the window definitions
EXPECTED = {
    ("hop", "on_window_close"): [
        [],
        [w("8:00", "8:10", 11, 3)],
        [w("8:00", "8:10", 11, 3), w("8:05", "8:15", 15, 5), w("8:10", "8:20", 10, 3)],
    ],
    ("hop", "on_update"): [
        [w("8:00", "8:10", 6, 2), w("8:05", "8:15", 6, 2)],
        [w("8:00", "8:10", 11, 3), w("8:05", "8:15", 14, 4), w("8:10", "8:20", 3, 1)],
        [
            w("8:00", "8:10", 11, 3),
            w("8:05", "8:15", 15, 5),
            w("8:10", "8:20", 10, 3),
            w("8:15", "8:25", 7, 2),
            w("8:20", "8:30", 1, 1),
        ],
    ],
    ("cumulate", "on_window_close"): [
        [w("8:00", "8:06", 4, 1)],
        [w("8:00", "8:06", 4, 1), w("8:00", "8:08", 6, 2), w("8:00", "8:10", 11, 3)],
        [
            w("8:00", "8:06", 4, 1),
            w("8:00", "8:08", 6, 2),
            w("8:00", "8:10", 11, 3),
            w("8:10", "8:12", 3, 1),
            w("8:10", "8:14", 4, 2),
            w("8:10", "8:16", 4, 2),
            w("8:10", "8:18", 10, 3),
            w("8:10", "8:20", 10, 3),
        ],
    ],
    ("cumulate", "on_update"): [
        [w("8:00", "8:06", 4, 1), w("8:00", "8:08", 6, 2), w("8:00", "8:10", 6, 2)],
        [
            w("8:00", "8:06", 4, 1),
            w("8:00", "8:08", 6, 2),
            w("8:00", "8:10", 11, 3),
            w("8:10", "8:12", 3, 1),
            w("8:10", "8:14", 3, 1),
            w("8:10", "8:16", 3, 1),
            w("8:10", "8:18", 3, 1),
            w("8:10", "8:20", 3, 1),
        ],
        [
            w("8:00", "8:06", 4, 1),
            w("8:00", "8:08", 6, 2),
            w("8:00", "8:10", 11, 3),
            w("8:10", "8:12", 3, 1),
            w("8:10", "8:14", 4, 2),
            w("8:10", "8:16", 4, 2),
            w("8:10", "8:18", 10, 3),
            w("8:10", "8:20", 10, 3),
            w("8:20", "8:22", 1, 1),
            w("8:20", "8:24", 1, 1),
            w("8:20", "8:26", 1, 1),
            w("8:20", "8:28", 1, 1),
            w("8:20", "8:30", 1, 1),
        ],
    ],
    ("session", "on_window_close"): [
        [],
        [],
        [w("8:05", "8:16", 15, 5), w("8:17", "8:20", 6, 1)],
    ],
    ("session", "on_update"): [
        [w("8:05", "8:10", 6, 2)],
        [w("8:05", "8:14", 14, 4)],
        [w("8:05", "8:16", 15, 5), w("8:17", "8:20", 6, 1), w("8:21", "8:24", 1, 1)],
    ],
}


def test_every_window_kind_in_both_modes(project):
    make_source(project)
    for kind, emit in EXPECTED:
        window_view(project, f"{kind}_{emit}", emit, windowed(KINDS[kind]))
    for step, rows in enumerate(DELIVERIES):
        deliver(project, rows)
        result = project.dbt("run")
        late = {r.node.name: r.adapter_response["late_rows"] for r in result.result}
        for (kind, emit), tables in EXPECTED.items():
            name = f"{kind}_{emit}"
            assert project.rows(name) == tables[step], f"{name} after delivery {step + 1}"
            assert late[name] == (1 if step == 2 else 0), name
    # the late row, kept once per model with its original columns
    for kind, emit in EXPECTED:
        late_rows = project.spark.sql(
            f"select bidtime, price, item from {project.schema}.{kind}_{emit}__late"
        ).collect()
        assert [tuple(r) for r in late_rows] == [(t("8:08"), 9, "L")]


def test_late_rows_dropped_but_counted(project):
    make_source(project)
    window_view(project, "dropping", "on_window_close", TUMBLE_SUM, late_data="drop")
    deliver(project, DELIVERIES[0] + DELIVERIES[1])
    run(project, "dropping")
    deliver(project, DELIVERIES[2])
    node = run(project, "dropping")
    assert node.adapter_response["late_rows"] == 1
    assert not project.spark.catalog.tableExists(f"{project.schema}.dropping__late")
    assert project.rows("dropping") == [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 10, 3)]


def test_late_rows_are_read_again_whole_and_a_file_changed_meanwhile_fails_the_batch(project, monkeypatch):
    """The stream reads the columns the model reads (not `item`); a late row is read again whole
    from its file for the late table. A file that no longer holds it fails the batch, leaving
    the table as it was, and the next run redoes the batch."""
    make_source(project)
    window_view(project, "refetched", "on_window_close", TUMBLE_SUM)
    deliver(project, DELIVERIES[0] + DELIVERIES[1])
    run(project, "refetched")
    before = project.rows("refetched")
    deliver(project, DELIVERIES[2])
    # the late row's file, read again, no longer holds it
    monkeypatch.setattr(
        batch_files.BatchFiles, "rows", lambda self, files: lambda table: self.tables[table].where("false")
    )
    message = errors(project.dbt("run", "-s", "refetched", ok=False))
    assert "(micro-batch 1) at " in message and "1 late row(s) came from 1 file(s) of " in message, message
    assert "reading them again for the late table found 0: a file was changed or removed while the batch ran; " in (
        message
    )
    assert "fix: let the input only grow by new files, and run again" in message
    assert "Traceback" not in message and "_wv_" not in message
    assert project.rows("refetched") == before
    monkeypatch.undo()
    node = run(project, "refetched")
    assert node.message == "STREAM 1 batch, 4 in, 1 out, 1 late, watermark 2020-04-15 08:20:00"
    assert project.rows("refetched") == [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 10, 3)]
    late = project.spark.sql(f"select bidtime, price, item from {project.schema}.refetched__late").collect()
    assert [tuple(r) for r in late] == [(t("8:08"), 9, "L")]


def test_a_file_removed_while_its_batch_runs_fails_the_batch_and_the_run_after_redoes_it(project, monkeypatch):
    """Each job of a batch reads its files again (Spark's micro-batch is rows read, not kept): a
    file removed after the batch's count fails the batch, naming the file, with the table as it
    was; put back, the next run redoes the batch."""
    make_source(project)
    window_view(project, "vanishing", "on_window_close", TUMBLE_SUM)
    deliver(project, DELIVERIES[0] + DELIVERIES[1])
    run(project, "vanishing")
    before = project.rows("vanishing")
    rows = as_select(DELIVERIES[2])
    landed = project.land("bid", "gone", rows)
    counted = late_rows.NewRows.count_and_stage_late

    def then_removed(self, *args):
        found = counted(self, *args)
        landed.unlink()
        return found

    monkeypatch.setattr(late_rows.NewRows, "count_and_stage_late", then_removed)
    message = errors(project.dbt("run", "-s", "vanishing", ok=False))
    assert (
        f"window_view model 'vanishing' (micro-batch 1) at {landed}: 1 file(s) of {project.schema}.bid that this "
        "micro-batch read are gone: a file was changed or removed while the batch ran; fix: let the input only "
        "grow by new files, and run again" in message
    ), message
    assert "Traceback" not in message and "_wv_" not in message
    assert project.rows("vanishing") == before
    monkeypatch.undo()
    project.land("bid", "gone", rows)
    node = run(project, "vanishing")
    assert node.message == "STREAM 1 batch, 4 in, 1 out, 1 late, watermark 2020-04-15 08:20:00", node.message
    assert project.rows("vanishing") == [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 10, 3)]


def test_an_input_that_gains_a_column_streams_on_and_its_late_rows_stay_whole(project):
    """ALTER TABLE ADD COLUMNS on the input between runs: the stream goes on reading the columns
    its model reads, rows before the change have NULL there, and a late row keeps the new
    column in the late table."""
    make_source(project)
    window_view(project, "widening", "on_window_close", TUMBLE_SUM)
    deliver(project, DELIVERIES[0] + DELIVERIES[1])
    run(project, "widening")
    project.spark.sql(f"alter table {project.schema}.bid add columns (channel string)")
    values = ", ".join(
        f"(timestamp'2020-04-15 {hhmm}:00', {price}, '{item}', 'web')" for hhmm, price, item in DELIVERIES[2]
    )
    project.spark.sql(f"insert into {project.schema}.bid values {values}")
    node = run(project, "widening")
    assert node.message == "STREAM 1 batch, 4 in, 1 out, 1 late, watermark 2020-04-15 08:20:00", node.message
    assert project.rows("widening") == [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 10, 3)]
    late = project.spark.sql(f"select bidtime, price, item, channel, _batch_id from {project.schema}.widening__late")
    assert [tuple(r) for r in late.collect()] == [(t("8:08"), 9, "L", "web", 1)]
    # a column the input lost, or one of another type, is no growth: the late table no longer fits
    project.spark.sql(f"drop table {project.schema}.bid")
    project.spark.sql(f"create table {project.schema}.bid (bidtime timestamp, price int) using parquet")
    message = errors(project.dbt("run", "-s", "widening", ok=False))
    assert "the columns of " in message and "fix: run `dbt run --full-refresh -s widening`" in message, message


def test_changed_sql_needs_full_refresh_which_rebuilds_from_all_input(project):
    make_source(project)
    window_view(project, "evolving", "on_update", TUMBLE_SUM)
    deliver(project, DELIVERIES[0] + DELIVERIES[1])
    run(project, "evolving")
    before = project.rows("evolving")
    window_view(project, "evolving", "on_update", TUMBLE_SUM.replace("sum(price)", "max(price)"))
    result = project.dbt("run", "-s", "evolving", ok=False)
    assert "run `dbt run --full-refresh -s evolving`" in errors(result)
    assert project.rows("evolving") == before
    deliver(project, DELIVERIES[2])
    result = project.dbt("run", "-s", "evolving", "--full-refresh")
    assert result.result[0].message.startswith("STREAM 1 batch, 8 in, 3 out, 0 late")
    assert project.rows("evolving") == [
        (t("8:00"), t("8:10"), 9, 4),
        (t("8:10"), t("8:20"), 6, 3),
        (t("8:20"), t("8:30"), 1, 1),
    ]


@pytest.mark.parametrize(
    "upstream, message",
    [
        ("seed", "upstream `landed` is a seed, which is rewritten in place"),
        ("table", "upstream `landed` is a 'table' model, which is rewritten in place"),
    ],
)
def test_inputs_rewritten_in_place_are_refused(project, upstream, message):
    if upstream == "seed":
        project.seed("landed", "bidtime,price,item\n2020-04-15 08:07:00,2,A\n")
    else:
        make_source(project)
        project.model("landed", "{{ config(materialized='table') }} select * from {{ source('raw', 'bid') }}")
    window_view(project, "reader", "on_update", TUMBLE_SUM.replace("source('raw', 'bid')", "ref('landed')"))
    project.dbt("seed" if upstream == "seed" else "run", "-s", "landed")
    result = project.dbt("run", "-s", "reader", ok=False)
    assert message in errors(result)
    assert "fix: streaming window views read sources, append-only incremental models" in errors(result)


@pytest.mark.parametrize(
    "select, message",
    [
        (
            "select window_start, sum(price) as p from {{ window_views.tumble(source('raw', 'bid'), 'bidtime', '10 minutes') }} group by window_start",
            "must output `window_end`",
        ),
        (
            "select * from {{ source('raw', 'bid') }}",
            "needs exactly one window TVF or over windows, found 0 window TVFs",
        ),
        (
            "select a.window_start, a.window_end from {{ window_views.tumble(source('raw', 'bid'), 'bidtime', '10 minutes') }} a "
            "join {{ window_views.tumble(source('raw', 'bid'), 'bidtime', '5 minutes') }} b on a.item = b.item",
            "a window join needs the same window on every side",
        ),
        (
            "select window_start, window_end, price - lag(price) over (order by bidtime) as d "
            "from {{ window_views.tumble(source('raw', 'bid'), 'bidtime', '10 minutes') }}",
            "is an over window across the windows of a window TVF",
        ),
        (
            "with bids as (select * from {{ source('raw', 'bid') }}) select * from {{ window_views.window_aggregate('bids', "
            "{'kind': 'hop', 'time_col': 'bidtime', 'size': '15 minutes', 'slide': '5 minutes'}, {'n': 'count(*)'}) }}",
            "window_aggregate reads bids (a CTE), and a stream keeps partial aggregates of its upstream table's rows",
        ),
    ],
    ids=["no-window-end", "no-tvf", "two-tvfs", "over-window", "window-aggregate-over-cte"],
)
def test_queries_streaming_cannot_run_are_refused(project, select, message):
    make_source(project)
    window_view(project, "refused", "on_update", select)
    result = project.dbt("run", "-s", "refused", ok=False)
    assert "window_view model 'refused'" in errors(result)
    assert message in errors(result)
    assert not project.spark.catalog.tableExists(f"{project.schema}.refused")


def test_processing_time_trigger_returns_after_its_bound(project):
    make_source(project)
    ticking(project, "ticking", "on_update", "6 seconds")
    deliver(project, DELIVERIES[0] + DELIVERIES[1])
    # a progress line per micro-batch, at dbt's default (info) level, while the stream ticks
    lines = []
    result = run_seen(project, "ticking", lambda e: lines.append((e.info.level, e.info.msg)))
    (node,) = result.result
    assert node.adapter_response["batches"] == 1 and node.adapter_response["rows_in"] == 4
    progress = [(level, msg.rsplit(",", 1)[0]) for level, msg in lines if "micro-batch" in msg]
    assert progress == [
        (
            "info",
            "WindowViews adapter: window_view model 'ticking': micro-batch 0: 4 in, 2 out, 0 late, "
            "watermark 2020-04-15 08:10:00",
        )
    ], progress
    assert project.rows("ticking") == [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 3, 1)]


def test_a_processing_time_run_reads_the_late_rows_of_files_that_land_while_it_runs(project):
    """A file with a late row lands after the run's first micro-batch: the next batch reads that
    row again whole from the input table as it is now, not as the session last listed it."""
    make_source(project)
    ticking(project, "ticking_late", "on_window_close", "8 seconds")
    deliver(project, DELIVERIES[0] + DELIVERIES[1])
    # a row without event time is late in the first batch too, which reads its file again
    project.spark.sql(f"insert into {project.schema}.bid values (null, 7, 'N')")
    first = threading.Event()
    # put in the table's folder by a loader outside Spark's catalog, as most are
    landed = threading.Thread(target=lambda: first.wait(60) and project.land("bid", "later", as_select(DELIVERIES[2])))
    landed.start()
    result = run_seen(project, "ticking_late", lambda e: "micro-batch 0:" in e.info.msg and first.set())
    landed.join()
    (node,) = result.result
    assert node.status == "success", node.message
    assert node.adapter_response["batches"] == 2 and node.adapter_response["late_rows"] == 2, node.message
    late = project.spark.sql(f"select bidtime, price, item from {project.schema}.ticking_late__late").collect()
    assert sorted((tuple(r) for r in late), key=repr) == [(None, 7, "N"), (t("8:08"), 9, "L")]
    assert project.rows("ticking_late") == [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 10, 3)]


@pytest.mark.parametrize(
    "setting, message",
    [
        # streams into Iceberg and Delta, but this venv's Spark has neither (tests/lakehouse/)
        ("file_format='iceberg'", "file_format='iceberg' needs Apache Iceberg in the Spark this dbt command started"),
        ("file_format='delta'", "file_format='delta' needs Delta Lake in the Spark this dbt command started"),
        ("partition_by=['window_start']", "config 'partition_by' is not supported with execution='streaming'"),
    ],
)
def test_layout_settings_streaming_cannot_honour(project, setting, message):
    make_source(project)
    project.model(
        "laid_out",
        f"""
        {{{{ config(materialized='window_view', execution='streaming', {setting},
                  watermark={{'column': 'bidtime', 'delay': '1 minute'}}) }}}}
        """
        + TUMBLE_SUM,
    )
    result = project.dbt("run", "-s", "laid_out", ok=False)
    assert "window_view model 'laid_out'" in errors(result) and message in errors(result)


def test_a_deleted_checkpoint_rebuilds_instead_of_duplicating(project):
    make_source(project)
    window_view(project, "forgetful", "on_window_close", TUMBLE_SUM)
    deliver(project, DELIVERIES[0] + DELIVERIES[1] + DELIVERIES[2])
    run(project, "forgetful")
    before = project.rows("forgetful")
    location = (
        project.spark.sql(f"describe table extended {project.schema}.forgetful")
        .where("col_name = 'Location'")
        .first()[1]
    )
    checkpoint = local_path(location).with_name("forgetful__checkpoint")
    assert (checkpoint / "window_views" / "model.json").exists()  # beside the table, not in it
    assert not any(p.name.startswith("_wv_checkpoint") for p in local_path(location).iterdir())
    shutil.rmtree(checkpoint)
    node = run(project, "forgetful")
    assert node.adapter_response["rows_in"] == 8
    assert project.rows("forgetful") == before


def test_window_columns_computed_inside_the_model_are_refused(project):
    make_source(project)
    window_view(
        project,
        "computed_key",
        "on_update",
        """
        with bids as (select *, price % 2 as parity from {{ source('raw', 'bid') }})
        select window_start, window_end, parity, count(*) as n
        from {{ window_views.session('bids', 'bidtime', '3 minutes', partition_by='parity') }}
        group by window_start, window_end, parity
        """,
    )
    result = project.dbt("run", "-s", "computed_key", ok=False)
    assert "window_views.session argument 'partition_by' names the column `parity`, which" in errors(result)
    assert "does not have, and the stream keeps" in errors(result)
    assert "fix: compute `parity` in an upstream model" in errors(result)


def test_a_streaming_run_refused_at_its_checks_keeps_the_batch_table_in_its_place(project):
    """A batch window view switched to streaming is replaced, as dbt replaces a table; but when
    the streaming model is refused (here by the output check only Spark can make: `*`), the batch
    table and its rows stay."""
    make_source(project)
    deliver(project, [("08:07", 2, "A"), ("08:11", 3, "B")])
    project.model(
        "switched",
        """
        {{ config(materialized='window_view', execution='batch') }}
        select window_start, window_end, count(*) as bids
        from {{ window_views.tumble(source('raw', 'bid'), 'bidtime', '10 minutes') }}
        group by window_start, window_end
        """,
    )
    assert run(project, "switched").status == "success"
    window_view(
        project,
        "switched",
        "on_window_close",
        """
        select * from (
          select window_end, count(*) as bids
          from {{ window_views.tumble(source('raw', 'bid'), 'bidtime', '10 minutes') }}
          group by window_start, window_end
        )
        """,
    )
    result = project.dbt("run", "-s", "switched", ok=False)
    assert "must output `window_start`" in errors(result)
    assert project.rows("switched", order_by="window_start") == [
        (t("08:00"), t("08:10"), 1),
        (t("08:10"), t("08:20"), 1),
    ]


def test_a_streaming_window_view_switched_to_batch_is_replaced_by_the_batch_table(project, monkeypatch):
    """As dbt replaces a table: the batch build takes the streaming table's name, though the
    streaming table's files are in the folder a batch table of that name takes. A rename that
    fails gives the streaming table its name back, with its rows."""
    from dbt.adapters.window_views.impl import WindowViewsAdapter

    make_source(project)
    deliver(project, [("08:07", 2, "A"), ("08:11", 3, "B")])
    window_view(project, "turned", "on_window_close", TUMBLE_SUM)
    assert run(project, "turned").status == "success"
    streamed = project.rows("turned")
    assert streamed == [(t("08:00"), t("08:10"), 2, 1)]
    project.model("turned", "{{ config(materialized='window_view', execution='batch') }}" + TUMBLE_SUM)

    rename = WindowViewsAdapter.rename_relation

    def failing(self, from_relation, to_relation):
        if from_relation.identifier.endswith("__wv_tmp"):
            raise RuntimeError("the rename failed")
        return rename(self, from_relation, to_relation)

    monkeypatch.setattr(WindowViewsAdapter, "rename_relation", failing)
    result = project.dbt("run", "-s", "turned", ok=False)
    assert "the rename failed" in errors(result)
    assert project.rows("turned") == streamed
    monkeypatch.setattr(WindowViewsAdapter, "rename_relation", rename)

    assert run(project, "turned").status == "success"
    assert project.rows("turned") == [(t("08:00"), t("08:10"), 2, 1), (t("08:10"), t("08:20"), 3, 1)]
    tables = [r.tableName for r in project.spark.sql(f"show tables in {project.schema}").collect()]
    # the late rows stay, for the user to read, until the model streams again (which rebuilds)
    assert [name for name in tables if name.startswith("turned_")] == ["turned__late"], tables
    location = project.spark.sql(f"describe table extended {project.schema}.turned").where("col_name = 'Location'")
    folder = local_path(location.first()[1])
    assert not [p.name for p in folder.parent.iterdir() if p.name.startswith("turned__wv")]


def test_an_input_written_anew_is_refused_and_one_declared_again_streams_on(project, tmp_path):
    """An upstream model's --full-refresh writes its rows anew: the stream would read them again
    as new rows and count them twice. Its next run is refused, naming --full-refresh, and keeps
    its table; the full refresh counts each row once. A source table dropped and declared again
    over the same files is the same input: the stream goes on."""
    make_source(project)
    landing = tmp_path / "landing"
    project.spark.sql(
        f"create table {project.schema}.ext (bidtime timestamp, price int, item string) using parquet "
        f"location '{landing}'"
    )
    project.write("models/sources.yml", sources_yml("bid", "ext"))
    project.model(
        "landed",
        """
        {{ config(materialized='incremental', incremental_strategy='append') }}
        select * from {{ source('raw', 'bid') }}
        {% if is_incremental() %} where bidtime > (select max(bidtime) from {{ this }}) {% endif %}
        """,
    )
    window_view(project, "reader", "on_update", TUMBLE_SUM.replace("source('raw', 'bid')", "ref('landed')"))
    window_view(project, "direct", "on_update", TUMBLE_SUM.replace("'bid'", "'ext'"))
    deliver(project, DELIVERIES[0] + DELIVERIES[1])
    project.spark.sql(f"insert into {project.schema}.ext select * from {project.schema}.bid")
    project.dbt("run", "-s", "landed", "reader", "direct")
    counted = [w("08:00", "08:10", 11, 3), w("08:10", "08:20", 3, 1)]
    assert project.rows("reader") == counted and project.rows("direct") == counted

    deliver(project, [("08:13", 1, "E")])
    project.dbt("run", "-s", "landed", "--full-refresh")
    result = project.dbt("run", "-s", "reader", ok=False)
    message = errors(result)
    assert f"its input {project.schema}.landed was created again since this stream last read it" in message
    assert "the files the stream read are gone: its rows were written anew" in message
    assert "fix: run `dbt run --full-refresh -s reader`" in message
    assert project.rows("reader") == counted
    assert "was created again" in errors(project.dbt("run", "-s", "reader", ok=False))  # again, not once
    project.dbt("run", "-s", "reader", "--full-refresh")
    assert project.rows("reader") == [w("08:00", "08:10", 11, 3), w("08:10", "08:20", 4, 2)]

    project.spark.sql(f"drop table {project.schema}.ext")
    project.spark.sql(
        f"create table {project.schema}.ext (bidtime timestamp, price int, item string) using parquet "
        f"location '{landing}'"
    )
    project.spark.sql(f"insert into {project.schema}.ext values (timestamp'2020-04-15 08:13:00', 1, 'E')")
    node = run(project, "direct")
    assert node.status == "success" and node.adapter_response["rows_in"] == 1, node.message
    assert project.rows("direct") == [w("08:00", "08:10", 11, 3), w("08:10", "08:20", 4, 2)]


def test_a_streaming_input_rebuilt_beside_itself_is_refused_naming_full_refresh(project):
    """A streaming window view's --full-refresh builds its new version beside the old one and
    moves its table there: a stream reading it would find none of the files its checkpoint
    names (Spark: `Wrong basePath`, on every run). It is refused, naming --full-refresh."""
    make_source(project)
    window_view(
        project, "closed", "on_window_close", TUMBLE_SUM.replace("count(*)", "max(bidtime) as last_bid, count(*)")
    )
    project.model(
        "chained",
        """
        {{ config(materialized='window_view', execution='streaming', emit='on_window_close',
                  watermark={'column': 'last_bid', 'delay': '0 minutes'}) }}
        with closed as (select last_bid, price from {{ ref('closed') }})
        select window_start, window_end, sum(price) as price
        from {{ window_views.tumble('closed', 'last_bid', '30 minutes') }}
        group by window_start, window_end
        """,
    )
    deliver(project, DELIVERIES[0] + DELIVERIES[1])
    project.dbt("run", "-s", "closed", "chained")
    project.dbt("run", "-s", "closed", "--full-refresh")
    message = errors(project.dbt("run", "-s", "chained", ok=False))
    assert f"its input {project.schema}.closed is at another location than when this stream last read it" in message
    assert "fix: run `dbt run --full-refresh -s chained`" in message and "basePath" not in message, message
    assert project.dbt("run", "-s", "chained", "--full-refresh").result[0].status == "success"


def test_a_missing_input_is_named_without_sparks_plan(project):
    make_source(project)
    project.write("models/sources.yml", sources_yml("bid", "nosuch"))
    window_view(project, "orphan", "on_update", TUMBLE_SUM.replace("'bid'", "'nosuch'"))
    message = errors(project.dbt("run", "-s", "orphan", ok=False))
    assert f"window_view model 'orphan': its input {project.schema}.nosuch does not exist" in message, message
    assert "UnresolvedRelation" not in message and "DROP VIEW IF EXISTS" not in message, message
