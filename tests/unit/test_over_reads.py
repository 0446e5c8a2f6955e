"""Over windows under dbt's event-time filter (over_reads.py, reach.py): the filtered reads dbt
renders are found, widened by the calls' reach and the owned rows kept, so a run range by range
(on DuckDB, the SQL transpiled from Spark's) equals the full build, row for row; what has no
bound is refused naming the call and the fix."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from typing import List, Optional, Sequence

import duckdb
import pytest
import sqlglot
from dbt_common.exceptions import CompilationError
from sqlglot import exp

from dbt.adapters.window_views.errors import AnalysisError
from dbt.adapters.window_views.kinds import emit
from dbt.adapters.window_views.kinds.reach import AllPast, IntervalPast, NoRowsPast, OverCallReach, RowsPast, micros
from dbt.adapters.window_views.plans import window_view as plan
from dbt.adapters.window_views.plans.over_reads import call_reach, filtered_reads, owned
from dbt.adapters.window_views.query import analysis, sqlexpr

BASE = datetime(2024, 1, 1)
CALLS = {
    "rows3": "sum(v) over (partition by k order by ts, id rows between 3 preceding and current row)",
    "range2h": "sum(v) over (partition by k order by ts range between interval 2 hours preceding and current row)",
    "lag2": "lag(v, 2) over (partition by k order by ts, id)",
    "lead1": "lead(v) over (partition by k order by ts, id)",
    "running": "sum(v) over (partition by k order by ts, id rows between unbounded preceding and current row)",
    "ahead": "max(v) over (partition by k order by ts range between current row and interval 90 minutes following)",
    "rows_fw": "count(v) over (order by ts, id rows between 1 following and 4 following)",
    "rn": "row_number() over (partition by k order by ts, id)",
    "to_end": "min(v) over (partition by k order by ts rows between current row and unbounded following)",
    "lag_nn": "lag(v) ignore nulls over (partition by k order by ts, id)",
}


def owned_sql(sql: str, owns_null_times: bool = False) -> Optional[str]:
    """over_reads.owned over the compiled SQL, as Spark receives it."""
    tree = owned(analysis.parse(sql), owns_null_times)
    return None if tree is None else sqlexpr.to_sql(tree)


def model(read: str, where: str = "", names: Sequence[str] = tuple(CALLS)) -> str:
    calls = ",\n  ".join(f"{CALLS[name]} as {name}" for name in names)
    return f"select id, k, ts, v,\n  {calls}\nfrom {read}{where}"


def dbt_read(start: Optional[datetime], end: Optional[datetime], field: str = "ts") -> str:
    """A filtered relation as dbt renders it (BaseRelation.render_event_time_filtered)."""
    parts = [f"{field} >= '{start}'" if start else "", f"{field} < '{end}'" if end else ""]
    return f"(select * from main.events where {' and '.join(p for p in parts if p)})"


def events(rng: random.Random, n: int) -> List[tuple]:
    seconds = rng.sample(range(4 * 86_400), n)  # distinct times: the windows' order is total
    timed = [
        (i, rng.choice("ab"), BASE + timedelta(seconds=s), rng.choice([None, *range(-5, 6)]))
        for i, s in enumerate(seconds)
    ]
    # a NULL time per key (sorted first, before every range): in each range's prefix, owned by the first
    return timed + [(n, "a", None, 4), (n + 1, "b", None, None)]


def run(con: duckdb.DuckDBPyConnection, spark_sql: str) -> list:
    return sorted(con.execute(sqlglot.transpile(spark_sql, read="spark", write="duckdb")[0]).fetchall(), key=str)


def connect(rows: List[tuple]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("create schema if not exists main; create table main.events (id int, k varchar, ts timestamp, v int)")
    con.executemany("insert into main.events values (?, ?, ?, ?)", rows)
    return con


@pytest.mark.parametrize("seed", range(2))
def test_range_by_range_equals_the_full_build(seed):
    """Each call alone (a call reading every row past an edge would hide another's reach), then
    all together."""
    rng = random.Random(seed)
    con = connect(events(rng, 200))
    where = rng.choice(["", " where v is not null", " where v > -3 or k = 'a'"])
    # unaligned edges, a range with no rows, and the open ends --sample may leave
    cuts = sorted({BASE + timedelta(minutes=rng.randrange(0, 4 * 1440)) for _ in range(4)})
    edges: List[Optional[datetime]] = [None, *cuts, BASE + timedelta(days=5), None]
    for names in [*([name] for name in CALLS), list(CALLS)]:
        full = run(con, model("main.events", where, names))
        pieces, cut = [], []
        for s, e in zip(edges[:-1], edges[1:]):
            sql = owned_sql(model(dbt_read(s, e), where, names))
            assert sql is not None
            pieces += run(con, sql)
            cut += run(con, model(dbt_read(s, e), where, names))
        assert sorted(pieces, key=str) == full, names
        # without the widening some range's first (last) rows differ: the test sees a cut
        assert len(names) == 1 or sorted(cut, key=str) != full


def test_reach_per_call():
    def reach(sql: str) -> OverCallReach:
        (call,) = analysis.over_calls(analysis.parse(f"select {sql} from t"))
        return call_reach(call)

    assert reach(CALLS["rows3"]) == OverCallReach(RowsPast(3, ("k",)), NoRowsPast())
    assert reach(CALLS["range2h"]) == OverCallReach(IntervalPast(2 * 3_600_000_000), NoRowsPast())
    assert reach(CALLS["lag2"]) == OverCallReach(RowsPast(2, ("k",)), NoRowsPast())
    assert reach(CALLS["lead1"]) == OverCallReach(NoRowsPast(), RowsPast(1, ("k",)))
    assert reach(CALLS["running"]) == OverCallReach(AllPast(), NoRowsPast())
    assert reach(CALLS["ahead"]) == OverCallReach(NoRowsPast(), IntervalPast(90 * 60_000_000))
    assert reach(CALLS["rows_fw"]) == OverCallReach(NoRowsPast(), RowsPast(4, ()))
    assert reach(CALLS["rn"]) == OverCallReach(AllPast(), NoRowsPast())
    assert reach(CALLS["to_end"]) == OverCallReach(NoRowsPast(), AllPast())
    assert reach(CALLS["lag_nn"]) == OverCallReach(AllPast(), NoRowsPast())
    assert reach("ntile(4) over (partition by e.k order by ts)") == OverCallReach(AllPast(), AllPast())
    assert reach("sum(v) over (order by ts rows between 5 preceding and 2 preceding)") == OverCallReach(
        RowsPast(5, ()), NoRowsPast()
    )


def test_only_what_dbt_renders_is_a_filtered_read():
    start, end = datetime(2024, 1, 2, tzinfo=timezone.utc), datetime(2024, 1, 3, tzinfo=timezone.utc)
    found = filtered_reads(analysis.parse(f"select * from {dbt_read(start, end)} e"))
    assert [(r.table.sql("spark"), r.column, r.start, r.end) for r in found] == [("main.events", "ts", start, end)]
    assert [r.end for r in filtered_reads(analysis.parse(f"select * from {dbt_read(None, end)}"))] == [end]
    for written in (
        "(select * from main.events where ts > '2024-01-02 00:00:00')",
        "(select * from main.events where ts >= '2024-01-02' and v < '2024-01-03')",
        "(select id from main.events where ts >= '2024-01-02 00:00:00')",
        "(select * from main.events where ts >= 'soon')",
    ):
        assert filtered_reads(analysis.parse(f"select * from {written}")) == [], written
    # no filtered read, or none under an over window: the SQL is left as it is
    assert owned_sql(model("main.events")) is None
    assert owned_sql(f"select k, count(*) from {dbt_read(BASE, BASE + timedelta(days=1))} group by k") is None


def test_the_owned_rows_keep_the_users_alias_and_columns():
    con = connect(events(random.Random(3), 50))
    day = (BASE + timedelta(days=1), BASE + timedelta(days=2))
    sql = owned_sql(
        f"with x as (select e.*, lag(e.v) over (partition by e.k order by e.ts) as p from {dbt_read(*day)} e) "
        "select * from x"
    )
    assert sql is not None
    full = run(con, "select e.*, lag(e.v) over (partition by e.k order by e.ts) as p from main.events e")
    assert run(con, sql) == [r for r in full if r[2] is not None and day[0] <= r[2] < day[1]]
    # dbt's import CTE, read once: the read inside it is widened
    for source in ("events", "events as e"):
        imported = owned_sql(
            f"with events as (select * from {dbt_read(*day)}) "
            f"select *, lag(v) over (partition by k order by ts) as p from {source}"
        )
        assert imported is not None
        assert run(con, imported) == [r for r in full if r[2] is not None and day[0] <= r[2] < day[1]]


@pytest.mark.parametrize(
    "sql, message",
    [
        (
            "select sum(v) over (partition by k order by id rows 2 preceding) from {read}",
            "`SUM(v) OVER (PARTITION BY k ORDER BY id rows BETWEEN 2 preceding AND CURRENT ROW)` reads main.events, "
            "which dbt filters to a time range by its event_time `ts`",
        ),
        ("select lag(v) over (partition by k order by ts desc) from {read}", "not ordered by `ts` ascending first"),
        (
            "select lag(v) over (partition by k order by ts nulls last) from {read}",
            "ordered NULLS LAST: a row with a NULL time would then follow every later range's rows",
        ),
        ("select count(*) over (partition by k) from {read}", "fix: order the window by `ts` first"),
        ("select k, sum(sum(v)) over (order by k) from {read} group by k", "in a query with GROUP BY"),
        (
            "select lag(v) over (order by ts) from {read} join main.keys using (k)",
            "in a query with a join",
        ),
        (
            "select lag(v) over (order by ts) from {read} lateral view explode(array(1, 2)) x as y",
            "in a query with LATERAL VIEW",
        ),
        (
            "with r as (select * from {read} where v > 0) select lag(v) over (order by ts) from r",
            "through a join, CTE, subquery or window macro",
        ),
        (
            "with r as (select * from {read}) select lag(v) over (order by ts) from r union all select 1 from r",
            "through a join, CTE, subquery or window macro",
        ),
        (
            "select lag(v) over (order by ts) from (select ts, v from {read} where v > 0)",
            "through a join, CTE, subquery or window macro",
        ),
    ],
)
def test_an_over_window_without_a_bound_is_refused(sql, message):
    with pytest.raises(AnalysisError) as info:
        owned_sql(sql.format(read=dbt_read(BASE, BASE + timedelta(days=1))))
    assert message in str(info.value)


def test_a_batch_window_view_builds_the_owned_sql_and_other_models_refuse():
    read = dbt_read(BASE, BASE + timedelta(days=1))
    sql = f"select k, ts, lag(v) over (partition by k order by ts) as p from {read}"
    built = plan.WindowViewPlan.from_model("lagged", sql, {"materialized": "window_view"})
    assert built.sql == owned_sql(sql) and built.sql != sql
    with pytest.raises(CompilationError) as info:
        plan.check_node("lagged", "window_view", sql.replace("order by ts", "order by v"), {}, [])
    assert "window_view model 'lagged': `LAG(v) OVER (PARTITION BY k ORDER BY v)` reads" in str(info.value)
    for materialized in ("incremental", "table"):
        with pytest.raises(CompilationError) as info:
            plan.check_node("lagged", materialized, sql, {}, [])
        assert (
            "\n  model 'lagged': `LAG(v) OVER (PARTITION BY k ORDER BY ts)` reads an input dbt filters to a time range"
            in str(info.value)
        )
        assert "fix: make this model materialized='window_view'" in str(info.value)
        # unfiltered, or SQL sqlglot cannot read: nothing to say
        plan.check_node("lagged", materialized, sql.replace(read, "main.events"), {}, [])
        plan.check_node("lagged", materialized, f"select lag(v) over (order by ts) from {read} where ((", {}, [])


@pytest.mark.parametrize("names", [["lag2", "range2h", "rows3"], ["running", "rn", "range2h"]])
def test_on_window_close_closes_the_owned_rows_of_the_full_build(names):
    """The windows the plugin adds to the read are its own: the close filter (batch
    on_window_close) sees the model's calls only, and closes the rows the range owns (running
    calls too, combined with the summary of the rows before)."""
    con = connect(events(random.Random(5), 120))
    day = (BASE + timedelta(days=1), BASE + timedelta(days=2))
    config = {
        "materialized": "window_view",
        "emit": "on_window_close",
        "watermark": {"column": "ts", "delay": "0 seconds"},
    }
    built = plan.WindowViewPlan.from_model("closing", model(dbt_read(*day), names=names), config)
    full = plan.WindowViewPlan.from_model("closing", model("main.events", names=names), config)
    assert built.close_sql is not None and full.close_sql is not None
    w = micros(BASE + timedelta(days=1, hours=13))
    columns = ["id", "k", "ts", "v", *names]
    closed = run(con, sqlexpr.to_sql(emit.close_filter(analysis.parse(full.close_sql), "ts", w, columns)))
    assert run(con, sqlexpr.to_sql(emit.close_filter(analysis.parse(built.close_sql), "ts", w, columns))) == [
        r for r in closed if r[2] is not None and day[0] <= r[2]
    ]


# calls whose rows before the range a per-partition summary stands for (prefix.py)
PREFIX_CALLS = {
    "run_sum": "sum(v) over (partition by k order by ts)",  # the default frame: the current row's peers
    "run_count": "count(v) over (partition by k order by ts, id rows between unbounded preceding and current row)",
    "rows_seen": "count(*) over (partition by k order by ts)",
    "run_min": "min(v) over (partition by k order by ts)",
    "run_max": "max(v) over (order by ts, id rows between unbounded preceding and 1 following)",
    "run_avg": "avg(v) over (partition by k order by ts)",
    "rn": "row_number() over (partition by k order by ts, id)",
    "rk": "rank() over (partition by k order by ts)",
    "drk": "dense_rank() over (partition by k order by ts)",
    "drk_v": "dense_rank() over (partition by k order by ts, v)",
    "first": "first_value(v) over (partition by k order by ts, id)",
    "upto_1h": "sum(v) over (partition by k order by ts range between unbounded preceding and interval 1 hour preceding)",
}
OLD = datetime(1969, 12, 30, 22)


def tied_events(rng: random.Random, n: int) -> List[tuple]:
    """Rows on a 30-minute grid from before 1970 (many share a time), NULL keys and values."""
    return [
        (
            i,
            rng.choice(["a", "b", None]),
            OLD + timedelta(minutes=30 * rng.randrange(150)),
            rng.choice([None, *range(-3, 4)]),
        )
        for i in range(n)
    ] + [(n + i, rng.choice(["a", "b", None]), None, i) for i in range(4)]  # NULL times: sorted first


def reads_of(sql: str) -> List[tuple]:
    """Each read of main.events: its filter, and whether an aggregate (no window) reads it."""
    found = []
    for table in analysis.parse(sql).find_all(exp.Table):
        if table.name != "events":
            continue
        select = table.find_ancestor(exp.Select)
        outer = select.parent.find_ancestor(exp.Select)
        grouped = outer is not None and outer.find(exp.AggFunc) is not None and outer.find(exp.Window) is None
        where = select.args.get("where")
        found.append(("" if where is None else where.this.sql("spark"), grouped))
    return sorted(found)


@pytest.mark.parametrize("seed", range(2))
def test_summarised_prefix_equals_the_full_build_with_ties_at_the_edges(seed):
    rng = random.Random(seed)
    con = connect(tied_events(rng, 240))
    where = rng.choice(["", " where v is not null or k is null"])
    # edges on the grid (ties on both sides of them), off it, before and after 1970
    cuts = sorted({OLD + timedelta(minutes=30 * rng.randrange(150) + rng.choice([0, 0, 7])) for _ in range(4)})
    edges: List[Optional[datetime]] = [OLD - timedelta(days=1), *cuts, OLD + timedelta(days=4)]
    for names in [*([name] for name in PREFIX_CALLS), list(PREFIX_CALLS)]:
        calls = ", ".join(f"{PREFIX_CALLS[n]} as {n}" for n in names)
        full = run(con, f"select id, k, ts, v, {calls} from main.events{where}")
        pieces = []
        for s, e in zip(edges[:-1], edges[1:]):
            # the first range owns the NULL-time rows (an incremental batch window view's first batch)
            owned = owned_sql(f"select id, k, ts, v, {calls} from {dbt_read(s, e)}{where}", s == edges[0])
            assert owned is not None and (s == edges[0] or any(grouped for _, grouped in reads_of(owned))), names
            pieces += run(con, owned)
        assert sorted(pieces, key=str) == full, names


def test_the_window_reads_the_range_and_an_aggregate_of_the_rows_before():
    s, e = datetime(1969, 12, 31), datetime(1970, 1, 1)
    read = dbt_read(s, e)
    ranged, before = (
        "ts >= CAST('1969-12-31 00:00:00' AS TIMESTAMP_NTZ) AND ts < CAST('1970-01-01 00:00:00' AS TIMESTAMP_NTZ)",
        "ts < CAST('1969-12-31 00:00:00' AS TIMESTAMP_NTZ) OR ts IS NULL",
    )
    # a running total and ranks: the window reads the range; the rows before are aggregated
    assert reads_of(owned_sql(f"select *, {PREFIX_CALLS['run_sum']} as a, {PREFIX_CALLS['drk']} as b from {read}")) == [
        (before, True),
        (ranged, False),
    ]
    # a frame ending an hour before the row reads the hour before the range too
    assert reads_of(owned_sql(f"select {PREFIX_CALLS['upto_1h']} from {read} where v > 0")) == [
        ("(ts < CAST('1969-12-30 23:00:00' AS TIMESTAMP_NTZ) OR ts IS NULL) AND v > 0", True),
        (
            "ts >= CAST('1969-12-30 23:00:00' AS TIMESTAMP_NTZ) AND ts < CAST('1970-01-01 00:00:00' AS TIMESTAMP_NTZ)",
            False,
        ),
    ]
    # a call that scans every row before anyway (ROWS 3 PRECEDING, LAG ... IGNORE NULLS, NTILE):
    # every call reads them as before, no aggregate
    for other in (CALLS["rows3"], CALLS["lag_nn"]):
        assert reads_of(owned_sql(f"select {PREFIX_CALLS['rn']}, {other} from {read}")) == [
            ("ts < CAST('1970-01-01 00:00:00' AS TIMESTAMP_NTZ) OR ts IS NULL", False)
        ]
    assert reads_of(
        owned_sql(f"select {PREFIX_CALLS['rn']}, ntile(2) over (partition by k order by ts) from {read}")
    ) == [("", False)]
    # --sample with no start: nothing before it
    assert reads_of(owned_sql(f"select {PREFIX_CALLS['rn']} from {dbt_read(None, e)}")) == [
        ("ts < CAST('1970-01-01 00:00:00' AS TIMESTAMP_NTZ) OR ts IS NULL", False)
    ]
    # the range owning the NULL-time rows reads every row before it, and keeps them
    first = owned_sql(f"select {PREFIX_CALLS['run_sum']} from {read}", owns_null_times=True)
    assert first is not None and reads_of(first) == [
        ("ts < CAST('1970-01-01 00:00:00' AS TIMESTAMP_NTZ) OR ts IS NULL", False)
    ]
