#!/usr/bin/env bash
# Kill drill for streaming window views (scripts/kill_drill.py): kill -9 at random points of dbt runs, then compare to an unkilled twin.
# The drill runs on .venv (DuckDB compares the tables); with --delta its Spark processes run on .venv-delta's python (PySpark 4.1 + delta-spark).
# With --kafka the source is a topic on the tests' Kafka broker (tests/support/kafka.py), started on 127.0.0.1 and stopped when the drill ends.
cd "$(dirname "$0")/.." && exec .venv/bin/python scripts/kill_drill.py "$@"
