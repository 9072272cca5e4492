//! Elements and V2000 mol blocks.
