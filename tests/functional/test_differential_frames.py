"""Differential test of the window forms Spark lacks (query/frames.py): GROUPS frames, EXCLUDE,
DISTINCT window aggregates, FILTER, IGNORE NULLS and nth_value FROM FIRST / LAST, written in window_view
models as standard SQL, built by dbt on the real local Spark and compared with DuckDB running
the same SQL on the same rows (random data with ties and NULLs in the order column, NULL values
and keys, random frames). DuckDB has no FROM LAST: its rows are DuckDB's list of the frame's
values read from the end. One dbt project; the refusals share it.

Determinism as in test_differential_over.py: ROWS frames and value functions order by (ts, id);
GROUPS and RANGE frames of aggregates may order by ts alone (peers are treated alike)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import List, Tuple

import pytest

from tests.functional.test_differential_over import SOURCE, Call, compare, duckdb_result, load, spark_result
from tests.support import oracles as o

PARTITIONS = ["", "k", "id % 3"]
AGGREGATES = ["sum(v)", "count(v)", "count(*)", "avg(v)", "min(v)", "max(v)"]


@dataclass
class FrameCall:
    sql: str  # the call as the model writes it
    reference: str  # the same call as DuckDB computes it


def _over(partition: str, order: str, frame: str) -> str:
    parts = [f"partition by {partition}" if partition else "", f"order by {order}", frame]
    return "over (" + " ".join(p for p in parts if p) + ")"


def _order(rng: random.Random, unique: bool) -> str:
    direction = " desc" if rng.random() < 0.25 else ""
    order = f"ts{direction} nulls {rng.choice(['first', 'last'])}"
    return order + (f", id{direction}" if unique else "")


def _counted(rng: random.Random, low: int, high: int) -> List[Tuple[int, str]]:
    """Bounds of a ROWS / GROUPS frame as (signed offset, text)."""
    bounds = [(-1000, "unbounded preceding"), (0, "current row"), (1000, "unbounded following")]
    bounds += [(-n, f"{n} preceding") for n in range(low, high)] + [(n, f"{n} following") for n in range(low, high)]
    return bounds


def _frame(rng: random.Random, kind: str) -> str:
    """A valid random frame of `kind` (ROWS, GROUPS: counted bounds; RANGE: intervals on ts)."""
    if kind == "range":
        unit = rng.choice(["minutes", "hours"])
        bounds = [(-1000, "unbounded preceding"), (0, "current row"), (1000, "unbounded following")]
        for _ in range(2):
            n = rng.choice([0, 1, rng.randint(1, 90)])
            bounds += [(-n, f"interval {n} {unit} preceding"), (n, f"interval {n} {unit} following")]
    else:
        bounds = _counted(rng, 0, 4)
    while True:
        (a, start), (b, end) = rng.choice(bounds), rng.choice(bounds)
        # DuckDB refuses a frame from a following row to a preceding or current one, and the reverse
        backwards = ("following" in start and "following" not in end) or (start == "current row" and "preceding" in end)
        if a <= b and a != 1000 and b != -1000 and not backwards:
            return f"{kind} between {start} and {end}"


def random_call(rng: random.Random) -> FrameCall:
    partition = rng.choice(PARTITIONS)
    family = rng.choices(["groups", "exclude", "distinct", "filter", "nth", "ignore"], weights=[3, 5, 2, 1, 2, 1])[0]
    if family in ("groups", "exclude"):
        kind = "groups" if family == "groups" else rng.choice(["groups", "range", "rows"])
        func = rng.choice(AGGREGATES + (["first_value(v)", "last_value(v)"] if family == "groups" else []))
        value = func.startswith(("first", "last"))
        order = _order(rng, unique=value or kind == "rows")
        if kind == "range":
            order = order.split(",")[0]  # RANGE with interval offsets orders by one key
        frame = _frame(rng, kind)
        if family == "exclude":
            choices = ["current row", "no others"] + ([] if kind == "rows" else ["group", "ties"])
            frame += f" exclude {rng.choice(choices)}"
        call = f"{func} {_over(partition, order, frame)}"
        return FrameCall(call, call)
    if family == "distinct":
        kind = rng.choice(["rows", "range", "groups"])
        order = _order(rng, unique=kind == "rows")
        order = order.split(",")[0] if kind == "range" else order
        func = rng.choice(["count(distinct v)", "count(distinct v % 4)", "min(distinct v)", "max(distinct v)"])
        frame = _frame(rng, kind)
        if kind != "groups" and rng.random() < 0.5:  # over the set of values: not over a frame of peer ranks
            func = rng.choice(["sum(distinct v % 7)", "avg(distinct v)", "sum(distinct cast(v as decimal(9, 2)))"])
        call = f"{func} {_over(partition, order, frame)}"
        return FrameCall(call, call)
    if family == "filter":
        func = rng.choice(AGGREGATES + ["count(distinct v)"])
        excluded = "" if "distinct" in func else rng.choice(["", " exclude current row"])
        frame = _frame(rng, rng.choice(["rows", "groups"])) + excluded
        call = f"{func} filter (where v % 3 = 1) {_over(partition, _order(rng, unique=True), frame)}"
        return FrameCall(call, call)
    if family == "ignore":  # Spark's own IGNORE NULLS, passed through
        func, args = rng.choice([("lag", ", 2"), ("lead", ""), ("first_value", ""), ("last_value", "")])
        frame = _frame(rng, "rows") if "value" in func else ""
        over = _over(partition, _order(rng, unique=True), frame)
        return FrameCall(f"{func}(v{args}) ignore nulls {over}", f"{func}(v{args} ignore nulls) {over}")
    n = rng.randint(1, 3)
    nulls = rng.choice(["", " ignore nulls"])
    over = _over(partition, _order(rng, unique=True), rng.choice([_frame(rng, "rows"), ""]))
    if rng.random() < 0.25:
        call = f"nth_value(v, {n}) from first{nulls} {over}"
        return FrameCall(call, f"nth_value(v, {n}{nulls}) {over}")  # DuckDB's IGNORE NULLS is an argument
    values = "list_filter(array_agg(v) {}, lambda x: x is not null)" if nulls else "array_agg(v) {}"
    return FrameCall(f"nth_value(v, {n}) from last{nulls} {over}", f"({values.format(over)})[-{n}]")


def models_sql(calls: List[FrameCall], reference: bool) -> str:
    columns = [f"{c.reference if reference else c.sql} as c{i}" for i, c in enumerate(calls)]
    return "select id,\n  " + ",\n  ".join(columns) + f"\nfrom {SOURCE}"


# a star keeps the model's columns: the helper columns the rewrite adds under it are hidden
STARRED = {
    "frames_star": f"select *, sum(v) over (order by ts nulls first groups between 1 preceding and 1 following) as s "
    f"from {SOURCE}",
    "frames_qualified_star": f"select e.*, sum(distinct v) over (partition by k) as s from {SOURCE} e where e.v > 0",
}

REFUSED = {
    # execution='streaming': compile-time refusal, nothing written
    "frames_streaming": (
        "{{ config(materialized='window_view', execution='streaming', "
        "watermark={'column': 'ts', 'delay': '1 minute'}) }}\n"
        "select id, sum(v) over (order by ts groups between 1 preceding and current row) as s from "
        "{{ source('raw', 'ev') }}",
        "a stream computes over windows from the rows it keeps",
    ),
    "frames_batches": (
        "{{ config(materialized='window_view', event_time='ts', batch_size='day', begin='2020-01-01') }}\n"
        "select id, ts, nth_value(v, 2) from last over (order by ts, id) as n from {{ source('raw', 'ev') }}",
        "with batch_size each batch reads its input only as far as its frames reach",
    ),
    "frames_sum_distinct": (
        "{{ config(materialized='window_view') }}\n"
        "select id, sum(distinct v) over (order by ts groups between 1 preceding and current row) as s from "
        "{{ source('raw', 'ev') }}",
        "Spark computes no DISTINCT window aggregate, and the plugin computes one of a single value over a ROWS or "
        "RANGE frame",
    ),
}


@pytest.mark.parametrize("seed", [31])
def test_frames_spark_lacks_match_duckdb(project, spark, seed):
    rng = random.Random(seed)
    rows = o.random_events(rng, 110)
    con = load(spark, project.schema, rows)
    project.write("models/sources.yml", o.SOURCES_YML)
    models = {f"frames_{m}": [random_call(rng) for _ in range(24)] for m in range(2)}
    for name, calls in models.items():
        project.model(name, "{{ config(materialized='window_view') }}\n" + models_sql(calls, reference=False))
    for name, sql in STARRED.items():
        project.model(name, "{{ config(materialized='window_view') }}\n" + sql)
    for name, (sql, _) in REFUSED.items():
        project.model(name, sql)
    project.dbt("build", "-s", *models, *STARRED)

    failures = []
    for name, calls in models.items():
        got = spark_result(spark, f"{project.schema}.{name}")
        expected = duckdb_result(con, models_sql(calls, reference=True))
        failures += compare(name, [Call(c.sql) for c in calls], got, expected)
    for name, sql in STARRED.items():
        assert [c for c, _ in spark.table(f"{project.schema}.{name}").dtypes] == ["id", "k", "v", "ts", "s"]
        got, expected = spark_result(spark, f"{project.schema}.{name}"), duckdb_result(con, sql)
        failures += compare(name, [Call(c) for c in ("k", "v", "ts", "s")], got, expected)
    assert not failures, "\n".join(failures)

    for name, (_, message) in REFUSED.items():
        result = project.dbt("compile", "-s", name, ok=False)
        text = str(result.exception) if result.exception else " ".join(str(r.message) for r in result.result or [])
        assert message in text and "_wv_" not in text and "Traceback" not in text, text
