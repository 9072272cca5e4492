//! Feasibility estimate: the packing fraction of the "tolerance bodies".
//!
//! Every intermolecular pair being at least `t` apart is exactly the
//! condition that the unions of radius-`t/2` spheres around each molecule's
//! atoms (its t-body) do not overlap. So
//! `eta = (Σ_species count · V_tbody + V_fixed_tbody) / V_box`
//! must stay below the densest packing of those bodies: random close packing
//! of spheres is ~0.64, and optimisers slow down sharply above ~0.5
//! (water at 1 g/cm³: eta 0.33 at 2.0 Å, 0.57 at 2.5 Å, 0.76 at 2.8 Å).
//!
//! Volumes are integrated on a bitmap grid (cell centres inside any sphere).

use super::cells::wrap;

/// Above this packing fraction a warning is issued.
pub const WARN_FRACTION: f64 = 0.5;
/// Above this packing fraction the problem is refused.
pub const MAX_FRACTION: f64 = 0.64;
/// Cell budget of the periodic grid used for fixed atoms.
const MAX_GRID_CELLS: f64 = 8.0e6;

/// Volume (Å³) of the union of radius-`r` spheres at `positions` (no periodicity),
/// on a grid of spacing `r / 12`.
pub fn union_volume(positions: &[[f64; 3]], r: f64) -> f64 {
    if positions.is_empty() || r <= 0.0 {
        return 0.0;
    }
    let h = r / 12.0;
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in positions {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k] - r - h);
            hi[k] = hi[k].max(p[k] + r + h);
        }
    }
    let n: Vec<usize> = (0..3)
        .map(|k| (((hi[k] - lo[k]) / h).ceil() as usize).max(1))
        .collect();
    let total = n[0].saturating_mul(n[1]).saturating_mul(n[2]);
    if total > 50_000_000 {
        // Too spread out for one grid: fall back to the sum of sphere volumes (upper bound).
        return positions.len() as f64 * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
    }
    let mut occ = vec![false; total];
    mark_aniso(
        positions,
        r,
        lo,
        [h; 3],
        [n[0], n[1], n[2]],
        false,
        &mut occ,
    );
    occ.iter().filter(|&&b| b).count() as f64 * h * h * h
}

/// Marks grid cells whose centre is within `r` of a point. With `periodic`,
/// indices wrap (the grid then spans the box exactly).
fn mark_aniso(
    points: &[[f64; 3]],
    r: f64,
    lo: [f64; 3],
    h: [f64; 3],
    n: [usize; 3],
    periodic: bool,
    occ: &mut [bool],
) {
    let r2 = r * r;
    for p in points {
        let mut lo_i = [0i64; 3];
        let mut hi_i = [0i64; 3];
        for k in 0..3 {
            lo_i[k] = ((p[k] - r - lo[k]) / h[k]).floor() as i64 - 1;
            hi_i[k] = ((p[k] + r - lo[k]) / h[k]).ceil() as i64 + 1;
        }
        for i in lo_i[0]..=hi_i[0] {
            let x = lo[0] + (i as f64 + 0.5) * h[0] - p[0];
            let ii = if periodic {
                i.rem_euclid(n[0] as i64)
            } else {
                i
            };
            if ii < 0 || ii >= n[0] as i64 || x * x > r2 {
                continue;
            }
            for j in lo_i[1]..=hi_i[1] {
                let y = lo[1] + (j as f64 + 0.5) * h[1] - p[1];
                let jj = if periodic {
                    j.rem_euclid(n[1] as i64)
                } else {
                    j
                };
                if jj < 0 || jj >= n[1] as i64 || x * x + y * y > r2 {
                    continue;
                }
                for k in lo_i[2]..=hi_i[2] {
                    let z = lo[2] + (k as f64 + 0.5) * h[2] - p[2];
                    let kk = if periodic {
                        k.rem_euclid(n[2] as i64)
                    } else {
                        k
                    };
                    if kk < 0 || kk >= n[2] as i64 || x * x + y * y + z * z > r2 {
                        continue;
                    }
                    occ[(ii as usize * n[1] + jj as usize) * n[2] + kk as usize] = true;
                }
            }
        }
    }
}

/// Volume (Å³) of the union of radius-`r` spheres around periodic points in the box.
pub fn periodic_union_volume(points: &[[f64; 3]], r: f64, box_lengths: [f64; 3]) -> f64 {
    if points.is_empty() || r <= 0.0 {
        return 0.0;
    }
    let v = box_lengths[0] * box_lengths[1] * box_lengths[2];
    let h0 = (r / 6.0).max((v / MAX_GRID_CELLS).cbrt());
    let n = [
        ((box_lengths[0] / h0).ceil() as usize).max(1),
        ((box_lengths[1] / h0).ceil() as usize).max(1),
        ((box_lengths[2] / h0).ceil() as usize).max(1),
    ];
    let h = [
        box_lengths[0] / n[0] as f64,
        box_lengths[1] / n[1] as f64,
        box_lengths[2] / n[2] as f64,
    ];
    let wrapped: Vec<[f64; 3]> = points
        .iter()
        .map(|p| {
            [
                wrap(p[0], box_lengths[0]),
                wrap(p[1], box_lengths[1]),
                wrap(p[2], box_lengths[2]),
            ]
        })
        .collect();
    let mut occ = vec![false; n[0] * n[1] * n[2]];
    mark_aniso(&wrapped, r, [0.0; 3], h, n, true, &mut occ);
    occ.iter().filter(|&&b| b).count() as f64 * h[0] * h[1] * h[2]
}

/// Packing fraction of the tolerance bodies.
///
/// `templates`: `(atom positions in Å, copy count)` per species; `fixed`: fixed
/// atoms (Å); `box_lengths` in Å; `tolerance` in Å.
pub fn packing_fraction(
    templates: &[(&[[f64; 3]], usize)],
    fixed: &[[f64; 3]],
    box_lengths: [f64; 3],
    tolerance: f64,
) -> f64 {
    let r = 0.5 * tolerance;
    let mut v = 0.0;
    for (pos, count) in templates {
        v += *count as f64 * union_volume(pos, r);
    }
    v += periodic_union_volume(fixed, r, box_lengths);
    v / (box_lengths[0] * box_lengths[1] * box_lengths[2])
}

/// Largest tolerance (Å, within about 0.03 Å, at least 0.5 Å) whose packing
/// fraction stays at or below `limit`, searched below `upper` by bisection
/// (8 evaluations); used in refusal messages.
pub fn tolerance_for_fraction(
    templates: &[(&[[f64; 3]], usize)],
    fixed: &[[f64; 3]],
    box_lengths: [f64; 3],
    limit: f64,
    upper: f64,
) -> f64 {
    let (mut lo, mut hi) = (0.5, upper);
    if packing_fraction(templates, fixed, box_lengths, hi) <= limit {
        return hi;
    }
    for _ in 0..7 {
        let mid = 0.5 * (lo + hi);
        if packing_fraction(templates, fixed, box_lengths, mid) <= limit {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sphere_volume_is_accurate() {
        let v = union_volume(&[[0.3, -0.2, 1.0]], 1.0);
        let exact = 4.0 / 3.0 * std::f64::consts::PI;
        assert!((v - exact).abs() / exact < 0.01, "{v}");
        // two coincident spheres: same volume
        let v2 = union_volume(&[[0.0; 3], [0.0; 3]], 1.0);
        assert!((v2 - exact).abs() / exact < 0.01);
        // periodic: a sphere across the boundary keeps its volume
        let vp = periodic_union_volume(&[[0.1, 9.9, 5.0]], 1.0, [10.0, 10.0, 10.0]);
        assert!((vp - exact).abs() / exact < 0.02, "{vp}");
    }
}
