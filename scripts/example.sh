#!/usr/bin/env bash
# The main job: builds the example dbt project of window views on the embedded local Spark
# and prints what they computed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python example/run.py "$@"
