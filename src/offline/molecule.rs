//! §4.2: a molecule argument → a rigid template for the packer, with its bonds and molar mass.
//! The mol block's conformer is used as given: never re-embedded or re-optimised.

use serde_json::Value;

use crate::chem::elements::atomic_mass;
use crate::chem::molblock::{parse_molblock, Dimension};
use crate::pack::Template;

pub use crate::pack::PackMolecule;

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
    if let Some(known) = recall(molblock) {
        return Ok(PackMolecule { name, ..known });
    }
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
    let read = PackMolecule {
        name,
        template: Template {
            elements: molecule.elements,
            positions: molecule.positions,
        },
        bonds: molecule.bonds.iter().map(|&(i, j)| [i, j]).collect(),
        bond_orders: molecule.bond_orders,
        molar_mass,
    };
    remember(molblock, &read);
    Ok(read)
}

/// Mol blocks kept, read, per thread (the offline Worker's): the last [`KEPT`], each at most
/// [`KEPT_BYTES`] long, so repeated calls with the same molecules (a form run again, a new seed)
/// do not parse them again. Only blocks that were read without error are kept; the name is the
/// caller's each time.
const KEPT: usize = 4;
/// Longest mol block kept (bytes; about 900 atoms).
const KEPT_BYTES: usize = 64 << 10;

thread_local! {
    static KEPT_READ: std::cell::RefCell<Vec<(String, PackMolecule)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The molecule read earlier from exactly this mol block, if it is still kept.
fn recall(molblock: &str) -> Option<PackMolecule> {
    KEPT_READ.with(|kept| {
        let kept = kept.borrow();
        kept.iter()
            .find(|(text, _)| text == molblock)
            .map(|(_, m)| m.clone())
    })
}

/// Keeps `molecule` as read from `molblock`, dropping the oldest kept beyond [`KEPT`].
fn remember(molblock: &str, molecule: &PackMolecule) {
    if molblock.len() > KEPT_BYTES {
        return;
    }
    KEPT_READ.with(|kept| {
        let mut kept = kept.borrow_mut();
        if kept.len() == KEPT {
            kept.remove(0);
        }
        kept.push((molblock.to_string(), molecule.clone()));
    });
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

    /// A mol block read again comes from the kept ones under the new name, equal to a fresh
    /// read; a refused block is refused each time with its own name; at most KEPT are kept.
    #[test]
    fn mol_blocks_read_once_are_kept_per_thread() {
        let text = include_str!("../../tests/fixtures/chloroform.mol");
        let arg = |name: &str, block: &str| serde_json::json!({"name": name, "molblock": block});
        let first = read_molecule(&arg("chloroform", text)).unwrap();
        assert_eq!(
            recall(text).map(|m| m.template),
            Some(first.template.clone())
        );
        let again = read_molecule(&arg(" CHCl3 ", text)).unwrap();
        assert_eq!(again.name, "CHCl3");
        assert_eq!(again.template, first.template);
        assert_eq!(again.bonds, first.bonds);
        assert_eq!(again.bond_orders, first.bond_orders);
        assert_eq!(again.molar_mass.to_bits(), first.molar_mass.to_bits());
        let flat = text.replace(" 3D", " 2D");
        for name in ["a", "b"] {
            let refused = read_molecule(&arg(name, &flat)).unwrap_err();
            assert!(
                refused.starts_with(&format!("'{name}' is a 2D drawing")),
                "{refused}"
            );
        }
        for k in 0..KEPT + 2 {
            let moved = text.replace("1.2086", &format!("1.{k:04}"));
            let read = read_molecule(&arg("x", &moved)).unwrap();
            assert_eq!(read.template.positions[4][2], 1.0 + k as f64 / 1e4);
        }
        KEPT_READ.with(|kept| assert_eq!(kept.borrow().len(), KEPT));
        assert!(recall(text).is_none(), "the oldest was dropped");
    }

    #[test]
    fn residue_names() {
        assert_eq!(residue_name("water"), "WATE");
        assert_eq!(residue_name("n-Hexane 2"), "NHEX");
        assert_eq!(residue_name("é+"), "MOL");
        assert_eq!(residue_name("CO"), "CO");
    }
}
