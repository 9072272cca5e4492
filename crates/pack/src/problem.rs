//! Input and output types of the packing core, and input validation.
//!
//! Units: lengths in ångström (Å), positions as `[x, y, z]` Cartesian triples
//! in an orthorhombic box whose corner is the origin and whose edges are
//! `box_lengths = [a, b, c]` along x, y and z.

use std::fmt;
use std::sync::atomic::AtomicBool;

/// Hard limit on the number of atoms (all copies plus fixed atoms).
pub const MAX_ATOMS: usize = 500_000;
/// Largest accepted box edge (Å).
pub const MAX_BOX_LENGTH: f64 = 10_000.0;
/// Smallest accepted tolerance (Å).
pub const MIN_TOLERANCE: f64 = 1.0;
/// Largest accepted tolerance (Å).
pub const MAX_TOLERANCE: f64 = 4.0;

/// A rigid molecule template.
///
/// `elements[i]` is the atomic number of atom `i` and `positions[i]` its
/// position in Å (any origin: the packer uses the unweighted mean of the
/// positions as the rigid-body centre). The packer only uses the positions;
/// elements are carried along for the caller.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    /// Atomic numbers, one per atom.
    pub elements: Vec<u8>,
    /// Atom positions in Å, one `[x, y, z]` per atom.
    pub positions: Vec<[f64; 3]>,
}

/// A molecule ready to pack, as the offline tools read it from a §4.2 molecule argument (and the
/// chain builder takes a repeat unit): its rigid template, bonds and molar mass.
#[derive(Debug, Clone)]
pub struct PackMolecule {
    /// The name the user chose (`water`).
    pub name: String,
    /// Rigid template (atomic numbers and positions in Å).
    pub template: Template,
    /// 0-based bonds within the molecule.
    pub bonds: Vec<[u32; 2]>,
    /// Parallel to `bonds`: 1–4.
    pub bond_orders: Vec<u8>,
    /// g/mol, from standard atomic weights.
    pub molar_mass: f64,
}

/// A template and how many copies of it to pack.
#[derive(Clone, Debug, PartialEq)]
pub struct Species {
    /// The rigid template.
    pub template: Template,
    /// Number of copies.
    pub count: usize,
}

/// A packing problem: copies of rigid templates in a periodic orthorhombic box.
#[derive(Clone, Debug, PartialEq)]
pub struct PackProblem {
    /// The species, packed in this order.
    pub species: Vec<Species>,
    /// Box edge lengths `[a, b, c]` in Å along x, y, z (periodic in all three).
    pub box_lengths: [f64; 3],
    /// Fixed atoms (Å) that copies must keep `tolerance` away from under the
    /// minimum image (e.g. a solute being solvated). They never move.
    pub fixed: Vec<[f64; 3]>,
    /// Minimum distance (Å) between atoms of different copies, and between a
    /// copy's atom and a fixed atom, under the minimum image. Strict: `d >= tolerance`.
    pub tolerance: f64,
    /// Seed of the deterministic random number generator (ChaCha8).
    pub seed: u64,
    /// Budget: maximum number of optimiser iterations (all rounds together).
    pub max_iterations: usize,
}

/// Progress callback: `(fraction in [0, 1], one-line message)`. Called on the
/// calling thread only (so it need not be `Sync`: a JavaScript function wrapper works),
/// at each stage and once per optimiser iteration.
pub type ProgressFn<'a> = &'a dyn Fn(f64, &str);

/// Run-time control: cancellation and progress reporting.
///
/// There is no wall-clock budget inside the core (`std::time::Instant` is not
/// available on wasm32-unknown-unknown): a caller wanting one checks its own
/// clock in the progress callback and sets the cancel flag. On a single-threaded
/// page the flag can only be set from that callback, since `pack` blocks.
#[derive(Clone, Copy, Default)]
pub struct PackControl<'a> {
    /// When set to `true` (by another thread or by the progress callback's
    /// owner), the packer stops at the next iteration and returns what it has
    /// (`converged == false` unless the tolerance was already met).
    pub cancel: Option<&'a AtomicBool>,
    /// Called about once per optimiser iteration batch.
    pub progress: Option<ProgressFn<'a>>,
}

/// The result of [`crate::pack`].
#[derive(Clone, Debug, PartialEq)]
pub struct PackOutcome {
    /// Positions (Å) of every atom of every copy: species in input order, then
    /// copies, then template atom order. Molecules are whole (not wrapped);
    /// each copy's centre (mean of its atoms) lies inside `[0, L)` on every axis.
    pub positions: Vec<[f64; 3]>,
    /// `true` when every intermolecular pair (and copy–fixed pair) is at least
    /// `tolerance` apart under the minimum image, judged on the positions rounded to f32.
    pub converged: bool,
    /// Smallest intermolecular / copy–fixed distance found (Å, minimum image, on the positions
    /// rounded to f32).
    /// Pairs are searched up to `1.5 × tolerance`; if none is that close the
    /// value is `1.5 × tolerance` (a lower bound).
    pub min_distance: f64,
    /// Number of atom pairs closer than `tolerance` (positions rounded to f32).
    pub offending_pairs: usize,
    /// Optimiser iterations used.
    pub iterations: usize,
    /// `true` if the run stopped because of the cancel flag.
    pub cancelled: bool,
    /// Human-readable warnings about the result (not converged, cancelled, and then a high
    /// packing fraction as the likely reason). Empty for a converged run.
    pub warnings: Vec<String>,
    /// Packing fraction of the tolerance bodies (see [`crate::feasibility`]): above
    /// [`crate::feasibility::WARN_FRACTION`] the problem is dense.
    pub packing_fraction: f64,
}

/// Why a problem was refused. `Display` is a single line.
#[derive(Clone, Debug, PartialEq)]
pub enum PackError {
    /// An input value is invalid (message says which and why).
    InvalidInput(String),
    /// The problem is too dense to be packed at this tolerance.
    Infeasible(String),
    /// The problem is too large.
    TooLarge(String),
}

impl fmt::Display for PackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackError::InvalidInput(m) => write!(f, "invalid packing input: {m}"),
            PackError::Infeasible(m) => write!(f, "infeasible packing: {m}"),
            PackError::TooLarge(m) => write!(f, "packing problem too large: {m}"),
        }
    }
}

impl std::error::Error for PackError {}

fn finite3(p: &[f64; 3]) -> bool {
    p.iter().all(|v| v.is_finite())
}

/// Checks everything that can be checked without geometry work.
/// Returns the total number of atoms (copies + fixed).
pub fn validate(problem: &PackProblem) -> Result<usize, PackError> {
    let bad = |m: String| Err(PackError::InvalidInput(m));
    let t = problem.tolerance;
    if !t.is_finite() || !(MIN_TOLERANCE..=MAX_TOLERANCE).contains(&t) {
        return bad(format!(
            "tolerance {t} Å is outside [{MIN_TOLERANCE}, {MAX_TOLERANCE}] Å"
        ));
    }
    for (k, &l) in problem.box_lengths.iter().enumerate() {
        if !l.is_finite() || l <= 0.0 {
            return bad(format!(
                "box length {} = {l} is not a positive finite number",
                ["a", "b", "c"][k]
            ));
        }
        if l > MAX_BOX_LENGTH {
            return bad(format!(
                "box length {} = {l} Å exceeds {MAX_BOX_LENGTH} Å",
                ["a", "b", "c"][k]
            ));
        }
        if l < 2.0 * t {
            return bad(format!(
                "box length {} = {l} Å is narrower than 2 × tolerance = {} Å",
                ["a", "b", "c"][k],
                2.0 * t
            ));
        }
    }
    if problem.species.is_empty() {
        return bad("no species to pack".into());
    }
    let mut copies = 0usize;
    let mut atoms = problem.fixed.len();
    for (s, sp) in problem.species.iter().enumerate() {
        let tpl = &sp.template;
        if tpl.positions.is_empty() {
            return bad(format!("species {s} has an empty template"));
        }
        if tpl.elements.len() != tpl.positions.len() {
            return bad(format!(
                "species {s}: {} elements but {} positions",
                tpl.elements.len(),
                tpl.positions.len()
            ));
        }
        if let Some(i) = tpl.positions.iter().position(|p| !finite3(p)) {
            return bad(format!("species {s}: atom {i} has a non-finite coordinate"));
        }
        let (_, radius) = super::rigid::centred(&tpl.positions);
        let lmin = problem
            .box_lengths
            .iter()
            .cloned()
            .fold(f64::INFINITY, f64::min);
        if !radius.is_finite() || 2.0 * radius > lmin {
            return bad(format!(
                "species {s} spans {:.1} Å (2 × its radius), more than the smallest box edge {lmin} Å",
                2.0 * radius
            ));
        }
        copies = copies.saturating_add(sp.count);
        atoms = atoms.saturating_add(sp.count.saturating_mul(tpl.positions.len()));
    }
    if copies == 0 {
        return bad("0 molecules to pack".into());
    }
    if let Some(i) = problem.fixed.iter().position(|p| !finite3(p)) {
        return bad(format!("fixed atom {i} has a non-finite coordinate"));
    }
    if atoms > MAX_ATOMS {
        return Err(PackError::TooLarge(format!(
            "{atoms} atoms (copies + fixed) exceed the limit of {MAX_ATOMS}"
        )));
    }
    Ok(atoms)
}
