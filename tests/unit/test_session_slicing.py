"""A streaming session aggregate's state (streaming/session_slicing.py): the SQL that merges
session partials, run on DuckDB (transpiled by sqlglot) over rows delivered in batches, keeps
exactly the sessions the rows make, as the session TVF would, however the rows are split."""

import logging
import random
from datetime import datetime, timedelta
from typing import Dict, List, Tuple

import duckdb
import pytest
import sqlglot

from dbt.adapters.window_views.model.config import WindowViewConfig
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.streaming import batch_writer
from tests.support.streams import build

GAP = 5 * 60_000_000
EPOCH = datetime(2020, 4, 15)
SQL = """
select b.item, b.window_start, b.window_end, count(*) as n, sum(b.price) as price, min(price) as low
from (
  /* window_views:tvf:v1 {"kind": "session", "time_col": "bidtime", "gap_us": 300000000, "partition_by": ["item"], "text": {"gap": "5 minutes"}} */
  select *, 1 as window_start, 2 as window_end from s.bid where bidtime is not null
) b
group by b.item, b.window_start, b.window_end
"""
Row = Tuple[str, int, int]  # item, minutes after EPOCH, price
Kept = Tuple[str, int, int, int, int, int, int]  # item, start and last (micros), count, sum, count(price), min


def plan(sql: str = SQL) -> StreamPlan:
    config = {
        "execution": "streaming",
        "emit": "on_window_close",
        "watermark": {"column": "bidtime", "delay": "1 minute"},
    }
    return build("m", sql, WindowViewConfig.from_model("m", config), ())


def run(con: duckdb.DuckDBPyConnection, spark_sql: str) -> List[tuple]:
    return con.execute(sqlglot.transpile(spark_sql, read="spark", write="duckdb")[0]).fetchall()


def streamed(batches: List[List[Row]]) -> List[Kept]:
    """The state after each batch's rows were aggregated into session partials and merged with
    the state's (no session closes: the watermark never reaches them)."""
    slicing = plan().slicing
    assert slicing is not None
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    state: List[tuple] = []
    for rows in batches:
        con.execute(f"create or replace table {slicing.rows_view} (bidtime timestamp, price int, item varchar)")
        for item, minute, price in rows:
            con.execute(
                f"insert into {slicing.rows_view} values (?, ?, ?)", [EPOCH + timedelta(minutes=minute), price, item]
            )
        new = run(con, slicing.partial_sql)
        con.execute(
            f"create or replace table {slicing.merge_view} (item varchar, _wv_p bigint, _wv_l bigint, "
            "_wv_m0 bigint, _wv_m1 bigint, _wv_m2 bigint, _wv_m3 int)"
        )
        for row in [*state, *new]:
            con.execute(f"insert into {slicing.merge_view} values (?, ?, ?, ?, ?, ?, ?)", list(row))
        state = run(con, slicing.merge_sql)
    return sorted(tuple(int(v) if not isinstance(v, str) else v for v in row) for row in state)


def sessions(rows: List[Row]) -> List[Kept]:
    """The sessions of the rows, as the session TVF makes them: per item, rows at most GAP apart."""
    by_item: Dict[str, List[Tuple[int, int]]] = {}
    for item, minute, price in rows:
        by_item.setdefault(item, []).append((minute * 60_000_000, price))
    found = []
    for item, times in by_item.items():
        times.sort()
        current = [times[0]]
        for t, price in times[1:]:
            if t - current[-1][0] > GAP:
                found.append((item, current))
                current = []
            current.append((t, price))
        found.append((item, current))
    epoch = int((EPOCH - datetime(1970, 1, 1)).total_seconds()) * 1_000_000
    return sorted(
        (item, epoch + s[0][0], epoch + s[-1][0], len(s), sum(p for _, p in s), len(s), min(p for _, p in s))
        for item, s in found
    )


@pytest.fixture(autouse=True)
def quiet_sqlglot(caplog):
    caplog.set_level(logging.ERROR, logger="sqlglot")  # DuckDB has no REPARTITION hint


def test_decomposable_session_aggregates_keep_session_partials():
    assert type(batch_writer.shape_of(plan())).__name__ == "SessionPartialsOnWindowClose"
    assert plan().slicing is not None


@pytest.mark.parametrize("measure", ["count(distinct price)", "percentile(price, 0.5)", "approx_count_distinct(price)"])
def test_other_session_aggregates_keep_rows(measure):
    sql = SQL.replace("min(price) as low", f"{measure} as low")
    assert plan(sql).slicing is None
    assert type(batch_writer.shape_of(plan(sql))).__name__ == "SessionOnWindowClose"


def test_grouped_by_other_columns_than_the_sessions_keeps_rows():
    more = SQL.replace("select b.item,", "select b.item, b.price as p,").replace(
        "group by b.item,", "group by b.item, b.price,"
    )
    fewer = SQL.replace("select b.item,", "select").replace("group by b.item,", "group by")
    assert plan(more).slicing is None and plan(fewer).slicing is None


def test_a_row_between_two_partials_merges_them():
    # 0 and 10 are two sessions (gap 5); 5 arrives later and bridges them, 30 stays apart
    batches = [[("A", 0, 1), ("A", 10, 2), ("A", 30, 4)], [("A", 5, 8)]]
    assert streamed(batches[:1]) == sessions(batches[0])
    assert streamed(batches) == sessions([*batches[0], *batches[1]])
    assert len(streamed(batches)) == 2


@pytest.mark.parametrize("seed", range(6))
def test_random_batches_keep_the_sessions_of_all_their_rows(seed):
    rng = random.Random(seed)
    rows = [(rng.choice("AB"), rng.randrange(0, 120), rng.randrange(1, 9)) for _ in range(60)]
    cuts = sorted(rng.sample(range(1, len(rows)), 3))
    batches = [rows[a:b] for a, b in zip([0, *cuts], [*cuts, len(rows)])]
    assert streamed(batches) == sessions(rows)
