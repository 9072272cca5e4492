//! The JavaScript API (wasm32 only): thin `#[wasm_bindgen]` wrappers over [`crate::contract`] and
//! [`crate::chem`]. Conversions live in [`interop`]; `www/../pkg/*.d.ts` plus `src/wasm/types.d.ts`
//! is the reviewed contract of this API.
//!
//! Rule: functions return values or `{ok: false, error}` for anything a server or a user can get
//! wrong; only programmer errors (a wrong argument type) throw.

mod api;
mod connect;
mod interop;

pub use api::*;
pub use connect::*;
