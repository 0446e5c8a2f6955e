"""Delta Lake tables (`file_format='delta'`, the profile's `lakehouse: delta`): a batch build
replaces the table with `CREATE OR REPLACE TABLE ... USING delta AS SELECT`, one commit of the
table's log, so a reader sees the old version or the new one whole (Delta's snapshot isolation)
and a failed build commits nothing. The table keeps its name and folder across builds; its older
versions stay in the log for `DESCRIBE HISTORY` and time travel until VACUUM removes their files."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Optional

from dbt.adapters.window_views.spark import lakehouse
from dbt.adapters.window_views.spark.session import spark_session
from dbt.adapters.window_views.storage import filesystems, paths

PROVIDER = re.compile(r"^Provider: delta\s*$", re.M | re.I)
LOG = "_delta_log"
WINDOW_VIEW_PROPERTY = "window_views.execution"  # every window view's table has it (model/config.py)


def is_delta(relation: Any) -> bool:
    """A table the catalog lists as Delta (dbt-spark's relation, or its SHOW TABLE EXTENDED)."""
    if relation is None or not relation.is_table:
        return False
    return bool(getattr(relation, "is_delta", False) or PROVIDER.search(getattr(relation, "information", None) or ""))


class DeltaFolder:
    """Delta's tables and folders as `ReplacedInPlace` asks about them (storage/table_format.py)."""

    runtime = lakehouse.DELTA_LAKE

    def holds(self, relation: Any) -> bool:
        return is_delta(relation)

    def foreign_columns(self, adapter: Any, location: str) -> Optional[str]:
        """A Delta table in the folder that no window view made: its first commit's columns."""
        metadata = _first_metadata(adapter, location)
        if metadata is None or WINDOW_VIEW_PROPERTY in (metadata.get("configuration") or {}):
            return None
        fields = json.loads(metadata.get("schemaString") or "{}").get("fields", [])
        return ", ".join(f["name"] for f in fields) or "none"


def _first_metadata(adapter: Any, location: str) -> Optional[Dict[str, Any]]:
    """The metaData action of the first commit in a folder's Delta log; None without a log."""
    commits = sorted(name for name in adapter.list_location(paths.join(location, LOG)) if name.endswith(".json"))
    if not commits:
        return None
    files = filesystems.for_client(spark_session(adapter.config.credentials.server_side_parameters))
    text = files.read_bytes(paths.join(paths.normalize(location), LOG, commits[0])).decode()
    actions = [json.loads(line) for line in text.splitlines() if line.strip()]
    return next((a["metaData"] for a in actions if "metaData" in a), {})
