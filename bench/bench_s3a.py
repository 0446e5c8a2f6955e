"""Benchmark: what a streaming window view costs on S3, where nothing renames: the same TUMBLE model
with `location_root` on s3a (moto's S3 API on 127.0.0.1, tests/support/s3.py, through hadoop-aws)
and on local files, run after each delivery of new rows. Prints each run's time on both and the S3
calls S3A made for the s3a one (copies, PUTs, DELETEs, lists, HEADs, renames: S3A's own
statistics), and checks the two tables equal.

    .venv/bin/python -m bench.bench_s3a                  # 6 deliveries of 5,000 rows
    .venv/bin/python -m bench.bench_s3a --runs 3 --rows 500

Needs hadoop-aws fetched (scripts/setup.sh) and moto (the [test] extra). Results: bench/README.md,
"S3 through moto".
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

import yaml
from dbt.cli.main import dbtRunner

from dbt.adapters.window_views.spark import s3 as s3_jars
from dbt.adapters.window_views.spark.session import embedded_settings, spark_session
from tests.support import s3

SCHEMA = "bench_s3a"
MODEL = """
{{{{ config(materialized='window_view', execution='streaming', emit='on_update',
            watermark={{'column': 'bidtime', 'delay': '1 minute'}}, location_root='{root}') }}}}
select window_start, window_end, item, sum(price) as price, count(*) as bids
from {{{{ window_views.tumble(source('raw', 'bid'), 'bidtime', '1 minute') }}}}
group by window_start, window_end, item
"""
SHOWN = ("object_copy_requests", "object_put_request", "object_delete_request", "object_list_request")


def project(root: Path, params: Dict[str, str], bucket: str) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": "bench_s3a", "version": "1.0", "config-version": 2, "profile": "bench_s3a"})
    )
    profile = {"type": "window_views", "schema": SCHEMA, "threads": 1, "server_side_parameters": params}
    (root / "profiles.yml").write_text(yaml.safe_dump({"bench_s3a": {"target": "dev", "outputs": {"dev": profile}}}))
    source = {"name": "raw", "schema": SCHEMA, "tables": [{"name": "bid"}]}
    (root / "models" / "sources.yml").write_text(yaml.safe_dump({"version": 2, "sources": [source]}))
    (root / "models" / "on_s3.sql").write_text(MODEL.format(root=f"s3a://{bucket}/lake"))
    (root / "models" / "on_disk.sql").write_text(MODEL.format(root=root / "lake"))


def deliver(spark, run: int, rows: int) -> None:
    """`rows` bids over the next 10 minutes of event time, as one new file of the source."""
    start = 1704067200 + run * 600
    spark.range(rows).selectExpr(
        f"timestamp_seconds({start} + id * 600 div {rows}) as bidtime",
        "cast(id % 97 as int) as price",
        "concat('item', id % 20) as item",
    ).coalesce(1).write.insertInto(f"{SCHEMA}.bid")


def timed_run(root: Path, model: str) -> Tuple[float, str]:
    started = time.perf_counter()
    result = dbtRunner().invoke(
        ["run", "--quiet", "-s", model, "--project-dir", str(root), "--profiles-dir", str(root)]
    )
    took = time.perf_counter() - started
    if not result.success:
        raise SystemExit(f"dbt run -s {model} failed: {result.exception or [r.message for r in result.result]}")
    (node,) = result.result
    return took, node.message


def differ(spark) -> int:
    a, b = f"{SCHEMA}.on_s3", f"{SCHEMA}.on_disk"
    return int(spark.sql(f"(select * from {a} except all select * from {b}) union all "
                         f"(select * from {b} except all select * from {a})").count())  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--rows", type=int, default=5000)
    args = parser.parse_args()
    jars = s3_jars.cached_jars(s3_jars.connector())
    server = s3.Server().start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench_s3a_") as scratch:
            root = Path(scratch)
            hadoop = {f"spark.hadoop.{k}": v for k, v in s3.hadoop_settings(server).items()}
            params = {"spark.jars": ",".join(map(str, jars)), "spark.ui.enabled": "false", **hadoop}
            spark = spark_session(embedded_settings(root / "target", params))
            spark.sql(f"create database if not exists {SCHEMA}")
            spark.sql(f"create table {SCHEMA}.bid (bidtime timestamp, price int, item string) using parquet")
            project(root, params, server.bucket)
            lines: List[str] = []
            for run in range(args.runs):
                deliver(spark, run, args.rows)
                before = s3.statistics(spark, f"s3a://{server.bucket}/")
                s3_took, message = timed_run(root, "on_s3")
                after = s3.statistics(spark, f"s3a://{server.bucket}/")
                disk_took, _ = timed_run(root, "on_disk")
                spent = {name: after[name] - before[name] for name in s3.COUNTED}
                heads = spent["object_metadata_request"]
                counted = " ".join(f"{spent[name]:>6}" for name in SHOWN)
                lines.append(
                    f"{run + 1:>3} {s3_took:>7.2f} {disk_took:>7.2f} {counted} {heads:>6} {spent['op_rename']:>6}  {message}"
                )
            print(f"{args.runs} deliveries of {args.rows} rows, TUMBLE 1 minute by item (20 items), emit on_update")
            print("run    s3a s  local s copies   PUTs DELETEs  lists  HEADs renames  the s3a run")
            print("\n".join(lines))
            print(f"rows differing between the s3a and the local table: {differ(spark)}")
            print(f"objects in the bucket: {len(server.keys('lake/'))}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
