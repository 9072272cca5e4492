//! Bonds perceived from distances, for structure files that list none (XYZ, GROMACS `.gro`, a PDB
//! without `CONECT`).
//!
//! The rule is Open Babel's (`ConnectTheDots`), with Cordero's covalent radii
//! ([`elements::covalent_radius`]): atoms `i` and `j` are bonded when
//! `0.4 Å < d(i, j) < r(i) + r(j) + 0.45 Å`. Elements without a tabulated radius (Z > 96) get
//! no bonds. Distances are plain Cartesian ones, not through the cell's periodic images: a bond
//! is drawn as a line between two positions, and a molecule a file splits across the cell wall
//! would otherwise be drawn right through the box.
//!
//! Neighbours are found on a grid of cubes as wide as the longest possible bond, so a box of
//! N atoms costs O(N).

use std::collections::HashMap;

use super::elements::covalent_radius;

/// Added to the sum of the two covalent radii (Å).
pub const TOLERANCE: f64 = 0.45;
/// Two atoms closer than this (Å) are not bonded (a duplicate or an overlap).
pub const MIN_DISTANCE: f64 = 0.4;

/// What [`perceive`] does, in words a page shows beside an opened file.
pub const RULE: &str = "bonds found from distances: two atoms are bonded when they are closer than the sum of their covalent radii (Cordero 2008) plus 0.45 Å, the rule Open Babel uses";

/// The bonds of atoms `elements` at `positions` (flat `[x0, y0, z0, …]`, Å), each once as
/// `[i, j]` with `i < j`, sorted.
pub fn perceive(elements: &[u8], positions: &[f64]) -> Vec<[u32; 2]> {
    let radii: Vec<Option<f64>> = elements.iter().map(|&z| covalent_radius(z)).collect();
    let Some(widest) = radii.iter().flatten().copied().reduce(f64::max) else {
        return Vec::new();
    };
    let size = 2.0 * widest + TOLERANCE;
    let cube = |i: usize| -> [i64; 3] {
        let p = &positions[3 * i..3 * i + 3];
        [0, 1, 2].map(|k| (p[k] / size).floor() as i64)
    };
    let mut grid: HashMap<[i64; 3], Vec<u32>> = HashMap::new();
    for (i, r) in radii.iter().enumerate() {
        if r.is_some() {
            grid.entry(cube(i)).or_default().push(i as u32);
        }
    }
    let mut bonds = Vec::new();
    for (i, ri) in radii.iter().enumerate() {
        let Some(ri) = ri else { continue };
        let c = cube(i);
        let pi = &positions[3 * i..3 * i + 3];
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    let key = [
                        c[0].saturating_add(dx),
                        c[1].saturating_add(dy),
                        c[2].saturating_add(dz),
                    ];
                    let Some(near) = grid.get(&key) else {
                        continue;
                    };
                    for &j in near {
                        let j = j as usize;
                        if j <= i {
                            continue;
                        }
                        let Some(rj) = radii[j] else { continue };
                        let pj = &positions[3 * j..3 * j + 3];
                        let d2: f64 = (0..3).map(|k| (pi[k] - pj[k]).powi(2)).sum();
                        let limit = ri + rj + TOLERANCE;
                        if d2 > MIN_DISTANCE * MIN_DISTANCE && d2 < limit * limit {
                            bonds.push([i as u32, j as u32]);
                        }
                    }
                }
            }
        }
    }
    bonds.sort_unstable();
    bonds
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Water: O–H 0.957 Å bonded, H···H 1.51 Å not (0.31 + 0.31 + 0.45 = 1.07 Å).
    #[test]
    fn water_has_two_bonds() {
        let positions = [
            0.0, 0.0, 0.1173, 0.0, 0.7572, -0.4692, 0.0, -0.7572, -0.4692,
        ];
        assert_eq!(perceive(&[8, 1, 1], &positions), vec![[0, 1], [0, 2]]);
    }

    #[test]
    fn far_and_overlapping_atoms_are_not_bonded() {
        // C–C at 2.1 Å (> 0.76 + 0.76 + 0.45 = 1.97), and two atoms 0.3 Å apart.
        assert!(perceive(&[6, 6], &[0.0, 0.0, 0.0, 2.1, 0.0, 0.0]).is_empty());
        assert!(perceive(&[6, 6], &[0.0, 0.0, 0.0, 0.3, 0.0, 0.0]).is_empty());
        assert_eq!(
            perceive(&[6, 6], &[0.0, 0.0, 0.0, 1.9, 0.0, 0.0]),
            vec![[0, 1]]
        );
    }

    /// Atoms in neighbouring grid cubes, on either side of a cube wall and at negative
    /// coordinates, are found; an element without a radius bonds to nothing.
    #[test]
    fn neighbours_across_cube_walls_are_found() {
        let size = 2.0 * 2.6 + TOLERANCE; // the widest radius present is Fr's
        let positions = [-0.7, 0.0, 0.0, 0.7, 0.0, 0.0, size - 0.1, 0.0, 0.0];
        assert_eq!(perceive(&[6, 6, 87], &positions), vec![[0, 1]]);
        assert!(perceive(&[118, 118], &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0]).is_empty());
    }
}
