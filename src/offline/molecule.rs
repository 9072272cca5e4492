//! §4.2: a molecule argument → a rigid template for the packer, with its bonds and molar mass.
//! The mol block's conformer is used as given: never re-embedded or re-optimised.

use serde_json::Value;

use crate::chem::elements::atomic_mass;
use crate::chem::molblock::{parse_molblock, Dimension};
use crate::pack::Template;

/// A molecule ready to pack.
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

/// Reads a §4.2 molecule argument. Errors are one line a chemist can act on.
pub fn read_molecule(value: &Value) -> Result<PackMolecule, String> {
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("molecule")
        .trim()
        .to_string();
    let Some(molblock) = value.get("molblock").and_then(Value::as_str) else {
        return Err(format!(
            "'{name}' comes as a SMILES only, which cannot be embedded in 3D in this page; choose a library molecule (it has a 3D mol block) or use a tool server."
        ));
    };
    let molecule = parse_molblock(molblock).map_err(|e| format!("'{name}': {e}"))?;
    if molecule.dimension == Dimension::TwoD {
        return Err(format!(
            "'{name}' is a 2D drawing; this tool needs 3D coordinates. Embed it in 3D first (sketch it in the Builder library, which embeds with RDKit)."
        ));
    }
    if molecule.elements.is_empty() {
        return Err(format!("'{name}' has no atoms."));
    }
    let mut molar_mass = 0.0;
    for &z in &molecule.elements {
        molar_mass +=
            atomic_mass(z).ok_or_else(|| format!("'{name}': element {z} has no atomic weight"))?;
    }
    Ok(PackMolecule {
        name,
        template: Template {
            elements: molecule.elements,
            positions: molecule.positions,
        },
        bonds: molecule.bonds.iter().map(|&(i, j)| [i, j]).collect(),
        bond_orders: molecule.bond_orders,
        molar_mass,
    })
}

/// §12.1: residue name from a molecule name: its upper-case alphanumerics, first 4, else `MOL`.
pub fn residue_name(name: &str) -> String {
    let letters: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .take(4)
        .collect();
    if letters.is_empty() {
        "MOL".to_string()
    } else {
        letters
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residue_names() {
        assert_eq!(residue_name("water"), "WATE");
        assert_eq!(residue_name("n-Hexane 2"), "NHEX");
        assert_eq!(residue_name("é+"), "MOL");
        assert_eq!(residue_name("CO"), "CO");
    }
}
