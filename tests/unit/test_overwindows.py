"""The SQL that flags the rows a streaming over-window model keeps: calls that share a PARTITION
BY (and ORDER BY) share its window columns, which Spark would otherwise compute once per copy.
That the rows kept are right is tested end to end (tests/functional/test_streaming_over*.py)."""

import re

import sqlglot
from sqlglot import exp

from dbt.adapters.window_views.kinds import overwindows
from dbt.adapters.window_views.query import analysis

SHARED = """select k, ts, v - lag(v) over (partition by k order by ts) as change,
  lead(v) over (partition by k order by ts) as next_v,
  avg(v) over (partition by k order by ts rows between 9 preceding and current row) as avg10,
  sum(v) over (partition by k order by ts range between interval 1 hour preceding and current row) as hour_sum
from t"""
TWO_PARTITIONINGS = """select k, j, ts, lag(v) over (partition by k order by ts) as by_k,
  avg(v) over (partition by j order by ts rows between 3 preceding and current row) as by_j,
  lead(v) over (partition by j order by ts) as next_j
from t"""


def columns(sql: str, prefix: str) -> set:
    return set(re.findall(rf"AS `({prefix}\d+)`", sql))


def flagging(sql: str):
    over = overwindows.plan(analysis.parse(sql), "ts")
    return overwindows.retain_sql(analysis.parse(sql), over, 10**15), overwindows.update_retain_sql(
        analysis.parse(sql), over, 10**15
    )


def test_calls_over_one_partition_share_one_cut_and_one_row_count():
    on_close, on_update = flagging(SHARED)
    assert columns(on_close, "_wv_cut_") == {"_wv_cut_0"}
    assert columns(on_close, "_wv_before_") == columns(on_update, "_wv_before_") == {"_wv_before_0"}
    # each reach still decides: 9 rows back (the moving average), 1 (lag), an hour (the range)
    assert "`_wv_before_0` <= 9" in on_close and "`_wv_before_0` <= 1" in on_close
    assert "- 3600000000" in on_close


def test_a_row_count_is_one_window_pass():
    """A row count back from a bound is a partition's total less its running count: both over
    the calls' ORDER BY, so Spark computes them in one pass over the rows (a total over the
    PARTITION BY alone would be a window pass of its own)."""
    for sql in flagging(SHARED):
        counts = [a.this for a in sqlglot.parse_one(sql, read="spark").find_all(exp.Alias) if a.alias == "_wv_before_0"]
        windows = {
            (tuple(p.sql() for p in w.args["partition_by"]), w.args["order"].sql())
            for c in counts
            for w in c.find_all(exp.Window)
        }
        assert counts and windows == {(("k",), "ORDER BY ts")}


def test_each_partition_by_gets_its_own_cut_and_row_count():
    on_close, on_update = flagging(TWO_PARTITIONINGS)
    assert columns(on_close, "_wv_cut_") == {"_wv_cut_0", "_wv_cut_1"}
    assert columns(on_close, "_wv_before_") == columns(on_update, "_wv_before_") == {"_wv_before_0", "_wv_before_1"}
    assert re.search(r"PARTITION BY j\), \d+\), \d+\) AS `_wv_cut_1`", on_close)


def test_the_on_update_recompute_point_is_a_window_in_small_batches_and_a_subquery_in_large_ones():
    over = overwindows.plan(analysis.parse(SHARED), "ts")
    small = overwindows.update_retain_sql(analysis.parse(SHARED), over, 10**15)
    large = overwindows.update_retain_sql(analysis.parse(SHARED), over, 10**15, one_task=False)
    assert re.search(r"MIN\(`_wv_eligible`\) OVER \(\)", small) and "(SELECT LEAST(" not in small
    assert " OVER ()" not in large and re.search(r"\(SELECT LEAST\(COALESCE\(MIN\(`_wv_eligible`\)", large)


def test_on_update_finds_the_rows_a_later_one_changes_in_one_column_each_reach_once():
    """Four calls, two distinct reaches ahead (LEAD's one row; none for LAG, the moving average
    and the range): one column holds a row's time where any of them makes a later row change it,
    and the reach three calls share is tested once, not once per call."""
    on_update = flagging(SHARED)[1]
    assert columns(on_update, "_wv_eligible_") == set() and on_update.count("AS `_wv_eligible`") == 1
    # at or after W + 1: alone (LAG, the average, the range) and in LEAD's test with its row
    assert on_update.count(f">= ({10**15 + 1} - 0)") == 2


def partitioned_by(sql: str):
    return overwindows.plan(analysis.parse(sql), "ts").partitioned_by


def test_on_update_keeps_each_partitions_point_where_a_call_looks_ahead_by_selected_columns():
    assert partitioned_by(SHARED) == ("k",)
    assert partitioned_by("select *, lead(v) over (partition by k, j order by ts) as n from t") == ("k", "j")
    assert partitioned_by(
        "select t.k as k, ts, sum(v) over (partition by k order by ts rows between current row and 1 following) as s from t"
    ) == ("k",)
    # nothing looks ahead: one point for all is W + 1 at most a frame away
    assert partitioned_by("select k, ts, lag(v) over (partition by k order by ts) as p from t") == ()
    # not one PARTITION BY, not a plain column, or not passed on unchanged
    assert partitioned_by(TWO_PARTITIONINGS) == ()
    assert partitioned_by("select k, ts, lead(v) over (partition by lower(k) order by ts) as n from t") == ()
    assert partitioned_by("select ts, lead(v) over (partition by k order by ts) as n from t") == ()
    assert partitioned_by("select upper(k) as k, ts, lead(v) over (partition by k order by ts) as n from t") == ()


def test_by_partition_a_large_batch_finds_the_shared_point_in_the_last_horizon_only():
    """Every point not held back lies in the last `horizon`, and whether a row there is changed
    by a later one does not depend on the rows before it: the subquery that finds the shared
    point of a large batch (an initial load) reads those rows only, not the history."""
    over = overwindows.plan(analysis.parse(SHARED), "ts")
    hour = 3600 * 10**6
    large = overwindows.update_retain_sql(analysis.parse(SHARED), over, 10**15, one_task=False, horizon=hour)
    assert re.search(rf"FROM t WHERE UNIX_MICROS\(CAST\(`ts` AS TIMESTAMP\)\) >= {10**15 + 1 - hour}\)", large)
    small = overwindows.update_retain_sql(analysis.parse(SHARED), over, 10**15, horizon=hour)
    assert "FROM t)" in small and "WHERE" not in small
    assert "_wv_own" in large and "_wv_own" in small  # each partition's own point, held back or not


def sorted_by(sql: str):
    return overwindows.plan(analysis.parse(sql), "ts").sorted_by


def test_calls_sharing_one_partition_by_and_order_by_of_columns_read_rows_sorted_once():
    assert sorted_by(SHARED) == (("k",), (("ts", False, True),))
    assert sorted_by("select *, lag(v) over (partition by t.k, `j` order by ts, seq nulls last) as p from t") == (
        ("k", "j"),
        (("ts", False, True), ("seq", False, False)),
    )
    # two PARTITION BYs, two ORDER BYs, an expression, or no PARTITION BY: each window pass sorts its own
    assert sorted_by(TWO_PARTITIONINGS) is None
    assert (
        sorted_by(
            "select k, ts, lag(v) over (partition by k order by ts) as a, lag(v) over (partition by k order by ts, seq) as b from t"
        )
        is None
    )
    assert sorted_by("select k, ts, lead(v) over (partition by lower(k) order by ts) as n from t") is None
    assert sorted_by("select ts, lag(v) over (order by ts) as p from t") is None
