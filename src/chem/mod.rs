//! Chemistry primitives: the element table and V2000 mol blocks.

pub mod elements;
pub mod molblock;
