"""A streaming model's kind (model_kind.py), decided once: the recognisers below, in order, each
return the kind they know or None, and refuse on the way what a stream of that kind cannot keep.

The order is the order a model's problems are reported in: the window TVF's own (its time column
is the watermark's), then rows joined to their own window, the window TVF (kept as partials where
its aggregates decompose), a keyed Top-N, and over windows. A recogniser that claims the model
points its reads at the inputs' views (`Found.read_views`), as what it keeps is planned over them.

An incremental batch window view (batch_size) gets its kind here too (`batch_kind`): window
TVFs or over windows, each refusing what batches cannot own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from sqlglot import exp

from dbt.adapters.window_views.errors import AnalysisError, ModelSqlError
from dbt.adapters.window_views.kinds import overwindows, own_window, topn
from dbt.adapters.window_views.kinds.model_kind import (
    AsWritten,
    BatchKind,
    KeyedTopN,
    ModelKind,
    OverBatches,
    OverWindows,
    PaneAggregate,
    RowsToOwnWindow,
    SessionAggregate,
    SessionWindows,
    TvfRows,
    WindowBatches,
)
from dbt.adapters.window_views.kinds.partials import session_slicing, slicing, tvf_aggregate
from dbt.adapters.window_views.model.config import Emit, Watermark, WindowViewConfig
from dbt.adapters.window_views.query import analysis
from dbt.adapters.window_views.query.tvf import WindowTvf
from dbt.adapters.window_views.query.window_columns import Bound
from dbt.adapters.window_views.query.windows import Session, Via, Window

Table = Tuple[Optional[str], str]
# points the model's reads at the inputs' views (a second read of one input only if allowed) and
# adds the window bounds `needed` to its select list; returns the first input's view
ReadViews = Callable[[bool, Tuple[Bound, ...]], str]


@dataclass(frozen=True)
class Found:
    """What the model's SQL holds, as the recognisers read it."""

    model: str
    config: WindowViewConfig
    tree: exp.Expression  # the model's query, changed in place as the stream will run it
    windows: Tuple[WindowTvf, ...]
    calls: Tuple[analysis.OverCall, ...]  # the model's own over windows
    tables: Tuple[Table, ...]
    one_read: bool  # one input read through one window TVF: its aggregates may be kept as partials
    read_views: ReadViews

    @property
    def watermark(self) -> Watermark:
        assert self.config.watermark is not None  # config.py requires one for streaming
        return self.config.watermark

    @property
    def watermark_column(self) -> str:
        return self.watermark.column


@dataclass(frozen=True)
class Recognised:
    """The model's kind and its query as the stream runs it (over the inputs' views)."""

    kind: ModelKind
    query: exp.Expression


def recognise(found: Found) -> Recognised:
    """The model's kind, or the ModelSqlError naming why a stream cannot keep it."""
    if found.windows:
        _check_window(found)
    for recogniser in RECOGNISERS:
        recognised = recogniser(found)
        if recognised is not None:
            return recognised
    raise AssertionError("over windows recognise every model the others leave")


def _fail(model: str, problem: str, fix: str) -> ModelSqlError:
    return ModelSqlError(model, problem, fix)


def references(tree: exp.Expression, schema: Optional[str], name: str) -> List[exp.Table]:
    """The tree's reads of table `schema.name`."""
    return [t for t in tree.find_all(exp.Table) if t.name == name and (t.db or None) == schema]


def _check_window(found: Found) -> None:
    """Every window TVF kind: windows by the watermark column, over windows only within a window."""
    window, column = found.windows[0], found.watermark_column
    if column.lower() != window.time_col.strip("`").lower():
        raise _fail(
            found.model,
            f"the watermark column `{column}` is not the window's time column `{window.time_col}`",
            f"set watermark={{'column': '{window.time_col}', 'delay': '{found.watermark.delay}'}}",
        )
    for call in found.calls:
        if not any(analysis.is_column(p, c) for p in call.partition_nodes for c in ("window_start", "window_end")):
            raise _fail(
                found.model,
                f"`{call.shown}` is an over window across the windows of a window TVF, which streaming does not maintain",
                "partition it by window_start, window_end, or use execution='batch'",
            )


def _rows_to_own_window(found: Found) -> Optional[Recognised]:
    """One input read as rows and through its one window TVF, the rows joined to their window's
    result (Nexmark's q7): emitted when the window closes, as only then is a row's result final."""
    if not found.windows or len(found.tables) != 1:
        return None
    window = found.windows[0]
    if isinstance(window, Session) or window.via is Via.WINDOW_AGGREGATE:
        return None
    if len(references(found.tree, *found.tables[0])) != 2:
        return None
    try:
        joined = own_window.find(found.tree, found.tables[0], found.watermark_column, window)
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(found.model, exc, "use execution='batch'") from exc
    if joined is None:
        return None
    if found.config.emit != Emit.ON_WINDOW_CLOSE:
        raise _fail(
            found.model,
            f"it joins the rows `{joined.rows}` to their window `{window.label()}`'s result, which is final only when "
            "the window closes; emit='on_update' would revise joined rows as the window's rows arrive",
            "set emit='on_window_close'",
        )
    found.read_views(True, (Bound.END,))
    return Recognised(RowsToOwnWindow(window, joined), found.tree)


def _window_tvf(found: Found) -> Optional[Recognised]:
    """A window TVF (a window join's: every side's), its aggregates kept as pane or session
    partials where they decompose, else its windows' rows."""
    if not found.windows:
        return None
    window = found.windows[0]
    self_join = len(found.tables) == 1 and len(found.windows) > 1
    view = found.read_views(self_join, tuple(Bound))
    written = found.tree.copy()  # the rewrites below change found.tree in place
    rows: ModelKind = SessionWindows(window) if isinstance(window, Session) else TvfRows(window)
    as_rows = Recognised(rows, written)
    if not found.one_read:
        return as_rows
    if window.via is Via.WINDOW_AGGREGATE:
        return _partials(found.model, found.tree, window, view) or as_rows
    rewritten = tvf_aggregate.rewrite(found.tree, window, view)
    if rewritten is None:
        return as_rows
    assert isinstance(rows, (TvfRows, SessionWindows))
    return _partials(found.model, *rewritten, view, AsWritten(rows, written)) or as_rows


def _partials(
    model: str, tree: exp.Expression, window: WindowTvf, view: str, written: Optional[AsWritten] = None
) -> Optional[Recognised]:
    """A window_aggregate's pane partials, or a session aggregate's session partials (`tree`
    then reads them from `view`), or None: the state is input rows."""
    if isinstance(window, Session):
        sessions = session_slicing.plan(tree, window, view)
        return None if sessions is None else Recognised(SessionAggregate(window, sessions, written), tree)
    try:
        panes = slicing.plan(tree, window, view)
    except slicing.SlicingError as exc:
        raise _fail(model, exc.problem, exc.fix) from exc
    return None if panes is None else Recognised(PaneAggregate(window, panes, written), tree)


def _keyed_top_n(found: Found) -> Optional[Recognised]:
    """A keyed Top-N ranking, kept current (emit='on_update'), as no row of it is ever final."""
    if found.windows:
        return None
    try:
        ranking = topn.find(found.tree, found.watermark_column)
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(found.model, exc, "use execution='batch'") from exc
    if ranking is None:
        return None
    if found.config.emit != Emit.ON_UPDATE:
        raise _fail(
            found.model,
            f"`{ranking.call.shown}` kept by `{ranking.kept_by}` is a keyed Top-N: a later row can take any of a key's "
            "places, so its partitions never close and no row of it is final, which emit='on_window_close' waits for",
            "set emit='on_update' (the table is then each key's current top rows), or use execution='batch'",
        )
    found.read_views(False, ())
    # rendered once the input reads its view (in place: the ranking's nodes stay in the tree)
    return Recognised(KeyedTopN(ranking.top_n()), found.tree)


def _over_windows(found: Found) -> Optional[Recognised]:
    """Window functions ordered by the watermark column."""
    if found.windows:
        return None
    try:
        overwindows.ascending(found.tree, found.watermark_column)
        over = overwindows.plan(found.tree, found.watermark_column)
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(found.model, exc, "see the README on streaming over windows") from exc
    found.read_views(False, ())
    return Recognised(OverWindows(over), found.tree)


RECOGNISERS: Sequence[Callable[[Found], Optional[Recognised]]] = (
    _rows_to_own_window,
    _window_tvf,
    _keyed_top_n,
    _over_windows,
)


@dataclass(frozen=True)
class BatchFound:
    """What an incremental batch window view's SQL holds, as the batch recognisers read it."""

    model: str
    tree: exp.Expression
    windows: Tuple[Window, ...]  # the window TVFs its compiled code's markers name
    over: Tuple[analysis.OverCall, ...]  # the model's own over windows
    closing: bool  # emit='on_window_close'


def batch_kind(model: str, tree: exp.Expression, windows: Sequence[Window], closing: bool) -> BatchKind:
    """The kind of an incremental batch window view, or the ModelSqlError naming what its batches
    cannot own and the fix."""
    over = tuple(call for call in analysis.over_calls(tree) if not call.generated)
    found = BatchFound(model, tree, tuple(windows), over, closing)
    for recogniser in BATCH_RECOGNISERS:
        kind = recogniser(found)
        if kind is not None:
            return kind
    raise _fail(
        model,
        "has batch_size but neither a window TVF nor an over window, so no batch owns its rows",
        "remove batch_size (a plain dbt incremental model with incremental_strategy='microbatch' fits it)",
    )


def _window_batches(found: BatchFound) -> Optional[BatchKind]:
    if not found.windows:
        return None
    if found.over:
        raise _fail(
            found.model,
            f"with batch_size it computes both window TVFs and the over window `{found.over[0].shown}`, which "
            "incremental batches do not own together yet",
            "compute the over window in a downstream window_view model, or remove batch_size",
        )
    return WindowBatches(found.windows)


def _over_batches(found: BatchFound) -> Optional[BatchKind]:
    if not found.over:
        return None
    tables = over_tables(found.tree)
    if not tables:
        raise _fail(
            found.model,
            f"with batch_size its over window `{found.over[0].shown}` must read its input table directly",
            "read the ref()/source() in the SELECT with the over window (`from {{ ref(...) }}`)",
        )
    if found.closing:
        raise _fail(
            found.model,
            "with batch_size its over windows cannot be emit='on_window_close' yet (a batch would hold back the "
            "rows whose frame the watermark has not closed)",
            "use emit='on_update', or remove batch_size",
        )
    return OverBatches(tables)


def over_tables(tree: exp.Expression) -> Tuple[exp.Table, ...]:
    """The tables the SELECTs with the model's own over windows read directly (not a CTE)."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    tables: Dict[int, exp.Table] = {}
    for call in analysis.over_calls(tree):
        source = getattr(call.select.args.get("from_"), "this", None)
        if not call.generated and isinstance(source, exp.Table) and source.name.lower() not in ctes:
            tables[id(source)] = source
    return tuple(tables.values())


BATCH_RECOGNISERS: Sequence[Callable[[BatchFound], Optional[BatchKind]]] = (_window_batches, _over_batches)
