"""What an incremental batch window view's run (incremental.py) shares with the part that keeps
its table in one file format: the run, the table as found, the batch queries, and the interface
each part keeps (`BatchTables`): parquet's partition folders (incremental.py), Delta's replace
by predicate (delta_batches.py). The engine looks the part up by `file_format` and never asks
which one it holds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple

from dbt.adapters.window_views.kinds.partials import tvf_panes
from dbt.adapters.window_views.model.config import Batches
from dbt.adapters.window_views.plans import batch_reads
from dbt.adapters.window_views.plans.batches import RECORD_PROPERTY, BatchSpan, Selection
from dbt.adapters.window_views.plans.window_view import WindowViewPlan
from dbt.adapters.window_views.query import analysis, ddl
from dbt.adapters.window_views.records import PendingBatches
from dbt.adapters.window_views.spark.spark_messages import error_line, without_internal

COLUMN_PROPERTY = "window_views.batch_column"
# contiguous batches computed in one query, at most: each row finds its batch in a CASE of this
# many branches (a year of hours: 88 queries, not 8,760)
COMPUTED_AS_ONE = 100


def batch_column(config: Batches) -> str:
    """The table's partition column: the batch period of event_time, e.g. window_time_day."""
    return f"{config.event_time}_{config.size}"


@dataclass(frozen=True)
class BatchRun:
    """One run of an incremental batch window view: what its steps share. `output`: the model's
    columns and types; `location_root`: the model's config (None: the catalog's default)."""

    adapter: Any
    plan: WindowViewPlan
    relation: Any
    location_root: Optional[str]
    output: Sequence[Tuple[str, str]]
    inputs_digest: Optional[str] = None  # what its batches read now (unchanged.py); None: not known

    @property
    def column(self) -> str:
        """The table's batch column (batch_column)."""
        return batch_column(self.plan.config.required_batches)


@dataclass(frozen=True)
class Rebuild:
    """A table built beside the model's, or in its place in one commit (`built`: the format's
    own record of where), that replaces `replaces` (None: a first build) once whole."""

    built: Any
    replaces: Any


@dataclass(frozen=True)
class Table:
    """The table as a run finds (or makes) it."""

    name: str
    location: str
    written: Tuple[str, ...]  # the batch keys it holds
    record: PendingBatches  # the batches an earlier run planned and did not finish
    rebuild: Optional[Rebuild] = None  # built beside the model's table (or in its place), to replace it
    latest_input: Optional[datetime] = None  # the latest input time the last run found
    inputs_read: Optional[Any] = None  # what the last whole run read (unchanged.InputsRead)


@dataclass(frozen=True)
class Described:
    """One DESCRIBE TABLE EXTENDED of the table: its columns, its details by name (Location,
    Provider, Table Properties, ...), and the columns it is partitioned by."""

    columns: List[str]
    details: Mapping[str, str]
    partitioned: List[str]


@dataclass(frozen=True)
class BatchQueries:
    """How each batch's rows are made: the model's batch shape, closed windows only (or all),
    HOP and CUMULATE aggregates from panes where exact (tvf_panes.py, as a full build does), cast
    to the table's types (`output`: a running call's summary can widen one, a decimal SUM's)."""

    model: str
    shape: batch_reads.BatchShape
    closing: Optional[batch_reads.Closing]
    types_of: tvf_panes.TypesOf
    output: Sequence[Tuple[str, str]]

    def query(self, batch: BatchSpan, parts: Sequence[BatchSpan] = ()) -> Any:
        """The rows `batch` owns (or, with `parts`, those of the batches it spans, as one)."""
        query = analysis.parse(self.shape.sql(batch, self.closing, parts))
        paned = tvf_panes.paned(query, self.types_of)
        return query if paned is None else paned


@dataclass(frozen=True)
class Writes:
    """What a run asks its table's part to write: the batches (`selection`), how to compute them,
    the record of every planned batch when the run has not written it yet (`unrecorded`: the
    first failure writes it, as a batch after it may be the last written), and the record a run
    that writes every batch leaves (`left`: a table made whole in one commit carries it)."""

    selection: Selection
    queries: BatchQueries
    unrecorded: Optional[str]
    left: str


class BatchTables(Protocol):
    """One file format's way to keep an incremental batch window view's table: one batch (or a
    run of contiguous batches) replaced at a time, readers seeing each batch's old rows or its new
    ones, a failed batch leaving its rows as they were."""

    def holds(self, provider: Optional[str]) -> bool:
        """Whether a table of this `provider` (DESCRIBE's, None: not given) is this format's."""
        ...

    def check(self, batch_run: BatchRun, described: Described) -> None:
        """Refuse, naming the fix, a table of this format whose batches cannot be replaced alone."""
        ...

    def written(self, adapter: Any, name: str, column: str) -> Tuple[str, ...]:
        """The batches (their keys in `column`) the table `name` holds, sorted, as its catalog lists them."""
        ...

    def new(self, batch_run: BatchRun, found: Any) -> Table:
        """The table a first run or a rebuild writes: `found` (the model's table now, or None) is
        replaced only once every batch is written."""
        ...

    def write(self, batch_run: BatchRun, table: Table, writes: Writes) -> Dict[str, str]:
        """Each batch written in time order; the failed ones' keys and first error lines."""
        ...

    def into_place(self, batch_run: BatchRun, table: Table) -> None:
        """A rebuild, every batch written, takes the model's name."""
        ...

    def drop(self, batch_run: BatchRun, table: Table) -> None:
        """A rebuild that will not finish goes; the model's table stays as it was."""
        ...


def contiguous(batches: Sequence[BatchSpan]) -> List[List[BatchSpan]]:
    """The batches (in time order) as runs of batches each ending where the next starts, at most
    COMPUTED_AS_ONE each."""
    groups: List[List[BatchSpan]] = []
    for batch in batches:
        if groups and groups[-1][-1].end == batch.start and len(groups[-1]) < COMPUTED_AS_ONE:
            groups[-1].append(batch)
        else:
            groups.append([batch])
    return groups


def record_pending(adapter: Any, name: str, value: str) -> None:
    """The record of the batches left to redo (PendingBatches as JSON), on the table `name`."""
    adapter.execute(ddl.set_properties(name, {RECORD_PROPERTY: value}))


def first_line(exc: Exception) -> str:
    """Spark's error as dbt-spark raised it: its error class and message (`[DIVIDE_BY_ZERO] ...`),
    not Py4J's "An error occurred while calling ..." nor dbt's "Runtime Error" heading."""
    text = str(getattr(exc, "msg", None) or exc)
    found = error_line(text)
    if found is not None:
        return without_internal(found)
    lines = [line.strip() for line in text.splitlines() if line.strip() and line.strip() != "Runtime Error"]
    return without_internal(lines[0]) if lines else type(exc).__name__
