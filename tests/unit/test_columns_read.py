"""The input columns a stream reads (streaming/columns_read.py), before any Spark: what the model's
SQL reads of each input through window TVFs, joins and stars; all of them whenever that is not
certain."""

import json

from dbt.adapters.window_views.model.config import WindowViewConfig
from dbt.adapters.window_views.streaming.inputs.columns_read import columns_read
from tests.support.streams import build

BID = ["auction", "bidder", "price", "channel", "url", "dateTime", "extra"]


def config(emit="on_window_close"):
    return WindowViewConfig.from_model(
        "m", {"execution": "streaming", "emit": emit, "watermark": {"column": "dateTime", "delay": "1 second"}}
    )


def tvf(table, kind="tumble", **more):
    """A window TVF as the macros render it: every input column, and the window's."""
    spec = {"kind": kind, "time_col": "dateTime", "size_us": 10_000_000, "offset_us": 0, "text": {"size": "x"}, **more}
    bounds = "dateTime as window_start, dateTime as window_end, dateTime as window_time"
    return f"(/* window_views:tvf:v1 {json.dumps(spec)} */ select *, {bounds} from {table} where dateTime is not null)"


def read(sql, *inputs, emit="on_window_close"):
    return columns_read(build("m", sql, config(emit), ()), inputs)


def test_a_window_aggregate_reads_its_keys_measures_and_time_only():
    sql = f"select auction, max(price) as top, window_start, window_end from {tvf('s.bid')} b group by 1, 3, 4"
    assert read(sql, BID) == [["auction", "price", "dateTime"]]
    # Nexmark's camel case is the input's own, whatever case the SQL writes it in
    lower = sql.replace("max(price)", "max(PRICE)")
    assert read(lower, BID) == [["auction", "price", "dateTime"]]


def test_a_window_join_reads_each_inputs_own_columns():
    person = ["id", "name", "emailAddress", "city", "dateTime", "extra"]
    auction = ["id", "itemName", "description", "seller", "dateTime", "extra"]
    p = f"select id, name, window_start, window_end from {tvf('s.person')} group by 1, 2, 3, 4"
    a = f"select seller, window_start, window_end from {tvf('s.auction')} group by 1, 2, 3"
    sql = (
        f"select P.id, P.name, P.window_start from ({p}) P join ({a}) A "
        "on P.id = A.seller and P.window_start = A.window_start and P.window_end = A.window_end"
    )
    assert read(sql, person, auction) == [["id", "name", "dateTime"], ["seller", "dateTime"]]


def test_a_star_that_reaches_the_output_reads_every_column():
    sql = f"select * from {tvf('s.bid')} b"
    assert read(sql, BID) == [BID]


def test_a_struct_of_every_column_reads_them_all_unless_the_plan_keeps_partials():
    # the session macro packs each row in a struct; a session aggregate is kept as partials,
    # whose step reads the keys, measures and time only
    session = (
        '(/* window_views:tvf:v1 {"kind": "session", "time_col": "dateTime", "gap_us": 10000000, '
        '"partition_by": ["bidder"], "text": {"gap": "10 seconds"}} */ select _r.*, '
        "timestamp_micros(min(_t) over (partition by _r.bidder, _s)) as window_start, "
        "timestamp_micros(max(_t) over (partition by _r.bidder, _s) + 10000000) as window_end "
        "from (select _r, _t, sum(_n) over (partition by _r.bidder order by _t) as _s from "
        "(select _r, _t, case when _t - lag(_t) over (partition by _r.bidder order by _t) <= 10000000 "
        "then 0 else 1 end as _n from (select struct(*) as _r, unix_micros(dateTime) as _t from s.bid "
        "where dateTime is not null))))"
    )
    grouped = f"select B.bidder, count(*) as n, window_start, window_end from {session} B group by 1, 3, 4"
    assert read(grouped, BID) == [["bidder", "dateTime"]]
    rows = f"select B.bidder, B.price, window_start, window_end from {session} B"
    assert read(rows, BID) is None


def test_over_windows_read_the_columns_of_their_calls():
    sql = "select auction, dateTime, lag(price) over (partition by auction order by dateTime) as prev from s.bid"
    assert read(sql, BID, emit="on_update") == [["auction", "price", "dateTime"]]


def test_sql_that_does_not_resolve_whole_reads_every_column():
    sql = f"select auction, max(nope) as top, window_start, window_end from {tvf('s.bid')} b group by 1, 3, 4"
    assert read(sql, BID) is None


def test_a_distinct_subquery_reads_every_column_it_selects():
    sql = (
        "select auction, count(*) as n, window_start, window_end from "
        f"(select distinct * from {tvf('s.bid')} d) b group by 1, 3, 4"
    )
    assert read(sql, BID) == [BID]


def test_a_struct_field_reads_its_struct_and_a_filter_its_columns():
    cols = ["auction", "info", "price", "dateTime"]
    field = (
        f"select b.info.city as city, count(*) as n, window_start, window_end from {tvf('s.bid')} b group by 1, 3, 4"
    )
    assert read(field, cols) == [["info", "dateTime"]]
    filtered = (
        "select auction, sum(price) filter (where info is not null) as n, window_start, window_end "
        f"from {tvf('s.bid')} b where price > 3 group by 1, 3, 4"
    )
    assert read(filtered, cols) == [cols]
