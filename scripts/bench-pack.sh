#!/usr/bin/env bash
# Side-by-side packing benchmark: ours (src/pack) and molpack 0.4.0 (in the same
# `cargo bench` process) and packmol 21.2.3 (PyPI wheel, pbc mode, driven by
# ../shared/tools/packmol_bench.py), on the baseline cases, every result judged
# by ../shared/tools/check_packing.py. Prints a table of CPU (user) seconds and ratios.
#
# Usage: scripts/bench-pack.sh [CASES] [SEEDS]      e.g. scripts/bench-pack.sh a,b,c,d,e 1,2,3
#   CASES default a,b,c,d,e (add f for 100 000 water: packmol needs ~200 s, molpack ~50 s)
#   Env: PACK_BENCH_MOLPACK=0 skips molpack; SKIP_PACKMOL=1 skips packmol;
#        RAYON_NUM_THREADS limits our threads (CPU seconds count every thread).
# Needs: python3 with numpy (pip install numpy), packmol==21.2.3 (pip install packmol==21.2.3).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
shared="${PACK_SHARED:-$here/../shared}"
cases="${1:-a,b,c,d,e}"
seeds="${2:-1}"
out="$here/target/bench-pack/run-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"

python3 -c "import numpy" 2>/dev/null || { echo "numpy missing: pip install numpy" >&2; exit 2; }

echo "== ours + molpack (cargo bench --bench pack) -> $out"
(cd "$here" && PACK_BENCH_CASES="$cases" PACK_BENCH_SEEDS="$seeds" PACK_BENCH_OUT="$out" \
    PACK_CHECKER="$shared/tools/check_packing.py" PACK_MOLECULES="$shared/fixtures/molecules" \
    cargo bench --bench pack)

if [ "${SKIP_PACKMOL:-0}" != 1 ]; then
    pm_bin="$(python3 -c 'from packmol.cli import get_binary_path; print(get_binary_path())' 2>/dev/null || true)"
    if [ -z "$pm_bin" ] || [ ! -x "$pm_bin" ]; then
        echo "packmol 21.2.3 not found: pip install packmol==21.2.3" >&2
        exit 2
    fi
    echo "== packmol ($pm_bin)"
    python3 "$shared/tools/packmol_bench.py" --packmol "$pm_bin" --mode pbc --out "$out/packmol" \
        --cases "$cases" --seeds "$seeds" --molecules "$shared/fixtures/molecules"
fi

python3 - "$out" <<'PY'
import json, os, statistics, sys
out = sys.argv[1]
rows = {}
def add(case, engine, cpu, ok, mind, pairs):
    rows.setdefault(case, {}).setdefault(engine, []).append((cpu, ok, mind, pairs))
for line in open(os.path.join(out, "results.jsonl")):
    r = json.loads(line)
    c = r.get("check") or {}
    add(r["case"], r["engine"], r["cpu_s"], bool(c.get("pass")), c.get("min_intermolecular_distance"), c.get("pairs_below_tolerance"))
pm = os.path.join(out, "packmol", "results.jsonl")
if os.path.exists(pm):
    for line in open(pm):
        r = json.loads(line)
        c = r.get("check") or {}
        ok = c.get("pairs_below_tolerance") == 0 and c.get("non_rigid_molecules", 1) == 0
        add(r["case"], "packmol", r.get("user_s", float("nan")), ok, c.get("min_intermolecular_distance"), c.get("pairs_below_tolerance"))
def med(v):
    return statistics.median(v) if v else float("nan")
def q(v):
    if not v:
        return "-"
    return f"{sum(1 for x in v if x[1])}/{len(v)} ok, min d {min((x[2] for x in v if x[2] is not None), default=float('nan')):.3f}, max pairs<tol {max((x[3] or 0) for x in v)}"
print()
print("| case | ours cpu s | molpack cpu s | packmol user s | molpack/ours | packmol/ours | ours quality | molpack quality | packmol quality |")
print("|---|---|---|---|---|---|---|---|---|")
for case in sorted(rows):
    e = rows[case]
    o = med([x[0] for x in e.get("ours", [])])
    m = med([x[0] for x in e.get("molpack", [])])
    p = med([x[0] for x in e.get("packmol", [])])
    # ours is averaged over repeats (bench PACK_BENCH_REPEAT); floor at 1 ms for the ratios
    of = max(o, 0.001)
    print(f"| {case} | {o:.3f} | {m:.2f} | {p:.2f} | {m/of:.1f}x | {p/of:.1f}x | {q(e.get('ours'))} | {q(e.get('molpack'))} | {q(e.get('packmol'))} |")
PY
