"""Benchmark: window views into Delta or Iceberg against the same into parquet (issue 59), in one
process and one Spark session (a session has Delta's catalog or Iceberg's, not both):
- a streaming window view (TUMBLE 1 minute by item, sum and count, `emit='on_update'`): its first
  run over the history, then the run after 1% more rows;
- an incremental batch window view (`batch_size='day'`, `lookback=1`): built, then the run after
  the same 1% lands as a new last day;
- with `--format delta` also the hand-written Structured Streaming job a user would write instead:
  the same aggregate in update mode, `foreachBatch` MERGE into a Delta table by the window and key.
Times are the dbt node's execution time (the hand-written job: its availableNow query's wall time).
After the increment each format's table must equal parquet's (and the hand-written job's).

    .venv-delta/bin/python -m bench.bench_lakehouse [--rows 200000] [--format delta|iceberg] [--keep]

Results: bench/README.md, "Delta and Iceberg against parquet".
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Dict, List, Tuple

import yaml

from bench.bench_backfill import bids_project, dbt_run, differ, land
from dbt.adapters.window_views.spark import lakehouse
from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

SCHEMA = "bench_lakehouse"
DAYS = 3
COLUMNS = "window_start, window_end, item, price, bids"
SELECT = """
select window_start, window_end, window_time, item, sum(price) as price, count(*) as bids
from {{ window_views.tumble(source('raw', 'bids'), 'bidtime', '1 minute') }}
group by window_start, window_end, window_time, item
"""
STREAM = (
    "{{{{ config(materialized='window_view', execution='streaming', emit='on_update', file_format='{fmt}', "
    "watermark={{'column': 'bidtime', 'delay': '1 minute'}}) }}}}"
)
BATCHES = (
    "{{{{ config(materialized='window_view', event_time='window_time', batch_size='day', begin='{begin}', "
    "lookback=1, file_format='{fmt}') }}}}"
)


def write_project(root: Path, fmt: str, begin: str) -> None:
    """bench_backfill's bids project with `lakehouse: fmt`, and per format a stream and a batches model."""
    bids_project(root, "bench_lakehouse", SCHEMA)
    profiles = root / "profiles.yml"
    profile = yaml.safe_load(profiles.read_text())
    profile["bench_lakehouse"]["outputs"]["dev"]["lakehouse"] = fmt
    profiles.write_text(yaml.safe_dump(profile))
    for each in (fmt, "parquet"):
        (root / "models" / f"stream_{each}.sql").write_text(STREAM.format(fmt=each) + SELECT)
        (root / "models" / f"batches_{each}.sql").write_text(BATCHES.format(fmt=each, begin=begin) + SELECT)


class HandWritten:
    """The streaming model as a user writes it without dbt: update mode, each micro-batch's updated
    windows MERGEd into a Delta table on the window and the key."""

    def __init__(self, spark: Any, source: Path, root: Path) -> None:
        self.spark, self.source, self.root = spark, source, root
        self.table = f"delta.`{root / 'table'}`"

    def run(self) -> float:
        """One availableNow run over the files not read yet: its wall seconds."""
        from pyspark.sql import functions as F

        started = time.perf_counter()
        windows = (
            self.spark.readStream.schema("bidtime timestamp, price int, item string")
            .parquet(str(self.source))
            .withWatermark("bidtime", "1 minute")
            .groupBy(F.window("bidtime", "1 minute").alias("w"), "item")
            .agg(F.sum("price").alias("price"), F.count("*").alias("bids"))
            .selectExpr("w.start as window_start", "w.end as window_end", "item", "price", "bids")
        )
        query = (
            windows.writeStream.outputMode("update")
            .foreachBatch(self._merge)
            .option("checkpointLocation", str(self.root / "_checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        return time.perf_counter() - started

    def _merge(self, batch: Any, batch_id: int) -> None:
        if not (self.root / "table").exists():
            batch.limit(0).write.format("delta").save(str(self.root / "table"))
        from delta.tables import DeltaTable

        target = DeltaTable.forPath(self.spark, str(self.root / "table"))
        keys = "t.window_start = s.window_start and t.window_end = s.window_end and t.item = s.item"
        target.alias("t").merge(batch.alias("s"), keys).whenMatchedUpdateAll().whenNotMatchedInsertAll().execute()


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def checks(spark: Any, fmt: str, hand: HandWritten | None) -> List[str]:
    """Rows only in one table and only in the other, for each pair compared."""
    pairs = [(f"{SCHEMA}.{m}_{fmt}", f"{SCHEMA}.{m}_parquet") for m in ("stream", "batches")]
    if hand is not None:
        pairs.append((hand.table, f"{SCHEMA}.stream_parquet"))
    lines = []
    for a, b in pairs:
        only_a, only_b = differ(spark, a, b, COLUMNS)
        rows = spark.table(b).count()
        verdict = "equal" if only_a == only_b == 0 else "DIFFER"
        lines.append(f"{a} vs {b}: {verdict} (only in the first {only_a}, only in the second {only_b}; {rows:,} rows)")
    return lines


def table(fmt: str, times: Dict[str, float], hand: Dict[str, float]) -> str:
    """The printed table: per step the format's seconds, parquet's, their ratio and the hand-written job's."""
    head = f"| step | {fmt} s | parquet s | {fmt}/parquet |" + (
        " hand-written s | hand-written/parquet |" if hand else ""
    )
    lines = [head, "|---|---:|---:|---:|" + ("---:|---:|" if hand else "")]
    for step, label in (("stream first", "stream: first run"), ("stream +1%", "stream: 1% increment"),
                        ("batches first", "batches: first build"), ("batches +1%", "batches: run after 1%")):  # fmt: skip
        f_s, p_s = times[f"{fmt} {step}"], times[f"parquet {step}"]
        line = f"| {label} | {f_s:.2f} | {p_s:.2f} | {f_s / p_s:.2f}× |"
        if hand:
            h_s = hand.get(step)
            line += f" {h_s:.2f} | {h_s / p_s:.2f}× |" if h_s is not None else " – | – |"
        lines.append(line)
    return "\n".join(lines)


def measure(
    spark: Any, project: Path, fmt: str, hand: HandWritten | None, rows: int
) -> Tuple[Dict[str, float], Dict[str, float]]:
    """First runs, then one increment of 1% as a new last day, each model's run timed."""
    times: Dict[str, float] = {}
    hand_times: Dict[str, float] = {}
    for step in ("first", "+1%"):
        if step == "+1%":
            land(spark, project.parent / "bids", FIRST_DAY + timedelta(days=DAYS), 1, rows // 100, seed=31)
            spark.catalog.refreshTable(f"{SCHEMA}.bids")
        for each in (fmt, "parquet"):
            times[f"{each} stream {step}"] = dbt_run(project, f"stream_{each}")
            print(f"  stream_{each} {step}: {times[f'{each} stream {step}']:.2f} s", flush=True)
        if hand is not None:
            hand_times[f"stream {step}"] = hand.run()
            print(f"  hand-written {step}: {hand_times[f'stream {step}']:.2f} s", flush=True)
        for each in (fmt, "parquet"):
            times[f"{each} batches {step}"] = dbt_run(project, f"batches_{each}")
            print(f"  batches_{each} {step}: {times[f'{each} batches {step}']:.2f} s", flush=True)
    return times, hand_times


TODAY = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
# the history's days, then the increment's day, which ends today
FIRST_DAY = TODAY - timedelta(days=DAYS + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000, help="rows of the history (the increment: 1%% of them)")
    parser.add_argument("--format", default=lakehouse.DELTA, choices=[lakehouse.DELTA, lakehouse.ICEBERG.name])
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    started, load_before = datetime.now(timezone.utc), load()
    root = Path(tempfile.mkdtemp(prefix="wv-bench-lakehouse-"))
    project = root / "project"
    write_project(project, args.format, f"{FIRST_DAY:%Y-%m-%d}")
    params = {lakehouse.LAKEHOUSE_KEY: args.format, "spark.sql.ansi.enabled": "false", "spark.driver.memory": "4g"}
    spark = spark_session(embedded_settings(project / "target", params))
    spark.sql(f"create database if not exists {SCHEMA}")
    land(spark, root / "bids", FIRST_DAY, DAYS, args.rows, seed=7)
    spark.sql(
        f"create table {SCHEMA}.bids (bidtime timestamp, price int, item string) using parquet "
        f"location '{(root / 'bids').as_uri()}'"
    )
    print(f"rows={args.rows:,} over {DAYS} days from {FIRST_DAY:%Y-%m-%d}, increment {args.rows // 100:,} rows in a new "
          f"last day, format {args.format}, cores={os.cpu_count()}, load before {load_before}", flush=True)  # fmt: skip
    hand = HandWritten(spark, root / "bids", root / "hand") if args.format == lakehouse.DELTA else None
    times, hand_times = measure(spark, project, args.format, hand, args.rows)
    print("\n".join(checks(spark, args.format, hand)))
    print(table(args.format, times, hand_times))
    print(f"{started:%Y-%m-%d %H:%M}–{datetime.now(timezone.utc):%H:%M} UTC, load {load_before} → {load()}")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
