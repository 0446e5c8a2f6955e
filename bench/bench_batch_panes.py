"""One HOP aggregate three ways, in batch (issue 38): the TVF form as the `hop` macro renders it
(each row copied into its windows), that SQL as tvf_panes.py rewrites it (the pane plan a batch
window view runs), and the pane partials exploded into their windows and aggregated again (a
lever not adopted). Over the whole bench_backfill history and over one incremental batch's read
(a day and the hour before it), each plan's rows checked equal to the TVF form's.

    .venv/bin/python -m bench.bench_batch_panes [--rows 10000000] [--repeat 5]"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Dict, List

from bench.bench_backfill import DAYS, land
from dbt.adapters.window_views.kinds.partials import tvf_panes
from dbt.adapters.window_views.query import analysis, sqlexpr
from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

SLIDE, SIZE = 300_000_000, 3_600_000_000  # HOP 5 minutes / 1 hour, in micros
T = "unix_micros(`bidtime`)"


def tvf_form(relation: str) -> str:
    """The `hop` macro's SQL (its marker, the candidate window starts), grouped by the window."""
    spec = {"kind": "hop", "time_col": "bidtime", "slide_us": SLIDE, "size_us": SIZE, "offset_us": 0, "text": {}}
    last_start = f"({T} - pmod({T}, {SLIDE}))"
    back = (SIZE + SLIDE - 1) // SLIDE - 1
    return f"""select item, window_start, window_end, sum(price) as price, count(*) as bids from (
  /* window_views:tvf:v1 {json.dumps(spec)} */
  select * from {relation}
  lateral view inline(transform(filter(sequence({last_start} - {back * SLIDE}, {last_start}, {SLIDE}),
    _wv_s -> _wv_s + {SIZE} > {T}), _wv_s -> named_struct('window_start', timestamp_micros(_wv_s),
    'window_end', timestamp_micros(_wv_s + {SIZE}), 'window_time', timestamp_micros(_wv_s + {SIZE} - 1))))
    _wv_windows as window_start, window_end, window_time
  where `bidtime` is not null
) group by item, window_start, window_end"""


def exploded(relation: str) -> str:
    """Pane partials by item, each copied into the windows holding its pane, aggregated again
    (panes of one slide, windows from the epoch: this bench's HOP, not every HOP)."""
    return f"""with p as (
  select item, {T} - pmod({T}, {SLIDE}) as p, sum(price) as s, count(price) as c, count(*) as n
  from {relation} where `bidtime` is not null group by 1, 2)
select item, timestamp_micros(e - {SIZE}) as window_start, timestamp_micros(e) as window_end,
  if(sum(c) = 0, null, sum(s)) as price, sum(n) as bids
from p lateral view explode(sequence(p + {SLIDE}, p + {SIZE}, {SLIDE})) x as e
group by item, e"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows of the 30-day history")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="wv-bench-batch-panes-"))
    spark = spark_session(embedded_settings(root / "target", {"spark.driver.memory": "6g"}))
    first_day = datetime(2026, 1, 1, tzinfo=timezone.utc)
    land(spark, root / "bids", first_day, DAYS, args.rows, seed=7)
    spark.read.parquet(str(root / "bids")).createOrReplaceTempView("bids")
    start = first_day + timedelta(days=DAYS // 2)
    batch = f"`bidtime` >= '{start - timedelta(hours=1):%Y-%m-%d %H:%M:%S}' and `bidtime` < '{start + timedelta(days=1):%Y-%m-%d %H:%M:%S}'"
    spark.sql(f"select * from bids where {batch}").createOrReplaceTempView("batch")
    types = {"bidtime": "timestamp", "price": "int", "item": "string"}
    for relation in ("bids", "batch"):
        written = tvf_form(relation)
        paned = tvf_panes.paned(analysis.parse(written), lambda _: types)
        plans: Dict[str, str] = {
            "tvf form": written,
            "pane plan": written if paned is None else sqlexpr.to_sql(paned),
            "exploded partials": exploded(relation),
        }
        assert "_wv_panes" in plans["pane plan"], "tvf_panes left the TVF form as written"
        times: Dict[str, List[float]] = {}
        for name, sql in plans.items():
            spark.sql(sql).write.mode("overwrite").format("noop").save()  # warm-up
            times[name] = []
            for _ in range(args.repeat):
                began = time.perf_counter()
                spark.sql(sql).write.mode("overwrite").format("noop").save()
                times[name].append(time.perf_counter() - began)
        # checked after the timings: a cached TVF form would answer the TVF form's own query
        reference = spark.sql(written).cache()
        for name, sql in plans.items():
            other = spark.sql(sql).select(*reference.columns)
            differ = 0 if sql == written else reference.exceptAll(other).count() + other.exceptAll(reference).count()
            shown = " ".join(f"{t:.2f}" for t in times[name])
            print(
                f"{relation:<5} {name:<17} {shown} s (best {min(times[name]):.2f}); {differ} rows differ from the TVF form"
            )
        reference.unpersist()
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
