//! Final quality report: the minimum intermolecular (and copy–fixed) atom
//! distance under the minimum image and the number of pairs below the
//! tolerance, computed from the output positions with an atom-level cell
//! list, independently of the optimiser's Verlet lists.

use crate::par::*;

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
    let l = box_lengths;
    // Per atom of the packed set (fixed–fixed pairs are skipped): count j > i
    // pairs, except fixed j which are counted from the packed side only. Minimum and count are
    // exact in any order, so a parallel reduction gives the same report for any thread count.
    let judge = |i: usize| -> (f64, usize) {
        let wi = cl.wrapped[i];
        let mi = mol(i);
        let mut best = s2;
        let mut bad = 0usize;
        // Each neighbour cell once, with its images per axis: an image whose distance along one
        // axis alone reaches the search radius is skipped before the others are looked at (its
        // `d2` could not be below `best` ≤ `s2` nor below `t2` ≤ `s2`: adding squares never makes
        // a sum smaller, rounded or not), so the pairs, `d2` bits, minimum and count are those of
        // the scan of every (cell, image), whatever the box.
        grid.for_each_neighbour_cell_once(grid.coords_of(&wi), |cell, [wx, wy, wz]| {
            for &j in &cl.items[cl.start[cell] as usize..cl.start[cell + 1] as usize] {
                let j = j as usize;
                if j <= i || mol(j) == mi {
                    continue;
                }
                let q = cl.wrapped[j];
                for w0 in wx.clone() {
                    let d0 = q[0] + w0 as f64 * l[0] - wi[0];
                    if d0 * d0 >= s2 {
                        continue;
                    }
                    for w1 in wy.clone() {
                        let d1 = q[1] + w1 as f64 * l[1] - wi[1];
                        if d1 * d1 >= s2 {
                            continue;
                        }
                        for w2 in wz.clone() {
                            let d2 = q[2] + w2 as f64 * l[2] - wi[2];
                            let r2 = d0 * d0 + d1 * d1 + d2 * d2;
                            if r2 < best {
                                best = r2;
                            }
                            if r2 < t2 {
                                bad += 1;
                            }
                        }
                    }
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

    /// The scan of every (cell, image) pair, as the report was made before it skipped images per
    /// axis: the reference for bit-equality.
    fn every_image(
        pts: &[[f64; 3]],
        molecule: &[u32],
        fixed: &[[f64; 3]],
        l: [f64; 3],
        tol: f64,
        search: f64,
    ) -> Report {
        let n = pts.len();
        let grid = PeriodicGrid::for_points(l, search, n + fixed.len());
        let cl = grid.build_iter(pts.iter().chain(fixed).map(|p| p.map(|v| v as f32 as f64)));
        let mol = |i: usize| if i < n { molecule[i] } else { u32::MAX };
        let (mut best, mut bad) = (search * search, 0);
        for i in 0..n {
            let wi = cl.wrapped[i];
            grid.for_each_neighbour_cell(grid.coords_of(&wi), |cell, sh| {
                for &j in &cl.items[cl.start[cell] as usize..cl.start[cell + 1] as usize] {
                    let j = j as usize;
                    if j <= i || mol(j) == mol(i) {
                        continue;
                    }
                    let q = cl.wrapped[j];
                    let d = [0, 1, 2].map(|k| q[k] + sh[k] - wi[k]);
                    let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                    best = best.min(d2);
                    bad += usize::from(d2 < tol * tol);
                }
            });
        }
        Report {
            min_distance: best.sqrt(),
            offending_pairs: bad,
        }
    }

    /// Boxes with single-cell axes (shorter than 3 × the search radius, down to shorter than the
    /// tolerance, where one pair is close through several images) and many-cell ones: the report
    /// that skips images per axis has the bits of the every-image scan.
    #[test]
    fn report_equals_every_image_scan_in_small_boxes() {
        let mut rng = crate::rigid::Rng::new(11, 0);
        let mut compared = 0;
        for l in [
            [5.3, 5.3, 5.3],
            [3.0, 7.0, 12.5],
            [1.7, 2.4, 9.1],
            [6.2, 15.0, 4.1],
            [20.0, 20.0, 20.0],
        ] {
            for atoms in [6, 15, 40] {
                let pts: Vec<[f64; 3]> = (0..atoms)
                    .map(|_| [0, 1, 2].map(|k| rng.uniform() * l[k] * 1.4 - 0.2 * l[k]))
                    .collect();
                let molecule: Vec<u32> = (0..atoms as u32).map(|i| i / 3).collect();
                let fixed = vec![[0.5 * l[0], 0.25 * l[1], 0.9 * l[2]]];
                for (tol, search) in [(2.0, 3.0), (1.0, 1.5), (2.0, 2.0)] {
                    let got = report(&pts, &molecule, &fixed, l, tol, search, &|| {});
                    let want = every_image(&pts, &molecule, &fixed, l, tol, search);
                    assert_eq!(got.offending_pairs, want.offending_pairs, "{l:?} {atoms}");
                    assert_eq!(
                        got.min_distance.to_bits(),
                        want.min_distance.to_bits(),
                        "{l:?} {atoms}"
                    );
                    compared += usize::from(want.offending_pairs > 0);
                }
            }
        }
        assert!(compared > 10);
    }

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
