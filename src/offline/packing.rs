//! What the packing tools (`liquid_box`, `solvate`) share: their common arguments (seed, density,
//! minimum distance), the packer run with the offline iteration budget, a refusal in words, and
//! the summary's and warnings' sentences about how the packing went (density, a box left ordered,
//! a budget reached).

use serde_json::Value;

use crate::pack::{pack, PackControl, PackError, PackOutcome, PackProblem, Species};

/// The packer's iteration budget for an offline call.
pub const MAX_ITERATIONS: usize = 20_000;

/// The arguments both packing tools take.
pub(super) struct CommonArgs {
    pub(super) seed: u64,
    /// g/cm³ (default 1).
    pub(super) density: f64,
    /// Minimum distance between molecules, Å (default 2).
    pub(super) tolerance: f64,
}

impl CommonArgs {
    /// Reads them from schema-checked arguments, with the schemas' defaults.
    pub(super) fn read(args: &Value) -> Result<CommonArgs, String> {
        let number_or =
            |key: &str, default: f64| args.get(key).and_then(Value::as_f64).unwrap_or(default);
        Ok(CommonArgs {
            seed: args
                .get("seed")
                .and_then(Value::as_u64)
                .ok_or("Seed is required.")?,
            density: number_or("density", 1.0),
            tolerance: number_or("tolerance", 2.0),
        })
    }

    /// Packs `species` in an orthorhombic box of `box_lengths` Å around `fixed` atoms with this seed
    /// and tolerance. A cancelled run is the error `Cancelled.`; a refusal says what to change.
    pub(super) fn pack(
        &self,
        species: Vec<Species>,
        box_lengths: [f64; 3],
        fixed: Vec<[f64; 3]>,
        control: &PackControl,
    ) -> Result<PackOutcome, String> {
        let problem = PackProblem {
            species,
            box_lengths,
            fixed,
            tolerance: self.tolerance,
            seed: self.seed,
            max_iterations: MAX_ITERATIONS,
        };
        let outcome = pack(&problem, control).map_err(|e| pack_error_message(&e))?;
        if outcome.cancelled {
            return Err("Cancelled.".to_string());
        }
        Ok(outcome)
    }
}

/// A packing refusal in words that say what to change.
fn pack_error_message(error: &PackError) -> String {
    match error {
        PackError::Infeasible(m) => format!("These molecules cannot be packed this densely: {m}"),
        PackError::InvalidInput(m) | PackError::TooLarge(m) => format!("Cannot pack: {m}"),
    }
}

/// The summary, with a word on density when a dense problem converged (§5: information, not a
/// warning; a dense run that did not converge says so in its warnings instead).
pub(super) fn summary_with_density(summary: String, outcome: &PackOutcome) -> String {
    if outcome.converged && outcome.packing_fraction > crate::pack::feasibility::WARN_FRACTION {
        format!(
            "{summary} Densely packed: spheres of half the minimum distance around the atoms fill {:.0} % of the box, and every pair keeps the minimum distance.",
            100.0 * outcome.packing_fraction
        )
    } else {
        summary
    }
}

/// The plain sentence a dense box (packing fraction ≥ [`crate::pack::feasibility::WARN_FRACTION`])
/// of at least [`crate::pack::judge::ORDER_MIN_MOLECULES`] molecules gets when its molecule centres
/// stayed ordered (issue 32's line, [`crate::pack::judge::disordered`]), with the figure; `None` for
/// a liquid's, and below the warn zone, where the random start always gives one (tests/offline_order.rs).
/// `positions`: the packed atoms, species in order (`species[k]` = (atoms per copy, copies)), copies,
/// atoms; each copy's first atom is its centre. `free_volume`: the box less any fixed solute (Å³).
pub(super) fn order_warning(
    positions: &[[f64; 3]],
    species: &[(usize, usize)],
    box_lengths: [f64; 3],
    free_volume: f64,
    packing_fraction: f64,
) -> Option<String> {
    let molecules: usize = species.iter().map(|s| s.1).sum();
    if packing_fraction < crate::pack::feasibility::WARN_FRACTION
        || molecules < crate::pack::judge::ORDER_MIN_MOLECULES
    {
        return None;
    }
    let mut centres = Vec::with_capacity(molecules);
    let mut atom = 0;
    for &(atoms, copies) in species {
        for _ in 0..copies {
            centres.push(*positions.get(atom)?);
            atom += atoms;
        }
    }
    let order = crate::pack::judge::centre_order(&centres, box_lengths, free_volume);
    (!order.disordered()).then(|| {
        format!(
            "The molecules stayed close to a lattice rather than forming a liquid: the box is too dense for the packer to disorder them (largest structure factor of the molecule centres {:.0}; a liquid of {} molecules stays below {:.0}).",
            order.peak.s,
            crate::pack::grouped(molecules),
            order.threshold
        )
    })
}

/// The packer's warnings plus an honest one when the tolerance was not met.
pub(super) fn outcome_warnings(outcome: &PackOutcome, tolerance: f64) -> Vec<String> {
    let mut warnings = outcome.warnings.clone();
    if !outcome.converged && !warnings.iter().any(|w| w.contains("minimum distance")) {
        warnings.push(format!(
            "The packer reached its budget; minimum distance {:.2} Å < tolerance {tolerance} Å ({} pairs too close).",
            outcome.min_distance, outcome.offending_pairs
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dense box whose centres form a lattice gets the sentence with its figure; a random one,
    /// or a lattice below the warn zone (not judged there), does not.
    #[test]
    fn a_dense_ordered_box_says_so_in_a_plain_sentence() {
        let side = 8;
        let l = [3.0 * side as f64; 3];
        let lattice: Vec<[f64; 3]> = (0..side * side * side)
            .flat_map(|i| {
                let c =
                    [i % side, i / side % side, i / (side * side)].map(|c| 3.0 * c as f64 + 1.0);
                [c, [c[0] + 0.9, c[1], c[2]]]
            })
            .collect();
        let species = [(2, side * side * side)];
        let v = l[0] * l[1] * l[2];
        let said = order_warning(&lattice, &species, l, v, 0.55).unwrap();
        assert!(
            said.starts_with("The molecules stayed close to a lattice"),
            "{said}"
        );
        assert!(said.contains("molecule centres 51"), "{said}");
        assert!(
            said.contains("a liquid of 512 molecules stays below 39)."),
            "{said}"
        );
        assert!(order_warning(&lattice, &species, l, v, 0.45).is_none());
        let mut rng = crate::pack::rigid::Rng::new(2, 0);
        let gas: Vec<[f64; 3]> = lattice
            .chunks(2)
            .flat_map(|_| {
                let c = [0, 1, 2].map(|k| rng.uniform() * l[k]);
                [c, [c[0] + 0.9, c[1], c[2]]]
            })
            .collect();
        assert!(order_warning(&gas, &species, l, v, 0.55).is_none());
    }
}
