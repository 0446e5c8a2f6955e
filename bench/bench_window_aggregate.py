"""Benchmark: HOP and CUMULATE aggregates through window_views.window_aggregate (pane plans)
against Spark's sliding window(), the TVF + GROUP BY form and a TUMBLE aggregate, in one
process on the embedded local Spark. Prints medians and ratios measured in this run, each
with its target (issue 13), and checks that compared plans return identical rows.

    .venv/bin/python bench/bench_window_aggregate.py --rows 4000000 --keys 300 --repeat 3
    .venv/bin/python bench/bench_window_aggregate.py --rows 10000000 --keys 3000 --repeat 3
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
from typing import Callable, Dict, List, Optional, Tuple

import yaml
from dbt.cli.main import dbtRunner
from jobs import met
from pyspark.sql import Observation
from pyspark.sql import functions as F

from dbt.adapters.window_views.spark.session import embedded_settings, spark_session

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


def window_aggregate(project: Path, window: Dict[str, str], kept: Optional[List[str]] = None) -> str:
    """`kept`: only these measures (default: all of MEASURES)."""
    measures = ", ".join(f"'{k}': '{v}'" for k, v in MEASURES.items() if kept is None or k in kept)
    spec = ", ".join(f"'{k}': '{v}'" for k, v in window.items())
    return compile_sql(
        project, f"select * from {{{{ window_views.window_aggregate('events', {{{spec}}}, {{{measures}}}, ['k']) }}}}"
    )


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


def jvm_cpu_seconds(spark) -> Callable[[], float]:
    """The Spark JVM's CPU time so far (user + system, Linux /proc): on a shared machine it
    varies much less with other load than wall time does."""
    stat = Path(f"/proc/{spark._jvm.java.lang.ProcessHandle.current().pid()}/stat")
    tick = os.sysconf("SC_CLK_TCK")

    def seconds() -> float:
        fields = stat.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    return seconds


def timed(spark, sql: str, repeat: int, cpu: Callable[[], float]) -> Tuple[float, float, int]:
    """Median wall and JVM CPU seconds of running `sql` to completion, and its row count (counted
    by the run itself, DataFrame.observe, not by running the query once more)."""
    walls, cpus = [], []
    for _ in range(repeat):
        observation = Observation()
        start, start_cpu = time.perf_counter(), cpu()
        spark.sql(sql).observe(observation, F.count(F.lit(1)).alias("rows")).write.format("noop").mode(
            "overwrite"
        ).save()
        walls.append(time.perf_counter() - start)
        cpus.append(cpu() - start_cpu)
    return statistics.median(walls), statistics.median(cpus), observation.get["rows"]


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
    parser.add_argument(
        "--baseline-repeat",
        type=int,
        help="runs of each slow baseline (Spark window(), the TVF forms); default: --repeat",
    )
    parser.add_argument(
        "--floor-only",
        action="store_true",
        help="time only the window_aggregate plans: the pane-floor ratios, without the slow "
        "Spark window() and TVF baselines (minutes less on a busy machine)",
    )
    args = parser.parse_args()

    project = make_project(Path(tempfile.mkdtemp(prefix="wv-bench-")))
    # the session dbt would open for this project (ANSI off as in dbt-spark), started first
    spark = spark_session(
        embedded_settings(project / "target", {"spark.sql.ansi.enabled": "false", "spark.driver.memory": "6g"})
    )
    hop6 = window_aggregate(project, {"kind": "hop", "time_col": "ts", "size": "1 hour", "slide": "10 minutes"})
    hop_1h_1min = {"kind": "hop", "time_col": "ts", "size": "1 hour", "slide": "1 minute"}
    hop60 = window_aggregate(project, hop_1h_1min)
    # the same without max(): its sliding frame re-aggregates a window's 60 panes for every
    # window, where counts and sums are two running totals (bench/history.md, "HOP 1h/1min and max()")
    hop60_no_max = window_aggregate(project, hop_1h_1min, [name for name in MEASURES if name != "peak"])
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
        ("HOP 1h/1min without max (window_aggregate)", hop60_no_max),
        ("HOP 1h/1min (Spark window())", spark_window("1 hour", "1 minute")),
        ("HOP 1h/1min (hop TVF + GROUP BY)", hop60_tvf),
        ("CUMULATE 1h/1min (window_aggregate)", cumulate),
        ("CUMULATE 1h/1min (cumulate TVF + GROUP BY)", cumulate_tvf),
    ]
    if args.floor_only:
        cases = [(name, sql) for name, sql in cases if "(window_aggregate)" in name]
    cpu = jvm_cpu_seconds(spark)
    wall: Dict[str, float] = {}
    cpu_s: Dict[str, float] = {}
    print(
        f"rows={args.rows:,} keys={args.keys} repeat={args.repeat} cores={os.cpu_count()} "
        f"python={platform.python_version()} spark={spark.version} load={os.getloadavg()[0]:.2f}"
    )
    for name, sql in cases:
        ours = "(window_aggregate)" in name
        repeat = args.repeat if ours or args.baseline_repeat is None else args.baseline_repeat
        wall[name], cpu_s[name], count = timed(spark, sql, repeat, cpu)
        print(
            f"{name:<45} median {wall[name]:7.2f} s  (JVM CPU {cpu_s[name]:7.2f} s)  {count:>10,} windows", flush=True
        )

    checks: List[Tuple[str, str, str]] = [
        ("HOP 1h/10min: window_aggregate == Spark window()", hop6, spark_window("1 hour", "10 minutes")),
        ("HOP 1h/1min: window_aggregate == Spark window()", hop60, spark_window("1 hour", "1 minute")),
        ("HOP 1h/1min: window_aggregate == hop TVF", hop60, hop60_tvf),
        ("CUMULATE 1h/1min: window_aggregate == cumulate TVF", cumulate, cumulate_tvf),
    ]
    print()
    for label, a, b in checks if not args.floor_only else []:
        print(f"{label:<55} {'identical' if same_rows(spark, a, b) else 'DIFFERENT'}")

    # (label, numerator, denominator, target): "faster" ratios are denominator / numerator
    hop, cum = "HOP 1h/1min (window_aggregate)", "CUMULATE 1h/1min (window_aggregate)"
    floor, t1h = "TUMBLE 1min (window_aggregate)", "TUMBLE 1h (window_aggregate)"
    ratios: List[Tuple[str, str, str, Optional[Tuple[str, float]]]] = [
        ("HOP 1h/1min: window_aggregate / TUMBLE 1min", hop, floor, ("<=", 1.3)),
        ("HOP 1h/1min without max / TUMBLE 1min", "HOP 1h/1min without max (window_aggregate)", floor, None),
        ("CUMULATE 1h/1min: window_aggregate / TUMBLE 1min", cum, floor, ("<=", 1.1)),
        ("HOP 1h/1min: Spark window() / window_aggregate", "HOP 1h/1min (Spark window())", hop, (">=", 6.0)),
        (
            "HOP 1h/10min: Spark window() / window_aggregate",
            "HOP 1h/10min (Spark window())",
            "HOP 1h/10min (window_aggregate)",
            None,
        ),
        ("HOP 1h/1min: hop TVF / window_aggregate", "HOP 1h/1min (hop TVF + GROUP BY)", hop, None),
        ("CUMULATE 1h/1min: cumulate TVF / window_aggregate", "CUMULATE 1h/1min (cumulate TVF + GROUP BY)", cum, None),
        ("TUMBLE 1min / TUMBLE 1h (the 1-minute panes alone)", floor, t1h, None),
        ("HOP 1h/1min: window_aggregate / TUMBLE 1h", hop, t1h, None),
        ("CUMULATE 1h/1min: window_aggregate / TUMBLE 1h", cum, t1h, None),
    ]
    print()
    print("ratios (same run; targets are on wall time):")
    for label, a, b, target in ratios:
        if a not in wall or b not in wall:
            continue  # --floor-only
        value = wall[a] / wall[b]
        verdict = ""
        if target:
            op, bound = target
            verdict = f"  (target {op} {bound}x: {met(value <= bound if op == '<=' else value >= bound)})"
        print(f"  {label:<52} {value:5.2f}x{verdict}   [JVM CPU {cpu_s[a] / cpu_s[b]:5.2f}x]")


if __name__ == "__main__":
    main()
