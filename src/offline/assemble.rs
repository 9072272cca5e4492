//! Packed copies → a §5.1 Structure and a §5 CallToolResult, the way the reference server builds
//! them: bonds and orders copied per copy, `molecules` (0-based copy index), `residueIds`
//! (1-based copy number), `residueNames` from the molecule names.

use serde::Serialize;
use serde_json::{json, Value};

use super::molecule::{residue_name, PackMolecule};
use super::transfer;
use crate::contract::structure::Structure;
use crate::pack::PackControl;

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

/// The transfer ([`transfer`]) of a result reads on the page as its JSON bytes do: the two ways a
/// [`ToolResult`] is written, through the one reader of each.
#[cfg(test)]
mod transfer_tests {
    use super::transfer::{encode_json, interpret, DAMAGED};
    use super::{call_result, tool_error, ToolResult};
    use crate::contract::marker::Marker;
    use crate::contract::result::{self, Interpreted, ResultLimits};
    use crate::contract::structure::{StringColumn, Structure};

    /// liquid_box's marker.
    fn marker() -> Marker {
        let list = crate::contract::discovery::parse_tool_list(
            &crate::offline::definitions::tools_list(),
            None,
        );
        list.unwrap().buttons[0].marker.clone()
    }

    /// Both ways to the page: (transfer's outcome, refused), (JSON bytes' outcome, refused).
    fn both(result: &ToolResult) -> [(Result<Interpreted, String>, bool); 2] {
        let limits = ResultLimits::default();
        let json = result.to_bytes();
        let from_json = result::interpret_call_bytes("t", &marker(), &json, &limits);
        let refused = from_json.is_err() && result::is_refusal_bytes(&json);
        [
            interpret("t", &marker(), &result.to_transfer().as_slice(), &limits),
            (from_json, refused),
        ]
    }

    fn structure() -> Structure {
        let mut names = StringColumn::new();
        for name in ["WAT", "WAT", "WAT", "NA"] {
            names.push(name);
        }
        Structure {
            elements: vec![8, 1, 1, 11],
            positions: vec![
                0.1, 0.2, 0.3, 1.0, 0.2, 0.3, -0.1, 1.1, 0.3, 5.0, 5.0, 1e-300,
            ],
            cell: Some([10.0, 0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 10.0]),
            bonds: vec![[0, 1], [0, 2]],
            bond_orders: Some(vec![1, 2]),
            molecules: Some(vec![0, 0, 0, 1]),
            residue_names: Some(names),
            residue_ids: Some(vec![1, 1, 1, -(1 << 52)]),
            ..Structure::default()
        }
    }

    #[test]
    fn a_transfer_reads_as_the_json_bytes_do() {
        let mut cases = vec![structure(), Structure::default()];
        let mut bare = structure();
        (bare.cell, bare.bond_orders, bare.molecules) = (None, None, None);
        (bare.residue_names, bare.residue_ids) = (None, None);
        cases.push(bare);
        // Every other field too.
        let mut full = structure();
        full.formal_charges = Some(vec![0, 0, 0, 1]);
        full.chain_ids = Some(vec!["A".into(), "A".into(), "A".into(), "B".into()]);
        full.atom_names = full.residue_names.clone();
        full.scalars = Some([("q".to_string(), vec![0.5, -0.25, -0.25, 1.0])].into());
        cases.push(full);
        let mut bad = structure();
        bad.chain_ids = Some(vec!["AB".into(); 4]);
        cases.push(bad);
        // §5.1 refusals come out word for word: a bad element, a bond out of range.
        let mut bad = structure();
        bad.elements[3] = 0;
        cases.push(bad);
        let mut bad = structure();
        bad.bonds[1] = [0, 9];
        cases.push(bad);
        let seeds = [7, (1 << 53) + 1, u64::MAX];
        for (k, s) in cases.into_iter().enumerate() {
            let seed = seeds[k % seeds.len()];
            let result = call_result("water", "Packed.", s, &["dense".to_string()], seed);
            let bytes = result.to_transfer();
            assert_eq!(bytes.len(), bytes.capacity(), "written into its exact size");
            let [transfer, json] = both(&result);
            assert_eq!(transfer, json);
        }
        // A tool error: the same line, refused.
        let error = serde_json::to_vec(&tool_error("No.")).unwrap();
        let (outcome, refused) = interpret(
            "t",
            &marker(),
            &encode_json(&error).as_slice(),
            &ResultLimits::default(),
        );
        assert_eq!(outcome, Err("No.".to_string()));
        assert!(refused);
    }

    #[test]
    fn a_damaged_transfer_is_one_line_never_a_panic() {
        let bytes = call_result("water", "Packed.", structure(), &[], 7).to_transfer();
        let limits = ResultLimits::default();
        let read = |b: &[u8]| interpret("t", &marker(), &b, &limits);
        assert!(read(&bytes).0.is_ok());
        for n in 0..bytes.len() {
            assert!(read(&bytes[..n]).0.is_err(), "cut at {n}");
        }
        // Every byte changed in turn: an error or a result that passed the checks.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0xA5;
            if let (Err(e), _) = read(&b) {
                assert!(!e.contains('\n'), "{e}");
            }
        }
        let mut b = bytes.clone();
        b[0] = b'{';
        assert_eq!(read(&b).0, Err(DAMAGED.to_string()));
        // A residue name index past its table.
        let at = bytes.len() - 8 * 4 - 4 * 4 - 4;
        let mut b = bytes.clone();
        b[at..at + 4].copy_from_slice(&7u32.to_le_bytes());
        assert_eq!(read(&b).0, Err(DAMAGED.to_string()));
    }
}
