#!/usr/bin/env bash
# Every benchmark of bench/README.md in one command; each prints its ratios, measured in this run
# against plain Spark or the batch build, next to its target (met / NOT met).
#   bash bench/run.sh           # default sizes: 14 minutes on 2 cores (2026-11-25)
#   bash bench/run.sh --large   # the 10M-row runs the targets name (56–83 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh > /dev/null
py=.venv/bin/python
if [[ "${1:-}" == "--large" ]]; then
  rows=10000000; over_rows=10000000; agg=(--rows 10000000 --keys 3000 --repeat 1); repeat=1
else
  rows=1000000; over_rows=1000000; agg=(--rows 2000000 --keys 300 --repeat 3 --baseline-repeat 1); repeat=1
fi
echo "== $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== $(date -u +%H:%M:%S) window_aggregate pane plans against Spark window() and the pane floor"
"$py" bench/bench_window_aggregate.py "${agg[@]}"
echo "== $(date -u +%H:%M:%S) streaming TVF window views: initial load and 1% increments against the batch build"
"$py" bench/bench_streaming.py --rows "$rows" --repeat "$repeat"
echo "== $(date -u +%H:%M:%S) streaming window_aggregate (pane slicing): HOP 1h/1min against TUMBLE 1min, state, stream = batch"
"$py" bench/bench_streaming_panes.py --rows "$rows" --repeat "$repeat"
echo "== $(date -u +%H:%M:%S) streaming over windows: initial load and 1% increments against a batch recompute"
"$py" bench/bench_streaming_over.py --rows "$over_rows"
echo "== done $(date -u '+%H:%M') UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
