#!/usr/bin/env python3
"""Make the polymer repeat units of tests/fixtures/monomers and their dimers' junction references.

Usage (RDKit from PyPI, pinned in scripts/rdkit-requirements.txt):
    python3 -m venv .venv-rdkit && .venv-rdkit/bin/pip install -r scripts/rdkit-requirements.txt
    .venv-rdkit/bin/python scripts/make_monomers.py

Each repeat unit is given as a SMILES in which atom map 1 marks the head atom and atom map 2 the
tail atom (the atoms that bond to the previous and the next unit, each giving up one hydrogen), as
a user of the reference server's `polymer_chain` picks them. The unit is made as the project's
other molecules were (tests/fixtures/README.md): Chem.AddHs, ETKDGv3 embedding with randomSeed
0xC0FFEE, MMFF94 optimisation (maxIters 2000), centred on the mean of its atoms, written with
Chem.MolToMolBlock (V2000). Heavy atoms keep the SMILES order, so head and tail are their indices.

The reference for the junction is a dimer of the unit made with RDKit: two copies joined tail to
head, each giving up one hydrogen (the chain ends keep theirs), embedded with ETKDGv3 (10
conformers, randomSeed 0xC0FFEE) and MMFF94-optimised (maxIters 5000); the junction bond length,
the two bond-angle means at the junction atoms and the angle at each between the junction and the
atom's backbone neighbour (its neighbour on the way to the unit's other junction atom) of the
lowest-energy conformer are recorded, with the spread of the length over the conformers. Written to monomers.json (sorted keys, so a
re-run with the same RDKit gives the same bytes).

`set` is "issue" for the 20 units issue 32 names and "extra" for further units whose junctions
are of other kinds (aryl, thio, silyl, carbonate, conjugated); neither set is used to make the
junction-length table (scripts/make_junction_lengths.py fits it on small model compounds only).
"""
import json
import os
import sys

import numpy as np
from rdkit import Chem, rdBase
from rdkit.Chem import AllChem

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "monomers")
SEED = 0xC0FFEE

# name, SMILES (head = map 1, tail = map 2), set, what the unit is
UNITS = [
    ("polyethylene", "[CH3:1][CH3:2]", "issue", "ethane: -CH2-CH2-"),
    ("polypropylene", "[CH3:1][CH2:2]C", "issue", "propane: -CH2-CH(CH3)-"),
    ("polystyrene", "[CH3:1][CH2:2]c1ccccc1", "issue", "ethylbenzene: -CH2-CH(C6H5)-"),
    ("pvc", "[CH3:1][CH2:2]Cl", "issue", "chloroethane: -CH2-CHCl-"),
    ("pmma", "[CH3:1][CH:2](C)C(=O)OC", "issue",
     "methyl isobutyrate, head on a CH3 carbon, tail on the CH that becomes quaternary: -CH2-C(CH3)(COOCH3)-"),
    ("peo", "[CH3:1]C[OH:2]", "issue", "ethanol, head C, tail O: -CH2-CH2-O-"),
    ("pva", "[CH3:1][CH2:2]O", "issue", "ethanol, head CH3, tail CH2: -CH2-CH(OH)-"),
    ("pan", "[CH3:1][CH2:2]C#N", "issue", "propionitrile: -CH2-CH(CN)-"),
    ("ptfe", "[CH:1](F)(F)[CH:2](F)F", "issue", "1,1,2,2-tetrafluoroethane: -CF2-CF2-"),
    ("pvdf", "[CH3:1][CH:2](F)F", "issue", "1,1-difluoroethane: -CH2-CF2-"),
    ("pla", "[OH:1][C@@H](C)[CH:2]=O", "issue",
     "(S)-lactaldehyde, head O, tail the aldehyde C: -O-CH(CH3)-C(=O)- (ester junctions, L units)"),
    ("pcl", "[OH:1]CCCCC[CH:2]=O", "issue", "6-hydroxyhexanal: -O-(CH2)5-C(=O)- (ester junctions)"),
    ("pvac", "[CH3:1][CH2:2]OC(C)=O", "issue", "ethyl acetate: -CH2-CH(OCOCH3)-"),
    ("paa", "[CH3:1][CH2:2]C(=O)O", "issue", "propanoic acid: -CH2-CH(COOH)-"),
    ("pdms", "[SiH:1](C)(C)[OH:2]", "issue", "dimethylsilanol, head Si, tail O: -Si(CH3)2-O-"),
    ("cis-polyisoprene", "[CH3:1]/C(C)=C\\[CH3:2]", "issue",
     "2-methylbut-2-ene, head and tail the two CH3 cis across the double bond: -CH2-C(CH3)=CH-CH2- (cis-1,4)"),
    ("polybutadiene", "[CH3:1]/C=C\\[CH3:2]", "issue", "cis-but-2-ene: -CH2-CH=CH-CH2- (cis-1,4)"),
    ("pet", "[CH3:1]OC(=O)c1ccc(cc1)C(=O)O[CH3:2]", "issue",
     "dimethyl terephthalate, head and tail the two methyl carbons: -CH2-O-C(=O)-C6H4-C(=O)-O-CH2- (the glycol C-C bond is the junction)"),
    ("nylon-6", "[NH2:1]CCCCC[CH:2]=O", "issue", "6-aminohexanal: -NH-(CH2)5-C(=O)- (amide junctions)"),
    ("polyacrylamide", "[CH3:1][CH2:2]C(N)=O", "issue", "propanamide: -CH2-CH(CONH2)-"),
    ("polyisobutylene", "[CH3:1][CH:2](C)C", "extra", "isobutane: -CH2-C(CH3)2-"),
    ("pma", "[CH3:1][CH2:2]C(=O)OC", "extra", "methyl propanoate: -CH2-CH(COOCH3)-"),
    ("pmaa", "[CH3:1][CH:2](C)C(=O)O", "extra", "isobutyric acid: -CH2-C(CH3)(COOH)-"),
    ("pvf", "[CH3:1][CH2:2]F", "extra", "fluoroethane: -CH2-CHF-"),
    ("pvdc", "[CH3:1][CH:2](Cl)Cl", "extra", "1,1-dichloroethane: -CH2-CCl2-"),
    ("ppo", "[CH3:1]C(C)[OH:2]", "extra", "propan-2-ol, head a CH3, tail O: -CH2-CH(CH3)-O-"),
    ("pom", "[CH3:1][OH:2]", "extra", "methanol, head C, tail O: -CH2-O-"),
    ("ptmo", "[CH3:1]CCC[OH:2]", "extra", "butan-1-ol: -(CH2)4-O-"),
    ("pei", "[CH3:1]C[NH2:2]", "extra", "ethylamine, head C, tail N: -CH2-CH2-NH-"),
    ("pes", "[CH3:1]C[SH:2]", "extra", "ethanethiol, head C, tail S: -CH2-CH2-S-"),
    ("pps", "[cH:1]1ccc([SH:2])cc1", "extra", "thiophenol, head the para CH: -C6H4-S-"),
    ("ppe", "[cH:1]1ccc([OH:2])cc1", "extra", "phenol, head the para CH: -C6H4-O-"),
    ("polythiophene", "[cH:1]1cc[cH:2]s1", "extra", "thiophene, head C2, tail C5: -C4H2S-"),
    ("polyacetylene", "[CH2:1]=[CH2:2]", "extra", "ethylene, head and tail its two carbons: -CH=CH-"),
    ("polychloroprene", "[CH3:1]/C(Cl)=C/[CH3:2]", "extra",
     "2-chlorobut-2-ene, CH3 trans across the double bond: -CH2-CCl=CH-CH2- (trans-1,4)"),
    ("pvp", "[CH3:1][CH2:2]N1CCCC1=O", "extra", "N-ethylpyrrolidone: -CH2-CH(NC4H6O)-"),
    ("p2vp", "[CH3:1][CH2:2]c1ccccn1", "extra", "2-ethylpyridine: -CH2-CH(C5H4N)-"),
    ("pga", "[OH:1]C[CH:2]=O", "extra", "glycolaldehyde: -O-CH2-C(=O)- (ester junctions)"),
    ("pet-ester-cut", "[OH:1]CCOC(=O)c1ccc(cc1)[CH:2]=O", "extra",
     "2-hydroxyethyl 4-formylbenzoate: -O-CH2-CH2-O-C(=O)-C6H4-C(=O)- (ester junctions; no hydrogen to choose at either end, so every torsion but the junction's is the unit's own: a stiff chain)"),
    ("pc", "[OH:1]c1ccc(cc1)C(C)(C)c1ccc(cc1)O[CH:2]=O", "extra",
     "bisphenol A formate, head the phenol O, tail the formate C: -O-C6H4-C(CH3)2-C6H4-O-C(=O)- (carbonate junctions)"),
    ("pams", "[CH3:1][CH:2](C)c1ccccc1", "extra", "cumene: -CH2-C(CH3)(C6H5)- (poly(alpha-methylstyrene))"),
    ("ptbma", "[CH3:1][CH:2](C)C(=O)OC(C)(C)C", "extra", "tert-butyl isobutyrate: -CH2-C(CH3)(COOC(CH3)3)-"),
    ("ppo-dimethyl", "[OH:2]c1c(C)c[cH:1]cc1C", "extra",
     "2,6-dimethylphenol, head the para CH, tail O: -C6H2(CH3)2-O- (poly(2,6-dimethyl-1,4-phenylene oxide), a diaryl ether)"),
    ("nylon-66", "[NH2:1]CCCCCCNC(=O)CCCC[CH:2]=O", "extra",
     "N-(6-aminohexyl)-5-formylpentanamide, the hexamethylenediamine-adipic unit, head the amine N, tail the aldehyde C: "
     "-NH-(CH2)6-NH-C(=O)-(CH2)4-C(=O)- (amide junctions; a long unit, embedded all-trans)"),
]


def mapped(smiles):
    """The molecule of a SMILES with atom maps 1 and 2 (maps cleared) and those two atoms' indices
    (also used by make_junction_lengths.py)."""
    mol = Chem.MolFromSmiles(smiles)
    ends = {}
    for atom in mol.GetAtoms():
        if atom.GetAtomMapNum():
            ends[atom.GetAtomMapNum()] = atom.GetIdx()
            atom.SetAtomMapNum(0)
    return mol, ends[1], ends[2]


def unit(smiles):
    """The unit with explicit H and its head and tail indices (maps cleared)."""
    mol, head, tail = mapped(smiles)
    return Chem.AddHs(mol), head, tail


def embed(mol, n, seed=SEED):
    params = AllChem.ETKDGv3()
    params.randomSeed = seed
    ids = list(AllChem.EmbedMultipleConfs(mol, n, params))
    if not ids:
        raise RuntimeError("embedding failed for " + Chem.MolToSmiles(mol))
    return ids


def made_unit(smiles):
    mol, head, tail = unit(smiles)
    embed(mol, 1)
    AllChem.MMFFOptimizeMolecule(mol, maxIters=2000)
    conf = mol.GetConformer()
    pos = conf.GetPositions()
    pos -= pos.mean(axis=0)
    for i, p in enumerate(pos):
        conf.SetAtomPosition(i, p.tolist())
    return mol, head, tail


def backbone_neighbour(unit, atom, target):
    """The neighbour of `atom` on a shortest way to `target` (lowest index on a tie)."""
    d = Chem.GetDistanceMatrix(unit)
    return min(nb.GetIdx() for nb in unit.GetAtomWithIdx(atom).GetNeighbors()
               if d[nb.GetIdx(), target] + 1 == d[atom, target])


def dimer(mol, head, tail):
    """Two copies joined tail (first) to head (second); each gives up one hydrogen. Returns the
    dimer, the junction's tail and head, and their backbone neighbours."""
    n = mol.GetNumAtoms()
    both = Chem.RWMol(Chem.CombineMols(Chem.Mol(mol, confId=-1), Chem.Mol(mol)))
    both.RemoveAllConformers()

    def hydrogen(atom):
        return next(nb.GetIdx() for nb in both.GetAtomWithIdx(atom).GetNeighbors() if nb.GetAtomicNum() == 1)

    gone = sorted([hydrogen(tail), hydrogen(head + n)], reverse=True)
    both.AddBond(tail, head + n, Chem.BondType.SINGLE)
    for h in gone:
        both.RemoveAtom(h)
    shift = lambda i: i - sum(1 for g in gone if g < i)
    out = both.GetMol()
    Chem.SanitizeMol(out)
    return (out, shift(tail), shift(head + n), shift(backbone_neighbour(mol, tail, head)),
            shift(n + backbone_neighbour(mol, head, tail)))


def angle(p, a, b, c):
    u, v = p[a] - p[b], p[c] - p[b]
    return float(np.degrees(np.arccos(np.dot(u, v) / np.linalg.norm(u) / np.linalg.norm(v))))


def junction_reference(mol, head, tail):
    d, t, h, t_next, h_next = dimer(mol, head, tail)
    ids = embed(d, 10)
    results = AllChem.MMFFOptimizeMoleculeConfs(d, maxIters=5000)
    lengths, energies = [], []
    for cid, (_, energy) in zip(ids, results):
        p = d.GetConformer(cid).GetPositions()
        lengths.append(float(np.linalg.norm(p[t] - p[h])))
        energies.append(energy)
    best = int(np.argmin(energies))
    p = d.GetConformer(ids[best]).GetPositions()
    at_tail = [angle(p, nb.GetIdx(), t, h) for nb in d.GetAtomWithIdx(t).GetNeighbors() if nb.GetIdx() != h]
    at_head = [angle(p, t, h, nb.GetIdx()) for nb in d.GetAtomWithIdx(h).GetNeighbors() if nb.GetIdx() != t]
    return {
        "dimer_smiles": Chem.MolToSmiles(Chem.RemoveHs(d)),
        "junction_length": round(lengths[best], 4),
        "junction_length_min": round(min(lengths), 4),
        "junction_length_max": round(max(lengths), 4),
        "tail_angles_mean": round(float(np.mean(at_tail)), 2),
        "head_angles_mean": round(float(np.mean(at_head)), 2),
        "tail_backbone_angle": round(angle(p, t_next, t, h), 2),
        "head_backbone_angle": round(angle(p, t, h, h_next), 2),
    }


def main():
    print("rdkit", rdBase.rdkitVersion, file=sys.stderr)
    records = []
    for name, smiles, which, what in UNITS:
        mol, head, tail = made_unit(smiles)
        mol.SetProp("_Name", name)
        with open(os.path.join(HERE, name + ".mol"), "w") as f:
            f.write(Chem.MolToMolBlock(mol))
        ref = junction_reference(mol, head, tail)
        records.append({"name": name, "file": name + ".mol", "smiles": smiles, "set": which,
                        "unit": what, "head": head, "tail": tail, "atoms": mol.GetNumAtoms(), **ref})
        print(f"{name:18s} head {head:2d} tail {tail:2d} junction {ref['junction_length']:.4f} Å "
              f"({ref['junction_length_min']:.4f}-{ref['junction_length_max']:.4f})", file=sys.stderr)
    out = {"rdkit": rdBase.rdkitVersion, "units": records}
    with open(os.path.join(HERE, "monomers.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
