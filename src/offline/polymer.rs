//! §12.2 `polymer_chain` in the page: a linear homopolymer built as a seeded, self-avoiding
//! random coil of rigid repeat units, with the reference server's arguments and result shape.
//!
//! The chain is built by the workspace crate `megane-chain` (its method there), at opt-level 2 as the
//! packer is: a 200-unit PMMA chain in the page ~1.35× faster than at the package's "z".

use serde_json::Value;

use super::assemble::{call_result, ToolResult};
use super::here::{fits, Place};
use super::molecule::{read_molecule, residue_name};
use crate::contract::structure::Structure;
use crate::pack::PackControl;
use crate::wire::caps::MAX_ATOMS;
use crate::wire::messages::CANCELLED;

pub use megane_chain::{
    build_chain, coil, contact_bound, junction, relax, unit, walk, Chain, Monomer, Stop,
    CONTACT_FRACTION, HEAVY_MIN,
};

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
    let chain = build_chain(&monomer, units, seed, control).map_err(|stop| match stop {
        Stop::Cancelled => CANCELLED.to_string(),
        Stop::Failed(reason) => reason,
    })?;
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
