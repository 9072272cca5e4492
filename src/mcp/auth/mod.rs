//! The MCP authorization flow (revisions 2025-06-18, 2025-11-25 and 2026-07-28; 2025-03-26
//! fallbacks), sans-I/O: fed HTTP answers, the host's callback URL and random bytes, it emits the
//! requests to send and the authorization URL to open. No I/O, clock or randomness of its own.
//!
//! On a 401 (or a 403 `insufficient_scope`, step-up) from the MCP server, [`Authorizer::begin`]
//! starts a [`Flow`]:
//! 1. protected resource metadata (RFC 9728): the challenge's `resource_metadata`, else the
//!    well-known locations ([`urls::prm_candidates`]); its `resource` must cover the server URL
//!    (a mismatch is refused before anything is sent to an authorization server);
//! 2. authorization server metadata (RFC 8414, OpenID discovery, path variants:
//!    [`urls::as_metadata_candidates`]); its `issuer` must equal the one the URL was built from;
//!    no `S256` in `code_challenge_methods_supported` is refused;
//! 3. a refresh (`refresh_token` grant) when a refresh token from the same issuer is held;
//! 4. client identity: a pre-registered client ID (for that issuer), a registration made earlier
//!    with that issuer, a client ID metadata document URL (when the server supports them), else
//!    dynamic client registration (RFC 7591); never credentials of another issuer;
//! 5. authorization code with PKCE S256, `state` and the `resource` indicator (RFC 8707); scopes
//!    from the challenge, else the resource metadata's `scopes_supported`, united with those asked
//!    before (SEP-2350), plus `offline_access` when the server lists it (SEP-2207);
//! 6. the host's `redirect` hook opens the URL and answers with the callback URL: `state`, the
//!    RFC 9207 `iss` (exact string comparison; required when advertised) and `error` are checked;
//! 7. the token request, authenticated as registered (`none`, `client_secret_basic`,
//!    `client_secret_post`);
//! 8. an authorization server without user sign-in gives its token directly for a workload
//!    identity assertion of the host's (RFC 7523 jwt-bearer) or to a client with a secret
//!    (`client_credentials`; MCP extensions `auth/wif` and `oauth-client-credentials`).
//!
//! Every refusal is [`McpError::Authorization`](crate::mcp::McpError::Authorization): one line a user can act on, with the secrets the
//! flow holds hidden ([`Secrets::line`](crate::wire::secrets::Secrets::line)); a token never goes into a URL, a message or `Debug`
//! output.
//!
//! Files: `config.rs` what the host gives and a flow gives back; `authorizer.rs` the state for
//! one server and where a flow begins; `flow/` one run of the flow (`mod.rs` its stages and the
//! metadata, `identity.rs` the client identity, `authorize.rs` the authorization request and
//! callback, `token.rs` the token requests); [`challenge`], [`dpop`], [`urls`] what they read.

mod authorizer;
pub mod challenge;
mod config;
pub mod dpop;
mod flow;
pub mod urls;

pub use authorizer::Authorizer;
pub use challenge::Challenge;
pub use config::{
    AuthConfig, EnterpriseIdp, Registration, Tokens, CLIENT_ASSERTION_JWT, ENTROPY_BYTES, ID_JAG,
    JWT_BEARER, MAX_AUTH_BODY_BYTES, MAX_FLOWS_PER_OPERATION, PRIVATE_KEY_JWT, TOKEN_EXCHANGE,
};
pub use flow::{Flow, Step};
