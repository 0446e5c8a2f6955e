"""Benchmark: streaming over windows (LAG, LEAD, a 10-row moving average, a running count and
maximum from UNBOUNDED PRECEDING, kept as prefix state) after a history of
--rows rows over many partitions, then 1% new rows: the incremental streaming run's model time
against a batch recompute of the same model over the whole input, measured in this run through
dbt itself (in-process dbtRunner, embedded local Spark).

    .venv/bin/python bench/bench_streaming_over.py                 # 1,000,000 rows
    .venv/bin/python bench/bench_streaming_over.py --rows 100000   # smoke run

Steps: the history is written as parquet; the batch window view (execution='batch', on_update)
and the two streaming window views (on_window_close, on_update) build from it; 1% more rows are
appended (times after the history, shuffled within the watermark delay); the streaming views
run again (incremental model time T1) and so does the batch view (Tb, a full recompute). The
check: the streaming on_update table equals the batch table (no row was late here).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import tempfile
from pathlib import Path
from typing import Dict

import yaml
from dbt.cli.main import dbtRunner

from dbt.adapters.window_views.session import embedded_defaults, spark_session

SCHEMA = "bench_over"
SELECT = """
select stock, ts, price,
  price - lag(price) over (partition by stock order by ts) as change,
  lead(price) over (partition by stock order by ts) as next_price,
  avg(price) over (partition by stock order by ts rows between 9 preceding and current row) as avg10,
  count(*) over (partition by stock order by ts) as ticks_so_far,
  max(price) over (partition by stock order by ts) as high_so_far
from {{ source('raw', 'ticks') }}
"""
MODELS = {
    "over_batch": "materialized='window_view'",
    "over_stream_eowc": "materialized='window_view', execution='streaming', emit='on_window_close'",
    "over_stream_upd": "materialized='window_view', execution='streaming', emit='on_update'",
}
WATERMARK = "watermark={'column': 'ts', 'delay': '5 minutes'}"


def write_rows(spark, rows: int, stocks: int, start_s: int, span_s: int, seed: int, mode: str, path: str) -> None:
    """Rows spread evenly over [start, start + span) with up to 2 minutes of disorder."""
    df = spark.range(rows).selectExpr(
        f"concat('S', cast(pmod(id * 7919 + {seed}, {stocks}) as string)) as stock",
        f"timestamp_seconds({start_s} + cast(id * {span_s} / {rows} as bigint) - cast(rand({seed}) * 120 as bigint)) as ts",
        f"round(100 + rand({seed + 1}) * 10, 2) as price",
    )
    df.repartition(4).write.mode(mode).parquet(path)


def model_time(result, name: str) -> float:
    node = next(r for r in result.result if r.node.name == name)
    return node.execution_time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--stocks", type=int, default=2_000)
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="wv_bench_over_"))
    project = home / "project"
    (project / "models").mkdir(parents=True)
    params = embedded_defaults(home / "target")
    (project / "dbt_project.yml").write_text(yaml.safe_dump({"name": "bench_over", "version": "1.0", "config-version": 2, "profile": "bench_over"}))
    profile = {"type": "window_views", "method": "session", "schema": SCHEMA, "host": "local", "server_side_parameters": params}
    (project / "profiles.yml").write_text(yaml.safe_dump({"bench_over": {"target": "dev", "outputs": {"dev": profile}}}))
    (project / "models" / "sources.yml").write_text(yaml.safe_dump(
        {"version": 2, "sources": [{"name": "raw", "schema": SCHEMA, "tables": [{"name": "ticks"}]}]}
    ))
    for name, config in MODELS.items():
        (project / "models" / f"{name}.sql").write_text(f"{{{{ config({config}, {WATERMARK}) }}}}\n{SELECT}")

    spark = spark_session(params)
    spark.sql(f"create database if not exists {SCHEMA}")
    location = home / "ticks"
    start, span = 1_704_067_200, 10 * 86_400
    write_rows(spark, args.rows, args.stocks, start, span, 1, "overwrite", str(location))
    spark.sql(f"create table {SCHEMA}.ticks using parquet location '{location.as_uri()}'")

    dbt = dbtRunner()
    common = ["--project-dir", str(project), "--profiles-dir", str(project)]

    def run(*select: str):
        result = dbt.invoke(["run", "-s", *select, *common])
        if not result.success:
            raise SystemExit(f"dbt run {select} failed: {result.exception or [r.message for r in result.result]}")
        return result

    history = run(*MODELS)
    times: Dict[str, Dict[str, float]] = {name: {"initial": model_time(history, name)} for name in MODELS}
    new_rows = args.rows // 100
    write_rows(spark, new_rows, args.stocks, start + span, span // 100, 2, "append", str(location))
    spark.catalog.refreshTable(f"{SCHEMA}.ticks")
    increment = run("over_stream_eowc", "over_stream_upd")
    recompute = run("over_batch")
    for name in ("over_stream_eowc", "over_stream_upd"):
        times[name]["increment"] = model_time(increment, name)
        node = next(r for r in increment.result if r.node.name == name)
        times[name]["message"] = node.message
    times["over_batch"]["increment"] = model_time(recompute, "over_batch")

    columns = "stock, ts, price, change, next_price, avg10, ticks_so_far, high_so_far"
    only_stream = spark.sql(f"select {columns} from {SCHEMA}.over_stream_upd except all select {columns} from {SCHEMA}.over_batch").count()
    only_batch = spark.sql(f"select {columns} from {SCHEMA}.over_batch except all select {columns} from {SCHEMA}.over_stream_upd").count()

    batch_full = times["over_batch"]["increment"]
    print(f"\nstreaming over windows: {args.rows:,} rows over {args.stocks:,} partitions, then {new_rows:,} new "
          f"({platform.machine()}, {spark.sparkContext.defaultParallelism} cores)")
    print(f"batch recompute over all {args.rows + new_rows:,} rows: {batch_full:.1f} s (first build {times['over_batch']['initial']:.1f} s)")
    print("| model | initial load | 1% increment | increment / batch recompute | run message |")
    print("|---|---|---|---|---|")
    for name in ("over_stream_eowc", "over_stream_upd"):
        t = times[name]
        print(f"| {name} | {t['initial']:.1f} s | {t['increment']:.1f} s | {t['increment'] / batch_full:.0%} | {t['message']} |")
    print(f"check: on_update stream vs batch: {only_stream} rows only in the stream, {only_batch} only in the batch")
    spark.stop()
    shutil.rmtree(home, ignore_errors=True)
    return 0 if only_stream == only_batch == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
