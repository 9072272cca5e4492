#!/usr/bin/env bash
# Every test: formatting, lints, native tests, the JS API in headless Chromium, the strict
# TypeScript consumer. Installs what is missing first. Usage: bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "set-up"
bash scripts/setup.sh

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (native and wasm32) -D warnings"
cargo clippy --all-targets -- -D warnings
cargo clippy --target wasm32-unknown-unknown --lib -- -D warnings

step "native tests (cargo test: unit, integration and doc tests; benches are only compiled by clippy)"
cargo test --lib --tests
cargo test --doc

step "JS API in headless Chromium (wasm-pack test --headless --chrome)"
wasm-pack test --headless --chrome --mode no-install -- --test web

step "release package (wasm-pack build --target web)"
bash scripts/build.sh

step "TypeScript consumer (tsc --strict --noEmit)"
(cd tests/node && npx --no-install tsc -p tsconfig.json)

step "package and page in headless Chromium (node --test, playwright-core)"
(cd tests/node && node --test --test-reporter=spec --test-concurrency=1 ./*.test.mjs)

echo
echo "all test steps passed"
