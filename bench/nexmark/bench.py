"""Nexmark's window queries as window views against Apache Flink, on the same events and cores.

For each query of bench/nexmark/project: the streaming catch-up over the first 99 of 100
deliveries, the increment of the last 1%, and the batch build over all of them; then Flink 2.3
(bench/nexmark/flink_job.py, a MiniCluster at parallelism 2, streaming mode with a watermark)
over the same events as CSV. Throughput is events ÷ seconds ÷ cores, counting every event
(persons, auctions and bids: Nexmark's one stream) and the dbt node's execution time (no JVM
start, no dbt parse). A query the plugin refuses to stream prints the refusal instead.

    bash bench/nexmark/run.sh [--events N] [--queries q5 q7 ...] [--no-flink]"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import yaml
from dbt.cli.main import dbtRunner

from bench.jobs import Jobs, describe, streaming
from bench.nexmark import Landing, NexmarkConfig, generate, spark_jobs
from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

HERE = Path(__file__).resolve().parent
QUERIES = ("q5", "q7", "q8", "q11", "q15", "q16", "q17", "q18", "q19")
KINDS = ("person", "auction", "bid")
DELIVERIES = 100  # the last one is the 1% increment
TARGETS = {"stream": "nexmark_stream", "batch": "nexmark_batch"}
# why a query has no hand-written Structured Streaming job (spark_jobs.py)
NO_JOB = {
    "q15": "none (Spark streams no count(DISTINCT))",
    "q16": "none (Spark streams no count(DISTINCT))",
    "q17": "none (not written yet)",
}


@dataclass
class Result:
    """One query's measurements; None where a run did not happen (refused, or Flink skipped)."""

    query: str
    catchup_s: Optional[float] = None
    increment_s: Optional[float] = None
    increment_jobs: Optional[int] = None
    state_rows: Optional[int] = None
    late_rows: int = 0
    batch_s: Optional[float] = None
    flink_s: Optional[float] = None
    spark_catchup_s: Optional[float] = None  # the hand-written Structured Streaming job (spark_jobs.py)
    spark_increment_s: Optional[float] = None
    refusal: Optional[str] = None
    notes: List[str] = field(default_factory=list)


def copy_project(root: Path) -> Path:
    """The Nexmark project in `root`, with one target per execution (its own schema) on the
    embedded Spark, so the streaming and batch tables of a query stand side by side."""
    shutil.copytree(HERE / "project", root, ignore=shutil.ignore_patterns("target", "logs", "profiles.yml"))
    outputs = {
        name: {"type": "window_views", "method": "session", "schema": schema, "threads": 1}
        for name, schema in TARGETS.items()
    }
    (root / "profiles.yml").write_text(yaml.safe_dump({"nexmark": {"target": "batch", "outputs": outputs}}))
    return root


def dbt_run(project: Path, query: str, target: str, landing: Path) -> Any:
    """`dbt run -s query` in this process (the JVM stays warm); the node's result, or the
    refusal's message when the run failed."""
    variables = {"landing": str(landing), "execution": "streaming" if target == "stream" else "batch"}
    result = dbtRunner().invoke(
        ["run", "--quiet", "-s", query, "--target", target, "--vars", yaml.safe_dump(variables)]
        + ["--project-dir", str(project), "--profiles-dir", str(project)]
    )
    if result.exception is not None:
        raise SystemExit(f"dbt run -s {query} --target {target} crashed: {result.exception}")
    # the on-run-start hooks' results come first
    (node,) = [r for r in result.result if r.node.resource_type == "model"]
    return node


def deliveries(config: NexmarkConfig, landing: Path) -> Iterator[Dict[str, int]]:
    """Land the events delivery by delivery; yields each delivery's rows per kind."""
    for delivery in generate(config, Landing(landing, deliveries=DELIVERIES)):
        yield dict(delivery.rows)


def write_csv(landing: Path, csv: Path) -> None:
    """Every landed event as Flink reads it: one headerless CSV per kind, times in milliseconds
    (Flink's rowtime is TIMESTAMP(3)), UTC wall clock."""
    for kind in KINDS:
        table = pq.read_table(landing / kind)
        schema = pa.schema(
            [pa.field(f.name, pa.timestamp("ms") if pa.types.is_timestamp(f.type) else f.type) for f in table.schema]
        )
        (csv / kind).mkdir(parents=True, exist_ok=True)
        pcsv.write_csv(table.cast(schema), csv / kind / "events.csv", pcsv.WriteOptions(include_header=False))


def run_flink(python: Path, csv: Path, queries: List[str]) -> Dict[str, float]:
    """Flink's seconds per query, from flink_job.py under the Python that has PyFlink."""
    command = [str(python), str(HERE / "flink_job.py"), "--csv", str(csv), "--queries", *queries]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise SystemExit(f"the Flink job failed (exit {done.returncode}):\n{tail}")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {line["query"]: line["seconds"] for line in lines}


def own_jobs(spark: Any, queries: List[str], landing: Path, root: Path, phase: str) -> Dict[str, float]:
    """One availableNow run of Spark's own job of each query that has one (spark_jobs.py)."""
    seconds = {}
    for query in (q for q in queries if q in spark_jobs.JOBS):
        seconds[query] = spark_jobs.run(spark, query, landing, root / "spark" / query)
        print(f"{query:<4} Spark's own job, {phase} {seconds[query]:7.2f} s", flush=True)
    return seconds


def per_core(events: int, seconds: Optional[float], cores: int) -> str:
    return "–" if not seconds else f"{events / seconds / cores / 1000:,.1f}K"


def seconds(value: Optional[float]) -> str:
    return "–" if value is None else f"{value:.2f} s"


def ratio(a: Optional[float], b: Optional[float]) -> str:
    return "–" if not a or not b else f"{a / b:.2f}×"


def report(results: List[Result], events: int, catchup_events: int, increment_events: int, cores: int) -> None:
    """Two markdown tables: throughput against Flink, and the increment against Spark's own job."""
    print(f"\nThroughput, events/s/core ({cores} cores; the catch-up reads {catchup_events:,} of {events:,} events):")
    print(
        "\n| query | stream catch-up | events/s/core | Flink | Flink events/s/core | stream ÷ Flink | batch build | batch events/s/core |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        rate = None if not r.catchup_s else catchup_events / r.catchup_s
        flink = None if not r.flink_s else events / r.flink_s
        print(
            f"| {r.query} | {'refused' if r.refusal else seconds(r.catchup_s)} | {per_core(catchup_events, r.catchup_s, cores)} "
            f"| {seconds(r.flink_s)} | {per_core(events, r.flink_s, cores)} | {ratio(rate, flink)} "
            f"| {seconds(r.batch_s)} | {per_core(events, r.batch_s, cores)} |"
        )
    print(f"\nThe 1% increment ({increment_events:,} events), against Spark's own Structured Streaming job:")
    print("\n| query | window view | Spark jobs | state rows | late rows | Spark's own job | window view ÷ Spark's |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r.query} | {'refused' if r.refusal else seconds(r.increment_s)} "
            f"| {'–' if r.increment_jobs is None else r.increment_jobs} "
            f"| {'–' if r.state_rows is None else f'{r.state_rows:,}'} | {r.late_rows:,} "
            f"| {seconds(r.spark_increment_s) if r.query in spark_jobs.JOBS else NO_JOB.get(r.query, 'none (no append-mode form)')} "
            f"| {ratio(r.increment_s, r.spark_increment_s)} |"
        )
    for r in results:
        if r.refusal:
            print(f"\n{r.query} is refused in streaming: {r.refusal}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", nargs="+", default=list(QUERIES), choices=QUERIES)
    parser.add_argument("--no-flink", action="store_true", help="the plugin's runs only")
    parser.add_argument("--flink-python", type=Path, default=HERE / ".flink-venv" / "bin" / "python")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (events, tables)")
    args = parser.parse_args()
    if args.events < DELIVERIES:
        parser.error(f"--events must be at least {DELIVERIES} (one per delivery; got {args.events})")
    if not args.no_flink and not args.flink_python.exists():
        parser.error(f"no PyFlink at {args.flink_python}; bench/nexmark/run.sh makes it, or pass --no-flink")
    cores = os.cpu_count() or 1
    root = Path(tempfile.mkdtemp(prefix="wv-nexmark-"))
    project = copy_project(root / "project")
    landing = root / "landing"
    # the session dbt opens for this project, started first so that Jobs can read its status store
    spark = spark_session(
        embedded_settings(project / "target", {"spark.sql.ansi.enabled": "false", "spark.driver.memory": "8g"})
    )
    print(
        f"events={args.events:,} deliveries={DELIVERIES} seed={args.seed} cores={cores} "
        f"python={platform.python_version()} spark={spark.version}",
        flush=True,
    )
    config = NexmarkConfig(events=args.events, seed=args.seed)
    landed = deliveries(config, landing)
    start = time.perf_counter()
    catchup_events = sum(sum(next(landed).values()) for _ in range(DELIVERIES - 1))
    print(f"99 deliveries landed in {time.perf_counter() - start:.1f} s under {landing}", flush=True)

    results = [Result(q) for q in args.queries]
    jobs = Jobs(spark)
    for r in results:
        jobs.since_last()
        node = dbt_run(project, r.query, "stream", landing)
        if node.status != "success":
            # the message's first line is dbt's "Compilation Error in model ..."
            r.refusal = " ".join(str(node.message).strip().splitlines()[1:]).strip() or str(node.message)
            print(f"{r.query:<4} stream catch-up: refused", flush=True)
            continue
        r.catchup_s = node.execution_time
        r.late_rows += node.adapter_response.get("late_rows", 0)
        print(f"{r.query:<4} stream catch-up {r.catchup_s:7.2f} s  ({node.message})", flush=True)
        print(f"     its jobs: {describe(streaming(jobs.since_last()))}", flush=True)
    catchup = own_jobs(spark, args.queries, landing, root, "catch-up")
    increment_events = sum(next(landed).values())
    for r in results:
        if r.refusal:
            continue
        jobs.since_last()
        node = dbt_run(project, r.query, "stream", landing)
        if node.status != "success":
            raise SystemExit(f"{r.query}: the increment failed: {node.message}")
        r.increment_s = node.execution_time
        batch_jobs = streaming(jobs.since_last())
        r.increment_jobs = len(batch_jobs)
        r.state_rows = node.adapter_response.get("state_rows")
        r.late_rows += node.adapter_response.get("late_rows", 0)
        print(f"{r.query:<4} stream increment {r.increment_s:6.2f} s  ({node.message})", flush=True)
        print(f"     its jobs: {describe(batch_jobs)}", flush=True)
    increment = own_jobs(spark, args.queries, landing, root, "increment")
    for r in results:
        r.spark_catchup_s, r.spark_increment_s = catchup.get(r.query), increment.get(r.query)
    for r in results:
        node = dbt_run(project, r.query, "batch", landing)
        if node.status != "success":
            raise SystemExit(f"{r.query}: the batch build failed: {node.message}")
        r.batch_s = node.execution_time
        print(f"{r.query:<4} batch build {r.batch_s:7.2f} s", flush=True)

    if not args.no_flink:
        start = time.perf_counter()
        write_csv(landing, root / "csv")
        print(f"CSV for Flink written in {time.perf_counter() - start:.1f} s", flush=True)
        for query, flink_s in run_flink(args.flink_python, root / "csv", args.queries).items():
            next(r for r in results if r.query == query).flink_s = flink_s
            print(f"{query:<4} Flink {flink_s:7.2f} s", flush=True)
    report(results, args.events, catchup_events, increment_events, cores)
    if args.keep:
        print(f"kept {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
