"""Differential tests of the window TVFs: random data and random window specs through the
macros on the real local Spark, against the pure-Python oracles in oracles.py.

Each test builds ONE dbt project holding many models (one `dbt build`) to keep the run short.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import pytest

import oracles as o

SOURCES_YML = """
version: 2
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: ev
"""
INPUT_COLUMNS = ["id", "k", "v", "ts"]
WINDOW_COLUMNS = ["window_start", "window_end", "window_time"]


@dataclass
class Spec:
    kind: str  # tumble | hop | cumulate | session
    args: Dict[str, int]  # micros: size / slide / step / gap / offset
    texts: Dict[str, str]  # the same as interval strings
    partition_by: Any = None  # session: None, 'k' or ['k']

    def call(self) -> str:
        src = "source('raw', 'ev')"
        t = self.texts
        off = f", offset='{t['offset']}'" if "offset" in t else ""
        if self.kind == "tumble":
            return f"window_views.tumble({src}, 'ts', '{t['size']}'{off})"
        if self.kind == "hop":
            return f"window_views.hop({src}, 'ts', '{t['slide']}', '{t['size']}'{off})"
        if self.kind == "cumulate":
            return f"window_views.cumulate({src}, 'ts', '{t['step']}', '{t['size']}'{off})"
        part = "" if self.partition_by is None else f", partition_by={self.partition_by!r}"
        return f"window_views.session({src}, 'ts', '{t['gap']}'{part})"

    def oracle(self, rows: List[Dict[str, Any]]) -> List[Tuple[Dict[str, Any], o.Window]]:
        a = self.args
        offset = a.get("offset", 0)
        if self.kind == "tumble":
            return o.explode(rows, lambda r: o.tumble_windows(r["ts"], a["size"], offset))
        if self.kind == "hop":
            return o.explode(rows, lambda r: o.hop_windows(r["ts"], a["slide"], a["size"], offset))
        if self.kind == "cumulate":
            return o.explode(rows, lambda r: o.cumulate_windows(r["ts"], a["step"], a["size"], offset))
        keys = () if self.partition_by is None else ("k",)
        sessions = o.session_windows(rows, "ts", a["gap"], keys)
        return [(r, sessions[r["id"]]) for r in rows if r["id"] in sessions]


def _duration(rng: random.Random) -> int:
    """A random positive duration of whole seconds: seconds, minutes or hours."""
    unit = rng.choice([o.SECOND, o.MINUTE, o.MINUTE, o.HOUR])
    top = {o.SECOND: 300, o.MINUTE: 150, o.HOUR: 30}[unit]
    return rng.randint(1, top) * unit


def random_spec(rng: random.Random, kind: str) -> Spec:
    args: Dict[str, int] = {}
    if kind == "tumble":
        args["size"] = _duration(rng)
        period = args["size"]
    elif kind == "hop":
        slide = _duration(rng)
        shape = rng.random()
        if shape < 0.35:  # size a multiple of slide
            size = slide * rng.randint(1, 8)
        elif shape < 0.75:  # not a multiple (at most ~12 windows per row)
            size = rng.randint(slide // o.SECOND + 1, 12 * slide // o.SECOND) * o.SECOND
        else:  # smaller than the slide: gaps between windows
            size = rng.randint(1, max(1, slide // o.SECOND - 1)) * o.SECOND
        args.update(slide=slide, size=size)
        period = slide
    elif kind == "cumulate":
        step = _duration(rng)
        args.update(step=step, size=step * rng.randint(1, 12))
        period = args["size"]
    else:
        args["gap"] = rng.choice([o.SECOND, o.MINUTE, o.HOUR])*rng.randint(1, 40)
        period = None
    if period is not None and rng.random() < 0.7:
        # offsets of either sign, also beyond one period, whole seconds
        span = 2 * period // o.SECOND
        args["offset"] = rng.randint(-span, span) * o.SECOND
    texts = {name: o.interval_text(value, rng) for name, value in args.items()}
    if "offset" in args and args["offset"] == 0:
        texts["offset"] = rng.choice(["0 seconds", "-0 minutes", "0 hour"])
    partition_by = rng.choice([None, "k", ["k"]]) if kind == "session" else None
    return Spec(kind, args, texts, partition_by)


def load_events(spark, schema: str, rows: List[Dict[str, Any]]) -> None:
    spark.sql(f"create database if not exists {schema}")
    spark.sql(f"drop table if exists {schema}.ev")
    spark.sql(f"create table {schema}.ev using parquet as {o.values_sql(rows)}")
    stored = spark.sql(f"select id, k, v, unix_micros(ts) from {schema}.ev").collect()
    assert sorted(tuple(r) for r in stored) == sorted(
        (r["id"], r["k"], r["v"], r["ts"]) for r in rows
    ), "the input table does not hold the generated rows exactly"


def _micros_select(columns: List[str]) -> str:
    ts = set(WINDOW_COLUMNS) | {"ts"}
    return ", ".join(f"unix_micros({c})" if c in ts else c for c in columns)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_window_tvfs_match_oracle(project, spark, seed):
    rng = random.Random(seed)
    rows = o.random_events(rng, 140)
    load_events(spark, project.schema, rows)
    project.write("models/sources.yml", SOURCES_YML)

    kinds = ["tumble"] * 6 + ["hop"] * 9 + ["cumulate"] * 6 + ["session"] * 5
    specs = [random_spec(rng, kind) for kind in kinds]
    for i, spec in enumerate(specs):
        project.model(
            f"x{i:02d}",
            f"""
            {{{{ config(materialized='window_view') }}}}
            select * from {{{{ {spec.call()} }}}}
            """,
        )
        project.model(
            f"a{i:02d}",
            f"""
            {{{{ config(materialized='window_view') }}}}
            select k, window_start, window_end,
              count(*) as n, count(v) as n_v, sum(v) as sum_v, min(v) as min_v, max(v) as max_v
            from {{{{ {spec.call()} }}}}
            group by k, window_start, window_end
            """,
        )
    project.dbt("build")

    failures = []
    for i, spec in enumerate(specs):
        label = f"x{i:02d}/a{i:02d} {spec.kind} {spec.texts} partition_by={spec.partition_by!r}"
        columns = project.columns(f"x{i:02d}")
        if columns != INPUT_COLUMNS + WINDOW_COLUMNS:
            failures.append(f"{label}: columns {columns}")
            continue
        got_rows = spark.sql(
            f"select {_micros_select(columns)} from {project.schema}.x{i:02d}"
        ).collect()
        got = Counter(tuple(r) for r in got_rows)
        expected = Counter(
            (r["id"], r["k"], r["v"], r["ts"], start, end, end - 1) for r, (start, end) in spec.oracle(rows)
        )
        if got != expected:
            missing = sorted((expected - got).elements(), key=o.sort_key)[:5]
            extra = sorted((got - expected).elements(), key=o.sort_key)[:5]
            failures.append(f"{label}: exploded rows differ; missing {missing}; unexpected {extra}")

        got_aggs = sorted(
            (
                tuple(r)
                for r in spark.sql(
                    f"select k, unix_micros(window_start), unix_micros(window_end), n, n_v, sum_v, min_v, max_v "
                    f"from {project.schema}.a{i:02d}"
                ).collect()
            ),
            key=o.sort_key,
        )
        expected_aggs = o.aggregate(spec.oracle(rows), "k", "v")
        if got_aggs != expected_aggs:
            missing = [r for r in expected_aggs if r not in got_aggs][:5]
            extra = [r for r in got_aggs if r not in expected_aggs][:5]
            failures.append(f"{label}: aggregates differ; missing {missing}; unexpected {extra}")
    assert not failures, "\n".join(failures)
