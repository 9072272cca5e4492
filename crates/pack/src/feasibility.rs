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

use std::sync::Mutex;

use super::cells::wrap;

/// Above this packing fraction the problem is dense: a run that does not converge names the
/// density as the likely reason, and a converged one may mention it as information.
pub const WARN_FRACTION: f64 = 0.5;
/// Above this packing fraction the problem is refused.
pub const MAX_FRACTION: f64 = 0.64;
/// Cell budget of the periodic grid used for fixed atoms.
const MAX_GRID_CELLS: f64 = 8.0e6;

/// Volume (Å³) of the union of radius-`r` spheres at `positions` (no periodicity): on columns
/// of an `r / 12` grid in x and y, each column's chord through the union measured exactly in z
/// (sphere chords merged as intervals). Work and memory grow with the atoms, one x slab at a
/// time — a 3-D bitmap of the molecule's extent cost ~0.4 ms per species even for a water, most
/// of a tiny box's call.
pub fn union_volume(positions: &[[f64; 3]], r: f64) -> f64 {
    if positions.is_empty() || r <= 0.0 {
        return 0.0;
    }
    let h = r / 12.0;
    let r2 = r * r;
    let mut order: Vec<usize> = (0..positions.len()).collect();
    crate::sort::sort_indices(&mut order, |a, b| {
        positions[a][0].total_cmp(&positions[b][0]).then(a.cmp(&b))
    });
    let x0 = positions[order[0]][0] - r;
    let x1 = positions[order[order.len() - 1]][0] + r;
    let y0 = positions.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min) - r;
    let nx = ((x1 - x0) / h).ceil().max(1.0) as usize;
    // (column y index, z from, z to) of the sphere chords crossing one x slab.
    let mut spans: Vec<(i64, f64, f64)> = Vec::new();
    let mut first = 0;
    let mut length = 0.0;
    for i in 0..nx {
        let xc = x0 + (i as f64 + 0.5) * h;
        while first < order.len() && positions[order[first]][0] < xc - r {
            first += 1;
        }
        spans.clear();
        for &a in order[first..]
            .iter()
            .take_while(|&&a| positions[a][0] <= xc + r)
        {
            let p = positions[a];
            let dx2 = (p[0] - xc) * (p[0] - xc);
            if dx2 >= r2 {
                continue;
            }
            let ry = (r2 - dx2).sqrt();
            let j_lo = ((p[1] - ry - y0) / h - 0.5).ceil() as i64;
            let j_hi = ((p[1] + ry - y0) / h - 0.5).floor() as i64;
            for j in j_lo..=j_hi {
                let dy = y0 + (j as f64 + 0.5) * h - p[1];
                let dz2 = r2 - dx2 - dy * dy;
                if dz2 > 0.0 {
                    let dz = dz2.sqrt();
                    spans.push((j, p[2] - dz, p[2] + dz));
                }
            }
        }
        spans.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut k = 0;
        while k < spans.len() {
            let (j, mut lo, mut hi) = spans[k];
            k += 1;
            while k < spans.len() && spans[k].0 == j {
                if spans[k].1 > hi {
                    length += hi - lo;
                    (lo, hi) = (spans[k].1, spans[k].2);
                } else {
                    hi = hi.max(spans[k].2);
                }
                k += 1;
            }
            length += hi - lo;
        }
    }
    length * h * h
}

/// Templates up to this many atoms have their [`union_volume`] remembered.
const REMEMBERED_ATOMS: usize = 4096;
/// How many (template, radius) volumes are remembered (the least recently used is dropped).
const REMEMBERED: usize = 8;

/// [`union_volume`] of a species' template, remembered for the last [`REMEMBERED`] templates
/// (exact bits of the radius and the positions as the key, so the value is the one computed):
/// a tiny box is called again and again with the same molecules, and this integral was about a
/// quarter of such a call (issue 12).
pub(crate) fn template_volume(positions: &[[f64; 3]], r: f64) -> f64 {
    type Key = (u64, Vec<u64>);
    static SEEN: Mutex<Vec<(Key, f64)>> = Mutex::new(Vec::new());
    if positions.len() > REMEMBERED_ATOMS {
        return union_volume(positions, r);
    }
    let key: Key = (
        r.to_bits(),
        positions.iter().flatten().map(|x| x.to_bits()).collect(),
    );
    if let Ok(mut seen) = SEEN.lock() {
        if let Some(i) = seen.iter().position(|(k, _)| *k == key) {
            let entry = seen.remove(i);
            let v = entry.1;
            seen.push(entry);
            return v;
        }
    }
    let v = union_volume(positions, r);
    if let Ok(mut seen) = SEEN.lock() {
        if seen.len() >= REMEMBERED {
            seen.remove(0);
        }
        seen.push((key, v));
    }
    v
}

/// Marks grid cells whose centre is within `r` of a point. On an axis with
/// `periodic[k]`, indices wrap (the grid then spans the box exactly on that axis).
fn mark_aniso(
    points: &[[f64; 3]],
    r: f64,
    lo: [f64; 3],
    h: [f64; 3],
    n: [usize; 3],
    periodic: [bool; 3],
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
            let ii = if periodic[0] {
                i.rem_euclid(n[0] as i64)
            } else {
                i
            };
            if ii < 0 || ii >= n[0] as i64 || x * x > r2 {
                continue;
            }
            for j in lo_i[1]..=hi_i[1] {
                let y = lo[1] + (j as f64 + 0.5) * h[1] - p[1];
                let jj = if periodic[1] {
                    j.rem_euclid(n[1] as i64)
                } else {
                    j
                };
                if jj < 0 || jj >= n[1] as i64 || x * x + y * y > r2 {
                    continue;
                }
                for k in lo_i[2]..=hi_i[2] {
                    let z = lo[2] + (k as f64 + 0.5) * h[2] - p[2];
                    let kk = if periodic[2] {
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
///
/// The grid (spacing about `r / 6`) covers only the points' neighbourhood: on each axis the
/// box's origin is moved into the widest empty gap between the wrapped points, and when that gap
/// is wider than the spheres the grid spans just the points' extent there (not periodic); only
/// an axis the points fill wraps across the whole box. So the work and memory follow the solute,
/// not the cell (a caffeine in a 40 Å box: ~60 000 cells, not 8 million).
pub fn periodic_union_volume(points: &[[f64; 3]], r: f64, box_lengths: [f64; 3]) -> f64 {
    if points.is_empty() || r <= 0.0 {
        return 0.0;
    }
    let v = box_lengths[0] * box_lengths[1] * box_lengths[2];
    let h0 = (r / 6.0).max((v / MAX_GRID_CELLS).cbrt());
    let mut lo = [0.0; 3];
    let mut n = [1usize; 3];
    let mut h = [h0; 3];
    let mut periodic = [true; 3];
    let mut wrapped: Vec<[f64; 3]> = points
        .iter()
        .map(|p| [0, 1, 2].map(|k| wrap(p[k], box_lengths[k])))
        .collect();
    for k in 0..3 {
        let l = box_lengths[k];
        let mut xs: Vec<f64> = wrapped.iter().map(|p| p[k]).collect();
        xs.sort_by(f64::total_cmp);
        // The widest gap between consecutive wrapped coordinates, the one across the boundary included.
        let (mut gap, mut after) = (xs[0] + l - xs[xs.len() - 1], xs[0]);
        for w in xs.windows(2) {
            if w[1] - w[0] > gap {
                (gap, after) = (w[1] - w[0], w[1]);
            }
        }
        if gap > 2.0 * r + 4.0 * h0 {
            // Unwrap so the points run from `after` upwards without crossing the boundary.
            for p in &mut wrapped {
                if p[k] < after {
                    p[k] += l;
                }
            }
            let extent = (l - gap).max(0.0);
            lo[k] = after - r - h0;
            n[k] = ((extent + 2.0 * r + 2.0 * h0) / h0).ceil().max(1.0) as usize;
            periodic[k] = false;
        } else {
            n[k] = ((l / h0).ceil() as usize).max(1);
            h[k] = l / n[k] as f64;
        }
    }
    let mut occ = vec![false; n[0] * n[1] * n[2]];
    mark_aniso(&wrapped, r, lo, h, n, periodic, &mut occ);
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
        v += *count as f64 * template_volume(pos, r);
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

    #[test]
    fn remembered_template_volumes_are_the_computed_ones() {
        let water = [[0.0, 0.0, 0.0], [0.9572, 0.0, 0.0], [-0.24, 0.9266, 0.0]];
        let mut moved = water;
        moved[2][2] = 0.5;
        for r in [1.0, 1.25] {
            for _ in 0..3 {
                assert_eq!(
                    template_volume(&water, r).to_bits(),
                    union_volume(&water, r).to_bits()
                );
                assert_eq!(
                    template_volume(&moved, r).to_bits(),
                    union_volume(&moved, r).to_bits()
                );
            }
        }
        assert_ne!(union_volume(&water, 1.0), union_volume(&moved, 1.0));
        // More templates than are remembered, then the first again: still its own volume.
        for k in 0..2 * REMEMBERED {
            let shifted: Vec<[f64; 3]> = water
                .iter()
                .map(|p| [p[0], p[1], p[2] + k as f64 * 0.1])
                .collect();
            assert_eq!(
                template_volume(&shifted, 1.0).to_bits(),
                union_volume(&shifted, 1.0).to_bits()
            );
        }
        assert_eq!(
            template_volume(&water, 1.0).to_bits(),
            union_volume(&water, 1.0).to_bits()
        );
    }

    #[test]
    fn periodic_union_follows_the_points_wherever_they_sit() {
        // A compact cluster: the same volume in the middle, across a corner, and without periodicity.
        let cluster: Vec<[f64; 3]> = (0..20)
            .map(|i| {
                let t = i as f64;
                [1.3 * (t * 0.7).sin(), 1.1 * (t * 1.3).cos(), 0.4 * t - 4.0]
            })
            .collect();
        let box_lengths = [40.0, 40.0, 40.0];
        let at = |shift: [f64; 3]| -> Vec<[f64; 3]> {
            cluster
                .iter()
                .map(|p| [p[0] + shift[0], p[1] + shift[1], p[2] + shift[2]])
                .collect()
        };
        let free = union_volume(&cluster, 1.0);
        let middle = periodic_union_volume(&at([20.0; 3]), 1.0, box_lengths);
        let corner = periodic_union_volume(&at([0.0; 3]), 1.0, box_lengths);
        assert!((middle - free).abs() / free < 0.02, "{middle} vs {free}");
        assert!(
            (corner - middle).abs() / middle < 0.02,
            "{corner} vs {middle}"
        );
        // Points along the whole x axis: periodic there, and the union is a full cylinder-like rod.
        let rod: Vec<[f64; 3]> = (0..40).map(|i| [i as f64, 5.0, 5.0]).collect();
        let v = periodic_union_volume(&rod, 1.0, [40.0, 10.0, 10.0]);
        let exact_cylinder = std::f64::consts::PI * 40.0;
        assert!(v > 0.9 * exact_cylinder && v < 1.1 * exact_cylinder, "{v}");
    }
}
