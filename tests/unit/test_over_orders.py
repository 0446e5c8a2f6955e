"""Over windows ordered by a STRING column, read from the tree: a RANGE offset frame refused, a
text of dates warned of once a column, anything else left alone (no Spark)."""

from dbt.adapters.window_views.query import analysis, over_orders

STRINGS = {("s", "days"): [("d", "string"), ("n", "int"), ("t", "timestamp")]}


def check(sql: str, value: str = "13/05/2024"):
    return over_orders.string_orders(analysis.parse(sql), STRINGS.get, lambda query: value)


def test_a_range_offset_frame_ordered_by_text_is_refused_with_the_cast():
    refused, _ = check("select sum(n) over (order by d range between 1 preceding and current row) from s.days")
    assert refused is not None
    problem, fix = refused
    assert "orders by `d` of s.days, which is STRING" in problem
    assert fix == "cast it to a time in an upstream model, e.g. `to_timestamp(d, 'dd/MM/yyyy') as d`"


def test_rows_lag_and_ranks_over_dates_as_text_warn_once_a_column():
    sql = "select lag(n) over (order by d), row_number() over (order by d), sum(n) over (order by d) from s.days"
    refused, warnings = check(sql)
    assert refused is None and len(warnings) == 1
    assert "sort as text (05/06 before 13/05)" in warnings[0] and "such as '13/05/2024'" in warnings[0]


def test_text_that_is_no_date_times_or_other_columns_are_left_alone():
    assert check("select lag(n) over (order by d) from s.days", value="apple") == (None, [])
    assert check(
        "select sum(n) over (order by t range between interval 1 hour preceding and current row) from s.days"
    ) == (None, [])
    assert check("select sum(n) over (order by n range between 1 preceding and current row) from s.days") == (None, [])
    # a CTE's columns are Spark's to describe
    assert check("with c as (select * from s.days) select lag(n) over (order by d) from c") == (None, [])
