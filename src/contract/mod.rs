//! The pure rules of the Builder Tool Contract (§3–§7) on plain Rust types.
//!
//! No I/O and no `wasm_bindgen` here: everything is tested natively, and the same code serves remote
//! servers and the in-page offline tools.

pub mod marker;
