//! What the scan makes: a Structure's members as typed columns ([`Scanned`]), and what it found in
//! a `tools/call` answer ([`CallScan`]).

use std::collections::BTreeMap;

/// A dictionary-encoded per-atom string column: entry `i` is `table[index[i]]`, each distinct
/// string once, in order of first appearance.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Column {
    /// Distinct strings in order of first appearance.
    pub table: Vec<String>,
    /// Per entry, its position in `table`.
    pub index: Vec<u32>,
}

/// The fields of a §5.1 Structure as read from its JSON text, before the cross-field checks.
/// Ranges that belong to one value are already enforced (atomic numbers 1–118, bond orders 1–4,
/// indices ≥ 0 and < 2³², formal charges in `i32`, finite numbers, a cell of nine numbers).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scanned {
    /// Atomic numbers, length N.
    pub elements: Vec<u8>,
    /// Positions in Å, flat `[x0, y0, z0, x1, …]`.
    pub positions: Vec<f64>,
    /// Row-major lattice vectors in Å, or `None` for `null`.
    pub cell: Option<[f64; 9]>,
    /// 0-based atom index pairs.
    pub bonds: Vec<[u32; 2]>,
    /// Bond orders 1–4, parallel to `bonds`.
    pub bond_orders: Option<Vec<u8>>,
    /// Per-atom 0-based molecule index.
    pub molecules: Option<Vec<u32>>,
    /// Per-atom residue names.
    pub residue_names: Option<Column>,
    /// Per-atom residue numbers.
    pub residue_ids: Option<Vec<i64>>,
    /// Per-atom atom names.
    pub atom_names: Option<Column>,
    /// Per-atom chain ids (not checked for length here).
    pub chain_ids: Option<Vec<String>>,
    /// Per-atom formal charges in e.
    pub formal_charges: Option<Vec<i32>>,
    /// Named per-atom number channels.
    pub scalars: Option<BTreeMap<String, Vec<f64>>>,
}

/// What [`scan_call`] found in a response body.
pub enum CallScan {
    /// The Structure, read, and its byte range in the body.
    Read(Box<Scanned>, std::ops::Range<usize>),
    /// A Structure at `structuredContent.structure` that the scanner declines.
    Declined,
    /// No Structure there (a plain result, a tool error, a BuilderResult in a text item), or a
    /// body the walk does not step through.
    Absent,
}
