"""Benchmark: streaming over windows (LAG, LEAD, a 10-row moving average, a running count and
maximum from UNBOUNDED PRECEDING, kept as prefix state) after a history of
--rows rows over many partitions, then 1% new rows: the incremental streaming run's model time
against a batch recompute of the same model over the whole input, measured in this run through
dbt itself (in-process dbtRunner, embedded local Spark).

    .venv/bin/python bench/bench_streaming_over.py                 # 1,000,000 rows
    .venv/bin/python bench/bench_streaming_over.py --rows 100000   # smoke run

Steps: the history is written as parquet; the batch window view (execution='batch', on_update)
and the two streaming window views (on_window_close, on_update) build from it (initial loads T0,
against the batch build); then `--increments` times 1% more rows are appended (times after the
history, shuffled within the watermark delay), the streaming views run again (incremental model
time T1, with the Spark jobs of the micro-batch and the state rows kept) and so does the batch
view (Tb, a full recompute), and so does the same SELECT hand-written as a plain Spark Structured
Streaming job (`plain_spark_floor`, its own initial load before the first increment): the floor
of T1 on this host. The check: the streaming on_update table equals the batch table (no row was
late here). Each ratio is printed with its target (issue 13).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Dict, List

import yaml
from dbt.cli.main import dbtRunner
from jobs import Jobs, describe, met, streaming
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

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
FLOOR_CONTEXT = 10  # final rows the floor keeps per stock before its first open one: avg10's 9 preceding, LAG's 1


def write_rows(
    spark, rows: int, stocks: int, start_s: int, span_s: int, seed: int, mode: str, path: str, quiet: int = 0
) -> None:
    """Rows spread evenly over [start, start + span) with up to 2 minutes of disorder, none for
    the first `quiet` stocks (S0, S1, ...). Times are unique: whole seconds, plus microseconds
    from the row's id and the write's seed (single digit) — rows whose ids agree mod 100,000 lie
    hours apart — so `order by ts` has no ties, and stream = batch is well posed (with ties,
    LAG/LEAD and ROWS frames may read the tied rows in either order, in Spark's batch too)."""
    assert 0 < seed < 10
    second = f"{start_s} + cast(id * {span_s} / {rows} as bigint) - cast(rand({seed}) * 120 as bigint)"
    df = (
        spark.range(rows)
        .selectExpr(
            "id",
            f"pmod(id * 7919 + {seed}, {stocks}) as number",
        )
        .where(f"number >= {quiet}")
        .selectExpr(
            "concat('S', cast(number as string)) as stock",
            f"timestamp_micros(({second}) * 1000000 + pmod(id, 100000) * 10 + {seed}) as ts",
            f"round(100 + rand({seed + 1}) * 10, 2) as price",
        )
    )
    df.repartition(4).write.mode(mode).parquet(path)


def plain_spark_floor(spark, schema: StructType, source: Path, work: Path) -> float:
    """One availableNow run of SELECT's five columns written by hand in plain Spark Structured
    Streaming (no dbt, no plugin, the session's settings): its wall seconds, start to
    awaitTermination. A floor, not a rival: it does less than the window view — no late-row table,
    no exactly-once commit log of its own (a replay rewrites its batch's output and state dirs,
    versioned by batch id), no bucketed rewrite, and its output is not checked.

    Each micro-batch unions the new rows with the previous batch's state and computes the columns
    in one window over (stock, ts). The watermark (max ts - 5 minutes) is one driver aggregate.
    Rows at or before it that have a following row are final: those not emitted yet go to the
    output (first write). The state (second write) is every row not final plus the last
    FLOOR_CONTEXT final ones per stock; the rows let go are summarised per stock (count, max) in
    two columns of the stock's first kept row, which the next window adds in (no join). The
    windowed rows are persisted between the two writes, as Spark's foreachBatch guide advises."""

    def batch(new: DataFrame, batch_id: int) -> None:
        def step(what: str) -> None:  # its jobs' description, one line in the bench's job listing
            new.sparkSession.sparkContext.setJobDescription(f"plain Spark floor, micro-batch {batch_id}: {what}")

        step("watermark")
        rows = new.selectExpr(
            "stock",
            "ts",
            "price",
            "false as emitted",
            "cast(null as bigint) as let_go_count",
            "cast(null as double) as let_go_max",
        )
        previous = work / "state" / str(batch_id - 1)
        if previous.exists():
            rows = rows.unionByName(new.sparkSession.read.schema(rows.schema).parquet(str(previous)))
        watermark = rows.agg(F.max(F.unix_micros("ts"))).first()[0] - 5 * 60 * 1_000_000
        by_ts = Window.partitionBy("stock").orderBy("ts")
        whole = by_ts.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
        before = by_ts.rowsBetween(Window.unboundedPreceding, -1)
        pos, count = F.row_number().over(by_ts), F.count("*").over(whole)
        closed = F.count(F.when(F.unix_micros("ts") <= watermark, 1)).over(whole)
        windowed = rows.select(
            "stock",
            "ts",
            "price",
            "emitted",
            pos.alias("pos"),
            F.when(closed == count, closed - 1).otherwise(closed).alias("final"),  # the last row has no following row
            (F.coalesce(F.max("let_go_count").over(whole), F.lit(0)) + pos).alias("ticks_so_far"),
            F.greatest(F.max("let_go_max").over(whole), F.max("price").over(by_ts)).alias("high_so_far"),
            F.greatest(F.max("let_go_max").over(whole), F.max("price").over(before)).alias("high_before"),
            (F.col("price") - F.lag("price").over(by_ts)).alias("change"),
            F.lead("price").over(by_ts).alias("next_price"),
            F.avg("price").over(by_ts.rowsBetween(-9, 0)).alias("avg10"),
        ).persist()
        step("output written")
        (
            windowed.where("pos <= final and not emitted")
            .select("stock", "ts", "price", "change", "next_price", "avg10", "ticks_so_far", "high_so_far")
            .write.mode("overwrite")
            .parquet(str(work / "output" / f"batch={batch_id}"))
        )
        step("state written")
        first_kept = F.col("pos") == F.greatest(F.col("final") - FLOOR_CONTEXT + 1, F.lit(1))
        (
            windowed.where(F.col("pos") > F.col("final") - FLOOR_CONTEXT)
            .select(
                "stock",
                "ts",
                "price",
                (F.col("pos") <= F.col("final")).alias("emitted"),
                F.when(first_kept, F.col("ticks_so_far") - 1).alias("let_go_count"),
                F.when(first_kept, F.col("high_before")).alias("let_go_max"),
            )
            .write.mode("overwrite")
            .parquet(str(work / "state" / str(batch_id)))
        )
        windowed.unpersist()

    start = time.perf_counter()
    query = (
        spark.readStream.schema(schema)
        .parquet(str(source))
        .writeStream.foreachBatch(batch)
        .option("checkpointLocation", str(work / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return time.perf_counter() - start


def model_time(result, name: str) -> float:
    node = next(r for r in result.result if r.node.name == name)
    return node.execution_time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--stocks", type=int, default=2_000)
    parser.add_argument("--increments", type=int, default=2, help="1%% appends, each followed by the three runs")
    parser.add_argument(
        "--quiet",
        type=int,
        default=0,
        help="stocks without rows in the appends (S0, S1, ...): "
        "their last rows wait for a LEAD, so from the second increment on_update recomputes by partition",
    )
    parser.add_argument(
        "--revive",
        action="store_true",
        help="the quiet stocks get rows again in the last increment: "
        "on_update revises their waiting rows (a batch whose new rows reach held-back partitions)",
    )
    parser.add_argument(
        "--driver-memory",
        help="spark.driver.memory of the embedded session (default: the plugin's "
        "embedded default, 2g); 30M rows need more",
    )
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="wv_bench_over_"))
    project = home / "project"
    (project / "models").mkdir(parents=True)
    params = embedded_settings(
        home / "target", {"spark.driver.memory": args.driver_memory} if args.driver_memory else {}
    )
    (project / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": "bench_over", "version": "1.0", "config-version": 2, "profile": "bench_over"})
    )
    profile = {
        "type": "window_views",
        "method": "session",
        "schema": SCHEMA,
        "host": "local",
        "server_side_parameters": params,
    }
    (project / "profiles.yml").write_text(
        yaml.safe_dump({"bench_over": {"target": "dev", "outputs": {"dev": profile}}})
    )
    (project / "models" / "sources.yml").write_text(
        yaml.safe_dump({"version": 2, "sources": [{"name": "raw", "schema": SCHEMA, "tables": [{"name": "ticks"}]}]})
    )
    for name, config in MODELS.items():
        (project / "models" / f"{name}.sql").write_text(f"{{{{ config({config}, {WATERMARK}) }}}}\n{SELECT}")

    spark = spark_session(params)
    spark.sql(f"create database if not exists {SCHEMA}")
    location = home / "ticks"
    start, span = 1_704_067_200, 10 * 86_400
    write_rows(spark, args.rows, args.stocks, start, span, 1, "overwrite", str(location))
    spark.sql(f"create table {SCHEMA}.ticks using parquet location '{location.as_uri()}'")

    dbt = dbtRunner()
    streams = ("over_stream_eowc", "over_stream_upd")
    common = ["--project-dir", str(project), "--profiles-dir", str(project)]

    def run(*select: str):
        result = dbt.invoke(["run", "-s", *select, *common])
        if not result.success:
            raise SystemExit(f"dbt run {select} failed: {result.exception or [r.message for r in result.result]}")
        return result

    jobs = Jobs(spark)
    history = run(*MODELS)
    initial = {name: model_time(history, name) for name in MODELS}
    loads = streaming(jobs.since_last())
    for name in streams:
        print(
            f"initial load, {name}: {initial[name]:.2f} s; its Spark jobs: "
            f"{describe([j for j in loads if j.description.startswith(f'window_view {name},')])}",
            flush=True,
        )
    schema, floor_home = spark.table(f"{SCHEMA}.ticks").schema, home / "plain_spark"
    floor_t0 = plain_spark_floor(spark, schema, location, floor_home)
    print(
        f"initial load, plain Spark floor: {floor_t0:.2f} s; its Spark jobs: {describe(streaming(jobs.since_last()))}",
        flush=True,
    )
    floor_t1: List[float] = []
    floor_jobs: List[int] = []
    t1: Dict[str, list] = {name: [] for name in MODELS}
    job_counts: Dict[str, list] = {name: [] for name in streams}
    state: Dict[str, list] = {name: [] for name in streams}
    messages: Dict[str, str] = {}
    new_rows = args.rows // 100
    for i in range(args.increments):
        quiet = 0 if args.revive and i == args.increments - 1 else args.quiet
        write_rows(
            spark,
            new_rows,
            args.stocks,
            start + span + i * span // 100,
            span // 100,
            2 + i,
            "append",
            str(location),
            quiet,
        )
        spark.catalog.refreshTable(f"{SCHEMA}.ticks")
        for name in streams:
            jobs.since_last()
            result = run(name)
            batch_jobs = streaming(jobs.since_last())
            job_counts[name].append(len(batch_jobs))
            node = result.result[0]
            t1[name].append(node.execution_time)
            print(
                f"increment {i + 1}, {name}: {node.execution_time:.2f} s; its Spark jobs: {describe(batch_jobs)}",
                flush=True,
            )
            state[name].append(node.adapter_response["state_rows"])
            messages[name] = node.message
        t1["over_batch"].append(model_time(run("over_batch"), "over_batch"))
        jobs.since_last()
        floor_t1.append(plain_spark_floor(spark, schema, location, floor_home))
        batch_jobs = streaming(jobs.since_last())
        floor_jobs.append(len(batch_jobs))
        print(
            f"increment {i + 1}, plain Spark floor: {floor_t1[-1]:.2f} s; its Spark jobs: {describe(batch_jobs)}",
            flush=True,
        )

    columns = "stock, ts, price, change, next_price, avg10, ticks_so_far, high_so_far"
    only_stream = spark.sql(
        f"select {columns} from {SCHEMA}.over_stream_upd except all select {columns} from {SCHEMA}.over_batch"
    ).count()
    only_batch = spark.sql(
        f"select {columns} from {SCHEMA}.over_batch except all select {columns} from {SCHEMA}.over_stream_upd"
    ).count()

    if only_stream or only_batch:  # which rows, and whether another row of the stock has the same ts
        ties = f"(select stock, ts, count(*) > 1 as tied from {SCHEMA}.ticks group by stock, ts)"
        for a, b in (("over_stream_upd", "over_batch"), ("over_batch", "over_stream_upd")):
            print(f"only in {a}:")
            for row in spark.sql(
                f"select d.*, t.tied from (select {columns} from {SCHEMA}.{a} except all "
                f"select {columns} from {SCHEMA}.{b}) d join {ties} t using (stock, ts) order by stock, ts"
            ).take(20):
                print("  ", tuple(row))
    tb = statistics.median(t1["over_batch"])
    at_10m = args.rows >= 10_000_000
    print(
        f"\nstreaming over windows: {args.rows:,} rows over {args.stocks:,} partitions, then {args.increments} x {new_rows:,} "
        f"new{f' (none for {args.quiet} stocks' + (' but in the last)' if args.revive else ')') if args.quiet else ''} ({platform.machine()}, {spark.sparkContext.defaultParallelism} cores, spark {spark.version})"
    )
    print(
        f"batch: first build {initial['over_batch']:.1f} s, recompute after each increment "
        f"{', '.join(f'{t:.1f}' for t in t1['over_batch'])} s (Tb = median {tb:.1f} s)"
    )
    print(
        "| model | initial load T0 | T0 / batch build | T1 (1% more, median) | T1 / Tb | Spark jobs per micro-batch | state rows | run message |"
    )
    print("|---|---:|---:|---:|---:|---|---|---|")
    for name in streams:
        t1_med = statistics.median(t1[name])
        print(
            f"| {name} | {initial[name]:.1f} s | {initial[name] / initial['over_batch']:.2f}x | {t1_med:.1f} s | "
            f"{t1_med / tb:.0%} | {job_counts[name]} | {state[name]} | {messages[name]} |"
        )
    floor = statistics.median(floor_t1)
    print(
        f"| plain Spark foreachBatch (hand-written floor) | {floor_t0:.1f} s | {floor_t0 / initial['over_batch']:.2f}x | "
        f"{floor:.1f} s | {floor / tb:.0%} | {floor_jobs} | - | - |"
    )
    for name in streams:
        t1_tb, t0_tb = statistics.median(t1[name]) / tb, initial[name] / initial["over_batch"]
        goal = t1_tb <= 0.10 if at_10m else t1_tb < 1.0
        flat = max(state[name]) <= 1.2 * min(state[name]) + 100
        print(
            f"  {name:<18} T1/Tb {t1_tb:6.1%} (target {'<= 10% at 10M rows' if at_10m else '< 100% at 1M rows'}; this run {args.rows:,} rows: "
            f"{met(goal)}); T0/Tb {t0_tb:.2f}x (target <= 1.3x: {met(t0_tb <= 1.3)}); "
            f"jobs {job_counts[name]} (target <= 4: {met(max(job_counts[name]) <= 4)}); "
            f"state {state[name]} (target flat: {met(flat)})"
        )
    print(
        f"floor: a hand-written streaming job's increment costs {floor / tb:.0%} of Tb; the window views cost "
        f"{' / '.join(f'{statistics.median(t1[name]) / floor:.2f}x' for name in streams)} the floor (eowc / on_update)"
    )
    print(f"check: on_update stream vs batch: {only_stream} rows only in the stream, {only_batch} only in the batch")
    spark.stop()
    shutil.rmtree(home, ignore_errors=True)
    return 0 if only_stream == only_batch == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
