//! Packing core: rigid copies of molecule templates in an orthorhombic
//! periodic box (optionally around fixed atoms) with every intermolecular
//! atom pair at least a tolerance apart under the minimum image.
//!
//! Pure Rust, deterministic (seeded ChaCha8; reductions in a fixed order, so
//! the output is bit-identical for any number of rayon threads), no I/O.
//!
//! Method (packmol's objective, a different optimiser set-up):
//! 1. feasibility: packing fraction of the tolerance bodies ([`feasibility`]);
//! 2. a random start: centres by random sequential addition, each an exclusion diameter from the
//!    others and from fixed atoms, random orientations ([`scatter`]): no lattice for the optimiser
//!    to leave in the result, and no deep overlaps for it to resolve;
//! 3. L-BFGS ([`optimise`]) on the penalty `Σ max(0, dt² − d²)²` over 6 rigid-body
//!    coordinates per molecule ([`objective`]), with a molecule-level Verlet
//!    list and parallel pair evaluation; molecules still closer than the tolerance to another
//!    when a round stalls or stops halving the close contacts are moved to random places
//!    ("movebad");
//! 4. an independent minimum-image check of the output ([`check`]).
//!
//! [`judge`] measures a packed box as a chemist would (distances, density, rigidity, S(k) over
//! molecule centres, orientational order); tests, benches and the offline tools use it.

pub mod blocks;
pub mod cells;
pub mod check;
pub mod feasibility;
pub mod judge;
pub mod objective;
pub mod optimise;
pub mod par;
pub mod pool;
pub mod problem;
pub mod rigid;
pub mod scatter;
pub mod sort;

use std::cell::RefCell;
use std::sync::atomic::Ordering;

pub use feasibility::packing_fraction;
pub use problem::{
    PackControl, PackError, PackMolecule, PackOutcome, PackProblem, Species, Template,
};

use objective::System;
use rigid::Rng;
use sort::sort_indices;

/// Target distance of the penalty, as a margin above the tolerance (Å), for
/// packing fractions up to [`feasibility::WARN_FRACTION`]; shrinks linearly to
/// `DT_MARGIN_DENSE` at `WARN_FRACTION + 0.1` (a margin raises the effective
/// packing fraction, which matters only for dense problems).
const DT_MARGIN: f64 = 0.1;
/// Smallest margin (Å), used for the densest accepted problems.
const DT_MARGIN_DENSE: f64 = 0.02;
/// Packing fraction of the exclusion spheres of the random start ([`scatter`]). 0.2 against 0.3
/// (issue 32's note, same run, load ~9, ours' CPU over 3 rounds): 1 000 water 12 against 13-15 ms,
/// 10 000 water 130 against 150 ms, 100 000 water 2.8 against 3.2 s user (one thread); the
/// optimiser takes one or two iterations more, the addition far fewer trials.
const SCATTER_FRACTION: f64 = 0.2;
/// Verlet skin (Å).
const SKIN: f64 = 1.0;
/// L-BFGS iterations per round (orientations are re-based between rounds).
const ROUND_ITERS: usize = 60;
/// Largest fraction of all molecules moved by one "movebad" step.
const MOVE_FRACTION: f64 = 0.05;
/// Random trial placements per moved molecule.
const MOVE_TRIALS: usize = 16;
/// Search radius of the final check, as a multiple of the tolerance.
const CHECK_SEARCH: f64 = 1.5;
/// The optimiser counts a pair as too close below `tolerance + F32_MARGIN` (Å), so the result
/// still meets the tolerance after the host rounds positions to f32 (a shift of at most ~3e-5 Å
/// per pair in a 500 Å box); the final check judges the f32-rounded positions at the tolerance.
const F32_MARGIN: f64 = 1e-3;

/// Packing fraction of the problem's tolerance bodies (see [`feasibility`]).
pub fn problem_packing_fraction(problem: &PackProblem) -> f64 {
    let t: Vec<(&[[f64; 3]], usize)> = problem
        .species
        .iter()
        .map(|s| (s.template.positions.as_slice(), s.count))
        .collect();
    packing_fraction(&t, &problem.fixed, problem.box_lengths, problem.tolerance)
}

fn progress(control: &PackControl, fraction: f64, message: &str) {
    if let Some(p) = control.progress {
        p(fraction.clamp(0.0, 1.0), message);
    }
}

/// The progress reports of one run: each goes to the caller's callback and is remembered, so the
/// heartbeat of a long phase (an evaluation, a Verlet rebuild, a "movebad" step, the final check)
/// repeats it, one wave of work at a time: on a large box the caller still hears from the packer
/// several times a second (an offline call passes at most one report per 100 ms on to the
/// host: `src/offline/pace.rs` of the client crate).
struct Reporter<'a, 'c> {
    control: &'a PackControl<'c>,
    last: RefCell<(f64, String)>,
}

impl Reporter<'_, '_> {
    fn report(&self, fraction: f64, message: &str) {
        progress(self.control, fraction, message);
        let mut last = self.last.borrow_mut();
        last.0 = fraction;
        last.1.clear();
        last.1.push_str(message);
    }

    fn beat(&self) {
        if self.control.progress.is_some() {
            let last = self.last.borrow();
            progress(self.control, last.0, &last.1);
        }
    }
}

fn cancelled(control: &PackControl) -> bool {
    control.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
}

/// How much the random start's exclusion spheres are scaled from the tolerance bodies': their
/// packing fraction becomes [`SCATTER_FRACTION`] times the molecules' share of the tolerance
/// bodies (`eta`: their packing fraction, fixed atoms included).
fn start_scale(eta: f64) -> f64 {
    (SCATTER_FRACTION / eta.max(1e-9)).cbrt()
}

/// Each molecule's exclusion diameter for the random start (Å, molecule order): the diameter of
/// the sphere as large as its tolerance body (its atoms' radius-`tolerance / 2` spheres, the volume
/// the packing fraction has just remembered), scaled by [`start_scale`].
fn start_diameters(problem: &PackProblem, eta: f64) -> Vec<f64> {
    let scale = start_scale(eta);
    problem
        .species
        .iter()
        .flat_map(|s| {
            let v = feasibility::template_volume(&s.template.positions, 0.5 * problem.tolerance);
            std::iter::repeat_n(scale * (6.0 * v / std::f64::consts::PI).cbrt(), s.count)
        })
        .collect()
}

/// Packs the problem. Errors (one-line messages) for invalid, infeasible or
/// too large inputs; otherwise always returns positions, with
/// `converged == false` and a warning when the tolerance was not met within
/// the budget or the run was cancelled. Runs on the rayon pool where there is one ([`pool`]);
/// progress reports reach `control.progress` on the calling thread.
pub fn pack(problem: &PackProblem, control: &PackControl) -> Result<PackOutcome, PackError> {
    pool::run(control, |control| pack_here(problem, control))
}

/// [`pack`] on this thread.
fn pack_here(problem: &PackProblem, control: &PackControl) -> Result<PackOutcome, PackError> {
    problem::validate(problem)?;
    let tol = problem.tolerance;
    let mut warnings = Vec::new();
    let molecules: usize = problem.species.iter().map(|s| s.count).sum();
    let say = Reporter {
        control,
        last: RefCell::new((0.0, String::new())),
    };
    let beat = || say.beat();
    say.report(
        0.0,
        &format!("checking that {} molecules fit", grouped(molecules)),
    );
    let t: Vec<(&[[f64; 3]], usize)> = problem
        .species
        .iter()
        .map(|s| (s.template.positions.as_slice(), s.count))
        .collect();
    let eta = packing_fraction(&t, &problem.fixed, problem.box_lengths, tol);
    if eta > feasibility::MAX_FRACTION {
        let t_ok = feasibility::tolerance_for_fraction(
            &t,
            &problem.fixed,
            problem.box_lengths,
            feasibility::WARN_FRACTION,
            tol,
        );
        // Round down so the suggested value itself is below the warning threshold.
        let t_ok = (t_ok * 100.0).floor() / 100.0;
        return Err(PackError::Infeasible(format!(
            "kept {tol} Å apart, they would take up {:.0} % of the box's volume, where at most {:.0} % can be filled; lower the minimum distance to about {t_ok:.2} Å, pack fewer molecules or use a larger box.",
            100.0 * eta,
            100.0 * feasibility::MAX_FRACTION
        )));
    }

    // Centred templates, one per species (the system keeps nothing per copy but its pose).
    let centred: Vec<(Vec<[f64; 3]>, usize)> = problem
        .species
        .iter()
        .map(|s| (rigid::centred(&s.template.positions).0, s.count))
        .collect();
    let n = molecules;
    let dense = ((eta - feasibility::WARN_FRACTION) / 0.1).clamp(0.0, 1.0);
    let margin = DT_MARGIN + (DT_MARGIN_DENSE - DT_MARGIN) * dense;
    let mut sys = System::new(
        &centred,
        problem.fixed.clone(),
        problem.box_lengths,
        tol + F32_MARGIN,
        tol + margin,
        SKIN,
    );
    drop(centred);

    say.report(0.02, &format!("placing {} molecules", grouped(molecules)));
    let placed = scatter::scatter(
        &start_diameters(problem, eta),
        &problem.fixed,
        0.5 * start_scale(eta) * tol,
        problem.box_lengths,
        &Rng::new(problem.seed, 0),
    );
    let mut x = vec![0.0; 6 * n];
    for (m, (c, r)) in placed.into_iter().enumerate() {
        x[6 * m..6 * m + 3].copy_from_slice(&c);
        sys.base[m] = rigid::Orientation::from_mat(&r);
    }

    let max_it = problem.max_iterations;
    let mut iters = 0usize;
    let mut was_cancelled = false;
    // Unknown until the first round evaluates the start (saves one evaluation).
    let mut stats = objective::EvalStats {
        f: f64::INFINITY,
        violations: usize::MAX,
        min_d2: 0.0,
    };
    let mut move_rng = Rng::new(problem.seed, 1);
    // The best point seen: its statistics, and a copy of its variables and base rotations taken
    // only once the current point moves away from it (before a round's rebase or a "movebad"),
    // so a run that converges in its first round never copies them (issue 12: ~21 B per water
    // atom at the optimiser's peak). The start, unknown (`stats` above), is never restored.
    let mut best_stats = stats;
    let mut best: Option<(Vec<f64>, Vec<rigid::Orientation>)> = None;
    let mut current_is_best = false;
    let mut keep_best = |current_is_best: &mut bool, x: &[f64], base: &[rigid::Orientation]| {
        if std::mem::take(current_is_best) {
            match best.as_mut() {
                Some((bx, bb)) => {
                    bx.copy_from_slice(x);
                    bb.copy_from_slice(base);
                }
                None => best = Some((x.to_vec(), base.to_vec())),
            }
        }
    };
    let mut shown = Shown::default();
    while stats.violations > 0 && iters < max_it {
        if cancelled(control) {
            was_cancelled = true;
            break;
        }
        keep_best(&mut current_is_best, &x, &sys.base);
        sys.rebase(&mut x);
        let round_start = stats.violations;
        let budget = ROUND_ITERS.min(max_it - iters);
        let mut stop = |_: usize, st: &objective::EvalStats| {
            // Said when the count changes (the fraction moves only then); an unchanged count
            // would repeat the last report, which the evaluations' heartbeat already does.
            if shown.said != Some(st.violations) {
                shown.said = Some(st.violations);
                let fraction = shown.advance(st.violations);
                say.report(
                    fraction,
                    &format!("resolving {} close contacts", grouped(st.violations)),
                );
            }
            cancelled(control)
        };
        let r = optimise::lbfgs(&mut sys, &mut x, budget, &mut stop, &beat);
        iters += r.iterations.max(1);
        stats = r.stats;
        if (stats.violations, stats.f) < (best_stats.violations, best_stats.f) {
            best_stats = stats;
            current_is_best = true;
        }
        if r.stopped {
            was_cancelled = true;
            break;
        }
        // A round that used its budget while still resolving contacts (at least halving them) is
        // followed by another; "movebad" only when it stalled or stopped making headway.
        let headway = stats.violations.saturating_mul(2) <= round_start;
        if stats.violations > 0
            && iters < max_it
            && (r.stalled || (r.iterations == budget && !headway))
        {
            keep_best(&mut current_is_best, &x, &sys.base);
            move_bad(&mut sys, &mut x, &mut move_rng, &beat);
            stats = sys.eval(&x, None, &beat);
        }
    }
    // Return the best point seen (a final "movebad" or a bad round never wins).
    // (When the current point is the best, `best_stats` is `stats`: nothing to restore.)
    if (best_stats.violations, best_stats.f) < (stats.violations, stats.f) {
        if let Some((bx, bb)) = &best {
            x.copy_from_slice(bx);
            sys.base.copy_from_slice(bb);
        }
    }

    // Whole molecules with centres wrapped into the box. The positions are taken out of the
    // system, which is dropped before the check: its arrays and Verlet list are not needed again.
    sys.update_positions(&x);
    drop(best);
    let l = problem.box_lengths;
    let mut positions = std::mem::take(&mut sys.pos);
    let atom_start = std::mem::take(&mut sys.atom_start);
    drop(sys);
    let mut molecule = vec![0u32; positions.len()];
    for m in 0..n {
        let c = [x[6 * m], x[6 * m + 1], x[6 * m + 2]];
        let s = [
            cells::wrap(c[0], l[0]) - c[0],
            cells::wrap(c[1], l[1]) - c[1],
            cells::wrap(c[2], l[2]) - c[2],
        ];
        for a in atom_start[m]..atom_start[m + 1] {
            for k in 0..3 {
                positions[a][k] += s[k];
            }
            molecule[a] = m as u32;
        }
    }
    drop(x);
    drop(atom_start);
    say.report(shown.fraction.max(0.97), "checking every distance");
    // Judged as the host will see it: positions rounded to f32 (Builder's snapshot).
    let rep = check::report(
        &positions,
        &molecule,
        &problem.fixed,
        l,
        tol,
        CHECK_SEARCH * tol,
        &beat,
    );
    drop(molecule);
    let converged = rep.offending_pairs == 0;
    if was_cancelled {
        warnings.push(format!("cancelled after {iters} iterations"));
    }
    if !converged {
        warnings.push(format!(
            "not converged: {} atom pairs closer than {tol} Å (minimum {:.4} Å) after {iters} iterations",
            rep.offending_pairs, rep.min_distance
        ));
        // A dense problem is a likely reason, and only worth a warning when it did not converge.
        if eta > feasibility::WARN_FRACTION {
            warnings.push(format!(
                "kept {tol} Å apart, the molecules take up {:.0} % of the box's volume, above {:.0} %: so dense a packing may be why it did not converge",
                100.0 * eta,
                100.0 * feasibility::WARN_FRACTION
            ));
        }
    }
    say.report(
        1.0,
        if converged {
            "converged"
        } else {
            "not converged"
        },
    );
    Ok(PackOutcome {
        positions,
        converged,
        min_distance: rep.min_distance,
        offending_pairs: rep.offending_pairs,
        iterations: iters,
        cancelled: was_cancelled,
        warnings,
        packing_fraction: eta,
    })
}

/// Progress of the optimisation from the work left: the close contacts (pairs below the
/// tolerance). On a log scale from the most seen to none, mapped to 0.05–0.95 and never moving
/// back, so it advances as contacts are resolved, whatever the iteration budget, and reaches
/// 0.95 when the last one goes.
#[derive(Default)]
struct Shown {
    /// Most close contacts seen (the scale's start).
    most: usize,
    /// Last fraction reported.
    fraction: f64,
    /// Close contacts of the last "resolving" report.
    said: Option<usize>,
}

impl Shown {
    fn advance(&mut self, contacts: usize) -> f64 {
        self.most = self.most.max(contacts).max(1);
        let done = 1.0 - (1.0 + contacts as f64).ln() / (1.0 + self.most as f64).ln();
        self.fraction = self.fraction.max(0.05 + 0.9 * done.clamp(0.0, 1.0));
        self.fraction
    }
}

/// `50000` → `50 000`: a count as a chemist reads it (thin groups of three).
pub fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// Moves some of the molecules that still clash — an atom closer than the tolerance to another
/// molecule's (packmol's "movebad" idea; a pair merely inside the penalty's margin does not
/// count: moving those too scattered thousands of nearly placed molecules in a large box): the
/// worst `MOVE_FRACTION` of the molecules (at least one, at most half of the clashing ones) each go to the best of `MOVE_TRIALS` random
/// positions and orientations, scored by their overlap penalty against the
/// current atoms. `beat` is the progress heartbeat.
fn move_bad(sys: &mut System, x: &mut [f64], rng: &mut Rng, beat: &dyn Fn()) {
    let mut bad: Vec<usize> = (0..sys.n_mov).filter(|&m| sys.mol_close[m] > 0).collect();
    if bad.is_empty() {
        return;
    }
    sort_indices(&mut bad, |a, b| {
        sys.mol_penalty[b]
            .total_cmp(&sys.mol_penalty[a])
            .then(a.cmp(&b))
    });
    let cap = ((sys.n_mov as f64 * MOVE_FRACTION).ceil() as usize).max(1);
    let k = bad.len().div_ceil(2).min(cap);
    let l = sys.box_lengths;
    let dt = sys.dt;
    let dt2 = dt * dt;
    // Atom grid of the current configuration (movable atoms, then fixed).
    sys.update_positions(x);
    let n_mov_atoms = sys.pos.len();
    let owner = |a: usize| -> usize {
        if a < n_mov_atoms {
            sys.atom_start.partition_point(|&s| s <= a) - 1
        } else {
            usize::MAX
        }
    };
    let grid = cells::PeriodicGrid::for_points(l, dt, n_mov_atoms + sys.fixed.len());
    let cl = grid.build_iter(sys.pos.iter().chain(&sys.fixed).copied());
    for (done, &m) in bad[..k].iter().enumerate() {
        if done % 1024 == 1023 {
            beat();
        }
        let tpl = sys.template(m);
        let mut best: Option<(f64, [f64; 3], rigid::Mat3)> = None;
        for _ in 0..MOVE_TRIALS {
            let c = [
                rng.uniform() * l[0],
                rng.uniform() * l[1],
                rng.uniform() * l[2],
            ];
            let r = rng.rotation();
            let mut pen = 0.0;
            for t in tpl {
                let o = rigid::mat_vec(&r, t);
                let p = [c[0] + o[0], c[1] + o[1], c[2] + o[2]];
                let w = [
                    cells::wrap(p[0], l[0]),
                    cells::wrap(p[1], l[1]),
                    cells::wrap(p[2], l[2]),
                ];
                grid.for_each_neighbour_cell(grid.coords_of(&w), |cell, sh| {
                    for &j in &cl.items[cl.start[cell] as usize..cl.start[cell + 1] as usize] {
                        let q = cl.wrapped[j as usize];
                        let d2: f64 = (0..3).map(|k| (q[k] + sh[k] - w[k]).powi(2)).sum();
                        if d2 < dt2 && owner(j as usize) != m {
                            pen += (dt2 - d2) * (dt2 - d2);
                        }
                    }
                });
            }
            if best.as_ref().is_none_or(|b| pen < b.0) {
                best = Some((pen, c, r));
            }
        }
        if let Some((_, c, r)) = best {
            x[6 * m..6 * m + 3].copy_from_slice(&c);
            x[6 * m + 3] = 0.0;
            x[6 * m + 4] = 0.0;
            x[6 * m + 5] = 0.0;
            sys.base[m] = rigid::Orientation::from_mat(&r);
        }
    }
}
