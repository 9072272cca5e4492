#!/usr/bin/env bash
# Runs every fuzz target at low priority, in parallel, up to RUNS executions or SECONDS seconds each;
# logs to fuzz/logs/<target>.log (not committed). Usage: bash fuzz/run_all.sh [RUNS] [SECONDS]
set -u
cd "$(dirname "$0")/.."
NIGHTLY="${NIGHTLY:-nightly-2026-05-20}"
RUNS="${1:-10000000}"
SECS="${2:-0}"
mkdir -p fuzz/logs
for t in sse jsonrpc result discovery molblock launch server_url transfer structure_files; do
  nice -n 19 cargo +"$NIGHTLY" fuzz run "$t" -- -runs="$RUNS" -max_total_time="$SECS" \
    -print_final_stats=1 > "fuzz/logs/$t.log" 2>&1 &
done
wait
