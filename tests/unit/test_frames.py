"""Window forms Spark lacks (GROUPS frames, EXCLUDE, DISTINCT window aggregates, nth_value FROM
LAST): the parse keeps them in the tree, and query/frames.py rewrites them into Spark SQL with
the same rows (run here on DuckDB, which has them all, against the original SQL)."""

from __future__ import annotations

import random

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from dbt.adapters.window_views.errors import ModelSqlError
from dbt.adapters.window_views.plans.window_view import WindowViewPlan
from dbt.adapters.window_views.query import analysis, frames, sqlexpr
from dbt.adapters.window_views.query.shown import shown


def window(sql: str) -> exp.Window:
    found = analysis.parse(sql).find(exp.Window)
    assert found is not None
    return found


def test_the_parse_keeps_groups_exclude_filter_distinct_ignore_nulls_and_from_last():
    groups = window("select sum(v) over (order by ts groups between 1 preceding and 2 following) from t")
    assert groups.args["spec"].args["kind"] == "groups"
    excluded = window("select sum(v) over (order by ts rows between 1 preceding and 1 following exclude ties) from t")
    assert excluded.args["spec"].args["exclude"].name == "TIES"
    filtered = window("select count(*) filter (where v > 0) over (order by ts) from t")
    assert isinstance(filtered.this, exp.Filter)
    distinct = window("select count(distinct v) over (partition by k) from t")
    assert isinstance(distinct.this.this, exp.Distinct)
    ignoring = window("select lag(v) ignore nulls over (order by ts) from t")
    assert isinstance(ignoring.this, exp.IgnoreNulls)
    last = window("select nth_value(v, 2) from last ignore nulls over (order by ts) from t")
    assert isinstance(last.this, exp.IgnoreNulls) and last.this.this.args["from_first"] is False
    first = window("select nth_value(v, 2) from first over (order by ts) from t")
    assert first.this.args["from_first"] is True


@pytest.mark.parametrize(
    "call",
    [
        "SUM(v) OVER (ORDER BY ts GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES)",
        "NTH_VALUE(v, 2) FROM LAST IGNORE NULLS OVER (ORDER BY ts)",
        "COUNT(DISTINCT v) FILTER(WHERE v > 0) OVER (PARTITION BY k)",
    ],
)
def test_a_message_quotes_the_call_as_written(call):
    assert shown(window(f"select {call} from t")).upper() == call.upper()


# ---------------------------------------------------------------------------------------------
# the rewrite, run on DuckDB (Spark SQL transpiled) against DuckDB's own answer to the original


def _events() -> duckdb.DuckDBPyConnection:
    """Rows with ties and NULLs in the order column, NULL values and NULL keys."""
    rng = random.Random(7)
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    con.execute("create table ev (id int, k varchar, v int, ts timestamp)")
    rows = [
        (
            i,
            rng.choice(["a", "b", None]),
            None if rng.random() < 0.15 else rng.randint(-5, 20),
            None if rng.random() < 0.1 else f"2024-01-01 00:{rng.randint(0, 9):02d}:00",
        )
        for i in range(70)
    ]
    con.executemany("insert into ev values (?, ?, ?, ?)", rows)
    return con


EVENTS = _events()


def rewritten(sql: str) -> exp.Expression:
    return frames.spark(analysis.parse(sql))


def on_duckdb(spark_sql: str) -> dict:
    """Spark SQL's rows on DuckDB, which reads no DAY TO SECOND interval: those as microseconds."""
    tree = sqlglot.parse_one(spark_sql, read="spark").transform(_in_micros)
    return dict(EVENTS.execute(tree.sql("duckdb")).fetchall())


def _in_micros(node: exp.Expression) -> exp.Expression:
    if not (isinstance(node, exp.Interval) and isinstance(node.unit, exp.IntervalSpan)):
        return node
    days, clock = node.this.name.split(" ")
    hours, minutes, seconds = clock.split(":")
    micros = round(((int(days) * 24 + int(hours)) * 60 + int(minutes)) * 60_000_000 + float(seconds) * 1_000_000)
    return exp.Interval(this=exp.Literal.string(str(micros)), unit=exp.Var(this="MICROSECOND"))


def same(got: dict, want: dict) -> bool:
    close = [g == w or (isinstance(w, float) and g is not None and abs(g - w) < 1e-9) for g, w in zip_rows(got, want)]
    return set(got) == set(want) and all(close)


def zip_rows(got: dict, want: dict) -> list:
    return [(got.get(i), want[i]) for i in sorted(want)]


@pytest.mark.parametrize(
    "call",
    [
        "sum(v) over (partition by k order by ts nulls first groups between 1 preceding and 1 following)",
        "count(*) over (order by ts nulls last groups between 2 preceding and 1 preceding)",
        "first_value(v) over (partition by k order by ts, id groups between 1 following and unbounded following)",
        "max(v) over (order by ts desc nulls last groups between unbounded preceding and current row)",
        "sum(v) over (partition by k order by ts, id rows between 2 preceding and 2 following exclude current row)",
        "max(v) over (partition by k order by ts nulls first range between unbounded preceding and current row "
        "exclude ties)",
        "avg(v) over (partition by k order by ts nulls first groups between 1 preceding and 1 following exclude group)",
        "count(v) over (order by ts nulls first range between interval 2 minutes preceding and interval 1 minutes "
        "following exclude current row)",
        "sum(v) over (order by ts nulls last range between interval 2 minutes preceding and current row exclude ties)",
        "min(v) filter (where v > 2) over (partition by k order by ts nulls first groups between current row and "
        "2 following exclude current row)",
        "count(*) filter (where v > 2) over (partition by k order by ts nulls first groups between unbounded "
        "preceding and 1 following exclude ties)",
        "sum(v) over (order by ts rows between 1 preceding and 1 following exclude no others)",
        "avg(v) over (partition by k order by ts nulls first groups between 3 preceding and 2 preceding exclude ties)",
        "sum(v) over (order by ts nulls last range between interval 3 minutes preceding and interval 1 minutes "
        "preceding exclude group)",
        "count(distinct v) filter (where v > 3) over (partition by k)",
        "count(distinct v) over (partition by k order by ts nulls first groups between 1 preceding and current row)",
        "max(distinct v) over (partition by k)",
        "sum(distinct v) over (partition by k order by ts nulls first, id rows between 3 preceding and current row)",
        "avg(distinct v) filter (where v > 2) over (partition by k order by ts nulls last)",
        "sum(distinct v) over (partition by k order by ts nulls first groups between unbounded preceding and "
        "current row)",
        "row_number() over (order by ts, id groups between 1 preceding and current row)",
        "lag(v) over (partition by k order by ts, id rows between 1 preceding and 1 following exclude ties)",
        # a NULL time's frame is its peers, and past them every other row where an UNBOUNDED bound reaches
        "sum(v) over (order by ts nulls last range between unbounded preceding and interval 1 minutes preceding "
        "exclude ties)",
        "avg(v) filter (where v > 2) over (partition by k order by ts nulls first range between interval 2 minutes "
        "preceding and unbounded following exclude group)",
        "count(*) over (partition by k order by ts desc nulls last range between unbounded preceding and interval "
        "1 minutes following exclude ties)",
        "min(v) over (order by ts desc nulls first range between interval 1 minutes preceding and unbounded "
        "following exclude group)",
    ],
)
def test_a_rewritten_call_gives_duckdbs_rows(call):
    sql = f"select id, {call} as c from ev t where id > 3"
    tree = rewritten(sql)
    spark_sql = sqlexpr.to_sql(tree)
    assert frames.calls(analysis.parse(spark_sql)) == []
    want = dict(EVENTS.execute(sqlglot.transpile(sql, read=sqlexpr.ModelSql, write="duckdb")[0]).fetchall())
    got = on_duckdb(spark_sql)
    assert same(got, want), (spark_sql, [(i, g, w) for i, (g, w) in zip(sorted(want), zip_rows(got, want)) if g != w])


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("ignore_nulls", [False, True])
def test_nth_value_from_last_reads_the_frame_backwards(ignore_nulls, n):
    """DuckDB has no FROM LAST: the n-th last of the frame is the list of its values read from the end
    (the last one: last_value, the others over the reversed order)."""
    nulls = " ignore nulls" if ignore_nulls else ""
    frame = "partition by k order by ts nulls first, id rows between 3 preceding and 1 following"
    sql = f"select id, nth_value(v, {n}) from last{nulls} over ({frame}) as c from ev"
    values = "list_filter(array_agg(v) over w, lambda x: x is not null)" if ignore_nulls else "array_agg(v) over w"
    want = dict(EVENTS.execute(f"select id, ({values})[-{n}] from ev window w as ({frame})").fetchall())
    assert on_duckdb(sqlexpr.to_sql(rewritten(sql))) == want
    first = "select id, nth_value(v, 2) from first over (order by ts, id) as c from ev"
    assert sqlexpr.to_sql(rewritten(first)) == "SELECT id, NTH_VALUE(v, 2) OVER (ORDER BY ts, id) AS c FROM ev"


def test_a_named_window_is_written_into_its_calls_and_the_select_star_hides_the_helpers():
    sql = (
        "select *, sum(v) over w as s, count(*) over w as n, lag(v) over (order by ts, id) as p from ev "
        "window w as (order by ts groups between 1 preceding and current row)"
    )
    spark_sql = sqlexpr.to_sql(rewritten(sql))
    assert "_wv_" not in spark_sql.split(" FROM ")[0].split("EXCEPT")[0]
    result = EVENTS.execute(sqlglot.transpile(spark_sql, read="spark", write="duckdb")[0])
    assert [d[0] for d in result.description] == ["id", "k", "v", "ts", "s", "n", "p"]
    got = result.fetchall()
    want = EVENTS.execute(sqlglot.transpile(sql, read=sqlexpr.ModelSql, write="duckdb")[0]).fetchall()
    assert sorted(got, key=str) == sorted(want, key=str)


@pytest.mark.parametrize(
    "sql",
    [
        "select lag(v) over (order by ts) as a, sum(v) filter (where v > 0) over (order by ts) as b from ev",
        "select first_value(v) ignore nulls over (partition by k order by ts rows between 1 preceding and "
        "current row) as a from ev",
        "select count(*) over (order by ts range between interval 1 hour preceding and current row) from ev",
        "select sum(v) over undefined from ev",
    ],
)
def test_what_spark_has_passes_through_as_the_same_tree(sql):
    tree = analysis.parse(sql)
    assert frames.spark(tree) is tree


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "select sum(distinct v) over (order by ts groups between 1 preceding and current row) from ev",
            "`: Spark computes no DISTINCT window aggregate, and the plugin computes one of a single value over a "
            "ROWS or RANGE frame",
        ),
        (
            "select stddev(v) over (order by ts rows between 1 preceding and 1 following exclude current row) from ev",
            "EXCLUDE CURRENT ROW (which Spark lacks) for sum, count, min, max and avg",
        ),
        (
            "select sum(v) over (order by ts, id rows between 1 preceding and 1 following exclude ties) from ev",
            "excludes the current row's peers from a ROWS frame",
        ),
        (
            "select sum(v) over (order by v range between 2 preceding and 2 following exclude group) from ev",
            "excludes rows from a RANGE frame with a numeric offset",
        ),
        (
            "select k, sum(sum(v)) over (order by k groups between 1 preceding and current row) from ev group by k",
            "is rewritten over columns the plugin computes in a subquery of the relation the query reads (its rows' "
            "peer groups, or the set of distinct values), and the query has GROUP BY",
        ),
        (
            "select nth_value(v, 2) from last over (partition by k) from ev",
            "counts from the last row of a frame without ORDER BY",
        ),
        (
            "select sum(v) over (partition by k range between unbounded preceding and unbounded following "
            "exclude current row) from ev",
            "has a RANGE frame with EXCLUDE without ORDER BY",
        ),
    ],
)
def test_what_cannot_be_made_exact_is_refused_naming_the_call(sql, message):
    with pytest.raises(frames.FrameError) as refused:
        rewritten(sql)
    assert message in str(refused.value)
    assert "fix: " in str(refused.value) and "_wv_" not in str(refused.value)


# ---------------------------------------------------------------------------------------------
# the plan: rewritten for a batch build, refused where a run reads or keeps part of the input

FRAMED = "select id, sum(v) over (order by ts groups between 1 preceding and current row) as s from main.ev"
FILTERED = FRAMED.replace(
    "from main.ev", "from (select * from main.ev where ts >= '2024-01-02 00:00:00' and ts < '2024-01-03 00:00:00') ev"
)


def plan(sql: str, **config: object) -> WindowViewPlan:
    return WindowViewPlan.from_model("m", sql, {"materialized": "window_view", **config})


def test_a_batch_plan_runs_the_rewritten_sql():
    built = plan(FRAMED)
    assert "GROUPS" not in built.sql.upper() and "DENSE_RANK()" in built.sql
    assert frames.calls(analysis.parse(built.sql)) == []
    assert plan("select id, lag(v) over (order by ts) as p from main.ev").sql.startswith("select id, lag(v)")
    excluded = plan(
        "select id, sum(v) over (order by ts, id rows between 1 preceding and current row exclude "
        "current row) as s from main.ev"
    )
    assert "EXCLUDE" not in excluded.sql.upper()
    assert excluded.properties()["window_views.over_windows"].endswith("EXCLUDE CURRENT ROW)")


def test_a_groups_frame_is_listed_in_the_properties_as_written():
    grouped = plan(
        "select id, sum(v) over (order by ts groups between unbounded preceding and current row) as s from main.ev"
    )
    assert grouped.properties()["window_views.over_windows"].upper() == (
        "SUM(V) OVER (ORDER BY TS GROUPS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
    )


def test_a_stream_s_properties_show_its_over_windows_as_written():
    streamed = plan(
        "select id, ts, sum(v) over (order by ts, id rows between 1 preceding and current row exclude "
        "current row) as s from main.ev",
        **PARTIAL_RUNS["streaming"],
    )
    assert "EXCLUDE" not in streamed.stream_plan.sql.upper()
    assert streamed.properties()["window_views.over_windows"].endswith("EXCLUDE CURRENT ROW)")


PARTIAL_RUNS = {
    "streaming": {"execution": "streaming", "watermark": {"column": "ts", "delay": "1 minute"}},
    "batches": {"event_time": "ts", "batch_size": "day", "begin": "2024-01-01"},
    "on_window_close": {"emit": "on_window_close", "watermark": {"column": "ts", "delay": "1 minute"}},
}


@pytest.mark.parametrize(
    ("sql", "config", "why", "fix"),
    [
        (
            FRAMED,
            PARTIAL_RUNS["streaming"],
            "a stream computes over windows from the rows it keeps",
            "or compute it in a window_view with execution='batch'",
        ),
        (
            FRAMED,
            PARTIAL_RUNS["batches"],
            "with batch_size each batch reads its input only as far as its frames reach",
            "or remove batch_size",
        ),
        (FILTERED, {}, "dbt filters its input to a time range", "or run it without the time filter"),
        (
            FRAMED,
            PARTIAL_RUNS["on_window_close"],
            "emit='on_window_close' keeps the rows whose frames the watermark has closed",
            "or use emit='on_update'",
        ),
    ],
)
def test_a_run_over_part_of_the_input_refuses_the_rewritten_forms_at_compile_time(sql, config, why, fix):
    with pytest.raises(ModelSqlError) as refused:
        plan(sql, **config)
    message = str(refused.value)
    assert "window_view model 'm': `SUM(v) OVER (ORDER BY ts GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW)` uses a " in (
        message.replace("groups", "GROUPS").replace("preceding", "PRECEDING")
    )
    assert "over the dense rank of its rows' peer groups from the partition's start" in message
    assert why in message and fix in message and "fix: write the frame as ROWS" in message and "_wv_" not in message


# ---------------------------------------------------------------------------------------------
# in reach: what the rewrite makes of a form is ROWS and RANGE frames over the order as written,
# which batches, filtered reads, on_window_close and streams read as they read the model's own

IN_REACH = [
    "sum(v) over (partition by k order by ts groups between unbounded preceding and current row)",
    "count(*) over (partition by k order by ts, id rows between 2 preceding and 1 following exclude current row)",
    "max(v) over (partition by k order by ts range between interval 2 hours preceding and interval 1 hour "
    "following exclude group)",
    "avg(v) over (partition by k order by ts range between interval 2 hours preceding and current row exclude ties)",
    "sum(v) over (partition by k order by ts range between unbounded preceding and interval 1 hour following "
    "exclude group)",
    "count(distinct v) over (partition by k order by ts rows between 3 preceding and current row)",
    "min(distinct v) over (partition by k order by ts range between interval 1 hour preceding and current row)",
    "nth_value(v, 2) from first over (partition by k order by ts, id rows between 3 preceding and current row)",
    "nth_value(v, 1) from last ignore nulls over (partition by k order by ts, id rows between 2 preceding and "
    "1 following)",
    "sum(v) over (partition by k order by ts rows between 1 preceding and current row exclude no others)",
    "rank() over (partition by k order by ts groups between 1 preceding and current row)",
]
# (the call, what its rewrite reads out of reach)
OUT_OF_REACH = [
    ("sum(v) over (partition by k order by ts groups between 1 preceding and current row)", "the dense rank"),
    ("sum(v) over (order by ts range between unbounded preceding and current row exclude ties)", "the dense rank"),
    ("count(v) over (order by ts groups between current row and unbounded following exclude group)", "the dense rank"),
    (
        "sum(v) over (order by ts range between interval 2 hours preceding and current row exclude current row)",
        "the number of each row",
    ),
    ("nth_value(v, 2) from last over (order by ts, id rows between 3 preceding and current row)", "order reversed"),
    ("avg(distinct v) over (partition by k order by ts rows between 2 preceding and current row)", "set of distinct"),
]


@pytest.mark.parametrize("call", IN_REACH)
def test_a_form_whose_rewrite_is_rows_and_range_frames_is_in_reach(call):
    rewritten_ = frames.rewrite(analysis.parse(f"select id, ts, {call} as c from ev"))
    assert rewritten_.out_of_reach == ()
    assert frames.calls(rewritten_.tree) == [] and analysis.over_calls(rewritten_.tree)


@pytest.mark.parametrize(("call", "reads"), OUT_OF_REACH)
def test_a_form_whose_rewrite_reads_the_partition_from_its_start_or_reversed_is_out_of_reach(call, reads):
    rewritten_ = frames.rewrite(analysis.parse(f"select id, {call} as c, lag(v) over (order by ts) as p from ev"))
    assert [(r.call, r.form) for r in rewritten_.out_of_reach] == [
        (shown(window(f"select {call}")), frames.calls(analysis.parse(f"select {call}"))[0][1])
    ]
    assert reads in rewritten_.out_of_reach[0].reads


@pytest.mark.parametrize("mode", [*PARTIAL_RUNS, "filtered"])
def test_every_form_in_reach_compiles_for_a_run_over_part_of_the_input(mode):
    calls_ = ",\n".join(f"{call} as c{i}" for i, call in enumerate(IN_REACH))
    source = FILTERED.split(" from ", 1)[1] if mode == "filtered" else "main.ev"
    built = plan(f"select id, k, ts, {calls_} from {source}", **PARTIAL_RUNS.get(mode, {}))
    assert frames.calls(analysis.parse(built.sql)) == []


def test_a_stream_keeps_bounded_state_for_bounded_frames_in_reach():
    """The pieces of EXCLUDE and the set of a DISTINCT count reach as far back as the frame."""
    bounded = IN_REACH[1:6]
    calls_ = ", ".join(f"{call} as c{i}" for i, call in enumerate(bounded))
    over = plan(f"select id, k, ts, {calls_} from main.ev", **PARTIAL_RUNS["streaming"]).stream_plan.over
    assert over is not None and over.unbounded == []
    assert max(r.rows for r in over.reaches) == 3 and max(r.ahead_rows for r in over.reaches) == 1
    assert max(r.micros for r in over.reaches) == 7_200_000_000 and max(r.ahead_micros for r in over.reaches) == (
        3_600_000_000
    )


def test_the_bounds_the_rewrite_splits_a_range_frame_at_read_back_as_microseconds():
    (call,) = analysis.over_calls(
        analysis.parse(
            "select sum(v) over (order by ts range between interval '0 02:00:00' day to second preceding and "
            "interval '0 00:00:00.000001' day to second preceding) from ev"
        )
    )
    assert (call.frame.start.micros, call.frame.end.micros) == (7_200_000_000, 1)


def test_an_engine_refusing_a_rewritten_call_quotes_it_as_the_model_writes_it():
    sql = (
        "select id, ts, sum(v) over (order by ts rows between current row and unbounded following "
        "exclude current row) as c from main.ev"
    )
    with pytest.raises(ModelSqlError) as refused:
        plan(sql, **PARTIAL_RUNS["streaming"])
    message = str(refused.value).upper()
    assert "UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW)` HAS A FRAME ENDING IN UNBOUNDED FOLLOWING" in message, message


@pytest.mark.parametrize("mode", [*PARTIAL_RUNS, "filtered"])
@pytest.mark.parametrize(("call", "reads"), OUT_OF_REACH)
def test_each_form_out_of_reach_is_refused_in_each_run_over_part_of_the_input(call, reads, mode):
    source = FILTERED.split(" from ", 1)[1] if mode == "filtered" else "main.ev"
    with pytest.raises(ModelSqlError) as refused:
        plan(f"select id, ts, {call} as c from {source}", **PARTIAL_RUNS.get(mode, {}))
    message = str(refused.value)
    assert f"window_view model 'm': `{shown(window(f'select {call}'))}` uses " in message, message
    assert "which Spark SQL lacks and the plugin rewrites over " in message and reads in message, message
    assert "; fix: " in message and "_wv_" not in message, message
