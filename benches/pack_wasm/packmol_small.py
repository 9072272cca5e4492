#!/usr/bin/env python3
"""packmol on the wasm benches' small cases, through ../shared/tools/packmol_bench.py itself.

packmol_bench.py knows only the baseline cases a-g; this adds the tiny and small-solvate boxes of
benches/pack_wasm/cases.mjs by giving packmol_bench its case table (its own a-g plus these) and
running its main(), so input files, timing (/usr/bin/time -v), RSS and the check_packing.py
verdict are exactly the baseline's:
  t5w  5 water @ 1.00 g/cm3
  t5c  5 chloroform @ 1.00
  sala alanine dipeptide fixed at the centre of a 20 A cell + water @ 1.00 in the free volume
  stst testosterone fixed at the centre of a 24 A cell + water @ 1.00 in the free volume
(free volume and water count as packmol_bench's case e: the cell minus the solute's vdW spheres).

Then each case's packmol input is run again --repeat times (default 10) in a scratch copy of its
directory, without /usr/bin/time, to time packmol finer than time's 10 ms tick: its CPU time is the
user + system time the kernel returns for the reaped process (os.wait4's rusage, microseconds), its
wall time spawn to reap. The medians go to DIR/rusage.jsonl ({case, seed, runs, cpu_s, user_s,
sys_s, wall_s}); a tiny case's packmol runs for a few milliseconds, mostly its process start.

Usage: packmol_small.py --packmol BIN --out DIR --cases t5w,t5c,sala,stst [--seeds 1] [--repeat 10]
Needs numpy (check_packing.py). Results go to DIR/results.jsonl like packmol_bench.py's.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
TOOLS = os.path.join(ROOT, "..", "shared", "tools")
sys.path.insert(0, TOOLS)
import check_packing as cp  # noqa: E402
import packmol_bench as pb  # noqa: E402

MOLECULE_DIRS = [os.path.join(ROOT, "..", "shared", "fixtures", "molecules"), os.path.join(ROOT, "tests", "fixtures")]
EXTRA = ["chloroform", "alanine_dipeptide", "testosterone"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packmol", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", default="t5w,t5c,sala,stst")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--repeat", type=int, default=10)
    a = ap.parse_args()
    # One directory with every molecule packmol_bench reads (it takes a single --molecules dir).
    mol_dir = tempfile.mkdtemp(prefix="packmol-small-")
    for d in MOLECULE_DIRS:
        for f in os.listdir(d):
            if f.endswith(".mol") and not os.path.exists(os.path.join(mol_dir, f)):
                os.symlink(os.path.abspath(os.path.join(d, f)), os.path.join(mol_dir, f))
    baseline = pb.case_defs

    def case_defs(mols):
        cases = baseline(mols)
        for name in EXTRA:
            mols[name] = cp.read_mol(os.path.join(mol_dir, name + ".mol"))
        w = pb.mol_mass(mols["water"])

        def side(mass, rho):
            return round((mass / (rho * pb.NA)) ** (1.0 / 3.0), 4)

        cases["t5w"] = dict(comps=[("water", 5)], rho=1.0, L=side(5 * w, 1.0))
        cases["t5c"] = dict(comps=[("chloroform", 5)], rho=1.0, L=side(5 * pb.mol_mass(mols["chloroform"]), 1.0))
        import numpy as np
        for key, solute, L in (("sala", "alanine_dipeptide", 20.0), ("stst", "testosterone", 24.0)):
            t = mols[solute]
            cell = np.diag([L, L, L])
            pos = t["positions"] - t["positions"].mean(axis=0) + L / 2
            vfree = L ** 3 - cp.vdw_volume(pos, t["elements"], cell, spacing=0.1)
            cases[key] = dict(comps=[("water", int(round(vfree * pb.NA / w)))], rho=1.0, L=L, fixed=solute, vfree=vfree)
        return cases

    pb.case_defs = case_defs
    sys.argv = [pb.__file__, "--packmol", a.packmol, "--mode", "pbc", "--out", a.out, "--cases", a.cases,
                "--seeds", a.seeds, "--molecules", mol_dir]
    pb.main()
    for case in a.cases.split(","):
        for seed in a.seeds.split(","):
            rec = rusage_runs(a.packmol, os.path.join(a.out, case, f"seed{seed}"), a.repeat)
            rec.update(case=case, seed=int(seed))
            with open(os.path.join(a.out, "rusage.jsonl"), "a") as f:
                f.write(json.dumps(rec) + "\n")
            print(f"rusage {case} seed {seed}: cpu {rec['cpu_s'] * 1e3:.2f} ms (user {rec['user_s'] * 1e3:.2f}, "
                  f"sys {rec['sys_s'] * 1e3:.2f}), wall {rec['wall_s'] * 1e3:.2f} ms, median of {rec['runs']}", flush=True)


def rusage_runs(packmol, case_dir, repeat):
    """packmol on case_dir's input.inp `repeat` times in a scratch copy: medians of the reaped
    process's user, system and user + system time (os.wait4) and of spawn-to-reap wall time."""
    scratch = tempfile.mkdtemp(prefix="packmol-rusage-")
    try:
        for f in os.listdir(case_dir):
            if (f.endswith(".xyz") and f != "out.xyz") or f == "input.inp":
                shutil.copy(os.path.join(case_dir, f), scratch)
        user, system, wall = [], [], []
        for _ in range(repeat):
            with open(os.path.join(scratch, "input.inp")) as fi:
                t0 = time.perf_counter()
                p = subprocess.Popen([packmol], stdin=fi, stdout=subprocess.DEVNULL, cwd=scratch)
                _, status, ru = os.wait4(p.pid, 0)
                wall.append(time.perf_counter() - t0)
                p.returncode = os.waitstatus_to_exitcode(status)
            if p.returncode != 0:
                raise SystemExit(f"packmol failed (rc {p.returncode}) in {scratch}")
            user.append(ru.ru_utime)
            system.append(ru.ru_stime)
        cpu = [u + s for u, s in zip(user, system)]
        med = statistics.median
        return dict(runs=repeat, cpu_s=med(cpu), user_s=med(user), sys_s=med(system), wall_s=med(wall))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
