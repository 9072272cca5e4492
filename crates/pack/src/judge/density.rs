//! Density: of the whole box, or of the packed molecules in the free volume (the box less the
//! union of the fixed atoms' van der Waals spheres, as a solvate is sized).

/// g/cm³ of `mass` g/mol of molecules in `volume` Å³ (Avogadro's number × 10⁻²⁴ cm³/Å³ = 0.602 214 076).
pub fn grams_per_cm3(mass: f64, volume: f64) -> f64 {
    mass / (volume * 0.602_214_076)
}

/// Å³ of the union of spheres (`centres` Å, `radii` Å) in an orthorhombic periodic box of
/// `box_lengths` Å, counted on a grid of about `spacing` Å (cell centres inside any sphere; coarser
/// where the box would need more than 2²⁴ cells).
pub fn sphere_union_volume(
    centres: &[[f64; 3]],
    radii: &[f64],
    box_lengths: [f64; 3],
    spacing: f64,
) -> f64 {
    let volume = box_lengths[0] * box_lengths[1] * box_lengths[2];
    let spacing = spacing.max((volume / (1u64 << 24) as f64).cbrt());
    let n = box_lengths.map(|l| ((l / spacing).floor() as usize).max(1));
    let h = [0, 1, 2].map(|k| box_lengths[k] / n[k] as f64);
    let mut occupied = vec![0u64; (n[0] * n[1] * n[2]).div_ceil(64)];
    for (c, &r) in centres.iter().zip(radii) {
        let lo = [0, 1, 2].map(|k| ((c[k] - r) / h[k] - 0.5).ceil() as i64);
        let hi = [0, 1, 2].map(|k| ((c[k] + r) / h[k] - 0.5).floor() as i64);
        for i in lo[0]..=hi[0] {
            let dx = (i as f64 + 0.5) * h[0] - c[0];
            for j in lo[1]..=hi[1] {
                let dy = (j as f64 + 0.5) * h[1] - c[1];
                for k in lo[2]..=hi[2] {
                    let dz = (k as f64 + 0.5) * h[2] - c[2];
                    if dx * dx + dy * dy + dz * dz <= r * r {
                        let w = [i, j, k];
                        let w = [0, 1, 2].map(|a| w[a].rem_euclid(n[a] as i64) as usize);
                        let cell = (w[0] * n[1] + w[1]) * n[2] + w[2];
                        occupied[cell / 64] |= 1 << (cell % 64);
                    }
                }
            }
        }
    }
    let cells: u32 = occupied.iter().map(|w| w.count_ones()).sum();
    volume * cells as f64 / (n[0] * n[1] * n[2]) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sphere_across_the_boundary_and_water_density() {
        let r = 1.7;
        let exact = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        for c in [[10.0, 10.0, 10.0], [0.1, 19.9, 0.0]] {
            let v = sphere_union_volume(&[c], &[r], [20.0; 3], 0.1);
            assert!((v - exact).abs() < 0.01 * exact, "{v} vs {exact}");
        }
        // Two coincident spheres count once.
        let v = sphere_union_volume(&[[5.0; 3], [5.0; 3]], &[r, r], [20.0; 3], 0.1);
        assert!((v - exact).abs() < 0.01 * exact);
        // 1000 water (18.015 g/mol) in a 31.0428 Å cube: 1.000 g/cm³.
        assert!((grams_per_cm3(18015.0, 31.0428f64.powi(3)) - 1.0).abs() < 1e-4);
    }
}
