"""One strategy per model shape (model kind x emit): how a micro-batch of that shape gathers the
rows it works on, stages its output and keeps its state. The batch writer looks one up per plan
by its model kind (strategies.py) and calls it; window TVFs, their panes and sessions are in
window_shapes.py, over windows in over_shapes.py, a keyed Top-N in topn_shapes.py."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

from pyspark.sql import functions as F

from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.records import BatchId, BatchRecord, NewRowCounts, RecomputeRecord
from dbt.adapters.window_views.streaming.shapes.model_query import ModelQuery
from dbt.adapters.window_views.streaming.shapes.output import Output, Staged
from dbt.adapters.window_views.streaming.shapes.state import Recompute, State

NEW = internal("new")  # whether a retained row is one of the batch's new rows


@dataclass(frozen=True)
class Batch:
    """A micro-batch (or idle step) being staged: its rows and where W goes."""

    id: BatchId
    spark: Any
    retained: Any  # the state's rows and the new ones (NEW), or a window_aggregate's panes
    w_prev: Optional[int]
    w_new: Optional[int]
    tmin: Optional[int]  # the new rows' event-time range (None: no new rows on time)
    tmax: Optional[int]
    states: Sequence[Any] = ()  # over windows: the prefix summaries (State.prefix_states)
    recompute: Optional[Recompute] = None  # over windows on_update: where to recompute from
    rows_in: int = 0  # the new rows, late ones included
    previous_states: Tuple[str, ...] = ()  # the state folders this one read, oldest first (none: no state)
    kept_before: int = 0  # the input rows the state kept before the batch

    @property
    def closes(self) -> bool:
        """Whether W moves, so windows (over windows: rows) close."""
        return self.w_new is not None and self.w_new != self.w_prev


@dataclass(frozen=True)
class Saved:
    """What a batch's state write kept: its input rows, where the next batch recomputes from
    (over windows on_update), and the state's folders after it, oldest first (None: the
    batch's own alone; a keyed Top-N keeps parts)."""

    rows: int
    recompute: Optional[RecomputeRecord] = None
    folders: Optional[Tuple[str, ...]] = None


@dataclass(frozen=True)
class Parts:
    """What a batch's strategy works with: the model SQL, the state and the table's output."""

    query: ModelQuery
    state: State
    output: Output


class ModelShape(ABC):
    """How batches of one model shape stage their output and keep their state."""

    def __init__(self, plan: StreamPlan) -> None:
        self.plan = plan

    def retained(self, spark: Any, fresh: Any, state: State, previous: Tuple[str, ...], counts: NewRowCounts) -> Any:
        """The rows the batch works on: the state's rows (of the `previous` state folders: one,
        but for a keyed Top-N) and the `fresh` ones (NEW), as `counts` counted the new rows."""
        retained = fresh.withColumn(NEW, F.lit(True))
        if not previous:
            return retained
        old = state.rows(spark, previous[-1], fresh.schema)
        return old.withColumn(NEW, F.lit(False)).unionByName(retained, allowMissingColumns=True)

    def recompute(
        self, previous: Optional[BatchRecord], held_hit: Optional[Sequence[int]], by: Tuple[str, ...]
    ) -> Optional[Recompute]:
        """Where the batch recomputes from (over windows on_update only)."""
        return None

    @abstractmethod
    def stage(self, parts: Parts, batch: Batch) -> Staged:
        """Stage the batch's output; returns the rows written and the buckets replaced."""

    @abstractmethod
    def save(self, parts: Parts, batch: Batch) -> Saved:
        """Write the state the next batch needs."""
