#!/usr/bin/env bash
# Packing in wasm (headless Chromium, offline tools' Worker; 1 thread and 2 threads) on the baseline
# cases and the small ones (t5w, t5c: 5 water, 5 chloroform; sala, stst: small solvates, see
# benches/pack_wasm/cases.mjs), packmol 21.2.3 on the same cases in the same run (the pack bench's
# driver, benches/support/packmol.rs: `cargo bench --bench pack` with PACK_BENCH_ENGINES=packmol),
# every output judged by the project's judge (examples/pack_judge.rs: pairs below the tolerance,
# rigid copies, S_max over the molecule centres against issue 32's line). Prints a table of seconds,
# ratios and S_max.
# Small cases (t5w, t5c, sala, stst): ours is the median of PACK_WASM_REPEAT (default 51)
# `offlineTools().call` calls after PACK_WASM_WARMUP (default 100) untimed warm-up calls on the same
# tools object (as on a page that has already run a tool), with the 10th-90th percentile spread:
# through the offline Worker, but for calls of at most 200 atoms (t5w, t5c), which run on the page's
# own thread as they do on a page (PACK_WASM_HERE=0: every call through the Worker); other
# cases one warm-up call and one timed call. packmol: the mean of PACK_BENCH_SMALL_REPEAT (default
# 100) runs' CPU time (getrusage of the reaped child, microseconds) on the small cases, one run on
# the others.
# Usage: scripts/bench-pack-wasm.sh [CASES] [SEEDS]    (default a,b,c,d,e,t5w,t5c,sala,stst and seed 1;
#   add f for 100 000 water)
# Env: SKIP_PACKMOL=1 skips packmol; PACK_WASM_THREADS=1 runs only the single-threaded build (no
# nightly threaded build needed); PACK_WASM_THREADS=1,P1,2 also runs the threaded build with a pool
# of one thread (what the pool itself costs; its own column). PYTHON: the interpreter whose `packmol` package (pip install
# packmol==21.2.3) gives the binary (default python3), or PACKMOL=path. BASE_PKG=DIR also runs
# another build of the package (e.g. main's) in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
cases="${1:-a,b,c,d,e,t5w,t5c,sala,stst}"
seeds="${2:-1}"
out="$root/artifacts/bench-pack-wasm/run-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
py="${PYTHON:-python3}"
if [ "${PACK_WASM_THREADS:-1,2}" = 1 ]; then
  [ -f pkg/megane_builder_client_bg.wasm ] || THREADS=0 bash scripts/build.sh
else
  [ -f pkg/threads/megane_builder_client_bg.wasm ] || bash scripts/build.sh
fi
cargo build -q --release --example pack_judge
(cd tests/node && [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error)

echo "== load: $(uptime)"
echo "== small cases: ${PACK_WASM_WARMUP:-100} untimed warm-up calls, then the median of ${PACK_WASM_REPEAT:-51} timed calls"
echo "== ours in wasm (Chromium) -> $out"
node benches/pack_wasm/run.mjs "$out" "$cases" "$seeds" | tee "$out/ours.jsonl"
if [ -n "${BASE_PKG:-}" ]; then
  echo "== base build ($BASE_PKG) in wasm (Chromium)"
  mkdir -p "$out/base"
  PACK_WASM_PKG="$BASE_PKG" node benches/pack_wasm/run.mjs "$out/base" "$cases" "$seeds" | tee "$out/base.jsonl"
fi

if [ "${SKIP_PACKMOL:-0}" != 1 ]; then
  echo "== packmol (the pack bench's driver)"
  PYTHON="$py" PACK_BENCH_ENGINES=packmol PACK_BENCH_CASES="$cases" PACK_BENCH_SEEDS="$seeds" \
      PACK_BENCH_ROUNDS=1 PACK_BENCH_OUT="$out/packmol" cargo bench -q --bench pack --features molpack-peer > "$out/packmol.log" 2>&1 || true
fi

"$py" - "$out" "$root/target/release/examples/pack_judge" <<'PY'
import json, os, statistics, subprocess, sys
out, judge = sys.argv[1], sys.argv[2]
def judged(file, fixed):
    p = subprocess.run([judge, file, "--tolerance", "2.0"] + (["--fixed", fixed] if fixed else []), capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"error": (p.stdout + p.stderr)[-300:]}
def read_ours(name):
    """A run.mjs output file -> ({(case, threads): [(s, check, atoms)]}, {(case, threads): spread})."""
    ours, spread = {}, {}
    for line in open(os.path.join(out, name)):
        r = json.loads(line)
        if "error" in r:
            print(name, "failed:", r); continue
        c = judged(r["file"], r.get("fixed"))
        ours.setdefault((r["case"], r.get("asked", r["threads"])), []).append((r["ms"] / 1000, c, r["atoms"]))
        if r.get("repeat", 1) > 1:
            spread[(r["case"], r.get("asked", r["threads"]))] = (r["p10"] / 1000, r["p90"] / 1000, r["warmup"], r["repeat"], r.get("where", "worker"))
    return ours, spread
pm = {}
path = os.path.join(out, "packmol", "results.jsonl")
if os.path.exists(path):
    for line in open(path):
        r = json.loads(line)
        pm.setdefault(r["case"], []).append((r["cpu_s"], r["wall_s"], r.get("check") or {}))
med = lambda v: statistics.median(v) if v else float("nan")
def q(c):
    if not c or "error" in c:
        return "-"
    return f"{'pass' if c.get('pass') else 'FAIL'}, min d {c.get('min_intermolecular_distance') or float('nan'):.3f}"
def s(c):
    return f"{c['s_max']:.1f}" if c and "s_max" in c else "-"
def table(label, ours, spread):
    print(f"\n{label}\n| case | atoms | wasm 1 thread s | wasm 2 threads s | 1t / 2t | threaded build, 1 thread s | packmol CPU s | packmol wall s | packmol CPU / wasm 1t | packmol wall / wasm 1t | packmol CPU / wasm 2t | S_max 1t / 2t / packmol (line) | quality (ours 1t; 2t; packmol) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for case in sorted({k[0] for k in ours}, key=lambda c: (len(c) > 1, c)):
        one, two, p = ours.get((case, 1), []), ours.get((case, 2), []), pm.get(case, [])
        t1, t2 = med([x[0] for x in one]), med([x[0] for x in two])
        p1 = med([x[0] for x in ours.get((case, "P1"), [])])
        cpu, wall = med([x[0] for x in p]), med([x[1] for x in p])
        c1, c2, cp = (one[0][1] if one else {}), (two[0][1] if two else {}), (p[0][2] if p else {})
        line = next((c["s_threshold"] for c in (c1, c2, cp) if c and "s_threshold" in c), float("nan"))
        atoms = one[0][2] if one else (two[0][2] if two else "-")
        print(f"| {case} | {atoms} | {t1:.5f} | {t2:.5f} | {t1 / t2:.2f}× | {p1:.5f} | {cpu:.5f} | {wall:.5f} | {cpu / t1:.1f}× | {wall / t1:.1f}× | {cpu / t2:.1f}× | {s(c1)} / {s(c2)} / {s(cp)} ({line:.1f}) | {q(c1)}; {q(c2)}; {q(cp)} |")
    print("\n(packmol: user + system CPU of the reaped process (getrusage), the mean of repeated runs on the small cases; ours: the median of"
          " repeated offlineTools().call calls after warm-up calls on the small cases (below), so it includes the Worker round trip (or, at"
          " most 200 atoms, the call on the page's thread); one thread, so its wall time bounds its CPU time.)")
    for (case, threads), (p10, p90, warmup, repeat, where) in sorted(spread.items()):
        place = "on the page's thread" if where == "page" else "through the Worker"
        print(f"{case} wasm {threads}t build: median of {repeat} calls {place} after {warmup} warm-up calls; p10 {p10:.5f} s, p90 {p90:.5f} s")
table("ours (this tree's pkg/)", *read_ours("ours.jsonl"))
if os.path.exists(os.path.join(out, "base.jsonl")):
    table(f"base ({os.environ.get('BASE_PKG')})", *read_ours("base.jsonl"))
print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
PY
