#!/usr/bin/env bash
# Packing in wasm (headless Chromium, offline tools' Worker; 1 thread and 2 threads) on the baseline
# cases and the small ones (t5w, t5c: 5 water, 5 chloroform; sala, stst: small solvates, see
# benches/pack_wasm/cases.mjs), packmol 21.2.3 on the same cases in the same run
# (benches/pack_wasm/packmol_small.py for the small ones), every output judged by
# ../shared/tools/check_packing.py. Prints a table of seconds and ratios.
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

echo "== ours in wasm (Chromium) -> $out"
node benches/pack_wasm/run.mjs "$out" "$cases" "$seeds" | tee "$out/ours.jsonl"

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
ours = {}
for line in open(os.path.join(out, "ours.jsonl")):
    r = json.loads(line)
    if "error" in r:
        print("ours failed:", r); continue
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
    ours.setdefault((r["case"], r["threads"]), []).append((r["ms"] / 1000, ok, c.get("min_intermolecular_distance"), r["atoms"]))
pm = {}
path = os.path.join(out, "packmol", "results.jsonl")
if os.path.exists(path):
    for line in open(path):
        r = json.loads(line); c = r.get("check") or {}
        ok = c.get("pairs_below_tolerance") == 0 and c.get("non_rigid_molecules", 1) == 0
        # /usr/bin/time counts 10 ms ticks: a tiny run shows 0.00 user s, so its wall time is used
        # (an upper bound of its CPU time; marked * in the table).
        # When even the wall time reads 0.00 (a tiny case), the process's wall time as Python
        # measured it (spawn, start, run, exit) is the figure left; marked ** in the table.
        user, wall = r.get("user_s", float("nan")), r.get("wall_s", float("nan"))
        if user and user >= 0.05:
            pm.setdefault(r["case"], []).append((user, ok, ""))
        elif wall and wall > 0:
            pm.setdefault(r["case"], []).append((wall, ok, "*"))
        else:
            pm.setdefault(r["case"], []).append((r.get("wall_py_s", float("nan")), ok, "**"))
med = lambda v: statistics.median(v) if v else float("nan")
print("\n| case | atoms | wasm 1 thread s | wasm 2 threads s | packmol user s | packmol / wasm 1t | packmol / wasm 2t | quality (ours 1t; 2t; packmol) |")
print("|---|---|---|---|---|---|---|---|")
for case in sorted({k[0] for k in ours}, key=lambda c: (len(c) > 1, c)):
    one, two, p = ours.get((case, 1), []), ours.get((case, 2), []), pm.get(case, [])
    t1, t2, tp = med([x[0] for x in one]), med([x[0] for x in two]), med([x[0] for x in p])
    q = lambda v: f"{sum(1 for x in v if x[1])}/{len(v)} pass" + (f", min d {min(x[2] for x in v if x[2] is not None):.3f}" if v and v[0][2] is not None else "")
    qp = f"{sum(1 for x in p if x[1])}/{len(p)} pass" if p else "-"
    atoms = one[0][3] if one else (two[0][3] if two else "-")
    star = max((x[2] for x in p), default="", key=len)
    print(f"| {case} | {atoms} | {t1:.4f} | {t2:.4f} | {tp:.3f}{star} | {tp / t1:.1f}× | {tp / t2:.1f}× | {q(one)}; {q(two)}; {qp} |")
print("\n(* packmol's wall time: its user time is below /usr/bin/time's 10 ms resolution; ** both read 0.00, so the"
      " process's wall time as Python measured it: spawn, start, run and exit. Small cases: median of 15 warm calls"
      " through the Worker, so ours includes the Worker round trip.)")
PY
