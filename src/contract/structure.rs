//! §5.1 Structure: the structure-of-arrays payload of results and of the §4.3 document argument.
//!
//! Deserialisation goes straight into typed vectors (no `serde_json::Value` tree for the big
//! arrays), from any serde deserializer (bytes through `serde_json`, a JavaScript object through
//! `serde-wasm-bindgen`). Every wire error names its field, e.g.
//! `structure.positions[7]: invalid type: string "x", expected a number`.
//! [`Structure::validate`] then enforces the §5.1 rules in O(N + bonds · log bonds).
//! Unknown fields are ignored (§11); `null` in an optional field means absent (pydantic servers
//! send that).

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::marker::PhantomData;
use std::ops::Index;

use megane_structure_scan::checks;

use crate::wire::text::excerpt;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

pub use crate::wire::caps::MAX_ATOMS;

/// §5.1: the highest atomic number.
pub const MAX_ELEMENT: u8 = 118;

/// §5.1 Structure. N is `elements.len()`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Structure {
    /// Atomic numbers 1–118, length N.
    pub elements: Vec<u8>,
    /// Cartesian positions in Å, flat `[x0, y0, z0, x1, …]`, length 3N.
    pub positions: Vec<f64>,
    /// Row-major lattice vectors `[ax, ay, az, bx, by, bz, cx, cy, cz]` in Å; `None` (`null`) for
    /// a non-periodic structure.
    pub cell: Option<[f64; 9]>,
    /// 0-based atom index pairs, each bond once.
    pub bonds: Vec<[u32; 2]>,
    /// Parallel to `bonds`: 1, 2, 3 or 4 (aromatic); absent means all single.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bond_orders: Option<Vec<u8>>,
    /// Per-atom 0-based molecule index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub molecules: Option<Vec<u32>>,
    /// Per-atom residue name (dictionary-encoded: a few names repeated over many atoms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub residue_names: Option<StringColumn>,
    /// Per-atom residue number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub residue_ids: Option<Vec<i64>>,
    /// Per-atom atom name (dictionary-encoded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atom_names: Option<StringColumn>,
    /// Per-atom chain id, exactly one character each.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_ids: Option<Vec<String>>,
    /// Per-atom formal charge in units of e.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub formal_charges: Option<Vec<i32>>,
    /// Named per-atom numeric channels Megane does not render yet, each of length N (kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scalars: Option<BTreeMap<String, Vec<f64>>>,
    /// The scan's facts about these columns, when the scan read this Structure while its body
    /// streamed in ([`read_placed`]); not part of the value.
    #[serde(skip)]
    pub scanned: ScanFacts,
}

/// The scan's [`checks::Facts`] carried by the Structure they sum up, so that they go wherever it
/// goes and are dropped with it (issue 10), and taken by its first [`Structure::validate`], the
/// check right after the read. Not part of the value: equal whatever they hold, not cloned, not
/// serialized.
#[derive(Default)]
pub struct ScanFacts(Cell<Option<Box<checks::Facts>>>);

impl ScanFacts {
    /// Carrying `facts`.
    pub(crate) fn holding(facts: checks::Facts) -> ScanFacts {
        ScanFacts(Cell::new(Some(Box::new(facts))))
    }

    fn take(&self) -> Option<Box<checks::Facts>> {
        self.0.take()
    }
}

impl Clone for ScanFacts {
    fn clone(&self) -> Self {
        ScanFacts::default()
    }
}

impl PartialEq for ScanFacts {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for ScanFacts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ScanFacts")
    }
}

impl Structure {
    /// Number of atoms N.
    pub fn n_atoms(&self) -> usize {
        self.elements.len()
    }

    /// Position of atom `i` in Å, when it exists.
    pub fn position(&self, i: usize) -> Option<[f64; 3]> {
        let p = self.positions.get(3 * i..3 * i + 3)?;
        Some([p[0], p[1], p[2]])
    }

    /// §5.1: checks every rule; the first violation is returned as one line naming the field
    /// (`structure.<field>[index]: …`). For the Structure a scan read while its body streamed
    /// in ([`read_placed`]), the first call consults the scan's facts ([`Structure::scanned`]):
    /// a column they clear is not searched again (issue 10: the searches were most of what ran
    /// after the last byte); a column they do not clear is searched as for any other Structure,
    /// so the outcome is the same.
    pub fn validate(&self) -> Result<(), String> {
        let facts = self.scanned.take();
        // Facts that sum up every entry of these columns, else none.
        let known = facts
            .as_deref()
            .filter(|f| f.counted() == self.columns().lengths());
        self.validate_elements(known)?;
        self.validate_positions(known)?;
        self.validate_cell()?;
        self.validate_bonds(known)?;
        self.validate_bond_orders(known)?;
        self.validate_per_atom_channels(known)?;
        self.validate_scalars()
    }

    /// The columns the scan's [`checks::Facts`] sum up.
    fn columns(&self) -> checks::Columns<'_> {
        checks::Columns {
            elements: &self.elements,
            positions: &self.positions,
            bonds: &self.bonds,
            bond_orders: self.bond_orders.as_deref().unwrap_or_default(),
            residue_ids: self.residue_ids.as_deref().unwrap_or_default(),
            chain_ids: self.chain_ids.as_deref().unwrap_or_default(),
        }
    }

    fn validate_elements(&self, known: Option<&checks::Facts>) -> Result<(), String> {
        let n = self.n_atoms();
        if n > MAX_ATOMS {
            return Err(format!(
                "structure.elements: {n} atoms; Builder accepts at most {MAX_ATOMS} per result"
            ));
        }
        let bounds = known.map(|f| &f.elements);
        match checks::search_outside(bounds, 1, MAX_ELEMENT, |lo, hi| {
            checks::first_outside_u8(&self.elements, lo, hi)
        }) {
            Some(i) => Err(format!(
                "structure.elements[{i}]: {} is not an atomic number (1–118)",
                self.elements[i]
            )),
            None => Ok(()),
        }
    }

    fn validate_positions(&self, known: Option<&checks::Facts>) -> Result<(), String> {
        let n = self.n_atoms();
        if self.positions.len() != 3 * n {
            return Err(format!(
                "structure.positions: has {} numbers; {n} atoms need {} (x, y, z each)",
                self.positions.len(),
                3 * n
            ));
        }
        let first = known.map_or_else(
            || checks::first_not_finite(&self.positions),
            |f| f.first_not_finite_position,
        );
        match first {
            Some(i) => Err(format!("structure.positions[{i}]: not a finite number")),
            None => Ok(()),
        }
    }

    fn validate_cell(&self) -> Result<(), String> {
        let Some(cell) = &self.cell else {
            return Ok(());
        };
        match cell.iter().position(|v| !v.is_finite()) {
            Some(i) => Err(format!("structure.cell[{i}]: not a finite number")),
            None => Ok(()),
        }
    }

    fn validate_bonds(&self, known: Option<&checks::Facts>) -> Result<(), String> {
        let n = self.n_atoms();
        // Every atom named in range: the first bad bond is the first to name an atom twice.
        let first_bad = match known {
            Some(f) if f.bonded_atoms.is_none_or(|(_, hi)| (hi as usize) < n) => f.first_self_bond,
            _ => checks::first_bad_bond(&self.bonds, n),
        };
        if let Some(k) = first_bad {
            let [a, b] = self.bonds[k];
            if let Some(atom) = [a, b].into_iter().find(|&atom| atom as usize >= n) {
                return Err(format!(
                    "structure.bonds[{k}]: atom {atom} is out of range ({n} atoms)"
                ));
            }
            return Err(format!("structure.bonds[{k}]: bonds atom {a} to itself"));
        }
        // The lowest duplicated atom pair, with its two lowest bond indices (O(N + B), in the
        // scanner crate at opt-level 3); none when the bonds' pairs increase.
        let ascending = known.is_some_and(|f| f.first_unordered_bond.is_none());
        match (!ascending)
            .then(|| checks::first_repeated_bond(&self.bonds, n))
            .flatten()
        {
            Some(checks::Repeat {
                lo,
                hi,
                earlier,
                later,
            }) => Err(format!(
                "structure.bonds[{later}]: repeats bonds[{earlier}] (atoms {lo} and {hi})"
            )),
            None => Ok(()),
        }
    }

    fn validate_bond_orders(&self, known: Option<&checks::Facts>) -> Result<(), String> {
        let Some(orders) = &self.bond_orders else {
            return Ok(());
        };
        if orders.len() != self.bonds.len() {
            return Err(format!(
                "structure.bondOrders: has {} entries but there are {} bonds",
                orders.len(),
                self.bonds.len()
            ));
        }
        let bounds = known.map(|f| &f.bond_orders);
        match checks::search_outside(bounds, 1, 4, |lo, hi| {
            checks::first_outside_u8(orders, lo, hi)
        }) {
            Some(k) => Err(format!(
                "structure.bondOrders[{k}]: {} is not a bond order (1, 2, 3 or 4)",
                orders[k]
            )),
            None => Ok(()),
        }
    }

    fn validate_per_atom_channels(&self, known: Option<&checks::Facts>) -> Result<(), String> {
        let n = self.n_atoms();
        check_channel_length("molecules", self.molecules.as_ref().map(Vec::len), n)?;
        check_channel_length(
            "residueNames",
            self.residue_names.as_ref().map(StringColumn::len),
            n,
        )?;
        check_channel_length("residueIds", self.residue_ids.as_ref().map(Vec::len), n)?;
        if let Some(ids) = &self.residue_ids {
            // A JavaScript number holds integers exactly only up to 2^53 − 1; Builder's labels and
            // the plan's residueIds are JavaScript numbers.
            const MAX_SAFE: i64 = (1 << 53) - 1;
            let bounds = known.map(|f| &f.residue_ids);
            let first = checks::search_outside(bounds, -MAX_SAFE, MAX_SAFE, |lo, hi| {
                checks::first_outside_i64(ids, lo, hi)
            });
            if let Some(i) = first {
                return Err(format!(
                    "structure.residueIds[{i}]: {} is beyond ±(2^53 − 1), which JavaScript cannot hold exactly",
                    ids[i]
                ));
            }
        }
        check_channel_length(
            "atomNames",
            self.atom_names.as_ref().map(StringColumn::len),
            n,
        )?;
        check_channel_length("chainIds", self.chain_ids.as_ref().map(Vec::len), n)?;
        check_channel_length(
            "formalCharges",
            self.formal_charges.as_ref().map(Vec::len),
            n,
        )?;
        if let Some(chains) = &self.chain_ids {
            let bounds = known.map(|f| &f.chain_id_chars);
            let first = checks::search_outside(bounds, 1, 1, |lo, hi| {
                chains
                    .iter()
                    .position(|c| !(lo..=hi).contains(&c.chars().count()))
            });
            if let Some(i) = first {
                return Err(format!(
                    "structure.chainIds[{i}]: a chain id is exactly one character, not {:?}",
                    excerpt(&chains[i])
                ));
            }
        }
        Ok(())
    }

    fn validate_scalars(&self) -> Result<(), String> {
        let Some(scalars) = &self.scalars else {
            return Ok(());
        };
        let n = self.n_atoms();
        for (name, values) in scalars {
            let shown = excerpt(name);
            if values.len() != n {
                return Err(format!(
                    "structure.scalars.{shown}: has {} values for {n} atoms",
                    values.len()
                ));
            }
            if let Some(i) = checks::first_not_finite(values) {
                return Err(format!(
                    "structure.scalars.{shown}[{i}]: not a finite number"
                ));
            }
        }
        Ok(())
    }
}

fn check_channel_length(field: &str, len: Option<usize>, n: usize) -> Result<(), String> {
    match len {
        Some(len) if len != n => Err(format!(
            "structure.{field}: has {len} entries for {n} atoms"
        )),
        _ => Ok(()),
    }
}

/// A per-atom string channel (`residueNames`, `atomNames`), dictionary-encoded: atom `i`'s string
/// is `table[index[i]]`, each distinct string stored once. A result repeats a few names over many
/// atoms; one `String` per atom would cost 500 000 allocations (~20 MB of wasm memory) for a
/// 500 000-atom result, and the JavaScript side can rebuild the per-atom array from the small
/// table only when it is read. Indexing (`column[i]`) gives the atom's `String`.
#[derive(Debug, Clone, Default)]
pub struct StringColumn {
    /// Distinct strings in order of first appearance.
    table: Vec<String>,
    /// Per atom: a position in `table` (always in range).
    index: Vec<u32>,
}

impl StringColumn {
    /// An empty column.
    pub fn new() -> StringColumn {
        StringColumn::default()
    }

    /// Number of entries (atoms).
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the column has no entries.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Entry `i`, when it exists.
    pub fn get(&self, i: usize) -> Option<&str> {
        self.index.get(i).map(|&t| self.table[t as usize].as_str())
    }

    /// The entries in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.index.iter().map(|&t| self.table[t as usize].as_str())
    }

    /// The distinct strings, in order of first appearance.
    pub fn table(&self) -> &[String] {
        &self.table
    }

    /// Per entry, its position in [`Self::table`].
    pub fn indices(&self) -> &[u32] {
        &self.index
    }

    /// One `String` per entry.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }

    /// Appends an entry (for a column built one by one, use [`StringColumnBuilder`]).
    pub fn push(&mut self, value: &str) {
        let t = match self.table.iter().position(|t| t == value) {
            Some(t) => t,
            None => {
                self.table.push(value.to_owned());
                self.table.len() - 1
            }
        };
        self.index.push(t as u32);
    }
}

/// Builds a [`StringColumn`] in O(1) expected time per entry (a hash map of the table, and a
/// shortcut for a run of equal strings, the common case of atoms of one residue).
#[derive(Debug, Default)]
pub struct StringColumnBuilder {
    column: StringColumn,
    positions: HashMap<String, u32>,
    last: Option<u32>,
}

impl StringColumnBuilder {
    /// Appends an entry.
    pub fn push(&mut self, value: &str) {
        if let Some(last) = self.last {
            if self.column.table[last as usize] == value {
                self.column.index.push(last);
                return;
            }
        }
        let t = match self.positions.get(value) {
            Some(&t) => t,
            None => {
                let t = u32::try_from(self.column.table.len()).unwrap_or(u32::MAX);
                self.column.table.push(value.to_owned());
                self.positions.insert(value.to_owned(), t);
                t
            }
        };
        self.column.index.push(t);
        self.last = Some(t);
    }

    /// Number of entries so far.
    pub fn len(&self) -> usize {
        self.column.len()
    }

    /// Whether no entry was pushed.
    pub fn is_empty(&self) -> bool {
        self.column.is_empty()
    }

    /// The column.
    pub fn finish(self) -> StringColumn {
        self.column
    }
}

impl<S: AsRef<str>> FromIterator<S> for StringColumn {
    fn from_iter<I: IntoIterator<Item = S>>(items: I) -> StringColumn {
        let mut builder = StringColumnBuilder::default();
        for item in items {
            builder.push(item.as_ref());
        }
        builder.finish()
    }
}

impl From<Vec<String>> for StringColumn {
    fn from(values: Vec<String>) -> StringColumn {
        values.iter().collect()
    }
}

impl From<&[&str]> for StringColumn {
    fn from(values: &[&str]) -> StringColumn {
        values.iter().collect()
    }
}

impl Index<usize> for StringColumn {
    type Output = String;
    fn index(&self, i: usize) -> &String {
        &self.table[self.index[i] as usize]
    }
}

/// Equal when the entries are equal, whatever the table order.
impl PartialEq for StringColumn {
    fn eq(&self, other: &StringColumn) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl PartialEq<Vec<String>> for StringColumn {
    fn eq(&self, other: &Vec<String>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().map(String::as_str))
    }
}

/// Serialises as an array of strings, as on the wire.
impl Serialize for StringColumn {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

// ---------------------------------------------------------------------------------------------
// Wire deserialisation.
// ---------------------------------------------------------------------------------------------

/// Strips serde_json's trailing ` at line L column C` so nested errors do not repeat it, and the
/// leading `Error: ` a JavaScript `Error` prints (serde-wasm-bindgen's errors are JS `Error`s, so
/// each nesting level would add one: `Error: Error: …`).
pub(crate) fn without_position(message: &str) -> &str {
    let mut message = message;
    while let Some(rest) = message.strip_prefix("Error: ") {
        message = rest;
    }
    match message.rfind(" at line ") {
        Some(at) if message[at..].contains(" column ") => &message[..at],
        _ => message,
    }
}

/// `path: message`, unless the message already starts with a field path of this subtree.
pub(crate) fn at_path<E: de::Error>(path: &str, error: impl fmt::Display) -> E {
    let text = error.to_string();
    let text = without_position(&text);
    if text.starts_with(path) {
        E::custom(text)
    } else {
        E::custom(format!("{path}: {text}"))
    }
}

/// Deepest nesting accepted inside a value that is skipped (unknown fields, dropped warnings).
pub(crate) const MAX_SKIP_DEPTH: usize = 64;

/// Skips a value of any shape, refusing nesting deeper than [`MAX_SKIP_DEPTH`]. Unlike
/// `IgnoredAny` this bounds recursion for every deserializer (a JavaScript object through
/// `serde-wasm-bindgen` has no depth limit of its own).
#[derive(Clone, Copy)]
pub(crate) struct Skip {
    depth: usize,
}

impl Skip {
    /// A skipper at the top of the skipped value.
    pub(crate) const TOP: Skip = Skip { depth: 0 };

    fn deeper<E: de::Error>(self) -> Result<Skip, E> {
        if self.depth >= MAX_SKIP_DEPTH {
            Err(E::custom(format!(
                "nested more than {MAX_SKIP_DEPTH} levels deep"
            )))
        } else {
            Ok(Skip {
                depth: self.depth + 1,
            })
        }
    }
}

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.deeper()?;
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.deeper()?;
        while map.next_key_seed(inner)?.is_some() {
            map.next_value_seed(inner)?;
        }
        Ok(())
    }
}

/// A JSON integer (an integral float such as `8.0` counts, as in JSON Schema).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Int(pub i64);

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IntVisitor;
        impl Visitor<'_> for IntVisitor {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
                Ok(Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
                i64::try_from(v)
                    .map(Int)
                    .map_err(|_| E::custom(format!("{v} is too large")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Int, E> {
                if v.fract() == 0.0 && v.abs() < 9.0e15 {
                    Ok(Int(v as i64))
                } else {
                    Err(E::invalid_type(de::Unexpected::Float(v), &self))
                }
            }
        }
        d.deserialize_any(IntVisitor)
    }
}

/// A JSON number as `f64`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Num(pub f64);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NumVisitor;
        impl Visitor<'_> for NumVisitor {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(v))
            }
        }
        d.deserialize_any(NumVisitor)
    }
}

/// A JSON string.
#[derive(Debug, Clone)]
pub(crate) struct Text(pub String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl Visitor<'_> for TextVisitor {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text, E> {
                Ok(Text(v))
            }
        }
        d.deserialize_any(TextVisitor)
    }
}

/// Reads an array whose items are `R` on the wire and `T` after `convert`, naming the index of
/// the first bad item (`path[i]: …`).
pub(crate) struct ListSeed<'p, R, T> {
    /// Field path for errors, e.g. `structure.positions`.
    pub path: &'p str,
    /// Checks and converts one wire item; its error is prefixed with `path[index]: `.
    pub convert: fn(R) -> Result<T, String>,
}

impl<'de, R: Deserialize<'de>, T> DeserializeSeed<'de> for ListSeed<'_, R, T> {
    type Value = Vec<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        d.deserialize_seq(ListVisitor {
            seed: self,
            raw: PhantomData,
        })
    }
}

struct ListVisitor<'p, R, T> {
    seed: ListSeed<'p, R, T>,
    raw: PhantomData<R>,
}

impl<'de, R: Deserialize<'de>, T> Visitor<'de> for ListVisitor<'_, R, T> {
    type Value = Vec<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let path = self.seed.path;
        // The byte cap bounds the input; the hint is capped so a lying hint cannot over-allocate.
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4 * MAX_ATOMS));
        loop {
            let index = out.len();
            match seq.next_element::<R>() {
                Ok(Some(raw)) => match (self.seed.convert)(raw) {
                    Ok(item) => out.push(item),
                    Err(message) => {
                        return Err(de::Error::custom(format!("{path}[{index}]: {message}")))
                    }
                },
                Ok(None) => return Ok(out),
                Err(e) => return Err(at_path(&format!("{path}[{index}]"), e)),
            }
        }
    }
}

/// Wraps a seed so that `null` (or an absent JavaScript value) reads as `None`.
pub(crate) struct Nullable<S>(pub S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Nullable<S> {
    type Value = Option<S::Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(NullableVisitor(self.0))
    }
}

struct NullableVisitor<S>(S);

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for NullableVisitor<S> {
    type Value = Option<S::Value>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value or null")
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(d).map(Some)
    }
}

fn element(raw: Int) -> Result<u8, String> {
    match u8::try_from(raw.0) {
        Ok(z) if (1..=MAX_ELEMENT).contains(&z) => Ok(z),
        _ => Err(format!("{} is not an atomic number (1–118)", raw.0)),
    }
}

fn number(raw: Num) -> Result<f64, String> {
    Ok(raw.0)
}

fn bond_order(raw: Int) -> Result<u8, String> {
    match u8::try_from(raw.0) {
        Ok(o) if (1..=4).contains(&o) => Ok(o),
        _ => Err(format!("{} is not a bond order (1, 2, 3 or 4)", raw.0)),
    }
}

fn index(raw: Int) -> Result<u32, String> {
    u32::try_from(raw.0).map_err(|_| format!("{} is not a 0-based index", raw.0))
}

fn integer(raw: Int) -> Result<i64, String> {
    Ok(raw.0)
}

fn charge(raw: Int) -> Result<i32, String> {
    i32::try_from(raw.0).map_err(|_| format!("{} is not a formal charge", raw.0))
}

fn text(raw: Text) -> Result<String, String> {
    Ok(raw.0)
}

fn bond_pair(raw: BondWire) -> Result<[u32; 2], String> {
    match raw {
        BondWire {
            first: [a, b],
            count: 2,
        } => Ok([
            index(a).map_err(|e| format!("first atom: {e}"))?,
            index(b).map_err(|e| format!("second atom: {e}"))?,
        ]),
        BondWire { count, .. } => Err(format!(
            "a bond is a pair of two atom indices, not {count} numbers"
        )),
    }
}

fn cell_of_nine(raw: Vec<f64>) -> Result<[f64; 9], String> {
    <[f64; 9]>::try_from(raw.as_slice()).map_err(|_| {
        format!(
            "has {} numbers; a cell is 9 (row-major 3×3, Å) or null",
            raw.len()
        )
    })
}

/// Reads a bond `[i, j]`: the first two integers are kept and the rest only counted, so a bond
/// costs no allocation; errors are those of a list of integers (`bond[2]: invalid type: …`).
struct BondWire {
    first: [Int; 2],
    count: usize,
}

impl<'de> Deserialize<'de> for BondWire {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(BondVisitor)
    }
}

struct BondVisitor;

impl<'de> Visitor<'de> for BondVisitor {
    type Value = BondWire;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<BondWire, A::Error> {
        let mut bond = BondWire {
            first: [Int(0); 2],
            count: 0,
        };
        loop {
            match seq.next_element::<Int>() {
                Ok(Some(raw)) => {
                    if let Some(slot) = bond.first.get_mut(bond.count) {
                        *slot = raw;
                    }
                    bond.count += 1;
                }
                Ok(None) => return Ok(bond),
                Err(e) => return Err(at_path(&format!("bond[{}]", bond.count), e)),
            }
        }
    }
}

/// Reads an array of strings into a [`StringColumn`], naming the index of the first bad item
/// (`path[i]: …`, as [`ListSeed`] does). Strings without escapes are read borrowed from the
/// input, so a repeated name costs no allocation.
struct StringColumnSeed<'p> {
    path: &'p str,
}

impl<'de> DeserializeSeed<'de> for StringColumnSeed<'_> {
    type Value = StringColumn;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<StringColumn, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for StringColumnSeed<'_> {
    type Value = StringColumn;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StringColumn, A::Error> {
        let mut builder = StringColumnBuilder::default();
        loop {
            let index = builder.len();
            match seq.next_element_seed(InternSeed(&mut builder)) {
                Ok(Some(())) => {}
                Ok(None) => return Ok(builder.finish()),
                Err(e) => return Err(at_path(&format!("{}[{index}]", self.path), e)),
            }
        }
    }
}

/// One string of a [`StringColumnSeed`] array, pushed into the builder.
struct InternSeed<'b>(&'b mut StringColumnBuilder);

impl<'de> DeserializeSeed<'de> for InternSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for InternSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.0.push(v);
        Ok(())
    }
}

/// Scalars: an object of per-atom number arrays.
struct ScalarsSeed;

impl<'de> DeserializeSeed<'de> for ScalarsSeed {
    type Value = BTreeMap<String, Vec<f64>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(ScalarsVisitor)
    }
}

struct ScalarsVisitor;

impl<'de> Visitor<'de> for ScalarsVisitor {
    type Value = BTreeMap<String, Vec<f64>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of number arrays")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = BTreeMap::new();
        while let Some(Text(name)) = map.next_key::<Text>()? {
            let path = format!("structure.scalars.{}", excerpt(&name));
            let values = map.next_value_seed(ListSeed {
                path: &path,
                convert: number,
            })?;
            if out.insert(name, values).is_some() {
                return Err(de::Error::custom(format!("{path}: appears twice")));
            }
        }
        Ok(out)
    }
}

impl<'de> Deserialize<'de> for Structure {
    /// §5.1 wire format; errors name the field (`structure.<field>…`). In [`read_placed`], the
    /// placeholder is the Structure read by the scan (tests also read JSON text by the scanner).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mode = MODE.with(Cell::get);
        if mode == Mode::Placed {
            return d.deserialize_any(PlacedVisitor);
        }
        #[cfg(all(test, not(target_arch = "wasm32")))]
        if mode == Mode::Scan {
            let raw = <&serde_json::value::RawValue>::deserialize(d)?;
            if raw.get() == SPLICE_MARK {
                return SPLICED
                    .with(|s| s.borrow_mut().take())
                    .ok_or_else(|| de::Error::custom("structure: left to the exact reader"));
            }
            return megane_structure_scan::scan_structure(raw.get().as_bytes())
                .map(Structure::from)
                .ok_or_else(|| de::Error::custom("structure: left to the exact reader"));
        }
        d.deserialize_map(StructureVisitor)
    }
}

/// How a Structure is read (see [`read_placed`]).
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// By the serde visitor.
    Exact,
    /// JSON text by the scanner; the placeholder is the Structure read in place (tests: the
    /// scanner against the visitor, `scan_differential.rs`).
    #[cfg(all(test, not(target_arch = "wasm32")))]
    Scan,
    /// By the serde visitor; the placeholder is the Structure read while the body streamed in.
    Placed,
}

/// The exact reader's Structure, except that the placeholder, as written (a string without
/// escapes, so serde_json lends it from the text), is the Structure read before ([`read_placed`]).
/// Anything else gets the visitor's own reading and error.
struct PlacedVisitor;

impl<'de> Visitor<'de> for PlacedVisitor {
    type Value = Structure;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        StructureVisitor.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Structure, A::Error> {
        StructureVisitor.visit_map(map)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Structure, E> {
        let mark = &SPLICE_MARK[1..SPLICE_MARK.len() - 1];
        match SPLICED.with(|s| s.borrow_mut().take_if(|_| v == mark)) {
            Some(structure) => Ok(structure),
            None => Err(de::Error::invalid_type(de::Unexpected::Str(v), &self)),
        }
    }
}

thread_local! {
    /// How a Structure in JSON text is read (see [`read_placed`]).
    static MODE: Cell<Mode> = const { Cell::new(Mode::Exact) };
    /// The Structure the scan read in place, for the placeholder that replaced it.
    static SPLICED: RefCell<Option<Structure>> = const { RefCell::new(None) };
}

/// What replaces the Structure's text in the body handed to serde_json (see [`read_placed`]).
pub(crate) const SPLICE_MARK: &str = "\"megane:structure read in place\"";

/// Runs `read` with Structure objects read by the scanner (`megane-structure-scan`, built at
/// opt-level 3; the big arrays go straight into typed vectors) when `scan` is true, or by the
/// serde visitor below when false (tests: the package reads a Structure's text with the resumable
/// scan, `result::interpret_bytes`, or the visitor).
#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) fn with_scan<T>(scan: bool, read: impl FnOnce() -> T) -> T {
    with_mode(if scan { Mode::Scan } else { Mode::Exact }, read)
}

fn with_mode<T>(mode: Mode, read: impl FnOnce() -> T) -> T {
    struct Restore(Mode);
    impl Drop for Restore {
        fn drop(&mut self) {
            MODE.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(MODE.with(|s| s.replace(mode)));
    read()
}

/// The exact reader (the serde visitor for every Structure) on `spliced`, a body with
/// [`SPLICE_MARK`] where the Structure's text stood, taking `scanned` (read from that text by the
/// scanner while the body streamed in: `mcp::body`) where it meets the placeholder. The caller
/// makes sure the placeholder is there once as written and inside the result `read` reads, so
/// `read` meets it exactly where the visitor would have read the Structure's text, unless it
/// stops before (with the same error). The scanner accepts only text the visitor reads to the
/// same values, and the rest of the text is the same, so the outcome is the exact reader's on
/// the body as sent.
pub(crate) fn read_placed<T>(
    spliced: &[u8],
    scanned: megane_structure_scan::Scanned,
    facts: checks::Facts,
    read: impl FnOnce(&[u8]) -> Result<T, String>,
) -> Result<T, String> {
    with_mode(Mode::Placed, || {
        let structure = Structure {
            scanned: ScanFacts::holding(facts),
            ..Structure::from(scanned)
        };
        SPLICED.with(|s| *s.borrow_mut() = Some(structure));
        let outcome = read(spliced);
        match (outcome, SPLICED.with(|s| s.borrow_mut().take())) {
            // Read without meeting the placeholder where a Structure is read: the checks of the
            // caller rule this out.
            (Ok(_), Some(_)) => Err("result: the answer changed while it was read".to_string()),
            (outcome, _) => outcome,
        }
    })
}

impl From<megane_structure_scan::Scanned> for Structure {
    fn from(s: megane_structure_scan::Scanned) -> Structure {
        let column = |c: megane_structure_scan::Column| StringColumn {
            table: c.table,
            index: c.index,
        };
        Structure {
            elements: s.elements,
            positions: s.positions,
            cell: s.cell,
            bonds: s.bonds,
            bond_orders: s.bond_orders,
            molecules: s.molecules,
            residue_names: s.residue_names.map(column),
            residue_ids: s.residue_ids,
            atom_names: s.atom_names.map(column),
            chain_ids: s.chain_ids,
            formal_charges: s.formal_charges,
            scalars: s.scalars,
            scanned: ScanFacts::default(),
        }
    }
}

struct StructureVisitor;

/// Which required fields have been seen.
#[derive(Default)]
struct Seen {
    elements: bool,
    positions: bool,
    cell: bool,
    bonds: bool,
}

impl<'de> Visitor<'de> for StructureVisitor {
    type Value = Structure;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Structure object (§5.1)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Structure, A::Error> {
        let mut s = Structure::default();
        let mut seen = Seen::default();
        let mut optional_seen: Vec<String> = Vec::new();
        while let Some(Text(key)) = map.next_key::<Text>()? {
            let required_flag = match key.as_str() {
                "elements" => Some(&mut seen.elements),
                "positions" => Some(&mut seen.positions),
                "cell" => Some(&mut seen.cell),
                "bonds" => Some(&mut seen.bonds),
                _ => None,
            };
            match required_flag {
                Some(flag) if *flag => return Err(twice(&key)),
                Some(flag) => *flag = true,
                None if is_optional_field(&key) => {
                    if optional_seen.contains(&key) {
                        return Err(twice(&key));
                    }
                    optional_seen.push(key.clone());
                }
                None => {}
            }
            read_field(&mut map, &key, &mut s)
                .map_err(|e| at_path::<A::Error>(&format!("structure.{}", excerpt(&key)), e))?;
        }
        for (present, name) in [
            (seen.elements, "elements"),
            (seen.positions, "positions"),
            (seen.cell, "cell"),
            (seen.bonds, "bonds"),
        ] {
            if !present {
                let hint = if name == "cell" {
                    " (null for a non-periodic structure)"
                } else {
                    ""
                };
                return Err(de::Error::custom(format!(
                    "structure.{name}: missing{hint}"
                )));
            }
        }
        Ok(s)
    }
}

fn twice<E: de::Error>(key: &str) -> E {
    E::custom(format!("structure.{key}: appears twice"))
}

fn is_optional_field(key: &str) -> bool {
    matches!(
        key,
        "bondOrders"
            | "molecules"
            | "residueNames"
            | "residueIds"
            | "atomNames"
            | "chainIds"
            | "formalCharges"
            | "scalars"
    )
}

/// Reads the value of one Structure field into `s`; unknown fields are skipped (§11).
fn read_field<'de, A: MapAccess<'de>>(
    map: &mut A,
    key: &str,
    s: &mut Structure,
) -> Result<(), A::Error> {
    match key {
        "elements" => {
            s.elements = map.next_value_seed(ListSeed {
                path: "structure.elements",
                convert: element,
            })?
        }
        "positions" => {
            s.positions = map.next_value_seed(ListSeed {
                path: "structure.positions",
                convert: number,
            })?
        }
        "cell" => {
            let raw = map.next_value_seed(Nullable(ListSeed {
                path: "structure.cell",
                convert: number,
            }))?;
            s.cell = raw
                .map(cell_of_nine)
                .transpose()
                .map_err(|e| de::Error::custom(format!("structure.cell: {e}")))?;
        }
        "bonds" => {
            s.bonds = map.next_value_seed(ListSeed {
                path: "structure.bonds",
                convert: bond_pair,
            })?
        }
        "bondOrders" => {
            s.bond_orders = map.next_value_seed(Nullable(ListSeed {
                path: "structure.bondOrders",
                convert: bond_order,
            }))?
        }
        "molecules" => {
            s.molecules = map.next_value_seed(Nullable(ListSeed {
                path: "structure.molecules",
                convert: index,
            }))?
        }
        "residueNames" => {
            s.residue_names = map.next_value_seed(Nullable(StringColumnSeed {
                path: "structure.residueNames",
            }))?
        }
        "residueIds" => {
            s.residue_ids = map.next_value_seed(Nullable(ListSeed {
                path: "structure.residueIds",
                convert: integer,
            }))?
        }
        "atomNames" => {
            s.atom_names = map.next_value_seed(Nullable(StringColumnSeed {
                path: "structure.atomNames",
            }))?
        }
        "chainIds" => {
            s.chain_ids = map.next_value_seed(Nullable(ListSeed {
                path: "structure.chainIds",
                convert: text,
            }))?
        }
        "formalCharges" => {
            s.formal_charges = map.next_value_seed(Nullable(ListSeed {
                path: "structure.formalCharges",
                convert: charge,
            }))?
        }
        "scalars" => s.scalars = map.next_value_seed(Nullable(ScalarsSeed))?,
        _ => {
            map.next_value_seed(Skip::TOP)
                .map_err(|e| at_path::<A::Error>(&format!("structure.{}", excerpt(key)), e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Structure, String> {
        serde_json::from_str::<Structure>(json).map_err(|e| e.to_string())
    }

    const WATER: &str = r#"{"elements":[8,1,1],"positions":[0,0,0, 0.96,0,0, -0.24,0.93,0],
        "cell":null,"bonds":[[0,1],[0,2]],"extra":{"ignored":[1,2]}}"#;

    #[test]
    fn parses_and_validates_water() {
        let s = parse(WATER).unwrap();
        assert_eq!(s.elements, vec![8, 1, 1]);
        assert_eq!(s.bonds, vec![[0, 1], [0, 2]]);
        assert_eq!(s.cell, None);
        s.validate().unwrap();
    }

    #[test]
    fn errors_name_the_field_and_index() {
        let err =
            parse(r#"{"elements":[8,1,"x"],"positions":[],"cell":null,"bonds":[]}"#).unwrap_err();
        assert!(err.starts_with("structure.elements[2]: "), "{err}");
        let err =
            parse(r#"{"elements":[8],"positions":[0,0,0],"cell":[1,2],"bonds":[]}"#).unwrap_err();
        assert!(err.starts_with("structure.cell: has 2 numbers"), "{err}");
        let err = parse(r#"{"elements":[8],"positions":[0,0,0],"bonds":[]}"#).unwrap_err();
        assert!(err.starts_with("structure.cell: missing"), "{err}");
        let err = parse(r#"{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[[0,1,2]]}"#)
            .unwrap_err();
        assert!(err.starts_with("structure.bonds[0]: "), "{err}");
    }

    #[test]
    fn duplicate_bond_in_either_direction_is_refused() {
        let mut s = parse(WATER).unwrap();
        s.bonds.push([1, 0]);
        let err = s.validate().unwrap_err();
        assert_eq!(err, "structure.bonds[2]: repeats bonds[0] (atoms 0 and 1)");
    }

    #[test]
    fn out_of_range_and_self_bonds_are_refused() {
        let mut s = parse(WATER).unwrap();
        s.bonds[1] = [0, 3];
        assert_eq!(
            s.validate().unwrap_err(),
            "structure.bonds[1]: atom 3 is out of range (3 atoms)"
        );
        s.bonds[1] = [2, 2];
        assert_eq!(
            s.validate().unwrap_err(),
            "structure.bonds[1]: bonds atom 2 to itself"
        );
    }

    /// The reference duplicate check: a full sort of `(min, max, index)` keys.
    fn duplicate_by_sorting(bonds: &[[u32; 2]]) -> Option<(usize, usize)> {
        let mut keys: Vec<(u32, u32, usize)> = bonds
            .iter()
            .enumerate()
            .map(|(k, &[a, b])| (a.min(b), a.max(b), k))
            .collect();
        keys.sort_unstable();
        keys.windows(2)
            .find(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
            .map(|w| (w[0].2, w[1].2))
    }

    #[test]
    fn bucketed_duplicate_check_reports_what_a_full_sort_reports() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % m) as u32
        };
        for case in 0..3000 {
            let n = 2 + next(12) as usize;
            let count = next(3 * n as u64) as usize + usize::from(case % 2 == 0);
            let mut bonds = Vec::new();
            while bonds.len() < count {
                let (a, b) = (next(n as u64), next(n as u64));
                if a != b {
                    bonds.push([a, b]);
                }
            }
            // Also the same bonds listed in increasing (lower, higher) order, as tools write
            // them (the check's one-pass path when no pair repeats).
            let mut sorted = bonds.clone();
            sorted.sort_by_key(|&[a, b]| (a.min(b), a.max(b)));
            for bonds in [bonds, sorted] {
                let s = Structure {
                    elements: vec![6; n],
                    positions: vec![0.0; 3 * n],
                    bonds: bonds.clone(),
                    ..Structure::default()
                };
                let expected = duplicate_by_sorting(&bonds).map(|(earlier, later)| {
                    let [a, b] = bonds[earlier];
                    format!(
                        "structure.bonds[{later}]: repeats bonds[{earlier}] (atoms {} and {})",
                        a.min(b),
                        a.max(b)
                    )
                });
                assert_eq!(s.validate().err(), expected, "{bonds:?}");
            }
        }
    }

    #[test]
    fn bonds_are_read_as_pairs_with_list_errors() {
        let body = |bonds: &str| {
            format!(
                r#"{{"elements":[8,1,1],"positions":[0,0,0,1,0,0,0,1,0],"cell":null,"bonds":{bonds}}}"#
            )
        };
        assert_eq!(
            parse(&body("[[0,1],[2,0]]")).unwrap().bonds,
            vec![[0, 1], [2, 0]]
        );
        for (bonds, message) in [
            (
                "[[0,1],[0,1,2]]",
                "structure.bonds[1]: a bond is a pair of two atom indices, not 3 numbers",
            ),
            (
                "[[0]]",
                "structure.bonds[0]: a bond is a pair of two atom indices, not 1 numbers",
            ),
            (
                "[[]]",
                "structure.bonds[0]: a bond is a pair of two atom indices, not 0 numbers",
            ),
            (
                "[[0,-1]]",
                "structure.bonds[0]: second atom: -1 is not a 0-based index",
            ),
            (
                "[[0,1,\"x\"]]",
                "structure.bonds[0]: bond[2]: invalid type: string \"x\", expected an integer",
            ),
            (
                "[7]",
                "structure.bonds[0]: invalid type: integer `7`, expected an array",
            ),
        ] {
            let err = parse(&body(bonds)).unwrap_err();
            assert!(err.starts_with(message), "{bonds}: {err}");
        }
    }

    #[test]
    fn string_channels_are_dictionary_encoded() {
        let s = parse(
            r#"{"elements":[8,1,1,8],"positions":[0,0,0,1,0,0,0,1,0,5,5,5],"cell":null,"bonds":[],
            "residueNames":["HOH","HOH","HOH","N\u0041"],"atomNames":["O","H1","H2","O"]}"#,
        )
        .unwrap();
        let names = s.residue_names.as_ref().unwrap();
        assert_eq!(names.table(), ["HOH", "NA"]);
        assert_eq!(names.indices(), [0, 0, 0, 1]);
        assert_eq!(names[3], "NA");
        assert_eq!(names.get(4), None);
        assert_eq!(
            *names,
            vec!["HOH", "HOH", "HOH", "NA"]
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>()
        );
        let atoms = s.atom_names.as_ref().unwrap();
        assert_eq!(atoms.to_vec(), ["O", "H1", "H2", "O"]);
        assert_eq!(atoms.table().len(), 3);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(
            json["residueNames"],
            serde_json::json!(["HOH", "HOH", "HOH", "NA"])
        );
        let mut pushed = StringColumn::new();
        for name in ["A", "B", "A"] {
            pushed.push(name);
        }
        assert_eq!(pushed, StringColumn::from(&["A", "B", "A"][..]));
        let err = parse(
            r#"{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[],"residueNames":["A",7]}"#,
        )
        .unwrap_err();
        assert!(
            err.starts_with(
                "structure.residueNames[1]: invalid type: integer `7`, expected a string"
            ),
            "{err}"
        );
    }

    #[test]
    fn channels_must_have_one_entry_per_atom() {
        let mut s = parse(WATER).unwrap();
        s.chain_ids = Some(vec!["A".into(), "A".into(), "AB".into()]);
        assert!(s
            .validate()
            .unwrap_err()
            .starts_with("structure.chainIds[2]: "));
        s.chain_ids = None;
        s.scalars = Some(BTreeMap::from([("q".to_string(), vec![0.1, 0.2])]));
        assert_eq!(
            s.validate().unwrap_err(),
            "structure.scalars.q: has 2 values for 3 atoms"
        );
    }
}
