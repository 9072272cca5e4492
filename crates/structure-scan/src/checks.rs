//! The per-atom searches of the §5.1 cross-field checks, built here at `opt-level = 3` (issue 10:
//! `Structure::validate` at the package's `"z"` took 20–40 ms of a 500 000-atom result, most of
//! what is left after the last byte of a streamed call).
//!
//! These are searches only: each answers *where* the first offending entry is. The rules (what is
//! refused, in which order, and the one-line error) stay in the package's
//! `contract::structure::Structure::validate`, which calls them. Each scans blocks of
//! [`BLOCK`] entries with a test that does not stop early (so it vectorises), and looks for the
//! exact index only inside the first block that fails.

/// Entries tested together before the first offending one is looked for.
pub const BLOCK: usize = 64;

/// The first index in `values` for which `bad` holds, scanning in blocks of [`BLOCK`].
#[inline(always)]
fn first<T: Copy>(values: &[T], bad: impl Fn(T) -> bool + Copy) -> Option<usize> {
    let mut offset = 0;
    for block in values.chunks(BLOCK) {
        if block.iter().fold(false, |any, &v| any | bad(v)) {
            return block.iter().position(|&v| bad(v)).map(|i| offset + i);
        }
        offset += block.len();
    }
    None
}

/// The first value that is not finite (NaN or ±∞).
pub fn first_not_finite(values: &[f64]) -> Option<usize> {
    first(values, |v| !v.is_finite())
}

/// The first value outside `lo..=hi`.
pub fn first_outside_u8(values: &[u8], lo: u8, hi: u8) -> Option<usize> {
    first(values, |v| v < lo || v > hi)
}

/// The first value outside `lo..=hi`.
pub fn first_outside_i64(values: &[i64], lo: i64, hi: i64) -> Option<usize> {
    first(values, |v| v < lo || v > hi)
}

/// The first bond that names an atom `>= atoms` or the same atom twice.
pub fn first_bad_bond(bonds: &[[u32; 2]], atoms: usize) -> Option<usize> {
    // Atom indices are u32: a count beyond u32::MAX leaves every index in range.
    let n = u32::try_from(atoms).unwrap_or(u32::MAX);
    let in_range = atoms > u32::MAX as usize;
    first(bonds, |[a, b]| a == b || (!in_range && (a >= n || b >= n)))
}

/// Two bonds between the same pair of atoms: the pair (`lo < hi`) and the two bond indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeat {
    /// The lower atom of the pair.
    pub lo: u32,
    /// The higher atom of the pair.
    pub hi: u32,
    /// The first bond between them.
    pub earlier: usize,
    /// The second bond between them.
    pub later: usize,
}

/// A bond's atom pair as one key, `lower << 32 | higher`: bonds whose keys increase are all
/// different (the order [`first_repeated_bond`] and [`Facts::note_bonds`] test).
#[inline]
fn pair_key([a, b]: [u32; 2]) -> u64 {
    (u64::from(a.min(b)) << 32) | u64::from(a.max(b))
}

/// The lowest atom pair bonded twice, with its two lowest bond indices (what a full sort of
/// `(min, max, index)` keys finds first), in O(N + B) and without sorting: bonds are bucketed by
/// their lower atom (a counting sort that keeps bond order within a bucket); buckets are taken in
/// atom order, a bucket of two compared directly, a longer one walked in bond order remembering
/// where each higher atom first appeared in it (so the second bond to it is that pair's
/// second-lowest index). The first bucket with a repeat answers, with its lowest repeated higher
/// atom. No sort: a bucket can hold every bond of a hostile body, and a general sort built at
/// opt-level 3 was ~2 KB of the gzipped package. `None` when no pair repeats, and also for bonds
/// that [`first_bad_bond`] refuses (it must be asked first).
pub fn first_repeated_bond(bonds: &[[u32; 2]], atoms: usize) -> Option<Repeat> {
    if bonds.len() < 2 || first_bad_bond(bonds, atoms).is_some() {
        return None;
    }
    // Bonds listed in increasing (lower, higher) order, as tools write them, are all different:
    // one pass, no buckets (which took ~7 ms of a 500 000-atom body in the page).
    if bonds
        .windows(2)
        .fold(true, |sorted, w| sorted & (pair_key(w[0]) < pair_key(w[1])))
    {
        return None;
    }
    // Every atom index is < atoms here, so `atoms` fits the buckets (and u32 as an index).
    let mut start = vec![0usize; atoms + 1];
    for &[a, b] in bonds {
        start[a.min(b) as usize + 1] += 1;
    }
    for lo in 0..atoms {
        start[lo + 1] += start[lo];
    }
    let mut next = start.clone();
    // (higher atom << 32 | bond index), in bond order within each bucket. A bond index beyond u32
    // (over 4·10⁹ bonds) cannot come from a capped body.
    let mut slots = vec![0u64; bonds.len()];
    for (k, &[a, b]) in bonds.iter().enumerate() {
        let lo = a.min(b) as usize;
        slots[next[lo]] = (u64::from(a.max(b)) << 32) | k as u64;
        next[lo] += 1;
    }
    let repeat = |lo: usize, earlier: u64, later: u64| Repeat {
        lo: lo as u32,
        hi: (later >> 32) as u32,
        earlier: (earlier & u64::from(u32::MAX)) as usize,
        later: (later & u64::from(u32::MAX)) as usize,
    };
    // `next` is free now: first[hi] is the slot where the bucket being walked first bonded hi,
    // when it lies in that bucket before the walk and names hi (a value left by an earlier bucket
    // lies before it; next's own values, start[hi + 1] with hi > lo, lie after it).
    let first = &mut next;
    for lo in 0..atoms {
        let (from, to) = (start[lo], start[lo + 1]);
        match to - from {
            0 | 1 => {}
            2 => {
                let (x, y) = (slots[from], slots[from + 1]);
                if x >> 32 == y >> 32 {
                    return Some(repeat(lo, x, y));
                }
            }
            _ => {
                let mut found: Option<(u64, u64)> = None;
                for at in from..to {
                    let slot = slots[at];
                    let seen = first[(slot >> 32) as usize];
                    if (from..at).contains(&seen) && slots[seen] >> 32 == slot >> 32 {
                        if found.is_none_or(|(_, later)| slot >> 32 < later >> 32) {
                            found = Some((slots[seen], slot));
                        }
                    } else {
                        first[(slot >> 32) as usize] = at;
                    }
                }
                if let Some((earlier, later)) = found {
                    return Some(repeat(lo, earlier, later));
                }
            }
        }
    }
    None
}

/// Lowest and highest of the values seen (`None`: none seen).
pub type Bounds<T> = Option<(T, T)>;

/// Whether every value summed up in `bounds` lies in `lo..=hi` (true when there were none).
pub fn within<T: PartialOrd>(bounds: &Bounds<T>, lo: T, hi: T) -> bool {
    bounds
        .as_ref()
        .is_none_or(|(min, max)| *min >= lo && *max <= hi)
}

/// The first value outside `lo..=hi` that `search` finds (it is handed the range), or `None` at
/// once when `known`, the scan's bounds of these values where there are facts, lie within: each
/// rule's range written once for both (`Structure::validate`).
pub fn search_outside<T: PartialOrd + Copy>(
    known: Option<&Bounds<T>>,
    lo: T,
    hi: T,
    search: impl FnOnce(T, T) -> Option<usize>,
) -> Option<usize> {
    if known.is_some_and(|bounds| within(bounds, lo, hi)) {
        None
    } else {
        search(lo, hi)
    }
}

/// `bounds` widened by `values`. Plain loops, kept out of line (`inline(never)`): the facts are
/// noted while the body streams in, where a vectorised copy of each loop in the scan would cost
/// package size for time nobody waits for.
#[inline(never)]
fn widen<T: Copy + Ord>(bounds: &mut Bounds<T>, values: &[T]) {
    if let Some(&v) = values.first() {
        let (mut lo, mut hi) = bounds.unwrap_or((v, v));
        for &v in values {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        *bounds = Some((lo, hi));
    }
}

/// What a Structure's columns hold, summed up by the scan while they are read (issue 10:
/// `CallStream` notes each piece of a column as it is read, so that after the last byte
/// `Structure::validate` consults these instead of searching 500 000 atoms again). Facts only:
/// the §5.1 rules and their errors stay in `Structure::validate`, which searches a column itself
/// whenever a fact does not clear it (a fact that is itself a search's answer, the first
/// non-finite position or, with every bonded atom in range, the first self-bond, is used as
/// that answer). `Default` is the facts of a Structure with no entries; [`Facts::counted`] says
/// how many entries of each column they sum up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// Lowest and highest atomic number.
    pub elements: Bounds<u8>,
    /// The first position that is not finite.
    pub first_not_finite_position: Option<usize>,
    /// Lowest and highest atom index a bond names.
    pub bonded_atoms: Bounds<u32>,
    /// The first bond that names the same atom twice.
    pub first_self_bond: Option<usize>,
    /// The first bond whose (lower, higher) atom pair is not greater than the bond's before it:
    /// `None` when the bonds are in increasing order, so that no pair repeats.
    pub first_unordered_bond: Option<usize>,
    /// Lowest and highest bond order.
    pub bond_orders: Bounds<u8>,
    /// Lowest and highest residue id.
    pub residue_ids: Bounds<i64>,
    /// Fewest and most characters in a chain id.
    pub chain_id_chars: Bounds<usize>,
    /// Entries summed up: elements, positions, bonds, bond orders, residue ids, chain ids.
    counted: [usize; 6],
    /// The last bond's (lower << 32 | higher) pair.
    last_bond: Option<u64>,
}

impl Facts {
    /// Entries summed up, per column: elements, positions (numbers), bonds, bond orders,
    /// residue ids, chain ids; facts describe a Structure only when these are its lengths.
    pub fn counted(&self) -> [usize; 6] {
        self.counted
    }

    /// The facts of whole columns, summed up at once (the scan notes them piece by piece).
    pub fn of(columns: Columns) -> Facts {
        let mut facts = Facts::default();
        facts.note_elements(columns.elements);
        facts.note_positions(columns.positions);
        facts.note_bonds(columns.bonds);
        facts.note_bond_orders(columns.bond_orders);
        facts.note_residue_ids(columns.residue_ids);
        facts.note_chain_ids(columns.chain_ids);
        facts
    }

    /// The next `values` of `elements`.
    pub(crate) fn note_elements(&mut self, values: &[u8]) {
        widen(&mut self.elements, values);
        self.counted[0] += values.len();
    }

    /// The next `values` of `positions`.
    #[inline(never)]
    pub(crate) fn note_positions(&mut self, values: &[f64]) {
        if self.first_not_finite_position.is_none() {
            self.first_not_finite_position = values
                .iter()
                .position(|v| !v.is_finite())
                .map(|i| self.counted[1] + i);
        }
        self.counted[1] += values.len();
    }

    /// The next `bonds`.
    #[inline(never)]
    pub(crate) fn note_bonds(&mut self, bonds: &[[u32; 2]]) {
        let Some(&[a, _]) = bonds.first() else {
            return;
        };
        let (mut lowest, mut highest) = self.bonded_atoms.unwrap_or((a, a));
        for (k, &[a, b]) in (self.counted[2]..).zip(bonds) {
            let (lo, hi) = (a.min(b), a.max(b));
            (lowest, highest) = (lowest.min(lo), highest.max(hi));
            if lo == hi && self.first_self_bond.is_none() {
                self.first_self_bond = Some(k);
            }
            // Out of order: the pair is not above the bond's before it.
            let key = pair_key([a, b]);
            if self.last_bond.is_some_and(|last| key <= last) && self.first_unordered_bond.is_none()
            {
                self.first_unordered_bond = Some(k);
            }
            self.last_bond = Some(key);
        }
        self.bonded_atoms = Some((lowest, highest));
        self.counted[2] += bonds.len();
    }

    /// The next `values` of `bondOrders`.
    pub(crate) fn note_bond_orders(&mut self, values: &[u8]) {
        widen(&mut self.bond_orders, values);
        self.counted[3] += values.len();
    }

    /// The next `values` of `residueIds`.
    pub(crate) fn note_residue_ids(&mut self, values: &[i64]) {
        widen(&mut self.residue_ids, values);
        self.counted[4] += values.len();
    }

    /// The next `values` of `chainIds`.
    #[inline(never)]
    pub(crate) fn note_chain_ids(&mut self, values: &[String]) {
        for id in values {
            let chars = id.chars().count();
            let (lo, hi) = self.chain_id_chars.unwrap_or((chars, chars));
            self.chain_id_chars = Some((lo.min(chars), hi.max(chars)));
        }
        self.counted[5] += values.len();
    }
}

/// The columns [`Facts`] sum up, borrowed (empty for an absent one).
#[derive(Clone, Copy, Default)]
pub struct Columns<'a> {
    /// Atomic numbers.
    pub elements: &'a [u8],
    /// Positions, flat.
    pub positions: &'a [f64],
    /// Atom index pairs.
    pub bonds: &'a [[u32; 2]],
    /// Bond orders.
    pub bond_orders: &'a [u8],
    /// Residue ids.
    pub residue_ids: &'a [i64],
    /// Chain ids.
    pub chain_ids: &'a [String],
}

impl Columns<'_> {
    /// Each column's length, in [`Facts::counted`]'s order.
    pub fn lengths(&self) -> [usize; 6] {
        [
            self.elements.len(),
            self.positions.len(),
            self.bonds.len(),
            self.bond_orders.len(),
            self.residue_ids.len(),
            self.chain_ids.len(),
        ]
    }
}

/// Positions as `f32` (the new-document snapshot's `Float32Array`), rounded to nearest.
pub fn to_f32(values: &[f64]) -> Vec<f32> {
    values.iter().map(|&v| v as f32).collect()
}

/// Residue ids as `i32` (the new-document snapshot's `Int32Array`) when every one fits, else
/// `None` (the host then sends them as `f64`). One pass to check, one to convert; both vectorise.
pub fn to_i32(ids: &[i64]) -> Option<Vec<i32>> {
    let fits = ids
        .iter()
        .fold(true, |fits, &v| fits & (v as i32 as i64 == v));
    fits.then(|| ids.iter().map(|&v| v as i32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    // The differential test against a full sort of (min, max, index) keys is the package's
    // `contract::structure` test `bucketed_duplicate_check_reports_what_a_full_sort_reports`,
    // through `Structure::validate`.

    #[test]
    fn residue_ids_as_i32_only_when_all_fit() {
        assert_eq!(to_i32(&[]), Some(vec![]));
        assert_eq!(
            to_i32(&[1, -7, i32::MAX.into(), i32::MIN.into()]),
            Some(vec![1, -7, i32::MAX, i32::MIN])
        );
        let mut ids = vec![5i64; 200];
        for outside in [
            i64::from(i32::MAX) + 1,
            i64::from(i32::MIN) - 1,
            1 << 40,
            -(1 << 53),
        ] {
            ids[137] = outside;
            assert_eq!(to_i32(&ids), None, "{outside}");
        }
    }

    #[test]
    fn repeated_bond_in_a_bucket_of_two_and_of_three() {
        // Lower atom 0 holds two bonds to atom 3, the second written backwards.
        let two = [[0, 3], [1, 2], [3, 0]];
        let found = Repeat {
            lo: 0,
            hi: 3,
            earlier: 0,
            later: 2,
        };
        assert_eq!(first_repeated_bond(&two, 4), Some(found));
        // Three bonds from atom 1: the repeat is the later pair of (1, 2).
        let three = [[1, 3], [2, 1], [1, 0], [1, 2]];
        let found = Repeat {
            lo: 1,
            hi: 2,
            earlier: 1,
            later: 3,
        };
        assert_eq!(first_repeated_bond(&three, 4), Some(found));
        assert_eq!(first_repeated_bond(&[[0, 1], [1, 2], [2, 0]], 3), None);
    }

    #[test]
    fn a_bond_out_of_range_or_to_itself_is_found_and_not_bucketed() {
        let mut bonds = vec![[0u32, 1u32]; 200];
        for (k, bond) in bonds.iter_mut().enumerate() {
            *bond = [k as u32, k as u32 + 1];
        }
        assert_eq!(first_bad_bond(&bonds, 201), None);
        assert_eq!(first_bad_bond(&bonds, 200), Some(199));
        bonds[130] = [7, 7];
        assert_eq!(first_bad_bond(&bonds, 201), Some(130));
        // Out of range: no repeat is looked for (the buckets would not hold the atom).
        assert_eq!(first_repeated_bond(&[[0, 5], [5, 0]], 3), None);
    }

    #[test]
    fn the_first_offending_value_is_found_in_any_block() {
        for len in [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 5 * BLOCK + 3] {
            let clean = vec![1.5f64; len];
            assert_eq!(first_not_finite(&clean), None);
            for at in [0, len / 2, len.saturating_sub(1)] {
                if at >= len {
                    continue;
                }
                let mut values = clean.clone();
                values[at] = f64::NAN;
                if at + 1 < len {
                    values[len - 1] = f64::INFINITY;
                }
                assert_eq!(first_not_finite(&values), Some(at), "len {len}");
                let mut bytes = vec![6u8; len];
                bytes[at] = 0;
                assert_eq!(first_outside_u8(&bytes, 1, 118), Some(at));
                bytes[at] = 119;
                assert_eq!(first_outside_u8(&bytes, 1, 118), Some(at));
                let mut ids = vec![-3i64; len];
                ids[at] = 1 << 53;
                assert_eq!(
                    first_outside_i64(&ids, -(1 << 53) + 1, (1 << 53) - 1),
                    Some(at)
                );
            }
        }
    }

    #[test]
    fn facts_noted_in_pieces_are_the_facts_of_the_whole_columns() {
        // Values the scan's readers refuse (NaN, atomic number 0, bond order 9) as well: the
        // facts do not rely on the readers.
        let elements: Vec<u8> = (0..300).map(|k| (k * 37 % 121) as u8).collect();
        let mut positions: Vec<f64> = (0..900).map(|k| k as f64 * 0.5).collect();
        positions[641] = f64::NAN;
        positions[700] = f64::INFINITY;
        let mut bonds: Vec<[u32; 2]> = (0..200).map(|k| [k, k + 1]).collect();
        bonds[150] = [151, 150]; // the same pair backwards: still in order
        bonds[170] = [3, 3];
        bonds[190] = [2, 9];
        let orders: Vec<u8> = (0..200).map(|k| (k % 9) as u8).collect();
        let ids: Vec<i64> = (0..300).map(|k| (k - 150) * (1 << 50)).collect();
        let chains: Vec<String> = (0..300)
            .map(|k| ["A", "", "AB", "é"][k % 4].to_string())
            .collect();
        let columns = Columns {
            elements: &elements,
            positions: &positions,
            bonds: &bonds,
            bond_orders: &orders,
            residue_ids: &ids,
            chain_ids: &chains,
        };
        let whole = Facts::of(columns);
        assert_eq!(whole.elements, Some((0, 120)));
        assert_eq!(whole.first_not_finite_position, Some(641));
        assert_eq!(whole.bonded_atoms, Some((0, 200)));
        assert_eq!(whole.first_self_bond, Some(170));
        assert_eq!(whole.first_unordered_bond, Some(170));
        assert_eq!(whole.bond_orders, Some((0, 8)));
        assert_eq!(whole.residue_ids, Some((-150 << 50, 149 << 50)));
        assert_eq!(whole.chain_id_chars, Some((0, 2)));
        assert_eq!(whole.counted(), [300, 900, 200, 200, 300, 300]);
        // The same in pieces of 1, 7 and 64 entries, cut anywhere.
        for size in [1, 7, 64] {
            let mut facts = Facts::default();
            for piece in elements.chunks(size) {
                facts.note_elements(piece);
            }
            for piece in positions.chunks(size) {
                facts.note_positions(piece);
            }
            for piece in bonds.chunks(size) {
                facts.note_bonds(piece);
            }
            for piece in orders.chunks(size) {
                facts.note_bond_orders(piece);
            }
            for piece in ids.chunks(size) {
                facts.note_residue_ids(piece);
            }
            for piece in chains.chunks(size) {
                facts.note_chain_ids(piece);
            }
            assert_eq!(facts, whole, "pieces of {size}");
        }
        // A bond out of order only across a piece's edge, and none at all.
        let mut facts = Facts::default();
        facts.note_bonds(&[[0, 1], [0, 2]]);
        facts.note_bonds(&[[2, 0], [1, 2]]);
        assert_eq!(facts.first_unordered_bond, Some(2));
        assert_eq!(Facts::of(Columns::default()), Facts::default());
        assert!(within(&None, 1u8, 4) && within(&Some((1u8, 4)), 1, 4));
        assert!(!within(&Some((0u8, 4)), 1, 4) && !within(&Some((1u8, 5)), 1, 4));
    }

    #[test]
    fn positions_round_to_the_nearest_f32() {
        assert_eq!(
            to_f32(&[0.1, -2.5, 1e39]),
            vec![0.1f32, -2.5, f32::INFINITY]
        );
    }
}
