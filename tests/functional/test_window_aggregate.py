"""window_views.window_aggregate returns exactly the rows of the TVF + GROUP BY form, for random
window specs (offsets, slides that do not divide the size, slide = size), NULL keys and
measures, and measures that fall back to row expansion."""

import random
from datetime import datetime, timedelta

import pytest

from tests.support.dbt_projects import errors

MEASURES = {
    "total": "sum(v)",
    "n": "count(*)",
    "n_v": "count(v)",
    "lo": "min(v)",
    "hi": "max(v)",
    "mean": "avg(v)",
    "ratio": "sum(v) / count(*)",
    "spread": "max(v) - min(w)",
    # decimal and double sums: not exact as running totals, summed over a sliding frame; a sum of
    # an expression also keeps the `_tvf` models as written (tvf_panes.py computes from panes only
    # what it computes exactly), so the plans are compared with the TVF form itself
    "half": "sum(v * 0.5)",
    "third": "avg(cast(v as double) / 3)",
}
FALLBACK_MEASURES = {"total": "sum(v)", "distinct_v": "count(distinct v)", "sd": "stddev_pop(v)"}
UNITS = [("second", 1), ("minute", 60), ("hour", 3600)]


def interval(seconds: int) -> str:
    for unit, length in reversed(UNITS):
        if seconds % length == 0:
            return f"{seconds // length} {unit}s"
    raise AssertionError(seconds)


def random_events(rng: random.Random, n: int) -> str:
    base = datetime(1969, 12, 31, 22, 0, 0)
    lines = ["id,k,ts,v,w"]
    for i in range(n):
        ts = "" if rng.random() < 0.04 else (base + timedelta(seconds=rng.randrange(0, 4 * 3600))).isoformat(sep=" ")
        k = "" if rng.random() < 0.1 else rng.choice("abc")
        v = "" if rng.random() < 0.15 else str(rng.randint(-50, 50))
        w = str(rng.randint(0, 9))
        lines.append(f"{i},{k},{ts},{v},{w}")
    # a burst of ties and a long silence so some windows have empty last panes
    lines += [f"{n + j},a,1970-01-01 03:00:00,{j},1" for j in range(5)]
    return "\n".join(lines) + "\n"


def random_window(rng: random.Random) -> dict:
    kind = rng.choice(["hop", "hop", "cumulate", "tumble"])
    if kind == "cumulate":
        step = rng.choice([60, 120, 300, 900])
        window = {
            "kind": kind,
            "time_col": "ts",
            "step": interval(step),
            "size": interval(step * rng.choice([1, 3, 4, 12])),
        }
    elif kind == "hop":
        slide = rng.choice([60, 120, 300, 420, 600, 3600])
        # a slide larger than the size is refused (test_bad_arguments_are_compile_errors)
        size = rng.choice([s for s in (slide, slide * 2, slide * 6, slide * 60, 900, 1800, 3600, 5400) if s >= slide])
        window = {"kind": kind, "time_col": "ts", "slide": interval(slide), "size": interval(size)}
    else:
        window = {"kind": kind, "time_col": "ts", "size": interval(rng.choice([60, 600, 3600]))}
    if rng.random() < 0.5:
        window["offset"] = (
            interval(rng.randrange(1, 3600)) if rng.random() < 0.5 else "-" + interval(rng.randrange(1, 3600))
        )
    return window


def jinja_dict(d: dict) -> str:
    return "{" + ", ".join(f"'{k}': '{v}'" for k, v in d.items()) + "}"


def models_for(project, name: str, window: dict, measures: dict, group_by: list) -> None:
    project.model(
        f"{name}_panes",
        f"{{{{ config(materialized='window_view') }}}}\n"
        f"select * from {{{{ window_views.window_aggregate(ref('events'), {jinja_dict(window)}, {jinja_dict(measures)}, {group_by}) }}}}",
    )
    project.model(
        f"{name}_tvf",
        f"{{{{ config(materialized='window_view') }}}}\n"
        f"select * from {{{{ window_views._window_aggregate_tvf(ref('events'), {jinja_dict(window)}, {jinja_dict(measures)}, {group_by}) }}}}",
    )


def assert_same_rows(project, name: str, measures: dict, context: str) -> None:
    cols = ", ".join(
        ["*"]
        if not measures
        else [c for c in project.columns(f"{name}_tvf") if c not in measures]
        + [f"round({m}, 6) as {m}" for m in measures]
    )
    a, b = f"{project.schema}.{name}_panes", f"{project.schema}.{name}_tvf"
    only_a = project.spark.sql(f"select {cols} from {a} except all select {cols} from {b}").collect()
    only_b = project.spark.sql(f"select {cols} from {b} except all select {cols} from {a}").collect()
    assert not only_a and not only_b, (
        f"{context}\nonly in window_aggregate: {only_a[:5]}\nonly in TVF form: {only_b[:5]}"
    )
    assert project.spark.table(a).count() > 0, context


@pytest.mark.parametrize("seed", [1, 2])
def test_equals_tvf_group_by_on_random_specs(project, seed):
    rng = random.Random(seed)
    project.seed("events", random_events(rng, 400))
    project.write(
        "seeds/events.yml",
        "seeds:\n  - name: events\n    config:\n      column_types: {ts: timestamp, v: int, w: int, k: string}\n",
    )
    cases = {}
    for i in range(10):
        window = random_window(rng)
        group_by = rng.choice([[], ["k"], ["k", "w"]])
        cases[f"case_{i}"] = (window, group_by)
        models_for(project, f"case_{i}", window, MEASURES, group_by)
    project.dbt("build")
    for name, (window, group_by) in cases.items():
        assert_same_rows(project, name, MEASURES, f"{name}: window={window} group_by={group_by}")


def test_fallback_and_approximate_distinct(project):
    rng = random.Random(3)
    project.seed("events", random_events(rng, 300))
    project.write(
        "seeds/events.yml",
        "seeds:\n  - name: events\n    config:\n      column_types: {ts: timestamp, v: int, w: int, k: string}\n",
    )
    hop = {"kind": "hop", "time_col": "ts", "slide": "5 minutes", "size": "30 minutes", "offset": "-2 minutes"}
    models_for(project, "fallback", hop, FALLBACK_MEASURES, ["k"])
    project.model(
        "approx",
        "{{ config(materialized='window_view') }}\n"
        f"select * from {{{{ window_views.window_aggregate(ref('events'), {jinja_dict(hop)}, {{'d': 'approx_count_distinct(w)'}}, ['k']) }}}}",
    )
    project.model(
        "exact",
        "{{ config(materialized='window_view') }}\n"
        f"select * from {{{{ window_views._window_aggregate_tvf(ref('events'), {jinja_dict(hop)}, {{'d': 'count(distinct w)'}}, ['k']) }}}}",
    )
    project.dbt("build", "--debug")
    assert_same_rows(project, "fallback", FALLBACK_MEASURES, "fallback")
    log = (project.root / "logs" / "dbt.log").read_text()
    assert (
        "window_aggregate falls back to row expansion: measure 'distinct_v' = COUNT(DISTINCT v): COUNT(DISTINCT v) does not decompose into panes"
        in log
    )
    # HLL sketches over panes: at these cardinalities (<= 10 distinct) the estimate is exact
    approx = project.rows("approx", "k, window_start")
    exact = project.rows("exact", "k, window_start")
    assert [(r[0], r[1], r[4]) for r in approx] == [(r[0], r[1], r[4]) for r in exact]


def test_pane_plan_does_not_expand_rows(project, spark):
    project.seed("events", "id,k,ts,v,w\n1,a,2024-01-01 00:00:00,1,1\n")
    project.model(
        "hop",
        "select * from {{ window_views.window_aggregate(ref('events'), "
        "{'kind': 'hop', 'time_col': 'ts', 'slide': '1 minute', 'size': '1 hour'}, {'n': 'count(*)'}, ['k']) }}",
    )
    result = project.dbt("compile", "--select", "hop")
    sql = result.result.results[0].node.compiled_code
    project.dbt("seed")
    tree = spark.sql(f"explain formatted {sql}").first()[0].split("\n\n")[0]
    assert "Expand" not in tree
    # the tree prints consumers first: the only generator runs on the aggregated panes
    assert tree.count("Generate") == 1
    assert tree.index("Generate") < tree.index("HashAggregate")


@pytest.mark.parametrize("kind, sorts", [("hop", 2), ("cumulate", 1)])
def test_pane_plan_shape(project, spark, kind, sorts):
    """The costs the pane plans are built to avoid: counts and integral sums over a HOP need no
    sliding frame (running totals), a CUMULATE sorts its panes once."""
    project.seed("events", "id,k,ts,v,w\n1,a,2024-01-01 00:00:00,1,1\n")
    unit = "slide" if kind == "hop" else "step"
    project.model(
        "shape",
        "select * from {{ window_views.window_aggregate(ref('events'), "
        f"{{'kind': '{kind}', 'time_col': 'ts', '{unit}': '1 minute', 'size': '1 hour'}}, "
        "{'n': 'count(*)', 'total': 'sum(v)', 'mean': 'avg(v)'}, ['k']) }}",
    )
    sql = project.dbt("compile", "--select", "shape").result.results[0].node.compiled_code
    project.dbt("seed")
    plan = spark.sql(f"explain formatted {sql}").first()[0]
    tree = plan.split("\n\n")[0]
    assert tree.count("Sort") == sorts
    assert tree.count("Exchange") == 1
    assert "RangeFrame, -" not in plan


def test_a_window_aggregate_window_view_records_its_window(project):
    project.seed("events", "id,k,ts,v,w\n1,a,2024-01-01 00:00:00,1,1\n")
    project.model(
        "sliding",
        "{{ config(materialized='window_view') }}\n"
        "select * from {{ window_views.window_aggregate(ref('events'), "
        "{'kind': 'hop', 'time_col': 'ts', 'slide': '1 minute', 'size': '1 hour'}, {'n': 'count(*)'}, ['k']) }}",
    )
    project.dbt("seed")
    project.dbt("run", "-s", "sliding")
    properties = dict(project.spark.sql(f"show tblproperties {project.schema}.sliding").collect())
    assert properties["window_views.windows"] == "hop(time_col=ts, slide=1 minute, size=1 hour)"
    assert len(project.rows("sliding")) == 60


@pytest.mark.parametrize(
    "window, measures, message",
    [
        (
            "{'kind': 'slide', 'time_col': 'ts', 'size': '1 hour'}",
            "{'n': 'count(*)'}",
            "argument 'window' has kind 'slide'; expected one of: tumble, hop, cumulate",
        ),
        (
            "{'kind': 'hop', 'time_col': 'ts', 'size': '1 hour'}",
            "{'n': 'count(*)'}",
            "argument 'window' is missing slide for kind 'hop'",
        ),
        (
            "{'kind': 'cumulate', 'time_col': 'ts', 'size': '1 hour', 'slide': '1 minute'}",
            "{'n': 'count(*)'}",
            "has unknown key(s) slide for kind 'cumulate'",
        ),
        (
            "{'kind': 'hop', 'time_col': 'ts', 'size': '1 month', 'slide': '1 minute'}",
            "{'n': 'count(*)'}",
            "window_views.window_aggregate: argument 'window.size' = '1 month' is not an interval: expected '<n> <unit>'",
        ),
        (
            "{'kind': 'cumulate', 'time_col': 'ts', 'size': '1 hour', 'step': '7 minutes'}",
            "{'n': 'count(*)'}",
            "argument 'window.size' = '1 hour' must be a multiple of 'window.step' = '7 minutes'",
        ),
        (
            "{'kind': 'hop', 'time_col': 'ts', 'size': '10 minutes', 'slide': '1 hour'}",
            "{'n': 'count(*)'}",
            "argument 'window.slide' = '1 hour' is larger than 'window.size' = '10 minutes': the rows between two windows would be in no window; fix: use a slide of at most the size",
        ),
        (
            "{'kind': 'tumble', 'time_col': 'ts', 'size': '1 hour', 'offset': '999999999999 days'}",
            "{'n': 'count(*)'}",
            "argument 'window.offset' = '999999999999 days' is too long: at most 36500 days",
        ),
        (
            "{'kind': 'tumble', 'time_col': 'ts', 'size': '1 hourz'}",
            "{'n': 'count(*)'}",
            "argument 'window.size' = '1 hourz' is not an interval: expected '<n> <unit>' with unit second(s), minute(s), hour(s) or day(s), e.g. '10 minutes'; did you mean '1 hour'?",
        ),
        (
            "{'kind': 'tumble', 'time_col': 'ts; drop', 'size': '1 hour'}",
            "{'n': 'count(*)'}",
            "argument 'window.time_col' must be a column name",
        ),
        (
            "{'kind': 'hop', 'time_col': 'ts', 'size': '1 hour', 'slide': '1 minute'}",
            "{'v': 'v + 1'}",
            "argument 'measures.v' = 'v + 1' is not an aggregate",
        ),
        (
            "{'kind': 'hop', 'time_col': 'ts', 'size': '1 hour', 'slide': '1 minute'}",
            "{'x': 'v + sum(w)'}",
            "uses column v outside an aggregate",
        ),
        (
            "{'kind': 'hop', 'time_col': 'ts', 'size': '1 hour', 'slide': '1 minute'}",
            "{}",
            "argument 'measures' must be a non-empty dict",
        ),
    ],
)
def test_bad_arguments_are_compile_errors(project, window, measures, message):
    project.seed("events", "id,k,ts,v,w\n1,a,2024-01-01 00:00:00,1,1\n")
    project.model("bad", f"select * from {{{{ window_views.window_aggregate(ref('events'), {window}, {measures}) }}}}")
    project.dbt("parse")  # the arguments are checked when the model compiles, not at parse time
    result = project.dbt("compile", "--select", "bad", ok=False)
    assert "Compilation Error in model bad" in errors(result)
    assert message in errors(result)
