"""A dbt run's fixed cost per node (issue 61, item 1): every statement, catalog call and action a
node of each kind makes, with its time, on data small enough that the work itself is a few
milliseconds; and what is left of the node's time (dbt, Jinja and the plugin's Python).

The project: a source of bids over 3 days, and per kind a node built twice, once from nothing and
once with no new input (an incremental run):
- `table`: a plain dbt-spark table model (the floor dbt-spark itself pays per node);
- `batch`: a window view, TUMBLE 10 minutes, `execution='batch'`;
- `batches`: the same with `batch_size='day'` (incremental batches);
- `stream`: the same with `execution='streaming'`, `on_window_close`.
Each statement is attributed to the node dbt was running when Spark was asked (one thread).

    .venv/bin/python -m bench.bench_fixed_cost [--rows 20000] [--repeat 3] [--statements]"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from dbt.cli.main import dbtRunner
from pyspark.sql import Catalog, DataFrame, DataFrameWriter, SparkSession

from bench.bench_backfill import bids_project
from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

SCHEMA = "fixed_cost"
SELECT = """
select window_start, window_end, window_time, item, count(*) as bids, sum(price) as price
from {{ window_views.tumble(source('raw', 'bids'), 'bidtime', '10 minutes') }}
group by window_start, window_end, window_time, item
"""
WATERMARK = "watermark={'column': 'bidtime', 'delay': '1 minute'}"
MODELS: Dict[str, str] = {
    "table": "{{ config(materialized='table', file_format='parquet') }}" + SELECT,
    "batch": "{{ config(materialized='window_view') }}" + SELECT,
    "batches": "{{ config(materialized='window_view', event_time='window_time', batch_size='day', "
    "begin='2024-01-01') }}" + SELECT,
    "stream": "{{ config(materialized='window_view', execution='streaming', emit='on_window_close', "
    + WATERMARK
    + ") }}"
    + SELECT,
}


@dataclass
class Call:
    kind: str  # sql, action, catalog
    text: str  # the statement's first words, or the method
    seconds: float


@dataclass
class Recorder:
    """What Spark was asked while each node ran (dbt's NodeStart / NodeFinished events)."""

    node: Optional[str] = None
    calls: Dict[str, List[Call]] = field(default_factory=lambda: defaultdict(list))
    depth: int = 0  # a call made inside a recorded call is the outer call's time

    def callback(self, event: Any) -> None:
        name = event.info.name
        if name == "NodeStart":
            self.node = event.data.node_info.unique_id.rsplit(".", 1)[-1]
        elif name == "NodeFinished":
            self.node = None

    def wrap(self, kind: str, describe: Callable[..., str]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def decorate(method: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(method)
            def timed(*args: Any, **kwargs: Any) -> Any:
                if self.node is None or self.depth:
                    return method(*args, **kwargs)
                self.depth += 1
                began = time.perf_counter()
                try:
                    return method(*args, **kwargs)
                finally:
                    self.depth -= 1
                    self.calls[self.node].append(Call(kind, describe(*args), time.perf_counter() - began))

            return timed

        return decorate

    def install(self) -> None:
        """Every way the plugin and dbt-spark reach Spark from Python: SQL, a DataFrame's actions
        and writes, the catalog API."""
        first_words = lambda _self, text="", *_a, **_k: _words(str(text))  # noqa: E731
        SparkSession.sql = self.wrap("sql", first_words)(SparkSession.sql)  # type: ignore[method-assign]
        for action in ("collect", "count", "first", "take", "head", "toPandas", "toArrow", "isEmpty"):
            setattr(DataFrame, action, self.wrap("action", lambda *_a, n=action: n)(getattr(DataFrame, action)))
        for write in ("save", "saveAsTable", "insertInto", "parquet"):
            setattr(DataFrameWriter, write, self.wrap("write", lambda *_a, n=write: n)(getattr(DataFrameWriter, write)))
        for method in ("listTables", "tableExists", "getTable", "listColumns", "refreshTable", "listDatabases"):
            if hasattr(Catalog, method):
                wrapped = self.wrap("catalog", lambda *_a, n=method: n)(getattr(Catalog, method))
                setattr(Catalog, method, wrapped)


def _words(text: str) -> str:
    """A statement's first words, after dbt's query comment."""
    if text.lstrip().startswith("/*"):
        text = text.split("*/", 1)[-1]
    return " ".join(text.split()[:6])[:70]


def write_project(root: Path) -> None:
    bids_project(root, "fixed_cost", SCHEMA)
    for name, sql in MODELS.items():
        (root / "models" / f"{name}.sql").write_text(sql)


def run(project: Path, recorder: Recorder, *args: str) -> Dict[str, float]:
    """`dbt run <args>`: each node's execution time, and the command's own under `""`."""
    began = time.perf_counter()
    result = dbtRunner(callbacks=[recorder.callback]).invoke(
        ["run", "--quiet", *args, "--project-dir", str(project), "--profiles-dir", str(project)]
    )
    command = time.perf_counter() - began
    if result.exception is not None or not result.success:
        failed = "; ".join(f"{r.node.name}: {r.message}" for r in result.result or [])
        raise SystemExit(f"dbt run {' '.join(args)} failed: {result.exception or failed}")
    nodes = {r.node.name: r.execution_time for r in result.result}
    return {**nodes, "": command - sum(nodes.values())}


def summarise(calls: List[Call], seconds: float, listing: bool) -> str:
    spent = sum(c.seconds for c in calls)
    kinds = defaultdict(int)
    for c in calls:
        kinds[c.kind] += 1
    counts = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    line = f"{seconds:6.2f} s: {len(calls):3d} calls ({counts}) {spent:5.2f} s, the rest {seconds - spent:5.2f} s"
    if listing:
        line += "".join(f"\n      {c.seconds:6.3f} s  {c.kind:<7} {c.text}" for c in calls)
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3, help="incremental runs with no new input, per node")
    parser.add_argument("--statements", action="store_true", help="list each node's calls")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="wv-bench-fixed-"))
    project = root / "project"
    write_project(project)
    spark = spark_session(embedded_settings(project / "target", {}))
    spark.sql(f"create database if not exists {SCHEMA}")
    spark.range(args.rows).selectExpr(
        f"timestamp'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id * 259200.0 / {args.rows}) as bidtime",
        "cast(id % 97 as int) as price",
        "concat('item', cast(id % 50 as string)) as item",
    ).write.mode("overwrite").saveAsTable(f"{SCHEMA}.bids")
    print(f"rows={args.rows:,} over 3 days, cores={os.cpu_count()}, one thread", flush=True)
    recorder = Recorder()
    recorder.install()
    run(project, Recorder(), "-s", "table")  # warm-up: the JVM's first queries, dbt's parse
    for name in MODELS:
        recorder.calls.clear()
        first = run(project, recorder, "-s", name, "--full-refresh")
        print(
            f"{name:<8} first build    {summarise(recorder.calls[name], first[name], args.statements)}"
            f"\n{'':<8} dbt around it  {first['']:6.2f} s",
            flush=True,
        )
        times, around = [], []
        for _ in range(args.repeat):
            recorder.calls.clear()
            again = run(project, recorder, "-s", name)
            times.append(again[name])
            around.append(again[""])
        calls = recorder.calls[name]
        print(
            f"{name:<8} no new input  {summarise(calls, statistics.median(times), args.statements)}"
            f"\n{'':<8} dbt around it  {statistics.median(around):6.2f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
