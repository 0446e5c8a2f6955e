"""A refusal quotes the model's SQL as its user wrote it (the join, the window call), never the
TVF macros' expansion: no marker, no `_wv_` name, a TVF as its call, at most `shown.CAP`
characters of SQL. Built from compiled SQL as dbt hands it over (Nexmark's q5, q8, q18, q19)."""

import json
import re
from types import SimpleNamespace

import pytest
from dbt_common.clients.jinja import CallableMacroGenerator
from dbt_common.exceptions import CompilationError

from dbt.adapters.window_views.errors import ModelOutputError, ModelSqlError
from dbt.adapters.window_views.model.config import WindowViewConfig
from dbt.adapters.window_views.query.shown import CAP
from tests.support.streams import build

HOP_SPEC = {
    "kind": "hop",
    "time_col": "dateTime",
    "slide_us": 2_000_000,
    "size_us": 10_000_000,
    "offset_us": 0,
    "text": {"slide": "2 seconds", "size": "10 seconds"},
}
TUMBLE_SPEC = {
    "kind": "tumble",
    "time_col": "dateTime",
    "size_us": 10_000_000,
    "offset_us": 0,
    "text": {"size": "10 seconds"},
}
FLOOR = "(UNIX_MICROS(CAST(`dateTime` AS TIMESTAMP)) - PMOD(UNIX_MICROS(CAST(`dateTime` AS TIMESTAMP)) - 0, {slide}))"


def hop(table: str) -> str:
    """window_views.hop(table, 'dateTime', '2 seconds', '10 seconds') as the macro renders it."""
    floor = FLOOR.format(slide=2_000_000)
    return (
        f"(/* window_views:tvf:v1 {json.dumps(HOP_SPEC)} */ SELECT * FROM {table} LATERAL VIEW "
        f"INLINE(TRANSFORM(FILTER(SEQUENCE({floor} - 8000000, {floor}, 2000000), "
        "_wv_s -> _wv_s + 10000000 > UNIX_MICROS(CAST(`dateTime` AS TIMESTAMP))), "
        "_wv_s -> STRUCT(TIMESTAMP_MICROS(_wv_s) AS window_start, TIMESTAMP_MICROS(_wv_s + 10000000) AS window_end, "
        "TIMESTAMP_MICROS(_wv_s + 10000000 - 1) AS window_time))) _wv_windows "
        "AS window_start, window_end, window_time WHERE NOT `dateTime` IS NULL)"
    )


def tumble(table: str) -> str:
    """window_views.tumble(table, 'dateTime', '10 seconds') as the macro renders it."""
    floor = FLOOR.format(slide=10_000_000)
    return (
        f"(/* window_views:tvf:v1 {json.dumps(TUMBLE_SPEC)} */ SELECT *, TIMESTAMP_MICROS({floor}) AS window_start, "
        f"TIMESTAMP_MICROS({floor} + 10000000) AS window_end, TIMESTAMP_MICROS({floor} + 10000000 - 1) AS "
        f"window_time FROM {table} WHERE NOT `dateTime` IS NULL)"
    )


Q5_ON = (
    "AuctionBids.starttime = MaxBids.starttime AND AuctionBids.endtime = MaxBids.endtime "
    "AND AuctionBids.num >= MaxBids.maxn"
)
Q5 = f"""
SELECT AuctionBids.auction, AuctionBids.num
FROM (
  SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
  FROM {hop("nexmark.bid")} GROUP BY auction, window_start, window_end
) AS AuctionBids
JOIN (
  SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
  FROM (
    SELECT count(*) AS num, window_start AS starttime, window_end AS endtime
    FROM {hop("nexmark.bid")} GROUP BY auction, window_start, window_end
  ) AS CountBids
  GROUP BY CountBids.starttime, CountBids.endtime
) AS MaxBids
ON {Q5_ON}
"""
Q8_ON = "P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime"
Q8 = f"""
SELECT P.id, P.name, P.starttime
FROM (
  SELECT id, name, window_start AS starttime, window_end AS endtime
  FROM {tumble("nexmark.person")} GROUP BY id, name, window_start, window_end
) P
JOIN (
  SELECT seller, window_start AS starttime, window_end AS endtime
  FROM {tumble("nexmark.auction")} GROUP BY seller, window_start, window_end
) A
ON {Q8_ON}
"""
Q18 = (
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY dateTime DESC) AS rank_number "
    "FROM nexmark.bid) WHERE rank_number <= 1"
)
Q19 = (
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number "
    "FROM nexmark.bid) WHERE rank_number <= 10"
)


def config(emit: str = "on_window_close") -> WindowViewConfig:
    return WindowViewConfig.from_model(
        "q", {"execution": "streaming", "emit": emit, "watermark": {"column": "dateTime", "delay": "0 seconds"}}
    )


def refusal(sql: str, emit: str = "on_window_close") -> str:
    with pytest.raises(ModelSqlError) as raised:
        build("q", sql, config(emit), ())
    return raised.value.msg


def quoted(message: str) -> str:
    """The SQL a message quotes: its first `...`."""
    found = re.search(r"`([^`]*)`", message)
    assert found, message
    return found.group(1)


def assert_users_own(message: str) -> None:
    assert "_wv_" not in message and "window_views:tvf" not in message and "/*" not in message, message
    assert len(quoted(message)) <= CAP, message


def test_q5_is_a_self_window_join_through_its_renamed_bounds_and_nested_aggregate():
    p = build("q", Q5, config(), ())
    assert [i.source for i in p.inputs] == ["nexmark.bid"] and p.window.kind == "hop"
    # it selects no window bound: the stream reads them from the join's side, hidden
    assert p.bounds.hidden == ("_wv_window_start", "_wv_window_end")
    assert "AuctionBids.starttime AS _wv_window_start, AuctionBids.endtime AS _wv_window_end FROM" in p.sql


def test_q8_is_a_window_join_keyed_by_its_renamed_window_start():
    p = build("q", Q8, config(), ())
    assert p.shape == "join" and [i.source for i in p.inputs] == ["nexmark.person", "nexmark.auction"]
    assert (p.bounds.start, p.bounds.end, p.bounds.hidden) == ("starttime", "_wv_window_end", ("_wv_window_end",))
    assert p.sql.startswith("SELECT P.id, P.name, P.starttime, P.endtime AS _wv_window_end FROM")


def test_a_join_on_the_renamed_window_start_alone_names_its_join_by_alias_and_on():
    on = "P.id = A.seller AND P.starttime = A.starttime"
    message = refusal(Q8.replace(Q8_ON, on))
    assert_users_own(message)
    assert quoted(message) == f"JOIN (...) AS A ON {on}"
    assert "`tumble(time_col=dateTime, size=10 seconds)`" in message
    assert "does not join its sides on window_start and window_end" in message


def test_on_update_must_select_both_window_bounds_under_any_name():
    sql = f"SELECT auction, count(*) AS n, window_start AS starttime FROM {tumble('nexmark.bid')} GROUP BY 1, 3"
    message = refusal(sql, emit="on_update")
    assert_users_own(message)
    assert "must output `window_end` (under any name) from its window TVF: emit='on_update'" in message
    # on_window_close adds window_end to the select list if the GROUP BY has it
    assert "its output has no `window_end` (under any name)" in refusal(sql)
    bounds = build("q", sql.replace("1, 3", "1, 3, window_end"), config(), ()).bounds
    assert (bounds.start, bounds.end) == ("starttime", "_wv_window_end")


def test_renamed_bounds_key_the_stream_and_a_star_leaves_them_to_spark():
    renamed = (
        f"SELECT auction, count(*) AS n, window_start AS starttime, window_end AS endtime "
        f"FROM {tumble('nexmark.bid')} B GROUP BY auction, window_start, window_end"
    )
    for emit in ("on_window_close", "on_update"):
        bounds = build("q", renamed, config(emit), ()).bounds
        assert (bounds.start, bounds.end, bounds.hidden) == ("starttime", "endtime", ())
    star = build("q", f"SELECT * FROM ({renamed})", config(), ()).bounds
    assert (star.start, star.end, star.hidden) == ("window_start", "window_end", ())  # runner.py checks them


def test_a_join_of_two_tvfs_shows_each_as_its_macro_call():
    sql = (
        f"SELECT L.k, L.window_start, L.window_end FROM {tumble('s.a')} L "
        f"JOIN {tumble('s.b')} R ON L.k = R.k AND L.window_start = R.window_start"
    )
    message = refusal(sql)
    assert_users_own(message)
    assert quoted(message) == (
        "JOIN window_views.tumble(s.b, time_col=dateTime, size=10 seconds) AS R "
        "ON L.k = R.k AND L.window_start = R.window_start"
    )


def test_a_long_join_is_cut_to_the_cap_with_an_ellipsis():
    on = " AND ".join(f"L.column_{i} = R.column_{i}" for i in range(20))
    sql = f"SELECT L.k, L.window_start, L.window_end FROM {tumble('s.a')} L JOIN {tumble('s.b')} R ON {on}"
    shown = quoted(refusal(sql))
    assert len(shown) <= CAP and shown.endswith("...") and shown.startswith("JOIN window_views.tumble(s.b")


@pytest.mark.parametrize("sql", [Q18, Q19], ids=["q18", "q19"])
def test_a_keyed_top_n_on_window_close_is_refused_naming_its_call_and_rank_filter(sql):
    # no row of a Top-N is final: emit='on_update' keeps it (tests/unit/test_topn.py)
    message = refusal(sql)
    assert_users_own(message)
    assert message.startswith("window_view model 'q': `ROW_NUMBER() OVER (PARTITION BY ")
    assert "` kept by `rank_number <= " in message and "is a keyed Top-N" in message
    assert "fix: set emit='on_update'" in message


def test_a_ranking_by_price_without_a_rank_filter_is_refused_pointing_at_the_top_n_form():
    sql = "SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number FROM nexmark.bid"
    message = refusal(sql, emit="on_update")
    assert_users_own(message)
    assert quoted(message) == "ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC)"
    assert "ranks rows by `price`, not by the watermark column `dateTime`" in message
    assert "fix: keep its top rows in an outer query, `WHERE <its alias> <= N`, with emit='on_update'" in message


def test_a_ranking_by_the_watermark_descending_without_a_rank_filter_says_so():
    sql = "SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY dateTime DESC) AS r FROM nexmark.bid"
    message = refusal(sql, emit="on_update")
    assert "`ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY dateTime DESC)` ranks rows by the watermark column " in (
        message
    )
    assert "(a keyed Top-N, which a stream keeps)" in message


def test_an_output_refusal_is_not_printed_with_the_macro_stack():
    # dbt appends the macros a CompilationError passes through to its message ("> in macro ...")
    macro = SimpleNamespace(name="materialization_window_view_spark")
    with pytest.raises(ModelOutputError) as raised:
        with CallableMacroGenerator(macro, {}).exception_handler():
            raise ModelOutputError("q11", "the model must output `window_start`", "add it")
    assert not isinstance(raised.value, CompilationError)
    assert raised.value.stack == []
    assert str(raised.value).endswith("window_view model 'q11': the model must output `window_start`; fix: add it")
