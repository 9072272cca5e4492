#!/bin/sh
# Runs tests/node/everything-browser.mjs (connect() in headless Chromium against npm
# @modelcontextprotocol/server-everything) inside a network namespace with only loopback, since the
# server listens on all interfaces. Needs pkg/ (scripts/build.sh) and tests/node's npm packages.
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
prefix="$root/target/peers-node"
version=2026.8.31
if [ ! -f "$prefix/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ]; then
    mkdir -p "$prefix"
    npm install --no-audit --no-fund --prefix "$prefix" "@modelcontextprotocol/server-everything@$version"
fi
cd "$root/tests/node"
exec unshare -n sh -c 'ip link set lo up && node --test --test-reporter=spec everything-browser.mjs'
