//! Rigid-body geometry: 3×3 rotations, the Euler parametrisation used by the
//! optimiser and its derivative axes, uniform random rotations and the
//! deterministic random source.
//!
//! Hand-written (no linear-algebra crate): only fixed 3×3 operations are
//! needed and they must compile unchanged for wasm32 with no extra dependency.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Row-major 3×3 matrix.
pub type Mat3 = [[f64; 3]; 3];

/// Identity matrix.
pub const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// `m · v`.
#[inline]
pub fn mat_vec(m: &Mat3, v: &[f64; 3]) -> [f64; 3] {
    [
        m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
        m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
        m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2],
    ]
}

/// `a · b`.
pub fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut r = [[0.0; 3]; 3];
    for (i, row) in r.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            *x = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    r
}

/// `a × b`.
#[inline]
pub fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// `a · b`.
#[inline]
pub fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Rotation `Rz(g) · Ry(b) · Rx(a)` (radians). Regular near `(0, 0, 0)`,
/// which is where the optimiser keeps it (orientations are re-based between rounds).
pub fn euler(a: f64, b: f64, g: f64) -> Mat3 {
    let (sa, ca) = a.sin_cos();
    let (sb, cb) = b.sin_cos();
    let (sg, cg) = g.sin_cos();
    [
        [cg * cb, cg * sb * sa - sg * ca, cg * sb * ca + sg * sa],
        [sg * cb, sg * sb * sa + cg * ca, sg * sb * ca - cg * sa],
        [-sb, cb * sa, cb * ca],
    ]
}

/// World-frame rotation axes `w_a, w_b, w_g` such that
/// `∂(R v)/∂θ_k = w_k × (R v)` for `R = euler(a, b, g)`. The gradient of an
/// objective with respect to the angle `θ_k` is then `w_k · τ`, with `τ` the
/// torque-like sum `Σ (x − c) × ∂f/∂x`.
pub fn euler_axes(b: f64, g: f64) -> [[f64; 3]; 3] {
    let (sb, cb) = b.sin_cos();
    let (sg, cg) = g.sin_cos();
    [[cg * cb, sg * cb, -sb], [-sg, cg, 0.0], [0.0, 0.0, 1.0]]
}

/// Deterministic random source (ChaCha8 seeded from a `u64`).
pub struct Rng(ChaCha8Rng);

impl Rng {
    /// Seeds the generator; `stream` separates independent uses of one seed.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut r = ChaCha8Rng::seed_from_u64(seed);
        r.set_stream(stream);
        Rng(r)
    }
    /// An independent generator for item `item` of one use (a molecule of the random start):
    /// this generator's stream from word `item · 2³²` on, so items draw in any order, on any
    /// thread, with the same numbers.
    pub fn item(&self, item: u64) -> Self {
        let mut r = self.0.clone();
        r.set_word_pos(u128::from(item) << 32);
        Rng(r)
    }
    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform integer in `0..n` (`n > 0`), by rejection (no modulo bias).
    pub fn below(&mut self, n: usize) -> usize {
        let n = n.max(1) as u64;
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let v = self.0.next_u64();
            if v < zone {
                return (v % n) as usize;
            }
        }
    }
    /// Uniformly distributed rotation (Shoemake's unit quaternion method).
    pub fn rotation(&mut self) -> Mat3 {
        let (u1, u2, u3) = (self.uniform(), self.uniform(), self.uniform());
        let tau = std::f64::consts::TAU;
        let (s1, s2) = ((1.0 - u1).sqrt(), u1.sqrt());
        let (w, x, y, z) = (
            s1 * (tau * u2).sin(),
            s1 * (tau * u2).cos(),
            s2 * (tau * u3).sin(),
            s2 * (tau * u3).cos(),
        );
        quat_to_mat(w, x, y, z)
    }
}

/// Rotation matrix of the unit quaternion `w + xi + yj + zk`.
pub fn quat_to_mat(w: f64, x: f64, y: f64, z: f64) -> Mat3 {
    scaled_quat_to_mat(w, x, y, z, 2.0)
}

/// Rotation matrix of the quaternion `w + xi + yj + zk` given `s = 2 / |q|²` (2 for a unit
/// quaternion): the homogeneous form, an exact rotation for any non-zero quaternion. With `s`
/// = 2 every product is the unit form's, scaled by 2 exactly.
#[inline]
fn scaled_quat_to_mat(w: f64, x: f64, y: f64, z: f64, s: f64) -> Mat3 {
    let (xs, ys, zs) = (x * s, y * s, z * s);
    let (wx, wy, wz) = (w * xs, w * ys, w * zs);
    let (xx, xy, xz) = (x * xs, x * ys, x * zs);
    let (yy, yz, zz) = (y * ys, y * zs, z * zs);
    [
        [1.0 - (yy + zz), xy - wz, xz + wy],
        [xy + wz, 1.0 - (xx + zz), yz - wx],
        [xz - wy, yz + wx, 1.0 - (xx + yy)],
    ]
}

/// A molecule's base rotation as the optimiser keeps it: a unit quaternion in f32, 16 bytes
/// against a [`Mat3`]'s 72 (issue 12: ~19 B per water atom at the optimiser's peak). Read back
/// with [`Orientation::to_mat`] as an exact rotation of whatever is stored, so molecules stay
/// rigid; f32 costs only an orientation off by ~1e-7 rad (~1e-6 Å at
/// 10 Å from the centre), which the optimiser and the result both read the same way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Orientation([f32; 4]);

impl Orientation {
    /// No rotation.
    pub const IDENTITY: Orientation = Orientation([1.0, 0.0, 0.0, 0.0]);

    /// The rotation `m` (orthonormal), from the largest of its quaternion's components
    /// (Shepperd's method: no division by a small number).
    pub fn from_mat(m: &Mat3) -> Orientation {
        let trace = m[0][0] + m[1][1] + m[2][2];
        let (w, x, y, z) = if trace > 0.0 {
            let s = 2.0 * (1.0 + trace).sqrt();
            (
                s / 4.0,
                (m[2][1] - m[1][2]) / s,
                (m[0][2] - m[2][0]) / s,
                (m[1][0] - m[0][1]) / s,
            )
        } else if m[0][0] > m[1][1] && m[0][0] > m[2][2] {
            let s = 2.0 * (1.0 + m[0][0] - m[1][1] - m[2][2]).sqrt();
            (
                (m[2][1] - m[1][2]) / s,
                s / 4.0,
                (m[0][1] + m[1][0]) / s,
                (m[0][2] + m[2][0]) / s,
            )
        } else if m[1][1] > m[2][2] {
            let s = 2.0 * (1.0 + m[1][1] - m[0][0] - m[2][2]).sqrt();
            (
                (m[0][2] - m[2][0]) / s,
                (m[0][1] + m[1][0]) / s,
                s / 4.0,
                (m[1][2] + m[2][1]) / s,
            )
        } else {
            let s = 2.0 * (1.0 + m[2][2] - m[0][0] - m[1][1]).sqrt();
            (
                (m[1][0] - m[0][1]) / s,
                (m[0][2] + m[2][0]) / s,
                (m[1][2] + m[2][1]) / s,
                s / 4.0,
            )
        };
        Orientation([w as f32, x as f32, y as f32, z as f32])
    }

    /// The rotation matrix of the stored quaternion, taken as it is (the homogeneous form,
    /// `2 / |q|²` in place of 2: an exact rotation for any non-zero quaternion, with no square
    /// root; this runs for every molecule at every evaluation).
    #[inline]
    pub fn to_mat(self) -> Mat3 {
        let [w, x, y, z] = self.0.map(f64::from);
        scaled_quat_to_mat(w, x, y, z, 2.0 / (w * w + x * x + y * y + z * z))
    }
}

/// Re-orthonormalises a rotation matrix (Gram–Schmidt on the rows) to stop
/// rounding drift when rotations are composed many times.
pub fn orthonormalise(m: &Mat3) -> Mat3 {
    let norm = |v: [f64; 3]| {
        let n = dot(&v, &v).sqrt();
        [v[0] / n, v[1] / n, v[2] / n]
    };
    let r0 = norm(m[0]);
    let d = dot(&r0, &m[1]);
    let r1 = norm([
        m[1][0] - d * r0[0],
        m[1][1] - d * r0[1],
        m[1][2] - d * r0[2],
    ]);
    let r2 = cross(&r0, &r1);
    [r0, r1, r2]
}

/// Centres a template: returns atom offsets from the unweighted mean and the
/// radius (largest offset length, Å).
pub fn centred(positions: &[[f64; 3]]) -> (Vec<[f64; 3]>, f64) {
    let n = positions.len().max(1) as f64;
    let mut c = [0.0; 3];
    for p in positions {
        for k in 0..3 {
            c[k] += p[k];
        }
    }
    let c = [c[0] / n, c[1] / n, c[2] / n];
    let offs: Vec<[f64; 3]> = positions
        .iter()
        .map(|p| [p[0] - c[0], p[1] - c[1], p[2] - c[2]])
        .collect();
    let r = offs.iter().map(|o| dot(o, o).sqrt()).fold(0.0, f64::max);
    (offs, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn euler_axes_match_finite_differences() {
        let (a, b, g) = (0.3, -0.4, 1.1);
        let v = [0.7, -1.3, 0.4];
        let axes = euler_axes(b, g);
        let rv = mat_vec(&euler(a, b, g), &v);
        let h = 1e-6;
        for k in 0..3 {
            let mut p = [a, b, g];
            p[k] += h;
            let rp = mat_vec(&euler(p[0], p[1], p[2]), &v);
            let fd = [
                (rp[0] - rv[0]) / h,
                (rp[1] - rv[1]) / h,
                (rp[2] - rv[2]) / h,
            ];
            let an = cross(&axes[k], &rv);
            for d in 0..3 {
                assert!((fd[d] - an[d]).abs() < 1e-5, "axis {k}: {fd:?} vs {an:?}");
            }
        }
    }

    #[test]
    fn orientation_keeps_a_rotation_to_f32_precision() {
        let mut r = Rng::new(11, 0);
        // Random rotations, and ones whose quaternion's largest component is each of w, x, y, z
        // (each branch of from_mat), the identity among them.
        let mut rotations: Vec<Mat3> = (0..200).map(|_| r.rotation()).collect();
        rotations.push(IDENTITY);
        rotations.extend([
            euler(3.1, 0.0, 0.0),
            euler(0.0, 3.1, 0.0),
            euler(0.2, 3.0, 1.4),
        ]);
        rotations.push([[-1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]]);
        rotations.push([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]]);
        rotations.push([[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]);
        for m in rotations {
            let back = Orientation::from_mat(&m).to_mat();
            for i in 0..3 {
                for j in 0..3 {
                    assert!((back[i][j] - m[i][j]).abs() < 1e-6, "{m:?} -> {back:?}");
                }
            }
            // An exact rotation: orthonormal to f64 rounding, determinant 1.
            for i in 0..3 {
                for j in 0..3 {
                    let e = if i == j { 1.0 } else { 0.0 };
                    assert!((dot(&back[i], &back[j]) - e).abs() < 1e-14);
                }
            }
            assert!((dot(&cross(&back[0], &back[1]), &back[2]) - 1.0).abs() < 1e-14);
        }
        assert_eq!(Orientation::IDENTITY.to_mat(), IDENTITY);
    }

    #[test]
    fn random_rotation_is_orthonormal() {
        let mut r = Rng::new(7, 0);
        for _ in 0..10 {
            let m = r.rotation();
            let p = mat_mul(
                &m,
                &[
                    [m[0][0], m[1][0], m[2][0]],
                    [m[0][1], m[1][1], m[2][1]],
                    [m[0][2], m[1][2], m[2][2]],
                ],
            );
            for (i, row) in p.iter().enumerate() {
                for (j, v) in row.iter().enumerate() {
                    let e = if i == j { 1.0 } else { 0.0 };
                    assert!((v - e).abs() < 1e-12);
                }
            }
        }
    }
}
