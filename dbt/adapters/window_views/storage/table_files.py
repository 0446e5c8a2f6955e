"""A table's files for the materializations and incremental.py: where they live, listed and
removed (an external table keeps its files after DROP TABLE), through the process's SparkSession,
so on the cluster's storage and through Spark Connect too (filesystems.for_client)."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

from dbt.adapters.base import available
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import DbtRuntimeError
from sqlglot import exp

from dbt.adapters.window_views.query import ddl, sqlexpr
from dbt.adapters.window_views.spark.session import spark_session
from dbt.adapters.window_views.storage import filesystems, iceberg, paths

logger = AdapterLogger("WindowViews")


class TableFiles(SparkAdapter):
    """dbt-spark's adapter with a table's files at hand."""

    @available
    def table_location(self, relation: Any) -> Optional[str]:
        """Where a table's files live (external tables keep them after DROP)."""
        _, table = self.execute(ddl.describe_extended(str(relation)), fetch=True)
        for row in table.rows:
            if row[0] == "Location":
                return row[1]
        return None

    def drop_relation(self, relation: Any) -> None:
        """dbt's DROP; under Iceberg's session catalog, a managed table's folder too, which that
        catalog leaves (iceberg.drops_without_files) and the next table of the name would meet as
        LOCATION_ALREADY_EXISTS. Only a folder where the catalog puts a managed table of that name
        (`<schema>.db/<name>`) goes: files at a location someone chose stay, as DROP leaves them."""
        leftover = self._managed_folder(relation) if iceberg.drops_without_files(self) else None
        super().drop_relation(relation)
        if leftover is not None:
            self.remove_location(leftover)

    def _managed_folder(self, relation: Any) -> Optional[str]:
        """The folder of a managed table `relation` where its catalog put it, or None."""
        if not relation.is_table or not relation.schema:
            return None
        try:
            _, table = self.execute(ddl.describe_extended(str(relation)), fetch=True)
        except DbtRuntimeError:
            return None  # no such table: DROP ... IF EXISTS has nothing to drop either
        details = {str(row[0]): str(row[1]) for row in table.rows}
        found = details.get("Location")
        if details.get("Type", "").upper() != "MANAGED" or not found:
            return None
        at_home = paths.name(found) == relation.identifier.lower()
        return found if at_home and paths.name(paths.parent(found)) == f"{relation.schema.lower()}.db" else None

    @available
    def remove_location(self, location: Optional[str]) -> None:
        """Delete an old external table's files, which DROP TABLE leaves behind (on the cluster's
        storage, through Spark Connect too: filesystems.for_client)."""
        creds = self.config.credentials
        if not location or creds.method != SparkConnectionMethod.SESSION:
            logger.debug(f"leaving {location} in place: only a SparkSession can remove files")
            return
        spark = spark_session(creds.server_side_parameters)
        filesystems.for_client(spark).delete(paths.normalize(location))

    @available
    def move_location(self, source: str, target: str) -> None:
        """A table's folder moved whole to `target` (a streaming window view's, out of the way of
        the batch table replacing it: swap.py)."""
        spark = spark_session(self.config.credentials.server_side_parameters)
        filesystems.for_client(spark).move(paths.normalize(source), paths.normalize(target))

    def list_location(self, location: str) -> List[str]:
        """The names in a directory of an external or managed table; [] where there is none, or
        where no SparkSession can list it (remove_location removes nothing there either)."""
        creds = self.config.credentials
        if creds.method != SparkConnectionMethod.SESSION:
            return []
        spark = spark_session(creds.server_side_parameters)
        return [entry.name for entry in filesystems.for_client(spark).list(paths.normalize(location))]

    def write_partitioned(self, query: exp.Expression, location: str, column: str) -> bool:
        """The query's rows as parquet files under the new directory `location`, a directory
        `column=value` per value of `column`, in one Spark job; False where no SparkSession can
        (another connection method): nothing is written."""
        creds = self.config.credentials
        if creds.method != SparkConnectionMethod.SESSION:
            return False
        spark = spark_session(creds.server_side_parameters)
        sql = sqlexpr.to_sql(query)  # as Spark receives it
        logger.debug(f"writing to {location}, a directory per {column}: {sql}")
        spark.sql(sql).write.partitionBy(column).mode("errorifexists").parquet(location)
        return True

    def move_directories(self, moves: Sequence[Tuple[str, str]]) -> None:
        """Each source directory's files moved into its target directory, made new (empty where
        the source is missing), in one go where the files are (write_partitioned's sessions only)."""
        spark = spark_session(self.config.credentials.server_side_parameters)
        normalized = [(paths.normalize(source), paths.normalize(target)) for source, target in moves]
        filesystems.for_client(spark).run(filesystems.move_directories, normalized)
