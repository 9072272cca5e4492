//! Vector helpers of the chain builder: rotations that place a unit and the torsion they set.

use megane_pack::rigid::{cross, dot, quat_to_mat, Mat3, IDENTITY};

/// `a − b`.
#[inline(always)]
pub fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// Distance (Å) between two points.
/// The 27 cells of a cubic cell list around cell `c` (itself included), x slowest.
pub fn cells_around(c: [i32; 3]) -> impl Iterator<Item = [i32; 3]> {
    (-1..=1).flat_map(move |dx| {
        (-1..=1).flat_map(move |dy| (-1..=1).map(move |dz| [c[0] + dx, c[1] + dy, c[2] + dz]))
    })
}

#[cfg(test)]
pub fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    let d = sub(a, b);
    dot(&d, &d).sqrt()
}

/// `v` scaled to unit length.
#[inline(always)]
pub fn normalised(v: [f64; 3]) -> [f64; 3] {
    let l = dot(&v, &v).sqrt();
    [v[0] / l, v[1] / l, v[2] / l]
}

/// Rotation by `angle` (radians, right-handed) about the unit vector `axis`.
pub fn axis_angle(axis: [f64; 3], angle: f64) -> Mat3 {
    let (s, c) = (0.5 * angle).sin_cos();
    quat_to_mat(c, axis[0] * s, axis[1] * s, axis[2] * s)
}

/// The smallest rotation taking unit vector `a` onto unit vector `b`.
pub fn align(a: [f64; 3], b: [f64; 3]) -> Mat3 {
    let axis = cross(&a, &b);
    let sin = dot(&axis, &axis).sqrt();
    let cos = dot(&a, &b);
    if sin < 1e-12 {
        if cos > 0.0 {
            return IDENTITY;
        }
        // Opposite: half a turn about any axis perpendicular to `a`.
        let helper = if a[0].abs() < 0.9 {
            [1.0, 0.0, 0.0]
        } else {
            [0.0, 1.0, 0.0]
        };
        return axis_angle(normalised(cross(&a, &helper)), std::f64::consts::PI);
    }
    axis_angle(
        [axis[0] / sin, axis[1] / sin, axis[2] / sin],
        sin.atan2(cos),
    )
}

/// The torsion a–b–c–d in radians (IUPAC sign: positive clockwise looking from b to c), in
/// (−π, π]. A right-handed rotation of `d` about the axis b→c by δ adds δ to it.
#[inline(always)]
pub fn dihedral(a: [f64; 3], b: [f64; 3], c: [f64; 3], d: [f64; 3]) -> f64 {
    let (b1, b2, b3) = (sub(b, a), sub(c, b), sub(d, c));
    let n1 = cross(&b1, &b2);
    let n2 = cross(&b2, &b3);
    let y = dot(&b2, &b2).sqrt() * dot(&b1, &n2);
    let x = dot(&n1, &n2);
    y.atan2(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use megane_pack::rigid::mat_vec;

    #[test]
    fn align_takes_a_onto_b_even_when_opposite() {
        for (a, b) in [
            ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
            ([0.0, 0.0, 1.0], [0.0, 0.0, -1.0]),
            ([1.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
            (normalised([1.0, 2.0, 3.0]), normalised([-3.0, 0.5, 2.0])),
        ] {
            let r = mat_vec(&align(a, b), &a);
            assert!(distance(r, b) < 1e-12, "{a:?} → {r:?} ≠ {b:?}");
        }
    }

    #[test]
    fn dihedral_sign_and_rotation() {
        let (a, b, c) = ([1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.5]);
        let d = [1.0, -0.2, 2.5];
        let before = dihedral(a, b, c, d);
        let axis = normalised(sub(c, b));
        for delta in [0.3, -1.2, 2.9] {
            let r = axis_angle(axis, delta);
            let moved = {
                let v = mat_vec(&r, &sub(d, c));
                [c[0] + v[0], c[1] + v[1], c[2] + v[2]]
            };
            let after = dihedral(a, b, c, moved);
            let diff = (after - before - delta + 3.0 * std::f64::consts::PI)
                .rem_euclid(std::f64::consts::TAU)
                - std::f64::consts::PI;
            assert!(diff.abs() < 1e-12, "{delta}: {before} → {after}");
        }
        // Trans is ±π, cis 0.
        assert!(
            (dihedral([1.0, 0.0, 0.0], b, c, [-1.0, 0.0, 1.5]).abs() - std::f64::consts::PI).abs()
                < 1e-12
        );
        assert!(dihedral([1.0, 0.0, 0.0], b, c, [1.0, 0.0, 1.5]).abs() < 1e-12);
    }
}
