#!/usr/bin/env bash
# Side-by-side packing benchmark: ours (crates/pack) and molpack 0.4.0 (in the same
# `cargo bench` process) and packmol 21.2.3 (PyPI wheel, pbc mode, driven by
# ../shared/tools/packmol_bench.py), on the baseline cases, every result judged
# by ../shared/tools/check_packing.py. Prints a table of CPU (user) seconds and ratios.
# The small cases of the wasm bench (t5w, t5c: 5 water, 5 chloroform; sala, stst: small
# solvates) run packmol through benches/pack_wasm/packmol_small.py, whose CPU time is the
# kernel's rusage of repeated runs (microseconds; /usr/bin/time reads 0.00 there).
#
# Usage: scripts/bench-pack.sh [CASES] [SEEDS]      e.g. scripts/bench-pack.sh a,b,c,d,e 1,2,3
#   CASES default a,b,c,d,e (add f for 100 000 water: packmol needs ~200 s, molpack ~50 s;
#   t5w,t5c,sala,stst for the small cases)
#   Env: PACK_BENCH_MOLPACK=0 skips molpack; SKIP_PACKMOL=1 skips packmol;
#        RAYON_NUM_THREADS limits our threads (CPU seconds count every thread).
# Needs: python3 with numpy (pip install numpy), packmol==21.2.3 (pip install packmol==21.2.3);
#   PYTHON: the interpreter that has them (default python3).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
shared="${PACK_SHARED:-$here/../shared}"
cases="${1:-a,b,c,d,e}"
seeds="${2:-1}"
out="$here/target/bench-pack/run-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"

py="${PYTHON:-python3}"
"$py" -c "import numpy" 2>/dev/null || { echo "numpy missing: pip install numpy" >&2; exit 2; }
echo "== load: $(uptime)"

echo "== ours + molpack (cargo bench --bench pack) -> $out"
(cd "$here" && PACK_BENCH_CASES="$cases" PACK_BENCH_SEEDS="$seeds" PACK_BENCH_OUT="$out" \
    PACK_CHECKER="$shared/tools/check_packing.py" PACK_MOLECULES="$shared/fixtures/molecules" \
    cargo bench --bench pack)

if [ "${SKIP_PACKMOL:-0}" != 1 ]; then
    pm_bin="$("$py" -c 'from packmol.cli import get_binary_path; print(get_binary_path())' 2>/dev/null || true)"
    if [ -z "$pm_bin" ] || [ ! -x "$pm_bin" ]; then
        echo "packmol 21.2.3 not found: pip install packmol==21.2.3" >&2
        exit 2
    fi
    echo "== packmol ($pm_bin)"
    base_cases="$(echo "$cases" | tr ',' '\n' | grep -E '^[a-g]$' | paste -sd, || true)"
    small_cases="$(echo "$cases" | tr ',' '\n' | grep -vE '^[a-g]$' | paste -sd, || true)"
    if [ -n "$base_cases" ]; then
        "$py" "$shared/tools/packmol_bench.py" --packmol "$pm_bin" --mode pbc --out "$out/packmol" \
            --cases "$base_cases" --seeds "$seeds" --molecules "$shared/fixtures/molecules"
    fi
    if [ -n "$small_cases" ]; then
        "$py" "$here/benches/pack_wasm/packmol_small.py" --packmol "$pm_bin" --out "$out/packmol" \
            --cases "$small_cases" --seeds "$seeds"
    fi
fi

"$py" - "$out" <<'PY'
import json, os, statistics, sys
out = sys.argv[1]
rows = {}
def add(case, engine, cpu, ok, mind, pairs):
    rows.setdefault(case, {}).setdefault(engine, []).append((cpu, ok, mind, pairs))
for line in open(os.path.join(out, "results.jsonl")):
    r = json.loads(line)
    c = r.get("check") or {}
    add(r["case"], r["engine"], r["cpu_s"], bool(c.get("pass")), c.get("min_intermolecular_distance"), c.get("pairs_below_tolerance"))
ru = {}
if os.path.exists(os.path.join(out, "packmol", "rusage.jsonl")):
    for line in open(os.path.join(out, "packmol", "rusage.jsonl")):
        r = json.loads(line)
        ru.setdefault(r["case"], []).append(r["cpu_s"])
pm = os.path.join(out, "packmol", "results.jsonl")
if os.path.exists(pm):
    for line in open(pm):
        r = json.loads(line)
        c = r.get("check") or {}
        ok = c.get("pairs_below_tolerance") == 0 and c.get("non_rigid_molecules", 1) == 0
        # Small cases: the median CPU time of packmol_small.py's repeated runs (rusage).
        cpu = statistics.median(ru[r["case"]]) if r["case"] in ru else r.get("user_s", float("nan"))
        add(r["case"], "packmol", cpu, ok, c.get("min_intermolecular_distance"), c.get("pairs_below_tolerance"))
def med(v):
    return statistics.median(v) if v else float("nan")
def q(v):
    if not v:
        return "-"
    return f"{sum(1 for x in v if x[1])}/{len(v)} ok, min d {min((x[2] for x in v if x[2] is not None), default=float('nan')):.3f}, max pairs<tol {max((x[3] or 0) for x in v)}"
print()
print("| case | ours cpu s | molpack cpu s | packmol cpu s | molpack/ours | packmol/ours | ours quality | molpack quality | packmol quality |")
print("|---|---|---|---|---|---|---|---|---|")
for case in sorted(rows):
    e = rows[case]
    o = med([x[0] for x in e.get("ours", [])])
    m = med([x[0] for x in e.get("molpack", [])])
    p = med([x[0] for x in e.get("packmol", [])])
    # ours is averaged over repeats (bench PACK_BENCH_REPEAT), CPU time in ns (schedstat)
    of = max(o, 1e-6)
    print(f"| {case} | {o:.5f} | {m:.5f} | {p:.4f} | {m/of:.1f}x | {p/of:.1f}x | {q(e.get('ours'))} | {q(e.get('molpack'))} | {q(e.get('packmol'))} |")
print("\nload average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
PY
