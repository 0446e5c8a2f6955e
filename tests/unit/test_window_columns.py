"""Which columns are a window TVF's window_start / window_end, under any name: followed through
aliases, subqueries, CTEs and `*` to the TVF (its marker heads its subquery), never guessed from
a name alone."""

import json

from sqlglot import exp

from dbt.adapters.window_views.query.analysis import parse
from dbt.adapters.window_views.query.window_columns import Bound, bound_of, readable, selected

SPEC = {"kind": "tumble", "time_col": "ts", "size_us": 10_000_000, "offset_us": 0, "text": {"size": "10 seconds"}}


def tvf(table: str) -> str:
    return f"(/* window_views:tvf:v1 {json.dumps(SPEC)} */ select *, ts as window_start, ts as window_end from {table})"


def column(sql: str, text: str) -> exp.Column:
    """The first column of `sql` that reads as `text`."""
    return next(c for c in parse(sql).find_all(exp.Column) if c.sql("spark") == text)


RENAMED = f"select k, window_start as starttime, window_end as endtime from {tvf('s.a')} group by 1, 2, 3"


def test_a_renamed_bound_is_followed_through_its_subquery():
    sql = f"select S.k, S.starttime, S.endtime as e from ({RENAMED}) S"
    assert bound_of(column(sql, "S.starttime")) is Bound.START
    assert bound_of(column(sql, "S.endtime")) is Bound.END
    assert bound_of(column(sql, "S.k")) is None
    assert selected(parse(sql)) == {Bound.START: "starttime", Bound.END: "e"}


def test_through_nested_subqueries_a_cte_and_a_star():
    sql = f"with w as ({RENAMED}) select x.starttime as ws from (select * from (select W.* from w W)) x"
    assert bound_of(column(sql, "x.starttime")) is Bound.START
    assert selected(parse(sql)) == {Bound.START: "ws"}


def test_a_column_named_like_a_bound_outside_a_tvf_is_none():
    sql = "select t.window_start from (select ts as window_start from s.a) t"
    assert bound_of(column(sql, "t.window_start")) is None
    sql = f"select S.starttime from (select k, window_end as starttime from {tvf('s.a')}) S"
    assert bound_of(column(sql, "S.starttime")) is Bound.END


def test_an_on_condition_reads_its_sides():
    sql = f"select L.k from ({RENAMED}) L join ({RENAMED}) R on L.starttime = R.starttime and L.k = R.k"
    assert bound_of(column(sql, "L.starttime")) is Bound.START and bound_of(column(sql, "R.starttime")) is Bound.START
    assert bound_of(column(sql, "L.k")) is None


def test_a_bound_the_select_list_can_add():
    joined = parse(f"select L.k from ({RENAMED}) L join ({RENAMED}) R on L.k = R.k")
    assert readable(joined, Bound.END).sql("spark") == "L.endtime"
    grouped = parse(f"select count(*) from {tvf('s.a')} group by window_start")
    assert readable(grouped, Bound.START).sql("spark") == "window_start"
    assert readable(grouped, Bound.END) is None  # not a GROUP BY key
    distinct = parse(f"select distinct k from {tvf('s.a')}")
    assert readable(distinct, Bound.START) is None  # it would keep a row per window
