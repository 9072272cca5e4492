#!/usr/bin/env bash
# The result benchmark (issue 2): interpretCall + planApply (wasm) against JSON.parse + JavaScript
# checks (benches/result_bench/baseline.js) on a synthetic 500 000-atom liquid box, in one page in
# headless Chromium. Prints a table and writes artifacts/bench-results.json.
# Usage: bash scripts/bench-results.sh [runs]   (default 9 timed runs after one warm-up)
#        bash scripts/bench-results.sh fields   (what each Structure field costs; leaves it out)
#        bash scripts/bench-results.sh profile [wasm|js|jsFull] [runs]   (CPU profile by function)
# Builds the package only when pkg/ is missing. BENCH_PKG=artifacts/<dir> measures another build.
# Also a streamed-call leg: ToolServer.call against server.py sending the body in 64 KiB pieces.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-9}"
QUERY="runs=$RUNS"
OUT=artifacts/bench-results.json
if [ "$RUNS" = fields ]; then QUERY=fields; OUT=artifacts/bench-results-fields.json; fi
if [ -n "${BENCH_PKG:-}" ]; then QUERY="$QUERY&pkg=/${BENCH_PKG#/}"; fi
# BENCH_NOSTREAM=1 leaves out the streamed-call leg (ToolServer.call against server.py).
if [ "${BENCH_NOSTREAM:-0}" = 1 ]; then QUERY="$QUERY&nostream"; fi
# BENCH_CALLS=N: calls in the streamed-call leg (default 10).
if [ -n "${BENCH_CALLS:-}" ]; then QUERY="$QUERY&calls=$BENCH_CALLS"; fi
# BENCH_LENGTH=1: the streamed answer carries Content-Length (default: close-delimited, no length).
if [ "${BENCH_LENGTH:-0}" = 1 ]; then QUERY="$QUERY&length"; fi
# BENCH_WATERS=N: the body's size, 3N + 2 atoms (default 166666: 500 000 atoms).
if [ -n "${BENCH_WATERS:-}" ]; then QUERY="$QUERY&waters=$BENCH_WATERS"; fi
# BENCH_SSE=1: the body SSE-framed (event: message / data: …) for both paths, on the bytes path and
# in the streamed-call leg (sent as text/event-stream, as the reference server answers tool calls).
if [ "${BENCH_SSE:-0}" = 1 ]; then QUERY="$QUERY&sse"; fi
if [ "$RUNS" = profile ]; then OUT=artifacts/bench-results-profile.unused; fi
TIMEOUT="${BENCH_TIMEOUT:-1200}"

[ -f pkg/megane_builder_client.js ] || bash scripts/build.sh
mkdir -p artifacts
rm -f "$OUT"

TMP="$(mktemp -d)"
SERVER_PID=""
CHROME_PID=""
cleanup() {
  [ -n "$CHROME_PID" ] && kill -- "-$CHROME_PID" 2>/dev/null || true
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  sleep 1
  rm -rf "$TMP" 2>/dev/null || true
}
trap cleanup EXIT

python3 benches/result_bench/server.py --root "$PWD" --out "$OUT" >"$TMP/port" &
SERVER_PID=$!
for _ in $(seq 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
PORT="$(head -1 "$TMP/port")"
URL="http://127.0.0.1:$PORT/benches/result_bench/index.html?$QUERY"
echo "page: $URL"

if [ "$RUNS" = profile ]; then
  node --experimental-websocket --no-warnings benches/result_bench/profile.mjs \
    "http://127.0.0.1:$PORT" "${2:-wasm}" "${3:-3}"
  exit 0
fi

# setsid: Chromium and its children get their own process group, ended as one in cleanup.
setsid /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --disable-dev-shm-usage --user-data-dir="$TMP/profile" \
  --enable-precise-memory-info --js-flags=--expose-gc \
  --enable-logging=stderr --v=0 "$URL" >"$TMP/chrome.log" 2>&1 &
CHROME_PID=$!

for _ in $(seq "$TIMEOUT"); do
  [ -s "$OUT" ] && break
  if ! kill -0 "$CHROME_PID" 2>/dev/null; then
    echo "chromium exited early:" >&2
    tail -20 "$TMP/chrome.log" >&2
    exit 1
  fi
  sleep 1
done
if [ ! -s "$OUT" ]; then
  echo "no results after ${TIMEOUT}s; page log:" >&2
  grep -a "CONSOLE" "$TMP/chrome.log" | tail -20 >&2 || true
  exit 1
fi

python3 - "$OUT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
if "error" in r:
    sys.exit("page failed: " + r["error"])
if "fields" in r:
    print(f"\n{'left out':<48}{'MiB':>6}{'interpretCall':>15}{'planApply':>11}{'JS':>8}  (median ms)")
    for row in r["fields"]:
        print(f"{row['omit']:<48}{row['jsonBytes'] / 2**20:>6.1f}{row['interpretCall']:>15.0f}"
              f"{row['planApply']:>11.0f}{row['js']:>8.0f}")
    print(f"\nwritten: {sys.argv[1]}")
    sys.exit(0)
m, mem, MB = r["mediansMs"], r["memory"], 1024 * 1024
print(f"\npackage {r['pkg']}: {r['atoms']} atoms{' (SSE-framed)' if r.get('sse') else ''}, {r['bonds']} bonds, {r['jsonBytes']} JSON bytes "
      f"({r['jsonBytes'] / MB:.1f} MiB); median of {r['runs']} runs after a warm-up")
print(f"{'path':<44}{'median ms':>10}   runs (ms)")
rows = [
    ("wasm: interpretCall + planApply", "wasm"),
    ("  of which interpretCall", "wasmInterpretCall"),
    ("  of which planApply", "wasmPlanApply"),
    ("JS: JSON.parse + checks + typed arrays", "js"),
    ("JS: same + full Snapshot (labels, ...)", "jsFull"),
    ("JS: TextDecoder + JSON.parse alone", "jsonParseOnly"),
]
runs = dict(r["timesMs"], wasmInterpretCall=r["wasmSplitMs"]["interpretCall"],
            wasmPlanApply=r["wasmSplitMs"]["planApply"])
for label, key in rows:
    print(f"{label:<44}{m[key]:>10.0f}   {' '.join(f'{t:.0f}' for t in runs[key])}")
print(f"ratio wasm / JS: {r['ratio']:.2f}  (goal <= 0.33);  vs full-Snapshot JS: {r['ratioVsFullSnapshot']:.2f};"
      f"  median of per-round ratios: {r['ratioPerRoundMedian']:.2f}")
yn = lambda b: "counted" if b else "not counted"
print(f"\npeak memory (usedJSHeapSize deltas; ArrayBuffers {yn(mem['heapCountsArrayBuffers'])}, "
      f"wasm memory {yn(mem['heapCountsWasmMemory'])} in usedJSHeapSize):")
print(f"  wasm: linear memory {mem['wasmMemoryAfterInit'] / MB:.0f} MiB after init -> "
      f"{mem['wasmMemoryAfterFirstRun'] / MB:.0f} MiB after the first run "
      f"({mem['wasmMemoryAfterAllRuns'] / MB:.0f} MiB after all runs); output JS heap "
      f"+{mem['wasmOutputHeapDelta'] / MB:.1f} MiB, typed arrays {mem['wasmOutputTypedArrayBytes'] / MB:.1f} MiB")
print(f"  JS:   decoded string {mem['jsDecodedStringHeap'] / MB:.1f} MiB + parsed tree "
      f"{mem['jsParsedTreeHeap'] / MB:.1f} MiB; peak JS heap +{mem['jsPeakHeapDelta'] / MB:.1f} MiB, "
      f"typed arrays {mem['jsOutputTypedArrayBytes'] / MB:.1f} MiB")
print(f"  wasm linear memory over the bytes-path runs: {mem['wasmMemoryAfterFirstRun'] / MB:.0f} MiB after the first, "
      f"{mem['wasmMemoryAfterAllRuns'] / MB:.0f} MiB after {mem.get('wasmBytesPathRuns', '?')} calls")
s = r.get("streamed")
if s:
    sm = s["medians"]
    print(f"\nstreamed call (ToolServer.call; body in 64 KiB pieces, paced{', with Content-Length' if s.get('contentLength') else ''}; "
          f"{s['calls']} calls, medians without the first):")
    print(f"  last byte -> plan: wasm {sm['wasmLastByteToPlan']:.0f} ms, JS (fetch + baseline) {sm['jsLastByteToPlan']:.0f} ms; "
          f"ratio {s['ratio']:.2f} (goal: wasm <= 30 ms)")
    print(f"  whole call: wasm {sm['wasmCall']:.0f} ms, JS {sm['jsCall']:.0f} ms")
    print(f"  runs wasm: {' '.join(f'{t:.0f}' for t in s['wasmLastByteToPlanMs'])}")
    print(f"  runs JS:   {' '.join(f'{t:.0f}' for t in s['jsLastByteToPlanMs'])}")
    print(f"  wasm linear memory (own instance): {s['wasmMemoryAfterInit'] / MB:.0f} MiB after init -> "
          f"{s['wasmMemoryAfterFirstCall'] / MB:.0f} MiB after the first call -> {s['wasmMemoryAfterCalls'] / MB:.0f} MiB "
          f"after {s['calls']}; body {r['jsonBytes'] / MB:.1f} MiB, first-call growth "
          f"{(s['wasmMemoryAfterFirstCall'] - s['wasmMemoryAfterInit']) / r['jsonBytes']:.2f}x the body (goal <= 1.5x)")
    print(f"  JS heap of one call's outputs: +{s['outputHeapDelta'] / MB:.1f} MiB")
print(f"load average at the end of the page run: {r.get('loadAverage', '?')}")
cc = r["crossCheck"]
print("cross-check (positions within f32, elements, bonds, orders, box, molecules, labels): "
      + ("identical" if cc["identical"] else "; ".join(cc["problems"])))
print(f"\nwritten: {sys.argv[1]}")
PY
