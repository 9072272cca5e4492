//! What the two differential tests of the bytes path share: the same outcome bit for bit, a body
//! in pieces, a result around a Structure, and the rule that each fact of a scan is what a plain
//! search of its column finds.

use megane_structure_scan::checks::{Columns, Facts};
use megane_structure_scan::Scanned;

use super::{BodyPieces, Interpreted};
use crate::contract::structure::Structure;

/// Every f64 of a Structure as bits (`PartialEq` on f64 says −0.0 == 0.0).
pub(super) fn float_bits(s: &Structure) -> Vec<u64> {
    let mut bits: Vec<u64> = s.positions.iter().map(|v| v.to_bits()).collect();
    bits.extend(s.cell.iter().flatten().map(|v| v.to_bits()));
    for values in s.scalars.iter().flat_map(|m| m.values()) {
        bits.extend(values.iter().map(|v| v.to_bits()));
    }
    bits
}

pub(super) fn same(a: &Interpreted, b: &Interpreted) -> bool {
    a == b && float_bits(&a.result.structure) == float_bits(&b.result.structure)
}

/// A body handed in pieces of the given lengths (in turn), counting the times it is asked whole.
pub(super) struct Split<'a> {
    pub body: &'a [u8],
    pub lengths: &'a [usize],
    pub asked_whole: std::cell::Cell<usize>,
}

impl BodyPieces for Split<'_> {
    fn total(&self) -> usize {
        self.body.len()
    }
    fn each_piece(&self, each: &mut dyn FnMut(&[u8])) {
        let (mut at, mut k) = (0, 0);
        while at < self.body.len() {
            let end = self
                .body
                .len()
                .min(at + self.lengths[k % self.lengths.len()].max(1));
            each(&self.body[at..end]);
            (at, k) = (end, k + 1);
        }
    }
    fn whole(&self) -> std::borrow::Cow<'_, [u8]> {
        self.asked_whole.set(self.asked_whole.get() + 1);
        self.body.into()
    }
}

pub(super) fn wrap(structure: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":3,"result":{{"content":[{{"type":"text","text":"ok"}}],"structuredContent":{{"contract":1,"name":"x","structure":{structure}}}}}}}"#
    )
}

/// Asserts that each fact is what a plain search of the whole columns of `s` finds.
pub(super) fn assert_facts_hold(s: &Scanned, f: &Facts, what: &str) {
    fn bounds<T: Ord + Copy>(values: impl Iterator<Item = T> + Clone) -> Option<(T, T)> {
        Some((values.clone().min()?, values.max()?))
    }
    let key = |[a, b]: [u32; 2]| (a.min(b), a.max(b));
    let chains = s.chain_ids.as_deref().unwrap_or_default();
    let orders = s.bond_orders.as_deref().unwrap_or_default();
    let ids = s.residue_ids.as_deref().unwrap_or_default();
    let columns = Columns {
        elements: &s.elements,
        positions: &s.positions,
        bonds: &s.bonds,
        bond_orders: orders,
        residue_ids: ids,
        chain_ids: chains,
    };
    assert_eq!(f.counted(), columns.lengths(), "{what}: counted");
    assert_eq!(f.elements, bounds(s.elements.iter().copied()), "{what}");
    assert_eq!(
        f.first_not_finite_position,
        s.positions.iter().position(|v| !v.is_finite()),
        "{what}"
    );
    assert_eq!(
        f.bonded_atoms,
        bounds(s.bonds.iter().flatten().copied()),
        "{what}"
    );
    assert_eq!(
        f.first_self_bond,
        s.bonds.iter().position(|[a, b]| a == b),
        "{what}"
    );
    assert_eq!(
        f.first_unordered_bond,
        (1..s.bonds.len()).find(|&k| key(s.bonds[k]) <= key(s.bonds[k - 1])),
        "{what}"
    );
    assert_eq!(f.bond_orders, bounds(orders.iter().copied()), "{what}");
    assert_eq!(f.residue_ids, bounds(ids.iter().copied()), "{what}");
    assert_eq!(
        f.chain_id_chars,
        bounds(chains.iter().map(|c| c.chars().count())),
        "{what}"
    );
}
