"""Each model shape gets its own strategy, chosen once per plan (batch_writer.shape_of), and its
own input shape (sides.inputs_of): no Spark."""

import pytest

from dbt.adapters.window_views.model.config import WindowViewConfig
from dbt.adapters.window_views.plans.stream import InputShape, build
from dbt.adapters.window_views.streaming import batch_writer
from dbt.adapters.window_views.streaming.inputs import sides
from tests.support.data import TUMBLE_COMPILED as TUMBLE

SESSION = TUMBLE.replace(
    '"kind": "tumble", "time_col": "bidtime", "size_us": 600000000',
    '"kind": "session", "time_col": "bidtime", "gap_us": 600000000, "partition_by": []',
)
# count(DISTINCT) does not decompose: the sessions' rows are the state
SESSION_ROWS = SESSION.replace("sum(b.price)", "count(distinct b.price)")
OVER = "select item, bidtime, sum(price) over (partition by item order by bidtime) as total from s.bid"


def config(emit):
    return WindowViewConfig.from_model(
        "m", {"execution": "streaming", "emit": emit, "watermark": {"column": "bidtime", "delay": "1 minute"}}
    )


@pytest.mark.parametrize(
    "sql, emit, strategy",
    [
        (TUMBLE, "on_window_close", "TvfOnWindowClose"),
        (TUMBLE, "on_update", "TvfOnUpdate"),
        (SESSION, "on_window_close", "SessionPartialsOnWindowClose"),
        (SESSION, "on_update", "SessionPartialsOnUpdate"),
        (SESSION_ROWS, "on_window_close", "SessionOnWindowClose"),
        (SESSION_ROWS, "on_update", "SessionOnUpdate"),
        (OVER, "on_window_close", "OverOnWindowClose"),
        (OVER, "on_update", "OverOnUpdate"),
    ],
)
def test_each_model_kind_and_emit_has_its_strategy(sql, emit, strategy):
    plan = build("m", sql, config(emit), ())
    assert type(batch_writer.shape_of(plan)).__name__ == strategy
    assert plan.shape is InputShape.SINGLE and type(sides.inputs_of(plan)) is sides.OneInput
