//! How an offline call's CallToolResult travels from the offline Worker to the page (issue 12):
//! the result's JSON text with the §5.1 Structure left out (the placeholder `read_placed` takes),
//! followed by the Structure's arrays as little-endian binary. The page reads the JSON rest with
//! the one exact reader and takes the Structure, decoded here, where it meets the placeholder
//! (`result::interpret_call_prescanned`, as for a remote result scanned while it streamed in), so
//! the contract, §5.1 ([`Structure::validate`]) and the outcome are those of the JSON bytes. The
//! numbers are not written as decimal text and read back: less work in both threads, and about
//! half the bytes of JSON for a large box.
//!
//! Layout: [`MAGIC`], the JSON rest's length (u32), the binary Structure's length (u32, 0 when the
//! rest is the whole result: a tool error, or a Structure with a field this layout does not
//! carry), the rest, the Structure: a u32 of flags (which optional fields follow), then each field
//! as a u32 count and its items (strings: a u32 byte length and UTF-8).

use megane_structure_scan::{Column, Scanned};

use crate::contract::marker::Marker;
use crate::contract::result::{self, Interpreted, ResultLimits};
use crate::contract::structure::{StringColumn, Structure};
use crate::mcp::jsonrpc::Prescanned;

/// The first bytes of a transfer (never the start of JSON or of an SSE stream).
pub const MAGIC: &[u8; 8] = b"\0MBC-OT1";

/// The one-line error for a transfer that does not read.
pub const DAMAGED: &str = "result: the offline tool's answer is damaged";

const CELL: u32 = 1;
const BOND_ORDERS: u32 = 2;
const MOLECULES: u32 = 4;
const RESIDUE_NAMES: u32 = 8;
const RESIDUE_IDS: u32 = 16;

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
plain!(u8, u32, i64, f64);

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

fn put_column(out: &mut Vec<u8>, column: &StringColumn) {
    put_u32(out, column.table().len());
    for s in column.table() {
        put_list(out, s.as_bytes());
    }
    put_list(out, column.indices());
}

/// Whether the binary layout carries `structure`: only the fields the offline tools fill (a
/// Structure with any other goes as JSON text in the rest).
pub fn carries(s: &Structure) -> bool {
    s.atom_names.is_none()
        && s.chain_ids.is_none()
        && s.formal_charges.is_none()
        && s.scalars.is_none()
        && s.positions.len() <= u32::MAX as usize
}

/// The transfer of a CallToolResult: `rest` is its JSON text, with the placeholder where
/// `structure` stood when it is `Some` (then [`carries`] holds), else the whole result.
pub fn encode(rest: &[u8], structure: Option<&Structure>) -> Vec<u8> {
    let body_len = structure.map_or(0, body_len);
    // Written once, into a buffer of its exact size.
    let mut out = Vec::with_capacity(16 + rest.len() + body_len);
    out.extend_from_slice(MAGIC);
    put_u32(&mut out, rest.len());
    put_u32(&mut out, body_len);
    out.extend_from_slice(rest);
    if let Some(s) = structure {
        let flags = [
            (s.cell.is_some(), CELL),
            (s.bond_orders.is_some(), BOND_ORDERS),
            (s.molecules.is_some(), MOLECULES),
            (s.residue_names.is_some(), RESIDUE_NAMES),
            (s.residue_ids.is_some(), RESIDUE_IDS),
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
        if let Some(orders) = &s.bond_orders {
            put_list(&mut out, orders);
        }
        if let Some(molecules) = &s.molecules {
            put_list(&mut out, molecules);
        }
        if let Some(names) = &s.residue_names {
            put_column(&mut out, names);
        }
        if let Some(ids) = &s.residue_ids {
            put_list(&mut out, ids);
        }
    }
    out
}

/// The length of [`encode`]'s binary Structure.
fn body_len(s: &Structure) -> usize {
    let list = |items: usize, size: usize| 4 + items * size;
    let optional = |len: Option<usize>, size: usize| len.map_or(0, |n| list(n, size));
    let column = |c: &StringColumn| {
        let strings: usize = c.table().iter().map(|t| list(t.len(), 1)).sum();
        4 + strings + list(c.len(), 4)
    };
    4 + list(s.elements.len(), 1)
        + list(s.positions.len(), 8)
        + s.cell.map_or(0, |_| 72)
        + list(s.bonds.len(), 8)
        + optional(s.bond_orders.as_ref().map(Vec::len), 1)
        + optional(s.molecules.as_ref().map(Vec::len), 4)
        + s.residue_names.as_ref().map_or(0, column)
        + optional(s.residue_ids.as_ref().map(Vec::len), 8)
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

/// What a transfer holds: the JSON rest, and the Structure with its length in bytes (`None` when
/// the rest is the whole result).
pub struct Decoded {
    /// The result's JSON text (with the placeholder when a Structure is placed).
    pub rest: Vec<u8>,
    /// The Structure and the length of its binary form.
    pub structure: Option<(Scanned, usize)>,
}

/// Reads a transfer made by [`encode`]; `Err` is [`DAMAGED`]. The bytes are copied out of
/// `source` a window at a time (a large result is never whole twice in wasm memory).
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
    if magic != MAGIC {
        return Err(damaged());
    }
    let rest_len = r.count(1).ok_or_else(damaged)?;
    let body_len = r.count(1).ok_or_else(damaged)?;
    if source.total() != 16 + rest_len + body_len {
        return Err(damaged());
    }
    let rest = r.bytes(rest_len).ok_or_else(damaged)?;
    let structure = if body_len == 0 {
        None
    } else {
        Some((r.structure().ok_or_else(damaged)?, body_len))
    };
    Ok(Decoded { rest, structure })
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
        let n = self.count(4)?;
        let table = (0..n)
            .map(|_| String::from_utf8(self.list::<u8>()?).ok())
            .collect::<Option<Vec<_>>>()?;
        let index = self.list::<u32>()?;
        // The column is indexed without checks later.
        index
            .iter()
            .all(|&t| (t as usize) < table.len())
            .then_some(Column { table, index })
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
        (self.at == self.end && flags < 2 * RESIDUE_IDS).then_some(Scanned {
            elements,
            positions,
            cell,
            bonds,
            bond_orders,
            molecules,
            residue_names,
            residue_ids,
            ..Scanned::default()
        })
    }
}

/// §5/§6: interprets a transfer's result for `tool_name`: the JSON rest by the exact reader with
/// the Structure placed (`result::interpret_call_prescanned`), or the whole JSON result
/// (`result::interpret_call_bytes`); the §9 cap counts the rest and the binary Structure. With
/// whether a failure is the tool's refusal of the arguments (its `isError`, §10).
pub fn interpret(
    tool_name: &str,
    marker: &Marker,
    source: &dyn Source,
    limits: &ResultLimits,
) -> (Result<Interpreted, String>, bool) {
    let Decoded { rest, structure } = match decode(source) {
        Ok(decoded) => decoded,
        Err(e) => return (Err(e), false),
    };
    let outcome = match structure {
        Some((scanned, structure_len)) => {
            let prescanned = Prescanned {
                structure: Box::new(scanned),
                structure_len,
            };
            result::interpret_call_prescanned(tool_name, marker, &rest, prescanned, limits)
        }
        None => result::interpret_call_bytes(tool_name, marker, &rest, limits),
    };
    let refused = outcome.is_err() && result::is_refusal_bytes(&rest);
    (outcome, refused)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offline::assemble::call_result;

    /// liquid_box's marker.
    fn marker() -> Marker {
        let list = crate::contract::discovery::parse_tool_list(
            &crate::offline::definitions::tools_list(),
            None,
        );
        list.unwrap().buttons[0].marker.clone()
    }

    /// Both ways to the page: (transfer's outcome, refused), (JSON bytes' outcome, refused).
    fn both(
        result: &crate::offline::assemble::ToolResult,
    ) -> [(Result<Interpreted, String>, bool); 2] {
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
        // Fields the layout does not carry: the whole result goes as JSON.
        let mut named = structure();
        named.formal_charges = Some(vec![0, 0, 0, 1]);
        assert!(!carries(&named));
        cases.push(named);
        // §5.1 refusals come out word for word: a bad element, a bond out of range.
        let mut bad = structure();
        bad.elements[3] = 0;
        cases.push(bad);
        let mut bad = structure();
        bad.bonds[1] = [0, 9];
        cases.push(bad);
        for s in cases {
            let result = call_result("water", "Packed.", s, &["dense".to_string()], 7);
            let bytes = result.to_transfer();
            assert_eq!(bytes.len(), bytes.capacity(), "written into its exact size");
            let [transfer, json] = both(&result);
            assert_eq!(transfer, json);
        }
        // A tool error: the same line, refused.
        let error = serde_json::to_vec(&crate::offline::assemble::tool_error("No.")).unwrap();
        let (outcome, refused) = interpret(
            "t",
            &marker(),
            &encode(&error, None).as_slice(),
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
