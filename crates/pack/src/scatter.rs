//! Initial placement for a disordered box: random sequential addition (RSA) of molecule centres,
//! each kept at least an exclusion diameter from the centres placed before it and from the fixed
//! atoms, with uniformly random orientations (issue 32).
//!
//! Why not the even lattice the packer started from before: the optimiser stops as soon as no pair
//! is closer than the tolerance, so a lattice start survives into the result (S_max 0.2–0.7 N:
//! a jittered crystal). Why not packmol's uniform random start: its deep overlaps cost the
//! optimiser most of its work. An RSA packing of spheres at a packing fraction of 0.2 (far below
//! RSA's jamming at 0.38, so every centre finds room in a few trials) has no long-range order at
//! all, and no two centres closer than the exclusion diameter: the optimiser only has to turn and
//! nudge.
//! Measured (issue 32's note): a stratified start — each molecule uniform in its own lattice cell —
//! does not do: the optimiser pushes molecules back towards their cells' centres and the Bragg
//! peaks return (10 000 water: S_max 158 against the line's 48), and 2 000 benzene took 300
//! iterations instead of 13.
//!
//! In parallel, bit for bit the same on any number of threads (issue 32: on 100 000 water the
//! addition, run on one thread, was a tenth of the run): molecules are added a batch at a time
//! ([`batch_len`], a function of their number only). Each molecule of a batch draws its trials
//! with its own generator ([`Rng::item`]) against the centres of the batches before it, in
//! parallel; then, in order, each keeps its find if no earlier molecule of its batch took the
//! room meanwhile, else draws again, on this thread, against every centre placed. The batch is a
//! small share of the box (a molecule meets a batch-mate about 1.6 × batch / N of the time), so
//! the second pass draws little, and the result is random sequential addition still: each centre
//! uniform in the room the centres before it left. Deterministic for a seed.

use super::cells::{wrap, CellList, PeriodicGrid};
use super::rigid::{Mat3, Rng};
use crate::par::*;

/// Random trials per molecule before its exclusion diameter is shrunk.
const TRIALS: usize = 48;
/// Factor the exclusion diameter of a molecule is shrunk by after [`TRIALS`] failures.
const SHRINK: f64 = 0.85;
/// Shrinkings before a molecule is put at its last trial whatever it meets.
const MAX_SHRINK: usize = 12;
/// Batches per addition (at most): see [`batch_len`].
const BATCHES: usize = 64;
/// Fewest molecules per batch.
const MIN_BATCH: usize = 32;

/// A placed molecule: centre (Å) and rotation.
pub type Placement = ([f64; 3], Mat3);

/// Molecules per batch for `n` molecules: about `n / BATCHES` (a molecule then meets a
/// batch-mate ~2.5 % of the time), at least [`MIN_BATCH`].
fn batch_len(n: usize) -> usize {
    n.div_ceil(BATCHES).max(MIN_BATCH)
}

/// The centres placed so far, binned in cells at least the largest exclusion diameter wide: a
/// linked list per cell (`head[cell]`, `next[molecule]`).
struct Placed<'a> {
    grid: PeriodicGrid,
    head: Vec<u32>,
    next: Vec<u32>,
    centre: Vec<[f64; 3]>,
    diameters: &'a [f64],
}

/// The fixed atoms in a cell list of their own, and how far a centre keeps from them beyond half
/// its diameter (Å).
struct Fixed {
    grid: PeriodicGrid,
    cells: CellList,
    clearance: f64,
}

const NONE: u32 = u32::MAX;

impl Placed<'_> {
    fn add(&mut self, m: usize, c: [f64; 3]) {
        self.centre[m] = c;
        let cell = self.grid.flat(self.grid.coords_of(&c));
        self.next[m] = self.head[cell];
        self.head[cell] = m as u32;
    }

    /// Draws trials for molecule `m` with `rng` until one keeps its (possibly shrunk) exclusion
    /// diameter from the centres placed and from the fixed atoms; after [`MAX_SHRINK`]
    /// shrinkings, the last trial. Returns the centre and the diameter it was kept at.
    fn draw(
        &self,
        fixed: &Fixed,
        m: usize,
        box_lengths: [f64; 3],
        rng: &mut Rng,
    ) -> ([f64; 3], f64) {
        let mut d = self.diameters[m];
        let mut last = [0.0; 3];
        for _ in 0..=MAX_SHRINK {
            for _ in 0..TRIALS {
                let c = [0, 1, 2].map(|k| rng.uniform() * box_lengths[k]);
                if self.room(c, d) && fixed.clear(c, d / 2.0 + fixed.clearance) {
                    return (c, d);
                }
                last = c;
            }
            d *= SHRINK;
        }
        (last, 0.0)
    }

    /// Whether a centre at `c` (wrapped) with exclusion diameter `d` keeps `(d + d_j) / 2` from
    /// every centre placed (the diameters of those are their full ones: a shrunk molecule only
    /// asks less of itself).
    fn room(&self, c: [f64; 3], d: f64) -> bool {
        let mut free = true;
        self.grid
            .for_each_neighbour_cell(self.grid.coords_of(&c), |cell, shift| {
                if !free {
                    return;
                }
                let mut j = self.head[cell];
                while j != NONE {
                    let q = self.centre[j as usize];
                    let reach = 0.5 * (d + self.diameters[j as usize]);
                    let d2: f64 = (0..3).map(|k| (q[k] + shift[k] - c[k]).powi(2)).sum();
                    if d2 < reach * reach {
                        free = false;
                        return;
                    }
                    j = self.next[j as usize];
                }
            });
        free
    }
}

impl Fixed {
    /// Whether `c` is at least `reach` Å from every fixed atom.
    fn clear(&self, c: [f64; 3], reach: f64) -> bool {
        if self.cells.wrapped.is_empty() {
            return true;
        }
        let l = self.grid.box_lengths;
        let w = [wrap(c[0], l[0]), wrap(c[1], l[1]), wrap(c[2], l[2])];
        let mut free = true;
        self.grid
            .for_each_neighbour_cell(self.grid.coords_of(&w), |cell, shift| {
                if !free {
                    return;
                }
                let cells = &self.cells;
                for &j in &cells.items[cells.start[cell] as usize..cells.start[cell + 1] as usize] {
                    let q = cells.wrapped[j as usize];
                    let d2: f64 = (0..3).map(|k| (q[k] + shift[k] - w[k]).powi(2)).sum();
                    if d2 < reach * reach {
                        free = false;
                        return;
                    }
                }
            });
        free
    }
}

/// Places `diameters.len()` molecules (exclusion diameters in Å, in molecule order) in the
/// orthorhombic periodic box of `box_lengths` Å, each centre at least `(d_i + d_j) / 2` from every
/// other and `d_i / 2 + clearance` from every fixed atom (where it can be), with a uniformly random
/// orientation. The largest molecules are placed first (ties in molecule order). Molecule `m`
/// draws from `rng.item(2 m)` (its find and orientation) and, if a batch-mate took its room,
/// `rng.item(2 m + 1)`.
pub fn scatter(
    diameters: &[f64],
    fixed: &[[f64; 3]],
    clearance: f64,
    box_lengths: [f64; 3],
    rng: &Rng,
) -> Vec<Placement> {
    let n = diameters.len();
    let d_max = diameters.iter().copied().fold(0.0, f64::max).max(1e-3);
    let l = box_lengths;
    let grid = PeriodicGrid::for_points(l, d_max, n);
    let mut placed = Placed {
        head: vec![NONE; grid.cells()],
        grid,
        next: vec![NONE; n],
        centre: vec![[0.0; 3]; n],
        diameters,
    };
    let fixed_reach = d_max / 2.0 + clearance;
    let fixed_grid = PeriodicGrid::for_points(l, fixed_reach.max(1e-3), fixed.len());
    let fixed = Fixed {
        cells: fixed_grid.build(fixed),
        grid: fixed_grid,
        clearance,
    };
    let mut order: Vec<usize> = (0..n).collect();
    crate::sort::sort_indices(&mut order, |a, b| {
        diameters[b].total_cmp(&diameters[a]).then(a.cmp(&b))
    });
    let mut rotation = vec![super::rigid::IDENTITY; n];
    for batch in order.chunks(batch_len(n)) {
        // Each molecule's find and its orientation, drawn from its own generator.
        let find = |&m: &usize| {
            let mut r = rng.item(2 * m as u64);
            let (c, d) = placed.draw(&fixed, m, l, &mut r);
            (c, d, r.rotation())
        };
        let found: Vec<([f64; 3], f64, Mat3)> = if batch.len() > MIN_BATCH {
            batch.par_iter().map(find).collect()
        } else {
            batch.iter().map(find).collect()
        };
        for (&m, (c, d, turn)) in batch.iter().zip(found) {
            // Kept unless a batch-mate placed before it took the room (a last-resort trial,
            // `d` = 0, is kept as it is); a second draw takes the molecule's second generator.
            let c = if d <= 0.0 || placed.room(c, d) {
                c
            } else {
                placed.draw(&fixed, m, l, &mut rng.item(2 * m as u64 + 1)).0
            };
            placed.add(m, c);
            rotation[m] = turn;
        }
    }
    placed.centre.into_iter().zip(rotation).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centres_keep_their_distance_from_each_other_and_the_fixed_atoms() {
        let l = [20.0, 22.0, 18.0];
        let fixed = vec![[0.2, 0.1, 17.9], [10.0, 11.0, 9.0]];
        let d = vec![2.6; 150];
        let rng = Rng::new(1, 0);
        let placed = scatter(&d, &fixed, 1.0, l, &rng);
        let mi = |x: f64, l: f64| x - l * (x / l).round();
        let dist = |a: &[f64; 3], b: &[f64; 3]| {
            (0..3)
                .map(|k| mi(a[k] - b[k], l[k]).powi(2))
                .sum::<f64>()
                .sqrt()
        };
        for (i, (c, _)) in placed.iter().enumerate() {
            for f in &fixed {
                assert!(dist(c, f) >= 2.3 - 1e-9);
            }
            for (q, _) in &placed[..i] {
                assert!(dist(c, q) >= 2.6 - 1e-9, "{c:?} {q:?}");
            }
        }
        // Deterministic for a seed.
        let again = scatter(&d, &fixed, 1.0, l, &Rng::new(1, 0));
        assert_eq!(placed, again);
    }
}
