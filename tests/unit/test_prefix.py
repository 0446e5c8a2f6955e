"""Which window calls streaming keeps as per-partition prefix state, and how they are rewritten."""

import duckdb
import pytest
import sqlglot

from dbt.adapters.window_views.kinds import overwindows, prefix
from dbt.adapters.window_views.query import analysis, sqlexpr

OVER = "over (partition by k order by ts{extra})"


def planned(*calls: str) -> overwindows.OverPlan:
    sql = f"select ts, {', '.join(f'{c} as c{i}' for i, c in enumerate(calls))} from t"
    return overwindows.plan(analysis.parse(sql), "ts")


@pytest.mark.parametrize(
    "call, kind",
    [
        ("row_number() over (partition by k order by ts, id)", "rows"),
        ("row_number() over (partition by k order by ts nulls last, id)", "rows"),  # ts is never NULL in a stream
        ("rank() over (partition by k order by ts)", "rows"),
        ("dense_rank() over (partition by k order by ts)", "dense_rank"),
        ("sum(v) over (partition by k order by ts)", "sum"),
        ("count(*) over (partition by k order by ts rows unbounded preceding)", "count"),
        ("avg(v) over (partition by k order by ts rows between unbounded preceding and 1 preceding)", "avg"),
        ("min(v) over (partition by k order by ts rows between unbounded preceding and 2 following)", "min"),
        (
            "max(v) over (partition by k order by ts range between unbounded preceding and interval 1 minute preceding)",
            "max",
        ),
        ("first_value(v) over (partition by k order by ts)", "first_value"),
        ("first_value(v) ignore nulls over (partition by k order by ts)", "first_value_ignore_nulls"),
    ],
)
def test_calls_from_the_partition_start_keep_a_summary(call, kind):
    over = planned(call)
    assert [c.kind for c in over.prefix] == [kind] and over.unbounded == []


@pytest.mark.parametrize(
    "call",
    [
        "last_value(v) over (partition by k order by ts rows between unbounded preceding and 1 preceding)",
        "nth_value(v, 2) over (partition by k order by ts)",
        "collect_list(v) over (partition by k order by ts)",
        "count(distinct v) over (partition by k order by ts)",
        # the summary orders rows by a struct of the ORDER BY, whose NULL fields sort first
        "row_number() over (partition by k order by ts, id nulls last)",
        "sum(v) over (partition by k order by ts, id desc)",
    ],
)
def test_calls_no_summary_serves_keep_the_whole_partition(call):
    over = planned(call)
    assert over.prefix == () and len(over.unbounded) == 1


def test_the_frame_end_before_the_current_row_is_kept_as_reach():
    over = planned(
        "sum(v) over (partition by k order by ts rows between unbounded preceding and 3 preceding)",
        "sum(v) over (partition by k order by ts range between unbounded preceding and interval 5 minutes preceding)",
        "sum(v) over (partition by k order by ts rows between unbounded preceding and 2 following)",
    )
    assert [(r.rows, r.micros, r.ahead_rows) for r in over.reaches] == [(3, 0, 0), (0, 300_000_000, 0), (0, 0, 2)]


def test_one_partition_by_for_summaries_that_need_whole_ties():
    over = planned(
        "dense_rank() over (partition by k order by ts)",
        "first_value(v) over (partition by k order by ts)",
        "dense_rank() over (order by ts)",  # another PARTITION BY: its rows are kept instead
        "sum(v) over (order by ts)",  # order-free: any PARTITION BY
    )
    assert [c.index for c in over.prefix] == [0, 1, 3] and over.closure == ("k",)
    assert over.unbounded == ["DENSE_RANK() OVER (ORDER BY ts)"]


def test_rewrite_combines_each_call_with_its_state_columns():
    sql = "select ts, avg(v) over w as a, row_number() over (partition by k order by ts) from t window w as (partition by k order by ts)"
    over = overwindows.plan(analysis.parse(sql), "ts")
    rewritten = sqlexpr.to_sql(prefix.rewrite(analysis.parse(sql), over.prefix))
    avg, rows = sorted(over.prefix, key=lambda c: c.kind)
    assert (avg.kind, rows.kind) == ("avg", "rows")
    assert (
        f"(COALESCE(`_wv_s{avg.index}` + (SUM(v) OVER w), `_wv_s{avg.index}`, (SUM(v) OVER w)) / NULLIF(COALESCE(`_wv_c{avg.index}`, 0) + (COUNT(v) OVER w), 0)) AS a"
        in rewritten
    )
    # a rank's type (INT), not the count of rows before it's (BIGINT): a batch's rows as a full build's
    assert (
        f"CAST(COALESCE(`_wv_s{rows.index}`, 0) + (ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts)) AS INT)" in rewritten
    )
    # the rewritten calls (AVG's SUM twice, its COUNT, ROW_NUMBER) keep the original windows, so close as they do
    specs = {(c.partition_by, c.order_by, c.frame) for c in analysis.over_calls(analysis.parse(rewritten))}
    assert specs == {(c.partition_by, c.order_by, c.frame) for c in analysis.over_calls(analysis.parse(sql))}


def on_duckdb(con: duckdb.DuckDBPyConnection, spark_sql: str) -> list:
    return sorted(con.execute(sqlglot.transpile(spark_sql, read="spark", write="duckdb")[0]).fetchall(), key=str)


def test_state_sql_groups_by_the_partition_and_merges_null_safely():
    over = planned("sum(v) over (partition by k, x % 2 order by ts)", "count(v) over (order by ts)")
    (p0, calls0), (p1, calls1) = groups = prefix.groups(over.prefix)
    con = duckdb.connect()
    con.execute(
        "create table e as select * from (values ('a', 1, 10), ('a', 3, 5), (null, 2, 1), (null, 2, 2)) t(k, x, v)"
    )
    for g, (partition_by, calls) in enumerate(groups):
        on_duckdb(con, f"create table s{g} as {prefix.aggregate_sql('e', g, partition_by, calls)}")
    assert [on_duckdb(con, "select * from s0"), on_duckdb(con, "select * from s1")] == [
        [("a", 1, 15), (None, 0, 3)],
        [(4,)],
    ]
    # a state merged with itself: each partition, NULL keys included, meets its own row
    assert on_duckdb(con, prefix.merge_sql("s0", "s0", prefix.StateGroup(0, p0, tuple(calls0)))) == [
        ("a", 1, 30),
        (None, 0, 6),
    ]
    assert on_duckdb(con, prefix.merge_sql("s1", "s1", prefix.StateGroup(1, p1, tuple(calls1)))) == [(8,)]
    # each row beside its partition's state, NULL keys included
    joined = on_duckdb(con, prefix.joined_sql("e", ["s0", "s1"], [p0, p1], over.prefix))
    assert joined == [("a", 1, 10, 15, 4), ("a", 3, 5, 15, 4), (None, 2, 1, 3, 4), (None, 2, 2, 3, 4)]


KINDS = ("count(*)", "max(v)", "avg(v)", "first_value(v)", "dense_rank()", "sum(v)")


def test_a_state_over_the_rows_a_filter_holds_equals_the_state_of_those_rows():
    over = planned(*[f"{call} over (partition by k order by ts)" for call in KINDS])
    ((partition_by, calls),) = prefix.groups(over.prefix)
    con = duckdb.connect()
    con.execute(
        "create table f as select * from (values ('a', 1, 10, false), ('a', 2, 7, false), ('a', 3, 5, true), "
        "('b', 1, 4, true), (null, 1, 1, false), (null, 2, 2, true)) t(k, ts, v, kept)"
    )
    con.execute("create table e as select * from f where not kept")
    filtered = prefix.aggregate("f", 0, partition_by, calls, where=sqlglot.exp.not_(sqlglot.exp.column("kept")))
    on_duckdb(con, f"create table s as {filtered.sql('spark')}")
    on_duckdb(con, f"create table evicted as {prefix.aggregate_sql('e', 0, partition_by, calls)}")
    # the partitions with evicted rows get their state; 'b', whose rows are all kept, one that
    # merges as no state at all
    assert on_duckdb(con, "select * from s where _wv_g0k0 is distinct from 'b'") == on_duckdb(
        con, "select * from evicted"
    )
    assert on_duckdb(con, "select * from s where _wv_g0k0 = 'b'") == [("b", 0, None, None, 0, None, 0, 0, None)]
    # which merges as no state: an old state of every row, merged with it, stays as it was
    on_duckdb(con, f"create table old as {prefix.aggregate_sql('f', 0, partition_by, calls)}")
    merged = on_duckdb(con, prefix.merge_sql("old", "s", prefix.StateGroup(0, partition_by, tuple(calls))))
    assert [r for r in merged if r[0] == "b"] == [r for r in on_duckdb(con, "select * from old") if r[0] == "b"]


def test_every_groups_state_from_one_aggregate_equals_each_groups_own():
    over = planned(
        "sum(v) over (partition by k order by ts)",
        "max(v) over (partition by x % 2 order by ts)",
        "count(*) over (order by ts)",
    )
    groups = prefix.groups(over.prefix)
    assert len(groups) == 3
    con = duckdb.connect()
    con.execute(
        "create table f as select * from (values ('a', 1, 10, false), ('a', 2, 7, true), ('b', 3, 5, false), "
        "(null, 4, 1, false), (null, 5, 2, true), ('c', 6, 3, true)) t(k, x, v, kept)"
    )
    con.execute("create table e as select * from f where not kept")
    # each row once per group, as the state step's explode gives them
    con.execute(f"create table fg as select * from f, (values (0), (1), (2)) g({prefix.GROUP})")
    evicted = sqlglot.exp.not_(sqlglot.exp.column("kept"))
    carried = [sqlglot.exp.alias_(prefix.filtered(sqlglot.exp.Count(this=sqlglot.exp.Literal.number(1)), evicted), "n")]
    on_duckdb(con, f"create table s as {prefix.aggregate_all('fg', groups, evicted, carried).sql('spark')}")
    for g, (partition_by, calls) in enumerate(groups):
        keys = [prefix.key(g, j) for j in range(len(partition_by))]
        columns = ", ".join(keys + [name for call in calls for name in call.columns()])
        ours = on_duckdb(con, f"select {columns} from s where {prefix.GROUP} = {g} and n > 0")
        assert ours == on_duckdb(con, prefix.aggregate_sql("e", g, partition_by, calls)), g
    # a partition whose rows are all kept ('c' by k) gets a row that counts no evicted row, in its group only
    assert on_duckdb(con, f"select {prefix.GROUP}, {prefix.key(0, 0)}, n from s where n = 0") == [(0, "c", 0)]
