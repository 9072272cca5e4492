#!/usr/bin/env bash
# Side-by-side packing benchmark, natively: ours (crates/pack), molpack 0.4.0 (a dev-dependency,
# same process) and packmol 21.2.3 (PyPI wheel, pbc mode, run by the project's driver
# benches/support/packmol.rs), interleaved round by round on the same boxes, every result judged
# by the project's judge (pairs below the tolerance, rigid copies, S_max over the molecule centres
# against issue 32's line, <P2>/<P4>). `cargo bench --bench pack` prints the table; see its header
# for the cases and the environment.
#
# Usage: scripts/bench-pack.sh [CASES] [SEEDS] [ROUNDS]    e.g. scripts/bench-pack.sh a,b,c,d,e 1 3
#   CASES default a,b,c,d,e (add f for 100 000 water: packmol needs ~200 s, molpack ~50 s;
#   t5w,t5c,sala,stst for the small cases).
#   Env: ENGINES (default ours,molpack,packmol); RAYON_NUM_THREADS limits our threads (CPU seconds
#   count every thread); PYTHON: the interpreter whose `packmol` package gives the binary (default
#   python3; `pip install packmol==21.2.3`), or PACKMOL=path.
#   BASE=<git revision> (e.g. main) also runs that revision's packer (its own `cargo bench --bench
#   pack`, ours only, from `git archive` under target/) in every round, between ours and the peers, and
#   judges its boxes with this tree's judge: what a change cost, measured in the same run.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cases="${1:-a,b,c,d,e}"
seeds="${2:-1}"
rounds="${3:-3}"
out="$here/target/bench-pack/run-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
echo "== load: $(uptime)"
cd "$here"
cargo build -q --release --example pack_judge
if [ -n "${BASE:-}" ]; then
    # The revision's files (git archive: no worktree is registered), built in a target of its own.
    base_src="$here/target/bench-base-src"
    rm -rf "$base_src" && mkdir -p "$base_src"
    git archive "$BASE" | tar -x -C "$base_src"
    echo "== base $BASE at $(git rev-parse --short "$BASE")"
fi
for round in $(seq 1 "$rounds"); do
    echo "== round $round: ours + peers (cargo bench --bench pack) -> $out"
    PACK_BENCH_CASES="$cases" PACK_BENCH_SEEDS="$seeds" PACK_BENCH_ROUNDS=1 PACK_BENCH_OUT="$out" \
        PACK_BENCH_ENGINES="${ENGINES:-ours,molpack,packmol}" cargo bench -q --bench pack --features molpack-peer | tee -a "$out/tables.md"
    if [ -n "${BASE:-}" ]; then
        echo "== round $round: base $BASE (its own bench, ours only)"
        (cd "$base_src" && CARGO_TARGET_DIR="$here/target/bench-base" PACK_BENCH_CASES="$cases" \
            PACK_BENCH_SEEDS="$seeds" PACK_BENCH_OUT="$out/base" PACK_BENCH_MOLPACK=0 PACK_BENCH_REPEAT=1 \
            PACK_CHECKER=/dev/null cargo bench -q --bench pack) > "$out/base-round$round.log" 2>&1 || true
    fi
done

python3 - "$out" "$here/target/release/examples/pack_judge" <<'PY'
import json, os, statistics, subprocess, sys
out, judge = sys.argv[1], sys.argv[2]
runs = {}
for line in open(os.path.join(out, "results.jsonl")):
    r = json.loads(line)
    runs.setdefault((r["case"], r["seed"]), {}).setdefault(r["engine"], []).append(r)
base = {}
bpath = os.path.join(out, "base", "results.jsonl")
if os.path.exists(bpath):
    for line in open(bpath):
        r = json.loads(line)
        if r.get("engine") == "ours":
            # A revision before getrusage timed by schedstat, which reads 0 on a tiny box: its wall
            # time there (one thread) bounds its CPU time.
            base.setdefault((r["case"], r["seed"]), []).append(r["cpu_s"] or r["wall_s"])
med = lambda v: statistics.median(v) if v else float("nan")
def judged(case, seed, engine):
    for r in runs.get((case, seed), {}).get(engine, []):
        if r.get("check"):
            return r["check"]
    return {}
def base_check(case, seed):
    f = os.path.join(out, "base", f"{case}_s{seed}_ours.json")
    if not os.path.exists(f):
        return {}
    fixed = os.path.join(out, f"{case}_fixed.json")
    args = [judge, f] + (["--fixed", fixed] if os.path.exists(fixed) else [])
    p = subprocess.run(args, capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        return {}
print("\nMedians over all rounds (CPU s: user + system, every thread). S_max: the largest S(k) over the molecule centres;")
print("line: issue 32's 3 ln(32 N) + 10; P2/P4: the largest |<P2>|, |<P4>| of a species of >= 500 copies.\n")
cols = ["ours", "molpack", "packmol"] + (["base"] if base else [])
print("| case | " + " | ".join(f"{c} cpu s" for c in cols) + " | molpack/ours | packmol/ours | " + (" base/ours |" if base else "")
      + " S_max " + " / ".join(cols) + " | line | P2/P4 " + " / ".join(cols) + " | pass " + " / ".join(cols) + " |")
print("|" + "---|" * (len(cols) * 4 + 4 + (1 if base else 0)))
for (case, seed), eng in sorted(runs.items()):
    cpu = {e: med([r["cpu_s"] for r in eng.get(e, [])]) for e in ["ours", "molpack", "packmol"]}
    checks = {e: judged(case, seed, e) for e in ["ours", "molpack", "packmol"]}
    if base:
        cpu["base"] = med(base.get((case, seed), []))
        checks["base"] = base_check(case, seed)
    o = cpu["ours"]
    f = lambda c, k, fmt="{:.1f}": (fmt.format(c[k]) if isinstance(c.get(k), (int, float)) and not isinstance(c.get(k), bool) else str(c.get(k, "-")))
    line = next((c["s_threshold"] for c in checks.values() if "s_threshold" in c), float("nan"))
    print(f"| {case} s{seed} | " + " | ".join(f"{cpu[c]:.5f}" for c in cols)
          + f" | {cpu['molpack'] / o:.1f}x | {cpu['packmol'] / o:.1f}x | " + (f"{cpu['base'] / o:.2f}x | " if base else "")
          + " / ".join(f(checks[c], "s_max") for c in cols) + f" | {line:.1f} | "
          + " / ".join(f(checks[c], "orientation_worst", "{:.2f}") for c in cols) + " | "
          + " / ".join(f(checks[c], "pass") for c in cols) + " |")
print("\nload average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
PY
