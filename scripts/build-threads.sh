#!/usr/bin/env bash
# Builds the multi-threaded package into pkg/threads (wasm-bindgen-rayon; nightly with build-std,
# shared memory: the link arguments below, without which the current nightly makes no shared memory and
# initThreadPool fails with DataCloneError). Used where the page is cross-origin isolated.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-C target-feature=+atomics,+bulk-memory,+mutable-globals -C link-arg=--shared-memory -C link-arg=--import-memory -C link-arg=--max-memory=1073741824 -C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size -C link-arg=--export=__tls_align -C link-arg=--export=__tls_base"
CARGO_TARGET_DIR=target/threads rustup run "${NIGHTLY:-nightly-2026-05-20}" wasm-pack build --target web --release --mode no-install --weak-refs \
  --out-dir pkg/threads --out-name megane_builder_client -- --features threads-no-bundler -Z build-std=panic_abort,std
rm -f pkg/threads/.gitignore pkg/threads/package.json pkg/threads/README.md
# wasm-bindgen-rayon 1.3.0 (its newest release) starts each pool Worker with its no-bundler helper's
# `pkg.default(data.module, data.memory)`: wasm-bindgen's deprecated two-argument init, which logs "using
# deprecated parameters for the initialization function" in every pool Worker (its fix is not released).
# The package's copy of the helper calls the one-object form instead. The build stops if the line is not
# there as expected: a new wasm-bindgen-rayon then decides whether this is still needed.
node - pkg/threads/snippets/wasm-bindgen-rayon-*/src/workerHelpers.no-bundler.js <<'JS'
const fs = require("fs");
const files = process.argv.slice(2).filter((f) => f !== "-");
const old = "await pkg.default(data.module, data.memory);";
const fixed = "await pkg.default({ module_or_path: data.module, memory: data.memory });";
if (files.length !== 1 || !fs.existsSync(files[0])) throw new Error(`one rayon worker helper expected: ${files}`);
const text = fs.readFileSync(files[0], "utf8");
if (text.split(old).length !== 2) throw new Error(`${files[0]}: the deprecated init call is not there once`);
fs.writeFileSync(files[0], text.replace(old, fixed));
JS
WASM=pkg/threads/megane_builder_client_bg.wasm
echo "threads pkg size: $(stat -c %s "$WASM") bytes raw, $(gzip -9 -c "$WASM" | wc -c) bytes gzip ($WASM)"
