"""Rows of an input joined to their own window's aggregate (Nexmark's q7, own_window.py): one
input read twice, as rows and through a window TVF, streams on_window_close when a condition
holds each row within its window; without one it is refused, naming the user's join and the fix."""

import pytest

from dbt.adapters.window_views.errors import ModelSqlError
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.streaming.late_rows import late_condition
from tests.support.streams import build
from tests.unit.test_refusals import assert_users_own, config, quoted, refusal, tumble
from tests.unit.test_streaming_join_plan import tvf

WHERE = "WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime"
Q7 = f"""
SELECT B.auction, B.bidder, B.price, B.dateTime, B.extra
FROM nexmark.bid B
JOIN (SELECT MAX(price) AS maxprice, window_start, window_end AS dateTime
      FROM {tumble("nexmark.bid")} GROUP BY window_start, window_end) B1
ON B.price = B1.maxprice
{WHERE}
"""


def test_q7_reads_its_one_input_once_for_both_reads_and_closes_by_the_renamed_window_end():
    p = build("q", Q7, config(), ())
    assert p.shape == "single" and [i.source for i in p.inputs] == ["nexmark.bid"]
    assert p.sql.count(f"FROM {p.view} AS") == 2 and "nexmark.bid" not in p.sql
    assert (p.rows_to_window.rows, p.rows_to_window.inclusive_end) == ("B", True)
    # it selects no window bound: the stream closes its windows by the join side's, hidden
    assert (p.bounds.end, p.bounds.hidden) == ("_wv_window_end", ("_wv_window_end",))
    assert "B.extra, B1.dateTime AS _wv_window_end FROM" in p.sql
    assert p.slicing is None  # the model's own SQL over the rows of the windows that close
    assert p.describe() == "tumble(time_col=dateTime, size=10 seconds) (its rows joined to their window's result)"


@pytest.mark.parametrize(
    "where, inclusive",
    [
        ("WHERE B.dateTime >= B1.window_start AND B.dateTime < B1.dateTime", False),
        ("WHERE B1.dateTime > B.dateTime AND B1.dateTime - INTERVAL '5 seconds' <= B.dateTime", False),
        ("AND B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime", True),
    ],
    ids=["from-start-to-end", "flipped-sides", "in-the-on"],
)
def test_conditions_that_hold_the_rows_within_their_window(where, inclusive):
    p = build("q", Q7.replace(WHERE, where), config(), ())
    assert p.rows_to_window.inclusive_end is inclusive


def test_a_row_at_a_window_end_that_joins_the_window_is_late_once_it_closed():
    inclusive, exclusive = (
        sqlexpr.to_sql(late_condition(build("q", Q7.replace(WHERE, where), config(), ()), 20_000_000))
        for where in (WHERE, "WHERE B.dateTime >= B1.window_start AND B.dateTime < B1.dateTime")
    )
    # the row's first window is the one ending at or after it: its window's end for a row before it
    assert "_wv_t - 1" in inclusive and "_wv_t - 1" not in exclusive


@pytest.mark.parametrize(
    "where",
    [
        "",
        "WHERE B.dateTime <= B1.dateTime",
        "WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '20' SECOND AND B1.dateTime",
        "WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime + INTERVAL '1' SECOND",
    ],
    ids=["no-condition", "no-lower-bound", "reaching-before-the-window", "past-the-window-end"],
)
def test_rows_not_held_within_their_window_are_refused_naming_the_join_and_the_fix(where):
    message = refusal(Q7.replace(WHERE, where))
    assert_users_own(message)
    assert quoted(message) == "JOIN (...) AS B1 ON B.price = B1.maxprice"
    assert "joins the rows of nexmark.bid to their window `tumble(time_col=dateTime, size=10 seconds)`" in message
    assert (
        "fix: add `B.dateTime BETWEEN B1.dateTime - INTERVAL '10 seconds' AND B1.dateTime` (or `B.dateTime >= "
        "window_start AND B.dateTime < B1.dateTime`) to its WHERE, or use execution='batch'"
    ) in message


def test_on_update_is_refused_as_a_row_is_final_only_when_its_window_closes():
    with pytest.raises(ModelSqlError) as raised:
        build("q", Q7, config("on_update"), ())
    assert "joins the rows `B` to their window" in raised.value.msg
    assert raised.value.msg.endswith("fix: set emit='on_window_close'")


def test_a_cumulate_holds_its_rows_from_window_start_only():
    """A CUMULATE's windows grow from one start: a reach before window_end is no window's."""
    cumulate = tvf("nexmark.bid", kind="cumulate", size_us=60_000_000, time_col="dateTime", step_us=10_000_000)
    sql = Q7.replace(tumble("nexmark.bid"), cumulate)
    message = refusal(sql)
    assert "no condition holds each row within its window" in message
    assert "fix: add `B.dateTime >= window_start AND B.dateTime < B1.dateTime` to its WHERE" in message
    within = "WHERE B.dateTime >= B1.window_start AND B.dateTime <= B1.dateTime"
    assert build("q", sql.replace(WHERE, within), config(), ()).rows_to_window.inclusive_end
