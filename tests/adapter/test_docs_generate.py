"""dbt's `dbt docs generate` tests (dbt.tests.adapter.basic.test_docs_generate) on the plugin. dbt's
expected catalog is Postgres's; Spark's has its own types, table types and owner, and the table
stats dbt-spark reads from Spark: bytes and rows of a table model, none of a seed or a view."""

from __future__ import annotations

import json
import os

import pytest
from dbt.tests.adapter.basic import expected_catalog
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate, BaseDocsGenReferences
from dbt.tests.util import AnyInteger

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestRemovedIn10Warning")


def _stat(name: str) -> dict:
    return {"id": name, "label": name, "value": AnyInteger(), "include": True, "description": None}


def table_stats() -> dict:
    """A table model's stats as dbt-spark reports them: Spark's `Statistics: <n> bytes, <n> rows`."""
    has_stats = {**expected_catalog.no_stats()["has_stats"], "value": True}
    return {"bytes": _stat("bytes"), "rows": _stat("rows"), "has_stats": has_stats}


def spark_types(profile_user: str) -> dict:
    return {
        "role": profile_user,
        "id_type": "long",
        "text_type": "string",
        "time_type": "timestamp",
        "view_type": "view",
        "table_type": "table",
    }


def zero_based(catalog: dict) -> dict:
    """dbt's expected references catalog numbers columns from 1; dbt-spark's catalog from 0."""
    for kind in ("nodes", "sources"):
        for node in catalog[kind].values():
            # nodes share their column dicts: each gets its own
            node["columns"] = {name: {**c, "index": c["index"] - 1} for name, c in node["columns"].items()}
    return catalog


class TestDocsGenerate(BaseDocsGenerate):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project, profile_user):
        # model is a view and second_model a view in the alternate schema: no stats for either
        return expected_catalog.base_expected_catalog(
            project, **spark_types(profile_user), model_stats=expected_catalog.no_stats()
        )


class TestDocsGenReferences(BaseDocsGenReferences):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project, profile_user):
        expected = expected_catalog.expected_references_catalog(
            project,
            **spark_types(profile_user),
            bigint_type="long",
            model_stats=table_stats(),
            seed_stats=expected_catalog.no_stats(),
            view_summary_stats=expected_catalog.no_stats(),
        )
        return zero_based(expected)

    def test_references(self, project, expected_catalog):
        super().test_references(project, expected_catalog)
        # and the count is the table's: Spark's `0 rows` is a placeholder, not a count (one seed row)
        with open(os.path.join(project.project_root, "target", "catalog.json")) as f:
            stats = json.load(f)["nodes"]["model.test.ephemeral_summary"]["stats"]
        assert stats["rows"]["value"] == 1, stats
