#!/usr/bin/env bash
# Minimises every committed corpus (fuzz/corpus/<target>/) to few files that reach the same code:
# `cargo fuzz cmin` with libFuzzer's set-cover merge on edge coverage alone (-use_counters=0: an input
# that only runs a loop more often is not kept), then one merge pass that takes back any input of the
# old corpus still adding an edge; then the recorded wire data and hostile seeds of fuzz/seed_corpus.py
# go back in, so the replay in `cargo test` (tests/fuzz_corpus.rs) always runs the real inputs.
# `discovery` keeps every feature (hit counts too): its target keeps a schema cache across inputs, and
# on edges alone its replay lost ~40 of 11 080 edges. Prints each target's files and libFuzzer's `cov`
# (edges) and `ft` (features) on a replay before and after (both move by a few between replays of the
# same files: hash seeds). Usage: bash fuzz/cmin.sh [target…]
set -euo pipefail
cd "$(dirname "$0")/.."
NIGHTLY="${NIGHTLY:-nightly-2026-05-20}"
TARGETS="${*:-sse jsonrpc result discovery molblock launch server_url transfer}"
fuzz() { cargo +"$NIGHTLY" fuzz "$@"; }
fuzz build -s none 2>&1 | tail -n 1
old="$(mktemp -d)"
trap 'rm -rf "$old"' EXIT
replay() { # target -> "files N cov C ft F"
  local empty line
  empty="$(mktemp -d)"
  line="$(fuzz run -s none "$1" "$empty" "fuzz/corpus/$1" -- -runs=0 2>&1 | grep -m1 INITED)"
  rm -rf "$empty"
  echo "files $(find "fuzz/corpus/$1" -type f | wc -l) $(echo "$line" | grep -o 'cov: [0-9]*') $(echo "$line" | grep -o 'ft: [0-9]*')"
}
for t in $TARGETS; do
  echo "$t: before: $(replay "$t")"
  cp -r "fuzz/corpus/$t" "$old/$t"
  if [ "$t" = discovery ]; then features=(-set_cover_merge=1); else features=(-set_cover_merge=1 -use_counters=0); fi
  fuzz cmin -s none "$t" -- "${features[@]}" >/dev/null 2>&1
  fuzz run -s none "$t" "fuzz/corpus/$t" "$old/$t" -- -merge=1 -use_counters=0 >/dev/null 2>&1
done
python3 fuzz/seed_corpus.py
for t in $TARGETS; do echo "$t: after:  $(replay "$t")"; done
