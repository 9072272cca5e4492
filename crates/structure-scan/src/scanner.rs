//! The scanner itself: JSON tokens over a byte slice, the walk of a `tools/call` answer to its
//! Structure, each Structure member into its typed column, and the dictionaries of the string
//! columns. It declines (`None`) anything it is not sure of.

use std::collections::{BTreeMap, HashMap};

use crate::numbers::{
    atom_index, atomic_number, bond_order, digit_run, exponent_end, formal_charge, integer_part,
    IntegerPart, MAX_INT_DIGITS, POW10,
};
use crate::scanned::{Column, Scanned};

/// Deepest nesting this scanner skips inside an unknown field; deeper values go to the serde
/// reader (whose own limit is 64 levels).
pub const MAX_SKIP_DEPTH: usize = 32;

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Level {
    Body,
    Envelope,
    BuilderResult,
}

pub(crate) const ELEMENTS: u16 = 1;
pub(crate) const POSITIONS: u16 = 1 << 1;
pub(crate) const CELL: u16 = 1 << 2;
pub(crate) const BONDS: u16 = 1 << 3;
pub(crate) const REQUIRED: u16 = ELEMENTS | POSITIONS | CELL | BONDS;

/// A member of a Structure object, by its key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Field {
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
    pub(crate) fn of(key: &str) -> Field {
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
    pub(crate) fn bit(self) -> u16 {
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
    pub(crate) fn expected_len(self, seen: u16, atoms: usize) -> usize {
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
    pub(crate) fn read_new(&mut self, s: &mut Scanner) -> Option<u32> {
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
pub(crate) fn push_sized<T>(out: &mut Vec<T>, item: T, expected: usize) {
    let len = out.len();
    if len == out.capacity() && expected > len {
        let doubled = len.saturating_mul(2).max(8);
        out.reserve_exact(doubled.min(expected) - len);
    }
    out.push(item);
}

pub(crate) struct Scanner<'a> {
    /// The text.
    pub(crate) b: &'a [u8],
    /// Where the scanner stands in it.
    pub(crate) i: usize,
}

impl<'a> Scanner<'a> {
    #[inline]
    pub(crate) fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    pub(crate) fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    pub(crate) fn literal(&mut self, word: &[u8]) -> Option<()> {
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
    pub(crate) fn next_or_close(&mut self, close: u8) -> Option<bool> {
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

    pub(crate) fn structure(&mut self) -> Option<Scanned> {
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
    pub(crate) fn list<T>(
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

    pub(crate) fn nullable<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<Option<T>> {
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
    pub(crate) fn number(&mut self) -> Option<f64> {
        let v = self.number_or_nan();
        (!v.is_nan()).then_some(v)
    }

    /// [`Scanner::number`] with NaN for `None` (the number read is finite, never NaN): a plain
    /// `f64` comes back from this out-of-line call in a register where an `Option<f64>` came
    /// through memory (in V8, ~5 % off the scan of a 500 000-atom body).
    #[inline(never)]
    pub(crate) fn number_or_nan(&mut self) -> f64 {
        self.finite_number().unwrap_or(f64::NAN)
    }

    #[inline(always)]
    pub(crate) fn finite_number(&mut self) -> Option<f64> {
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
    pub(crate) fn int(&mut self) -> Option<i64> {
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
    pub(crate) fn index(&mut self) -> Option<u32> {
        self.int().and_then(atom_index)
    }

    #[inline]
    pub(crate) fn bond(&mut self) -> Option<[u32; 2]> {
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
    pub(crate) fn cell(&mut self) -> Option<Option<[f64; 9]>> {
        match self.nullable(|s| s.list(9, Self::number))? {
            Some(cell) => Some(Some(<[f64; 9]>::try_from(cell.as_slice()).ok()?)),
            None => Some(None),
        }
    }

    #[inline]
    pub(crate) fn element(&mut self) -> Option<u8> {
        self.int().and_then(atomic_number)
    }

    #[inline]
    pub(crate) fn bond_order(&mut self) -> Option<u8> {
        self.int().and_then(bond_order)
    }

    #[inline]
    pub(crate) fn charge(&mut self) -> Option<i32> {
        self.int().and_then(formal_charge)
    }

    #[inline]
    pub(crate) fn owned_string(&mut self) -> Option<String> {
        self.string().map(str::to_owned)
    }

    /// A JSON string without escapes or control characters, valid UTF-8.
    #[inline]
    pub(crate) fn string(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.string_bytes()?).ok()
    }

    /// The bytes of a JSON string without escapes or control characters, not yet checked to be
    /// UTF-8: a column compares them with the string before it first, which was checked.
    #[inline]
    pub(crate) fn string_bytes(&mut self) -> Option<&'a [u8]> {
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
    pub(crate) fn column(&mut self, expected: usize) -> Option<Column> {
        let mut names = Dictionary::default();
        let index = self.list(expected, |s| names.read(s))?;
        names.column.index = index;
        Some(names.column)
    }

    /// `{"name": [numbers], …}`, each name once.
    pub(crate) fn scalars(&mut self) -> Option<BTreeMap<String, Vec<f64>>> {
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
    pub(crate) fn locate(&mut self, level: Level) -> Option<Option<usize>> {
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
    pub(crate) fn loose_string(&mut self) -> Option<&'a [u8]> {
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
    pub(crate) fn skip_loose(&mut self, depth: usize) -> Option<()> {
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
    pub(crate) fn skip(&mut self, depth: usize) -> Option<()> {
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
