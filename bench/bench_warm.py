"""Wall time of a one-model `dbt run` and of `dbt compile`, each a separate dbt process as a user
types it: in-process Spark (the default) against `warm_spark: true` (the project's warm Spark
Connect server, started once), measured in the same run on the same project and tables.
Targets (issue 36): a warm one-model run <= 4 s, a warm compile <= 3 s.

    .venv/bin/python bench/bench_warm.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

import yaml

DBT = str(Path(sys.executable).with_name("dbt"))
TARGETS = {"run": 4.0, "compile": 3.0}


def write_project(root: Path) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": "wv_bench_warm", "version": "1.0", "config-version": 2, "profile": "wv_bench_warm"})
    )
    base = {"type": "window_views", "method": "session", "schema": "bench", "threads": 1}
    outputs = {"cold": base, "warm": {**base, "warm_spark": True}}
    (root / "profiles.yml").write_text(yaml.safe_dump({"wv_bench_warm": {"target": "cold", "outputs": outputs}}))
    (root / "models" / "bids.sql").write_text(
        "{{ config(materialized='table') }}\n"
        "select * from values (timestamp'2020-04-15 08:07:00', 2, 'A'), (timestamp'2020-04-15 08:11:00', 3, 'B'), "
        "(timestamp'2020-04-15 08:05:00', 4, 'C') as t(bidtime, price, item)"
    )
    (root / "models" / "tumbled.sql").write_text(
        "{{ config(materialized='window_view') }}\n"
        "select window_start, window_end, sum(price) as price\n"
        "from {{ window_views.tumble(ref('bids'), 'bidtime', '10 minutes') }}\n"
        "group by window_start, window_end\n"
    )


def dbt(root: Path, target: str, *args: str) -> float:
    return timed_dbt(root, [*args, "--target", target])


def timed_dbt(root: Path, args: List[str], env: Optional[Dict[str, str]] = None) -> float:
    """Seconds of wall time of one dbt command in its own process."""
    cmd = [DBT, *args, "--project-dir", str(root), "--profiles-dir", str(root)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"`{' '.join(cmd)}` failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}")
    return took


def warmed_up(root: Path, timeout: float = 300) -> float:
    """Seconds until the server's watchdog logs its warm-up done (warm_up.py), as a user's next
    command a little later finds it; a user's first minutes with the server, not a command's."""
    log = root / "target" / "warm_spark" / "logs" / "watchdog.log"
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        text = log.read_text() if log.exists() else ""
        if "warmed up in" in text or "warm-up stopped" in text:
            break
        time.sleep(0.5)
    return time.perf_counter() - start


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load at start {load()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        write_project(root)
        dbt(root, "cold", "run")  # tables, partial parse state
        times: Dict[str, List[float]] = {key: [] for key in ("cold run", "cold compile", "warm run", "warm compile")}
        for _ in range(args.repeat):
            times["cold run"].append(dbt(root, "cold", "run", "-s", "tumbled"))
            times["cold compile"].append(dbt(root, "cold", "compile"))
        first = dbt(root, "warm", "run", "-s", "tumbled")  # starts the warm server
        print(f"first warm run (starts the server): {first:.1f} s", flush=True)
        print(f"its warm-up: {warmed_up(root):.1f} s after it (the watchdog's, while idle)", flush=True)
        try:
            for _ in range(args.repeat):
                times["warm run"].append(dbt(root, "warm", "run", "-s", "tumbled"))
                times["warm compile"].append(dbt(root, "warm", "compile"))
        finally:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "dbt.adapters.window_views.spark.warm_server",
                    "stop",
                    "--project-dir",
                    str(root),
                ],
                check=False,
            )
    for key, values in times.items():
        print(f"{key:13} median {statistics.median(values):5.1f} s  ({', '.join(f'{v:.1f}' for v in values)})")
    for command, target in TARGETS.items():
        warm, cold = statistics.median(times[f"warm {command}"]), statistics.median(times[f"cold {command}"])
        verdict = "met" if warm <= target else "NOT met"
        print(
            f"warm {command} {warm:.1f} s against in-process {cold:.1f} s ({cold / warm:.1f}x): target <= {target:.0f} s {verdict}"
        )
    print(f"load at end {load()}")


if __name__ == "__main__":
    main()
