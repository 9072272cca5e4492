//! §5.2 apply plans: how a validated result enters the document.
//!
//! `new_document` → a [`Snapshot`] in Megane's shape (typed arrays on the JavaScript side) plus
//! labels, a sanitised file name and every other channel. `insert` → the edit ops Builder replays
//! (`set_cell` when the cell changes, then one `add_fragment`) and the indices to select.
//!
//! Choices where the contract is silent:
//! - File names: Megane Builder's own rule ([`sanitise_file_name`]), so a document is named the
//!   same whichever client made it.
//! - `add_fragment` carries `bondOrders` whenever the result gives them (even all 1): the op
//!   carries what the tool asserted, as Builder's own apply path does.
//! - A result without a cell never pushes `set_cell` (the document keeps its cell).
//! - Chain ids become char codes; a chain id above U+00FF cannot be a `Uint8Array` entry and is
//!   refused.
//! - An insert result that repeats the document (an atom within 0.1 Å of a document atom,
//!   minimum image in the document's cell) is refused. A singular document cell is treated as no
//!   cell for this check.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::ops::Index;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::marker::{Apply, Marker};
use super::result::{check_contract, BuilderResult, CheckedResult, FALLBACK_NAME};
use super::structure::{StringColumn, Structure};
use crate::wire::text::excerpt;

/// §5.2: two cells whose components differ by at most this (Å) are the same cell.
pub const CELL_TOLERANCE: f64 = 1e-4;
/// §5.2 / §10: an inserted atom this close (Å) to a document atom repeats the document.
pub const REPEAT_DISTANCE: f64 = 0.1;
/// Longest sanitised file name, in characters.
pub const MAX_FILE_NAME: usize = 64;
/// Longest fragment id stem, in characters.
pub const MAX_FRAGMENT_STEM: usize = 24;

/// §5.2: what the host does with a result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum ApplyPlan<'a> {
    /// Open the snapshot as a new document (`openStructure`).
    NewDocument(Box<Snapshot<'a>>),
    /// Push the ops as one step, then select the new atoms.
    Insert(InsertPlan),
}

/// §5.2 `new_document`: the result in Megane's Snapshot shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot<'a> {
    /// Number of atoms N.
    pub n_atoms: usize,
    /// Number of bonds B.
    pub n_bonds: usize,
    /// Cartesian Å, flat `[x0, y0, z0, …]`, length 3N (Float32Array).
    pub positions: Vec<f32>,
    /// Atomic numbers, length N (Uint8Array).
    pub elements: Cow<'a, [u8]>,
    /// Flat 0-based pairs `[i0, j0, i1, j1, …]`, length 2B (Uint32Array).
    pub bonds: Cow<'a, [u32]>,
    /// Parallel to the bonds (Uint8Array), or null for all single.
    pub bond_orders: Option<Cow<'a, [u8]>>,
    /// Row-major 3×3 cell in Å (Float32Array(9)), or null.
    #[serde(rename = "box")]
    pub box_: Option<[f32; 9]>,
    /// Per-atom chain id char codes (Uint8Array), or null.
    pub atom_chain_ids: Option<Vec<u8>>,
    /// Per-atom labels: `RESNAME<resid>` when residue ids are given, else the residue name
    /// (built only when read).
    pub labels: Option<Labels<'a>>,
    /// Sanitised document file name (no extension).
    pub file_name: String,
    /// Per-atom 0-based molecule index, kept.
    pub molecules: Option<Cow<'a, [u32]>>,
    /// Per-atom atom names, kept.
    pub atom_names: Option<Cow<'a, StringColumn>>,
    /// Per-atom formal charges, kept.
    pub formal_charges: Option<Cow<'a, [i32]>>,
    /// Named per-atom numeric channels, kept.
    pub scalars: Option<Cow<'a, BTreeMap<String, Vec<f64>>>>,
    /// Per-atom residue names, kept.
    pub residue_names: Option<Cow<'a, StringColumn>>,
    /// Per-atom residue numbers, kept.
    pub residue_ids: Option<Cow<'a, [i64]>>,
}

/// §5.2 `insert`: the ops to push as one step and the atoms to select afterwards.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InsertPlan {
    /// `set_cell` (when needed) then `add_fragment`.
    pub ops: Vec<EditOp>,
    /// Document indices of the new atoms: N_document .. N_document + n.
    pub select: Vec<u32>,
}

/// A Builder edit op, serialised exactly as Builder replays it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum EditOp {
    /// `{"op":"set_cell","box":[9 numbers, row-major Å],"scaleAtoms":false}`.
    SetCell {
        /// The new cell, row-major 3×3 in Å.
        #[serde(rename = "box")]
        box_: [f64; 9],
        /// Always `false` for tool results (§5.2: without atom scaling).
        #[serde(rename = "scaleAtoms")]
        scale_atoms: bool,
    },
    /// `{"op":"add_fragment","id","elements","positions","bonds","bondOrders"?}` with absolute
    /// positions (flat Å) and fragment-local 0-based bonds.
    AddFragment {
        /// Fresh fragment id; later edits address atoms as `<id>:<k>`.
        id: String,
        /// Atomic numbers of the added atoms.
        elements: Vec<u8>,
        /// Absolute Cartesian positions in Å, flat `[x0, y0, z0, …]` (no translation).
        positions: Vec<f64>,
        /// Fragment-local 0-based atom pairs.
        bonds: Vec<[u32; 2]>,
        /// Parallel to `bonds`; present whenever the result gives bond orders.
        #[serde(rename = "bondOrders", skip_serializing_if = "Option::is_none")]
        bond_orders: Option<Vec<u8>>,
    },
}

/// §5.2: the plan for a checked result. `document` is the open structure (§4.3 shape) or `None`;
/// `existing_fragment_ids` are the fragment ids already in the document.
pub fn plan_apply<'a>(
    marker: &Marker,
    result: &'a BuilderResult,
    document: Option<&Structure>,
    existing_fragment_ids: &[String],
) -> Result<ApplyPlan<'a>, String> {
    plan_apply_as(marker, result, document, existing_fragment_ids, None)
}

/// [`plan_apply`] with the insert's fragment id chosen by the caller (`Some`), else a fresh one
/// made from the result's name ([`new_fragment_id`]). A chosen id must not be blank nor one of
/// `existing_fragment_ids`.
pub fn plan_apply_as<'a>(
    marker: &Marker,
    result: &'a BuilderResult,
    document: Option<&Structure>,
    existing_fragment_ids: &[String],
    fragment_id: Option<&str>,
) -> Result<ApplyPlan<'a>, String> {
    plan(
        marker,
        result,
        document,
        existing_fragment_ids,
        fragment_id,
        true,
    )
}

/// [`plan_apply_as`] for a result that `interpret_call_*` / [`check_builder_result`] checked and
/// that nothing has changed since ([`CheckedResult`]: only those checks make one; the JavaScript
/// API's read-only `BuilderResult` handle holds one): §5.1 is validated once, there, not again
/// here.
///
/// [`check_builder_result`]: super::result::check_builder_result
pub fn plan_apply_checked<'a>(
    marker: &Marker,
    result: &'a CheckedResult,
    document: Option<&Structure>,
    existing_fragment_ids: &[String],
    fragment_id: Option<&str>,
) -> Result<ApplyPlan<'a>, String> {
    plan(
        marker,
        result,
        document,
        existing_fragment_ids,
        fragment_id,
        false,
    )
}

fn plan<'a>(
    marker: &Marker,
    result: &'a BuilderResult,
    document: Option<&Structure>,
    existing_fragment_ids: &[String],
    fragment_id: Option<&str>,
    validate: bool,
) -> Result<ApplyPlan<'a>, String> {
    if let Some(id) = fragment_id {
        if id.trim().is_empty() {
            return Err("fragmentId: the fragment id is blank".to_string());
        }
        if existing_fragment_ids.iter().any(|e| e == id) {
            return Err(format!(
                "fragmentId: {:?} is already a fragment of the document",
                excerpt(id)
            ));
        }
    }
    check_contract(Some(marker.contract), result.contract)?;
    if validate {
        result.structure.validate()?;
    }
    match marker.apply {
        Apply::NewDocument => {
            new_document_snapshot(result).map(|s| ApplyPlan::NewDocument(Box::new(s)))
        }
        Apply::Insert => {
            let document = document.ok_or_else(|| {
                "Open a document first: this tool adds its atoms to the open structure".to_string()
            })?;
            let id = match fragment_id {
                Some(id) => id.to_string(),
                None => new_fragment_id(&result.name, existing_fragment_ids),
            };
            insert_plan(result, document, &id).map(ApplyPlan::Insert)
        }
    }
}

fn new_document_snapshot(result: &BuilderResult) -> Result<Snapshot<'_>, String> {
    structure_snapshot(&result.structure, &result.name)
}

/// §5.2 `new_document`: the snapshot of a structure (validated before, §5.1), its file name
/// sanitised from `name`. The columns Megane takes as they are are borrowed from the structure,
/// not copied (issue 10: a 500 000-atom result is not held twice in wasm memory while it is
/// handed to JavaScript).
pub fn structure_snapshot<'a>(s: &'a Structure, name: &str) -> Result<Snapshot<'a>, String> {
    Ok(Snapshot {
        n_atoms: s.n_atoms(),
        n_bonds: s.bonds.len(),
        positions: megane_structure_scan::checks::to_f32(&s.positions),
        elements: Cow::Borrowed(&s.elements),
        bonds: Cow::Borrowed(s.bonds.as_flattened()),
        bond_orders: s.bond_orders.as_deref().map(Cow::Borrowed),
        box_: s.cell.map(|c| c.map(|v| v as f32)),
        atom_chain_ids: s.chain_ids.as_deref().map(chain_id_codes).transpose()?,
        labels: residue_labels(s),
        file_name: sanitise_file_name(name),
        molecules: s.molecules.as_deref().map(Cow::Borrowed),
        atom_names: s.atom_names.as_ref().map(Cow::Borrowed),
        formal_charges: s.formal_charges.as_deref().map(Cow::Borrowed),
        scalars: s.scalars.as_ref().map(Cow::Borrowed),
        residue_names: s.residue_names.as_ref().map(Cow::Borrowed),
        residue_ids: s.residue_ids.as_deref().map(Cow::Borrowed),
    })
}

/// One char code per chain id (validated to be one character each).
fn chain_id_codes(chains: &[String]) -> Result<Vec<u8>, String> {
    chains
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let code = id.chars().next().map_or(0, u32::from);
            u8::try_from(code).map_err(|_| {
                format!(
                    "structure.chainIds[{i}]: {:?} cannot be stored as a chain id (char code above 255)",
                    excerpt(id)
                )
            })
        })
        .collect()
}

/// §5.2 per-atom labels: `RESNAME<resid>` when residue ids exist, else the residue name. Kept as
/// the residue names (a small table and one index per atom) and ids; the strings are built only
/// when asked for (`labels[i]`, [`Labels::to_vec`], serialisation), once, so a consumer that does
/// not read them (or builds them elsewhere, as the JavaScript snapshot does) pays nothing. A
/// snapshot's labels borrow the structure's columns (issue 10: not copied while a result is
/// handed to JavaScript).
#[derive(Debug, Clone)]
pub struct Labels<'a> {
    names: Cow<'a, StringColumn>,
    ids: Option<Cow<'a, [i64]>>,
    built: OnceLock<Vec<String>>,
}

impl<'a> Labels<'a> {
    /// Labels from per-atom residue names and, optionally, residue ids of the same length.
    pub fn new(
        names: Cow<'a, StringColumn>,
        ids: Option<Cow<'a, [i64]>>,
    ) -> Result<Labels<'a>, String> {
        if let Some(ids) = &ids {
            if ids.len() != names.len() {
                return Err(format!(
                    "residueIds: {} entries for {} residue names",
                    ids.len(),
                    names.len()
                ));
            }
        }
        Ok(Labels {
            names,
            ids,
            built: OnceLock::new(),
        })
    }

    /// Number of labels (atoms).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no labels.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The residue names the labels are made of.
    pub fn residue_names(&self) -> &StringColumn {
        &self.names
    }

    /// The residue ids appended to the names, when the result gives them.
    pub fn residue_ids(&self) -> Option<&[i64]> {
        self.ids.as_deref()
    }

    /// Label `i`, when it exists (built on its own, without building the others).
    pub fn get(&self, i: usize) -> Option<String> {
        let name = self.names.get(i)?;
        Some(match &self.ids {
            Some(ids) => format!("{name}{}", ids[i]),
            None => name.to_owned(),
        })
    }

    /// Every label, built once and kept.
    pub fn as_slice(&self) -> &[String] {
        self.built.get_or_init(|| match &self.ids {
            Some(ids) => self
                .names
                .iter()
                .zip(ids.iter())
                .map(|(name, id)| format!("{name}{id}"))
                .collect(),
            None => self.names.to_vec(),
        })
    }

    /// Every label as an owned vector.
    pub fn to_vec(&self) -> Vec<String> {
        self.as_slice().to_vec()
    }
}

impl Index<usize> for Labels<'_> {
    type Output = String;
    fn index(&self, i: usize) -> &String {
        &self.as_slice()[i]
    }
}

/// Equal when made of the same residue names and ids.
impl PartialEq for Labels<'_> {
    fn eq(&self, other: &Labels<'_>) -> bool {
        self.names == other.names && self.ids == other.ids
    }
}

/// Serialises as an array of strings.
impl Serialize for Labels<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.as_slice())
    }
}

/// §5.2: the per-atom labels of a structure (`RESNAME<resid>`, else the residue name), or `None`
/// when it has no residue names. Lengths are those of a validated structure.
pub fn residue_labels(structure: &Structure) -> Option<Labels<'_>> {
    let names = structure.residue_names.as_ref()?;
    Labels::new(
        Cow::Borrowed(names),
        structure.residue_ids.as_deref().map(Cow::Borrowed),
    )
    .ok()
}

/// §5: the file name for a result name, as Megane Builder makes it: every run of characters
/// outside `[A-Za-z0-9._-]` becomes one `-`, every `-` at either end goes, an empty name becomes
/// `result` (§5's fallback), and at most the first [`MAX_FILE_NAME`] characters are kept (Builder's
/// `(s.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "") || "result").slice(0, 64)`: the
/// output is ASCII, so its UTF-16 units and characters are the same count, and a run of
/// characters outside the set is a run of UTF-16 units outside it).
pub fn sanitise_file_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_run = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('-');
            in_run = true;
        }
    }
    let trimmed = out.trim_matches('-');
    let name = if trimmed.is_empty() {
        FALLBACK_NAME
    } else {
        trimmed
    };
    name.chars().take(MAX_FILE_NAME).collect()
}

/// §5.2: the fragment id stem for a result name: lower case, runs of other characters → `-`,
/// no leading or trailing `-`, ≤ 24 characters, else `result` (§5's fallback name).
pub fn fragment_stem(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let stem: String = out
        .trim_matches('-')
        .chars()
        .take(MAX_FRAGMENT_STEM)
        .collect();
    let stem = stem.trim_end_matches('-');
    if stem.is_empty() {
        FALLBACK_NAME.to_string()
    } else {
        stem.to_string()
    }
}

/// §5.2: a fresh fragment id for a result named `name`: its [`fragment_stem`], made unique
/// against `existing` by [`fresh_fragment_id`].
pub fn new_fragment_id(name: &str, existing: &[String]) -> String {
    fresh_fragment_id(&fragment_stem(name), existing)
}

/// §5.2: `stem`, or `stem-2`, `stem-3`, … — the first one not in `existing`.
pub fn fresh_fragment_id(stem: &str, existing: &[String]) -> String {
    let taken = |id: &str| existing.iter().any(|e| e == id);
    if !taken(stem) {
        return stem.to_string();
    }
    (2..)
        .map(|k| format!("{stem}-{k}"))
        .find(|id| !taken(id))
        .unwrap_or_else(|| stem.to_string())
}

fn insert_plan(
    result: &BuilderResult,
    document: &Structure,
    fragment_id: &str,
) -> Result<InsertPlan, String> {
    document.validate().map_err(|e| format!("document: {e}"))?;
    let added = &result.structure;
    let doc_atoms = document.n_atoms();
    if doc_atoms + added.n_atoms() > u32::MAX as usize {
        return Err("structure: the document would have too many atoms".to_string());
    }
    refuse_repeated_atoms(document, added)?;
    let ops = insert_ops(added, fragment_id, document.cell.as_ref());
    let first = doc_atoms as u32;
    let select = (first..first + added.n_atoms() as u32).collect();
    Ok(InsertPlan { ops, select })
}

/// §5.2: the ops an insert result becomes: `set_cell` (without atom scaling) first when the
/// result has a cell that differs from `document_cell`, then one `add_fragment` with the
/// absolute positions, the bonds and, whenever the result has them, the bond orders.
pub fn insert_ops(
    added: &Structure,
    fragment_id: &str,
    document_cell: Option<&[f64; 9]>,
) -> Vec<EditOp> {
    let mut ops = Vec::with_capacity(2);
    if let Some(cell) = added.cell {
        if cell_differs(&cell, document_cell) {
            ops.push(EditOp::SetCell {
                box_: cell,
                scale_atoms: false,
            });
        }
    }
    ops.push(EditOp::AddFragment {
        id: fragment_id.to_string(),
        elements: added.elements.clone(),
        positions: added.positions.clone(),
        bonds: added.bonds.clone(),
        bond_orders: added.bond_orders.clone(),
    });
    ops
}

/// §5.2: a `set_cell` is needed when the document has no cell or any component differs by more
/// than [`CELL_TOLERANCE`].
fn cell_differs(cell: &[f64; 9], document_cell: Option<&[f64; 9]>) -> bool {
    match document_cell {
        None => true,
        Some(doc) => cell
            .iter()
            .zip(doc)
            .any(|(a, b)| (a - b).abs() > CELL_TOLERANCE),
    }
}

/// §5.2/§10: refuses an insert result with an atom within [`REPEAT_DISTANCE`] of a document
/// atom. Cell list: O(N + n) expected time.
fn refuse_repeated_atoms(document: &Structure, added: &Structure) -> Result<(), String> {
    if document.n_atoms() == 0 || added.n_atoms() == 0 {
        return Ok(());
    }
    let space = Space::new(document.cell.as_ref());
    let grid = Grid::build(&space, &document.positions);
    for (i, p) in added.positions.chunks_exact(3).enumerate() {
        let p = [p[0], p[1], p[2]];
        if let Some(j) = grid.atom_within(&space, &document.positions, p, REPEAT_DISTANCE) {
            return Err(format!(
                "structure.positions: atom {i} is within {REPEAT_DISTANCE} Å of document atom {j}; an insert result must contain only the atoms it adds"
            ));
        }
    }
    Ok(())
}

/// The metric space of the check: open, or periodic in a (possibly triclinic) cell.
enum Space {
    Open,
    Periodic {
        /// Rows are the lattice vectors a, b, c (Å).
        cell: [[f64; 3]; 3],
        /// Inverse of `cell`: fractional `s = r · inverse`.
        inverse: [[f64; 3]; 3],
        /// Bins along a, b, c, each at least [`REPEAT_DISTANCE`] thick.
        bins: [i64; 3],
    },
}

/// Bins along one axis are capped so that a huge cell cannot make keys overflow.
const MAX_BINS_PER_AXIS: f64 = 1.0e6;

impl Space {
    fn new(cell: Option<&[f64; 9]>) -> Space {
        let Some(c) = cell else {
            return Space::Open;
        };
        let m = [[c[0], c[1], c[2]], [c[3], c[4], c[5]], [c[6], c[7], c[8]]];
        let Some(inverse) = invert(&m) else {
            return Space::Open;
        };
        // Height of the cell along axis i = 1 / |column i of the inverse|.
        let bins = [0, 1, 2].map(|i| {
            let column = [inverse[0][i], inverse[1][i], inverse[2][i]];
            let height = 1.0 / norm(column);
            (height / REPEAT_DISTANCE)
                .floor()
                .clamp(1.0, MAX_BINS_PER_AXIS) as i64
        });
        Space::Periodic {
            cell: m,
            inverse,
            bins,
        }
    }

    fn key(&self, p: [f64; 3]) -> [i64; 3] {
        match self {
            Space::Open => p.map(|v| (v / REPEAT_DISTANCE).floor() as i64),
            Space::Periodic { inverse, bins, .. } => {
                let s = wrap01(mul_row(p, inverse));
                [0, 1, 2].map(|i| ((s[i] * bins[i] as f64) as i64).clamp(0, bins[i] - 1))
            }
        }
    }

    /// The keys of `key` and its 26 neighbours (wrapped when periodic, and de-duplicated when a
    /// periodic axis has fewer than 3 bins), in a fixed array: `(keys, count)`.
    fn neighbour_keys(&self, key: [i64; 3]) -> ([[i64; 3]; 27], usize) {
        let mut keys = [[0i64; 3]; 27];
        let mut count = 0;
        let needs_dedup =
            matches!(self, Space::Periodic { bins, .. } if bins.iter().any(|&b| b < 3));
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    let k = [
                        key[0].saturating_add(dx),
                        key[1].saturating_add(dy),
                        key[2].saturating_add(dz),
                    ];
                    let k = match self {
                        Space::Open => k,
                        Space::Periodic { bins, .. } => [0, 1, 2].map(|i| k[i].rem_euclid(bins[i])),
                    };
                    if !(needs_dedup && keys[..count].contains(&k)) {
                        keys[count] = k;
                        count += 1;
                    }
                }
            }
        }
        (keys, count)
    }

    fn distance(&self, a: [f64; 3], b: [f64; 3]) -> f64 {
        let d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
        match self {
            Space::Open => norm(d),
            Space::Periodic { cell, inverse, .. } => {
                let s = mul_row(d, inverse).map(|v| v - v.round());
                norm(mul_row(s, cell))
            }
        }
    }
}

/// Document atoms sorted by bin, with each bin's range.
struct Grid {
    order: Vec<u32>,
    ranges: HashMap<[i64; 3], (usize, usize)>,
}

impl Grid {
    /// Bins the document atoms. Atoms at exactly the same position as an earlier one in their
    /// bin are kept once, so a stack of identical atoms (valid §5.1 input) cannot make every
    /// query scan it.
    fn build(space: &Space, positions: &[f64]) -> Grid {
        let mut keyed: Vec<([i64; 3], [u64; 3], u32)> = positions
            .chunks_exact(3)
            .enumerate()
            .map(|(i, p)| {
                let bits = [p[0].to_bits(), p[1].to_bits(), p[2].to_bits()];
                (space.key([p[0], p[1], p[2]]), bits, i as u32)
            })
            .collect();
        keyed.sort_unstable();
        keyed.dedup_by(|later, earlier| later.0 == earlier.0 && later.1 == earlier.1);
        let mut ranges = HashMap::new();
        let mut start = 0;
        for end in 1..=keyed.len() {
            if end == keyed.len() || keyed[end].0 != keyed[start].0 {
                ranges.insert(keyed[start].0, (start, end));
                start = end;
            }
        }
        Grid {
            order: keyed.into_iter().map(|(_, _, i)| i).collect(),
            ranges,
        }
    }

    /// A document atom within `limit` Å of `p`, if any.
    fn atom_within(
        &self,
        space: &Space,
        positions: &[f64],
        p: [f64; 3],
        limit: f64,
    ) -> Option<u32> {
        let (keys, count) = space.neighbour_keys(space.key(p));
        for key in keys.iter().take(count) {
            let Some(&(start, end)) = self.ranges.get(key) else {
                continue;
            };
            for &j in self.order.get(start..end).unwrap_or(&[]) {
                let q = positions.get(3 * j as usize..3 * j as usize + 3)?;
                if space.distance(p, [q[0], q[1], q[2]]) < limit {
                    return Some(j);
                }
            }
        }
        None
    }
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// Row vector times matrix: `v · m`.
fn mul_row(v: [f64; 3], m: &[[f64; 3]; 3]) -> [f64; 3] {
    [0, 1, 2].map(|j| v[0] * m[0][j] + v[1] * m[1][j] + v[2] * m[2][j])
}

fn wrap01(s: [f64; 3]) -> [f64; 3] {
    s.map(|v| v - v.floor())
}

/// 3×3 inverse by cofactors; `None` for a (near-)singular or non-finite matrix. Hand-written:
/// nine lines, and no linear-algebra crate is otherwise needed.
fn invert(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let c =
        |r0: usize, c0: usize, r1: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    let cof = [
        [c(1, 1, 2, 2), -c(0, 1, 2, 2), c(0, 1, 1, 2)],
        [-c(1, 0, 2, 2), c(0, 0, 2, 2), -c(0, 0, 1, 2)],
        [c(1, 0, 2, 1), -c(0, 0, 2, 1), c(0, 0, 1, 1)],
    ];
    let det = m[0][0] * cof[0][0] + m[0][1] * cof[1][0] + m[0][2] * cof[2][0];
    if !det.is_finite() || det.abs() < 1e-9 {
        return None;
    }
    Some(cof.map(|row| row.map(|v| v / det)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_built_on_demand_from_names_and_ids() {
        let names: StringColumn = ["HOH", "HOH", "NA"].into_iter().collect();
        let labels = Labels {
            names: Cow::Owned(names.clone()),
            ids: Some(Cow::Owned(vec![1, 1, -9_000_000_000])),
            built: OnceLock::new(),
        };
        assert_eq!(labels.get(2).as_deref(), Some("NA-9000000000"));
        assert_eq!(labels.get(3), None);
        assert!(labels.built.get().is_none());
        assert_eq!(labels[0], "HOH1");
        assert_eq!(labels.to_vec(), ["HOH1", "HOH1", "NA-9000000000"]);
        assert_eq!(
            serde_json::to_value(&labels).unwrap(),
            serde_json::json!(["HOH1", "HOH1", "NA-9000000000"])
        );
        let plain = Labels {
            names: Cow::Owned(names),
            ids: None,
            built: OnceLock::new(),
        };
        assert_eq!(plain.to_vec(), ["HOH", "HOH", "NA"]);
        assert_ne!(plain, labels);
        assert_eq!(plain.clone(), plain);
    }

    #[test]
    fn snapshot_labels_borrow_the_structure_columns() {
        let s = Structure {
            elements: vec![8, 1],
            positions: vec![0.0; 6],
            residue_names: Some(["HOH", "HOH"].into_iter().collect()),
            residue_ids: Some(vec![4, 4]),
            ..Structure::default()
        };
        let snapshot = structure_snapshot(&s, "water").unwrap();
        let labels = snapshot.labels.expect("labels");
        assert!(matches!(labels.names, Cow::Borrowed(_)));
        assert!(matches!(labels.ids, Some(Cow::Borrowed(_))));
        assert_eq!(labels.to_vec(), ["HOH4", "HOH4"]);
    }

    #[test]
    fn names_are_sanitised() {
        assert_eq!(sanitise_file_name("water-ethanol"), "water-ethanol");
        assert_eq!(sanitise_file_name("water / ethanol"), "water-ethanol");
        assert_eq!(sanitise_file_name("  a b/c<script> "), "a-b-c-script");
        assert_eq!(sanitise_file_name("../.."), "..-..");
        assert_eq!(sanitise_file_name("--a--b--"), "a--b");
        assert_eq!(sanitise_file_name("***"), "result");
        assert_eq!(sanitise_file_name("é_x\u{1F9EA}"), "_x");
        assert_eq!(sanitise_file_name("a-/b"), "a--b");
        assert_eq!(sanitise_file_name(&"x".repeat(100)).len(), 64);
        // The cut comes after the trim: a `-` at the 64th character stays, as in Builder.
        let cut = sanitise_file_name(&format!("{} b", "a".repeat(63)));
        assert_eq!(cut, format!("{}-", "a".repeat(63)));
        assert_eq!(fragment_stem("Water Solvent!"), "water-solvent");
        assert_eq!(fragment_stem("***"), "result");
        assert_eq!(fragment_stem(""), "result");
        assert_eq!(new_fragment_id("", &["result".to_string()]), "result-2");
        assert_eq!(fragment_stem(&"ab-".repeat(20)).len(), 23);
    }

    #[test]
    fn fresh_ids_skip_taken_ones() {
        let taken = vec!["water".to_string(), "water-2".to_string()];
        assert_eq!(fresh_fragment_id("water", &taken), "water-3");
        assert_eq!(fresh_fragment_id("ice", &taken), "ice");
    }

    #[test]
    fn inverse_times_matrix_is_identity() {
        let m = [[10.0, 0.0, 0.0], [3.0, 9.0, 0.0], [1.0, 2.0, 8.0]];
        let inv = invert(&m).unwrap();
        for (i, row) in m.iter().enumerate() {
            let r = mul_row(*row, &inv);
            for (j, v) in r.iter().enumerate() {
                assert!((v - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn a_stack_of_identical_document_atoms_is_scanned_once() {
        // 100 000 document atoms at one point, 100 000 queries 0.15 Å away in the next bin:
        // without de-duplication this is 10¹⁰ distance checks.
        let n = 100_000;
        let doc: Vec<f64> = [0.05, 0.05, 0.05].repeat(n);
        let space = Space::new(None);
        let grid = Grid::build(&space, &doc);
        assert_eq!(grid.order.len(), 1);
        for _ in 0..n {
            assert_eq!(grid.atom_within(&space, &doc, [0.2, 0.05, 0.05], 0.1), None);
        }
        assert_eq!(
            grid.atom_within(&space, &doc, [0.12, 0.05, 0.05], 0.1),
            Some(0)
        );
    }

    #[test]
    fn small_periodic_axes_visit_each_bin_once() {
        let space = Space::new(Some(&[0.25, 0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 10.0]));
        let (keys, count) = space.neighbour_keys(space.key([0.1, 5.0, 5.0]));
        // Two bins along a, three along b and c: 2 × 3 × 3 distinct keys.
        assert_eq!(count, 18);
        let mut distinct = keys[..count].to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 18);
    }

    #[test]
    fn minimum_image_finds_atoms_across_the_boundary() {
        let space = Space::new(Some(&[10.0, 0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 10.0]));
        let doc = [0.01, 5.0, 5.0];
        let grid = Grid::build(&space, &doc);
        assert_eq!(
            grid.atom_within(&space, &doc, [9.98, 5.0, 5.0], 0.1),
            Some(0)
        );
        assert_eq!(grid.atom_within(&space, &doc, [9.8, 5.0, 5.0], 0.1), None);
        // Coordinates far beyond the bin range saturate instead of overflowing.
        let far = [1e300, -1e300, 5.0];
        let grid = Grid::build(&space, &far);
        assert_eq!(
            grid.atom_within(&space, &far, [1e300, -1e300, 5.0], 0.1),
            Some(0)
        );
        let open = Space::new(None);
        let grid = Grid::build(&open, &far);
        assert_eq!(
            grid.atom_within(&open, &far, [1e300, -1e300, 5.0], 0.1),
            Some(0)
        );
        let grid = Grid::build(&open, &doc);
        assert_eq!(grid.atom_within(&open, &doc, [9.98, 5.0, 5.0], 0.1), None);
    }
}
