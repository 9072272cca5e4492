#!/usr/bin/env bash
# Every test: formatting, lints, native tests, the JavaScript API and the MCP transport in headless
# Chromium and Node, real MCP servers on loopback (the official Python SDK peer, npm
# server-everything, the official client conformance suite), the release packages (single- and
# multi-threaded), the strict TypeScript consumer, and the package and demo page in Chromium.
# Installs what is missing first. Usage: bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
SECONDS=0

step "set-up"
bash scripts/setup.sh

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (native and wasm32) -D warnings"
cargo clippy --all-targets -- -D warnings
cargo clippy --target wasm32-unknown-unknown --lib -- -D warnings

step "native tests (cargo test: unit, integration and doc tests; the Python SDK peer on loopback)"
cargo test --lib --tests
cargo test --doc

step "JS API in headless Chromium (wasm-pack test --headless --chrome)"
wasm-pack test --headless --chrome --mode no-install -- --test web

step "packing core compiled to wasm32, under Node"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --target wasm32-unknown-unknown --test pack_wasm

step "MCP fetch transport in headless Chromium and in Node, against the Python SDK peer"
sh tests/peers/run_wasm_browser_tests.sh
sh tests/peers/run_wasm_node_tests.sh

step "MCP client against @modelcontextprotocol/server-everything (loopback-only namespace)"
sh tests/peers/run_everything_tests.sh

# The client scenarios of the official conformance suite that apply to this client (elicitation is
# out of the Builder contract's scope, §1, and OAuth is not how Builder servers authenticate).
conformance() { # client: core | node
  CLIENT="$1" sh tests/peers/run_conformance.sh initialize tools_call sse-retry | tee "target/conformance-$1.txt"
  [ "$(grep -c 'Passed: ' "target/conformance-$1.txt")" = 3 ] || { echo "conformance ($1): not every scenario ran"; exit 1; }
  if grep 'Passed: ' "target/conformance-$1.txt" | grep -v ', 0 failed'; then echo "conformance ($1): a scenario failed"; exit 1; fi
}

step "official MCP client conformance scenarios: the sans-I/O core (loopback-only namespace)"
conformance core

step "release packages (single-threaded pkg/, multi-threaded pkg/threads/)"
bash scripts/build.sh

step "official MCP client conformance scenarios: the built package in Node 22 (loopback-only namespace)"
conformance node

step "connect() in headless Chromium against server-everything (loopback-only namespace)"
sh tests/peers/run_everything_browser.sh

step "TypeScript consumer (tsc --strict --noEmit)"
(cd tests/node && npx --no-install tsc -p tsconfig.json)

step "package and page in headless Chromium (node --test, playwright-core)"
(cd tests/node && node --test --test-reporter=spec --test-concurrency=1 ./*.test.mjs)

echo
echo "all test steps passed in $((SECONDS / 60)) min $((SECONDS % 60)) s"
