//! Chemistry primitives: the element table, mol blocks (V2000, V3000), the structure files the
//! demo page opens and saves (extended XYZ, PDB, mol / SD, GROMACS `.gro`), and bonds perceived
//! from distances.

pub mod bonds;
pub mod column;
pub mod elements;
pub mod gro;
pub mod mol_file;
pub mod molblock;
pub mod pdb;
pub mod read;
pub mod residues;
pub mod structure;
pub mod v3000;
pub mod xyz;
