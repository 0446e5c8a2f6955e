"""Window forms Spark lacks (GROUPS frames, EXCLUDE, DISTINCT window aggregates, nth_value FROM
LAST): the parse keeps them in the tree, and query/frames.py rewrites them into Spark SQL with
the same rows (run here on DuckDB, which has them all, against the original SQL)."""

from __future__ import annotations

import pytest
from sqlglot import exp

from dbt.adapters.window_views.query import analysis
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
