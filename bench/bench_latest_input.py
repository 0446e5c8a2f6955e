"""What an incremental batch window view's run pays to find its input's latest time: the query
over every row (a first run, or a table without the property) against the one over the rows at
or after the last run's latest time (`window_views.latest_input_time`), as incremental.py asks
them (batch_reads.latest_input_sql), on the bench's history of bids plus one new day's delivery.

    .venv/bin/python -m bench.bench_latest_input [--rows 100000000] [--repeat 5] [--timestamps INT96]"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bench.bench_backfill import DAYS, land
from dbt.adapters.window_views.plans.batch_reads import Read, latest_input_sql
from dbt.adapters.window_views.spark.session import embedded_settings, spark_session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000_000, help="rows of the 30-day history")
    parser.add_argument("--repeat", type=int, default=5)
    # Spark writes timestamps as INT96 unless told otherwise, whose row groups carry no statistics
    # a filter can use; pyarrow and most writers write int64 microseconds
    parser.add_argument("--timestamps", default="TIMESTAMP_MICROS", choices=["TIMESTAMP_MICROS", "INT96"])
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="wv-bench-latest-"))
    spark = spark_session(embedded_settings(root / "target", {"spark.driver.memory": "6g"}))
    today = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    first_day = today - timedelta(days=DAYS + 1)
    folder = root / "bids"
    spark.conf.set("spark.sql.parquet.outputTimestampType", args.timestamps)
    land(spark, folder, first_day, DAYS, args.rows, seed=7)
    spark.sql(
        f"create table bids (bidtime timestamp, price int, item string) using parquet location '{folder.as_uri()}'"
    )
    last = spark.sql(latest_input_sql((Read("bids", "bidtime"),))).first()[0]  # what the last run found
    land(spark, folder, today - timedelta(days=1), 1, args.rows // DAYS, seed=11)
    spark.sql("refresh table bids")
    timed = {}
    for label, since in (("every row", None), ("since the last run's latest", last)):
        sql = latest_input_sql((Read("bids", "bidtime"),), since)
        seconds, answer = [], None
        for _ in range(args.repeat + 1):  # the first, warming up, not counted
            start = time.perf_counter()
            answer = spark.sql(sql).first()[0]
            seconds.append(time.perf_counter() - start)
        timed[label] = statistics.median(seconds[1:])
        print(f"{label:<28} {timed[label]:6.2f} s (median of {args.repeat}), latest {answer}", flush=True)
    ratio = timed["since the last run's latest"] / timed["every row"]
    print(
        f"rows={args.rows:,} + {args.rows // DAYS:,} new, {args.timestamps}: since the last run's ÷ every row = {ratio:.2f}"
    )
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
