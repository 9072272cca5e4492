//! megane-builder-client: the client side of the Megane Builder Tool Contract (MCP) for the page.
//!
//! Modules, in layer order (each uses only itself and those above it in this list; checked by
//! `tests/layers.rs`):
//! - [`pack`]: the rigid-molecule packing core (the crate `megane-pack`, `crates/pack`, re-exported
//!   here; a crate of its own so the page build compiles it at opt-level 2); the §5.1 scanner
//!   (`megane-structure-scan`) sits beside it.
//! - [`wire`]: the wire formats (SSE, JSON-RPC), the one sanitiser for untrusted text, secrets
//!   redaction, the URL splitter and the server URL check, the caps and the §6 timing rules.
//! - [`chem`]: elements and V2000 mol blocks.
//! - [`contract`]: the pure rules of contract §3–§7 (discovery, forms, arguments, results, apply plans,
//!   provenance) on plain Rust types. No I/O.
//! - [`mcp`]: a sans-I/O MCP Streamable HTTP client core, plus the fetch transport on wasm32.
//! - [`offline`]: the in-page `liquid_box`, `polymer_chain` and `solvate` tools built on [`pack`].
//! - [`wasm`] (wasm32 only): the JavaScript API, thin wrappers over the above.

pub mod chem;
pub mod contract;
pub mod mcp;
pub mod offline;
pub mod wire;
pub use megane_pack as pack;

#[cfg(target_arch = "wasm32")]
pub mod wasm;
