//! Residue names and numbers, and atom names, for the formats that need them (PDB, GROMACS
//! `.gro`): the structure's own when it carries them (§5.1 `residueNames`, `residueIds`,
//! `atomNames`; residue numbers from `molecules` when there are names but no numbers), else one
//! residue per molecule (bonded group of atoms), named `UNL` (the PDB's
//! "unknown ligand"), numbered from 1 in the order of their first atoms.

use super::elements::symbol;
use super::structure::Structure;

/// Per-atom labels a writer puts in its columns.
pub struct Labels {
    /// Residue name per atom (as given; each writer cuts it to its columns).
    pub residue_names: Vec<String>,
    /// Residue number per atom.
    pub residue_ids: Vec<i64>,
    /// Atom name per atom: the structure's, else the element symbol and its 1-based count within
    /// the residue (`C1`, `H3`).
    pub atom_names: Vec<String>,
}

/// The labels of `s` (a validated structure).
pub fn labels(s: &Structure) -> Labels {
    let n = s.n_atoms();
    let (residue_names, residue_ids) = match &s.residue_names {
        Some(names) => {
            let names: Vec<String> = names.iter().map(|x| x.trim().to_string()).collect();
            let ids = s
                .residue_ids
                .clone()
                .or_else(|| {
                    let molecules = s.molecules.as_ref()?;
                    Some(molecules.iter().map(|&m| i64::from(m) + 1).collect())
                })
                .unwrap_or_else(|| numbered_runs(&names));
            (names, ids)
        }
        None => {
            let molecule = molecules(n, &s.bonds);
            (vec!["UNL".to_string(); n], molecule)
        }
    };
    let atom_names = match &s.atom_names {
        Some(names) => names.iter().map(|x| x.trim().to_string()).collect(),
        None => {
            let mut out = Vec::with_capacity(n);
            let mut counts: Vec<(u8, usize)> = Vec::new();
            for i in 0..n {
                if i == 0 || residue_ids[i] != residue_ids[i - 1] {
                    counts.clear();
                }
                let z = s.elements[i];
                let k = match counts.iter_mut().find(|(e, _)| *e == z) {
                    Some((_, k)) => {
                        *k += 1;
                        *k
                    }
                    None => {
                        counts.push((z, 1));
                        1
                    }
                };
                out.push(format!("{}{k}", symbol(z).unwrap_or("X")));
            }
            out
        }
    };
    Labels {
        residue_names,
        residue_ids,
        atom_names,
    }
}

/// Residue numbers from names alone: a new number wherever the name changes.
fn numbered_runs(names: &[String]) -> Vec<i64> {
    let mut id = 0;
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            if i == 0 || names[i - 1] != *name {
                id += 1;
            }
            id
        })
        .collect()
}

/// 1-based molecule number per atom: the bonded groups, numbered in the order of their first atom.
fn molecules(n: usize, bonds: &[[u32; 2]]) -> Vec<i64> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for &[a, b] in bonds {
        let (ra, rb) = (root(&mut parent, a as usize), root(&mut parent, b as usize));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    let mut number = vec![0i64; n];
    let mut next = 0;
    for i in 0..n {
        let r = root(&mut parent, i);
        if r == i {
            next += 1;
            number[i] = next;
        } else {
            number[i] = number[r];
        }
    }
    number
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn molecules_become_residues_with_numbered_atom_names() {
        let s = Structure {
            elements: vec![8, 1, 1, 8, 1, 1],
            positions: vec![0.0; 18],
            bonds: vec![[0, 1], [0, 2], [3, 5], [3, 4]],
            ..Structure::default()
        };
        let l = labels(&s);
        assert_eq!(l.residue_ids, vec![1, 1, 1, 2, 2, 2]);
        assert_eq!(l.residue_names, vec!["UNL"; 6]);
        assert_eq!(l.atom_names, ["O1", "H1", "H2", "O1", "H1", "H2"]);
    }

    #[test]
    fn the_structure_s_own_residues_are_kept() {
        let s = Structure {
            elements: vec![6, 6, 6],
            positions: vec![0.0; 9],
            residue_names: Some(["PETH", "PETH", "SOL"].as_slice().into()),
            ..Structure::default()
        };
        let l = labels(&s);
        assert_eq!(l.residue_ids, vec![1, 1, 2]);
        assert_eq!(l.residue_names, ["PETH", "PETH", "SOL"]);
    }
}
