//! The overlap penalty and its gradient over rigid-body coordinates.
//!
//! Variables: 6 per movable molecule, `[cx, cy, cz, a, b, g]` — the centre (Å)
//! and Euler angles (rad) of `euler(a, b, g) · base[m]` applied to the
//! molecule's centred template offsets. Penalty (packmol's form):
//! `f = Σ_pairs max(0, dt² − d²)²` over atom pairs of different molecules
//! (and molecule–fixed pairs) under the minimum image, `dt` the target
//! distance (a little above the tolerance). The gradient with respect to the
//! angles is `w_k · τ`, with `τ` the torque sum (see [`crate::pack::rigid::euler_axes`]).
//!
//! Pairs come from a molecule-level Verlet list (molecule pairs whose bounding
//! spheres come within `dt + skin`, each with its image shift), rebuilt only when
//! an atom has moved more than `skin / 2` since the last build. The pair kernel
//! runs in parallel over fixed-size chunks of the list; per-chunk partial
//! results are combined in chunk order, so the result does not depend on the
//! number of threads.

use rayon::prelude::*;

use super::cells::PeriodicGrid;
use super::rigid::{cross, euler, euler_axes, mat_mul, mat_vec, orthonormalise, Mat3};

/// Mutable position and arm slices of one molecule.
type AtomSlices<'a> = (&'a mut [[f64; 3]], &'a mut [[f64; 3]]);

/// Molecule pairs per parallel work item (fixed: determinism).
const CHUNK: usize = 256;

/// One molecule pair of the Verlet list: `j >= n_mov` means fixed atom `j - n_mov`.
#[derive(Clone, Copy, Debug)]
struct Pair {
    i: u32,
    j: u32,
    /// Image shift: `x_j + shift - x_i` is the displacement from i to j (Å).
    shift: [f64; 3],
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
pub struct System {
    /// Number of movable molecules.
    pub n_mov: usize,
    /// `atom_start[m]..atom_start[m + 1]`: atoms of molecule `m`.
    pub atom_start: Vec<usize>,
    /// Template offsets from the centre, per atom (template frame).
    pub template: Vec<[f64; 3]>,
    /// Base rotation per molecule (the Euler angles act on top of it).
    pub base: Vec<Mat3>,
    /// Bounding radius per molecule (Å).
    pub radius: Vec<f64>,
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
    /// Current atom positions (Å), filled by [`System::eval`].
    pub pos: Vec<[f64; 3]>,
    /// Current atom offsets from their molecule centre (rotated).
    arms: Vec<[f64; 3]>,
    pos_at_build: Vec<[f64; 3]>,
    pairs: Vec<Pair>,
    built: bool,
    /// Number of Verlet list rebuilds so far.
    pub rebuilds: usize,
    /// Per-molecule penalty of the last evaluation (half of each pair to each side).
    pub mol_penalty: Vec<f64>,
}

impl System {
    /// Creates the system. `templates[m]` are the centred offsets of molecule `m`.
    pub fn new(
        templates: Vec<Vec<[f64; 3]>>,
        fixed: Vec<[f64; 3]>,
        box_lengths: [f64; 3],
        tol: f64,
        dt: f64,
        skin: f64,
    ) -> Self {
        let n_mov = templates.len();
        let mut atom_start = Vec::with_capacity(n_mov + 1);
        atom_start.push(0);
        let mut template = Vec::new();
        let mut radius = Vec::with_capacity(n_mov);
        for t in &templates {
            let r = t
                .iter()
                .map(|o| (o[0] * o[0] + o[1] * o[1] + o[2] * o[2]).sqrt())
                .fold(0.0, f64::max);
            radius.push(r);
            template.extend_from_slice(t);
            atom_start.push(template.len());
        }
        let na = template.len();
        System {
            n_mov,
            atom_start,
            template,
            base: vec![super::rigid::IDENTITY; n_mov],
            radius,
            fixed,
            box_lengths,
            dt,
            tol,
            skin,
            pos: vec![[0.0; 3]; na],
            arms: vec![[0.0; 3]; na],
            pos_at_build: vec![[0.0; 3]; na],
            pairs: Vec::new(),
            built: false,
            rebuilds: 0,
            mol_penalty: vec![0.0; n_mov],
        }
    }

    /// Folds the Euler angles of `x` into the base rotations and zeroes them.
    pub fn rebase(&mut self, x: &mut [f64]) {
        for m in 0..self.n_mov {
            let v = &mut x[6 * m..6 * m + 6];
            let r = euler(v[3], v[4], v[5]);
            self.base[m] = orthonormalise(&mat_mul(&r, &self.base[m]));
            v[3] = 0.0;
            v[4] = 0.0;
            v[5] = 0.0;
        }
    }

    /// Sets the atom positions from `x` (parallel over molecules).
    pub fn update_positions(&mut self, x: &[f64]) {
        let starts = &self.atom_start;
        let template = &self.template;
        let base = &self.base;
        // Split the atom arrays per molecule for parallel writes.
        let mut pos_chunks: Vec<AtomSlices> = Vec::with_capacity(self.n_mov);
        let (mut prest, mut arest) = (&mut self.pos[..], &mut self.arms[..]);
        for m in 0..self.n_mov {
            let len = starts[m + 1] - starts[m];
            let (p, pr) = prest.split_at_mut(len);
            let (a, ar) = arest.split_at_mut(len);
            pos_chunks.push((p, a));
            prest = pr;
            arest = ar;
        }
        pos_chunks
            .into_par_iter()
            .with_min_len(64)
            .enumerate()
            .for_each(|(m, (p, a))| {
                let v = &x[6 * m..6 * m + 6];
                let r = mat_mul(&euler(v[3], v[4], v[5]), &base[m]);
                for (k, t) in template[starts[m]..starts[m + 1]].iter().enumerate() {
                    let arm = mat_vec(&r, t);
                    a[k] = arm;
                    p[k] = [v[0] + arm[0], v[1] + arm[1], v[2] + arm[2]];
                }
            });
    }

    fn needs_rebuild(&self) -> bool {
        if !self.built {
            return true;
        }
        let lim = 0.25 * self.skin * self.skin;
        self.pos
            .par_iter()
            .with_min_len(4096)
            .zip(self.pos_at_build.par_iter())
            .any(|(p, q)| {
                let d = [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
                d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > lim
            })
    }

    /// Rebuilds the molecule-pair Verlet list from the centres in `x`.
    fn rebuild(&mut self, x: &[f64]) {
        let n = self.n_mov;
        let rmax = self.radius.iter().cloned().fold(0.0, f64::max);
        let reach = self.dt + self.skin;
        let grid =
            PeriodicGrid::for_points(self.box_lengths, 2.0 * rmax + reach, n + self.fixed.len());
        // points: centres, then fixed atoms
        let mut pts: Vec<[f64; 3]> = (0..n)
            .map(|m| [x[6 * m], x[6 * m + 1], x[6 * m + 2]])
            .collect();
        pts.extend_from_slice(&self.fixed);
        let cl = grid.build(&pts);
        let radius = &self.radius;
        // wrap offsets of each point (wrapped - actual)
        let lists: Vec<Vec<Pair>> = (0..n)
            .into_par_iter()
            .with_min_len(64)
            .map(|i| {
                let mut out = Vec::new();
                let wi = cl.wrapped[i];
                let off_i = [wi[0] - pts[i][0], wi[1] - pts[i][1], wi[2] - pts[i][2]];
                grid.for_each_neighbour_cell(grid.coords_of(&wi), |cell, s| {
                    for &j in &cl.items[cl.start[cell] as usize..cl.start[cell + 1] as usize] {
                        let j = j as usize;
                        if j <= i {
                            continue;
                        }
                        let wj = cl.wrapped[j];
                        let d = [
                            wj[0] + s[0] - wi[0],
                            wj[1] + s[1] - wi[1],
                            wj[2] + s[2] - wi[2],
                        ];
                        let rj = if j < n { radius[j] } else { 0.0 };
                        let cut = radius[i] + rj + reach;
                        if d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < cut * cut {
                            let off_j = [wj[0] - pts[j][0], wj[1] - pts[j][1], wj[2] - pts[j][2]];
                            out.push(Pair {
                                i: i as u32,
                                j: j as u32,
                                shift: [
                                    s[0] + off_j[0] - off_i[0],
                                    s[1] + off_j[1] - off_i[1],
                                    s[2] + off_j[2] - off_i[2],
                                ],
                            });
                        }
                    }
                });
                out
            })
            .collect();
        self.pairs.clear();
        for l in lists {
            self.pairs.extend(l);
        }
        self.pos_at_build.copy_from_slice(&self.pos);
        self.built = true;
        self.rebuilds += 1;
    }

    /// Evaluates the penalty at `x`; writes the gradient into `grad` if given.
    pub fn eval(&mut self, x: &[f64], grad: Option<&mut [f64]>) -> EvalStats {
        self.update_positions(x);
        if self.needs_rebuild() {
            self.rebuild(x);
        }
        let n = self.n_mov;
        let dt2 = self.dt * self.dt;
        let tol2 = self.tol * self.tol;
        let pos = &self.pos;
        let arms = &self.arms;
        let starts = &self.atom_start;
        let fixed = &self.fixed;
        let radius = &self.radius;
        let dt = self.dt;
        // Per chunk: stats and sparse per-molecule contributions (force, torque).
        type Contrib = (u32, [f64; 3], [f64; 3], f64);
        let parts: Vec<(EvalStats, Vec<Contrib>)> = self
            .pairs
            .par_chunks(CHUNK)
            .map(|chunk| {
                let mut st = EvalStats {
                    f: 0.0,
                    violations: 0,
                    min_d2: dt2,
                };
                let mut contrib: Vec<Contrib> = Vec::new();
                for p in chunk {
                    let (i, j) = (p.i as usize, p.j as usize);
                    let mut fi = [0.0; 3];
                    let mut ti = [0.0; 3];
                    let mut fj = [0.0; 3];
                    let mut tj = [0.0; 3];
                    let mut pen = 0.0;
                    if j < n {
                        // reference point of j seen from i's image
                        let cj = {
                            let a = starts[j];
                            let q = pos[a];
                            let r = arms[a];
                            [
                                q[0] - r[0] + p.shift[0],
                                q[1] - r[1] + p.shift[1],
                                q[2] - r[2] + p.shift[2],
                            ]
                        };
                        let reach = radius[j] + dt;
                        let reach2 = reach * reach;
                        for a in starts[i]..starts[i + 1] {
                            let xa = pos[a];
                            let e = [cj[0] - xa[0], cj[1] - xa[1], cj[2] - xa[2]];
                            if e[0] * e[0] + e[1] * e[1] + e[2] * e[2] >= reach2 {
                                continue;
                            }
                            for b in starts[j]..starts[j + 1] {
                                let xb = pos[b];
                                let d = [
                                    xb[0] + p.shift[0] - xa[0],
                                    xb[1] + p.shift[1] - xa[1],
                                    xb[2] + p.shift[2] - xa[2],
                                ];
                                if let Some(g) = pair_term(d, dt2, tol2, &mut pen, &mut st) {
                                    for k in 0..3 {
                                        fi[k] += g[k];
                                        fj[k] -= g[k];
                                    }
                                    let ta = cross(&arms[a], &g);
                                    let tb = cross(&arms[b], &g);
                                    for k in 0..3 {
                                        ti[k] += ta[k];
                                        tj[k] -= tb[k];
                                    }
                                }
                            }
                        }
                    } else {
                        let xb = fixed[j - n];
                        for a in starts[i]..starts[i + 1] {
                            let xa = pos[a];
                            let d = [
                                xb[0] + p.shift[0] - xa[0],
                                xb[1] + p.shift[1] - xa[1],
                                xb[2] + p.shift[2] - xa[2],
                            ];
                            if let Some(g) = pair_term(d, dt2, tol2, &mut pen, &mut st) {
                                let ta = cross(&arms[a], &g);
                                for k in 0..3 {
                                    fi[k] += g[k];
                                    ti[k] += ta[k];
                                }
                            }
                        }
                    }
                    if pen > 0.0 {
                        st.f += pen;
                        contrib.push((p.i, fi, ti, pen));
                        if j < n {
                            contrib.push((p.j, fj, tj, pen));
                        } else {
                            contrib.push((u32::MAX, fj, tj, pen));
                        }
                    }
                }
                (st, contrib)
            })
            .collect();
        let mut total = EvalStats {
            f: 0.0,
            violations: 0,
            min_d2: dt2,
        };
        for m in self.mol_penalty.iter_mut() {
            *m = 0.0;
        }
        let mut force = vec![[0.0f64; 6]; if grad.is_some() { n } else { 0 }];
        for (st, contrib) in &parts {
            total.f += st.f;
            total.violations += st.violations;
            total.min_d2 = total.min_d2.min(st.min_d2);
            for &(m, fo, to, pen) in contrib {
                if m == u32::MAX {
                    continue;
                }
                let m = m as usize;
                self.mol_penalty[m] += 0.5 * pen;
                if let Some(fm) = force.get_mut(m) {
                    fm[0] += fo[0];
                    fm[1] += fo[1];
                    fm[2] += fo[2];
                    fm[3] += to[0];
                    fm[4] += to[1];
                    fm[5] += to[2];
                }
            }
        }
        if let Some(g) = grad {
            g.par_chunks_mut(6)
                .with_min_len(256)
                .zip(force.par_iter())
                .enumerate()
                .for_each(|(m, (gm, fm))| {
                    let axes = euler_axes(x[6 * m + 4], x[6 * m + 5]);
                    gm[0] = fm[0];
                    gm[1] = fm[1];
                    gm[2] = fm[2];
                    let t = [fm[3], fm[4], fm[5]];
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
            vec![tpl.clone(), tpl.clone(), tpl],
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
        let f0 = sys.eval(&x, Some(&mut g)).f;
        assert!(f0 > 0.0);
        let h = 1e-6;
        for v in 0..x.len() {
            let mut xp = x.clone();
            xp[v] += h;
            let mut xm = x.clone();
            xm[v] -= h;
            let fd = (sys.eval(&xp, None).f - sys.eval(&xm, None).f) / (2.0 * h);
            assert!(
                (fd - g[v]).abs() < 1e-4 * (1.0 + g[v].abs()),
                "var {v}: fd {fd} vs {}",
                g[v]
            );
        }
    }
}
