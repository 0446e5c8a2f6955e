"""The batch engine's file formats without Spark: Delta replaces its table in place, in one
CREATE OR REPLACE (no rename, no drop, the table's folder kept); a table of another format is
replaced once by the rename swap; parquet always builds beside and swaps."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.batch import swap
from dbt.adapters.window_views.spark import lakehouse
from dbt.adapters.window_views.storage import table_format
from tests.unit.test_swap import MODEL, Catalog, Relation


class Session:
    """The Spark session as the Delta check reads it: its extensions."""

    def __init__(self, extensions):
        self.conf = SimpleNamespace(get=lambda key, default=None: extensions)


def session_catalog(monkeypatch, tables, extensions=lakehouse.DELTA_EXTENSION):
    """dbt's relation cache on the embedded session (`extensions`: the session's), no folder listed."""
    monkeypatch.setattr(table_format, "spark_session", lambda params: Session(extensions))
    catalog = Catalog(tables)
    creds = SimpleNamespace(method=SparkConnectionMethod.SESSION, server_side_parameters={})
    catalog.config = SimpleNamespace(credentials=creds)
    catalog.list_location = lambda location: []
    return catalog


@dataclass(frozen=True)
class DeltaTable(Relation):
    information: str = "Type: MANAGED\nProvider: delta\nLocation: file:/lake/m\n"


@pytest.mark.parametrize("location_root", [None, "/lake"])
def test_delta_replaces_its_table_in_place_with_no_rename_or_drop(location_root, monkeypatch):
    catalog = session_catalog(monkeypatch, {"m"})
    existing = DeltaTable("s", "m")
    delta = swap.table_format("delta")
    build = delta.build(catalog, MODEL, existing, location_root)
    delta.into_place(catalog, build, MODEL, existing)
    assert build.replace and build.relation == MODEL
    # the table keeps its folder (the catalog's location), asked only for an external table
    assert build.location == (None if location_root is None else "/lake/m")
    assert [c[0] for c in catalog.calls] == ([] if location_root is None else ["location"])


def test_a_first_delta_build_writes_the_tables_one_folder(monkeypatch):
    build = swap.table_format("delta").build(session_catalog(monkeypatch, set()), MODEL, None, "/lake/")
    assert (build.relation, build.replace, build.location) == (MODEL, True, "/lake/m")


def test_a_parquet_table_becoming_delta_is_swapped_in_once(monkeypatch):
    catalog = session_catalog(monkeypatch, {"m"})
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


def test_delta_on_a_session_without_delta_names_the_model_and_the_fix(monkeypatch):
    catalog = session_catalog(monkeypatch, set(), extensions=None)
    with pytest.raises(DbtRuntimeError) as raised:
        swap.table_format("delta").build(catalog, MODEL, None, None)
    message = str(raised.value)
    assert (
        "window_view model 'm': file_format='delta' needs Delta Lake in the Spark this dbt command started" in message
    )
    assert "the profile's lakehouse: auto" in message
    assert "fix: set lakehouse: delta in the profile and run dbt from a venv with the [delta] extra" in message


@dataclass(frozen=True)
class IcebergTable(Relation):
    information: str = (
        "Type: EXTERNAL\nProvider: hive\nTable Properties: [format=iceberg/parquet, table_type=ICEBERG]\n"
    )


def test_iceberg_replaces_its_table_in_place_and_a_parquet_one_once(monkeypatch):
    catalog = session_catalog(monkeypatch, {"m"}, extensions=lakehouse.ICEBERG.extension)
    iceberg = swap.table_format("iceberg")
    build = iceberg.build(catalog, MODEL, IcebergTable("s", "m"), None)
    assert (build.relation, build.replace, catalog.calls) == (MODEL, True, [])
    build = iceberg.build(catalog, MODEL, Relation("s", "m"), None)
    iceberg.into_place(catalog, build, MODEL, Relation("s", "m"))
    assert not build.replace and ("rename", "m__wv_tmp", "m") in catalog.calls


def test_iceberg_on_a_session_without_iceberg_names_the_model_and_the_fix(monkeypatch):
    catalog = session_catalog(monkeypatch, set(), extensions=lakehouse.DELTA_EXTENSION)
    with pytest.raises(DbtRuntimeError) as raised:
        swap.table_format("iceberg").build(catalog, MODEL, None, None)
    message = str(raised.value)
    assert "window_view model 'm': file_format='iceberg' needs Apache Iceberg in the Spark this dbt" in message
    assert "fix: set lakehouse: iceberg in the profile and run dbt from a venv with the [iceberg] extra" in message
