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
//! Neighbours are found on a grid of cubes as wide as the longest possible bond (the atoms sorted
//! by cube, each neighbouring cube found by a binary search), so a box of N atoms costs
//! O(N log N).

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
    // Each atom's cube, its three coordinates packed in 21 bits each (a box beyond a million Å
    // shares its outermost cubes, which only adds candidates), as two halves of a sort key.
    let cube = |i: usize| -> [i64; 3] {
        let p = &positions[3 * i..3 * i + 3];
        [0, 1, 2].map(|k| ((p[k] / size).floor() as i64).clamp(-(1 << 20), (1 << 20) - 1))
    };
    let key = |c: [i64; 3]| -> (u32, u32) {
        let packed = c
            .iter()
            .fold(0u64, |acc, &x| (acc << 21) | ((x + (1 << 20)) as u64));
        ((packed >> 32) as u32, packed as u32)
    };
    // (cube key, atom) sorted by cube: the atoms of one cube are one run.
    let mut sorted: Vec<(u32, u32, usize)> = (0..elements.len())
        .filter(|&i| radii[i].is_some())
        .map(|i| {
            let (hi, lo) = key(cube(i));
            (hi, lo, i)
        })
        .collect();
    sorted.sort_unstable();
    let mut pairs: Vec<(u32, u32, usize)> = Vec::new();
    for &(_, _, i) in &sorted {
        let ri = radii[i].unwrap_or(0.0);
        let c = cube(i);
        let pi = &positions[3 * i..3 * i + 3];
        for d in 0..27i64 {
            let near = [c[0] + d % 3 - 1, c[1] + (d / 3) % 3 - 1, c[2] + d / 9 - 1];
            if near.iter().any(|x| !(-(1 << 20)..(1 << 20)).contains(x)) {
                continue;
            }
            let (hi, lo) = key(near);
            let from = sorted.partition_point(|e| (e.0, e.1) < (hi, lo));
            for &(_, _, j) in sorted[from..].iter().take_while(|e| (e.0, e.1) == (hi, lo)) {
                if j <= i {
                    continue;
                }
                let rj = radii[j].unwrap_or(0.0);
                let pj = &positions[3 * j..3 * j + 3];
                let d2: f64 = (0..3).map(|k| (pi[k] - pj[k]).powi(2)).sum();
                let limit = ri + rj + TOLERANCE;
                if d2 > MIN_DISTANCE * MIN_DISTANCE && d2 < limit * limit {
                    pairs.push((i as u32, j as u32, 0));
                }
            }
        }
    }
    pairs.sort_unstable();
    pairs.into_iter().map(|(i, j, _)| [i, j]).collect()
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
