"""Differential tests of over windows in window_view models: random data and random OVER specs
run on the real local Spark through dbt, compared with DuckDB running the same SQL on the same
rows; and emit='on_window_close', compared with a Python oracle for the watermark's row filter
(values from DuckDB), plus small fixed cases: ties in ROWS n FOLLOWING / LEAD, and over windows
partitioned by a TVF's window_start, window_end (which close with the window).

Determinism: ROWS frames, row_number, ntile, lag/lead and first/last/nth_value order by (ts, id)
with a unique id; RANGE frames, rank, dense_rank, percent_rank and cume_dist may order by ts
alone (peers are treated alike). NULL order is always spelled out (Spark and DuckDB differ).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Dict, List, Sequence, Tuple

import duckdb
import pytest

from tests.support import oracles as o

SOURCE = "{{ source('raw', 'ev') }}"
PARTITIONS = ["", "k", "id % 3", "k, id % 2"]


@dataclass
class Call:
    sql: str  # the window function call with its OVER clause
    partition: str = ""  # PARTITION BY expressions ('' or 'k' for emit on_window_close)
    nulls_last: bool = False
    rows_ahead: int = 0  # emit on_window_close: ROWS n FOLLOWING frame end, LEAD n
    range_ahead: int = 0  # emit on_window_close: RANGE <interval> FOLLOWING frame end (micros)


# ---------------------------------------------------------------------------------------------
# random OVER specs


def _order(rng: random.Random, *, unique: bool, descending: bool) -> Tuple[str, bool]:
    direction = " desc" if descending else ""
    nulls_last = rng.random() < 0.5
    order = f"ts{direction} nulls {'last' if nulls_last else 'first'}"
    if unique:
        order += f", id{direction}"
    return order, nulls_last


def _rows_frame(rng: random.Random, eowc: bool) -> Tuple[str, int]:
    """A ROWS frame, and how many rows past the current one its end reaches."""
    starts = [(-math.inf, "unbounded preceding")] + [(-n, f"{n} preceding") for n in range(0, 4)]
    starts += [(0, "current row")] + [(n, f"{n} following") for n in range(1, 3)]
    ends = [(-n, f"{n} preceding") for n in range(1, 3)] + [(0, "current row")]
    ends += [(n, f"{n} following") for n in range(0, 4)]
    if not eowc:
        ends.append((math.inf, "unbounded following"))
    while True:
        (a, start), (b, end) = rng.choice(starts), rng.choice(ends)
        if a <= b and not ("following" in start and "following" not in end):
            return f"rows between {start} and {end}", int(b) if 0 < b < math.inf else 0


def _range_frame(rng: random.Random, eowc: bool) -> Tuple[str, int]:
    """A RANGE frame over ts with interval offsets (one unit for both ends, as Spark wants), and
    how far past the current time its end reaches (micros)."""
    unit, size = rng.choice([("seconds", o.SECOND), ("minutes", o.MINUTE), ("hours", o.HOUR)])
    top = {"seconds": 5400, "minutes": 120, "hours": 3}[unit]

    def offset() -> int:
        return rng.choice([0, 1, rng.randint(1, top)])

    starts = [(-math.inf, "unbounded preceding"), (0, "current row")]
    ends = [(0, "current row")] + ([] if eowc else [(math.inf, "unbounded following")])
    for _ in range(2):
        n, m = offset(), offset()
        starts += [(-n, f"interval {n} {unit} preceding"), (m, f"interval {m} {unit} following")]
        ends += [(-n, f"interval {n} {unit} preceding"), (m, f"interval {m} {unit} following")]
    while True:
        (a, start), (b, end) = rng.choice(starts), rng.choice(ends)
        if a <= b and not ("following" in start and "following" not in end):
            return f"range between {start} and {end}", int(b) * size if 0 < b < math.inf else 0


def _over(partition: str, order: str, frame: str = "") -> str:
    parts = [f"partition by {partition}" if partition else "", f"order by {order}" if order else "", frame]
    return "over (" + " ".join(p for p in parts if p) + ")"


def random_call(rng: random.Random, eowc: bool = False) -> Call:
    partition = rng.choice(["", "k"] if eowc else PARTITIONS)
    descending = (not eowc) and rng.random() < 0.25
    family = rng.choices(["aggregate", "ranking", "offset", "value"], weights=[5, 2, 2, 2])[0]
    if family == "aggregate":
        func = rng.choice(["sum(v)", "count(v)", "count(*)", "avg(v)", "min(v)", "max(v)", "max(ts)", "min(ts)"])
        shape = rng.choices(
            ["rows", "range", "peers", "default", "whole", "numeric"],
            weights=[4, 4, 1, 1, 0 if eowc else 1, 0 if eowc else 1],
        )[0]
        if shape == "rows":
            order, nulls_last = _order(rng, unique=True, descending=descending)
            frame, ahead = _rows_frame(rng, eowc)
            return Call(f"{func} {_over(partition, order, frame)}", partition, nulls_last, rows_ahead=ahead)
        if shape == "range":
            order, nulls_last = _order(rng, unique=False, descending=descending)
            frame, ahead = _range_frame(rng, eowc)
            return Call(f"{func} {_over(partition, order, frame)}", partition, nulls_last, range_ahead=ahead)
        if shape == "peers":  # RANGE over peers of a non-unique order: deterministic
            order, nulls_last = _order(rng, unique=False, descending=descending)
            start = rng.choice(["unbounded preceding", "current row"])
            end = rng.choice(["current row"] + ([] if eowc else ["unbounded following"]))
            return Call(f"{func} {_over(partition, order, f'range between {start} and {end}')}", partition, nulls_last)
        if shape == "default":  # ORDER BY, no frame: RANGE UNBOUNDED PRECEDING .. CURRENT ROW
            order, nulls_last = _order(rng, unique=False, descending=descending)
            return Call(f"{func} {_over(partition, order)}", partition, nulls_last)
        if shape == "whole":
            return Call(f"{func} {_over(partition, '')}", partition)
        n, m = rng.randint(0, 15), rng.randint(0, 15)
        nulls = rng.choice(["first", "last"])
        frame = rng.choice(
            [f"range between {n} preceding and {m} following", f"range between unbounded preceding and {m} preceding"]
        )
        return Call(f"{func} {_over(partition, f'v nulls {nulls}', frame)}", partition)
    if family == "ranking":
        choices = ["row_number()", "rank()", "dense_rank()"] + (
            [] if eowc else ["percent_rank()", "cume_dist()", "ntile(3)"]
        )
        func = rng.choice(choices)
        order, nulls_last = _order(rng, unique=func in ("row_number()", "ntile(3)"), descending=descending)
        return Call(f"{func} {_over(partition, order)}", partition, nulls_last)
    if family == "offset":
        name = rng.choice(["lag", "lead"])
        n = rng.choice([None, 1, 2, 3])
        args = "v" if n is None else f"v, {n}" + (f", {rng.randint(-9, -1)}" if rng.random() < 0.5 else "")
        order, nulls_last = _order(rng, unique=True, descending=descending)
        ahead = (n or 1) if name == "lead" else 0
        return Call(f"{name}({args}) {_over(partition, order)}", partition, nulls_last, rows_ahead=ahead)
    func = rng.choice(["first_value(v)", "last_value(v)", f"nth_value(v, {rng.randint(1, 3)})"])
    order, nulls_last = _order(rng, unique=True, descending=descending)
    if rng.random() < 0.7:
        frame, ahead = _rows_frame(rng, eowc)
    else:
        end = rng.choice(["current row"] + ([] if eowc else ["unbounded following"]))
        frame, ahead = f"range between unbounded preceding and {end}", 0
    return Call(f"{func} {_over(partition, order, frame)}", partition, nulls_last, rows_ahead=ahead)


# ---------------------------------------------------------------------------------------------
# running and comparing


def load(spark, schema: str, rows: List[Dict[str, Any]]) -> duckdb.DuckDBPyConnection:
    """The rows as table `ev` in Spark (schema.ev) and in a fresh DuckDB."""
    spark.sql(f"create database if not exists {schema}")
    spark.sql(f"drop table if exists {schema}.ev")
    spark.sql(f"create table {schema}.ev using parquet as {o.values_sql(rows)}")
    stored = spark.sql(f"select id, k, v, unix_micros(ts) from {schema}.ev").collect()
    assert sorted(tuple(r) for r in stored) == sorted((r["id"], r["k"], r["v"], r["ts"]) for r in rows)
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    con.execute("create table ev (id integer, k varchar, v integer, ts timestamp)")
    con.executemany(
        "insert into ev values (?, ?, ?, ?)",
        [(r["id"], r["k"], r["v"], None if r["ts"] is None else o.to_datetime(r["ts"])) for r in rows],
    )
    assert con.execute("select count(*) from ev where epoch_us(ts) is not null").fetchone()[0] == sum(
        r["ts"] is not None for r in rows
    )
    return con


def model_sql(calls: Sequence[Call], named: bool = False) -> str:
    """select id, <call i> as c<i> from the source; named: the first call's window moves to a
    WINDOW clause (`over w`)."""
    columns = [f"{c.sql} as c{i}" for i, c in enumerate(calls)]
    window = ""
    if named and calls:
        func, spec = calls[0].sql.split(" over ", 1)
        columns[0] = f"{func} over w as c0"
        window = f"\nwindow w as {spec}"
    return "select id,\n  " + ",\n  ".join(columns) + f"\nfrom {SOURCE}{window}"


def spark_result(spark, relation: str) -> Dict[int, tuple]:
    df = spark.table(relation)
    select = ", ".join(f"unix_micros({name})" if kind == "timestamp" else name for name, kind in df.dtypes)
    return {r[0]: tuple(r[1:]) for r in spark.sql(f"select {select} from {relation}").collect()}


def duckdb_result(con: duckdb.DuckDBPyConnection, sql: str) -> Dict[int, tuple]:
    out = {}
    for r in con.execute(sql.replace(SOURCE, "ev")).fetchall():
        out[r[0]] = tuple(o.micros(x) if hasattr(x, "hour") else x for x in r[1:])
    return out


def same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    return int(a) == int(b) if not isinstance(a, str) else a == b


def compare(model: str, calls: Sequence[Call], got: Dict[int, tuple], expected: Dict[int, tuple]) -> List[str]:
    failures = []
    if set(got) != set(expected):
        failures.append(
            f"{model}: row ids differ: missing {sorted(set(expected) - set(got))[:10]}, "
            f"unexpected {sorted(set(got) - set(expected))[:10]}"
        )
    for i, call in enumerate(calls):
        bad = [
            (rid, got[rid][i], expected[rid][i])
            for rid in sorted(set(got) & set(expected))
            if not same(got[rid][i], expected[rid][i])
        ]
        if bad:
            failures.append(f"{model}.c{i} `{call.sql}`: {len(bad)} rows differ, (id, spark, duckdb): {bad[:4]}")
    return failures


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_over_windows_match_duckdb(project, spark, seed):
    rng = random.Random(seed)
    rows = o.random_events(rng, 110)
    con = load(spark, project.schema, rows)
    project.write("models/sources.yml", o.SOURCES_YML)
    # one model holds many calls: dbt takes ~1 s a model, Spark computes them side by side
    models = {f"over_{m}": [random_call(rng) for _ in range(20)] for m in range(2)}
    named = {name: m == 1 for m, name in enumerate(models)}
    for name, calls in models.items():
        project.model(
            name, "{{ config(materialized='window_view', emit='on_update') }}\n" + model_sql(calls, named[name])
        )
    project.dbt("build")

    failures = []
    for name, calls in models.items():
        got = spark_result(spark, f"{project.schema}.{name}")
        expected = duckdb_result(con, model_sql(calls, named[name]))
        failures += compare(name, calls, got, expected)
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------------------------------------
# emit on window close


@pytest.mark.parametrize("seed", [21, 22])
def test_emit_on_window_close_matches_oracle(project, spark, seed):
    rng = random.Random(seed)
    # a dense stretch across the epoch, so the watermark cuts through it at a negative time
    rows = o.random_dense_events(rng, 90, start=-2 * o.HOUR - 17 * o.MINUTE, span=4 * o.HOUR)
    con = load(spark, project.schema, rows)
    project.write("models/sources.yml", o.SOURCES_YML)
    models = {}
    for m in range(7):
        delay = rng.choice([0, 1, 7, 30, 45, 90, 150]) * o.MINUTE
        calls = [random_call(rng, eowc=True) for _ in range(rng.choice([1, 1, 2, 3]))]
        named = rng.random() < 0.3
        models[f"eowc_{m}"] = (delay, calls, named)
        project.model(
            f"eowc_{m}",
            "{{ config(materialized='window_view', emit='on_window_close', "
            f"watermark={{'column': 'ts', 'delay': '{o.interval_text(delay, rng)}'}}) }}}}\n" + model_sql(calls, named),
        )
    project.dbt("build")

    failures = []
    for name, (delay, calls, named) in models.items():
        w = o.watermark((r["ts"] for r in rows), delay)
        closed = set(r["id"] for r in rows)
        for call in calls:
            keys = ["k"] if call.partition == "k" else []
            closed &= o.closed_rows(rows, "ts", w, keys, call.rows_ahead, call.range_ahead, call.nulls_last)
        full = duckdb_result(con, model_sql(calls, named))
        expected = {rid: values for rid, values in full.items() if rid in closed}
        got = spark_result(spark, f"{project.schema}.{name}")
        label = f"{name} (W = {o.to_datetime(w)}, delay {delay // o.MINUTE} min{', named window' if named else ''})"
        failures += compare(label, calls, got, expected)
    assert not failures, "\n".join(failures)


def test_emit_on_window_close_ties_follow_the_full_order(project, spark):
    """ROWS n FOLLOWING / LEAD n over ORDER BY ts, id: with ties in ts, the n-th following row
    is the one after in (ts, id) order. Rows 1 and 2 tie at 00:00 (stored id 2 first), row 3 is at
    00:10, W = 00:05: row 1's next row (2) is closed, row 2's next row (3) is not."""
    rows = [
        {"id": 2, "k": "a", "v": 20, "ts": 0},
        {"id": 1, "k": "a", "v": 10, "ts": 0},
        {"id": 3, "k": "a", "v": 30, "ts": 10 * o.MINUTE},
    ]
    con = load(spark, project.schema, rows)
    project.write("models/sources.yml", o.SOURCES_YML)
    calls = {
        "ties_rows": [Call("sum(v) over (order by ts, id rows between current row and 1 following)", rows_ahead=1)],
        "ties_lead": [Call("lead(v) over (order by ts, id)", rows_ahead=1)],
        # a second window whose sort (ts, id desc) also satisfies the plugin's `order by ts`
        "ties_two_orders": [
            Call("count(*) over (order by ts, id rows between current row and 1 following)", rows_ahead=1),
            Call("row_number() over (order by ts, id desc)"),
        ],
    }
    for name, model_calls in calls.items():
        project.model(
            name,
            "{{ config(materialized='window_view', emit='on_window_close', "
            "watermark={'column': 'ts', 'delay': '5 minutes'}) }}\n" + model_sql(model_calls),
        )
    project.dbt("build")
    failures = []
    for name, model_calls in calls.items():
        full = duckdb_result(con, model_sql(model_calls))
        expected = {rid: full[rid] for rid in (1,)}
        assert o.closed_rows(rows, "ts", 5 * o.MINUTE, [], rows_ahead=1) == {1}
        failures += compare(name, model_calls, spark_result(spark, f"{project.schema}.{name}"), expected)
    assert not failures, "\n".join(failures)


WINDOWED_ROWS = [1, 2, 5, 12, 14, 25]  # minutes: ids 1-3 in [00:00, 00:10), 4-5 in [00:10, 00:20), 6


def _run_windowed(project, spark, models: Dict[str, str]) -> List[str]:
    """Build emit='on_window_close' models over TUMBLE(10 minutes) of WINDOWED_ROWS with delay
    10 minutes (W = 00:15, only [00:00, 00:10) closed); every row of the closed window, and no
    other, is expected, with DuckDB's values over the oracle's windows."""
    rows = [{"id": i + 1, "k": "a", "v": 10 * (i + 1) % 7, "ts": m * o.MINUTE} for i, m in enumerate(WINDOWED_ROWS)]
    con = load(spark, project.schema, rows)
    windowed = [
        (r["id"], r["k"], r["v"], o.to_datetime(r["ts"]), o.to_datetime(s), o.to_datetime(e))
        for r in rows
        for s, e in o.tumble_windows(r["ts"], 10 * o.MINUTE)
    ]
    con.execute(
        "create table windowed (id integer, k varchar, v integer, ts timestamp, window_start timestamp, window_end timestamp)"
    )
    con.executemany("insert into windowed values (?, ?, ?, ?, ?, ?)", windowed)
    project.write("models/sources.yml", o.SOURCES_YML)
    tvf = "{{ window_views.tumble(source('raw', 'ev'), 'ts', '10 minutes') }}"
    for name, sql in models.items():
        project.model(
            name,
            "{{ config(materialized='window_view', emit='on_window_close', "
            "watermark={'column': 'ts', 'delay': '10 minutes'}) }}\n" + sql.format(tvf=tvf),
        )
    failures = []
    try:
        project.dbt("build")
    except AssertionError as exc:  # check the models that did build, too
        failures.append(str(exc))
    built = {r[1] for r in spark.sql(f"show tables in {project.schema}").collect()}
    w = o.watermark((r["ts"] for r in rows), 10 * o.MINUTE)
    closed = {rid for rid, _, _, _, _, end in windowed if o.micros(end) <= w}
    assert closed == {1, 2, 3}
    for name, sql in models.items():
        if name in built:
            full = duckdb_result(con, sql.format(tvf="windowed"))
            expected = {rid: values for rid, values in full.items() if rid in closed}
            failures += compare(name, [Call(sql)], spark_result(spark, f"{project.schema}.{name}"), expected)
    return failures


def test_emit_on_window_close_partitioned_by_window(project, spark):
    """Over windows partitioned by window_start, window_end of a TVF close with the window: every
    row of a window with window_end <= W is final (its partition is complete), and no row of an
    open window may be emitted, whether or not window_end is selected."""
    failures = _run_windowed(
        project,
        spark,
        {
            # ROWS 1 FOLLOWING: the last row of the closed window has no following row, yet is final
            "by_window_rows_following": "select id, sum(v) over (partition by window_start, window_end "
            "order by ts, id rows between current row and 1 following) as c0, window_end from {tvf}",
            # top-N per window without window_end in the output: the open windows' ranks are not final
            "by_window_top_n": "select id, rank() over (partition by window_start, window_end "
            "order by v desc) as c0 from {tvf}",
            # the same with window_end selected (passes: the window_end filter applies)
            "by_window_top_n_with_end": "select id, rank() over (partition by window_start, window_end "
            "order by v desc) as c0, window_end from {tvf}",
        },
    )
    assert not failures, "\n".join(failures)


def test_emit_on_window_close_partitioned_by_window_time_descending(project, spark):
    """ORDER BY ts DESC inside a closed window reaches no row that has not arrived (the window
    is complete), so it need not be rejected."""
    failures = _run_windowed(
        project,
        spark,
        {
            "by_window_ts_desc": "select id, row_number() over (partition by window_start, window_end "
            "order by ts desc, id desc) as c0, window_end from {tvf}",
        },
    )
    assert not failures, "\n".join(failures)
