"""An incremental batch window view's table in a format that replaces rows by predicate in one
transaction of its own (Delta Lake, Apache Iceberg: batch_table.BatchTables; what differs per
format is a `FormatWrites`, delta_batches.py, iceberg_batches.py). The table is partitioned by the
batch column. A run's contiguous batches replace their rows in one commit, `INSERT INTO ...
REPLACE WHERE <batch column> IN (<their keys>)`: the format drops the batches' old files and adds
the new ones in one commit, so a reader sees each batch's old rows or its new ones (snapshot
isolation) and a batch that fails commits nothing; if the batches as one fail, each replaces its
own, so a failure stays the failing batch's. No folder is moved and no partition pointed anywhere.

A first run, a rebuild (--full-refresh, another batch column) and a table switching format are
made whole in one commit, `CREATE OR REPLACE TABLE ... USING <format> PARTITIONED BY (<batch
column>) AS SELECT <every batch>` (or, from another format, beside the table and renamed into
place, as a batch build is: storage/table_format.ReplacedInPlace); until it commits, readers see
the table as it was, and if it fails nothing of it is kept. The record of pending batches and what
the run read stay table properties, as on parquet (the materialization's one property write)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from dbt.adapters.events.logging import AdapterLogger
from sqlglot import exp

from dbt.adapters.window_views.batch import swap
from dbt.adapters.window_views.batch.batch_table import (
    COLUMN_PROPERTY,
    BatchQueries,
    BatchRun,
    Described,
    Rebuild,
    Table,
    Writes,
    contiguous,
    first_line,
    record_pending,
)
from dbt.adapters.window_views.errors import ModelOutputError
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.plans.batches import RECORD_PROPERTY, BatchSpan
from dbt.adapters.window_views.query import ddl
from dbt.adapters.window_views.query.sqlexpr import DIALECT, to_sql
from dbt.adapters.window_views.records import PendingBatches
from dbt.adapters.window_views.spark.lakehouse import Lakehouse
from dbt.adapters.window_views.storage.table_format import Build

logger = AdapterLogger("WindowViews")


@dataclass(frozen=True)
class FormatWrites:
    """What one such format adds to the shared part: its runtime (its name, how messages name its
    tables), the name of a write conflict in an error's text (None: not one), and its batches
    written, read from the catalog (`written`: adapter, table, batch column -> keys)."""

    runtime: Lakehouse
    conflict: Callable[[str], Optional[str]]
    written: Callable[[Any, str, str], Tuple[str, ...]]


class ReplacedByPredicate:
    """The part: each run of contiguous batches replaced by predicate in one commit."""

    def __init__(self, writes: FormatWrites) -> None:
        self._format = writes

    @property
    def name(self) -> str:
        return self._format.runtime.name

    def holds(self, provider: Optional[str]) -> bool:
        return provider is not None and provider.lower() == self.name

    def written(self, adapter: Any, name: str, column: str) -> Tuple[str, ...]:
        return self._format.written(adapter, name, column)

    def check(self, batch_run: BatchRun, described: Described) -> None:
        """A table of this model not partitioned by its batch column (made or replaced by
        another tool) is refused: replacing a batch would rewrite files of every batch."""
        column = batch_run.column
        if [c.lower() for c in described.partitioned] == [column.lower()]:
            return
        partitioned = (
            f"{self._format.runtime.a_table} partitioned by ({', '.join(described.partitioned)})"
            if described.partitioned
            else f"an unpartitioned {_noun(self._format)}"
        )
        raise ModelOutputError(
            batch_run.plan.model,
            f"its table {batch_run.relation} is {partitioned}, not partitioned by its batch column "
            f"`{column}` (another tool made or replaced it), so a run cannot replace one batch's rows alone",
            f"run it with --full-refresh, which rebuilds the table partitioned by `{column}` from begin",
        )

    def new(self, batch_run: BatchRun, found: Any) -> Table:
        """Nothing is made yet: the table is made whole, with its batches, in one commit (write)."""
        build = swap.table_format(self.name).build(
            batch_run.adapter, batch_run.relation, found, batch_run.location_root
        )
        return Table(str(build.relation), build.location or "", (), PendingBatches(), Rebuild(build, found))

    def write(self, batch_run: BatchRun, table: Table, writes: Writes) -> Dict[str, str]:
        if table.rebuild is not None:
            return _whole(self._format, batch_run, table.rebuild.built, writes)
        return _replace_each(self._format, batch_run, table, writes)

    def into_place(self, batch_run: BatchRun, table: Table) -> None:
        assert table.rebuild is not None
        build, replaces = table.rebuild.built, table.rebuild.replaces
        swap.table_format(self.name).into_place(batch_run.adapter, build, batch_run.relation, replaces)

    def drop(self, batch_run: BatchRun, table: Table) -> None:
        pass  # a rebuild is one commit: one that failed made no table, and left none to drop


def _replace_each(made: FormatWrites, batch_run: BatchRun, table: Table, writes: Writes) -> Dict[str, str]:
    """Each run of contiguous batches replaced in one commit; if that fails, each batch in its own
    (a conflict with another writer is retried so too). The failed ones' keys and errors."""
    adapter, unrecorded = batch_run.adapter, writes.unrecorded
    failures: Dict[str, str] = {}
    for group in contiguous(writes.selection.batches):
        if len(group) > 1:
            try:
                adapter.execute(_replace(table.name, batch_run.column, writes.queries, group))
                continue
            except Exception as exc:  # noqa: BLE001 - each batch then runs alone, and names its own failure
                logger.info(
                    f"{writes.queries.model}: batches {group[0].key} to {group[-1].key} as one failed, so each "
                    f"runs alone: {first_line(exc)}"
                )
        for batch in group:
            try:
                adapter.execute(_replace(table.name, batch_run.column, writes.queries, [batch]))
            except Exception as exc:  # noqa: BLE001 - one batch's failure must not stop the others
                failures[batch.key] = failure(made, exc, table.name)
                if unrecorded is not None:
                    record_pending(adapter, table.name, unrecorded)
                    unrecorded = None
    return failures


def _whole(made: FormatWrites, batch_run: BatchRun, build: Build, writes: Writes) -> Dict[str, str]:
    """The table made with every batch in one commit, its record of pending batches with it. If
    it fails, each batch's rows are computed alone (written nowhere) to name the failing ones."""
    batches = writes.selection.batches
    groups = contiguous(batches)
    rows: Optional[exp.Query] = None
    for group in groups:
        select = _rows(batch_run.column, writes.queries, group)
        rows = select if rows is None else exp.union(rows, select, distinct=False)
    properties = {**batch_run.plan.properties(), COLUMN_PROPERTY: batch_run.column, RECORD_PROPERTY: writes.left}
    try:
        batch_run.adapter.execute(_create(made.runtime.name, batch_run, build, properties, rows))
        return {}
    except Exception as exc:  # noqa: BLE001 - named below, by the batches that fail alone
        whole = failure(made, exc, str(build.relation))
    failures: Dict[str, str] = {}
    if len(batches) > 1:
        logger.info(f"{writes.queries.model}: the table's {len(batches)} batches failed, so each is computed alone")
        for batch in batches:
            try:
                batch_run.adapter.execute(to_sql(_probe(batch_run.column, writes.queries, batch)))
            except Exception as exc:  # noqa: BLE001 - each failing batch is named
                failures[batch.key] = failure(made, exc, str(build.relation))
    return failures or {batch.key: whole for batch in batches}


def _rows(column: str, queries: BatchQueries, group: Sequence[BatchSpan]) -> exp.Select:
    """The rows of contiguous batches computed as one (one read of their widened input), each with
    its batch's key in the batch column, cast to the table's types."""
    span = group[0] if len(group) == 1 else BatchSpan(group[0].start, group[-1].end)
    query = queries.query(span) if len(group) == 1 else queries.query(span, group)
    key = exp.Case(ifs=[exp.If(this=queries.shape.holds(b), true=exp.Literal.string(b.key)) for b in group])
    name = exp.to_identifier(column, quoted=True)
    keyed = ddl.typed(query, queries.output, exp.alias_(key, name))
    # a window the group's read holds but none of its batches owns is no row of theirs
    return exp.select("*").from_(keyed.subquery(internal("keyed"))).where(exp.column(name).is_(exp.null()).not_())


def _replace(name: str, column: str, queries: BatchQueries, group: Sequence[BatchSpan]) -> str:
    """INSERT INTO <table> REPLACE WHERE <column> IN (<keys>) <rows>: one commit."""
    keys = [exp.Literal.string(b.key) for b in group]
    where = exp.In(this=exp.column(exp.to_identifier(column, quoted=True)), expressions=keys)
    return to_sql(exp.Insert(this=ddl.table(name), where=where, expression=_rows(column, queries, group)))


def _create(
    file_format: str, batch_run: BatchRun, build: Build, properties: Dict[str, str], rows: Optional[exp.Query]
) -> str:
    """CREATE [OR REPLACE] TABLE ... USING <file_format> PARTITIONED BY (<column>) [LOCATION] TBLPROPERTIES
    AS <rows>; with no batch, the empty table of the model's columns."""
    column = exp.to_identifier(batch_run.column, quoted=True)
    props: List[exp.Expression] = [
        exp.FileFormatProperty(this=exp.var(file_format)),
        exp.PartitionedByProperty(this=exp.Schema(expressions=[column])),
    ]
    if build.location is not None:
        props.append(exp.LocationProperty(this=exp.Literal.string(build.location)))
    props += [exp.Property(this=exp.Literal.string(k), value=exp.Literal.string(v)) for k, v in properties.items()]
    target: exp.Expression = ddl.table(str(build.relation))
    if rows is None:
        defs = [
            exp.ColumnDef(this=exp.to_identifier(c, quoted=True), kind=exp.DataType.build(kind, dialect=DIALECT))
            for c, kind in [*batch_run.output, (batch_run.column, "string")]
        ]
        target = exp.Schema(this=target, expressions=defs)
    create = exp.Create(
        this=target, kind="TABLE", replace=build.replace, properties=exp.Properties(expressions=props), expression=rows
    )
    return to_sql(create)


def _probe(column: str, queries: BatchQueries, batch: BatchSpan) -> exp.Select:
    """The batch's rows computed and written nowhere: a hash over every column of every row,
    which no optimizer can answer without them."""
    rows = _rows(column, queries, [batch])
    return exp.select(exp.Max(this=exp.Anonymous(this="hash", expressions=[exp.Star()]))).from_(
        rows.subquery(internal("probe"))
    )


def failure(made: FormatWrites, exc: Exception, table: str) -> str:
    """A batch's error in one line; a write conflict named as one, with the fix."""
    line = first_line(exc)
    conflict = made.conflict(str(getattr(exc, "msg", None) or exc))
    if conflict is None:
        return line
    return (
        f"another writer committed to the {_noun(made)} {table} while this batch was written "
        f"({made.runtime.title}'s {conflict}: {line}), so the batch's rows are as they were; fix: let one writer at a "
        "time write the table (one dbt command running the model, no other job writing it), then run the model "
        "again: it redoes this batch"
    )


def _noun(made: FormatWrites) -> str:
    """ "Delta table" of "a Delta table"."""
    return made.runtime.a_table.split(" ", 1)[1]
