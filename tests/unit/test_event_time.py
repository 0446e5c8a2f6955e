"""dbt's `event_time` on a window view: a column the model selects (compile time) of a time type
(run time, from the output Spark describes), so a downstream microbatch model can filter by it."""

from datetime import datetime, timezone

import pytest
from sqlglot import exp

from dbt.adapters.window_views.errors import ModelConfigError, ModelOutputError
from dbt.adapters.window_views.model.config import WindowViewConfig
from dbt.adapters.window_views.plans import over_reads
from dbt.adapters.window_views.plans.window_view import WindowViewPlan
from tests.support.data import TUMBLE_COMPILED

BATCH = {"materialized": "window_view", "execution": "batch"}


def test_a_window_bound_the_model_selects_is_accepted():
    plan = WindowViewPlan.from_model("m", TUMBLE_COMPILED, {**BATCH, "event_time": "window_start"})
    assert plan.config.event_time == "window_start"
    plan.config.check_event_time("m", [("window_start", "timestamp"), ("window_end", "timestamp"), ("price", "bigint")])


def test_a_column_the_model_does_not_select_fails_at_compile_time_naming_what_it_selects():
    with pytest.raises(ModelConfigError) as failed:
        WindowViewPlan.from_model("m", TUMBLE_COMPILED, {**BATCH, "event_time": "bidtime"})
    message = str(failed.value)
    assert "'m'" in message and "event_time" in message
    assert "'bidtime' is not a column the model selects (it selects: window_start, window_end, price)" in message
    assert "set event_time to window_start" in message


@pytest.mark.parametrize("value", ["not a name", 3, "_wv_t"])
def test_a_value_that_is_no_column_name_is_refused(value):
    with pytest.raises(ModelConfigError, match="event_time"):
        WindowViewConfig.from_model("m", {**BATCH, "event_time": value})


def test_a_selected_column_of_another_type_fails_before_the_run_writes():
    config = WindowViewConfig.from_model("m", {**BATCH, "event_time": "price"})
    with pytest.raises(ModelOutputError, match=r"'event_time' = 'price' is BIGINT; a downstream microbatch model"):
        config.check_event_time("m", [("window_start", "timestamp"), ("price", "bigint")])
    with pytest.raises(ModelOutputError, match=r"is not a column of the model's output"):
        config.check_event_time("m", [("window_start", "timestamp")])


def test_without_event_time_nothing_is_checked():
    WindowViewConfig.from_model("m", BATCH).check_event_time("m", [])


def test_a_streaming_window_view_over_an_input_dbt_filters_is_refused_before_it_runs():
    read = over_reads.dbt_filtered(
        exp.to_table("s.events"),
        "ts",
        datetime(2024, 1, 2, tzinfo=timezone.utc),
        datetime(2024, 1, 3, tzinfo=timezone.utc),
    )
    sql = f"select k, ts, lag(v) over (partition by k order by ts) as p from {read.sql('spark')}"
    stream = {
        "materialized": "window_view",
        "execution": "streaming",
        "watermark": {"column": "ts", "delay": "1 minute"},
    }
    with pytest.raises(ModelConfigError) as failed:
        WindowViewPlan.from_model("m", sql, stream)
    message = str(failed.value)
    assert "window_view model 'm': config 'execution' is 'streaming', but dbt filters its input s.events" in message
    assert "fix: run it without --sample" in message
    # the same read unfiltered streams
    WindowViewPlan.from_model("m", "select k, ts, lag(v) over (partition by k order by ts) as p from s.events", stream)
