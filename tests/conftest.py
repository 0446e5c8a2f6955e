"""Shared fixtures: one local Spark session for the whole run, and throwaway dbt projects that
use it in-process (dbtRunner), each in its own schema. The helpers they use, and the tests
import, are in tests/support."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.support.dbt_projects import DbtProject, spark_params

# dbt's usage tracking costs each in-process command a tenth of a second and, on a machine
# without internet, a failed send; every dbt here (and in subprocesses) runs without it
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")


def pytest_configure(config):
    """dbt's own test fixtures (dbt.tests.fixtures.project) keep each macro's parsed Jinja by its
    source: a new test project's full parse then reads dbt's, dbt-spark's and the plugin's ~500
    macros from memory (1.1 s -> 0.2 s a parse here), and most tests start one."""
    from dbt_common.tests import enable_test_caching

    enable_test_caching()


@pytest.fixture(scope="session")
def spark_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("spark")


@pytest.fixture(scope="session")
def spark(spark_home):
    from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

    return spark_session(embedded_settings(spark_home, spark_params(spark_home)))


@pytest.fixture
def project(request, tmp_path, spark_home, spark) -> DbtProject:
    schema = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    spark.sql(f"drop database if exists {schema} cascade")
    return DbtProject(tmp_path / "project", schema, spark_home, spark)


@pytest.fixture(params=["local", "objectstore"])
def fs(request):
    """The filesystem local locations get in this process: the local disk, or one with an object
    store's semantics (tests/support/objectstore.py) for the commit protocol's tests."""
    from dbt.adapters.window_views.storage import filesystems
    from tests.support import objectstore

    if request.param == "objectstore":
        yield objectstore.install()
        objectstore.uninstall()
    else:
        yield filesystems.LOCAL


@pytest.fixture(scope="session")
def standalone_cluster(tmp_path_factory):
    """A Spark standalone cluster on loopback, one for the run (tests/support/cluster.py)."""
    from tests.support.cluster import start_cluster

    cluster = start_cluster(tmp_path_factory.mktemp("cluster"))
    try:
        yield cluster
    finally:
        cluster.stop()


# The longest modules first (bench/README.md, "The test suite's time"): with two workers taking
# one module at a time, a long module started last leaves the other worker idle until it ends
SLOW_FIRST = (
    # the main run's longest, by worker-seconds on 2026-12-03
    "test_streaming_over.py",
    "test_streaming_failures.py",
    "test_streaming.py",
    "test_incremental_window_views.py",
    "test_streaming_over_random.py",
    "test_streaming_idle.py",
    "test_streaming_join.py",
    "test_streaming_kappa.py",
    "test_streaming_panes.py",
    "test_streaming_rebuild.py",
    "test_s3a.py",
    "test_integration_project.py",
    "test_nexmark.py",
    "test_window_aggregate.py",
    # the drills' (`--drills` runs only them, so only their order among themselves counts)
    "test_streaming_crash.py",
    "test_warm_spark.py",
    "test_cluster.py",
    "test_class_archive_build.py",
    "test_wheel.py",
    "test_spark_connect.py",
)


def pytest_collection_modifyitems(items):
    rank = {name: place for place, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a module's order stays
