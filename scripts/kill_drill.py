"""Kill drill for streaming window views: `kill -9` at random points of `dbt run` while data keeps
arriving, then a normal run; at the end every table must equal that of a project that received
the same deliveries and was never killed.

One throwaway dbt project (under --workdir or a temp dir) holds four streaming window views over
one dbt source table `ev (id int, k string, v int, ts timestamp)` in the project's schema:

  kd_tumble_close  TUMBLE 10 min, count/sum/max per key      emit='on_window_close'
  kd_hop_update    HOP 5 min slide / 10 min size, same aggs  emit='on_update'
  kd_over_close    lag(v) and a 3-row sum over (partition by k order by ts, id)  emit='on_window_close'
  kd_over_update   the same                                  emit='on_update'

all with late_data='table' and a 5-minute watermark delay. Every process that touches Spark runs
a small driver script (written to the work dir) that executes a JSON plan of steps: Spark SQL,
a dbt invocation (dbtRunner, as `dbt run` does), a copy of the tables' files. Each project has its
own Derby metastore and warehouse; at most one Spark process per project runs at a time.

Setup: create the source table, append delivery 0, one uninterrupted run (its duration calibrates
the kill times). Round r = 1..N:
  1. the previous round's recovery process has appended delivery r (Spark SQL `insert into`);
  2. `dbt run` of the four models starts in a new process group; after a random sleep (uniform
     over 2 %..110 % of an uninterrupted run's duration, so kills land before Spark starts, in a
     micro-batch, in a publish, after a commit or after the end) the whole group gets SIGKILL
     (a run that ended before counts as "not killed");
  3. once the group is gone (and no process holds the metastore), stale Derby lock files are
     removed, the checkpoint is inspected (which phase each model's batch reached), and the
     recovery process runs the models again uninterrupted (it must succeed), copies the tables,
     and appends delivery r + 1.
The reference project then receives the same deliveries in one process, each followed by one
uninterrupted run and a copy of the tables, so both projects group the deliveries into runs alike
(a killed run may or may not have processed its delivery; the recovery run finishes it). With
--parallel-reference it runs while the drill does (its own metastore), which saves wall time.

Checks: each model's table and late table (parquet files read with DuckDB, `_`-prefixed paths and
`_wv*` columns left out) equal the reference's as multisets at the end, also after every round
(reported as the rounds where a model differed). Prints and writes (--out) a JSON summary: rounds,
killed, kill points, lost rows, duplicated rows, unexpected rows, failed recoveries, per model;
exits 1 if any row was lost, duplicated or unexpected, or a recovery failed.

--delta drills the same four models with file_format='delta' (their tables and late tables Delta
tables; the streaming Top-N that the plugin refuses into Delta is not among them), both projects'
profiles with `lakehouse: delta`, every driver process on .venv-delta's python (PySpark 4.1 and
delta-spark; this script itself stays on the caller's, for DuckDB). A snapshot then reads each
table's current version through the catalog and writes it as plain parquet, since a Delta
table's folder also holds the files of removed versions. Every second round's kill is aimed at
Delta's commit instead of a random time: the drill watches one model's table (or late table) for
a new commit of the log carrying Delta's txn action (the batch's idempotent commit) and kills at
once, so it lands after that Delta commit and before (or just after) the batch's commit record;
the phase read from the checkpoint and the tables' Delta logs says where it landed.

--kafka drills the same four models over a Kafka topic instead of a table: the tests' broker
(Apache Kafka in KRaft mode, tests/support/kafka.py) on 127.0.0.1, one topic per project, and the
source `ev` declared as a Kafka source (docs/kafka.md: JSON payloads, the profile's `kafka: true`).
A delivery is one batch of JSON messages produced to the project's topic (confluent-kafka, in the
driver process, in place of the `insert into`); the stream's checkpoint keeps the topic's offsets,
so a killed micro-batch is redone over the same messages. The broker runs beside the drill (not in
any killed process group) and is stopped by its pid when the drill ends. Every second round's kill
is aimed inside a micro-batch: the drill watches one model's Spark offset log for the batch's
entry (the topic's offsets the batch reads, fixed from then on) and kills 0..5 % of a run's
duration after it appears, so it lands with the offsets written and the batch staged or not.

Usage: bash scripts/kill_drill.sh [--rounds 20] [--seed 0] [--rows 24] [--workdir DIR] [--out summary.json]
                                  [--parallel-reference] [--keep] [--s3 | --delta | --kafka]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import yaml

from dbt.adapters.window_views.spark.kafka_jars import KAFKA_KEY
from dbt.adapters.window_views.spark.lakehouse import LAKEHOUSE_KEY
from dbt.adapters.window_views.storage.delta import LOG as DELTA_LOG
from dbt.adapters.window_views.storage.delta_stream import IDLE_STEPS  # batch N commits as txnVersion N * IDLE_STEPS

SCHEMA = "drill"
SOURCE = "ev"
SECOND = 1_000_000
MINUTE = 60 * SECOND
EPOCH = dt.datetime(1970, 1, 1)
PROCESS_TIMEOUT = 1800
ROOT = Path(__file__).resolve().parents[1]
DELTA_PYTHON = ROOT / ".venv-delta" / "bin" / "python"  # scripts/setup.sh makes it: PySpark 4.1 + delta-spark

CONFIG = (
    "materialized='window_view', execution='streaming', emit='{emit}', late_data='table', "
    "watermark={{'column': 'ts', 'delay': '5 minutes'}}"
)
AGGREGATES = "select k, window_start, window_end, count(*) as n, sum(v) as total, max(v) as top"
OVER = """select id, k, v, ts,
  lag(v) over (partition by k order by ts, id) as prev_v,
  sum(v) over (partition by k order by ts, id rows between 2 preceding and current row) as sum3
from {{ source('raw', 'ev') }}"""
MODELS = {
    "kd_tumble_close": (
        "on_window_close",
        f"""{AGGREGATES}
from {{{{ window_views.tumble(source('raw', 'ev'), 'ts', '10 minutes') }}}}
group by k, window_start, window_end""",
    ),
    "kd_hop_update": (
        "on_update",
        f"""{AGGREGATES}
from {{{{ window_views.hop(source('raw', 'ev'), 'ts', '5 minutes', '10 minutes') }}}}
group by k, window_start, window_end""",
    ),
    "kd_over_close": ("on_window_close", OVER),
    "kd_over_update": ("on_update", OVER),
}

# runs in each Spark process: the steps of a JSON plan; the log (rewritten after every step)
# records each dbt invocation's result and when each step ended (epoch seconds)
DRIVER = r"""
import json, os, shutil, sys, time
from pathlib import Path

plan = json.loads(Path(sys.argv[1]).read_text())
project = Path(plan["project"])
log = {"started": time.time(), "steps": []}
Path(plan["log"]).write_text(json.dumps(log))
spark = None


def session():
    global spark
    if spark is None:  # only now: a plan that starts with dbt lets dbt start Spark
        from dbt.adapters.window_views.spark.session import embedded_settings, spark_session
        spark = spark_session(embedded_settings(project / "target", plan["spark_params"]))
    return spark


for step in plan["steps"]:
    entry = {"kind": next(iter(step))}
    if "sql" in step:
        session().sql(step["sql"])
    elif "produce" in step:  # a delivery on the project's Kafka topic, all sent before the next step
        from confluent_kafka import Producer
        producer = Producer({"bootstrap.servers": plan["kafka"], "linger.ms": 0, "log_level": 0})
        for value in step["produce"]:
            producer.produce(plan["topic"], value=value)
        if producer.flush(30):
            raise SystemExit("messages left unsent to " + plan["topic"])
    elif "snapshot" in step and plan.get("delta"):  # each table's current version, as plain parquet
        target = Path(step["snapshot"])
        for table in plan["tables"]:
            try:
                rows = session().table(f"{plan['schema']}.{table}")
                rows.coalesce(1).write.mode("overwrite").parquet(str(target / table))
            except Exception as e:  # the comparison then finds the table empty
                entry.setdefault("errors", []).append(f"{table}: {e}"[:1000])
                (target / table).mkdir(parents=True, exist_ok=True)
    elif "snapshot" in step and plan.get("s3"):  # the tables' objects, as the local branch copies files
        import boto3
        store, target = plan["s3"], Path(step["snapshot"])
        client = boto3.client("s3", endpoint_url=store["endpoint"], region_name=store["region"],
                              aws_access_key_id=store["key"], aws_secret_access_key=store["secret"])
        for table in plan["tables"]:
            (target / table).mkdir(parents=True, exist_ok=True)
            listed = client.get_paginator("list_objects_v2").paginate(
                Bucket=store["bucket"], Prefix=f"{store['prefix']}/{table}/", Delimiter="/")
            for item in (item for page in listed for item in page.get("Contents", [])):
                name = item["Key"].rsplit("/", 1)[1]
                if name.endswith(".parquet") and not name.startswith(("_", ".")):
                    client.download_file(store["bucket"], item["Key"], str(target / table / name))
    elif "snapshot" in step:
        schema_dir, target = Path(plan["schema_dir"]), Path(step["snapshot"])
        for table in plan["tables"]:
            (target / table).mkdir(parents=True, exist_ok=True)
            source = schema_dir / table
            for f in (source.iterdir() if source.is_dir() else []):
                if f.is_file() and f.name.endswith(".parquet") and not f.name.startswith(("_", ".")):
                    shutil.copy2(f, target / table / f.name)
    else:
        from dbt.cli.main import dbtRunner
        result = dbtRunner().invoke([*step["dbt"], "--project-dir", str(project), "--profiles-dir", str(project)])
        nodes = {}
        for r in (result.result or []) if result.exception is None else []:
            nodes[r.node.name] = {"status": str(r.status), "message": r.message, "response": dict(r.adapter_response or {})}
        entry.update(success=result.success, exception=str(result.exception or ""), nodes=nodes)
    entry["ended"] = time.time()
    log["steps"].append(entry)
    Path(plan["log"]).write_text(json.dumps(log, default=str))
"""


# ---------------------------------------------------------------------------------------------
# deliveries


def micros(value: dt.datetime) -> int:
    delta = value - EPOCH
    return (delta.days * 86400 + delta.seconds) * SECOND + delta.microseconds


def timestamp_sql(us: Optional[int]) -> str:
    if us is None:
        return "CAST(NULL AS TIMESTAMP)"
    value = EPOCH + dt.timedelta(microseconds=us)
    return f"TIMESTAMP '{value.isoformat(sep=' ', timespec='microseconds')}'"


def insert_sql(rows: List[Dict[str, Any]]) -> str:
    def lit(row: Dict[str, Any]) -> str:
        k = "CAST(NULL AS STRING)" if row["k"] is None else f"'{row['k']}'"
        v = "CAST(NULL AS INT)" if row["v"] is None else f"CAST({row['v']} AS INT)"
        return f"(CAST({row['id']} AS INT), {k}, {v}, {timestamp_sql(row['ts'])})"

    values = ", ".join(lit(r) for r in rows)
    return f"insert into {SCHEMA}.{SOURCE} select * from values {values} as ev(id, k, v, ts)"


def payload(row: Dict[str, Any]) -> str:
    """A row as the Kafka source's JSON message (a NULL time as JSON null: late, as in the table)."""
    ts = row["ts"]
    when = None if ts is None else (EPOCH + dt.timedelta(microseconds=ts)).isoformat(sep=" ", timespec="microseconds")
    return json.dumps({"id": row["id"], "k": row["k"], "v": row["v"], "ts": when})


def make_deliveries(rng: random.Random, count: int, size: int) -> List[List[Dict[str, Any]]]:
    """`count` deliveries of `size` rows, shuffled: mostly the next 20 minutes, stragglers up to
    40 minutes behind (late once the watermark passed their window or time), ties, a few NULL
    times (always late), NULL keys and NULL values."""
    start = micros(dt.datetime(2024, 3, 1, 8))
    out: List[List[Dict[str, Any]]] = []
    next_id = 1
    for d in range(count):
        base = start + d * 20 * MINUTE
        rows: List[Dict[str, Any]] = []
        for _ in range(size):
            roll = rng.random()
            if rows and roll < 0.1:
                t = rng.choice(rows)["ts"]  # a tie (or a NULL again)
            elif d and roll < 0.28:
                t = base - rng.randrange(1, 40 * MINUTE)  # a straggler
            else:
                t = base + rng.randrange(20 * MINUTE)
            if t is not None:
                t -= t % (MINUTE if rng.random() < 0.6 else SECOND)
            if rng.random() < 0.03:
                t = None
            rows.append(
                {
                    "id": next_id,
                    "k": rng.choice("abc") if rng.random() > 0.06 else None,
                    "v": rng.randint(-5, 40) if rng.random() > 0.08 else None,
                    "ts": t,
                }
            )
            next_id += 1
        rng.shuffle(rows)
        out.append(rows)
    return out


# ---------------------------------------------------------------------------------------------
# processes


def pids_where(test) -> List[int]:
    out = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if test(proc):
                    out.append(int(proc.name))
            except OSError:
                pass
    return out


def in_group(pgid: int):
    def test(proc: Path) -> bool:
        stat = (proc / "stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        return int(fields[2]) == pgid and fields[0] != "Z"

    return test


def mentions(marker: str):
    raw = marker.encode()
    return lambda proc: raw in (proc / "cmdline").read_bytes()


def holds_files_under(directory: Path):
    prefix = str(directory)

    def test(proc: Path) -> bool:
        for fd in (proc / "fd").iterdir():
            try:
                if os.readlink(fd).startswith(prefix):
                    return True
            except OSError:
                pass
        return False

    return test


def s3_plan(store: Optional[Any]) -> Optional[Dict[str, str]]:
    """Where the driver's snapshots read the drilled tables on s3a (None: local files)."""
    if store is None:
        return None
    return {
        "endpoint": store.endpoint,
        "region": "us-east-1",
        "bucket": store.bucket,
        "prefix": SCHEMA,
        "key": store.access_key_id,
        "secret": store.secret_access_key,
    }


def mirror(store: Any, folder: Path) -> None:
    """The bucket's SCHEMA/ objects as files under `folder` (a folder per key prefix, as the
    window views' folders are on local files)."""
    shutil.rmtree(folder, ignore_errors=True)
    client = store.s3()
    for key in store.keys(f"{SCHEMA}/"):
        if key.endswith("/"):  # S3A's marker of an empty directory: the folder is made for its files
            continue
        target = folder / key.removeprefix(f"{SCHEMA}/")
        target.parent.mkdir(parents=True, exist_ok=True)
        client.download_file(store.bucket, key, str(target))


def source_table(kafka: Optional[str], topic: str) -> Dict[str, Any]:
    """The source `ev` of sources.yml: a table of the schema, or (at a broker) a Kafka source on
    `topic` whose JSON payloads carry the table's columns."""
    if kafka is None:
        return {"name": SOURCE}
    declared = {"bootstrap_servers": kafka, "topic": topic, "format": "json", "starting_offsets": "earliest"}
    columns = [("id", "int"), ("k", "string"), ("v", "int"), ("ts", "timestamp")]
    return {
        "name": SOURCE,
        "meta": {"window_views": {"kafka": declared}},
        "columns": [{"name": name, "data_type": kind} for name, kind in columns],
    }


class Project:
    """A dbt project with its own Spark home (Derby metastore + warehouse)."""

    def __init__(
        self,
        root: Path,
        driver: Path,
        python: str,
        store: Optional[Any] = None,
        delta: bool = False,
        kafka: Optional[str] = None,
    ) -> None:
        self.root = root
        self.store = store  # moto's S3 API (tests/support/s3.py): the window views on s3a://, under SCHEMA/
        self.delta = delta  # the window views (and their late tables) Delta tables; the profile's lakehouse: delta
        self.kafka = kafka  # a broker's bootstrap: the source is this project's topic there, not a table
        self.name = root.name
        self.topic = f"kd_{self.name}"
        self.home = root / "spark"
        self.project = root / "project"
        # on s3a: a local copy of the bucket's SCHEMA/ objects, taken before the checkpoint is read
        self.schema_dir = root / "mirror" if store else self.home / "warehouse" / f"{SCHEMA}.db"
        self.metastore = self.home / "metastore_db"
        self.snapshots = root / "snapshots"
        self.driver = driver
        self.python = python
        self.count = 0
        self.lock_files_removed = 0
        (self.project / "models").mkdir(parents=True)
        self.home.mkdir(parents=True)
        (self.project / "dbt_project.yml").write_text(
            yaml.safe_dump({"name": "kill_drill", "version": "1.0", "config-version": 2, "profile": "kill_drill"})
        )
        profile = {
            "type": "window_views",
            "method": "session",
            "schema": SCHEMA,
            "threads": 1,
            "server_side_parameters": self.spark_params(),
            **({"s3": store.profile()} if store else {}),
            **({"lakehouse": "delta"} if delta else {}),
            **({"kafka": True} if kafka else {}),
        }
        (self.project / "profiles.yml").write_text(
            yaml.safe_dump({"kill_drill": {"target": "dev", "outputs": {"dev": profile}}})
        )
        (self.project / "models" / "sources.yml").write_text(
            yaml.safe_dump(
                {
                    "version": 2,
                    "sources": [
                        {"name": "raw", "schema": "{{ target.schema }}", "tables": [source_table(kafka, self.topic)]}
                    ],
                }
            )
        )
        located = f", location_root='s3a://{store.bucket}/{SCHEMA}'" if store else ""
        located += ", file_format='delta'" if delta else ""
        for model, (emit, sql) in MODELS.items():
            (self.project / "models" / f"{model}.sql").write_text(
                f"{{{{ config({CONFIG.format(emit=emit)}{located}) }}}}\n{sql}\n"
            )

    def setup(self) -> List[Dict[str, Any]]:
        """The schema, and the source table unless the source is a Kafka topic (the plugin makes
        its view at the first run)."""
        steps: List[Dict[str, Any]] = [{"sql": f"create database if not exists {SCHEMA}"}]
        if self.kafka is None:
            steps.append(
                {"sql": f"create table {SCHEMA}.{SOURCE} (id int, k string, v int, ts timestamp) using parquet"}
            )
        return steps

    def delivery(self, rows: List[Dict[str, Any]]) -> Dict[str, Any]:
        """The step that delivers `rows`: an `insert into` the source table, or its messages on the topic."""
        return {"sql": insert_sql(rows)} if self.kafka is None else {"produce": [payload(r) for r in rows]}

    def spark_params(self) -> Dict[str, str]:
        return {
            "spark.sql.warehouse.dir": str(self.home / "warehouse"),
            "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={self.metastore};create=true",
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={self.home}",
        }

    def start(self, label: str, steps: List[Dict[str, Any]]) -> Tuple[subprocess.Popen, Path, float]:
        """A driver process in its own process group (session); returns it, its log and when it
        was started."""
        self.wait_until_free()
        self.count += 1
        base = self.root / "runs" / f"{self.count:03d}-{label}"
        base.parent.mkdir(exist_ok=True)
        plan, log = base.with_suffix(".plan.json"), base.with_suffix(".log.json")
        plan.write_text(
            json.dumps(
                {
                    "project": str(self.project),
                    "spark_params": {
                        **self.spark_params(),
                        **({LAKEHOUSE_KEY: "delta"} if self.delta else {}),
                        **({KAFKA_KEY: "true"} if self.kafka else {}),  # the connector, whoever starts Spark
                    },
                    "schema_dir": str(self.schema_dir),
                    "schema": SCHEMA,
                    "s3": s3_plan(self.store),
                    "delta": self.delta,
                    "kafka": self.kafka,
                    "topic": self.topic,
                    "tables": [t for m in MODELS for t in (m, f"{m}__late")],
                    "log": str(log),
                    "steps": steps,
                }
            )
        )
        env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "PYTHONUNBUFFERED": "1"}
        out = open(base.with_suffix(".out"), "w")
        started = time.time()
        proc = subprocess.Popen(
            [self.python, str(self.driver), str(plan)],
            cwd=self.project,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()
        return proc, log, started

    def run(self, label: str, steps: List[Dict[str, Any]]) -> Tuple[int, Dict[str, Any], float]:
        """A driver process run to its end: exit code, log, seconds."""
        proc, log, started = self.start(label, steps)
        try:
            code = proc.wait(timeout=PROCESS_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
        self.wait_until_free(proc.pid)
        return code, read_log(log), time.time() - started

    def wait_until_free(self, pgid: Optional[int] = None, timeout: float = 120) -> None:
        """Wait until no process of the group (and no process naming this project's Spark home,
        such as a JVM that outlived its driver) is alive; only one JVM may open the metastore."""
        deadline = time.time() + timeout
        while True:
            alive = (pids_where(in_group(pgid)) if pgid else []) + pids_where(mentions(str(self.home)))
            alive = [p for p in alive if p != os.getpid()]
            if not alive:
                return
            if time.time() > deadline:
                raise SystemExit(f"{self.name}: processes {alive} still alive after {timeout} s")
            time.sleep(0.3)

    def clear_derby_locks(self) -> List[str]:
        """After a kill: Derby embedded writes db.lck / dbex.lck in the database directory and a
        JVM killed with -9 leaves them. Removing them is safe only when no process is using the
        database, so check that no live process holds a file under metastore_db or names the
        Spark home (the caller already waited for the killed group)."""
        locks = [p for p in (self.metastore / "db.lck", self.metastore / "dbex.lck") if p.exists()]
        if not locks:
            return []
        users = pids_where(holds_files_under(self.metastore)) + pids_where(mentions(str(self.home)))
        users = [p for p in users if p != os.getpid()]
        if users:
            raise SystemExit(f"{self.name}: {users} still use {self.metastore}; not removing its lock files")
        for p in locks:
            p.unlink()
        self.lock_files_removed += len(locks)
        return [p.name for p in locks]

    def refresh(self) -> None:
        """On s3a: the bucket's SCHEMA/ objects copied anew into schema_dir, which the checkpoint's
        reading below looks at."""
        if self.store is not None:
            mirror(self.store, self.schema_dir)

    # the checkpoint, read between runs (no process is running)

    def locations(self, model: str) -> Dict[str, Path]:
        table = self.schema_dir / model
        # the runner's rule: a checkpoint inside the table's folder (earlier releases) stays in
        # use, else it is beside the table
        checkpoint = table / "_wv_checkpoint"
        if not (checkpoint / "window_views").is_dir():
            checkpoint = self.schema_dir / f"{model}__checkpoint"
        return {
            "table": table,
            "late": self.schema_dir / f"{model}__late",
            "checkpoint": checkpoint,
            "state": checkpoint / "window_views",
            "spark": checkpoint / "spark",
        }

    def last_commit(self, model: str) -> int:
        ids = [int(p.stem) for p in (self.locations(model)["state"] / "commits").glob("*.json") if p.stem.isdigit()]
        return max(ids) if ids else -1

    def phase(self, model: str, batch: int) -> Tuple[str, List[str]]:
        """How far `batch` of a model got, from its files; and the checkpoint/staging files that
        concern that batch."""
        loc = self.locations(model)
        spark_offset = (loc["spark"] / "offsets" / str(batch)).exists()
        spark_commit = (loc["spark"] / "commits" / str(batch)).exists()
        committed = (loc["state"] / "commits" / f"{batch}.json").exists()
        ready = (loc["state"] / "ready" / f"{batch}.json").exists()
        staged_table = (loc["table"] / "_wv_staging" / str(batch)).is_dir()
        staged_late = (loc["late"] / "_wv_staging" / str(batch)).is_dir()
        published = any(f"-n{batch}-" in p.name for p in loc["table"].glob("*.parquet"))
        in_delta = self.delta_commits(model, batch) if self.delta and not committed else []
        if committed:
            phase = "committed" + ("" if spark_commit else " (Spark's commit not yet written)")
        elif in_delta:  # READY precedes them; a Delta commit without it would be a bug of the plugin's
            phase = f"after a Delta commit ({', '.join(in_delta)}), before the commit record"
            phase += "" if ready else " (NO READY record)"
        elif ready and self.delta:
            phase = "ready (no Delta commit yet)"
        elif ready:
            phase = (
                "publishing (table published, not committed)"
                if (published or not staged_table)
                else "ready (nothing published)"
            )
        elif staged_table or staged_late:
            phase = "staged (no READY record)"
        elif spark_offset:
            phase = "in micro-batch (offsets written, nothing staged)"
        else:
            phase = "not started"
        files = []
        for key in ("state", "spark"):  # commits/<b>.json, ready/<b>.json, Spark's offsets/<b>, commits/<b>
            root = loc[key]
            for p in sorted(root.rglob("*")) if root.is_dir() else []:
                if p.is_file() and p.name.split(".")[0] == str(batch):
                    files.append(str(p.relative_to(self.schema_dir)))
        for key in ("table", "late"):
            staging = loc[key] / "_wv_staging" / str(batch)
            files += (
                [str(p.relative_to(self.schema_dir)) for p in sorted(staging.rglob("*.parquet"))]
                if staging.is_dir()
                else []
            )
        return phase, files

    def delta_commits(self, model: str, batch: int) -> List[str]:
        """The tables (of the model's table and late table) whose Delta log holds the batch's
        idempotent commit: a txn action of the streaming query's id with the batch's version."""
        try:
            app = json.loads((self.locations(model)["spark"] / "metadata").read_text())["id"]
        except (OSError, ValueError, KeyError):
            return []
        return [name for name, log in self.delta_logs(model).items() if (app, batch * IDLE_STEPS) in delta_txns(log)]

    def delta_logs(self, model: str) -> Dict[str, Path]:
        loc = self.locations(model)
        return {"table": loc["table"] / DELTA_LOG, "late table": loc["late"] / DELTA_LOG}


def log_commits(log: Path) -> List[str]:
    """The JSON commits of a Delta log folder (`<version, 20 digits>.json`)."""
    try:
        names = os.listdir(log)
    except OSError:
        return []
    return [n for n in names if n.endswith(".json") and n[:-5].isdigit()]


def txn_actions(path: Path) -> List[Tuple[str, int]]:
    """(appId, version) of the txn actions in one Delta commit file."""
    out = []
    for line in path.read_text().splitlines():
        action = json.loads(line) if line.strip() else {}
        if "txn" in action:
            out.append((action["txn"]["appId"], int(action["txn"]["version"])))
    return out


def delta_txns(log: Path) -> set:
    return {t for name in log_commits(log) for t in txn_actions(log / name)}


def await_path(proc: subprocess.Popen, path: Path, deadline: float) -> bool:
    """Poll until `path` exists (True), or the process ends or the deadline passes (False)."""
    while proc.poll() is None and time.time() < deadline:
        if path.exists():
            return True
        time.sleep(0.01)
    return False


def await_delta_commit(proc: subprocess.Popen, log: Path, deadline: float) -> bool:
    """Poll a Delta log until a new commit carrying a txn action (a micro-batch's idempotent
    commit) appears in it (True), or the process ends or the deadline passes (False)."""
    seen = set(log_commits(log))
    while proc.poll() is None and time.time() < deadline:
        for name in sorted(set(log_commits(log)) - seen):
            try:
                if txn_actions(log / name):
                    return True
            except (OSError, ValueError):
                continue  # not readable yet: the next poll reads it again
            seen.add(name)
        time.sleep(0.01)
    return False


def read_log(path: Path) -> Dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {"steps": []}


def dbt_steps(log: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [s for s in log.get("steps", []) if s["kind"] == "dbt"]


def node_failures(step: Optional[Dict[str, Any]]) -> Dict[str, str]:
    """model -> message of every model the dbt step did not build (all, if dbt itself failed)."""
    if step is None:
        return {m: "the process ended before the dbt run finished" for m in MODELS}
    out = {}
    for model in MODELS:
        node = step["nodes"].get(model)
        if node is None:
            out[model] = f"not run: {step['exception'] or 'dbt failed'}"[:500]
        elif node["status"] != "success":
            out[model] = f"{node['status']}: {node['message']}"[:2000]
    return out


# ---------------------------------------------------------------------------------------------
# comparing tables


def read_table(directory: Path) -> List[tuple]:
    import duckdb

    files = (
        sorted(str(p) for p in directory.glob("*.parquet") if not p.name.startswith(("_", ".")))
        if directory.is_dir()
        else []
    )
    if not files:
        return []
    rel = duckdb.sql(f"select * from read_parquet({files!r}, union_by_name = true)")
    keep = [i for i, c in enumerate(rel.columns) if not c.startswith("_wv")]
    return [tuple(row[i] for i in keep) for row in rel.fetchall()]


def compare(drilled: List[tuple], reference: List[tuple]) -> Dict[str, Any]:
    got, want = Counter(drilled), Counter(reference)
    missing, extra = want - got, got - want
    duplicated = sum(c for row, c in extra.items() if row in want)
    unexpected = sum(c for row, c in extra.items() if row not in want)
    return {
        "lost": sum(missing.values()),
        "duplicated": duplicated,
        "unexpected": unexpected,
        "examples": {"lost": [repr(r) for r in list(missing)[:3]], "extra": [repr(r) for r in list(extra)[:3]]},
    }


def compare_snapshots(drill: Path, reference: Path, model: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for table in (model, f"{model}__late"):
        ref = read_table(reference / table)
        out[table] = {"rows": len(ref), **compare(read_table(drill / table), ref)}
    return out


# ---------------------------------------------------------------------------------------------
# the drill


def after_delta_commit(record: Dict[str, Any]) -> bool:
    """A model's batch had a Delta commit and no commit record when the round's kill landed."""
    return any(p.startswith("after a Delta commit") for p in record["phases"].values())


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", type=int, default=24, help="rows per delivery")
    parser.add_argument("--workdir", type=Path, help="where the projects go (default: a temp dir, removed on success)")
    parser.add_argument("--out", type=Path, help="write the summary as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir even on success")
    parser.add_argument(
        "--parallel-reference",
        action="store_true",
        help="run the reference project (its own metastore) while the drill runs, not after it: "
        "shorter wall time, a second Spark process on the machine",
    )
    parser.add_argument(
        "--s3",
        action="store_true",
        help="the drilled project's window views on s3a:// (location_root), against moto's S3 API on 127.0.0.1 "
        "(tests/support/s3.py; hadoop-aws fetched by scripts/setup.sh); the reference stays on local files",
    )
    parser.add_argument(
        "--delta",
        action="store_true",
        help="both projects' window views Delta tables (file_format='delta', the profile's lakehouse: delta), the "
        "drivers on .venv-delta's python; the tables compared as their current Delta versions; every second kill "
        "aimed at a model's Delta commit",
    )
    parser.add_argument(
        "--kafka",
        action="store_true",
        help="the source a Kafka topic per project on the tests' broker on 127.0.0.1 (tests/support/kafka.py), "
        "each delivery a batch of JSON messages produced to it; the profiles' kafka: true (the connector and the "
        "broker's jars fetched by scripts/setup.sh)",
    )
    args = parser.parse_args(argv)
    if sum((args.delta, args.s3, args.kafka)) > 1:
        parser.error("--delta, --s3 and --kafka are drilled one at a time yet: choose one")
    if args.delta and not DELTA_PYTHON.exists():
        parser.error(f"--delta needs {DELTA_PYTHON} (PySpark 4.1 + delta-spark): run bash scripts/setup.sh")
    sys.path.insert(0, str(ROOT))  # tests.support (moto's S3 API, the Kafka broker), from the repository
    if args.kafka and not kafka_jars_fetched():
        parser.error("--kafka needs Kafka's broker jars and Spark's Kafka connector: run bash scripts/setup.sh")
    if args.s3 or args.kafka:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the servers on the way out
    with contextlib.ExitStack() as servers:
        store = servers.enter_context(s3_store()) if args.s3 else None
        broker = servers.enter_context(kafka_broker()) if args.kafka else None
        return drill_all(args, parser, store, broker)


def kafka_jars_fetched() -> bool:
    from dbt.adapters.window_views.spark import kafka_jars
    from tests.support import kafka

    return kafka.cached() and bool(kafka_jars.jars_if_cached())


@contextlib.contextmanager
def s3_store() -> Iterator[Any]:
    """moto's S3 API on 127.0.0.1 (tests/support/s3.py), stopped on the way out."""
    from tests.support import s3

    store = s3.Server().start()
    try:
        yield store
    finally:
        store.stop()


@contextlib.contextmanager
def kafka_broker() -> Iterator[Any]:
    """The tests' Kafka broker on 127.0.0.1 (tests/support/kafka.py), its files in a temp dir;
    stopped by its pid and its files removed on the way out."""
    from tests.support import kafka

    home = Path(tempfile.mkdtemp(prefix="kill_drill_kafka_"))
    broker = kafka.Broker(home)
    try:
        yield broker.start()
    finally:
        broker.stop()
        shutil.rmtree(home, ignore_errors=True)


def drill_all(
    args: argparse.Namespace, parser: argparse.ArgumentParser, store: Optional[Any], broker: Optional[Any]
) -> int:
    """The drill itself, on local files or (with `store`) on s3a; the source a table or (with
    `broker`) a Kafka topic."""
    rng = random.Random(args.seed)
    deliveries = make_deliveries(rng, args.rounds + 1, args.rows)
    temp = args.workdir is None
    work = Path(tempfile.mkdtemp(prefix="kill_drill_")) if temp else args.workdir.resolve()
    if not temp and work.exists() and any(work.iterdir()):
        parser.error(f"--workdir {work} is not empty")
    work.mkdir(parents=True, exist_ok=True)
    driver = work / "driver.py"
    driver.write_text(DRIVER)
    where = f", the drilled window views on s3a://{store.bucket}/{SCHEMA} at {store.endpoint}" if store else ""
    where += f", Delta tables (drivers on {DELTA_PYTHON})" if args.delta else ""
    where += f", the source a Kafka topic per project at {broker.bootstrap}" if broker else ""
    print(
        f"kill drill: {args.rounds} rounds, seed {args.seed}, {args.rows} rows a delivery, in {work}{where}", flush=True
    )
    if args.delta:
        print(
            f"delta: all {len(MODELS)} models drilled, none left out: the plugin refuses only a streaming Top-N "
            "into Delta (docs/delta-iceberg.md), which is not among them; over windows with on_update stream into "
            "Delta (replaceWhere on the event time's hours)",
            flush=True,
        )
    python = str(DELTA_PYTHON) if args.delta else sys.executable

    began = time.time()
    bootstrap = broker.bootstrap if broker else None
    drill = Project(work / "drill", driver, python, store, args.delta, bootstrap)
    reference = Project(work / "reference", driver, python, None, args.delta, bootstrap)
    for topic in (drill.topic, reference.topic) if broker else ():
        broker.create_topic(topic)
    code, log, _ = drill.run("setup", [*drill.setup(), drill.delivery(deliveries[0])])
    if code != 0:
        raise SystemExit(f"setup failed ({code}); see {drill.root / 'runs'}")

    # the reference: same deliveries, each followed by one uninterrupted run, in one process
    steps_ref = reference.setup()
    for r, rows in enumerate(deliveries):
        steps_ref += [reference.delivery(rows), {"dbt": ["run"]}, {"snapshot": str(reference.snapshots / str(r))}]
    ref_proc = reference.start("reference", steps_ref) if args.parallel_reference else None

    def recovery_steps(r: int) -> List[Dict[str, Any]]:
        steps: List[Dict[str, Any]] = [{"dbt": ["run"]}, {"snapshot": str(drill.snapshots / str(r))}]
        if r < args.rounds:
            steps.append(drill.delivery(deliveries[r + 1]))
        return steps

    # the calibration run: delivery 0, uninterrupted; its dbt step's duration from the process start
    code, log, _ = drill.run("calibrate", recovery_steps(0))
    steps = dbt_steps(log)
    if code != 0 or not steps or not steps[0]["success"]:
        raise SystemExit(f"the first uninterrupted run failed: {node_failures(steps[0] if steps else None)}")
    durations = [steps[0]["ended"] - log["started"]]
    print(f"calibration: an uninterrupted run takes {durations[0]:.1f} s (+ process start)", flush=True)

    rounds: List[Dict[str, Any]] = []
    failed: Dict[str, List[str]] = {m: [] for m in MODELS}
    for r in range(1, args.rounds + 1):
        full = statistics.median(durations[-5:]) + 2.0  # + the interpreter's start before the log
        delay = rng.uniform(0.02, 1.10) * full
        # with --delta every second kill waits for one model's Delta commit (table or late table)
        aim = (rng.choice(sorted(MODELS)), rng.choice(("table", "late table"))) if args.delta and r % 2 == 0 else None
        # with --kafka every second kill lands inside one model's micro-batch, after its offsets
        aim = (rng.choice(sorted(MODELS)), "batch offsets") if args.kafka and r % 2 == 0 else aim
        drill.refresh()
        before = {m: drill.last_commit(m) for m in MODELS}
        proc, log_path, started = drill.start(f"r{r}-killed", [{"dbt": ["run"]}])
        seen = False  # an aimed kill's Delta commit (or batch offsets) appeared
        if aim is None:
            while time.time() < started + delay and proc.poll() is None:
                time.sleep(0.05)
        elif args.delta:
            seen = await_delta_commit(proc, drill.delta_logs(aim[0])[aim[1]], started + 3 * full)
            delay = time.time() - started
        else:
            offsets = drill.locations(aim[0])["spark"] / "offsets" / str(before[aim[0]] + 1)
            seen = await_path(proc, offsets, started + 3 * full)
            until = time.time() + rng.uniform(0.0, 0.05) * full
            while seen and time.time() < until and proc.poll() is None:
                time.sleep(0.05)
            delay = time.time() - started
        jvm = bool(pids_where(lambda p, pid=proc.pid: in_group(pid)(p) and (p / "comm").read_text().strip() == "java"))
        killed = proc.poll() is None
        if killed:
            os.killpg(proc.pid, signal.SIGKILL)
        code = proc.wait()
        drill.wait_until_free(proc.pid)
        locks = drill.clear_derby_locks()
        killed_log = read_log(log_path)
        drill.refresh()
        phases = {m: drill.phase(m, before[m] + 1) for m in MODELS}
        record: Dict[str, Any] = {
            "round": r,
            "delivery": r,
            "sleep_s": round(delay, 2),
            "aimed_at": None if aim is None else f"{aim[0]}'s {aim[1]}",
            "aimed_commit_seen": seen,
            "killed": killed,
            "exit": code,
            "jvm_up": jvm,
            "derby_locks_removed": locks,
            "phases": {m: p for m, (p, _) in phases.items()},
            "batch_files": {m: f for m, (_, f) in phases.items() if f},
        }
        done = [m for m, (p, _) in phases.items() if p.startswith("committed")]
        busy = [f"{p} [{m}]" for m, (p, _) in phases.items() if p not in ("not started",) and m not in done]
        if not killed:
            record["point"] = "not killed (the run had ended)"
            steps = dbt_steps(killed_log)
            record["unkilled_run_failures"] = node_failures(steps[0] if steps else None)
        elif not jvm and not done and not busy:
            record["point"] = "before Spark started"
        elif busy:
            record["point"] = "mid-run: " + "; ".join(busy)
        elif len(done) == len(MODELS):
            record["point"] = "after every model's commit"
        elif not done:
            record["point"] = "Spark up, before the first batch"
        else:
            record["point"] = f"between models ({len(done)} of {len(MODELS)} committed)"

        code, log, seconds = drill.run(f"r{r}-recovery", recovery_steps(r))
        steps = dbt_steps(log)
        failures = node_failures(steps[0] if steps else None)
        if code != 0 and not failures:
            failures = {m: f"recovery process exited {code}" for m in MODELS}
        for m, msg in failures.items():
            failed[m].append(f"round {r}: {msg}")
        if steps and steps[0]["success"]:
            durations.append(steps[0]["ended"] - log["started"])
        record["recovery"] = {m: (steps[0]["nodes"].get(m, {}).get("message") if steps else None) for m in MODELS}
        record["recovery_failures"] = failures
        rounds.append(record)
        target = "'s Delta commit" if args.delta else ""
        aimed = "" if aim is None else f" (aimed at {record['aimed_at']}{target}{'' if seen else ': not seen'})"
        print(
            f"round {r:2d}: sleep {delay:5.1f}s{aimed} {'KILLED' if killed else 'ended '} at {record['point']}"
            f"{' (removed ' + '+'.join(locks) + ')' if locks else ''}; recovery "
            f"{'FAILED ' + json.dumps(failures)[:300] if failures else 'ok'} in {seconds:.0f}s",
            flush=True,
        )
        with open(work / "rounds.jsonl", "a") as f:
            f.write(json.dumps(record, default=str) + "\n")

    if ref_proc is None:
        code, log, seconds = reference.run("reference", steps_ref)
    else:
        proc, log_path, started = ref_proc
        code = proc.wait(timeout=PROCESS_TIMEOUT * 4)
        reference.wait_until_free(proc.pid)
        log, seconds = read_log(log_path), time.time() - started
    ref_runs = dbt_steps(log)
    ref_failures = [f"run {i}: {node_failures(s)}" for i, s in enumerate(ref_runs) if not s["success"]]
    if code != 0 or len(ref_runs) != len(deliveries) or ref_failures:
        print(f"the reference project failed (exit {code}, {len(ref_runs)} runs): {ref_failures[:3]}", flush=True)
    print(f"reference: {len(ref_runs)} runs in {seconds:.0f}s", flush=True)

    # compare
    per_model: Dict[str, Any] = {}
    total = Counter()
    for m in MODELS:
        final = compare_snapshots(drill.snapshots / str(args.rounds), reference.snapshots / str(args.rounds), m)
        diverged = []
        for r in range(args.rounds + 1):
            snap = compare_snapshots(drill.snapshots / str(r), reference.snapshots / str(r), m)
            bad = {
                t: {k: v for k, v in c.items() if k in ("lost", "duplicated", "unexpected") and v}
                for t, c in snap.items()
            }
            bad = {t: c for t, c in bad.items() if c}
            if bad:
                diverged.append({"after_round": r, **bad})
        counts = {k: sum(final[t][k] for t in final) for k in ("lost", "duplicated", "unexpected")}
        per_model[m] = {
            **counts,
            "failed_recoveries": len(failed[m]),
            "rows": final[m]["rows"],
            "late_rows": final[f"{m}__late"]["rows"],
            "tables": final,
            "killed_in": dict(Counter(rec["phases"][m] for rec in rounds if rec["killed"])),
            "diverged_after_rounds": diverged,
            "recovery_failures": failed[m],
        }
        total.update(counts)
        total["failed_recoveries"] += len(failed[m])

    summary = {
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus, {platform.platform()}, Python {platform.python_version()}",
        "seed": args.seed,
        "store": f"s3a (moto at {store.endpoint})" if store else "local files",
        "format": "delta" if args.delta else "parquet",
        "source": f"Kafka topics at {broker.bootstrap}" if broker else "a parquet table",
        "rows_per_delivery": args.rows,
        "workdir": str(work),
        "rounds": args.rounds,
        "killed": sum(r["killed"] for r in rounds),
        "kill_points": dict(Counter(r["point"].split(" [")[0] for r in rounds)),
        "aimed_kills": sum(1 for r in rounds if r["aimed_commit_seen"] and r["killed"]),
        "killed_after_delta_commit": sum(1 for r in rounds if r["killed"] and after_delta_commit(r)),
        "derby_lock_files_removed": drill.lock_files_removed,
        "lost": total["lost"],
        "duplicated": total["duplicated"],
        "unexpected": total["unexpected"],
        "failed_recoveries": total["failed_recoveries"],
        "reference_ok": code == 0 and len(ref_runs) == len(deliveries) and not ref_failures,
        "minutes": round((time.time() - began) / 60, 1),
        "models": per_model,
        "round_log": str(work / "rounds.jsonl"),
    }
    print("\n== kill drill summary")
    print(f"rounds {summary['rounds']}, killed {summary['killed']}, kill points {json.dumps(summary['kill_points'])}")
    if args.delta:
        print(
            f"aimed at a Delta commit: {summary['aimed_kills']} kills; killed after a Delta commit and before the "
            f"batch's commit record: {summary['killed_after_delta_commit']} rounds"
        )
    if args.kafka:
        print(f"aimed inside a micro-batch (after its offsets were written): {summary['aimed_kills']} kills")
    print(
        f"{'model':18s} {'rows':>5s} {'late':>5s} {'lost':>5s} {'dup':>5s} {'unexp':>5s} {'failed rec.':>11s}  diverged after rounds"
    )
    for m, s in per_model.items():
        print(
            f"{m:18s} {s['rows']:5d} {s['late_rows']:5d} {s['lost']:5d} {s['duplicated']:5d} {s['unexpected']:5d} "
            f"{s['failed_recoveries']:11d}  {[d['after_round'] for d in s['diverged_after_rounds']] or '-'}"
        )
    print(
        f"total: lost {summary['lost']}, duplicated {summary['duplicated']}, unexpected {summary['unexpected']}, "
        f"failed recoveries {summary['failed_recoveries']}; reference ok: {summary['reference_ok']}; "
        f"{summary['minutes']} min"
    )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=2, default=str))
    bad = (
        summary["lost"]
        or summary["duplicated"]
        or summary["unexpected"]
        or summary["failed_recoveries"]
        or not summary["reference_ok"]
    )
    if bad or args.keep or not temp:
        print(f"files kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
