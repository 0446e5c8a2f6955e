"""Each model kind's strategy per emit, looked up once per plan: the kind (model_kind.py) is
decided by the plan, so no strategy is chosen by probing the plan's parts."""

from __future__ import annotations

from typing import Dict, Optional, Tuple, Type

from dbt.adapters.window_views.kinds.model_kind import (
    KeyedTopN,
    OverWindows,
    PaneAggregate,
    RowsToOwnWindow,
    SessionAggregate,
    SessionWindows,
    TvfRows,
)
from dbt.adapters.window_views.model.config import Emit
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.streaming.shapes.base import ModelShape
from dbt.adapters.window_views.streaming.shapes.over_shapes import OverOnUpdate, OverOnWindowClose
from dbt.adapters.window_views.streaming.shapes.topn_shapes import TopNOnUpdate
from dbt.adapters.window_views.streaming.shapes.window_shapes import (
    PanesOnUpdate,
    PanesOnWindowClose,
    SessionOnUpdate,
    SessionOnWindowClose,
    SessionPartialsOnUpdate,
    SessionPartialsOnWindowClose,
    TvfOnUpdate,
    TvfOnWindowClose,
)

Strategy = Optional[Type[ModelShape]]
# kind -> (emit='on_update', emit='on_window_close'); None: the plan refuses that emit (registry.py)
STRATEGIES: Dict[type, Tuple[Strategy, Strategy]] = {
    TvfRows: (TvfOnUpdate, TvfOnWindowClose),
    RowsToOwnWindow: (None, TvfOnWindowClose),  # a joined row is final only when its window closes
    PaneAggregate: (PanesOnUpdate, PanesOnWindowClose),
    SessionWindows: (SessionOnUpdate, SessionOnWindowClose),
    SessionAggregate: (SessionPartialsOnUpdate, SessionPartialsOnWindowClose),  # one partial row per open session
    OverWindows: (OverOnUpdate, OverOnWindowClose),
    KeyedTopN: (TopNOnUpdate, None),  # no row of a keyed Top-N is ever final
}


def strategy_for(plan: StreamPlan) -> Type[ModelShape]:
    """The strategy class of the plan's model kind and emit."""
    on_update, on_window_close = STRATEGIES[type(plan.kind)]
    strategy = on_update if plan.config.emit == Emit.ON_UPDATE else on_window_close
    assert strategy is not None, f"the plan refuses emit='{plan.config.emit}' for {type(plan.kind).__name__}"
    return strategy


def shape_of(plan: StreamPlan) -> ModelShape:
    """The strategy for the plan's model kind and emit, chosen once per plan."""
    return strategy_for(plan)(plan)
