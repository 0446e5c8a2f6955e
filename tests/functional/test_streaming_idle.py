"""Idle inputs: watermark={'idle_timeout': ...} advances W with processing time when no rows
arrive (streaming/idle.py), so on_window_close windows still close; rows that come afterwards
for windows it closed are late. Over several inputs (a window join, a union) each input has its
own idle clock. The clock is moved by the tests (idle.now), except in the test of
a processing-time run, which waits a few real seconds."""

import json
from datetime import datetime

import pytest
from test_streaming import TUMBLE_SUM, deliver, make_source, run, t, window_view
from test_streaming_failures import assert_clean, checkpoint, schema_dir
from test_streaming_join import EXPECTED, JOIN, LEFT, RIGHT, UNION, make_sources
from test_streaming_join import deliver as deliver_to

from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.storage import filesystems
from dbt.adapters.window_views.streaming import labels
from dbt.adapters.window_views.streaming.commit import commits
from dbt.adapters.window_views.streaming.inputs import idle
from tests.support.dbt_projects import errors

MINUTE = 60_000_000


class Clock:
    def __init__(self) -> None:
        self.now = idle.now()

    def advance(self, minutes: float) -> None:
        self.now += int(minutes * MINUTE)


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(idle, "now", lambda: clock.now)
    return clock


def stream_minus_late(project, name: str, watermark: str) -> list:
    """What a batch over the input minus the late rows gives for the windows W has closed, by
    Spark's own window() (not the plugin's)."""
    return [
        tuple(r)
        for r in project.spark.sql(f"""
        select window.start, window.end, sum(price), count(*)
        from (select *, window(bidtime, '10 minutes') as window from {project.schema}.bid b
              where not exists (select 1 from {project.schema}.{name}__late l
                                where l.bidtime = b.bidtime and l.item = b.item))
        where window.end <= timestamp'{watermark}'
        group by window order by 1""").collect()
    ]


def test_windows_close_after_the_idle_timeout_and_later_rows_are_late(project, clock):
    make_source(project)
    views = project.temp_views()  # runs and idle steps in this session leave no view of theirs
    window_view(project, "idle_on", "on_window_close", TUMBLE_SUM)  # idle_timeout added after a run
    window_view(project, "idle_off", "on_window_close", TUMBLE_SUM)
    deliver(project, [("08:07", 2, "A"), ("08:05", 4, "C")])
    for name in ("idle_on", "idle_off"):
        assert run(project, name).message.startswith(
            "STREAM 1 batch, 2 in, 0 out, 0 late, watermark 2020-04-15 08:06:00"
        )
    # adding idle_timeout keeps the checkpoint: the state fits either way
    window_view(project, "idle_on", "on_window_close", TUMBLE_SUM, idle_timeout="10 minutes")
    clock.advance(5)  # idle, but not for longer than the timeout
    assert run(project, "idle_on").message.startswith(
        "STREAM 0 batches, 0 in, 0 out, 0 late, watermark 2020-04-15 08:06:00"
    )
    clock.advance(10)  # 15 minutes without rows: W = 08:06 + (15 - 10) minutes, to the window end 08:10
    node = run(project, "idle_on")
    assert node.message.startswith("STREAM 1 batch (1 idle), 0 in, 1 out, 0 late, watermark 2020-04-15 08:10:00"), (
        node.message
    )
    assert project.rows("idle_on") == [(t("8:00"), t("8:10"), 6, 2)]
    clock.advance(5)  # W would be 08:16: no window end passed, no step
    assert run(project, "idle_on").message.startswith(
        "STREAM 0 batches, 0 in, 0 out, 0 late, watermark 2020-04-15 08:10:00"
    )
    # without idle_timeout nothing closes
    assert run(project, "idle_off").message.startswith(
        "STREAM 0 batches, 0 in, 0 out, 0 late, watermark 2020-04-15 08:06:00"
    )
    assert project.rows("idle_off") == []

    # 08:09 comes after the idle step closed its window: late, judged by the advanced W
    deliver(project, [("08:09", 9, "L"), ("08:13", 1, "E")])
    node = run(project, "idle_on")
    assert node.message.startswith("STREAM 1 batch, 2 in, 0 out, 1 late, watermark 2020-04-15 08:12:00"), node.message
    late = project.spark.sql(f"select item, _watermark from {project.schema}.idle_on__late").collect()
    assert [tuple(r) for r in late] == [("L", datetime(2020, 4, 15, 8, 10))]
    assert run(project, "idle_off").message.startswith("STREAM 1 batch, 2 in, 1 out, 0 late")
    assert project.rows("idle_off") == [(t("8:00"), t("8:10"), 15, 3)]  # L counted there
    # the rows restarted the idle clock: the next idle step comes 10 minutes after them
    clock.advance(9)
    assert run(project, "idle_on").message.startswith("STREAM 0 batches")
    clock.advance(9)  # W = 08:12 + 8 minutes = 08:20 closes [08:10, 08:20)
    assert run(project, "idle_on").message.startswith(
        "STREAM 1 batch (1 idle), 0 in, 1 out, 0 late, watermark 2020-04-15 08:20:00"
    )
    assert project.rows("idle_on") == [(t("8:00"), t("8:10"), 6, 2), (t("8:10"), t("8:20"), 1, 1)]
    assert project.rows("idle_on") == stream_minus_late(project, "idle_on", "2020-04-15 08:20:00")
    assert project.temp_views() == views
    # each idle step has its own commit record, after the Spark batch it follows
    names = sorted(p.name for p in (checkpoint(project, "idle_on") / "window_views" / "commits").iterdir())
    assert names == ["0.1.json", "0.json", "1.1.json", "1.json"]


@pytest.mark.parametrize("point", ["staged", "ready", "published"])
def test_a_crash_in_an_idle_step_neither_loses_nor_doubles_windows(project, clock, monkeypatch, point):
    """The idle step dies before its READY record (staged), after it (ready: nothing published),
    or after publishing the table (published: no commit). The next run finishes or redoes it
    before Spark's next batch, which then judges its rows by the advanced W."""
    make_source(project)
    window_view(project, "idle_crash", "on_window_close", TUMBLE_SUM, idle_timeout="10 minutes")
    deliver(project, [("08:07", 2, "A"), ("08:05", 4, "C")])
    run(project, "idle_crash")
    clock.advance(15)

    def crash(*args, **kwargs):
        raise OSError(5, "injected crash")

    steps = {
        "staged": (commits.CommitLog, "mark_ready"),
        "ready": (storage, "publish"),
        "published": (commits.CommitLog, "commit"),
    }
    owner, method = steps[point]
    monkeypatch.setattr(owner, method, crash)
    message = errors(project.dbt("run", "-s", "idle_crash", ok=False))
    assert "window_view model 'idle_crash' (micro-batch 0.1) at " in message and "injected crash" in message, message
    assert_clean(message)
    monkeypatch.undo()
    monkeypatch.setattr(idle, "now", lambda: clock.now)
    project.spark.catalog.refreshTable(f"{project.schema}.idle_crash")  # the run did not get to it
    assert project.rows("idle_crash") == ([(t("8:00"), t("8:10"), 6, 2)] if point == "published" else [])
    deliver(project, [("08:09", 9, "L"), ("08:13", 1, "E")])
    node = run(project, "idle_crash")
    assert node.adapter_response["watermark"] == "2020-04-15 08:12:00"
    if point == "staged":
        # no READY record: the step never was; decided again after Spark's batches, whose rows
        # show the input was not idle, so 08:09 is on time
        assert project.rows("idle_crash") == [(t("8:00"), t("8:10"), 15, 3)]
        assert project.rows("idle_crash__late") == [] and node.message.startswith("STREAM 1 batch, 2 in, 1 out, 0 late")
        assert not (checkpoint(project, "idle_crash") / "window_views" / "state" / "0.1").exists()
    else:
        # finished as recorded before Spark's next batch, which judges 08:09 by the advanced W
        assert project.rows("idle_crash") == [(t("8:00"), t("8:10"), 6, 2)]
        assert [r[2] for r in project.rows("idle_crash__late")] == ["L"]
        assert node.message.startswith("STREAM 2 batches (1 idle), 2 in, 1 out, 1 late"), node.message
    table = schema_dir(project) / "idle_crash"
    assert not (table / storage.STAGING).exists()
    assert sorted(p.name for p in table.glob("*.parquet")) == sorted(
        storage.logged_files(filesystems.LOCAL, str(table))
    )


def test_a_processing_time_run_takes_idle_steps_between_batches(project):
    """The real clock: W 2 seconds before a window's end, idle_timeout 1 second; within one
    processing-time run the window closes without another row."""
    make_source(project)
    project.model(
        "idle_ticking",
        """
        {{ config(materialized='window_view', execution='streaming', emit='on_window_close',
                  watermark={'column': 'bidtime', 'delay': '1 minute', 'idle_timeout': '1 second'},
                  trigger={'processing_time': '1 second', 'max_duration': '20 seconds'}) }}
        """
        + TUMBLE_SUM,
    )
    # W = 08:10:58 - 1 minute: [08:00, 08:10) closes after 2 seconds beyond the timeout
    project.spark.sql(
        f"insert into {project.schema}.bid values (timestamp'2020-04-15 08:05:00', 5, 'A'), "
        "(timestamp'2020-04-15 08:10:58', 1, 'B')"
    )
    node = run(project, "idle_ticking")
    assert node.adapter_response["rows_in"] == 2 and node.adapter_response["rows_out"] == 1, node.message
    # one idle step: W moves to the window end 08:10, and the next (08:20) is minutes away
    assert "(1 idle)" in node.message and node.adapter_response["watermark"] == "2020-04-15 08:10:00", node.message
    assert project.rows("idle_ticking") == [(t("8:00"), t("8:10"), 5, 1)]


@pytest.mark.parametrize(
    "config, message",
    [
        (
            "execution='streaming', watermark={'column': 'bidtime', 'idle_timeout': 'soon'}",
            "config 'watermark' idle_timeout: 'soon' is not an interval",
        ),
        (
            "execution='streaming', watermark={'column': 'bidtime', 'idle_timeout': '-1 minute'}",
            "config 'watermark' idle_timeout: '-1 minute' is negative: the interval must be positive",
        ),
        (
            "execution='batch', watermark={'column': 'bidtime', 'idle_timeout': '1 minute'}",
            "config 'watermark' idle_timeout only applies to execution='streaming'",
        ),
    ],
)
def test_bad_idle_timeouts_fail_compile(project, config, message):
    make_source(project)
    project.model(
        "idle_bad", f"{{{{ config(materialized='window_view', emit='on_window_close', {config}) }}}}" + TUMBLE_SUM
    )
    text = errors(project.dbt("compile", "-s", "idle_bad", ok=False))
    assert "window_view model 'idle_bad': " + message in text, text
    assert_clean(text)


def join_model(project, name: str, sql: str, execution: str = "streaming", idle_timeout: str = "10 minutes") -> None:
    """A model of test_streaming_join.py's inputs (delay 1 second) with an idle timeout."""
    timeout = f", 'idle_timeout': '{idle_timeout}'" if execution == "streaming" else ""
    project.model(
        name,
        f"""
        {{{{ config(materialized='window_view', execution='{execution}', emit='on_window_close',
                    watermark={{'column': 'row_time', 'delay': '1 second'{timeout}}}) }}}}
        {sql}""",
    )


def test_a_window_join_closes_windows_when_one_side_goes_quiet(project, clock):
    """Asks keep arriving, bids go quiet: once the bids have had no row for idle_timeout their W
    moves with the clock, so joined windows close — in an idle step, and in a batch that only
    asks brought rows to. A bid arriving afterwards for a closed window is late (its side named),
    and the stream equals the batch window view over the inputs without it."""
    make_sources(project, "lefttable", "righttable", "left_on_time", "right_on_time")
    join_model(project, "quiet_join", JOIN)
    batch_sql = JOIN.replace("'lefttable'", "'left_on_time'").replace("'righttable'", "'right_on_time'")
    join_model(project, "quiet_join_batch", batch_sql, execution="batch")
    deliver_to(project, "lefttable", LEFT)
    deliver_to(project, "righttable", RIGHT)
    assert run(project, "quiet_join").message == "STREAM 1 batch, 6 in, 0 out, 0 late, watermark 2020-04-15 12:04:59"
    clock.advance(5)  # the asks go on; the bids have been quiet 5 minutes, not longer than the timeout
    deliver_to(project, "lefttable", [("12:11", 9, "L9")])
    assert run(project, "quiet_join").message == "STREAM 1 batch, 1 in, 0 out, 0 late, watermark 2020-04-15 12:04:59"
    clock.advance(7)  # bids quiet 12 minutes: their W 12:04:59 + 2 minutes, to the window end 12:05
    node = run(project, "quiet_join")
    assert node.message == "STREAM 1 batch (1 idle), 0 in, 3 out, 0 late, watermark 2020-04-15 12:05:00", node.message
    assert sorted(project.rows("quiet_join"), key=repr) == sorted(EXPECTED[:3], key=repr)
    clock.advance(5)  # bids quiet 17 minutes (W 12:11:59, to 12:10); an ask arrives: its batch closes [12:05, 12:10)
    deliver_to(project, "lefttable", [("12:16", 5, "L5")])
    node = run(project, "quiet_join")
    assert node.message == "STREAM 1 batch, 1 in, 2 out, 0 late, watermark 2020-04-15 12:10:00", node.message
    assert sorted(project.rows("quiet_join"), key=repr) == sorted(EXPECTED, key=repr)
    # the bids come back: 12:07 is for [12:05, 12:10), which their idleness closed; 12:13 is on time
    deliver_to(project, "righttable", [("12:07", 2, "R7"), ("12:13", 9, "R9")])
    node = run(project, "quiet_join")
    assert node.message == "STREAM 1 batch, 2 in, 0 out, 1 late, watermark 2020-04-15 12:12:59", node.message
    late = project.spark.sql(f"select _side, _row, _watermark from {project.schema}.quiet_join__late").collect()
    assert [(r._side, r._row, r._watermark) for r in late] == [
        (
            f"{project.schema}.righttable",
            '{"row_time":"2020-04-15T12:07:00.000Z","num":2,"id":"R7"}',
            datetime(2020, 4, 15, 12, 10),
        )
    ]
    # batch over the inputs without the late bid (with it, R7 would join L2): the same windows
    for table, kept in (("lefttable", "left_on_time"), ("righttable", "right_on_time")):
        project.spark.sql(
            f"insert overwrite {project.schema}.{kept} select * from {project.schema}.{table} where id != 'R7'"
        )
    run(project, "quiet_join_batch")
    assert sorted(project.rows("quiet_join"), key=repr) == sorted(project.rows("quiet_join_batch"), key=repr)
    names = sorted(p.name for p in (checkpoint(project, "quiet_join") / "window_views" / "commits").iterdir())
    assert names == ["0.json", "1.1.json", "1.json", "2.json", "3.json"]


def test_a_union_with_an_idle_input_and_one_without_rows(project, clock):
    """An input that has never had a row has no idle clock: it holds every window back however
    long the other is idle. Once both have rows, the quiet one's clock closes windows."""
    make_sources(project, "lefttable", "righttable")
    join_model(project, "quiet_union", UNION)
    deliver_to(project, "lefttable", LEFT + [("12:11", 9, "L9")])
    assert run(project, "quiet_union").message == "STREAM 1 batch, 4 in, 0 out, 0 late, watermark none"
    clock.advance(60)
    assert run(project, "quiet_union").message == "STREAM 0 batches, 0 in, 0 out, 0 late, watermark none"
    assert project.rows("quiet_union") == []
    deliver_to(project, "righttable", RIGHT)
    # the left input's clock moved its W far on; the right's 12:05 holds W at 12:04:59
    assert run(project, "quiet_union").message == "STREAM 1 batch, 3 in, 0 out, 0 late, watermark 2020-04-15 12:04:59"
    clock.advance(12)  # the right input quiet 12 minutes: W 12:06:59, to the window end 12:05
    node = run(project, "quiet_union")
    assert node.message == "STREAM 1 batch (1 idle), 0 in, 1 out, 0 late, watermark 2020-04-15 12:05:00", node.message
    assert project.rows("quiet_union") == [(t("12:00"), t("12:05"), 4, 9)]
    deliver_to(project, "righttable", [("12:04", 1, "R1")])
    assert run(project, "quiet_union").message == "STREAM 1 batch, 1 in, 0 out, 1 late, watermark 2020-04-15 12:05:00"
    late = project.spark.sql(f"select _side from {project.schema}.quiet_union__late").collect()
    assert [r._side for r in late] == [f"{project.schema}.righttable"]


def test_a_processing_time_run_over_several_inputs_moves_each_inputs_clock(project):
    """The real clock, over a union: the right input's 12:05 holds W at 12:04:59 after the first
    batch; with both inputs quiet, each input's clock moves its W within the same processing-time
    run, and the window [12:00, 12:05) closes without another row."""
    make_sources(project, "lefttable", "righttable")
    project.model(
        "ticking_union",
        """
        {{ config(materialized='window_view', execution='streaming', emit='on_window_close',
                  watermark={'column': 'row_time', 'delay': '1 second', 'idle_timeout': '1 second'},
                  trigger={'processing_time': '1 second', 'max_duration': '20 seconds'}) }}
        """
        + UNION,
    )
    deliver_to(project, "lefttable", LEFT + [("12:11", 9, "L9")])
    deliver_to(project, "righttable", RIGHT)
    node = run(project, "ticking_union")
    assert node.adapter_response["rows_in"] == 7 and node.adapter_response["rows_out"] == 1, node.message
    # one idle step, to the window end 12:05; the next end (12:10) is minutes of quiet away
    assert "(1 idle)" in node.message and node.adapter_response["watermark"] == "2020-04-15 12:05:00", node.message
    assert project.rows("ticking_union") == [(t("12:00"), t("12:05"), 4, 9)]
    folder = checkpoint(project, "ticking_union") / "window_views" / "commits"
    (step,) = [json.loads(p.read_text()) for p in folder.iterdir() if p.name != "0.json"]
    assert step["idle"] and len(step["input_arrivals"]) == 2, step  # each input's clock, carried through


def test_an_idle_step_over_several_inputs_crashed_after_its_ready_record_is_finished(project, clock, monkeypatch):
    """The idle step of a union dies after its READY record: the next run finishes it (its
    window published once, the inputs' clocks as recorded) before Spark's next batch, which
    judges the quiet input's row by the advanced W."""
    make_sources(project, "lefttable", "righttable")
    join_model(project, "quiet_crash", UNION)
    deliver_to(project, "lefttable", LEFT + [("12:11", 9, "L9")])
    deliver_to(project, "righttable", RIGHT)
    run(project, "quiet_crash")
    clock.advance(12)

    def crash(*args, **kwargs):
        raise OSError(5, "injected crash")

    monkeypatch.setattr(storage, "publish", crash)
    message = errors(project.dbt("run", "-s", "quiet_crash", ok=False))
    assert "window_view model 'quiet_crash' (micro-batch 0.1) at " in message and "injected crash" in message, message
    monkeypatch.undo()
    monkeypatch.setattr(idle, "now", lambda: clock.now)
    deliver_to(project, "righttable", [("12:04", 1, "R1")])
    node = run(project, "quiet_crash")
    assert node.message == "STREAM 2 batches (1 idle), 1 in, 1 out, 1 late, watermark 2020-04-15 12:05:00", node.message
    assert project.rows("quiet_crash") == [(t("12:00"), t("12:05"), 4, 9)]
    assert [r._side for r in project.spark.sql(f"select _side from {project.schema}.quiet_crash__late").collect()] == [
        f"{project.schema}.righttable"
    ]


def test_micro_batch_jobs_are_named_for_the_model_and_step_in_the_spark_ui(project, clock):
    """Each Spark job of a micro-batch, an idle step's too, is described by its model, batch and
    step (streaming/labels.py), as the Spark UI lists it. An idle step runs on dbt's thread, so
    the thread's own description is given back after each step."""
    spark = project.spark
    store = spark.sparkContext._jsc.sc().statusStore()

    def named(prefix: str) -> set:
        jobs = store.jobsList(None)
        found = (jobs.apply(i).description() for i in range(jobs.size()))
        return {d.get() for d in found if d.isDefined() and d.get().startswith(prefix)}

    make_source(project)
    window_view(project, "idle_named", "on_window_close", TUMBLE_SUM, idle_timeout="10 minutes")
    deliver(project, [("08:07", 2, "A"), ("08:05", 4, "C")])
    run(project, "idle_named")
    deliver(project, [("08:09", 3, "B"), ("08:01", 5, "D")])
    run(project, "idle_named")
    assert {
        "window_view idle_named, micro-batch 1: new rows counted, late rows staged",
        "window_view idle_named, micro-batch 1: state saved",
    } <= named("window_view idle_named,")
    clock.advance(15)
    assert "(1 idle)" in run(project, "idle_named").message
    assert any(d.endswith(": output staged") for d in named("window_view idle_named, micro-batch 1.")), named(
        "window_view"
    )

    spark.sparkContext.setJobDescription("the user's own")
    try:
        with labels.step(spark, "m", "7.1", "a step"):
            spark.range(3).count()
        assert spark.sparkContext.getLocalProperty("spark.job.description") == "the user's own"
    finally:
        spark.sparkContext.setLocalProperty("spark.job.description", None)
    assert named("window_view m,") == {"window_view m, micro-batch 7.1: a step"}
