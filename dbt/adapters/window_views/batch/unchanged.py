"""An incremental batch window view's run with nothing new to read writes nothing: its batches
would read the same files with the same SQL as when its last run ended, so they would come out
the same. What a run read is a digest, kept with the table: the plugin's version, the model's
SQL and config, and every file each input holds (a table's files tell what it holds: a loader or
a writer adds or replaces files, and Spark, Delta and Iceberg never rewrite one in place; of an
Iceberg table, its current metadata file, new with every commit).

Not skipped, so computed as before: an input that is a view or not a table of files, SQL whose
value changes from run to run over the same rows (current_date, rand, ...), a backfill or a full
refresh, a method without a SparkSession (thrift, http), and batches left to redo that the last
run did not leave (a failed run's)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

from dbt.adapters.spark.connections import SparkConnectionMethod

from dbt.adapters.window_views.__version__ import version
from dbt.adapters.window_views.plans.window_view import WindowViewPlan
from dbt.adapters.window_views.query import ddl, sqlexpr
from dbt.adapters.window_views.storage import iceberg

PROPERTY = "window_views.inputs_read"
_VERSION = "v1"
_SEPARATOR = "|"  # between the digest and the batch keys ("2024-01-02 00:00:00": no bar, no comma)
# what a table of files may be stored as (dbt-spark's file_format values, and Hive's text)
FILE_PROVIDERS = frozenset({"parquet", "orc", "csv", "json", "avro", "text", "delta", "iceberg", "hive"})
# Spark functions whose value over the same rows changes from one run to the next
_VOLATILE = re.compile(
    r"\b(current_date|current_timestamp|curdate|now|localtimestamp|current_timezone|rand|randn|random|uuid|"
    r"shuffle|input_file_name|monotonically_increasing_id|spark_partition_id|try_reflect|reflect|java_method)\b",
    re.IGNORECASE,
)
_PROVIDER = re.compile(r"^Provider:\s*(\S+)", re.MULTILINE | re.IGNORECASE)


@dataclass(frozen=True)
class InputsRead:
    """What a run read (`digest`) and the batches it left to redo (`left`, the record's keys)."""

    digest: str
    left: Tuple[str, ...]

    def to_property(self) -> str:
        return _SEPARATOR.join((_VERSION, self.digest, *self.left))

    @classmethod
    def from_property(cls, value: Optional[str]) -> Optional["InputsRead"]:
        """The property's value as this version writes it, or None (none, or another version's)."""
        parts = (value or "").split(_SEPARATOR)
        if len(parts) < 2 or parts[0] != _VERSION:
            return None
        return cls(parts[1], tuple(parts[2:]))

    def same(self, other: Optional["InputsRead"]) -> bool:
        return other is not None and other.digest == self.digest and sorted(other.left) == sorted(self.left)


def digest(adapter: Any, plan: WindowViewPlan) -> Optional[str]:
    """The digest of what the model's batches read now, or None where files do not tell it."""
    credentials = adapter.config.credentials
    if credentials.method != SparkConnectionMethod.SESSION or _VOLATILE.search(plan.sql):
        return None
    from dbt.adapters.window_views.spark.session import spark_session

    spark = spark_session(credentials.server_side_parameters)
    found = hashlib.sha256("\n".join((version, plan.model, plan.sql, repr(plan.config))).encode())
    for schema, name in sorted((s or "", n) for s, n in plan.inputs):
        files = _files(adapter, spark, schema, name)
        if files is None:
            return None
        found.update("\n".join((schema, name, *files)).encode())
    return found.hexdigest()


def _files(adapter: Any, spark: Any, schema: str, name: str) -> Optional[Sequence[str]]:
    """The files an input table holds, sorted (Spark lists them as a read would), or None."""
    relation = adapter.get_relation(database=None, schema=schema, identifier=name) if schema else None
    if relation is None or relation.is_view:
        return None
    if iceberg.is_iceberg(relation):  # Spark lists no files of one (inputFiles() is empty)
        current = iceberg.metadata_location(relation)
        return None if current is None else [current]
    provider = _PROVIDER.search(relation.information or "")
    if provider is None or provider.group(1).lower() not in FILE_PROVIDERS:
        return None
    return sorted(spark.table(sqlexpr.to_sql(ddl.qualified(schema, name))).inputFiles())
