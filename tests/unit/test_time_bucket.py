"""A GROUP BY of a time bucket of the event time is the TUMBLE it is (kinds/time_bucket.py): each
bucket form recognised with its size, the model rewritten into window_views.tumble's own form,
and what is no bucket of the event time refused with the reason, through the plan a user's
`dbt compile` builds."""

from datetime import datetime
from typing import Any, Dict

import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.window_views.kinds.model_kind import TvfRows
from dbt.adapters.window_views.plans.batches import BatchSpan
from dbt.adapters.window_views.plans.window_view import WindowViewPlan
from dbt.adapters.window_views.query import analysis, tvf
from dbt.adapters.window_views.query.windows import Tumble

BID = "`nexmark`.`bid`"


def config(execution: str = "streaming", emit: str = "on_window_close", **more: Any) -> Dict[str, Any]:
    watermark = {"column": "dateTime", "delay": "3 seconds"}
    return {"materialized": "window_view", "execution": execution, "emit": emit, "watermark": watermark, **more}


def grouped(bucket: str, source: str = BID) -> str:
    """Nexmark's q17 shape: a key, the bucket, counts with FILTER, a distinct count."""
    return (
        f"SELECT auction, {bucket} AS b, count(*) AS total_bids, count(*) FILTER (WHERE price < 10000) AS rank1_bids, "
        f"count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders FROM {source} GROUP BY auction, {bucket}"
    )


def plan(sql: str, **cfg: Any) -> WindowViewPlan:
    return WindowViewPlan.from_model("m", sql, config(**cfg))


@pytest.mark.parametrize(
    "bucket, size",
    [
        ("DATE_FORMAT(dateTime, 'yyyy-MM-dd')", "1 day"),
        ("date_format(`dateTime`, 'yyyy/MM/dd')", "1 day"),
        ("to_date(dateTime)", "1 day"),
        ("cast(dateTime AS date)", "1 day"),
        ("date_trunc('DAY', dateTime)", "1 day"),
        ("date_trunc('hour', dateTime)", "1 hour"),
        ("date_format(dateTime, 'yyyyMMddHH')", "1 hour"),
        ("date_format(dateTime, 'yyyy-MM-dd HH:mm')", "1 minute"),
        ("date_trunc('MINUTE', dateTime)", "1 minute"),
        ("date_format(dateTime, \"yyyy-MM-dd'T'HH:mm:ss\")", "1 second"),
        ("window(dateTime, '1 day')", "1 day"),
        ("window(dateTime, '10 minutes')", "10 minutes"),
    ],
)
def test_each_bucket_is_a_tumble_of_its_size(bucket, size):
    stream = plan(grouped(bucket)).stream_plan
    assert isinstance(stream.kind, TvfRows)
    assert isinstance(stream.kind.window, Tumble)
    assert stream.kind.window.label() == f"tumble(time_col=dateTime, size={size})"


def test_the_finest_of_several_buckets_is_the_window():
    sql = (
        f"SELECT date_format(dateTime, 'yyyy-MM-dd') AS d, date_format(dateTime, 'yyyy-MM-dd HH') AS h, count(*) AS n "
        f"FROM {BID} GROUP BY date_format(dateTime, 'yyyy-MM-dd'), date_format(dateTime, 'yyyy-MM-dd HH')"
    )
    assert plan(sql).stream_plan.kind.window.label() == "tumble(time_col=dateTime, size=1 hour)"


def test_the_rewrite_is_window_views_tumble_as_its_macro_renders_it():
    """The input read through the TUMBLE macro's subquery and marker; buckets outside aggregates
    read window_start; a bucket inside an aggregate (q16's minute) reads the rows' own times."""
    sql = (
        "SELECT channel, DATE_FORMAT(dateTime, 'yyyy-MM-dd') AS `day`, max(DATE_FORMAT(dateTime, 'HH:mm')) AS `minute`, "
        f"count(DISTINCT bidder) AS n FROM {BID} GROUP BY channel, DATE_FORMAT(dateTime, 'yyyy-MM-dd')"
    )
    written = plan(sql, execution="batch").sql
    [window] = tvf.find(written)
    assert window == Tumble("dateTime", texts=(("size", "1 day"),), size=86_400_000_000, offset=0)
    tree = analysis.parse(written)
    assert [c.sql("spark") for c in tree.args["group"].expressions] == ["channel", "`window_start`", "`window_end`"]
    day, minute = tree.expressions[1], tree.expressions[2]
    assert day.sql("spark") == "DATE_FORMAT(`window_start`, 'yyyy-MM-dd') AS `day`"
    assert minute.sql("spark") == "MAX(DATE_FORMAT(dateTime, 'HH:mm')) AS `minute`"
    floor = "(UNIX_MICROS(CAST(`dateTime` AS TIMESTAMP)) - PMOD(UNIX_MICROS(CAST(`dateTime` AS TIMESTAMP)) - 0, 86400000000))"
    read = tree.args["from_"].this
    assert read.alias == "bid"
    assert read.this.sql("spark", comments=False) == (
        f"SELECT *, TIMESTAMP_MICROS({floor}) AS window_start, TIMESTAMP_MICROS({floor} + 86400000000) AS window_end, "
        f"TIMESTAMP_MICROS({floor} + 86400000000 - 1) AS window_time FROM {BID} WHERE NOT `dateTime` IS NULL"
    )


def test_a_batch_of_all_rows_runs_the_model_as_written():
    sql = grouped("DATE_FORMAT(dateTime, 'yyyy-MM-dd')")
    assert plan(sql, execution="batch", emit="on_update").sql == sql


def test_batches_own_a_day_read_over_its_own_range():
    """batch_size='day': a batch reads its day's rows and keeps the day it owns."""
    sql = grouped("date_trunc('DAY', dateTime)").replace(" AS b,", " AS window_start,")
    batches = plan(
        sql, execution="batch", emit="on_update", batch_size="day", event_time="window_start", begin="2026-01-01"
    )
    assert batches.batch_shape is not None
    one = batches.batch_shape.sql(BatchSpan(datetime(2026, 1, 2), datetime(2026, 1, 3)))
    assert "`dateTime` >= CAST('2026-01-02 00:00:00' AS TIMESTAMP_NTZ)" in one
    assert "`dateTime` < CAST('2026-01-03 00:00:00' AS TIMESTAMP_NTZ)" in one


@pytest.mark.parametrize(
    "bucket, words",
    [
        (
            "date_format(dateTime, 'yyyy-dd')",
            "`DATE_FORMAT(dateTime, 'yyyy-dd')`, a time function that is not a fixed-size",
        ),
        ("date_format(dateTime, 'yyyy-MM')", "that is not a fixed-size bucket"),
        ("date_format(dateTime, 'HH:mm')", "that is not a fixed-size bucket"),
        ("date_format(dateTime, 'yy-MM-dd')", "that is not a fixed-size bucket"),
        ("date_format(dateTime, 'yyyy-MM-dd EEE')", "that is not a fixed-size bucket"),
        ("date_trunc('MONTH', dateTime)", "that is not a fixed-size bucket"),
        ("date_trunc('WEEK', dateTime)", "that is not a fixed-size bucket"),
        ("trunc(dateTime, 'MM')", "that is not a fixed-size bucket"),
        ("to_date(dateTime, 'yyyy-MM-dd')", "that is not a fixed-size bucket"),
        ("window(dateTime, '1 day', '1 hour')", "a sliding or shifted window"),
        ("window(dateTime, '1 fortnight')", "whose size is not an interval"),
    ],
)
def test_a_time_function_that_is_no_bucket_is_refused(bucket, words):
    with pytest.raises(CompilationError) as refused:
        plan(grouped(bucket))
    message = str(refused.value)
    assert "window_view model 'm': it groups by " in message and words in message
    assert "; fix: " in message


def test_a_bucket_of_another_column_than_the_watermark_is_refused():
    with pytest.raises(CompilationError, match=r"a time bucket of `created`, not of the watermark column `dateTime`"):
        plan(grouped("to_date(created)"))


def test_a_bucket_over_a_join_is_refused():
    source = f"{BID} JOIN `nexmark`.`auction` a ON a.id = auction"
    with pytest.raises(CompilationError, match=r"groups rows that are not one input table's: that query reads a join"):
        plan(grouped("to_date(dateTime)", source))


def test_on_update_keeps_the_bounds_it_replaces_a_window_by():
    """emit='on_update' replaces a window's rows by its bounds: the table has them, added to the
    select list where the model does not select them (here only window_end)."""
    sql = grouped("date_trunc('DAY', dateTime)").replace(" AS b,", " AS window_start,")
    stream = plan(sql, emit="on_update").stream_plan
    assert (stream.bounds.start, stream.bounds.end, stream.bounds.hidden) == ("window_start", "window_end", ())
    output = [p.alias_or_name for p in analysis.parse(stream.sql).expressions]
    assert output == ["auction", "window_start", "total_bids", "rank1_bids", "rank1_bidders", "window_end"]


def test_a_group_by_of_no_bucket_is_left_to_the_other_kinds():
    with pytest.raises(CompilationError, match="needs exactly one window TVF or over windows, found 0"):
        plan(f"SELECT auction, count(*) AS n FROM {BID} GROUP BY auction")
