"""A rebuild beside the live version (`--full-refresh`, or `on_change='rebuild'` after a change):
the new version gets its own table, late table and checkpoint, is streamed from all input there,
and the catalog tables are pointed at it only once it has caught up.

A model has two slots: version 1 at its own locations (`<alias>`, `<alias>__late`,
`<alias>__checkpoint`), version 2 beside them (`<alias>__v2`, `<alias>__v2__late`,
`<alias>__v2__checkpoint`; a configured checkpoint_location gets `__v2` appended). A rebuild
writes the slot the tables do not read. Its intent record (`rebuild.json` in the new checkpoint,
one whole-file write) makes every step safe to crash in:

- `building`: the new version is being streamed; readers and the live checkpoint are untouched.
  A failed build removes it at once; one that died is removed by the next run.
- `swapping`: the new version has caught up; the next run finishes the swap whatever step it
  stopped at (each step can be done again): the table, then the late table, is pointed at the new
  location (`ALTER TABLE ... SET LOCATION`, columns the model added appended with `ADD COLUMNS`),
  then the table properties that record the live version are set.
- `swapped`: the new version is live; the old version's files are removed by the next run of
  the model, so that a reader that planned its query before the swap can still finish it.

The run lock stays in the checkpoint of slot 1 whichever version is live (runner.py), so a
rebuild, its recovery and a plain run of the same model never run at once.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Dict, List, Optional, Tuple

from pyspark.sql.types import StructType

from dbt.adapters.window_views.query import ddl
from dbt.adapters.window_views.records import RebuildIntent, RebuildStep
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.storage import delta_stream, iceberg_stream, paths
from dbt.adapters.window_views.storage.filesystems import FileSystem
from dbt.adapters.window_views.streaming.commit.commits import read_record, unreadable
from dbt.adapters.window_views.streaming.commit.locations import LOCK, Locations
from dbt.adapters.window_views.streaming.commit.run_context import StreamRun

VERSION_PROPERTY = "window_views.version"
SLOT_TAG = "__v2"
# table properties recording where the live version's files are, read back by the next run
LOCATION_PROPERTY = {"table": "window_views.table_location", "late table": "window_views.late_location"}
CHECKPOINT_PROPERTY = "window_views.checkpoint"


def slot(home: Locations, version: int, configured_checkpoint: bool) -> Locations:
    """Where version 1 (the model's own locations) or version 2 keeps its files."""
    if version == 1:
        return home
    table = paths.sibling(home.table, SLOT_TAG)
    if configured_checkpoint:
        checkpoint = paths.sibling(home.checkpoint, SLOT_TAG)
    else:
        checkpoint = paths.sibling(table, "__checkpoint")
    return Locations(table=table, late=paths.sibling(table, "__late"), checkpoint=checkpoint)


def other(home: Locations, live: Locations, configured_checkpoint: bool) -> Tuple[int, Locations]:
    """The slot a rebuild writes: version 1 unless the live version uses any of its locations
    (a location_root or checkpoint_location changed since: the rebuild moves to slot 1 there)."""
    first = slot(home, 1, configured_checkpoint)
    if {first.table, first.late, first.checkpoint} & {live.table, live.late, live.checkpoint}:
        return 2, slot(home, 2, configured_checkpoint)
    return 1, first


def live_version(properties: Dict[str, str]) -> int:
    return 2 if properties.get(VERSION_PROPERTY) == "2" else 1


def read_intent(model: str, fs: FileSystem, where: Locations) -> Optional[RebuildIntent]:
    try:
        return read_record(fs, where.intent, RebuildIntent, model)
    except storage.CorruptFile as exc:
        raise unreadable(model, exc) from None


def intent(old: Locations, new: Locations, version: int, schema: Any, late_schema: Optional[Any]) -> RebuildIntent:
    """What the swap needs, whatever model the run that finishes it has: the locations and the
    columns of the new tables."""
    return RebuildIntent(
        RebuildStep.BUILDING,
        version,
        old.to_json(),
        new.to_json(),
        schema.json(),
        late_schema.json() if late_schema is not None else None,
    )


def mark(fs: FileSystem, record: RebuildIntent, step: RebuildStep) -> RebuildIntent:
    record = dataclasses.replace(record, step=step)
    storage.write_json(fs, Locations(**record.new).intent, record.to_json())
    return record


def clear(fs: FileSystem, location: str, lock_folder: str) -> None:
    """Remove a version's files at `location`, except the folder of the run lock (slot 1's
    checkpoint, which may be configured inside the location)."""
    if lock_folder == location or lock_folder.startswith(location + "/"):
        rest = lock_folder[len(location) :].strip("/")
        keep = rest.split("/")[0] if rest else LOCK
        storage.remove_children(fs, location, keep=(keep,))
    else:
        fs.delete(location)


def discard(fs: FileSystem, where: Locations, lock_folder: str) -> None:
    """A build that did not finish: its files go, the intent record last (a crash in between
    leaves it, and the next run discards the rest)."""
    for location in (where.table, where.late):
        clear(fs, location, lock_folder)
    for child in fs.list(where.checkpoint):
        entry = paths.join(where.checkpoint, child.name)
        if entry != where.intent and entry != paths.join(lock_folder, LOCK):
            fs.delete(entry)
    fs.delete(where.intent)
    if where.checkpoint != lock_folder:
        fs.delete(where.checkpoint)


def _columns(schema: Any) -> List[Tuple[str, str]]:
    return [(f.name.lower(), f.dataType.simpleString()) for f in schema.fields]


def point(run: StreamRun, table: str, location: str, schema: Any) -> None:
    """Point a catalog table at `location` with the columns `schema`: one ALTER TABLE when the
    columns are the same, then ADD COLUMNS for columns added at the end; other column changes
    (removed, retyped, reordered) or another format (parquet folders, a Delta table: the folder
    says) need the table dropped and created again, a moment in which readers find no table.
    An Iceberg table is its catalog entry's: that entry is made again (iceberg_stream.point)."""
    if iceberg_stream.is_iceberg(run.fs, location):
        iceberg_stream.point(run.spark, run.fs, table, location)
        return
    spark, uri = run.spark, paths.spark_uri(location)
    source = delta_stream.FORMAT if delta_stream.is_delta(run.fs, location) else "parquet"
    if source == delta_stream.FORMAT:
        schema = delta_stream.nullable(schema)
    if not spark.catalog.tableExists(table):
        spark.catalog.createTable(table, path=paths.spark_uri(location), source=source, schema=schema)
        return
    have, want = _columns(spark.table(table).schema), _columns(schema)
    # Delta's SET LOCATION takes the columns of the new folder's log, and only the same ones
    kept = want == have if source == delta_stream.FORMAT else want[: len(have)] == have
    if kept and delta_stream.provider(spark, table) == source:
        spark.sql(ddl.set_location(table, uri))
        added = schema.fields[len(have) :]
        if added:
            spark.sql(ddl.add_columns(table, [(f.name, f.dataType.simpleString()) for f in added]))
    else:
        spark.sql(ddl.drop_table(table, if_exists=False))
        spark.catalog.createTable(table, path=paths.spark_uri(location), source=source, schema=schema)
    spark.catalog.refreshTable(table)


def swap(run: StreamRun, record: RebuildIntent) -> RebuildIntent:
    """Point the tables at the new version and record it live (each step can be done again)."""
    record = mark(run.fs, record, RebuildStep.SWAPPING)
    new = Locations(**record.new)
    point(run, run.target, new.table, StructType.fromJson(json.loads(record.schema)))
    if record.late_schema is not None:
        point(run, run.late_target, new.late, StructType.fromJson(json.loads(record.late_schema)))
    else:  # late_data='drop' now: the old version's late table goes with it
        run.spark.sql(ddl.drop_table(run.late_target))
    record_live(run.spark, run.target, record)
    return mark(run.fs, record, RebuildStep.SWAPPED)


def record_live(spark: Any, target: str, record: RebuildIntent) -> None:
    """The table properties naming the live version and its locations (runner._check_moved)."""
    new = Locations(**record.new)
    properties = {
        "window_views.execution": "streaming",  # lost when the table was created again (point)
        VERSION_PROPERTY: str(record.version),
        LOCATION_PROPERTY["table"]: new.table,
        CHECKPOINT_PROPERTY: new.checkpoint,
    }
    if record.late_schema is not None:
        properties[LOCATION_PROPERTY["late table"]] = new.late
    else:
        spark.sql(ddl.unset_property(target, LOCATION_PROPERTY["late table"]))
    spark.sql(ddl.set_properties(target, properties))


def recover(run: StreamRun, next_slot: Locations, lock_folder: str) -> bool:
    """Finish or discard what an earlier rebuild left, under the run lock (`run.where`: the
    live version). Returns whether a swap was finished here (the tables then read the other
    slot)."""
    pending = read_intent(run.model, run.fs, next_slot)
    if pending is not None:
        if pending.step is RebuildStep.BUILDING:
            discard(run.fs, next_slot, lock_folder)
            return False
        swap(run, pending)
        return True
    retire(run.model, run.fs, run.where, lock_folder)
    return False


def retire(model: str, fs: FileSystem, live: Locations, lock_folder: str) -> None:
    """Remove the version the last swap replaced, then its record (a record still `swapping`
    in the live version's checkpoint was cut short after its last step: the properties that
    name the live version are set last)."""
    done = read_intent(model, fs, live)
    if done is None or done.step is RebuildStep.BUILDING:
        return
    old = Locations(**done.old)
    for location in (old.table, old.late, old.checkpoint):
        clear(fs, location, lock_folder)
    fs.delete(live.intent)
