"""Idle inputs without Spark: the `idle_timeout` config, the rule that advances W, and idle steps
("N.k") in the commit log and Spark's file-sink log of the table."""

from dataclasses import replace
from pathlib import Path

import pytest

from dbt.adapters.window_views.model.config import ConfigError, WindowViewConfig
from dbt.adapters.window_views.plans.stream import fingerprint
from dbt.adapters.window_views.query import analysis
from dbt.adapters.window_views.query.windows import Cumulate, Hop, Session, Tumble
from dbt.adapters.window_views.records import (
    NO_NEW_ROWS,
    Arrival,
    BatchRecord,
    InputClocks,
    InputCounts,
    NewRowCounts,
    RunTotals,
)
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.streaming.commit.commits import CommitLog, Locations, next_idle_step, order
from dbt.adapters.window_views.streaming.inputs import idle

MINUTE = 60_000_000
SQL = "select window_start, window_end, count(*) as n from t group by window_start, window_end"


def parse(**watermark):
    return WindowViewConfig.from_model(
        "m", {"materialized": "window_view", "execution": "streaming", "watermark": {"column": "t", **watermark}}
    )


def test_idle_timeout_is_parsed_and_shown():
    cfg = parse(delay="1 minute", idle_timeout="10 minutes")
    assert cfg.watermark.idle_timeout.micros == 10 * MINUTE
    assert cfg.properties()["window_views.watermark_idle_timeout"] == "10 minutes"
    assert parse().watermark.idle_timeout is None
    assert "window_views.watermark_idle_timeout" not in parse().properties()


@pytest.mark.parametrize(
    "config, message, fix",
    [
        ({"idle_timeout": "soon"}, "config 'watermark' idle_timeout: 'soon' is not an interval", "e.g. '10 minutes'"),
        (
            {"idle_timeout": "-5 minutes"},
            "config 'watermark' idle_timeout: '-5 minutes' is negative",
            "e.g. '10 minutes'",
        ),
        ({"idle_timeout": "0 seconds"}, "config 'watermark' idle_timeout: '0 seconds' is zero", "e.g. '10 minutes'"),
        (
            {"idle_timout": "5 minutes"},
            "config 'watermark' = {'column': 't', 'idle_timout': '5 minutes'} is not valid",
            "optionally 'idle_timeout': '<interval>'",
        ),
    ],
)
def test_bad_idle_timeouts_name_the_key_and_the_fix(config, message, fix):
    with pytest.raises(ConfigError) as info:
        parse(**config)
    assert info.value.msg.startswith("window_view model 'm': ")
    assert message in info.value.msg and fix in info.value.msg


def test_idle_timeout_on_a_batch_model_is_refused():
    with pytest.raises(ConfigError) as info:
        WindowViewConfig.from_model(
            "m", {"emit": "on_window_close", "watermark": {"column": "t", "idle_timeout": "1 hour"}}
        )
    assert "idle_timeout only applies to execution='streaming'" in info.value.msg
    assert "remove 'idle_timeout', or set execution='streaming'" in info.value.msg


def test_idle_timeout_leaves_the_fingerprint_alone():
    """Existing checkpoints keep fitting when it is added, changed or removed: the state is the same."""
    query = analysis.parse(SQL)
    assert fingerprint(query, None, parse(idle_timeout="5 minutes")) == fingerprint(query, None, parse())
    assert fingerprint(query, None, parse(delay="1 minute")) != fingerprint(query, None, parse())


def committed(watermark, clocks):
    """A commit of a batch with rows: W and the idle clocks."""
    return BatchRecord(watermark, "1", 1, 0, 1, 0, clocks)


def test_w_advances_with_the_clock_after_the_timeout():
    last = committed(100 * MINUTE, Arrival(0, 100 * MINUTE))
    timeout = 10 * MINUTE
    assert idle.advanced(last, timeout, 10 * MINUTE) is None  # not idle for longer than the timeout yet
    assert idle.advanced(last, timeout, 13 * MINUTE) == 103 * MINUTE
    # after an idle step W = 103 minutes: only a later clock moves it further
    stepped = replace(last, watermark=103 * MINUTE)
    assert idle.advanced(stepped, timeout, 13 * MINUTE) is None
    assert idle.advanced(stepped, timeout, 20 * MINUTE) == 110 * MINUTE
    # no batch with rows yet, or no W yet: nothing to advance from
    assert idle.advanced(committed(5, Arrival()), timeout, 99 * MINUTE) is None
    assert idle.advanced(committed(None, Arrival(0, None)), timeout, 99 * MINUTE) is None


def test_window_tvfs_step_from_window_end_to_window_end():
    """TUMBLE/HOP/CUMULATE close windows only at their ends: W moves to the last end it reaches."""
    tumble = Tumble("t", size=10 * MINUTE)
    hop = Hop("t", size=10 * MINUTE, slide=4 * MINUTE)  # ends at 10, 14, 18, ... minutes
    cumulate = Cumulate("t", size=9 * MINUTE, step=3 * MINUTE, offset=1 * MINUTE)
    assert [tumble.end_at_or_before(m * MINUTE) // MINUTE for m in (9, 10, 19, -1)] == [0, 10, 10, -10]
    assert [hop.end_at_or_before(m * MINUTE) // MINUTE for m in (13, 14, 21)] == [10, 14, 18]
    assert [cumulate.end_at_or_before(m * MINUTE) // MINUTE for m in (3, 4, 8)] == [1, 4, 7]
    assert Session("t", gap=MINUTE).end_at_or_before(5) is None
    last = committed(106 * MINUTE, Arrival(0, 106 * MINUTE))
    assert idle.advanced(last, 10 * MINUTE, 13 * MINUTE, tumble) is None  # W 109: no end passed
    assert idle.advanced(last, 10 * MINUTE, 15 * MINUTE, tumble) == 110 * MINUTE  # W 111: to 110
    assert idle.advanced(last, 10 * MINUTE, 13 * MINUTE, Session("t", gap=MINUTE)) == 109 * MINUTE


def log(tmp_path: Path, fs) -> CommitLog:
    return CommitLog("m", Locations(tmp_path / "t", tmp_path / "t__late", tmp_path / "cp"), "run-a", fs)


READY = BatchRecord(watermark=5, state_batch="1", rows_in=3, late=0, rows_out=2, state_rows=0, clocks=Arrival())


def test_idle_steps_order_between_spark_batches(tmp_path, fs):
    commits = log(tmp_path, fs)
    assert next_idle_step(1) == "1.1" and next_idle_step("1.9") == "1.10"
    for batch, watermark in ((0, 5), (1, 6), ("1.1", 7), ("1.2", 8), (2, 9)):
        stepped = isinstance(batch, str)
        ready = replace(READY, watermark=watermark, rows_in=0 if stepped else 3, idle=stepped)
        commits.mark_ready(batch, ready)
        commits.commit(batch, commits.ready(batch))
        commits.clean(batch, (), ("1",))
        assert commits.last().watermark == watermark
    assert commits.ids() == [0, 1, "1.1", "1.2", 2]
    assert sorted(["1.10", 2, "1.2", 1], key=order) == [1, "1.2", "1.10", 2]
    # a replay of Spark batch 2 reads what the last idle step before it committed
    assert commits.last(before=2).watermark == 8
    assert commits.last(before="1.2").watermark == 7
    assert commits.run_totals() == RunTotals(batches=5, idle=2, rows_in=9, rows_out=10, late=0)
    assert commits.ready("1.2") is None and commits.ready(2) is not None  # older READY records go


def test_a_damaged_idle_step_commit_is_rebuilt_from_its_ready_record(tmp_path, fs):
    commits = log(tmp_path, fs)
    commits.mark_ready(0, READY)
    commits.commit(0, commits.ready(0))
    commits.mark_ready("0.1", replace(READY, idle=True, watermark=9))
    commits.commit("0.1", commits.ready("0.1"))
    path = tmp_path / "cp" / "window_views" / "commits" / "0.1.json"
    path.write_text(path.read_text()[:7])
    assert log(tmp_path, fs).last().watermark == 9


def test_an_idle_step_publishes_like_a_batch(tmp_path, fs):
    """The file log's entries follow each other, not batch ids: an idle step ("N.k") adds its
    files as the next delta, and a later batch that rewrites the bucket replaces them too."""
    table = tmp_path / "t"
    table.mkdir()
    for batch, name in ((3, "p0.parquet"), ("3.1", "q0.parquet"), (4, "r0.parquet")):
        staged = table / storage.STAGING / str(batch) / f"{storage.BUCKET}=b1"
        staged.mkdir(parents=True)
        (staged / name).write_text(f"{batch} {name}")
        replaced = ["b1"] if batch == 4 else []
        planned = storage.plan_publish(fs, str(table), batch, replaced)
        if batch == 4:
            assert planned.delete == ("b1-n3-p0.parquet", "b1-n3.1-q0.parquet")
        storage.publish(fs, str(table), batch, planned)
        storage.publish(fs, str(table), batch, planned)  # a replay changes nothing
        if batch == "3.1":
            assert storage.logged_files(fs, str(table)) == ["b1-n3-p0.parquet", "b1-n3.1-q0.parquet"]
            assert sorted(p.name for p in (table / storage.FILE_LOG).iterdir() if p.name[0] != ".") == [
                "10",
                "9.compact",
            ]
    assert storage.logged_files(fs, str(table)) == ["b1-n4-r0.parquet"]


def test_each_input_has_its_own_idle_clock():
    """Over several inputs the model's W is the least of the inputs' W, each moved on by its own
    clock once it has had no rows for longer than the timeout."""
    tumble = Tumble("t", size=10 * MINUTE)
    inputs = ["s.asks", "s.bids"]
    # asks arrived at minute 20 with W 130, bids at minute 0 with W 104: bids hold W back
    clocks = InputClocks({"s.asks": 130 * MINUTE, "s.bids": 104 * MINUTE}, {"s.asks": 20 * MINUTE, "s.bids": 0})
    last = committed(104 * MINUTE, clocks)
    timeout = 10 * MINUTE
    assert idle.advanced(last, timeout, 10 * MINUTE, inputs=inputs) is None  # bids not idle for longer yet
    assert idle.advanced(last, timeout, 15 * MINUTE, inputs=inputs) == 109 * MINUTE  # bids: 104 + 5
    assert idle.advanced(last, timeout, 15 * MINUTE, tumble, inputs) is None  # 109: no window end passed
    assert idle.advanced(last, timeout, 17 * MINUTE, tumble, inputs) == 110 * MINUTE
    # much later both are idle, each moving from its own last rows: bids 104 + 50, asks 130 + 30
    assert idle.advanced(last, timeout, 60 * MINUTE, inputs=inputs) == 154 * MINUTE
    # an input without rows yet has no clock: it holds every window back
    assert idle.least(InputClocks({"s.asks": 130 * MINUTE}, {"s.asks": 0}), timeout, 99 * MINUTE, None, inputs) is None
    # no idle_timeout: the inputs' W as their rows left them
    assert idle.least(clocks, None, 99 * MINUTE, None, inputs) == 104 * MINUTE


def test_a_batch_with_rows_of_one_input_moves_w_by_the_idle_one():
    """Asks keep arriving, bids went quiet: the batch restarts the asks' clock only, and the
    model's W moves by the bids' clock, to the last window end it reaches."""
    from test_streaming_join_plan import config as several
    from test_streaming_join_plan import join

    from dbt.adapters.window_views.streaming.inputs import sides
    from tests.support.streams import build

    plan = build(
        "m", join(), several(watermark={"column": "ts", "delay": "0 seconds", "idle_timeout": "10 minutes"}), ()
    )
    previous = committed(
        104 * MINUTE, InputClocks({"s.a": 110 * MINUTE, "s.b": 104 * MINUTE}, {"s.a": 10 * MINUTE, "s.b": 0})
    )
    asks = (InputCounts(2, 125 * MINUTE), InputCounts(0, None))
    w, clocks = sides.watermark(plan, asks, previous, 17 * MINUTE)  # bids: 104 + 7 = 111, to the end 110
    assert w == 110 * MINUTE
    assert clocks == InputClocks({"s.a": 125 * MINUTE, "s.b": 104 * MINUTE}, {"s.a": 17 * MINUTE, "s.b": 0})
    # a bid, late or not, restarts its clock where its W had moved to
    bids = (InputCounts(0, None), InputCounts(1, None))
    w, clocks = sides.watermark(plan, bids, replace(previous, watermark=w), 17 * MINUTE)
    assert w == 110 * MINUTE and clocks.watermarks["s.b"] == 110 * MINUTE
    assert clocks.arrivals["s.b"] == 17 * MINUTE
    # without idle_timeout the bids hold W where their rows left it
    plain = build("m", join(), several(watermark={"column": "ts", "delay": "0 seconds"}), ())
    assert sides.watermark(plain, asks, previous, 17 * MINUTE)[0] == 104 * MINUTE


def test_each_inputs_counts_are_read_back_from_the_row_of_the_batchs_counts():
    """SeveralInputs.counted reads the per-input counts its `stats` aggregates wrote, in the
    plan's order of inputs; one input counts nothing of its own."""
    from pyspark.sql import Row
    from test_streaming_join_plan import config as several
    from test_streaming_join_plan import join

    from dbt.adapters.window_views.streaming.inputs import sides
    from tests.support.streams import build

    plan = build("m", join(), several(watermark={"column": "ts", "delay": "0 seconds"}), ())
    row = Row(n=3, _wv_tmax0=None, _wv_n0=1, _wv_tmax1=7 * MINUTE, _wv_n1=2)
    assert sides.SeveralInputs(plan).counted(row) == (InputCounts(1, None), InputCounts(2, 7 * MINUTE))
    assert sides.OneInput(plan).counted(row) == ()


def test_an_inputs_watermark_reads_the_batchs_counts():
    """OneInput moves W by the latest event time on time; SeveralInputs by each input's counts."""
    from test_streaming_join_plan import config as several
    from test_streaming_join_plan import join

    from dbt.adapters.window_views.streaming.inputs import sides
    from tests.support.streams import build

    plan = build("m", join(), several(watermark={"column": "ts", "delay": "0 seconds"}), ())
    previous = committed(104 * MINUTE, InputClocks({"s.a": 110 * MINUTE, "s.b": 104 * MINUTE}, {"s.a": 0, "s.b": 0}))
    asks = (InputCounts(2, 125 * MINUTE), InputCounts(0, None))
    counts = NewRowCounts(2, 0, 120 * MINUTE, 125 * MINUTE, asks)
    at = 17 * MINUTE
    assert sides.SeveralInputs(plan).watermark(counts, previous, at) == sides.watermark(plan, asks, previous, at)
    assert sides.OneInput(plan).watermark(counts, previous, at) == (125 * MINUTE, Arrival(at, 125 * MINUTE))
    assert sides.OneInput(plan).watermark(NO_NEW_ROWS, previous, at) == (104 * MINUTE, Arrival(at, 104 * MINUTE))
