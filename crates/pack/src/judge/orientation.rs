//! Orientational order of one species: ⟨P2(cos θ)⟩ and ⟨P4(cos θ)⟩ of each molecular axis against
//! the box axes x, y and z, over the copies (issue 32: |⟨P2⟩|, |⟨P4⟩| ≤ 0.1 for uniform orientations
//! at ≥ 500 copies; their spread for uniform orientations is √(1/5N) and √(1/9N)).
//!
//! The molecular axes are the principal axes of the template's gyration tensor (every atom weighing
//! the same: no masses needed), carried to each copy by the rotation that best superposes the
//! centred template on the centred copy (Horn's quaternion method). Carried, not recomputed per
//! copy: where two principal moments are equal (benzene's in-plane axes) a per-copy eigen-solver
//! would pick axes tied to the box and fake an order. A linear template has only its long axis; a
//! single atom none.

use crate::rigid::{mat_vec, quat_to_mat, Mat3};

/// ⟨P2⟩ and ⟨P4⟩ per molecular axis (rows, longest spread first) and box axis (columns x, y, z).
#[derive(Clone, Debug, PartialEq)]
pub struct Order {
    /// `p2[axis][box axis]`.
    pub p2: Vec<[f64; 3]>,
    /// `p4[axis][box axis]`.
    pub p4: Vec<[f64; 3]>,
    /// Copies averaged over.
    pub copies: usize,
}

impl Order {
    /// The largest |⟨P2⟩| or |⟨P4⟩| over every axis pair (0 with no axis).
    pub fn worst(&self) -> f64 {
        self.p2
            .iter()
            .chain(&self.p4)
            .flatten()
            .fold(0.0f64, |m, v| m.max(v.abs()))
    }
}

/// Eigenvalues (descending) and unit eigenvectors (`vectors[i]` for `values[i]`) of a symmetric
/// `N × N` matrix, by cyclic Jacobi rotations (N ≤ 4 here: exact to rounding in a few sweeps).
fn symmetric_eigen<const N: usize>(mut a: [[f64; N]; N]) -> ([f64; N], [[f64; N]; N]) {
    let mut v = [[0.0; N]; N];
    for (i, row) in v.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    for _ in 0..64 {
        let off: f64 = (0..N)
            .flat_map(|i| (0..N).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i][j] * a[i][j])
            .sum();
        if off < 1e-30 {
            break;
        }
        for p in 0..N {
            for q in p + 1..N {
                if a[p][q].abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for row in a.iter_mut() {
                    let (akp, akq) = (row[p], row[q]);
                    row[p] = c * akp - s * akq;
                    row[q] = s * akp + c * akq;
                }
                let (ap, aq) = (a[p], a[q]);
                for k in 0..N {
                    a[p][k] = c * ap[k] - s * aq[k];
                    a[q][k] = s * ap[k] + c * aq[k];
                }
                for row in v.iter_mut() {
                    let (vkp, vkq) = (row[p], row[q]);
                    row[p] = c * vkp - s * vkq;
                    row[q] = s * vkp + c * vkq;
                }
            }
        }
    }
    let mut order: [usize; N] = std::array::from_fn(|i| i);
    order.sort_by(|&i, &j| a[j][j].total_cmp(&a[i][i]));
    let values = order.map(|i| a[i][i]);
    let vectors = order.map(|i| std::array::from_fn(|k| v[k][i]));
    (values, vectors)
}

/// Offsets of `points` from their unweighted mean.
fn centred(points: &[[f64; 3]]) -> Vec<[f64; 3]> {
    let n = points.len().max(1) as f64;
    let mut c = [0.0; 3];
    for p in points {
        for k in 0..3 {
            c[k] += p[k] / n;
        }
    }
    points
        .iter()
        .map(|p| [0, 1, 2].map(|k| p[k] - c[k]))
        .collect()
}

/// The template's molecular axes: principal axes of its gyration tensor, longest spread first; only
/// the long axis for a linear template (the two smaller moments below 1e-6 Å²), none for one atom.
pub fn molecular_axes(template: &[[f64; 3]]) -> Vec<[f64; 3]> {
    let c = centred(template);
    let mut g = [[0.0; 3]; 3];
    for p in &c {
        for i in 0..3 {
            for j in 0..3 {
                g[i][j] += p[i] * p[j];
            }
        }
    }
    let (values, vectors) = symmetric_eigen(g);
    const FLAT: f64 = 1e-6;
    if values[0] <= FLAT {
        Vec::new()
    } else if values[1] <= FLAT {
        vec![vectors[0]]
    } else {
        vectors.to_vec()
    }
}

/// The rotation taking the centred `template` onto the centred `copy` (same atom order), best in
/// the least-squares sense (Horn 1987: the top eigenvector of a 4 × 4 matrix is its quaternion).
pub fn superposing_rotation(template: &[[f64; 3]], copy: &[[f64; 3]]) -> Mat3 {
    let (a, b) = (centred(template), centred(copy));
    let mut s = [[0.0; 3]; 3];
    for (p, q) in a.iter().zip(&b) {
        for i in 0..3 {
            for j in 0..3 {
                s[i][j] += p[i] * q[j];
            }
        }
    }
    let [[sxx, sxy, sxz], [syx, syy, syz], [szx, szy, szz]] = s;
    let n = [
        [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
        [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
        [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
        [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
    ];
    let (_, vectors) = symmetric_eigen(n);
    let [w, x, y, z] = vectors[0];
    quat_to_mat(w, x, y, z)
}

/// ⟨P2⟩ and ⟨P4⟩ of the template's axes carried to each copy (`copies`: each copy's atoms in the
/// template's order, unwrapped). `None` for a template with no axis or no copy.
pub fn order<'a>(
    template: &[[f64; 3]],
    copies: impl IntoIterator<Item = &'a [[f64; 3]]>,
) -> Option<Order> {
    let axes = molecular_axes(template);
    if axes.is_empty() {
        return None;
    }
    let mut p2 = vec![[0.0; 3]; axes.len()];
    let mut p4 = vec![[0.0; 3]; axes.len()];
    let mut count = 0usize;
    for copy in copies {
        let r = superposing_rotation(template, copy);
        for (i, axis) in axes.iter().enumerate() {
            let e = mat_vec(&r, axis);
            for k in 0..3 {
                let c2 = e[k] * e[k];
                p2[i][k] += 0.5 * (3.0 * c2 - 1.0);
                p4[i][k] += (35.0 * c2 * c2 - 30.0 * c2 + 3.0) / 8.0;
            }
        }
        count += 1;
    }
    if count == 0 {
        return None;
    }
    let mean = |v: Vec<[f64; 3]>| -> Vec<[f64; 3]> {
        v.into_iter().map(|r| r.map(|x| x / count as f64)).collect()
    };
    Some(Order {
        p2: mean(p2),
        p4: mean(p4),
        copies: count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rigid::Rng;

    fn water() -> Vec<[f64; 3]> {
        vec![[0.0, 0.0, 0.0], [0.9572, 0.0, 0.0], [-0.24, 0.927, 0.0]]
    }

    #[test]
    fn recovers_the_rotation_of_a_copy() {
        let mut rng = Rng::new(5, 0);
        let t = water();
        for _ in 0..20 {
            let r = rng.rotation();
            let copy: Vec<[f64; 3]> = t
                .iter()
                .map(|p| {
                    let q = mat_vec(&r, p);
                    [q[0] + 7.0, q[1] - 3.0, q[2] + 1.5]
                })
                .collect();
            let back = superposing_rotation(&t, &copy);
            for i in 0..3 {
                for j in 0..3 {
                    assert!((back[i][j] - r[i][j]).abs() < 1e-9, "{back:?} vs {r:?}");
                }
            }
        }
    }

    #[test]
    fn uniform_orientations_have_no_order_and_aligned_ones_do() {
        let mut rng = Rng::new(9, 0);
        let t = water();
        let copies: Vec<Vec<[f64; 3]>> = (0..2000)
            .map(|_| {
                let r = rng.rotation();
                t.iter().map(|p| mat_vec(&r, p)).collect()
            })
            .collect();
        let o = order(&t, copies.iter().map(|c| c.as_slice())).unwrap();
        assert_eq!(o.p2.len(), 3);
        assert!(o.worst() < 0.05, "{o:?}");
        // Every copy as the template: P2 = P4 = 1 on the axis that lies along a box axis.
        let aligned: Vec<Vec<[f64; 3]>> = (0..10).map(|_| t.clone()).collect();
        let o = order(&t, aligned.iter().map(|c| c.as_slice())).unwrap();
        assert!(o.worst() > 0.99, "{o:?}");
        // A linear molecule has one axis; an atom none.
        let line = [[0.0, 0.0, 0.0], [1.1, 0.0, 0.0], [2.2, 0.0, 0.0]];
        assert_eq!(molecular_axes(&line).len(), 1);
        assert!(order(&[[1.0, 2.0, 3.0]], [&[[0.0; 3]][..]]).is_none());
    }
}
