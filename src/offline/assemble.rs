//! Packed copies → a §5.1 Structure and a §5 CallToolResult, the way the reference server builds
//! them: bonds and orders copied per copy, `molecules` (0-based copy index), `residueIds`
//! (1-based copy number), `residueNames` from the molecule names.

use serde::Serialize;
use serde_json::{json, Value};

use super::molecule::{residue_name, PackMolecule};
use super::transfer;
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

    /// The CallToolResult as JSON bytes, written directly from the typed data. Above
    /// [`ONE_PASS_ATOMS`] atoms into a buffer of exactly their size: a first pass only counts
    /// them, so a growing buffer never holds its old and new copies at once (up to three times
    /// the result's size for a large structure); a small result in one pass.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes_with(&|| {})
    }

    /// [`ToolResult::to_bytes`], calling `beat` every [`BEAT_BYTES`] bytes of each pass and
    /// between them (a progress heartbeat: each pass of a 500 000-atom result takes most of a
    /// second in wasm); a small result's one pass comes after one `beat`.
    pub fn to_bytes_with(&self, beat: &dyn Fn()) -> Vec<u8> {
        let wire = self.wire();
        // A small result is written in one pass into a growing buffer (its copies while growing
        // are a few hundred KB at most; the counting pass would format every number twice),
        // after the one heartbeat a large result gives between its passes.
        if self.structure.n_atoms() <= ONE_PASS_ATOMS {
            beat();
            // Room for the whole result at once (about 60 B per atom and 1 KB of the rest).
            let mut out = Vec::with_capacity(1024 + 64 * self.structure.n_atoms());
            return match serde_json::to_writer(&mut out, &wire) {
                Ok(()) => out,
                Err(_) => Vec::new(),
            };
        }
        let mut counter = Paced {
            out: None,
            written: 0,
            since: 0,
            beat,
        };
        if serde_json::to_writer(&mut counter, &wire).is_err() {
            return Vec::new();
        }
        beat();
        let mut writer = Paced {
            out: Some(Vec::with_capacity(counter.written)),
            written: 0,
            since: 0,
            beat,
        };
        match serde_json::to_writer(&mut writer, &wire) {
            Ok(()) => writer.out.unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }

    /// The CallToolResult as the offline Worker hands it to the page ([`transfer`]): its typed
    /// parts with the Structure's arrays as binary.
    pub fn to_transfer(&self) -> Vec<u8> {
        transfer::encode(&transfer::Parts {
            text: &self.text,
            name: &self.name,
            warnings: &self.warnings,
            version: env!("CARGO_PKG_VERSION"),
            seed: self.seed,
            structure: &self.structure,
        })
    }

    /// The CallToolResult as a JSON value (tests, small results).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self.wire()).unwrap_or(Value::Null)
    }
}

/// Results of at most this many atoms are written in one pass (about 60 B per atom of JSON, so
/// a few hundred KB; far below one heartbeat's [`BEAT_BYTES`]).
pub const ONE_PASS_ATOMS: usize = 4096;

/// Bytes written between two heartbeats of [`ToolResult::to_bytes_with`].
pub const BEAT_BYTES: usize = 4 << 20;

/// A writer that counts the bytes (and keeps them when `out` is set), calling `beat` every
/// [`BEAT_BYTES`].
struct Paced<'a> {
    out: Option<Vec<u8>>,
    written: usize,
    since: usize,
    beat: &'a dyn Fn(),
}

impl std::io::Write for Paced<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(out) = self.out.as_mut() {
            out.extend_from_slice(buf);
        }
        self.written += buf.len();
        self.since += buf.len();
        if self.since >= BEAT_BYTES {
            self.since = 0;
            (self.beat)();
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// The paced writer gives the same bytes as serde_json's own, in a buffer of exactly their
    /// size, with a heartbeat every BEAT_BYTES of each pass and one between the passes.
    #[test]
    fn paced_bytes_equal_plain_json_and_beat_per_chunk() {
        let n = 200_000;
        let structure = Structure {
            elements: vec![8; n],
            positions: (0..3 * n)
                .map(|i| i as f64 * 1.000_000_1 + 0.123_456_7)
                .collect(),
            ..Structure::default()
        };
        let result = call_result("water", "Liquid box.", structure, &[], 7);
        let beats = Cell::new(0);
        let bytes = result.to_bytes_with(&|| beats.set(beats.get() + 1));
        assert_eq!(bytes, serde_json::to_vec(&result.wire()).unwrap());
        assert_eq!(bytes.len(), bytes.capacity());
        assert!(bytes.len() > 2 * BEAT_BYTES, "{}", bytes.len());
        // Each pass beats once per BEAT_BYTES (a write may overshoot a boundary by a few bytes).
        let per_pass = bytes.len() / BEAT_BYTES;
        assert!(
            (2 * per_pass - 1..=2 * per_pass + 1).contains(&beats.get()),
            "{}",
            beats.get()
        );
        assert_eq!(result.to_bytes(), bytes);
        // A small result: one pass, one heartbeat before it, the same bytes.
        for n in [0, 5, ONE_PASS_ATOMS] {
            let structure = Structure {
                elements: vec![8; n],
                positions: (0..3 * n).map(|i| i as f64 * 0.37 - 1.0).collect(),
                ..Structure::default()
            };
            let result = call_result("water", "Liquid box.", structure, &["dense".into()], 7);
            beats.set(0);
            let bytes = result.to_bytes_with(&|| beats.set(beats.get() + 1));
            assert_eq!(bytes, serde_json::to_vec(&result.wire()).unwrap());
            assert_eq!(beats.get(), 1);
        }
    }
}
