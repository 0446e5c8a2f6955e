"""A table built beside the model's, as `<alias>__wv_tmp`, and swapped into place by two renames
once whole, so a failed build leaves the model's table as it was: the batch build
(macros/materializations/window_view/batch.sql) and an incremental batch window view's rebuild
(incremental.py) both go through here. What a killed run left (`__wv_tmp`, `__wv_backup`, a
streaming table's folder moved aside as `<folder>__wv_replaced`) is dropped by the next run, only
where dbt's relation cache lists it: a clean run sends no DROP."""

from __future__ import annotations

import re
from typing import Any, Dict, Optional

from dbt_common.invocation import get_invocation_id

from dbt.adapters.window_views.names import internal
from dbt.adapters.window_views.storage import paths
from dbt.adapters.window_views.storage.delta import DeltaFolder
from dbt.adapters.window_views.storage.iceberg import IcebergFolder
from dbt.adapters.window_views.storage.table_format import Build, ReplacedInPlace, TableFormat, run_location


class RenameSwap:
    """Parquet, and every format without transactions of its own: the new table is built as
    `<alias>__wv_tmp` (with location_root, in its own run folder) and swapped in by two renames."""

    def build(self, adapter: Any, relation: Any, existing: Any, location_root: Optional[str]) -> Build:
        built = beside(adapter, relation, location_root)
        return Build(
            built, replace=False, location=run_location(location_root, relation.identifier, get_invocation_id())
        )

    def into_place(self, adapter: Any, build: Build, relation: Any, existing: Any) -> None:
        # an external table is one with a location (location_root), whose files DROP leaves
        into_place(adapter, build.relation, relation, existing, build.location)


RENAME_SWAP = RenameSwap()
# the formats that replace a table in one transaction of their own: one folder check each
FORMATS: Dict[str, TableFormat] = {
    folder.runtime.name: ReplacedInPlace(folder, RENAME_SWAP) for folder in (DeltaFolder(), IcebergFolder())
}


def table_format(file_format: str) -> TableFormat:
    """The way a batch build of `file_format` replaces its table (storage/table_format.py)."""
    return FORMATS.get(file_format, RENAME_SWAP)


def beside(adapter: Any, relation: Any, location_root: Optional[str]) -> Any:
    """`<alias>__wv_tmp`, the name to build `relation`'s new table under; a killed run's table
    there is dropped first, with its files."""
    built = _renamed(relation, "tmp")
    _drop_leftover(adapter, built, location_root)
    _drop_replaced(adapter, relation, location_root)
    return built


def into_place(adapter: Any, built: Any, relation: Any, replaced: Optional[Any], location_root: Optional[str]) -> None:
    """`built` takes `relation`'s name. The table it replaces (`replaced`, None when there is
    none) is renamed `<alias>__wv_backup` first, then dropped with its files (location_root); if
    `built` cannot take the name, the replaced table takes it back."""
    if replaced is None:
        adapter.rename_relation(built, relation)
        return
    backup = _renamed(relation, "backup").incorporate(type=replaced.type)
    _drop_leftover(adapter, backup, location_root)
    old = _files(adapter, replaced, location_root)
    in_the_way = None if location_root is not None else _streaming_files(replaced)
    adapter.rename_relation(replaced, backup)
    aside = None
    try:
        if in_the_way is not None:
            # a managed table's rename moves its folder to where this one keeps its files
            moved = paths.sibling(in_the_way, f"_{internal('replaced')}")
            adapter.move_location(in_the_way, moved)
            aside = moved
        adapter.rename_relation(built, relation)
    except Exception:
        if aside is not None and in_the_way is not None:  # only a move that happened is undone
            adapter.move_location(aside, in_the_way)
        adapter.rename_relation(backup, relation)
        raise
    drop(adapter, backup, old if aside is None else aside)


def drop(adapter: Any, relation: Any, location: Optional[str]) -> None:
    """Drop a table, and remove its files at `location`: an external table's, which DROP leaves
    (None: nothing to remove)."""
    adapter.drop_relation(relation)
    adapter.remove_location(location)


def _renamed(relation: Any, role: str) -> Any:
    """The model's table under another name, `<alias>__wv_tmp` or `<alias>__wv_backup`."""
    return relation.incorporate(path={"identifier": f"{relation.identifier}_{internal(role)}"})


def _drop_leftover(adapter: Any, relation: Any, location_root: Optional[str]) -> None:
    found = adapter.get_relation(database=relation.database, schema=relation.schema, identifier=relation.identifier)
    if found is not None:
        drop(adapter, found, _files(adapter, found, location_root))


def _drop_replaced(adapter: Any, relation: Any, location_root: Optional[str]) -> None:
    """A swap killed after it renamed a streaming table `__wv_backup`: that table goes, with the
    folder it was moved to (`<folder>__wv_replaced`) and, unless the model's table lives there
    now, the folder it names."""
    backup = _renamed(relation, "backup")
    found = adapter.get_relation(database=backup.database, schema=backup.schema, identifier=backup.identifier)
    folder = None if found is None or location_root is not None else _location(found)
    if folder is None or not _is_streaming(found):
        return
    adapter.drop_relation(found)
    adapter.remove_location(paths.sibling(folder, f"_{internal('replaced')}"))
    current = adapter.get_relation(database=relation.database, schema=relation.schema, identifier=relation.identifier)
    if current is None or paths.normalize(adapter.table_location(current) or "") != paths.normalize(folder):
        adapter.remove_location(folder)


def _location(relation: Any) -> Optional[str]:
    """A table's folder as the relation cache's `SHOW TABLE EXTENDED` gives it."""
    found = re.search(r"^Location: (.+)$", getattr(relation, "information", None) or "", re.M)
    return found.group(1).strip() if found else None


def _is_streaming(relation: Any) -> bool:
    properties = re.search(r"^Table Properties: \[(.*)\]$", getattr(relation, "information", None) or "", re.M)
    return properties is not None and "window_views.execution=streaming" in properties.group(1)


def _streaming_files(relation: Any) -> Optional[str]:
    """Where a streaming window view keeps its files when that is the folder a managed table of
    its name would take (no location_root), from the relation cache's `SHOW TABLE EXTENDED`."""
    found = _location(relation)
    if not _is_streaming(relation) or found is None:
        return None
    return found if paths.name(found) == relation.identifier else None


def _files(adapter: Any, relation: Any, location_root: Optional[str]) -> Optional[str]:
    """Where an external table (location_root) keeps its files; None for a managed table or a view."""
    return adapter.table_location(relation) if location_root is not None and relation.is_table else None
