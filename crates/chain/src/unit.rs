//! The repeat unit of `polymer_chain`: its head and tail atoms checked, the hydrogens each may
//! give up, and its junction worked out once (bond length, torsion kind, reference atoms).

use super::junction::{bond_angle, bond_length, class, Class, End, Graph, Torsion};
use megane_elements::symbol;
use megane_pack::PackMolecule;

/// A side group of a unit: the atoms beyond a single bond off the way from head to tail that is
/// neither in a ring nor between conjugated atoms (an ester's C(α)–C(=O), a methyl's C–C; not the
/// ester's own C(=O)–O), which a crowded draw may turn about that bond.
#[derive(Debug, Clone)]
pub struct SideGroup {
    /// The bond's atom on the unit's side.
    pub root: usize,
    /// The bond's atom in the group.
    pub pivot: usize,
    /// The group's atoms (the pivot and everything beyond it).
    pub atoms: Vec<usize>,
}

/// A single bond of the unit's backbone (the way from head to tail) between two inner atoms
/// (neither the head nor the tail), both sp3 C, N, O or S and not in a ring: its torsion is the
/// chain's, as a junction's is, so each draw takes it from the staggered wells
/// ([`Torsion::Staggered`]) rather than from the one conformer the unit was made in. A long unit
/// (nylon-6,6's twelve backbone atoms, embedded all-trans) is otherwise a rigid rod, and so is
/// its chain. A unit whose head and tail are at most two bonds apart (a vinyl unit, PEO's) has
/// none.
#[derive(Debug, Clone)]
pub struct BackboneBond {
    /// The atom nearer the head.
    pub near: usize,
    /// The near atom's backbone neighbour toward the head (the torsion's first atom).
    pub before: usize,
    /// The atom nearer the tail.
    pub far: usize,
    /// The far atom's backbone neighbour toward the tail (the torsion's last atom).
    pub after: usize,
    /// The atoms beyond the bond on the tail's side (the far atom, the tail and all else there):
    /// they turn.
    pub atoms: Vec<usize>,
}

/// Largest monomer whose side groups turn (its n × n bond counts are kept).
const MAX_TURNING_ATOMS: usize = 200;

/// A repeat unit with its junctions.
#[derive(Debug, Clone)]
pub struct Monomer {
    /// The molecule (name, rigid template, bonds).
    pub molecule: PackMolecule,
    /// Its bond graph.
    pub graph: Graph,
    /// 0-based head atom (bonds to the previous unit's tail).
    pub head: usize,
    /// 0-based tail atom (bonds to the next unit's head).
    pub tail: usize,
    /// The hydrogens on the head, one of which it gives up at each junction.
    pub head_hydrogens: Vec<usize>,
    /// The hydrogens on the tail.
    pub tail_hydrogens: Vec<usize>,
    /// The atoms that turn with the head about its bond to its backbone neighbour (its hydrogens
    /// and substituents, not the head itself), when that bond is a single bond outside rings and
    /// conjugation: the turn of an end group is the monomer's conformer's (an OH hydrogen-bonded to
    /// its own carbonyl points where no bond can go, lactaldehyde's CHO sits at one ψ), so the
    /// junction may take the unit with its end group in any of three places 120° apart, as a CH3
    /// head's three hydrogens offer.
    pub head_group: Option<Vec<usize>>,
    /// The same for the tail.
    pub tail_group: Option<Vec<usize>>,
    /// Length of the junction bond, Å ([`super::junction::bond_length`]).
    pub bond_length: f64,
    /// The classes of the tail and head atoms in the chain.
    pub classes: (Class, Class),
    /// The junction's kind, which sets the wells of its torsion.
    pub torsion: Torsion,
    /// Reference atom of the torsion on the tail side (its double-bond partner if the tail is sp2,
    /// else its neighbour on the way to the head).
    pub tail_reference: usize,
    /// Reference atom of the torsion on the head side.
    pub head_reference: usize,
    /// The tail's neighbour on the way to the head (its bond angle with the junction is the one
    /// that opens when the junction is crowded).
    pub tail_next: usize,
    /// The head's neighbour on the way to the tail.
    pub head_next: usize,
    /// The bond angle (degrees) at the tail between its backbone neighbour and the junction, when
    /// the model compounds give one ([`super::junction::bond_angle`]); else the hydrogen's.
    pub tail_angle: Option<f64>,
    /// The same at the head.
    pub head_angle: Option<f64>,
    /// Whether units may be drawn as the monomer's mirror image: when the monomer has no
    /// stereocentre of its own (an sp3 atom with four different neighbours), so that the centres
    /// made at junctions come in either hand (atactic, as RadonPy's default). A monomer with one
    /// keeps its hand in every unit (L-lactide gives PLLA).
    pub mirror: bool,
    /// The template reflected through the yz plane (x → −x), for mirror-image units.
    pub mirrored: Vec<[f64; 3]>,
    /// Side groups that may turn in a crowded draw, outermost first.
    pub side_groups: Vec<SideGroup>,
    /// Inner backbone bonds whose torsions every draw takes from their wells, head side first.
    pub backbone_bonds: Vec<BackboneBond>,
    /// Bonds between every two atoms (n × n, saturating at 255), when there are side groups or
    /// backbone bonds.
    pub apart: Vec<u8>,
    /// Bonds from the head atom to each atom (`u32::MAX` when unconnected).
    pub from_head: Vec<u32>,
    /// Bonds from the tail atom to each atom.
    pub from_tail: Vec<u32>,
}

impl Monomer {
    /// Checks the junction atoms and works the junction out. Errors are one line.
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
        let graph = Graph::new(
            &molecule.template.elements,
            &molecule.bonds,
            &molecule.bond_orders,
        );
        let hydrogens = |atom: usize, role: &str| -> Result<Vec<usize>, String> {
            let mut h: Vec<usize> = graph.neighbours[atom]
                .iter()
                .map(|&(x, _)| x)
                .filter(|&x| graph.elements[x] == 1)
                .collect();
            h.sort_unstable();
            if h.is_empty() {
                let element = symbol(graph.elements[atom]).unwrap_or("?");
                return Err(format!(
                    "The {role} atom {atom} ({element}) of {name} has no hydrogen to give up; choose an atom that carries one."
                ));
            }
            Ok(h)
        };
        let head_hydrogens = hydrogens(head, "head")?;
        let tail_hydrogens = hydrogens(tail, "tail")?;
        let from_head = bond_distances(&graph, head);
        let from_tail = bond_distances(&graph, tail);
        if from_head[tail] == u32::MAX {
            return Err(format!(
                "The head atom {head} and the tail atom {tail} of {name} are in different molecules; a repeat unit is one molecule."
            ));
        }
        let toward = |atom: usize, to_target: &[u32]| toward(&graph, atom, to_target);
        let reference = |atom: usize, to_other: &[u32]| -> usize {
            match graph.hybridisation(atom) {
                2 => graph
                    .pi_partner(atom)
                    .unwrap_or_else(|| toward(atom, to_other)),
                _ => toward(atom, to_other),
            }
        };
        let (tail_next, head_next) = (toward(tail, &from_head), toward(head, &from_tail));
        let tail_reference = reference(tail, &from_head);
        let head_group = end_group(
            &graph,
            &molecule.bond_orders,
            &molecule.bonds,
            head,
            head_next,
        );
        let tail_group = end_group(
            &graph,
            &molecule.bond_orders,
            &molecule.bonds,
            tail,
            tail_next,
        );
        let head_reference = reference(head, &from_tail);
        // The junction as it is inside a chain: each unit bonded on both sides.
        let tail_end = End {
            atom: tail,
            gone: tail_hydrogens[0],
            partner: head,
            other_junction: Some((head, graph.elements[tail])),
        };
        let head_end = End {
            atom: head,
            gone: head_hydrogens[0],
            partner: tail,
            other_junction: Some((tail, graph.elements[head])),
        };
        let classes = (class(&graph, &tail_end), class(&graph, &head_end));
        let tail_angle = bond_angle(&graph, &tail_end, &head_end, tail_next);
        let head_angle = bond_angle(&graph, &head_end, &tail_end, head_next);
        let mirror = !has_stereocentre(&graph);
        // A lone-pair end whose neighbour in its own unit is conjugated too (a diaryl ether's O).
        let lone_pair_bridge = |end: usize, next: usize| {
            matches!(graph.elements[end], 7 | 8 | 16) && graph.hybridisation(next) < 3
        };
        let bridged = lone_pair_bridge(tail, tail_next) || lone_pair_bridge(head, head_next);
        let side_groups = if n <= MAX_TURNING_ATOMS {
            side_groups(&graph, &molecule.bond_orders, &molecule.bonds, head, tail)
        } else {
            Vec::new()
        };
        let backbone_bonds = if n <= MAX_TURNING_ATOMS {
            backbone_bonds(&graph, head, &from_tail)
        } else {
            Vec::new()
        };
        let apart = if side_groups.is_empty() && backbone_bonds.is_empty() {
            Vec::new()
        } else {
            (0..n)
                .flat_map(|i| bond_distances(&graph, i))
                .map(|d| d.min(255) as u8)
                .collect()
        };
        let mirrored = molecule
            .template
            .positions
            .iter()
            .map(|p| [-p[0], p[1], p[2]])
            .collect();
        Ok(Monomer {
            side_groups,
            backbone_bonds,
            apart,
            mirror,
            mirrored,
            bond_length: bond_length(&graph, &tail_end, &head_end),
            torsion: Torsion::bridged(classes.0, classes.1, bridged),
            classes,
            molecule,
            graph,
            head,
            tail,
            head_hydrogens,
            tail_hydrogens,
            head_group,
            tail_group,
            tail_reference,
            head_reference,
            tail_next,
            head_next,
            tail_angle,
            head_angle,
            from_head,
            from_tail,
        })
    }

    /// The template's positions (Å), or its mirror image's.
    pub fn positions(&self, mirrored: bool) -> &[[f64; 3]] {
        if mirrored {
            &self.mirrored
        } else {
            &self.molecule.template.positions
        }
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

/// The atoms beyond `end` from `next` (not `end` itself) when the bond `end`–`next` turns (single,
/// outside rings, not between conjugated atoms) and they hold neither junction atom's partner
/// side; `None` otherwise.
fn end_group(
    graph: &Graph,
    orders: &[u8],
    bonds: &[[u32; 2]],
    end: usize,
    next: usize,
) -> Option<Vec<usize>> {
    let order = bonds
        .iter()
        .zip(orders)
        .find(|(&[i, j], _)| {
            (i as usize, j as usize) == (end, next) || (j as usize, i as usize) == (end, next)
        })
        .map(|(_, &o)| o)?;
    let lone_pair =
        |x: usize| matches!(graph.elements[x], 7 | 8 | 16) && graph.hybridisation(x) == 3;
    let (he, hn) = (graph.hybridisation(end), graph.hybridisation(next));
    let conjugated = (he < 3 && (hn < 3 || lone_pair(next))) || (hn < 3 && lone_pair(end));
    if order != 1 || graph.in_ring(end, next) || conjugated {
        return None;
    }
    let mut atoms = beyond(graph, next, end);
    atoms.remove(0);
    Some(atoms)
}

/// The atoms reached from `pivot` without crossing its bond to `root`, `pivot` first: what turns
/// about that bond.
fn beyond(graph: &Graph, root: usize, pivot: usize) -> Vec<usize> {
    let mut atoms = vec![pivot];
    let mut k = 0;
    while k < atoms.len() {
        let x = atoms[k];
        for &(y, _) in &graph.neighbours[x] {
            if (x, y) != (pivot, root) && !atoms.contains(&y) {
                atoms.push(y);
            }
        }
        k += 1;
    }
    atoms
}

/// The unit's side groups, largest first (so that an inner group turns after the one holding it).
fn side_groups(
    graph: &Graph,
    orders: &[u8],
    bonds: &[[u32; 2]],
    head: usize,
    tail: usize,
) -> Vec<SideGroup> {
    let lone_pair =
        |x: usize| matches!(graph.elements[x], 7 | 8 | 16) && graph.hybridisation(x) == 3;
    let conjugated = |x: usize, y: usize| {
        let (hx, hy) = (graph.hybridisation(x), graph.hybridisation(y));
        (hx < 3 && (hy < 3 || lone_pair(y))) || (hy < 3 && lone_pair(x))
    };
    let mut out = Vec::new();
    for (&[i, j], &order) in bonds.iter().zip(orders) {
        let (i, j) = (i as usize, j as usize);
        if order != 1 || graph.in_ring(i, j) || conjugated(i, j) {
            continue;
        }
        for (root, pivot) in [(i, j), (j, i)] {
            let atoms = beyond(graph, root, pivot);
            let turns_something = atoms.len() > 1;
            if turns_something && !atoms.contains(&head) && !atoms.contains(&tail) {
                out.push(SideGroup { root, pivot, atoms });
            }
        }
    }
    out.sort_by(|a, b| {
        b.atoms
            .len()
            .cmp(&a.atoms.len())
            .then(a.pivot.cmp(&b.pivot))
    });
    out
}

/// The unit's inner backbone bonds ([`BackboneBond`]), head side first. `from_tail`: bonds from
/// the tail to each atom.
fn backbone_bonds(graph: &Graph, head: usize, from_tail: &[u32]) -> Vec<BackboneBond> {
    // The way from head to tail, each step as `toward` takes it.
    let mut way = vec![head];
    while let Some(&x) = way.last().filter(|&&x| from_tail[x] > 0) {
        way.push(toward(graph, x, from_tail));
    }
    let single = |a: usize, b: usize| graph.neighbours[a].contains(&(b, 1));
    let turns =
        |x: usize| matches!(graph.elements[x], 6 | 7 | 8 | 16) && graph.hybridisation(x) == 3;
    let mut out = Vec::new();
    // Bonds way[i]–way[i + 1] with neither end the head (i = 0) nor the tail (i + 1 = last).
    for i in 1..way.len().saturating_sub(2) {
        let (near, far) = (way[i], way[i + 1]);
        if !single(near, far) || !turns(near) || !turns(far) || graph.in_ring(near, far) {
            continue;
        }
        let atoms = beyond(graph, near, far);
        out.push(BackboneBond {
            near,
            before: way[i - 1],
            far,
            after: way[i + 2],
            atoms,
        });
    }
    out
}

/// The neighbour of `atom` on a shortest way to the atom whose bond distances are `to_target`
/// (the lowest index where two are as short).
fn toward(graph: &Graph, atom: usize, to_target: &[u32]) -> usize {
    graph.neighbours[atom]
        .iter()
        .map(|&(x, _)| x)
        .filter(|&x| to_target[x] + 1 == to_target[atom])
        .min()
        .expect("connected")
}

/// Bonds from `start` to every atom (breadth-first; `u32::MAX` when unconnected).
fn bond_distances(graph: &Graph, start: usize) -> Vec<u32> {
    let mut d = vec![u32::MAX; graph.elements.len()];
    d[start] = 0;
    let mut frontier = vec![start];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for &a in &frontier {
            for &(b, _) in &graph.neighbours[a] {
                if d[b] == u32::MAX {
                    d[b] = d[a] + 1;
                    next.push(b);
                }
            }
        }
        frontier = next;
    }
    d
}

/// Whether some sp3 atom has four neighbours that differ (by element, bond orders and what lies
/// beyond, refined to a fixed point as in Morgan's algorithm): a stereocentre of the molecule
/// itself, whose hand a mirror image would flip.
fn has_stereocentre(graph: &Graph) -> bool {
    let n = graph.elements.len();
    // Classes: start from element and degree, split by the sorted classes of the neighbours and
    // bond orders until the number of classes stops growing.
    let mut class: Vec<u64> = (0..n)
        .map(|a| u64::from(graph.elements[a]) << 8 | graph.neighbours[a].len() as u64)
        .collect();
    let mut count = 0;
    loop {
        let keys: Vec<(u64, Vec<(u64, u8)>)> = (0..n)
            .map(|a| {
                let mut around: Vec<(u64, u8)> = graph.neighbours[a]
                    .iter()
                    .map(|&(b, o)| (class[b], o))
                    .collect();
                around.sort_unstable();
                (class[a], around)
            })
            .collect();
        let mut distinct = keys.clone();
        distinct.sort();
        distinct.dedup();
        class = keys
            .iter()
            .map(|k| distinct.binary_search(k).expect("present") as u64)
            .collect();
        if distinct.len() == count {
            break;
        }
        count = distinct.len();
    }
    (0..n).any(|a| {
        let around = &graph.neighbours[a];
        if around.len() != 4 || graph.hybridisation(a) != 3 {
            return false;
        }
        let mut c: Vec<u64> = around.iter().map(|&(b, _)| class[b]).collect();
        c.sort_unstable();
        c.dedup();
        c.len() == 4
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(elements: &[u8], bonds: &[[u32; 2]]) -> Graph {
        Graph::new(elements, bonds, &vec![1; bonds.len()])
    }

    #[test]
    fn inner_backbone_bonds_turn_and_the_ends_do_not() {
        // Butane-1-ol as a unit with its head on C1 (0) and tail on O (4): backbone C1-C2-C3-C4-O;
        // inner bonds C2-C3 and C3-C4; C1-C2 and C4-O touch the ends. A methyl on C3 (5) is no
        // part of the backbone.
        let elements = [6, 6, 6, 6, 8, 6];
        let bonds = [[0, 1], [1, 2], [2, 3], [3, 4], [2, 5]];
        let g = graph(&elements, &bonds);
        let from_tail = bond_distances(&g, 4);
        let found = backbone_bonds(&g, 0, &from_tail);
        let pairs: Vec<_> = found
            .iter()
            .map(|b| (b.before, b.near, b.far, b.after))
            .collect();
        assert_eq!(pairs, [(0, 1, 2, 3), (1, 2, 3, 4)]);
        let mut beyond = found[0].atoms.clone();
        beyond.sort_unstable();
        assert_eq!(beyond, [2, 3, 4, 5]);
        // Ethanol, head C, tail O (PEO's unit): both bonds touch an end.
        let ethanol = graph(&[6, 6, 8], &[[0, 1], [1, 2]]);
        let from_tail = bond_distances(&ethanol, 2);
        assert!(backbone_bonds(&ethanol, 0, &from_tail).is_empty());
        // A double bond inside the backbone does not turn.
        let elements = [6, 6, 6, 6, 6];
        let bonds = [[0, 1], [1, 2], [2, 3], [3, 4]];
        let g = Graph::new(&elements, &bonds, &[1, 1, 2, 1]);
        let from_tail = bond_distances(&g, 4);
        let found = backbone_bonds(&g, 0, &from_tail);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn stereocentres_of_the_monomer_itself() {
        // Propane: no centre (the CH2 has two H).
        let propane = graph(
            &[6, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1],
            &[
                [0, 1],
                [1, 2],
                [0, 3],
                [0, 4],
                [0, 5],
                [1, 6],
                [1, 7],
                [2, 8],
                [2, 9],
                [2, 10],
            ],
        );
        assert!(!has_stereocentre(&propane));
        // Butan-2-ol: C2 carries H, OH, CH3 and C2H5.
        let butanol = graph(
            &[6, 6, 6, 6, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
            &[
                [0, 1],
                [1, 2],
                [2, 3],
                [1, 4],
                [0, 5],
                [0, 6],
                [0, 7],
                [1, 8],
                [2, 9],
                [2, 10],
                [3, 11],
                [3, 12],
                [3, 13],
                [4, 14],
            ],
        );
        assert!(has_stereocentre(&butanol));
        // Isobutane-like CH with two equal methyls: none.
        let isobutane = graph(
            &[6, 6, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
            &[
                [0, 1],
                [1, 2],
                [1, 3],
                [1, 4],
                [0, 5],
                [0, 6],
                [0, 7],
                [2, 8],
                [2, 9],
                [2, 10],
                [3, 11],
                [3, 12],
                [3, 13],
            ],
        );
        assert!(!has_stereocentre(&isobutane));
    }
}
