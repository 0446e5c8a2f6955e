"""The class archive, really built and really mapped: a background build (its own JVM, dumping
its classes at exit) leaves a whole archive and nothing else, and the next Spark start in another
process loads Spark's classes from it."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

from dbt.adapters.window_views.spark import class_archive
from tests.support.dbt_projects import REPO

pytestmark = pytest.mark.drill  # a builder JVM and a Spark start of their own: scripts/test.sh --drills
BUILD_WAIT = 300  # seconds: a Spark start and a few statements at the lowest priority, on 2 busy cores


def test_a_background_build_serves_the_next_spark_start(tmp_path, monkeypatch):
    cache = tmp_path / "jvm"
    monkeypatch.setenv(class_archive.CACHE_ENV, str(cache))
    found = class_archive.archive()
    assert found is not None
    assert class_archive.jvm_options() == ""  # not built yet: this start goes without, and builds it
    deadline = time.time() + BUILD_WAIT
    while found.building.exists() and time.time() < deadline:
        time.sleep(1)
    log = found.path.with_name(found.path.name + ".log")
    assert found.path.is_file(), f"no archive: {log.read_text() if log.exists() else 'no log'}"
    assert not found.failed.exists() and not found.building.exists()
    assert sorted(p.name for p in cache.iterdir()) == sorted([found.path.name, log.name])  # no dump left

    classes = tmp_path / "classes.log"
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from dbt.adapters.window_views.spark.session import embedded_settings, spark_session
        params = embedded_settings(Path({str(tmp_path / "target")!r}), {{}})
        params["spark.driver.extraJavaOptions"] += " -Xlog:class+load=info:file={classes}"
        spark = spark_session(params)
        assert spark.sql("select 1 as x").collect()[0].x == 1
        assert "SharedArchiveFile" in spark.sparkContext.getConf().get("spark.driver.extraJavaOptions")
        """
    )
    env = {**os.environ, class_archive.CACHE_ENV: str(cache)}
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "[cds" not in proc.stdout + proc.stderr  # the JVM says nothing of its archive
    loaded = classes.read_text()
    assert "org.apache.spark.sql.SparkSession source: shared objects file (top)" in loaded
