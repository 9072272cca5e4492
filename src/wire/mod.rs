//! The bottom layer: the wire formats and the shared rules that both [`crate::contract`] and
//! [`crate::mcp`] read, so neither imports the other's. No I/O, no clock of its own.
//!
//! - [`sse`]: incremental `text/event-stream` decoder.
//! - [`jsonrpc`]: JSON-RPC 2.0 messages, and the one JSON-RPC error type ([`jsonrpc::RpcError`]).
//! - [`text`]: the one sanitiser for untrusted text (one line, plain block, excerpt).
//! - [`secrets`]: secrets hidden in untrusted text before it is shown.
//! - [`url`]: the one URL splitter.
//! - [`endpoint`]: the server URL check (§9, https unless loopback) and a URL as a message shows it.
//! - [`caps`]: the byte and atom caps every path applies.
//! - [`timing`]: §6 call timeouts and the progress style.
//!
//! Layer order (checked by `tests/layers.rs`): `crates/structure-scan`, `crates/pack` < `wire` <
//! `chem` < `contract` < `mcp` < `offline` < `wasm`; a module uses its own layer and those below.

pub mod caps;
pub mod endpoint;
pub mod jsonrpc;
pub mod secrets;
pub mod sse;
pub mod text;
pub mod timing;
pub mod url;
