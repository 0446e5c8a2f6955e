#!/usr/bin/env bash
# The test command: installs everything, then unit tests, functional tests on a real local
# Spark, `dbt build` of integration_tests, the wheel install test and the differential tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# two workers, each with its own Spark session: alone, one leaves a third of 2 cores idle while
# JVMs start and processes wait; tests marked slow start first (tests/conftest.py), and a
# module's tests that share a fixture stay on one worker (xdist_group)
exec .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 --dist loadgroup --no-loadscope-reorder tests "$@"
