//! Limited-memory BFGS over the rigid-body variables, with an Armijo
//! backtracking line search and a per-step displacement cap.
//!
//! Hand-written: the objective is cheap to evaluate but its evaluation has
//! side effects (Verlet list rebuilds, per-molecule penalties) and the loop
//! must stop on the exact "no pair below tolerance" test and on cancellation,
//! which generic optimiser crates do not offer; this also keeps the wasm
//! build free of extra dependencies.

use super::blocks;
use super::objective::{step_value, EvalStats, System};

/// Stored correction pairs.
const MEMORY: usize = 8;
/// Largest displacement (Å) any atom may make in one line-search trial.
const MAX_STEP: f64 = 0.6;
/// Armijo constant.
const C1: f64 = 1e-4;
/// Backtracking halvings before a line search is declared failed.
const MAX_HALVINGS: usize = 30;

/// How one L-BFGS run ended.
#[derive(Clone, Copy, Debug)]
pub struct RunResult {
    /// Accepted steps.
    pub iterations: usize,
    /// Statistics at the final point.
    pub stats: EvalStats,
    /// The line search failed (no decrease possible along the direction).
    pub stalled: bool,
    /// `should_stop` asked to stop.
    pub stopped: bool,
}

/// Stores `from` rounded to f32 in `to` (blocks in parallel, [`blocks`]).
fn round_into(to: &mut [f32], from: &[f64]) {
    blocks::update(to, &|start, chunk| {
        for (t, &f) in chunk.iter_mut().zip(&from[start..]) {
            *t = f as f32;
        }
    });
}

/// `a · b` with `a` stored in f32 (the search direction); summed in [`blocks`], so the result is
/// deterministic for any number of threads (as every sum below).
fn dot32(a: &[f32], b: &[f64]) -> f64 {
    blocks::sum(a.len(), &|r| {
        a[r.clone()]
            .iter()
            .zip(&b[r])
            .map(|(&x, y)| f64::from(x) * y)
            .sum()
    })
}

/// A stored curvature vector (`s` or `y`): each component an i16 multiple of `unit`, the vector's
/// largest magnitude / 32 767. A quarter of f64's memory (issue 12: the 2 × [`MEMORY`] stored
/// vectors are the optimiser's largest buffers, 64 B per water atom so stored). Each component
/// is off by at most half a unit, 1.5e-5 of the largest: the two-loop recursion only needs a
/// search direction, which the line search then checks, and ρ and γ are taken from the stored
/// values, so the recursion is consistent with what it reads.
struct Packed {
    unit: f64,
    q: Vec<i16>,
}

impl Packed {
    /// Largest stored multiple of the unit.
    const STEPS: f64 = 32_767.0;

    fn zeros(n: usize) -> Packed {
        Packed {
            unit: 0.0,
            q: vec![0; n],
        }
    }

    /// Stores `value(i)` for every component, given the largest magnitude among them (finite);
    /// false (nothing usable stored) when that is too small to divide by (below ~1.8e-304).
    fn store(&mut self, largest: f64, value: impl Fn(usize) -> f64 + Sync + Send) -> bool {
        let per_unit = if largest > 0.0 {
            Self::STEPS / largest
        } else {
            0.0
        };
        if !per_unit.is_finite() {
            return false;
        }
        self.unit = largest / Self::STEPS;
        blocks::update(&mut self.q, &|start, chunk| {
            for (k, q) in chunk.iter_mut().enumerate() {
                // Within ±32 767, so the i32 conversion (one wasm instruction) is exact as an i16.
                *q = (value(start + k) * per_unit).round_ties_even() as i32 as i16;
            }
        });
        true
    }

    /// `self · b`.
    fn dot(&self, b: &[f64]) -> f64 {
        self.unit
            * blocks::sum(self.q.len(), &|r| {
                self.q[r.clone()]
                    .iter()
                    .zip(&b[r])
                    .map(|(&q, y)| f64::from(q) * y)
                    .sum()
            })
    }

    /// `self · other`.
    fn dot_packed(&self, other: &Packed) -> f64 {
        let sum = blocks::sum(self.q.len(), &|r| {
            self.q[r.clone()]
                .iter()
                .zip(&other.q[r])
                .map(|(&a, &b)| f64::from(a) * f64::from(b))
                .sum()
        });
        self.unit * other.unit * sum
    }

    /// `to += factor · self`.
    fn add_scaled_to(&self, to: &mut [f64], factor: f64) {
        let f = factor * self.unit;
        blocks::update(to, &|start, chunk| {
            for (v, &q) in chunk.iter_mut().zip(&self.q[start..]) {
                *v += f * f64::from(q);
            }
        });
    }
}

/// Minimises the penalty from `x` (modified in place) for at most
/// `max_iter` accepted steps, stopping as soon as no pair is below the
/// tolerance, or when `should_stop(iterations, stats)` returns true. `beat` is the evaluations'
/// heartbeat ([`System::eval`]).
pub fn lbfgs(
    sys: &mut System,
    x: &mut [f64],
    max_iter: usize,
    should_stop: &mut dyn FnMut(usize, &EvalStats) -> bool,
    beat: &dyn Fn(),
) -> RunResult {
    let nv = x.len();
    let mut g = vec![0.0; nv];
    let mut stats = sys.eval(x, Some(&mut g), beat);
    // Curvature pairs, stored compactly ([`Packed`]).
    let mut s_hist: Vec<Packed> = Vec::with_capacity(MEMORY);
    let mut y_hist: Vec<Packed> = Vec::with_capacity(MEMORY);
    let mut rho_hist: Vec<f64> = Vec::with_capacity(MEMORY);
    // The search direction in f32 (8 B per water atom less at the optimiser's peak, issue 12):
    // worked out in f64 in `gn`, which is free until the line search writes the trial gradient
    // there, and rounded once; the line search, the step and the curvature pair all read the
    // rounded direction, so they agree with each other.
    let mut d = vec![0.0f32; nv];
    let mut gn = vec![0.0; nv];
    let mut alpha_buf = [0.0; MEMORY];
    let mut it = 0;
    loop {
        if stats.violations == 0 {
            return RunResult {
                iterations: it,
                stats,
                stalled: false,
                stopped: false,
            };
        }
        if it >= max_iter {
            return RunResult {
                iterations: it,
                stats,
                stalled: false,
                stopped: false,
            };
        }
        if should_stop(it, &stats) {
            return RunResult {
                iterations: it,
                stats,
                stalled: false,
                stopped: true,
            };
        }
        // Two-loop recursion: q = -H g, in `gn`.
        let q = &mut gn;
        blocks::update(q, &|start, chunk| {
            for (v, gv) in chunk.iter_mut().zip(&g[start..]) {
                *v = -gv;
            }
        });
        let k = s_hist.len();
        for i in (0..k).rev() {
            let a = rho_hist[i] * s_hist[i].dot(q);
            alpha_buf[i] = a;
            y_hist[i].add_scaled_to(q, -a);
        }
        if k > 0 {
            let gamma =
                s_hist[k - 1].dot_packed(&y_hist[k - 1]) / y_hist[k - 1].dot_packed(&y_hist[k - 1]);
            blocks::update(q, &|_, chunk| {
                for v in chunk {
                    *v *= gamma;
                }
            });
        }
        for i in 0..k {
            let b = rho_hist[i] * y_hist[i].dot(q);
            s_hist[i].add_scaled_to(q, alpha_buf[i] - b);
        }
        round_into(&mut d, q);
        let mut gd = dot32(&d, &g);
        if gd >= 0.0 || !gd.is_finite() {
            s_hist.clear();
            y_hist.clear();
            rho_hist.clear();
            blocks::update(&mut d, &|start, chunk| {
                for (v, gv) in chunk.iter_mut().zip(&g[start..]) {
                    *v = -*gv as f32;
                }
            });
            gd = dot32(&d, &g);
        }
        // Displacement cap: per molecule |dc| + r |dθ|_1.
        let system = &*sys;
        let worst = blocks::map(system.n_mov, &|molecules| {
            let mut worst = 0.0f64;
            for m in molecules {
                let v: [f64; 6] = std::array::from_fn(|k| f64::from(d[6 * m + k]));
                let t = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
                let r = system.radius(m) * (v[3].abs() + v[4].abs() + v[5].abs());
                worst = worst.max(t + r);
            }
            worst
        })
        .into_iter()
        .fold(0.0f64, f64::max);
        let mut alpha = if worst > MAX_STEP {
            MAX_STEP / worst
        } else {
            1.0
        };
        let mut accepted = false;
        let mut new_stats = stats;
        for _ in 0..MAX_HALVINGS {
            // The trial point x + alpha d is computed where the evaluation reads it (not stored).
            new_stats = sys.eval_step(x, alpha, &d, Some(&mut gn), beat);
            if new_stats.f <= stats.f + C1 * alpha * gd {
                accepted = true;
                break;
            }
            alpha *= 0.5;
        }
        if !accepted {
            // Restore positions of the current point for the caller.
            let st = sys.eval(x, Some(&mut g), beat);
            return RunResult {
                iterations: it,
                stats: st,
                stalled: true,
                stopped: false,
            };
        }
        it += 1;
        // Curvature pair.
        let mut s_new = if s_hist.len() == MEMORY {
            s_hist.remove(0)
        } else {
            Packed::zeros(nv)
        };
        let mut y_new = if y_hist.len() == MEMORY {
            y_hist.remove(0)
        } else {
            Packed::zeros(nv)
        };
        if rho_hist.len() == MEMORY {
            rho_hist.remove(0);
        }
        // The step is `alpha d` (what `x` moves by, to within a rounding of `x`, below what a
        // stored multiple resolves but for steps of ~1e-9 Å, noise either way). One pass moves
        // `x` and finds each vector's largest magnitude, and whether every value is finite
        // (`total`).
        let (d, gn_now, g_now) = (&d, &gn, &g);
        let (s_largest, y_largest, total) = blocks::update_map(x, &|start, chunk| {
            let (mut s_largest, mut y_largest, mut total) = (0.0f64, 0.0f64, 0.0f64);
            for (k, xi) in chunk.iter_mut().enumerate() {
                let i = start + k;
                let di = f64::from(d[i]);
                *xi = step_value(*xi, alpha, di);
                let (s, y) = ((alpha * di).abs(), (gn_now[i] - g_now[i]).abs());
                total += s + y;
                if s > s_largest {
                    s_largest = s;
                }
                if y > y_largest {
                    y_largest = y;
                }
            }
            (s_largest, y_largest, total)
        })
        .into_iter()
        .fold((0.0f64, 0.0f64, 0.0f64), |a, b| {
            (a.0.max(b.0), a.1.max(b.1), a.2 + b.2)
        });
        let stored = total.is_finite()
            && s_new.store(s_largest, |i| alpha * f64::from(d[i]))
            && y_new.store(y_largest, |i| gn[i] - g[i]);
        // ρ from the stored values, so the recursion is consistent with what it reads.
        let sy = s_new.dot_packed(&y_new);
        if stored && sy > 1e-12 * y_new.dot_packed(&y_new).max(1e-300) {
            rho_hist.push(1.0 / sy);
            s_hist.push(s_new);
            y_hist.push(y_new);
        }
        std::mem::swap(&mut g, &mut gn);
        stats = new_stats;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_vectors_keep_each_component_within_half_a_unit() {
        let values: Vec<f64> = (0..600)
            .map(|i| ((i as f64) * 0.37).sin() * 10f64.powi(i % 7 - 3))
            .collect();
        let largest = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let mut p = Packed::zeros(values.len());
        assert!(p.store(largest, |i| values[i]));
        let half_unit = 0.5 * largest / Packed::STEPS;
        for (i, v) in values.iter().enumerate() {
            let back = f64::from(p.q[i]) * p.unit;
            assert!(
                (back - v).abs() <= half_unit * (1.0 + 1e-12),
                "{i}: {back} vs {v}"
            );
        }
        // Dot products close to the exact ones.
        let exact: f64 = values.iter().map(|v| v * v).sum();
        assert!((p.dot(&values) - exact).abs() <= 1e-4 * exact);
        assert!((p.dot_packed(&p) - exact).abs() <= 1e-4 * exact);
        let mut to = vec![1.0; values.len()];
        p.add_scaled_to(&mut to, -2.0);
        for (t, v) in to.iter().zip(&values) {
            assert!((t - (1.0 - 2.0 * v)).abs() <= 2.0 * half_unit * (1.0 + 1e-9));
        }
    }

    #[test]
    fn packed_vectors_refuse_a_largest_too_small_to_divide_by_and_keep_zeros() {
        let mut p = Packed::zeros(2);
        assert!(!p.store(1e-310, |i| if i == 0 { 1e-310 } else { 0.0 }));
        let mut p = Packed::zeros(3);
        assert!(p.store(0.0, |_| 0.0));
        assert_eq!(p.dot(&[1.0, 2.0, 3.0]), 0.0);
        assert_eq!(p.q, vec![0, 0, 0]);
    }
}
