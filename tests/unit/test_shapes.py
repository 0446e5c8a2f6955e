"""Each model shape gets its own strategy, chosen once per plan (batch_writer.shape_of), and its
own input shape (sides.inputs_of): no Spark."""

import pytest

from dbt.adapters.window_views.kinds import model_kind
from dbt.adapters.window_views.model.config import WindowViewConfig
from dbt.adapters.window_views.plans.stream import InputShape
from dbt.adapters.window_views.streaming import batch_writer
from dbt.adapters.window_views.streaming.inputs import sides
from dbt.adapters.window_views.streaming.shapes import strategies
from tests.support.data import TUMBLE_COMPILED as TUMBLE
from tests.support.streams import build

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


def _models():
    """One small model of each kind, with the config it streams with."""
    from tests.unit import test_refusals, test_streaming_join_plan
    from tests.unit.test_own_window import Q7
    from tests.unit.test_streaming_plan import HOP, tvf_aggregate, window_aggregate

    return [
        (TUMBLE, config("on_window_close"), model_kind.TvfRows),
        (test_streaming_join_plan.join(), test_streaming_join_plan.config(), model_kind.TvfRows),
        (window_aggregate(HOP, {"n": "count(*)"}), config("on_update"), model_kind.PaneAggregate),
        (
            tvf_aggregate("window_start, window_end, item, sum(price) as p"),
            config("on_update"),
            model_kind.PaneAggregate,
        ),
        (SESSION_ROWS, config("on_update"), model_kind.SessionWindows),
        (SESSION, config("on_window_close"), model_kind.SessionAggregate),
        (Q7, test_refusals.config(), model_kind.RowsToOwnWindow),
        (OVER, config("on_update"), model_kind.OverWindows),
        (test_refusals.Q19, test_refusals.config("on_update"), model_kind.KeyedTopN),
    ]


@pytest.mark.parametrize("index", range(9))
def test_the_registry_recognises_each_kind_once(index):
    sql, cfg, kind = _models()[index]
    plan = build("m", sql, cfg, ())
    assert type(plan.kind) is kind
    # the plan's parts are the kind's: a window TVF kind has a window, the others none
    assert (plan.window is not None) is (kind not in (model_kind.OverWindows, model_kind.KeyedTopN))
    assert (plan.slicing is not None) is (kind in (model_kind.PaneAggregate, model_kind.SessionAggregate))
    assert type(batch_writer.shape_of(plan)) is strategies.strategy_for(plan)


def test_every_kind_has_a_strategy_for_each_emit_it_streams_with():
    kinds = set(model_kind.ModelKind.__args__)
    assert set(strategies.STRATEGIES) == kinds
    for kind, (on_update, on_window_close) in strategies.STRATEGIES.items():
        assert on_update is not None or on_window_close is not None, kind
    # the plan refuses what no strategy keeps: a keyed Top-N closes nothing, a joined row waits for its window
    assert strategies.STRATEGIES[model_kind.KeyedTopN][1] is None
    assert strategies.STRATEGIES[model_kind.RowsToOwnWindow][0] is None
