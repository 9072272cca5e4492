#!/usr/bin/env bash
# The forms benchmark (issue 15) in Node on the built package: parseToolList for 10/100/1000 tools
# against a JavaScript baseline written from the contract (benches/forms_bench/baseline.js), and
# buildArguments per keystroke / validateArguments before Run for liquid_box and solvate with
# documents of 3e3, 3e4, 3e5 atoms. Prints tables; writes artifacts/bench-forms.json.
# Usage: bash scripts/bench-forms.sh [runs]   (default 15)
# Env: BASE_PKG=<dir> also measures an older build of the package (e.g. main's) in the same run.
# Builds the single-threaded package only when pkg/ is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f pkg/megane_builder_client_bg.wasm ] || THREADS=0 bash scripts/build.sh
mkdir -p artifacts
node benches/forms_bench/run.mjs --runs "${1:-15}" --json artifacts/bench-forms.json \
  ${BASE_PKG:+--base "$BASE_PKG"}
