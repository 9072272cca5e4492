//! MCP Streamable HTTP client, sans-I/O: the protocol core that the fetch transport (and the native
//! tests) drive. No I/O, no clocks, no `wasm_bindgen` outside `fetch`.
//!
//! - [`sse`]: incremental `text/event-stream` decoder.
//! - [`jsonrpc`]: JSON-RPC 2.0 messages.
//! - [`version`]: protocol revisions and negotiation.
//! - [`headers`]: the HTTP request type and header names.
//! - [`endpoint`]: URL checks (HTTPS unless loopback).
//! - [`session`]: negotiated state and request building.
//! - [`body`]: response body reading with a byte cap.
//! - [`call`]: call timeouts and progress.
//! - [`errors`]: user-facing errors.
//! - [`client`]: the state machine.
//! - `fetch` (wasm32 only): the transport on the global `fetch`.

pub mod body;
pub mod call;
pub mod client;
pub mod endpoint;
pub mod errors;
#[cfg(target_arch = "wasm32")]
pub mod fetch;
pub mod headers;
pub mod jsonrpc;
pub mod session;
pub mod sse;
pub mod version;

pub use client::{CallOptions, Client, Config, Event, ExchangeId, OpId, OpResult, ServerInfo};
pub use errors::McpError;
pub use headers::{HttpRequest, Method};
pub use version::ProtocolChoice;
