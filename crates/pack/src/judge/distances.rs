//! The closest intermolecular atom pairs under periodic images: every pair of atoms of two
//! different molecules, and of a molecule's atom and a fixed atom (fixed–fixed pairs are not
//! judged), at the minimum image and through further images in a box narrower than the search
//! radius, on the positions exactly as given.

use crate::cells::PeriodicGrid;
use crate::par::*;

/// The closest pairs of a box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Closest {
    /// The smallest intermolecular distance (Å); `None` when no pair is within the search radius.
    pub min_distance: Option<f64>,
    /// Pairs closer than the tolerance.
    pub below_tolerance: usize,
    /// Pairs closer than packmol's own line, √(tolerance² − 0.01) (its default precision).
    pub below_packmol_line: usize,
}

/// Judges `positions` (atoms; `molecule[i]` the molecule of atom `i`) and `fixed` atoms in an
/// orthorhombic periodic box of `box_lengths` Å against `tolerance` Å, searching pairs up to
/// `search` Å (≥ `tolerance`).
pub fn closest(
    positions: &[[f64; 3]],
    molecule: &[u32],
    fixed: &[[f64; 3]],
    box_lengths: [f64; 3],
    tolerance: f64,
    search: f64,
) -> Closest {
    let n = positions.len();
    let grid = PeriodicGrid::for_points(box_lengths, search, n + fixed.len());
    let cl = grid.build_iter(positions.iter().chain(fixed).copied());
    let owner = |i: usize| if i < n { molecule[i] } else { u32::MAX };
    let (s2, t2) = (search * search, tolerance * tolerance);
    let p2 = (tolerance * tolerance - 0.01).max(0.0);
    // Each pair once: from its lower index, or from the molecule's side for a fixed atom.
    let (best, below, below_line) = (0..n)
        .into_par_iter()
        .with_min_len(1024)
        .map(|i| {
            let wi = cl.wrapped[i];
            let (mut best, mut below, mut line) = (f64::INFINITY, 0usize, 0usize);
            grid.for_each_neighbour_cell(grid.coords_of(&wi), |cell, shift| {
                for &j in &cl.items[cl.start[cell] as usize..cl.start[cell + 1] as usize] {
                    let j = j as usize;
                    if j <= i || owner(j) == owner(i) {
                        continue;
                    }
                    let q = cl.wrapped[j];
                    let d2: f64 = (0..3).map(|k| (q[k] + shift[k] - wi[k]).powi(2)).sum();
                    if d2 < s2 {
                        best = best.min(d2);
                    }
                    below += usize::from(d2 < t2);
                    line += usize::from(d2 < p2);
                }
            });
            (best, below, line)
        })
        .reduce(
            || (f64::INFINITY, 0, 0),
            |a, b| (a.0.min(b.0), a.1 + b.1, a.2 + b.2),
        );
    Closest {
        min_distance: best.is_finite().then(|| best.sqrt()),
        below_tolerance: below,
        below_packmol_line: below_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rigid::Rng;

    /// Against a brute-force scan over the 27 neighbouring images (boxes wider than twice the search).
    #[test]
    fn matches_brute_force() {
        let l = [13.0, 15.0, 14.0];
        let mut rng = Rng::new(4, 0);
        let pts: Vec<[f64; 3]> = (0..300)
            .map(|_| [0, 1, 2].map(|k| rng.uniform() * l[k] * 1.2 - 0.1 * l[k]))
            .collect();
        let molecule: Vec<u32> = (0..300).map(|i| i / 3).collect();
        let fixed = vec![[1.0, 2.0, 3.0], [1.5, 2.0, 3.0]];
        let got = closest(&pts, &molecule, &fixed, l, 1.0, 3.0);
        let mut all: Vec<[f64; 3]> = pts.clone();
        all.extend(&fixed);
        let (mut best, mut below) = (f64::INFINITY, 0);
        for i in 0..all.len() {
            for j in i + 1..all.len() {
                let (fi, fj) = (i >= pts.len(), j >= pts.len());
                if (fi && fj) || (!fi && !fj && molecule[i] == molecule[j]) {
                    continue;
                }
                let d: f64 = (0..3)
                    .map(|k| {
                        let d = all[j][k] - all[i][k];
                        (d - l[k] * (d / l[k]).round()).powi(2)
                    })
                    .sum::<f64>()
                    .sqrt();
                best = best.min(d);
                below += usize::from(d < 1.0);
            }
        }
        assert!(below > 0);
        assert_eq!(got.below_tolerance, below);
        assert!((got.min_distance.unwrap() - best).abs() < 1e-9);
    }
}
