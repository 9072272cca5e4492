//! The whole judgement of one packed box: every measure of [`super`] on a box given as atoms with a
//! molecule id each (a §5.1 Structure's `molecules`), and the verdict `check_packing.py` gives
//! (no pair below the tolerance, every copy rigid, the density on target), with the order of the
//! centres and the orientations beside it. Elements' masses and radii come from the caller (the
//! client crate's element table), so this crate carries none.

use super::{centre_order, density, distances, orientation, rigid, CentreOrder};
use super::{ORIENTATION_LIMIT, ORIENTATION_MIN_COPIES};

/// A packed box to judge.
pub struct Input<'a> {
    /// Atomic numbers of the packed atoms.
    pub elements: &'a [u8],
    /// Their positions (Å), whole molecules as written (not wrapped by the judge).
    pub positions: &'a [[f64; 3]],
    /// Molecule id of each packed atom (any values; molecules are numbered by first appearance and
    /// keep their atoms in the given order).
    pub molecule: &'a [i64],
    /// Orthorhombic periodic box (Å).
    pub box_lengths: [f64; 3],
    /// Fixed atoms (a solvate's document): positions (Å) and atomic numbers.
    pub fixed: &'a [[f64; 3]],
    /// Atomic numbers of the fixed atoms.
    pub fixed_elements: &'a [u8],
}

/// What the box is held to.
#[derive(Clone, Copy, Debug)]
pub struct Criteria {
    /// Minimum intermolecular distance (Å).
    pub tolerance: f64,
    /// Expected density (g/cm³), if any.
    pub target_density: Option<f64>,
    /// Relative tolerance of the density (`check_packing.py`'s default 0.01).
    pub density_rtol: f64,
    /// Whether the density is that of the packed molecules in the free volume (else of every atom
    /// in the box).
    pub density_of_packed: bool,
    /// Largest internal-distance deviation (Å) of a rigid copy (`check_packing.py`'s 1e-3).
    pub rigid_tol: f64,
}

impl Criteria {
    /// `check_packing.py`'s defaults at `tolerance`.
    pub fn at(tolerance: f64) -> Criteria {
        Criteria {
            tolerance,
            target_density: None,
            density_rtol: 0.01,
            density_of_packed: false,
            rigid_tol: 1e-3,
        }
    }
}

/// The orientational order of one species with enough copies.
#[derive(Clone, Debug)]
pub struct SpeciesOrientation {
    /// Index of the species (by first appearance of its element sequence).
    pub species: usize,
    /// ⟨P2⟩, ⟨P4⟩ per axis.
    pub order: orientation::Order,
}

/// The judgement.
#[derive(Clone, Debug)]
pub struct Report {
    /// Molecules packed.
    pub molecules: usize,
    /// Closest pairs.
    pub closest: distances::Closest,
    /// Box volume less the fixed atoms' van der Waals spheres (Å³).
    pub free_volume: f64,
    /// The density judged (g/cm³): every atom in the box, or the packed ones in the free volume.
    pub density: f64,
    /// Whether the density is on target (true when none is given).
    pub density_ok: bool,
    /// The largest internal-distance deviation of a copy from its template (Å).
    pub rigid_max_deviation: f64,
    /// Copies deviating more than the criteria allow.
    pub non_rigid: usize,
    /// S(k) over the molecule centres (first atom of each).
    pub centres: CentreOrder,
    /// Orientational order of each species of at least [`ORIENTATION_MIN_COPIES`] copies.
    pub orientations: Vec<SpeciesOrientation>,
    /// `check_packing.py`'s verdict: no pair below the tolerance, every copy rigid, the density on target.
    pub pass: bool,
}

impl Report {
    /// Whether the centres are a liquid's (always for fewer than [`ORDER_MIN_MOLECULES`]).
    pub fn disordered(&self) -> bool {
        self.centres.disordered()
    }

    /// Whether every judged species' orientations are uniform (|⟨P2⟩|, |⟨P4⟩| ≤ 0.1).
    pub fn orientations_uniform(&self) -> bool {
        self.orientations
            .iter()
            .all(|o| o.order.worst() <= ORIENTATION_LIMIT)
    }
}

/// Judges the box; `mass` (g/mol) and `radius` (van der Waals, Å) of an atomic number come from the
/// caller. Errors (one line) for inconsistent input.
pub fn judge(
    input: &Input,
    criteria: &Criteria,
    mass: &dyn Fn(u8) -> Option<f64>,
    radius: &dyn Fn(u8) -> f64,
) -> Result<Report, String> {
    let n_atoms = input.positions.len();
    if input.elements.len() != n_atoms || input.molecule.len() != n_atoms {
        return Err(format!(
            "{n_atoms} positions, {} elements, {} molecule ids",
            input.elements.len(),
            input.molecule.len()
        ));
    }
    if input.fixed.len() != input.fixed_elements.len() {
        return Err("fixed atoms and their elements differ in number".into());
    }
    // Molecules by first appearance, each with its atoms in order.
    let mut index: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (a, &id) in input.molecule.iter().enumerate() {
        let m = *index.entry(id).or_insert_with(|| {
            members.push(Vec::new());
            members.len() - 1
        });
        members[m].push(a);
    }
    let dense: Vec<u32> = {
        let mut d = vec![0u32; n_atoms];
        for (m, atoms) in members.iter().enumerate() {
            for &a in atoms {
                d[a] = m as u32;
            }
        }
        d
    };
    let l = input.box_lengths;
    let search = (criteria.tolerance + 1.0).max(3.0);
    let closest = distances::closest(
        input.positions,
        &dense,
        input.fixed,
        l,
        criteria.tolerance,
        search,
    );
    // Density.
    let volume = l[0] * l[1] * l[2];
    let fixed_radii: Vec<f64> = input.fixed_elements.iter().map(|&z| radius(z)).collect();
    let free_volume = if input.fixed.is_empty() {
        volume
    } else {
        volume - density::sphere_union_volume(input.fixed, &fixed_radii, l, 0.25)
    };
    let sum_mass = |zs: &[u8]| -> Result<f64, String> {
        zs.iter()
            .map(|&z| mass(z).ok_or_else(|| format!("no mass for Z = {z}")))
            .sum()
    };
    let packed_mass = sum_mass(input.elements)?;
    let density = if criteria.density_of_packed {
        density::grams_per_cm3(packed_mass, free_volume)
    } else {
        density::grams_per_cm3(packed_mass + sum_mass(input.fixed_elements)?, volume)
    };
    let density_ok = criteria
        .target_density
        .is_none_or(|t| (density - t).abs() <= criteria.density_rtol * t);
    // Species: the first copy of each element sequence is its template.
    let mut species: Vec<(Vec<u8>, usize)> = Vec::new();
    let mut species_of = Vec::with_capacity(members.len());
    for (m, atoms) in members.iter().enumerate() {
        let seq: Vec<u8> = atoms.iter().map(|&a| input.elements[a]).collect();
        let s = match species.iter().position(|(q, _)| *q == seq) {
            Some(s) => s,
            None => {
                species.push((seq, m));
                species.len() - 1
            }
        };
        species_of.push(s);
    }
    let atoms_of =
        |m: usize| -> Vec<[f64; 3]> { members[m].iter().map(|&a| input.positions[a]).collect() };
    let mut rigid_max_deviation = 0.0f64;
    let mut non_rigid = 0;
    for (m, &s) in species_of.iter().enumerate() {
        let dev = rigid::max_deviation(&atoms_of(m), &atoms_of(species[s].1));
        rigid_max_deviation = rigid_max_deviation.max(dev);
        non_rigid += usize::from(dev > criteria.rigid_tol);
    }
    let centres: Vec<[f64; 3]> = members.iter().map(|a| input.positions[a[0]]).collect();
    let centres = centre_order(&centres, l, free_volume);
    let mut orientations = Vec::new();
    for (s, (_, first)) in species.iter().enumerate() {
        let copies: Vec<Vec<[f64; 3]>> = (0..members.len())
            .filter(|&m| species_of[m] == s)
            .map(atoms_of)
            .collect();
        if copies.len() < ORIENTATION_MIN_COPIES {
            continue;
        }
        if let Some(order) = orientation::order(&atoms_of(*first), copies.iter().map(Vec::as_slice))
        {
            orientations.push(SpeciesOrientation { species: s, order });
        }
    }
    let pass = closest.below_tolerance == 0 && non_rigid == 0 && density_ok;
    Ok(Report {
        molecules: members.len(),
        closest,
        free_volume,
        density,
        density_ok,
        rigid_max_deviation,
        non_rigid,
        centres,
        orientations,
        pass,
    })
}
