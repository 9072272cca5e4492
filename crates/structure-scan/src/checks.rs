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
    let key = |&[a, b]: &[u32; 2]| (u64::from(a.min(b)) << 32) | u64::from(a.max(b));
    if bonds
        .windows(2)
        .fold(true, |sorted, w| sorted & (key(&w[0]) < key(&w[1])))
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
    fn positions_round_to_the_nearest_f32() {
        assert_eq!(
            to_f32(&[0.1, -2.5, 1e39]),
            vec![0.1f32, -2.5, f32::INFINITY]
        );
    }
}
