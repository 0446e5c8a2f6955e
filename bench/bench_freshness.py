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
plugin's state rows after the run (run result), and the checkpoint's state folder size sampled
each batch (flat = bounded). A latency is split at the batch's start (the modification time of
`spark/offsets/<batch>`, written before the batch runs): the wait for a trigger, then the batch.
Checks: the table's counts add up to the rows of the files the committed batches read.

    .venv/bin/python -m bench.bench_freshness [--minutes 10] [--rate 20000] [--every 2] [--trigger 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

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
    rows: Dict[str, int] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)

    def land_one(self, seq: int) -> None:
        n = int(self.rate * self.every)
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
        self.rows[name] = n

    def run(self) -> None:
        seq, started = 0, time.monotonic()
        while not self.stop.is_set():
            self.land_one(seq)
            seq += 1
            self.stop.wait(max(0.0, started + seq * self.every - time.monotonic()))


def batches_of(checkpoint: Path) -> Dict[str, int]:
    """Each file the stream read -> the micro-batch that read it (Spark's file-source log)."""
    read: Dict[str, int] = {}
    for log in (checkpoint / "spark" / "sources" / "0").iterdir():
        if not log.name.isdigit():
            continue  # a compacted log (`N.compact`) holds the earlier batches' files as well
        for line in log.read_text().splitlines()[1:]:
            read[Path(json.loads(line)["path"]).name] = int(log.name)
    for log in (checkpoint / "spark" / "sources" / "0").glob("*.compact"):
        for line in log.read_text().splitlines()[1:]:
            entry = json.loads(line)
            read.setdefault(Path(entry["path"]).name, int(entry["batchId"]))
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
    """The checkpoint's state folder size at each new commit, sampled every half second."""

    warehouse: Path
    sizes: List[int] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def checkpoint(self) -> Optional[Path]:
        found = [p.parent.parent for p in self.warehouse.rglob("spark/commits")]
        return found[0] if found else None

    def run(self) -> None:
        seen = 0
        while not self.stop.wait(0.5):
            checkpoint = self.checkpoint()
            if checkpoint is None:
                continue
            commits = len(commits_of(checkpoint))
            if commits > seen:
                seen = commits
                state = [p for p in checkpoint.iterdir() if p.is_dir() and p.name != "spark"]
                self.sizes.append(sum(folder_bytes(p) for p in state) + folder_bytes(checkpoint / "spark" / "state"))


def pct(values: List[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10, help="how long the stream runs")
    parser.add_argument("--rate", type=int, default=20_000, help="events a second")
    parser.add_argument("--every", type=float, default=2, help="seconds between the loader's files")
    parser.add_argument("--trigger", type=int, default=10, help="the processing_time trigger, seconds")
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
    warehouse = project / "target" / "spark-warehouse"
    spark = spark_session(embedded_settings(project / "target", {}))
    spark.sql(f"create database if not exists {SCHEMA}")
    spark.sql(
        f"create table {SCHEMA}.bids (bidtime timestamp, item string, price double) using parquet location '{source}'"
    )
    loader = Loader(source, args.rate, args.every)
    loader.land_one(0)  # the stream's first batch reads one file: the first run infers nothing
    sampler = StateSampler(warehouse)
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
    checkpoint = sampler.checkpoint()
    assert checkpoint is not None
    read, commits = batches_of(checkpoint), commits_of(checkpoint)
    first_commit = min(commits.values())
    latencies = [
        commits[read[name]] - landed
        for name, landed in loader.landed.items()
        if name in read and read[name] in commits and landed > first_commit
    ]
    unread = [name for name in loader.landed if name not in read]
    in_table = spark.sql(f"select sum(bids) from {SCHEMA}.fresh").collect()[0][0]
    written = sum(loader.rows[name] for name in read if read[name] in commits)
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
        f"  landing -> table: p50 {statistics.median(latencies):.2f} s, p99 {pct(latencies, 0.99):.2f} s, "
        f"max {max(latencies):.2f} s (target p99 <= {args.trigger + 2} s)"
    )
    print(f"  between commits: median {statistics.median(gaps):.2f} s, max {max(gaps):.2f} s")
    print(
        f"  of which: landing -> its batch's start p50 {statistics.median(waits):.2f} s, p99 {pct(waits, 0.99):.2f} s; "
        f"a batch's start -> commit p50 {statistics.median(runs):.2f} s, p99 {pct(runs, 0.99):.2f} s"
    )
    step = max(1, len(sampler.sizes) // 10)
    print("  state folder at every tenth commit (MB): " + ", ".join(f"{b / 1e6:.1f}" for b in sampler.sizes[::step]))
    third = max(1, len(sampler.sizes) // 3)
    print(
        f"  state folder, bytes at commits: first third median {statistics.median(sampler.sizes[:third]):,.0f}, "
        f"last third {statistics.median(sampler.sizes[-third:]):,.0f}; state rows at the end {response.get('state_rows')}"
    )
    print(f"  check: rows in the table {in_table:,}, rows of the files read {written:,}, files not read {len(unread)}")
    if in_table != written:
        raise SystemExit("the table's counts do not add up to the rows read")


if __name__ == "__main__":
    main()
