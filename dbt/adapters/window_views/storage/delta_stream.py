"""A streaming window view's table and late table as Delta Lake tables: each micro-batch's rows
reach a table in one Delta commit, made idempotent by Delta's own `txnAppId` / `txnVersion`
write options, so a batch replayed after a kill commits nothing twice.

The app id is the streaming query's id, which Spark keeps in the checkpoint's `metadata` file:
the same across restarts, a new one for a new checkpoint (a rebuild's slot, a deleted
checkpoint), so a new stream's batch 0 is never mistaken for an old stream's. The version is the
batch's place in the commit log (commits.order): Spark's batch N is N * IDLE_STEPS, its k-th idle
step N * IDLE_STEPS + k, so both increase as the log does, which Delta's check needs (a version
at or below the last one committed for the app id is skipped).

A batch's rows are staged as parquet first (output.py's staging folder), with a record of what
they do to the table beside them (`StagedCommit`); after the batch's READY record, publishing
writes them from there in one commit: appended (on_window_close, late rows), or replacing the
hours of the key the batch rewrites through `replaceWhere` (on_update): Delta deletes the rows of
those hours and adds the staged ones in one commit, and checks that every staged row is in
them; or, for a keyed Top-N, replacing the rows of the keys the batch changed by one MERGE
(`merge_keys`), made idempotent by Delta's txn settings of a session of its own. So, as for
parquet, nothing reaches a table before the READY record, and a replay after it commits what
was staged or, when Delta has it already, nothing."""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import Any, Dict, Iterable, List, Optional, Tuple

from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType
from sqlglot import exp

from dbt.adapters.window_views.errors import StorageError
from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.query import ddl, sqlexpr
from dbt.adapters.window_views.records import RECORD_VERSION, VERSION, BatchId, Json, OtherVersion
from dbt.adapters.window_views.spark.lakehouse import DELTA_EXTENSION, EXTENSIONS
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.storage import paths
from dbt.adapters.window_views.storage.delta import LOG
from dbt.adapters.window_views.storage.filesystems import FileSystem

FORMAT = "delta"
IDLE_STEPS = 1 << 20  # idle steps one Spark batch may be followed by: their versions lie between N's and N + 1's
_INDEX = "index"
TXN_CONF = "spark.databricks.delta.write"  # Delta's idempotent-DML settings: txnAppId, txnVersion
COMMIT_FILE = f"{internal('delta_commit')}.json"  # beside a batch's staged rows: Spark's readers skip `_` files
KEYS_FOLDER = internal("keys_replaced")  # a Top-N batch's keys whose rows it replaces, beside its rows
_KEY_ROW = internal("key_row")  # in a keys MERGE's source: true for a key to delete, false for a row


@dataclass(frozen=True)
class Txn:
    """Delta's idempotent-write identity of one batch's commit into one table."""

    app_id: str
    version: int

    def options(self) -> Dict[str, str]:
        return {"txnAppId": self.app_id, "txnVersion": str(self.version)}


def txn_version(batch: BatchId) -> int:
    """The batch's Delta txn version: increasing in the commit log's order (Spark's batch N,
    then its idle steps N.1, N.2, ...)."""
    spark_batch, _, step = str(batch).partition(".")
    k = int(step or 0)
    if k >= IDLE_STEPS:
        raise ValueError(f"idle step {batch} is past the {IDLE_STEPS - 1} idle steps a Delta txn version has room for")
    return int(spark_batch) * IDLE_STEPS + k


def query_id(fs: FileSystem, spark_checkpoint: str) -> str:
    """The streaming query's id, from Spark's checkpoint (`metadata`, written as the query starts)."""
    found = storage.read_json(fs, paths.join(spark_checkpoint, "metadata"))
    if found is None or not isinstance(found.get("id"), str):
        raise StorageError(f"{paths.join(spark_checkpoint, 'metadata')} has no streaming query id")
    return found["id"]


def txn(fs: FileSystem, spark_checkpoint: str, batch: BatchId) -> Txn:
    return Txn(query_id(fs, spark_checkpoint), txn_version(batch))


def is_delta(fs: FileSystem, location: str) -> bool:
    """Whether a folder holds a Delta table (its log)."""
    return fs.exists(paths.join(location, LOG))


def hours_replaced(key: exp.Expr, size: int, indices: Iterable[int]) -> exp.Expr:
    """The replaceWhere condition of a batch that rewrites the intervals of `size` of the key
    with these `indices`."""
    found = sorted(set(indices))
    return exp.In(this=sqlexpr.floor_index(key, size), expressions=[exp.Literal.number(i) for i in found])


def indices(spark: Any, location: str, key: exp.Expr, size: int) -> List[int]:
    """The intervals of `size` of the key that the table's rows are in (one pass over the column
    the key reads)."""
    index = sqlexpr.to_sql(exp.alias_(sqlexpr.floor_index(key, size), _INDEX))
    rows = spark.read.format(FORMAT).load(paths.spark_uri(location)).selectExpr(index).distinct().collect()
    return [row[_INDEX] for row in rows if row[_INDEX] is not None]


def rows_where(spark: Any, location: str, condition: exp.Expr) -> Any:
    """The table's rows where `condition` holds (Delta skips the files its statistics rule out)."""
    return spark.read.format(FORMAT).load(paths.spark_uri(location)).where(sqlexpr.to_sql(condition))


def nullable(schema: StructType) -> StructType:
    """The columns as Delta keeps those a write creates: every one nullable (a catalog table
    made with NOT NULL columns would refuse to point at such a folder)."""
    return StructType([StructField(f.name, f.dataType, True, f.metadata) for f in schema.fields])


def create_empty(spark: Any, location: str, schema: StructType) -> None:
    """An empty Delta table at `location` (its version 0) unless one is there: a table a
    catalog table can point at before any batch wrote to it."""
    spark.createDataFrame([], nullable(schema)).write.format(FORMAT).mode("append").save(paths.spark_uri(location))


def truncate(spark: Any, location: str) -> None:
    """Every row of the table removed, in one commit (readers of older versions keep theirs)."""
    table = spark.read.format(FORMAT).load(paths.spark_uri(location))
    spark.createDataFrame([], table.schema).write.format(FORMAT).mode("overwrite").save(paths.spark_uri(location))


@dataclass(frozen=True)
class StagedCommit:
    """What a batch's staged rows do to the Delta table, written beside them before its READY
    record (`COMMIT_FILE` in the staging folder) so that a replay commits exactly this: append,
    or replace the intervals of `size` of the key (SQL over the table's columns) with these
    `indices`."""

    key: Optional[str] = None  # None: append
    size: int = 0
    indices: Tuple[int, ...] = ()
    keys: Tuple[str, ...] = ()  # a Top-N's: replace the rows of the keys staged in KEYS_FOLDER

    @classmethod
    def replacing(cls, key: exp.Expr, size: int, found: Iterable[int]) -> "StagedCommit":
        return cls(sqlexpr.to_sql(key), size, tuple(sorted(set(found))))

    @property
    def replace_where(self) -> Optional[exp.Expr]:
        return hours_replaced(sqlexpr.parse(self.key), self.size, self.indices) if self.key is not None else None

    def to_json(self) -> Json:
        found = {"key": self.key, "size": self.size, "indices": list(self.indices), "keys": list(self.keys)}
        return {VERSION: RECORD_VERSION, **found}

    @classmethod
    def from_json(cls, data: Json) -> "StagedCommit":
        if data.get(VERSION) != RECORD_VERSION:
            raise OtherVersion(data.get(VERSION))
        return cls(data["key"], data["size"], tuple(data["indices"]), tuple(data.get("keys", ())))


def stage_commit(fs: FileSystem, staging: str, commit: StagedCommit) -> None:
    """Record beside a batch's staged rows what they do to the table (one whole-file write)."""
    storage.write_json(fs, paths.join(staging, COMMIT_FILE), commit.to_json())


def commit_staged(fs: FileSystem, spark: Any, staging: str, location: str, txn: Txn) -> None:
    """Write the parquet files staged at `staging` (partitioned by their bucket) into the Delta
    table at `location` in one commit, as the staged commit record says (none: append). Nothing
    staged and nothing replaced, or no staging (removed once committed): no commit."""
    if not fs.exists(staging):
        return
    recorded = storage.read_json(fs, paths.join(staging, COMMIT_FILE))
    commit = StagedCommit.from_json(recorded) if recorded is not None else StagedCommit()
    if commit.keys:
        session = spark.newSession()  # the txn settings reach this MERGE only (a MERGE takes no options)
        for name, value in txn.options().items():
            session.conf.set(f"{TXN_CONF}.{name}", value)
        merge_keys(fs, session, staging, f"{FORMAT}.`{paths.spark_uri(location)}`", commit.keys)
        return
    replace = commit.replace_where
    staged = storage.staged_buckets(fs, staging)
    if not staged and replace is None:
        return
    table = spark.read.format(FORMAT).load(paths.spark_uri(location)).schema
    if staged:
        rows = spark.read.parquet(paths.spark_uri(staging)).select(*table.names)
    else:
        rows = spark.createDataFrame([], table)
    writer = rows.write.format(FORMAT).options(**txn.options())
    if replace is None:
        writer.mode("append").save(paths.spark_uri(location))
    else:
        writer.mode("overwrite").option("replaceWhere", sqlexpr.to_sql(replace)).save(paths.spark_uri(location))


def stage_keys(staging: str, keys: Any) -> None:
    """Stage the keys (a frame of the key columns) whose rows a Top-N batch replaces."""
    keys.write.mode("overwrite").parquet(paths.join(staging, KEYS_FOLDER))


def merge_keys(fs: FileSystem, spark: Any, staging: str, table: str, keys: Tuple[str, ...]) -> None:
    """In one MERGE into catalog table `table`: the rows of the keys staged in KEYS_FOLDER
    deleted, the staged rows inserted (the source's columns renamed, so the ON condition names
    the target's alone). Nothing staged at all: no commit."""
    staged = storage.staged_buckets(fs, staging)
    found = paths.join(staging, KEYS_FOLDER)
    if not staged and not fs.exists(found):
        return
    columns = spark.table(table).schema
    renamed = {c: internal(f"s{i}") for i, c in enumerate(columns.names)}
    parts = []
    if staged:
        rows = spark.read.parquet(paths.spark_uri(staging)).select(*[F.col(f"`{c}`") for c in columns.names])
        parts.append(rows.withColumn(_KEY_ROW, F.lit(False)))
    if fs.exists(found):
        parts.append(spark.read.parquet(paths.spark_uri(found)).withColumn(_KEY_ROW, F.lit(True)))
    source = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), parts)
    source = source.select(*[F.col(f"`{c}`").alias(renamed[c]) for c in columns.names], _KEY_ROW)
    same = [F.col(f"`{k}`").eqNullSafe(F.col(renamed[k])) for k in keys]
    on = reduce(lambda a, b: a & b, same, F.col(_KEY_ROW))
    merge = source.mergeInto(table, on).whenMatched().delete()
    values = {c: F.col(renamed[c]) for c in columns.names}
    merge.whenNotMatched(~F.col(_KEY_ROW)).insert(values).merge()


def staging_removed(fs: FileSystem, location: str, batch: BatchId) -> None:
    """A batch's staged files gone from beside the table, with the staging root once empty."""
    fs.delete(storage.staging_dir(location, batch))
    root = paths.join(location, storage.STAGING)
    if fs.exists(root) and not fs.list(root):
        fs.delete(root)


def provider(spark: Any, table: str) -> Optional[str]:
    """The catalog table's format (`delta`, `parquet`, ...)."""
    rows = [r for r in spark.sql(ddl.describe_extended(table)).collect() if r[0] == "Provider"]
    return str(rows[0][1]).lower() if rows else None


def has_delta(spark: Any) -> bool:
    """Whether the session has Delta's SQL extension (the profile's lakehouse: delta)."""
    return DELTA_EXTENSION in (spark.conf.get(EXTENSIONS, None) or "")
