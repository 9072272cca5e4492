//! The packing judge: what a chemist checks in a packed box, as the project's own code (issue 30,
//! issue 32). Tests, benches and the tools themselves use it; `check_packing.py` of the workplace
//! gives the same verdicts on the recorded boxes (tests/pack_judge.rs).
//!
//! - [`distances`]: the closest intermolecular pairs under periodic images, and to fixed atoms;
//! - [`density`]: of the box, or of the packed molecules in the free volume;
//! - [`rigid`]: each copy against its template on raw (unwrapped) coordinates;
//! - [`structure_factor`]: the largest S(k) over molecule centres, a lattice against a liquid;
//! - [`orientation`]: ⟨P2⟩ and ⟨P4⟩ of each molecular axis against x, y and z.
//!
//! [`disordered`] is the one place where a box is called a liquid or a lattice.

pub mod density;
pub mod distances;
pub mod orientation;
pub mod report;
pub mod rigid;
pub mod structure_factor;

/// Molecules below which order is not judged (issue 32: S(k) for boxes of ≥ 100 molecules).
pub const ORDER_MIN_MOLECULES: usize = 100;
/// Copies of a species below which orientations are not judged (issue 32: ≥ 500).
pub const ORIENTATION_MIN_COPIES: usize = 500;
/// The largest |⟨P2⟩| or |⟨P4⟩| of uniform orientations (issue 32).
pub const ORIENTATION_LIMIT: f64 = 0.1;

/// The order of a box's molecule centres: its largest S(k) and the line it is held to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CentreOrder {
    /// The largest S(k) over the judged vectors.
    pub peak: structure_factor::Peak,
    /// [`structure_factor::threshold`] for this many molecules.
    pub threshold: f64,
    /// Molecules judged.
    pub molecules: usize,
}

impl CentreOrder {
    /// Whether the centres are disordered: S_max at most the threshold (always, below
    /// [`ORDER_MIN_MOLECULES`] molecules, where no box is judged).
    pub fn disordered(&self) -> bool {
        disordered(self.molecules, self.peak.s)
    }
}

/// Whether `molecules` centres whose largest S(k) is `s_max` are a liquid's (issue 32's line).
pub fn disordered(molecules: usize, s_max: f64) -> bool {
    molecules < ORDER_MIN_MOLECULES || s_max <= structure_factor::threshold(molecules)
}

/// The order of `centres` (one point per molecule, Å: its first atom) in an orthorhombic periodic
/// box of `box_lengths` Å whose free volume is `free_volume` Å³.
pub fn centre_order(centres: &[[f64; 3]], box_lengths: [f64; 3], free_volume: f64) -> CentreOrder {
    CentreOrder {
        peak: structure_factor::s_max(centres, box_lengths, free_volume),
        threshold: structure_factor::threshold(centres.len()),
        molecules: centres.len(),
    }
}
