#!/usr/bin/env python3
"""Write the junction-length table of the offline polymer_chain (crates/chain/src/junction_lengths.rs).

Usage (RDKit from PyPI, pinned in scripts/rdkit-requirements.txt):
    python3 -m venv .venv-rdkit && .venv-rdkit/bin/pip install -r scripts/rdkit-requirements.txt
    .venv-rdkit/bin/python scripts/make_junction_lengths.py [--compounds 3000]

What it measures. A junction bond joins the tail atom of one repeat unit to the head atom of the
next, each having given up a hydrogen. Its length depends on the two atoms and their surroundings,
as MMFF94 (the reference server's force field) makes it: a C(=O)-O ester bond is 1.36 A where an
ether C-O is 1.42, a CH2-C(CH3)2R bond is 0.03 A longer than a CH2-CH2 one, a CF2-CH2 one 0.02
shorter. The script makes MODEL COMPOUNDS: two junction-like fragments joined by one single bond,
each a junction atom (sp3/sp2/sp C, amine/amide N, ether/ester O, thioether S, silane Si, aromatic
C or N) with a chain continuation and 0-2 side groups drawn from a fixed palette of groups that
polymers carry (seeded, so the set is the same on every run). Each is embedded with ETKDGv3 (4
conformers, randomSeed 0xC0FFEE) and MMFF94-optimised (maxIters 5000); the bond length of the
lowest-energy conformer is the measurement. The polymer repeat units of tests/fixtures/monomers
are NOT used: the table is fitted on the model compounds only, and the script prints how it does
on the fixture dimers afterwards, as a check it cannot tune on.

The rule (mirrored by crates/chain/src/junction.rs, which reads the table):
    length(A-B) = base[kA, kB]
                + sum over each end X of the substituents s of X (heavy neighbours other than the
                  partner):   shift[kX, class(s)] + pair_shift[kA, kB, kX, class(s)]
                + sum over each end X of the atoms two bonds out from X through a substituent that
                  are neither H nor C:   second[kX, element]
  kX, the junction atom's class in the joined chain: element and hybridisation (from its bonds'
  orders: a triple or two doubles sp, one double or an aromatic bond sp2, else sp3), "C2x" for an
  sp2 carbon double-bonded to a heteroatom outside a ring (carbonyl, imine, thiocarbonyl; not the
  C=N of a pyridine, whose Kekule structure is arbitrary), and a "c" suffix for an
  sp3 N, O or S bonded to an sp2 or sp atom (amide N, ester O, aryl ether O, ...). class(s): "C3",
  "C2", "C1" for carbon by hybridisation, else the element.
  The weights are a ridge least-squares fit (the penalty chosen by 5-fold cross-validation; base
  terms are not penalised). Pairs of classes the model compounds never made fall back in the code
  to the sum of covalent radii.

Junction angles. The same model compounds give the bond angle at each junction atom between the
junction and each of its heavy neighbours; the table keeps the medians by the end's class, the
other end's, the neighbour's and the order of its bond (Si-O-Si 140 degrees where Si-O-H is 117).

The measured compounds are cached in target/junction-model-compounds.json (delete it to measure
again; about 10 minutes on 2 cores for 3000 compounds).
"""
import argparse
import collections
import json
import os
import random
import sys

import numpy as np
from rdkit import Chem, RDLogger, rdBase
from rdkit.Chem import AllChem
from rdkit.Chem import rdForceFieldHelpers

from make_monomers import mapped  # the junction atoms of a mapped SMILES, one reading for both scripts

RDLogger.DisableLog("rdApp.*")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "crates", "chain", "src", "junction_lengths.rs")
CACHE = os.path.join(ROOT, "target", "junction-model-compounds.json")
MONOMERS = os.path.join(ROOT, "tests", "fixtures", "monomers")
SEED = 0xC0FFEE

# Chain continuations and side groups (SMILES attached by their first atom).
CHAIN = ["C", "CC", "CCC", "C(C)C", "CC(C)C", "C(F)(F)C", "CC(F)F", "CC(F)(F)F", "CCl", "CC(C)Cl", "CO",
         "CC(C)O", "CC(C)c1ccccc1", "CC(=O)OC", "CC(C)(C)C(=O)OC", "COC", "CCO", "C=C", "CC=C", "c1ccccc1",
         "C(=O)OC", "C(=O)NC", "OC", "OCC", "NC", "NC(=O)C", "OC(=O)C", "O[Si](C)(C)C", "[Si](C)(C)OC", "SC",
         "CSC"]
SIDE = ["C", "CC", "F", "Cl", "Br", "O", "OC", "N", "C#N", "C(=O)O", "C(=O)OC", "C(=O)N", "OC(=O)C",
        "c1ccccc1", "C=C", "C(F)(F)F", "C(C)(C)C", "S", "N1CCCC1=O", "c1ccccn1", "C=O", "NC(=O)C"]
# Junction atom kinds, weighted by how often polymers join through them.
KINDS = ["C3"] * 6 + ["C2"] * 3 + ["C2x"] * 3 + ["C1", "N3", "N3", "N2", "O3", "O3", "O3", "S3", "Si3", "Si3"]


def branches(groups):
    return "".join(f"({g})" for g in groups if g)


def fragment(rng, kind):
    """One junction atom with its surroundings; [*:1] is where the partner bonds."""
    chain = rng.choice(CHAIN)
    if kind == "C3":
        k = rng.choice([0, 0, 1, 1, 1, 2, 2])
        side = [rng.choice(SIDE) for _ in range(k)]
        if rng.random() < 0.15:
            side = ["F"] * k
        return "C([*:1])" + branches([chain] + side)
    if kind == "C2":
        r = rng.random()
        if r < 0.4:
            if rng.random() < 0.5:
                return "c1([*:1])ccc(" + rng.choice(["C", "C(=O)O", "O", "C(C)(C)C", "F"]) + ")cc1"
            return "c1([*:1])ccccc1"
        if r < 0.55:
            return "c1([*:1])cccs1"
        if r < 0.65:
            return "c1([*:1])ccccn1"
        return "C([*:1])(=C" + rng.choice(["", "C", "CC"]) + ")" + branches([rng.choice(["", chain, "C", "Cl"])])
    if kind == "C2x":
        return ("C([*:1])(=" + rng.choice(["O", "O", "O", "NC", "S"]) + ")"
                + branches([rng.choice([chain, chain, "c1ccccc1", "OC", "NC", ""])]))
    if kind == "C1":
        return "C([*:1])#" + rng.choice(["N", "C", "CC"])
    if kind == "N3":
        return "N([*:1])" + branches([chain, rng.choice(["", "", "C", "CC"])])
    if kind == "N2":
        return "n1([*:1])cccc1"
    if kind == "O3":
        return "O([*:1])" + branches([chain])
    if kind == "S3":
        return "S([*:1])" + branches([chain])
    if kind == "Si3":
        groups = [chain, rng.choice(["C", "C", "CC", "c1ccccc1", "", "OC"]), rng.choice(["C", "C", "", "OC"])]
        k = sum(1 for g in groups if g)
        return (f"[SiH{3 - k}]" if k < 3 else "[Si]") + "([*:1])" + branches(groups)
    raise KeyError(kind)


def model_compound(rng):
    """A model compound as SMILES with the two junction atoms mapped 1 and 2, or None."""
    a, b = Chem.MolFromSmiles(fragment(rng, rng.choice(KINDS))), Chem.MolFromSmiles(fragment(rng, rng.choice(KINDS)))
    if a is None or b is None:
        return None
    for mol, tag in ((a, 1), (b, 2)):
        for atom in mol.GetAtoms():
            if atom.GetAtomicNum() == 0:
                atom.GetNeighbors()[0].SetAtomMapNum(tag)
    try:
        joined = Chem.molzip(a, b)
        Chem.SanitizeMol(joined)
    except Exception:
        return None
    if joined.GetNumHeavyAtoms() > 30:
        return None
    return Chem.MolToSmiles(joined)


def mmff_measure(smiles):
    """The junction bond's length (A) and, at each end, its angle (degrees) with each of that
    end's heavy neighbours, in the lowest-energy of 4 MMFF94-optimised conformers; None when
    MMFF94 has no parameters or the embedding fails."""
    mol, a, b = mapped(smiles)
    mol = Chem.AddHs(mol)
    if not rdForceFieldHelpers.MMFFHasAllMoleculeParams(mol):
        return None
    params = AllChem.ETKDGv3()
    params.randomSeed = SEED
    ids = list(AllChem.EmbedMultipleConfs(mol, 4, params))
    if not ids:
        return None
    results = AllChem.MMFFOptimizeMoleculeConfs(mol, maxIters=5000)
    best = min(range(len(ids)), key=lambda i: results[i][1])
    p = mol.GetConformer(ids[best]).GetPositions()
    angles = []
    for end, (x, y) in enumerate(((a, b), (b, a))):
        for nb in mol.GetAtomWithIdx(x).GetNeighbors():
            if nb.GetIdx() != y and nb.GetAtomicNum() > 1:
                u, v = p[y] - p[x], p[nb.GetIdx()] - p[x]
                cos = np.dot(u, v) / np.linalg.norm(u) / np.linalg.norm(v)
                angles.append([end, nb.GetIdx(), float(np.degrees(np.arccos(np.clip(cos, -1, 1))))])
    return {"length": float(np.linalg.norm(p[a] - p[b])), "angles": angles}


def measured(count):
    data = []
    if os.path.exists(CACHE):
        with open(CACHE) as f:
            data = json.load(f)
        if len(data) >= count and all("angles" in d for d in data[:count]):
            return data[:count]
    rng = random.Random(1)
    seen = set()
    # Draw the same sequence as before, measuring again what the cache lacks.
    cached = {d["smiles"]: d for d in data if "angles" in d}
    data = []
    while len(data) < count:
        smiles = model_compound(rng)
        if smiles is None or smiles in seen:
            continue
        seen.add(smiles)
        m = cached.get(smiles) or mmff_measure(smiles)
        if m is None:
            continue
        data.append({"smiles": smiles, "length": m["length"], "angles": m["angles"]})
        if len(data) % 250 == 0:
            print(f"  {len(data)} model compounds", file=sys.stderr)
            os.makedirs(os.path.dirname(CACHE), exist_ok=True)
            with open(CACHE, "w") as f:
                json.dump(data, f)
    with open(CACHE, "w") as f:
        json.dump(data, f)
    return data


# ---- the rule (crates/chain/src/junction.rs mirrors this) ----

def hybridisation(atom):
    """From the orders of a kekulized molecule's bonds, as a V2000 mol block gives them."""
    doubles = sum(1 for b in atom.GetBonds() if b.GetBondTypeAsDouble() == 2)
    triples = sum(1 for b in atom.GetBonds() if b.GetBondTypeAsDouble() == 3)
    if triples or doubles >= 2:
        return 1
    if doubles:
        return 2
    return 3


def atom_class(atom):
    """The junction atom's class (its bonds in the joined chain)."""
    h = hybridisation(atom)
    symbol = atom.GetSymbol()
    if symbol == "C" and h == 2:
        for b in atom.GetBonds():
            if b.GetBondTypeAsDouble() == 2 and b.GetOtherAtom(atom).GetAtomicNum() != 6 and not b.IsInRing():
                return "C2x"
    if symbol in ("N", "O", "S") and h == 3 and any(hybridisation(n) < 3 for n in atom.GetNeighbors()):
        return f"{symbol}3c"
    return f"{symbol}{h}"


def substituent_class(atom):
    return f"C{hybridisation(atom)}" if atom.GetAtomicNum() == 6 else atom.GetSymbol()


def features(mol, a, b):
    """Counts of the rule's terms for the bond a-b of a kekulized molecule."""
    ka, kb = atom_class(mol.GetAtomWithIdx(a)), atom_class(mol.GetAtomWithIdx(b))
    pair = "|".join(sorted([ka, kb]))
    f = collections.Counter({("base", pair): 1})
    for x, kx, partner in ((a, ka, b), (b, kb, a)):
        atom = mol.GetAtomWithIdx(x)
        for s in atom.GetNeighbors():
            if s.GetIdx() == partner or s.GetAtomicNum() == 1:
                continue
            cls = substituent_class(s)
            f[("shift", kx, cls)] += 1
            f[("pair_shift", pair, kx, cls)] += 1
            for t in s.GetNeighbors():
                if t.GetIdx() != x and t.GetAtomicNum() not in (1, 6):
                    f[("second", kx, t.GetSymbol())] += 1
    return f


def design(rows, names=None):
    if names is None:
        names = sorted({k for r in rows for k in r}, key=str)
    index = {n: i for i, n in enumerate(names)}
    x = np.zeros((len(rows), len(names)))
    for i, r in enumerate(rows):
        for k, v in r.items():
            if k in index:
                x[i, index[k]] = v
    return x, names


def ridge(x, y, names, lam):
    penalty = np.diag([0.0 if n[0] == "base" else lam * (4.0 if n[0] == "pair_shift" else 1.0) for n in names])
    return np.linalg.lstsq(x.T @ x + penalty + 1e-9 * np.eye(len(names)), x.T @ y, rcond=None)[0]


def kekulized(smiles):
    mol, a, b = mapped(smiles)
    Chem.Kekulize(mol, clearAromaticFlags=True)
    return mol, a, b


def backbone_neighbour(unit, atom, target):
    """The neighbour of `atom` on a shortest way to `target` in the unit (lowest index on a tie),
    as crates/chain/src/unit.rs picks it."""
    d = Chem.GetDistanceMatrix(unit)
    return min(nb.GetIdx() for nb in unit.GetAtomWithIdx(atom).GetNeighbors()
               if d[nb.GetIdx(), target] + 1 == d[atom, target])


def fixture_junctions():
    """Per unit of tests/fixtures/monomers: name, set, the interior junction's features, its
    classes (tail, head), the classes of the tail's and the head's backbone neighbours, and the
    RDKit dimer's junction length."""
    path = os.path.join(MONOMERS, "monomers.json")
    if not os.path.exists(path):
        return []
    out = []
    for u in json.load(open(path))["units"]:
        unit = Chem.MolFromMolFile(os.path.join(MONOMERS, u["file"]), removeHs=False)
        # A tetramer's middle junction: both its units bonded on both sides, as inside a chain.
        n = unit.GetNumAtoms()
        rw = Chem.RWMol(Chem.CombineMols(Chem.CombineMols(Chem.CombineMols(unit, unit), unit), unit))
        h = lambda atom: next(x.GetIdx() for x in rw.GetAtomWithIdx(atom).GetNeighbors() if x.GetAtomicNum() == 1)
        joints = [(k * n + u["tail"], (k + 1) * n + u["head"]) for k in range(3)]
        gone = []
        for t, hd in joints:
            gone += [h(t), h(hd)]
            rw.AddBond(t, hd, Chem.BondType.SINGLE)
        for g in sorted(gone, reverse=True):
            rw.RemoveAtom(g)
        shift = lambda i: i - sum(1 for g in gone if g < i)
        mol = rw.GetMol()
        Chem.SanitizeMol(mol)
        Chem.Kekulize(mol, clearAromaticFlags=True)
        t, hd = shift(n + u["tail"]), shift(2 * n + u["head"])
        t_next = shift(n + backbone_neighbour(unit, u["tail"], u["head"]))
        h_next = shift(2 * n + backbone_neighbour(unit, u["head"], u["tail"]))
        classes = (atom_class(mol.GetAtomWithIdx(t)), atom_class(mol.GetAtomWithIdx(hd)))
        key = lambda x, y: (substituent_class(mol.GetAtomWithIdx(y)), angle_order(mol.GetBondBetweenAtoms(x, y)))
        nexts = (key(t, t_next), key(hd, h_next))
        out.append((u["name"], u["set"], features(mol, t, hd), classes, nexts, u["junction_length"]))
    return out


def angle_order(bond):
    """The bond's order as the angle table keys it: 1 for a bond in a ring (a Kekule structure's
    double bond is arbitrary), else its order."""
    return 1 if bond.IsInRing() else int(bond.GetBondTypeAsDouble())


def angle_table(data):
    """Median junction bond angle (degrees) at an end, between the junction and one of the end's
    neighbours: by (class of the end, class of the other end, class of the neighbour, order of
    its bond), with at least 2 measurements; by (class of the end, class of the neighbour, order)
    whatever the other end, with at least 3; by the two classes over singly bonded neighbours,
    with at least 3."""
    full, neighbour, pair = (collections.defaultdict(list) for _ in range(3))
    for d in data:
        mol, a, b = kekulized(d["smiles"])
        k = (atom_class(mol.GetAtomWithIdx(a)), atom_class(mol.GetAtomWithIdx(b)))
        for end, nb, angle in d["angles"]:
            x = a if end == 0 else b
            kx, ky = (k[0], k[1]) if end == 0 else (k[1], k[0])
            cls = substituent_class(mol.GetAtomWithIdx(nb))
            order = angle_order(mol.GetBondBetweenAtoms(x, nb))
            full[(kx, ky, cls, order)].append(angle)
            neighbour[(kx, cls, order)].append(angle)
            if order == 1:
                pair[(kx, ky)].append(angle)
    median = lambda table, least: {key: float(np.median(v)) for key, v in sorted(table.items()) if len(v) >= least}
    return median(full, 2), median(neighbour, 3), median(pair, 3)


def rule_angle(full, neighbour, pair, end, other, cls, order):
    if (end, other, cls, order) in full:
        return full[(end, other, cls, order)]
    if (end, cls, order) in neighbour:
        return neighbour[(end, cls, order)]
    return pair.get((end, other)) if order == 1 else None


def rust_table(weights, names, count, cv, angles):
    base, shift, pair_shift, second = [], [], [], []
    for n, w in zip(names, weights):
        if n[0] == "base":
            a, b = n[1].split("|")
            base.append(f"    ({a}, {b}, {w:.4f}),")
        elif abs(w) < 5e-5:
            continue
        elif n[0] == "shift":
            shift.append(f"    ({n[1]}, S::{n[2]}, {w:.4f}),")
        elif n[0] == "pair_shift":
            a, b = n[1].split("|")
            pair_shift.append(f"    ({a}, {b}, {n[2]}, S::{n[3]}, {w:.4f}),")
        else:
            second.append(f"    ({n[1]}, {Chem.GetPeriodicTable().GetAtomicNumber(n[2])}, {w:.4f}),")
    # Three entries a line, to keep the file short.
    rows = lambda r: "\n".join("    " + " ".join(e.strip() for e in r[i:i + 3]) for i in range(0, len(r), 3))
    full, neighbour, pair = angles
    angle_full = [f"    ({a}, {b}, S::{c}, {o}, {v:.1f})," for (a, b, c, o), v in full.items()]
    angle_neighbour = [f"    ({a}, S::{c}, {o}, {v:.1f})," for (a, c, o), v in neighbour.items()]
    angle_pair = [f"    ({a}, {b}, {v:.1f})," for (a, b), v in pair.items()]
    return f"""//! Junction-length table of `polymer_chain` (Å): WRITTEN BY scripts/make_junction_lengths.py,
//! do not edit. Fitted on {count} RDKit MMFF94-optimised model compounds (RDKit {rdBase.rdkitVersion});
//! cross-validated RMS error {cv:.4f} Å. The rule that reads it is [`super::junction`]'s.
#![allow(clippy::approx_constant)]

use super::classes::Class::{{self, *}};
use super::classes::Substituent as S;

/// (class of one end, class of the other, Å): the length before the shifts.
#[rustfmt::skip]
pub const BASE: &[(Class, Class, f32)] = &[
{rows(base)}
];

/// (class of the end, class of one of its substituents, Å per substituent).
#[rustfmt::skip]
pub const SHIFT: &[(Class, S, f32)] = &[
{rows(shift)}
];

/// (classes of the two ends, class of the end, class of its substituent, Å): the pair's own
/// correction to [`SHIFT`].
#[rustfmt::skip]
pub const PAIR_SHIFT: &[(Class, Class, Class, S, f32)] = &[
{rows(pair_shift)}
];

/// (class of the end, atomic number of a non-C, non-H atom two bonds out, Å per atom).
#[rustfmt::skip]
pub const SECOND: &[(Class, u8, f32)] = &[
{rows(second)}
];

/// (class of the end, class of the other end, class of the end's neighbour, order of their bond,
/// degrees): the bond angle at the end between the junction and that neighbour (median of the
/// model compounds).
#[rustfmt::skip]
pub const ANGLE: &[(Class, Class, S, u8, f32)] = &[
{rows(angle_full)}
];

/// (class of the end, class of the neighbour, order, degrees): the same whatever the other end.
#[rustfmt::skip]
pub const ANGLE_NEIGHBOUR: &[(Class, S, u8, f32)] = &[
{rows(angle_neighbour)}
];

/// (class of the end, class of the other end, degrees): the same over singly bonded neighbours.
#[rustfmt::skip]
pub const ANGLE_PAIR: &[(Class, Class, f32)] = &[
{rows(angle_pair)}
];
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compounds", type=int, default=3000)
    args = ap.parse_args()
    print("rdkit", rdBase.rdkitVersion, file=sys.stderr)
    data = measured(args.compounds)
    rows, y = [], []
    for d in data:
        mol, a, b = kekulized(d["smiles"])
        rows.append(features(mol, a, b))
        y.append(d["length"])
    y = np.array(y)
    x, names = design(rows)
    # 5-fold cross-validation of the penalty.
    folds = np.arange(len(y)) % 5
    best = None
    for lam in (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0):
        err = []
        for k in range(5):
            train, test = folds != k, folds == k
            w = ridge(x[train], y[train], names, lam)
            # Rows whose pair of classes the training part never saw fall back in the code.
            seen = np.array([n[0] != "base" or x[train, i].any() for i, n in enumerate(names)])
            test &= ~(x[:, ~seen] != 0).any(axis=1)
            err.append(x[test] @ w - y[test])
        rms = float(np.sqrt(np.mean(np.concatenate(err) ** 2)))
        print(f"  penalty {lam:g}: cross-validated RMS {rms:.4f} A", file=sys.stderr)
        if best is None or rms < best[1]:
            best = (lam, rms)
    w = ridge(x, y, names, best[0])
    fit = x @ w - y
    print(f"fit on {len(y)} model compounds: RMS {np.sqrt(np.mean(fit ** 2)):.4f} A, max {np.abs(fit).max():.4f} A; "
          f"cross-validated RMS {best[1]:.4f} A (penalty {best[0]:g})", file=sys.stderr)
    angles = angle_table(data)
    with open(OUT, "w") as f:
        f.write(rust_table(w, names, len(y), best[1], angles))
    print("wrote", os.path.relpath(OUT, ROOT), file=sys.stderr)
    # The check it cannot tune on: the fixture units' dimers.
    weight = dict(zip(names, w))
    predicted = {"length": {}, "tail_angle": {}, "head_angle": {}}
    for name, which, feats, (kt, kh), (nt, nh), reference in fixture_junctions():
        missing = [k for k in feats if k not in weight and k[0] == "base"]
        value = sum(weight.get(k, 0.0) * v for k, v in feats.items())
        predicted["length"][name] = round(value, 4)
        for key, a in (("tail_angle", rule_angle(*angles, kt, kh, *nt)), ("head_angle", rule_angle(*angles, kh, kt, *nh))):
            if a is not None:
                predicted[key][name] = round(a, 1)
        flag = "  NO BASE " + str(missing) if missing else ""
        print(f"  {name:18s} {which:5s} dimer {reference:.4f}  rule {value:.4f}  {value - reference:+.4f}{flag}",
              file=sys.stderr)
    if predicted["length"]:
        with open(os.path.join(MONOMERS, "junction_rule.json"), "w") as f:
            json.dump({"note": "the rule's length (A) and backbone bond angles (degrees) of each unit's junction inside "
                               "a chain, for the Rust-Python agreement test; written by scripts/make_junction_lengths.py",
                       **predicted}, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
