//! The forward complex FFT of the S(k) grid ([`super::structure_factor`]): lengths 2^a 3^b 5^c
//! (the grid's sizes are chosen so), radix 4, 2, 3 and 5 in the self-sorting Stockham order, many
//! interleaved sequences at once (a row-major grid's columns in one call).
//!
//! Written here rather than taken from `rustfft` (the well-kept crate the judge used first) for the
//! page package's size (issue 10: it stays ≤ 1.0 MB gzip): rustfft's planner carries every
//! algorithm and butterfly up to 32 for any length, about 150 KB of wasm before wasm-opt; without
//! it the package went from 1 074 161 to 1 012 262 B gzip (scripts/build.sh, same machine). Speed
//! (native, one thread, random centres, best of 3 interleaved rounds): 2 000 centres 8.3 vs
//! 6.9 ms, 10 000 69.9 vs 67.4 ms, 100 000 1.40 vs 1.50 s. The S(k) tests hold this transform to
//! the direct sum (`structure_factor`'s tests, tests/pack_judge.rs), and its own test to the
//! plain DFT.

use num_complex::Complex;

type C = Complex<f64>;

/// A planned transform of one length: its stages' radices and twiddle factors.
pub struct Fft {
    len: usize,
    stages: Vec<Stage>,
}

/// One Stockham stage: radix `p` over sequences of length `n` (m = n / p).
struct Stage {
    p: usize,
    /// `twiddles[j (p − 1) + t − 1]` = exp(−2πi j t / n), j < m, 1 ≤ t < p.
    twiddles: Vec<C>,
}

impl Fft {
    /// The transform of `len` points (`len` ≥ 1 a product of 2, 3 and 5; `None` otherwise).
    pub fn new(len: usize) -> Option<Fft> {
        let mut stages = Vec::new();
        let mut n = len;
        while n > 1 {
            let p = [4, 2, 3, 5].into_iter().find(|p| n % p == 0)?;
            let m = n / p;
            let twiddles = (0..m)
                .flat_map(|j| {
                    (1..p).map(move |t| {
                        C::from_polar(1.0, -std::f64::consts::TAU * (j * t) as f64 / n as f64)
                    })
                })
                .collect();
            stages.push(Stage { p, twiddles });
            n = m;
        }
        (len > 0).then_some(Fft { len, stages })
    }

    /// Transforms `stride` interleaved sequences in place: element `j` of sequence `q` is
    /// `data[q + stride j]` (`data.len()` = `len × stride`; a row-major grid's columns have the
    /// row length as stride). `scratch`: at least `data.len()` points.
    pub fn process(&self, data: &mut [C], stride: usize, scratch: &mut [C]) {
        debug_assert_eq!(data.len(), self.len * stride);
        let scratch = &mut scratch[..data.len()];
        let (mut x, mut y) = (&mut *data, &mut *scratch);
        let (mut n, mut s) = (self.len, stride);
        for stage in &self.stages {
            let (m, w) = (n / stage.p, &stage.twiddles[..]);
            match stage.p {
                4 => pass(x, y, w, m, s, dft4),
                2 => pass(x, y, w, m, s, |[a, b]| [a + b, a - b]),
                3 => pass(x, y, w, m, s, dft3),
                _ => pass(x, y, w, m, s, dft5),
            }
            std::mem::swap(&mut x, &mut y);
            n = m;
            s *= stage.p;
        }
        if self.stages.len() % 2 == 1 {
            data.copy_from_slice(scratch);
        }
    }
}

/// One radix-`P` Stockham stage from `x` into `y`: for each of the `s` interleaved sequences of
/// length `P m`, `y[q + s (P j + t)]` = (the `P`-point DFT of `x[q + s (j + r m)]` over r)[t] ×
/// `w[j (P − 1) + t − 1]`.
fn pass<const P: usize>(
    x: &[C],
    y: &mut [C],
    w: &[C],
    m: usize,
    s: usize,
    dft: impl Fn([C; P]) -> [C; P],
) {
    for j in 0..m {
        let w = &w[j * (P - 1)..(j + 1) * (P - 1)];
        for q in 0..s {
            let out = dft(std::array::from_fn(|r| x[q + s * (j + r * m)]));
            y[q + s * P * j] = out[0];
            for t in 1..P {
                y[q + s * (P * j + t)] = out[t] * w[t - 1];
            }
        }
    }
}

/// `z` × (−i).
fn minus_i(z: C) -> C {
    C::new(z.im, -z.re)
}

/// The 4-point DFT.
fn dft4(a: [C; 4]) -> [C; 4] {
    let (t0, t1) = (a[0] + a[2], a[0] - a[2]);
    let (t2, t3) = (a[1] + a[3], minus_i(a[1] - a[3]));
    [t0 + t2, t1 + t3, t0 - t2, t1 - t3]
}

/// The 3-point DFT.
fn dft3(a: [C; 3]) -> [C; 3] {
    const H: f64 = 0.866_025_403_784_438_6; // sin(2π/3)
    let (sum, diff) = (a[1] + a[2], a[1] - a[2]);
    let mid = a[0] - sum * 0.5;
    let rot = minus_i(diff) * H;
    [a[0] + sum, mid + rot, mid - rot]
}

/// The 5-point DFT.
fn dft5(a: [C; 5]) -> [C; 5] {
    let (s1, c1) = (0.2 * std::f64::consts::TAU).sin_cos();
    let (s2, c2) = (0.4 * std::f64::consts::TAU).sin_cos();
    let (b1, d1) = (a[1] + a[4], a[1] - a[4]);
    let (b2, d2) = (a[2] + a[3], a[2] - a[3]);
    let even1 = a[0] + b1 * c1 + b2 * c2;
    let even2 = a[0] + b1 * c2 + b2 * c1;
    let odd1 = minus_i(d1 * s1 + d2 * s2);
    let odd2 = minus_i(d1 * s2 - d2 * s1);
    [
        a[0] + b1 + b2,
        even1 + odd1,
        even2 + odd2,
        even2 - odd2,
        even1 - odd1,
    ]
}

/// Transposes the `size × size` row-major grid in place.
pub fn transpose(grid: &mut [C], size: usize) {
    for r in 0..size {
        for c in r + 1..size {
            grid.swap(r * size + c, c * size + r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every radix and mixes of them, one sequence and interleaved ones, against the plain DFT.
    #[test]
    fn matches_the_plain_dft() {
        let mut seed = 7u64;
        let mut random = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for len in [1, 2, 3, 4, 5, 8, 12, 30, 45, 64, 75, 96, 108, 375] {
            let fft = Fft::new(len).unwrap();
            for stride in [1, 3] {
                let input: Vec<C> = (0..len * stride)
                    .map(|_| C::new(random(), random()))
                    .collect();
                let mut data = input.clone();
                let mut scratch = vec![C::new(0.0, 0.0); data.len()];
                fft.process(&mut data, stride, &mut scratch);
                for q in 0..stride {
                    for k in 0..len {
                        let plain: C = (0..len)
                            .map(|j| {
                                input[q + stride * j]
                                    * C::from_polar(
                                        1.0,
                                        -std::f64::consts::TAU * ((j * k) % len) as f64
                                            / len as f64,
                                    )
                            })
                            .sum();
                        let got = data[q + stride * k];
                        assert!((got - plain).norm() < 1e-9 * len as f64, "{len} {k}");
                    }
                }
            }
        }
        assert!(Fft::new(7).is_none() && Fft::new(0).is_none());
    }
}
