"""Apache Iceberg tables (`file_format='iceberg'`, the profile's `lakehouse: iceberg`): a batch
build replaces the table with `CREATE OR REPLACE TABLE ... USING iceberg AS SELECT`, one commit of
the table's metadata (a new snapshot), so a reader sees the old snapshot or the new one whole and
a failed build commits nothing (`ReplacedInPlace`, storage/table_format.py). The table keeps its
name and folder across builds; older snapshots stay for time travel until they are expired.

Spark's session catalog is Iceberg's SparkSessionCatalog over the Hive metastore, which lists an
Iceberg table with `Provider: hive` and `table_type=ICEBERG` among its properties."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Optional

from dbt.adapters.spark.connections import SparkConnectionMethod

from dbt.adapters.window_views.spark import lakehouse
from dbt.adapters.window_views.spark.session import remote_url, spark_session
from dbt.adapters.window_views.storage import filesystems, paths

TABLE_TYPE = re.compile(r"\btable_type=ICEBERG\b|^Provider: iceberg\s*$", re.M | re.I)
METADATA = "metadata"
METADATA_FILE = re.compile(r"^(\d+)-.*\.metadata\.json$")
METADATA_LOCATION = re.compile(r"\bmetadata_location=([^,\]\s]+)")
WINDOW_VIEW_PROPERTY = "window_views.execution"  # every window view's table has it (model/config.py)


def is_iceberg(relation: Any) -> bool:
    """A table the catalog lists as Iceberg (dbt-spark's relation, or its SHOW TABLE EXTENDED)."""
    if relation is None or not relation.is_table:
        return False
    information = getattr(relation, "information", None) or ""
    return bool(getattr(relation, "is_iceberg", False) or TABLE_TYPE.search(information))


def metadata_location(relation: Any) -> Optional[str]:
    """The metadata file of the table's current snapshot, as the catalog listed it: every commit
    writes a new one, so it tells what the table holds (Spark lists no data files of it)."""
    found = METADATA_LOCATION.search(getattr(relation, "information", None) or "")
    return found.group(1) if found else None


class IcebergFolder:
    """Iceberg's tables and folders as `ReplacedInPlace` asks about them."""

    runtime = lakehouse.ICEBERG

    def holds(self, relation: Any) -> bool:
        return is_iceberg(relation)

    def foreign_columns(self, adapter: Any, location: str) -> Optional[str]:
        """An Iceberg table in the folder that no window view made: its newest schema's columns."""
        metadata = _latest_metadata(adapter, location)
        if metadata is None or WINDOW_VIEW_PROPERTY in (metadata.get("properties") or {}):
            return None
        schemas = metadata.get("schemas") or [metadata.get("schema") or {}]
        return ", ".join(f["name"] for f in schemas[-1].get("fields", [])) or "none"


def _latest_metadata(adapter: Any, location: str) -> Optional[Dict[str, Any]]:
    """The newest metadata file in a folder's `metadata/` (Iceberg numbers them); None: none."""
    numbered = []
    for name in adapter.list_location(paths.join(location, METADATA)):
        found = METADATA_FILE.match(name)
        if found:
            numbered.append((int(found.group(1)), name))
    if not numbered:
        return None
    files = filesystems.for_client(spark_session(adapter.config.credentials.server_side_parameters))
    text = files.read_bytes(paths.join(paths.normalize(location), METADATA, max(numbered)[1])).decode()
    parsed: Dict[str, Any] = json.loads(text)
    return parsed


def drops_without_files(adapter: Any) -> bool:
    """The Spark the plugin started has Iceberg's SparkSessionCatalog, whose DROP TABLE takes any
    table out of the metastore without its files (Iceberg's HiveCatalog.dropTable, no purge): a
    managed table's folder is left in the way of the next table of that name."""
    creds = adapter.config.credentials
    params = creds.server_side_parameters
    if creds.method != SparkConnectionMethod.SESSION or remote_url(params):
        return False
    return bool(spark_session(params).conf.get(lakehouse.CATALOG, None) == lakehouse.ICEBERG.catalog)
