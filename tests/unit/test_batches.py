"""Incremental batch window views without Spark: the batch periods, which batches a run computes
(batches.py), the config keys and the model shapes refused at compile time (config.py,
batch_reads.py), and a batch's SQL (each TVF's read widened by its reach, the owned rows kept)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from types import SimpleNamespace

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.batch import incremental
from dbt.adapters.window_views.batch.incremental import _first_line
from dbt.adapters.window_views.errors import ModelOutputError, ModelSqlError
from dbt.adapters.window_views.kinds import registry
from dbt.adapters.window_views.kinds.partials import panes
from dbt.adapters.window_views.model.config import BatchSize, ConfigError, WindowViewConfig
from dbt.adapters.window_views.plans.batch_reads import Closing, shape_of
from dbt.adapters.window_views.plans.batches import (
    PERIODS,
    RECORD_PROPERTY,
    BatchSpan,
    Requested,
    covering,
    record_first,
    select,
)
from dbt.adapters.window_views.plans.window_view import WindowViewPlan
from dbt.adapters.window_views.query import analysis, sqlexpr, tvf
from dbt.adapters.window_views.records import RECORD_VERSION, PendingBatches, PendingBatchesUnreadable

D = datetime


def parse(**config):
    return WindowViewConfig.from_model("m", {"materialized": "window_view", **config})


def batches(**config):
    return parse(event_time="window_time", batch_size="day", begin="2024-01-01", **config).batches


def keys(selection):
    return [b.key[:10] for b in selection.batches]


def test_periods_floor_and_shift():
    day, month, year, hour = (PERIODS[s] for s in (BatchSize.DAY, BatchSize.MONTH, BatchSize.YEAR, BatchSize.HOUR))
    assert day.floor(D(2024, 3, 5, 17, 3)) == D(2024, 3, 5) and day.shift(D(2024, 3, 5), -2) == D(2024, 3, 3)
    assert hour.floor(D(2024, 3, 5, 17, 3)) == D(2024, 3, 5, 17)
    assert month.floor(D(2024, 3, 5)) == D(2024, 3, 1) and month.shift(D(2024, 1, 1), -1) == D(2023, 12, 1)
    assert year.floor(D(2024, 3, 5)) == D(2024, 1, 1) and year.shift(D(2024, 1, 1), 1) == D(2025, 1, 1)
    assert [b.key for b in covering(month, D(2024, 1, 15), D(2024, 3, 1))] == [
        "2024-01-01 00:00:00",
        "2024-02-01 00:00:00",
    ]


def test_first_run_from_begin_to_the_latest_input():
    picked = select(batches(), D(2024, 1, 4, 5), (), PendingBatches(), Requested())
    assert keys(picked) == ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]
    assert picked.reason == "the first run"
    assert select(batches(), None, (), PendingBatches(), Requested()).batches == ()


def test_later_runs_from_the_current_batch_back_lookback_plus_pending():
    written = ["2024-01-01 00:00:00", "2024-01-02 00:00:00", "2024-01-03 00:00:00"]
    # dbt's lookback: batches before the current one, the one holding the latest input
    daily = select(batches(), D(2024, 1, 4, 1), written, PendingBatches(), Requested())
    assert keys(daily) == ["2024-01-03", "2024-01-04"]
    assert daily.reason == "the current batch (2024-01-04 00:00:00) and 1 before it (lookback)"
    assert keys(select(batches(lookback=2), D(2024, 1, 4, 1), written, PendingBatches(), Requested())) == [
        "2024-01-02",
        "2024-01-03",
        "2024-01-04",
    ]
    # days without a run: every batch after the last written is computed, and lookback before them
    missed = select(batches(), D(2024, 1, 6, 1), written, PendingBatches(), Requested())
    assert missed.reason == (
        "the batches from 2024-01-04 00:00:00 (the first after the last written) to the current one "
        "(2024-01-06 00:00:00), and 1 before 2024-01-04 00:00:00 (lookback)"
    )
    assert keys(missed) == [
        "2024-01-03",
        "2024-01-04",
        "2024-01-05",
        "2024-01-06",
    ]
    # no new day: the last written is the current one
    assert keys(select(batches(), D(2024, 1, 3, 9), written, PendingBatches(), Requested())) == [
        "2024-01-02",
        "2024-01-03",
    ]
    assert keys(select(batches(lookback=0), D(2024, 1, 3, 1), written, PendingBatches(), Requested())) == ["2024-01-03"]
    assert keys(select(batches(lookback=0), D(2024, 1, 4, 1), written, PendingBatches(), Requested())) == ["2024-01-04"]
    # a batch a previous run left unfinished is redone whatever the range
    pending = PendingBatches(("2024-01-01 00:00:00",))
    picked = select(batches(lookback=0), D(2024, 1, 3, 1), written, pending, Requested())
    assert keys(picked) == ["2024-01-01", "2024-01-03"] and "left unfinished" in picked.reason
    # a full refresh: every batch from begin again
    assert keys(select(batches(), D(2024, 1, 2, 1), written, pending, Requested(everything=True))) == [
        "2024-01-01",
        "2024-01-02",
    ]


def test_a_backfill_computes_its_range_only():
    written = ["2024-01-01 00:00:00", "2024-01-05 00:00:00"]
    picked = select(
        batches(), D(2024, 1, 5, 1), written, PendingBatches(), Requested(False, D(2024, 1, 2), D(2024, 1, 4))
    )
    assert keys(picked) == ["2024-01-02", "2024-01-03"]
    assert keys(
        select(batches(), D(2024, 1, 3, 1), written, PendingBatches(), Requested(False, D(2024, 1, 2, 6), None))
    ) == [
        "2024-01-02",
        "2024-01-03",
    ]


def test_the_record_round_trips_as_a_versioned_table_property():
    record = PendingBatches(("2024-01-02 00:00:00",))
    value = incremental._property_value(record)
    assert json.loads(value) == {"version": RECORD_VERSION, "pending": ["2024-01-02 00:00:00"]}
    assert incremental._record(f"[{RECORD_PROPERTY}={value}, x=y]", "m") == record
    assert incremental._record("[window_views.batch_column=window_time_day]", "m") == PendingBatches()  # none yet


@pytest.mark.parametrize(
    "value, why",
    [
        ("{not json", "does not read as this version writes it"),
        ('["2024-01-02 00:00:00"]', "does not read as this version writes it"),
        (f'{{"version": {RECORD_VERSION}, "pending": "2024-01-02"}}', "does not read as this version writes it"),
        ('{"pending": ["2024-01-02 00:00:00"], "kept": []}', "without a record version; this one reads version 1"),
        ('{"version": 99, "pending": []}', "with record version 99; this one reads version 1"),
    ],
)
def test_a_record_this_version_cannot_read_fails_the_run_naming_the_full_refresh(value, why):
    """Not an empty record: the batches it holds would never be redone, silently."""
    with pytest.raises(PendingBatchesUnreadable) as failed:
        incremental._record(f"[{RECORD_PROPERTY}={value}]", "m")
    message = failed.value.msg
    assert message.startswith("window_view model 'm': its table's record of unfinished batches"), message
    assert why in message and f"(table property {RECORD_PROPERTY})" in message, message
    assert message.endswith("fix: run `dbt run --full-refresh -s m` to recompute every batch from begin"), message


def test_a_run_over_a_table_with_another_versions_record_fails_before_any_batch():
    config = {"materialized": "window_view", "event_time": "window_time", "batch_size": "day", "begin": "2024-01-01"}
    plan = WindowViewPlan.from_model("m", tvf_sql(marker("tumble", size=H, offset=0)), config)
    properties = f'[window_views.batch_column=window_time_day, {RECORD_PROPERTY}={{"version": 99, "pending": []}}]'
    adapter = ExistingTable(D(2024, 1, 3, 5), properties, [])
    output = [("k", "string"), ("window_start", "timestamp"), ("window_end", "timestamp"), ("window_time", "timestamp")]
    with pytest.raises(PendingBatchesUnreadable, match="dbt run --full-refresh -s m"):
        incremental.run(
            incremental.BatchRun(adapter, plan, "s.t", None, output + [("n", "bigint")]), False, _unknown_types
        )
    assert [s.split()[0].upper() for s in adapter.statements] == ["DESCRIBE", "SHOW"], adapter.statements


def test_config_keys_parsed():
    b = parse(event_time="window_time", batch_size="day", lookback=2, begin="2024-01-01 06:00:00+02:00").batches
    assert (b.event_time, b.size, b.lookback, b.begin) == ("window_time", "day", 2, D(2024, 1, 1, 4))
    assert parse().batches is None and parse(lookback=1).batches is None  # dbt's default lookback alone
    assert "window_views.batches" in parse(event_time="t", batch_size="hour", begin="2024-01-01").properties()


@pytest.mark.parametrize(
    "config, message",
    [
        (
            {"batch_size": "week", "event_time": "t", "begin": "2024-01-01"},
            "config 'batch_size' = 'week' is not valid; expected one of: hour, day, month, year",
        ),
        ({"batch_size": "day", "begin": "2024-01-01"}, "config 'batch_size' = 'day' needs event_time"),
        ({"batch_size": "day", "event_time": "t"}, "config 'begin' is missing"),
        ({"batch_size": "day", "event_time": "t", "begin": "soon"}, "config 'begin' = 'soon' is not a timestamp"),
        ({"begin": "2024-01-01"}, "config 'begin' is set without batch_size"),
        (
            {"batch_size": "day", "event_time": "t", "begin": "2024-01-01", "lookback": -1},
            "config 'lookback' = -1 is not valid; expected a whole number of batches >= 0",
        ),
        (
            {
                "batch_size": "day",
                "event_time": "t",
                "begin": "2024-01-01",
                "execution": "streaming",
                "watermark": {"column": "t"},
            },
            "config 'batch_size' = 'day' only applies to execution='batch'",
        ),
        (
            {"batch_size": "day", "event_time": "t", "begin": "2024-01-01", "file_format": "orc"},
            "config 'file_format' = 'orc' cannot be used with batch_size",
        ),
        (
            {"batch_size": "day", "event_time": "t", "begin": "2024-01-01", "partition_by": ["d"]},
            "config 'partition_by' is not supported with batch_size",
        ),
    ],
)
def test_config_errors_name_model_key_and_fix(config, message):
    with pytest.raises(ConfigError) as raised:
        parse(**config)
    assert "window_view model 'm': " in str(raised.value) and message in str(raised.value)


def marker(kind: str, **us) -> str:
    spec = {"kind": kind, "time_col": "ts", **{f"{k}_us": v for k, v in us.items()}, "text": {}, "partition_by": []}
    return f"/* window_views:tvf:v1 {json.dumps(spec)} */"


H = 3_600_000_000


def tvf_sql(*markers: str, read: str = "`s`.`events`") -> str:
    selects = [
        f"select k, window_start, window_end, window_time, count(*) as n from ({m}\nselect * from {read} "
        "lateral view inline(array(named_struct('window_start', ts, 'window_end', ts, 'window_time', ts))) w "
        "as window_start, window_end, window_time) group by 1, 2, 3, 4"
        for m in markers
    ]
    return "\nunion all\n".join(selects)


def shape(sql: str, event_time: str = "window_time", size: str = "day", closing: bool = False, **config):
    b = parse(event_time=event_time, batch_size=size, begin="2024-01-01", **config).batches
    tree = analysis.parse(sql)
    return shape_of("m", tree, registry.batch_kind("m", tree, tvf.find(sql), closing), b)


def test_a_batch_reads_each_window_back_by_its_reach_and_keeps_its_own():
    hop = marker("hop", slide=2 * H, size=5 * H, offset=H // 2)
    tumble = marker("tumble", size=7 * H, offset=H)
    sql = shape(tvf_sql(hop, tumble)).sql(BatchSpan(D(2024, 1, 2), D(2024, 1, 3)))
    # HOP: the first window ending after midnight starts 20:30 the day before; TUMBLE (7 hours
    # from the epoch + 1 hour): a window starts at this midnight, so nothing before it is read
    assert (
        "`ts` >= CAST('2024-01-01 20:30:00' AS TIMESTAMP_NTZ) AND `ts` < CAST('2024-01-03 00:00:00' AS TIMESTAMP_NTZ)"
        in sql
    )
    assert (
        "`ts` >= CAST('2024-01-02 00:00:00' AS TIMESTAMP_NTZ) AND `ts` < CAST('2024-01-03 00:00:00' AS TIMESTAMP_NTZ)"
        in sql
    )
    assert sql.endswith(
        "WHERE `window_time` >= CAST('2024-01-02 00:00:00' AS TIMESTAMP_NTZ) AND `window_time` < CAST('2024-01-03 00:00:00' AS TIMESTAMP_NTZ)"
    )
    # owned by window_end: the windows ending in the day, read to its end minus 1 µs
    by_end = shape(tvf_sql(hop), "window_end").sql(BatchSpan(D(2024, 1, 2), D(2024, 1, 3)))
    assert "`ts` < CAST('2024-01-02 23:59:59.999999' AS TIMESTAMP_NTZ)" in by_end


def aggregate_sql(kind: str, read: str = "`s`.`events`", **us) -> str:
    """`select * from {{ window_views.window_aggregate(...) }}` as the macro renders its pane plan."""
    spec = {"kind": kind, "time_col": "ts", **{f"{k}_us": v for k, v in us.items()}, "text": {}}
    measures = {"n": "count(*)", "s": "sum(v)"}
    plan = panes.plan_from_config(read, spec, measures, ["k"])
    marked = {"via": "window_aggregate", "group_by": ["k"], "measures": measures, **spec}
    return f"select * from (\n/* window_views:tvf:v1 {json.dumps(marked)} */\nselect * from {plan['sql']} _wv_panes\n)"


def test_window_aggregate_reads_back_by_its_reach_and_keeps_its_own():
    day = BatchSpan(D(2024, 1, 2), D(2024, 1, 3))
    hop = aggregate_sql("hop", slide=H, size=4 * H, offset=H // 3)
    cumulate = aggregate_sql("cumulate", step=3 * H // 2, size=6 * H, offset=3 * H)
    tumble = aggregate_sql("tumble", size=7 * H, offset=H)
    # each pane plan's one read of the input widened, its own CTEs (`_wv_panes`, ...) left alone:
    # HOP from the start of the first window ending after midnight, CUMULATE from its period's start
    for sql, start in (
        (hop, "2024-01-01 20:20:00"),
        (cumulate, "2024-01-01 21:00:00"),
        (tumble, "2024-01-02 00:00:00"),
    ):
        batch_sql = shape(sql).sql(day)
        assert (
            f"FROM (SELECT * FROM `s`.`events` WHERE `ts` >= CAST('{start}' AS TIMESTAMP_NTZ) AND `ts` < CAST('2024-01-03 00:00:00' AS TIMESTAMP_NTZ)) AS events"
            in batch_sql
        )
        assert batch_sql.endswith(
            "WHERE `window_time` >= CAST('2024-01-02 00:00:00' AS TIMESTAMP_NTZ) AND `window_time` < CAST('2024-01-03 00:00:00' AS TIMESTAMP_NTZ)"
        )
    # two pane plans in one model: their CTEs named apart, as sqlglot moves every CTE to the top
    two = shape(f"{hop}\nunion all\n{cumulate}").sql(day)
    assert [two.count(f"{name} AS (") for name in ("_wv_panes", "_wv_panes_0", "_wv_panes_1")] == [0, 1, 1]
    # beside a window TVF, and closed by the watermark (the pane plan's frames are the plugin's)
    both = "\nunion all\n".join([tvf_sql(marker("tumble", size=H, offset=0)), hop])
    closing = Closing("ts", 1_704_196_800_000_000, ("k", "window_start", "window_end", "window_time", "n"))
    assert "`window_end` AS TIMESTAMP)) <= 1704196800000000" in shape(both, closing=True).sql(day, closing)
    with pytest.raises(ModelSqlError, match="its window_views.window_aggregate must read an input table"):
        shape(
            "with c as (select * from `s`.`events`)\n" + aggregate_sql("hop", read="c", slide=H, size=2 * H, offset=0)
        )


def test_a_pane_plans_window_functions_are_the_plugins():
    """Its over panes partition by the group_by keys and use RANGE frames in micros: not the model's
    over windows, so a HOP window_aggregate's input is known and it may be emit='on_window_close'."""
    closing = {"emit": "on_window_close", "watermark": {"column": "ts", "delay": "1 hour"}}
    built = WindowViewPlan.from_model("m", aggregate_sql("hop", slide=H, size=4 * H, offset=0), closing)
    assert built.over_calls == () and built.inputs == (("s", "events"),)
    assert built.close_sql is not None


def test_over_windows_read_as_under_a_dbt_filter():
    sql = "select id, ts, lag(v) over (partition by k order by ts, id) as p from `s`.`events`"
    batch_sql = shape(sql, "ts").sql(BatchSpan(D(2024, 1, 2), D(2024, 1, 3)))
    assert "RANK() OVER" in batch_sql  # the previous row of each key, before the batch's start
    assert batch_sql.endswith(
        "WHERE `ts` >= CAST('2024-01-02 00:00:00' AS TIMESTAMP_NTZ) AND `ts` < CAST('2024-01-03 00:00:00' AS TIMESTAMP_NTZ)"
    )


@pytest.mark.parametrize(
    "sql, event_time, message",
    [
        (tvf_sql(marker("tumble", size=H, offset=0)), "k", "config 'event_time' = 'k' is not a window column"),
        (
            tvf_sql(marker("hop", slide=H, size=2 * H, offset=0)),
            "window_start",
            "config 'event_time' = 'window_start' with batch_size='day': a hop window can start in one day",
        ),
        (
            tvf_sql(marker("session", gap=H)),
            "window_time",
            "config 'session_lookback' is not set, and with batch_size its window_views.session (gap '",
        ),
        (tvf_sql(marker("tumble", size=H, offset=0), read="c"), "window_time", "must read an input table"),
        ("select k, count(*) from `s`.`events` group by k", "k", "neither a window TVF nor an over window"),
        ("select ts, lag(v) over (order by other) as p from `s`.`events`", "ts", "ORDER BY"),
    ],
)
def test_shapes_a_batch_cannot_own_are_refused(sql, event_time, message):
    if "read=" in message or sql.endswith("group by 1, 2, 3, 4") and "from c " in sql:
        sql = "with c as (select * from `s`.`events`)\n" + sql
    with pytest.raises((ModelSqlError, ConfigError)) as raised:
        shape(sql, event_time)
    assert "window_view model 'm': " in str(raised.value) and message in str(raised.value), raised.value


def test_window_start_owns_windows_inside_a_batch():
    shape(tvf_sql(marker("tumble", size=H, offset=0)), "window_start")  # hours never cross midnight


def test_on_window_close_keeps_the_closed_windows_and_holds_the_batch_open():
    day = BatchSpan(D(2024, 1, 2), D(2024, 1, 3))
    w = 1_704_196_800_000_000  # 2024-01-02 12:00 UTC
    closing = Closing("ts", w, ("k", "window_start", "window_end", "window_time", "n"))
    sql = shape(tvf_sql(marker("tumble", size=H, offset=0)), closing=True).sql(day, closing)
    assert f"UNIX_MICROS(CAST(`window_end` AS TIMESTAMP)) <= {w}" in sql
    assert closing.holds_open(day) and not closing.holds_open(BatchSpan(D(2024, 1, 1), D(2024, 1, 2)))
    assert Closing("ts", None, ()).holds_open(BatchSpan(D(2024, 1, 1), D(2024, 1, 2)))  # nothing seen: nothing closed
    with pytest.raises(ModelSqlError, match="its over windows cannot be emit='on_window_close' yet"):
        shape("select id, ts, lag(v) over (partition by k order by ts, id) as p from `s`.`events`", "ts", closing=True)


def test_a_failed_batch_is_named_by_sparks_error_line():
    raised = DbtRuntimeError(
        "An error occurred while calling o43.sql.\n: org.apache.spark.SparkRuntimeException: "
        "[USER_RAISED_EXCEPTION] 'NOT (id <> 9004)' is not true! SQLSTATE: P0001\n\tat org.apache.spark..."
    )
    assert _first_line(raised) == "[USER_RAISED_EXCEPTION] 'NOT (id <> 9004)' is not true! SQLSTATE: P0001"
    assert _first_line(ValueError("no class here\nsecond")) == "no class here"
    # two tasks failing together: the first task's error, not the wrapper's
    both = DbtRuntimeError(
        "[STAGE_MATERIALIZATION_MULTIPLE_FAILURES] Multiple failures (2) in stage materialization:\n"
        "  1. SparkRuntimeException: [USER_RAISED_EXCEPTION] 'NOT (id <> 9004)' is not true! SQLSTATE: P0001\n"
        "  2. SparkRuntimeException: [USER_RAISED_EXCEPTION] ... SQLSTATE: XX000"
    )
    assert _first_line(both) == "[USER_RAISED_EXCEPTION] 'NOT (id <> 9004)' is not true! SQLSTATE: P0001"
    # the plugin's own names (a pane plan's CTE, its columns) are not the user's to read
    hidden = DbtRuntimeError(
        "[UNRESOLVED_COLUMN] A column `_wv_p` cannot be resolved in `_wv_panes_0`. SQLSTATE: 42703"
    )
    assert (
        _first_line(hidden)
        == "[UNRESOLVED_COLUMN] A column (internal) cannot be resolved in (internal). SQLSTATE: 42703"
    )


def test_a_column_named_like_the_batch_column_is_refused_before_anything_runs():
    config = {"materialized": "window_view", "event_time": "window_time", "batch_size": "day", "begin": "2024-01-01"}
    plan = WindowViewPlan.from_model("m", tvf_sql(marker("tumble", size=H, offset=0)), config)
    output = [("window_time", "timestamp"), ("window_time_day", "date")]
    with pytest.raises(ModelOutputError, match="it selects a column `window_time_day`, the column an incremental"):
        # no adapter: refused before any statement
        incremental.run(incremental.BatchRun(None, plan, "s.t", None, output), False, _unknown_types)


@pytest.mark.parametrize(
    "window, event_time, last",
    [
        # the last window holding 23:55 ends at midnight: no batch for the next day
        (marker("tumble", size=H // 6, offset=0), "window_time", D(2024, 1, 2, 23, 59, 59, 999999)),
        (marker("tumble", size=H // 6, offset=0), "window_end", D(2024, 1, 3)),
        (marker("tumble", size=H // 6, offset=0), "window_start", D(2024, 1, 2, 23, 55)),
        # a HOP's last window holding it reaches into the next day, and holds the row
        (marker("hop", slide=5 * H // 60, size=H, offset=0), "window_time", D(2024, 1, 3, 0, 54, 59, 999999)),
        (marker("cumulate", step=H, size=24 * H, offset=0), "window_time", D(2024, 1, 2, 23, 59, 59, 999999)),
        (marker("cumulate", step=H, size=24 * H, offset=2 * H), "window_time", D(2024, 1, 3, 1, 59, 59, 999999)),
    ],
)
def test_the_last_batch_is_the_one_holding_the_last_window_of_the_latest_row(window, event_time, last):
    assert shape(tvf_sql(window), event_time=event_time).last_time(D(2024, 1, 2, 23, 55)) == last


def test_a_session_is_owned_by_its_end_and_read_back_session_lookback():
    day = BatchSpan(D(2024, 1, 2), D(2024, 1, 3))
    session = shape(tvf_sql(marker("session", gap=H)), session_lookback="6 hours")
    sql = session.sql(day)
    # back 6 hours, and to the day's end inclusive: a row at midnight would extend a session ending there
    assert (
        "`ts` >= CAST('2024-01-01 18:00:00' AS TIMESTAMP_NTZ) AND `ts` < CAST('2024-01-03 00:00:00.000001' AS TIMESTAMP_NTZ)"
        in sql
    )
    assert sql.endswith(
        "WHERE `window_time` >= CAST('2024-01-02 00:00:00' AS TIMESTAMP_NTZ) AND `window_time` < CAST('2024-01-03 00:00:00' AS TIMESTAMP_NTZ)"
    )
    # an owned session starting within the gap of the read's start may reach before it: the batch fails
    assert "RAISE_ERROR(CONCAT('a session ending at '" in sql
    assert "UNIX_MICROS(CAST(`window_start` AS TIMESTAMP)) < 1704135600000000" in sql  # 2024-01-01 19:00
    # its last window ends a gap after the latest input; a batch ending after the input stays pending
    assert session.last_time(D(2024, 1, 2, 23, 30)) == D(2024, 1, 3, 0, 29, 59, 999999)
    assert session.growing(day, D(2024, 1, 2, 23, 30)) and not session.growing(day, D(2024, 1, 3))
    assert not session.growing(day, None)


@pytest.mark.parametrize(
    "lookback, message",
    [
        ("30 minutes", "config 'session_lookback' = '30 minutes' is shorter than the gap '"),
        ("soon", "config 'session_lookback' is not valid: 'soon' is not an interval"),
    ],
)
def test_a_session_lookback_too_short_or_not_an_interval_is_refused(lookback, message):
    with pytest.raises(ConfigError) as raised:
        shape(tvf_sql(marker("session", gap=H)), session_lookback=lookback)
    assert "window_view model 'm': " in str(raised.value) and message in str(raised.value), raised.value
    assert "; set it to the longest session plus the gap" in str(raised.value) or "e.g. '1 day'" in str(raised.value)


def _unknown_types(relation):
    return None  # no input the catalog can describe: every batch runs as the model writes it


class RecordingAdapter:
    """Enough of the adapter for a first run of incremental.run: every statement kept, the input's
    latest time (epoch micros) answered."""

    def __init__(self, latest: datetime) -> None:
        self.latest = int((latest - D(1970, 1, 1)).total_seconds()) * 1_000_000
        self.statements: list = []

    def execute(self, sql: str, fetch: bool = False):
        self.statements.append(sql)
        if "MAX(" not in sql.upper():
            return None, SimpleNamespace(rows=[])
        # the latest time over the rows at or after a bound, if it has one: none there is NULL
        since = re.search(r"TIMESTAMP_MICROS\((\d+)\)", sql)
        return None, SimpleNamespace(rows=[[None if since and int(since[1]) > self.latest else self.latest]])

    def get_relation(self, **_):
        return None

    def table_location(self, _):
        return "file:/tmp/wv/t"

    def remove_location(self, _):
        pass

    def write_partitioned(self, sql, location, column):
        self.statements.append(f"STAGED {location} BY {column}: {sqlexpr.to_sql(sql)}")
        return True

    def move_directories(self, moves):
        self.statements.append(f"MOVED {moves}")


def test_a_batch_whose_windows_later_input_can_grow_stays_pending():
    # sessions of gap 1 hour, input up to 01-02 23:30: its last session may still grow, so the
    # batches ending after 23:30 (01-02, and 01-03 holding its end) are left for the next run,
    # whatever the lookback
    config = {
        "materialized": "window_view",
        "event_time": "window_time",
        "batch_size": "day",
        "begin": "2024-01-01",
        "lookback": 0,
        "session_lookback": "6 hours",
    }
    plan = WindowViewPlan.from_model("m", tvf_sql(marker("session", gap=H)), config)
    adapter = RecordingAdapter(D(2024, 1, 2, 23, 30))
    output = [("k", "string"), ("window_start", "timestamp"), ("window_end", "timestamp"), ("window_time", "timestamp")]
    result = incremental.run(
        incremental.BatchRun(adapter, plan, "s.t", None, output + [("n", "bigint")]), False, _unknown_types
    )
    # a first run adds its batches' partitions in one statement, after the last batch
    (added,) = [s for s in adapter.statements if " ADD PARTITION" in s.upper()]
    assert added.count("PARTITION (") == 3, added  # 01-01, 01-02, and 01-03 which holds the last session's end
    assert adapter.statements[-1] == added
    # written with the table's other properties by the materialization, not by a statement of its own
    record = result.properties[RECORD_PROPERTY]
    assert json.loads(record) == {"version": RECORD_VERSION, "pending": ["2024-01-02 00:00:00", "2024-01-03 00:00:00"]}
    assert "pending_batches" not in result.summary
    # 01-02 is written but stays pending, and is not the last batch: a kill after it must find
    # it recorded, so the run records every batch before it writes them
    (first,) = [s for s in adapter.statements if "pending_batches" in s]
    first_write = next(s for s in adapter.statements if s.startswith(("INSERT OVERWRITE", "STAGED")))
    assert adapter.statements.index(first) < adapter.statements.index(first_write)


def plain_runs_redo_what_a_kill_left(written, record, last_time, leaves_pending, config):
    """Every point a plain run can be killed at, without a record written first: the batches the
    next plain run (the old record; the same input, or three days more) does not take, that the
    killed run had not finished (not reached, or written but meant to stay pending)."""
    planned = select(config, last_time, written, record, Requested()).batches
    missed = set()
    for killed_after in range(len(planned) + 1):
        done = [b.key for b in planned[:killed_after]]
        unfinished = {b.key for b in planned[killed_after:]} | (set(done) & set(leaves_pending))
        for later in (last_time, last_time + timedelta(days=3)):
            after = {
                b.key for b in select(config, later, sorted(set(written) | set(done)), record, Requested()).batches
            }
            missed |= unfinished - after - set(record.pending)
    return planned, sorted(missed)


@pytest.mark.parametrize("lookback", [0, 1, 3])
@pytest.mark.parametrize(
    "leaves_pending, backfill, first",
    [
        ((), False, False),
        (("2024-01-06 00:00:00",), False, False),  # the last batch, still growing: a daily run
        (("2024-01-05 00:00:00", "2024-01-06 00:00:00"), False, True),  # unclosed before the last
        (("2024-01-02 00:00:00",), False, False),  # the old record holds it already
        ((), True, True),  # a backfill's batches lie before the next run's start
    ],
)
def test_a_run_records_its_batches_first_only_where_a_kill_needs_it(lookback, leaves_pending, backfill, first):
    written = [f"2024-01-0{d} 00:00:00" for d in range(1, 6)]
    record = PendingBatches(("2024-01-02 00:00:00",))
    config = batches(lookback=lookback)
    planned, missed = plain_runs_redo_what_a_kill_left(written, record, D(2024, 1, 6, 3), leaves_pending, config)
    first = first or (lookback == 0 and bool(set(leaves_pending) - set(record.pending)))
    assert record_first(planned, leaves_pending, record, backfill, lookback) is first
    if not first:
        assert not missed, missed
    elif leaves_pending == ("2024-01-06 00:00:00",):  # lookback 0: the next run may start after it
        assert missed == ["2024-01-06 00:00:00"]  # what the record written first saves
    elif not backfill and lookback == 1:
        assert missed == ["2024-01-05 00:00:00"]


class ExistingTable(RecordingAdapter):
    """An earlier run's table: its DESCRIBE (columns, location, properties as Spark prints them),
    its partitions and its batch directories."""

    def __init__(self, latest: datetime, properties: str, listed: list) -> None:
        super().__init__(latest)
        self.properties, self.listed, self.removed = properties, listed, []

    def execute(self, sql: str, fetch: bool = False):
        if sql.upper().startswith("DESCRIBE"):
            self.statements.append(sql)
            columns = [(c, "string", None) for c in ("k", "window_start", "window_end", "window_time", "n")]
            details = [("Location", "file:/tmp/wv/t", ""), ("Table Properties", self.properties, "")]
            rows = columns + [("window_time_day", "string", None), ("# Partition Information", "", "")]
            return None, SimpleNamespace(
                rows=rows + [("", "", "")] + [("# Detailed Table Information", "", "")] + details
            )
        if sql.upper().startswith("SHOW PARTITIONS"):
            self.statements.append(sql)
            keys = ("2024-01-01", "2024-01-02")
            return None, SimpleNamespace(rows=[[f"window_time_day={d} 00%3A00%3A00"] for d in keys])
        return super().execute(sql, fetch)

    def get_relation(self, **_):
        return SimpleNamespace(is_table=True, type="table")

    def list_location(self, location):
        assert location == "/tmp/wv/t/_wv_batches", location
        return self.listed

    def remove_location(self, location):
        self.removed.append(location)


def test_a_daily_run_reads_its_table_twice_and_writes_no_property_of_its_own():
    config = {"materialized": "window_view", "event_time": "window_time", "batch_size": "day", "begin": "2024-01-01"}
    plan = WindowViewPlan.from_model("m", tvf_sql(marker("tumble", size=H, offset=0)), config)
    # Spark prints each value as written: a summary's `, size=` is no property, the record is JSON
    properties = (
        "[transient_lastDdlTime=1, window_views.batch_column=window_time_day, window_views.pending_batches="
        f'{{"version": {RECORD_VERSION}, "pending": ["2024-01-02 00:00:00"]}}, window_views.windows=tumble(time_col=ts, size=1 hour)]'
    )
    listed = ["20240101T000000-aaa", "20240102T000000-bbb", "20240102T000000-ccc", "20240103T000000-ddd"]
    adapter = ExistingTable(D(2024, 1, 3, 5), properties, listed + ["_wv_staging-eee"])
    output = [("k", "string"), ("window_start", "timestamp"), ("window_end", "timestamp"), ("window_time", "timestamp")]
    result = incremental.run(
        incremental.BatchRun(adapter, plan, "s.t", None, output + [("n", "bigint")]), False, _unknown_types
    )
    reads = [s for s in adapter.statements if s.upper().startswith(("DESCRIBE", "SHOW"))]
    assert len(reads) == 2, reads
    assert not [s for s in adapter.statements if "TBLPROPERTIES" in s.upper()], adapter.statements
    # 01-02 (lookback, and pending), 01-03 (new, still growing: pending again)
    assert json.loads(result.properties[RECORD_PROPERTY]) == {
        "version": RECORD_VERSION,
        "pending": ["2024-01-03 00:00:00"],
    }
    assert len([s for s in adapter.statements if "SET LOCATION" in s.upper()]) == 1
    assert len([s for s in adapter.statements if "ADD PARTITION" in s.upper()]) == 1
    # a batch's old directories go once its partition points at the new one; a killed run's too
    gone = [r for r in adapter.removed if r and "_wv_batches/2024" in r]
    assert gone == [f"/tmp/wv/t/_wv_batches/{name}" for name in listed[1:]], adapter.removed
    # and a killed run's staging directory (batches computed as one), first
    assert adapter.removed[0] == "/tmp/wv/t/_wv_batches/_wv_staging-eee", adapter.removed


@pytest.mark.parametrize(
    "recorded, scans",
    [
        (None, [None]),  # no record (a table of an earlier version): one scan of every row
        ("2024-01-03 04:00:00.000000", ["2024-01-03 04:00:00"]),  # the rows since the last run's latest
        # input rewritten to end before the recorded time: nothing there, so every row
        ("2024-01-04 00:00:00.000000", ["2024-01-04 00:00:00", None]),
    ],
)
def test_a_run_asks_the_latest_input_time_of_the_rows_since_the_last_runs(recorded, scans):
    config = {"materialized": "window_view", "event_time": "window_time", "batch_size": "day", "begin": "2024-01-01"}
    plan = WindowViewPlan.from_model("m", tvf_sql(marker("tumble", size=H, offset=0)), config)
    kept = "" if recorded is None else f", {incremental.LATEST_PROPERTY}={recorded}"
    properties = f"[window_views.batch_column=window_time_day{kept}, window_views.windows=tumble(size=1 hour)]"
    adapter = ExistingTable(D(2024, 1, 3, 5), properties, [])
    output = [("k", "string"), ("window_start", "timestamp"), ("window_end", "timestamp"), ("window_time", "timestamp")]
    result = incremental.run(
        incremental.BatchRun(adapter, plan, "s.t", None, output + [("n", "bigint")]), False, _unknown_types
    )
    asked = [re.findall(r"TIMESTAMP_MICROS\((\d+)\)", s) for s in adapter.statements if "MAX(" in s.upper()]
    since = [D(1970, 1, 1) + timedelta(microseconds=int(found[0])) if found else None for found in asked]
    assert since == [None if s is None else datetime.fromisoformat(s) for s in scans], adapter.statements
    assert result.properties[incremental.LATEST_PROPERTY] == "2024-01-03 05:00:00.000000"
    assert incremental._latest("[window_views.latest_input_time=soon]") is None


def test_a_table_of_another_batch_column_is_rebuilt_beside_it():
    config = {"materialized": "window_view", "event_time": "window_time", "batch_size": "hour", "begin": "2024-01-01"}
    plan = WindowViewPlan.from_model("m", tvf_sql(marker("tumble", size=H, offset=0)), config)
    adapter = ExistingTable(D(2024, 1, 1, 2), "[window_views.batch_column=window_time_day]", [])
    output = [("k", "string"), ("window_start", "timestamp"), ("window_end", "timestamp"), ("window_time", "timestamp")]
    batch_run = incremental.BatchRun(adapter, plan, "s.t", None, output)
    assert incremental._existing(batch_run, adapter.get_relation()) is None


def test_a_hop_batch_is_computed_from_panes_over_its_widened_read_where_exact():
    config = {"materialized": "window_view", "event_time": "window_time", "batch_size": "day", "begin": "2024-01-01"}
    plan = WindowViewPlan.from_model("m", tvf_sql(marker("hop", slide=H, size=3 * H, offset=0)), config)
    output = [("k", "string"), ("window_start", "timestamp"), ("window_end", "timestamp"), ("window_time", "timestamp")]

    def computed(types):
        adapter = RecordingAdapter(D(2024, 1, 1, 23))
        incremental.run(
            incremental.BatchRun(adapter, plan, "s.t", None, output + [("n", "bigint")]), False, lambda relation: types
        )
        # 01-01, and 01-02 holding the last window's end: contiguous, so computed as one
        (staged,) = [s for s in adapter.statements if s.startswith("STAGED")]
        return staged

    paned = computed({"k": "string", "ts": "timestamp"})
    assert "lateral view inline" not in paned.lower() and "_wv_panes" in paned, paned
    # the panes read the batches' range widened by the window's reach; the batches keep their own windows
    assert (
        "`ts` >= CAST('2023-12-31 22:00:00' AS TIMESTAMP_NTZ) AND `ts` < CAST('2024-01-03 00:00:00' AS TIMESTAMP_NTZ)"
        in paned
    ), paned
    assert (
        "`window_time` >= CAST('2024-01-01 00:00:00' AS TIMESTAMP_NTZ) AND `window_time` < CAST('2024-01-03 00:00:00' AS TIMESTAMP_NTZ)"
        in paned
    ), paned
    assert "lateral view inline" in computed(None).lower()


class FailingStaged(RecordingAdapter):
    """Fails the staged write, as a row of one batch failing its query would."""

    def __init__(self, latest: datetime) -> None:
        super().__init__(latest)
        self.removed: list = []

    def write_partitioned(self, sql, location, column):
        super().write_partitioned(sql, location, column)
        raise RuntimeError("[DIVIDE_BY_ZERO] Division by zero.")

    def remove_location(self, location):
        self.removed.append(location)


@pytest.mark.parametrize("fails", [False, True])
def test_contiguous_batches_are_computed_once_and_each_gets_its_own_directory(fails):
    config = {"materialized": "window_view", "event_time": "window_time", "batch_size": "day", "begin": "2024-01-01"}
    plan = WindowViewPlan.from_model("m", tvf_sql(marker("tumble", size=H, offset=0)), config)
    adapter = (FailingStaged if fails else RecordingAdapter)(D(2024, 1, 3, 5))
    output = [("k", "string"), ("window_start", "timestamp"), ("window_end", "timestamp"), ("window_time", "timestamp")]
    incremental.run(incremental.BatchRun(adapter, plan, "s.t", None, output + [("n", "bigint")]), False, _unknown_types)
    (staged,) = [s for s in adapter.statements if s.startswith("STAGED")]
    writes = [s for s in adapter.statements if s.upper().startswith("INSERT OVERWRITE")]
    moved = [s for s in adapter.statements if s.startswith("MOVED")]
    (added,) = [s for s in adapter.statements if " ADD PARTITION" in s.upper()]
    staging = re.match(r"STAGED (\S+) BY _wv_batch_dir:", staged)[1]
    assert staging.startswith("/tmp/wv/t/_wv_batches/_wv_staging-"), staged
    # one read of the three days' input, each row sent to its batch's directory by its window_time
    assert (
        "`window_time` >= CAST('2024-01-01 00:00:00' AS TIMESTAMP_NTZ) AND `window_time` < CAST('2024-01-04 00:00:00' AS TIMESTAMP_NTZ)"
        in staged
    )
    directories = re.findall(r"THEN '(\d{8}T\d{6}-[0-9a-f]{12})'", staged)
    assert [d[:8] for d in directories] == ["20240101", "20240102", "20240103"], staged
    assert "CAST(`n` AS BIGINT) AS `n`" in staged, staged  # the table's types, as a batch's own write
    partitions = re.findall(r"LOCATION '([^']+)'", added)
    assert partitions == [f"/tmp/wv/t/_wv_batches/{d}" for d in directories], added
    if not fails:
        assert not writes and moved == [
            f"MOVED {[(f'{staging}/_wv_batch_dir={d}', p) for d, p in zip(directories, partitions)]}"
        ]
    else:
        # each batch then computes its own, into the directory it would have had
        assert not moved and len(writes) == 3, adapter.statements
        for day, write, partition in zip(("01", "02", "03"), writes, partitions):
            assert (
                f"`window_time` >= CAST('2024-01-{day} 00:00:00' AS TIMESTAMP_NTZ)" in write
                and f"DIRECTORY '{partition}'" in write
            )
        assert staging in adapter.removed and set(partitions) <= set(adapter.removed)


def test_batches_that_are_not_contiguous_are_computed_apart():
    days = [BatchSpan(D(2024, 1, d), D(2024, 1, d + 1)) for d in (1, 2, 4, 6, 7, 8)]
    assert [[b.start.day for b in g] for g in incremental._contiguous(days)] == [[1, 2], [4], [6, 7, 8]]
    hours = [BatchSpan(D(2024, 1, 1) + timedelta(hours=h), D(2024, 1, 1) + timedelta(hours=h + 1)) for h in range(250)]
    assert [len(g) for g in incremental._contiguous(hours)] == [100, 100, 50]


def test_batches_computed_as_one_refuse_the_sessions_each_would_refuse_alone():
    # a session owned by 01-02 that may begin before 01-02's own read fails the batches computed
    # as one too, though their read, from 01-01's, holds it: so they then run alone, and 01-02 fails
    s = shape(tvf_sql(marker("session", gap=H)), session_lookback="6 hours")
    days = [BatchSpan(D(2024, 1, d), D(2024, 1, d + 1)) for d in (1, 2)]

    def refused(sql: str) -> list:
        owns = r"`window_time` AS TIMESTAMP\)\) >= (\d+) AND .*? < (\d+) AND .*?`window_start` AS TIMESTAMP\)\) < (\d+)"
        return re.findall(owns, sql)

    alone = [refused(s.sql(day)) for day in days]
    assert [len(r) for r in alone] == [1, 1]
    together = s.sql(BatchSpan(days[0].start, days[1].end), parts=days)
    assert refused(together) == alone[0] + alone[1]
    assert (
        "`ts` >= CAST('2023-12-31 18:00:00' AS TIMESTAMP_NTZ) AND `ts` < CAST('2024-01-03 00:00:00.000001' AS TIMESTAMP_NTZ)"
        in together
    )
