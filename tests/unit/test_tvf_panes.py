"""Batch window aggregations computed from panes (tvf_panes.py): which SELECTs are rewritten (a
HOP or CUMULATE TVF of a table, GROUP BY its window, aggregates whose pane form is the same value
of the same type), and that everything else runs as written."""

from __future__ import annotations

import json
from typing import Dict, Optional

import pytest
from sqlglot import exp

from dbt.adapters.window_views.errors import AnalysisError
from dbt.adapters.window_views.kinds.partials import tvf_panes
from dbt.adapters.window_views.query import analysis, sqlexpr
from dbt.adapters.window_views.query import tvf as markers

TYPES = {"auction": "bigint", "price": "int", "amount": "decimal(10,2)", "rate": "double", "datetime": "timestamp"}
SPECS = {
    "hop": {"kind": "hop", "slide_us": 2_000_000, "size_us": 10_000_000},
    "cumulate": {"kind": "cumulate", "step_us": 2_000_000, "size_us": 10_000_000},
    "tumble": {"kind": "tumble", "size_us": 10_000_000},
    "session": {"kind": "session", "gap_us": 10_000_000, "partition_by": ["auction"]},
}


def tvf(kind: str = "hop", source: str = "s.bid") -> str:
    """A window TVF subquery as the macros render it (its windows' arithmetic elided)."""
    spec = {**SPECS[kind], "time_col": "dateTime", "offset_us": 0, "text": {}}
    if kind == "session":
        spec.pop("offset_us")
    return f"""(
  /* window_views:tvf:v1 {json.dumps(spec)} */
  select * from {source} lateral view inline(array(named_struct('window_start', timestamp_micros(0),
    'window_end', timestamp_micros(1), 'window_time', timestamp_micros(0)))) _wv_windows as window_start, window_end, window_time
  where `dateTime` is not null
)"""


def aggregate(measures: str = "count(*) as num", kind: str = "hop", extra: str = "", source: str = "s.bid") -> str:
    return (
        f"select auction, {measures}, window_start as starttime, window_end as endtime from {tvf(kind, source)} "
        f"{extra} group by auction, window_start, window_end"
    )


def paned(sql: str, types: Optional[Dict[str, str]] = TYPES) -> str:
    """The SQL a batch statement runs: from panes where tvf_panes rewrites it, else as written."""
    try:
        query = analysis.parse(sql) if markers.MARKER.search(sql) else None
    except AnalysisError:  # sqlglot cannot parse it: it runs as written
        query = None
    tree = None if query is None else tvf_panes.paned(query, lambda r: types if r == ("s", "bid") else None)
    return sql if tree is None else sqlexpr.to_sql(tree)


def test_q5s_two_hop_aggregates_are_computed_from_panes_with_the_models_names():
    q5 = f"""select A.auction, A.num from ({aggregate()}) as A join (
      select max(C.num) as maxn, C.starttime, C.endtime from ({aggregate()}) as C group by C.starttime, C.endtime
    ) as M on A.starttime = M.starttime and A.endtime = M.endtime and A.num >= M.maxn"""
    out = paned(q5)
    assert "lateral view inline" not in out.lower() and out.count("LEAD(_wv_p)") == 2
    tree = analysis.parse(out)
    inner = [s for s in tree.find_all(exp.Select) if s.find(exp.Table, bfs=False)]
    names = [p.alias_or_name for s in inner for p in s.expressions if p.alias_or_name == "starttime"]
    assert len(names) >= 2  # each side still selects its bounds under the model's names
    assert "A.num >= M.maxn" in out  # the join as written


@pytest.mark.parametrize(
    "measures",
    ["count(*) as num", "count(price) as n, min(amount) as lo, max(amount) as hi", "sum(price) as s, avg(rate) as a"],
)
@pytest.mark.parametrize("kind", ["hop", "cumulate"])
def test_exact_measures_are_rewritten(kind, measures):
    out = paned(aggregate(measures, kind))
    assert "lateral view inline" not in out.lower() and "_wv_panes" in out


@pytest.mark.parametrize(
    "sql",
    [
        aggregate(kind="tumble"),  # a row in one window each: nothing to gain
        aggregate(kind="session"),
        aggregate("sum(amount) as s"),  # a decimal's sum of sums is of a wider type
        aggregate("avg(amount) as a"),
        aggregate("sum(price * 2) as s"),  # an expression's type is not looked up
        aggregate("approx_count_distinct(price) as d"),  # merged sketches estimate otherwise
        aggregate("count(distinct price) as d"),
        aggregate(extra="where price > 1"),
        aggregate(source="(select auction, price from s.bid) as b"),  # a projection: types not looked up
        aggregate(source="(select * from s.bid join s.person on true) as b"),
        aggregate().replace("group by auction, window_start, window_end", "group by auction, window_start"),
    ],
    ids=[
        "tumble",
        "session",
        "decimal-sum",
        "decimal-avg",
        "expression",
        "approx",
        "distinct",
        "where",
        "projected-read",
        "joined-read",
        "no-window-end",
    ],
)
def test_everything_else_runs_as_written(sql):
    assert paned(sql) == sql


def test_a_table_whose_types_are_unknown_runs_as_written():
    assert paned(aggregate(), types=None) == aggregate()
    unparsed = aggregate() + " having having"  # sqlglot cannot parse it: Spark names the error
    assert paned(unparsed) == unparsed


@pytest.mark.parametrize("kind", ["hop", "cumulate"])
def test_a_filtered_read_as_an_incremental_batch_reads_its_range_is_rewritten(kind):
    source = (
        "(select * from s.bid where `dateTime` >= '2026-01-01 00:00:00' and `dateTime` < '2026-01-02 00:00:00') as bid"
    )
    out = paned(aggregate("count(*) as num, sum(price) as s", kind, source=source))
    assert "lateral view inline" not in out.lower() and "_wv_panes" in out
    assert "`dateTime` >= '2026-01-01 00:00:00'" in out  # the panes read the batch's range only
    assert paned(aggregate("sum(amount) as s", kind, source=source)).count("lateral view inline") == 1
