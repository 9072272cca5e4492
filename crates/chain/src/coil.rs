//! How a chain is judged, by the tests and the benchmarks alike: its coil statistics (end-to-end
//! distance, step length and radius of gyration between repeat-unit centroids, the Flory exponent
//! over two lengths) and its contacts (pairs of atoms of different units closer than the
//! builder's bound), on the structure as the host receives it.
//!
//! A random coil has R² / ((N − 1) b²) of a few (RadonPy's chains of 50 units: 0.9–19, one seed
//! each); a rod has N − 1. Its radius of gyration grows as N^ν with ν ≈ 0.5 (ideal) to 0.6
//! (self-avoiding); a rod's as N^1.

use super::geometry::cells_around;
use super::walk::contact_bound;

/// Coil statistics of one chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coil {
    /// Repeat units N.
    pub units: usize,
    /// R², Å²: squared distance between the first and the last unit's centroids.
    pub end_to_end2: f64,
    /// b², Å²: mean squared distance between consecutive units' centroids.
    pub step2: f64,
    /// Radius of gyration of the atoms (unweighted), Å.
    pub gyration: f64,
}

impl Coil {
    /// R² / ((N − 1) b²): 1 for a freely jointed chain of units, N − 1 for a rod.
    pub fn ratio(&self) -> f64 {
        self.end_to_end2 / ((self.units - 1) as f64 * self.step2)
    }
}

/// The coil statistics of a chain: `positions` in Å, `unit` each atom's repeat unit (any numbering
/// that increases along the chain, e.g. 0-based units or 1-based residue ids). `None` for fewer
/// than two units.
pub fn coil(positions: &[[f64; 3]], unit: &[i64]) -> Option<Coil> {
    let mut centroids: Vec<([f64; 3], usize)> = Vec::new();
    let mut current = None;
    for (p, &u) in positions.iter().zip(unit) {
        if current != Some(u) {
            centroids.push(([0.0; 3], 0));
            current = Some(u);
        }
        let c = centroids.last_mut().expect("pushed");
        for (sum, x) in c.0.iter_mut().zip(p) {
            *sum += x;
        }
        c.1 += 1;
    }
    let centroids: Vec<[f64; 3]> = centroids
        .iter()
        .map(|(s, n)| s.map(|x| x / *n as f64))
        .collect();
    let units = centroids.len();
    if units < 2 {
        return None;
    }
    let d2 = |a: [f64; 3], b: [f64; 3]| (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>();
    let step2 = centroids.windows(2).map(|w| d2(w[0], w[1])).sum::<f64>() / (units - 1) as f64;
    let n = positions.len() as f64;
    let mean = [0, 1, 2].map(|k| positions.iter().map(|p| p[k]).sum::<f64>() / n);
    let gyration = (positions.iter().map(|&p| d2(p, mean)).sum::<f64>() / n).sqrt();
    Some(Coil {
        units,
        end_to_end2: d2(centroids[0], centroids[units - 1]),
        step2,
        gyration,
    })
}

/// The exponent ν of Rg ∝ N^ν between two lengths: `(n1, rg1)` and `(n2, rg2)` (Rg as the root
/// mean square over seeds).
pub fn flory_exponent(n1: usize, rg1: f64, n2: usize, rg2: f64) -> f64 {
    (rg2 / rg1).ln() / (n2 as f64 / n1 as f64).ln()
}

/// The exponent ν of Rg ∝ N^ν between chains of `n1` and `n2` units over seeds, from each seed's
/// squared radius of gyration (Å²) at either length, with its standard error: ν from the mean Rg²
/// at either length, the error carried from each mean's standard error (first order; the two sets
/// of chains are drawn apart). One chain's Rg² spreads by ~40 % of the mean, so over 20 seeds ν is
/// known to about ±0.05: a value a few hundredths below 0.5 alone does not tell a collapse.
pub fn exponent_over_seeds(n1: usize, rg2_1: &[f64], n2: usize, rg2_2: &[f64]) -> (f64, f64) {
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    // (standard error of the mean / mean)², the variance of the mean's logarithm.
    let relative2 = |x: &[f64]| {
        let m = mean(x);
        let variance = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() - 1).max(1) as f64;
        variance / (x.len() as f64 * m * m)
    };
    let (m1, m2) = (mean(rg2_1), mean(rg2_2));
    let log_ratio = (n2 as f64 / n1 as f64).ln();
    let nu = 0.5 * (m2 / m1).ln() / log_ratio;
    let error = 0.5 * (relative2(rg2_1) + relative2(rg2_2)).sqrt() / log_ratio;
    (nu, error)
}

/// Pairs `(i, j, distance)` of atoms of different units, more than two bonds apart, closer than
/// [`contact_bound`], on the positions
/// rounded to f32 as the host's snapshot holds them. A cell list over the atoms (cells of the
/// largest bound), with the bond graph of the structure itself.
pub fn contacts(
    elements: &[u8],
    positions: &[[f64; 3]],
    bonds: &[[u32; 2]],
    unit: &[i64],
) -> Vec<(usize, usize, f64)> {
    let n = elements.len();
    let mut neighbours = vec![Vec::new(); n];
    for &[i, j] in bonds {
        neighbours[i as usize].push(j as usize);
        neighbours[j as usize].push(i as usize);
    }
    let p: Vec<[f64; 3]> = positions
        .iter()
        .map(|c| c.map(|x| x as f32 as f64))
        .collect();
    let mut kinds: Vec<u8> = elements.to_vec();
    kinds.sort_unstable();
    kinds.dedup();
    let cell = kinds
        .iter()
        .flat_map(|&a| kinds.iter().map(move |&b| contact_bound(a, b, 3)))
        .fold(0.0, f64::max);
    let key = |q: [f64; 3]| q.map(|x| (x / cell).floor() as i32);
    let mut cells: std::collections::HashMap<[i32; 3], Vec<usize>> = Default::default();
    for (i, &q) in p.iter().enumerate() {
        cells.entry(key(q)).or_default().push(i);
    }
    let mut found = Vec::new();
    for i in 0..n {
        // Atoms within two bonds of i (not judged).
        let near: Vec<usize> = neighbours[i]
            .iter()
            .flat_map(|&j| std::iter::once(j).chain(neighbours[j].iter().copied()))
            .collect();
        for around in cells_around(key(p[i])) {
            let Some(bucket) = cells.get(&around) else {
                continue;
            };
            for &j in bucket {
                if j <= i || unit[i] == unit[j] || near.contains(&j) {
                    continue;
                }
                let d = (0..3)
                    .map(|k| (p[i][k] - p[j][k]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                if d < contact_bound(elements[i], elements[j], 3) {
                    found.push((i, j, d));
                }
            }
        }
    }
    found.sort_by_key(|a| (a.0, a.1));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rod_gives_n_minus_1_and_exponent_1() {
        let rod = |units: usize| {
            let positions: Vec<[f64; 3]> = (0..units)
                .flat_map(|u| [[2.5 * u as f64, 0.0, 0.0], [2.5 * u as f64, 1.0, 0.0]])
                .collect();
            let unit: Vec<i64> = (0..units as i64).flat_map(|u| [u, u]).collect();
            coil(&positions, &unit).unwrap()
        };
        let (r50, r200) = (rod(50), rod(200));
        assert!((r50.ratio() - 49.0).abs() < 1e-9);
        assert!((r50.step2 - 6.25).abs() < 1e-12);
        let nu = flory_exponent(50, r50.gyration, 200, r200.gyration);
        assert!((nu - 1.0).abs() < 0.01, "{nu}");
    }

    #[test]
    fn the_exponent_over_seeds_carries_the_spread() {
        // Rg² four times as large at 4 × the units: ν 0.5 exactly, no spread no error.
        let (nu, error) = exponent_over_seeds(50, &[100.0, 100.0], 200, &[400.0, 400.0]);
        assert!((nu - 0.5).abs() < 1e-12 && error == 0.0, "{nu} {error}");
        // Rg² 90 and 110 Å² (sample variance 200 Å², the mean's relative error √(200 / 2) / 100 =
        // 0.1), and four times that at 200 units: ν 0.5 ± ½ √(0.1² + 0.1²) / ln 4.
        let (nu, error) = exponent_over_seeds(50, &[90.0, 110.0], 200, &[360.0, 440.0]);
        let expected = 0.5 * 0.02_f64.sqrt();
        assert!((nu - 0.5).abs() < 1e-12, "{nu}");
        assert!(
            (error - expected / 4.0_f64.ln()).abs() < 1e-12,
            "{error} {expected}"
        );
    }

    #[test]
    fn contacts_are_the_brute_force_pairs() {
        // Three one-atom "units" of carbon on a line, plus hydrogens; bonds 0–1 only.
        let elements = [6, 6, 6, 1, 1];
        let positions = [
            [0.0, 0.0, 0.0],
            [1.5, 0.0, 0.0],
            [3.9, 0.0, 0.0],
            [3.9, 2.0, 0.0],
            [0.0, 2.4, 0.0],
        ];
        let unit = [0, 1, 2, 3, 4];
        let found = contacts(&elements, &positions, &[[0, 1]], &unit);
        let mut brute = Vec::new();
        for i in 0..5 {
            for j in i + 1..5 {
                let d = (0..3)
                    .map(|k| (positions[i][k] - positions[j][k]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                if (i, j) != (0, 1) && d < contact_bound(elements[i], elements[j], 3) {
                    brute.push((i, j, d));
                }
            }
        }
        // Distances on f32-rounded positions, as the host holds them.
        let pairs =
            |v: &[(usize, usize, f64)]| v.iter().map(|&(i, j, _)| (i, j)).collect::<Vec<_>>();
        assert_eq!(pairs(&found), pairs(&brute));
        for (a, b) in found.iter().zip(&brute) {
            assert!((a.2 - b.2).abs() < 1e-6, "{a:?} {b:?}");
        }
        assert!(found.iter().any(|&(i, j, _)| (i, j) == (1, 2)), "{found:?}");
    }
}
