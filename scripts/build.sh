#!/usr/bin/env bash
# Builds the npm package into pkg/ (wasm-pack --target web, release, no downloads), then shrinks
# the .wasm with npm binaryen's wasm-opt (pinned in tests/node/package.json; never Debian's
# binaryen: v108's output breaks at __wbindgen_init_externref_table) unless WASM_OPT=0. Prints the
# raw and gzip sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
# The page build is made like the threaded one (pinned nightly, std rebuilt with the crate) with
# panics as an immediate trap, `-Cpanic=immediate-abort`: a panic was already an abort with no
# message in this target (no panic hook), and std's panic formatting code goes away (issue 10:
# 1 039 777 -> 946 408 B gzip before wasm-opt). STABLE=1 builds on stable as before.
if [ "${STABLE:-0}" = 1 ]; then
  wasm-pack build --target web --release --mode no-install --weak-refs --out-dir pkg --out-name megane_builder_client
else
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort" \
  CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/page" rustup run "${NIGHTLY:-nightly-2026-05-20}" \
    wasm-pack build --target web --release --mode no-install --weak-refs --out-dir pkg \
    --out-name megane_builder_client -- --locked -Z build-std=panic_abort,std
fi
WASM=pkg/megane_builder_client_bg.wasm
# The multi-threaded build into pkg/threads (nightly, build-std), unless THREADS=0.
if [ "${THREADS:-1}" = 1 ]; then bash scripts/build-threads.sh; fi
# The hand-written JS modules of the package (offline tools in a Worker), listed in package.json.
cp src/js/*.js src/js/*.d.ts pkg/
node -e '
const fs = require("fs"); const p = "pkg/package.json"; const pkg = JSON.parse(fs.readFileSync(p, "utf8"));
const extra = fs.readdirSync("src/js"); pkg.files = [...new Set([...(pkg.files || []), ...extra])];
pkg.files.push("threads/"); pkg.files = [...new Set(pkg.files)];
pkg.exports = { ".": "./megane_builder_client.js", "./loader.js": "./loader.js", "./offline.js": "./offline.js",
  "./megane": { types: "./megane.d.ts", default: "./megane.js" },
  "./*": "./*" };
fs.writeFileSync(p, JSON.stringify(pkg, null, 2) + "\n");'
OPT=tests/node/node_modules/.bin/wasm-opt
# -O3 with binaryen's inlining off: what the page downloads is the gzip, and inlining (on in -Oz and
# -O3 alike) makes it larger (issue 10, 3 275 412 B raw / 1 041 816 B gzip without wasm-opt:
# -Oz 2 959 305 / 1 102 325, -O3 3 034 440 / 1 101 042, -Oz without inlining 2 990 027 / 1 023 953,
# -O3 without inlining 3 046 239 / 1 020 476; one commit later, -O3 without inlining 1 018 207 gzip,
# and with --converge 3 017 180 / 1 013 699). rustc already inlined at opt-level "z".
if [ "${WASM_OPT:-1}" = 1 ]; then
  if [ ! -x "$OPT" ]; then (cd tests/node && npm ci --no-audit --no-fund --loglevel=error); fi
  "$OPT" -O3 -fimfs=0 -aimfs=0 -ocimfs=0 -pii=0 --converge --enable-simd --enable-bulk-memory \
    --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue "$WASM" -o "$WASM.opt"
  mv "$WASM.opt" "$WASM"
fi
echo "pkg size: $(stat -c %s "$WASM") bytes raw, $(gzip -9 -c "$WASM" | wc -c) bytes gzip ($WASM, wasm-opt ${WASM_OPT:-1})"
echo "megane entry: $(stat -c %s pkg/megane.js) bytes raw, $(gzip -9 -c pkg/megane.js | wc -c) bytes gzip (pkg/megane.js)"

# Stage the demo page: the package (git-ignored). Its sample molecules and tools/list are
# committed in www/samples/ (nothing the page needs comes from ../shared).
rm -rf www/pkg && cp -r pkg www/pkg
# three.js for the page's 3D view, from npm at the exact version in www/package-lock.json (never a
# CDN); vendored because the page has no bundler. three.module.js imports ./three.core.js.
if [ ! -f www/node_modules/three/build/three.module.js ]; then
  (cd www && npm ci --no-audit --no-fund --loglevel=error)
fi
mkdir -p www/vendor
cp www/node_modules/three/build/three.module.js www/node_modules/three/build/three.core.js www/vendor/
