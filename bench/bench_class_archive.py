"""Wall time of cold dbt commands (each its own process, its own JVM start) with Spark's class
archive (class_archive.py) against without it (WINDOW_VIEWS_JVM_CACHE=off), interleaved in the
same run on the same project: a one-model `dbt run`, a `dbt show`, and a streaming model's run.

    .venv/bin/python bench/bench_class_archive.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

import yaml
from bench_warm import load, timed_dbt  # bench/ is this script's folder

from dbt.adapters.window_views.spark import class_archive

COMMANDS = {
    "run (batch model)": ["run", "-s", "tumbled"],
    "run (streaming model)": ["run", "-s", "streamed"],
    "show": ["show", "--inline", "select count(*) from {{ ref('tumbled') }}"],
}


def write_project(root: Path) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": "wv_bench_cds", "version": "1.0", "config-version": 2, "profile": "wv_bench_cds"})
    )
    profile = {"type": "window_views", "method": "session", "schema": "bench", "threads": 1}
    (root / "profiles.yml").write_text(yaml.safe_dump({"wv_bench_cds": {"target": "dev", "outputs": {"dev": profile}}}))
    (root / "models" / "bids.sql").write_text(
        "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
        "select * from values (timestamp'2020-04-15 08:07:00', 2, 'A'), (timestamp'2020-04-15 08:11:00', 3, 'B'), "
        "(timestamp'2020-04-15 08:05:00', 4, 'C') as t(bidtime, price, item)"
    )
    window = "from {{ window_views.tumble(ref('bids'), 'bidtime', '10 minutes') }}\ngroup by window_start, window_end\n"
    (root / "models" / "tumbled.sql").write_text(
        "{{ config(materialized='window_view') }}\nselect window_start, window_end, sum(price) as price\n" + window
    )
    (root / "models" / "streamed.sql").write_text(
        "{{ config(materialized='window_view', execution='streaming', watermark={'column': 'bidtime', 'delay': '1 minute'}) }}\n"
        "select window_start, window_end, sum(price) as price\n" + window
    )


def dbt(root: Path, args: List[str], archive: bool) -> float:
    env = {**os.environ, **({} if archive else {class_archive.CACHE_ENV: class_archive.OFF})}
    return timed_dbt(root, args, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    found = class_archive.archive()
    if found is None:
        sys.exit("no class archive here: WINDOW_VIEWS_JVM_CACHE=off, or no Java")
    if not found.path.is_file():
        print(f"building {found.path} (once) ...", flush=True)
        class_archive.start_builder(found)
        while found.building.exists():
            time.sleep(1)
        if not found.path.is_file():
            sys.exit(f"the build failed: {found.failed.read_text() if found.failed.exists() else 'no reason'}")
    print(f"load at start {load()}", flush=True)
    times: Dict[str, List[float]] = {f"{name} {mode}": [] for name in COMMANDS for mode in ("without", "with")}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        write_project(root)
        dbt(root, ["run"], archive=True)  # tables, partial parse state
        for _ in range(args.repeat):
            for name, command in COMMANDS.items():
                times[f"{name} without"].append(dbt(root, command, archive=False))
                times[f"{name} with"].append(dbt(root, command, archive=True))
    for name in COMMANDS:
        without, with_ = (statistics.median(times[f"{name} {mode}"]) for mode in ("without", "with"))
        runs = ", ".join(f"{a:.1f}/{b:.1f}" for a, b in zip(times[f"{name} without"], times[f"{name} with"]))
        print(f"{name:22} without {without:5.1f} s  with {with_:5.1f} s  ({with_ / without:.2f}x; pairs {runs})")
    print(f"load at end {load()}")


if __name__ == "__main__":
    main()
