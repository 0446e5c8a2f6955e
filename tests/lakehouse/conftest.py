"""Window views on Delta Lake: one Spark session with Delta's jars, extension and catalog
(the profile's `lakehouse: delta`), for the second venv scripts/setup.sh makes (.venv-delta:
PySpark 4.1 and the [delta] extra). Without delta-spark installed (the main venv) nothing here
is collected."""

from __future__ import annotations

import re

import pytest
import yaml

from dbt.adapters.window_views.spark import lakehouse
from tests.support.dbt_projects import DbtProject, spark_params

if not lakehouse.extra_installed(lakehouse.DELTA_LAKE):
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(scope="session")
def spark(spark_home):
    from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

    params = {**spark_params(spark_home), lakehouse.LAKEHOUSE_KEY: lakehouse.DELTA}
    return spark_session(embedded_settings(spark_home, params))


@pytest.fixture
def project(request, tmp_path, spark_home, spark) -> DbtProject:
    """A dbt project whose profile says `lakehouse: delta`."""
    schema = "d_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    spark.sql(f"drop database if exists {schema} cascade")
    made = DbtProject(tmp_path / "project", schema, spark_home, spark)
    profiles = made.root / "profiles.yml"
    profile = yaml.safe_load(profiles.read_text())
    profile["wv_test"]["outputs"]["dev"]["lakehouse"] = "delta"
    profiles.write_text(yaml.safe_dump(profile))
    return made
