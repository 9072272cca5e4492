#!/usr/bin/env bash
# CI smoke of every fuzz target (issue 11, item 14): builds the libFuzzer binaries (no sanitizer:
# the code under test is safe Rust, and the build stays a few minutes) and runs each target for
# SECONDS seconds, starting from its committed corpus. New inputs go to a temporary directory, so
# the committed corpus is read, never changed. A crash fails the step and is kept in
# fuzz/artifacts/<target>/. The long runs (10 000 000 executions each) are manual: fuzz/run_all.sh.
# Usage: bash fuzz/smoke.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
NIGHTLY="${NIGHTLY:-nightly-2026-05-20}"
SECS="${1:-10}"
TARGETS="sse jsonrpc result discovery molblock launch server_url transfer structure_files"
cargo +"$NIGHTLY" fuzz build -s none 2>&1 | tail -n 2
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for t in $TARGETS; do
  mkdir -p "$scratch/$t"
  log="$scratch/$t.log"
  if ! cargo +"$NIGHTLY" fuzz run -s none "$t" "$scratch/$t" "fuzz/corpus/$t" -- \
      -max_total_time="$SECS" -print_final_stats=1 >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "fuzz smoke: target $t failed (input kept in fuzz/artifacts/$t/)" >&2
    exit 1
  fi
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  echo "fuzz smoke: $t ran ${runs:-?} inputs in ${SECS} s, no failure"
done
