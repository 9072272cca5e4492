//! MCP Streamable HTTP client, sans-I/O: the protocol core that the fetch transport (and the native
//! tests) drive. No I/O, no clocks, no `wasm_bindgen` outside `fetch`.
//!
//! The wire formats (SSE, JSON-RPC), the URL check and the sanitiser it reads are the bottom
//! layer's ([`crate::wire`]).
//!
//! - [`revisions`]: the protocol revisions we speak.
//! - [`version`]: protocol negotiation and the era the host asked for.
//! - [`headers`]: the HTTP request type and header names.
//! - [`param_headers`]: 2026-07-28 `x-mcp-header` → `Mcp-Param-*` headers.
//! - [`session`]: negotiated state and request building.
//! - [`body`]: response body reading with a byte cap.
//! - [`call`]: call timeouts and progress.
//! - [`errors`]: user-facing errors.
//! - [`elicit`]: elicitation forms (defaults, answers).
//! - [`client`]: the state machine.
//! - [`auth`]: the authorization flow (OAuth 2.1 + PKCE: metadata discovery, registration, tokens).
//! - [`signin`]: the sign-in and retry policy of a connection (which failed operation signs in,
//!   waits or is retried; DPoP nonces and proofs).
//! - `fetch` (wasm32 only): the transport on the global `fetch`.
//!
//! Driving the core (what `fetch` does, and what the tests do with sockets or recordings):
//!
//! ```
//! use megane_builder_client::mcp::{Client, Config, Event};
//! let mut config = Config::new("http://127.0.0.1:8765/mcp");
//! config.token = Some("secret".into());
//! let mut client = Client::new(config).unwrap(); // refuses http: to a non-loopback host
//! let connect = client.connect(0);
//! while let Some(event) = client.poll_event() {
//!     match event {
//!         Event::SendRequest { exchange, request } => {
//!             // send `request`; then handle_head(exchange, status, headers, now),
//!             // handle_chunk(exchange, bytes, now)…, handle_end(exchange, now)
//!             // (or handle_network_error); then poll_event() again. While keeps_chunks(exchange),
//!             // keep the chunks, and feed them all again when wants_replay(exchange) says so.
//!             assert_eq!(request.header("Accept"), Some("application/json, text/event-stream"));
//!             let _ = exchange;
//!         }
//!         other => println!("{other:?}"),
//!     }
//! }
//! // Call handle_timeout(now) when poll_timeout() says so.
//! let _ = (connect, client.poll_timeout());
//! ```
//!
//! Tests: `tests/mcp_sse.rs`, `tests/mcp_core.rs` and `tests/mcp_faults.rs` replay the recorded
//! reference-server exchanges (plain `cargo test`); `tests/mcp_live.rs` runs the core against the Python
//! SDK peer (`tests/peers/setup.sh` first); `tests/peers/run_everything_tests.sh`,
//! `run_conformance_suite.sh`, `run_wasm_node_tests.sh` and `run_wasm_browser_tests.sh` run the rest.

pub mod auth;
pub mod body;
pub mod call;
pub mod client;
pub mod elicit;
pub mod errors;
#[cfg(target_arch = "wasm32")]
pub mod fetch;
pub mod headers;
pub mod param_headers;
pub mod revisions;
pub mod session;
pub mod signin;
pub mod version;

pub use client::{CallOptions, Client, Config, Event, ExchangeId, OpId, OpResult, ServerInfo};
pub use elicit::{Action as ElicitAction, ElicitId, Form as ElicitForm};
pub use errors::McpError;
pub use headers::{HttpRequest, Method};
pub use version::ProtocolChoice;
