"""The streaming plan, before any Spark: the relation rewrite, the window read back from the
compiled SQL, and the refusals (their messages name the model and the fix)."""

import json

import pytest

from dbt.adapters.window_views.errors import ModelSqlError
from dbt.adapters.window_views.kinds.partials import panes
from dbt.adapters.window_views.model.config import WindowViewConfig
from dbt.adapters.window_views.model.upstream import Upstream
from dbt.adapters.window_views.plans.stream import check_upstream
from tests.support.data import TUMBLE_COMPILED as TUMBLE
from tests.support.streams import build


def plan(model, sql, cfg):
    return build(model, sql, cfg, ())


def config(**extra):
    return WindowViewConfig.from_model(
        "m", {"execution": "streaming", "watermark": {"column": "bidtime", "delay": "1 minute"}, **extra}
    )


def test_the_upstream_table_becomes_the_view_with_its_name_as_alias():
    p = plan("m", TUMBLE, config())
    assert p.source == "s.bid"
    assert f"FROM {p.view} AS bid" in p.sql and "s.bid" not in p.sql
    assert (p.window.kind, p.window.size) == ("tumble", 600_000_000)
    assert p.bucket_sizes == {"h": 3_600_000_000, "b": 86_400_000_000}


def test_on_update_buckets_hold_the_longest_window_in_hours_then_days():
    hour, day = 3_600_000_000, 86_400_000_000
    hop = TUMBLE.replace('"kind": "tumble"', '"kind": "hop", "slide_us": 600000000').replace(
        '600000000, "offset', '5400000000, "offset'
    )
    assert plan("m", hop, config()).bucket_sizes == {"h": 2 * hour, "b": day}
    long = TUMBLE.replace("600000000", str(36 * hour))
    assert plan("m", long, config()).bucket_sizes == {"h": 2 * day, "b": 2 * day}


def test_the_fingerprint_follows_sql_and_window_config():
    base = plan("m", TUMBLE, config()).fingerprint
    assert plan("m", TUMBLE, config()).fingerprint == base
    assert plan("m", TUMBLE.replace("sum", "max"), config()).fingerprint != base
    assert plan("m", TUMBLE, config(emit="on_window_close")).fingerprint != base
    assert (
        plan("m", TUMBLE, config(trigger={"processing_time": "1 second", "max_duration": "1 minute"})).fingerprint
        == base
    )


def test_the_watermark_must_be_on_the_window_time_column():
    cfg = WindowViewConfig.from_model(
        "m", {"execution": "streaming", "watermark": {"column": "other", "delay": "1 minute"}}
    )
    with pytest.raises(
        ModelSqlError,
        match=r"window_view model 'm': the watermark column `other` is not the window's time column `bidtime`; fix: set watermark=\{'column': 'bidtime'",
    ):
        plan("m", TUMBLE, cfg)


@pytest.mark.parametrize(
    "node",
    [
        {"name": "raw", "resource_type": "source", "config": {}},
        {
            "name": "landed",
            "resource_type": "model",
            "config": {"materialized": "incremental", "incremental_strategy": None},
        },
        {
            "name": "landed",
            "resource_type": "model",
            "config": {"materialized": "incremental", "incremental_strategy": "append"},
        },
        {
            "name": "w",
            "resource_type": "model",
            "config": {"materialized": "window_view", "execution": "streaming", "emit": "on_window_close"},
        },
    ],
)
def test_append_only_inputs_are_accepted(node):
    check_upstream("m", [Upstream.from_node(node)])


@pytest.mark.parametrize(
    "node, what",
    [
        (
            {
                "name": "x",
                "resource_type": "model",
                "config": {"materialized": "incremental", "incremental_strategy": "merge"},
            },
            "a 'incremental' model with incremental_strategy 'merge'",
        ),
        (
            {
                "name": "x",
                "resource_type": "model",
                "config": {"materialized": "window_view", "execution": "streaming", "emit": "on_update"},
            },
            "a 'window_view' model with execution 'streaming' and emit 'on_update'",
        ),
        ({"name": "x", "resource_type": "model", "config": {"materialized": "view"}}, "a 'view' model"),
        ({"name": "x", "resource_type": "snapshot", "config": {"materialized": "snapshot"}}, "a snapshot"),
    ],
)
def test_inputs_rewritten_in_place_are_refused(node, what):
    with pytest.raises(ModelSqlError, match="window_view model 'm': upstream `x` is " + what):
        check_upstream("m", [Upstream.from_node(node)])


def test_comments_and_formatting_do_not_change_the_fingerprint():
    base = plan("m", TUMBLE, config())
    reformatted = "-- revenue\n" + TUMBLE.replace("sum(b.price)", "SUM( b.price ) /* per window */").replace(
        "\n", "\n  "
    )
    assert plan("m", reformatted, config()).fingerprint == base.fingerprint
    assert plan("m", TUMBLE.replace("sum(b.price)", "sum(b.price) + 0"), config()).fingerprint != base.fingerprint


def test_a_record_fits_the_model_it_was_written_for():
    from dataclasses import replace

    now = plan("m", TUMBLE, config())
    assert now.fits(now.record())
    # written for another emit mode, or another SQL: does not fit
    assert not now.fits(plan("m", TUMBLE, config(emit="on_window_close")).record())
    assert not now.fits(replace(now.record(), fingerprint="0" * 64))


def window_aggregate(window: dict, measures: dict, group_by=("item",)) -> str:
    """A model's compiled SQL as macros/windows/window_aggregate.sql renders it."""
    spec = {
        "via": "window_aggregate",
        "group_by": list(group_by),
        "measures": measures,
        "time_col": "bidtime",
        "offset_us": 0,
        "text": {},
        **window,
    }
    planned = panes.plan_from_config("s.bid", spec, measures, list(group_by))
    return f"select * from (\n/* window_views:tvf:v1 {json.dumps(spec)} */\nselect * from {planned['sql']} _wv_panes\n)"


HOP = {"kind": "hop", "size_us": 3_600_000_000, "slide_us": 60_000_000}


def test_a_window_aggregate_keeps_pane_partials_and_reads_them_from_the_view():
    p = plan("m", window_aggregate(HOP, {"price": "sum(price)", "top": "max(price)"}), config())
    s = p.slicing
    assert s.columns == ("item", "_wv_p", "_wv_m0", "_wv_m1", "_wv_m2")  # sum, its count, max
    assert "s.bid" not in p.sql and f"FROM {p.view}" in p.sql
    # the new rows' partials: aggregated where they are (no shuffle hint), from the rows' view
    assert f"FROM {s.rows_view} " in s.partial_sql and "REPARTITION" not in s.partial_sql
    assert "SUM(_wv_m0) AS _wv_m0" in s.merge_sql and "MAX(_wv_m2) AS _wv_m2" in s.merge_sql


def test_a_tumble_window_aggregate_has_one_pane_per_window():
    tumble = {"kind": "tumble", "size_us": 60_000_000}
    assert plan("m", window_aggregate(tumble, {"n": "count(*)"}), config()).slicing.columns == (
        "item",
        "_wv_p",
        "_wv_m0",
    )
    # count(DISTINCT) does not decompose: the stream keeps input rows, as for a window TVF
    distinct = plan("m", window_aggregate(tumble, {"n": "count(distinct price)"}), config())
    assert distinct.slicing is None and f"FROM {distinct.view} AS bid" in distinct.sql


def test_a_tumble_window_aggregate_with_approx_count_distinct_keeps_rows():
    # batch TUMBLE estimates with Spark's HLL++, HOP/CUMULATE with mergeable sketches
    tumble = {"kind": "tumble", "size_us": 60_000_000}
    assert plan("m", window_aggregate(tumble, {"d": "approx_count_distinct(price)"}), config()).slicing is None
    assert plan("m", window_aggregate(HOP, {"d": "approx_count_distinct(price)"}), config()).slicing is not None


def tvf_aggregate(
    select: str, group_by: str = "window_start, window_end, item", kind: str = "hop", extra: str = ""
) -> str:
    """A window TVF + GROUP BY model's compiled SQL (the TVF's rows as the hop macro renders them)."""
    spec = {"kind": kind, "time_col": "bidtime", "size_us": 3_600_000_000, "offset_us": 0, "text": {}}
    spec |= {"slide_us": 300_000_000} if kind == "hop" else {"step_us": 300_000_000} if kind == "cumulate" else {}
    return f"""select {select}
from (
  /* window_views:tvf:v1 {json.dumps(spec)} */
  select * from s.bid lateral view inline(array(named_struct('window_start', timestamp_micros(0),
    'window_end', timestamp_micros(1), 'window_time', timestamp_micros(0)))) _wv_windows as window_start, window_end, window_time
  where bidtime is not null
) b {extra}
group by {group_by}"""


@pytest.mark.parametrize("kind", ["hop", "cumulate"])
def test_a_tvf_aggregate_keeps_pane_partials_like_the_window_aggregate_it_is(kind):
    p = plan(
        "m",
        tvf_aggregate(
            "b.window_start, window_end, item, sum(price) as price, count(*), avg(b.price) + 1 as a", kind=kind
        ),
        config(),
    )
    assert p.slicing is not None and p.slicing.keys == ("item",)
    assert p.window.via == "window_aggregate" and p.window.kind == kind
    assert dict(p.window.measures) == {"_wv_a0": "SUM(price)", "_wv_a1": "COUNT(*)", "_wv_a2": "AVG(price)"}
    # the outputs keep their places; an unnamed aggregate is named by its SQL, as Spark would name it
    assert "SELECT window_start, window_end, item, _wv_a0 AS price, _wv_a1 AS `COUNT(*)`, _wv_a2 + 1 AS a FROM" in p.sql
    # the model as written keeps input rows: its output columns are the stream's
    rows = p.rows
    assert rows.slicing is None and "LATERAL VIEW" in rows.sql and rows.fingerprint != p.fingerprint
    assert p.fits(p.record()) and not p.fits(rows.record())


def test_a_tvf_aggregate_grouped_by_position_is_sliced():
    p = plan("m", tvf_aggregate("window_start, window_end, item, max(price) as top", group_by="1, 2, 3"), config())
    assert p.slicing is not None and p.slicing.keys == ("item",)


@pytest.mark.parametrize(
    "select, group_by, extra",
    [
        ("window_start, window_end, sum(price) as p", "window_start, window_end", "where price > 1"),  # WHERE
        ("window_start, window_end, count(distinct item) as n", "window_start, window_end", ""),  # does not decompose
        (
            "window_start, window_end, approx_count_distinct(item) as n",
            "window_start, window_end",
            "",
        ),  # HLL++ in batch
        ("window_start, window_end, count(*) filter (where price > 1) as n", "window_start, window_end", ""),
        (
            "window_start, window_end, item, rank() over (partition by window_start, window_end order by sum(price)) as r",
            "window_start, window_end, item",
            "",
        ),  # an over window across the aggregates
        ("window_start, window_end, upper(item) as i, count(*) as n", "window_start, window_end, upper(item)", ""),
        ("window_start, window_end, upper(item) as k, count(*) as n", "window_start, window_end, k", ""),  # an alias
        ("window_start, window_end, item, count(*) as n", "window_start, item", ""),  # not per window
        ("window_start, window_end, item, max(window_time) as n", "window_start, window_end, item", ""),
        ("window_start, window_end, bidtime, count(*) as n", "window_start, window_end, item", ""),  # not grouped
        ("window_start, window_end, count(*) as _wv_n", "window_start, window_end", ""),  # a reserved name
    ],
)
def test_other_tvf_aggregates_keep_input_rows(select, group_by, extra):
    p = plan("m", tvf_aggregate(select, group_by, extra=extra), config())
    assert p.slicing is None and p.rows is None and "LATERAL VIEW" in p.sql


def test_a_tumble_aggregate_keeps_input_rows():
    # one window per row: measured slower kept as panes (bench/history.md)
    p = plan("m", tvf_aggregate("window_start, window_end, item, count(*) as n", kind="tumble"), config())
    assert p.slicing is None and p.rows is None


def test_a_tvf_aggregate_with_having_keeps_input_rows():
    p = plan(
        "m",
        tvf_aggregate("window_start, window_end, count(*) as n", "window_start, window_end") + " having n > 1",
        config(),
    )
    assert p.slicing is None and p.rows is None


def test_a_tvf_aggregate_selecting_window_time_without_grouping_by_it_keeps_the_batch_error():
    # Spark refuses it in batch; the stream, running the SQL as written, refuses it alike
    p = plan(
        "m", tvf_aggregate("window_start, window_end, window_time, count(*) as n", "window_start, window_end"), config()
    )
    assert p.slicing is None
