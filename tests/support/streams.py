"""The stream plan of dbt's compiled text, for tests that give a model's SQL as text: parsed as
WindowViewPlan.from_model parses it (its tree, and the window TVFs its markers name)."""

from __future__ import annotations

from typing import Sequence

from dbt.adapters.window_views.errors import AnalysisError
from dbt.adapters.window_views.model.config import WindowViewConfig
from dbt.adapters.window_views.model.upstream import Upstream
from dbt.adapters.window_views.plans import stream
from dbt.adapters.window_views.query import analysis, tvf


def build(model: str, compiled: str, config: WindowViewConfig, upstream: Sequence[Upstream] = ()) -> stream.StreamPlan:
    """stream.build over the tree of `compiled` (a parse error: the plan's own refusal)."""
    try:
        tree = analysis.parse(compiled)
    except AnalysisError as exc:
        raise stream.unreadable(model, exc, upstream) from exc
    return stream.build(model, tree, tvf.find(compiled), config, upstream)
