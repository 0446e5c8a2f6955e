"""Window views on a real Spark standalone cluster (a master and two 1-core workers on loopback,
tests/support/cluster.py), against the same project run on the embedded local[*] default.

One dbt project: batch TVF (TUMBLE), `window_aggregate` (HOP) and over-window (LAG, SUM over
ROWS) models, and streaming TUMBLE and over-window models in both emit modes. On the cluster,
through a profile whose server_side_parameters name `spark.master: spark://127.0.0.1:<port>`:
delivery 1, `dbt run`, delivery 2, `dbt run`, delivery 3; then a `dbt run` of the streaming
models killed (SIGKILL to its process group) once a micro-batch over delivery 3 has started,
and a `dbt run` after it. The same deliveries and runs, uninterrupted, on local[*] in another
process. Every table and late table must hold the same rows (as multisets) after each delivery's
run, read from the parquet files with DuckDB.

The shared test session is an in-process local Spark, so every dbt run here happens in a
separate process (a driver script, as in test_streaming_crash.py) with its own Derby metastore and
warehouse; the executors write to the same absolute local paths as the driver.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from tests.support import oracles as o
from tests.support.dbt_projects import sources_yml, spark_params, write_project
from tests.support.processes import wait_for_jvm, with_test_executors

duckdb = pytest.importorskip("duckdb")

pytestmark = [pytest.mark.cluster, pytest.mark.drill]

SCHEMA = "cl"
APP_NAME = "wv-cluster-test"
WATERMARK = "watermark={'column': 'ts', 'delay': '5 minutes'}"
TUMBLE = """
select k, window_start, window_end, count(*) as n, sum(v) as total, max(v) as top
from {{ window_views.tumble(source('raw', 'ev'), 'ts', '10 minutes') }}
group by k, window_start, window_end
"""
OVER = """
select id, k, ts, v,
  lag(v) over (partition by k order by ts, id) as prev_v,
  sum(v) over (partition by k order by ts, id rows between 2 preceding and current row) as sum3
from {{ source('raw', 'ev') }}
"""
HOP = """
select * from {{ window_views.window_aggregate(
    source('raw', 'ev'),
    window={'kind': 'hop', 'time_col': 'ts', 'size': '30 minutes', 'slide': '10 minutes'},
    measures={'n': 'count(*)', 'total': 'sum(v)', 'peak': 'max(v)', 'mean': 'avg(v)'},
    group_by=['k'],
) }}
"""
MODELS = {
    "b_tumble": "{{ config(materialized='window_view') }}" + TUMBLE,
    "b_hop": "{{ config(materialized='window_view') }}" + HOP,
    "b_over": "{{ config(materialized='window_view') }}" + OVER,
    **{
        f"s_{name}_{short}": f"{{{{ config(materialized='window_view', execution='streaming', emit='{emit}', {WATERMARK}) }}}}"
        + sql
        for name, sql in (("tumble", TUMBLE), ("over", OVER))
        for short, emit in (("eowc", "on_window_close"), ("upd", "on_update"))
    },
}
STREAMING = [m for m in MODELS if m.startswith("s_")]

# runs in each dbt process: Spark SQL, dbt invocations (dbtRunner, as `dbt run` does) and copies
# of the schema's directory, logging every dbt result
DRIVER = """
import json, os, shutil, sys
from pathlib import Path

plan = json.loads(Path(sys.argv[1]).read_text())
project = Path(plan["project"])
from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

# the settings the adapter itself uses: the embedded defaults under target/ + the profile's
spark = spark_session(embedded_settings(project / "target", plan["spark_params"]))
print("MASTER", spark.sparkContext.master, flush=True)
log = []
for step in plan["steps"]:
    if "sql" in step:
        spark.sql(step["sql"])
    elif "snapshot" in step:
        shutil.copytree(plan["schema_dir"], step["snapshot"])
    else:
        from dbt.cli.main import dbtRunner
        result = dbtRunner().invoke([*step["dbt"], "--project-dir", str(project), "--profiles-dir", str(project)])
        nodes = {}
        for r in (result.result or []) if result.exception is None else []:
            nodes[r.node.name] = {"status": str(r.status), "message": r.message}
        log.append({"args": step["dbt"], "success": result.success, "exception": str(result.exception or ""), "nodes": nodes})
        Path(plan["log"]).write_text(json.dumps(log, default=str))
"""


def deliveries(rng: random.Random) -> List[List[Dict[str, Any]]]:
    """Three deliveries of about 30 rows {id, k, v, ts} on 2020-04-15: mostly the next hour,
    shuffled, with a few stragglers from the hour before (late once the watermark passed them)
    and a NULL value now and then."""
    start = o.micros(dt.datetime(2020, 4, 15, 8))
    out, next_id = [], 1
    for d in range(3):
        rows = []
        for i in range(30):
            if i < 26 or d == 0:
                t = start + d * o.HOUR + rng.randrange(o.HOUR)
            else:
                t = start + (d - 1) * o.HOUR + rng.randrange(40 * o.MINUTE)
            rows.append(
                {
                    "id": next_id,
                    "k": rng.choice("abc"),
                    "v": rng.randint(-5, 40) if rng.random() > 0.1 else None,
                    "ts": t - t % o.SECOND,
                }
            )
            next_id += 1
        rng.shuffle(rows)
        out.append(rows)
    return out


def insert(rows: List[Dict[str, Any]]) -> Dict[str, str]:
    return {"sql": f"insert into {SCHEMA}.ev {o.values_sql(rows)}"}


# ---------------------------------------------------------------------------------------------
# reading the tables' files


def data_files(table: Path) -> List[str]:
    """The table's parquet files, leaving out `_`/`.`-prefixed paths (staging, metadata)."""
    if not table.is_dir():
        return []
    return sorted(
        str(p)
        for p in table.rglob("*.parquet")
        if p.is_file() and not any(part.startswith(("_", ".")) for part in p.relative_to(table).parts)
    )


def rows(table: Path) -> Counter:
    files = data_files(table)
    if not files:
        return Counter()
    return Counter(duckdb.sql(f"select * from read_parquet({files!r})").fetchall())


def tables(snapshot: Path) -> Dict[str, Counter]:
    names = [*MODELS, *(f"{m}__late" for m in STREAMING)]
    return {name: rows(snapshot / name) for name in names}


def diff(a: Counter, b: Counter) -> str:
    only_a, only_b = a - b, b - a
    key = lambda r: repr(r)  # noqa: E731
    return f"only cluster {sorted(only_a.elements(), key=key)[:3]}, only local {sorted(only_b.elements(), key=key)[:3]}"


# ---------------------------------------------------------------------------------------------
# the dbt processes


class Project:
    """The dbt project and its Spark home (warehouse, metastore) for one kind of Spark."""

    def __init__(self, root: Path, params: Dict[str, str]) -> None:
        self.root = root
        self.home = root / "spark"
        self.project = root / "project"
        self.schema_dir = self.home / "warehouse" / f"{SCHEMA}.db"
        self.params = with_test_executors({**spark_params(self.home), **params})
        self.driver = root / "driver.py"
        self.count = 0
        models = self.project / "models"
        models.mkdir(parents=True)
        self.driver.write_text(DRIVER)
        (models / "sources.yml").write_text(sources_yml("ev"))
        for name, sql in MODELS.items():
            (models / f"{name}.sql").write_text(sql)
        write_project(self.project, "wv_cluster", SCHEMA, self.params)

    def start(self, steps: List[Dict[str, Any]]) -> Tuple[subprocess.Popen, Path]:
        """A driver process running the steps, in its own process group (the JVM included)."""
        self.count += 1
        plan = self.root / f"plan{self.count}.json"
        log = self.root / f"log{self.count}.json"
        plan.write_text(
            json.dumps(
                {
                    "project": str(self.project),
                    "spark_params": self.params,
                    "schema_dir": str(self.schema_dir),
                    "log": str(log),
                    "steps": steps,
                }
            )
        )
        env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
        env.pop("SPARK_REMOTE", None)
        out = (self.root / f"out{self.count}.txt").open("w")
        proc = subprocess.Popen(
            [sys.executable, str(self.driver), str(plan)],
            cwd=self.project,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()
        return proc, log

    def output(self, n: Optional[int] = None) -> str:
        return (self.root / f"out{n or self.count}.txt").read_text(errors="replace")

    def run(self, steps: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """Run the steps in one process; every dbt invocation must succeed."""
        return self.finish(*self.start(steps))

    def finish(self, proc: subprocess.Popen, log: Path) -> List[Dict[str, Any]]:
        """Wait for a started process; it and every dbt invocation must succeed."""
        try:
            proc.wait(timeout=600)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        entries = json.loads(log.read_text()) if log.exists() else []
        failed = [e for e in entries if not e["success"]]
        n = int(log.stem[3:])
        assert proc.returncode == 0 and not failed, (
            f"driver exited {proc.returncode}; failed: {json.dumps(failed)[:4000]}\n--- output ---\n{self.output(n)[-6000:]}"
        )
        return entries


def run_steps(deliveries_: List[List[Dict[str, Any]]], snaps: Path, last_run: bool) -> List[Dict[str, Any]]:
    steps: List[Dict[str, Any]] = [
        {"sql": f"create database if not exists {SCHEMA}"},
        {"sql": f"create table {SCHEMA}.ev (id int, k string, v int, ts timestamp) using parquet"},
    ]
    for i, rows_ in enumerate(deliveries_, 1):
        steps.append(insert(rows_))
        if i < len(deliveries_) or last_run:
            steps += [{"dbt": ["run"]}, {"snapshot": str(snaps / f"d{i}")}]
    return steps


def test_window_views_on_a_standalone_cluster(standalone_cluster, tmp_path, request):
    cluster = standalone_cluster
    batches = deliveries(random.Random(3))
    started = time.time()
    timings: Dict[str, float] = {}
    snaps = tmp_path / "snapshots"

    # the same project, uninterrupted, on the embedded local[*] default, beside the cluster's runs
    # (its own metastore and warehouse; on 2 cores the overlap saves about a third of the time)
    local = Project(tmp_path / "local", {})
    local_run = local.start(run_steps(batches, snaps / "local", last_run=True))
    request.addfinalizer(lambda: local_run[0].poll() is None and os.killpg(local_run[0].pid, signal.SIGKILL))

    # on the cluster: deliveries 1 and 2, each run; delivery 3 inserted, not yet run
    on_cluster = Project(
        tmp_path / "cluster",
        {
            "spark.master": cluster.master_url,
            "spark.app.name": APP_NAME,
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.memory": "1g",
            "spark.executor.cores": "1",
            "spark.executor.memory": "512m",
            "spark.cores.max": "2",
        },
    )
    log = on_cluster.run(run_steps(batches, snaps / "cluster", last_run=False))
    assert "MASTER " + cluster.master_url in on_cluster.output(), on_cluster.output()[-3000:]
    assert len(log) == 2 and all(n["status"] == "success" for e in log for n in e["nodes"].values()), log
    timings["cluster: 2 deliveries"] = time.time() - started

    # the streaming models' run over delivery 3, killed once a micro-batch of it has staged files
    # (written by the executors) or its READY record
    t = time.time()
    proc, _ = on_cluster.start([{"dbt": ["run", "-s", *STREAMING]}])
    points = {  # what batch 2 of a model may have left, in the order the batch writes it
        "offsets": "{m}__checkpoint/spark/offsets/2",
        "staged": "{m}/_wv_staging/2",
        "late staged": "{m}__late/_wv_staging/2",
        "ready": "{m}__checkpoint/window_views/ready/2.json",
        "committed": "{m}__checkpoint/window_views/commits/2.json",
    }
    marks = {m: {point: on_cluster.schema_dir / path.format(m=m) for point, path in points.items()} for m in STREAMING}
    triggers = [marks[m][p] for m in STREAMING for p in ("staged", "late staged", "ready")]
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None and not any(p.exists() for p in triggers):
        time.sleep(0.02)
    finished_first = proc.poll() is not None
    if not finished_first:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    # which of batch 2's files each model had when it was killed
    state_at_kill = {m: [point for point, p in marks[m].items() if p.exists()] for m in STREAMING}
    wait_for_jvm(on_cluster.home)
    crash_out = on_cluster.output()
    assert not finished_first, (
        f"the run ended ({proc.returncode}) before a batch of delivery 3 staged files:\n{crash_out[-4000:]}"
    )
    assert proc.returncode == -signal.SIGKILL, proc.returncode
    timings["cluster: killed run"] = time.time() - t

    # the next run finishes what the killed one left and runs the rest
    t = time.time()
    log = on_cluster.run([{"dbt": ["run"]}, {"snapshot": str(snaps / "cluster" / "d3")}])
    recovered = log[0]["nodes"]
    timings["cluster: recovery run"] = time.time() - t

    # the executors ran on both workers (an application directory in each worker's work dir)
    apps = cluster.state()
    ours = [a for a in apps.get("completedapps", []) + apps.get("activeapps", []) if a.get("name") == APP_NAME]
    assert len(ours) == 3, json.dumps(apps)[:3000]
    for i in (1, 2):
        assert list((cluster.root / f"worker{i}").glob("app-*/*")), f"worker{i} ran no executor: {cluster.log_tails()}"

    t = time.time()
    local.finish(*local_run)
    timings["local: waited for after the cluster's runs"] = time.time() - t

    failures = []
    for d in ("d1", "d2", "d3"):
        got, want = tables(snaps / "cluster" / d), tables(snaps / "local" / d)
        for name in want:
            if got[name] != want[name]:
                failures.append(
                    f"after {d}: {name}: cluster {sum(got[name].values())} rows, local "
                    f"{sum(want[name].values())} rows; {diff(got[name], want[name])}"
                )
    final = tables(snaps / "local" / "d3")
    assert all(final[m] for m in MODELS), {m: sum(final[m].values()) for m in MODELS}
    assert all(final[f"{m}__late"] for m in STREAMING), "delivery 3 was meant to make rows late"
    timings["total"] = time.time() - started
    print(
        f"timings: {json.dumps({k: round(v, 1) for k, v in timings.items()})}; checkpoints at the kill: "
        f"{state_at_kill}; recovery run: { {m: n['message'] for m, n in recovered.items()} }"
    )
    assert not failures, "\n".join(failures) + f"\nkilled at: {state_at_kill}\nrecovery run: {recovered}"
