"""Benchmark: streaming window_aggregate (window slicing) -- HOP 1h/1min against TUMBLE 1min.

Both keep per-pane partial aggregates as their state (1-minute panes: the HOP assembles each
window from its 60 panes, the TUMBLE's pane is its window), in one process on the embedded local
Spark through dbt itself, like bench_streaming.py (whose data and helpers this reuses).

    .venv/bin/python bench/bench_streaming_panes.py                  # 1,000,000 rows
    .venv/bin/python bench/bench_streaming_panes.py --rows 200000    # smoke run

Per scenario (TUMBLE 1min / HOP 1h/1min, emit on_update / on_window_close), on its own copy of
the source: the streaming initial load (T0, median of --repeat runs with --full-refresh), then
--increments times 1% more rows and a streaming run (T1, state rows after each), then the check:
the streaming table equals the batch window_aggregate over (source - late rows), on_window_close
its windows the watermark closed. Targets (issue 13): HOP T0 and T1 <= 1.5x TUMBLE's, state
rows flat across increments, results equal. Results: bench/README.md, "Streaming pane slicing".
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Dict, List, Tuple

from bench_streaming import EMITS, SCHEMA, Named, dbt_run, make_project, write_data
from jobs import Jobs, met, streaming

from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

WINDOWS = {
    "tumble": ("TUMBLE 1min", "{'kind': 'tumble', 'time_col': 'bidtime', 'size': '1 minute'}"),
    "hop": ("HOP 1h/1min", "{'kind': 'hop', 'time_col': 'bidtime', 'size': '1 hour', 'slide': '1 minute'}"),
}
MEASURES = "{'price': 'sum(price)', 'bids': 'count(*)', 'top': 'max(price)'}"
COLUMNS = "item, window_start, window_end, window_time, price, bids, top"


@dataclass
class Scenario(Named):
    windows: ClassVar[Dict[str, Tuple[str, str]]] = WINDOWS
    t0: List[float] = field(default_factory=list)
    t1: List[float] = field(default_factory=list)
    jobs1: List[int] = field(default_factory=list)
    state0: int = 0
    state1: List[int] = field(default_factory=list)
    rows_out0: int = 0
    late: int = 0
    watermark: str = ""
    check: Tuple[int, int, int] = (0, 0, 0)  # stream rows, stream-only rows, batch-only rows


def write_model(root: Path, name: str, execution: str, emit: str, kind: str, source: str) -> None:
    config = (
        f"{{{{ config(materialized='window_view', execution='{execution}', emit='{emit}', "
        "watermark={'column': 'bidtime', 'delay': '5 minutes'}) }}"
    )
    aggregate = f"window_views.window_aggregate(source('raw', '{source}'), {WINDOWS[kind][1]}, {MEASURES}, ['item'])"
    (root / "models" / f"{name}.sql").write_text(f"{config}\nselect * from {{{{ {aggregate} }}}}\n")


def check(spark, project: Path, s: Scenario) -> Tuple[int, int, int]:
    """The streaming table against the batch window_aggregate over (source - late rows)."""
    spark.sql(
        f"create or replace view {SCHEMA}.ontime_{s.name} as select bidtime, price, item from {SCHEMA}.bid_{s.name} "
        f"except all select bidtime, price, item from {SCHEMA}.{s.name}_stream__late"
    )
    dbt_run(project, f"{s.name}_check")
    stream = f"select {COLUMNS} from {SCHEMA}.{s.name}_stream"
    batch = f"select {COLUMNS} from {SCHEMA}.{s.name}_check"
    if s.emit == "on_window_close":
        batch += f" where window_end <= timestamp'{s.watermark}'"
    row = spark.sql(
        f"select (select count(*) from ({stream})), (select count(*) from ({stream} except all {batch})), "
        f"(select count(*) from ({batch} except all {stream}))"
    ).first()
    return row[0], row[1], row[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of history")
    # 30 keys over 5 days: ~5 rows per key and minute at 1M rows, so most 1-minute panes hold
    # rows, as for an analysis at a 1-minute slide; with sparse keys a 1h/1min HOP has up to
    # 60x the TUMBLE's output rows, and writing them is what it costs (--keys 300 shows it)
    parser.add_argument("--keys", type=int, default=30)
    parser.add_argument("--days", type=int, default=5, help="days the history's event times span")
    parser.add_argument("--increments", type=int, default=3, help="1%% appends, each followed by a streaming run")
    parser.add_argument("--late", type=int, default=25, help="late rows in each increment")
    parser.add_argument("--repeat", type=int, default=2, help="streaming initial loads per scenario")
    args = parser.parse_args()
    bench_start = time.perf_counter()

    root = Path(tempfile.mkdtemp(prefix="wv-bench-panes-"))
    scenarios = [Scenario(kind, emit) for emit in EMITS for kind in WINDOWS]
    project = make_project(root / "project", [s.name for s in scenarios])
    spark = spark_session(
        embedded_settings(project / "target", {"spark.sql.ansi.enabled": "false", "spark.driver.memory": "6g"})
    )
    spark.sql(f"create database if not exists {SCHEMA}")
    data = root / "data"
    _, lates = write_data(spark, data, args.rows, args.keys, args.days, args.increments, args.late)
    print(
        f"rows={args.rows:,} keys={args.keys} days={args.days} increments={args.increments}x"
        f"{max(1, args.rows // 100) + args.late:,} ({args.late} late each) repeat={args.repeat} "
        f"cores={os.cpu_count()} load={os.getloadavg()[0]:.1f} python={platform.python_version()} spark={spark.version}",
        flush=True,
    )

    for s in scenarios:
        write_model(project, f"{s.name}_stream", "streaming", s.emit, s.kind, f"bid_{s.name}")
        write_model(project, f"{s.name}_check", "batch", "on_update", s.kind, f"ontime_{s.name}")
        location = data / "sources" / s.name
        shutil.copytree(data / "history", location)
        spark.sql(
            f"create table {SCHEMA}.bid_{s.name} (bidtime timestamp, price int, item string) "
            f"using parquet location '{location.as_uri()}'"
        )

    # warm-up, not timed: the JVM, dbt's first parse, a streaming load and an increment
    shutil.copytree(data / "history", data / "sources" / "warm")
    spark.sql(
        f"create table {SCHEMA}.bid_warm (bidtime timestamp, price int, item string) "
        f"using parquet location '{(data / 'sources' / 'warm').as_uri()}'"
    )
    write_model(project, "warm_stream", "streaming", "on_update", "hop", "bid_warm")
    dbt_run(project, "warm_stream")
    spark.sql(f"insert into {SCHEMA}.bid_warm select * from parquet.`{(data / 'increment_0').as_uri()}`")
    dbt_run(project, "warm_stream")

    jobs = Jobs(spark)
    for s in scenarios:
        source = f"{SCHEMA}.bid_{s.name}"
        for r in range(args.repeat):
            node, _ = dbt_run(project, f"{s.name}_stream", *(["--full-refresh"] if r else []))
            s.t0.append(node.execution_time)
            s.state0, s.rows_out0 = node.adapter_response["state_rows"], node.adapter_response["rows_out"]
            print(f"{s.label if r == 0 else '':<28} initial {s.t0[-1]:6.2f} s ({node.message})", flush=True)
        for i in range(args.increments):
            spark.sql(f"insert into {source} select * from parquet.`{(data / f'increment_{i}').as_uri()}`")
            jobs.since_last()
            node, _ = dbt_run(project, f"{s.name}_stream")
            s.jobs1.append(len(streaming(jobs.since_last())))
            r = node.adapter_response
            s.t1.append(node.execution_time)
            s.state1.append(r["state_rows"])
            s.late += r["late_rows"]
            s.watermark = r["watermark"]
            print(
                f"{'':<28} increment {i + 1}: {s.t1[-1]:6.2f} s, {s.jobs1[-1]} Spark jobs, "
                f"{s.state1[-1]:,} state rows ({node.message})",
                flush=True,
            )
        s.check = check(spark, project, s)
        print(
            f"{'':<28} check: {s.check[0]:,} rows, {s.check[1]} only in stream, {s.check[2]} only in batch, "
            f"late {s.late} (expected {sum(lates)})",
            flush=True,
        )

    print(
        f"\n{'scenario':<28} {'T0 (med)':>9} {'T1 (med)':>9} {'state after T0':>15} {'state after each T1':>24}  check"
    )
    for s in scenarios:
        ok = s.check[1] == 0 and s.check[2] == 0 and s.check[0] > 0 and s.late == sum(lates)
        print(
            f"{s.label:<28} {statistics.median(s.t0):8.2f}s {statistics.median(s.t1):8.2f}s {s.state0:>15,} "
            f"{str(s.state1):>24}  {'equal' if ok else 'DIFFERENT'}"
        )
    print()
    for emit in EMITS:
        tumble, hop = (next(s for s in scenarios if s.kind == k and s.emit == emit) for k in ("tumble", "hop"))
        for what, attr in (("initial load", "t0"), ("1% increment", "t1")):
            ratio = statistics.median(getattr(hop, attr)) / statistics.median(getattr(tumble, attr))
            print(
                f"  {emit:<16} {what}: HOP 1h/1min / TUMBLE 1min = {ratio:4.2f}x (target <= 1.5x: {met(ratio <= 1.5)})"
            )
    for s in scenarios:
        flat = max(s.state1) <= 1.2 * min(s.state1) + 100
        ok = s.check[1] == 0 and s.check[2] == 0 and s.check[0] > 0 and s.late == sum(lates)
        print(
            f"  {s.label:<28} state rows {s.state1} (target flat: {met(flat)}); "
            f"stream = batch - late: {met(ok)}; Spark jobs per increment {s.jobs1}"
        )
    print(f"load average at the end {os.getloadavg()[0]:.1f}; bench took {time.perf_counter() - bench_start:.0f} s")
    spark.stop()
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
