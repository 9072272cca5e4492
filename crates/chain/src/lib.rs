//! The chain builder of the offline `polymer_chain` tool: a linear homopolymer as a seeded,
//! self-avoiding random coil of rigid repeat units. A crate of its own so that the page builds it
//! at opt-level 2, as the packer (the package is at "z" for its size).
//!
//! Method (the reference server's RadonPy grows its chains the same way: rigid units joined
//! where the linker hydrogens were, a random torsion per junction, self-avoidance, step-backs,
//! then a force field):
//! - the unit is used as given: its conformer is never re-embedded, and the torsions inside it
//!   stay as it has them ([`mod@unit`]), but for the turn of each end group about its bond into the
//!   unit (which hydrogen a CH3 end gives up, where an OH end's bond goes: three places 120°
//!   apart, drawn per unit) and, for a monomer without a stereocentre of its own, its mirror
//!   image (drawn per unit: atactic, as RadonPy's default);
//! - each junction bond takes the length of a rule fitted on MMFF94-optimised model compounds
//!   (an ester C(=O)–O 1.35–1.36 Å, an ether C–O 1.42–1.43, an amide C(=O)–N 1.37, Si–O 1.66, C–C
//!   1.51–1.58 by substitution), the side of the hydrogens it replaces and the model compounds'
//!   bond angles (Si–O–Si 140°, C–O–C 112°) ([`junction`], over the atom classes of
//!   `classes`);
//! - each junction torsion is drawn in its wells: trans and gauche± ± 15° about sp3–sp3 bonds,
//!   amide and ester junctions planar trans ± 20°, eclipsed or skew next to a double bond,
//!   planar between conjugated ends, free about Si ([`junction::Torsion`]);
//! - a unit that would come closer than [`contact_bound`] to another is drawn again; crowded
//!   units (PMMA, polystyrene) may turn their side groups, and come closer to their neighbours,
//!   whose neighbourhoods are then relaxed apart with bonds held ([`relax`]); the walk steps back
//!   out of dead ends ([`walk`]); `build` runs the walk, then the relaxation. The first unit
//!   keeps its head hydrogens and the last its tail hydrogens, so the chain ends are capped as in
//!   the monomer.
//!
//! No full force-field optimisation follows: the chain is a starting structure. [`coil`] holds
//! the measures by which tests and benchmarks judge the result.

mod build;
mod cells;
mod classes;
pub mod coil;
mod geometry;
pub mod junction;
mod junction_lengths;
pub mod relax;
mod stop;
pub mod unit;
pub mod walk;

pub use build::build_chain;
pub use stop::Stop;
pub use unit::Monomer;
pub use walk::{contact_bound, Chain, CONTACT_FRACTION, HEAVY_MIN};
