"""How a batch window view's table is replaced by a new build, one part per file format: the
batch engine (batch/swap.py) looks the format up by the model's `file_format` and never asks
which one it holds. Parquet (and every format without transactions) builds beside the table and
swaps it in by renames (batch/swap.py); Delta Lake (delta.py) and Iceberg (iceberg.py) replace
the table in one transaction of their own (`ReplacedInPlace`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol

import pyspark
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.spark import lakehouse
from dbt.adapters.window_views.spark.session import remote_url, spark_session
from dbt.adapters.window_views.storage import paths


@dataclass(frozen=True)
class Build:
    """Where one build writes: `relation`, the name the CREATE gives; `replace`, whether the
    CREATE replaces that table itself (CREATE OR REPLACE, the format's own transaction);
    `location`, the external folder (location_root), None for a managed table."""

    relation: Any
    replace: bool
    location: Optional[str]


class FormatFolder(Protocol):
    """What one transactional format (Delta, Iceberg) tells of its tables: the runtime that
    writes them, whether a catalog table is one, and the columns of one that a folder holds."""

    runtime: lakehouse.Lakehouse

    def holds(self, relation: Any) -> bool:
        """`relation` is a table of this format."""
        ...

    def foreign_columns(self, adapter: Any, location: str) -> Optional[str]:
        """The columns of a table of this format at `location` that no window view made; None:
        no such table there (none, or a window view's own, its metastore entry lost)."""
        ...


class TableFormat(Protocol):
    """A file format's way to replace a batch window view's table whole, so readers see the old
    table or the new one, and a failed build leaves the old one."""

    def build(self, adapter: Any, relation: Any, existing: Any, location_root: Optional[str]) -> Build:
        """Where to write `relation`'s new table (`existing`: its table now, or None); a killed
        run's leftovers are dropped first."""
        ...

    def into_place(self, adapter: Any, build: Build, relation: Any, existing: Any) -> None:
        """After the CREATE: the new table takes `relation`'s name, the replaced one's files go."""
        ...


class ReplacedInPlace:
    """A format that replaces a table in one transaction of its own (CREATE OR REPLACE: Delta's
    log, Iceberg's metadata): readers see the old table or the new one whole, and it keeps its
    name and folder. A table of another format (a parquet or streaming window view switching
    format, a view) is replaced once by `other` (the rename swap) instead."""

    def __init__(self, folder: FormatFolder, other: TableFormat) -> None:
        self._folder = folder
        self._other = other

    def build(self, adapter: Any, relation: Any, existing: Any, location_root: Optional[str]) -> Build:
        check_session(adapter, relation, self._folder.runtime)
        if existing is not None and not self._folder.holds(existing):
            return self._other.build(adapter, relation, existing, location_root)
        location = None
        if location_root is not None:
            # the table's one folder: the one it has, or <root>/<alias> for its first build
            found = adapter.table_location(existing) if existing is not None else None
            location = found or f"{location_root.rstrip('/')}/{relation.identifier}"
            if found is None:
                self._check_no_foreign_table(adapter, relation, location)
        return Build(relation, replace=True, location=location)

    def into_place(self, adapter: Any, build: Build, relation: Any, existing: Any) -> None:
        if not build.replace:
            self._other.into_place(adapter, build, relation, existing)

    def _check_no_foreign_table(self, adapter: Any, relation: Any, location: str) -> None:
        """A model's first build into a folder that already holds a table of the format the
        catalog does not know: CREATE OR REPLACE would silently make another tool's table an old
        version of this one."""
        columns = self._folder.foreign_columns(adapter, location)
        if columns is None:
            return
        raise DbtRuntimeError(
            f"window_view model '{relation.identifier}': its folder {paths.shown(location)} already holds "
            f"{self._folder.runtime.a_table} that no window view made (columns: {columns}), and the catalog has no "
            f"table {relation} there; building would replace that table; fix: move that table elsewhere or set "
            "another location_root (or, to replace it, delete the folder first)"
        )


def run_location(location_root: Optional[str], alias: str, invocation_id: str) -> Optional[str]:
    """A build's own folder under location_root (`<root>/<alias>/run=<invocation id>`), so the
    table it replaces keeps its files until the swap."""
    if location_root is None:
        return None
    return f"{location_root.rstrip('/')}/{alias}/run={invocation_id}"


def check_session(adapter: Any, relation: Any, format_runtime: lakehouse.Lakehouse) -> None:
    """The Spark the plugin started has the format's extension (the profile's lakehouse), or the
    model is named with the fix instead of Spark's DATA_SOURCE_NOT_FOUND. A server elsewhere
    (thrift, spark.remote) has its own settings: Spark names what it lacks."""
    creds = adapter.config.credentials
    params = creds.server_side_parameters
    if creds.method != SparkConnectionMethod.SESSION or remote_url(params):
        return
    conf = spark_session(params).conf
    if lakehouse.has_extension({lakehouse.EXTENSIONS: conf.get(lakehouse.EXTENSIONS, None)}, format_runtime):
        return
    name = format_runtime.name
    raise DbtRuntimeError(
        f"window_view model '{relation.identifier}': file_format='{name}' needs {format_runtime.title} in the Spark "
        f"this dbt command started, and it started without it (PySpark {pyspark.__version__}, the profile's "
        f"lakehouse: {params.get(lakehouse.LAKEHOUSE_KEY, lakehouse.AUTO)}); fix: set lakehouse: {name} in the "
        f"profile and run dbt from a venv with the [{name}] extra (docs/delta-iceberg.md), or leave file_format "
        "unset (parquet)"
    )
