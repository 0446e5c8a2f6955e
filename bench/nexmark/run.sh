#!/usr/bin/env bash
# Nexmark's window queries as window views against Apache Flink on the same events and cores
# (bench/nexmark/bench.py; results in bench/README.md). Arguments go to bench.py:
#   bash bench/nexmark/run.sh                    # 2M events: about 10 minutes on 2 cores
#   bash bench/nexmark/run.sh --events 10000000  # the size of record
# PyFlink (from PyPI) goes to its own venv, bench/nexmark/.flink-venv: never the plugin's.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/setup.sh > /dev/null
flink=bench/nexmark/.flink-venv
if [[ ! -x "$flink/bin/python" ]] || ! "$flink/bin/python" -c "import pyflink" 2> /dev/null; then
  python3 -m venv "$flink"
  "$flink/bin/pip" install -q "apache-flink==2.3.0"
fi
echo "== $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
.venv/bin/python -m bench.nexmark.bench --flink-python "$flink/bin/python" "$@"
echo "== done $(date -u '+%H:%M') UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
