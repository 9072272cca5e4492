//! Limited-memory BFGS over the rigid-body variables, with an Armijo
//! backtracking line search and a per-step displacement cap.
//!
//! Hand-written: the objective is cheap to evaluate but its evaluation has
//! side effects (Verlet list rebuilds, per-molecule penalties) and the loop
//! must stop on the exact "no pair below tolerance" test and on cancellation,
//! which generic optimiser crates do not offer; this also keeps the wasm
//! build free of extra dependencies.

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

/// Stores `from` rounded to f32 in `to`.
fn round_into(to: &mut [f32], from: &[f64]) {
    for (t, &f) in to.iter_mut().zip(from) {
        *t = f as f32;
    }
}

/// `a · b` with `a` stored in f32 (a curvature vector, the search direction); sequential sums
/// here and below, so the result is deterministic.
fn dot32(a: &[f32], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(&x, y)| f64::from(x) * y).sum()
}

/// `a · b` of two stored (f32) curvature vectors.
fn dot3232(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum()
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
    // Curvature pairs in f32: half the memory of the largest per-molecule buffers (2 × MEMORY
    // vectors of 6 numbers per molecule); the two-loop recursion only needs a search direction,
    // which the line search then checks.
    let mut s_hist: Vec<Vec<f32>> = Vec::with_capacity(MEMORY);
    let mut y_hist: Vec<Vec<f32>> = Vec::with_capacity(MEMORY);
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
        for (v, gv) in q.iter_mut().zip(&g) {
            *v = -gv;
        }
        let k = s_hist.len();
        for i in (0..k).rev() {
            let a = rho_hist[i] * dot32(&s_hist[i], q);
            alpha_buf[i] = a;
            for (v, &y) in q.iter_mut().zip(&y_hist[i]) {
                *v -= a * f64::from(y);
            }
        }
        if k > 0 {
            let gamma =
                dot3232(&s_hist[k - 1], &y_hist[k - 1]) / dot3232(&y_hist[k - 1], &y_hist[k - 1]);
            for v in q.iter_mut() {
                *v *= gamma;
            }
        }
        for i in 0..k {
            let b = rho_hist[i] * dot32(&y_hist[i], q);
            let a = alpha_buf[i];
            for (v, &s) in q.iter_mut().zip(&s_hist[i]) {
                *v += (a - b) * f64::from(s);
            }
        }
        round_into(&mut d, q);
        let mut gd = dot32(&d, &g);
        if gd >= 0.0 || !gd.is_finite() {
            s_hist.clear();
            y_hist.clear();
            rho_hist.clear();
            for (v, gv) in d.iter_mut().zip(&g) {
                *v = -*gv as f32;
            }
            gd = dot32(&d, &g);
        }
        // Displacement cap: per molecule |dc| + r |dθ|_1.
        let mut worst = 0.0f64;
        for m in 0..sys.n_mov {
            let v: [f64; 6] = std::array::from_fn(|k| f64::from(d[6 * m + k]));
            let t = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            let r = sys.radius(m) * (v[3].abs() + v[4].abs() + v[5].abs());
            worst = worst.max(t + r);
        }
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
            vec![0.0f32; nv]
        };
        let mut y_new = if y_hist.len() == MEMORY {
            y_hist.remove(0)
        } else {
            vec![0.0f32; nv]
        };
        if rho_hist.len() == MEMORY {
            rho_hist.remove(0);
        }
        for i in 0..nv {
            let xn = step_value(x[i], alpha, f64::from(d[i]));
            s_new[i] = (xn - x[i]) as f32;
            y_new[i] = (gn[i] - g[i]) as f32;
            x[i] = xn;
        }
        // ρ from the stored values, so the recursion is consistent with what it reads.
        let sy = dot3232(&s_new, &y_new);
        if sy > 1e-12 * dot3232(&y_new, &y_new).max(1e-300) {
            rho_hist.push(1.0 / sy);
            s_hist.push(s_new);
            y_hist.push(y_new);
        }
        std::mem::swap(&mut g, &mut gn);
        stats = new_stats;
    }
}
