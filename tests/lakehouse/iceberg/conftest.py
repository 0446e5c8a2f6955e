"""Window views on Apache Iceberg: one Spark session with Iceberg's runtime, extension and
SparkSessionCatalog over the embedded metastore (the profile's `lakehouse: iceberg`). A session's
catalog class is fixed when it starts, and Delta's is another: scripts/test.sh runs this folder in
a pytest process of its own, in .venv-delta (PySpark 4.1)."""

from __future__ import annotations

import re

import pytest
import yaml

from dbt.adapters.window_views.spark import lakehouse
from tests.support.dbt_projects import DbtProject, spark_params

if lakehouse.spark_line() not in lakehouse.ICEBERG.jars:
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(scope="session")
def spark(spark_home):
    from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

    params = {**spark_params(spark_home), lakehouse.LAKEHOUSE_KEY: lakehouse.ICEBERG.name}
    return spark_session(embedded_settings(spark_home, params))


@pytest.fixture
def project(request, tmp_path, spark_home, spark) -> DbtProject:
    """A dbt project whose profile says `lakehouse: iceberg`."""
    schema = "i_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    spark.sql(f"drop database if exists {schema} cascade")
    made = DbtProject(tmp_path / "project", schema, spark_home, spark)
    profiles = made.root / "profiles.yml"
    profile = yaml.safe_load(profiles.read_text())
    profile["wv_test"]["outputs"]["dev"]["lakehouse"] = lakehouse.ICEBERG.name
    profiles.write_text(yaml.safe_dump(profile))
    return made
