"""integration_tests/ — the dbt-utils-style project (seeds, window_view models, hand-computed
expected seeds, `equality` data tests) — built in-process on the test session's Spark.

dbt runs through dbtRunner in this process, so it reuses the session's JVM and metastore: the
profile is a tmp copy of integration_tests/profiles.yml pointed at the session's metastore
(`spark_params`), and --target-path / --log-path go to tmp so the repository stays clean.
"""

from __future__ import annotations

from typing import List

import pytest
import yaml

from tests.support.dbt_projects import REPO, errors, spark_params

PROJECT = REPO / "integration_tests"


def equality_tests_defined() -> List[str]:
    """The models that declare an `equality` data test, from the project's property files."""
    models = []
    for path in sorted((PROJECT / "models").rglob("*.yml")):
        for model in (yaml.safe_load(path.read_text()) or {}).get("models", []) or []:
            for test in (model.get("data_tests") or []) + (model.get("tests") or []):
                if isinstance(test, dict) and "equality" in test:
                    models.append(model["name"])
    return models


@pytest.mark.spark
def test_integration_project_builds_and_every_equality_test_passes(spark, spark_home, tmp_path, monkeypatch):
    monkeypatch.setenv("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    profiles = yaml.safe_load((PROJECT / "profiles.yml").read_text())
    output = profiles["integration_tests"]["outputs"]["dev"]
    assert output["type"] == "window_views"
    output["server_side_parameters"] = spark_params(spark_home)
    profiles_dir = tmp_path / "profiles"
    profiles_dir.mkdir()
    (profiles_dir / "profiles.yml").write_text(yaml.safe_dump(profiles))
    spark.sql(f"drop database if exists {output['schema']} cascade")

    expected_tests = equality_tests_defined()
    assert len(expected_tests) >= 25, expected_tests

    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(
        [
            "build",
            "--project-dir",
            str(PROJECT),
            "--profiles-dir",
            str(profiles_dir),
            "--target-path",
            str(tmp_path / "target"),
            "--log-path",
            str(tmp_path / "logs"),
        ]
    )
    assert result.exception is None, f"dbt build raised: {result.exception}"
    assert result.success, f"dbt build failed:\n{errors(result)}"

    results = list(result.result)
    tests = [r for r in results if r.node.resource_type == "test"]
    equality = [r for r in tests if getattr(r.node, "test_metadata", None) and r.node.test_metadata.name == "equality"]
    passed = [r for r in equality if r.status == "pass"]
    # every declared equality test ran and passed: a skipped or unparsed one fails this
    assert len(passed) == len(expected_tests), (
        f"{len(passed)} equality tests passed, {len(expected_tests)} defined; "
        f"not passed: {[(r.node.name, r.status) for r in equality if r.status != 'pass']}"
    )
    assert sorted(r.node.attached_node.split(".")[-1] for r in passed) == sorted(expected_tests)
    # every model of the project was built
    models = [r for r in results if r.node.resource_type == "model"]
    assert len(models) == len(list((PROJECT / "models").rglob("*.sql")))
    assert all(r.status == "success" for r in models)
    # dbt's artifacts went to tmp, not into the repository
    assert (tmp_path / "target" / "manifest.json").exists()
