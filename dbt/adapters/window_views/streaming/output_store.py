"""Where a micro-batch's output and late rows go: one store per table format, looked up once per
plan by the batch writer and the runner (`store_of`), so the engine has no format branches.

- `ParquetFolders`: the plugin's own commit protocol (storage/commit_files.py): staged files
  moved into the table folders and logged in Spark's file-sink log at publish.
- `DeltaTables`: each table a Delta table (storage/delta_stream.py): the batch's output and late
  rows are staged as parquet, then written at publish, each table in one commit made idempotent
  by Delta's txn options, so a replay after a kill at any step commits nothing twice; the READY
  and commit records keep the batch's place in the log as for parquet.
- `IcebergTables`: each table an Iceberg table (storage/iceberg_stream.py), staged as Delta's
  are, each table's rows written at publish in one snapshot that carries the stream's id and the
  batch, so a replay skips a table whose snapshot has them already.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Type

import pyspark
from sqlglot import exp

from dbt.adapters.window_views.errors import StreamFailure
from dbt.adapters.window_views.kinds.model_kind import KeyedTopN
from dbt.adapters.window_views.model.config import FileFormat
from dbt.adapters.window_views.plans.stream import StreamPlan
from dbt.adapters.window_views.query import sqlexpr
from dbt.adapters.window_views.records import BatchId, BatchRecord, Publish, PublishPlan
from dbt.adapters.window_views.storage import commit_files as storage
from dbt.adapters.window_views.storage import delta_stream, filesystems, iceberg_stream, paths
from dbt.adapters.window_views.storage.delta_stream import StagedCommit
from dbt.adapters.window_views.storage.filesystems import FileSystem
from dbt.adapters.window_views.streaming.commit.locations import Locations
from dbt.adapters.window_views.streaming.shapes.model_query import counted
from dbt.adapters.window_views.streaming.shapes.output import BUCKET_NAME, NEW_BUCKETS, Output, Staged

NOTHING = PublishPlan((), (), -1)  # a Delta table's publish: its commit carries the files


class OutputStore(ABC):
    """How a stream's batches reach its table and late table."""

    source = "parquet"  # the catalog table's format

    def output(
        self, plan: StreamPlan, where: Locations, fs: FileSystem, batch: BatchId, w_new: Optional[int]
    ) -> Output:
        """The table's output as batch `batch` stages it."""
        return Output(plan, where, fs, batch, w_new)

    @abstractmethod
    def planned(self, fs: FileSystem, where: Locations, batch: BatchId, staged: BatchRecord) -> BatchRecord:
        """`staged` with what publishing will do, fixed before it starts: a replay does exactly this."""

    @abstractmethod
    def publish(self, spark: Any, fs: FileSystem, where: Locations, batch: BatchId, ready: BatchRecord) -> None:
        """Put the batch's staged rows in place, as its READY record planned; repeatable."""

    def create(self, spark: Any, table: str, location: str, schema: Any) -> None:
        """The catalog table over a folder of the stream's."""
        spark.catalog.createTable(table, path=paths.spark_uri(location), source=self.source, schema=schema)

    def start(self, spark: Any, fs: FileSystem, location: str, schema: Any) -> None:
        """A new version's empty table folder, for a rebuild to stream into."""
        fs.mkdirs(location)

    def restart(self, spark: Any, fs: FileSystem, location: str) -> None:
        """The table emptied for a stream that starts without a checkpoint (its rows came from
        input that stream reads again)."""
        fs.delete(paths.join(location, storage.FILE_LOG))  # first: readers then list the folder
        for stale in storage.data_files(fs, location):
            fs.delete(stale)

    @abstractmethod
    def check_session(self, spark: Any, model: str) -> None:
        """The Spark session can write the store's tables, or the fix is named before anything runs."""

    def check_table(self, spark: Any, model: str, table: str) -> None:
        """An existing catalog table is of the store's format, or the fix is named."""
        found = delta_stream.provider(spark, table)
        if found is not None and found != self.source:
            raise StreamFailure(
                model,
                f"its table {table} is a {found} table and the model now writes {self.source} (file_format)",
                f"run `dbt run --full-refresh -s {model}` to rebuild it as {self.source} from all input, or set "
                f"file_format back to '{found}'",
            )


class ParquetFolders(OutputStore):
    """Parquet files published by the plugin's commit protocol (commit_files.py)."""

    def check_session(self, spark: Any, model: str) -> None:
        return  # parquet is Spark's own

    def planned(self, fs: FileSystem, where: Locations, batch: BatchId, staged: BatchRecord) -> BatchRecord:
        publish = Publish(
            storage.plan_publish(fs, where.table, batch, staged.replaced_buckets),
            storage.plan_publish(fs, where.late, batch),
        )
        return replace(staged, publish=publish)

    def publish(self, spark: Any, fs: FileSystem, where: Locations, batch: BatchId, ready: BatchRecord) -> None:
        assert ready.publish is not None  # every READY record names its publish
        storage.publish(fs, where.table, batch, ready.publish.table)
        storage.publish(fs, where.late, batch, ready.publish.late)


class DeltaTables(OutputStore):
    """Delta tables, written by Delta's idempotent commits (delta_stream.py)."""

    source = delta_stream.FORMAT

    def output(
        self, plan: StreamPlan, where: Locations, fs: FileSystem, batch: BatchId, w_new: Optional[int]
    ) -> Output:
        return DeltaOutput(plan, where, fs, batch, w_new)

    def planned(self, fs: FileSystem, where: Locations, batch: BatchId, staged: BatchRecord) -> BatchRecord:
        return replace(staged, publish=Publish(NOTHING, NOTHING))

    def publish(self, spark: Any, fs: FileSystem, where: Locations, batch: BatchId, ready: BatchRecord) -> None:
        txn = delta_stream.txn(fs, where.spark_checkpoint, batch)
        for location in (where.table, where.late):  # a staging is removed once its commit is made
            delta_stream.commit_staged(fs, spark, storage.staging_dir(location, batch), location, txn)
            delta_stream.staging_removed(fs, location, batch)

    runtime = "Delta Lake"  # as the refusal of a Spark without it names it

    def has_runtime(self, spark: Any) -> bool:
        return delta_stream.has_delta(spark)

    def check_session(self, spark: Any, model: str) -> None:
        if not self.has_runtime(spark):
            raise StreamFailure(
                model,
                f"file_format='{self.source}' needs {self.runtime} in the Spark this dbt command started, and it "
                f"started without it (PySpark {pyspark.__version__})",
                f"set lakehouse: {self.source} in the profile and run dbt from a venv with the [{self.source}] extra "
                "(docs/delta-iceberg.md), or leave file_format unset (parquet)",
            )

    def create(self, spark: Any, table: str, location: str, schema: Any) -> None:
        super().create(spark, table, location, delta_stream.nullable(schema))

    def start(self, spark: Any, fs: FileSystem, location: str, schema: Any) -> None:
        delta_stream.create_empty(spark, location, schema)

    def restart(self, spark: Any, fs: FileSystem, location: str) -> None:
        if delta_stream.is_delta(fs, location):
            delta_stream.truncate(spark, location)


class DeltaOutput(Output):
    """A batch's output staged as parquet with what it does to the Delta table (StagedCommit),
    which publishing commits: appended, replacing the hours of the key it rewrites, or
    replacing the rows of a Top-N's changed keys."""

    def _indices(self, spark: Any, key: exp.Expr, size: int) -> List[int]:
        """The intervals of `size` of the key that the table's rows are in."""
        return delta_stream.indices(spark, self.where.table, key, size)

    def _rows_where(self, spark: Any, condition: exp.Expr) -> Any:
        return delta_stream.rows_where(spark, self.where.table, condition)

    def append(self, result: Any) -> int:
        rows = super().append(result)
        delta_stream.stage_commit(self.fs, self.staging, StagedCommit())
        return rows

    def upsert(
        self, result: Any, outside: Callable[[Any], Any], key: exp.Expr, reaches: Callable[[int, int], bool]
    ) -> Staged:
        """Output.upsert on a Delta table: the hours of the key (one bucket size) whose rows the
        region reaches are read from the table, the rows `outside` keeps staged beside the
        result, and the staged hours replace theirs in one commit."""
        spark, hour = result.sparkSession, self.plan.bucket_sizes[NEW_BUCKETS]
        index = sqlexpr.floor_index(key, hour)
        touched: Set[int] = {i for i in self._indices(spark, key, hour) if reaches(hour, i)}
        named = sqlexpr.to_sql(exp.alias_(sqlexpr.fill(BUCKET_NAME, letter=_letter(), index=index), storage.BUCKET))
        result, rows_out = counted(result)
        staged = result.selectExpr("*", named)
        if touched:
            old = self._rows_where(spark, delta_stream.hours_replaced(key, hour, touched))
            staged = staged.unionByName(outside(old).selectExpr("*", named))
        staged.write.partitionBy(storage.BUCKET).mode("overwrite").parquet(str(self.staging))
        written = {int(name[len(NEW_BUCKETS) :]) for name in storage.staged_buckets(self.fs, self.staging)}
        replaced = touched | written
        delta_stream.stage_commit(
            self.fs, self.staging, StagedCommit.replacing(key, hour, replaced) if replaced else StagedCommit()
        )
        return rows_out(), [f"{NEW_BUCKETS}{i}" for i in sorted(replaced)]

    def upsert_keys(self, result: Any, outside: Callable[[Any], Any], touched: Sequence[str]) -> Staged:
        """Output.upsert_keys on a Delta table: the result staged, with the keys of the table's
        rows that `outside` drops (the batch's changed keys the table has), and publish replaces
        those keys' rows by the staged ones in one MERGE. The table keeps no home column: a
        key's rows are found by the PARTITION BY columns the output holds (topn.py checks)."""
        assert isinstance(self.plan.kind, KeyedTopN)  # upsert_keys is a keyed Top-N's
        keys = self.plan.kind.top_n.keys
        result, rows_out = counted(result)
        result.write.partitionBy(storage.BUCKET).mode("overwrite").parquet(str(self.staging))
        held = self._rows_where(result.sparkSession, exp.true()).select(*[f"`{k}`" for k in keys]).distinct()
        delta_stream.stage_keys(self.staging, held.subtract(outside(held)))
        delta_stream.stage_commit(self.fs, self.staging, StagedCommit(keys=tuple(keys)))
        return rows_out(), sorted(touched)


def _letter() -> exp.Expr:
    return exp.Literal.string(NEW_BUCKETS)


class IcebergTables(DeltaTables):
    """Iceberg tables, each batch one snapshot skipped when the table has it (iceberg_stream.py);
    staged as Delta's."""

    source = iceberg_stream.FORMAT

    def output(
        self, plan: StreamPlan, where: Locations, fs: FileSystem, batch: BatchId, w_new: Optional[int]
    ) -> Output:
        return IcebergOutput(plan, where, fs, batch, w_new)

    def publish(self, spark: Any, fs: FileSystem, where: Locations, batch: BatchId, ready: BatchRecord) -> None:
        commit = iceberg_stream.commit_id(delta_stream.query_id(fs, where.spark_checkpoint), batch)
        for location in (where.table, where.late):  # a staging is removed once its snapshot is made
            iceberg_stream.commit_staged(fs, spark, storage.staging_dir(location, batch), location, commit)
            delta_stream.staging_removed(fs, location, batch)

    runtime = "Apache Iceberg"

    def has_runtime(self, spark: Any) -> bool:
        return iceberg_stream.has_iceberg(spark)

    def create(self, spark: Any, table: str, location: str, schema: Any) -> None:
        iceberg_stream.create(spark, filesystems.beside_spark(spark), table, location, schema)

    def start(self, spark: Any, fs: FileSystem, location: str, schema: Any) -> None:
        iceberg_stream.start(spark, fs, location, schema)

    def restart(self, spark: Any, fs: FileSystem, location: str) -> None:
        if iceberg_stream.is_iceberg(fs, location):
            iceberg_stream.truncate(spark, fs, location)


class IcebergOutput(DeltaOutput):
    """DeltaOutput on an Iceberg table: the table's rows read through its catalog table."""

    def _indices(self, spark: Any, key: exp.Expr, size: int) -> List[int]:
        return iceberg_stream.indices(iceberg_stream.fresh(spark, self.fs, self.where.table), key, size)

    def _rows_where(self, spark: Any, condition: exp.Expr) -> Any:
        return iceberg_stream.fresh(spark, self.fs, self.where.table).where(sqlexpr.to_sql(condition))


STORES: Dict[FileFormat, Type[OutputStore]] = {FileFormat.DELTA: DeltaTables, FileFormat.ICEBERG: IcebergTables}


def store_of(plan: StreamPlan) -> OutputStore:
    """The store of the model's file_format (the config refuses the others for streaming)."""
    return STORES.get(plan.config.file_format, ParquetFolders)()
