//! The Structure as data: a structure of arrays (elements, positions, cell, bonds and the
//! per-atom channels), the shape of the contract's §5.1 Structure, its wire names (camelCase) and
//! its JSON writing. The chemistry files read into it and are written from it ([`super::xyz`],
//! [`super::pdb`], [`super::gro`], [`super::mol_file`]); the §5.1 rules (`validate`) and its
//! reader from the wire are the contract's (`contract::structure`), which re-exports it.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;

use megane_structure_scan::checks;
use serde::Serialize;

use super::column::StringColumn;

/// §5.1 Structure. N is `elements.len()`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Structure {
    /// Atomic numbers 1–118, length N.
    pub elements: Vec<u8>,
    /// Cartesian positions in Å, flat `[x0, y0, z0, x1, …]`, length 3N.
    pub positions: Vec<f64>,
    /// Row-major lattice vectors `[ax, ay, az, bx, by, bz, cx, cy, cz]` in Å; `None` (`null`) for
    /// a non-periodic structure.
    pub cell: Option<[f64; 9]>,
    /// 0-based atom index pairs, each bond once.
    pub bonds: Vec<[u32; 2]>,
    /// Parallel to `bonds`: 1, 2, 3 or 4 (aromatic); absent means all single.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bond_orders: Option<Vec<u8>>,
    /// Per-atom 0-based molecule index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub molecules: Option<Vec<u32>>,
    /// Per-atom residue name (dictionary-encoded: a few names repeated over many atoms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub residue_names: Option<StringColumn>,
    /// Per-atom residue number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub residue_ids: Option<Vec<i64>>,
    /// Per-atom atom name (dictionary-encoded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atom_names: Option<StringColumn>,
    /// Per-atom chain id, exactly one character each.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_ids: Option<Vec<String>>,
    /// Per-atom formal charge in units of e.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub formal_charges: Option<Vec<i32>>,
    /// Named per-atom numeric channels Megane does not render yet, each of length N (kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scalars: Option<BTreeMap<String, Vec<f64>>>,
    /// The scan's facts about these columns, when the scan read this Structure while its body
    /// streamed in (`read::read_placed`); not part of the value.
    #[serde(skip)]
    pub scanned: ScanFacts,
}

/// The scan's [`checks::Facts`] carried by the Structure they sum up, so that they go wherever it
/// goes and are dropped with it (issue 10), and taken by its first [`Structure::validate`], the
/// check right after the read. Not part of the value: equal whatever they hold, not cloned, not
/// serialized.
#[derive(Default)]
pub struct ScanFacts(Cell<Option<Box<checks::Facts>>>);

impl ScanFacts {
    /// Carrying `facts`.
    pub(crate) fn holding(facts: checks::Facts) -> ScanFacts {
        ScanFacts(Cell::new(Some(Box::new(facts))))
    }

    /// The facts, once: the first §5.1 check takes them.
    pub(crate) fn take(&self) -> Option<Box<checks::Facts>> {
        self.0.take()
    }
}

impl Clone for ScanFacts {
    fn clone(&self) -> Self {
        ScanFacts::default()
    }
}

impl PartialEq for ScanFacts {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for ScanFacts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ScanFacts")
    }
}

impl Structure {
    /// Number of atoms N.
    pub fn n_atoms(&self) -> usize {
        self.elements.len()
    }

    /// Position of atom `i` in Å, when it exists.
    pub fn position(&self, i: usize) -> Option<[f64; 3]> {
        let p = self.positions.get(3 * i..3 * i + 3)?;
        Some([p[0], p[1], p[2]])
    }
}

impl From<megane_structure_scan::Scanned> for Structure {
    fn from(s: megane_structure_scan::Scanned) -> Structure {
        let column = |c: megane_structure_scan::Column| StringColumn {
            table: c.table,
            index: c.index,
        };
        Structure {
            elements: s.elements,
            positions: s.positions,
            cell: s.cell,
            bonds: s.bonds,
            bond_orders: s.bond_orders,
            molecules: s.molecules,
            residue_names: s.residue_names.map(column),
            residue_ids: s.residue_ids,
            atom_names: s.atom_names.map(column),
            chain_ids: s.chain_ids,
            formal_charges: s.formal_charges,
            scalars: s.scalars,
            scanned: ScanFacts::default(),
        }
    }
}
