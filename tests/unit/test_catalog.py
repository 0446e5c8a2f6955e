"""The docs catalog's rows without Spark: a session's temporary views, which Spark lists in every
schema with none, are no model's and give no row (dbt's catalog would fail on their schema)."""

from __future__ import annotations

from types import SimpleNamespace

from dbt.adapters.spark.impl import SparkAdapter

from dbt.adapters.window_views.catalog import WindowViewCatalog


def test_a_temporary_view_gives_no_catalog_row(monkeypatch):
    def spark_rows(self, relation):
        return iter([{"table_schema": relation.schema, "column_name": "k"}])

    monkeypatch.setattr(SparkAdapter, "_get_columns_for_catalog", spark_rows)
    catalog = object.__new__(WindowViewCatalog)
    temporary = SimpleNamespace(schema=None, identifier="_wv_in_bids", information="")
    assert list(catalog._get_columns_for_catalog(temporary)) == []
    # a table of a schema keeps its rows (its count is asked only for 0 rows or a window view)
    table = SimpleNamespace(schema="s", identifier="t", information="")
    assert list(catalog._get_columns_for_catalog(table)) == [{"table_schema": "s", "column_name": "k"}]
