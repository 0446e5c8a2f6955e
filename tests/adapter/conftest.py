"""dbt's adapter suite (dbt-tests-adapter) on the plugin: dbt's own pytest fixtures, one project
and schema per test class, with a profile on the worker's shared Spark session (tests/conftest.py),
so the suite starts no JVM of its own. The plugin is a drop-in for dbt-spark: these are the
classes dbt-spark runs, skipped only where dbt-spark skips them for its `spark_session` profile.
`ADAPTER_SUITE_TYPE=spark` runs the same suite on dbt-spark itself, to check what it expects."""

from __future__ import annotations

import getpass
import os

import pytest
from dbt.tests.fixtures.project import *  # noqa: F403  dbt's fixtures, in this folder only

from tests.support.dbt_projects import spark_params


@pytest.fixture(scope="class")
def dbt_profile_target(spark, spark_home):
    """dbt-spark's `spark_session` target (host included, as dbt-spark requires) as the plugin's,
    on the worker's session and metastore."""
    return {
        "type": os.environ.get("ADAPTER_SUITE_TYPE", "window_views"),
        "method": "session",
        "host": "localhost",
        "threads": 1,
        "server_side_parameters": spark_params(spark_home),
    }


@pytest.fixture(scope="class")
def logs_dir(tmp_path_factory, prefix):
    """dbt's fixture writes each class's logs under the repository's logs/; here under pytest's tmp."""
    path = tmp_path_factory.mktemp("logs") / prefix
    os.environ["DBT_LOG_PATH"] = str(path)
    yield str(path)
    del os.environ["DBT_LOG_PATH"]


@pytest.fixture(scope="class")
def profile_user():
    # a session profile names no user; Spark's catalog reports the process's user as the owner
    return getpass.getuser()
