"""Delta Lake tables (`file_format='delta'`, the profile's `lakehouse: delta`): a batch build
replaces the table with `CREATE OR REPLACE TABLE ... USING delta AS SELECT`, one commit of the
table's log, so a reader sees the old version or the new one whole (Delta's snapshot isolation)
and a failed build commits nothing. The table keeps its name and folder across builds; its older
versions stay in the log for `DESCRIBE HISTORY` and time travel until VACUUM removes their files."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Optional

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.spark import lakehouse
from dbt.adapters.window_views.spark.session import spark_session
from dbt.adapters.window_views.storage import filesystems, paths
from dbt.adapters.window_views.storage.table_format import Build, TableFormat, check_session

PROVIDER = re.compile(r"^Provider: delta\s*$", re.M | re.I)
LOG = "_delta_log"
WINDOW_VIEW_PROPERTY = "window_views.execution"  # every window view's table has it (model/config.py)


def is_delta(relation: Any) -> bool:
    """A table the catalog lists as Delta (dbt-spark's relation, or its SHOW TABLE EXTENDED)."""
    if relation is None or not relation.is_table:
        return False
    return bool(getattr(relation, "is_delta", False) or PROVIDER.search(getattr(relation, "information", None) or ""))


class DeltaTables:
    """Delta's own atomic replace; a table of another format (a parquet or streaming window
    view switching to Delta, a view) is replaced once by `other` (the rename swap) instead."""

    def __init__(self, other: TableFormat) -> None:
        self._other = other

    def build(self, adapter: Any, relation: Any, existing: Any, location_root: Optional[str]) -> Build:
        check_session(adapter, relation, lakehouse.DELTA_LAKE)
        if existing is not None and not is_delta(existing):
            return self._other.build(adapter, relation, existing, location_root)
        location = None
        if location_root is not None:
            # the table's one folder: the one it has, or <root>/<alias> for its first build
            found = adapter.table_location(existing) if existing is not None else None
            location = found or f"{location_root.rstrip('/')}/{relation.identifier}"
            if found is None:
                _check_no_foreign_table(adapter, relation, location)
        return Build(relation, replace=True, location=location)

    def into_place(self, adapter: Any, build: Build, relation: Any, existing: Any) -> None:
        if not build.replace:
            self._other.into_place(adapter, build, relation, existing)


def _first_metadata(adapter: Any, location: str) -> Optional[Dict[str, Any]]:
    """The metaData action of the first commit in a folder's Delta log; None without a log."""
    commits = sorted(name for name in adapter.list_location(paths.join(location, LOG)) if name.endswith(".json"))
    if not commits:
        return None
    files = filesystems.for_client(spark_session(adapter.config.credentials.server_side_parameters))
    text = files.read_bytes(paths.join(paths.normalize(location), LOG, commits[0])).decode()
    actions = [json.loads(line) for line in text.splitlines() if line.strip()]
    return next((a["metaData"] for a in actions if "metaData" in a), {})


def _check_no_foreign_table(adapter: Any, relation: Any, location: str) -> None:
    """A model's first Delta build, into a folder that already holds a Delta table the catalog
    does not know: CREATE OR REPLACE would silently make another tool's table an old version of
    this one. A window view's own table (a metastore lost, the folder kept) is replaced."""
    metadata = _first_metadata(adapter, location)
    if metadata is None or WINDOW_VIEW_PROPERTY in (metadata.get("configuration") or {}):
        return
    fields = json.loads(metadata.get("schemaString") or "{}").get("fields", [])
    columns = ", ".join(f["name"] for f in fields) or "none"
    raise DbtRuntimeError(
        f"window_view model '{relation.identifier}': its folder {paths.shown(location)} already holds a Delta table "
        f"that no window view made (columns: {columns}), and the catalog has no table {relation} there; building "
        "would replace that table; fix: move that table elsewhere or set another location_root (or, to replace it, "
        "delete the folder first)"
    )
