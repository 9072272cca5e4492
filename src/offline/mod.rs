//! The in-page offline tools `liquid_box`, `polymer_chain` and `solvate`, served under the Builder
//! Tool Contract like a remote server's: the same `tools/list` shape (§12.1–§12.3), arguments checked against
//! their own `inputSchema`, and answers as MCP CallToolResults (a tool error is `isError`), so the
//! contract core's discovery, forms, result validation and apply plans handle them unchanged.

pub mod assemble;
pub mod definitions;
pub mod here;
pub mod judged;
pub mod liquid_box;
pub mod molecule;
pub mod pace;
pub mod polymer;
pub mod solvate;
pub mod transfer;

use serde_json::Value;

use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use crate::contract::validate::{compiled, entry_argument_problems, Compiled};
use crate::pack::{pack, PackControl, PackError, PackOutcome, PackProblem, Species};

use here::NOT_HERE;
pub use here::{Place, HERE_MAX_ATOMS};

/// `serverInfo` of the offline tools.
pub const SERVER_NAME: &str = "megane-builder-client (offline)";

/// The packer's iteration budget for an offline call.
pub const MAX_ITERATIONS: usize = 20_000;

/// Calls an offline tool: arguments are checked against the tool's own schema first, then the tool
/// runs. Always a CallToolResult JSON value; failures a user can fix are `isError` results.
pub fn call_tool(name: &str, arguments: &Value, control: &PackControl) -> Value {
    match run_tool(name, arguments, control, Place::Worker) {
        Ok(result) => result.to_value(),
        Err(message) => assemble::tool_error(&message),
    }
}

/// [`call_tool`] as the CallToolResult's JSON bytes, written straight from the typed result (no
/// JSON value tree of the structure is built; the Worker hands [`call_tool_transfer`] instead).
/// A successful result reports progress "writing N atoms" (fraction 1, [`report_writing`]) every few
/// MB of the writing passes and between them; the packing tools also report it before assembling
/// the structure.
pub fn call_tool_bytes(name: &str, arguments: &Value, control: &PackControl) -> Vec<u8> {
    match run_tool(name, arguments, control, Place::Worker) {
        Ok(result) => {
            // Writing a large result is a phase of its own: said again during its passes.
            let atoms = result.structure.n_atoms();
            result.to_bytes_with(&|| report_writing(control, atoms))
        }
        Err(message) => serde_json::to_vec(&assemble::tool_error(&message)).unwrap_or_default(),
    }
}

/// [`call_tool`] as the offline Worker hands it to the page ([`transfer`]: a successful result's
/// typed parts with the Structure's arrays as binary, a tool error as JSON). A successful result
/// reports "writing N atoms" once more here, before it is written (copying the arrays takes a
/// small part of writing them as JSON text).
pub fn call_tool_transfer(name: &str, arguments: &Value, control: &PackControl) -> Vec<u8> {
    transfer_of(run_tool(name, arguments, control, Place::Worker), control)
}

/// [`call_tool_transfer`] on the calling thread (the page's), for a small call: `None` when the
/// structure would exceed [`HERE_MAX_ATOMS`] atoms (declined before packing, and a solvate
/// before its free volume) or when the call was cancelled through `control` (the caller's
/// deadline, [`here::HERE_MAX_MS`]); the caller then runs it in the Worker. Otherwise the same
/// bytes as [`call_tool_transfer`], tool errors included.
pub fn call_tool_here(name: &str, arguments: &Value, control: &PackControl) -> Option<Vec<u8>> {
    let outcome = run_tool(name, arguments, control, Place::Here);
    let cancelled = control.cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    match outcome {
        Err(message) if message == NOT_HERE => None,
        Err(_) if cancelled => None,
        outcome => Some(transfer_of(outcome, control)),
    }
}

/// A tool's outcome as the transfer to the page (a result after the "writing" report).
fn transfer_of(outcome: Result<assemble::ToolResult, String>, control: &PackControl) -> Vec<u8> {
    match outcome {
        Ok(result) => {
            report_writing(control, result.structure.n_atoms());
            result.to_transfer()
        }
        Err(message) => transfer::encode_json(
            &serde_json::to_vec(&assemble::tool_error(&message)).unwrap_or_default(),
        ),
    }
}

/// Progress of the last phase, assembling and writing a result of `atoms` atoms: "writing N
/// atoms" at fraction 1 (a large result takes a second or more in wasm after packing ends).
pub fn report_writing(control: &PackControl, atoms: usize) {
    if let Some(progress) = control.progress {
        progress(
            1.0,
            &format!("writing {} atoms", crate::pack::grouped(atoms)),
        );
    }
}

/// The schema entries (validator and form) of `liquid_box`, `solvate` and `polymer_chain`'s
/// `inputSchema`s, made on the first call and kept: a call neither rebuilds a definition nor
/// looks its schema up. Held here, they outlive the validator cache's least-recently-used drops.
fn tool_schemas() -> &'static (Compiled, Compiled, Compiled) {
    static SCHEMAS: OnceLock<(Compiled, Compiled, Compiled)> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let entry = |definition: Value| compiled(&definition["inputSchema"]);
        (
            entry(definitions::liquid_box()),
            entry(definitions::solvate()),
            entry(definitions::polymer_chain()),
        )
    })
}

/// Checks the arguments and runs the tool; `Err` is the one-line tool error.
fn run_tool(
    name: &str,
    arguments: &Value,
    control: &PackControl,
    place: Place,
) -> Result<assemble::ToolResult, String> {
    let entry = match name {
        "liquid_box" => &tool_schemas().0,
        "solvate" => &tool_schemas().1,
        "polymer_chain" => &tool_schemas().2,
        other => return Err(crate::contract::discovery::unknown_tool(other)),
    };
    if let Some(problem) = entry_argument_problems(entry, arguments).first() {
        return Err(problem.message.clone());
    }
    match name {
        "liquid_box" => liquid_box::run(arguments, control, place),
        "polymer_chain" => polymer::run(arguments, control, place),
        _ => solvate::run(arguments, control, place),
    }
}

/// The arguments both offline tools take.
struct CommonArgs {
    seed: u64,
    /// g/cm³ (default 1).
    density: f64,
    /// Minimum distance between molecules, Å (default 2).
    tolerance: f64,
}

impl CommonArgs {
    /// Reads them from schema-checked arguments, with the schemas' defaults.
    fn read(args: &Value) -> Result<CommonArgs, String> {
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
    fn pack(
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
fn summary_with_density(summary: String, outcome: &PackOutcome) -> String {
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
fn order_warning(
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
fn outcome_warnings(outcome: &PackOutcome, tolerance: f64) -> Vec<String> {
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
