//! Final quality report: the minimum intermolecular (and copy–fixed) atom
//! distance under the minimum image and the number of pairs below the
//! tolerance, computed from the output positions with an atom-level cell
//! list, independently of the optimiser's Verlet lists.

use rayon::prelude::*;

use super::cells::PeriodicGrid;

/// Atoms judged between two heartbeats.
const CHECK_WAVE: usize = 1 << 16;

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
/// up to `search` Å (≥ `tol`). The only copy made is the cell list's wrapped points. `beat` is
/// called on this thread between waves of atoms (a progress heartbeat).
pub fn report(
    positions: &[[f64; 3]],
    molecule: &[u32],
    fixed: &[[f64; 3]],
    box_lengths: [f64; 3],
    tol: f64,
    search: f64,
    beat: &dyn Fn(),
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
    let judge = |i: usize| -> (f64, usize) {
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
    };
    // A wave of atoms at a time, with the heartbeat between waves.
    let (mut best, mut bad) = (s2, 0usize);
    for start in (0..n).step_by(CHECK_WAVE) {
        let (b, c) = (start..(start + CHECK_WAVE).min(n))
            .into_par_iter()
            .with_min_len(1024)
            .map(judge)
            .reduce(|| (s2, 0), |a, b| (a.0.min(b.0), a.1 + b.1));
        best = best.min(b);
        bad += c;
        beat();
    }
    Report {
        min_distance: best.sqrt(),
        offending_pairs: bad,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// The report equals a brute-force minimum-image scan of the f32-rounded points, and the
    /// heartbeat comes once per wave of atoms.
    #[test]
    fn report_matches_brute_force_and_beats_per_wave() {
        let l = [9.0, 10.0, 11.0];
        let mut rng = crate::rigid::Rng::new(5, 0);
        let pts: Vec<[f64; 3]> = (0..240)
            .map(|_| [0, 1, 2].map(|k| rng.uniform() * l[k] * 1.5 - 2.0))
            .collect();
        let molecule: Vec<u32> = (0..240).map(|i| i / 3).collect();
        let fixed = vec![[4.0, 5.0, 6.0]];
        let beats = Cell::new(0);
        let rep = report(&pts, &molecule, &fixed, l, 1.2, 1.8, &|| {
            beats.set(beats.get() + 1)
        });
        assert_eq!(beats.get(), 1);
        let f32ed = |p: &[f64; 3]| p.map(|v| v as f32 as f64);
        let mi = |d: f64, l: f64| d - l * (d / l).round();
        let dist = |a: &[f64; 3], b: &[f64; 3]| -> f64 {
            let (a, b) = (f32ed(a), f32ed(b));
            (0..3)
                .map(|k| mi(a[k] - b[k], l[k]).powi(2))
                .sum::<f64>()
                .sqrt()
        };
        let (mut best, mut bad) = (1.8f64, 0);
        for i in 0..pts.len() {
            let others = pts[i + 1..]
                .iter()
                .enumerate()
                .filter(|(k, _)| molecule[i + 1 + k] != molecule[i]);
            for d in others
                .map(|(_, q)| dist(&pts[i], q))
                .chain(fixed.iter().map(|f| dist(&pts[i], f)))
            {
                best = best.min(d);
                bad += usize::from(d < 1.2);
            }
        }
        assert!(bad > 0);
        assert_eq!(rep.offending_pairs, bad);
        assert!(
            (rep.min_distance - best).abs() < 1e-9,
            "{} vs {best}",
            rep.min_distance
        );
        // More atoms than one wave: a heartbeat per wave.
        let many: Vec<[f64; 3]> = (0..CHECK_WAVE + 10)
            .map(|i| {
                [
                    (i % 100) as f64 * 3.0,
                    (i / 100 % 100) as f64 * 3.0,
                    (i / 10_000) as f64 * 3.0,
                ]
            })
            .collect();
        let ids: Vec<u32> = (0..many.len() as u32).collect();
        beats.set(0);
        let rep = report(&many, &ids, &[], [300.0, 300.0, 300.0], 2.0, 3.0, &|| {
            beats.set(beats.get() + 1)
        });
        assert_eq!(beats.get(), 2);
        assert_eq!(rep.offending_pairs, 0);
    }
}
