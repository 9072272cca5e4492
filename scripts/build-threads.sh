#!/usr/bin/env bash
# Builds the multi-threaded package into pkg/threads (wasm-bindgen-rayon; nightly with build-std,
# shared memory). Used where the page is cross-origin isolated. See ../shared/notes/toolchain.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-C target-feature=+atomics,+bulk-memory,+mutable-globals -C link-arg=--shared-memory -C link-arg=--import-memory -C link-arg=--max-memory=1073741824 -C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size -C link-arg=--export=__tls_align -C link-arg=--export=__tls_base"
CARGO_TARGET_DIR=target/threads rustup run "${NIGHTLY:-nightly-2026-05-20}" wasm-pack build --target web --release --mode no-install --weak-refs \
  --out-dir pkg/threads --out-name megane_builder_client -- --features threads-no-bundler -Z build-std=panic_abort,std
rm -f pkg/threads/.gitignore pkg/threads/package.json pkg/threads/README.md
WASM=pkg/threads/megane_builder_client_bg.wasm
echo "threads pkg size: $(stat -c %s "$WASM") bytes raw, $(gzip -9 -c "$WASM" | wc -c) bytes gzip ($WASM)"
