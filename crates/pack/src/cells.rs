//! Periodic linked-cell grid for an orthorhombic box.
//!
//! Points are binned by their wrapped position into cells of side at least
//! `cutoff`; [`PeriodicGrid::for_each_neighbour_cell`] enumerates, for one cell,
//! every (cell, image shift) pair that can hold a point within `cutoff` of a
//! point of that cell. When an axis is shorter than `3 × cutoff` it gets a
//! single cell and the neighbour images are enumerated explicitly, so pairs
//! closer than `cutoff` through several images are all found.
//!
//! Hand-written rather than taken from a crate: it is small, must be
//! deterministic (cells filled in point order) and must build for wasm32.

/// Upper bound on the number of cells per axis (keeps memory bounded).
const MAX_CELLS_PER_AXIS: usize = 512;

/// A periodic cell grid (geometry only).
#[derive(Clone, Debug)]
pub struct PeriodicGrid {
    /// Box edge lengths (Å).
    pub box_lengths: [f64; 3],
    /// Cells per axis.
    pub n: [usize; 3],
    /// Per axis: list of (offset, ) neighbour image range; for `n >= 3` this is
    /// `-1..=1`, for a single cell `-m..=m` with `m = ceil(cutoff / L)`.
    reach: [i64; 3],
}

/// Points binned by cell: `items[start[c]..start[c + 1]]` are the indices of
/// the points in cell `c`, in increasing index order.
#[derive(Clone, Debug, Default)]
pub struct CellList {
    /// Prefix sums of the cell occupancies (`len = cells + 1`).
    pub start: Vec<u32>,
    /// Point indices sorted by cell (stable).
    pub items: Vec<u32>,
    /// Wrapped position of each point (same indexing as the input).
    pub wrapped: Vec<[f64; 3]>,
}

/// Wraps `x` into `[0, l)`.
#[inline]
pub fn wrap(x: f64, l: f64) -> f64 {
    let w = x - l * (x / l).floor();
    if w >= l || w < 0.0 {
        0.0
    } else {
        w
    }
}

impl PeriodicGrid {
    /// Grid whose cells are at least `cutoff` wide (`cutoff > 0`, finite box),
    /// with at most about `2 × points + 27` cells (memory stays proportional
    /// to the number of points even in a huge, sparse box).
    pub fn for_points(box_lengths: [f64; 3], cutoff: f64, points: usize) -> Self {
        let mut g = Self::new(box_lengths, cutoff);
        let max_cells = points.saturating_mul(2).saturating_add(27);
        for _ in 0..64 {
            if g.cells() <= max_cells {
                break;
            }
            // Coarsen the axis with the most cells.
            let k = (0..3)
                .max_by_key(|&k| (g.n[k], std::cmp::Reverse(k)))
                .unwrap_or(0);
            let next = g.n[k] / 2;
            if next >= 3 {
                g.n[k] = next;
            } else {
                g.n[k] = 1;
                g.reach[k] = (cutoff / box_lengths[k]).ceil().max(1.0) as i64;
            }
        }
        g
    }

    /// Grid whose cells are at least `cutoff` wide (`cutoff > 0`, finite box).
    pub fn new(box_lengths: [f64; 3], cutoff: f64) -> Self {
        let mut n = [1usize; 3];
        let mut reach = [1i64; 3];
        for k in 0..3 {
            let fit = (box_lengths[k] / cutoff).floor();
            let fit = if fit.is_finite() {
                fit.max(0.0) as usize
            } else {
                1
            };
            if fit >= 3 {
                n[k] = fit.min(MAX_CELLS_PER_AXIS);
                reach[k] = 1;
            } else {
                n[k] = 1;
                reach[k] = (cutoff / box_lengths[k]).ceil().max(1.0) as i64;
            }
        }
        PeriodicGrid {
            box_lengths,
            n,
            reach,
        }
    }

    /// Total number of cells.
    pub fn cells(&self) -> usize {
        self.n[0] * self.n[1] * self.n[2]
    }

    /// Cell coordinates of a wrapped position.
    #[inline]
    pub fn coords_of(&self, w: &[f64; 3]) -> [usize; 3] {
        let mut c = [0usize; 3];
        for k in 0..3 {
            let i = (w[k] / self.box_lengths[k] * self.n[k] as f64) as usize;
            c[k] = i.min(self.n[k] - 1);
        }
        c
    }

    /// Flat index of cell coordinates.
    #[inline]
    pub fn flat(&self, c: [usize; 3]) -> usize {
        (c[0] * self.n[1] + c[1]) * self.n[2] + c[2]
    }

    /// Bins points (any coordinates; they are wrapped first).
    pub fn build(&self, points: &[[f64; 3]]) -> CellList {
        self.build_iter(points.iter().copied())
    }

    /// Bins the points an iterator yields (any coordinates; they are wrapped first), keeping only
    /// their wrapped copy: no other copy of the points is made.
    pub fn build_iter(&self, points: impl Iterator<Item = [f64; 3]>) -> CellList {
        let l = self.box_lengths;
        let wrapped: Vec<[f64; 3]> = points
            .map(|p| [wrap(p[0], l[0]), wrap(p[1], l[1]), wrap(p[2], l[2])])
            .collect();
        let cell_of: Vec<u32> = wrapped
            .iter()
            .map(|w| self.flat(self.coords_of(w)) as u32)
            .collect();
        let mut start = vec![0u32; self.cells() + 1];
        for &c in &cell_of {
            start[c as usize + 1] += 1;
        }
        for i in 0..self.cells() {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut items = vec![0u32; wrapped.len()];
        for (i, &c) in cell_of.iter().enumerate() {
            items[fill[c as usize] as usize] = i as u32;
            fill[c as usize] += 1;
        }
        CellList {
            start,
            items,
            wrapped,
        }
    }

    /// Calls `f(cell, shift)` for every cell, with its image shift, that can hold a point within
    /// `radius` (Å) of a point of cell `c`: `⌈radius / cell width⌉` cells to each side per axis,
    /// any number of box images. Each (cell, shift) comes once, so with a radius above the grid's
    /// cutoff a large molecule can search a grid sized for small ones.
    pub fn for_each_cell_within(
        &self,
        c: [usize; 3],
        radius: f64,
        mut f: impl FnMut(usize, [f64; 3]),
    ) {
        let m = [0, 1, 2].map(|k| {
            let h = self.box_lengths[k] / self.n[k] as f64;
            (radius / h).ceil().max(1.0) as i64
        });
        let axis = |k: usize, o: i64| -> (usize, f64) {
            let n = self.n[k] as i64;
            let raw = c[k] as i64 + o;
            let w = raw.div_euclid(n);
            ((raw - w * n) as usize, w as f64 * self.box_lengths[k])
        };
        for ox in -m[0]..=m[0] {
            let (cx, sx) = axis(0, ox);
            for oy in -m[1]..=m[1] {
                let (cy, sy) = axis(1, oy);
                for oz in -m[2]..=m[2] {
                    let (cz, sz) = axis(2, oz);
                    f(self.flat([cx, cy, cz]), [sx, sy, sz]);
                }
            }
        }
    }

    /// [`Self::for_each_neighbour_cell`] with each neighbour cell once: `f(cell, images)` gets,
    /// per axis, the range of whole-box image counts `w` at which that cell's points are seen
    /// (shift `w as f64 * box_lengths[k]`, the same value `for_each_neighbour_cell` passes).
    /// On a single-cell axis (a box shorter than `3 × cutoff`) this is `-reach..=reach`, so a
    /// caller can reject an image per axis before forming the distance, instead of revisiting
    /// the cell's points for each of up to 27 images.
    pub fn for_each_neighbour_cell_once(
        &self,
        c: [usize; 3],
        mut f: impl FnMut(usize, [std::ops::RangeInclusive<i64>; 3]),
    ) {
        // (cell coordinate, image range) of one axis for offset `o` (single-cell axes: one entry).
        let axis = |k: usize, o: i64| -> (usize, std::ops::RangeInclusive<i64>) {
            if self.n[k] == 1 {
                return (0, -self.reach[k]..=self.reach[k]);
            }
            let n = self.n[k] as i64;
            let raw = c[k] as i64 + o;
            let w = raw.div_euclid(n);
            ((raw - w * n) as usize, w..=w)
        };
        let offsets = |k: usize| -> std::ops::RangeInclusive<i64> {
            if self.n[k] == 1 {
                0..=0
            } else {
                -self.reach[k]..=self.reach[k]
            }
        };
        for ox in offsets(0) {
            let (cx, wx) = axis(0, ox);
            for oy in offsets(1) {
                let (cy, wy) = axis(1, oy);
                for oz in offsets(2) {
                    let (cz, wz) = axis(2, oz);
                    f(self.flat([cx, cy, cz]), [wx.clone(), wy.clone(), wz]);
                }
            }
        }
    }

    /// Calls `f(cell, shift)` for every neighbour cell of `c` (including `c`
    /// itself with a zero shift) with the Cartesian image shift to add to the
    /// wrapped positions of that cell's points.
    pub fn for_each_neighbour_cell(&self, c: [usize; 3], mut f: impl FnMut(usize, [f64; 3])) {
        let axis = |k: usize, o: i64| -> (usize, f64) {
            let n = self.n[k] as i64;
            let raw = c[k] as i64 + o;
            let w = raw.div_euclid(n);
            ((raw - w * n) as usize, w as f64 * self.box_lengths[k])
        };
        for ox in -self.reach[0]..=self.reach[0] {
            let (cx, sx) = axis(0, ox);
            for oy in -self.reach[1]..=self.reach[1] {
                let (cy, sy) = axis(1, oy);
                for oz in -self.reach[2]..=self.reach[2] {
                    let (cz, sz) = axis(2, oz);
                    f(self.flat([cx, cy, cz]), [sx, sy, sz]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair within the cutoff through any image is found exactly once
    /// per (ordered pair, image), compared with a brute-force image loop.
    #[test]
    fn grid_finds_all_pairs() {
        for (l, cutoff) in [([10.0, 11.0, 12.0], 2.5), ([5.0, 9.0, 4.0], 2.9)] {
            let mut rng = crate::rigid::Rng::new(3, 0);
            let pts: Vec<[f64; 3]> = (0..60)
                .map(|_| {
                    [
                        rng.uniform() * 30.0 - 10.0,
                        rng.uniform() * l[1],
                        rng.uniform() * l[2],
                    ]
                })
                .collect();
            for g in [
                PeriodicGrid::new(l, cutoff),
                PeriodicGrid::for_points(l, cutoff, 2),
            ] {
                let cl = g.build(&pts);
                let mut found = 0usize;
                for i in 0..pts.len() {
                    let wi = cl.wrapped[i];
                    g.for_each_neighbour_cell(g.coords_of(&wi), |cell, s| {
                        for &j in &cl.items[cl.start[cell] as usize..cl.start[cell + 1] as usize] {
                            let wj = cl.wrapped[j as usize];
                            let d: f64 = (0..3).map(|k| (wj[k] + s[k] - wi[k]).powi(2)).sum();
                            if j as usize != i && d < cutoff * cutoff {
                                found += 1;
                            }
                        }
                    });
                }
                let mut brute = 0usize;
                for i in 0..pts.len() {
                    for j in 0..pts.len() {
                        if i == j {
                            continue;
                        }
                        for a in -3i32..=3 {
                            for b in -3i32..=3 {
                                for c in -3i32..=3 {
                                    let s = [a as f64 * l[0], b as f64 * l[1], c as f64 * l[2]];
                                    let d: f64 = (0..3)
                                        .map(|k| {
                                            (cl.wrapped[j][k] + s[k] - cl.wrapped[i][k]).powi(2)
                                        })
                                        .sum();
                                    if d < cutoff * cutoff {
                                        brute += 1;
                                    }
                                }
                            }
                        }
                    }
                }
                assert!(brute > 0);
                assert_eq!(found, brute);
                // A grid of smaller cells searched `cutoff` wide finds the same pairs.
                let fine = PeriodicGrid::for_points(l, cutoff / 2.5, pts.len());
                let cl = fine.build(&pts);
                let mut wide = 0usize;
                for i in 0..pts.len() {
                    let wi = cl.wrapped[i];
                    fine.for_each_cell_within(fine.coords_of(&wi), cutoff, |cell, s| {
                        for &j in &cl.items[cl.start[cell] as usize..cl.start[cell + 1] as usize] {
                            let wj = cl.wrapped[j as usize];
                            let d: f64 = (0..3).map(|k| (wj[k] + s[k] - wi[k]).powi(2)).sum();
                            if j as usize != i && d < cutoff * cutoff {
                                wide += 1;
                            }
                        }
                    });
                }
                assert_eq!(wide, brute);
            }
        }
    }
}
