#!/bin/sh
# Starts four Python peers on free loopback ports and runs the wasm32 fetch-transport tests in headless
# Chromium (page origin http://127.0.0.1:8000, so every request is cross-origin), then stops the peers.
# Needs .venv (tests/peers/setup.sh), chromium and chromedriver on PATH, and wasm-bindgen-test-runner
# matching the wasm-bindgen version in Cargo.lock.
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
py="$root/.venv/bin/python"
peer="$root/tests/peers/builder_peer.py"
fixtures="$root/tests/fixtures/megane-recorded"
free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null || true; done' EXIT INT TERM
start() { # port, extra args…
    port=$1; shift
    "$py" "$peer" --port "$port" --token live-token-5d1e --fixtures "$fixtures" --step-seconds 0.05 "$@" &
    pids="$pids $!"
}
p1=$(free_port); start "$p1" --allow-origin http://127.0.0.1:8000
p2=$(free_port); start "$p2" --allow-origin http://127.0.0.1:8000 --modern
p3=$(free_port); start "$p3" --allow-origin http://localhost:5173
p4=$(free_port); start "$p4" --allow-origin http://127.0.0.1:8000 --no-expose-session-id
p5=$(free_port); start "$p5" --allow-origin http://127.0.0.1:8000 --json-response
for p in $p1 $p2 $p3 $p4 $p5; do
    for _ in $(seq 1 100); do
        curl -sf "http://127.0.0.1:$p/health" >/dev/null 2>&1 && break
        sleep 0.1
    done
done
cd "$root"
MCP_PEER_URL="http://127.0.0.1:$p1/mcp" \
MCP_PEER_MODERN_URL="http://127.0.0.1:$p2/mcp" \
MCP_PEER_OTHER_ORIGIN_URL="http://127.0.0.1:$p3/mcp" \
MCP_PEER_HIDDEN_SESSION_URL="http://127.0.0.1:$p4/mcp" \
MCP_PEER_JSON_URL="http://127.0.0.1:$p5/mcp" \
WASM_BINDGEN_TEST_ADDRESS=127.0.0.1:8000 \
CHROMEDRIVER="$(command -v chromedriver)" \
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
    cargo test --target wasm32-unknown-unknown --test mcp_fetch_browser "$@"
