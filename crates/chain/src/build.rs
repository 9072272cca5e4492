//! Building a chain: the walk ([`super::walk`]), then the relaxation of its crowded
//! neighbourhoods ([`super::relax`]), walked again on another stream when a relaxation does not
//! come free. Its own module so that the walk and the relaxation (which reads the walk's chain)
//! do not name each other.

use super::relax::relax;
use super::unit::Monomer;
use super::walk::{grow, Chain, STREAM, WALKS};
use crate::stop::Stop;
use megane_pack::rigid::Rng;
use megane_pack::PackControl;

/// Grows a chain of `units` repeat units ([`super::walk`]) and relaxes its crowded
/// neighbourhoods ([`super::relax`]); when a relaxation does not come free, walks again on
/// another stream of the seed (at most [`WALKS`] walks). Stops with a one-line reason when the walk
/// cannot place a unit within its budget of draws, or on cancel.
pub fn build_chain(
    monomer: &Monomer,
    units: usize,
    seed: u64,
    control: &PackControl,
) -> Result<Chain, Stop> {
    let mut last = Stop::Cancelled;
    for walk in 0..WALKS {
        let mut chain = grow(monomer, units, Rng::new(seed, STREAM + walk), control)?;
        match relax(&mut chain, &monomer.graph, control) {
            Ok(moved) => {
                chain.relaxed = moved;
                return Ok(chain);
            }
            Err(Stop::Cancelled) => return Err(Stop::Cancelled),
            Err(e) => last = e,
        }
    }
    Err(last)
}
