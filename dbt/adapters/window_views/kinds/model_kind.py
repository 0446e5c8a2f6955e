"""What a streaming window view is, as one of a closed set of kinds: decided once from its SQL
(registry.py), then looked up by the engines, which never probe the plan for optional parts.

- TvfRows: a window TVF (TUMBLE, HOP, CUMULATE; a window join or UNION ALL of several inputs)
  computed from the input rows of the windows a batch touches;
- SessionWindows: a SESSION window TVF computed from its open sessions' rows;
- PaneAggregate: a window_aggregate, or a window TVF + GROUP BY read as one, kept as pane partials;
- SessionAggregate: a SESSION aggregate of decomposable measures kept as session partials;
- RowsToOwnWindow: one input's rows joined to their own window's aggregate (Nexmark's q7);
- OverWindows: window functions ordered by the watermark column;
- KeyedTopN: a ranking kept by its rank per key, which no window closes.

An incremental batch window view (batch_size) is one of two kinds, decided by the same registry:
WindowBatches (window TVFs) or OverBatches (over windows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Tuple, Union

from sqlglot import exp

from dbt.adapters.window_views.kinds.overwindows import OverPlan
from dbt.adapters.window_views.kinds.own_window import RowsToWindow
from dbt.adapters.window_views.kinds.topn import TopN
from dbt.adapters.window_views.query.tvf import WindowTvf
from dbt.adapters.window_views.query.windows import Session, Window

if TYPE_CHECKING:  # the partials planners (plans/slicing.py) build on kinds/panes.py
    from dbt.adapters.window_views.kinds.partials.slicing import Slicing


@dataclass(frozen=True)
class TvfRows:
    """A window TVF over the rows of the windows a batch touches."""

    window: WindowTvf  # a window join's: every side's, all equal


@dataclass(frozen=True)
class SessionWindows:
    """A SESSION window over its open sessions' rows: where a session ends follows its rows."""

    window: Session


@dataclass(frozen=True)
class AsWritten:
    """A window TVF + GROUP BY kept as partials: the model as written, over input rows, whose
    output columns the stream's are."""

    kind: Union[TvfRows, SessionWindows]
    query: exp.Expression  # over the inputs' views, as a tree of its own


@dataclass(frozen=True)
class PaneAggregate:
    """Pane partials per (keys, pane) as the state: the model SQL reads them (slicing.py)."""

    window: WindowTvf  # with the aggregate's keys and measures
    slicing: Slicing
    written: Optional[AsWritten] = None  # None: a window_aggregate call


@dataclass(frozen=True)
class SessionAggregate:
    """Session partials per (key, open session) as the state (session_slicing.py)."""

    window: Session  # with the aggregate's keys and measures
    slicing: Slicing
    written: Optional[AsWritten] = None


@dataclass(frozen=True)
class RowsToOwnWindow:
    """Rows of one input joined to their own window's result: both reads of it read one view."""

    window: WindowTvf
    joined: RowsToWindow


@dataclass(frozen=True)
class OverWindows:
    """Over windows ordered by the watermark column."""

    over: OverPlan


@dataclass(frozen=True)
class KeyedTopN:
    """A keyed Top-N: neither a window nor over windows."""

    top_n: TopN


ModelKind = Union[TvfRows, SessionWindows, PaneAggregate, SessionAggregate, RowsToOwnWindow, OverWindows, KeyedTopN]


@dataclass(frozen=True)
class WindowBatches:
    """Incremental batches of window TVFs: a batch reads each input back as far as the windows
    it owns reach (plans/batch_reads.TvfShape)."""

    windows: Tuple[Window, ...]


@dataclass(frozen=True)
class OverBatches:
    """Incremental batches of over windows: a batch reads the tables its over windows read
    directly over its range, widened by their reach (plans/over_reads.py)."""

    tables: Tuple[exp.Table, ...]


# an incremental batch window view's kind (batch_size), decided once (registry.batch_kind)
BatchKind = Union[WindowBatches, OverBatches]


def window_of(kind: ModelKind) -> Optional[WindowTvf]:
    """The kind's window TVF; None for over windows and a keyed Top-N."""
    return None if isinstance(kind, (OverWindows, KeyedTopN)) else kind.window


def slicing_of(kind: ModelKind) -> Optional[Slicing]:
    """The partials a kind keeps as its state; None where the state is input rows."""
    return kind.slicing if isinstance(kind, (PaneAggregate, SessionAggregate)) else None


def describe(kind: ModelKind) -> str:
    """The window as its call reads (kind, sizes), the Top-N's ranking or the over-window calls."""
    if isinstance(kind, KeyedTopN):
        return f"{kind.top_n.call} kept by {kind.top_n.kept_by}"
    if isinstance(kind, OverWindows):
        return "; ".join(kind.over.calls)
    if isinstance(kind, RowsToOwnWindow):
        return f"{kind.window.label()} (its rows joined to their window's result)"
    return kind.window.label()
