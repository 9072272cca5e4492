#!/usr/bin/env bash
# Packing in wasm (headless Chromium, offline tools' Worker; 1 thread and 2 threads) on the baseline
# cases and the small ones (t5w, t5c: 5 water, 5 chloroform; sala, stst: small solvates, see
# benches/pack_wasm/cases.mjs), packmol 21.2.3 on the same cases in the same run
# (benches/pack_wasm/packmol_small.py for the small ones), every output judged by
# ../shared/tools/check_packing.py. Prints a table of seconds and ratios.
# Small cases (t5w, t5c, sala, stst): ours is the median of PACK_WASM_REPEAT (default 51)
# `offlineTools().call` calls after PACK_WASM_WARMUP (default 100) untimed warm-up calls on the same
# tools object (as on a page that has already run a tool), with the 10th-90th percentile spread:
# through the offline Worker, but for calls of at most 200 atoms (t5w, t5c), which run on the page's
# own thread as they do on a page (PACK_WASM_HERE=0: every call through the Worker); other
# cases one warm-up call and one timed call. packmol: packmol_small.py's repeated runs (see there).
# Usage: scripts/bench-pack-wasm.sh [CASES] [SEEDS]    (default a,b,c,d,e,t5w,t5c,sala,stst and seed 1;
#   add f for 100 000 water)
# Env: SKIP_PACKMOL=1 skips packmol; PACK_WASM_THREADS=1 runs only the single-threaded build (no
# nightly threaded build needed). Needs numpy and packmol==21.2.3 from PyPI for the peers
# (PYTHON: the interpreter that has them, default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
shared="$root/../shared"
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
"$py" -c "import numpy" 2>/dev/null || "$py" -m pip install -q numpy
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
  pm_bin="$("$py" -c 'from packmol.cli import get_binary_path; print(get_binary_path())' 2>/dev/null || true)"
  if [ -z "$pm_bin" ] || [ ! -x "$pm_bin" ]; then "$py" -m pip install -q packmol==21.2.3; pm_bin="$("$py" -c 'from packmol.cli import get_binary_path; print(get_binary_path())')"; fi
  echo "== packmol ($pm_bin)"
  base_cases="$(echo "$cases" | tr ',' '\n' | grep -E '^[a-g]$' | paste -sd, || true)"
  small_cases="$(echo "$cases" | tr ',' '\n' | grep -vE '^[a-g]$' | paste -sd, || true)"
  if [ -n "$base_cases" ]; then
    "$py" "$shared/tools/packmol_bench.py" --packmol "$pm_bin" --mode pbc --out "$out/packmol" \
        --cases "$base_cases" --seeds "$seeds" --molecules "$shared/fixtures/molecules" > "$out/packmol.log" 2>&1 || true
  fi
  if [ -n "$small_cases" ]; then
    "$py" benches/pack_wasm/packmol_small.py --packmol "$pm_bin" --out "$out/packmol" \
        --cases "$small_cases" --seeds "$seeds" >> "$out/packmol.log" 2>&1 || true
  fi
fi

"$py" - "$out" "$shared" <<'PY'
import json, os, statistics, subprocess, sys
out, shared = sys.argv[1], sys.argv[2]
checker = os.path.join(shared, "tools", "check_packing.py")
doc = os.path.join(shared, "fixtures", "packed", "solvate_caffeine_box40.document.json")
def read_ours(name):
    """A run.mjs output file -> ({(case, threads): [(s, ok, min d, atoms)]}, {(case, threads): spread})."""
    ours, spread = {}, {}
    for line in open(os.path.join(out, name)):
        r = json.loads(line)
        if "error" in r:
            print(name, "failed:", r); continue
        args = [sys.executable, checker, r["file"], "--tolerance", "2.0", "--json"]
        if r["case"] == "e":
            args += ["--fixed", doc]
        elif r.get("fixed"):
            args += ["--fixed", r["fixed"]]
        p = subprocess.run(args, capture_output=True, text=True)
        try:
            c = json.loads(p.stdout)
        except Exception:
            c = {"raw": (p.stdout + p.stderr)[-300:]}
        ok = c.get("pairs_below_tolerance") == 0 and c.get("non_rigid_molecules", 1) == 0
        ours.setdefault((r["case"], r.get("asked", r["threads"])), []).append((r["ms"] / 1000, ok, c.get("min_intermolecular_distance"), r["atoms"]))
        if r.get("repeat", 1) > 1:
            spread[(r["case"], r.get("asked", r["threads"]))] = (r["p10"] / 1000, r["p90"] / 1000, r["warmup"], r["repeat"], r.get("where", "worker"))
    return ours, spread
pm = {}
path = os.path.join(out, "packmol", "results.jsonl")
# packmol's CPU time: /usr/bin/time's user seconds on the baseline cases (10 ms ticks); on the small
# cases the median user + system time of repeated runs from the kernel's rusage of the reaped
# process (packmol_small.py, microseconds), as /usr/bin/time reads 0.00 or 0.01 there.
ru = {}
if os.path.exists(os.path.join(out, "packmol", "rusage.jsonl")):
    for line in open(os.path.join(out, "packmol", "rusage.jsonl")):
        r = json.loads(line)
        ru.setdefault(r["case"], []).append((r["cpu_s"], r["wall_s"]))
if os.path.exists(path):
    for line in open(path):
        r = json.loads(line); c = r.get("check") or {}
        ok = c.get("pairs_below_tolerance") == 0 and c.get("non_rigid_molecules", 1) == 0
        user, wall = r.get("user_s", float("nan")), r.get("wall_s", float("nan"))
        pm.setdefault(r["case"], []).append((user, wall, ok))
med = lambda v: statistics.median(v) if v else float("nan")
def table(label, ours, spread):
    print(f"\n{label}\n| case | atoms | wasm 1 thread s | wasm 2 threads s | packmol CPU s | packmol wall s | packmol CPU / wasm 1t | packmol wall / wasm 1t | packmol CPU / wasm 2t | quality (ours 1t; 2t; packmol) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case in sorted({k[0] for k in ours}, key=lambda c: (len(c) > 1, c)):
        one, two, p = ours.get((case, 1), []), ours.get((case, 2), []), pm.get(case, [])
        t1, t2 = med([x[0] for x in one]), med([x[0] for x in two])
        if case in ru:
            cpu, wall, mark = med([x[0] for x in ru[case]]), med([x[1] for x in ru[case]]), "†"
        else:
            cpu, wall, mark = med([x[0] for x in p]), med([x[1] for x in p]), ""
        q = lambda v: f"{sum(1 for x in v if x[1])}/{len(v)} pass" + (f", min d {min(x[2] for x in v if x[2] is not None):.3f}" if v and v[0][2] is not None else "")
        qp = f"{sum(1 for x in p if x[2])}/{len(p)} pass" if p else "-"
        atoms = one[0][3] if one else (two[0][3] if two else "-")
        print(f"| {case} | {atoms} | {t1:.5f} | {t2:.5f} | {cpu:.5f}{mark} | {wall:.5f}{mark} | {cpu / t1:.1f}× | {wall / t1:.1f}× | {cpu / t2:.1f}× | {q(one)}; {q(two)}; {qp} |")
    print("\n(† packmol's median over repeated runs of user + system CPU time from the reaped process's rusage, and spawn-to-reap"
          " wall time (packmol_small.py); otherwise /usr/bin/time's user and wall seconds, 10 ms ticks. Small cases: ours is"
          " the median of repeated offlineTools().call calls after warm-up calls (below), so it includes the Worker round trip (or, at most 200 atoms, the call on the page's thread); one thread, so its wall"
          " time bounds its CPU time.)")
    for (case, threads), (p10, p90, warmup, repeat, where) in sorted(spread.items()):
        place = "on the page's thread" if where == "page" else "through the Worker"
        print(f"{case} wasm {threads}t build: median of {repeat} calls {place} after {warmup} warm-up calls; p10 {p10:.5f} s, p90 {p90:.5f} s")
table("ours (this tree's pkg/)", *read_ours("ours.jsonl"))
if os.path.exists(os.path.join(out, "base.jsonl")):
    table(f"base ({os.environ.get('BASE_PKG')})", *read_ours("base.jsonl"))
print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
PY
