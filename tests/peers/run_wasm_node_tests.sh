#!/bin/sh
# Starts the Python peer on a free loopback port, runs the wasm32 fetch-transport tests under Node
# against it, and stops the peer. Needs .venv (tests/peers/setup.sh), the wasm32 target and
# wasm-bindgen-test-runner matching the wasm-bindgen version in Cargo.lock.
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
port="$("$root/.venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"$root/.venv/bin/python" "$root/tests/peers/builder_peer.py" --port "$port" --token live-token-5d1e \
    --allow-origin http://127.0.0.1:8000 --fixtures "$root/tests/fixtures/megane-recorded" \
    --step-seconds 0.3 --announce-tools-changed &
peer=$!
trap 'kill "$peer" 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    sleep 0.1
done
cd "$root"
MCP_PEER_URL="http://127.0.0.1:$port/mcp" \
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
    cargo test --target wasm32-unknown-unknown --test mcp_fetch_node "$@"
