#!/usr/bin/env bash
# The test command: installs everything, then unit tests, functional tests on a real local
# Spark, `dbt build` of integration_tests, the wheel install test and the differential tests.
set -euo pipefail
cd "$(dirname "$0")/.."
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
  case "$arg" in -*) ;; *) if [ -e "${arg%%::*}" ]; then where=; fi ;; esac
done
# xdist would order modules by their count of tests, which puts the long one-test modules last and
# leaves a worker idle at the end; --no-loadscope-reorder keeps conftest's SLOW_FIRST order
exec .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile --no-loadscope-reorder \
  --durations=15 $where "$@"
