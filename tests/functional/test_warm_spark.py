"""`warm_spark: true`: one local Spark Connect server per project, started by the first dbt command,
reused by every later dbt process of that project with the same settings, never shared with
another project or a changed profile, replaced when it died (a record pointing at a dead server,
its port taken by someone else; killed during a command, which fails at once saying so), stopped
when idle and by its stop command. And no stale reads:
a batch window view run twice in one long-lived session sees the files a loader added between.

The warm tests run dbt in separate processes (this process holds the shared classic session);
a loader writes parquet files into an external table's folder with pyarrow, as an ingest job
would, behind Spark's back."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from dbt.adapters.window_views.spark.warm_up import DATABASE as WARM_UP_DATABASE
from dbt.adapters.window_views.spark.warm_up import ROUNDS_ENV as WARM_UP_ENV
from tests.support.dbt_projects import TEST_JVM, sources_yml
from tests.support.processes import run_command

DBT = Path(sys.executable).with_name("dbt")
STARTING = "starting a warm Spark for this project"

pytestmark = pytest.mark.drill  # warm servers and dbt CLIs of their own: scripts/test.sh --drills
SELECT = """
    select window_start, window_end, sum(price) as price
    from {{ window_views.tumble(source('raw', 'bid'), 'bidtime', '10 minutes') }}
    group by window_start, window_end
"""


def deliver(folder: Path, name: str, *rows: str) -> None:
    """A loader's parquet file of bids ("08:07 2 A" on 2020-04-15, UTC), written beside Spark."""
    parsed = [r.split() for r in rows]
    times = [f"2020-04-15T{hhmm}:00Z" for hhmm, _, _ in parsed]
    table = pa.table(
        {
            "bidtime": pa.array(times, pa.string()).cast(pa.timestamp("us", tz="UTC")),
            "price": pa.array([int(p) for _, p, _ in parsed], pa.int32()),
            "item": pa.array([i for _, _, i in parsed], pa.string()),
        }
    )
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, folder / f"{name}.parquet")


# --- no stale reads in one long-lived session (the shared in-process session, two dbtRunner runs)


def test_a_batch_window_view_sees_files_added_since_the_session_last_read_its_input(project, tmp_path):
    bids = tmp_path / "bid"
    deliver(bids, "part-1", "08:07 2 A", "08:05 4 C", "08:11 3 B")
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(
        f"create table {project.schema}.bid (bidtime timestamp, price int, item string) using parquet location '{bids}'"
    )
    project.write("models/sources.yml", sources_yml("bid"))
    project.model("tumbled", "{{ config(materialized='window_view') }}" + SELECT)
    project.dbt("run")
    assert [r[2] for r in project.rows("tumbled", "window_start")] == [6, 3]
    deliver(bids, "part-2", "08:13 7 H", "08:21 1 G")
    project.dbt("run")
    # without a refresh, Spark's cached file listing of s.bid hides part-2: [6, 3] again
    assert [r[2] for r in project.rows("tumbled", "window_start")] == [6, 10, 1]


# --- the warm server, through dbt processes


def write_project(root: Path, bids: Path, **profile: Any) -> None:
    (root / "models").mkdir(parents=True, exist_ok=True)
    project = {
        "name": "wv_warm",
        "version": "1.0",
        "config-version": 2,
        "profile": "wv_warm",
        "on-run-start": [
            "create database if not exists warm",
            f"create table if not exists warm.bid (bidtime timestamp, price int, item string) using parquet "
            f"location '{bids}'",
        ],
    }
    (root / "dbt_project.yml").write_text(yaml.safe_dump(project))
    # the tests' JVM options (TEST_JVM), under the plugin's options
    params = {"spark.driver.defaultJavaOptions": TEST_JVM, **profile.pop("server_side_parameters", {})}
    output = {"type": "window_views", "method": "session", "schema": "warm", "threads": 1, "warm_spark": True}
    (root / "profiles.yml").write_text(
        yaml.safe_dump(
            {"wv_warm": {"target": "dev", "outputs": {"dev": {**output, **profile, "server_side_parameters": params}}}}
        )
    )
    (root / "models" / "sources.yml").write_text(
        yaml.safe_dump({"version": 2, "sources": [{"name": "raw", "schema": "warm", "tables": [{"name": "bid"}]}]})
    )
    (root / "models" / "batch_tumble.sql").write_text("{{ config(materialized='window_view') }}" + SELECT)
    (root / "models" / "stream_tumble.sql").write_text(
        "{{ config(materialized='window_view', execution='streaming', emit='on_window_close', "
        "watermark={'column': 'bidtime', 'delay': '1 minute'}) }}" + SELECT
    )
    (root / "models" / "schema.yml").write_text(
        yaml.safe_dump(
            {
                "version": 2,
                "models": [{"name": "batch_tumble", "columns": [{"name": "price", "data_tests": ["not_null"]}]}],
            }
        )
    )


def dbt(root: Path, *args: str) -> str:
    """A dbt command in its own process; its output."""
    cmd = [str(DBT), *args, "--project-dir", str(root), "--profiles-dir", str(root)]
    return run_command(cmd, cwd=root).stdout


def record(root: Path) -> Optional[Dict[str, object]]:
    path = root / "target" / "warm_spark" / "server.json"
    return json.loads(path.read_text()) if path.exists() else None


def alive(pid: object) -> bool:
    from dbt.adapters.window_views.spark.processes import alive as pid_alive

    return pid_alive(int(str(pid)))


def shown(out: str) -> List[Dict[str, object]]:
    """The rows `dbt show --output json` printed."""
    return json.loads(out[out.index('{\n  "show"') :].split("\n}\n")[0] + "\n}")["show"]


def stop(root: Path) -> str:
    cmd = [sys.executable, "-m", "dbt.adapters.window_views.spark.warm_server", "stop", "--project-dir", str(root)]
    return run_command(cmd, cwd=root).stdout


def wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.5)
    raise AssertionError(f"not within {timeout} s: {what}")


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """Project a (its warm server started by the first test) and project b, a copy in another
    folder; every server they started is stopped afterwards."""
    home = tmp_path_factory.mktemp("warm")
    roots = {"a": home / "a", "b": home / "b"}
    for root in roots.values():
        write_project(root, home / "bid")
    with pytest.MonkeyPatch.context() as env:
        env.setenv(WARM_UP_ENV, "2")  # the dbt processes' watchdogs: two rounds, not a user's twelve
        yield {"home": home, "bids": home / "bid", **roots}
    from dbt.adapters.window_views.spark.warm_server import stop as stop_server

    for root in roots.values():  # what the stop command does, without a Python process of its own
        stop_server(root)


def test_dbt_commands_of_a_project_share_one_warm_spark(warm):
    a, bids = warm["a"], warm["bids"]
    deliver(bids, "part-1", "08:07 2 A", "08:05 4 C", "08:11 3 B")
    out = dbt(a, "run")
    assert STARTING in out
    assert "STREAM 1 batch, 3 in, 1 out, 0 late, watermark 2020-04-15 08:10:00" in out
    first = record(a)
    assert first is not None and alive(first["pid"]) and first["project_dir"] == str(a.resolve())
    # its warehouse and metastore are the embedded default's, under the project's target/
    assert (a / "target" / "spark-warehouse" / "warm.db" / "batch_tumble").is_dir()
    assert (a / "target" / "metastore_db").is_dir()
    assert list((a / "target" / "warm_spark" / "logs").glob("spark-*.out"))
    # the watchdog warms the idle server up, in a database of its own that it drops
    watchdog = a / "target" / "warm_spark" / "logs" / "watchdog.log"
    wait_until(lambda: "warmed up in 2 round(s)" in watchdog.read_text(), 120, "the warm-up done")
    assert not (a / "target" / "spark-warehouse" / f"{WARM_UP_DATABASE}.db").exists()

    deliver(bids, "part-2", "08:13 7 H", "08:21 1 G")
    out = dbt(a, "build")  # the models again, then their tests
    assert STARTING not in out
    assert "STREAM 1 batch, 2 in, 1 out, 0 late, watermark 2020-04-15 08:20:00" in out
    assert "PASS not_null_batch_tumble_price" in out
    both = (
        "select 'batch' as model, price, window_start from {{ ref('batch_tumble') }} union all "
        "select 'stream', price, window_start from {{ ref('stream_tumble') }} order by model, window_start"
    )
    rows = shown(dbt(a, "show", "--inline", both, "--limit", "10", "--output", "json"))
    assert [r["price"] for r in rows if r["model"] == "batch"] == [6, 10, 1]
    assert [r["price"] for r in rows if r["model"] == "stream"] == [6, 10]
    # (a command reusing a server it waited for: the second of the two first commands, below)
    assert STARTING not in dbt(a, "docs", "generate")
    catalog = json.loads((a / "target" / "catalog.json").read_text())
    assert "model.wv_warm.batch_tumble" in catalog["nodes"]
    now = record(a)
    assert now is not None and now["pid"] == first["pid"] and now["last_used"] > first["last_used"]


def test_two_first_commands_at_once_start_one_server_and_another_project_gets_its_own(warm):
    a, b = warm["a"], warm["b"]
    # `dbt compile` of models that look nothing up needs no Spark: it starts none (nor imports its client)
    assert STARTING not in dbt(b, "compile") and record(b) is None
    assert (b / "target" / "compiled" / "wv_warm" / "models" / "batch_tumble.sql").is_file()
    cmd = [str(DBT), "show", "--inline", "select 1 as n", "--project-dir", str(b), "--profiles-dir", str(b)]
    procs = [subprocess.Popen(cmd, cwd=b, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in (1, 2)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert sum(STARTING in out for out in outs) == 1, outs
    mine, theirs = record(b), record(a)
    assert mine is not None and theirs is not None
    assert mine["pid"] != theirs["pid"] and mine["port"] != theirs["port"]
    assert alive(mine["pid"]) and alive(theirs["pid"])


def test_a_changed_profile_replaces_the_server_which_stops_when_idle(warm):
    b = warm["b"]
    old = record(b)
    assert old is not None
    write_project(
        b,
        warm["bids"],
        warm_spark_idle_timeout="5 seconds",
        server_side_parameters={"spark.sql.shuffle.partitions": "2"},
    )
    out = dbt(b, "show", "--inline", "select 1 as n")
    assert "cannot be used: the profile's Spark settings changed since it started; starting a new one" in out
    new = record(b)
    assert new is not None and new["pid"] != old["pid"] and not alive(old["pid"])
    # no dbt command for 5 seconds: the watchdog stops it and removes the record
    wait_until(lambda: record(b) is None and not alive(new["pid"]), 90, "the idle server stopped")
    assert "no warm Spark runs" in stop(b)


def test_a_server_killed_mid_command_fails_it_at_once_then_a_new_one_replaces_it_and_stops(warm, monkeypatch):
    a = warm["a"]
    monkeypatch.setenv(WARM_UP_ENV, "1000")  # the new server's watchdog still warms it up when it is stopped
    dead = record(a)
    assert dead is not None
    # killed while a stream runs (a micro-batch a second for minutes) and while another command's
    # query runs (minutes of counting): each fails within seconds, saying why and what to do
    # (Spark Connect's default policy retries for up to ten minutes)
    (a / "models" / "stream_timed.sql").write_text(
        "{{ config(materialized='window_view', execution='streaming', emit='on_window_close', "
        "watermark={'column': 'bidtime', 'delay': '1 minute'}, "
        "trigger={'processing_time': '1 second', 'max_duration': '10 minutes'}) }}" + SELECT
    )
    streaming = [str(DBT), "run", "--select", "stream_timed", "--project-dir", str(a), "--profiles-dir", str(a)]
    stream = subprocess.Popen(streaming, cwd=a, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    warehouse = a / "target" / "spark-warehouse"
    wait_until(lambda: any(warehouse.glob("warm.db/stream_timed__checkpoint/**/commits/0")), 120, "a batch streamed")
    slow = "select count(*) as n from range(0, 400000000000)"
    cmd = [str(DBT), "show", "--inline", slow, "--project-dir", str(a), "--profiles-dir", str(a)]
    command = subprocess.Popen(cmd, cwd=a, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    client = a / "target" / "warm_spark" / "clients" / str(command.pid)
    wait_until(client.exists, 60, "the command connected to the warm Spark")
    time.sleep(4)  # its query sent
    assert command.poll() is None, command.communicate()[0]
    assert stream.poll() is None, stream.communicate()[0]
    os.kill(int(str(dead["pid"])), signal.SIGKILL)
    killed = time.time()
    out, _ = command.communicate(timeout=120)
    assert command.returncode != 0 and time.time() - killed < 30, out
    gone = f"its process (pid {dead['pid']}, port {dead['port']}) is gone"
    assert f"Spark stopped during this command: this project's warm Spark stopped ({gone})" in out, out
    assert "fix: run the command again, which starts a new warm Spark" in out
    assert "Traceback" not in out and "grpc" not in out.lower() and "RETRIES_EXCEEDED" not in out, out
    out, _ = stream.communicate(timeout=120)
    assert stream.returncode != 0 and time.time() - killed < 30, out
    assert f"Spark stopped while the stream ran: this project's warm Spark stopped ({gone})" in out, out
    assert "fix: run the command again, which starts a new warm Spark: committed micro-batches are kept" in out
    assert "Traceback" not in out and "grpc" not in out.lower() and "RETRIES_EXCEEDED" not in out, out
    wait_until(lambda: not alive(dead["pid"]), 30, "the killed server gone")
    with socket.socket() as taken:  # and another program listens on the recorded port
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        path = a / "target" / "warm_spark" / "server.json"
        path.write_text(json.dumps({**dead, "port": port}))
        # the tables are the project's, whichever server serves them
        out = dbt(a, "show", "--inline", "select count(*) as n from {{ ref('batch_tumble') }}", "--output", "json")
    assert f"cannot be used: its process (pid {dead['pid']}, port {port}) is gone; starting a new one" in out
    new = record(a)
    assert new is not None and new["port"] != port and alive(new["pid"])
    assert shown(out) == [{"n": 3}]
    warming = a / "target" / "spark-warehouse" / f"{WARM_UP_DATABASE}.db"
    wait_until(warming.exists, 120, "the new server's warm-up running")
    assert f"stopped the warm Spark of {a.resolve()} (pid {new['pid']}, port {new['port']})" in stop(a)
    assert record(a) is None and not alive(new["pid"])
    # its watchdog's warm-up fails against the gone server and the watchdog exits in seconds (Spark
    # Connect's own retries kept it for ten minutes)
    wait_until(lambda: not alive(new["watchdog_pid"]), 60, "the stopped server's watchdog gone")
    assert "warm-up stopped after" in (a / "target" / "warm_spark" / "logs" / "watchdog.log").read_text()
