"""A streaming window view's table and late table as Apache Iceberg tables: each micro-batch's
rows reach a table in one Iceberg snapshot whose summary carries the stream's id and the batch
(`COMMIT_PROPERTY`), and a batch whose commit a snapshot of the table already carries is not
written again, so a batch replayed after a kill commits nothing twice.

The stream's id is the streaming query's id (delta_stream.query_id: Spark's checkpoint keeps it,
a new checkpoint has a new one), so a rebuilt stream's batch 0 is never taken for the old one's.

Unlike a Delta table, an Iceberg table is written through its catalog entry (the metastore holds
the pointer to its current metadata file), so each table's newest metadata names its catalog
table (`TABLE_PROPERTY`): the model's table, or during a rebuild a table of the build's own
(`build_table`) that the swap replaces by the model's table registered on the same metadata
(`point`). Staging is Delta's (delta_stream.StagedCommit): appended, or the hours of the key the
batch rewrites replaced by one MERGE that inserts the staged rows and deletes the old rows of
those hours, or a Top-N's changed keys' rows replaced by one MERGE (delta_stream.merge_keys). A MERGE takes no write options, so the snapshot property is a setting of a session
of its own (`spark.sql.iceberg.snapshot-property.*`), which no other write of the user's sees."""

from __future__ import annotations

import hashlib
from typing import Any, List, Optional

from pyspark.sql import functions as F
from pyspark.sql.types import StructType
from sqlglot import exp

from dbt.adapters.window_views.errors import StorageError
from dbt.adapters.window_views.query import ddl, sqlexpr
from dbt.adapters.window_views.records import BatchId
from dbt.adapters.window_views.spark import lakehouse
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.storage import paths
from dbt.adapters.window_views.storage.delta_stream import COMMIT_FILE, StagedCommit, merge_keys, nullable
from dbt.adapters.window_views.storage.filesystems import FileSystem
from dbt.adapters.window_views.storage.iceberg import METADATA, METADATA_FILE

FORMAT = "iceberg"
TABLE_PROPERTY = "window_views.stream_table"  # the catalog table a stream writes this table through
COMMIT_PROPERTY = "window_views.commit"  # a snapshot's: `<query id>/<batch id>`
SESSION_PROPERTY = f"spark.sql.iceberg.snapshot-property.{COMMIT_PROPERTY}"
BUILD_PREFIX = "wv_build_"
# a named parameter each: the catalog procedure takes its arguments as values, nothing is spliced
REGISTER = "CALL spark_catalog.system.register_table(table => :table, metadata_file => :metadata)"
_INDEX = "index"


def commit_id(query_id: str, batch: BatchId) -> str:
    """What a batch's snapshot carries in its summary: the stream's id and the batch's."""
    return f"{query_id}/{batch}"


def newest_metadata(fs: FileSystem, location: str) -> Optional[str]:
    """The newest metadata file of the Iceberg table at `location` (Iceberg numbers them, each
    commit one more); None: no Iceberg table there."""
    folder = paths.join(location, METADATA)
    if not fs.exists(folder):
        return None
    numbered = [(int(m.group(1)), e.name) for e in fs.list(folder) if (m := METADATA_FILE.match(e.name))]
    return paths.join(folder, max(numbered)[1]) if numbered else None


def is_iceberg(fs: FileSystem, location: str) -> bool:
    return newest_metadata(fs, location) is not None


def table_of(fs: FileSystem, location: str) -> str:
    """The catalog table the Iceberg table at `location` is written through."""
    found = newest_metadata(fs, location)
    metadata = storage.read_json(fs, found) if found is not None else None
    name = ((metadata or {}).get("properties") or {}).get(TABLE_PROPERTY)
    if not isinstance(name, str):
        raise StorageError(f"{location} holds no Iceberg table of a streaming window view ({TABLE_PROPERTY})")
    return name


def build_table(spark: Any, location: str) -> str:
    """A rebuild's own catalog table for its new version at `location` (the same name for the
    same folder, so a discarded attempt's is found and dropped)."""
    digest = hashlib.sha1(paths.normalize(location).encode()).hexdigest()[:16]
    return f"{spark.catalog.currentDatabase()}.{BUILD_PREFIX}{digest}"


def create(spark: Any, fs: FileSystem, table: str, location: str, schema: StructType) -> None:
    """The catalog table `table` over the Iceberg table at `location`: the one there (its
    catalog entry was lost: registered again, rows and all), else a new empty one."""
    found = newest_metadata(fs, location)
    if found is None:
        empty = spark.createDataFrame([], nullable(schema)).writeTo(table).using(FORMAT)
        empty.tableProperty("location", paths.spark_uri(location)).tableProperty(TABLE_PROPERTY, table).create()
        return
    spark.sql(REGISTER, args={"table": table, "metadata": paths.spark_uri(found)})
    _name(spark, fs, table, location)


def _name(spark: Any, fs: FileSystem, table: str, location: str) -> None:
    """The table at `location` names `table` as its catalog table (a metadata commit, no snapshot)."""
    try:
        named = table_of(fs, location)
    except StorageError:
        named = None
    if named != table:
        spark.sql(ddl.set_properties(table, {TABLE_PROPERTY: table}))


def catalog_location(spark: Any, table: str) -> Optional[str]:
    """The folder of catalog table `table`; None: no such table."""
    if not spark.catalog.tableExists(table):
        return None
    rows = [r for r in spark.sql(ddl.describe_extended(table)).collect() if r[0] == "Location"]
    return paths.normalize(rows[0][1]) if rows else None


def point(spark: Any, fs: FileSystem, table: str, location: str) -> None:
    """Make catalog table `table` the Iceberg table at `location` (a rebuild's swap): the table
    it was and the build's own catalog table dropped (Iceberg's session catalog keeps their
    files), `table` registered on the new table's newest metadata. Each step can be done again;
    between the drop and the register readers find no table."""
    if catalog_location(spark, table) != paths.normalize(location):
        build = table_of(fs, location)
        metadata = newest_metadata(fs, location)
        spark.sql(ddl.drop_table(table))
        if build != table:
            spark.sql(ddl.drop_table(build))
        spark.sql(REGISTER, args={"table": table, "metadata": paths.spark_uri(str(metadata))})
    _name(spark, fs, table, location)
    spark.catalog.refreshTable(table)


def start(spark: Any, fs: FileSystem, location: str, schema: StructType) -> None:
    """A rebuild's new, empty Iceberg table at `location`, written through a catalog table of
    its own until the swap (an earlier attempt's dropped first)."""
    build = build_table(spark, location)
    spark.sql(ddl.drop_table(build))
    create(spark, fs, build, location, schema)


def fresh(spark: Any, fs: FileSystem, location: str) -> Any:
    """The Iceberg table at `location` as its latest snapshot has it: the session's catalog
    caches a table, and commits are made in sessions of their own."""
    name = table_of(fs, location)
    spark.catalog.refreshTable(name)
    return spark.table(name)


def indices(table: Any, key: exp.Expr, size: int) -> List[int]:
    """The intervals of `size` of the key that the table's rows are in."""
    index = sqlexpr.to_sql(exp.alias_(sqlexpr.floor_index(key, size), _INDEX))
    rows = table.selectExpr(index).distinct().collect()
    return [row[_INDEX] for row in rows if row[_INDEX] is not None]


def committed(spark: Any, table: str, commit: str) -> bool:
    """Whether a snapshot of the table carries `commit` in its summary."""
    snapshots = spark.table(f"{table}.snapshots").select(F.col("summary").getItem(COMMIT_PROPERTY).alias("c"))
    return snapshots.where(F.col("c") == commit).limit(1).count() > 0


def commit_staged(fs: FileSystem, spark: Any, staging: str, location: str, commit: str) -> None:
    """Write the parquet files staged at `staging` into the Iceberg table at `location` in one
    snapshot carrying `commit`, as the staged commit record says (none: append); nothing when a
    snapshot carries `commit` already, or nothing is staged and nothing replaced, or there is no
    staging (removed once committed)."""
    if not fs.exists(staging):
        return
    recorded = storage.read_json(fs, paths.join(staging, COMMIT_FILE))
    staged_commit = StagedCommit.from_json(recorded) if recorded is not None else StagedCommit()
    replace = staged_commit.replace_where
    staged = storage.staged_buckets(fs, staging)
    if not staged and replace is None and not staged_commit.keys:
        return
    name = table_of(fs, location)
    session = spark.newSession()  # its settings are its own: the snapshot property reaches this write only
    session.conf.set(SESSION_PROPERTY, commit)
    if committed(session, name, commit):
        return
    if staged_commit.keys:  # a Top-N's: its keys' rows replaced, in one MERGE
        merge_keys(fs, session, staging, name, staged_commit.keys)
        spark.catalog.refreshTable(name)
        return
    columns = session.table(name).schema
    rows = session.read.parquet(paths.spark_uri(staging)).select(*columns.names) if staged else None
    rows = rows if rows is not None else session.createDataFrame([], columns)
    if replace is None:
        rows.writeTo(name).append()
    else:
        merge = rows.mergeInto(name, F.lit(False)).whenNotMatched().insertAll()
        merge.whenNotMatchedBySource(F.expr(sqlexpr.to_sql(replace))).delete().merge()
    spark.catalog.refreshTable(name)


def truncate(spark: Any, fs: FileSystem, location: str) -> None:
    """Every row of the Iceberg table at `location` removed, in one snapshot."""
    name = table_of(fs, location)
    session = spark.newSession()
    session.createDataFrame([], session.table(name).schema).writeTo(name).overwrite(F.lit(True))
    spark.catalog.refreshTable(name)


def has_iceberg(spark: Any) -> bool:
    """Whether the session has Iceberg's SQL extension (the profile's lakehouse: iceberg)."""
    return lakehouse.has_extension(
        {lakehouse.EXTENSIONS: spark.conf.get(lakehouse.EXTENSIONS, None)}, lakehouse.ICEBERG
    )
