"""Window views in dbt's incremental world (issue 38): what a backfill and a daily run cost
against a full rebuild, by batches dbt drives and by batches a window view drives, and that each
leaves the table equal to the rebuild.

A 30-day history of bids (external parquet, `event_time: bidtime`) and, per window kind, a `table`
model of the window SQL (the full rebuild) beside, per path (kind `over`, a running total and a
row number per item over UNBOUNDED PRECEDING, has the window_view path only: a plain microbatch
model refuses over windows):
- microbatch: a plain dbt `incremental` model with `incremental_strategy='microbatch'`
  (batch_size day, partitioned by the day of `window_time`) that calls the window macro;
- window_view: an incremental batch window view (`materialized='window_view'`, event_time
  window_time, batch_size day, lookback 1; docs/batch.md "Incremental batch window views").
Measured, in one process with a warm JVM, as the dbt node's execution time:
1. the full rebuild: the table model over all 30 days (one query), and the same SQL as a window
   view without batch_size (`execution='batch'`, which computes HOP and CUMULATE aggregates
   from panes: docs/batch.md), the rebuild a window view's user would otherwise run;
2. the model's first run over the 30 days (30 batches and the last windows' one);
3. a 1-day backfill in the middle (`--event-time-start/--event-time-end`);
4. the daily run after one more day of input lands (lookback 1, and for a window view the
   batches whose windows the new input can still grow).
After 2–4 the model's table must equal the table model's (rebuilt over the same input).
Targets: the backfill <= 1/15 of the full rebuild, the daily run <= 10% of it (each printed
against both rebuilds).

    .venv/bin/python bench/bench_backfill.py [--rows 10000000] [--kinds hop session over]
        [--path window_view|microbatch|both] [--history random|daily] [--timestamps INT96|TIMESTAMP_MICROS]
        [--keep]"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Dict, List, Tuple

import yaml
from dbt.cli.main import dbtRunner

from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

SCHEMA = "backfill"
DAYS = 30
KEYS = 300
# per kind: the window macro call over the bids; every model groups by the window and the item
WINDOWS: Dict[str, str] = {
    "tumble": "window_views.tumble({src}, 'bidtime', '10 minutes')",
    "hop": "window_views.hop({src}, 'bidtime', '5 minutes', '1 hour')",
    "cumulate": "window_views.cumulate({src}, 'bidtime', '1 hour', '1 day')",
    "session": "window_views.session({src}, 'bidtime', '30 seconds', partition_by='item', session_lookback='{lookback}')",
}
# each path's model of the window SQL: its name's suffix, its config (begin, event_time, the kind's extra keys)
PATHS: Dict[str, Tuple[str, str]] = {
    "microbatch": (
        "micro",
        "{{{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='{et}', "
        "batch_size='day', begin='{begin}', partition_by=['day'], file_format='parquet') }}}}",
    ),
    "window_view": (
        "wv",
        "{{{{ config(materialized='window_view', event_time='{et}', batch_size='day', begin='{begin}', "
        "lookback=1{extra}) }}}}",
    ),
}
# a window view's batches read a session back by its config (the macro's argument is for dbt's filters)
EXTRA = {"session": ", session_lookback='{lookback}'"}
SELECT = """
select cast(window_time as date) as day, window_start, window_end, window_time, item,
       sum(price) as price, count(*) as bids
from {{{{ {tvf} }}}}
group by window_start, window_end, window_time, item
"""


# over windows from each item's first bid: a batch's rows count every bid before them
OVER = """
select cast(bidtime as date) as day, bidtime, item, price,
       sum(price) over (partition by item order by bidtime) as running,
       row_number() over (partition by item order by bidtime, price) as rn
from {{ source('raw', 'bids') }}
"""


@dataclass(frozen=True)
class Kind:
    """A kind's model SQL, its output's event_time, the columns compared with the rebuild, its paths."""

    select: str
    event_time: str
    columns: str
    paths: Tuple[str, ...]


def kinds(session_lookback: str = "1 day") -> Dict[str, Kind]:
    """Each kind's models, a session's read back `session_lookback` before its batch."""
    return {
        **{
            kind: Kind(
                SELECT.format(tvf=call.format(src="source('raw', 'bids')", lookback=session_lookback)),
                "window_time",
                "window_start, window_end, item, price, bids",
                tuple(PATHS),
            )
            for kind, call in WINDOWS.items()
        },
        "over": Kind(OVER, "bidtime", "bidtime, item, price, running, rn", ("window_view",)),
    }


KINDS = kinds()


def bids_project(root: Path, name: str, schema: str) -> None:
    """A dbt project `name` on the embedded Spark, one thread, in `schema`, whose source
    raw.bids is that schema's `bids` (event_time bidtime); its models are the caller's."""
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": name, "version": "1.0", "config-version": 2, "profile": name})
    )
    profile = {"type": "window_views", "method": "session", "schema": schema, "threads": 1}
    (root / "profiles.yml").write_text(yaml.safe_dump({name: {"target": "dev", "outputs": {"dev": profile}}}))
    source = {"name": "raw", "schema": schema, "tables": [{"name": "bids", "config": {"event_time": "bidtime"}}]}
    (root / "models" / "sources.yml").write_text(yaml.safe_dump({"version": 2, "sources": [source]}, sort_keys=False))


def write_project(root: Path, chosen: List[str], paths: List[str], begin: str, session_lookback: str) -> None:
    bids_project(root, "backfill", SCHEMA)
    shapes = kinds(session_lookback)
    for kind in chosen:
        shape = shapes[kind]
        extra = EXTRA.get(kind, "").format(lookback=session_lookback)
        for path in paths_of(kind, paths):
            suffix, config = PATHS[path]
            model = config.format(begin=begin, et=shape.event_time, extra=extra) + shape.select
            (root / "models" / f"{kind}_{suffix}.sql").write_text(model)
        (root / "models" / f"{kind}_full.sql").write_text(
            "{{ config(materialized='table', file_format='parquet') }}" + shape.select
        )
        (root / "models" / f"{kind}_wvfull.sql").write_text("{{ config(materialized='window_view') }}" + shape.select)


def paths_of(kind: str, paths: List[str]) -> List[str]:
    return [p for p in paths if p in KINDS[kind].paths]


def dbt_run(project: Path, model: str, *extra: str) -> float:
    """`dbt run -s model` in this process: the model's summed execution time over its batches."""
    result = dbtRunner().invoke(
        ["run", "--quiet", "-s", model, *extra, "--project-dir", str(project), "--profiles-dir", str(project)]
    )
    nodes = [r for r in (result.result or []) if r.node.resource_type == "model"]
    if result.exception is not None or not result.success:
        detail = result.exception or "; ".join(f"{r.node.name}: {r.message}" for r in nodes)
        raise SystemExit(f"dbt run -s {model} {' '.join(extra)} failed: {detail}")
    return sum(r.execution_time for r in nodes)


def land(spark: Any, folder: Path, first_day: datetime, days: int, rows: int, seed: int, ordered: bool = False) -> None:
    """`rows` bids spread over `days` days from `first_day`, one parquet delivery: in random order,
    or (`ordered`) in time order, as a loader appending each day's events writes them."""
    base_us = int(first_day.timestamp() * 1_000_000)
    span_us = days * 86_400_000_000
    bids = spark.range(rows).selectExpr(
        f"timestamp_micros({base_us} + cast(rand({seed}) * {span_us} as bigint)) as bidtime",
        f"cast(rand({seed + 1}) * 100 as int) + 1 as price",
        f"concat('item', cast(cast(rand({seed + 2}) * {KEYS} as int) as string)) as item",
    )
    (bids.orderBy("bidtime") if ordered else bids).write.mode("append").parquet(str(folder))


def land_history(spark: Any, folder: Path, first_day: datetime, rows: int, history: str) -> None:
    """The 30 days: one random-order delivery (every file holds every day), or a delivery per day."""
    if history == "random":
        land(spark, folder, first_day, DAYS, rows, seed=7)
        return
    for day in range(DAYS):
        land(spark, folder, first_day + timedelta(days=day), 1, rows // DAYS, seed=7 + 3 * day, ordered=True)


def differ(spark: Any, a: str, b: str, cols: str) -> Tuple[int, int]:
    """Rows only in a, rows only in b."""
    only_a = spark.sql(f"select {cols} from {a} except all select {cols} from {b}").count()
    only_b = spark.sql(f"select {cols} from {b} except all select {cols} from {a}").count()
    return only_a, only_b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows of the 30-day history")
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=list(KINDS))
    parser.add_argument("--path", default="both", choices=[*PATHS, "both"], help="who drives the batches")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (project, logs, data)")
    parser.add_argument("--session-lookback", default="1 day", help="how far a session's batch reads back")
    parser.add_argument(
        "--history", default="random", choices=["random", "daily"], help="one random-order delivery, or one per day"
    )
    # Spark writes INT96 unless told otherwise, whose row groups carry no statistics to skip by
    parser.add_argument("--timestamps", default="INT96", choices=["INT96", "TIMESTAMP_MICROS"])
    args = parser.parse_args()
    paths = list(PATHS) if args.path == "both" else [args.path]
    root = Path(tempfile.mkdtemp(prefix="wv-bench-backfill-"))
    # the history ends yesterday, so that dbt's batches up to "now" hold it all
    today = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    first_day = today - timedelta(days=DAYS + 1)
    project = root / "project"
    write_project(project, args.kinds, paths, first_day.strftime("%Y-%m-%d"), args.session_lookback)
    spark = spark_session(
        embedded_settings(
            project / "target",
            {
                "spark.sql.ansi.enabled": "false",
                "spark.driver.memory": "6g",
                "spark.sql.parquet.outputTimestampType": args.timestamps,
            },
        )
    )
    spark.sql(f"create database if not exists {SCHEMA}")
    folder = root / "bids"
    land_history(spark, folder, first_day, args.rows, args.history)
    spark.sql(
        f"create table {SCHEMA}.bids (bidtime timestamp, price int, item string) using parquet location '{folder.as_uri()}'"
    )
    print(
        f"rows={args.rows:,} over {DAYS} days from {first_day:%Y-%m-%d}, {KEYS} items, cores={os.cpu_count()}, "
        f"history {args.history}, timestamps {args.timestamps}",
        flush=True,
    )
    dbt_run(project, "tumble_full" if "tumble" in args.kinds else f"{args.kinds[0]}_full")  # warm-up: JVM, parse
    middle = first_day + timedelta(days=DAYS // 2)
    day = timedelta(days=1)
    # the microbatch model's first run names its range (dbt's batches up to now); a window view's
    # first run computes from begin to its input's last windows by itself
    first_range = {
        "microbatch": ["--event-time-start", f"{first_day:%Y-%m-%d}", "--event-time-end", f"{today:%Y-%m-%d}"]
    }
    backfill_range = ["--event-time-start", f"{middle:%Y-%m-%d}", "--event-time-end", f"{middle + day:%Y-%m-%d}"]
    for kind in args.kinds:
        full = dbt_run(project, f"{kind}_full")
        wvfull = dbt_run(project, f"{kind}_wvfull")
        only_a, only_b = differ(spark, f"{SCHEMA}.{kind}_wvfull", f"{SCHEMA}.{kind}_full", KINDS[kind].columns)
        print(
            f"{kind:<9} full rebuild {full:7.2f} s (table model), {wvfull:7.2f} s (window view, batch): "
            f"{only_a} rows only in the window view's, {only_b} only in the table model's",
            flush=True,
        )
        for path in paths_of(kind, paths):
            model = f"{kind}_{PATHS[path][0]}"
            first = dbt_run(project, model, *first_range.get(path, []))
            backfill = dbt_run(project, model, *backfill_range)
            only_a, only_b = differ(spark, f"{SCHEMA}.{model}", f"{SCHEMA}.{kind}_full", KINDS[kind].columns)
            print(
                f"{'':<9} {path:<11} first run (30 batches) {first:7.2f} s | 1-day backfill {backfill:6.2f} s "
                f"({backfill / full:.1%} of the table model's rebuild, {backfill / wvfull:.1%} of the window view's, "
                f"target <= {1 / 15:.1%}); after both: {only_a} rows only in "
                f"the {path} table, {only_b} only in the full build",
                flush=True,
            )
    # one more day of input, then the daily run of each model (lookback 1: today and yesterday)
    land(spark, root / "bids", today - day, 1, args.rows // DAYS, seed=11, ordered=args.history == "daily")
    spark.sql(f"refresh table {SCHEMA}.bids")
    for kind in args.kinds:
        rebuilt = dbt_run(project, f"{kind}_full")
        wvrebuilt = dbt_run(project, f"{kind}_wvfull")
        for path in paths_of(kind, paths):
            model = f"{kind}_{PATHS[path][0]}"
            daily = dbt_run(project, model)
            only_a, only_b = differ(spark, f"{SCHEMA}.{model}", f"{SCHEMA}.{kind}_full", KINDS[kind].columns)
            print(
                f"{kind:<9} {path:<11} daily run after +1 day {daily:6.2f} s ({daily / rebuilt:.1%} of the table "
                f"model's {rebuilt:.2f} s, {daily / wvrebuilt:.1%} of the window view's {wvrebuilt:.2f} s, target "
                f"<= 10%); {only_a} rows only in the {path} table, {only_b} only "
                "in the full build",
                flush=True,
            )
    if args.keep:
        print(f"kept: {root} (dbt's log: {project / 'logs' / 'dbt.log'})", flush=True)
    else:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
