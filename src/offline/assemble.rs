//! Packed copies → a §5.1 Structure and a §5 CallToolResult, the way the reference server builds
//! them: bonds and orders copied per copy, `molecules` (0-based copy index), `residueIds`
//! (1-based copy number), `residueNames` from the molecule names.

use serde::Serialize;
use serde_json::{json, Value};

use super::molecule::{residue_name, PackMolecule};
use crate::contract::structure::Structure;

/// Builds the structure of `counts[k]` copies of `molecules[k]`, in order, from packed positions
/// (one `[x, y, z]` per atom, species then copies then template atoms; taken, not copied).
pub fn packed_structure(
    molecules: &[PackMolecule],
    counts: &[usize],
    positions: Vec<[f64; 3]>,
    cell: [f64; 9],
) -> Structure {
    let mut s = Structure {
        cell: Some(cell),
        ..Structure::default()
    };
    let (mut copy, mut atom) = (0u32, 0u32);
    let mut orders = Vec::new();
    let total: usize = molecules
        .iter()
        .zip(counts)
        .map(|(m, &c)| m.template.elements.len() * c)
        .sum();
    let mut mol_index = Vec::with_capacity(total);
    let mut res_ids = Vec::with_capacity(total);
    // Dictionary-encoded as it is built: no String per atom.
    let mut res_names = crate::contract::structure::StringColumnBuilder::default();
    s.elements.reserve(total);
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
                res_names.push(&residue);
            }
            copy += 1;
            atom += n;
        }
    }
    s.positions = positions.into_flattened();
    if orders.iter().any(|&o| o != 1) {
        s.bond_orders = Some(orders);
    }
    s.molecules = Some(mol_index);
    s.residue_ids = Some(res_ids);
    s.residue_names = Some(res_names.finish());
    s
}

/// §5: a successful CallToolResult: text summary, BuilderResult, provenance with this package's
/// version and the seed. Kept as typed data and serialised straight to bytes
/// ([`ToolResult::to_bytes`]): a JSON value tree of a 500 000-atom structure would take about
/// 300 B per atom on top of the structure itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// BuilderResult name.
    pub name: String,
    /// The text content (summary, then any warnings).
    pub text: String,
    /// The structure.
    pub structure: Structure,
    /// §5 warnings about the result.
    pub warnings: Vec<String>,
    /// The seed, recorded in the provenance.
    pub seed: u64,
}

/// The wire shape of a successful CallToolResult, borrowing the result.
#[derive(Serialize)]
struct Wire<'a> {
    content: [TextContent<'a>; 1],
    #[serde(rename = "structuredContent")]
    structured: Structured<'a>,
    #[serde(rename = "isError")]
    is_error: bool,
}

#[derive(Serialize)]
struct TextContent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct Structured<'a> {
    contract: u32,
    name: &'a str,
    structure: &'a Structure,
    warnings: &'a [String],
    provenance: Provenance,
}

#[derive(Serialize)]
struct Provenance {
    #[serde(rename = "megane-builder-client")]
    version: &'static str,
    seed: u64,
}

impl ToolResult {
    fn wire(&self) -> Wire<'_> {
        Wire {
            content: [TextContent {
                kind: "text",
                text: &self.text,
            }],
            structured: Structured {
                contract: 1,
                name: &self.name,
                structure: &self.structure,
                warnings: &self.warnings,
                provenance: Provenance {
                    version: env!("CARGO_PKG_VERSION"),
                    seed: self.seed,
                },
            },
            is_error: false,
        }
    }

    /// The CallToolResult as JSON bytes, written directly from the typed data into a buffer of
    /// exactly their size: a first pass only counts them, so a growing buffer never holds its
    /// old and new copies at once (up to three times the result's size for a large structure).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes_with(&|| {})
    }

    /// [`ToolResult::to_bytes`], calling `between` after the counting pass (a progress heartbeat:
    /// each pass of a 500 000-atom result takes most of a second in wasm).
    pub fn to_bytes_with(&self, between: &dyn Fn()) -> Vec<u8> {
        let wire = self.wire();
        let mut counter = ByteCount(0);
        if serde_json::to_writer(&mut counter, &wire).is_err() {
            return Vec::new();
        }
        between();
        let mut bytes = Vec::with_capacity(counter.0);
        serde_json::to_writer(&mut bytes, &wire).map_or(Vec::new(), |()| bytes)
    }

    /// The CallToolResult as a JSON value (tests, small results).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self.wire()).unwrap_or(Value::Null)
    }
}

/// A writer that only counts the bytes written to it.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// §5: a successful result of tool `name` with this summary, structure and warnings.
pub fn call_result(
    name: &str,
    summary: &str,
    structure: Structure,
    warnings: &[String],
    seed: u64,
) -> ToolResult {
    let text = if warnings.is_empty() {
        summary.to_string()
    } else {
        format!("{summary} Warning: {}", warnings.join(" "))
    };
    ToolResult {
        name: name.to_string(),
        text,
        structure,
        warnings: warnings.to_vec(),
        seed,
    }
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
