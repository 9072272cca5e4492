//! megane-builder-client: the client side of the Megane Builder Tool Contract (MCP) for the page.
//!
//! Modules:
//! - [`chem`]: elements and V2000 mol blocks.
//! - [`contract`]: the pure rules of contract §3–§7 (discovery, forms, arguments, results, apply plans,
//!   provenance) on plain Rust types. No I/O.
//! - [`mcp`]: a sans-I/O MCP Streamable HTTP client core, plus the fetch transport on wasm32.
//! - [`pack`]: the rigid-molecule packing core (the crate `megane-pack`, `crates/pack`, re-exported
//!   here; a crate of its own so the page build compiles it at opt-level 2).
//! - [`offline`]: the in-page `liquid_box` and `solvate` tools built on [`pack`].
//! - [`wasm`] (wasm32 only): the JavaScript API, thin wrappers over the above.

pub mod chem;
pub mod contract;
pub mod mcp;
pub mod offline;
pub use megane_pack as pack;

#[cfg(target_arch = "wasm32")]
pub mod wasm;
