from pathlib import Path

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.spark import session
from dbt.adapters.window_views.spark.session import LISTING_THRESHOLD, LOCAL_LISTING, check_java, embedded_settings


def test_missing_java_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))  # no bin/java there
    with pytest.raises(
        DbtRuntimeError, match=r"No Java runtime found\. Spark needs Java 17.*apt-get install openjdk-17"
    ):
        check_java.__wrapped__()


def test_old_java_is_refused(tmp_path, monkeypatch):
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(DbtRuntimeError, match="Java 11 found"):
        check_java.__wrapped__()


def test_embedded_defaults_live_under_target(tmp_path):
    settings = embedded_settings(tmp_path / "target", {})
    target = str((tmp_path / "target").resolve())
    assert settings["spark.sql.warehouse.dir"] == f"{target}/spark-warehouse"
    assert f"databaseName={target}/metastore_db" in settings["spark.hadoop.javax.jdo.option.ConnectionURL"]
    assert settings["spark.hadoop.hive.downloaded.resources.dir"] == f"{target}/hive_resources"
    log4j = Path(session.__file__).with_name("log4j2.properties")
    assert (
        settings["spark.driver.extraJavaOptions"]
        == f"-Dderby.system.home={target} -Dlog4j2.configurationFile={log4j.as_uri()}"
    )
    assert log4j.exists()
    assert settings["spark.sql.session.timeZone"] == "UTC"
    assert settings["spark.ui.enabled"] == "false"
    assert Path(target).parent == tmp_path.resolve()


def test_a_local_master_lists_a_reads_files_in_the_driver_a_cluster_as_spark_does(tmp_path):
    local = embedded_settings(tmp_path, {"spark.driver.memory": "4g"})
    assert local[LISTING_THRESHOLD] == LOCAL_LISTING and local["spark.driver.memory"] == "4g"
    assert embedded_settings(tmp_path, {"spark.master": "local[2]"})[LISTING_THRESHOLD] == LOCAL_LISTING
    cluster = embedded_settings(tmp_path, {"spark.master": "spark://m:7077"})
    assert LISTING_THRESHOLD not in cluster and cluster["spark.master"] == "spark://m:7077"
    assert embedded_settings(tmp_path, {LISTING_THRESHOLD: "64"})[LISTING_THRESHOLD] == "64"  # the profile's own
