#!/usr/bin/env bash
# Packing in wasm (headless Chromium, offline tools' Worker; 1 thread and 2 threads) on the baseline
# cases, packmol 21.2.3 on the same cases in the same run, every output judged by
# ../shared/tools/check_packing.py. Prints a table of seconds and ratios.
# Usage: scripts/bench-pack-wasm.sh [CASES] [SEEDS]    (default a,b,c,d,e and seed 1; add f for 100 000 water)
# Env: SKIP_PACKMOL=1 skips packmol. Needs numpy and packmol==21.2.3 from PyPI for the peers.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
shared="$root/../shared"
cases="${1:-a,b,c,d,e}"
seeds="${2:-1}"
out="$root/artifacts/bench-pack-wasm/run-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
[ -f pkg/threads/megane_builder_client_bg.wasm ] || bash scripts/build.sh
python3 -c "import numpy" 2>/dev/null || pip install -q numpy
(cd tests/node && [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error)

echo "== ours in wasm (Chromium) -> $out"
node benches/pack_wasm/run.mjs "$out" "$cases" "$seeds" | tee "$out/ours.jsonl"

if [ "${SKIP_PACKMOL:-0}" != 1 ]; then
  pm_bin="$(python3 -c 'from packmol.cli import get_binary_path; print(get_binary_path())' 2>/dev/null || true)"
  if [ -z "$pm_bin" ] || [ ! -x "$pm_bin" ]; then pip install -q packmol==21.2.3; pm_bin="$(python3 -c 'from packmol.cli import get_binary_path; print(get_binary_path())')"; fi
  echo "== packmol ($pm_bin)"
  python3 "$shared/tools/packmol_bench.py" --packmol "$pm_bin" --mode pbc --out "$out/packmol" \
      --cases "$cases" --seeds "$seeds" --molecules "$shared/fixtures/molecules" > "$out/packmol.log" 2>&1 || true
fi

python3 - "$out" "$shared" <<'PY'
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
        pm.setdefault(r["case"], []).append((r.get("user_s", float("nan")), ok))
med = lambda v: statistics.median(v) if v else float("nan")
print("\n| case | atoms | wasm 1 thread s | wasm 2 threads s | packmol user s | packmol / wasm 1t | quality (ours 1t; 2t; packmol) |")
print("|---|---|---|---|---|---|---|")
for case in sorted({k[0] for k in ours}):
    one, two, p = ours.get((case, 1), []), ours.get((case, 2), []), pm.get(case, [])
    t1, t2, tp = med([x[0] for x in one]), med([x[0] for x in two]), med([x[0] for x in p])
    q = lambda v: f"{sum(1 for x in v if x[1])}/{len(v)} pass" + (f", min d {min(x[2] for x in v if x[2] is not None):.3f}" if v and v[0][2] is not None else "")
    qp = f"{sum(1 for x in p if x[1])}/{len(p)} pass" if p else "-"
    atoms = one[0][3] if one else (two[0][3] if two else "-")
    print(f"| {case} | {atoms} | {t1:.3f} | {t2:.3f} | {tp:.2f} | {tp / t1:.0f}× | {q(one)}; {q(two)}; {qp} |")
PY
