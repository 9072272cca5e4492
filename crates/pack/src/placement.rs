//! Initial placement: molecule centres on a lattice of sites spread evenly
//! over the box (skipping sites too close to fixed atoms), uniformly random
//! orientations, sites assigned to molecules by a seeded shuffle.
//!
//! A lattice start is far closer to a solution than packmol's uniform random
//! start: neighbouring centres are about `(V / N)^(1/3)` apart, so the
//! optimiser only has to fix orientational clashes.

use super::cells::PeriodicGrid;
use super::rigid::{Mat3, Rng};

/// Lattice growth attempts when fixed atoms block sites.
const MAX_GROWTH_STEPS: usize = 40;

/// A placed molecule: centre (Å) and rotation.
pub type Placement = ([f64; 3], Mat3);

/// Lattice dimensions with at least `n` sites, roughly isotropic spacing.
fn lattice_dims(box_lengths: [f64; 3], n: usize) -> [usize; 3] {
    let v = box_lengths[0] * box_lengths[1] * box_lengths[2];
    let mut h = (v / n.max(1) as f64).cbrt();
    for _ in 0..200 {
        let d = [
            (box_lengths[0] / h).ceil().max(1.0) as usize,
            (box_lengths[1] / h).ceil().max(1.0) as usize,
            (box_lengths[2] / h).ceil().max(1.0) as usize,
        ];
        if d[0].saturating_mul(d[1]).saturating_mul(d[2]) >= n {
            return d;
        }
        h *= 0.99;
    }
    let side = (n as f64).cbrt().ceil() as usize + 1;
    [side; 3]
}

/// Sites of a `dims` lattice, offset by half a spacing.
fn sites(box_lengths: [f64; 3], dims: [usize; 3]) -> Vec<[f64; 3]> {
    let mut out = Vec::with_capacity(dims[0] * dims[1] * dims[2]);
    let h = [
        box_lengths[0] / dims[0] as f64,
        box_lengths[1] / dims[1] as f64,
        box_lengths[2] / dims[2] as f64,
    ];
    for i in 0..dims[0] {
        for j in 0..dims[1] {
            for k in 0..dims[2] {
                out.push([
                    (i as f64 + 0.5) * h[0],
                    (j as f64 + 0.5) * h[1],
                    (k as f64 + 0.5) * h[2],
                ]);
            }
        }
    }
    out
}

/// Distance (Å, minimum image) from each site to the nearest fixed atom,
/// capped at `cap`.
fn clearance(
    site_list: &[[f64; 3]],
    fixed: &[[f64; 3]],
    box_lengths: [f64; 3],
    cap: f64,
) -> Vec<f64> {
    if fixed.is_empty() {
        return vec![cap; site_list.len()];
    }
    let grid = PeriodicGrid::for_points(box_lengths, cap, fixed.len());
    let cl = grid.build(fixed);
    site_list
        .iter()
        .map(|s| {
            let mut best = cap * cap;
            let w = [
                super::cells::wrap(s[0], box_lengths[0]),
                super::cells::wrap(s[1], box_lengths[1]),
                super::cells::wrap(s[2], box_lengths[2]),
            ];
            grid.for_each_neighbour_cell(grid.coords_of(&w), |cell, sh| {
                for &j in &cl.items[cl.start[cell] as usize..cl.start[cell + 1] as usize] {
                    let q = cl.wrapped[j as usize];
                    let d: f64 = (0..3).map(|k| (q[k] + sh[k] - w[k]).powi(2)).sum();
                    best = best.min(d);
                }
            });
            best.sqrt()
        })
        .collect()
}

/// Places `radii.len()` molecules (bounding radii in Å, in molecule order).
/// Sites closer than `tol + r_small` to a fixed atom are skipped (the lattice is
/// refined until enough sites are free); among free sites, molecules are
/// assigned by a seeded shuffle. If the lattice cannot be refined enough,
/// the sites with the most clearance are used.
pub fn place(
    radii: &[f64],
    fixed: &[[f64; 3]],
    box_lengths: [f64; 3],
    tol: f64,
    rng: &mut Rng,
) -> Vec<Placement> {
    let n = radii.len();
    let rmin = radii.iter().cloned().fold(f64::INFINITY, f64::min);
    let rmin = if rmin.is_finite() { rmin } else { 0.0 };
    let need = tol + rmin;
    let mut target = n;
    let mut chosen: Vec<([f64; 3], f64)> = Vec::new();
    for _ in 0..MAX_GROWTH_STEPS {
        let dims = lattice_dims(box_lengths, target);
        let s = sites(box_lengths, dims);
        let c = clearance(&s, fixed, box_lengths, need.max(1e-9));
        let free: Vec<([f64; 3], f64)> = s
            .iter()
            .zip(&c)
            .filter(|(_, &c)| c >= need)
            .map(|(p, &c)| (*p, c))
            .collect();
        if free.len() >= n {
            chosen = free;
            break;
        }
        // Not enough free sites: keep the best ones in case growth fails.
        let mut all: Vec<([f64; 3], f64)> = s.into_iter().zip(c).collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1));
        chosen = all;
        target = target + target / 8 + 1;
    }
    // Seeded shuffle of the chosen sites (Fisher–Yates).
    let mut order: Vec<usize> = (0..chosen.len()).collect();
    for i in (1..order.len()).rev() {
        let j = rng.below(i + 1);
        order.swap(i, j);
    }
    let mut out = Vec::with_capacity(n);
    for m in 0..n {
        let site = if order.is_empty() {
            [
                rng.uniform() * box_lengths[0],
                rng.uniform() * box_lengths[1],
                rng.uniform() * box_lengths[2],
            ]
        } else if m < order.len() {
            chosen[order[m]].0
        } else {
            // More molecules than sites (fixed atoms fill the box): reuse a
            // site with a random offset so no two centres coincide.
            let s = chosen[order[m % order.len()]].0;
            [
                s[0] + rng.uniform() - 0.5,
                s[1] + rng.uniform() - 0.5,
                s[2] + rng.uniform() - 0.5,
            ]
        };
        out.push((site, rng.rotation()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_avoid_fixed_atoms_and_are_distinct() {
        let l = [20.0, 20.0, 20.0];
        // a blob of fixed atoms across the periodic corner
        let fixed: Vec<[f64; 3]> = (0..27)
            .map(|i| {
                [
                    ((i % 3) as f64 - 1.0) * 1.5 + 0.2,
                    ((i / 3 % 3) as f64 - 1.0) * 1.5,
                    ((i / 9) as f64 - 1.0) * 1.5,
                ]
            })
            .collect();
        let radii = vec![1.0; 200];
        let mut rng = Rng::new(1, 0);
        let placed = place(&radii, &fixed, l, 2.0, &mut rng);
        assert_eq!(placed.len(), 200);
        let mi = |d: f64, l: f64| d - l * (d / l).round();
        for (i, (c, _)) in placed.iter().enumerate() {
            for f in &fixed {
                let d: f64 = (0..3)
                    .map(|k| mi(c[k] - f[k], l[k]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(d >= 3.0 - 1e-9, "site {c:?} {d} Å from a fixed atom");
            }
            for (c2, _) in &placed[..i] {
                assert_ne!(c, c2, "two molecules on one site");
            }
        }
    }
}
