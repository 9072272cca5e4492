//! The pure rules of the Builder Tool Contract (§3–§7) on plain Rust types.
//!
//! No I/O and no `wasm_bindgen` here: everything is tested natively, and the same code serves remote
//! servers and the in-page offline tools.

pub mod apply;
pub mod canonical;
pub mod discovery;
pub mod document;
pub mod files;
pub mod form;
pub mod launch;
pub mod marker;
pub mod provenance;
pub mod result;
pub mod schema;
pub mod seam;
pub mod structure;
pub mod units;
pub mod validate;
pub mod values;
