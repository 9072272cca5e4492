//! The JavaScript API (wasm32 only): thin `#[wasm_bindgen]` wrappers over [`crate::contract`] and
//! [`crate::chem`]. Conversions live in [`interop`] (and [`snapshot`], [`document`], [`toolbox`]),
//! their JavaScript halves in `src/js/snippets/`; `www/../pkg/*.d.ts` plus `src/wasm/types.d.ts`
//! is the reviewed contract of this API.
//!
//! Rule: functions return values or `{ok: false, error}` for anything a server or a user can get
//! wrong; only programmer errors (a wrong argument type) throw.

mod api;
mod connect;
mod document;
mod files;
mod interop;
mod megane;
mod offline;
mod outcomes;
mod results;
mod snapshot;
mod toolbox;
mod units;

pub use api::*;
pub use connect::*;
pub use files::*;
pub use megane::*;
pub use offline::*;
pub use outcomes::*;
pub use results::*;
pub use units::*;

/// Threaded build only: `initThreadPool(n)` starts the rayon pool on `n` Web Workers (the page
/// must be cross-origin isolated). The packing core then evaluates in parallel; results are
/// bit-identical to the single-threaded build's.
#[cfg(feature = "threads")]
pub use wasm_bindgen_rayon::init_thread_pool;
