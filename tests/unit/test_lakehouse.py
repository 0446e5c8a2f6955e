"""The profile's lakehouse: which Delta (and Iceberg) runs on which PySpark, the settings that turn it on, and
the errors a user sees when its jars are missing or the PySpark has no Delta build (no Spark)."""

from __future__ import annotations

import json

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.window_views.spark import lakehouse


@pytest.fixture
def jar_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(lakehouse.CACHE_ENV, str(tmp_path))
    return tmp_path


def fetched(cache, runtime, names):
    folder = cache / runtime.folder
    folder.mkdir()
    for name in names:
        (folder / name).write_bytes(b"jar")
    (folder / lakehouse.MANIFEST).write_text(json.dumps({"jars": names}))
    return folder


def test_pyspark_4_3_has_no_delta_and_the_error_names_the_extra():
    with pytest.raises(DbtRuntimeError) as raised:
        lakehouse.runtime_jar(lakehouse.DELTA_LAKE, "4.3.0")
    message = str(raised.value)
    assert "PySpark 4.3.0" in message
    assert "io.delta:delta-spark_4.1_2.13:4.4.0" in message
    assert "pip install 'dbt-window-views[delta]'" in message


def test_pyspark_4_1_runs_delta_4_4_for_spark_4_1():
    assert lakehouse.runtime_jar(lakehouse.DELTA_LAKE, "4.1.4").coordinates == "io.delta:delta-spark_4.1_2.13:4.4.0"


def test_missing_jars_name_the_coordinates_and_the_fetch_command(jar_cache):
    runtime = lakehouse.runtime_jar(lakehouse.DELTA_LAKE, "4.1.4")
    with pytest.raises(DbtRuntimeError) as raised:
        lakehouse.cached_jars(lakehouse.DELTA_LAKE, runtime)
    message = str(raised.value)
    assert runtime.coordinates in message
    assert lakehouse.FETCH_COMMAND in message


def test_a_jar_gone_from_the_cache_is_named(jar_cache):
    runtime = lakehouse.runtime_jar(lakehouse.DELTA_LAKE, "4.1.4")
    folder = fetched(
        jar_cache, runtime, ["io.delta_delta-spark_4.1_2.13-4.4.0.jar", "io.delta_delta-storage-4.4.0.jar"]
    )
    (folder / "io.delta_delta-storage-4.4.0.jar").unlink()
    with pytest.raises(DbtRuntimeError, match="delta-storage-4.4.0.jar missing"):
        lakehouse.cached_jars(lakehouse.DELTA_LAKE, runtime)


def test_delta_adds_the_cached_jars_extension_and_catalog(jar_cache, monkeypatch):
    runtime = lakehouse.runtime_jar(lakehouse.DELTA_LAKE, "4.1.4")
    monkeypatch.setattr(lakehouse, "runtime_jar", lambda made: runtime)
    folder = fetched(jar_cache, runtime, ["a-1.jar", "b-2.jar"])
    settings = lakehouse.with_lakehouse(
        {lakehouse.LAKEHOUSE_KEY: "delta", "spark.jars": "/x/mine.jar", lakehouse.EXTENSIONS: "my.Extension"}
    )
    assert lakehouse.LAKEHOUSE_KEY not in settings
    assert settings["spark.jars"].split(",") == ["/x/mine.jar", str(folder / "a-1.jar"), str(folder / "b-2.jar")]
    assert settings[lakehouse.EXTENSIONS] == f"my.Extension,{lakehouse.DELTA_EXTENSION}"
    assert settings[lakehouse.CATALOG] == lakehouse.DELTA_LAKE.catalog
    # a small log read back in a few tasks, not 50; the profile's own number kept
    snapshots = "spark.databricks.delta.snapshotPartitions"
    assert settings[snapshots] == "4"
    assert lakehouse.with_lakehouse({lakehouse.LAKEHOUSE_KEY: "delta", snapshots: "64"})[snapshots] == "64"


def test_none_and_auto_without_the_extra_leave_the_settings_alone(monkeypatch):
    monkeypatch.setattr(lakehouse, "extra_installed", lambda made: False)
    assert lakehouse.with_lakehouse({"spark.master": "local[1]"}) == {"spark.master": "local[1]"}
    assert lakehouse.with_lakehouse({lakehouse.LAKEHOUSE_KEY: "none"}) == {}


def test_ivy_jars_pyspark_ships_are_left_out():
    spark_jars = ["jackson-core-2.18.2.jar", "zstd-jni-1.5.6-9.jar"]
    assert lakehouse._bundled("com.fasterxml.jackson.core_jackson-core-2.13.5.jar", spark_jars)
    assert lakehouse._bundled("com.github.luben_zstd-jni-1.5.7-3.jar", spark_jars)
    assert not lakehouse._bundled("io.delta_delta-spark_4.1_2.13-4.4.0.jar", spark_jars)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"lakehouse": "hudi"},
            "profile setting 'lakehouse' = 'hudi' is not valid; expected one of: auto, none, delta",
        ),
        ({"lakehouse": "delta", "method": "thrift"}, "configures the Spark the plugin starts (method: session)"),
        ({"lakehouse": "delta", "warm_spark": True}, "the warm Spark server does not start with Delta Lake's jars yet"),
    ],
)
def test_profile_refuses_a_bad_lakehouse(fields, message):
    from dbt.adapters.window_views.connections import WindowViewsCredentials

    data = {"schema": "s", "database": "s", "host": "h", **fields}
    with pytest.raises(DbtRuntimeError) as raised:
        WindowViewsCredentials.from_dict(WindowViewsCredentials.__pre_deserialize__(data))
    assert message in str(raised.value)


def test_profile_hands_delta_to_the_session():
    from dbt.adapters.window_views.connections import WindowViewsCredentials

    data = {"schema": "s", "database": "s", "lakehouse": "delta"}
    creds = WindowViewsCredentials.from_dict(WindowViewsCredentials.__pre_deserialize__(data))
    assert creds.server_side_parameters[lakehouse.LAKEHOUSE_KEY] == "delta"


def test_an_unreachable_maven_is_named_with_the_coordinates_and_the_fix(jar_cache, monkeypatch):
    import subprocess

    ivy_says = (
        ":: problems summary ::\n:::: WARNINGS\n\t\t::::::::::::::::::::::::::::::::::::::::::::::\n"
        "\t\t::          UNRESOLVED DEPENDENCIES         ::\n"
        "\t\t:: io.delta#delta-spark_4.1_2.13;4.4.0: not found\n"
        "Exception in thread main java.lang.RuntimeException: [unresolved dependency: io.delta#delta-spark_4.1_2.13;4.4.0: not found]\n"
    )
    monkeypatch.setattr(
        lakehouse.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1, stdout="", stderr=ivy_says)
    )
    runtime = lakehouse.runtime_jar(lakehouse.DELTA_LAKE, "4.1.4")
    with pytest.raises(DbtRuntimeError) as raised:
        lakehouse.fetch(runtime)
    message = str(raised.value)
    assert "could not fetch io.delta:delta-spark_4.1_2.13:4.4.0 from Maven Central (spark-submit exited 1" in message
    assert "unresolved dependency: io.delta#delta-spark_4.1_2.13;4.4.0: not found" in message
    assert "reaches https://repo1.maven.org" in message and lakehouse.FETCH_COMMAND in message
    assert not (jar_cache / runtime.folder).exists()  # nothing half fetched is left as if whole


def test_iceberg_runs_on_pyspark_4_1_and_names_its_extra_on_4_3():
    assert lakehouse.runtime_jar(lakehouse.ICEBERG, "4.1.4").coordinates == (
        "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0"
    )
    with pytest.raises(DbtRuntimeError) as raised:
        lakehouse.runtime_jar(lakehouse.ICEBERG, "4.3.0")
    message = str(raised.value)
    assert "lakehouse 'iceberg' needs PySpark 4.0, 4.1, and this install has PySpark 4.3.0" in message
    assert "pip install 'dbt-window-views[iceberg]'" in message


def test_iceberg_adds_its_session_catalog_over_the_metastore(jar_cache, monkeypatch):
    runtime = lakehouse.runtime_jar(lakehouse.ICEBERG, "4.1.4")
    monkeypatch.setattr(lakehouse, "runtime_jar", lambda made: runtime)
    folder = fetched(jar_cache, runtime, ["iceberg-runtime-1.jar"])
    mine = "spark.hadoop.datanucleus.connectionPoolingType"
    settings = lakehouse.with_lakehouse({lakehouse.LAKEHOUSE_KEY: "iceberg", mine: "DBCP"})
    assert settings["spark.jars"] == str(folder / "iceberg-runtime-1.jar")
    assert settings[lakehouse.CATALOG] == "org.apache.iceberg.spark.SparkSessionCatalog"
    assert settings[f"{lakehouse.CATALOG}.type"] == "hive"
    assert settings["spark.hadoop.iceberg.engine.hive.lock-enabled"] == "false"
    assert settings[mine] == "DBCP"  # the profile's own setting is kept
    # auto never picks Iceberg: it has no Python package of its own to tell it was installed
    assert not lakehouse.extra_installed(lakehouse.ICEBERG)
