"""The lakehouse example (bash scripts/lakehouse.sh): a Kafka broker and an S3 API on 127.0.0.1,
Nexmark's bids as JSON messages on a topic, and example/lakehouse/, a dbt project whose streaming
window view reads the topic into a parquet table on s3a and whose batch window view ranks it.

Two deliveries of bids, a `dbt run` after each; after each run the tables are printed (through
`dbt show`) with the objects they are made of in the bucket. The broker (Apache Kafka in KRaft
mode, tests/support/kafka.py) and moto's S3 API server (tests/support/s3.py) are the tests' own,
started with free ports and stopped by their pids when this ends, however it ends; their pids and
start times go to <workdir>/pids too, so scripts/lakehouse.sh can stop them if this process is
killed. Each run starts anew: a new bucket and topic, and the project's target/ (its metastore)
removed first.

Usage: bash scripts/lakehouse.sh [--events 6000] [--rate 100]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterator, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests.support (the broker, moto) and bench.nexmark (the bids)

from dbt.cli.main import dbtRunner, dbtRunnerResult  # noqa: E402

from bench.nexmark.arrival import arrival_order, delivery_bounds  # noqa: E402
from bench.nexmark.bid import Bid  # noqa: E402
from bench.nexmark.config import NexmarkConfig  # noqa: E402
from bench.nexmark.event_kind import Sources  # noqa: E402
from tests.support import kafka, s3  # noqa: E402

PROJECT = REPO / "example" / "lakehouse"
COMMON = ["--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT)]
BUCKET = "wv-lakehouse"
TOPIC = "bids"
DELIVERIES = 2
SEED = 1
STREAM = "auction_bids_10s"
DESCRIPTION = (
    "Nexmark bids on a Kafka topic, through a streaming window view into parquet on s3a (moto) and a batch "
    "window view downstream, on 127.0.0.1; two deliveries, each run's tables printed"
)
SHOW = (
    (
        f"{STREAM} (streaming, on s3a): its windows, each written once the watermark closed it",
        "select window_start, window_end, count(*) as auctions, sum(bids) as bids, max(top_price) as top_price"
        f" from {{{{ ref('{STREAM}') }}}} group by window_start, window_end order by window_start",
    ),
    (
        "hot_auctions (batch, on s3a): the 3 auctions with the most bids in each closed window",
        "select * from {{ ref('hot_auctions') }} order by window_start, rank",
    ),
)


def deliveries(events: int, rate: float) -> List[List[str]]:
    """Nexmark's bids among `events` events (seeded, `rate` events a second of event time from
    2026-01-01), in the order they arrive, in DELIVERIES parts: each a JSON message."""
    config = NexmarkConfig(events=events, seed=SEED, rate=rate)
    sources = Sources.of(config)
    order = arrival_order(config, sources.draws, sources.clock)
    bounds = delivery_bounds(events, DELIVERIES)
    bid = Bid()
    parts = []
    for first, end in zip(bounds, bounds[1:]):
        ids = order[first:end]
        parts.append([payload(row) for row in bid.table(ids[bid.owns(ids)], sources).to_pylist()])
    return parts


def payload(row: dict) -> str:
    """A bid as the source declares it: Nexmark's fields, the event time in UTC to the microsecond."""
    return json.dumps({**row, "dateTime": row["dateTime"].strftime("%Y-%m-%d %H:%M:%S.%f")})


def start_time(pid: int) -> str:
    """A process's start time (in clock ticks since boot): with its pid, which process it is."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


@contextlib.contextmanager
def servers(work: Path) -> Iterator[Tuple[kafka.Broker, s3.Server]]:
    """The broker and moto on 127.0.0.1, with the topic and the bucket; stopped on the way out."""
    started: List[Any] = []
    pids = work / "pids"
    try:
        store = s3.Server(bucket=BUCKET)
        started.append(store)
        store.start()
        assert store.process is not None
        broker = kafka.Broker(work / "kafka")
        broker.home.mkdir()
        started.append(broker)
        broker.start()
        assert broker.proc is not None
        pids.write_text("".join(f"{p.pid} {start_time(p.pid)}\n" for p in (store.process, broker.proc)))
        broker.create_topic(TOPIC)
        yield broker, store
    finally:
        for server in reversed(started):
            server.stop()
        pids.unlink(missing_ok=True)


def environment(broker: kafka.Broker, store: s3.Server) -> None:
    """What profiles.yml, dbt_project.yml and sources.yml read with env_var."""
    os.environ.update(
        LAKEHOUSE_KAFKA=broker.bootstrap,
        LAKEHOUSE_BUCKET=store.bucket,
        LAKEHOUSE_S3_ENDPOINT=store.endpoint,
        LAKEHOUSE_S3_KEY_ID=store.access_key_id,
        LAKEHOUSE_S3_SECRET=store.secret_access_key,
    )


def run(dbt: dbtRunner) -> dbtRunnerResult:
    """`dbt run` of the project; the streaming window view's message, and each model's time."""
    began = time.monotonic()
    result = dbt.invoke(["run", "--quiet", *COMMON])
    if not result.success:
        raise SystemExit(f"dbt run failed: {result.exception or 'see the messages above'}")
    print(f"\n-- dbt run: {time.monotonic() - began:.1f} s")
    for node in result.result:
        print(f"  {node.node.name}: {node.message} ({node.execution_time:.1f} s)")
    return result


def show(dbt: dbtRunner, store: s3.Server) -> None:
    """The two tables through `dbt show`, and the objects each is in the bucket."""
    for title, sql in SHOW:
        print(f"\n== {title}")
        if not dbt.invoke(["show", "--inline", sql, "--limit", "50", "--quiet", *COMMON]).success:
            raise SystemExit("dbt show failed: see the messages above")
    folders = Counter(key.split("/")[1] for key in store.keys("window_views/"))
    listed = ", ".join(f"{folder}/ {count}" for folder, count in sorted(folders.items()))
    print(f"\n== objects in s3://{store.bucket}/window_views/: {listed}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="bash scripts/lakehouse.sh", description=DESCRIPTION)
    parser.add_argument("--workdir", type=Path, help="the broker's files and the pid file (default: a temp dir)")
    parser.add_argument("--events", type=int, default=6000, help="Nexmark events, 46 in 50 of them bids")
    parser.add_argument("--rate", type=float, default=100.0, help="events a second of event time")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the servers on the way out
    began = time.monotonic()
    bids = deliveries(args.events, args.rate)
    shutil.rmtree(PROJECT / "target", ignore_errors=True)  # its metastore named the last run's bucket
    with contextlib.ExitStack() as stack:
        work = args.workdir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="lakehouse_")))
        broker, store = stack.enter_context(servers(work))
        environment(broker, store)
        print(f"Kafka broker at {broker.bootstrap}, topic {TOPIC}; moto's S3 API at {store.endpoint}, bucket {BUCKET}")
        dbt = dbtRunner()
        for number, messages in enumerate(bids, start=1):
            broker.produce(TOPIC, ((None, message) for message in messages))
            print(f"\n==== delivery {number}: {len(messages)} bids on topic {TOPIC}")
            run(dbt)
            show(dbt, store)
    print(f"\nlakehouse example: {time.monotonic() - began:.0f} s; broker and S3 API stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
