"""Window views stored on S3 (docs/s3.md): `location_root: s3a://...` against a real S3 API (moto's
server, tests/support/s3.py, checking credentials as AWS does) through hadoop-aws. A batch window
view rebuilt by its swap, an incremental batch window view, a streaming window view (its commits,
checkpoint and run lock on s3a) and a streaming table's rebuild swap give the rows the same models
give on local files; a missing bucket, refused credentials and an endpoint that does not answer are
named with the fix; a dbt process started from a profile's `s3` reaches the store with the
profile's credentials and shows the secret nowhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from dbt.adapters.window_views.spark import s3 as s3_jars
from dbt.adapters.window_views.spark.processes import started
from dbt.adapters.window_views.storage.filesystems import HadoopFileSystem
from dbt.adapters.window_views.streaming.commit.lock import Holder, RunLock
from tests.functional.test_streaming import DELIVERIES, TUMBLE_SUM, deliver, make_source, t
from tests.support import s3
from tests.support.dbt_projects import REPO, TEST_JVM, errors

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(
        not (s3.installed() and s3_jars.jars_if_cached()),
        reason="hadoop-aws is not fetched or moto is not installed (scripts/setup.sh; WINDOW_VIEWS_S3=0 skips them)",
    ),
]

MISSING, LOCKED, GONE = "wv-missing", "wv-locked", "wv-gone"
# one attempt against the stopped endpoint: S3A's own retries take four minutes to give up
NO_RETRIES = {"attempts.maximum": "1", "retry.limit": "1", "retry.interval": "10ms"}


@pytest.fixture(scope="module")
def server(spark):
    started = s3.Server().start()
    try:
        started.s3().create_bucket(Bucket=LOCKED)
        settings = s3.hadoop_settings(started)
        settings.update(s3.hadoop_settings(started, MISSING))
        locked = s3.hadoop_settings(started, LOCKED)
        locked[f"fs.s3a.bucket.{LOCKED}.secret.key"] = "not-the-secret"
        settings.update(locked)
        settings.update(s3.hadoop_settings(started, GONE))
        settings[f"fs.s3a.bucket.{GONE}.endpoint"] = f"http://127.0.0.1:{s3.free_port()}"
        settings.update({f"fs.s3a.bucket.{GONE}.{key}": value for key, value in NO_RETRIES.items()})
        s3.configure(spark, settings)
        yield started
    finally:
        started.stop()


TOTALS = (
    "{{{{ config(materialized='window_view', location_root='{location}') }}}}\n"
    "with bids as (select timestamp'2020-04-15 08:07:00' as bidtime, 2 as price)\n"
    "select window_start, window_end, sum(price) as price, count(*) as bids\n"
    "from {{{{ window_views.tumble('bids', 'bidtime', '10 minutes') }}}}\ngroup by window_start, window_end\n"
)


def profile_project(folder, schema: str, s3_profile) -> None:
    """A dbt project in `folder` whose profile's `s3` is `s3_profile`, for a dbt process of its own
    (its Spark started from that profile)."""
    home = folder / "spark"
    (folder / "models").mkdir()
    (folder / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": "s3_profile", "version": "1.0", "config-version": 2, "profile": "s3_profile"})
    )
    settings = {
        "spark.sql.warehouse.dir": str(home / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={home / 'metastore_db'};create=true",
        "spark.driver.extraJavaOptions": TEST_JVM,
        "spark.ui.enabled": "false",
    }
    profile = {"type": "window_views", "schema": schema, "threads": 1, "server_side_parameters": settings}
    (folder / "profiles.yml").write_text(
        yaml.safe_dump({"s3_profile": {"target": "dev", "outputs": {"dev": {**profile, "s3": s3_profile}}}})
    )


def in_own_process(driver: str, folder, timeout: int = 300) -> "subprocess.CompletedProcess[str]":
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", driver], env=env, capture_output=True, text=True, timeout=timeout, cwd=folder
    )


def root(server, project, what: str) -> str:
    return f"s3a://{server.bucket}/{project.schema}/{what}"


def streaming(name: str, location: str, extra: str = "") -> str:
    return (
        f"{{{{ config(materialized='window_view', execution='streaming', emit='on_window_close', "
        f"watermark={{'column': 'bidtime', 'delay': '1 minute'}}, location_root='{location}'{extra}) }}}}\n"
        + TUMBLE_SUM
    )


def batch(location: str, extra: str = "") -> str:
    return f"{{{{ config(materialized='window_view', location_root='{location}'{extra}) }}}}\n" + TUMBLE_SUM


def test_batch_window_views_on_s3a_equal_local_files(project, server, tmp_path):
    """A batch window view's rebuild swap and an incremental batch window view on s3a: the rows
    of the same models on local files, and the replaced build's files gone from the bucket."""
    make_source(project)
    project.write(
        "models/sources.yml",
        yaml.safe_dump(
            {
                "version": 2,
                "sources": [
                    {
                        "name": "raw",
                        "schema": "{{ target.schema }}",
                        "tables": [{"name": "bid", "config": {"event_time": "bidtime"}}],
                    }
                ],
            }
        ),
    )
    days = "event_time='window_start', batch_size='day', begin='2020-04-14'"
    project.model("on_s3", batch(root(server, project, "lake")))
    project.model("on_disk", batch(str(tmp_path / "lake")))
    project.model("days_s3", batch(root(server, project, "lake"), ", " + days))
    project.model("days_disk", batch(str(tmp_path / "lake"), ", " + days))
    deliver(project, DELIVERIES[0])
    project.dbt("run")
    first = server.keys(f"{project.schema}/lake/on_s3/")
    for delivery in DELIVERIES[1:]:
        deliver(project, delivery)
    project.dbt("run")
    expected = [(t("8:00"), t("8:10"), 20, 4), (t("8:10"), t("8:20"), 10, 3), (t("8:20"), t("8:30"), 1, 1)]
    assert project.rows("on_s3") == project.rows("on_disk") == expected
    # an incremental batch window view's table carries its batches' column beside the model's
    assert project.rows("days_s3") == project.rows("days_disk")
    assert [r[:4] for r in project.rows("days_s3")] == expected
    now = server.keys(f"{project.schema}/lake/on_s3/")
    assert [k for k in now if k.endswith(".parquet")] and not set(first) & set(now)


def test_a_streaming_window_view_commits_on_s3a(project, server):
    """Commits, checkpoint and the run lock on s3a: three runs give what the same stream gives on
    local files (test_streaming's test_tumble_on_window_close), the late row kept; a run while
    another holds the lock fails at once; a run with nothing new changes nothing; the bucket holds
    the table, its late table and the checkpoint."""
    make_source(project)
    project.model("eowc", streaming("eowc", root(server, project, "lake")))
    before = s3.statistics(project.spark, f"s3a://{server.bucket}/")
    for delivery in DELIVERIES:
        deliver(project, delivery)
        (node,) = project.dbt("run", "-s", "eowc").result
    assert node.message == "STREAM 1 batch, 4 in, 1 out, 1 late, watermark 2020-04-15 08:20:00"
    assert project.rows("eowc") == [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 10, 3)]
    late = project.spark.sql(f"select bidtime, price, item from {project.schema}.eowc__late").collect()
    assert [tuple(r) for r in late] == [(t("8:08"), 9, "L")]
    # the run lock on s3a: a live holder (a process of this host) fails the next run at once; once
    # it is gone, the run after takes the lock over and reads nothing new
    lock = f"{root(server, project, 'lake')}/eowc__checkpoint/run.lock"
    holder = subprocess.Popen(["sleep", "120"])
    try:
        held = RunLock(HadoopFileSystem(project.spark), lock, "other-run-id")
        held.me = Holder(held.me.run_id, held.me.host, holder.pid, started(holder.pid))
        assert held._create()
        text = errors(project.dbt("run", "-s", "eowc", ok=False))
        assert "another run of this model holds its checkpoint: run other-run-id" in text, text
    finally:
        holder.kill()
        holder.wait()
    (node,) = project.dbt("run", "-s", "eowc").result
    assert node.message.startswith("STREAM 0 batches, 0 in, 0 out, 0 late")
    assert not [k for k in server.keys(f"{project.schema}/lake/eowc__checkpoint/") if "run.lock" in k]
    assert project.rows("eowc") == [(t("8:00"), t("8:10"), 11, 3), (t("8:10"), t("8:20"), 10, 3)]
    keys = server.keys(f"{project.schema}/lake/")
    assert any("/_spark_metadata/" in k for k in keys), keys
    assert {k.split("/")[2] for k in keys} >= {"eowc", "eowc__late"}
    # publishing copies the staged files (S3 has no rename), never more than a handful a batch
    spent = s3.statistics(project.spark, f"s3a://{server.bucket}/")
    assert 0 < spent["object_copy_requests"] - before["object_copy_requests"] < 60


def test_a_streaming_table_rebuilt_on_s3a_is_swapped_in(project, server):
    """on_change='rebuild' on s3a: the changed model is streamed from all input beside the live
    table and swapped in; its rows are the new model's over all input."""
    make_source(project)
    location = root(server, project, "lake")
    project.model("rebuilt", streaming("rebuilt", location, ", on_change='rebuild'"))
    deliver(project, DELIVERIES[0])
    deliver(project, DELIVERIES[1])
    project.dbt("run", "-s", "rebuilt")
    assert project.rows("rebuilt") == [(t("8:00"), t("8:10"), 11, 3)]
    project.model(
        "rebuilt",
        streaming("rebuilt", location, ", on_change='rebuild'").replace(
            "count(*) as bids", "count(*) as bids, max(price) as top"
        ),
    )
    deliver(project, DELIVERIES[2])
    project.dbt("run", "-s", "rebuilt")
    # all input read anew: 08:08 is on time for the rebuilt stream, which reads it in one batch
    assert project.rows("rebuilt") == [(t("8:00"), t("8:10"), 20, 4, 9), (t("8:10"), t("8:20"), 10, 3, 6)]


@pytest.mark.parametrize(
    "bucket, says",
    [
        (MISSING, f"S3 bucket '{MISSING}' does not exist"),
        (LOCKED, "S3 refused this dbt's credentials"),
        (GONE, "no S3 endpoint answers"),
    ],
    ids=["no-bucket", "wrong-credentials", "endpoint-down"],
)
@pytest.mark.parametrize("execution", ["batch", "streaming"])
def test_s3_failures_are_named_with_the_fix(project, server, bucket, says, execution):
    make_source(project)
    deliver(project, DELIVERIES[0])
    location = f"s3a://{bucket}/{project.schema}"
    project.model("m", streaming("m", location) if execution == "streaming" else batch(location))
    text = errors(project.dbt("run", "-s", "m", ok=False))
    assert says in text and "fix:" in text, text
    assert "software.amazon" not in text and "\tat " not in text, text


@pytest.mark.parametrize(
    "bucket, says",
    [
        (MISSING, f"S3 bucket '{MISSING}' does not exist"),
        (LOCKED, "S3 refused this dbt's credentials"),
        (GONE, "no S3 endpoint answers at 127.0.0.1:"),
    ],
    ids=["no-bucket", "wrong-credentials", "endpoint-down"],
)
def test_a_stream_failing_on_s3_as_it_starts_names_s3_not_its_checkpoint(project, server, bucket, says):
    """S3 failing a stream's first write (its checkpoint's run lock): S3's cause and fix alone,
    not the checkpoint to be made writable, which would not mend it."""
    make_source(project)
    deliver(project, DELIVERIES[0])
    location = f"s3a://{bucket}/{project.schema}"
    project.model("m", streaming("m", location))
    text = errors(project.dbt("run", "-s", "m", ok=False))
    assert f"window_view model 'm' at {location}/m__checkpoint: {says}" in text, text
    assert "writable" not in text and "cannot write its checkpoint" not in text, text


def test_a_dead_endpoint_in_the_profile_fails_in_seconds(tmp_path):
    """The profile's s3.endpoint on a closed port: a batch and a streaming window view on s3a each
    fail within seconds with the endpoint and the fix (S3A's default retries took about four
    minutes a model), S3A's retries shortened because the endpoint did not answer as the session
    started (docs/s3.md)."""
    port, schema = s3.free_port(), "t_s3_dead"
    dead = {"endpoint": f"http://127.0.0.1:{port}", "path_style": True, "access_key_id": "k", "secret_access_key": "s"}
    profile_project(tmp_path, schema, dead)
    location = f"s3a://wv-lake/{schema}"
    models = tmp_path / "models"
    (models / "totals.sql").write_text(TOTALS.format(location=location))
    # the stream's input on local disk: an append-only model the same run builds first
    (models / "bids.sql").write_text(
        "{{ config(materialized='incremental', incremental_strategy='append', file_format='parquet') }}\n"
        "select timestamp'2020-04-15 08:07:00' as bidtime, 2 as price, 'A' as item\n"
    )
    (models / "stream.sql").write_text(
        streaming("stream", location).replace("source('raw', 'bid')", "ref('bids')"),
    )
    where = ["--project-dir", str(tmp_path), "--profiles-dir", str(tmp_path)]
    driver = f"from dbt.cli.main import dbtRunner; dbtRunner().invoke(['run', *{where!r}])\n"
    # S3A's default retries would take about four minutes for each of the two models
    done = in_own_process(driver, tmp_path, timeout=240)
    assert f"S3 endpoint 127.0.0.1:{port} does not answer (Connection refused)" in done.stdout, done.stdout[-3000:]
    ran = json.loads((tmp_path / "target" / "run_results.json").read_text())["results"]
    results = {r["unique_id"].rsplit(".", 1)[1]: r for r in ran}
    assert results["bids"]["status"] == "success", results["bids"]
    for name in ("totals", "stream"):
        result = results[name]
        assert result["status"] == "error" and result["execution_time"] < 60, result
        message = result["message"]
        assert f"no S3 endpoint answers at 127.0.0.1:{port} for {location}/" in message, message
        assert "fix: start the S3 service, or correct s3.endpoint in the profile" in message, message


def test_a_profile_s_s3_reaches_the_store_and_its_secret_is_never_shown(server, tmp_path):
    """A dbt process of its own, its Spark started from the profile's `s3` alone: the model is
    written to the bucket with the profile's credentials, and neither `dbt debug`, dbt's output nor
    its debug log shows the secret."""
    schema = "t_s3_profile"
    profile_project(tmp_path, schema, server.profile())
    location = f"s3a://{server.bucket}/{schema}"
    (tmp_path / "models" / "totals.sql").write_text(TOTALS.format(location=location))
    # `dbt debug` (it prints the profile's connection settings) and `dbt --debug run`, in one process
    where = ["--project-dir", str(tmp_path), "--profiles-dir", str(tmp_path)]
    driver = (
        "import sys; from dbt.cli.main import dbtRunner\n"
        f"shown = dbtRunner().invoke(['debug', *{where!r}]).success\n"
        f"ran = dbtRunner().invoke(['--debug', 'run', *{where!r}]).success\n"
        "sys.exit(0 if shown and ran else 1)\n"
    )
    done = in_own_process(driver, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert [k for k in server.keys(f"{schema}/totals/") if k.endswith(".parquet")]
    # what `dbt debug` shows of the connection holds the endpoint, and no credential
    assert f"'spark.hadoop.fs.s3a.endpoint': '{server.endpoint}'" in done.stdout, done.stdout[-3000:]
    log = (tmp_path / "logs" / "dbt.log").read_text()
    for text in (done.stdout, done.stderr, log):
        assert server.secret_access_key not in text
