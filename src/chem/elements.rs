//! The element table for Z = 1–118 (symbols, standard atomic weights, van der Waals and covalent
//! radii): the workspace crate `megane-elements`, which the chain builder (`megane-chain`) reads
//! too, so that there is one table.

pub use megane_elements::*;
