//! Relieving the crowding the rigid-unit walk leaves in crowded chains (PMMA, polystyrene,
//! polyisobutylene): the atoms around every pair of different units closer than the chain's bound
//! move, by a minimisation that holds every bond length (stiffly, and exactly at the end: the
//! bonds are projected back to their lengths, and the push goes on if that brings a pair back
//! within its bound), holds each bond angle (as the distance across it) and the planarity of
//! double, aromatic, ring and conjugated bonds (as the distances across them) near their built
//! values, and pushes apart every pair within its bound; the last pairs, each less than [`SNAP`]
//! within its bound, are set apart to it (the bound is a floor, not a spring), the bonds put back
//! after. What a force field does after each step of RadonPy's walk (a backbone CH2 angle between
//! two quaternary carbons opens from 110° to about 123°, methyl and ester groups turn), with only
//! the forces that matter here.
//!
//! The minimiser is FIRE (Bitzek et al., Phys. Rev. Lett. 97, 170201, 2006): damped dynamics
//! that speeds up while the forces keep their direction and stops when they turn. Deterministic.

use std::sync::atomic::Ordering;

use super::cells::{each_pair, Filed, Grid};
use super::junction::Graph;
use super::walk::{contact_bound, Chain, CONTACT_MARGIN};
use crate::stop::Stop;
use megane_pack::PackControl;

/// Spring constants (energy per Å²): bonds, bond angles (1–3), rigid torsions (1–4), contacts.
const K_BOND: f64 = 1000.0;
const K_ANGLE: f64 = 100.0;
const K_RIGID: f64 = 20.0;
const K_CONTACT: f64 = 200.0;
/// Contacts are pushed to this much beyond their bound (Å), so that the result clears it.
const TARGET_MARGIN: f64 = 0.03;
/// Units on either side of a crowded unit where contacts are looked for.
const REACH: u32 = 2;
/// Atoms within this distance (Å) of an atom in contact move.
const MOVE_RADIUS: f64 = 4.0;
/// Most minimisation steps.
const MAX_STEPS: usize = 3_000;
/// Pair list skin (Å): pairs within bound + skin are listed, again when two atoms' moves add up to
/// it. 1 Å against 0.5 (PMMA 200 units, seeds 1-15, 3 alternating runs natively): relaxation
/// ~24.5 -> ~19.9 ms, fewer lists outweighing longer ones; the same at 1.5 Å; the chains' angles
/// moved as much (rms 2.3°).
const SKIN: f64 = 1.0;
/// The steps push and judge the listed pairs within bound + this (Å) only, picked again from the
/// list as atoms move (see `minimise`): the list, at a 1 Å skin, holds ~2.5 times as many.
const CLOSE: f64 = 0.25;
/// Largest FIRE time step.
const DT_MAX: f64 = 0.05;
/// Bonds end within this (Å) of their lengths.
const BOND_TOLERANCE: f64 = 1e-3;
/// Pairs at most this far (Å) within their bound are set apart to it ([`separate`]) rather than
/// pushed by their springs: a few hundredths of an ångström, a fraction of a step's move (0.1 Å).
const SNAP: f64 = 0.05;
/// A pair set apart goes this far (Å) beyond its bound, so that the bonds put back after it do
/// not bring it within again.
const SEPARATE_MARGIN: f64 = 0.01;
/// Sweeps of bond projection after each step.
const SWEEPS: usize = 4;

/// A distance held near (a spring) or at (a bond) its built value.
struct Held {
    i: u32,
    j: u32,
    length: f64,
}

/// Moves the atoms around each pair of different units, more than two bonds apart, that is closer
/// than [`contact_bound`] (after the walk, only near `chain.crowded`), until none is; pairs of one
/// unit may not come closer than they were built or than the bound. Returns the number of atoms
/// that moved; errors when it cannot (one line) or on cancel.
pub fn relax(chain: &mut Chain, graph: &Graph, control: &PackControl) -> Result<usize, Stop> {
    if chain.crowded.is_empty() {
        return Ok(0);
    }
    let n = chain.elements.len();
    let last_unit = *chain.unit.last().expect("a chain has atoms");
    // The atoms of the crowded units and their neighbours: where contacts may be.
    let mut region = vec![false; n];
    for &u in &chain.crowded {
        let (lo, hi) = (u.saturating_sub(REACH), (u + REACH).min(last_unit));
        for (i, &v) in chain.unit.iter().enumerate() {
            if (lo..=hi).contains(&v) {
                region[i] = true;
            }
        }
    }
    let neighbours = adjacency(n, &chain.bonds);
    let within_two = |i: usize| -> Vec<usize> {
        let mut out: Vec<usize> = neighbours[i]
            .iter()
            .flat_map(|&j| std::iter::once(j).chain(neighbours[j].iter().copied()))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    };
    let built = chain.positions.clone();
    let (units, elements) = (chain.unit.clone(), chain.elements.clone());
    let (units, elements, built) = (&units[..], &elements[..], &built[..]);
    // The bound of each pair of the chain's elements, looked up: the pair list asks for it for
    // every pair within reach.
    let mut kinds = elements.to_vec();
    kinds.sort_unstable();
    kinds.dedup();
    let kind: Vec<usize> = elements
        .iter()
        .map(|e| kinds.binary_search(e).expect("every element is a kind"))
        .collect();
    let table: Vec<f64> = kinds
        .iter()
        .flat_map(|&a| kinds.iter().map(move |&b| contact_bound(a, b, 3)))
        .collect();
    let (kind, table, count) = (&kind[..], &table[..], kinds.len());
    let bound = |i: usize, j: usize| -> f64 {
        let b = table[kind[i] * count + kind[j]];
        if units[i] != units[j] {
            b + CONTACT_MARGIN
        } else {
            distance(built[i], built[j]).min(b)
        }
    };
    // Per atom of the region (later, of the moving atoms too): the atoms within two bonds, sorted.
    let mut near: Vec<Vec<usize>> = (0..n)
        .map(|i| if region[i] { within_two(i) } else { Vec::new() })
        .collect();
    let mut space = Space::new(chain);
    let region_list: Vec<usize> = (0..n).filter(|&i| region[i]).collect();
    // The region's pairs within bound + skin: its contacts, and (below) the moving atoms' first
    // pair list when they all lie in the region, as they do in a crowded chain.
    let region_pairs = space.pairs(chain, &region_list, SKIN, &near, &bound);
    let contacts: Vec<(u32, u32, f64)> = region_pairs
        .iter()
        .copied()
        .filter(|&(i, j, b)| distance(chain.positions[i as usize], chain.positions[j as usize]) < b)
        .collect();
    if contacts.is_empty() {
        return Ok(0);
    }
    let moving = around(chain, &contacts);
    for i in (0..n).filter(|&i| moving[i] && !region[i]) {
        near[i] = within_two(i);
    }
    // Moving atoms fall into clusters (joined by bonds and by listed pairs) that are relaxed one
    // after another, each against all other atoms held where they are: a hard cluster does not
    // hold the easy ones to its number of steps.
    let moving_list: Vec<usize> = (0..n).filter(|&i| moving[i]).collect();
    let mut root: Vec<usize> = (0..n).collect();
    fn find(root: &mut [usize], mut x: usize) -> usize {
        while root[x] != x {
            root[x] = root[root[x]];
            x = root[x];
        }
        x
    }
    let mut join = |a: usize, b: usize| {
        let (ra, rb) = (find(&mut root, a), find(&mut root, b));
        root[ra.max(rb)] = ra.min(rb);
    };
    for &[i, j] in &chain.bonds {
        if moving[i as usize] && moving[j as usize] {
            join(i as usize, j as usize);
        }
    }
    // The same pairs are the first cluster's first pair list: no atom has moved since. Those
    // of the region's pairs with a moving atom (that one first) when every moving atom is in the
    // region (each such pair is there once), else listed afresh.
    let moving_pairs = if moving_list.iter().all(|&i| region[i]) {
        region_pairs
            .into_iter()
            .filter_map(|(i, j, b)| match (moving[i as usize], moving[j as usize]) {
                (true, _) => Some((i, j, b)),
                (false, true) => Some((j, i, b)),
                (false, false) => None,
            })
            .collect()
    } else {
        space.pairs(chain, &moving_list, SKIN, &near, &bound)
    };
    for &(i, j, _) in &moving_pairs {
        if moving[j as usize] {
            join(i as usize, j as usize);
        }
    }
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    let mut slot = vec![usize::MAX; n];
    for &i in &moving_list {
        let r = find(&mut root, i);
        if slot[r] == usize::MAX {
            slot[r] = clusters.len();
            clusters.push(Vec::new());
        }
        clusters[slot[r]].push(i);
    }
    let rigid = rigid_bonds(chain, graph, &neighbours);
    let mut work = Work {
        mask: vec![false; n],
        velocity: vec![[0.0; 3]; n],
        force: vec![[0.0; 3]; n],
        listed_at: vec![[0.0; 3]; n],
        close_at: vec![[0.0; 3]; n],
    };
    let mut first_pairs = Some(moving_pairs);
    for cluster in &clusters {
        for &i in cluster {
            work.mask[i] = true;
        }
        // Pairs between two clusters are beyond bound + skin, so the first cluster's are those
        // from its atoms, in the same order.
        let first = first_pairs.take().map(|mut pairs| {
            pairs.retain(|&(i, _, _)| work.mask[i as usize]);
            pairs
        });
        minimise(
            chain,
            &rigid,
            &neighbours,
            &mut space,
            &mut work,
            cluster,
            first,
            &near,
            &bound,
            control,
        )?;
        for &i in cluster {
            work.mask[i] = false;
        }
    }
    Ok(moving_list.len())
}

/// Scratch arrays of the minimiser, one entry per atom, kept across clusters.
struct Work {
    /// The cluster being relaxed.
    mask: Vec<bool>,
    velocity: Vec<[f64; 3]>,
    force: Vec<[f64; 3]>,
    /// Positions when the pairs were listed.
    listed_at: Vec<[f64; 3]>,
    /// Positions when the close pairs were picked from the list.
    close_at: Vec<[f64; 3]>,
}

/// Relaxes the atoms `list` (`work.mask`) until no pair from them is within its bound, the bonds
/// back at their lengths. `first`: the pairs from `list` within bound + [`SKIN`] as they are now,
/// if already listed.
#[allow(clippy::too_many_arguments)]
fn minimise(
    chain: &mut Chain,
    rigid: &[Vec<bool>],
    neighbours: &[Vec<usize>],
    space: &mut Space,
    work: &mut Work,
    list: &[usize],
    mut first: Option<Vec<(u32, u32, f64)>>,
    near: &[Vec<usize>],
    bound: &impl Fn(usize, usize) -> f64,
    control: &PackControl,
) -> Result<(), Stop> {
    let Work {
        mask,
        velocity,
        force,
        listed_at,
        close_at,
    } = work;
    // Slices, not Vecs, in the loops below: at opt-level "z", the package's, where this code was
    // built before it had a crate of its own, a Vec's index is a call, a slice's is inline.
    let mask: &[bool] = mask;
    let velocity: &mut [[f64; 3]] = velocity;
    let force: &mut [[f64; 3]] = force;
    let listed_at: &mut [[f64; 3]] = listed_at;
    let close_at: &mut [[f64; 3]] = close_at;
    let (bonds, springs) = held(chain, neighbours, rigid, mask, list);
    let mut listed: Vec<(u32, u32, f64)> = Vec::new();
    let mut close: Vec<(u32, u32, f64)> = Vec::new();
    let mut fresh = true;
    for &i in list {
        velocity[i] = [0.0; 3];
    }
    let (mut dt, mut alpha, mut calm) = (0.02f64, 0.1f64, 0usize);
    for step in 0..MAX_STEPS {
        if step % 64 == 0 && control.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Stop::Cancelled);
        }
        // A pair left off the list (at bound + skin or more) can come within its bound only
        // once its two atoms have moved more than the skin between them: listed again when the
        // two largest moves since the listing add up to more (atoms outside `list` stay).
        // The same for the close pairs (those of the list within bound + [`CLOSE`]), which
        // the steps push and judge: made again from the list when two atoms' moves since add up
        // to more than CLOSE less the push's margin.
        let (stale, close_stale) = if fresh {
            (true, true)
        } else {
            let p: &[[f64; 3]] = &chain.positions;
            let (listing, closing) = (
                two_largest(list, p, listed_at),
                two_largest(list, p, close_at),
            );
            (listing > SKIN, closing > CLOSE - TARGET_MARGIN)
        };
        if stale {
            let p: &[[f64; 3]] = &chain.positions;
            for &i in list {
                listed_at[i] = p[i];
            }
            listed = match (fresh, first.take()) {
                (true, Some(pairs)) => pairs,
                _ => space.pairs(chain, list, SKIN, near, bound),
            };
            fresh = false;
        }
        if stale || close_stale {
            let p: &[[f64; 3]] = &chain.positions;
            for &i in list {
                close_at[i] = p[i];
            }
            close.clear();
            close.extend(listed.iter().copied().filter(|&(i, j, b)| {
                distance2(p[i as usize], p[j as usize]) < (b + CLOSE) * (b + CLOSE)
            }));
        }
        let clear = |p: &[[f64; 3]]| {
            listed
                .iter()
                .all(|&(i, j, b)| distance(p[i as usize], p[j as usize]) >= b)
        };
        // Whether a pair is within its bound, and whether one is [`SNAP`] or more within it (the
        // scan stops there), told by squares: this runs every step over every close pair.
        let (within, deep) = {
            let p: &[[f64; 3]] = &chain.positions;
            let mut within = false;
            let deep = close.iter().any(|&(i, j, b)| {
                let r2 = distance2(p[i as usize], p[j as usize]);
                if r2 >= b * b {
                    return false;
                }
                within = true;
                let floor = b - SNAP;
                floor >= 0.0 && r2 <= floor * floor
            });
            (within, deep)
        };
        if !deep {
            // Put the bonds back to their lengths; done if that keeps every pair clear, else
            // the push goes on from there (its margin widens the gaps). When pairs are still
            // within their bound, but by less than SNAP, they are set apart to it first: the
            // last few such pairs of a crowded chain are held there by the springs of their
            // angles about as hard as their contact pushes them out, and would creep out over
            // hundreds of steps of the whole cluster (PMMA: 715 steps of 2 978 atoms, of
            // which the last 500 for fewer than 20 pairs each 0.01-0.04 Å within); the bound
            // is a floor, not a spring.
            let sweeps = if within { SWEEPS } else { 1 };
            for _ in 0..sweeps {
                if within {
                    separate(&mut chain.positions, &close, mask);
                }
                project(&mut chain.positions, &bonds, mask);
            }
            let bonded = bonds.iter().all(|b| {
                let d = distance(chain.positions[b.i as usize], chain.positions[b.j as usize]);
                (d - b.length).abs() < BOND_TOLERANCE
            });
            if bonded && clear(&chain.positions) {
                for &i in list {
                    space.all.moved(i as u32, chain.positions[i]);
                }
                return Ok(());
            }
        }
        let p: &[[f64; 3]] = &chain.positions;
        for &i in list {
            force[i] = [0.0; 3];
        }
        for s in &bonds {
            pull(
                p,
                force,
                s.i as usize,
                s.j as usize,
                s.length,
                K_BOND,
                false,
            );
        }
        for (s, k) in &springs {
            pull(p, force, s.i as usize, s.j as usize, s.length, *k, false);
        }
        for &(i, j, b) in &close {
            pull(
                p,
                force,
                i as usize,
                j as usize,
                b + TARGET_MARGIN,
                K_CONTACT,
                true,
            );
        }
        // FIRE.
        let (mut power, mut fnorm, mut vnorm) = (0.0, 0.0, 0.0);
        for &i in list {
            let (f, v) = (force[i], velocity[i]);
            for k in 0..3 {
                power += f[k] * v[k];
                fnorm += f[k] * f[k];
                vnorm += v[k] * v[k];
            }
        }
        let (fnorm, vnorm) = (fnorm.sqrt(), vnorm.sqrt());
        if power > 0.0 {
            for &i in list {
                let (f, v) = (force[i], &mut velocity[i]);
                for k in 0..3 {
                    v[k] = (1.0 - alpha) * v[k] + alpha * vnorm * f[k] / fnorm.max(1e-12);
                }
            }
            calm += 1;
            if calm > 5 {
                dt = (dt * 1.1).min(DT_MAX);
                alpha *= 0.99;
            }
        } else {
            for &i in list {
                velocity[i] = [0.0; 3];
            }
            dt *= 0.5;
            alpha = 0.1;
            calm = 0;
        }
        let positions: &mut [[f64; 3]] = &mut chain.positions;
        for &i in list {
            let (f, v, q) = (force[i], &mut velocity[i], &mut positions[i]);
            for k in 0..3 {
                v[k] += dt * f[k];
                // No atom moves more than 0.1 Å a step.
                q[k] += (dt * v[k]).clamp(-0.1, 0.1);
            }
        }
    }
    Err(Stop::Failed(format!(
        "Could not move the crowded units of the chain apart within {MAX_STEPS} steps; try another seed or fewer units."
    )))
}

/// The two largest moves (Å) of the atoms `list` from `then` to `now`, added.
fn two_largest(list: &[usize], now: &[[f64; 3]], then: &[[f64; 3]]) -> f64 {
    let (mut first, mut second) = (0.0f64, 0.0f64);
    for &i in list {
        let d2 = distance2(now[i], then[i]);
        if d2 > second {
            (first, second) = if d2 > first { (d2, first) } else { (first, d2) };
        }
    }
    first.sqrt() + second.sqrt()
}

/// The squared distance (Å²): for comparisons made every step, without a root.
#[inline(always)]
fn distance2(a: [f64; 3], b: [f64; 3]) -> f64 {
    (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)
}

#[inline(always)]
fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Sets each listed pair (i, j, bound) within its bound [`SEPARATE_MARGIN`] beyond it, along the
/// line between them, moving only moving atoms (half each when both move).
fn separate(p: &mut [[f64; 3]], listed: &[(u32, u32, f64)], moving: &[bool]) {
    for &(i, j, b) in listed {
        let (i, j) = (i as usize, j as usize);
        let d = [p[i][0] - p[j][0], p[i][1] - p[j][1], p[i][2] - p[j][2]];
        let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        if r2 >= b * b {
            continue;
        }
        let r = r2.sqrt().max(1e-9);
        move_along(p, moving, i, j, d, (r - b - SEPARATE_MARGIN) / r);
    }
}

/// Moves atoms `i` and `j` by `excess` × `d` (`d` = p[i] − p[j]) towards each other (apart when
/// `excess` is negative), only moving atoms (half each when both move).
#[inline(always)]
fn move_along(p: &mut [[f64; 3]], moving: &[bool], i: usize, j: usize, d: [f64; 3], excess: f64) {
    let (wi, wj) = match (moving[i], moving[j]) {
        (true, true) => (0.5, 0.5),
        (true, false) => (1.0, 0.0),
        (false, true) => (0.0, 1.0),
        (false, false) => return,
    };
    for k in 0..3 {
        p[i][k] -= wi * excess * d[k];
        p[j][k] += wj * excess * d[k];
    }
}

/// Puts every bond back to its length, moving only moving atoms (half each when both move).
fn project(p: &mut [[f64; 3]], bonds: &[Held], moving: &[bool]) {
    for _ in 0..SWEEPS {
        for b in bonds {
            let (i, j) = (b.i as usize, b.j as usize);
            let d = [p[i][0] - p[j][0], p[i][1] - p[j][1], p[i][2] - p[j][2]];
            let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            if r < 1e-6 {
                continue;
            }
            // At most 0.1 Å a sweep, as a step.
            move_along(p, moving, i, j, d, (r - b.length).clamp(-0.1, 0.1) / r);
        }
    }
}

/// Adds the force of a spring of rest length `length` between atoms `i` and `j` (only when
/// closer than it, for a contact).
#[inline(always)]
fn pull(
    p: &[[f64; 3]],
    force: &mut [[f64; 3]],
    i: usize,
    j: usize,
    length: f64,
    k: f64,
    push_only: bool,
) {
    let (pi, pj) = (p[i], p[j]);
    let d = [pi[0] - pj[0], pi[1] - pj[1], pi[2] - pj[2]];
    let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    // Most listed contacts are apart: told by the square, without a root.
    if push_only && r2 >= length * length {
        return;
    }
    let r = r2.sqrt().max(1e-9);
    // E = k (r − length)²; force on i = −dE/dr · d/r.
    let f = -2.0 * k * (r - length) / r;
    let fi = &mut force[i];
    for a in 0..3 {
        fi[a] += f * d[a];
    }
    let fj = &mut force[j];
    for a in 0..3 {
        fj[a] -= f * d[a];
    }
}

fn adjacency(n: usize, bonds: &[[u32; 2]]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); n];
    for &[i, j] in bonds {
        out[i as usize].push(j as usize);
        out[j as usize].push(i as usize);
    }
    out
}

/// The atoms within [`MOVE_RADIUS`] of an atom of a pair in `contacts`.
fn around(chain: &Chain, contacts: &[(u32, u32, f64)]) -> Vec<bool> {
    let positions: &[[f64; 3]] = &chain.positions;
    let mut cells = Filed::new(MOVE_RADIUS);
    let every: Vec<usize> = (0..positions.len()).collect();
    cells.file(positions, &every);
    let mut moving = vec![false; positions.len()];
    for &(a, b, _) in contacts {
        for centre in [a as usize, b as usize] {
            let c = positions[centre];
            cells.each_near(c, |j, q| {
                if distance2(c, q) <= MOVE_RADIUS * MOVE_RADIUS {
                    moving[j] = true;
                }
            });
        }
    }
    moving
}

/// Per atom, per neighbour (parallel to `neighbours`): whether the bond does not turn (double,
/// aromatic, in a ring, or a single bond between two conjugated atoms: an sp2 atom and an sp2
/// atom or an N, O or S).
fn rigid_bonds(chain: &Chain, graph: &Graph, neighbours: &[Vec<usize>]) -> Vec<Vec<bool>> {
    let mut order = std::collections::HashMap::new();
    for (&[i, j], &o) in chain.bonds.iter().zip(&chain.bond_orders) {
        order.insert((i.min(j), i.max(j)), o);
    }
    let mut ring = std::collections::HashMap::new();
    let hyb = |i: usize| graph.hybridisation(chain.origin[i] as usize);
    let lone_pair = |i: usize| matches!(chain.elements[i], 7 | 8 | 16) && hyb(i) == 3;
    neighbours
        .iter()
        .enumerate()
        .map(|(i, around)| {
            around
                .iter()
                .map(|&j| {
                    let (a, b) = (i.min(j) as u32, i.max(j) as u32);
                    let in_ring = chain.unit[i] == chain.unit[j]
                        && *ring
                            .entry((
                                chain.origin[i].min(chain.origin[j]),
                                chain.origin[i].max(chain.origin[j]),
                            ))
                            .or_insert_with(|| {
                                graph.in_ring(chain.origin[i] as usize, chain.origin[j] as usize)
                            });
                    let conjugated = (hyb(i) < 3 && (hyb(j) < 3 || lone_pair(j)))
                        || (hyb(j) < 3 && lone_pair(i));
                    order.get(&(a, b)).is_some_and(|&o| o != 1) || in_ring || conjugated
                })
                .collect()
        })
        .collect()
}

/// The bonds on the cluster `list` (held exactly) and the springs (with their constants): every
/// bond angle (1–3 distance) and the 1–4 distances across bonds that do not turn, where at least
/// one atom is in the cluster.
fn held(
    chain: &Chain,
    neighbours: &[Vec<usize>],
    rigid: &[Vec<bool>],
    mask: &[bool],
    list: &[usize],
) -> (Vec<Held>, Vec<(Held, f64)>) {
    let p = &chain.positions;
    let at = |i: usize, j: usize| Held {
        i: i as u32,
        j: j as u32,
        length: distance(p[i], p[j]),
    };
    let (mut bonds, mut springs) = (Vec::new(), Vec::new());
    for &i in list {
        for &j in &neighbours[i] {
            if !mask[j] || i < j {
                bonds.push(at(i, j));
            }
        }
    }
    // The centres of the angles and the ends of the rigid bonds: the cluster and its neighbours.
    let mut centres: Vec<usize> = list
        .iter()
        .flat_map(|&i| std::iter::once(i).chain(neighbours[i].iter().copied()))
        .collect();
    centres.sort_unstable();
    centres.dedup();
    let is_centre = |x: usize| centres.binary_search(&x).is_ok();
    for &c in &centres {
        let around = &neighbours[c];
        for (x, &i) in around.iter().enumerate() {
            for &j in &around[x + 1..] {
                if mask[i] || mask[j] {
                    springs.push((at(i, j), K_ANGLE));
                }
            }
        }
        for (k, &b) in around.iter().enumerate() {
            if !rigid[c][k] || (is_centre(b) && b < c) {
                continue;
            }
            for &a in around.iter().filter(|&&a| a != b) {
                for &d in neighbours[b].iter().filter(|&&d| d != c && d != a) {
                    if mask[a] || mask[d] {
                        springs.push((at(a, d), K_RIGID));
                    }
                }
            }
        }
    }
    (bonds, springs)
}

/// The chain's atoms in cells of the largest bound + [`SKIN`]: all of them in a grid kept where
/// they are between clusters (a cluster's atoms filed again once it is relaxed), and the atoms
/// listed from sorted afresh for each pair list; and that largest bound (Å): a pair farther apart
/// than it + skin is no pair, whatever its elements. A pair list costs the atoms it is made from,
/// not the chain (PC, 6 602 atoms in many small clusters).
struct Space {
    all: Grid,
    listed: Filed,
    reach: f64,
}

impl Space {
    fn new(chain: &Chain) -> Space {
        let mut kinds = chain.elements.clone();
        kinds.sort_unstable();
        kinds.dedup();
        let reach = kinds
            .iter()
            .flat_map(|&a| kinds.iter().map(move |&b| contact_bound(a, b, 3)))
            .fold(0.0, f64::max)
            + CONTACT_MARGIN;
        let mut all = Grid::new(reach + SKIN, chain.positions.len());
        for (i, &q) in chain.positions.iter().enumerate() {
            all.insert(q, i as u32);
        }
        Space {
            all,
            listed: Filed::new(reach + SKIN),
            reach,
        }
    }
    /// Pairs (i from `from`; more than two bonds apart, each pair once) within their bound +
    /// `skin` (≤ [`SKIN`]), from the atoms where they are now (those not in `from` where `all`
    /// has them).
    fn pairs(
        &mut self,
        chain: &Chain,
        from: &[usize],
        skin: f64,
        near: &[Vec<usize>],
        bound: &impl Fn(usize, usize) -> f64,
    ) -> Vec<(u32, u32, f64)> {
        let positions: &[[f64; 3]] = &chain.positions;
        self.listed.file(positions, from);
        // The grid holds the others only while the pairs are found, then every atom again, each
        // where it is now.
        for &i in from {
            self.all.take(i as u32);
        }
        let mut out = Vec::new();
        // Most atoms of the 27 cells are beyond any bound: judged by distance first, the
        // pair's own bound and bonds only for the few within the largest.
        let reach2 = (self.reach + skin + 1e-9).powi(2);
        each_pair(&self.listed, &self.all, positions, |i, p, j, q| {
            let d2 = distance2(p, q);
            if d2 >= reach2 || near[i].binary_search(&j).is_ok() {
                return;
            }
            let b = bound(i, j);
            if d2 < (b + skin) * (b + skin) {
                out.push((i as u32, j as u32, b));
            }
        });
        for &i in from {
            self.all.put(i as u32, positions[i]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pair within its bound is set apart to bound + margin along the line between its atoms
    /// (a held atom stays, two moving atoms go half each); a pair beyond its bound is left alone.
    #[test]
    fn separate_sets_pairs_within_their_bound_apart_to_it() {
        let mut p = vec![[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 5.0, 0.0]];
        separate(&mut p, &[(0, 1, 2.04), (0, 2, 2.5)], &[true, false, true]);
        assert_eq!(p[1], [2.0, 0.0, 0.0]);
        assert_eq!(p[2], [0.0, 5.0, 0.0]);
        assert!((distance(p[0], p[1]) - (2.04 + SEPARATE_MARGIN)).abs() < 1e-12);
        assert_eq!((p[0][1], p[0][2]), (0.0, 0.0));

        let mut q = vec![[0.0; 3], [2.0, 0.0, 0.0]];
        separate(&mut q, &[(0, 1, 2.04)], &[true, true]);
        let half = (0.04 + SEPARATE_MARGIN) / 2.0;
        assert!((q[0][0] + half).abs() < 1e-12 && (q[1][0] - 2.0 - half).abs() < 1e-12);
    }
}
