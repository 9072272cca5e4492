//! Growing a chain: a self-avoiding sequence of rigid units whose junction torsions are drawn in
//! their wells, with step-backs out of dead ends.
//!
//! Unit k + 1 goes where unit k's tail hydrogen pointed: its head atom at the junction length
//! on that hydrogen's side, at the rule's bond angle ([`super::junction::bond_angle`]), its own
//! head hydrogen's direction, set the same way, turned back along the new bond. Then it is turned
//! about the bond to the torsion drawn from the junction's wells ([`super::junction::Torsion`]).
//! Per unit are drawn: which hydrogen the head and the tail give up, the place of each end group
//! (three, 120° apart, about the end's bond into the unit: the torsion next to a CH3 or OH end
//! takes any of the staggered positions, and a centre made at a junction either hand), and, for a
//! monomer without a stereocentre of its own, whether the unit is the monomer or its mirror image
//! (atactic, as RadonPy's default; the torsions inside the unit then take either sign). Torsions
//! inside a unit are otherwise the unit's own, but for the sp3 single bonds of its backbone between
//! inner atoms ([`super::unit::BackboneBond`]), which every draw takes from the staggered wells as
//! it does a junction's.
//!
//! Each unit gets up to [`TRIALS`] draws; the first that keeps every atom at [`contact_bound`]
//! from the units near it along the chain and at [`excluded_distance`] (the repulsive core of the
//! van der Waals pair, the excluded volume that swells a chain in a good solvent) from those
//! [`FAR_UNITS`] or more away, and leaves room for the next unit's head atom, is kept. Rigid units cannot
//! turn their side groups or open their bond angles as a force field would (PMMA's ester turns,
//! its backbone CH2 angle is 123° in MMFF, 110° in the unit), so crowded monomers (PMMA,
//! polystyrene, polyisobutylene) have few draws that keep the atoms of neighbouring units apart:
//! after [`STRICT_TRIALS`] draws, the unit's side groups (the atoms beyond a rotatable bond off
//! its backbone, [`super::unit::SideGroup`]) are turned at random as well; after
//! [`TURNED_TRIALS`], atoms within [`LOCAL_UNITS`] units of each other may come to
//! [`LAX_FRACTIONS`] of their distance in turn ([`LAX_DRAWS`] draws at each, most at the last,
//! so that few crowded units end in a dead end) and torsions [`LAX_WIDEN`] times as far from their
//! wells' centres, and [`super::relax`] moves such atoms apart after the walk. A unit after
//! [`CROWDED_RUN`] crowded ones makes only [`SHORT_STRICT`] + [`SHORT_TURNED`] strict draws, and
//! its crowded draws at the two closest levels only.
//! A unit the walk has stepped back from [`CORNERED_DEAD_ENDS`] time(s) makes its last crowded
//! draws holding units further back to [`contact_bound`] rather than the excluded distance.
//! When no draw is free the walk steps back, one unit after a first dead end and twice as many after each further one at
//! the same unit (at most [`MAX_STEP_BACK`]), and refuses with the reason once [`TRIAL_BUDGET`]
//! draws per unit have been spent in all.
//!
//! Sequential and single-threaded by construction: the same seed gives the same chain, bit for
//! bit, whatever the thread count of the build.

use std::sync::atomic::Ordering;

use super::cells::Grid;
use super::geometry::{align, axis_angle, dihedral, normalised, sub};
use super::junction::Torsion;
use super::unit::Monomer;
use crate::stop::Stop;
use megane_elements::{vdw_radius, DEFAULT_VDW_RADIUS};
use megane_pack::rigid::{cross, dot, mat_mul, mat_vec, Mat3, Rng, IDENTITY};
use megane_pack::PackControl;

/// Draws per unit before the walk steps back.
pub const TRIALS: usize = 80;
/// The first draws of each unit hold every pair to [`contact_bound`] with the unit as it is.
pub const STRICT_TRIALS: usize = 16;
/// Up to here, draws hold every pair to [`contact_bound`], the unit's side groups turned.
pub const TURNED_TRIALS: usize = 64;
/// Units in a row placed by crowded draws after which a unit makes fewer strict draws.
pub const CROWDED_RUN: usize = 4;
/// Strict draws, as the unit is, of a unit after [`CROWDED_RUN`] crowded ones (PMMA: 49 of 5 280
/// units placed over seeds 1–9 were placed by a strict draw, at 16 of them a unit; one draw and
/// [`SHORT_TURNED`] keep the way out of a crowded run open at a quarter of the cost).
pub const SHORT_STRICT: usize = 1;
/// Strict draws with the side groups turned of a unit after [`CROWDED_RUN`] crowded ones.
pub const SHORT_TURNED: usize = 3;
/// Atoms of units at most this many apart may come closer during the walk, to be relaxed after it.
pub const LOCAL_UNITS: u32 = 2;
/// How close (fraction of the sum of van der Waals radii) such pairs may come during the walk:
/// the crowded draws go down these in turn, so that the least crowding the unit allows is taken.
pub const LAX_FRACTIONS: [f64; 4] = [0.66, 0.6, 0.5, 0.35];
/// Crowded draws at each of [`LAX_FRACTIONS`], in turn ([`TRIALS`] − [`TURNED_TRIALS`] in all):
/// most at the last. A crowded unit that no draw places is a dead end, and each costs a step back
/// and the draws of the units it removes again. PMMA's draws pass at these levels 0.6 %, 1.5 %,
/// 7 % and 20 % of the time; at four draws a level, 28 % of its units met a dead end (366 units
/// removed per 200-unit chain, 24 700 draws); at these (and a crowded run's shorter schedule,
/// below), 104 and 4 700.
pub const LAX_DRAWS: [usize; 4] = [2, 2, 4, 8];
const _: () =
    assert!(LAX_DRAWS[0] + LAX_DRAWS[1] + LAX_DRAWS[2] + LAX_DRAWS[3] == TRIALS - TURNED_TRIALS);
/// Dead ends at one unit after which its last crowded draws ([`LAX_DRAWS`]`[3]`, at the closest
/// level) hold units [`FAR_UNITS`] or more away only to [`contact_bound`], not to
/// [`excluded_distance`]: a bulky monomer (poly(tert-butyl methacrylate)) walls its own way on in
/// with the side groups of units further back, which step-backs of up to [`MAX_STEP_BACK`] units
/// do not undo (6 of 10 of its 200-unit chains were refused after two dead ends, none after one).
/// The excluded volume that swells a coil is kept everywhere else: with this and the side groups'
/// one-at-a-time turns, the coil exponents of the 20 polymers over 500 seeds moved by at most
/// 0.016 (PDMS 0.538 → 0.554, PVAc 0.570 → 0.585, PMMA 0.605 → 0.593).
pub const CORNERED_DEAD_ENDS: u32 = 1;
/// The crowding level of such a draw: [`LAX_FRACTIONS`]' last for units within [`LOCAL_UNITS`],
/// [`contact_bound`] for the others.
const CORNERED: usize = LAX_FRACTIONS.len() + 1;
/// How much wider than its wells a crowded draw's torsion may be (a diphenyl ether's rings turn
/// some 40° out of the plane the wells of a conjugated junction hold them to).
pub const LAX_WIDEN: f64 = 2.0;
/// Draws allowed per repeat unit requested, in all, before the walk gives up.
pub const TRIAL_BUDGET: usize = 2_000;
/// Most units removed by one step back.
pub const MAX_STEP_BACK: usize = 8;
/// Closest approach between atoms of different units more than two bonds apart, as a fraction of
/// the sum of their van der Waals radii.
pub const CONTACT_FRACTION: f64 = 0.7;
/// Closest approach (Å) of two heavy atoms of different units.
pub const HEAVY_MIN: f64 = 1.5;
/// Excluded volume between units more than [`LOCAL_UNITS`] apart along the chain, as a fraction of
/// the sum of van der Waals radii: 2^(−1/6), the diameter σ at which a Lennard-Jones pair whose
/// minimum lies at the van der Waals distance turns repulsive (the hard core of the
/// Weeks–Chandler–Andersen split). A chain in vacuum or a good solvent swells to ν ≈ 0.59 by
/// the volume units far apart along it exclude each other; at [`CONTACT_FRACTION`] alone (a bound
/// against overlap, not a repulsion) it stays near ideal (over seeds 1–20, ν 0.49 for PEO; with
/// it 0.54).
pub const EXCLUDED_FRACTION: f64 = 0.890_898_718_140_339_3;
/// Units this many or more apart along the chain keep [`excluded_distance`] from each other
/// (nearer units are the chain's local structure, held only to [`contact_bound`]: at two units
/// apart the excluded distance stiffens polystyrene into a rod, R²/((N − 1)b²) 28 at 200 units).
pub const FAR_UNITS: u32 = LOCAL_UNITS + 1;
/// Kept above the bound while building (Å), so that f32 rounding cannot cross it.
pub const CONTACT_MARGIN: f64 = 1e-3;
/// Seed stream of the first walk (other tools use stream 0 of the same seed); a walk again uses
/// the next.
pub(super) const STREAM: u64 = 12;
/// Most walks of one chain (see [`super::build::build_chain`]).
pub const WALKS: u64 = 3;

/// The smallest allowed distance (Å) between atoms of atomic numbers `a` and `b` of different
/// units, `bonds_apart` bonds from each other along the chain: none within two bonds (set by the
/// junction's length and angle), else [`CONTACT_FRACTION`] × the sum of their van der Waals radii
/// (Alvarez 2013: C–C 2.48 Å, C–H 2.08 Å, H–H 1.68 Å), and at least [`HEAVY_MIN`] for two heavy
/// atoms. Pairs within one unit are the monomer's own geometry and are not judged.
pub fn contact_bound(a: u8, b: u8, bonds_apart: u32) -> f64 {
    if bonds_apart <= 2 {
        return 0.0;
    }
    let radii = vdw_sum(a, b);
    let heavy = if a > 1 && b > 1 { HEAVY_MIN } else { 0.0 };
    (CONTACT_FRACTION * radii).max(heavy)
}

/// The excluded distance (Å) between atoms of atomic numbers `a` and `b` of units more than
/// [`LOCAL_UNITS`] apart, which the walk keeps when it places a unit: [`EXCLUDED_FRACTION`] × the
/// sum of their van der Waals radii, and never less than [`contact_bound`].
pub fn excluded_distance(a: u8, b: u8) -> f64 {
    let radii = vdw_sum(a, b);
    (EXCLUDED_FRACTION * radii).max(contact_bound(a, b, 3))
}

/// The walk's own allowance at crowding level `level` (1–4) for pairs of units within
/// [`LOCAL_UNITS`].
fn lax_bound(a: u8, b: u8, level: usize) -> f64 {
    LAX_FRACTIONS[level - 1] * vdw_sum(a, b)
}

/// The sum (Å) of the van der Waals radii of atomic numbers `a` and `b` (the table's default for
/// an atomic number beyond it).
fn vdw_sum(a: u8, b: u8) -> f64 {
    vdw_radius(a).unwrap_or(DEFAULT_VDW_RADIUS) + vdw_radius(b).unwrap_or(DEFAULT_VDW_RADIUS)
}

/// The crowding level (1–4, an index into [`LAX_FRACTIONS`] + 1) of a unit's `draw`-th crowded
/// draw, by [`LAX_DRAWS`].
fn lax_level(draw: usize) -> usize {
    let mut end = 0;
    for (level, &draws) in LAX_DRAWS.iter().enumerate() {
        end += draws;
        if draw < end {
            return level + 1;
        }
    }
    LAX_DRAWS.len()
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
    /// Per atom: the monomer atom it is.
    pub origin: Vec<u32>,
    /// Units placed with the local allowance (their neighbourhoods are relaxed after the walk).
    pub crowded: Vec<u32>,
    /// Atoms moved by [`super::relax`] after the walk.
    pub relaxed: usize,
    /// Units removed by step-backs, in all.
    pub backtracks: usize,
    /// Draws made, in all.
    pub trials: usize,
}

/// One placed unit.
struct Placed {
    /// First chain index of the unit.
    start: usize,
    /// Chain index of each monomer atom (`u32::MAX` for a hydrogen given up).
    index: Vec<u32>,
    /// The tail hydrogen given up and the turn of its place (where the next unit goes), if any.
    tail_give: Option<(usize, usize)>,
    /// Whether the unit is the monomer's mirror image.
    mirrored: bool,
    /// Rotation applied to the (possibly mirrored) template.
    rotation: Mat3,
    /// For a monomer with backbone bonds (whose turns move its tail): the direction of the bond
    /// to the next unit, as placed.
    onward: Option<[f64; 3]>,
}

/// What the contact check needs of the monomer and the chain so far.
struct Judge<'a> {
    monomer: &'a Monomer,
    /// Per pair of monomer atoms (t × n + a): (bound + margin)².
    strict2: Vec<f64>,
    /// Per pair: ([`excluded_distance`] + margin)², for units more than [`LOCAL_UNITS`] apart.
    far2: Vec<f64>,
    /// Per crowding level 1–4, per pair: the local allowance, squared.
    lax2: Vec<Vec<f64>>,
    /// Bonds from a unit's head to its tail.
    span: u32,
    grid: Grid,
}

impl Judge<'_> {
    /// The squared bound between monomer atom `t` and monomer atom `a`, `apart` bonds apart
    /// (`None` within two bonds).
    #[inline(always)]
    fn bound2(&self, t: usize, a: usize, apart: u32, between: u32, lax: usize) -> Option<f64> {
        let n = self.monomer.graph.elements.len();
        match apart {
            0..=2 => None,
            _ if lax > 0 && between <= LOCAL_UNITS => {
                Some(self.lax2[lax.min(LAX_FRACTIONS.len()) - 1][t * n + a])
            }
            _ if between >= FAR_UNITS && lax != CORNERED => Some(self.far2[t * n + a]),
            _ => Some(self.strict2[t * n + a]),
        }
    }

    /// Whether monomer atom `a` of unit `k`, at `p`, comes closer than its bound to an atom of an
    /// earlier unit.
    #[inline(always)]
    fn touches(&self, chain: &Chain, k: usize, a: usize, p: [f64; 3], lax: usize) -> bool {
        let m = self.monomer;
        let (origin, unit, positions) = (&chain.origin[..], &chain.unit[..], &chain.positions[..]);
        self.grid.any_near(p, |b| {
            let t = origin[b] as usize;
            // Bonds along the chain: from t to its unit's tail, the junctions, the units between,
            // and from unit k's head to a.
            let between = (k - unit[b] as usize) as u32;
            let apart = m.from_tail[t] + m.from_head[a] + between + (between - 1) * self.span;
            let Some(bound2) = self.bound2(t, a, apart, between, lax) else {
                return false;
            };
            let d = sub(p, positions[b]);
            dot(&d, &d) < bound2
        })
    }

    /// Whether the next unit's head atom has room where unit `k`'s tail hydrogen `tail_h` points
    /// (at the junction length, judged as that element against every placed atom and against
    /// unit `k`'s own atoms more than two bonds from its tail): a unit that leaves none is a dead
    /// end met one unit late.
    #[allow(clippy::too_many_arguments)]
    fn room_ahead(
        &self,
        chain: &Chain,
        k: usize,
        tail_h: Option<(usize, usize)>,
        p0: &[[f64; 3]],
        candidate: &[[f64; 3]],
        rotation: &Mat3,
        lax: usize,
    ) -> bool {
        let Some((h, twist)) = tail_h else {
            return true;
        };
        let m = self.monomer;
        let d = mat_vec(
            rotation,
            &bond_direction(p0, h, m.tail, m.tail_next, m.tail_angle, twist),
        );
        let t = candidate[m.tail];
        let ahead = [0, 1, 2].map(|i| t[i] + m.bond_length * d[i]);
        // As the head atom of unit k + 1: its bounds are those of template atom `head`.
        if self.touches(chain, k + 1, m.head, ahead, lax) {
            return false;
        }
        (0..candidate.len())
            .filter(|&a| a != h && m.from_tail[a] >= 2)
            .all(|a| {
                let e = sub(ahead, candidate[a]);
                self.bound2(a, m.head, m.from_tail[a] + 1, 1, lax)
                    .is_none_or(|b2| dot(&e, &e) >= b2)
            })
    }
}

/// Where the bond from `atom` of a unit at `p0` goes when it gives up hydrogen `h`: along the
/// hydrogen (turned `twist` × 120° about the bond to `next`, the atom's backbone neighbour, for an
/// OH-like end whose one hydrogen may stand in any of the three staggered places), then turned in
/// the plane of the hydrogen and `next` to the bond angle `angle` (degrees) with it, when there
/// is one.
fn bond_direction(
    p0: &[[f64; 3]],
    h: usize,
    atom: usize,
    next: usize,
    angle: Option<f64>,
    twist: usize,
) -> [f64; 3] {
    let b = normalised(sub(p0[next], p0[atom]));
    let mut u = normalised(sub(p0[h], p0[atom]));
    if twist > 0 {
        let turn = if twist == 1 { 120.0f64 } else { -120.0 };
        u = mat_vec(&axis_angle(b, turn.to_radians()), &u);
    }
    let Some(angle) = angle else {
        return u;
    };
    let now = dot(&b, &u).clamp(-1.0, 1.0).acos();
    let axis = normalised(cross(&b, &u));
    mat_vec(&axis_angle(axis, angle.to_radians() - now), &u)
}

/// Turns `group` (beyond `end` from `next`) of `p` by `twist` × 120° about the bond `next`–`end`,
/// as [`bond_direction`] turns the end's hydrogen.
fn turn_group(p: &mut [[f64; 3]], end: usize, next: usize, group: &[usize], twist: usize) {
    let b = normalised(sub(p[next], p[end]));
    let turn = if twist == 1 { 120.0f64 } else { -120.0 };
    let r = axis_angle(b, turn.to_radians());
    let centre = p[end];
    for &a in group {
        let v = mat_vec(&r, &sub(p[a], centre));
        p[a] = [centre[0] + v[0], centre[1] + v[1], centre[2] + v[2]];
    }
}

/// The rule a unit's own turns keep: no two atoms of the unit more than three bonds apart come
/// closer than they were in the unit as drawn (`original`) and than [`contact_bound`] (`bound2`:
/// per pair of monomer atoms, i × n + j, squared, Å²).
struct OwnPairs<'a> {
    monomer: &'a Monomer,
    original: &'a [[f64; 3]],
    bound2: &'a [f64],
}

impl OwnPairs<'_> {
    /// Whether atoms `i` and `j` of `p` break the rule.
    fn too_close(&self, p: &[[f64; 3]], i: usize, j: usize) -> bool {
        let n = p.len();
        if self.monomer.apart[i * n + j] <= 3 {
            return false;
        }
        let (now, then) = (sub(p[i], p[j]), sub(self.original[i], self.original[j]));
        dot(&now, &now) < dot(&then, &then).min(self.bound2[i * n + j])
    }

    /// Whether `moved` (atoms of `p` just turned together about one bond) break the rule with an
    /// atom that did not move: only pairs across the bond change. `mark`: a buffer.
    fn clash_across(&self, p: &[[f64; 3]], moved: &[usize], mark: &mut Vec<bool>) -> bool {
        mark.clear();
        mark.resize(p.len(), false);
        for &a in moved {
            mark[a] = true;
        }
        moved
            .iter()
            .any(|&a| (0..p.len()).any(|b| !mark[b] && self.too_close(p, a, b)))
    }

    /// Turns `atoms` (the first on the axis) of `p` by `angle` (radians) about the bond `axis`
    /// (from, to), and back if that breaks the rule.
    fn turn_unless_it_clashes(
        &self,
        p: &mut [[f64; 3]],
        axis: (usize, usize),
        atoms: &[usize],
        angle: f64,
        scratch: &mut TurnScratch,
    ) {
        scratch.before.clear();
        scratch.before.extend_from_slice(p);
        turn_atoms(p, axis, atoms, angle);
        if self.clash_across(p, &atoms[1..], &mut scratch.moved) {
            p.copy_from_slice(&scratch.before);
        }
    }

    /// Turns each side group of `p` (a copy of `original`, its end groups in their drawn places
    /// and its backbone bonds turned) by a random angle, one draw of `rng` per group. Where the
    /// turns together break the rule, they are made again one group at a time from `p` as it was,
    /// each kept only if it keeps the rule: a long side chain (an oligo(ethylene glycol)
    /// methacrylate's ten rotatable bonds) folds onto itself under almost every set of random
    /// turns, and the unit would otherwise keep its one conformer.
    fn turn_side_groups(&self, p: &mut [[f64; 3]], rng: &mut Rng, scratch: &mut TurnScratch) {
        let n = p.len();
        scratch.before.clear();
        scratch.before.extend_from_slice(p);
        let mut angles = std::mem::take(&mut scratch.angles);
        angles.clear();
        for g in &self.monomer.side_groups {
            let angle = rng.uniform() * std::f64::consts::TAU;
            angles.push(angle);
            turn_atoms(p, (g.root, g.pivot), &g.atoms, angle);
        }
        if (0..n).any(|i| (i + 1..n).any(|j| self.too_close(p, i, j))) {
            p.copy_from_slice(&scratch.before);
            for (g, &angle) in self.monomer.side_groups.iter().zip(&angles) {
                self.turn_unless_it_clashes(p, (g.root, g.pivot), &g.atoms, angle, scratch);
            }
        }
        scratch.angles = angles;
    }

    /// Sets the torsion of each inner backbone bond of `p` ([`super::unit::BackboneBond`]) to one
    /// drawn from the staggered wells (two draws of `rng` per bond), head side first, turning the
    /// atoms beyond it; a turn that breaks the rule is undone (the unit keeps its own torsion
    /// there).
    fn turn_backbone(&self, p: &mut [[f64; 3]], rng: &mut Rng, scratch: &mut TurnScratch) {
        for b in &self.monomer.backbone_bonds {
            let wanted = Torsion::Staggered
                .draw(rng.uniform(), rng.uniform(), 1.0)
                .to_radians();
            let now = dihedral(p[b.before], p[b.near], p[b.far], p[b.after]);
            self.turn_unless_it_clashes(p, (b.near, b.far), &b.atoms, wanted - now, scratch);
        }
    }
}

/// Buffers of [`OwnPairs`]' turns, kept across draws.
#[derive(Default)]
struct TurnScratch {
    before: Vec<[f64; 3]>,
    angles: Vec<f64>,
    moved: Vec<bool>,
}

/// Turns `atoms` of `p` (the first, on the axis, stays) by `angle` (radians) about the bond
/// `axis` (from, to).
fn turn_atoms(p: &mut [[f64; 3]], (from, to): (usize, usize), atoms: &[usize], angle: f64) {
    let r = axis_angle(normalised(sub(p[to], p[from])), angle);
    let centre = p[to];
    for &a in &atoms[1..] {
        let v = mat_vec(&r, &sub(p[a], centre));
        p[a] = [centre[0] + v[0], centre[1] + v[1], centre[2] + v[2]];
    }
}

/// The walk of [`super::build::build_chain`] with the random stream `rng`.
pub(super) fn grow(
    monomer: &Monomer,
    units: usize,
    mut rng: Rng,
    control: &PackControl,
) -> Result<Chain, Stop> {
    let template = &monomer.molecule.template;
    let n = template.elements.len();
    let total = monomer.chain_atoms(units);
    let name = &monomer.molecule.name;
    let largest = template
        .elements
        .iter()
        .flat_map(|&a| {
            template
                .elements
                .iter()
                .map(move |&b| excluded_distance(a, b))
        })
        .fold(0.0, f64::max);
    let squared = |f: &dyn Fn(u8, u8) -> f64| -> Vec<f64> {
        (0..n * n)
            .map(|k| {
                let b = f(template.elements[k / n], template.elements[k % n]) + CONTACT_MARGIN;
                b * b
            })
            .collect()
    };
    // The unit's own pairs, judged after its backbone bonds and side groups turn.
    let own2: Vec<f64> = (0..n * n)
        .map(|k| contact_bound(template.elements[k / n], template.elements[k % n], 3).powi(2))
        .collect();
    let mut judge = Judge {
        monomer,
        strict2: squared(&|a, b| contact_bound(a, b, 3)),
        far2: squared(&excluded_distance),
        lax2: (1..=LAX_FRACTIONS.len())
            .map(|level| squared(&|a, b| lax_bound(a, b, level)))
            .collect(),
        span: monomer.from_head[monomer.tail],
        grid: Grid::new(largest + CONTACT_MARGIN, total),
    };
    let torsion = monomer.torsion;

    let mut chain = Chain {
        elements: Vec::with_capacity(total),
        positions: Vec::with_capacity(total),
        bonds: Vec::new(),
        bond_orders: Vec::new(),
        unit: Vec::with_capacity(total),
        origin: Vec::with_capacity(total),
        crowded: Vec::new(),
        relaxed: 0,
        backtracks: 0,
        trials: 0,
    };
    let mut placed: Vec<Placed> = Vec::with_capacity(units);
    let mut candidate = vec![[0.0; 3]; n];
    // The template with its end groups in their drawn places and (crowded draws) its side groups
    // turned.
    let mut turned = vec![[0.0; 3]; n];
    let mut turn_scratch = TurnScratch::default();
    // The unit's atoms in the order a draw's contacts are judged: nearest the junction first,
    // then each atom that clashed moved to the front.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&a| monomer.from_head[a]);
    let budget = TRIAL_BUDGET.saturating_mul(units);
    let mut furthest = 0;
    // Dead ends met at each unit since the walk last got past it: the step back doubles with each.
    let mut dead_ends = vec![0u32; units];
    let report_every = (units / 200).max(1);
    while placed.len() < units {
        if control.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Stop::Cancelled);
        }
        let k = placed.len();
        let last = k + 1 == units;
        let mut accepted = None;
        // After [`CROWDED_RUN`] units in a row that none of their strict draws could place,
        // the next unit makes only [`SHORT_STRICT`] and [`SHORT_TURNED`] of them before its
        // crowded draws: a monomer that crowded (PMMA: 193 of 200 units) otherwise spends 64
        // draws a unit, and as many again at each dead end, on draws that hardly ever pass. Its
        // crowded draws skip the two loosest levels too, where PMMA's pass 0.6 % and 1.5 % of the
        // time (draws 6 200 -> 4 700 a chain, walk ~23 % and the chain ~14 % faster natively,
        // its relaxation no slower).
        let run = (0..k)
            .rev()
            .zip(chain.crowded.iter().rev())
            .take_while(|&(u, &c)| u as u32 == c)
            .count();
        let schedule: Box<dyn Iterator<Item = usize>> = if run >= CROWDED_RUN {
            Box::new(
                (0..SHORT_STRICT)
                    .chain(STRICT_TRIALS..STRICT_TRIALS + SHORT_TURNED)
                    .chain(TURNED_TRIALS + LAX_DRAWS[0] + LAX_DRAWS[1]..TRIALS),
            )
        } else {
            Box::new(0..TRIALS)
        };
        // Where unit k's head atom goes, the same for every draw: the previous unit's tail and
        // its reference atom, the direction of the junction bond from the tail, and the head's
        // place along it.
        let junction = placed.last().map(|previous| {
            let tail_at = chain.positions[previous.index[monomer.tail] as usize];
            let reference_at = chain.positions[previous.index[monomer.tail_reference] as usize];
            let (tail_h_prev, tail_twist) = previous
                .tail_give
                .expect("an inner unit gives up its tail H");
            let direction = previous.onward.unwrap_or_else(|| {
                mat_vec(
                    &previous.rotation,
                    &bond_direction(
                        monomer.positions(previous.mirrored),
                        tail_h_prev,
                        monomer.tail,
                        monomer.tail_next,
                        monomer.tail_angle,
                        tail_twist,
                    ),
                )
            });
            let head_at = [0, 1, 2].map(|i| tail_at[i] + monomer.bond_length * direction[i]);
            (tail_at, reference_at, direction, head_at)
        });
        for trial in schedule {
            chain.trials += 1;
            // Draws in three phases: as the unit is, then with its side groups turned, then with
            // neighbouring units allowed closer (to be relaxed after the walk).
            let turn = trial >= STRICT_TRIALS;
            let lax = match trial {
                ..TURNED_TRIALS => 0,
                _ => match lax_level(trial - TURNED_TRIALS) {
                    level if level == LAX_FRACTIONS.len() && dead_ends[k] >= CORNERED_DEAD_ENDS => {
                        CORNERED
                    }
                    level => level,
                },
            };
            // The hydrogen each end gives up, and for an OH-like end which of its three staggered
            // places the bond takes.
            let mut give = |hydrogens: &[usize], group: &Option<Vec<usize>>| {
                let h = hydrogens[rng.below(hydrogens.len())];
                (h, if group.is_some() { rng.below(3) } else { 0 })
            };
            let head_give = (k > 0).then(|| give(&monomer.head_hydrogens, &monomer.head_group));
            let tail_give = (!last).then(|| give(&monomer.tail_hydrogens, &monomer.tail_group));
            let (head_h, tail_h) = (head_give.map(|g| g.0), tail_give.map(|g| g.0));
            let mirrored = monomer.mirror && rng.uniform() < 0.5;
            let template_at = monomer.positions(mirrored);
            turned.copy_from_slice(template_at);
            // The end groups in their drawn places, then (crowded draws) the side groups turned.
            for (give, end, next, group) in [
                (
                    head_give,
                    monomer.head,
                    monomer.head_next,
                    &monomer.head_group,
                ),
                (
                    tail_give,
                    monomer.tail,
                    monomer.tail_next,
                    &monomer.tail_group,
                ),
            ] {
                if let (Some((_, twist @ 1..)), Some(group)) = (give, group) {
                    turn_group(&mut turned, end, next, group, twist);
                }
            }
            let own = OwnPairs {
                monomer,
                original: template_at,
                bound2: &own2,
            };
            if !monomer.backbone_bonds.is_empty() {
                own.turn_backbone(&mut turned, &mut rng, &mut turn_scratch);
            }
            if turn && !monomer.side_groups.is_empty() {
                own.turn_side_groups(&mut turned, &mut rng, &mut turn_scratch);
            }
            let p0: &[[f64; 3]] = &turned;
            let rotation = match (head_give, junction) {
                (Some((head_h, _)), Some((tail_at, reference_at, direction, head_at))) => {
                    let base = align(
                        bond_direction(
                            p0,
                            head_h,
                            monomer.head,
                            monomer.head_next,
                            monomer.head_angle,
                            0,
                        ),
                        [-direction[0], -direction[1], -direction[2]],
                    );
                    let head_x = p0[monomer.head];
                    let r = mat_vec(&base, &sub(p0[monomer.head_reference], head_x));
                    let head_reference_at = [0, 1, 2].map(|i| head_at[i] + r[i]);
                    let now = dihedral(reference_at, tail_at, head_at, head_reference_at);
                    let widen = if lax > 0 { LAX_WIDEN } else { 1.0 };
                    let wanted = torsion
                        .draw(rng.uniform(), rng.uniform(), widen)
                        .to_radians();
                    let rotation = mat_mul(&axis_angle(direction, wanted - now), &base);
                    for (a, c) in candidate.iter_mut().enumerate() {
                        let r = mat_vec(&rotation, &sub(p0[a], head_x));
                        *c = [head_at[0] + r[0], head_at[1] + r[1], head_at[2] + r[2]];
                    }
                    // The atoms in `order`, the last to clash first: most draws of a crowded
                    // unit fail, and on the same few atoms. Whether one clashes does not
                    // depend on the order, so the chain is the same.
                    let clash = order.iter().position(|&a| {
                        Some(a) != tail_h
                            && a != head_h
                            && judge.touches(&chain, k, a, candidate[a], lax)
                    });
                    if let Some(i) = clash {
                        order[..=i].rotate_right(1);
                        continue;
                    }
                    rotation
                }
                _ => {
                    candidate.copy_from_slice(p0);
                    IDENTITY
                }
            };
            let ahead = tail_h.map(|h| (h, 0));
            if !judge.room_ahead(&chain, k, ahead, p0, &candidate, &rotation, lax) {
                continue;
            }
            let onward = (!monomer.backbone_bonds.is_empty())
                .then_some(tail_h)
                .flatten()
                .map(|h| {
                    let d = bond_direction(
                        p0,
                        h,
                        monomer.tail,
                        monomer.tail_next,
                        monomer.tail_angle,
                        0,
                    );
                    mat_vec(&rotation, &d)
                });
            accepted = Some((rotation, head_h, tail_give, mirrored, lax, onward));
            break;
        }
        match accepted {
            Some((rotation, head_h, tail_give, mirrored, lax, onward)) => {
                let tail_h = tail_give.map(|g| g.0);
                let start = chain.elements.len();
                let mut index = vec![u32::MAX; n];
                for a in (0..n).filter(|&a| Some(a) != head_h && Some(a) != tail_h) {
                    let i = chain.elements.len() as u32;
                    index[a] = i;
                    chain.elements.push(template.elements[a]);
                    chain.positions.push(candidate[a]);
                    chain.unit.push(k as u32);
                    chain.origin.push(a as u32);
                    judge.grid.insert(candidate[a], i);
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
                if let Some(previous) = placed.last() {
                    chain
                        .bonds
                        .push([previous.index[monomer.tail], index[monomer.head]]);
                    chain.bond_orders.push(1);
                }
                if lax > 0 {
                    chain.crowded.push(k as u32);
                }
                dead_ends[k] = 0;
                placed.push(Placed {
                    start,
                    index,
                    tail_give,
                    mirrored,
                    rotation,
                    onward,
                });
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
                if chain.trials >= budget {
                    return Err(Stop::Failed(format!(
                        "Could not grow the chain of {name} beyond {furthest} of {units} units without atoms of different units closer than {CONTACT_FRACTION} of their van der Waals distance; try another seed or fewer units."
                    )));
                }
                // Step back: 1, 2, 4, … units after repeated dead ends at this unit.
                let back = (1usize << dead_ends[k].min(3)).min(MAX_STEP_BACK).min(k);
                dead_ends[k] += 1;
                for _ in 0..back {
                    let removed = placed.pop().expect("back ≤ k");
                    chain.backtracks += 1;
                    for i in (removed.start..chain.elements.len()).rev() {
                        judge.grid.remove_last(i as u32);
                    }
                    chain.elements.truncate(removed.start);
                    chain.positions.truncate(removed.start);
                    chain.unit.truncate(removed.start);
                    chain.origin.truncate(removed.start);
                    let gone = placed.len() as u32;
                    while chain.crowded.last().is_some_and(|&u| u >= gone) {
                        chain.crowded.pop();
                    }
                    while chain.bonds.last().is_some_and(|b| {
                        b[0] as usize >= removed.start || b[1] as usize >= removed.start
                    }) {
                        chain.bonds.pop();
                        chain.bond_orders.pop();
                    }
                }
            }
        }
    }
    Ok(chain)
}
