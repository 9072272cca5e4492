#!/bin/sh
# Runs tests/mcp_everything.rs against npm @modelcontextprotocol/server-everything (pinned below),
# both inside a network namespace with only loopback (the server listens on all interfaces).
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
prefix="$root/target/peers-node"
version=2026.8.31
if [ ! -x "$prefix/node_modules/.bin/mcp-server-everything" ]; then
    mkdir -p "$prefix"
    npm install --no-audit --no-fund --prefix "$prefix" "@modelcontextprotocol/server-everything@$version"
fi
cd "$root"
# Build outside the namespace (no registry access inside).
cargo test --test mcp_everything --no-run
exec unshare -n sh -c '
    set -eu
    ip link set lo up
    PORT=3001 node "'"$prefix"'/node_modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp >/dev/null 2>&1 &
    server=$!
    trap "kill $server 2>/dev/null || true" EXIT
    for _ in $(seq 1 100); do
        (echo > /dev/tcp/127.0.0.1/3001) 2>/dev/null && break || true
        node -e "require(\"net\").connect(3001,\"127.0.0.1\").on(\"connect\",()=>process.exit(0)).on(\"error\",()=>process.exit(1))" && break || sleep 0.1
    done
    MCP_EVERYTHING_URL=http://127.0.0.1:3001/mcp cargo test --offline --test mcp_everything -- --ignored '"$*"'
'
