"""The time columns a model's windows read, found through the tree, the one query that counts
their NULLs, and the format a value that did not parse asks for (no Spark)."""

import json

import pytest

from dbt.adapters.window_views.query import analysis, sqlexpr, time_nulls


def marker(time_col: str = "ts") -> str:
    spec = {"kind": "tumble", "time_col": time_col, "size_us": 600_000_000, "offset_us": 0, "text": {}}
    return f"/* window_views:tvf:v1 {json.dumps({**spec, 'partition_by': []})} */"


def tvf(read: str, time_col: str = "ts") -> str:
    return f"({marker(time_col)}\nselect *, 1 as window_start from {read} where `{time_col}` is not null)"


def test_a_tvf_over_a_table_counts_the_table_s_time_column():
    tree = analysis.parse(f"select window_start, count(*) from {tvf('`s`.`bids`')} group by 1")
    (read,) = time_nulls.reads(tree)
    assert (read.column, read.relation, read.windowed, read.parse) == ("ts", "s.bids", True, None)
    query = sqlexpr.to_sql(time_nulls.count_query(tree, [read]))
    assert "COUNT_IF(TS IS NULL)" in query.upper().replace("`", "") and "s`.`bids" in query


def test_a_time_the_model_parses_without_a_format_is_found_and_counted_on_its_input():
    sql = (
        "with parsed as (select to_timestamp(ts) as ts, price from `s`.`raw` where price > 0) "
        f"select window_start, sum(price) from {tvf('parsed')} group by 1"
    )
    tree = analysis.parse(sql)
    (read,) = time_nulls.reads(tree)
    assert read.relation == "parsed" and read.parse is not None and read.parse.raw == "ts"
    query = sqlexpr.to_sql(time_nulls.count_query(tree, [read])).lower().replace("`", "")
    # counted where the parse happens, with a raw value that did not parse
    assert "from s.raw where price > 0" in query and "cast(ts as string)" in query


def test_a_formatted_parse_is_not_the_cause():
    sql = (
        "with parsed as (select to_timestamp(ts, 'dd/MM/yyyy') as ts from `s`.`raw`) "
        f"select window_start from {tvf('parsed')}"
    )
    (read,) = time_nulls.reads(analysis.parse(sql))
    assert read.parse is None


def test_an_over_window_ordered_by_the_time_column_is_a_read():
    tree = analysis.parse("select lag(v) over (partition by k order by ts) as prev from `s`.`e`")
    (read,) = time_nulls.reads(tree, ["ts"])
    assert (read.column, read.relation, read.windowed) == ("ts", "s.e", False)
    assert time_nulls.reads(tree, ["other"]) == []


def test_several_reads_are_one_query():
    sql = f"select * from {tvf('`s`.`a`')} union all select * from {tvf('`s`.`b`', 't')}"
    tree = analysis.parse(sql)
    reads = time_nulls.reads(tree)
    assert [r.relation for r in reads] == ["s.a", "s.b"]
    assert sqlexpr.to_sql(time_nulls.count_query(tree, reads)).upper().count("UNION ALL") == 1


@pytest.mark.parametrize(
    "sample, fix",
    [
        ("13/05/2024 10:00:00", "to_timestamp(ts, 'dd/MM/yyyy HH:mm:ss')"),
        ("05/13/2024 10:00", "to_timestamp(ts, 'MM/dd/yyyy HH:mm')"),
        ("2024.05.13T10:00:00.123", "to_timestamp(ts, \"yyyy.MM.dd'T'HH:mm:ss.SSS\")"),
        ("13-05-24", "to_timestamp(ts, 'dd-MM-yy')"),
        ("yesterday", "to_timestamp(ts, '<its format, e.g. dd/MM/yyyy HH:mm:ss>')"),
        (None, "to_timestamp(ts, '<its format, e.g. dd/MM/yyyy HH:mm:ss>')"),
    ],
)
def test_the_fix_gives_the_format_the_value_shows(sample, fix):
    assert time_nulls.formatted("ts", sample) == fix


def test_a_session_s_nested_subqueries_are_read_through_to_its_input():
    session = marker().replace('"tumble"', '"session"').replace('"size_us"', '"gap_us"')
    sql = (
        f"select * from ({session}\nselect r.*, s as window_start from (select r, t, max(t) as s from ("
        "select struct(*) as r, ts as t from `s`.`bids` where `ts` is not null) group by r, t))"
    )
    tree = analysis.parse(sql)
    (read,) = time_nulls.reads(tree)
    assert read.relation == "s.bids"
    assert sqlexpr.to_sql(time_nulls.count_query(tree, [read])).replace("`", "").endswith("FROM s.bids")
