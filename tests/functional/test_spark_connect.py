"""A real Spark Connect server on loopback (started from PySpark's own sbin scripts): a batch and
a streaming window view built through `spark.remote`, by `dbt run` in a separate process (this
process already holds a classic session).

The dbt process is a remote client: it reads and writes no table or checkpoint file itself.
It runs in its own mount namespace, where the server's directory (its warehouse, so every
table, late table and checkpoint, and its working directory) is an empty tmpfs: a file the
client opened there would be missing, and one it wrote would be left in that tmpfs, which
must still be empty when dbt returns. The profile names only `spark.remote`."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import List

import pyspark
import pytest
import yaml

from tests.support import processes
from tests.support.processes import run_command

pytestmark = pytest.mark.drill  # a Spark Connect server of its own: scripts/test.sh --drills
SPARK_HOME = Path(pyspark.__file__).parent
DBT = Path(sys.executable).with_name("dbt")


# the server binds port 0 and its log says where: a port picked here could be taken before it binds
STARTED_AT = re.compile(r"Spark Connect server started at: \S+:(\d+)")


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    home = tmp_path_factory.mktemp("connect")
    env = {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOG_DIR": str(home / "logs"),
        "SPARK_PID_DIR": str(home),
        "PYSPARK_PYTHON": sys.executable,  # foreachBatch functions run in this venv's Python
    }
    conf = {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": "0",
        "spark.sql.warehouse.dir": str(home / "warehouse"),
        # Spark's class archive once built, as the plugin's warm server gets it
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={home} {processes.test_jvm()}",
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={home / 'metastore_db'};create=true",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "4",
        "spark.ui.enabled": "false",
    }
    args = [a for k, v in conf.items() for a in ("--conf", f"{k}={v}")]
    subprocess.run(
        ["bash", str(SPARK_HOME / "sbin" / "start-connect-server.sh"), "--master", "local[2]", *args],
        env=env,
        cwd=home,
        check=True,
        capture_output=True,
    )
    deadline, port = time.time() + 120, None
    while port is None and time.time() < deadline:
        logs = "\n".join(p.read_text(errors="replace") for p in (home / "logs").glob("*.out"))
        started = STARTED_AT.search(logs)
        port = started.group(1) if started else None
        time.sleep(1)
    if port is None:
        pytest.fail(f"Spark Connect server did not start:\n{logs[-3000:]}")
    yield {"url": f"sc://127.0.0.1:{port}", "home": home}
    subprocess.run(
        ["bash", str(SPARK_HOME / "sbin" / "stop-connect-server.sh")], env=env, cwd=home, capture_output=True
    )


def hiding(folder: Path) -> List[str]:
    """A command prefix that runs the command where `folder` is an empty tmpfs (a private mount
    namespace), then prints what the command left in it after the line LEFT BEHIND."""
    quoted = shlex.quote(str(folder))
    script = f'mount -t tmpfs none {quoted} || exit 97; "$@"; rc=$?; echo LEFT BEHIND; find {quoted} -mindepth 1 | head -20; exit $rc'
    return ["unshare", "--mount", "--propagation", "private", "bash", "-c", script, "hiding"]


def left_behind(out: str) -> List[str]:
    return out.split("LEFT BEHIND\n", 1)[1].split()


def connect_sql(url: str, *statements: str) -> list:
    """Run SQL through a Spark Connect client in a separate process; every statement's rows."""
    script = textwrap.dedent(
        f"""
        import json, sys, warnings
        warnings.simplefilter("ignore")
        from pyspark.sql import SparkSession
        spark = SparkSession.builder.remote({url!r}).getOrCreate()
        rows = [[[str(v) for v in r] for r in spark.sql(sql).collect()] for sql in json.loads(sys.argv[1])]
        print(json.dumps(rows))
        """
    )
    proc = run_command([sys.executable, "-c", script, json.dumps(statements)], cwd=Path.cwd())
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_batch_and_streaming_window_views_through_spark_connect(connect_server, tmp_path):
    url = connect_server["url"]
    root = tmp_path / "project"
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": "wv_connect", "version": "1.0", "config-version": 2, "profile": "wv_connect"})
    )
    profile = {
        "type": "window_views",
        "method": "session",
        "schema": "remote",
        "host": "local",
        "server_side_parameters": {"spark.remote": url},
    }
    (root / "profiles.yml").write_text(yaml.safe_dump({"wv_connect": {"target": "dev", "outputs": {"dev": profile}}}))
    (root / "models" / "sources.yml").write_text(
        "version: 2\nsources:\n  - name: raw\n    schema: remote\n    tables:\n      - name: bid\n      - name: inc_bid\n"
    )
    select = """
        select window_start, window_end, sum(price) as price
        from {{ window_views.tumble(source('raw', 'bid'), 'bidtime', '10 minutes') }}
        group by window_start, window_end
    """
    (root / "models" / "batch_tumble.sql").write_text("{{ config(materialized='window_view') }}" + select)
    # an incremental batch window view: its three hours are computed as one and written in one job
    # on the server, then each moved to its batch's directory there (incremental.py)
    (root / "models" / "inc_tumble.sql").write_text(
        "{{ config(materialized='window_view', event_time='window_time', batch_size='hour', "
        "begin='2020-04-15 07:00:00') }}"
        "select window_start, window_end, window_time, sum(price) as price "
        "from {{ window_views.tumble(source('raw', 'inc_bid'), 'bidtime', '10 minutes') }} "
        "group by window_start, window_end, window_time"
    )
    (root / "models" / "stream_tumble.sql").write_text(
        "{{ config(materialized='window_view', execution='streaming', emit='on_window_close', "
        "watermark={'column': 'bidtime', 'delay': '1 minute'}) }}" + select
    )

    def deliver(*rows: str) -> None:
        values = ", ".join(
            f"(timestamp'2020-04-15 {hhmm}:00', {price}, '{item}')" for hhmm, price, item in (r.split() for r in rows)
        )
        connect_sql(url, f"insert into remote.bid values {values}")

    connect_sql(
        url,
        "create database if not exists remote",
        "create table remote.bid (bidtime timestamp, price int, item string) using parquet",
        "insert into remote.bid values (timestamp'2020-04-15 08:07:00', 2, 'A'), "
        "(timestamp'2020-04-15 08:05:00', 4, 'C'), (timestamp'2020-04-15 08:11:00', 3, 'B')",
        "create table remote.inc_bid (bidtime timestamp, price int, item string) using parquet",
        "insert into remote.inc_bid values (timestamp'2020-04-15 07:05:00', 2, 'A'), "
        "(timestamp'2020-04-15 08:15:00', 4, 'C'), (timestamp'2020-04-15 09:25:00', 3, 'B')",
    )
    home = connect_server["home"]
    probe = subprocess.run([*hiding(home), "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(
            f"cannot hide the server's directory from the dbt process (unshare needs root): {probe.stderr[-300:]}"
        )
    dbt = [*hiding(home), str(DBT), "run", "--project-dir", str(root), "--profiles-dir", str(root)]
    out = run_command(dbt, cwd=root).stdout
    assert "STREAM 1 batch, 3 in, 1 out, 0 late, watermark 2020-04-15 08:10:00" in out
    assert left_behind(out) == []
    deliver("08:08 9 L", "08:21 1 G")
    out = run_command(dbt, cwd=root).stdout
    assert "STREAM 1 batch, 2 in, 1 out, 1 late, watermark 2020-04-15 08:20:00" in out
    assert left_behind(out) == []
    # the stream's files are where the server keeps them, and nowhere the dbt process wrote
    checkpoint = next((home / "warehouse").glob("remote.db/stream_tumble__checkpoint"))
    assert (checkpoint / "window_views" / "model.json").is_file() and not (root / "spark-warehouse").exists()
    order = "order by window_start"
    stream, batch, late = connect_sql(
        url,
        f"select * from remote.stream_tumble {order}",
        f"select * from remote.batch_tumble {order}",
        "select item from remote.stream_tumble__late",
    )
    assert stream == [
        ["2020-04-15 08:00:00", "2020-04-15 08:10:00", "6"],
        ["2020-04-15 08:10:00", "2020-04-15 08:20:00", "3"],
    ]
    # the batch view recomputes over everything, the late row included
    assert batch == [
        ["2020-04-15 08:00:00", "2020-04-15 08:10:00", "15"],
        ["2020-04-15 08:10:00", "2020-04-15 08:20:00", "3"],
        ["2020-04-15 08:20:00", "2020-04-15 08:30:00", "1"],
    ]
    assert late == [["L"]]
    (incremental,) = connect_sql(url, "select window_start, price from remote.inc_tumble order by window_start")
    assert incremental == [
        ["2020-04-15 07:00:00", "2"],
        ["2020-04-15 08:10:00", "4"],
        ["2020-04-15 09:20:00", "3"],
    ], incremental
    batches = sorted(p.name[:15] for p in (home / "warehouse").glob("remote.db/inc_tumble/_wv_batches/*"))
    assert batches == ["20200415T070000", "20200415T080000", "20200415T090000"], batches
