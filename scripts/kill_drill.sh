#!/usr/bin/env bash
# Kill drill for streaming window views (scripts/kill_drill.py): kill -9 at random points of dbt runs, then compare to an unkilled twin.
cd "$(dirname "$0")/.." && exec .venv/bin/python scripts/kill_drill.py "$@"
