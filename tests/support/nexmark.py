"""Nexmark's queries on DuckDB as plain SQL without window TVFs, over the generator's parquet
files: the second engine the Nexmark project (bench/nexmark/project) is held to. Windows are
explicit arithmetic on epoch microseconds: a TUMBLE's start is t - t mod size, a HOP's starts a
generate_series of slides back from t's, a SESSION a new one where lag(t) is more than the gap
before t (a running sum numbers them). Each query gives the model's columns, timestamps as epoch
microseconds (UTC), then `_closes`: the window end a watermark must pass to close the row (NULL for
q18 and q19, whose rows no window closes).

Also the project copied into a test's folder with a profile on the shared Spark session, and what
a streaming run left: the late rows' keys, read back from Spark."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence, Tuple

import duckdb
import yaml

from tests.support.dbt_projects import REPO, spark_params

PROJECT = REPO / "bench" / "nexmark" / "project"
KINDS = ("person", "auction", "bid")
SECOND = 1_000_000

# the columns that tell an input row from the others: the late rows are taken out by them
KEYS = {"person": ("id",), "auction": ("id",), "bid": ("auction", "bidder", "price", "dateTime", "extra")}


@dataclass(frozen=True)
class Query:
    """One Nexmark query: the event kinds it reads, the columns of its result (Nexmark's), and
    its DuckDB SQL (tables person, auction, bid with `t`, the event time in epoch microseconds)."""

    name: str
    inputs: Tuple[str, ...]
    columns: Tuple[str, ...]
    sql: str
    least_rows: int = 10  # fewer rows than this in batch: the data cannot tell a wrong table from a right one


def _tumble_start(size_us: int) -> str:
    return f"t - t % {size_us}"


Q5 = f"""
with hopped as (  -- HOP 10 s every 2 s: the 5 windows holding t start 0..8 s before t's 2-second slide
  select auction, unnest(generate_series(t - t % {2 * SECOND} - {8 * SECOND}, t - t % {2 * SECOND}, {2 * SECOND}))
    as starttime
  from bid
), AuctionBids as (
  select auction, count(*) as num, starttime, starttime + {10 * SECOND} as endtime
  from hopped group by auction, starttime
), MaxBids as (
  select max(num) as maxn, starttime, endtime from AuctionBids group by starttime, endtime
)
select AuctionBids.auction, AuctionBids.num, AuctionBids.endtime as _closes
from AuctionBids join MaxBids
  on AuctionBids.starttime = MaxBids.starttime and AuctionBids.endtime = MaxBids.endtime
  and AuctionBids.num >= MaxBids.maxn
"""

Q7 = f"""
with B1 as (
  select max(price) as maxprice, {_tumble_start(10 * SECOND)} + {10 * SECOND} as window_end
  from bid group by window_end
)
select B.auction, B.bidder, B.price, B.t as dateTime, B.extra, B1.window_end as _closes
from bid B join B1 on B.price = B1.maxprice
where B.t between B1.window_end - {10 * SECOND} and B1.window_end
"""

Q8 = f"""
with P as (
  select distinct id, name, {_tumble_start(10 * SECOND)} as starttime from person
), A as (
  select distinct seller, {_tumble_start(10 * SECOND)} as starttime from auction
)
select P.id, P.name, P.starttime, P.starttime + {10 * SECOND} as _closes
from P join A on P.id = A.seller and P.starttime = A.starttime
"""

Q11 = f"""
with gaps as (
  select bidder, t, lag(t) over (partition by bidder order by t) as previous from bid
), sessions as (  -- a session per bidder: a new one where the gap before t is more than 10 s
  select bidder, t,
    sum(case when previous is null or t - previous > {10 * SECOND} then 1 else 0 end)
      over (partition by bidder order by t rows between unbounded preceding and current row) as session
  from gaps
)
select bidder, count(*) as bid_count, min(t) as starttime, max(t) + {10 * SECOND} as endtime,
  max(t) + {10 * SECOND} as _closes
from sessions group by bidder, session
"""

Q18 = """
select auction, bidder, price, channel, url, t as dateTime, extra, null as _closes
from (select *, row_number() over (partition by bidder, auction order by t desc) as rank_number from bid)
where rank_number <= 1
"""

Q19 = """
select auction, bidder, price, channel, url, t as dateTime, extra, rank_number, null as _closes
from (select *, row_number() over (partition by auction order by price desc) as rank_number from bid)
where rank_number <= 10
"""

DAY = 86_400 * SECOND
# a day as date_format(dateTime, 'yyyy-MM-dd') names it (UTC), and the counts by price level q15-q17 share
_DAY = "strftime(make_timestamp(t - t % {day}), '%Y-%m-%d')".format(day=DAY)
_LEVELS = ("price < 10000", "price >= 10000 and price < 1000000", "price >= 1000000")
_BIDS = ", ".join(
    ["count(*) as total_bids"] + [f"count(*) filter (where {w}) as rank{i}_bids" for i, w in enumerate(_LEVELS, 1)]
)


def _distinct(column: str) -> str:
    levels = [f"count(distinct {column}) filter (where {w}) as rank{i}_{column}s" for i, w in enumerate(_LEVELS, 1)]
    return ", ".join([f"count(distinct {column}) as total_{column}s", *levels])


Q15 = f"""
select {_DAY} as day, {_BIDS}, {_distinct("bidder")}, {_distinct("auction")}, t - t % {DAY} + {DAY} as _closes
from bid group by t - t % {DAY}
"""

Q16 = f"""
select channel, {_DAY} as day, max(strftime(make_timestamp(t), '%H:%M')) as minute, {_BIDS}, {_distinct("bidder")},
  {_distinct("auction")}, t - t % {DAY} + {DAY} as _closes
from bid group by channel, t - t % {DAY}
"""

Q17 = f"""
select auction, {_DAY} as day, {_BIDS}, min(price) as min_price, max(price) as max_price, avg(price) as avg_price,
  sum(price) as sum_price, t - t % {DAY} + {DAY} as _closes
from bid group by auction, t - t % {DAY}
"""

_STATISTICS = (
    "total_bids", "rank1_bids", "rank2_bids", "rank3_bids", "total_bidders", "rank1_bidders", "rank2_bidders",
    "rank3_bidders", "total_auctions", "rank1_auctions", "rank2_auctions", "rank3_auctions",
)  # fmt: skip

QUERIES: Dict[str, Query] = {
    q.name: q
    for q in (
        Query("q5", ("bid",), ("auction", "num"), Q5),
        Query("q7", ("bid",), ("auction", "bidder", "price", "dateTime", "extra"), Q7),
        Query("q8", ("person", "auction"), ("id", "name", "starttime"), Q8),
        Query("q11", ("bid",), ("bidder", "bid_count", "starttime", "endtime"), Q11),
        Query("q18", ("bid",), ("auction", "bidder", "price", "channel", "url", "dateTime", "extra"), Q18),
        Query(
            "q19", ("bid",), ("auction", "bidder", "price", "channel", "url", "dateTime", "extra", "rank_number"), Q19
        ),
        Query("q15", ("bid",), ("day", *_STATISTICS), Q15, least_rows=2),  # a row a day: the events cross a midnight
        Query("q16", ("bid",), ("channel", "day", "minute", *_STATISTICS), Q16),
        Query(
            "q17",
            ("bid",),
            ("auction", "day", *_STATISTICS[:4], "min_price", "max_price", "avg_price", "sum_price"),
            Q17,
        ),
    )
}


class NexmarkDuckDB:
    """The landed events in a DuckDB of their own (session time zone UTC), as tables person,
    auction and bid, each with `t`: its dateTime in epoch microseconds."""

    def __init__(self, landing: Path) -> None:
        self.landing = landing
        self.con = duckdb.connect()
        self.con.execute("set TimeZone = 'UTC'")
        self.load({})

    def load(self, late: Mapping[str, Sequence[tuple]]) -> None:
        """(Re)make the tables from every landed file, without the rows whose keys (KEYS, times
        in epoch microseconds) `late` lists per kind."""
        for kind in KINDS:
            files = str(self.landing / kind / "*.parquet")
            self.con.execute(
                f"create or replace table {kind} as select *, epoch_us(dateTime) as t from read_parquet('{files}')"
            )
            rows = late.get(kind) or []
            if rows:
                keys = [k if k != "dateTime" else "t" for k in KEYS[kind]]
                columns = ", ".join(f"k{i} {'varchar' if k == 'extra' else 'bigint'}" for i, k in enumerate(keys))
                self.con.execute(f"create or replace temp table late_keys ({columns})")
                self.con.executemany(f"insert into late_keys values ({', '.join('?' for _ in keys)})", rows)
                match = " and ".join(f"{kind}.{k} = late_keys.k{i}" for i, k in enumerate(keys))
                self.con.execute(f"delete from {kind} where exists (select 1 from late_keys where {match})")

    def rows(self, query: Query) -> List[tuple]:
        """The query's rows: the model's columns, then `_closes`."""
        return self.con.execute(query.sql).fetchall()

    def scalar(self, sql: str) -> Any:
        row = self.con.execute(sql).fetchone()
        assert row is not None
        return row[0]


def copy_project(root: Path, home: Path, targets: Mapping[str, str]) -> Path:
    """bench/nexmark/project copied to `root` (its target/ and logs/ go there), with a profile on
    the shared Spark session: one target per entry of `targets` (target name -> schema)."""
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns("target", "logs", "profiles.yml"))
    outputs = {
        name: {
            "type": "window_views",
            "method": "session",
            "schema": schema,
            "threads": 1,
            "server_side_parameters": spark_params(home),
        }
        for name, schema in targets.items()
    }
    profile = {"nexmark": {"target": next(iter(targets)), "outputs": outputs}}
    (root / "profiles.yml").write_text(yaml.safe_dump(profile))
    return root


def spark_rows(spark, relation: str) -> List[tuple]:
    """A table's rows, timestamps as epoch microseconds."""
    columns = [f"unix_micros({n})" if kind == "timestamp" else n for n, kind in spark.table(relation).dtypes]
    return [tuple(r) for r in spark.sql(f"select {', '.join(columns)} from {relation}").collect()]


def late_keys(spark, schema: str, model: str, inputs: Sequence[str]) -> Dict[str, List[tuple]]:
    """The keys (KEYS) of the rows in `<model>__late`, per event kind: a model over one input
    keeps its columns; one over several keeps `_side` and the row as JSON (`_row`)."""
    late = f"{schema}.{model}__late"

    def keys(kind: str, rows: str) -> List[tuple]:
        columns = [f"unix_micros({k})" if k == "dateTime" else k for k in KEYS[kind]]
        return [tuple(r) for r in spark.sql(f"select {', '.join(columns)} from {rows}").collect()]

    if len(inputs) == 1:
        return {inputs[0]: keys(inputs[0], late)}
    out = {}
    for kind in inputs:
        ddl = spark.table(f"{schema}.{kind}").schema.toDDL()
        side = f"lower(_side) = '{kind}' or lower(_side) like '%.{kind}'"
        out[kind] = keys(kind, f"(select r.* from (select from_json(_row, '{ddl}') as r from {late} where {side}))")
    return out
