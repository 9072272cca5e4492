//! Final quality report: the minimum intermolecular (and copy–fixed) atom
//! distance under the minimum image and the number of pairs below the
//! tolerance, computed from the output positions with an atom-level cell
//! list, independently of the optimiser's Verlet lists.

use rayon::prelude::*;

use super::cells::PeriodicGrid;

/// Quality of a packing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Report {
    /// Smallest distance found (Å), capped at the search radius.
    pub min_distance: f64,
    /// Pairs closer than the tolerance.
    pub offending_pairs: usize,
}

/// Checks `positions` (atoms, with `molecule[i]` the molecule of atom `i`)
/// and `fixed` atoms in an orthorhombic periodic box, as the host will see them: every
/// coordinate rounded to f32 (Builder's snapshot). Pairs within one
/// molecule and pairs of two fixed atoms are ignored. Distances are searched
/// up to `search` Å (≥ `tol`). The only copy made is the cell list's wrapped points.
pub fn report(
    positions: &[[f64; 3]],
    molecule: &[u32],
    fixed: &[[f64; 3]],
    box_lengths: [f64; 3],
    tol: f64,
    search: f64,
) -> Report {
    let n = positions.len();
    let grid = PeriodicGrid::for_points(box_lengths, search, n + fixed.len());
    let cl = grid.build_iter(
        positions
            .iter()
            .chain(fixed)
            .map(|p| p.map(|v| v as f32 as f64)),
    );
    let mol = |i: usize| if i < n { molecule[i] } else { u32::MAX };
    let s2 = search * search;
    let t2 = tol * tol;
    // Per atom of the packed set (fixed–fixed pairs are skipped): count j > i
    // pairs, except fixed j which are counted from the packed side only. Minimum and count are
    // exact in any order, so a parallel reduction gives the same report for any thread count.
    let (best, bad) = (0..n)
        .into_par_iter()
        .with_min_len(1024)
        .map(|i| {
            let wi = cl.wrapped[i];
            let mi = mol(i);
            let mut best = s2;
            let mut bad = 0usize;
            grid.for_each_neighbour_cell(grid.coords_of(&wi), |cell, sh| {
                for &j in &cl.items[cl.start[cell] as usize..cl.start[cell + 1] as usize] {
                    let j = j as usize;
                    if j <= i || mol(j) == mi {
                        continue;
                    }
                    let q = cl.wrapped[j];
                    let d = [
                        q[0] + sh[0] - wi[0],
                        q[1] + sh[1] - wi[1],
                        q[2] + sh[2] - wi[2],
                    ];
                    let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                    if d2 < best {
                        best = d2;
                    }
                    if d2 < t2 {
                        bad += 1;
                    }
                }
            });
            (best, bad)
        })
        .reduce(|| (s2, 0), |a, b| (a.0.min(b.0), a.1 + b.1));
    Report {
        min_distance: best.sqrt(),
        offending_pairs: bad,
    }
}
