"""swap.py without Spark: the one swap-into-place of a batch build and an incremental rebuild. A
clean run looks its leftovers up in dbt's relation cache and sends no DROP; a killed run's
`__wv_tmp` / `__wv_backup` are dropped with their files (location_root); the old table is renamed
aside before the new one takes its name, and dropped with its files after; a rebuild that will
not finish is dropped with its files."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import List, Optional, Set

import pytest

from dbt.adapters.window_views.batch import incremental, swap
from dbt.adapters.window_views.records import PendingBatches


@dataclass(frozen=True)
class Relation:
    schema: str
    identifier: str
    type: str = "table"
    database: Optional[str] = None

    @property
    def is_table(self) -> bool:
        return self.type == "table"

    def incorporate(self, path=None, type=None):  # noqa: A002 - dbt's keyword
        return replace(self, **(path or {}), **({"type": type} if type else {}))


@dataclass(frozen=True)
class Streaming(Relation):
    """A streaming window view's table as dbt's relation cache has it (SHOW TABLE EXTENDED)."""

    information: str = (
        "Type: EXTERNAL\nTable Properties: [window_views.execution=streaming, window_views.emit=on_update]\n"
        "Location: file:/warehouse/s.db/m\n"
    )


class Catalog:
    """dbt's relation cache and the calls the swap makes, in order."""

    def __init__(self, tables: Set[str], failing: Optional[tuple] = None) -> None:
        self.tables, self.calls = set(tables), []  # type: ignore[var-annotated]
        self.failing = failing

    def get_relation(self, database, schema, identifier):
        return Relation(schema, identifier) if identifier in self.tables else None

    def table_location(self, relation):
        self.calls.append(("location", relation.identifier))
        return f"/lake/{relation.identifier}"

    def drop_relation(self, relation):
        self.calls.append(("drop", relation.identifier))

    def rename_relation(self, source, target):
        self.calls.append(("rename", source.identifier, target.identifier))
        if self.calls[-1] == self.failing:
            raise RuntimeError("the rename failed")

    def move_location(self, source, target):
        self.calls.append(("move", source, target))
        if self.calls[-1] == self.failing:
            raise OSError("the move failed")

    def remove_location(self, location):
        self.calls.append(("remove", location))


MODEL = Relation("s", "m")


@pytest.mark.parametrize("location_root", [None, "/lake"])
def test_a_clean_swap_sends_no_drop_of_leftovers(location_root):
    catalog = Catalog({"m"})
    built = swap.beside(catalog, MODEL, location_root)
    assert built.identifier == "m__wv_tmp" and catalog.calls == []
    swap.into_place(catalog, built, MODEL, Relation("s", "m"), location_root)
    files: List[tuple] = [("location", "m")] if location_root else []
    assert catalog.calls == files + [
        ("rename", "m", "m__wv_backup"),
        ("rename", "m__wv_tmp", "m"),
        ("drop", "m__wv_backup"),
        ("remove", "/lake/m" if location_root else None),
    ]


def test_a_killed_runs_leftovers_go_with_their_files():
    catalog = Catalog({"m", "m__wv_tmp", "m__wv_backup"})
    built = swap.beside(catalog, MODEL, "/lake")
    assert catalog.calls == [("location", "m__wv_tmp"), ("drop", "m__wv_tmp"), ("remove", "/lake/m__wv_tmp")]
    catalog.calls.clear()
    swap.into_place(catalog, built, MODEL, Relation("s", "m"), "/lake")
    assert catalog.calls[:3] == [
        ("location", "m__wv_backup"),
        ("drop", "m__wv_backup"),
        ("remove", "/lake/m__wv_backup"),
    ]


def test_a_first_build_or_a_view_replaced():
    catalog = Catalog(set())
    swap.into_place(catalog, Relation("s", "m__wv_tmp"), MODEL, None, "/lake")
    assert catalog.calls == [("rename", "m__wv_tmp", "m")]
    catalog = Catalog({"m"})
    swap.into_place(catalog, Relation("s", "m__wv_tmp"), MODEL, Relation("s", "m", "view"), "/lake")
    # a view has no files to remove
    assert catalog.calls == [
        ("rename", "m", "m__wv_backup"),
        ("rename", "m__wv_tmp", "m"),
        ("drop", "m__wv_backup"),
        ("remove", None),
    ]


def test_an_unfinished_rebuild_goes_and_the_models_table_stays():
    catalog = Catalog({"m", "m__wv_tmp"})
    rebuild = incremental.Rebuild(Relation("s", "m__wv_tmp"), MODEL)
    incremental._drop_rebuild(
        catalog, incremental.Table("s.m__wv_tmp", "/lake/m__wv_tmp", (), PendingBatches(), rebuild)
    )
    assert catalog.calls == [("drop", "m__wv_tmp"), ("remove", "/lake/m__wv_tmp")]
    catalog.calls.clear()
    incremental._drop_rebuild(catalog, incremental.Table("s.m", "/lake/m", ("2026-01-01",), PendingBatches()))
    assert catalog.calls == []


def test_a_streaming_table_in_the_new_tables_folder_moves_aside_and_comes_back_if_the_rename_fails():
    # no location_root: the streaming table's folder is the one the renamed managed table takes
    catalog = Catalog({"m"})
    swap.into_place(catalog, Relation("s", "m__wv_tmp"), MODEL, Streaming("s", "m"), None)
    assert catalog.calls == [
        ("rename", "m", "m__wv_backup"),
        ("move", "file:/warehouse/s.db/m", "file:/warehouse/s.db/m__wv_replaced"),
        ("rename", "m__wv_tmp", "m"),
        ("drop", "m__wv_backup"),
        ("remove", "file:/warehouse/s.db/m__wv_replaced"),
    ]
    catalog = Catalog({"m"}, failing=("rename", "m__wv_tmp", "m"))
    with pytest.raises(RuntimeError, match="the rename failed"):
        swap.into_place(catalog, Relation("s", "m__wv_tmp"), MODEL, Streaming("s", "m"), None)
    assert catalog.calls[-2:] == [
        ("move", "file:/warehouse/s.db/m__wv_replaced", "file:/warehouse/s.db/m"),
        ("rename", "m__wv_backup", "m"),
    ]

    # a move that failed is not undone: the streaming table gets its name back, its files never left
    catalog = Catalog({"m"}, failing=("move", "file:/warehouse/s.db/m", "file:/warehouse/s.db/m__wv_replaced"))
    with pytest.raises(OSError):
        swap.into_place(catalog, Relation("s", "m__wv_tmp"), MODEL, Streaming("s", "m"), None)
    assert catalog.calls[-2:] == [
        ("move", "file:/warehouse/s.db/m", "file:/warehouse/s.db/m__wv_replaced"),
        ("rename", "m__wv_backup", "m"),
    ]


def test_a_table_that_cannot_take_the_name_gives_it_back():
    catalog = Catalog({"m"}, failing=("rename", "m__wv_tmp", "m"))
    with pytest.raises(RuntimeError):
        swap.into_place(catalog, Relation("s", "m__wv_tmp"), MODEL, Relation("s", "m"), None)
    assert catalog.calls == [
        ("rename", "m", "m__wv_backup"),
        ("rename", "m__wv_tmp", "m"),
        ("rename", "m__wv_backup", "m"),
    ]


class KilledMidSwap(Catalog):
    """A swap killed after it renamed the streaming table `m__wv_backup` (its folder /lake/m)."""

    def get_relation(self, database, schema, identifier):
        if identifier == "m__wv_backup":
            information = Streaming.information.replace("file:/warehouse/s.db/m", "file:/lake/m")
            return Streaming(schema, identifier, information=information)
        return super().get_relation(database, schema, identifier)


def test_a_streaming_table_renamed_aside_by_a_killed_swap_goes_with_the_folder_it_was_moved_to():
    """Killed after the new table took the name (its folder is /lake/m now): the old table and
    `/lake/m__wv_replaced` go, the new table's folder stays."""
    catalog = KilledMidSwap({"m"})
    swap.beside(catalog, MODEL, None)
    assert catalog.calls == [
        ("drop", "m__wv_backup"),
        ("remove", "file:/lake/m__wv_replaced"),
        ("location", "m"),
    ]


def test_a_streaming_table_renamed_aside_before_its_folder_moved_goes_with_that_folder():
    """Killed before the folder moved: no table has the model's name, so the folder the old table
    names is in the way of the new one's rename and goes too."""
    catalog = KilledMidSwap(set())
    swap.beside(catalog, MODEL, None)
    assert catalog.calls == [
        ("drop", "m__wv_backup"),
        ("remove", "file:/lake/m__wv_replaced"),
        ("remove", "file:/lake/m"),
    ]


def test_external_tables_keep_their_own_folders_and_leave_no_moved_folder():
    catalog = KilledMidSwap({"m"})
    swap.beside(catalog, MODEL, "/lake")
    assert not [call for call in catalog.calls if call[0] == "remove"]
