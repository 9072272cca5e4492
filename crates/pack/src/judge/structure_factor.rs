//! The structure factor S(k) = |Σ_j exp(−i k·r_j)|² / N over molecule centres, and its largest value
//! over the reciprocal vectors a liquid's order is judged on (issue 32):
//! k = 2π (n_x / L_x, n_y / L_y, n_z / L_z) with n integer, k ≠ 0, π / a ≤ |k| and
//! |n_i| ≤ 2 N^(1/3), where a = (free volume / N)^(1/3) (so a solute's own hole is not order).
//! A liquid's largest S(k) grows like ln N; a lattice's like N. [`threshold`] is the line between.
//!
//! Computed slab by slab in n_z (each slab exact in z: the centres carry the phase
//! exp(−2πi n_z u_z) as a complex weight) with a 2-D FFT in x and y on a grid twice as fine as the
//! largest |n| needs: each centre spread with a 6th-order B-spline, and the B-spline's transform
//! divided out, which leaves aliases below (1/3)⁶ ≈ 0.14 % of a neighbouring amplitude. Memory is
//! one slab (a few hundred KB even for 10⁵ molecules), the work ~N^(4/3). [`s_max_direct`] is the
//! plain sum over every vector, the reference the tests hold the grid to.

use rustfft::num_complex::Complex;
use rustfft::FftPlanner;

use crate::par::*;

/// Order of the B-spline that spreads a centre over the grid.
const ORDER: usize = 6;
/// Grid points per axis over the `2 n_max + 2` the vectors need (the aliases' suppression).
const OVERSAMPLE: usize = 2;
/// Slabs (values of n_z) per parallel work item (fixed: the result is the same for any thread count).
const SLABS_PER_ITEM: usize = 4;

/// The largest S(k) of a box, and where.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Peak {
    /// The largest S(k) over the judged vectors (0 when there is none).
    pub s: f64,
    /// Its vector's integers `n` (k = 2π n_i / L_i); `-n` has the same S.
    pub n: [i64; 3],
    /// |k| of that vector (Å⁻¹).
    pub k: f64,
    /// How many vectors were judged (both of each `±n` pair).
    pub vectors: usize,
}

impl Peak {
    /// No vector judged.
    pub const NONE: Peak = Peak {
        s: 0.0,
        n: [0; 3],
        k: 0.0,
        vectors: 0,
    };
}

/// The line between a liquid and a lattice for `n` molecules: `3 ln(32 N) + 10` (43 at 2 000
/// molecules, 55 at 10⁵). Over ~32 N independent vectors an ideal gas's largest S is about
/// ln(32 N) (S is exponentially distributed with mean 1); a liquid's peak near 2π/a raises the
/// mean there a few times; a lattice's Bragg peaks are a sizeable fraction of N.
pub fn threshold(n: usize) -> f64 {
    3.0 * (32.0 * n as f64).ln() + 10.0
}

/// The judged range: `n_max` = ⌊2 N^(1/3)⌋ and the smallest |k|² (Å⁻²), π / a squared.
fn range(n: usize, free_volume: f64) -> (i64, f64) {
    let nf = n as f64;
    let n_max = (2.0 * nf.cbrt()).floor() as i64;
    let a = (free_volume / nf).cbrt();
    let k_min = std::f64::consts::PI / a;
    (n_max, k_min * k_min)
}

/// |k|² (Å⁻²) of the vector `n` in a box of `box_lengths` Å.
fn k2(n: [i64; 3], box_lengths: [f64; 3]) -> f64 {
    (0..3)
        .map(|i| (std::f64::consts::TAU * n[i] as f64 / box_lengths[i]).powi(2))
        .sum()
}

/// Whether `n` is judged: not 0, |k| ≥ π / a (`k2_min`), every |n_i| ≤ `n_max` (the caller's loop).
fn judged(n: [i64; 3], box_lengths: [f64; 3], k2_min: f64) -> bool {
    n != [0, 0, 0] && k2(n, box_lengths) >= k2_min
}

/// The better of two peaks: the larger S, then the first vector in (n_z, n_y, n_x) order, so a
/// parallel reduction picks the same one for any thread count.
fn better(a: Peak, b: Peak) -> Peak {
    let key = |p: &Peak| [p.n[2], p.n[1], p.n[0]];
    match a.s.total_cmp(&b.s) {
        std::cmp::Ordering::Greater => a,
        std::cmp::Ordering::Less => b,
        std::cmp::Ordering::Equal => {
            if key(&a) <= key(&b) {
                a
            } else {
                b
            }
        }
    }
}

/// Fractional coordinates in [0, 1) of each point.
fn fractional(points: &[[f64; 3]], box_lengths: [f64; 3]) -> Vec<[f64; 3]> {
    points
        .iter()
        .map(|p| [0, 1, 2].map(|k| (p[k] / box_lengths[k]).rem_euclid(1.0)))
        .collect()
}

/// The largest S(k) of `centres` (Å, one per molecule) in an orthorhombic periodic box of
/// `box_lengths` Å whose free volume (the box less any fixed solute) is `free_volume` Å³, on the
/// grid (see the module header). Fewer than 2 centres: no vector, S 0.
pub fn s_max(centres: &[[f64; 3]], box_lengths: [f64; 3], free_volume: f64) -> Peak {
    let n = centres.len();
    let none = Peak::NONE;
    if n < 2 {
        return none;
    }
    let (n_max, k2_min) = range(n, free_volume);
    let size = smooth_at_least(OVERSAMPLE * (2 * n_max as usize + 2));
    let spline = Spline::of(&fractional(centres, box_lengths), size);
    let mut planner = FftPlanner::<f64>::new();
    let fft = planner.plan_fft_forward(size);
    let deconvolve: Vec<f64> = (0..=n_max)
        .map(|m| 1.0 / spline_transform(m as f64 / size as f64))
        .collect();
    let items: Vec<i64> = (0..=n_max).step_by(SLABS_PER_ITEM).collect();
    let norm = 1.0 / n as f64;
    items
        .par_iter()
        .map(|&mz0| {
            let zero = Complex::new(0.0, 0.0);
            let mut grid = vec![zero; size * size];
            let mut turned = vec![zero; size * size];
            let mut scratch = vec![zero; fft.get_inplace_scratch_len()];
            // exp(−2πi n_z u_z) per centre, from n_z = mz0 on by one step at a time.
            let mut phase: Vec<Complex<f64>> = spline
                .z
                .iter()
                .map(|&z| {
                    Complex::from_polar(
                        1.0,
                        -std::f64::consts::TAU * (mz0 as f64 * z).rem_euclid(1.0),
                    )
                })
                .collect();
            let step: Vec<Complex<f64>> = spline
                .z
                .iter()
                .map(|&z| Complex::from_polar(1.0, -std::f64::consts::TAU * z))
                .collect();
            let mut best = none;
            for mz in mz0..(mz0 + SLABS_PER_ITEM as i64).min(n_max + 1) {
                grid.fill(zero);
                spline.spread(&phase, &mut grid);
                for (p, s) in phase.iter_mut().zip(&step) {
                    *p *= s;
                }
                // Rows (x), then the transpose's rows (y): `turned[x * size + y]`.
                fft.process_with_scratch(&mut grid, &mut scratch);
                transpose::transpose(&grid, &mut turned, size, size);
                fft.process_with_scratch(&mut turned, &mut scratch);
                for mx in -n_max..=n_max {
                    let col = mx.rem_euclid(size as i64) as usize;
                    for my in -n_max..=n_max {
                        // The n_z = 0 slab holds both halves of the ±n pairs; the others one of each.
                        let v = [mx, my, mz];
                        if !judged(v, box_lengths, k2_min) {
                            continue;
                        }
                        let row = my.rem_euclid(size as i64) as usize;
                        let f = turned[col * size + row]
                            * (deconvolve[mx.unsigned_abs() as usize]
                                * deconvolve[my.unsigned_abs() as usize]);
                        let s = f.norm_sqr() * norm;
                        best.vectors += if mz == 0 { 1 } else { 2 };
                        let here = Peak {
                            s,
                            n: v,
                            k: k2(v, box_lengths).sqrt(),
                            vectors: 0,
                        };
                        let vectors = best.vectors;
                        best = better(best, here);
                        best.vectors = vectors;
                    }
                }
            }
            best
        })
        .reduce(
            || none,
            |a, b| {
                let vectors = a.vectors + b.vectors;
                let mut p = better(a, b);
                p.vectors = vectors;
                p
            },
        )
}

/// Each centre's B-spline weights over the grid in x and y (they do not change with n_z), its
/// z, and the centres in grid-row order, so spreading them walks the grid nearly in order.
struct Spline {
    size: usize,
    /// The grid columns and rows (row offsets: row × size) each centre's weights fall on.
    cols: Vec<[u32; ORDER]>,
    rows: Vec<[u32; ORDER]>,
    wx: Vec<[f64; ORDER]>,
    wy: Vec<[f64; ORDER]>,
    /// Fractional z of each centre (same order).
    z: Vec<f64>,
}

impl Spline {
    fn of(u: &[[f64; 3]], size: usize) -> Spline {
        let s = size as f64;
        let mut order: Vec<usize> = (0..u.len()).collect();
        let cell = |p: &[f64; 3]| [(s * p[1]) as i64, (s * p[0]) as i64];
        crate::sort_indices(&mut order, |a, b| {
            cell(&u[a]).cmp(&cell(&u[b])).then(a.cmp(&b))
        });
        let mut spline = Spline {
            size,
            cols: Vec::with_capacity(u.len()),
            rows: Vec::with_capacity(u.len()),
            wx: Vec::with_capacity(u.len()),
            wy: Vec::with_capacity(u.len()),
            z: Vec::with_capacity(u.len()),
        };
        for &i in &order {
            let p = u[i];
            // Grid point g takes M(t − g) with t = s u + ORDER / 2, for g = ⌊t⌋ − j, j < ORDER.
            let tx = s * p[0] + ORDER as f64 / 2.0;
            let ty = s * p[1] + ORDER as f64 / 2.0;
            let (mut wx, mut wy) = ([0.0; ORDER], [0.0; ORDER]);
            bspline(tx - tx.floor(), &mut wx);
            bspline(ty - ty.floor(), &mut wy);
            let (gx, gy) = (tx.floor() as i64, ty.floor() as i64);
            let wrap = |g: i64| g.rem_euclid(size as i64) as u32;
            spline
                .cols
                .push(std::array::from_fn(|j| wrap(gx - j as i64)));
            spline
                .rows
                .push(std::array::from_fn(|j| wrap(gy - j as i64) * size as u32));
            spline.wx.push(wx);
            spline.wy.push(wy);
            spline.z.push(p[2]);
        }
        spline
    }

    /// Adds each centre, weighted by `phase`, to the `size × size` grid (row-major, y rows).
    fn spread(&self, phase: &[Complex<f64>], grid: &mut [Complex<f64>]) {
        for (k, c) in phase.iter().enumerate() {
            let (cols, wx) = (&self.cols[k], &self.wx[k]);
            for (&row, &b) in self.rows[k].iter().zip(&self.wy[k]) {
                let cb = c * b;
                let line = &mut grid[row as usize..row as usize + self.size];
                for (&col, &a) in cols.iter().zip(wx) {
                    line[col as usize] += cb * a;
                }
            }
        }
    }
}

/// `out[j]` = M(w + j), the cardinal B-spline of order [`ORDER`] (support [0, ORDER]), for
/// `w` in [0, 1) (the recursion of smooth particle-mesh Ewald).
fn bspline(w: f64, out: &mut [f64; ORDER]) {
    out.fill(0.0);
    out[0] = w;
    out[1] = 1.0 - w;
    for order in 3..=ORDER {
        let div = 1.0 / (order - 1) as f64;
        for j in (0..order).rev() {
            let t = w + j as f64;
            let here = if j < order - 1 { out[j] } else { 0.0 };
            let before = if j > 0 { out[j - 1] } else { 0.0 };
            out[j] = div * (t * here + (order as f64 - t) * before);
        }
    }
}

/// The Fourier transform of the centred B-spline at `xi` cycles per grid point: sinc(π ξ)^ORDER.
fn spline_transform(xi: f64) -> f64 {
    if xi == 0.0 {
        return 1.0;
    }
    let x = std::f64::consts::PI * xi;
    (x.sin() / x).powi(ORDER as i32)
}

/// The smallest 2^a 3^b 5^c at least `n` (a length the FFT handles fast).
fn smooth_at_least(n: usize) -> usize {
    (n.max(1)..)
        .find(|&m| {
            let mut m = m;
            for p in [2, 3, 5] {
                while m % p == 0 {
                    m /= p;
                }
            }
            m == 1
        })
        .unwrap_or(n)
}

/// [`s_max`] by the plain sum over every judged vector (O(N × vectors)): the reference.
pub fn s_max_direct(centres: &[[f64; 3]], box_lengths: [f64; 3], free_volume: f64) -> Peak {
    let n = centres.len();
    let mut best = Peak::NONE;
    if n < 2 {
        return best;
    }
    let (n_max, k2_min) = range(n, free_volume);
    let u = fractional(centres, box_lengths);
    // exp(−2πi m u) for m = 0..=n_max per centre and axis, by powers.
    let w = (n_max + 1) as usize;
    let powers: Vec<[Vec<Complex<f64>>; 3]> = u
        .iter()
        .map(|p| {
            [0, 1, 2].map(|k| {
                let step = Complex::from_polar(1.0, -std::f64::consts::TAU * p[k]);
                let mut v = Vec::with_capacity(w);
                let mut z = Complex::new(1.0, 0.0);
                for m in 0..w {
                    if m % 16 == 0 {
                        z = Complex::from_polar(1.0, -std::f64::consts::TAU * m as f64 * p[k]);
                    }
                    v.push(z);
                    z *= step;
                }
                v
            })
        })
        .collect();
    let at = |v: &Vec<Complex<f64>>, m: i64| {
        let z = v[m.unsigned_abs() as usize];
        if m < 0 {
            z.conj()
        } else {
            z
        }
    };
    for mz in 0..=n_max {
        for my in -n_max..=n_max {
            for mx in -n_max..=n_max {
                let v = [mx, my, mz];
                if !judged(v, box_lengths, k2_min) {
                    continue;
                }
                let sum: Complex<f64> = powers
                    .iter()
                    .map(|p| at(&p[0], mx) * at(&p[1], my) * at(&p[2], mz))
                    .sum();
                let vectors = best.vectors + if mz == 0 { 1 } else { 2 };
                best = better(
                    best,
                    Peak {
                        s: sum.norm_sqr() / n as f64,
                        n: v,
                        k: k2(v, box_lengths).sqrt(),
                        vectors: 0,
                    },
                );
                best.vectors = vectors;
            }
        }
    }
    best
}

/// S(k) of one vector `n` by the plain sum.
pub fn s_of(centres: &[[f64; 3]], box_lengths: [f64; 3], n: [i64; 3]) -> f64 {
    let sum: Complex<f64> = centres
        .iter()
        .map(|p| {
            let phase: f64 = (0..3)
                .map(|k| -std::f64::consts::TAU * n[k] as f64 * p[k] / box_lengths[k])
                .sum();
            Complex::from_polar(1.0, phase)
        })
        .sum();
    sum.norm_sqr() / centres.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rigid::Rng;

    #[test]
    fn bspline_weights_sum_to_one_and_match_the_transform() {
        let mut w = [0.0; ORDER];
        for t in [0.0, 0.13, 0.5, 0.77, 0.999] {
            bspline(t, &mut w);
            assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{w:?}");
            assert!(w.iter().all(|&x| x >= 0.0));
        }
        // Symmetric about the centre: M(w + j) = M(ORDER − w − j).
        bspline(0.25, &mut w);
        let mut v = [0.0; ORDER];
        bspline(0.75, &mut v);
        for j in 0..ORDER {
            assert!((w[j] - v[ORDER - 1 - j]).abs() < 1e-12);
        }
        assert_eq!(smooth_at_least(104), 108);
        assert_eq!(smooth_at_least(372), 375);
    }

    #[test]
    fn threshold_is_the_issues_line() {
        assert!((threshold(2000) - 43.19).abs() < 0.01);
        assert!((threshold(100_000) - 54.94).abs() < 0.01);
    }

    /// Random points (an ideal gas), a jittered lattice and a lattice with holes: the grid's
    /// largest S and where it is agree with the plain sum, and every judged vector is counted.
    #[test]
    fn grid_matches_the_direct_sum() {
        let mut rng = Rng::new(3, 0);
        let l = [21.0, 23.5, 19.0];
        let gas: Vec<[f64; 3]> = (0..300)
            .map(|_| [0, 1, 2].map(|k| rng.uniform() * l[k]))
            .collect();
        let lattice: Vec<[f64; 3]> = (0..343)
            .map(|i| {
                let c = [i % 7, i / 7 % 7, i / 49];
                [0, 1, 2].map(|k| (c[k] as f64 + 0.5) * l[k] / 7.0 + 0.3 * (rng.uniform() - 0.5))
            })
            .collect();
        for points in [&gas, &lattice] {
            let v = l[0] * l[1] * l[2];
            let grid = s_max(points, l, v);
            let direct = s_max_direct(points, l, v);
            assert_eq!(grid.vectors, direct.vectors);
            assert!(
                (grid.s - direct.s).abs() <= 0.01 * direct.s + 0.05,
                "{grid:?} vs {direct:?}"
            );
            let at = s_of(points, l, grid.n);
            assert!((at - grid.s).abs() <= 0.01 * at + 0.05, "{at} vs {grid:?}");
        }
        // The lattice's Bragg peak is a sizeable fraction of N; the gas's S stays near ln(vectors).
        let lat = s_max(&lattice, l, l[0] * l[1] * l[2]);
        assert!(lat.s > 0.5 * lattice.len() as f64, "{lat:?}");
        assert!(s_max(&gas, l, l[0] * l[1] * l[2]).s < threshold(gas.len()));
    }
}
