"""The batch engine's file formats without Spark: Delta replaces its table in place, in one
CREATE OR REPLACE (no rename, no drop, the table's folder kept); a table of another format is
replaced once by the rename swap; parquet always builds beside and swaps."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dbt.adapters.window_views.batch import swap
from tests.unit.test_swap import MODEL, Catalog, Relation


@dataclass(frozen=True)
class DeltaTable(Relation):
    information: str = "Type: MANAGED\nProvider: delta\nLocation: file:/lake/m\n"


@pytest.mark.parametrize("location_root", [None, "/lake"])
def test_delta_replaces_its_table_in_place_with_no_rename_or_drop(location_root):
    catalog = Catalog({"m"})
    existing = DeltaTable("s", "m")
    delta = swap.table_format("delta")
    build = delta.build(catalog, MODEL, existing, location_root)
    delta.into_place(catalog, build, MODEL, existing)
    assert build.replace and build.relation == MODEL
    # the table keeps its folder (the catalog's location), asked only for an external table
    assert build.location == (None if location_root is None else "/lake/m")
    assert [c[0] for c in catalog.calls] == ([] if location_root is None else ["location"])


def test_a_first_delta_build_writes_the_tables_one_folder():
    build = swap.table_format("delta").build(Catalog(set()), MODEL, None, "/lake/")
    assert (build.relation, build.replace, build.location) == (MODEL, True, "/lake/m")


def test_a_parquet_table_becoming_delta_is_swapped_in_once():
    catalog = Catalog({"m"})
    existing = Relation("s", "m")
    delta = swap.table_format("delta")
    build = delta.build(catalog, MODEL, existing, None)
    delta.into_place(catalog, build, MODEL, existing)
    assert not build.replace and build.relation.identifier == "m__wv_tmp"
    assert ("rename", "m__wv_tmp", "m") in catalog.calls


@pytest.mark.parametrize("file_format", ["parquet", "orc"])
def test_other_formats_build_beside_in_their_own_run_folder(file_format):
    build = swap.table_format(file_format).build(Catalog(set()), MODEL, None, "/lake")
    assert not build.replace and build.relation.identifier == "m__wv_tmp"
    assert build.location is not None and build.location.startswith("/lake/m/run=")
