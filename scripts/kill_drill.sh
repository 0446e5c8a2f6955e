#!/usr/bin/env bash
# Kill drill for streaming window views (scripts/kill_drill.py): kill -9 at random points of dbt runs, then compare to an unkilled twin.
# The drill runs on .venv (DuckDB compares the tables); with --delta its Spark processes run on .venv-delta's python (PySpark 4.1 + delta-spark).
cd "$(dirname "$0")/.." && exec .venv/bin/python scripts/kill_drill.py "$@"
