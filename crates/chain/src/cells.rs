//! The chain builder's two spatial indexes of atoms, both hashed cells of a given width: [`Grid`],
//! kept as the walk adds and removes units, and [`Filed`], the atoms sorted by cell afresh for
//! each pair list of the relaxation (one pass, then every look-up reads consecutive memory).

/// The cell of `p` (Å) in cells of width `cell` (Å).
#[inline(always)]
fn cell_key(p: [f64; 3], cell: f64) -> [i32; 3] {
    // Written out: at opt-level "z" (the package's, where this code was built before it had a
    // crate of its own) an array's `map` and `==` are calls, and these run for every atom of
    // every cell looked at.
    [
        (p[0] / cell).floor() as i32,
        (p[1] / cell).floor() as i32,
        (p[2] / cell).floor() as i32,
    ]
}

/// The slot of cell `key` in a table of `mask` + 1 slots (a power of two).
#[inline(always)]
fn slot_of(key: [i32; 3], mask: usize) -> usize {
    let h = (key[0] as u32 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (key[1] as u32 as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ (key[2] as u32 as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
    (h ^ (h >> 29)) as usize & mask
}

/// The `index`-th (0–26) of the 27 cells around `c`, in the order x, y, z (outer to inner): by
/// index, as a range's `next` is a call at opt-level "z".
#[inline(always)]
fn around(c: [i32; 3], index: i32) -> [i32; 3] {
    [
        c[0] + index / 9 - 1,
        c[1] + index / 3 % 3 - 1,
        c[2] + index % 3 - 1,
    ]
}

/// Slots of a table for `atoms` atoms: a power of two, at least twice as many.
fn slots_for(atoms: usize) -> usize {
    (2 * atoms.max(8)).next_power_of_two()
}

/// Spatial hash of the chain's atoms (cells of the largest excluded distance), for the contact check:
/// a table of slots, each the head of a list through the atoms (the last inserted first), so
/// that inserting and removing the last inserted atom are O(1) and a lookup allocates nothing.
pub(super) struct Grid {
    cell: f64,
    /// Slots − 1 (a power of two less one).
    mask: usize,
    /// Per slot: the last atom filed there, or `u32::MAX`.
    head: Vec<u32>,
    /// Per atom: the atom filed before it in its slot.
    next: Vec<u32>,
    /// Per atom: its cell.
    cell_of: Vec<[i32; 3]>,
}

/// Whether two cells are one (component by component: see [`cell_key`]).
#[inline(always)]
fn same_cell(a: [i32; 3], b: [i32; 3]) -> bool {
    a[0] == b[0] && a[1] == b[1] && a[2] == b[2]
}

impl Grid {
    pub(super) fn new(cell: f64, atoms: usize) -> Grid {
        let slots = slots_for(atoms);
        Grid {
            cell,
            mask: slots - 1,
            head: vec![u32::MAX; slots],
            next: Vec::with_capacity(atoms),
            cell_of: Vec::with_capacity(atoms),
        }
    }
    #[inline(always)]
    fn key(&self, p: [f64; 3]) -> [i32; 3] {
        cell_key(p, self.cell)
    }
    #[inline(always)]
    fn slot(&self, key: [i32; 3]) -> usize {
        slot_of(key, self.mask)
    }
    /// Files `atom` (the next chain index) at `p`.
    pub(super) fn insert(&mut self, p: [f64; 3], atom: u32) {
        debug_assert_eq!(atom as usize, self.next.len());
        let key = self.key(p);
        let slot = self.slot(key);
        self.next.push(self.head[slot]);
        self.cell_of.push(key);
        self.head[slot] = atom;
    }
    /// Removes `atom`, the last one inserted.
    pub(super) fn remove_last(&mut self, atom: u32) {
        debug_assert_eq!(atom as usize + 1, self.next.len());
        let slot = self.slot(self.cell_of[atom as usize]);
        debug_assert_eq!(self.head[slot], atom);
        self.head[slot] = self.next[atom as usize];
        self.next.pop();
        self.cell_of.pop();
    }
    /// Files `atom`, anywhere in the grid, under its cell at `p`.
    pub(super) fn moved(&mut self, atom: u32, p: [f64; 3]) {
        if !same_cell(self.key(p), self.cell_of[atom as usize]) {
            self.take(atom);
            self.put(atom, p);
        }
    }
    /// Takes `atom` out of its slot's list (a walk along it), until [`Grid::put`] files it again.
    pub(super) fn take(&mut self, atom: u32) {
        let slot = self.slot(self.cell_of[atom as usize]);
        if self.head[slot] == atom {
            self.head[slot] = self.next[atom as usize];
        } else {
            let mut x = self.head[slot];
            while self.next[x as usize] != atom {
                x = self.next[x as usize];
            }
            self.next[x as usize] = self.next[atom as usize];
        }
    }
    /// Files `atom`, taken out by [`Grid::take`], under its cell at `p`.
    pub(super) fn put(&mut self, atom: u32, p: [f64; 3]) {
        let key = self.key(p);
        let slot = self.slot(key);
        self.next[atom as usize] = self.head[slot];
        self.head[slot] = atom;
        self.cell_of[atom as usize] = key;
    }
    /// Calls `f` with each atom of cell `want`.
    #[inline(always)]
    fn each_in(&self, want: [i32; 3], mut f: impl FnMut(usize)) {
        let (head, next, cell_of) = (&self.head[..], &self.next[..], &self.cell_of[..]);
        let mut atom = head[self.slot(want)];
        while atom != u32::MAX {
            let a = atom as usize;
            if same_cell(cell_of[a], want) {
                f(a);
            }
            atom = next[a];
        }
    }
    /// Calls `f` with each atom in the 27 cells around `p`, until it returns true; whether one did.
    #[inline(always)]
    pub(super) fn any_near(&self, p: [f64; 3], mut f: impl FnMut(usize) -> bool) -> bool {
        let c = self.key(p);
        // Slices: at opt-level "z" a Vec's index is a call, a slice's inline.
        let (head, next, cell_of) = (&self.head[..], &self.next[..], &self.cell_of[..]);
        // The 27 cells in the order x, y, z (outer to inner), by index: a range's `next` is a
        // call at opt-level "z".
        let mut cell = 0;
        while cell < 27 {
            let key = around(c, cell);
            cell += 1;
            let mut atom = head[self.slot(key)];
            while atom != u32::MAX {
                let a = atom as usize;
                if same_cell(cell_of[a], key) && f(a) {
                    return true;
                }
                atom = next[a];
            }
        }
        false
    }
}

/// Atoms sorted by the slot of their cell (a counting sort), with their cells and positions in the
/// same order: made afresh from the atoms asked for, where they are, for each look-up pass, which
/// then reads each slot's atoms from consecutive memory. The relaxation lists its pairs from it.
pub(super) struct Filed {
    cell: f64,
    mask: usize,
    /// Per slot, and one past the last: where its atoms start in the arrays below.
    start: Vec<u32>,
    /// The atoms, slot by slot (in index order within a slot).
    atom: Vec<u32>,
    /// Parallel to `atom`: its cell and its position.
    key: Vec<[i32; 3]>,
    at: Vec<[f64; 3]>,
    /// Per atom filed (in the order given): its cell and slot, while filing.
    filing: Vec<([i32; 3], u32)>,
}

impl Filed {
    /// An empty index of cells `cell` (Å) wide.
    pub(super) fn new(cell: f64) -> Filed {
        Filed {
            cell,
            mask: 0,
            start: Vec::new(),
            atom: Vec::new(),
            key: Vec::new(),
            at: Vec::new(),
            filing: Vec::new(),
        }
    }

    /// Files the atoms `atoms` at `positions` (index = atom), replacing what was filed: the work
    /// and the table are those of the atoms filed, not of all positions.
    pub(super) fn file(&mut self, positions: &[[f64; 3]], atoms: &[usize]) {
        let slots = slots_for(atoms.len());
        self.mask = slots - 1;
        self.start.clear();
        self.start.resize(slots + 1, 0);
        self.filing.clear();
        for &i in atoms {
            let key = cell_key(positions[i], self.cell);
            let s = slot_of(key, self.mask);
            self.filing.push((key, s as u32));
            self.start[s + 1] += 1;
        }
        for s in 0..slots {
            self.start[s + 1] += self.start[s];
        }
        let n = atoms.len();
        self.atom.clear();
        self.atom.resize(n, 0);
        self.key.clear();
        self.key.resize(n, [0; 3]);
        self.at.clear();
        self.at.resize(n, [0.0; 3]);
        // Where the next atom of each slot goes: the slot's start, moved along as it fills.
        let mut next = self.start[..slots].to_vec();
        for (&i, &(key, s)) in atoms.iter().zip(&self.filing) {
            let at = next[s as usize] as usize;
            next[s as usize] += 1;
            self.atom[at] = i as u32;
            self.key[at] = key;
            self.at[at] = positions[i];
        }
    }

    /// Calls `f` with each filed atom in the 27 cells around `p`, and its position.
    #[inline(always)]
    pub(super) fn each_near(&self, p: [f64; 3], mut f: impl FnMut(usize, [f64; 3])) {
        let c = cell_key(p, self.cell);
        let mut cell = 0;
        while cell < 27 {
            self.each_in(around(c, cell), &mut f);
            cell += 1;
        }
    }

    /// Calls `f` with each filed atom of cell `want`, and its position.
    #[inline(always)]
    fn each_in(&self, want: [i32; 3], mut f: impl FnMut(usize, [f64; 3])) {
        if self.atom.is_empty() {
            return;
        }
        let t = slot_of(want, self.mask);
        let (mut y, stop) = (self.start[t] as usize, self.start[t + 1] as usize);
        while y < stop {
            if same_cell(self.key[y], want) {
                f(self.atom[y] as usize, self.at[y]);
            }
            y += 1;
        }
    }
}

/// Calls `f(i, p_i, j, p_j)` for the pairs of atoms in neighbouring cells (the 27 around each), at
/// least one of them chosen (filed in `listed`; the other atoms, at `positions`, in `others`, a
/// grid of the same cell width): a pair of
/// two chosen atoms once, either way round (own cell, then the 13 cells after it), a chosen and
/// another atom with `i` the chosen one. Cell by cell: a cell's neighbours are looked up once for
/// all its atoms, and each pair between chosen atoms is looked at once, not from both ends.
pub(super) fn each_pair(
    listed: &Filed,
    others: &Grid,
    positions: &[[f64; 3]],
    mut f: impl FnMut(usize, [f64; 3], usize, [f64; 3]),
) {
    debug_assert_eq!(listed.cell, others.cell);
    let (start, atom, key, at) = (
        &listed.start[..],
        &listed.atom[..],
        &listed.key[..],
        &listed.at[..],
    );
    // The atoms of the cell at hand (index in the arrays above), and the atoms each of them is
    // paired with: the cell's own (those after it), then those of the 13 cells after it, then the
    // others around it. One call of `f`, below, so that it is inlined.
    let mut group: Vec<usize> = Vec::new();
    let mut partners: Vec<(usize, [f64; 3])> = Vec::new();
    for s in 0..start.len() - 1 {
        let (first, end) = (start[s] as usize, start[s + 1] as usize);
        for x in first..end {
            let c = key[x];
            // Each cell of the slot once: at its first atom (slots shared by cells are few
            // and short).
            if (first..x).any(|y| same_cell(key[y], c)) {
                continue;
            }
            group.clear();
            group.extend((x..end).filter(|&y| same_cell(key[y], c)));
            partners.clear();
            partners.extend(group.iter().map(|&g| (atom[g] as usize, at[g])));
            // The 13 cells after this one (index 13 of `around` is the cell itself).
            let mut cell = 14;
            while cell < 27 {
                listed.each_in(around(c, cell), |j, q| partners.push((j, q)));
                cell += 1;
            }
            let mut cell = 0;
            while cell < 27 {
                others.each_in(around(c, cell), |j| partners.push((j, positions[j])));
                cell += 1;
            }
            for (a, &g) in group.iter().enumerate() {
                let (i, p) = (atom[g] as usize, at[g]);
                for &(j, q) in &partners[a + 1..] {
                    f(i, p, j, q);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both indexes find, around a point, every atom within one cell width of it (and the sorted
    /// one each such atom once, with its position), whatever the cells' hashes share.
    #[test]
    fn both_indexes_find_every_atom_within_a_cell() {
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let points: Vec<[f64; 3]> = (0..400)
            .map(|_| {
                [
                    next() * 30.0 - 15.0,
                    next() * 30.0 - 15.0,
                    next() * 30.0 - 15.0,
                ]
            })
            .collect();
        let cell = 2.5;
        let mut grid = Grid::new(cell, points.len());
        for (i, &p) in points.iter().enumerate() {
            grid.insert(p, i as u32);
        }
        let mut filed = Filed::new(cell);
        let every: Vec<usize> = (0..points.len()).collect();
        filed.file(&points, &every);
        for &p in points.iter().take(60) {
            let d2 = |q: [f64; 3]| (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f64>();
            let want: Vec<usize> = (0..points.len())
                .filter(|&j| d2(points[j]) < cell * cell)
                .collect();
            let mut from_filed = Vec::new();
            filed.each_near(p, |j, q| {
                assert_eq!(q, points[j]);
                from_filed.push(j);
            });
            let mut sorted = from_filed.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), from_filed.len(), "an atom twice");
            let mut from_grid = Vec::new();
            grid.any_near(p, |j| {
                from_grid.push(j);
                false
            });
            from_grid.sort_unstable();
            assert_eq!(sorted, from_grid);
            for j in &want {
                assert!(sorted.contains(j));
            }
        }
        // Cell by cell: the same pairs as atom by atom, those between chosen atoms once.
        let chosen: Vec<bool> = (0..points.len()).map(|i| i % 3 != 1).collect();
        let mine_list: Vec<usize> = (0..points.len()).filter(|&i| chosen[i]).collect();
        let mut mine = Filed::new(cell);
        mine.file(&points, &mine_list);
        for &i in &mine_list {
            grid.take(i as u32);
        }
        let mut by_cell = Vec::new();
        each_pair(&mine, &grid, &points, |i, p, j, q| {
            assert_eq!((p, q), (points[i], points[j]));
            assert!(chosen[i]);
            by_cell.push(if chosen[j] {
                (i.min(j), i.max(j))
            } else {
                (i, j)
            });
        });
        let mut by_atom = Vec::new();
        for (i, &p) in points.iter().enumerate().filter(|&(i, _)| chosen[i]) {
            filed.each_near(p, |j, _| {
                if j != i && !(chosen[j] && j < i) {
                    by_atom.push((i, j));
                }
            });
        }
        by_cell.sort_unstable();
        by_atom.sort_unstable();
        assert_eq!(by_cell, by_atom);
        for &i in &mine_list {
            grid.put(i as u32, points[i]);
        }

        // Atoms moved and filed again where they went: the grid finds them there, and only there.
        let mut moved = points.clone();
        for (i, p) in moved.iter_mut().enumerate().filter(|(i, _)| i % 4 == 0) {
            *p = [
                p[0] + next() * 6.0 - 3.0,
                p[1] + next() * 6.0 - 3.0,
                p[2] - 2.0,
            ];
            grid.moved(i as u32, *p);
        }
        for &p in moved.iter().take(60) {
            let mut found = Vec::new();
            grid.any_near(p, |j| {
                found.push(j);
                false
            });
            let d2 = |q: [f64; 3]| (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f64>();
            for j in (0..moved.len()).filter(|&j| d2(moved[j]) < cell * cell) {
                assert!(found.contains(&j), "{j} not found after moving");
            }
            let c = cell_key(p, cell);
            for &j in &found {
                let k = cell_key(moved[j], cell);
                assert!(
                    (0..3).all(|a| (k[a] - c[a]).abs() <= 1),
                    "{j} found where it was"
                );
            }
        }
    }
}
