#!/bin/sh
# Client command for @modelcontextprotocol/conformance: the suite appends the server URL.
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
MCP_CONFORMANCE_URL="$1" exec cargo test --offline -q --test mcp_conformance_client -- --ignored --exact conformance_client --nocapture
