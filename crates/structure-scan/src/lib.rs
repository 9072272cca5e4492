//! The hot part of reading a §5.1 Structure from JSON: a strict, single-pass scanner over the
//! text of one Structure object, straight into typed columns.
//!
//! It is a *fast path*, not a second definition of the rules: [`scan_structure`] returns
//! `Some` only for text that the package's serde reader (`megane-builder-client`'s
//! `contract::structure`) reads to exactly the same values, and `None` for anything it is not
//! sure of (a number that is not a plain JSON integer where an integer is expected, an escape in
//! a string, a value out of a field's range, a field twice, nesting deeper than
//! [`MAX_SKIP_DEPTH`], any syntax error…). The caller then reads the same text with the serde
//! reader, which gives the exact one-line error. The §5.1 cross-field rules (lengths, bond
//! ranges, duplicates) are not checked here; `Structure::validate` checks them once.
//!
//! This crate exists so the scanner can be built at `opt-level = 3` (a per-package profile
//! override in the root `Cargo.toml`) while the rest of the package is size-optimised. Its entry
//! point is not generic, so its code is generated here, at this crate's level.
//!
//! Numbers: JSON grammar checked here (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`), then integers of
//! up to 15 digits are converted exactly and everything else by `fast-float2` (correctly rounded,
//! as serde_json with its `float_roundtrip` feature, which this package's dependency graph turns
//! on, and as JavaScript's `JSON.parse`). A number that does not fit an `f64` (`1e400`) is left
//! to the serde reader ("number out of range").

#![forbid(unsafe_code)]

use std::collections::{BTreeMap, HashMap};

pub mod checks;
mod stream;
pub use stream::{facts_in_pieces, scan_call_in_pieces, CallStream, Streamed};

/// Deepest nesting this scanner skips inside an unknown field; deeper values go to the serde
/// reader (whose own limit is 64 levels).
pub const MAX_SKIP_DEPTH: usize = 32;

/// A dictionary-encoded per-atom string column: entry `i` is `table[index[i]]`, each distinct
/// string once, in order of first appearance.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Column {
    /// Distinct strings in order of first appearance.
    pub table: Vec<String>,
    /// Per entry, its position in `table`.
    pub index: Vec<u32>,
}

/// The fields of a §5.1 Structure as read from its JSON text, before the cross-field checks.
/// Ranges that belong to one value are already enforced (atomic numbers 1–118, bond orders 1–4,
/// indices ≥ 0 and < 2³², formal charges in `i32`, finite numbers, a cell of nine numbers).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scanned {
    /// Atomic numbers, length N.
    pub elements: Vec<u8>,
    /// Positions in Å, flat `[x0, y0, z0, x1, …]`.
    pub positions: Vec<f64>,
    /// Row-major lattice vectors in Å, or `None` for `null`.
    pub cell: Option<[f64; 9]>,
    /// 0-based atom index pairs.
    pub bonds: Vec<[u32; 2]>,
    /// Bond orders 1–4, parallel to `bonds`.
    pub bond_orders: Option<Vec<u8>>,
    /// Per-atom 0-based molecule index.
    pub molecules: Option<Vec<u32>>,
    /// Per-atom residue names.
    pub residue_names: Option<Column>,
    /// Per-atom residue numbers.
    pub residue_ids: Option<Vec<i64>>,
    /// Per-atom atom names.
    pub atom_names: Option<Column>,
    /// Per-atom chain ids (not checked for length here).
    pub chain_ids: Option<Vec<String>>,
    /// Per-atom formal charges in e.
    pub formal_charges: Option<Vec<i32>>,
    /// Named per-atom number channels.
    pub scalars: Option<BTreeMap<String, Vec<f64>>>,
}

/// Reads the JSON text of one §5.1 Structure object (white space around it allowed). `None`
/// when the text is anything the scanner does not read with certainty; see the module comment.
pub fn scan_structure(text: &[u8]) -> Option<Scanned> {
    let mut scanner = Scanner { b: text, i: 0 };
    let out = scanner.structure()?;
    scanner.ws();
    (scanner.i == text.len()).then_some(out)
}

/// Finds and reads the Structure of a `tools/call` response body: `structuredContent.structure`
/// of a bare CallToolResult, or of `result` in a JSON-RPC envelope (the first one met). Returns
/// it with its byte range in `body`, so the caller can let its JSON reader parse the rest of the
/// body with a short placeholder in that range; the Structure itself is read once, here.
///
/// The members before the Structure are only walked (their strings' escapes are stepped over,
/// not checked); the caller's reader must then accept the whole body with the placeholder, which
/// checks them. [`CallScan::Declined`] when the Structure is there but declined as
/// [`scan_structure`] declines (the caller's exact reader then reads the body, once);
/// [`CallScan::Absent`] when the walk finds no Structure at that place.
pub fn scan_call(body: &[u8]) -> CallScan {
    let mut scanner = Scanner { b: body, i: 0 };
    if body.starts_with(&[0xEF, 0xBB, 0xBF]) {
        scanner.i = 3;
    }
    match scanner.locate(Level::Body) {
        Some(Some(start)) => match scanner.structure() {
            Some(structure) => CallScan::Read(Box::new(structure), start..scanner.i),
            None => CallScan::Declined,
        },
        _ => CallScan::Absent,
    }
}

/// What [`scan_call`] found in a response body.
pub enum CallScan {
    /// The Structure, read, and its byte range in the body.
    Read(Box<Scanned>, std::ops::Range<usize>),
    /// A Structure at `structuredContent.structure` that the scanner declines.
    Declined,
    /// No Structure there (a plain result, a tool error, a BuilderResult in a text item), or a
    /// body the walk does not step through.
    Absent,
}

#[derive(Clone, Copy, PartialEq)]
enum Level {
    Body,
    Envelope,
    BuilderResult,
}

const ELEMENTS: u16 = 1;
const POSITIONS: u16 = 1 << 1;
const CELL: u16 = 1 << 2;
const BONDS: u16 = 1 << 3;
const REQUIRED: u16 = ELEMENTS | POSITIONS | CELL | BONDS;

/// A member of a Structure object, by its key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Field {
    Elements,
    Positions,
    Cell,
    Bonds,
    BondOrders,
    Molecules,
    ResidueNames,
    ResidueIds,
    AtomNames,
    ChainIds,
    FormalCharges,
    Scalars,
    Unknown,
}

impl Field {
    fn of(key: &str) -> Field {
        match key {
            "elements" => Field::Elements,
            "positions" => Field::Positions,
            "cell" => Field::Cell,
            "bonds" => Field::Bonds,
            "bondOrders" => Field::BondOrders,
            "molecules" => Field::Molecules,
            "residueNames" => Field::ResidueNames,
            "residueIds" => Field::ResidueIds,
            "atomNames" => Field::AtomNames,
            "chainIds" => Field::ChainIds,
            "formalCharges" => Field::FormalCharges,
            "scalars" => Field::Scalars,
            _ => Field::Unknown,
        }
    }

    /// The member's bit in the set of members seen (0 for an unknown key, which may repeat).
    fn bit(self) -> u16 {
        match self {
            Field::Elements => ELEMENTS,
            Field::Positions => POSITIONS,
            Field::Cell => CELL,
            Field::Bonds => BONDS,
            Field::BondOrders => 1 << 4,
            Field::Molecules => 1 << 5,
            Field::ResidueNames => 1 << 6,
            Field::ResidueIds => 1 << 7,
            Field::AtomNames => 1 << 8,
            Field::ChainIds => 1 << 9,
            Field::FormalCharges => 1 << 10,
            Field::Scalars => 1 << 11,
            Field::Unknown => 0,
        }
    }

    /// The length this member's list has in a valid Structure whose `elements` (already read)
    /// has `atoms` items (§5.1: positions 3N, the other per-atom lists N), or 0 when that is not
    /// known (elements not read yet, or a list of another length: elements, bonds, bond orders).
    fn expected_len(self, seen: u16, atoms: usize) -> usize {
        if seen & ELEMENTS == 0 {
            return 0;
        }
        match self {
            Field::Positions => atoms.saturating_mul(3),
            Field::Molecules
            | Field::ResidueNames
            | Field::ResidueIds
            | Field::AtomNames
            | Field::ChainIds
            | Field::FormalCharges => atoms,
            _ => 0,
        }
    }
}

/// The dictionary of a string column being read.
#[derive(Default)]
pub(crate) struct Dictionary {
    pub(crate) column: Column,
    positions: HashMap<String, u32>,
    /// The previous string's index, and its text with its quotes in `last_quoted`.
    last: Option<u32>,
    last_quoted: Vec<u8>,
}

impl Dictionary {
    /// The index of the string at the scanner. A column repeats its strings in runs
    /// (`"HOH","HOH","HOH"`): when the previous string's bytes with their quotes are there, it is
    /// that string (they were checked when it was first read), taken without the per-byte steps
    /// and compared byte by byte in place (a call to the wasm build's `memcmp`, a byte loop out of
    /// line, measured 2–6 % of the scan in V8; this step took another ~3 % off). This step is in
    /// line and the rest ([`Dictionary::read_new`]) out of line: ~5 % off the scan in V8 against
    /// all of it out of line, where all of it in line made the scan 40 % slower.
    #[inline(always)]
    pub(crate) fn read(&mut self, s: &mut Scanner) -> Option<u32> {
        if let Some(t) = self.last {
            let quoted = &self.last_quoted;
            if let Some(at) = s.b.get(s.i..s.i + quoted.len()) {
                if at.iter().zip(quoted).all(|(a, b)| a == b) {
                    s.i += quoted.len();
                    return Some(t);
                }
            }
        }
        self.read_new(s)
    }

    /// A string that is not the previous one: read, checked, and looked up or added.
    #[inline(never)]
    fn read_new(&mut self, s: &mut Scanner) -> Option<u32> {
        let bytes = s.string_bytes()?;
        let text = std::str::from_utf8(bytes).ok()?;
        let t = match self.positions.get(text) {
            Some(&t) => t,
            None => {
                let t = u32::try_from(self.column.table.len()).ok()?;
                self.column.table.push(text.to_owned());
                self.positions.insert(text.to_owned(), t);
                t
            }
        };
        self.last = Some(t);
        self.last_quoted.clear();
        self.last_quoted.push(b'"');
        self.last_quoted.extend_from_slice(bytes);
        self.last_quoted.push(b'"');
        Some(t)
    }
}

/// Pushes `item` onto a list expected to end at `expected` items (0: not known). A full `out`
/// grows by doubling, as `Vec` does, but not past `expected` while it is short of it, so an
/// honest list ends in a block of its exact size (500 000 atoms' positions: 12 MB, not the
/// 16 MiB of the last doubling, nor its 8 + 16 MiB while moving). The room taken never exceeds
/// doubling's, so a long hostile `elements` list cannot make a short list reserve much.
#[inline]
fn push_sized<T>(out: &mut Vec<T>, item: T, expected: usize) {
    let len = out.len();
    if len == out.capacity() && expected > len {
        let doubled = len.saturating_mul(2).max(8);
        out.reserve_exact(doubled.min(expected) - len);
    }
    out.push(item);
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scanner<'a> {
    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            Some(())
        } else {
            None
        }
    }

    /// After an item of an array or a member of an object: `,` (more follow, `true`) or the
    /// closing bracket (`false`).
    #[inline]
    fn next_or_close(&mut self, close: u8) -> Option<bool> {
        self.ws();
        match self.peek()? {
            b',' => {
                self.i += 1;
                Some(true)
            }
            c if c == close => {
                self.i += 1;
                Some(false)
            }
            _ => None,
        }
    }

    fn structure(&mut self) -> Option<Scanned> {
        self.eat(b'{')?;
        let mut out = Scanned::default();
        let mut seen = 0u16;
        self.ws();
        if self.peek() == Some(b'}') {
            return None;
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            let field = Field::of(key);
            if seen & field.bit() != 0 {
                return None;
            }
            let n = field.expected_len(seen, out.elements.len());
            seen |= field.bit();
            match field {
                Field::Elements => out.elements = self.list(0, Self::element)?,
                Field::Positions => out.positions = self.list(n, Self::number)?,
                Field::Cell => out.cell = self.cell()?,
                Field::Bonds => out.bonds = self.list(0, Self::bond)?,
                Field::BondOrders => {
                    out.bond_orders = self.nullable(|s| s.list(0, Self::bond_order))?
                }
                Field::Molecules => out.molecules = self.nullable(|s| s.list(n, Self::index))?,
                Field::ResidueNames => out.residue_names = self.nullable(|s| s.column(n))?,
                Field::ResidueIds => out.residue_ids = self.nullable(|s| s.list(n, Self::int))?,
                Field::AtomNames => out.atom_names = self.nullable(|s| s.column(n))?,
                Field::ChainIds => {
                    out.chain_ids = self.nullable(|s| s.list(n, Self::owned_string))?
                }
                Field::FormalCharges => {
                    out.formal_charges = self.nullable(|s| s.list(n, Self::charge))?
                }
                Field::Scalars => out.scalars = self.nullable(Self::scalars)?,
                Field::Unknown => self.skip(0)?,
            }
            if !self.next_or_close(b'}')? {
                break;
            }
        }
        (seen & REQUIRED == REQUIRED).then_some(out)
    }

    /// `[item, …]` with white space anywhere between tokens; `expected` items when known (else
    /// 0), for the room it takes ([`push_sized`]).
    #[inline]
    fn list<T>(
        &mut self,
        expected: usize,
        mut item: impl FnMut(&mut Self) -> Option<T>,
    ) -> Option<Vec<T>> {
        self.eat(b'[')?;
        let mut out = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Some(out);
        }
        loop {
            self.ws();
            push_sized(&mut out, item(self)?, expected);
            if !self.next_or_close(b']')? {
                return Some(out);
            }
        }
    }

    fn nullable<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        self.ws();
        if self.peek() == Some(b'n') {
            self.literal(b"null")?;
            return Some(None);
        }
        read(self).map(Some)
    }

    /// A finite JSON number as `f64`. Most numbers (at most 15 significant digits, at most 22
    /// after the point, no exponent) are converted while their digits are checked: the digits as
    /// an integer (exact below 2⁵³) divided by an exact power of ten, one correctly rounded IEEE
    /// division. Anything else is converted by `fast-float2` after the grammar check.
    #[inline(always)]
    fn number(&mut self) -> Option<f64> {
        let v = self.number_or_nan();
        (!v.is_nan()).then_some(v)
    }

    /// [`Scanner::number`] with NaN for `None` (the number read is finite, never NaN): a plain
    /// `f64` comes back from this out-of-line call in a register where an `Option<f64>` came
    /// through memory (in V8, ~5 % off the scan of a 500 000-atom body).
    #[inline(never)]
    fn number_or_nan(&mut self) -> f64 {
        self.finite_number().unwrap_or(f64::NAN)
    }

    #[inline(always)]
    fn finite_number(&mut self) -> Option<f64> {
        let b = self.b;
        let start = self.i;
        let IntegerPart {
            negative,
            mut mantissa,
            mut significant,
            end: mut i,
        } = integer_part(b, start)?;
        let mut fraction = 0usize;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let digits = i;
            // Zeros before the first significant digit (`0.000123`) are not significant.
            if significant == 0 {
                while b.get(i) == Some(&b'0') {
                    i += 1;
                }
            }
            let end;
            (end, mantissa) = digit_run(b, i, mantissa);
            significant += end - i;
            i = end;
            fraction = i - digits;
            if fraction == 0 {
                return None;
            }
        }
        let exponent = matches!(b.get(i), Some(b'e' | b'E'));
        if !exponent && significant <= 15 && fraction < POW10.len() {
            self.i = i;
            let v = mantissa as f64 / POW10[fraction];
            return Some(if negative { -v } else { v });
        }
        if exponent {
            i = exponent_end(b, i)?;
        }
        self.i = i;
        let value = fast_float2::parse::<f64, _>(&b[start..i]).ok()?;
        value.is_finite().then_some(value)
    }

    /// A plain JSON integer token (no fraction or exponent) of at most 15 digits (exact in
    /// `f64` and `i64`), its digits checked and converted in one pass (issue 10: per-atom
    /// integers are most of a body's tokens). `None` for anything else, as the number grammar
    /// has it: `-` without a digit, a leading `0` followed by a fraction or exponent, 16 digits.
    #[inline]
    fn int(&mut self) -> Option<i64> {
        let b = self.b;
        let IntegerPart {
            negative,
            mantissa,
            significant,
            end,
        } = integer_part(b, self.i)?;
        if significant > MAX_INT_DIGITS || matches!(b.get(end), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.i = end;
        let v = mantissa as i64;
        Some(if negative { -v } else { v })
    }

    #[inline]
    fn index(&mut self) -> Option<u32> {
        self.int().and_then(atom_index)
    }

    #[inline]
    fn bond(&mut self) -> Option<[u32; 2]> {
        self.eat(b'[')?;
        self.ws();
        let a = self.index()?;
        self.eat(b',')?;
        self.ws();
        let b = self.index()?;
        self.eat(b']')?;
        Some([a, b])
    }

    /// `cell`: `null` or nine numbers.
    fn cell(&mut self) -> Option<Option<[f64; 9]>> {
        match self.nullable(|s| s.list(9, Self::number))? {
            Some(cell) => Some(Some(<[f64; 9]>::try_from(cell.as_slice()).ok()?)),
            None => Some(None),
        }
    }

    #[inline]
    fn element(&mut self) -> Option<u8> {
        self.int().and_then(atomic_number)
    }

    #[inline]
    fn bond_order(&mut self) -> Option<u8> {
        self.int().and_then(bond_order)
    }

    #[inline]
    fn charge(&mut self) -> Option<i32> {
        self.int().and_then(formal_charge)
    }

    #[inline]
    fn owned_string(&mut self) -> Option<String> {
        self.string().map(str::to_owned)
    }

    /// A JSON string without escapes or control characters, valid UTF-8.
    #[inline]
    fn string(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.string_bytes()?).ok()
    }

    /// The bytes of a JSON string without escapes or control characters, not yet checked to be
    /// UTF-8: a column compares them with the string before it first, which was checked.
    #[inline]
    fn string_bytes(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            match *self.b.get(self.i)? {
                b'"' => break,
                b'\\' | 0..=0x1f => return None,
                _ => self.i += 1,
            }
        }
        self.i += 1;
        Some(&self.b[start..self.i - 1])
    }

    /// An array of strings (`expected` of them when known, else 0), dictionary-encoded.
    fn column(&mut self, expected: usize) -> Option<Column> {
        let mut names = Dictionary::default();
        let index = self.list(expected, |s| names.read(s))?;
        names.column.index = index;
        Some(names.column)
    }

    /// `{"name": [numbers], …}`, each name once.
    fn scalars(&mut self) -> Option<BTreeMap<String, Vec<f64>>> {
        self.eat(b'{')?;
        let mut out = BTreeMap::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Some(out);
        }
        loop {
            let name = self.string()?;
            self.eat(b':')?;
            let values = self.list(0, Self::number)?;
            if out.insert(name.to_owned(), values).is_some() {
                return None;
            }
            if !self.next_or_close(b'}')? {
                return Some(out);
            }
        }
    }

    /// Walks the object at `level` up to the Structure (see [`scan_call`]): `Some(Some(at))`
    /// with `at` the offset of the Structure's `{`, `Some(None)` when the walk ends without
    /// meeting it, `None` when the walk fails (bad or, fed in pieces, not yet complete text).
    /// The one walk of both [`scan_call`] and [`CallStream`].
    fn locate(&mut self, level: Level) -> Option<Option<usize>> {
        self.eat(b'{')?;
        self.ws();
        if self.peek() == Some(b'}') {
            return Some(None);
        }
        loop {
            let key = self.loose_string()?;
            self.eat(b':')?;
            self.ws();
            let object = self.peek() == Some(b'{');
            let inner = match (level, key) {
                (Level::Body, b"result") if object => Some(Level::Envelope),
                (Level::Body | Level::Envelope, b"structuredContent") if object => {
                    Some(Level::BuilderResult)
                }
                (Level::BuilderResult, b"structure") if object => return Some(Some(self.i)),
                _ => None,
            };
            match inner {
                Some(inner) => return self.locate(inner),
                None => self.skip_loose(0)?,
            }
            if !self.next_or_close(b'}')? {
                return Some(None);
            }
        }
    }

    /// A string's raw bytes (between the quotes, escapes left as written and not checked).
    fn loose_string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            match *self.b.get(self.i)? {
                b'"' => break,
                b'\\' => self.i += 2,
                _ => self.i += 1,
            }
        }
        let text = self.b.get(start..self.i)?;
        self.i += 1;
        Some(text)
    }

    /// Steps over one value before the Structure without checking it (the caller's reader does).
    fn skip_loose(&mut self, depth: usize) -> Option<()> {
        if depth >= 64 {
            return None;
        }
        self.ws();
        match self.peek()? {
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.i += 1;
                self.ws();
                if self.peek() == Some(close) {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    if open == b'{' {
                        self.loose_string()?;
                        self.eat(b':')?;
                    }
                    self.skip_loose(depth + 1)?;
                    if !self.next_or_close(close)? {
                        return Some(());
                    }
                }
            }
            b'"' => self.loose_string().map(|_| ()),
            _ => {
                let start = self.i;
                while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' | b'a'..=b'z') =
                    self.b.get(self.i)
                {
                    self.i += 1;
                }
                (self.i > start).then_some(())
            }
        }
    }

    /// Skips one value of an unknown field (numbers must be finite, strings plain).
    fn skip(&mut self, depth: usize) -> Option<()> {
        if depth >= MAX_SKIP_DEPTH {
            return None;
        }
        self.ws();
        match self.peek()? {
            b'{' => {
                self.i += 1;
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    self.string()?;
                    self.eat(b':')?;
                    self.skip(depth + 1)?;
                    if !self.next_or_close(b'}')? {
                        return Some(());
                    }
                }
            }
            b'[' => {
                self.i += 1;
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    self.skip(depth + 1)?;
                    if !self.next_or_close(b']')? {
                        return Some(());
                    }
                }
            }
            b'"' => self.string().map(|_| ()),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number().map(|_| ()),
        }
    }
}

/// The most digits an integer may have (exact in `f64` and `i64`; [`Scanner::int`]).
const MAX_INT_DIGITS: usize = 15;

/// An atomic number, 1–118 (`elements`).
#[inline]
fn atomic_number(v: i64) -> Option<u8> {
    (1..=118).contains(&v).then_some(v as u8)
}

/// A bond order, 1–4 (`bondOrders`).
#[inline]
fn bond_order(v: i64) -> Option<u8> {
    (1..=4).contains(&v).then_some(v as u8)
}

/// An index in `u32` (an atom of `bonds`, a molecule of `molecules`).
#[inline]
fn atom_index(v: i64) -> Option<u32> {
    u32::try_from(v).ok()
}

/// A formal charge in `i32` (`formalCharges`).
#[inline]
fn formal_charge(v: i64) -> Option<i32> {
    i32::try_from(v).ok()
}

/// The sign and integer part of a JSON number ([`integer_part`]).
struct IntegerPart {
    negative: bool,
    /// The digits as an integer (exact up to 19 digits; the callers refuse more than 15).
    mantissa: u64,
    /// Digits counted (a lone `0` counts none).
    significant: usize,
    /// Just after the last digit.
    end: usize,
}

/// The sign and integer part of a JSON number at `i`: `-`?, then [`unsigned_digits`]; `None`
/// without a digit. The one integer-part rule of both number readers ([`Scanner::number`],
/// [`Scanner::int`]).
#[inline(always)]
fn integer_part(b: &[u8], mut i: usize) -> Option<IntegerPart> {
    let negative = b.get(i) == Some(&b'-');
    if negative {
        i += 1;
    }
    let (mantissa, end) = unsigned_digits(b, i)?;
    Some(IntegerPart {
        negative,
        mantissa,
        // A lone `0` has no significant digit; otherwise every digit is.
        significant: if b[i] == b'0' { 0 } else { end - i },
        end,
    })
}

/// The digits of an integer part at `i`, `0` or a non-zero digit and the digits after it: their
/// value (wrapping past 19 digits) and where they end; `None` without a digit. The first digit
/// is taken before the loop (in V8, ~6 % off the scan of a 500 000-atom body against the loop
/// reading it again).
#[inline(always)]
pub(crate) fn unsigned_digits(b: &[u8], i: usize) -> Option<(u64, usize)> {
    match *b.get(i)? {
        b'0' => Some((0, i + 1)),
        d @ b'1'..=b'9' => {
            let (end, value) = digits_one_by_one(b, i + 1, u64::from(d - b'0'));
            Some((value, end))
        }
        _ => None,
    }
}

/// The run of ASCII digits at `i`: where it ends, and `mantissa` with the run's digits appended
/// (wrapping past 19 digits; the callers refuse more than 15 significant ones). Eight bytes at a
/// time where eight are in hand, then byte by byte for the last few bytes of the piece. Used for
/// a fraction's digits (a position has six or more): in V8, 3–5 % off the whole scan of a
/// 500 000-atom body. Integer parts are short (atom indices, element numbers, a position's one
/// or two digits), and there the per-digit loop ([`digits_one_by_one`]) measured 25 % faster.
#[inline(always)]
fn digit_run(b: &[u8], mut i: usize, mut mantissa: u64) -> (usize, u64) {
    while let Some(chunk) = b.get(i..i + 8) {
        let (n, value) = eight_digits(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])));
        if n == 0 {
            return (i, mantissa);
        }
        mantissa = mantissa.wrapping_mul(POW10_INT[n]).wrapping_add(value);
        i += n;
        if n < 8 {
            return (i, mantissa);
        }
    }
    digits_one_by_one(b, i, mantissa)
}

/// The run of ASCII digits at `i`, one byte at a time: where it ends, and `mantissa` with the
/// run's digits appended (wrapping). The loop of [`unsigned_digits`] and of [`digit_run`]'s
/// last bytes.
#[inline(always)]
fn digits_one_by_one(b: &[u8], mut i: usize, mut mantissa: u64) -> (usize, u64) {
    while let Some(&d @ b'0'..=b'9') = b.get(i) {
        mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
        i += 1;
    }
    (i, mantissa)
}

/// The leading ASCII digits of eight bytes read little-endian (the first byte lowest): how many
/// (0–8), and their value. A byte is a digit when its high nibble is 3 and adding 6 keeps it
/// so; a carry out of a non-digit byte only reaches bytes after it, which do not count.
#[inline(always)]
fn eight_digits(x: u64) -> (usize, u64) {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let other = ((x & HIGH) ^ ZEROS) | ((x.wrapping_add(0x0606_0606_0606_0606) & HIGH) ^ ZEROS);
    let n = (other.trailing_zeros() / 8) as usize;
    if n == 0 {
        return (0, 0);
    }
    // The n digits moved to the top bytes, zeros (value 0) below them, then pairs, quads and
    // the eight combined by three multiplications.
    let v = (x.wrapping_sub(ZEROS) & 0x0F0F_0F0F_0F0F_0F0F) << (8 * (8 - n));
    let v = (v.wrapping_mul(10 << 8 | 1) >> 8) & 0x00FF_00FF_00FF_00FF;
    let v = (v.wrapping_mul(100 << 16 | 1) >> 16) & 0x0000_FFFF_0000_FFFF;
    let v = v.wrapping_mul(10_000 << 32 | 1) >> 32;
    (n, v)
}

/// Powers of ten for [`digit_run`] (10⁰ to 10⁸).
const POW10_INT: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// Powers of ten exact in `f64` (10²² is the largest).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The end of a JSON exponent (`e`/`E`, an optional sign, at least one digit) that starts at
/// `i`, or `None` when it has no digits ([`Scanner::number`]'s exponent rule).
#[inline]
fn exponent_end(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    if let Some(b'+' | b'-') = b.get(i) {
        i += 1;
    }
    let digits = i;
    while let Some(b'0'..=b'9') = b.get(i) {
        i += 1;
    }
    (i > digits).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Option<Scanned> {
        scan_structure(text.as_bytes())
    }

    #[test]
    fn digit_runs_read_eight_bytes_at_a_time_as_one_byte_at_a_time() {
        // Every byte value at every place of a run of digits, long runs, runs cut by the end of
        // the bytes: the same end and value as the per-digit rule.
        fn per_digit(b: &[u8], mut i: usize, mut m: u64) -> (usize, u64) {
            while let Some(&d @ b'0'..=b'9') = b.get(i) {
                m = m.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                i += 1;
            }
            (i, m)
        }
        let digits = b"9081726354"; // includes 0 and 9, the ends of the range
        for len in 0..=21 {
            let run: Vec<u8> = (0..len).map(|k| digits[k % digits.len()]).collect();
            for stop in 0..=255u8 {
                for tail in 0..=9 {
                    let mut b = run.clone();
                    b.push(stop);
                    b.extend(std::iter::repeat_n(b'7', tail));
                    for cut in [b.len(), len + 1, len] {
                        let b = &b[..cut.min(b.len())];
                        for start in [0, len.min(3)] {
                            assert_eq!(
                                digit_run(b, start, 42),
                                per_digit(b, start, 42),
                                "{:?} from {start}",
                                String::from_utf8_lossy(b)
                            );
                        }
                    }
                }
            }
        }
    }

    const WATER: &str = r#" {"elements":[8,1,1],"positions":[0,0,0, 0.96,0,0, -0.24,0.93,0],
        "cell":null,"bonds":[[0,1],[0,2]],"extra":{"ignored":[1,2,{"a":null}]}} "#;

    #[test]
    fn per_atom_lists_after_elements_end_in_blocks_of_their_size() {
        let atoms = 1000;
        let list = |n: usize, item: &str| vec![item; n].join(",");
        let body = format!(
            r#"{{"result":{{"structuredContent":{{"structure":{{"elements":[{}],"positions":[{}],"cell":null,"bonds":[],"molecules":[{}],"residueNames":[{}],"residueIds":[{}]}}}}}}}}"#,
            list(atoms, "8"),
            list(3 * atoms, "1.5"),
            list(atoms, "0"),
            list(atoms, "\"HOH\""),
            list(atoms, "1"),
        );
        let whole = match scan_call(body.as_bytes()) {
            CallScan::Read(s, _) => s,
            _ => panic!("not read"),
        };
        let (pieces, _) = scan_call_in_pieces(body.as_bytes(), &[7, 64, 1]);
        let CallScan::Read(streamed, _) = pieces else {
            panic!("not read in pieces")
        };
        for s in [&whole, &streamed] {
            assert_eq!(s.positions.capacity(), 3 * atoms);
            assert_eq!(s.molecules.as_ref().unwrap().capacity(), atoms);
            assert_eq!(s.residue_ids.as_ref().unwrap().capacity(), atoms);
            assert_eq!(s.residue_names.as_ref().unwrap().index.capacity(), atoms);
        }
        // Elements after positions, or a list longer than expected: plain doubling.
        let mut v = Vec::new();
        for k in 0..20 {
            push_sized(&mut v, k, 12);
        }
        assert_eq!(v.len(), 20);
        assert!(v.capacity() >= 20 && v.capacity() <= 24, "{}", v.capacity());
        // A long hostile `elements` list never makes a short list take more room than doubling.
        let mut v = Vec::new();
        for k in 0..3 {
            push_sized(&mut v, k, 1 << 40);
        }
        assert_eq!(v.capacity(), 8);
    }

    #[test]
    fn reads_water() {
        let s = scan(WATER).unwrap();
        assert_eq!(s.elements, [8, 1, 1]);
        assert_eq!(s.positions[3], 0.96);
        assert_eq!(s.positions[6], -0.24);
        assert_eq!(s.bonds, [[0, 1], [0, 2]]);
        assert_eq!(s.cell, None);
    }

    #[test]
    fn a_string_column_repeats_only_equal_strings() {
        let names = [
            "HOH", "HOH", "HOX", "HO", "HOH", "HOHH", "H", "HOH", "", "", "HOH",
        ];
        let column: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
        let text = format!(
            r#"{{"elements":[{ones}],"positions":[{zeros}],"cell":null,"bonds":[],"residueNames":[{c}],"atomNames":[ {spaced} ]}}"#,
            ones = vec!["1"; names.len()].join(","),
            zeros = vec!["0"; 3 * names.len()].join(","),
            c = column.join(","),
            spaced = column.join(" , "),
        );
        let expect = |c: &Column| {
            let read: Vec<&str> = c
                .index
                .iter()
                .map(|&t| c.table[t as usize].as_str())
                .collect();
            assert_eq!(read, names);
        };
        let s = scan(&text).unwrap();
        expect(s.residue_names.as_ref().unwrap());
        expect(s.atom_names.as_ref().unwrap());
        let body = format!(r#"{{"result":{{"structuredContent":{{"structure":{text}}}}}}}"#);
        assert!(same_in_pieces(body.as_bytes()));
        let Ok((s, _)) = outcome(scan_call(body.as_bytes())) else {
            panic!("not read")
        };
        expect(s.residue_names.as_ref().unwrap());
        expect(s.atom_names.as_ref().unwrap());
    }

    #[test]
    fn declines_what_it_is_not_sure_of() {
        let body = |positions: &str| {
            format!(r#"{{"elements":[8],"positions":{positions},"cell":null,"bonds":[]}}"#)
        };
        assert!(scan(&body("[1,2,3]")).is_some());
        for bad in [
            "[1,2,]",
            "[01,2,3]",
            "[1.,2,3]",
            "[.5,2,3]",
            "[1e400,2,3]",
            "[-1e400,0,0]",
            "[+1,2,3]",
            "[NaN,0,0]",
            "[Infinity,0,0]",
            "[1,2,3",
            "[\"1\",2,3]",
            "[1 2 3]",
            "[-,0,0]",
            "[1e,0,0]",
            "[1e+,0,0]",
            "null",
        ] {
            assert!(scan(&body(bad)).is_none(), "{bad}");
        }
        assert!(scan(
            r#"{"elements":[8],"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[]}"#
        )
        .is_none());
        assert!(scan(r#"{"elements":[8.0],"positions":[0,0,0],"cell":null,"bonds":[]}"#).is_none());
        assert!(scan(r#"{"elements":[119],"positions":[0,0,0],"cell":null,"bonds":[]}"#).is_none());
        assert!(scan(r#"{"elements":[8],"positions":[0,0,0],"bonds":[]}"#).is_none());
        assert!(
            scan(r#"{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[[0,1,2]]}"#).is_none()
        );
        assert!(scan(r#"{"elements":[8],"positions":[0,0,0],"cell":[1,2],"bonds":[]}"#).is_none());
        assert!(
            scan(r#"{"elem\u0065nts":[8],"positions":[0,0,0],"cell":null,"bonds":[]}"#).is_none()
        );
        let deep = format!(
            r#"{{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[],"x":{}{}}}"#,
            "[".repeat(40),
            "]".repeat(40)
        );
        assert!(scan(&deep).is_none());
    }

    /// Integers: at most 15 digits, no fraction or exponent, a lone `0` before other digits
    /// read as `0` (the list then declines at the next byte), the position after the token.
    #[test]
    fn integers_as_the_number_grammar_has_them() {
        let int = |text: &str| {
            let mut s = Scanner {
                b: text.as_bytes(),
                i: 0,
            };
            s.int().map(|v| (v, s.i))
        };
        assert_eq!(int("0"), Some((0, 1)));
        assert_eq!(int("-0,"), Some((0, 2)));
        assert_eq!(int("42]"), Some((42, 2)));
        assert_eq!(int("-118 "), Some((-118, 4)));
        assert_eq!(int("01"), Some((0, 1)));
        assert_eq!(int("999999999999999"), Some((999_999_999_999_999, 15)));
        assert_eq!(int("-999999999999999"), Some((-999_999_999_999_999, 16)));
        for refused in [
            "",
            "-",
            "-x",
            "+1",
            " 1",
            ".5",
            "1.0",
            "1.",
            "0.5",
            "1e3",
            "1E3",
            "0e0",
            "1000000000000000",
            "-1000000000000000",
            "99999999999999999999999",
        ] {
            assert_eq!(int(refused), None, "{refused:?}");
        }
    }

    #[test]
    fn numbers_are_read_as_json_parse_reads_them() {
        let body = |positions: &str| {
            format!(r#"{{"elements":[8],"positions":[{positions}],"cell":null,"bonds":[]}}"#)
        };
        for (text, expected) in [
            ("-0,0,0", -0.0f64),
            ("1e-400,0,0", 0.0),
            ("12345678901234567890123,0,0", 12345678901234567890123.0),
            ("0.1000000000000000055511151231257827,0,0", 0.1),
            (
                "2.2250738585072011e-308,0,0",
                f64::from_bits(0x000F_FFFF_FFFF_FFFF),
            ),
            ("1E2,0,0", 100.0),
        ] {
            let s = scan(&body(text)).unwrap();
            assert_eq!(s.positions[0].to_bits(), expected.to_bits(), "{text}");
        }
    }

    /// The outcome of a call scan as comparable data: the Structure and range, or which refusal.
    fn outcome(scan: CallScan) -> Result<(Scanned, std::ops::Range<usize>), &'static str> {
        match scan {
            CallScan::Read(s, range) => Ok((*s, range)),
            CallScan::Declined => Err("declined"),
            CallScan::Absent => Err("absent"),
        }
    }

    /// Every split given, and pieces of random lengths, read `body` as the one-piece scan does
    /// (same Structure bit for bit, same range, the rest the body with `@` for the Structure).
    fn same_in_pieces(body: &[u8]) -> bool {
        let whole = outcome(scan_call(body));
        let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ body.len() as u64;
        let random: Vec<usize> = (0..64)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                1 + (seed % 97) as usize
            })
            .collect();
        for lengths in [&[1][..], &[2], &[7], &[65536], &random, &[3, 1, 200]] {
            let (scan, rest) = scan_call_in_pieces(body, lengths);
            let pieces = outcome(scan);
            assert_eq!(
                format!("{pieces:?}"),
                format!("{whole:?}"),
                "pieces {:?} of {}",
                &lengths[..lengths.len().min(3)],
                String::from_utf8_lossy(body)
            );
            if let (Ok((_, range)), Some(rest)) = (&whole, rest) {
                let mut expected = body[..range.start].to_vec();
                expected.push(b'@');
                expected.extend_from_slice(&body[range.end..]);
                assert_eq!(rest, expected);
            }
        }
        whole.is_ok()
    }

    #[test]
    fn any_split_reads_as_the_whole_body() {
        let envelope = |structure: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"type":"text","text":"a \"b\", {{c}}"}}],"structuredContent":{{"contract":1,"name":"w","structure":{structure}}},"isError":false}}}}"#
            )
        };
        let full = r#"{"elements":[8, 1 ,1],"positions":[0,-0.0,1e-3,0.96,0,0,-0.24,0.93,12345678901234567890],
            "cell":[1,0,0,0,1,0,0,0,1],"bonds":[[0,1],[0, 2]],"bondOrders":[1,2],"molecules":[0,0,0],
            "residueNames":["HOH","HOH","Na,"],"residueIds":[1,1,-2],"atomNames":["O","H1","H1"],
            "chainIds":["A","A","B"],"formalCharges":[0,0,-1],"scalars":{"q":[0.5,1,2]},
            "extra":{"a":[1,{"b":null}],"c":"d"}}"#;
        let mut read = 0;
        for structure in [
            WATER,
            full,
            r#"{"elements":[],"positions":[],"cell":null,"bonds":[],"bondOrders":null,"residueNames":[]}"#,
        ] {
            read += usize::from(same_in_pieces(envelope(structure).as_bytes()));
            let bare = format!(r#"{{"structuredContent":{{"structure":{structure}}}}}"#);
            read += usize::from(same_in_pieces(bare.as_bytes()));
            let bom = [&[0xEF, 0xBB, 0xBF][..], bare.as_bytes()].concat();
            read += usize::from(same_in_pieces(&bom));
        }
        assert_eq!(read, 9);
        // Declined, absent, and the whole body cut at every byte (a truncated body).
        let body = envelope(full);
        for cut in 0..=body.len() {
            same_in_pieces(&body.as_bytes()[..cut]);
        }
        for bad in [
            r#"{"structuredContent":{"structure":{}}}"#,
            r#"{"structuredContent":{"structure":{"elements":[8],"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[]}}}"#,
            r#"{"structuredContent":{"structure":{"elements":[8],"positions":[0,0,0],"bonds":[]}}}"#,
            r#"{"structuredContent":{"structure":{"elements":[8],"positions":[1e400,0,0],"cell":null,"bonds":[]}}}"#,
            r#"{"structuredContent":{"structure":{"elements":[8],"positions":[1 2 3],"cell":null,"bonds":[]}}}"#,
            r#"{"structuredContent":{"structure":{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[],"residueNames":["a\u0062"]}}}"#,
            r#"{"content":[],"isError":true}"#,
            r#"{"structuredContent":{"structure":null}}"#,
            r#"[1,2]"#,
            "",
        ] {
            assert!(!same_in_pieces(bad.as_bytes()), "{bad}");
        }
    }
}
