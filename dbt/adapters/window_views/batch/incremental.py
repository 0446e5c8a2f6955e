"""execution='batch' with batch_size: the plugin drives the batches (dbt does so only for
materialized='incremental'). The table is partitioned by its batch column, one partition per
batch, each partition a directory of its own. A batch writes its rows (batch_reads.py) to a new
directory, then points its partition at it: one catalog statement, so readers see the batch's old
rows or its new ones, on a local disk as on an object store (nothing reads the new directory
before the catalog points at it, so no rename needs to be atomic), and a batch that fails leaves
its partition as it was. The batches a run leaves unfinished are recorded with the table
(records.PendingBatches: with its other properties at the end of the run, and before the batches
where a kill could otherwise lose one, batches.record_first); the next run redoes them.
A full refresh (or a table of another shape) is built beside the table and swapped in once every
batch is written (swap.py, as a batch build), so a failed rebuild leaves the table as it was.
That is parquet's part (`PartitionFolders`); the run itself looks its table's part up by
`file_format` (batch_table.BatchTables): Delta's is delta_batches.py.
"""

from __future__ import annotations

import itertools
import json
import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Dict, List, NoReturn, Optional, Sequence, Set, Tuple
from urllib.parse import unquote

from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError
from sqlglot import exp

from dbt.adapters.window_views.batch import statement, swap, unchanged
from dbt.adapters.window_views.batch.batch_table import (
    COLUMN_PROPERTY,
    BatchQueries,
    BatchRun,
    BatchTables,
    Described,
    Rebuild,
    Table,
    Writes,
    batch_column,
    record_pending,
)
from dbt.adapters.window_views.batch.batch_table import contiguous as _contiguous
from dbt.adapters.window_views.batch.batch_table import first_line as _first_line
from dbt.adapters.window_views.batch.delta_batches import DELTA_BATCHES
from dbt.adapters.window_views.batch.iceberg_batches import ICEBERG_BATCHES
from dbt.adapters.window_views.batch.watermark import WatermarkReached, batch_watermark
from dbt.adapters.window_views.errors import AnalysisError, ModelOutputError, ModelSqlError
from dbt.adapters.window_views.kinds.partials import tvf_panes
from dbt.adapters.window_views.model.config import Emit, naive_utc
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.plans import batch_reads
from dbt.adapters.window_views.plans.batches import (
    RECORD_PROPERTY,
    BatchSpan,
    Requested,
    Selection,
    record_first,
    select,
)
from dbt.adapters.window_views.plans.window_view import WindowViewPlan, summary
from dbt.adapters.window_views.query import ddl
from dbt.adapters.window_views.records import OtherVersion, PendingBatches, PendingBatchesUnreadable
from dbt.adapters.window_views.storage import paths

logger = AdapterLogger("WindowViews")
BATCHES_DIR = internal("batches")  # under the table's location: one directory per batch written
STAGING_DIR = internal("staging")  # under BATCHES_DIR: batches computed as one, before each moves to its own
_STAGED_BY = internal("batch_dir")  # the column their rows are written by: their batch's directory name
# the latest input time a run found: the next run's scan for its own reads only what is not older
LATEST_PROPERTY = "window_views.latest_input_time"
_LATEST_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
_ADDED_PER_STATEMENT = 500  # a new table's partitions per ADD PARTITION statement (a year of hours: 18)
_EPOCH = datetime(1970, 1, 1)


class BatchesFailed(DbtRuntimeError):
    """Some batches of an incremental batch window view failed; the others are written."""


@dataclass(frozen=True)
class BatchesWritten:
    """What a run wrote, for the materialization: the table's properties and comment, dbt's response."""

    properties: Dict[str, str]
    summary: str
    response: AdapterResponse


def run(batch_run: BatchRun, full_refresh: bool, types_of: tvf_panes.TypesOf) -> BatchesWritten:
    """Compute the batches the run owes (batches.select) and replace each one's rows, through
    the part of the table's file format (`tables_of`). `types_of`: the inputs' column types (for
    the pane rewrite). Raises BatchesFailed naming the failed batches."""
    adapter, plan, output = batch_run.adapter, batch_run.plan, batch_run.output
    shape, tables = plan.required_batch_shape, tables_of(plan)
    _partition_column(plan, output)
    found = _in_catalog(adapter, str(batch_run.relation))
    table = _existing(batch_run, found) if not full_refresh else None
    anew = table is None  # a build from begin, which owns the NULL times: counted before its table
    nulls = statement.null_times(batch_run.adapter, batch_run.plan) if anew else None
    if table is None:
        table = tables.new(batch_run, found)
    elif _nothing_new(batch_run, table):
        response = AdapterResponse(_message="0 batch(es) written: no new input since the last run")
        return _written(batch_run, None, table.latest_input, table.record, response)
    latest = _latest_input(adapter, shape.reads, table.latest_input)
    selection, requested = _selection(batch_run, table, latest, full_refresh)
    nulls = nulls if anew else _null_times(batch_run, selection)  # a daily run's: only with begin's batch
    planned = sorted(set(table.record.pending) | {b.key for b in selection.batches})
    closing = _closing(adapter, plan, output)
    # a batch that may own a window W has not closed, or one later input can still grow, is
    # redone by a later run, which closes (or grows) it
    unclosed = {
        b.key for b in selection.batches if shape.growing(b, latest) or (closing is not None and closing.holds_open(b))
    }
    # a rebuild killed part way is dropped by the next one: only the model's table keeps a record
    unrecorded: Optional[str] = None
    if table.rebuild is None:
        unrecorded = _property_value(PendingBatches(tuple(planned)))
        lookback = plan.config.required_batches.lookback
        if record_first(selection.batches, unclosed, table.record, requested.backfill, lookback):
            _set_property(adapter, table.name, RECORD_PROPERTY, unrecorded)
            unrecorded = None
    queries = BatchQueries(plan.model, shape, closing, types_of, output)
    selected = {b.key for b in selection.batches}
    whole = _property_value(_left(planned, selected, unclosed))  # the record if every batch is written
    failures = tables.write(batch_run, table, Writes(selection, queries, unrecorded, whole))
    left = _left(planned, selected - set(failures), unclosed)
    if failures:
        _failed(batch_run, table, selection, failures, _property_value(left))
    if table.rebuild is not None:
        tables.into_place(batch_run, table)
    response = AdapterResponse(_message="; ".join(filter(None, (f"{len(selection.batches)} batch(es) written", nulls))))
    return _written(batch_run, closing, latest, left, response)


def _null_times(batch_run: BatchRun, selection: Selection) -> Optional[str]:
    """What the message of a run on an existing table says of NULL times, counted as a full build
    counts them when the run writes the batch holding begin, which owns the NULL-time rows
    (design §11): a backfill of that batch; every time NULL fails the run before it writes."""
    shape = batch_run.plan.required_batch_shape
    if not any(shape.owns_null_times(b) for b in selection.batches):
        return None
    return statement.null_times(batch_run.adapter, batch_run.plan)


def _left(planned: Sequence[str], done: Set[str], unclosed: Set[str]) -> PendingBatches:
    """The record a run leaves: its planned batches not written, or written but still open."""
    return PendingBatches(tuple(k for k in planned if k not in done or k in unclosed))


def _written(
    batch_run: BatchRun,
    closing: Optional[batch_reads.Closing],
    latest: Optional[datetime],
    left: PendingBatches,
    response: AdapterResponse,
) -> BatchesWritten:
    """What the materialization writes with the table: the plan's properties, the batch column,
    the watermark reached, the record of the batches `left`, and the latest input time."""
    properties = batch_run.plan.properties()
    properties[COLUMN_PROPERTY] = batch_run.column
    if closing is not None:
        properties["window_views.watermark_reached"] = WatermarkReached(closing.reached).describe()
    described = summary(properties)
    # the record goes with the other properties, in the materialization's one property write
    properties[RECORD_PROPERTY] = _property_value(left)
    if latest is not None:
        properties[LATEST_PROPERTY] = latest.strftime(_LATEST_FORMAT)
    if batch_run.inputs_digest is not None:
        properties[unchanged.PROPERTY] = unchanged.InputsRead(batch_run.inputs_digest, left.pending).to_property()
    return BatchesWritten(properties, described, response)


def _nothing_new(batch_run: BatchRun, table: Table) -> bool:
    """Whether the run would read what the last whole run read, and owes only what it left: then
    its batches would come out as they are (unchanged.py). A backfill always runs."""
    if batch_run.inputs_digest is None or table.rebuild is not None or _backfill() != (None, None):
        return False
    now = unchanged.InputsRead(batch_run.inputs_digest, table.record.pending)
    return now.same(table.inputs_read)


def _selection(
    batch_run: BatchRun, table: Table, latest: Optional[datetime], full_refresh: bool
) -> Tuple[Selection, Requested]:
    """The batches the run computes (batches.select), logged with why, and what the invocation
    asked; a `begin` after the latest input time fails the run before any batch."""
    plan = batch_run.plan
    config = plan.config.required_batches
    last_time = None if latest is None else plan.required_batch_shape.last_time(latest)
    start, end = _backfill()
    requested = Requested(full_refresh or not table.written, start, end)
    selection = select(config, last_time, table.written, table.record, requested)
    if not selection.batches and latest is not None and latest < config.begin:
        tables_of(plan).drop(batch_run, table)
        raise ModelOutputError(
            plan.model,
            f"config 'begin' = '{config.begin}' is after the latest input time '{latest}', so no batch has input",
            "set begin at or before the input's first time",
        )
    logger.info(f"{plan.model}: {len(selection.batches)} batch(es), {selection.reason}")
    return selection, requested


def _failed(batch_run: BatchRun, table: Table, selection: Selection, failures: Dict[str, str], left: str) -> NoReturn:
    """Some batches failed: the record of what is left (the model's table only; a rebuild is
    dropped), then BatchesFailed naming them and the first one's error."""
    first_key, first = next(iter(failures.items()))
    if table.rebuild is None:
        _set_property(batch_run.adapter, table.name, RECORD_PROPERTY, left)
    tables_of(batch_run.plan).drop(batch_run, table)
    kept = (
        "the table is as it was before this run: a rebuild replaces it only once every batch is written"
        if table.rebuild is not None
        else "their rows are as they were; the other batches are written, and the next run redoes these"
    )
    raise BatchesFailed(
        f"window_view model '{batch_run.plan.model}': {len(failures)} of {len(selection.batches)} batch(es) failed: "
        f"{', '.join(failures)} ({kept}). The batch {first_key} failed with: {first}"
    )


def _drop_rebuild(adapter: Any, table: Table) -> None:
    """Drop a rebuild that will not finish, its table and its files; the model's table stays."""
    if table.rebuild is not None:
        swap.drop(adapter, table.rebuild.built, table.location)


def _partition_column(plan: WindowViewPlan, output: Sequence[Tuple[str, str]]) -> str:
    """The column the table is partitioned by, which the model's own columns must not name."""
    config = plan.config.required_batches
    column = batch_column(config)
    if any(name.lower() == column.lower() for name, _ in output):
        raise ModelOutputError(
            plan.model,
            f"it selects a column `{column}`, the column an incremental batch window view partitions its table by "
            f"(event_time '{config.event_time}' by batch_size '{config.size}')",
            f"rename the model's column `{column}`",
        )
    return column


def _closing(adapter: Any, plan: WindowViewPlan, output: Sequence[Tuple[str, str]]) -> Optional[batch_reads.Closing]:
    """emit='on_window_close': the watermark the inputs reached (watermark.py), as batch builds it."""
    if plan.config.emit is not Emit.ON_WINDOW_CLOSE:
        return None
    watermark = plan.config.required_watermark
    try:
        reached = batch_watermark(adapter, plan.inputs, watermark)
    except AnalysisError as exc:
        raise ModelSqlError.from_analysis(
            plan.model, exc, "see docs/configuration.md on emit='on_window_close' in batch"
        ) from exc
    return batch_reads.Closing(watermark.column, reached.micros, tuple(c for c, _ in output))


class PartitionFolders:
    """Parquet's part (batch_table.BatchTables): a partition per batch, each a directory of its
    own; a batch writes a new directory and its partition is pointed at it; a first run's
    partitions are added together after its last batch; a rebuild is a table beside the model's,
    swapped in by renames (swap.py)."""

    def holds(self, provider: Optional[str]) -> bool:
        return provider is None or provider.lower() == "parquet"

    def check(self, batch_run: BatchRun, described: Described) -> None:
        pass  # a table partitioned otherwise fails its first partition statement, in Spark's words

    def written(self, adapter: Any, name: str, column: str) -> Tuple[str, ...]:
        """The batches the table holds: SHOW PARTITIONS, `column=<escaped value>` a row."""
        _, rows = adapter.execute(ddl.show_partitions(name), fetch=True)
        return tuple(sorted(_partition_value(str(row[0]), column) for row in rows.rows))

    def new(self, batch_run: BatchRun, found: Any) -> Table:
        return _create(batch_run, found)

    def write(self, batch_run: BatchRun, table: Table, writes: Writes) -> Dict[str, str]:
        return _write_batches(batch_run, table, writes)

    def into_place(self, batch_run: BatchRun, table: Table) -> None:
        assert table.rebuild is not None
        swap.into_place(
            batch_run.adapter, table.rebuild.built, batch_run.relation, table.rebuild.replaces, batch_run.location_root
        )

    def drop(self, batch_run: BatchRun, table: Table) -> None:
        _drop_rebuild(batch_run.adapter, table)


PARTITION_FOLDERS = PartitionFolders()
TABLES: Dict[str, BatchTables] = {tables.name: tables for tables in (DELTA_BATCHES, ICEBERG_BATCHES)}


def tables_of(plan: WindowViewPlan) -> BatchTables:
    """The part that keeps the model's table in its file_format (batch_table.BatchTables)."""
    return TABLES.get(plan.config.file_format.value, PARTITION_FOLDERS)


def _write_alone(adapter: Any, queries: BatchQueries, batch: BatchSpan, location: str) -> None:
    """The batch computed alone, written to its new directory."""
    adapter.execute(ddl.write_directory(location, queries.query(batch), queries.output))


def _staged(
    adapter: Any, queries: BatchQueries, batches: Sequence[BatchSpan], batches_dir: str, names: Dict[str, str]
) -> bool:
    """Contiguous batches computed as one, over one read of their widened input, in one Spark
    job whose rows go to a directory per batch, each then moved to its batch's new directory
    (`names`, by key, in `batches_dir`): a first run's 30 batches cost about one build, not 30.
    False where nothing was written: one batch, no SparkSession to write with, or a failure
    (each batch then computes its own, so a failure stays the failing batch's alone)."""
    if len(batches) < 2:
        return False
    directory = exp.Case(
        ifs=[exp.If(this=queries.shape.holds(b), true=exp.Literal.string(names[b.key])) for b in batches]
    )
    sql = ddl.typed(
        queries.query(BatchSpan(batches[0].start, batches[-1].end), batches),
        queries.output,
        exp.alias_(directory, _STAGED_BY),
    )
    staging = f"{batches_dir}/{STAGING_DIR}-{uuid.uuid4().hex[:12]}"
    try:
        if not adapter.write_partitioned(sql, staging, _STAGED_BY):
            return False
        adapter.move_directories(
            [(f"{staging}/{_STAGED_BY}={names[b.key]}", f"{batches_dir}/{names[b.key]}") for b in batches]
        )
    except Exception as exc:  # noqa: BLE001 - each batch then runs alone, and names its own failure
        first, last = batches[0].key, batches[-1].key
        logger.info(f"{queries.model}: batches {first} to {last} as one failed, so each runs alone: {_first_line(exc)}")
        for b in batches:
            adapter.remove_location(f"{batches_dir}/{names[b.key]}")
        return False
    finally:
        adapter.remove_location(staging)
    return True


def _write_batches(batch_run: BatchRun, table: Table, writes: Writes) -> Dict[str, str]:
    """Each batch written in turn, in time order (batches.record_first counts on it); the failed
    ones' keys and first error lines. `writes.unrecorded`: the record of every planned batch, when
    the run has not written it: the first failure does, as a batch after it may be the last written.
    A table without partitions (a first run, a rebuild) gets its batches' partitions in one
    statement after the last batch: no reader waits for them one by one, and a kill before it
    leaves no batch written, so the next run starts again from begin."""
    adapter, column, unrecorded = batch_run.adapter, batch_run.column, writes.unrecorded
    failures: Dict[str, str] = {}
    written = set(table.written)
    batches_dir = f"{table.location}/{BATCHES_DIR}"
    # one listing for every batch's old directories (and a killed run's), not a DESCRIBE per batch
    listed = adapter.list_location(batches_dir) if table.written else []
    # a killed run's staging directories (_staged): no batch's rows are in them
    _remove_named(adapter, batches_dir, listed, f"{STAGING_DIR}-")
    added: List[Tuple[str, str]] = []
    for group in _contiguous(writes.selection.batches):
        names = {b.key: f"{_prefix(b)}-{uuid.uuid4().hex[:12]}" for b in group}
        staged = _staged(adapter, writes.queries, group, batches_dir, names)
        for batch in group:
            location = f"{batches_dir}/{names[batch.key]}"
            try:
                if not staged:
                    _write_alone(adapter, writes.queries, batch, location)
                if not written:
                    added.append((batch.key, location))
                else:
                    _point(batch_run, table.name, batch.key, location, batch.key in written)
            except Exception as exc:  # noqa: BLE001 - one batch's failure must not stop the others
                failures[batch.key] = _first_line(exc)
                adapter.remove_location(location)
                if unrecorded is not None:
                    record_pending(adapter, table.name, unrecorded)
                    unrecorded = None
                continue
            # the partition points at `location` now: the batch's other directories are no one's
            _remove_named(adapter, batches_dir, listed, f"{_prefix(batch)}-")
    for start in range(0, len(added), _ADDED_PER_STATEMENT):
        adapter.execute(ddl.add_partitions(table.name, column, added[start : start + _ADDED_PER_STATEMENT]))
    return failures


def _remove_named(adapter: Any, batches_dir: str, listed: Sequence[str], prefix: str) -> None:
    """Remove the directories of `listed` (in `batches_dir`) whose names start with `prefix`."""
    for name in listed:
        if name.startswith(prefix):
            adapter.remove_location(f"{batches_dir}/{name}")


def _prefix(batch: BatchSpan) -> str:
    """The start of the names of a batch's directories."""
    return batch.start.strftime("%Y%m%dT%H%M%S")


def _point(batch_run: BatchRun, name: str, key: str, location: str, exists: bool) -> None:
    """The batch's partition (of the table `name`) pointed at its new directory: one catalog statement."""
    if exists:
        batch_run.adapter.execute(ddl.set_partition_location(name, batch_run.column, key, location))
    else:
        batch_run.adapter.execute(ddl.add_partitions(name, batch_run.column, [(key, location)]))


def _in_catalog(adapter: Any, name: str) -> Any:
    """The relation the catalog holds under `name` (`schema.identifier`), or None."""
    schema, _, identifier = name.rpartition(".")
    return adapter.get_relation(database=None, schema=schema or None, identifier=identifier)


def _existing(batch_run: BatchRun, found: Any) -> Optional[Table]:
    """The table of an earlier run (`found`) with the same batch column in the model's file
    format, or None (a first run; a table of another shape or format is rebuilt): two reads, one
    DESCRIBE (columns, location, properties) and one SHOW PARTITIONS."""
    if found is None:
        return None
    adapter, plan, column, output = batch_run.adapter, batch_run.plan, batch_run.column, batch_run.output
    name = str(batch_run.relation)
    described = _describe(adapter, name)
    details = described.details
    properties = details.get("Table Properties", "")
    tables = tables_of(plan)
    if _batch_column(properties) != column or not tables.holds(details.get("Provider")):
        return None
    have = [c.lower() for c in described.columns if c.lower() != column.lower()]
    want = [c.lower() for c, _ in output]
    if have != want:
        raise ModelOutputError(
            plan.model,
            f"its columns ({', '.join(want)}) differ from its table's ({', '.join(have)}), and a run replaces only "
            "some batches",
            "run it with --full-refresh, which recomputes every batch from begin",
        )
    tables.check(batch_run, described)
    written = tables.written(adapter, name, column)
    record = _record(properties, plan.model)
    location = _normalized(name, details.get("Location"))
    start = _property_start(properties, unchanged.PROPERTY)
    read = None if start is None else unchanged.InputsRead.from_property(re.split(r"[,\]]", properties[start:])[0])
    return Table(name, location, written, record, latest_input=_latest(properties), inputs_read=read)


def _partition_value(row: str, column: str) -> str:
    """A batch key from SHOW PARTITIONS: a Hive table's `column=<escaped value>`, Delta's value."""
    prefix = f"{column}="
    return unquote(row[len(prefix) :]) if row.lower().startswith(prefix.lower()) else row


def _describe(adapter: Any, name: str) -> Described:
    """One DESCRIBE TABLE EXTENDED: the columns (the rows before the first blank or `#` one, as
    dbt-spark reads them), the table's details by name (Location, Table Properties, ...), and
    the partition columns (the rows after `# col_name` in `# Partition Information`)."""
    _, table = adapter.execute(ddl.describe_extended(name), fetch=True)
    rows = [(str(row[0] or "").strip(), str(row[1] or "").strip()) for row in table.rows]
    end = next((i for i, (key, _) in enumerate(rows) if not key or key.startswith("#")), len(rows))
    keys = [key for key, _ in rows]
    section = keys.index("# Partition Information") + 1 if "# Partition Information" in keys else len(keys)
    partitioned = []
    if keys[section : section + 1] == ["# col_name"]:
        partitioned = list(itertools.takewhile(lambda key: key and not key.startswith("#"), keys[section + 1 :]))
    return Described([key for key, _ in rows[:end]], dict(rows[end + 1 :]), partitioned)


def _property_start(properties: str, key: str) -> Optional[int]:
    """Where `key`'s value starts in Spark's Table Properties row, `[k1=v1, k2=v2]` (Delta's:
    `[k1=v1,k2=v2]`; values as written: one may hold `, x=`, so each value is read by its own
    form from its start)."""
    found = re.search(rf"(?:^\[|, ?){re.escape(key)}=", properties)
    return None if found is None else found.end()


def _batch_column(properties: str) -> Optional[str]:
    """The batch column the table was made for (a column name: it ends at the first other character)."""
    start = _property_start(properties, COLUMN_PROPERTY)
    found = None if start is None else re.match(r"[A-Za-z0-9_]*", properties[start:])
    return None if found is None else found.group(0)


def _latest(properties: str) -> Optional[datetime]:
    """The latest input time the last run recorded (None: none, or not as this version writes it)."""
    start = _property_start(properties, LATEST_PROPERTY)
    found = None if start is None else re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}", properties[start:])
    return None if found is None else datetime.strptime(found.group(0), _LATEST_FORMAT)


def _record(properties: str, model: str) -> PendingBatches:
    """The record (JSON), or an empty one where there is none. One this version cannot read (not
    JSON, another version's) fails the run: the batches it holds would otherwise never be redone."""
    start = _property_start(properties, RECORD_PROPERTY)
    if start is None:
        return PendingBatches()
    try:
        data, _ = json.JSONDecoder().raw_decode(properties, start)
        if not isinstance(data, dict):
            raise TypeError(f"a JSON {type(data).__name__}, not an object")
        return PendingBatches.from_json(data)
    except OtherVersion as exc:
        raise PendingBatchesUnreadable.other_version(model, RECORD_PROPERTY, exc.found) from None
    except (ValueError, KeyError, TypeError):
        raise PendingBatchesUnreadable(model, RECORD_PROPERTY, "does not read as this version writes it") from None


def _property_value(record: PendingBatches) -> str:
    """The record as its table property's value."""
    return json.dumps(record.to_json())


def _create(batch_run: BatchRun, found: Any) -> Table:
    """A new empty table: under the model's name on a first run; beside `found` (a full refresh,
    or a table of another shape), to replace it once every batch is written (swap.into_place)."""
    adapter, relation, location_root = batch_run.adapter, batch_run.relation, batch_run.location_root
    column, output = batch_run.column, batch_run.output
    beside = relation if found is None else swap.beside(adapter, relation, location_root)
    suffix = "" if found is None else f"-{uuid.uuid4().hex[:12]}"
    location = None if location_root is None else f"{location_root}/{relation.identifier}/batches{suffix}"
    properties = {COLUMN_PROPERTY: column}
    adapter.execute(ddl.create_partitioned(str(beside), output, column, location, properties))
    rebuild = None if found is None else Rebuild(beside, found)
    return Table(str(beside), _location(adapter, str(beside)), (), PendingBatches(), rebuild)


def _location(adapter: Any, name: str) -> str:
    # DESCRIBE EXTENDED: dbt's relation cache does not know a new table
    return _normalized(name, adapter.table_location(name))


def _normalized(name: str, location: Optional[str]) -> str:
    """The table's location as the plugin's paths are written, or a failure naming the table."""
    if not location:
        raise DbtRuntimeError(f"Spark gives no location for the table {name}")
    return str(paths.normalize(location))


def _set_property(adapter: Any, name: str, key: str, value: str) -> None:
    adapter.execute(ddl.set_properties(name, {key: value}))


def _latest_input(adapter: Any, reads: Tuple[batch_reads.Read, ...], last: Optional[datetime]) -> Optional[datetime]:
    """The latest time over the reads. Input only grows, mostly: so first over the rows at or
    after `last` (the last run's latest, None: unknown), and over all rows if there are none
    there (input rewritten, or older than recorded), which makes any `last` give the true latest."""
    found = None if last is None else _max_time(adapter, reads, (last - _EPOCH) // timedelta(microseconds=1))
    return found if found is not None else _max_time(adapter, reads, None)


def _max_time(adapter: Any, reads: Tuple[batch_reads.Read, ...], since: Optional[int]) -> Optional[datetime]:
    _, table = adapter.execute(batch_reads.latest_input_sql(reads, since), fetch=True)
    value = table.rows[0][0] if table.rows else None
    return None if value is None else _EPOCH + timedelta(microseconds=int(value))


def _backfill() -> Tuple[Optional[datetime], Optional[datetime]]:
    """dbt's --event-time-start/--event-time-end of this invocation."""
    from dbt.flags import get_flags  # dbt-core's invocation flags: the CLI's, as the run has them

    flags = get_flags()
    start, end = getattr(flags, "EVENT_TIME_START", None), getattr(flags, "EVENT_TIME_END", None)
    return (None if start is None else naive_utc(start)), (None if end is None else naive_utc(end))
