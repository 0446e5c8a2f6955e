"""Delta Lake tables (`file_format='delta'`, the profile's `lakehouse: delta`): a batch build
replaces the table with `CREATE OR REPLACE TABLE ... USING delta AS SELECT`, one commit of the
table's log, so a reader sees the old version or the new one whole (Delta's snapshot isolation)
and a failed build commits nothing. The table keeps its name and folder across builds; its older
versions stay in the log for `DESCRIBE HISTORY` and time travel until VACUUM removes their files."""

from __future__ import annotations

import re
from typing import Any, Optional

from dbt.adapters.window_views.storage.table_format import Build, TableFormat

PROVIDER = re.compile(r"^Provider: delta\s*$", re.M | re.I)


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
        if existing is not None and not is_delta(existing):
            return self._other.build(adapter, relation, existing, location_root)
        location = None
        if location_root is not None:
            # the table's one folder: the one it has, or <root>/<alias> for its first build
            found = adapter.table_location(existing) if existing is not None else None
            location = found or f"{location_root.rstrip('/')}/{relation.identifier}"
        return Build(relation, replace=True, location=location)

    def into_place(self, adapter: Any, build: Build, relation: Any, existing: Any) -> None:
        if not build.replace:
            self._other.into_place(adapter, build, relation, existing)
