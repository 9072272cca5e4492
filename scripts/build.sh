#!/usr/bin/env bash
# Builds the npm package into pkg/ (wasm-pack --target web, release, no downloads).
set -euo pipefail
cd "$(dirname "$0")/.."
wasm-pack build --target web --release --mode no-install --weak-refs --out-dir pkg --out-name megane_builder_client
ls -l pkg/*.wasm
