#!/usr/bin/env bash
# The test command: installs everything, then unit tests, functional tests on a real local
# Spark, `dbt build` of integration_tests, the wheel install test and the differential tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q -p no:cacheprovider tests "$@"
