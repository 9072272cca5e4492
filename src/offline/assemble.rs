//! Packed copies → a §5.1 Structure and a §5 CallToolResult, the way the reference server builds
//! them: bonds and orders copied per copy, `molecules` (0-based copy index), `residueIds`
//! (1-based copy number), `residueNames` from the molecule names.

use serde_json::{json, Map, Value};

use super::molecule::{residue_name, PackMolecule};
use crate::contract::structure::Structure;

/// Builds the structure of `counts[k]` copies of `molecules[k]`, in order, from packed positions
/// (one `[x, y, z]` per atom, species then copies then template atoms).
pub fn packed_structure(
    molecules: &[PackMolecule],
    counts: &[usize],
    positions: &[[f64; 3]],
    cell: [f64; 9],
) -> Structure {
    let mut s = Structure {
        cell: Some(cell),
        ..Structure::default()
    };
    let (mut copy, mut atom) = (0u32, 0u32);
    let mut orders = Vec::new();
    let (mut mol_index, mut res_ids, mut res_names) = (Vec::new(), Vec::new(), Vec::new());
    for (molecule, &count) in molecules.iter().zip(counts) {
        let residue = residue_name(&molecule.name);
        let n = molecule.template.elements.len() as u32;
        for _ in 0..count {
            s.elements.extend_from_slice(&molecule.template.elements);
            for (&[i, j], &order) in molecule.bonds.iter().zip(&molecule.bond_orders) {
                s.bonds.push([atom + i, atom + j]);
                orders.push(order);
            }
            for _ in 0..n {
                mol_index.push(copy);
                res_ids.push(i64::from(copy) + 1);
                res_names.push(residue.clone());
            }
            copy += 1;
            atom += n;
        }
    }
    s.positions = positions.iter().flatten().copied().collect();
    if orders.iter().any(|&o| o != 1) {
        s.bond_orders = Some(orders);
    }
    s.molecules = Some(mol_index);
    s.residue_ids = Some(res_ids);
    s.residue_names = Some(res_names.into());
    s
}

/// §5: a successful CallToolResult: text summary, BuilderResult, provenance with this package's
/// version and the seed.
pub fn call_result(
    name: &str,
    summary: &str,
    structure: &Structure,
    warnings: &[String],
    seed: u64,
) -> Value {
    let mut provenance = Map::new();
    provenance.insert(
        "megane-builder-client".into(),
        json!(env!("CARGO_PKG_VERSION")),
    );
    provenance.insert("seed".into(), json!(seed));
    let text = if warnings.is_empty() {
        summary.to_string()
    } else {
        format!("{summary} Warning: {}", warnings.join(" "))
    };
    json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {
            "contract": 1,
            "name": name,
            "structure": structure,
            "warnings": warnings,
            "provenance": provenance
        },
        "isError": false
    })
}

/// §6: a tool error: `isError` with the one-line message.
pub fn tool_error(message: &str) -> Value {
    json!({"content": [{"type": "text", "text": message}], "isError": true})
}

/// `14.4` style: one decimal, as the reference server's summaries print lengths.
pub fn one_decimal(x: f64) -> String {
    format!("{x:.1}")
}

/// A density or other value as a person writes it (`1`, `0.79`).
pub fn plain_number(x: f64) -> String {
    let rounded = (x * 1000.0).round() / 1000.0;
    crate::contract::validate::format_f64(rounded)
}
