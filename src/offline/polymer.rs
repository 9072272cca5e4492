//! §12.2 `polymer_chain` in the page: a linear homopolymer grown by a seeded random walk of rigid
//! repeat units, with the reference server's arguments and result shape.
//!
//! Method. The monomer is used as given (its conformer is never re-embedded). The head atom gives
//! up the hydrogen farthest from the tail atom, the tail atom the hydrogen farthest from the head
//! atom; the first unit keeps its head hydrogen and the last its tail hydrogen, so the chain ends
//! are capped as in the monomer. Unit k+1 is placed so that its head atom sits where unit k's
//! removed tail hydrogen pointed, at the sum of the two atoms' covalent radii (Cordero 2008), and
//! its removed head hydrogen's direction points back along the new bond: the new bond takes the
//! geometry of the two hydrogens it replaces. The one free angle, the torsion about the new bond,
//! is drawn from the seeded stream and tried at [`TORSION_TRIALS`] evenly spaced values; the first
//! without a non-bonded contact is taken. When none is free, the walk steps back one unit and
//! draws again ([`BACKTRACK_BUDGET`] step-backs per unit in all), and refuses with the reason
//! when the budget runs out.
//!
//! Contacts: two atoms of different units more than two bonds apart must be at least
//! [`CONTACT_FRACTION`] × the sum of their van der Waals radii apart (Alvarez 2013: C–C 2.48 Å,
//! C–H 2.08 Å, H–H 1.68 Å), and heavy atoms at least [`HEAVY_MIN`] Å; the build keeps
//! [`CONTACT_MARGIN`] above that so the bound still holds after the host rounds positions to f32.
//! Pairs within one unit are the monomer's own geometry and are not judged.
//!
//! Sequential and single-threaded by construction: the same seed gives the same chain, bit for
//! bit, whatever the thread count of the build.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use serde_json::Value;

use super::assemble::{call_result, ToolResult};
use super::here::{fits, Place};
use super::molecule::{read_molecule, residue_name, PackMolecule};
use crate::chem::elements::{covalent_radius, symbol, vdw_radius};
use crate::contract::structure::Structure;
use crate::pack::rigid::{cross, dot, mat_mul, mat_vec, quat_to_mat, Mat3, Rng, IDENTITY};
use crate::pack::PackControl;
use crate::wire::caps::MAX_ATOMS;

/// Torsions tried per unit (evenly spaced from a random start).
pub const TORSION_TRIALS: usize = 12;
/// Step-backs allowed per repeat unit requested, in all.
pub const BACKTRACK_BUDGET: usize = 20;
/// Closest non-bonded approach between atoms of different units, as a fraction of the sum of
/// their van der Waals radii.
pub const CONTACT_FRACTION: f64 = 0.7;
/// Closest approach (Å) of two heavy atoms of different units.
pub const HEAVY_MIN: f64 = 1.5;
/// Kept above the bound while building (Å), so that f32 rounding cannot cross it.
pub const CONTACT_MARGIN: f64 = 1e-3;
/// Covalent radius (Å) used for an element Cordero does not tabulate (Z > 96).
const DEFAULT_COVALENT: f64 = 1.5;
/// Seed stream of the walk (other tools use stream 0 of the same seed).
const STREAM: u64 = 12;

/// The smallest allowed distance (Å) between atoms `a` and `b` (atomic numbers) of different units
/// more than two bonds apart.
pub fn contact_bound(a: u8, b: u8) -> f64 {
    let radii = vdw_radius(a).unwrap_or(2.0) + vdw_radius(b).unwrap_or(2.0);
    let heavy = if a > 1 && b > 1 { HEAVY_MIN } else { 0.0 };
    (CONTACT_FRACTION * radii).max(heavy)
}

/// A monomer with its junctions: which atoms bond to the neighbouring units and which hydrogens
/// they give up.
#[derive(Debug, Clone)]
pub struct Monomer {
    /// The molecule (name, rigid template, bonds).
    pub molecule: PackMolecule,
    /// 0-based head atom (bonds to the previous unit's tail).
    pub head: usize,
    /// 0-based tail atom (bonds to the next unit's head).
    pub tail: usize,
    /// The hydrogen the head gives up.
    pub head_h: usize,
    /// The hydrogen the tail gives up.
    pub tail_h: usize,
    /// Bonds from the head atom to each atom (`u32::MAX` when unconnected).
    from_head: Vec<u32>,
    /// Bonds from the tail atom to each atom.
    from_tail: Vec<u32>,
}

impl Monomer {
    /// Checks the junction atoms and picks the hydrogens they give up. Errors are one line.
    pub fn new(molecule: PackMolecule, head: usize, tail: usize) -> Result<Monomer, String> {
        let n = molecule.template.elements.len();
        let name = molecule.name.clone();
        for (role, atom) in [("head", head), ("tail", tail)] {
            if atom >= n {
                return Err(format!(
                    "The {role} atom {atom} is not an atom of {name}, which has {n} atoms (0–{}).",
                    n - 1
                ));
            }
        }
        if head == tail {
            return Err("The head and tail atoms must be different atoms.".to_string());
        }
        let p = &molecule.template.positions;
        let neighbours = |atom: usize| -> Vec<usize> {
            molecule
                .bonds
                .iter()
                .filter_map(|&[i, j]| match (i as usize, j as usize) {
                    (i, j) if i == atom => Some(j),
                    (i, j) if j == atom => Some(i),
                    _ => None,
                })
                .collect()
        };
        let hydrogen = |atom: usize, away_from: usize, not: Option<usize>, role: &str| {
            neighbours(atom)
                .into_iter()
                .filter(|&h| molecule.template.elements[h] == 1 && Some(h) != not)
                // The farthest from the other junction atom; the lowest index on a tie.
                .fold(None::<(usize, f64)>, |best, h| {
                    let d = distance(p[h], p[away_from]);
                    match best {
                        Some((_, b)) if b >= d => best,
                        _ => Some((h, d)),
                    }
                })
                .map(|(h, _)| h)
                .ok_or_else(|| {
                    let element = symbol(molecule.template.elements[atom]).unwrap_or("?");
                    format!(
                        "The {role} atom {atom} ({element}) of {name} has no hydrogen to give up; choose an atom that carries one."
                    )
                })
        };
        let head_h = hydrogen(head, tail, None, "head")?;
        let tail_h = hydrogen(tail, head, Some(head_h), "tail")?;
        let from_head = bond_distances(n, &molecule.bonds, head);
        let from_tail = bond_distances(n, &molecule.bonds, tail);
        Ok(Monomer {
            molecule,
            head,
            tail,
            head_h,
            tail_h,
            from_head,
            from_tail,
        })
    }

    /// Atoms of a chain of `units` units of this monomer.
    pub fn chain_atoms(&self, units: usize) -> usize {
        let n = self.molecule.template.elements.len();
        if units == 0 {
            0
        } else {
            units * (n - 2) + 2
        }
    }
}

/// Bonds from `start` to every atom (breadth-first; `u32::MAX` when unconnected).
fn bond_distances(n: usize, bonds: &[[u32; 2]], start: usize) -> Vec<u32> {
    let mut d = vec![u32::MAX; n];
    d[start] = 0;
    let mut frontier = vec![start];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for &a in &frontier {
            for &[i, j] in bonds {
                let (i, j) = (i as usize, j as usize);
                let other = if i == a {
                    j
                } else if j == a {
                    i
                } else {
                    continue;
                };
                if d[other] == u32::MAX {
                    d[other] = d[a] + 1;
                    next.push(other);
                }
            }
        }
        frontier = next;
    }
    d
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    let d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    dot(&d, &d).sqrt()
}

fn normalised(v: [f64; 3]) -> [f64; 3] {
    let l = dot(&v, &v).sqrt();
    [v[0] / l, v[1] / l, v[2] / l]
}

/// Rotation by `angle` (radians) about the unit vector `axis`.
fn axis_angle(axis: [f64; 3], angle: f64) -> Mat3 {
    let (s, c) = (0.5 * angle).sin_cos();
    quat_to_mat(c, axis[0] * s, axis[1] * s, axis[2] * s)
}

/// The smallest rotation taking unit vector `a` onto unit vector `b`.
fn align(a: [f64; 3], b: [f64; 3]) -> Mat3 {
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

/// A built chain: atoms in unit order (each unit in the monomer's order, less the hydrogens it
/// gave up), bonds (each unit's, then its junction bond to the previous unit) and per-atom unit
/// numbers (0-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// Atomic numbers.
    pub elements: Vec<u8>,
    /// Positions in Å, one `[x, y, z]` per atom.
    pub positions: Vec<[f64; 3]>,
    /// 0-based atom pairs.
    pub bonds: Vec<[u32; 2]>,
    /// Parallel to `bonds`: the monomer's orders, 1 for junctions.
    pub bond_orders: Vec<u8>,
    /// Per atom: its repeat unit, 0-based.
    pub unit: Vec<u32>,
    /// Times the walk stepped back.
    pub backtracks: usize,
}

/// One placed unit: where its atoms went in the chain.
struct Placed {
    /// First chain index of the unit.
    start: usize,
    /// Rotation applied to the monomer's template.
    rotation: Mat3,
}

/// Hasher of grid keys: a multiply–rotate mix of the key's bytes (FxHash's), fixed and cheap.
/// std's SipHash with a random key costs several times the distance checks it serves in wasm,
/// and the keys here are small integer triples, not adversarial input.
#[derive(Default)]
struct CellHasher(u64);

impl std::hash::Hasher for CellHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Spatial hash of the chain's atoms (cells of the largest contact bound), for the contact check.
struct Grid {
    cell: f64,
    buckets: HashMap<[i32; 3], Vec<u32>, std::hash::BuildHasherDefault<CellHasher>>,
}

impl Grid {
    fn key(&self, p: [f64; 3]) -> [i32; 3] {
        p.map(|x| (x / self.cell).floor() as i32)
    }
    fn insert(&mut self, p: [f64; 3], atom: u32) {
        let key = self.key(p);
        self.buckets.entry(key).or_default().push(atom);
    }
    /// Removes `atom`, which is the last one inserted in its cell.
    fn remove_last(&mut self, p: [f64; 3], atom: u32) {
        let key = self.key(p);
        if let Some(bucket) = self.buckets.get_mut(&key) {
            debug_assert_eq!(bucket.last(), Some(&atom));
            bucket.pop();
            if bucket.is_empty() {
                self.buckets.remove(&key);
            }
        }
    }
}

/// Grows a chain of `units` repeat units. Errors (one line) when the walk cannot place a unit
/// within the step-back budget, or on cancel (`Cancelled.`).
pub fn build_chain(
    monomer: &Monomer,
    units: usize,
    seed: u64,
    control: &PackControl,
) -> Result<Chain, String> {
    let template = &monomer.molecule.template;
    let n = template.elements.len();
    let total = monomer.chain_atoms(units);
    let name = &monomer.molecule.name;
    let mut rng = Rng::new(seed, STREAM);
    let largest = template
        .elements
        .iter()
        .flat_map(|&a| template.elements.iter().map(move |&b| contact_bound(a, b)))
        .fold(0.0, f64::max);
    let mut grid = Grid {
        cell: largest + CONTACT_MARGIN,
        buckets: HashMap::default(),
    };
    // Per template atom: bound² to every template atom (the only elements in the chain).
    let bound2: Vec<f64> = (0..n * n)
        .map(|k| {
            let b =
                contact_bound(template.elements[k / n], template.elements[k % n]) + CONTACT_MARGIN;
            b * b
        })
        .collect();
    let head_x = template.positions[monomer.head];
    let u_head = normalised(sub(template.positions[monomer.head_h], head_x));
    let u_tail = normalised(sub(
        template.positions[monomer.tail_h],
        template.positions[monomer.tail],
    ));
    let bond = covalent_radius(template.elements[monomer.head]).unwrap_or(DEFAULT_COVALENT)
        + covalent_radius(template.elements[monomer.tail]).unwrap_or(DEFAULT_COVALENT);

    let mut chain = Chain {
        elements: Vec::with_capacity(total),
        positions: Vec::with_capacity(total),
        bonds: Vec::new(),
        bond_orders: Vec::new(),
        unit: Vec::with_capacity(total),
        backtracks: 0,
    };
    // Template index of each chain atom.
    let mut origin: Vec<u32> = Vec::with_capacity(total);
    let mut placed: Vec<Placed> = Vec::with_capacity(units);
    let mut candidate = vec![[0.0; 3]; n];
    let mut budget = BACKTRACK_BUDGET * units;
    let mut furthest = 0;
    let report_every = (units / 200).max(1);
    while placed.len() < units {
        if control.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(crate::wire::messages::CANCELLED.to_string());
        }
        let k = placed.len();
        let keep =
            |a: usize| !((k > 0 && a == monomer.head_h) || (k + 1 < units && a == monomer.tail_h));
        let mut accepted = None;
        if k == 0 {
            candidate.copy_from_slice(&template.positions);
            accepted = Some(IDENTITY);
        } else {
            let previous = &placed[k - 1];
            let tail_at =
                chain.positions[previous.start + kept_index(monomer, k - 1, units, monomer.tail)];
            let direction = mat_vec(&previous.rotation, &u_tail);
            let head_at = [0, 1, 2].map(|i| tail_at[i] + bond * direction[i]);
            let base = align(u_head, [-direction[0], -direction[1], -direction[2]]);
            let start = rng.uniform() * std::f64::consts::TAU;
            for trial in 0..TORSION_TRIALS {
                let angle = start + std::f64::consts::TAU * trial as f64 / TORSION_TRIALS as f64;
                let rotation = mat_mul(&axis_angle(direction, angle), &base);
                for (a, c) in candidate.iter_mut().enumerate() {
                    let r = mat_vec(&rotation, &sub(template.positions[a], head_x));
                    *c = [head_at[0] + r[0], head_at[1] + r[1], head_at[2] + r[2]];
                }
                let free = (0..n).filter(|&a| keep(a)).all(|a| {
                    !touches(&grid, &chain, &origin, &bound2, monomer, k, a, candidate[a])
                });
                if free {
                    accepted = Some(rotation);
                    break;
                }
            }
        }
        match accepted {
            Some(rotation) => {
                let start = chain.elements.len();
                let mut index = vec![u32::MAX; n];
                for a in (0..n).filter(|&a| keep(a)) {
                    let i = chain.elements.len() as u32;
                    index[a] = i;
                    chain.elements.push(template.elements[a]);
                    chain.positions.push(candidate[a]);
                    chain.unit.push(k as u32);
                    origin.push(a as u32);
                    grid.insert(candidate[a], i);
                }
                for (&[i, j], &order) in monomer
                    .molecule
                    .bonds
                    .iter()
                    .zip(&monomer.molecule.bond_orders)
                {
                    let (i, j) = (index[i as usize], index[j as usize]);
                    if i != u32::MAX && j != u32::MAX {
                        chain.bonds.push([i, j]);
                        chain.bond_orders.push(order);
                    }
                }
                if k > 0 {
                    let previous = &placed[k - 1];
                    let tail = previous.start + kept_index(monomer, k - 1, units, monomer.tail);
                    chain.bonds.push([tail as u32, index[monomer.head]]);
                    chain.bond_orders.push(1);
                }
                placed.push(Placed { start, rotation });
                if placed.len() > furthest {
                    furthest = placed.len();
                    if furthest % report_every == 0 || furthest == units {
                        if let Some(p) = control.progress {
                            p(
                                furthest as f64 / units as f64,
                                &format!("placing repeat unit {furthest} of {units}"),
                            );
                        }
                    }
                }
            }
            None => {
                if budget == 0 || k < 2 {
                    return Err(format!(
                        "Could not grow the chain of {name} beyond {furthest} of {units} units without atoms of different units closer than {CONTACT_FRACTION} of their van der Waals distance; try another seed, fewer units, or a monomer whose head and tail point apart."
                    ));
                }
                budget -= 1;
                chain.backtracks += 1;
                // Step back: remove unit k − 1 (its atoms are the last in every grid cell).
                let removed = placed.pop().expect("k ≥ 2");
                for i in (removed.start..chain.elements.len()).rev() {
                    grid.remove_last(chain.positions[i], i as u32);
                }
                chain.elements.truncate(removed.start);
                chain.positions.truncate(removed.start);
                chain.unit.truncate(removed.start);
                origin.truncate(removed.start);
                while chain.bonds.last().is_some_and(|b| {
                    b[0] as usize >= removed.start || b[1] as usize >= removed.start
                }) {
                    chain.bonds.pop();
                    chain.bond_orders.pop();
                }
            }
        }
    }
    Ok(chain)
}

/// Where template atom `atom` sits within unit `k` of a chain of `units` (hydrogens given up are
/// skipped).
fn kept_index(monomer: &Monomer, k: usize, units: usize, atom: usize) -> usize {
    let dropped = |h: usize| h < atom;
    let mut index = atom;
    if k > 0 && dropped(monomer.head_h) {
        index -= 1;
    }
    if k + 1 < units && dropped(monomer.tail_h) {
        index -= 1;
    }
    index
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// Whether template atom `a` of unit `k`, at `p`, comes closer than its bound to an atom of an
/// earlier unit that is more than two bonds away.
#[allow(clippy::too_many_arguments)]
fn touches(
    grid: &Grid,
    chain: &Chain,
    origin: &[u32],
    bound2: &[f64],
    monomer: &Monomer,
    k: usize,
    a: usize,
    p: [f64; 3],
) -> bool {
    let n = monomer.molecule.template.elements.len();
    let c = grid.key(p);
    for dx in -1..=1 {
        for dy in -1..=1 {
            for dz in -1..=1 {
                let Some(bucket) = grid.buckets.get(&[c[0] + dx, c[1] + dy, c[2] + dz]) else {
                    continue;
                };
                for &b in bucket {
                    let b = b as usize;
                    let t = origin[b] as usize;
                    // Across the junction: tail side … tail–head … head side, within two bonds.
                    if chain.unit[b] as usize + 1 == k
                        && monomer.from_tail[t].saturating_add(monomer.from_head[a]) < 2
                    {
                        continue;
                    }
                    let q = chain.positions[b];
                    let d = sub(p, q);
                    if dot(&d, &d) < bound2[t * n + a] {
                        return true;
                    }
                }
            }
        }
    }
    false
}

/// Runs the tool on already schema-checked arguments; `Err` is the one-line tool error.
pub fn run(args: &Value, control: &PackControl, place: Place) -> Result<ToolResult, String> {
    let seed = args
        .get("seed")
        .and_then(Value::as_u64)
        .ok_or("Seed is required.")?;
    let index = |key: &str| -> Result<usize, String> {
        args.get(key)
            .and_then(Value::as_u64)
            .map(|i| i as usize)
            .ok_or_else(|| format!("The {key} atom is required."))
    };
    let (head, tail) = (index("head")?, index("tail")?);
    let units = args.get("length").and_then(Value::as_u64).unwrap_or(10) as usize;
    let molecule = read_molecule(args.get("monomer").unwrap_or(&Value::Null))?;
    let monomer = Monomer::new(molecule, head, tail)?;
    let name = monomer.molecule.name.clone();
    let atoms = monomer.chain_atoms(units);
    if atoms > MAX_ATOMS {
        return Err(format!(
            "A chain of {units} units of {name} would have {atoms} atoms; Builder accepts at most {MAX_ATOMS}. Use fewer units."
        ));
    }
    fits(place, atoms)?;
    let chain = build_chain(&monomer, units, seed, control)?;
    let structure = chain_structure(&chain, &name);
    let summary = format!(
        "Polymer chain: {units} unit{} of {name} ({atoms} atoms).",
        if units == 1 { "" } else { "s" }
    );
    Ok(call_result(
        &format!("poly-{name}"),
        &summary,
        structure,
        &[],
        seed,
    ))
}

/// §5.1 structure of a chain, as the reference server gives it: no cell, one molecule, residue
/// names from the monomer's name and residue ids numbering the units from 1.
pub fn chain_structure(chain: &Chain, name: &str) -> Structure {
    let residue = residue_name(name);
    let orders = &chain.bond_orders;
    Structure {
        elements: chain.elements.clone(),
        positions: chain.positions.iter().flatten().copied().collect(),
        cell: None,
        bonds: chain.bonds.clone(),
        bond_orders: orders.iter().any(|&o| o != 1).then(|| orders.clone()),
        molecules: Some(vec![0; chain.elements.len()]),
        residue_names: Some(std::iter::repeat_n(residue.as_str(), chain.elements.len()).collect()),
        residue_ids: Some(chain.unit.iter().map(|&u| i64::from(u) + 1).collect()),
        ..Structure::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn bounds() {
        assert!((contact_bound(6, 6) - 0.7 * 3.54).abs() < 1e-12);
        assert!((contact_bound(1, 1) - 0.7 * 2.4).abs() < 1e-12);
        assert!(contact_bound(8, 8) >= HEAVY_MIN);
    }
}
