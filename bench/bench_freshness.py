"""Freshness under a steady load (issue 61, item 5): a streaming window view with a
`processing_time` trigger, fed by a loader at a steady rate; the time from a file's landing in the
source folder to its rows in the table, p50 / p99, and the state the stream keeps, over the run.

The loader (a thread of this process, pyarrow: no second JVM) writes `--rate` events a second as
one parquet file every `--every` seconds, each file written under a hidden name and renamed into
the source table's folder (its landing time is the rename's). Event times are the wall clock
minus up to one second. The model: TUMBLE 1 minute per item, `emit='on_update'`, watermark 5 s,
`trigger={'processing_time': ..., 'max_duration': ...}`: one `dbt run` that streams for
`--minutes` (in-process dbtRunner, embedded local Spark).

A file's rows are in the table when the micro-batch that read it committed: the batch is named
in Spark's file-source log (`<checkpoint>/spark/sources/0/<batch>`), its commit time is the
modification time of `<checkpoint>/spark/commits/<batch>`, written after the plugin's commit of
the table (so the figure is an upper bound, by a few milliseconds). Files landed before the
stream's first commit are its start, not its steady state, and are left out. The state: the
plugin's state rows after the run (run result), and the size of its folder in the checkpoint
sampled each batch (flat = bounded). A latency is split at the batch's start (the modification time of
`spark/offsets/<batch>`, written before the batch runs): the wait for a trigger, then the batch.
Checks: the table's counts add up to the rows of the files the committed batches read.

    .venv/bin/python -m bench.bench_freshness [--minutes 10] [--rate 20000] [--every 2] [--trigger 10] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List

import pyarrow as pa
import pyarrow.parquet as pq
from dbt.cli.main import dbtRunner

from bench.bench_backfill import bids_project
from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

SCHEMA = "freshness"
KEYS = 1000


@dataclass
class Loader:
    """Lands a parquet file of `rate * every` events in `folder` every `every` seconds."""

    folder: Path
    rate: int
    every: float
    landed: Dict[str, float] = field(default_factory=dict)  # file name -> landing time (epoch s)
    stop: threading.Event = field(default_factory=threading.Event)

    @property
    def per_file(self) -> int:
        return int(self.rate * self.every)

    def land_one(self, seq: int) -> None:
        n = self.per_file
        now_us = int(time.time() * 1_000_000)
        times = [now_us - (i * 7919) % 1_000_000 for i in range(n)]  # the last second, unordered
        table = pa.table(
            {
                "bidtime": pa.array(times, type=pa.timestamp("us", tz="UTC")),
                "item": pa.array([f"item{(seq * 131 + i) % KEYS}" for i in range(n)]),
                "price": pa.array([float(1 + (i * 37) % 100) for i in range(n)]),
            }
        )
        name = f"part-{seq:06d}.parquet"
        hidden = self.folder / f".{name}.tmp"  # Spark's file source skips names starting with "."
        pq.write_table(table, hidden)
        os.rename(hidden, self.folder / name)
        self.landed[name] = time.time()

    def run(self) -> None:
        seq, started = 0, time.monotonic()
        while not self.stop.is_set():
            self.land_one(seq)
            seq += 1
            self.stop.wait(max(0.0, started + seq * self.every - time.monotonic()))


def batches_of(checkpoint: Path) -> Dict[str, int]:
    """Each file the stream read -> the micro-batch that read it (Spark's file-source log)."""
    read: Dict[str, int] = {}
    # `N` and `N.compact` (every file up to N); each entry names its batch. Its first line: the version
    for log in (checkpoint / "spark" / "sources" / "0").glob("[0-9]*"):
        for line in log.read_text().splitlines()[1:]:
            entry = json.loads(line)
            read[Path(entry["path"]).name] = int(entry["batchId"])
    return read


def commits_of(checkpoint: Path) -> Dict[int, float]:
    return {int(p.name): p.stat().st_mtime for p in (checkpoint / "spark" / "commits").iterdir() if p.name.isdigit()}


def starts_of(checkpoint: Path) -> Dict[int, float]:
    """Each micro-batch's start: Spark writes its offsets before it runs it."""
    return {int(p.name): p.stat().st_mtime for p in (checkpoint / "spark" / "offsets").iterdir() if p.name.isdigit()}


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@dataclass
class StateSampler:
    """The size of the plugin's folder in the checkpoint (its state, commits and run records; the
    stream keeps no Spark state) at each new commit, sampled every half second."""

    checkpoint: Path
    sizes: List[int] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        seen = 0
        while not self.stop.wait(0.5):
            if not (self.checkpoint / "spark" / "commits").is_dir():
                continue  # the first batch has not committed yet
            commits = len(commits_of(self.checkpoint))
            if commits > seen:
                seen = commits
                self.sizes.append(folder_bytes(self.checkpoint / "window_views"))


def p99(values: List[float]) -> float:
    """The nearest-rank 99th percentile: a value measured, never above the largest."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10, help="how long the stream runs")
    parser.add_argument("--rate", type=int, default=20_000, help="events a second")
    parser.add_argument("--every", type=float, default=2, help="seconds between the loader's files")
    parser.add_argument("--trigger", type=int, default=10, help="the processing_time trigger, seconds")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (project, data)")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="wv-freshness-"))
    project, source = root / "project", root / "bids"
    source.mkdir()
    bids_project(project, "freshness", SCHEMA)
    trigger = f"{{'processing_time': '{args.trigger} seconds', 'max_duration': '{args.minutes * 60:g} seconds'}}"
    (project / "models" / "fresh.sql").write_text(
        "{{ config(materialized='window_view', execution='streaming', emit='on_update', "
        f"watermark={{'column': 'bidtime', 'delay': '5 seconds'}}, trigger={trigger}) }}}}\n"
        "select window_start, window_end, item, count(*) as bids, sum(price) as price\n"
        "from {{ window_views.tumble(source('raw', 'bids'), 'bidtime', '1 minute') }}\n"
        "group by window_start, window_end, item\n"
    )
    # the default checkpoint location: beside the table (docs/streaming.md)
    checkpoint = project / "target" / "spark-warehouse" / f"{SCHEMA}.db" / "fresh__checkpoint"
    spark = spark_session(embedded_settings(project / "target", {}))
    spark.sql(f"create database if not exists {SCHEMA}")
    spark.sql(
        f"create table {SCHEMA}.bids (bidtime timestamp, item string, price double) using parquet location '{source}'"
    )
    loader = Loader(source, args.rate, args.every)
    loader.land_one(0)  # the stream's first batch reads one file: the first run infers nothing
    sampler = StateSampler(checkpoint)
    threads = [threading.Thread(target=loader.run, daemon=True), threading.Thread(target=sampler.run, daemon=True)]
    started = time.time()
    for thread in threads:
        thread.start()
    result = dbtRunner().invoke(
        ["run", "--quiet", "-s", "fresh", "--project-dir", str(project), "--profiles-dir", str(project)]
    )
    loader.stop.set()
    sampler.stop.set()
    for thread in threads:
        thread.join()
    if result.exception is not None or not result.success:
        raise SystemExit(f"dbt run failed: {result.exception or [r.message for r in result.result or []]}")
    response = result.result[0].adapter_response
    read, commits = batches_of(checkpoint), commits_of(checkpoint)
    first_commit = min(commits.values())
    latencies = [
        commits[read[name]] - landed
        for name, landed in loader.landed.items()
        if name in read and read[name] in commits and landed > first_commit
    ]
    unread = [name for name in loader.landed if name not in read]
    in_table = spark.sql(f"select sum(bids) from {SCHEMA}.fresh").collect()[0][0]
    written = loader.per_file * sum(1 for name in read if read[name] in commits)
    gaps = [b - a for a, b in zip(sorted(commits.values()), sorted(commits.values())[1:])]
    starts = starts_of(checkpoint)
    runs = [commits[b] - starts[b] for b in commits if b in starts and b > min(commits)]
    waits = [
        starts[read[name]] - landed for name, landed in loader.landed.items() if name in read and landed > first_commit
    ]
    print(
        f"freshness: {args.rate:,} events/s, a file every {args.every:g} s, trigger {args.trigger} s, "
        f"{(time.time() - started) / 60:.1f} minutes, {len(commits)} micro-batches"
    )
    print(f"  files landed {len(loader.landed)}, read {len(read)}, measured {len(latencies)} (after the first commit)")
    print(
        f"  landing -> table: p50 {statistics.median(latencies):.2f} s, p99 {p99(latencies):.2f} s, "
        f"max {max(latencies):.2f} s (target p99 <= {args.trigger + 2} s)"
    )
    print(f"  between commits: median {statistics.median(gaps):.2f} s, max {max(gaps):.2f} s")
    print(
        f"  of which: landing -> its batch's start p50 {statistics.median(waits):.2f} s, p99 {p99(waits):.2f} s; "
        f"a batch's start -> commit p50 {statistics.median(runs):.2f} s, p99 {p99(runs):.2f} s"
    )
    step = max(1, len(sampler.sizes) // 10)
    sizes = ", ".join(f"{b / 1e6:.1f}" for b in sampler.sizes[::step])
    print(f"  the plugin's checkpoint folder at every tenth commit (MB): {sizes}")
    print(f"  state rows at the end: {response.get('state_rows')}")
    print(f"  check: rows in the table {in_table:,}, rows of the files read {written:,}, files not read {len(unread)}")
    if args.keep:
        print(f"  kept: {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    if in_table != written:
        raise SystemExit("the table's counts do not add up to the rows read")


if __name__ == "__main__":
    main()
