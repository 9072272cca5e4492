#!/usr/bin/env python3
"""Reads the golden structure files the package wrote (tests/fixtures/golden, issue 33) with RDKit,
ASE and gemmi, each where it reads the format, and checks that they find the same atoms (elements
in order, positions within the format's precision), the same cell and the same bonds as the
structures the files were written from (box.json, water340.json beside them, and caffeine.mol of
the fixtures). Prints one line `<file>: <peer> ok` per check that passed; exits 1 on the first
difference. Usage: read_golden.py GOLDEN_DIR CAFFEINE_MOL (run by tests/structure_files.rs)."""
import json
import sys
from pathlib import Path

import ase.io
import gemmi
import numpy as np
from rdkit import Chem, RDLogger
from rdkit.Chem import rdDetermineBonds

RDLogger.DisableLog("rdApp.*")
golden = Path(sys.argv[1])
failures = []


def source(name):
    s = json.loads((golden / name).read_text())
    s["positions"] = np.array(s["positions"], dtype=float).reshape(-1, 3)
    s["bonds"] = sorted(tuple(sorted(b)) for b in s["bonds"])
    return s


def caffeine():
    """The caffeine fixture, read by RDKit itself (what the package wrote it from)."""
    mol = Chem.MolFromMolFile(sys.argv[2], removeHs=False, sanitize=False)
    return {
        "elements": [a.GetAtomicNum() for a in mol.GetAtoms()],
        "positions": mol.GetConformer().GetPositions(),
        "cell": None,
        "bonds": sorted(tuple(sorted((b.GetBeginAtomIdx(), b.GetEndAtomIdx()))) for b in mol.GetBonds()),
        "orders": {tuple(sorted((b.GetBeginAtomIdx(), b.GetEndAtomIdx()))): int(b.GetBondTypeAsDouble()) for b in mol.GetBonds()},
    }


def check(file, peer, expected, elements, positions, tolerance, cell=None, bonds=None, orders=None):
    """Compares what `peer` read from `file` with the source; cell and bonds when given."""
    problems = []
    if list(elements) != list(expected["elements"]):
        problems.append("elements differ")
    else:
        worst = float(np.max(np.abs(np.asarray(positions, dtype=float) - expected["positions"])))
        if worst > tolerance:
            problems.append(f"a position differs by {worst:.2e} Å (> {tolerance})")
    if cell is not None:
        want = np.zeros((3, 3)) if expected["cell"] is None else np.array(expected["cell"], dtype=float).reshape(3, 3)
        if np.max(np.abs(np.asarray(cell, dtype=float).reshape(3, 3) - want)) > 1e-3:
            problems.append(f"cell {np.asarray(cell).ravel().tolist()} instead of {want.ravel().tolist()}")
    if bonds is not None and sorted(bonds) != expected["bonds"]:
        problems.append(f"{len(bonds)} bonds instead of {len(expected['bonds'])}, or other bonds")
    if orders is not None and orders != expected["orders"]:
        problems.append("bond orders differ")
    if problems:
        failures.append(f"{file}: {peer}: " + "; ".join(problems))
        print(f"{file}: {peer} FAILED: " + "; ".join(problems))
    else:
        print(f"{file}: {peer} ok")


def rdkit_bonds(mol):
    return [tuple(sorted((b.GetBeginAtomIdx(), b.GetEndAtomIdx()))) for b in mol.GetBonds()]


def rdkit_atoms(mol):
    return [a.GetAtomicNum() for a in mol.GetAtoms()], mol.GetConformer().GetPositions()


def read_rdkit_pdb(path):
    mol = Chem.MolFromPDBFile(str(path), removeHs=False, sanitize=False, proximityBonding=False)
    return mol


def gemmi_pdb(path):
    st = gemmi.read_structure(str(path))
    atoms = [a for residue in st[0][0] for a in residue] if len(st[0]) == 1 else [a for ch in st[0] for r in ch for a in r]
    serial = {a.serial: k for k, a in enumerate(atoms)}
    bonds = set()
    for a, partners in st.conect_map.items():
        for b in partners:
            bonds.add(tuple(sorted((serial[a], serial[b]))))
    cell = st.cell
    return [a.element.atomic_number for a in atoms], [a.pos.tolist() for a in atoms], cell, sorted(bonds)


def cell_matrix(a, b, c, alpha, beta, gamma):
    """a along x, b in the xy plane (the PDB convention)."""
    al, be, ga = np.radians([alpha, beta, gamma])
    cx = c * np.cos(be)
    cy = c * (np.cos(al) - np.cos(be) * np.cos(ga)) / np.sin(ga)
    return np.array([[a, 0, 0], [b * np.cos(ga), b * np.sin(ga), 0], [cx, cy, np.sqrt(c * c - cx * cx - cy * cy)]])


box = source("box.json")
water = source("water340.json")
caf = caffeine()

# Extended XYZ: ASE (atoms, cell); RDKit (atoms, and its own bond perception finds the same bonds).
atoms = ase.io.read(golden / "box.xyz", format="extxyz")
check("box.xyz", "ASE", box, atoms.numbers, atoms.positions, 1e-6, cell=atoms.cell.array)
mol = Chem.MolFromXYZFile(str(golden / "box.xyz"))
rdDetermineBonds.DetermineConnectivity(mol)
check("box.xyz", "RDKit", box, *rdkit_atoms(mol), 1e-6, bonds=rdkit_bonds(mol))

# PDB: RDKit (atoms, CONECT bonds), ASE (atoms, CRYST1 cell), gemmi (atoms, cell, CONECT bonds).
for name, expected in (("box.pdb", box), ("caffeine.pdb", caf)):
    mol = read_rdkit_pdb(golden / name)
    check(name, "RDKit", expected, *rdkit_atoms(mol), 5e-4 + 1e-9, bonds=rdkit_bonds(mol))
    elements, positions, cell, bonds = gemmi_pdb(golden / name)
    matrix = cell_matrix(cell.a, cell.b, cell.c, cell.alpha, cell.beta, cell.gamma) if expected["cell"] else np.zeros((3, 3))
    check(name, "gemmi", expected, elements, positions, 5e-4 + 1e-9, cell=matrix, bonds=bonds)
atoms = ase.io.read(golden / "box.pdb", format="proteindatabank")
check("box.pdb", "ASE", box, atoms.numbers, atoms.positions, 5e-4 + 1e-9, cell=atoms.cell.array)

# mol: RDKit, V2000 (the box, caffeine with its bond orders) and V3000 (1 020 atoms).
for name, expected in (("box.mol", box), ("caffeine.mol", caf), ("water340.mol", water)):
    mol = Chem.MolFromMolFile(str(golden / name), removeHs=False, sanitize=False)
    orders = {b: o for b, o in zip(rdkit_bonds(mol), (int(b.GetBondTypeAsDouble()) for b in mol.GetBonds()))} if name == "caffeine.mol" else None
    check(name, "RDKit", expected, *rdkit_atoms(mol), 5e-5 + 1e-9, bonds=rdkit_bonds(mol), orders=orders)

# GROMACS .gro: ASE (atoms from the atom names, the box); 4 decimals of nm in the standard 8 columns.
atoms = ase.io.read(golden / "box.gro", format="gromacs")
check("box.gro", "ASE", box, atoms.numbers, atoms.positions, 5e-4 + 1e-9, cell=atoms.cell.array)

if failures:
    sys.exit(1)
