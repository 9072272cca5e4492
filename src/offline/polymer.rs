//! §12.2 `polymer_chain` in the page: a linear homopolymer built as a seeded, self-avoiding
//! random coil of rigid repeat units, with the reference server's arguments and result shape.
//!
//! Method (the reference server's RadonPy grows its chains the same way: rigid units joined
//! where the linker hydrogens were, a random torsion per junction, self-avoidance, step-backs,
//! then a force field):
//! - the unit is used as given: its conformer is never re-embedded, and the torsions inside it
//!   stay as it has them ([`unit`]), but for the turn of each end group about its bond into the
//!   unit (which hydrogen a CH3 end gives up, where an OH end's bond goes: three places 120°
//!   apart, drawn per unit) and, for a monomer without a stereocentre of its own, its mirror
//!   image (drawn per unit: atactic, as RadonPy's default);
//! - each junction bond takes the length of a rule fitted on MMFF94-optimised model compounds
//!   (an ester C(=O)–O 1.35–1.36 Å, an ether C–O 1.42–1.43, an amide C(=O)–N 1.37, Si–O 1.66, C–C
//!   1.51–1.58 by substitution), the side of the hydrogens it replaces and the model compounds'
//!   bond angles (Si–O–Si 140°, C–O–C 112°) ([`junction`], over the atom classes of
//!   `classes`);
//! - each junction torsion is drawn in its wells: trans and gauche± ± 15° about sp3–sp3 bonds,
//!   amide and ester junctions planar trans ± 20°, eclipsed or skew next to a double bond,
//!   planar between conjugated ends, free about Si ([`junction::Torsion`]);
//! - a unit that would come closer than [`contact_bound`] to another is drawn again; crowded
//!   units (PMMA, polystyrene) may turn their side groups, and come closer to their neighbours,
//!   whose neighbourhoods are then relaxed apart with bonds held ([`relax`]); the walk steps back
//!   out of dead ends ([`walk`]); `build` runs the walk, then the relaxation. The first unit
//!   keeps its head hydrogens and the last its tail hydrogens, so the chain ends are capped as in
//!   the monomer.
//!
//! No full force-field optimisation follows: the chain is a starting structure. [`coil`] holds
//! the measures by which tests and benchmarks judge the result.

mod build;
mod cells;
mod classes;
pub mod coil;
mod geometry;
pub mod junction;
mod junction_lengths;
pub mod relax;
pub mod unit;
pub mod walk;

use serde_json::Value;

use super::assemble::{call_result, ToolResult};
use super::here::{fits, Place};
use super::molecule::{read_molecule, residue_name};
use crate::contract::structure::Structure;
use crate::pack::PackControl;
use crate::wire::caps::MAX_ATOMS;

pub use build::build_chain;
pub use unit::Monomer;
pub use walk::{contact_bound, Chain, CONTACT_FRACTION, HEAVY_MIN};

/// Runs the tool on already schema-checked arguments; `Err` is the one-line tool error.
pub fn run(args: &Value, control: &PackControl, place: Place) -> Result<ToolResult, String> {
    let seed = args
        .get("seed")
        .and_then(Value::as_u64)
        .ok_or("Seed is required.")?;
    let index = |key: &str| -> Result<usize, String> {
        args.get(key)
            .and_then(Value::as_u64)
            .map(|i| i as usize)
            .ok_or_else(|| format!("The {key} atom is required."))
    };
    let (head, tail) = (index("head")?, index("tail")?);
    let units = args.get("length").and_then(Value::as_u64).unwrap_or(10) as usize;
    let molecule = read_molecule(args.get("monomer").unwrap_or(&Value::Null))?;
    let monomer = Monomer::new(molecule, head, tail)?;
    let name = monomer.molecule.name.clone();
    let atoms = monomer.chain_atoms(units);
    if atoms > MAX_ATOMS {
        return Err(format!(
            "A chain of {units} units of {name} would have {atoms} atoms; Builder accepts at most {MAX_ATOMS}. Use fewer units."
        ));
    }
    fits(place, atoms)?;
    let chain = build_chain(&monomer, units, seed, control)?;
    let structure = chain_structure(&chain, &name);
    let summary = format!(
        "Polymer chain: {units} unit{} of {name} ({atoms} atoms).",
        if units == 1 { "" } else { "s" }
    );
    Ok(call_result(
        &format!("poly-{name}"),
        &summary,
        structure,
        &[],
        seed,
    ))
}

/// §5.1 structure of a chain, as the reference server gives it: no cell, one molecule, residue
/// names from the monomer's name and residue ids numbering the units from 1.
pub fn chain_structure(chain: &Chain, name: &str) -> Structure {
    let residue = residue_name(name);
    let orders = &chain.bond_orders;
    Structure {
        elements: chain.elements.clone(),
        positions: chain.positions.iter().flatten().copied().collect(),
        cell: None,
        bonds: chain.bonds.clone(),
        bond_orders: orders.iter().any(|&o| o != 1).then(|| orders.clone()),
        molecules: Some(vec![0; chain.elements.len()]),
        residue_names: Some(std::iter::repeat_n(residue.as_str(), chain.elements.len()).collect()),
        residue_ids: Some(chain.unit.iter().map(|&u| i64::from(u) + 1).collect()),
        ..Structure::default()
    }
}
