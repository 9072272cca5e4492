//! The overlap penalty and its gradient over rigid-body coordinates.
//!
//! Variables: 6 per movable molecule, `[cx, cy, cz, a, b, g]` — the centre (Å)
//! and Euler angles (rad) of `euler(a, b, g) · base[m]` applied to the
//! molecule's centred template offsets. Penalty (packmol's form):
//! `f = Σ_pairs max(0, dt² − d²)²` over atom pairs of different molecules
//! (and molecule–fixed pairs) under the minimum image, `dt` the target
//! distance (a little above the tolerance). The gradient with respect to the
//! angles is `w_k · τ`, with `τ` the torque sum (see [`crate::rigid::euler_axes`]).
//!
//! Pairs come from a molecule-level Verlet list (molecule pairs whose bounding
//! spheres come within `dt + skin`, each with its image shift), rebuilt only when
//! a molecule's centre has moved `skin / 2` since the last build (rotations keep a molecule
//! inside its bounding sphere, so they never invalidate the list). The pair kernel
//! runs in parallel over fixed-size blocks of molecules; per-block partial
//! results are combined in block order, so the result does not depend on the
//! number of threads.

use crate::par::*;

use super::cells::{wrap, PeriodicGrid};
use super::rigid::{cross, euler, euler_axes, mat_mul, mat_vec, orthonormalise, Orientation};

/// Molecules per parallel work item of an evaluation and of a Verlet rebuild (fixed: determinism).
const BLOCK: usize = 64;
/// Work items evaluated together before their scattered contributions are summed: bounds the
/// evaluation's temporary memory (a few MB) whatever the number of molecules.
const WAVE: usize = 64;

/// One Verlet partner of a molecule `i` (the list is grouped by `i`, so `i` is implicit):
/// `j >= n_mov` means fixed atom `j - n_mov`. 8 bytes.
#[derive(Clone, Copy, Debug)]
struct Partner {
    j: u32,
    /// Image shift in box lengths per axis: `x_j + shift · L − x_i` is the displacement from
    /// `i` to `j`. Centres are wrapped into the box at every [`System::rebase`], and a round moves
    /// an atom at most a few tens of Å, so the counts stay far inside `i8`.
    shift: [i8; 3],
}

/// The variables an evaluation reads: `x`, or a line search's trial point `x + alpha d`, each
/// value computed where it is read exactly as the optimiser computes it (the same bits), so no
/// copy of the trial point is stored (issue 12: 16 B per water atom at the optimiser's peak).
#[derive(Clone, Copy)]
struct Point<'a> {
    x: &'a [f64],
    step: Option<(f64, &'a [f32])>,
}

impl Point<'_> {
    /// Variable `i`.
    #[inline]
    fn at(&self, i: usize) -> f64 {
        match self.step {
            None => self.x[i],
            Some((alpha, d)) => step_value(self.x[i], alpha, f64::from(d[i])),
        }
    }
}

/// A variable of the line search's trial point, `x + alpha d`: the one expression both the
/// evaluation (which reads the trial point without storing it) and the optimiser (which moves
/// to it) use, so both see the same bits.
#[inline(always)]
pub fn step_value(x: f64, alpha: f64, d: f64) -> f64 {
    x + alpha * d
}

/// Result of one evaluation.
#[derive(Clone, Copy, Debug, Default)]
pub struct EvalStats {
    /// Penalty value.
    pub f: f64,
    /// Atom pairs closer than the tolerance.
    pub violations: usize,
    /// Smallest squared distance among pairs closer than `dt` (or `dt²`).
    pub min_d2: f64,
}

/// The rigid bodies and the cached state of the objective.
///
/// Memory is sized to the atoms, with nothing per molecule on the heap: the templates are stored
/// once per species, the atom offsets from the centres are not stored (they are `pos − centre`),
/// the Verlet list is one compact array grouped by molecule (8 bytes per partner), and only the
/// molecule centres at the last rebuild are kept, not the atoms (they only decide when to rebuild).
pub struct System {
    /// Number of movable molecules.
    pub n_mov: usize,
    /// `atom_start[m]..atom_start[m + 1]`: atoms of molecule `m`.
    pub atom_start: Vec<usize>,
    /// Species of each molecule (index into the shapes).
    kind: Vec<u32>,
    /// Centred template offsets of every species, concatenated (`shape_start[k]..shape_start[k + 1]`).
    shapes: Vec<[f64; 3]>,
    shape_start: Vec<usize>,
    /// Bounding radius (Å) of each species.
    shape_radius: Vec<f64>,
    /// Base rotation per molecule (the Euler angles act on top of it), kept compact.
    pub base: Vec<Orientation>,
    /// Fixed atoms (Å).
    pub fixed: Vec<[f64; 3]>,
    /// Box edge lengths (Å).
    pub box_lengths: [f64; 3],
    /// Target distance of the penalty (Å).
    pub dt: f64,
    /// Tolerance (Å) for counting violations.
    pub tol: f64,
    /// Verlet skin (Å).
    pub skin: f64,
    /// Current atom positions (Å), filled by [`System::update_positions`] / [`System::eval`].
    pub pos: Vec<[f64; 3]>,
    /// Molecule centres at the last Verlet build (Å): the list holds every molecule pair whose
    /// bounding spheres came within `dt + skin`, so it stays complete until some centre has moved
    /// `skin / 2` — rotations never invalidate it (the bounding sphere is about the centre).
    centre_at_build: Vec<[f64; 3]>,
    /// Verlet list: partners of molecule `i` are `partners[partner_start[i]..partner_start[i + 1]]`.
    partner_start: Vec<u32>,
    partners: Vec<Partner>,
    /// The longest Verlet list built so far (its trimmed room is kept for the longest).
    partners_most: usize,
    built: bool,
    /// Number of Verlet list rebuilds so far.
    pub rebuilds: usize,
    /// Per-molecule penalty of the last evaluation (half of each pair to each side).
    pub mol_penalty: Vec<f64>,
    /// Per molecule: atom pairs closer than the tolerance in the last evaluation (each pair
    /// counted for both molecules).
    pub mol_close: Vec<u32>,
}

impl System {
    /// Creates the system: `species[k] = (centred offsets of the template, copies)`, molecules in
    /// species order.
    pub fn new(
        species: &[(Vec<[f64; 3]>, usize)],
        fixed: Vec<[f64; 3]>,
        box_lengths: [f64; 3],
        tol: f64,
        dt: f64,
        skin: f64,
    ) -> Self {
        let n_mov: usize = species.iter().map(|s| s.1).sum();
        let mut atom_start = Vec::with_capacity(n_mov + 1);
        let mut kind = Vec::with_capacity(n_mov);
        let mut shapes = Vec::new();
        let mut shape_start = vec![0];
        let mut shape_radius = Vec::with_capacity(species.len());
        atom_start.push(0);
        let mut atoms = 0;
        for (k, (t, count)) in species.iter().enumerate() {
            let r = t
                .iter()
                .map(|o| (o[0] * o[0] + o[1] * o[1] + o[2] * o[2]).sqrt())
                .fold(0.0, f64::max);
            shape_radius.push(r);
            shapes.extend_from_slice(t);
            shape_start.push(shapes.len());
            for _ in 0..*count {
                atoms += t.len();
                atom_start.push(atoms);
                kind.push(k as u32);
            }
        }
        System {
            n_mov,
            atom_start,
            kind,
            shapes,
            shape_start,
            shape_radius,
            base: vec![Orientation::IDENTITY; n_mov],
            fixed,
            box_lengths,
            dt,
            tol,
            skin,
            pos: vec![[0.0; 3]; atoms],
            centre_at_build: vec![[0.0; 3]; n_mov],
            partner_start: Vec::new(),
            partners: Vec::new(),
            partners_most: 0,
            built: false,
            rebuilds: 0,
            mol_penalty: vec![0.0; n_mov],
            mol_close: vec![0; n_mov],
        }
    }

    /// Centred template offsets of molecule `m` (template frame).
    pub fn template(&self, m: usize) -> &[[f64; 3]] {
        let k = self.kind[m] as usize;
        &self.shapes[self.shape_start[k]..self.shape_start[k + 1]]
    }

    /// Bounding radius (Å) of molecule `m`.
    #[inline]
    pub fn radius(&self, m: usize) -> f64 {
        self.shape_radius[self.kind[m] as usize]
    }

    /// Bounding radius (Å) of the median molecule (by count).
    fn median_radius(&self) -> f64 {
        let radius = &self.shape_radius;
        let mut count = vec![0usize; radius.len()];
        for &k in &self.kind {
            count[k as usize] += 1;
        }
        let mut order: Vec<usize> = (0..radius.len()).collect();
        crate::sort::sort_indices(&mut order, |a, b| {
            radius[a].total_cmp(&radius[b]).then(a.cmp(&b))
        });
        let mut seen = 0;
        for k in order {
            seen += count[k];
            if 2 * seen >= self.n_mov {
                return radius[k];
            }
        }
        0.0
    }

    /// Folds the Euler angles of `x` into the base rotations and zeroes them, and wraps the
    /// centres into the box (so the Verlet list's image counts stay small).
    pub fn rebase(&mut self, x: &mut [f64]) {
        let l = self.box_lengths;
        for m in 0..self.n_mov {
            let v = &mut x[6 * m..6 * m + 6];
            let r = euler(v[3], v[4], v[5]);
            self.base[m] =
                Orientation::from_mat(&orthonormalise(&mat_mul(&r, &self.base[m].to_mat())));
            for k in 0..3 {
                v[k] = wrap(v[k], l[k]);
            }
            v[3] = 0.0;
            v[4] = 0.0;
            v[5] = 0.0;
        }
    }

    /// Sets the atom positions from `x` (parallel over blocks of molecules).
    pub fn update_positions(&mut self, x: &[f64]) {
        self.update_positions_at(Point { x, step: None });
    }

    fn update_positions_at(&mut self, x: Point) {
        let starts = &self.atom_start;
        let base = &self.base;
        // Split the positions per block of molecules for parallel writes.
        let mut blocks: Vec<(usize, &mut [[f64; 3]])> =
            Vec::with_capacity(self.n_mov.div_ceil(BLOCK));
        let mut rest = &mut self.pos[..];
        for m0 in (0..self.n_mov).step_by(BLOCK) {
            let m1 = (m0 + BLOCK).min(self.n_mov);
            let (p, r) = rest.split_at_mut(starts[m1] - starts[m0]);
            blocks.push((m0, p));
            rest = r;
        }
        let (kind, shapes, shape_start) = (&self.kind, &self.shapes, &self.shape_start);
        blocks.into_par_iter().for_each(|(m0, p)| {
            let m1 = (m0 + BLOCK).min(starts.len() - 1);
            let mut a = 0;
            for m in m0..m1 {
                let v: [f64; 6] = std::array::from_fn(|k| x.at(6 * m + k));
                let r = mat_mul(&euler(v[3], v[4], v[5]), &base[m].to_mat());
                let k = kind[m] as usize;
                for t in &shapes[shape_start[k]..shape_start[k + 1]] {
                    let arm = mat_vec(&r, t);
                    p[a] = [v[0] + arm[0], v[1] + arm[1], v[2] + arm[2]];
                    a += 1;
                }
            }
        });
    }

    fn needs_rebuild(&self, x: Point) -> bool {
        if !self.built {
            return true;
        }
        let lim = 0.25 * self.skin * self.skin;
        self.centre_at_build
            .par_iter()
            .with_min_len(4096)
            .enumerate()
            .any(|(m, q)| {
                let d = [0, 1, 2].map(|k| x.at(6 * m + k) - q[k]);
                d[0] * d[0] + d[1] * d[1] + d[2] * d[2] >= lim
            })
    }

    /// Rebuilds the molecule-pair Verlet list from the centres in `x`: blocks of molecules in
    /// parallel, a wave at a time, appended in molecule order.
    fn rebuild(&mut self, x: Point, beat: &dyn Fn()) {
        let n = self.n_mov;
        let reach = self.dt + self.skin;
        let l = self.box_lengths;
        // Each pair is found from its larger molecule's side (ties: the lower index), which
        // searches `2 r_i + reach` around its centre; the cells are sized for the median
        // molecule, so in a mixture the many small molecules scan a few small cells and only the
        // few large ones scan more (cells sized for the largest made a water scan ~40 times the
        // volume it needs, and the rebuild dominated a mixed box's run time).
        let grid =
            PeriodicGrid::for_points(l, 2.0 * self.median_radius() + reach, n + self.fixed.len());
        // points: centres, then fixed atoms
        let mut pts: Vec<[f64; 3]> = (0..n)
            .map(|m| [x.at(6 * m), x.at(6 * m + 1), x.at(6 * m + 2)])
            .collect();
        pts.extend_from_slice(&self.fixed);
        let cl = grid.build(&pts);
        // Whole boxes between each point and its wrapped image.
        let images = |i: usize| -> [i64; 3] {
            let w = cl.wrapped[i];
            [0, 1, 2].map(|k| ((w[k] - pts[i][k]) / l[k]).round() as i64)
        };
        let mut partners = std::mem::take(&mut self.partners);
        partners.clear();
        let mut partner_start = std::mem::take(&mut self.partner_start);
        partner_start.clear();
        let this = &*self;
        let uniform = self.shape_radius.iter().all(|&r| r == self.shape_radius[0]);
        partner_start.reserve(n + 1);
        partner_start.push(0);
        let blocks: Vec<usize> = (0..n).step_by(BLOCK).collect();
        for wave in blocks.chunks(WAVE) {
            let lists: Vec<(Vec<Partner>, Vec<u32>)> = wave
                .par_iter()
                .map(|&m0| {
                    let mut out = Vec::new();
                    let mut counts = Vec::with_capacity(BLOCK);
                    for i in m0..(m0 + BLOCK).min(n) {
                        let before = out.len();
                        let wi = cl.wrapped[i];
                        let ni = images(i);
                        let ri = this.radius(i);
                        let search = 2.0 * ri + reach;
                        grid.for_each_cell_within(grid.coords_of(&wi), search, |cell, s| {
                            let items =
                                &cl.items[cl.start[cell] as usize..cl.start[cell + 1] as usize];
                            // One radius for all: the rule below keeps only `j > i`, and a cell's
                            // items are in index order, so those up to `i` are skipped at once.
                            let from = if uniform {
                                items.partition_point(|&j| j as usize <= i)
                            } else {
                                0
                            };
                            for &j in &items[from..] {
                                let j = j as usize;
                                // Fixed atoms (radius 0) belong to the molecule's side.
                                let rj = if j < n { this.radius(j) } else { 0.0 };
                                if j < n && (rj > ri || (rj == ri && j <= i)) {
                                    continue;
                                }
                                let wj = cl.wrapped[j];
                                let d = [
                                    wj[0] + s[0] - wi[0],
                                    wj[1] + s[1] - wi[1],
                                    wj[2] + s[2] - wi[2],
                                ];
                                let cut = ri + rj + reach;
                                if d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < cut * cut {
                                    let nj = images(j);
                                    let shift = [0, 1, 2].map(|k| {
                                        let cells = (s[k] / l[k]).round() as i64;
                                        (cells + nj[k] - ni[k]).clamp(-127, 127) as i8
                                    });
                                    out.push(Partner { j: j as u32, shift });
                                }
                            }
                        });
                        counts.push((out.len() - before) as u32);
                    }
                    (out, counts)
                })
                .collect();
            beat();
            for (out, counts) in lists {
                partners.extend_from_slice(&out);
                for c in counts {
                    let last = *partner_start.last().unwrap_or(&0);
                    partner_start.push(last + c);
                }
            }
        }
        // The list grew by doubling: give back what is beyond an eighth of slack over the
        // longest list so far, so the optimiser's curvature pairs, allocated after the first
        // build, can take it (issue 12: ~7 B per water atom at the optimiser's peak). A later
        // list up to that eighth longer than the longest fits without growing, and a shorter
        // one keeps the room (trimmed to each list, a list that grows back would move its old
        // and doubled blocks at once).
        self.partners_most = self.partners_most.max(partners.len());
        let keep = self.partners_most + self.partners_most / 8;
        if partners.capacity() > keep {
            partners.shrink_to(keep);
        }
        self.partners = partners;
        self.partner_start = partner_start;
        for (m, q) in self.centre_at_build.iter_mut().enumerate() {
            *q = [x.at(6 * m), x.at(6 * m + 1), x.at(6 * m + 2)];
        }
        self.built = true;
        self.rebuilds += 1;
    }

    /// Evaluates the penalty at `x`; writes the gradient into `grad` if given. `beat` is called
    /// on this thread between waves (a heartbeat for progress reports on long evaluations).
    ///
    /// Blocks of molecules run in parallel; each adds its molecules' own forces and torques
    /// straight into the gradient (disjoint ranges) and returns the shares of its partners `j`,
    /// which are added in block order after each wave: the same sums in the same order for any
    /// number of threads, and temporary memory bounded by one wave.
    pub fn eval(&mut self, x: &[f64], grad: Option<&mut [f64]>, beat: &dyn Fn()) -> EvalStats {
        self.eval_at(Point { x, step: None }, grad, beat)
    }

    /// [`System::eval`] at the trial point `x + alpha d` (each variable computed as
    /// [`step_value`]), without storing it.
    pub fn eval_step(
        &mut self,
        x: &[f64],
        alpha: f64,
        d: &[f32],
        grad: Option<&mut [f64]>,
        beat: &dyn Fn(),
    ) -> EvalStats {
        self.eval_at(
            Point {
                x,
                step: Some((alpha, d)),
            },
            grad,
            beat,
        )
    }

    fn eval_at(&mut self, x: Point, mut grad: Option<&mut [f64]>, beat: &dyn Fn()) -> EvalStats {
        self.update_positions_at(x);
        if self.needs_rebuild(x) {
            self.rebuild(x, beat);
        }
        let n = self.n_mov;
        let l = self.box_lengths;
        let dt2 = self.dt * self.dt;
        let tol2 = self.tol * self.tol;
        let dt = self.dt;
        let mut mol_penalty = std::mem::take(&mut self.mol_penalty);
        mol_penalty.fill(0.0);
        let mut mol_close = std::mem::take(&mut self.mol_close);
        mol_close.fill(0);
        let this = &*self;
        let pos = &self.pos;
        let starts = &self.atom_start;
        let fixed = &self.fixed;
        let partners = &self.partners;
        let partner_start = &self.partner_start;
        // Force (3) then torque (3) per molecule, accumulated in the gradient buffer (or a
        // scratch one) and turned into angle derivatives at the end.
        let mut scratch = Vec::new();
        let acc: &mut [f64] = match grad.as_deref_mut() {
            Some(g) => g,
            None => {
                scratch.resize(6 * n, 0.0);
                &mut scratch
            }
        };
        acc.fill(0.0);
        let mut total = EvalStats {
            f: 0.0,
            violations: 0,
            min_d2: dt2,
        };
        /// A partner's share: molecule, force, torque, penalty, pairs closer than the tolerance.
        type Share = (u32, [f64; 3], [f64; 3], f64, u32);
        let blocks = n.div_ceil(BLOCK);
        let mut done = 0;
        while done < blocks {
            let wave_end = (done + WAVE).min(blocks);
            let a0 = 6 * done * BLOCK;
            let a1 = (6 * wave_end * BLOCK).min(6 * n);
            let m_lo = done * BLOCK;
            let parts: Vec<(EvalStats, Vec<Share>)> = acc[a0..a1]
                .par_chunks_mut(6 * BLOCK)
                .zip(mol_penalty[m_lo..(wave_end * BLOCK).min(n)].par_chunks_mut(BLOCK))
                .zip(mol_close[m_lo..(wave_end * BLOCK).min(n)].par_chunks_mut(BLOCK))
                .enumerate()
                .map(|(b, ((own, own_pen), own_close))| {
                    let m0 = m_lo + b * BLOCK;
                    let mut st = EvalStats {
                        f: 0.0,
                        violations: 0,
                        min_d2: dt2,
                    };
                    let mut shares: Vec<Share> = Vec::new();
                    for (k, i) in (m0..(m0 + BLOCK).min(n)).enumerate() {
                        let ci = [x.at(6 * i), x.at(6 * i + 1), x.at(6 * i + 2)];
                        let mut fi = [0.0; 3];
                        let mut ti = [0.0; 3];
                        let mut pen_i = 0.0;
                        let close_before = st.violations;
                        let range = partner_start[i] as usize..partner_start[i + 1] as usize;
                        for p in &partners[range] {
                            let j = p.j as usize;
                            let shift = [0, 1, 2].map(|k| f64::from(p.shift[k]) * l[k]);
                            let mut fj = [0.0; 3];
                            let mut tj = [0.0; 3];
                            let mut pen = 0.0;
                            let pair_before = st.violations;
                            if j < n {
                                // j's centre seen from i's image
                                let cj = [
                                    x.at(6 * j) + shift[0],
                                    x.at(6 * j + 1) + shift[1],
                                    x.at(6 * j + 2) + shift[2],
                                ];
                                let reach = this.radius(j) + dt;
                                let reach2 = reach * reach;
                                for a in starts[i]..starts[i + 1] {
                                    let xa = pos[a];
                                    let e = [cj[0] - xa[0], cj[1] - xa[1], cj[2] - xa[2]];
                                    if e[0] * e[0] + e[1] * e[1] + e[2] * e[2] >= reach2 {
                                        continue;
                                    }
                                    let arm_a = [xa[0] - ci[0], xa[1] - ci[1], xa[2] - ci[2]];
                                    for xb in &pos[starts[j]..starts[j + 1]] {
                                        let d = [
                                            xb[0] + shift[0] - xa[0],
                                            xb[1] + shift[1] - xa[1],
                                            xb[2] + shift[2] - xa[2],
                                        ];
                                        if let Some(g) = pair_term(d, dt2, tol2, &mut pen, &mut st)
                                        {
                                            let arm_b = [
                                                xb[0] + shift[0] - cj[0],
                                                xb[1] + shift[1] - cj[1],
                                                xb[2] + shift[2] - cj[2],
                                            ];
                                            let ta = cross(&arm_a, &g);
                                            let tb = cross(&arm_b, &g);
                                            for k in 0..3 {
                                                fi[k] += g[k];
                                                fj[k] -= g[k];
                                                ti[k] += ta[k];
                                                tj[k] -= tb[k];
                                            }
                                        }
                                    }
                                }
                            } else {
                                let xf = fixed[j - n];
                                let xb = [xf[0] + shift[0], xf[1] + shift[1], xf[2] + shift[2]];
                                for &xa in &pos[starts[i]..starts[i + 1]] {
                                    let d = [xb[0] - xa[0], xb[1] - xa[1], xb[2] - xa[2]];
                                    if let Some(g) = pair_term(d, dt2, tol2, &mut pen, &mut st) {
                                        let arm_a = [xa[0] - ci[0], xa[1] - ci[1], xa[2] - ci[2]];
                                        let ta = cross(&arm_a, &g);
                                        for k in 0..3 {
                                            fi[k] += g[k];
                                            ti[k] += ta[k];
                                        }
                                    }
                                }
                            }
                            if pen > 0.0 {
                                st.f += pen;
                                pen_i += pen;
                                if j < n {
                                    let close = (st.violations - pair_before) as u32;
                                    shares.push((p.j, fj, tj, pen, close));
                                }
                            }
                        }
                        let o = &mut own[6 * k..6 * k + 6];
                        for q in 0..3 {
                            o[q] += fi[q];
                            o[3 + q] += ti[q];
                        }
                        own_pen[k] += 0.5 * pen_i;
                        own_close[k] += (st.violations - close_before) as u32;
                    }
                    (st, shares)
                })
                .collect();
            for (st, shares) in parts {
                total.f += st.f;
                total.violations += st.violations;
                total.min_d2 = total.min_d2.min(st.min_d2);
                for (m, fo, to, pen, close) in shares {
                    let m = m as usize;
                    mol_penalty[m] += 0.5 * pen;
                    mol_close[m] += close;
                    let o = &mut acc[6 * m..6 * m + 6];
                    for q in 0..3 {
                        o[q] += fo[q];
                        o[3 + q] += to[q];
                    }
                }
            }
            done = wave_end;
            beat();
        }
        self.mol_penalty = mol_penalty;
        self.mol_close = mol_close;
        if let Some(g) = grad {
            g.par_chunks_mut(6)
                .with_min_len(256)
                .enumerate()
                .for_each(|(m, gm)| {
                    let axes = euler_axes(x.at(6 * m + 4), x.at(6 * m + 5));
                    let t = [gm[3], gm[4], gm[5]];
                    for k in 0..3 {
                        gm[3 + k] = axes[k][0] * t[0] + axes[k][1] * t[1] + axes[k][2] * t[2];
                    }
                });
        }
        total
    }
}

/// One pair's share of the penalty: for a separation `d` (Å) closer than the target distance
/// (`dt2` = its square), adds `(dt² − d²)²` to `pen`, counts a violation below the tolerance
/// (`tol2`), tracks the closest pair, and returns the gradient of the term with respect to the
/// first atom's position (its negative acts on the second). `None` when the pair is far enough.
#[inline(always)]
fn pair_term(
    d: [f64; 3],
    dt2: f64,
    tol2: f64,
    pen: &mut f64,
    st: &mut EvalStats,
) -> Option<[f64; 3]> {
    let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    if d2 >= dt2 {
        return None;
    }
    let s = dt2 - d2;
    *pen += s * s;
    if d2 < tol2 {
        st.violations += 1;
    }
    if d2 < st.min_d2 {
        st.min_d2 = d2;
    }
    Some([4.0 * s * d[0], 4.0 * s * d[1], 4.0 * s * d[2]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_matches_finite_differences() {
        let tpl = vec![[0.0, 0.6, 0.0], [-0.8, -0.2, 0.1], [0.7, -0.3, -0.2]];
        let mut sys = System::new(
            &[(tpl, 3)],
            vec![[5.2, 4.5, 4.0]],
            [9.0, 9.0, 9.0],
            2.0,
            2.1,
            0.5,
        );
        // molecule 2 (x = 0.3) overlaps molecule 1 (x = 8.0) through the periodic boundary
        let x = vec![
            4.0, 4.0, 4.0, 0.2, 0.1, -0.3, //
            8.0, 4.6, 4.2, -0.5, 0.3, 0.9, //
            0.3, 4.3, 4.4, 0.1, -0.2, 0.4,
        ];
        let mut g = vec![0.0; x.len()];
        let beats = std::cell::Cell::new(0);
        let f0 = sys.eval(&x, Some(&mut g), &|| beats.set(beats.get() + 1)).f;
        assert!(f0 > 0.0);
        // The heartbeat: once per wave of the evaluation (one here) and of the first Verlet build.
        assert_eq!(beats.get(), 2);
        let h = 1e-6;
        for v in 0..x.len() {
            let mut xp = x.clone();
            xp[v] += h;
            let mut xm = x.clone();
            xm[v] -= h;
            let fd = (sys.eval(&xp, None, &|| {}).f - sys.eval(&xm, None, &|| {}).f) / (2.0 * h);
            assert!(
                (fd - g[v]).abs() < 1e-4 * (1.0 + g[v].abs()),
                "var {v}: fd {fd} vs {}",
                g[v]
            );
        }
    }
}
