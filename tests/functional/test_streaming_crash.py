"""Crash and restart of execution='streaming' window views, in real separate dbt processes.

A micro-batch is killed (os._exit(137), as kill -9 would) at each point of its commit protocol
(DBT_WINDOW_VIEWS_FAULT = staged | ready | published, tests/support/faults.py), for a TUMBLE model of each emit mode,
on the local disk and on a filesystem with an object store's semantics (tests/support/objectstore.py: no rename, a
move is a copy then a delete, and one more crash point between the two: copied); the
next `dbt run` must finish the batch so that the table and the late table equal those of twin
models that ran the same deliveries uninterrupted (nothing lost, nothing twice), and equal a
Python replay of the streaming semantics. Then, on the object store: a run with no new data changes no file; a model
whose SQL changed (another aggregate, same columns) fails with a message naming --full-refresh
and keeps its rows; `dbt run --full-refresh` rebuilds from all input beside the old version; a
rebuild killed mid-stream leaves the live version as it was, and the next run discards it.

The dbt processes use their own metastore and warehouse (Derby admits one JVM), so this test
never touches the shared Spark session: a small driver script (below) runs in each process,
appends source rows with Spark SQL and invokes dbt (dbtRunner, as `dbt run` does), and the test
reads the tables' parquet files with DuckDB. Spark start-up costs ~10 s a process, so one process
holds several steps; only a crash has to end one, and one crash ends every crashed model's
batch at once (tests/support/faults.py: each model's thread stops at its own point, the last to
get there kills the process).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from tests.support import oracles as o
from tests.support.dbt_projects import sources_yml, spark_params, write_project
from tests.support.processes import wait_for_jvm, with_tests_importable

duckdb = pytest.importorskip("duckdb")

pytestmark = pytest.mark.drill  # dbt processes of their own, killed: scripts/test.sh --drills

SCHEMA = "crash"
# the object store's move is a copy then a delete: one more point, between the two; a crash at
# `staged` has moved nothing yet, so the store's semantics play no part in it (the local run's)
POINTS = {"local": ("staged", "ready", "published"), "objectstore": ("ready", "copied", "published")}
EMITS = {"eowc": "on_window_close", "upd": "on_update"}
SIZE, DELAY = 10 * o.MINUTE, 5 * o.MINUTE
REFS = [f"{emit}_ref" for emit in EMITS]

MODEL = """
{{{{ config(materialized='window_view', execution='streaming', emit='{emit}', late_data='table',
            watermark={{'column': 'ts', 'delay': '5 minutes'}}) }}}}
select k, window_start, window_end, count(*) as n, sum(v) as total, {top}(v) as top
from {{{{ window_views.tumble(source('raw', 'ev'), 'ts', '10 minutes') }}}}
group by k, window_start, window_end
"""

# runs in each dbt process: the steps of a JSON plan (Spark SQL, file writes, dbt invocations,
# copies of the schema's directory), logging every dbt result; a fault ends the process mid-step
DRIVER = """
import json, os, shutil, sys
from pathlib import Path

plan = json.loads(Path(sys.argv[1]).read_text())
project = Path(plan["project"])
from tests.support import faults  # importable: the test puts the repository on PYTHONPATH
faults.install()
if plan["store"] == "objectstore":
    from tests.support import objectstore
    objectstore.install()
from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

# the settings the adapter itself would use: the embedded defaults under target/ + the profile's
spark = spark_session(embedded_settings(project / "target", plan["spark_params"]))
log = []
for step in plan["steps"]:
    if "sql" in step:
        spark.sql(step["sql"])
    elif "write" in step:
        (project / step["write"]).write_text(step["text"])
    elif "snapshot" in step:
        shutil.copytree(plan["schema_dir"], step["snapshot"])
    else:
        from dbt.cli.main import dbtRunner
        os.environ.pop("DBT_WINDOW_VIEWS_FAULT", None)
        os.environ.update(step.get("env", {}))
        result = dbtRunner().invoke([*step["dbt"], "--project-dir", str(project), "--profiles-dir", str(project)])
        nodes = {}
        for r in (result.result or []) if result.exception is None else []:
            nodes[r.node.name] = {"status": str(r.status), "message": r.message, "response": dict(r.adapter_response or {})}
        log.append({"args": step["dbt"], "success": result.success, "exception": str(result.exception or ""), "nodes": nodes})
        Path(plan["log"]).write_text(json.dumps(log, default=str))
"""


# ---------------------------------------------------------------------------------------------
# the input and the streaming semantics, replayed in Python


def deliveries(rng: random.Random) -> List[List[Dict[str, Any]]]:
    """Three deliveries of rows {id, k, v, ts} on 2020-04-15, each shuffled: mostly the next hour,
    a few stragglers from the hour before (late once the watermark passed them), ties, NULL
    times, NULL keys and values."""
    day = o.micros(dt.datetime(2020, 4, 15, 8))
    out: List[List[Dict[str, Any]]] = []
    next_id = 1
    for d in range(3):
        rows = []
        for i in range(45):
            if i < 36 or d == 0:
                t = day + d * o.HOUR + rng.randrange(o.HOUR)
            else:  # straggler: up to an hour behind
                t = day + (d - 1) * o.HOUR + rng.randrange(40 * o.MINUTE)
            t -= t % (o.MINUTE if rng.random() < 0.7 else o.SECOND)
            if rows and rng.random() < 0.1:
                t = rng.choice(rows)["ts"] or t  # a tie
            if rng.random() < 0.04:
                t = None
            rows.append(
                {
                    "id": next_id,
                    "k": rng.choice("ab") if rng.random() > 0.05 else None,
                    "v": rng.randint(-5, 40) if rng.random() > 0.08 else None,
                    "ts": t,
                }
            )
            next_id += 1
        rng.shuffle(rows)
        out.append(rows)
    return out


def window_end(t: int) -> int:
    return t - t % SIZE + SIZE


def replay(batches: List[List[Dict[str, Any]]]) -> Tuple[Dict[int, tuple], Optional[int], List[int]]:
    """The late rule over the deliveries as micro-batches: late rows {id: (batch, W then)}, the
    final W, and the late count of each batch."""
    w: Optional[int] = None
    late: Dict[int, tuple] = {}
    counts = []
    for batch_id, rows in enumerate(batches):
        # a row without event time is kept aside with the late rows
        now = [r for r in rows if r["ts"] is None or (w is not None and window_end(r["ts"]) <= w)]
        late.update({r["id"]: (batch_id, w) for r in now})
        counts.append(len(now))
        on_time = [r["ts"] for r in rows if r["ts"] is not None and r["id"] not in late]
        if on_time:
            w = max(on_time) - DELAY if w is None else max(w, max(on_time) - DELAY)
    return late, w, counts


def expected_table(rows: List[Dict[str, Any]], emit: str, w: Optional[int], top=max) -> List[tuple]:
    """(k, window_start, window_end, n, total, top) of the windows the emit mode shows."""
    groups: Dict[tuple, List[Optional[int]]] = defaultdict(list)
    for r in rows:
        if r["ts"] is not None:
            end = window_end(r["ts"])
            groups[(r["k"], end - SIZE, end)].append(r["v"])
    out = []
    for (k, start, end), values in groups.items():
        if emit == "eowc" and (w is None or end > w):
            continue
        present = [v for v in values if v is not None]
        out.append((k, start, end, len(values), sum(present) if present else None, top(present) if present else None))
    return sorted(out, key=o.sort_key)


# ---------------------------------------------------------------------------------------------
# reading the tables' files


def data_files(table: Path) -> List[str]:
    if not table.is_dir():
        return []
    return sorted(
        str(p) for p in table.iterdir() if p.is_file() and p.suffix == ".parquet" and not p.name.startswith(("_", "."))
    )


def read(table: Path, columns: str) -> List[tuple]:
    files = data_files(table)
    if not files:
        return []
    rows = duckdb.sql(f"select {columns} from read_parquet({files!r})").fetchall()
    return sorted(rows, key=o.sort_key)


def window_rows(schema_dir: Path, model: str) -> List[tuple]:
    return read(schema_dir / model, "k, epoch_us(window_start), epoch_us(window_end), n, total, top")


def late_rows(schema_dir: Path, model: str) -> List[tuple]:
    return read(schema_dir / f"{model}__late", "id, k, v, epoch_us(ts), _batch_id, epoch_us(_watermark)")


# ---------------------------------------------------------------------------------------------
# the dbt processes


class Processes:
    def __init__(self, root: Path, store: str) -> None:
        self.store = store
        self.home = root / "spark"
        self.project = root / "project"
        self.schema_dir = self.home / "warehouse" / f"{SCHEMA}.db"
        self.driver = root / "driver.py"
        self.driver.write_text(DRIVER)
        self.count = 0
        (self.project / "models").mkdir(parents=True)
        write_project(self.project, "wv_crash", SCHEMA, spark_params(self.home))

    def run(
        self, steps: List[Dict[str, Any]], spark: Optional[Dict[str, str]] = None, env: Optional[Dict[str, str]] = None
    ) -> Tuple[subprocess.CompletedProcess, List[Dict[str, Any]]]:
        """One process running the steps (its Spark with the settings `spark` adds); returns it
        and the log of its dbt invocations."""
        self.count += 1
        plan = self.project.parent / f"plan{self.count}.json"
        log = self.project.parent / f"log{self.count}.json"
        plan.write_text(
            json.dumps(
                {
                    "project": str(self.project),
                    "spark_params": {**spark_params(self.home), **(spark or {})},
                    "schema_dir": str(self.schema_dir),
                    "log": str(log),
                    "steps": steps,
                    "store": self.store,
                }
            )
        )
        inherited = {k: v for k, v in os.environ.items() if k != "DBT_WINDOW_VIEWS_FAULT"}
        proc = subprocess.run(
            [sys.executable, str(self.driver), str(plan)],
            cwd=self.project,
            env=with_tests_importable({**inherited, **(env or {})}),
            capture_output=True,
            text=True,
            timeout=600,
        )
        wait_for_jvm(self.home)
        return proc, json.loads(log.read_text()) if log.exists() else []


def ok(proc: subprocess.CompletedProcess, log: List[Dict[str, Any]]) -> None:
    failed = [entry for entry in log if not entry["success"]]
    assert proc.returncode == 0 and not failed, (
        f"driver exited {proc.returncode}; failed: {json.dumps(failed)[:3000]}\n"
        f"--- stdout ---\n{proc.stdout[-5000:]}\n--- stderr ---\n{proc.stderr[-3000:]}"
    )


def spark_story(proc: subprocess.CompletedProcess) -> str:
    """What a dbt process said went wrong: dbt's output's end, Spark's first errors and warnings
    (the cause comes first; what failed after it fills the log's end), then the log's end."""
    said = [line for line in proc.stderr.splitlines() if " ERROR " in line or " WARN " in line or "Error:" in line]
    return (
        f"--- stdout ---\n{proc.stdout[-4000:]}\n--- Spark's first errors ---\n"
        + "\n".join(said[:40])
        + f"\n--- stderr's end ---\n{proc.stderr[-4000:]}"
    )


def insert(rows: List[Dict[str, Any]]) -> Dict[str, str]:
    return {"sql": f"insert into {SCHEMA}.ev {o.values_sql(rows)}"}


def state_dir(schema_dir: Path, model: str) -> Path:
    return schema_dir / f"{model}__checkpoint" / "window_views"


@pytest.mark.parametrize("store", ["local", "objectstore"])
def test_crash_at_each_fault_point_then_restart(tmp_path, store):
    FAULTS = POINTS[store]
    CRASHED = [f"{emit}_{fault}" for fault in FAULTS for emit in EMITS]
    rng = random.Random(7)
    batches = deliveries(rng)
    late, w, late_counts = replay(batches)
    assert late_counts[1] > 0 and late_counts[2] > 0, "the deliveries must make rows late"
    everything = [r for rows in batches for r in rows]

    p = Processes(tmp_path, store)
    p.project.joinpath("models", "sources.yml").write_text(sources_yml("ev"))
    for emit in EMITS:
        for name in [f"{emit}_{fault}" for fault in FAULTS] + [f"{emit}_ref"]:
            p.project.joinpath("models", f"{name}.sql").write_text(MODEL.format(emit=EMITS[emit], top="max"))

    # delivery 1 for every model (batch 0), delivery 2, then the crashes: per emit mode, one dbt
    # run with a thread for each of its crashed models, each stopping at its point until the last
    # ends the process (two processes of three streams: six in one JVM stopped its context, once
    # in several CI runs, before any stream reached its point)
    steps: List[Dict[str, Any]] = [
        {"sql": f"create database if not exists {SCHEMA}"},
        {"sql": f"create table {SCHEMA}.ev (id int, k string, v int, ts timestamp) using parquet"},
        insert(batches[0]),
        {"dbt": ["run"]},
        insert(batches[1]),
    ]
    for emit in EMITS:
        crashed = [name for name in CRASHED if name.startswith(f"{emit}_")]
        fault = {"DBT_WINDOW_VIEWS_FAULT": ",".join(f"{name}={name.split('_', 1)[1]}" for name in crashed)}
        steps.append({"dbt": ["run", "--threads", str(len(crashed)), "-s", *crashed], "env": fault})
        # Spark's own log in full, so a failure before the fault points says why
        proc, log = p.run(steps, env={"WINDOW_VIEWS_SPARK_LOGS": "1"})
        # every dbt run but the crashed one logged its result (the crashed one never returns)
        assert len(log) == sum("dbt" in step for step in steps) - 1, spark_story(proc)
        assert all(entry["success"] for entry in log), log
        for entry in log:
            assert all(n["message"].startswith("STREAM 1 batch, 45 in") for n in entry["nodes"].values()), log
        # the process died in batch 1 of every crashed model, each at its point of the protocol
        assert proc.returncode == 137, f"exited {proc.returncode}\n{spark_story(proc)}"
        steps = []
    for name in CRASHED:
        point = name.split("_", 1)[1]
        state, table = state_dir(p.schema_dir, name), p.schema_dir / name
        late_table = p.schema_dir / f"{name}__late"
        assert (state / "commits" / "0.json").exists() and not (state / "commits" / "1.json").exists(), name
        assert (state / "ready" / "1.json").exists() == (point != "staged"), name
        # batch 1 has late rows, so it staged late files; they are published last
        assert (late_table / "_wv_staging" / "1").is_dir(), name
        assert not any("-n1-" in Path(f).name for f in data_files(late_table)), name
        # the batch's output files (it has some in both modes) are in staging until published
        assert (table / "_wv_staging" / "1").is_dir() == (point != "published"), name
        published = [Path(f).name for f in data_files(table) if "-n1-" in Path(f).name]
        assert bool(published) == (point in ("copied", "published")), name
        if point == "copied":  # a move caught between its copy and its delete: both visible
            bucket, part = published[0].split("-n1-", 1)
            assert len(published) == 1 and (table / "_wv_staging" / "1" / f"_wv_bucket={bucket}" / part).is_file(), name

    # a normal run finishes every crashed batch; delivery 3; on the object store, then: a run with
    # nothing new; a changed model SQL (another aggregate, same columns); --full-refresh; another
    # one of `upd_ref`, killed mid-stream (checked last): one process. Those steps move files as
    # the crash points do, so the store whose move is a copy and a delete stands for both
    snaps = tmp_path / "snapshots"
    changed = MODEL.format(emit=EMITS["eowc"], top="min")
    after: List[Dict[str, Any]] = [
        {"write": "models/eowc_ref.sql", "text": changed},
        {"dbt": ["run"]},
        {"snapshot": str(snaps / "idle")},
        {"dbt": ["run", "--full-refresh", "-s", "eowc_ref", "upd_ref"]},
        {"snapshot": str(snaps / "refreshed")},
        {"dbt": ["run", "--full-refresh", "-s", "upd_ref"], "env": {"DBT_WINDOW_VIEWS_FAULT": "published"}},
    ]
    proc, log = p.run(
        [
            {"dbt": ["run"]},
            {"snapshot": str(snaps / "recovered")},
            insert(batches[2]),
            {"dbt": ["run"]},
            {"snapshot": str(snaps / "delivered")},
            *(after if store == "objectstore" else []),
        ]
    )
    runs = 4 if store == "objectstore" else 2
    assert len(log) == runs, f"{json.dumps(log)[:3000]}\n{proc.stdout[-5000:]}\n{proc.stderr[-3000:]}"
    killed = proc
    recovered, delivered = log[:2]
    failures: List[str] = []

    assert recovered["success"], json.dumps(recovered)[:3000]
    for name in CRASHED + REFS:
        # the replayed batch 1 counts in the run that finished it, as the refs' batch 1 does
        node, ref = recovered["nodes"][name], recovered["nodes"][name.split("_")[0] + "_ref"]
        if node["response"].get("batches") != 1 or node["response"].get("late_rows") != late_counts[1]:
            failures.append(
                f"{name}: recovery run result {node['message']!r}, expected 1 batch with {late_counts[1]} late"
            )
        if node["message"] != ref["message"]:
            failures.append(f"{name}: recovery run said {node['message']!r}, the uninterrupted twin {ref['message']!r}")

    assert delivered["success"], json.dumps(delivered)[:3000]
    late_two, w_two, _ = replay(batches[:2])
    for snap, upto, w_at, delivered_rows in (
        ("recovered", late_two, w_two, batches[0] + batches[1]),
        ("delivered", late, w, everything),
    ):
        rows = [r for r in delivered_rows if r["id"] not in upto]
        want_late = sorted(
            ((r["id"], r["k"], r["v"], r["ts"], *upto[r["id"]]) for r in everything if r["id"] in upto), key=o.sort_key
        )
        for emit in EMITS:
            want = expected_table(rows, emit, w_at)
            ref = window_rows(snaps / snap, f"{emit}_ref")
            if ref != want:
                failures.append(f"{snap}: {emit}_ref != the replay of the streaming semantics: {ref[:3]} vs {want[:3]}")
            for fault in FAULTS:
                name = f"{emit}_{fault}"
                got = window_rows(snaps / snap, name)
                keys = Counter(r[:3] for r in got)
                if any(c > 1 for c in keys.values()):
                    failures.append(f"{snap}: {name} holds a window twice: {[k for k, c in keys.items() if c > 1][:3]}")
                if got != ref:
                    failures.append(
                        f"{snap}: {name} ({len(got)} rows) != uninterrupted {emit}_ref ({len(ref)} rows); "
                        f"only crashed {sorted(set(got) - set(ref), key=o.sort_key)[:3]}, "
                        f"only ref {sorted(set(ref) - set(got), key=o.sort_key)[:3]}"
                    )
                if late_rows(snaps / snap, name) != want_late:
                    failures.append(
                        f"{snap}: {name}__late != the {len(want_late)} late rows {late_rows(snaps / snap, name)[:3]}"
                    )
            if late_rows(snaps / snap, f"{emit}_ref") != want_late:
                failures.append(f"{snap}: {emit}_ref__late differs from the late rule")

    if store == "local":
        ok(proc, log)
        assert not failures, "\n".join(failures)
        return
    idle, refreshed = log[2:]
    # nothing new: no model runs a batch, and no file or row changes; the changed model fails
    # before it touches anything
    assert not idle["success"]
    for name in CRASHED + REFS:
        node = idle["nodes"][name]
        if name == "eowc_ref":
            if node["status"] != "error" or "--full-refresh" not in (node["message"] or ""):
                failures.append(
                    f"eowc_ref with changed SQL: {node['status']} {node['message']!r}, expected an error naming --full-refresh"
                )
        elif not node["message"].startswith("STREAM 0 batches, 0 in, 0 out, 0 late"):
            failures.append(f"{name}: a run with no new data said {node['message']!r}")
        for table in (name, f"{name}__late"):
            files = {snap: [Path(f).name for f in data_files(snaps / snap / table)] for snap in ("delivered", "idle")}
            if files["delivered"] != files["idle"]:
                failures.append(f"{table}: a run with no new data changed its files: {files}")
        if window_rows(snaps / "idle", name) != window_rows(snaps / "delivered", name):
            failures.append(f"{name}: a run with no new data changed its rows")
        if late_rows(snaps / "idle", name) != late_rows(snaps / "delivered", name):
            failures.append(f"{name}: a run with no new data changed its late rows")

    # --full-refresh: one batch over all input (so nothing late but the rows without event
    # time), with the model's current SQL, built beside the old version (`<model>__v2`, the
    # tables' location since the swap)
    assert refreshed["success"], json.dumps(refreshed)[:3000]
    all_w = max(r["ts"] for r in everything if r["ts"] is not None) - DELAY
    timeless = sorted(r["id"] for r in everything if r["ts"] is None)
    assert timeless, "the deliveries must hold rows without event time"
    for name, want in (
        ("eowc_ref", expected_table(everything, "eowc", all_w, top=min)),
        ("upd_ref", expected_table(everything, "upd", all_w)),
    ):
        node = refreshed["nodes"][name]
        if not node["message"].startswith(
            f"STREAM 1 batch, {len(everything)} in, {len(want)} out, {len(timeless)} late"
        ):
            failures.append(f"{name}: --full-refresh said {node['message']!r}")
        rebuilt = f"{name}__v2"
        if window_rows(snaps / "refreshed", rebuilt) != want:
            failures.append(
                f"{name}: --full-refresh did not rebuild from all input: {window_rows(snaps / 'refreshed', rebuilt)[:3]} vs {want[:3]}"
            )
        if sorted(r[0] for r in late_rows(snaps / "refreshed", rebuilt)) != timeless:
            failures.append(f"{name}: --full-refresh kept late rows other than those without event time")
    assert not failures, "\n".join(failures)

    # a rebuild killed mid-stream (back into the first slot, `upd_ref`) leaves the live version
    # (`upd_ref__v2`) as it was; the next run discards the half-built one and streams on
    assert killed.returncode == 137, f"exited {killed.returncode}\n{killed.stdout[-3000:]}"
    assert '"step": "building"' in (p.schema_dir / "upd_ref__checkpoint" / "rebuild.json").read_text()
    assert data_files(p.schema_dir / "upd_ref")  # the killed build had published its batch there
    proc, log = p.run([{"dbt": ["run", "-s", "upd_ref"]}, {"snapshot": str(snaps / "after_kill")}])
    ok(proc, log)
    assert log[0]["nodes"]["upd_ref"]["message"].startswith("STREAM 0 batches"), log
    assert window_rows(snaps / "after_kill", "upd_ref__v2") == window_rows(snaps / "refreshed", "upd_ref__v2")
    assert not (snaps / "after_kill" / "upd_ref").exists() and not (snaps / "after_kill" / "upd_ref__late").exists()
    assert not any(f.is_file() for f in (snaps / "after_kill" / "upd_ref__checkpoint").rglob("*"))


# a row with v = 999 makes a 1 GB string in its task: more than a 768 MB JVM holds, not a 3 GB one
# a row with v = 999 asks for a string of a billion characters: more than a 768 MB JVM has
HUNGRY_SELECT = """
select k, window_start, window_end, count(*) as n,
       max(length(repeat('x', case when v = 999 then 1000000000 else 1 end))) as widest
from {{ window_views.tumble(source('raw', 'ev'), 'ts', '10 minutes') }}
group by k, window_start, window_end
"""
HUNGRY = (
    """
{{ config(materialized='window_view', execution='streaming', emit='on_update',
          watermark={'column': 'ts', 'delay': '5 minutes'}) }}"""
    + HUNGRY_SELECT
)


def test_a_micro_batch_that_runs_spark_out_of_memory_is_named_and_redone(tmp_path):
    """In local mode a task's OutOfMemoryError ends Spark's JVM (after stopping its context): the
    query only sees jobs cancelled and an internal error. The run says that Spark ran out of
    memory and where to give it more, without Spark's internals; the next run, in a new process
    with more memory, redoes the batch from the last commit: nothing lost, nothing twice."""
    p = Processes(tmp_path, "local")
    p.project.joinpath("models", "sources.yml").write_text(sources_yml("ev"))
    p.project.joinpath("models", "hungry.sql").write_text(HUNGRY)
    # runs after it (dbt orders independent models by name), in the same dbt process
    p.project.joinpath("models", "later.sql").write_text("select count(*) as n from {{ source('raw', 'ev') }}")
    day = o.micros(dt.datetime(2020, 4, 15, 8))
    first = [{"id": i, "k": "a", "v": i, "ts": day + i * o.MINUTE} for i in range(1, 6)]
    second = [
        {"id": 6, "k": "a", "v": 999, "ts": day + 12 * o.MINUTE},
        {"id": 7, "k": "b", "v": 1, "ts": day + 13 * o.MINUTE},
    ]
    small = {"spark.driver.memory": "768m"}
    proc, log = p.run(
        [
            {"sql": f"create database if not exists {SCHEMA}"},
            {"sql": f"create table {SCHEMA}.ev (id int, k string, v int, ts timestamp) using parquet"},
            insert(first),
            {"dbt": ["run"]},
            insert(second),
            {"dbt": ["run"]},
        ],
        spark=small,
    )
    assert len(log) == 2 and log[0]["success"], (
        f"{json.dumps(log)[:3000]}\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
    )
    node = log[1]["nodes"]["hungry"]
    assert node["status"] == "error", log[1]
    message = node["message"]
    assert "window_view model 'hungry'" in message and "hungry__checkpoint" in message, message
    assert "Spark stopped while the stream ran: its JVM ran out of memory (java.lang.OutOfMemoryError)" in message, (
        message
    )
    assert "spark.driver.memory" in message and "committed micro-batches are kept" in message, message
    for internal in ("Traceback", "py4j", "at org.apache", "_wv_", "DAGScheduler", "NullPointer"):
        assert internal not in message, message
    # the models after it in that dbt process find Spark gone, and are told so
    later = log[1]["nodes"]["later"]["message"]
    assert later and "Spark's JVM in this dbt process is gone" in later and "run dbt again" in later, later
    assert "Connection refused" not in later and "py4j" not in later.lower(), later
    state = state_dir(p.schema_dir, "hungry")
    assert (state / "commits" / "0.json").exists() and not (state / "commits" / "1.json").exists()
    assert not (p.schema_dir / "hungry__checkpoint" / "run.lock").exists()  # released though Spark was gone

    proc, log = p.run([{"dbt": ["run"]}], spark={"spark.driver.memory": "3g"})
    ok(proc, log)
    assert log[0]["nodes"]["hungry"]["message"].startswith("STREAM 1 batch, 2 in, 2 out, 0 late"), log
    assert log[0]["nodes"]["later"]["status"] == "success", log
    rows = read(p.schema_dir / "hungry", "k, epoch_us(window_start), n, widest")
    assert rows == [("a", day, 5, 1), ("a", day + SIZE, 1, 1_000_000_000), ("b", day + SIZE, 1, 1)], rows


HUNGRY_BATCH = "{{ config(materialized='window_view') }}" + HUNGRY_SELECT


def test_a_batch_build_that_runs_spark_out_of_memory_is_named_and_keeps_its_table(tmp_path):
    """A batch window view's statement that runs the embedded JVM out of memory fails with what
    happened and where to give Spark more memory, not Spark's Java stack; the models after it in
    that dbt process are told Spark is gone; the table keeps the rows of its last build."""
    p = Processes(tmp_path, "local")
    p.project.joinpath("models", "sources.yml").write_text(sources_yml("ev"))
    p.project.joinpath("models", "hungry_batch.sql").write_text(HUNGRY_BATCH)
    p.project.joinpath("models", "later.sql").write_text("select count(*) as n from {{ source('raw', 'ev') }}")
    day = o.micros(dt.datetime(2020, 4, 15, 8))
    first = [{"id": i, "k": "a", "v": i, "ts": day + i * o.MINUTE} for i in range(1, 6)]
    proc, log = p.run(
        [
            {"sql": f"create database if not exists {SCHEMA}"},
            {"sql": f"create table {SCHEMA}.ev (id int, k string, v int, ts timestamp) using parquet"},
            insert(first),
            {"dbt": ["run", "-s", "hungry_batch"]},
            insert([{"id": 6, "k": "a", "v": 999, "ts": day + 12 * o.MINUTE}]),
            {"dbt": ["run"]},
        ],
        spark={"spark.driver.memory": "768m"},
    )
    assert len(log) == 2 and log[0]["success"], f"{json.dumps(log)[:3000]}\n{spark_story(proc)}"
    node = log[1]["nodes"]["hungry_batch"]
    assert node["status"] == "error", log[1]
    message = node["message"]
    assert "Spark stopped during this command: its JVM ran out of memory (java.lang.OutOfMemoryError)" in message, (
        message
    )
    assert "spark.driver.memory" in message and "in a new dbt process" in message, message
    for internal in ("Traceback", "py4j", "at org.apache", "_wv_", "SparkException", "INTERNAL_ERROR"):
        assert internal not in message, message
    later = log[1]["nodes"]["later"]["message"]
    assert later and "Spark" in later and ("is gone" in later or "ran out of memory" in later), later
    for internal in ("Connection refused", "py4j", "Error while sending", "INTERNAL_ERROR", "at org.apache"):
        assert internal not in later, later
    tables = [d for d in p.schema_dir.iterdir() if d.name.startswith("hungry_batch") and data_files(d)]
    assert len(tables) == 1, tables  # the build that failed left no second copy beside it
    rows = read(tables[0], "k, epoch_us(window_start), n, widest")
    assert rows == [("a", day, 5, 1)], rows
