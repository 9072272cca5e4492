//! §5.1 per-atom string channels (`residueNames`, `atomNames`), dictionary-encoded.

use std::collections::HashMap;
use std::ops::Index;

use serde::Serialize;

/// A per-atom string channel (`residueNames`, `atomNames`), dictionary-encoded: atom `i`'s string
/// is `table[index[i]]`, each distinct string stored once. A result repeats a few names over many
/// atoms; one `String` per atom would cost 500 000 allocations (~20 MB of wasm memory) for a
/// 500 000-atom result, and the JavaScript side can rebuild the per-atom array from the small
/// table only when it is read. Indexing (`column[i]`) gives the atom's `String`.
#[derive(Debug, Clone, Default)]
pub struct StringColumn {
    /// Distinct strings in order of first appearance.
    pub(super) table: Vec<String>,
    /// Per atom: a position in `table` (always in range).
    pub(super) index: Vec<u32>,
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
