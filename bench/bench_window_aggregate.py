"""Benchmark: HOP and CUMULATE aggregates through window_views.window_aggregate (pane plans)
against Spark's sliding window(), the TVF + GROUP BY form and a TUMBLE aggregate, in one
process on the embedded local Spark. Prints medians and ratios measured in this run, and
checks that compared plans return identical rows.

    .venv/bin/python bench/bench_window_aggregate.py --rows 4000000 --keys 300 --repeat 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

import yaml
from dbt.cli.main import dbtRunner

from dbt.adapters.window_views.session import embedded_defaults, spark_session

MEASURES = {"total": "sum(amount)", "events": "count(*)", "peak": "max(amount)", "mean": "avg(amount)"}
MEASURE_SQL = ", ".join(f"{sql} as {name}" for name, sql in MEASURES.items())


def compile_sql(project: Path, jinja: str) -> str:
    """Render a window_views macro call to SQL through dbt itself, as a model would."""
    with contextlib.redirect_stdout(io.StringIO()):  # dbt prints the compiled SQL
        result = dbtRunner().invoke(
            ["compile", "--quiet", "--inline", jinja, "--project-dir", str(project), "--profiles-dir", str(project)]
        )
    if not result.success:
        raise SystemExit(f"dbt compile failed: {result.exception}")
    return result.result.results[0].node.compiled_code


def make_project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": "bench", "version": "1.0", "config-version": 2, "profile": "bench"})
    )
    profile = {"type": "window_views", "schema": "bench", "threads": 1}
    (root / "profiles.yml").write_text(yaml.safe_dump({"bench": {"target": "dev", "outputs": {"dev": profile}}}))
    return root


def window_aggregate(project: Path, window: Dict[str, str]) -> str:
    measures = ", ".join(f"'{k}': '{v}'" for k, v in MEASURES.items())
    spec = ", ".join(f"'{k}': '{v}'" for k, v in window.items())
    return compile_sql(project, f"select * from {{{{ window_views.window_aggregate('events', {{{spec}}}, {{{measures}}}, ['k']) }}}}")


def tvf_group_by(project: Path, call: str) -> str:
    return compile_sql(
        project,
        f"select k, window_start, window_end, {MEASURE_SQL} from {{{{ window_views.{call} }}}} group by k, window_start, window_end",
    )


def spark_window(size: str, slide: str) -> str:
    return (
        f"select k, window.start as window_start, window.end as window_end, {MEASURE_SQL} "
        f"from events group by k, window(ts, '{size}', '{slide}')"
    )


def timed(spark, sql: str, repeat: int) -> Tuple[float, int]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        spark.sql(sql).write.format("noop").mode("overwrite").save()
        times.append(time.perf_counter() - start)
    return statistics.median(times), spark.sql(f"select count(*) from ({sql})").first()[0]


def same_rows(spark, a: str, b: str) -> bool:
    cols = "k, window_start, window_end, total, events, peak, round(mean, 6) as mean"
    diff = spark.sql(
        f"select count(*) from ((select {cols} from ({a}) except all select {cols} from ({b})) "
        f"union all (select {cols} from ({b}) except all select {cols} from ({a})))"
    ).first()[0]
    return diff == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--keys", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    project = make_project(Path(tempfile.mkdtemp(prefix="wv-bench-")))
    # the session dbt would open for this project (ANSI off as in dbt-spark), started first
    spark = spark_session({**embedded_defaults(project / "target"), "spark.sql.ansi.enabled": "false",
                           "spark.driver.memory": "6g"})
    hop6 = window_aggregate(project, {"kind": "hop", "time_col": "ts", "size": "1 hour", "slide": "10 minutes"})
    hop60 = window_aggregate(project, {"kind": "hop", "time_col": "ts", "size": "1 hour", "slide": "1 minute"})
    cumulate = window_aggregate(project, {"kind": "cumulate", "time_col": "ts", "size": "1 hour", "step": "1 minute"})
    tumble = window_aggregate(project, {"kind": "tumble", "time_col": "ts", "size": "1 hour"})
    # as many output rows as HOP/CUMULATE 1h/1min: the cost of the 1-minute panes alone
    tumble_1min = window_aggregate(project, {"kind": "tumble", "time_col": "ts", "size": "1 minute"})
    hop60_tvf = tvf_group_by(project, "hop('events', 'ts', '1 minute', '1 hour')")
    cumulate_tvf = tvf_group_by(project, "cumulate('events', 'ts', '1 minute', '1 hour')")

    # two days of events over `keys` keys, amounts with NULLs; cached so plans are compared, not I/O
    spark.sql(
        f"""
        select cast(id % {args.keys} as int) as k,
               timestamp_seconds(1704067200 + cast(rand(7) * 172800 as bigint)) as ts,
               if(id % 50 = 0, null, cast(rand(11) * 100 as int)) as amount
        from range({args.rows})
        """
    ).cache().createOrReplaceTempView("events")
    spark.table("events").count()

    cases = [
        ("TUMBLE 1h (window_aggregate)", tumble),
        ("TUMBLE 1min (window_aggregate)", tumble_1min),
        ("HOP 1h/10min (window_aggregate)", hop6),
        ("HOP 1h/10min (Spark window())", spark_window("1 hour", "10 minutes")),
        ("HOP 1h/1min (window_aggregate)", hop60),
        ("HOP 1h/1min (Spark window())", spark_window("1 hour", "1 minute")),
        ("HOP 1h/1min (hop TVF + GROUP BY)", hop60_tvf),
        ("CUMULATE 1h/1min (window_aggregate)", cumulate),
        ("CUMULATE 1h/1min (cumulate TVF + GROUP BY)", cumulate_tvf),
    ]
    results: Dict[str, float] = {}
    print(f"rows={args.rows:,} keys={args.keys} repeat={args.repeat} cores={os.cpu_count()} "
          f"python={platform.python_version()} spark={spark.version}")
    for name, sql in cases:
        seconds, count = timed(spark, sql, args.repeat)
        results[name] = seconds
        print(f"{name:<45} median {seconds:7.2f} s   {count:>9,} windows", flush=True)

    checks: List[Tuple[str, str, str]] = [
        ("HOP 1h/10min: window_aggregate == Spark window()", hop6, spark_window("1 hour", "10 minutes")),
        ("HOP 1h/1min: window_aggregate == Spark window()", hop60, spark_window("1 hour", "1 minute")),
        ("HOP 1h/1min: window_aggregate == hop TVF", hop60, hop60_tvf),
        ("CUMULATE 1h/1min: window_aggregate == cumulate TVF", cumulate, cumulate_tvf),
    ]
    print()
    for label, a, b in checks:
        print(f"{label:<55} {'identical' if same_rows(spark, a, b) else 'DIFFERENT'}")

    t = results["TUMBLE 1h (window_aggregate)"]
    print()
    print("ratios (same run):")
    print(f"  HOP 1h/10min: Spark window() / window_aggregate = {results['HOP 1h/10min (Spark window())'] / results['HOP 1h/10min (window_aggregate)']:.1f}x faster")
    print(f"  HOP 1h/1min:  Spark window() / window_aggregate = {results['HOP 1h/1min (Spark window())'] / results['HOP 1h/1min (window_aggregate)']:.1f}x faster  (target >= 6)")
    print(f"  HOP 1h/1min:  window_aggregate / TUMBLE 1h       = {results['HOP 1h/1min (window_aggregate)'] / t:.2f}x  (target <= 1.5)")
    print(f"  CUMULATE 1h/1min: window_aggregate / TUMBLE 1h   = {results['CUMULATE 1h/1min (window_aggregate)'] / t:.2f}x  (target <= 2)")
    m = results["TUMBLE 1min (window_aggregate)"]
    print(f"  TUMBLE 1min / TUMBLE 1h (the 1-minute panes alone) = {m / t:.2f}x")
    print(f"  HOP 1h/1min:  window_aggregate / TUMBLE 1min     = {results['HOP 1h/1min (window_aggregate)'] / m:.2f}x")
    print(f"  CUMULATE 1h/1min: window_aggregate / TUMBLE 1min = {results['CUMULATE 1h/1min (window_aggregate)'] / m:.2f}x")
    print(f"  CUMULATE 1h/1min: TVF form / window_aggregate    = {results['CUMULATE 1h/1min (cumulate TVF + GROUP BY)'] / results['CUMULATE 1h/1min (window_aggregate)']:.1f}x faster")


if __name__ == "__main__":
    main()
