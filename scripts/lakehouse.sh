#!/usr/bin/env bash
# Opt-in example (docs/kafka.md, *The lakehouse example*): a Kafka broker and moto's S3 API on
# 127.0.0.1, Nexmark bids from a topic through a streaming window view into parquet on s3a and a
# batch window view downstream (example/lakehouse/), printed after each of two deliveries
# (scripts/lakehouse.py). Needs scripts/setup.sh's .venv and jars (Kafka's, the connector, hadoop-aws).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/lakehouse.XXXXXX")

# lakehouse.py stops the broker and moto itself; this stops them if it could not (it was killed):
# each pid in its pid file, only if it is still the process started then (same start time)
stop() {
  if [[ -f "$work/pids" ]]; then
    while read -r pid started; do
      if [[ -r /proc/$pid/stat ]] && [[ "$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f20)" == "$started" ]]; then
        kill "$pid" 2>/dev/null || true
      fi
    done <"$work/pids"
  fi
  rm -rf "$work"
}
# Ctrl-C or a TERM: lakehouse.py is asked to stop (it stops its servers), waited for, then `stop`
forward() {
  kill -TERM "$child" 2>/dev/null || true
  wait "$child" || true
  exit "$1"
}
trap stop EXIT
trap 'forward 130' INT
trap 'forward 143' TERM

# in the background, so that a signal reaches the traps while it runs
.venv/bin/python scripts/lakehouse.py --workdir "$work" "$@" &
child=$!
wait "$child"
