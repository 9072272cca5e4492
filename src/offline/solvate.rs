//! §12.3 `solvate` in the page: fill the free space of the document's orthorhombic cell with
//! solvent at a target density, keeping the document's atoms fixed. Only the solvent is returned,
//! with the document's cell.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use serde_json::Value;

use super::assemble::{call_result, one_decimal, packed_structure, report_writing, ToolResult};
use super::here::{fits, Place};
use super::liquid_box::AVOGADRO_PER_A3;
use super::molecule::read_molecule;
use super::packing::{self, CommonArgs};
use crate::chem::elements::{vdw_radius, DEFAULT_VDW_RADIUS};
use crate::contract::structure::Structure;
use crate::pack::{PackControl, Species};
use crate::wire::caps::MAX_ATOMS;

/// Points sampled (in all) to estimate the volume the document's van der Waals spheres take.
pub const VOLUME_SAMPLES: usize = 100_000;

/// Fewest and most sample points per document atom. 512 inside a sphere of ~15–20 Å³ puts the
/// error of one sphere's share near 0.4 Å³; over a whole document (independent errors) it stays
/// far below one solvent molecule's volume (water: 30 Å³), at half the cost of 1024 — this
/// estimate was most of a small solvate's time in wasm (~1 ms per document atom).
const SAMPLES_PER_ATOM: (usize, usize) = (16, 512);

/// Largest off-diagonal cell component (Å) still called orthorhombic.
const SKEW_TOLERANCE: f64 = 1e-6;

/// Runs the tool on already schema-checked arguments; `Err` is the one-line tool error.
pub fn run(args: &Value, control: &PackControl, place: Place) -> Result<ToolResult, String> {
    let common = CommonArgs::read(args)?;
    let (seed, density, tolerance) = (common.seed, common.density, common.tolerance);
    let document = Structure::deserialize(args.get("document").unwrap_or(&Value::Null))
        .map_err(|e| format!("The open document is not a valid structure: {e}"))?;
    document
        .validate()
        .map_err(|e| format!("The open document is not valid: {e}"))?;
    let Some(cell) = document.cell else {
        return Err(
            "Solvate needs a periodic cell; set one with Structure › Set cell…".to_string(),
        );
    };
    let lengths = orthorhombic_lengths(&cell)?;
    let solvent = read_molecule(args.get("solvent").unwrap_or(&Value::Null))?;
    let fixed: Vec<[f64; 3]> = document
        .positions
        .chunks_exact(3)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    // Too large for the page's thread, said before the free volume is estimated: the document
    // with the least solvent it can take (the spheres' union is at most their sum).
    let spheres: f64 = exclusion_radii(&document).map(sphere_volume).sum();
    let volume = lengths[0] * lengths[1] * lengths[2];
    let least = solvent_count(density, (volume - spheres).max(0.0), solvent.molar_mass);
    fits(place, least * solvent.template.elements.len() + fixed.len())?;
    let free = free_volume(&document, lengths, seed);
    let count = solvent_count(density, free, solvent.molar_mass);
    if count == 0 {
        return Err("There is no room for solvent in this cell at this density; enlarge the cell or raise the density.".to_string());
    }
    let atoms = count * solvent.template.elements.len();
    if atoms + fixed.len() > MAX_ATOMS {
        return Err(format!(
            "Solvating would add {atoms} atoms; Builder accepts at most {MAX_ATOMS}. Use a smaller cell."
        ));
    }
    fits(place, atoms + fixed.len())?;
    if lengths.iter().any(|&l| l < 2.0 * tolerance) {
        return Err(format!("The cell is narrower than twice the minimum distance ({tolerance} Å); enlarge it or lower the minimum distance."));
    }
    let species = vec![Species {
        template: solvent.template.clone(),
        count,
    }];
    let mut outcome = common.pack(species, lengths, fixed, control)?;
    let ordered = packing::order_warning(
        &outcome.positions,
        &[(solvent.template.elements.len(), count)],
        lengths,
        free,
        outcome.packing_fraction,
    );
    report_writing(control, outcome.positions.len());
    let structure = packed_structure(
        std::slice::from_ref(&solvent),
        &[count],
        std::mem::take(&mut outcome.positions),
        cell,
    );
    let summary = format!(
        "Solvate: added {count} {} molecules ({atoms} atoms) to the {} x {} x {} Å cell.",
        solvent.name,
        one_decimal(lengths[0]),
        one_decimal(lengths[1]),
        one_decimal(lengths[2])
    );
    let name = format!("{}-solvent", solvent.name);
    let summary = packing::summary_with_density(summary, &outcome);
    let mut warnings = packing::outcome_warnings(&outcome, tolerance);
    warnings.extend(ordered);
    Ok(call_result(&name, &summary, structure, &warnings, seed))
}

/// The edge lengths of an orthorhombic cell, or the one-line error for a skewed one.
fn orthorhombic_lengths(cell: &[f64; 9]) -> Result<[f64; 3], String> {
    let off_diagonal = [cell[1], cell[2], cell[3], cell[5], cell[6], cell[7]];
    if off_diagonal.iter().any(|x| x.abs() > SKEW_TOLERANCE) {
        return Err("Solvate needs an orthorhombic cell (a rectangular box); set one with Structure › Set cell…".to_string());
    }
    let lengths = [cell[0], cell[4], cell[8]];
    if lengths.iter().any(|&l| l <= 0.0 || !l.is_finite()) {
        return Err(
            "The cell has an edge of zero or negative length; set one with Structure › Set cell…"
                .to_string(),
        );
    }
    Ok(lengths)
}

/// Å³ of the cell not inside any document atom's van der Waals sphere (periodic), deterministic for
/// a seed. The union of the spheres is estimated sphere by sphere: points drawn uniformly inside
/// sphere i (a ChaCha8 stream seeded with `seed`) count towards the union when no sphere j < i
/// covers them, so union = Σ Vᵢ × (uncovered fraction of i). Sampling inside the spheres rather than
/// the whole cell makes the error scale with the spheres' volume, not the cell's: for one caffeine in
/// a 40 Å cell it is about 1 Å³ instead of ~10 Å³, at a small fraction of the work.
pub fn free_volume(document: &Structure, lengths: [f64; 3], seed: u64) -> f64 {
    let volume = lengths[0] * lengths[1] * lengths[2];
    let n = document.elements.len();
    if n == 0 {
        return volume;
    }
    let radii: Vec<f64> = exclusion_radii(document).collect();
    let grid = SphereGrid::new(&document.positions, &radii, lengths);
    let per_atom = (VOLUME_SAMPLES / n).clamp(SAMPLES_PER_ATOM.0, SAMPLES_PER_ATOM.1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_f00d);
    let mut union = 0.0;
    for (i, &r) in radii.iter().enumerate() {
        // The earlier spheres that reach into sphere i, as centres relative to i's (minimum
        // image) and squared radii: found once per sphere, so a sample checks only those few.
        let near = grid.earlier_overlapping(i);
        let mut uncovered = 0usize;
        let mut drawn = 0usize;
        while drawn < per_atom {
            // One 64-bit draw gives the three coordinates (21 bits each: far finer than the
            // estimate needs).
            let bits = rng.next_u64();
            let offset = [0, 21, 42].map(|shift| {
                let u = ((bits >> shift) & 0x1f_ffff) as f64 / (1u64 << 21) as f64;
                (2.0 * u - 1.0) * r
            });
            if offset.iter().map(|d| d * d).sum::<f64>() >= r * r {
                continue;
            }
            drawn += 1;
            let covered = near.iter().any(|(d, r2)| {
                let e = [offset[0] - d[0], offset[1] - d[1], offset[2] - d[2]];
                e[0] * e[0] + e[1] * e[1] + e[2] * e[2] < *r2
            });
            if !covered {
                uncovered += 1;
            }
        }
        union += sphere_volume(r) * uncovered as f64 / per_atom as f64;
    }
    (volume - union).max(0.0)
}

/// The radius (Å) of each document atom's sphere that solvent keeps out of: its van der Waals
/// radius (2 Å where none is known).
fn exclusion_radii(document: &Structure) -> impl Iterator<Item = f64> + '_ {
    document
        .elements
        .iter()
        .map(|&z| vdw_radius(z).unwrap_or(DEFAULT_VDW_RADIUS))
}

/// Å³ of a sphere of radius `r` Å.
fn sphere_volume(r: f64) -> f64 {
    4.0 / 3.0 * std::f64::consts::PI * r.powi(3)
}

/// Solvent molecules of `molar_mass` g/mol at `density` g/cm³ in `free` Å³ (never fewer for more
/// room).
fn solvent_count(density: f64, free: f64, molar_mass: f64) -> usize {
    (density * free * AVOGADRO_PER_A3 / molar_mass).round() as usize
}

/// Spheres bucketed in a periodic grid whose cells are at least the largest radius wide.
struct SphereGrid {
    lengths: [f64; 3],
    dims: [usize; 3],
    buckets: Vec<Vec<usize>>,
    centres: Vec<[f64; 3]>,
    radii: Vec<f64>,
}

impl SphereGrid {
    fn new(positions: &[f64], radii: &[f64], lengths: [f64; 3]) -> SphereGrid {
        let r_max = radii.iter().copied().fold(0.0, f64::max).max(0.5);
        // Cells at least `r_max` wide, and no more buckets than about twice the spheres: the
        // memory follows the document's atoms, not its cell (coarser cells only cost more checks).
        let mut dims = lengths.map(|l| ((l / r_max).floor() as usize).max(1));
        let cap = (2 * radii.len()).max(27);
        while dims[0] * dims[1] * dims[2] > cap {
            let k = (0..3).max_by_key(|&k| (dims[k], 3 - k)).unwrap_or(0);
            dims[k] = (dims[k] / 2).max(1);
        }
        let centres: Vec<[f64; 3]> = positions
            .chunks_exact(3)
            .map(|p| {
                [
                    p[0].rem_euclid(lengths[0]),
                    p[1].rem_euclid(lengths[1]),
                    p[2].rem_euclid(lengths[2]),
                ]
            })
            .collect();
        let mut buckets = vec![Vec::new(); dims[0] * dims[1] * dims[2]];
        let mut grid = SphereGrid {
            lengths,
            dims,
            buckets: Vec::new(),
            centres,
            radii: radii.to_vec(),
        };
        for (i, c) in grid.centres.iter().enumerate() {
            buckets[grid.bucket(grid.cell_of(*c))].push(i);
        }
        grid.buckets = buckets;
        grid
    }

    fn cell_of(&self, p: [f64; 3]) -> [usize; 3] {
        [0, 1, 2].map(|k| {
            (((p[k] / self.lengths[k]) * self.dims[k] as f64) as usize).min(self.dims[k] - 1)
        })
    }

    fn bucket(&self, c: [usize; 3]) -> usize {
        (c[0] * self.dims[1] + c[1]) * self.dims[2] + c[2]
    }

    /// The spheres `j < i` that overlap sphere `i`: the minimum-image displacement of their
    /// centre from `i`'s (Å) and their squared radius, in index order.
    fn earlier_overlapping(&self, i: usize) -> Vec<([f64; 3], f64)> {
        let c = self.cell_of(self.centres[i]);
        // Two overlapping centres are at most two largest radii apart, and a cell is at least
        // one wide: the cells within two of i's along each axis, each once.
        let span = |k: usize| -> Vec<usize> {
            let d = self.dims[k];
            let mut cells: Vec<usize> = (0..5).map(|o| (c[k] + 2 * d + o - 2) % d).collect();
            cells.sort_unstable();
            cells.dedup();
            cells
        };
        let (xs, ys, zs) = (span(0), span(1), span(2));
        let mut near: Vec<usize> = Vec::new();
        for &x in &xs {
            for &y in &ys {
                for &z in &zs {
                    near.extend(
                        self.buckets[self.bucket([x, y, z])]
                            .iter()
                            .filter(|&&j| j < i),
                    );
                }
            }
        }
        near.sort_unstable();
        near.into_iter()
            .filter_map(|j| {
                let d = [0, 1, 2].map(|k| {
                    let d = self.centres[j][k] - self.centres[i][k];
                    d - self.lengths[k] * (d / self.lengths[k]).round()
                });
                let reach = self.radii[i] + self.radii[j];
                (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < reach * reach)
                    .then_some((d, self.radii[j] * self.radii[j]))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_volume_of_one_water_in_20_angstrom() {
        let doc = Structure {
            elements: vec![8, 1, 1],
            positions: vec![10.0, 10.0, 10.0, 10.96, 10.0, 10.0, 9.76, 10.93, 10.0],
            cell: Some([20.0, 0.0, 0.0, 0.0, 20.0, 0.0, 0.0, 0.0, 20.0]),
            ..Structure::default()
        };
        let free = free_volume(&doc, [20.0; 3], 1);
        // Overlapping spheres take less than their sum (14.7 + 2 × 7.2 Å³); sampling error ~1 Å³.
        assert!(free > 8000.0 - 30.0 && free < 8000.0 - 15.0, "{free}");
        assert_eq!(
            free,
            free_volume(&doc, [20.0; 3], 1),
            "deterministic for a seed"
        );
        // A sphere across the periodic boundary counts the same as one inside.
        let edge = Structure {
            positions: vec![0.0, 0.0, 0.0, 0.96, 0.0, 0.0, -0.24, 0.93, 0.0],
            ..doc.clone()
        };
        assert!((free_volume(&edge, [20.0; 3], 1) - free).abs() < 5.0);
    }

    #[test]
    fn a_lone_sphere_is_exact_and_coincident_spheres_count_once() {
        let r = vdw_radius(8).unwrap();
        let sphere = 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
        let one = Structure {
            elements: vec![8],
            positions: vec![19.5, 0.5, 10.0],
            cell: Some([20.0, 0.0, 0.0, 0.0, 20.0, 0.0, 0.0, 0.0, 20.0]),
            ..Structure::default()
        };
        assert!((free_volume(&one, [20.0; 3], 7) - (8000.0 - sphere)).abs() < 1e-9);
        let two = Structure {
            elements: vec![8, 8],
            positions: vec![19.5, 0.5, 10.0, 19.5, 0.5, 10.0],
            ..one.clone()
        };
        assert!((free_volume(&two, [20.0; 3], 7) - (8000.0 - sphere)).abs() < 1e-9);
    }

    #[test]
    fn skewed_cells_are_refused() {
        assert!(
            orthorhombic_lengths(&[10.0, 0.0, 0.0, 2.0, 10.0, 0.0, 0.0, 0.0, 10.0])
                .unwrap_err()
                .contains("orthorhombic")
        );
        assert_eq!(
            orthorhombic_lengths(&[10.0, 0.0, 0.0, 0.0, 11.0, 0.0, 0.0, 0.0, 12.0]).unwrap(),
            [10.0, 11.0, 12.0]
        );
    }
}
