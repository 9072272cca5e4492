//! How an offline call's CallToolResult travels from the offline Worker to the page (issue 12):
//! a successful result as its typed parts (summary, name, warnings, provenance, and the §5.1
//! Structure's arrays as little-endian binary), a tool error as its JSON text. The page makes the
//! wire value the exact reader makes of the JSON and interprets it on the one path
//! (`result::interpret_call_wire`: the contract, §5.1 with [`Structure::validate`], the name
//! fallback), or reads the JSON with `result::interpret_call_bytes`; either way after the §9 cap on
//! the transfer's length. No numbers are written as decimal text and read back: less work in both
//! threads, and about half the bytes of JSON for a large box.
//!
//! Layout: [`MAGIC`], the JSON's length (u32), the typed result's length (u32), then one of them
//! (the other's length is 0). The typed result: the summary, the name, the package version
//! (strings: a u32 byte length and UTF-8), the warnings (a u32 count and strings), the seed (u64),
//! then the Structure: a u32 of flags (which optional fields follow), then each field: a list as
//! a u32 count and its items, the cell as its nine f64, a string column as its table (a count and
//! strings) and its indices (a count and u32 each).
//!
//! Where the outcome can differ from the JSON path's: the §9 cap counts the transfer's bytes
//! (about half the JSON's), and a value the JSON could not hold (a non-finite number, written
//! `null` there) is refused by §5.1's check with its line rather than by the JSON reader. No tool
//! writes either: a tool's structure is checked before it is sent.

use megane_structure_scan::{Column, Scanned};

use crate::contract::marker::Marker;
use crate::contract::result::{
    self, BuilderResult, CallResultWire, ContentItem, Interpreted, ResultLimits,
};
use crate::contract::structure::{StringColumn, Structure};

/// The first bytes of a transfer (never the start of JSON or of an SSE stream).
pub const MAGIC: &[u8; 8] = b"\0MBC-OT1";

/// The one-line error for a transfer that does not read.
pub const DAMAGED: &str = "result: the offline tool's answer is damaged";

const CELL: u32 = 1;
const BOND_ORDERS: u32 = 2;
const MOLECULES: u32 = 4;
const RESIDUE_NAMES: u32 = 8;
const RESIDUE_IDS: u32 = 16;
const ATOM_NAMES: u32 = 32;
const CHAIN_IDS: u32 = 64;
const FORMAL_CHARGES: u32 = 128;
const SCALARS: u32 = 256;

/// A number written as its little-endian bytes.
trait Plain: Copy {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! plain {
    ($($t:ty),*) => {$(
        impl Plain for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut b = [0; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
        }
    )*};
}
plain!(u8, u32, i32, i64, u64, f64);

impl Plain for [u32; 2] {
    const SIZE: usize = 8;
    fn put(self, out: &mut Vec<u8>) {
        for x in self {
            x.put(out);
        }
    }
    fn get(bytes: &[u8]) -> Self {
        [u32::get(&bytes[..4]), u32::get(&bytes[4..])]
    }
}

fn put_u32(out: &mut Vec<u8>, n: usize) {
    (n as u32).put(out);
}

fn put_list<T: Plain>(out: &mut Vec<u8>, items: &[T]) {
    put_u32(out, items.len());
    for &x in items {
        x.put(out);
    }
}

/// An optional field, when present (its flag says so).
fn put_some<T: ?Sized>(out: &mut Vec<u8>, field: Option<&T>, put: fn(&mut Vec<u8>, &T)) {
    if let Some(field) = field {
        put(out, field);
    }
}

fn put_strings(out: &mut Vec<u8>, strings: &[String]) {
    put_u32(out, strings.len());
    for s in strings {
        put_list(out, s.as_bytes());
    }
}

fn put_column(out: &mut Vec<u8>, column: &StringColumn) {
    put_strings(out, column.table());
    put_list(out, column.indices());
}

/// A CallToolResult as its JSON text.
pub fn encode_json(json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + json.len());
    out.extend_from_slice(MAGIC);
    put_u32(&mut out, json.len());
    put_u32(&mut out, 0);
    out.extend_from_slice(json);
    out
}

/// The parts of a successful result ([`crate::offline::assemble::ToolResult`]).
pub struct Parts<'a> {
    /// The text content (summary, then any warnings).
    pub text: &'a str,
    /// BuilderResult name.
    pub name: &'a str,
    /// §5 warnings.
    pub warnings: &'a [String],
    /// The version in the provenance.
    pub version: &'a str,
    /// The seed in the provenance.
    pub seed: u64,
    /// The Structure.
    pub structure: &'a Structure,
}

/// A successful result as its typed parts, written once into a buffer of its exact size.
pub fn encode(parts: &Parts) -> Vec<u8> {
    let s = parts.structure;
    let strings = [parts.text, parts.name, parts.version];
    let body_len = strings.iter().map(|t| 4 + t.len()).sum::<usize>()
        + 4
        + parts.warnings.iter().map(|w| 4 + w.len()).sum::<usize>()
        + 8
        + body_len(s);
    let mut out = Vec::with_capacity(16 + body_len);
    out.extend_from_slice(MAGIC);
    put_u32(&mut out, 0);
    put_u32(&mut out, body_len);
    for t in strings {
        put_list(&mut out, t.as_bytes());
    }
    put_strings(&mut out, parts.warnings);
    parts.seed.put(&mut out);
    let flags = [
        (s.cell.is_some(), CELL),
        (s.bond_orders.is_some(), BOND_ORDERS),
        (s.molecules.is_some(), MOLECULES),
        (s.residue_names.is_some(), RESIDUE_NAMES),
        (s.residue_ids.is_some(), RESIDUE_IDS),
        (s.atom_names.is_some(), ATOM_NAMES),
        (s.chain_ids.is_some(), CHAIN_IDS),
        (s.formal_charges.is_some(), FORMAL_CHARGES),
        (s.scalars.is_some(), SCALARS),
    ];
    flags
        .iter()
        .fold(0, |f, &(on, bit)| if on { f | bit } else { f })
        .put(&mut out);
    put_list(&mut out, &s.elements);
    put_list(&mut out, &s.positions);
    if let Some(cell) = &s.cell {
        cell.iter().for_each(|&x| x.put(&mut out));
    }
    put_list(&mut out, &s.bonds);
    put_some(&mut out, s.bond_orders.as_deref(), put_list);
    put_some(&mut out, s.molecules.as_deref(), put_list);
    put_some(&mut out, s.residue_names.as_ref(), put_column);
    put_some(&mut out, s.residue_ids.as_deref(), put_list);
    put_some(&mut out, s.atom_names.as_ref(), put_column);
    put_some(&mut out, s.chain_ids.as_deref(), put_strings);
    put_some(&mut out, s.formal_charges.as_deref(), put_list);
    if let Some(scalars) = &s.scalars {
        put_u32(&mut out, scalars.len());
        for (name, values) in scalars {
            put_list(&mut out, name.as_bytes());
            put_list(&mut out, values);
        }
    }
    out
}

/// The length of [`encode`]'s binary Structure.
fn body_len(s: &Structure) -> usize {
    let list = |items: usize, size: usize| 4 + items * size;
    let optional = |len: Option<usize>, size: usize| len.map_or(0, |n| list(n, size));
    let strings = |t: &[String]| 4 + t.iter().map(|t| list(t.len(), 1)).sum::<usize>();
    let column = |c: &StringColumn| strings(c.table()) + list(c.len(), 4);
    4 + list(s.elements.len(), 1)
        + list(s.positions.len(), 8)
        + s.cell.map_or(0, |_| 72)
        + list(s.bonds.len(), 8)
        + optional(s.bond_orders.as_ref().map(Vec::len), 1)
        + optional(s.molecules.as_ref().map(Vec::len), 4)
        + s.residue_names.as_ref().map_or(0, column)
        + optional(s.residue_ids.as_ref().map(Vec::len), 8)
        + s.atom_names.as_ref().map_or(0, column)
        + s.chain_ids.as_deref().map_or(0, strings)
        + optional(s.formal_charges.as_ref().map(Vec::len), 4)
        + s.scalars.as_ref().map_or(0, |m| {
            4 + m
                .iter()
                .map(|(k, v)| list(k.len(), 1) + list(v.len(), 8))
                .sum::<usize>()
        })
}

/// Bytes read in order from the start (a page's `Uint8Array`, or a slice).
pub trait Source {
    /// Length in bytes.
    fn total(&self) -> usize;
    /// Copies the bytes from `at` into `out` (the caller keeps within [`Source::total`]).
    fn copy(&self, at: usize, out: &mut [u8]);
}

impl Source for &[u8] {
    fn total(&self) -> usize {
        self.len()
    }
    fn copy(&self, at: usize, out: &mut [u8]) {
        out.copy_from_slice(&self[at..at + out.len()]);
    }
}

/// What a transfer holds.
pub enum Decoded {
    /// A CallToolResult's JSON text.
    Json(Vec<u8>),
    /// A successful result, as the exact reader makes it of the JSON text.
    Wire(Box<CallResultWire>),
}

/// Reads a transfer made by [`encode`] or [`encode_json`]; `Err` is [`DAMAGED`]. The bytes are
/// copied out of `source` a window at a time (a large typed result is never whole twice in wasm
/// memory; a tool error's JSON is copied out whole).
pub fn decode(source: &dyn Source) -> Result<Decoded, String> {
    let mut r = Reader {
        source,
        at: 0,
        end: source.total(),
        window: Vec::new(),
        window_at: 0,
    };
    let damaged = || DAMAGED.to_string();
    let magic = r.bytes(MAGIC.len()).ok_or_else(damaged)?;
    let json_len = r.count(1).ok_or_else(damaged)?;
    let body_len = r.count(1).ok_or_else(damaged)?;
    if magic != MAGIC || source.total() != 16 + json_len + body_len || json_len.min(body_len) > 0 {
        return Err(damaged());
    }
    if body_len == 0 {
        return Ok(Decoded::Json(r.bytes(json_len).ok_or_else(damaged)?));
    }
    r.wire()
        .map(|wire| Decoded::Wire(Box::new(wire)))
        .ok_or_else(damaged)
}

struct Reader<'a> {
    source: &'a dyn Source,
    /// Next byte to read.
    at: usize,
    end: usize,
    /// A copy of `source[window_at..window_at + window.len()]`.
    window: Vec<u8>,
    window_at: usize,
}

/// Bytes copied from the source at a time.
const WINDOW: usize = 1 << 16;

impl Reader<'_> {
    /// The next `n` bytes, or `None` past the end.
    fn take<T>(&mut self, n: usize, read: impl FnOnce(&[u8]) -> T) -> Option<T> {
        if n > self.end - self.at {
            return None;
        }
        let in_window =
            self.at >= self.window_at && self.at + n <= self.window_at + self.window.len();
        if !in_window {
            let len = n.max(WINDOW).min(self.end - self.at);
            self.window.resize(len, 0);
            self.source.copy(self.at, &mut self.window);
            self.window_at = self.at;
        }
        let from = self.at - self.window_at;
        self.at += n;
        Some(read(&self.window[from..from + n]))
    }

    fn bytes(&mut self, n: usize) -> Option<Vec<u8>> {
        self.take(n, <[u8]>::to_vec)
    }

    fn one<T: Plain>(&mut self) -> Option<T> {
        self.take(T::SIZE, T::get)
    }

    /// A u32 count of items of `size` bytes that fit in what is left.
    fn count(&mut self, size: usize) -> Option<usize> {
        let n = self.one::<u32>()? as usize;
        (n.checked_mul(size)? <= self.end - self.at).then_some(n)
    }

    fn list<T: Plain>(&mut self) -> Option<Vec<T>> {
        let n = self.count(T::SIZE)?;
        let mut out = Vec::with_capacity(n);
        let mut left = n;
        while left > 0 {
            let k = left.min(WINDOW / T::SIZE);
            self.take(k * T::SIZE, |b| {
                out.extend(b.chunks_exact(T::SIZE).map(T::get));
            })?;
            left -= k;
        }
        Some(out)
    }

    fn column(&mut self) -> Option<Column> {
        let table = self.strings()?;
        let index = self.list::<u32>()?;
        // The column is indexed without checks later.
        index
            .iter()
            .all(|&t| (t as usize) < table.len())
            .then_some(Column { table, index })
    }

    fn text(&mut self) -> Option<String> {
        String::from_utf8(self.list::<u8>()?).ok()
    }

    fn strings(&mut self) -> Option<Vec<String>> {
        (0..self.count(4)?).map(|_| self.text()).collect()
    }

    /// Named number channels; a name twice does not read.
    fn scalars(&mut self) -> Option<std::collections::BTreeMap<String, Vec<f64>>> {
        let mut out = std::collections::BTreeMap::new();
        for _ in 0..self.count(8)? {
            let name = self.text()?;
            let values = self.list()?;
            out.insert(name, values).is_none().then_some(())?;
        }
        Some(out)
    }

    /// A successful result's parts as the wire value the exact reader makes of its JSON.
    fn wire(&mut self) -> Option<CallResultWire> {
        let [text, name, version] = [self.text()?, self.text()?, self.text()?];
        let warnings = self.strings()?;
        let seed: u64 = self.one()?;
        let structure = Structure::from(self.structure()?);
        let mut provenance = serde_json::Map::new();
        provenance.insert("megane-builder-client".into(), version.into());
        provenance.insert("seed".into(), seed.into());
        Some(CallResultWire {
            content: Some(vec![ContentItem {
                kind: Some("text".into()),
                text: Some(text),
            }]),
            is_error: Some(false),
            structured_content: Some(BuilderResult {
                contract: 1,
                name,
                structure,
                warnings,
                provenance,
            }),
            ..CallResultWire::default()
        })
    }

    fn cell(&mut self) -> Option<[f64; 9]> {
        let mut cell = [0.0; 9];
        for x in &mut cell {
            *x = self.one()?;
        }
        Some(cell)
    }

    /// An optional field: read when its flag is `on` (`None` when it does not read).
    fn optional<T>(&mut self, on: bool, read: fn(&mut Self) -> Option<T>) -> Option<Option<T>> {
        match on {
            true => read(self).map(Some),
            false => Some(None),
        }
    }

    fn structure(&mut self) -> Option<Scanned> {
        let flags = self.one::<u32>()?;
        let on = |bit: u32| flags & bit != 0;
        let elements = self.list()?;
        let positions = self.list()?;
        let cell = self.optional(on(CELL), Self::cell)?;
        let bonds = self.list()?;
        let bond_orders = self.optional(on(BOND_ORDERS), Self::list)?;
        let molecules = self.optional(on(MOLECULES), Self::list)?;
        let residue_names = self.optional(on(RESIDUE_NAMES), Self::column)?;
        let residue_ids = self.optional(on(RESIDUE_IDS), Self::list)?;
        let atom_names = self.optional(on(ATOM_NAMES), Self::column)?;
        let chain_ids = self.optional(on(CHAIN_IDS), Self::strings)?;
        let formal_charges = self.optional(on(FORMAL_CHARGES), Self::list)?;
        let scalars = self.optional(on(SCALARS), Self::scalars)?;
        (self.at == self.end && flags < 2 * SCALARS).then_some(Scanned {
            elements,
            positions,
            cell,
            bonds,
            bond_orders,
            molecules,
            residue_names,
            residue_ids,
            atom_names,
            chain_ids,
            formal_charges,
            scalars,
        })
    }
}

/// §5/§6: interprets a transfer's result for `tool_name` after the §9 cap on its length: the
/// typed result on the one interpretation path (`result::interpret_call_wire`), or the JSON text
/// (`result::interpret_call_bytes`). With whether a failure is the tool's refusal of the
/// arguments (its `isError`, §10).
pub fn interpret(
    tool_name: &str,
    marker: &Marker,
    source: &dyn Source,
    limits: &ResultLimits,
) -> (Result<Interpreted, String>, bool) {
    let decoded = result::check_result_size(source.total(), limits).and_then(|()| decode(source));
    match decoded {
        Ok(Decoded::Json(json)) => {
            let outcome = result::interpret_call_bytes(tool_name, marker, &json, limits);
            let refused = outcome.is_err() && result::is_refusal_bytes(&json);
            (outcome, refused)
        }
        Ok(Decoded::Wire(wire)) => (result::interpret_call_wire(tool_name, marker, *wire), false),
        Err(e) => (Err(e), false),
    }
}
