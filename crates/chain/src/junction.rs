//! The chemistry of a junction (the bond from one unit's tail atom to the next unit's head atom):
//! what class each end is in the joined chain, how long the bond is, and which torsions it takes.
//!
//! Length. A rule of the two atoms' surroundings, fitted on RDKit MMFF94-optimised model
//! compounds by `scripts/make_junction_lengths.py` (its table is [`super::junction_lengths`]):
//! the classes of the two ends set a base length, each heavy substituent of an end shifts it (by
//! its own class, and by the pair of end classes), and each N, O, F, Si, S, Cl, … two bonds out
//! shifts it again. So a C(=O)–O ester bond comes out near 1.36 Å where an ether C–O is near 1.43,
//! an amide C(=O)–N near 1.38, a Si–O near 1.67, a CH2–C(CH3)2R bond 0.03 Å longer than a CH2–CH2
//! one. A pair of classes the model compounds never made falls back to the sum of covalent radii.
//!
//! Angles. The hydrogen each end gives up shows where the bond goes (its side and its turn about
//! the end's backbone bond); the angle it makes with the backbone bond is the model compounds' for
//! the end's class, its partner's and its neighbour's (Si–O–Si 140°, where Si–O–H is 117°).
//!
//! Torsion. Each junction kind has wells of the backbone torsion (see [`Torsion`]); the reference
//! atom of an sp2 end is its double-bond partner, of any other end its neighbour on the way to the
//! other junction atom of its own unit.

pub use super::classes::{Class, Substituent};
use super::junction_lengths::{
    ANGLE, ANGLE_NEIGHBOUR, ANGLE_PAIR, BASE, PAIR_SHIFT, SECOND, SHIFT,
};
use megane_elements::covalent_radius;

/// A molecule's bond graph: per atom its neighbours with bond orders (1–3, 4 aromatic).
#[derive(Debug, Clone)]
pub struct Graph {
    /// Atomic numbers.
    pub elements: Vec<u8>,
    /// Per atom: (neighbour, bond order).
    pub neighbours: Vec<Vec<(usize, u8)>>,
}

impl Graph {
    /// From atomic numbers, 0-based bonds and their orders (parallel to `bonds`).
    pub fn new(elements: &[u8], bonds: &[[u32; 2]], orders: &[u8]) -> Graph {
        let mut neighbours = vec![Vec::new(); elements.len()];
        for (&[i, j], &order) in bonds.iter().zip(orders) {
            neighbours[i as usize].push((j as usize, order));
            neighbours[j as usize].push((i as usize, order));
        }
        Graph {
            elements: elements.to_vec(),
            neighbours,
        }
    }

    /// 1 (sp), 2 (sp2) or 3 (sp3), from the orders of the atom's bonds.
    pub fn hybridisation(&self, atom: usize) -> u8 {
        let orders = self.neighbours[atom].iter().map(|&(_, o)| o);
        let doubles = orders.clone().filter(|&o| o == 2).count();
        if orders.clone().any(|o| o == 3) || doubles >= 2 {
            1
        } else if doubles == 1 || orders.clone().any(|o| o == 4) {
            2
        } else {
            3
        }
    }

    /// The atom's double-bond (or aromatic-bond) partner: the reference of an sp2 end's torsion.
    pub fn pi_partner(&self, atom: usize) -> Option<usize> {
        self.neighbours[atom]
            .iter()
            .find(|&&(_, o)| o == 2 || o == 4)
            .map(|&(n, _)| n)
    }

    /// Whether the bond `a`–`b` is in a ring: `b` is reached from `a` without it.
    pub fn in_ring(&self, a: usize, b: usize) -> bool {
        let mut seen = vec![false; self.elements.len()];
        let mut stack = vec![a];
        seen[a] = true;
        while let Some(x) = stack.pop() {
            for &(y, _) in &self.neighbours[x] {
                if (x, y) == (a, b) || seen[y] {
                    continue;
                }
                if y == b {
                    return true;
                }
                seen[y] = true;
                stack.push(y);
            }
        }
        false
    }

    fn substituent(&self, atom: usize) -> Substituent {
        use Substituent as S;
        match self.elements[atom] {
            6 => match self.hybridisation(atom) {
                3 => S::C3,
                2 => S::C2,
                _ => S::C1,
            },
            7 => S::N,
            8 => S::O,
            9 => S::F,
            17 => S::Cl,
            35 => S::Br,
            53 => S::I,
            16 => S::S,
            14 => S::Si,
            15 => S::P,
            _ => S::Other,
        }
    }
}

/// One end of a junction as it is in the chain: an atom of a unit, the hydrogen it gave up, and
/// what it is bonded to across the junction.
#[derive(Debug, Clone, Copy)]
pub struct End {
    /// The junction atom (template index).
    pub atom: usize,
    /// The hydrogen it gave up (not a neighbour in the chain).
    pub gone: usize,
    /// The other end's atom in its own unit (its hybridisation counts for conjugation).
    pub partner: usize,
    /// The unit's other junction atom, bonded across its own other junction inside a chain (to an
    /// atom of element `beyond`); `None` at a chain end.
    pub other_junction: Option<(usize, u8)>,
}

/// The class of an end in the joined chain.
pub fn class(graph: &Graph, end: &End) -> Class {
    let atom = end.atom;
    let h = graph.hybridisation(atom);
    let z = graph.elements[atom];
    let conjugated = || {
        graph.hybridisation(end.partner) < 3
            || graph.neighbours[atom]
                .iter()
                .any(|&(n, _)| n != end.gone && graph.hybridisation(n) < 3)
    };
    match (z, h) {
        (6, 3) => Class::C3,
        (6, 1) => Class::C1,
        (6, _) => {
            let hetero = graph.neighbours[atom]
                .iter()
                .any(|&(n, o)| o == 2 && graph.elements[n] != 6 && !graph.in_ring(atom, n));
            if hetero {
                Class::C2x
            } else {
                Class::C2
            }
        }
        (7, 3) if conjugated() => Class::N3c,
        (7, 3) => Class::N3,
        (8, 3) if conjugated() => Class::O3c,
        (8, 3) => Class::O3,
        (16, 3) if conjugated() => Class::S3c,
        (16, 3) => Class::S3,
        (14, 3) => Class::Si3,
        _ => Class::Other,
    }
}

/// The length (Å) of the junction bond between the ends `a` and `b` (the tail of one unit and the
/// head of the next; the rule is symmetric).
pub fn bond_length(graph: &Graph, a: &End, b: &End) -> f64 {
    let (ka, kb) = (class(graph, a), class(graph, b));
    let same = |x: Class, y: Class| (x, y) == (ka, kb) || (x, y) == (kb, ka);
    let Some(&(_, _, base)) = BASE.iter().find(|&&(x, y, _)| same(x, y)) else {
        return fallback_length(graph, a.atom, b.atom);
    };
    let mut length = f64::from(base);
    for (end, k) in [(a, ka), (b, kb)] {
        for &(s, _) in &graph.neighbours[end.atom] {
            if s == end.gone || graph.elements[s] == 1 {
                continue;
            }
            let sub = graph.substituent(s);
            length += SHIFT
                .iter()
                .filter(|&&(c, t, _)| c == k && t == sub)
                .map(|&(_, _, w)| f64::from(w))
                .sum::<f64>();
            length += PAIR_SHIFT
                .iter()
                .filter(|&&(x, y, c, t, _)| same(x, y) && c == k && t == sub)
                .map(|&(_, _, _, _, w)| f64::from(w))
                .sum::<f64>();
            // Two bonds out: the substituent's other neighbours, and what it bonds to across the
            // unit's other junction when it is that junction's atom.
            let across = end.other_junction.filter(|&(j, _)| j == s).map(|(_, z)| z);
            let beyond = graph.neighbours[s]
                .iter()
                .filter(|&&(t, _)| t != end.atom)
                .map(|&(t, _)| graph.elements[t])
                .chain(across);
            for z in beyond.filter(|&z| z != 1 && z != 6) {
                length += SECOND
                    .iter()
                    .filter(|&&(c, e, _)| c == k && e == z)
                    .map(|&(_, _, w)| f64::from(w))
                    .sum::<f64>();
            }
        }
    }
    length
}

/// The bond angle (degrees) at junction end `end` between the junction bond (to `other`) and its
/// neighbour `neighbour`, as the model compounds have it (MMFF94): C–O–C 112°, not C–O–H 108°;
/// Si–O–Si 140°, not Si–O–H 117°. `None` for classes the model compounds never joined.
pub fn bond_angle(graph: &Graph, end: &End, other: &End, neighbour: usize) -> Option<f64> {
    let (k, o) = (class(graph, end), class(graph, other));
    let s = graph.substituent(neighbour);
    // A ring bond's order counts as 1: which of a ring's bonds a Kekulé structure makes double is
    // arbitrary.
    let order = graph.neighbours[end.atom]
        .iter()
        .find(|&&(x, _)| x == neighbour)
        .map_or(1, |&(_, order)| order);
    let order = if graph.in_ring(end.atom, neighbour) {
        1
    } else {
        order
    };
    ANGLE
        .iter()
        .find(|&&(a, b, c, d, _)| (a, b, c, d) == (k, o, s, order))
        .map(|&(.., v)| v)
        .or_else(|| {
            ANGLE_NEIGHBOUR
                .iter()
                .find(|&&(a, c, d, _)| (a, c, d) == (k, s, order))
                .map(|&(.., v)| v)
        })
        .or_else(|| {
            ANGLE_PAIR
                .iter()
                .find(|&&(a, b, _)| order == 1 && (a, b) == (k, o))
                .map(|&(.., v)| v)
        })
        .map(f64::from)
}

/// The sum of the two atoms' covalent radii (Cordero 2008; sp2 and sp carbon by its own radius).
fn fallback_length(graph: &Graph, a: usize, b: usize) -> f64 {
    let radius = |atom: usize| match (graph.elements[atom], graph.hybridisation(atom)) {
        (6, 2) => 0.73,
        (6, 1) => 0.69,
        (z, _) => covalent_radius(z).unwrap_or(1.5),
    };
    radius(a) + radius(b)
}

/// One well of a torsion: its centre and half-width (degrees) and how often it is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Well {
    /// Centre, degrees.
    pub centre: f64,
    /// Half-width, degrees: the torsion is drawn uniformly within centre ± this.
    pub half_width: f64,
    /// Relative weight.
    pub weight: f64,
}

/// The kind of a junction, which sets the wells its backbone torsion is drawn from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Torsion {
    /// Both ends sp3 (C, N, O, S; not Si): staggered, trans (180°) twice as likely as each gauche
    /// (±60°), ± 15° (E(gauche) − E(trans) ≈ 0.4 kcal/mol at 300 K, as in polyethylene).
    Staggered,
    /// An sp2 carbon to an sp3 end: the sp3 end's backbone bond eclipses the double bond (0°) or
    /// is skew to it (±120°), equally, ± 15° (propene, 1-butene).
    Allylic,
    /// A carbonyl-like carbon (`C2x`) to a conjugated N, O or S: amide, ester, carbonate,
    /// thioester. Planar and trans in the backbone (the backbone atom across the bond cis to the
    /// C=O), ± 20°.
    AmideEster,
    /// Two conjugated ends otherwise (aryl–aryl, diene, aryl ether, aryl ketone): planar, s-trans
    /// and s-cis equally, ± 20°.
    Planar,
    /// A lone-pair atom (O, N, S) conjugated on both sides, bridging to an sp2 end: a diaryl
    /// ether, sulfide or amine. Its two rings cannot both lie in the C–X–C plane (their ortho
    /// hydrogens, or a 2,6-dimethylphenylene's methyls, meet): diphenyl ether's turn some 40° each
    /// way, and with the unit's own side in the plane, as a phenol's conformer holds it, the ring
    /// across the junction stands across it. So out of the plane, either way: 90° ± 50°.
    Twisted,
    /// A silicon or an sp carbon end: rotation about Si–O and Si–C is nearly free (barriers below
    /// 2 kcal/mol) and about a linear end meaningless, so any torsion, uniformly.
    Free,
}

impl Torsion {
    /// The junction kind of ends of classes `a` and `b` (`a_sp2` and `b_sp2`: whether the end is an
    /// sp2 atom).
    /// A [`Torsion::Planar`] junction whose lone-pair end is conjugated on its own side too is
    /// [`Torsion::Twisted`]: see [`Torsion::bridged`].
    pub fn of(a: Class, b: Class) -> Torsion {
        use Class::*;
        let sp2 = |k: Class| matches!(k, C2 | C2x);
        let lone_pair = |k: Class| matches!(k, N3c | O3c | S3c);
        if matches!(a, Si3 | C1) || matches!(b, Si3 | C1) {
            Torsion::Free
        } else if (a == C2x && lone_pair(b)) || (b == C2x && lone_pair(a)) {
            Torsion::AmideEster
        } else if (sp2(a) && (sp2(b) || lone_pair(b))) || (sp2(b) && lone_pair(a)) {
            Torsion::Planar
        } else if sp2(a) || sp2(b) {
            Torsion::Allylic
        } else {
            Torsion::Staggered
        }
    }

    /// The kind of a junction of ends of classes `a` and `b` where `bridged` tells whether a
    /// lone-pair end's neighbour in its own unit is an sp2 or sp atom (a diaryl ether's O).
    pub fn bridged(a: Class, b: Class, bridged: bool) -> Torsion {
        let lone_pair = |k: Class| matches!(k, Class::N3c | Class::O3c | Class::S3c);
        match Torsion::of(a, b) {
            Torsion::Planar if bridged && (lone_pair(a) || lone_pair(b)) => Torsion::Twisted,
            kind => kind,
        }
    }

    /// Its wells, the torsion measured between the two ends' reference atoms (an sp2 end's
    /// double-bond partner, any other end's backbone neighbour).
    pub fn wells(self) -> &'static [Well] {
        const fn well(centre: f64, half_width: f64, weight: f64) -> Well {
            Well {
                centre,
                half_width,
                weight,
            }
        }
        const STAGGERED: [Well; 3] = [
            well(180.0, 15.0, 0.5),
            well(60.0, 15.0, 0.25),
            well(-60.0, 15.0, 0.25),
        ];
        const ALLYLIC: [Well; 3] = [
            well(0.0, 15.0, 1.0),
            well(120.0, 15.0, 1.0),
            well(-120.0, 15.0, 1.0),
        ];
        // Referenced to the C=O oxygen: O=C–X–backbone 0° is the trans backbone.
        const AMIDE_ESTER: [Well; 1] = [well(0.0, 20.0, 1.0)];
        const PLANAR: [Well; 2] = [well(180.0, 20.0, 1.0), well(0.0, 20.0, 1.0)];
        const FREE: [Well; 1] = [well(0.0, 180.0, 1.0)];
        const TWISTED: [Well; 2] = [well(90.0, 50.0, 1.0), well(-90.0, 50.0, 1.0)];
        match self {
            Torsion::Staggered => &STAGGERED,
            Torsion::Allylic => &ALLYLIC,
            Torsion::AmideEster => &AMIDE_ESTER,
            Torsion::Planar => &PLANAR,
            Torsion::Free => &FREE,
            Torsion::Twisted => &TWISTED,
        }
    }

    /// A torsion (degrees) drawn from the wells with `u` and `v` uniform in [0, 1), each well
    /// `widen` times its half-width (1 as the wells are; more for a crowded draw).
    pub fn draw(self, u: f64, v: f64, widen: f64) -> f64 {
        let wells = self.wells();
        let total: f64 = wells.iter().map(|w| w.weight).sum();
        let mut left = u * total;
        let mut chosen = wells[wells.len() - 1];
        for w in wells {
            if left < w.weight {
                chosen = *w;
                break;
            }
            left -= w.weight;
        }
        chosen.centre + (chosen.half_width * widen).min(180.0) * (2.0 * v - 1.0)
    }

    /// Whether `degrees` lies in one of the wells (within `slack` degrees of its edge).
    pub fn holds(self, degrees: f64, slack: f64) -> bool {
        self.wells().iter().any(|w| {
            let off = (degrees - w.centre + 540.0).rem_euclid(360.0) - 180.0;
            off.abs() <= w.half_width + slack
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_of_junction() {
        use Class::*;
        assert_eq!(Torsion::of(C3, C3), Torsion::Staggered);
        assert_eq!(Torsion::of(O3, C3), Torsion::Staggered);
        assert_eq!(Torsion::of(C2x, N3c), Torsion::AmideEster);
        assert_eq!(Torsion::of(O3c, C2x), Torsion::AmideEster);
        assert_eq!(Torsion::of(C2, O3c), Torsion::Planar);
        assert_eq!(Torsion::of(C2, C2), Torsion::Planar);
        assert_eq!(Torsion::bridged(O3c, C2, true), Torsion::Twisted);
        assert_eq!(Torsion::bridged(O3c, C2, false), Torsion::Planar);
        assert_eq!(Torsion::bridged(C2, C2, true), Torsion::Planar);
        assert_eq!(Torsion::bridged(C2x, O3c, true), Torsion::AmideEster);
        assert_eq!(Torsion::of(C2, C3), Torsion::Allylic);
        assert_eq!(Torsion::of(Si3, O3), Torsion::Free);
    }

    #[test]
    fn draws_stay_in_their_wells_with_their_weights() {
        let mut trans = 0;
        for i in 0..1000 {
            let u = (i as f64 + 0.5) / 1000.0;
            let t = Torsion::Staggered.draw(u, (i * 7 % 1000) as f64 / 1000.0, 1.0);
            assert!(Torsion::Staggered.holds(t, 1e-9), "{t}");
            trans += usize::from((t - 180.0).abs() <= 15.0);
        }
        assert_eq!(trans, 500);
        for t in [-20.0, 0.0, 19.9, 360.0] {
            assert!(Torsion::AmideEster.holds(t, 0.0), "{t}");
        }
        assert!(!Torsion::AmideEster.holds(180.0, 0.0));
    }
}
