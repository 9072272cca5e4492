//! [`scan_call`] fed piece by piece, as a response body arrives: [`CallStream`].
//!
//! The body is read in *units* (the envelope walk up to the Structure; one member's key, `:` and
//! value start; one list item with the `,` or `]` after it; the `,` or `}` after a member). A unit
//! is read only from the bytes in hand and counts only when it succeeds; a unit that fails is
//! tried again from its start when more bytes came (at least as many as are waiting, so a long
//! unit costs linear time), and declined for good only once the body has ended. A unit that
//! succeeds ends on a byte that closes it (a quote, a bracket, a `,`/`]`/`}`), so a piece cut in
//! the middle of a token never reads as a shorter token. The same readers as [`scan_call`]
//! (`Scanner`'s) read every token; the outcome for any split of a body is the outcome of
//! [`scan_call`] on the whole body (tests below and the package's `scan_differential.rs`).
//!
//! Memory: the Structure's columns, the body's bytes outside the Structure (the envelope, read
//! later by the caller's exact reader), and the bytes of the unit being read (an item, or a whole
//! value of a member read at once: `cell`, `scalars`, an unknown member). The Structure's text is
//! not kept: a caller that must read the whole body again when the scan declines keeps it itself.

use crate::checks::Facts;
use crate::numbers::{atom_index, atomic_number, bond_order, unsigned_digits, MAX_INT_DIGITS};
use crate::scanned::{CallScan, Scanned};
use crate::scanner::{push_sized, Dictionary, Field, Level, Scanner, REQUIRED};

/// Where the reading stands.
#[derive(Clone, Copy, PartialEq, Debug)]
enum State {
    /// Walking the envelope up to the Structure (the bytes from the body's start are in hand).
    Envelope,
    /// At a member's key (`first`: right after the Structure's `{`).
    Member { first: bool },
    /// Inside a per-atom list (`first`: right after its `[`).
    List { field: Field, first: bool },
    /// After a member's value: `,` or the Structure's `}`.
    Next,
    /// After the Structure: the rest of the body is kept as it comes.
    Tail,
    /// The Structure is there but declined.
    Declined,
    /// No Structure at `structuredContent.structure`.
    Absent,
}

/// A resumable [`scan_call`]: [`CallStream::feed`] each piece of a response body as it arrives,
/// then [`CallStream::finish`].
pub struct CallStream {
    /// Bytes in hand not yet read (from the start of the unit being read).
    buf: Vec<u8>,
    /// Body offset of `buf[0]`.
    offset: usize,
    /// The body outside the Structure: the bytes before it, then (once read) those after it.
    kept: Vec<u8>,
    /// Where the Structure stood in `kept`.
    split: usize,
    /// Body offsets of the Structure's `{` and just after its `}`.
    range: std::ops::Range<usize>,
    state: State,
    out: Scanned,
    seen: u16,
    residue_names: Dictionary,
    atom_names: Dictionary,
    /// The columns summed up as they are read (issue 10: so that little is left after the last
    /// byte).
    facts: Facts,
    /// The next attempt waits until `buf` holds this many bytes.
    retry_at: usize,
}

/// What [`CallStream::finish`] found.
pub enum Streamed {
    /// The Structure, read, and its facts; the body with `placeholder` instead of the
    /// Structure's text; the Structure's byte range in the body.
    Read {
        /// The Structure's members.
        structure: Box<Scanned>,
        /// Its columns summed up ([`Facts::counted`]: all of each).
        facts: Box<Facts>,
        /// The rest of the body, the Structure's text replaced.
        rest: Vec<u8>,
        /// The Structure's byte range in the whole body.
        range: std::ops::Range<usize>,
    },
    /// As [`CallScan::Declined`].
    Declined,
    /// As [`CallScan::Absent`].
    Absent,
}

impl std::fmt::Debug for CallStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallStream")
            .field("state", &self.state)
            .field("offset", &self.offset)
            .field("atoms", &self.out.elements.len())
            .finish_non_exhaustive()
    }
}

impl Default for CallStream {
    fn default() -> Self {
        CallStream::new()
    }
}

impl CallStream {
    /// A reader at the start of a body.
    pub fn new() -> CallStream {
        CallStream {
            buf: Vec::new(),
            offset: 0,
            kept: Vec::new(),
            split: 0,
            range: 0..0,
            state: State::Envelope,
            out: Scanned::default(),
            seen: 0,
            residue_names: Dictionary::default(),
            atom_names: Dictionary::default(),
            facts: Facts::default(),
            retry_at: 0,
        }
    }

    /// Whether the scan has already given up (declined, or no Structure where it looks): the
    /// caller's exact reader will read the whole body.
    pub fn gave_up(&self) -> bool {
        matches!(self.state, State::Declined | State::Absent)
    }

    /// Bytes this reader holds besides the Structure's columns (the envelope and the unit being
    /// read).
    pub fn held_bytes(&self) -> usize {
        self.buf.capacity() + self.kept.capacity()
    }

    /// Reads the next piece of the body. The piece is read where it lies; only a unit it leaves
    /// unfinished is copied (into `buf`), and the next piece completes it with as few of its
    /// bytes as the retry rule asks for before it, too, is read where it lies (issue 10: the
    /// bytes path hands a 30 MB body in 256 KiB pieces; copying each was ~10 % of the scan).
    pub fn feed(&mut self, piece: &[u8]) {
        match self.state {
            State::Declined | State::Absent => {}
            State::Tail => self.kept.extend_from_slice(piece),
            _ => {
                let rest = self.complete_pending(piece);
                if !rest.is_empty() {
                    self.read_in_place(rest);
                }
            }
        }
    }

    /// Retries the unit pending in `buf` (if any) with the bytes of `piece` it needs, at least
    /// as many again as `buf` holds (so a long unit is retried a logarithmic number of times:
    /// linear time). Returns the part of `piece` still to read where it lies: empty when the
    /// piece went to `buf` or the scan is over.
    fn complete_pending<'p>(&mut self, piece: &'p [u8]) -> &'p [u8] {
        let mut rest = piece;
        while !self.buf.is_empty() {
            let old = self.buf.len();
            let take = self.retry_at.saturating_sub(old).max(1);
            if take > rest.len() {
                self.buf.extend_from_slice(rest);
                return &[];
            }
            let mut buf = std::mem::take(&mut self.buf);
            buf.extend_from_slice(&rest[..take]);
            match self.read(&buf, false) {
                None => {
                    if self.state == State::Tail {
                        self.kept.extend_from_slice(&rest[take..]);
                    }
                    return &[];
                }
                // The pending unit was read: go on from the piece itself.
                Some(at) if at >= old => {
                    self.offset += at;
                    return &rest[at - old..];
                }
                Some(at) => {
                    buf.drain(..at);
                    self.offset += at;
                    self.retry_at = buf.len().saturating_mul(2).max(1);
                    self.buf = buf;
                    rest = &rest[take..];
                }
            }
        }
        rest
    }

    /// Reads `b` (which starts at body offset `offset`, nothing pending) where it lies, and
    /// keeps only the unit it leaves unfinished.
    fn read_in_place(&mut self, b: &[u8]) {
        if let Some(at) = self.read(b, false) {
            self.offset += at;
            self.buf.extend_from_slice(&b[at..]);
            self.retry_at = self.buf.len().saturating_mul(2).max(1);
        }
    }

    /// Ends the body: the outcome [`scan_call`] gives on the whole body. `placeholder` stands in
    /// the returned rest where the Structure's text was.
    pub fn finish(mut self, placeholder: &[u8]) -> Streamed {
        if !self.gave_up() && self.state != State::Tail {
            let buf = std::mem::take(&mut self.buf);
            self.read(&buf, true);
        }
        match self.state {
            State::Tail => {
                let mut rest = Vec::with_capacity(self.kept.len() + placeholder.len());
                rest.extend_from_slice(&self.kept[..self.split]);
                rest.extend_from_slice(placeholder);
                rest.extend_from_slice(&self.kept[self.split..]);
                Streamed::Read {
                    structure: Box::new(self.out),
                    facts: Box::new(self.facts),
                    rest,
                    range: self.range,
                }
            }
            State::Absent => Streamed::Absent,
            _ => Streamed::Declined,
        }
    }

    /// Reads as many units as `b` holds (`b` starts at body offset `offset`); `ended`: no more
    /// bytes will come. `Some(where the unfinished unit starts)` (or a bad one: the end of the
    /// body decides), or `None` when the scan is over (the Structure read and the bytes after it
    /// kept, or given up).
    fn read(&mut self, b: &[u8], ended: bool) -> Option<usize> {
        let mut pos = 0;
        loop {
            let (state, at) = self.unit(b, pos);
            match state {
                Some(state) => {
                    self.state = state;
                    pos = at;
                    if matches!(state, State::Tail | State::Declined | State::Absent) {
                        if state == State::Tail {
                            self.range.end = self.offset + pos;
                            self.kept.extend_from_slice(&b[pos..]);
                        }
                        return None;
                    }
                }
                None if ended => {
                    self.state = match self.state {
                        State::Envelope => State::Absent,
                        _ => State::Declined,
                    };
                    return None;
                }
                None => return Some(at),
            }
        }
    }

    /// Reads one unit at `pos` of the bytes in hand: `(Some(next state), end)` when it is
    /// complete, `(None, where to resume)` when not (list items read before that point count).
    fn unit(&mut self, b: &[u8], pos: usize) -> (Option<State>, usize) {
        let mut s = Scanner { b, i: pos };
        match self.state {
            State::Envelope => {
                if s.b.starts_with(&[0xEF, 0xBB, 0xBF]) {
                    s.i = 3;
                }
                match s.locate(Level::Body) {
                    Some(Some(at)) => {
                        s.i = at + 1;
                        self.kept.extend_from_slice(&b[..at]);
                        self.split = at;
                        self.range.start = self.offset + at;
                        (Some(State::Member { first: true }), s.i)
                    }
                    Some(None) => (Some(State::Absent), s.i),
                    None => (None, pos),
                }
            }
            State::Member { first } => {
                let Some((next, seen)) = member(&mut s, first, self.seen, &mut self.out) else {
                    return (None, pos);
                };
                self.seen |= seen;
                (Some(next), s.i)
            }
            State::List { field, first } => {
                let mut first = first;
                let n = field.expected_len(self.seen, self.out.elements.len());
                let out = &mut self.out;
                let facts = &mut self.facts;
                // The items a call reads are summed up at once, while they are in cache.
                let closed = match field {
                    Field::Elements => {
                        let from = out.elements.len();
                        let closed =
                            int_items(&mut s, &mut first, &mut out.elements, atomic_number, 0);
                        facts.note_elements(&out.elements[from..]);
                        closed
                    }
                    Field::Positions => {
                        let from = out.positions.len();
                        let list = &mut out.positions;
                        let closed =
                            items(&mut s, &mut first, list, Scanner::number, n, no_compact);
                        facts.note_positions(&out.positions[from..]);
                        closed
                    }
                    Field::Bonds => {
                        let from = out.bonds.len();
                        let list = &mut out.bonds;
                        let closed =
                            items(&mut s, &mut first, list, Scanner::bond, 0, compact_bond);
                        facts.note_bonds(&out.bonds[from..]);
                        closed
                    }
                    Field::BondOrders => {
                        let list = out.bond_orders.get_or_insert_with(Vec::new);
                        let from = list.len();
                        let closed = int_items(&mut s, &mut first, list, bond_order, 0);
                        facts.note_bond_orders(&list[from..]);
                        closed
                    }
                    Field::Molecules => {
                        let list = out.molecules.get_or_insert_with(Vec::new);
                        int_items(&mut s, &mut first, list, atom_index, n)
                    }
                    Field::ResidueIds => {
                        let list = out.residue_ids.get_or_insert_with(Vec::new);
                        let from = list.len();
                        let closed = int_items(&mut s, &mut first, list, Some, n);
                        facts.note_residue_ids(&list[from..]);
                        closed
                    }
                    Field::FormalCharges => {
                        let list = out.formal_charges.get_or_insert_with(Vec::new);
                        items(&mut s, &mut first, list, Scanner::charge, n, no_compact)
                    }
                    Field::ChainIds => {
                        let list = out.chain_ids.get_or_insert_with(Vec::new);
                        let from = list.len();
                        let read = Scanner::owned_string;
                        let closed = items(&mut s, &mut first, list, read, n, no_compact);
                        facts.note_chain_ids(&list[from..]);
                        closed
                    }
                    Field::ResidueNames | Field::AtomNames => {
                        let names = if field == Field::ResidueNames {
                            &mut self.residue_names
                        } else {
                            &mut self.atom_names
                        };
                        let mut index = std::mem::take(&mut names.column.index);
                        let closed = items(
                            &mut s,
                            &mut first,
                            &mut index,
                            |s| names.read(s),
                            n,
                            no_compact,
                        );
                        names.column.index = index;
                        if closed {
                            let column = std::mem::take(&mut names.column);
                            if field == Field::ResidueNames {
                                out.residue_names = Some(column);
                            } else {
                                out.atom_names = Some(column);
                            }
                        }
                        closed
                    }
                    Field::Cell | Field::Scalars | Field::Unknown => unreachable!("read whole"),
                };
                if closed {
                    (Some(State::Next), s.i)
                } else {
                    self.state = State::List { field, first };
                    (None, s.i)
                }
            }
            State::Next => match s.next_or_close(b'}') {
                Some(true) => (Some(State::Member { first: false }), s.i),
                Some(false) if self.seen & REQUIRED == REQUIRED => (Some(State::Tail), s.i),
                Some(false) => (Some(State::Declined), s.i),
                None => (None, pos),
            },
            State::Tail | State::Declined | State::Absent => (Some(self.state), pos),
        }
    }
}

/// One member's key and `:`, and its value when it is read whole (then `Next`), or the `[` of a
/// per-atom list (then `List`); with the member's bit. `Declined` for a member seen twice or an
/// empty Structure, as [`Scanner::structure`] declines them.
fn member(s: &mut Scanner, first: bool, seen: u16, out: &mut Scanned) -> Option<(State, u16)> {
    if first {
        s.ws();
        if s.peek()? == b'}' {
            return Some((State::Declined, 0));
        }
    }
    let field = Field::of(s.string()?);
    s.eat(b':')?;
    if seen & field.bit() != 0 {
        return Some((State::Declined, 0));
    }
    let list = |s: &mut Scanner| s.eat(b'[').map(|()| State::List { field, first: true });
    let nullable_list = |s: &mut Scanner| {
        s.ws();
        if s.peek()? == b'n' {
            s.literal(b"null").map(|()| State::Next)
        } else {
            list(s)
        }
    };
    let next = match field {
        Field::Elements | Field::Positions | Field::Bonds => list(s)?,
        Field::BondOrders
        | Field::Molecules
        | Field::ResidueNames
        | Field::ResidueIds
        | Field::AtomNames
        | Field::ChainIds
        | Field::FormalCharges => nullable_list(s)?,
        Field::Cell => {
            let cell = s.cell()?;
            out.cell = cell;
            State::Next
        }
        Field::Scalars => {
            let scalars = s.nullable(Scanner::scalars)?;
            out.scalars = scalars;
            State::Next
        }
        Field::Unknown => {
            s.skip(0)?;
            State::Next
        }
    };
    Some((next, field.bit()))
}

/// [`items`] of a list of integers, each turned into the column's value by `value` (`None`: out
/// of the field's range, which declines the Structure).
#[inline]
fn int_items<T>(
    s: &mut Scanner,
    first: &mut bool,
    out: &mut Vec<T>,
    value: fn(i64) -> Option<T>,
    expected: usize,
) -> bool {
    let compact = move |b: &[u8], i: usize| {
        let (v, end) = compact_int(b, i)?;
        Some((value(v)?, end))
    };
    items(
        s,
        first,
        out,
        |s| s.int().and_then(value),
        expected,
        compact,
    )
}

/// A non-negative integer at `i` without a sign, of at most 15 digits as [`Scanner::int`] reads
/// them: its value and where its digits end (what follows is the caller's to check).
#[inline(always)]
fn compact_int(b: &[u8], i: usize) -> Option<(i64, usize)> {
    let (m, end) = unsigned_digits(b, i)?;
    (end - i <= MAX_INT_DIGITS).then_some((m as i64, end))
}

/// A bond written compactly, `[a,b]`, at `i`: the bond and where it ends; `None` for anything
/// else (white space, a sign, more than 15 digits: [`Scanner::bond`] reads it).
#[inline(always)]
fn compact_bond(b: &[u8], i: usize) -> Option<([u32; 2], usize)> {
    let atom = |at: usize, close: u8| {
        let (v, end) = compact_int(b, at)?;
        (b.get(end) == Some(&close)).then_some(())?;
        Some((atom_index(v)?, end + 1))
    };
    (b.get(i) == Some(&b'[')).then_some(())?;
    let (a, i) = atom(i + 1, b',')?;
    let (c, i) = atom(i, b']')?;
    Some(([a, c], i))
}

/// For a list without a compact step.
#[inline(always)]
fn no_compact<T>(_: &[u8], _: usize) -> Option<(T, usize)> {
    None
}

/// Reads a list's items into `out` while whole items (each with the `,` or `]` after it) are in
/// hand: `true` when the list closed, `false` at an item not (yet) read, with the position at its
/// start. `expected`: the list's length when known (else 0), for the room it takes
/// ([`push_sized`], as the one-piece scan). `compact` reads an item written the way tools write
/// it (digits, `[a,b]`) to the value `read` gives for it and where it ends, without `read`'s
/// white-space, sign, fraction and exponent steps; `None` hands the item to `read` (in V8, the
/// integer steps took ~14 % off the scan of a 500 000-atom body, the bond step ~7 % more).
#[inline]
fn items<'a, T>(
    s: &mut Scanner<'a>,
    first: &mut bool,
    out: &mut Vec<T>,
    mut read: impl FnMut(&mut Scanner<'a>) -> Option<T>,
    expected: usize,
    compact: impl Fn(&'a [u8], usize) -> Option<(T, usize)>,
) -> bool {
    if *first {
        s.ws();
        match s.peek() {
            Some(b']') => {
                s.i += 1;
                return true;
            }
            None => return false,
            Some(_) => *first = false,
        }
    }
    loop {
        let start = s.i;
        // Compact JSON first: the item right here and its `,` or `]` right after it.
        if let Some((v, end)) = compact(s.b, start) {
            if let Some(&close @ (b',' | b']')) = s.b.get(end) {
                s.i = end + 1;
                push_sized(out, v, expected);
                if close == b']' {
                    return true;
                }
                continue;
            }
        }
        if let Some(v) = read(s) {
            match s.peek() {
                Some(b',') => {
                    s.i += 1;
                    push_sized(out, v, expected);
                    continue;
                }
                Some(b']') => {
                    s.i += 1;
                    push_sized(out, v, expected);
                    return true;
                }
                _ => {}
            }
        }
        s.i = start;
        s.ws();
        let item = read(s);
        match (item, s.next_or_close(b']')) {
            (Some(v), Some(more)) => {
                push_sized(out, v, expected);
                if !more {
                    return true;
                }
            }
            _ => {
                s.i = start;
                return false;
            }
        }
    }
}

/// [`scan_call`] on `body` fed in pieces of the given lengths (cycled), with `placeholder`
/// `"@"`, as a [`CallScan`] for comparison (tests).
#[doc(hidden)]
pub fn scan_call_in_pieces(body: &[u8], lengths: &[usize]) -> (CallScan, Option<Vec<u8>>) {
    match feed_in_pieces(body, lengths) {
        Streamed::Read {
            structure,
            rest,
            range,
            ..
        } => (CallScan::Read(structure, range), Some(rest)),
        Streamed::Declined => (CallScan::Declined, None),
        Streamed::Absent => (CallScan::Absent, None),
    }
}

/// The Structure and its [`Facts`] when a [`CallStream`] fed `body` in pieces of the given
/// lengths (cycled) reads it (tests).
#[doc(hidden)]
pub fn facts_in_pieces(body: &[u8], lengths: &[usize]) -> Option<(Box<Scanned>, Box<Facts>)> {
    match feed_in_pieces(body, lengths) {
        Streamed::Read {
            structure, facts, ..
        } => Some((structure, facts)),
        _ => None,
    }
}

/// `body` fed to a [`CallStream`] in pieces of the given lengths (cycled), finished with
/// placeholder `"@"`.
fn feed_in_pieces(body: &[u8], lengths: &[usize]) -> Streamed {
    let mut stream = CallStream::new();
    let mut at = 0;
    let mut k = 0;
    while at < body.len() {
        let len = lengths[k % lengths.len()].max(1);
        k += 1;
        let end = (at + len).min(body.len());
        stream.feed(&body[at..end]);
        at = end;
    }
    stream.finish(b"@")
}
