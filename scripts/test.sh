#!/usr/bin/env bash
# The test command: installs everything, then unit tests, functional tests on a real local
# Spark, `dbt build` of integration_tests and the differential tests, then Delta's and Iceberg's.
# `--drills` runs the drills instead: the tests that start Spark processes of their own (a
# standalone cluster, warm and Spark Connect servers, dbt runs killed at each commit step, the
# wheel in a clean venv, the class archive's builder), marked `drill` (docs/development.md).
set -euo pipefail
cd "$(dirname "$0")/.."
marks=(-m "not drill")
if [ "${1:-}" = "--drills" ]; then
  shift
  marks=(-m drill)
  drills=1
fi
bash scripts/setup.sh
# lint and format first: seconds, before half an hour of Spark
.venv/bin/ruff check -q dbt tests bench scripts
.venv/bin/ruff format --check -q dbt tests bench scripts
# types of the package (pyproject.toml's [tool.mypy]): seconds too
.venv/bin/mypy
# two workers, each with its own Spark session (one alone leaves a third of 2 cores idle while
# JVMs start and processes wait); a file's tests run on one worker, so a module's fixture is
# built once. Arguments go to pytest; one naming a test file or folder replaces `tests`
where=tests
for arg in "$@"; do
  case "$arg" in
    tests/lakehouse*) # Delta's and Iceberg's tests run in the second venv only (setup.sh); name one
      # format's tests at a time: tests/lakehouse/iceberg needs a session of its own
      exec .venv-delta/bin/python -m pytest -q -p no:cacheprovider "$@" ;;
    -m) marks=() ;;  # the caller's marks instead
    -*) ;;
    *) if [ -e "${arg%%::*}" ]; then where= marks=(); fi ;;  # a file named runs whole
  esac
done
# xdist would order modules by their count of tests, which puts the long one-test modules last and
# leaves a worker idle at the end; --no-loadscope-reorder keeps conftest's SLOW_FIRST order.
# tests/lakehouse needs PySpark 4.1 and Delta's jars: its own run below
status=0
.venv/bin/python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile --no-loadscope-reorder \
  --durations=15 --ignore=tests/lakehouse "${marks[@]}" $where "$@" || status=$?
# the whole suite (no arguments): then Delta Lake's, one Spark session with Delta in .venv-delta,
# and beside it Iceberg's in a process of its own (a session's catalog class is fixed when it
# starts): two JVMs for two cores, as the main run's workers; Iceberg's report follows Delta's
if [ $# -eq 0 ] && [ -z "${drills:-}" ] && [ -x .venv-delta/bin/python ]; then
  iceberg_log=$(mktemp)
  .venv-delta/bin/python -m pytest -q -p no:cacheprovider --durations=3 tests/lakehouse/iceberg \
    > "$iceberg_log" 2>&1 &
  iceberg=$!
  .venv-delta/bin/python -m pytest -q -p no:cacheprovider --durations=5 --ignore=tests/lakehouse/iceberg \
    tests/lakehouse || status=$?
  wait $iceberg || status=$?
  cat "$iceberg_log"
  rm -f "$iceberg_log"
fi
exit $status
