//! [`Authorizer`]: the authorization state for one MCP server (the host's configuration, tokens,
//! registrations per issuer), and where a [`Flow`] begins (at most [`MAX_FLOWS_PER_OPERATION`]
//! per operation).

use std::collections::HashMap;

use super::config::{AuthConfig, Registration, Tokens, ENTROPY_BYTES, MAX_FLOWS_PER_OPERATION};
use super::flow::Flow;
use super::{challenge, urls};
use crate::mcp::errors::McpError;
use crate::wire::text::one_line;

/// Authorization state for one MCP server: configuration, tokens and registrations per issuer.
#[derive(Debug, Clone)]
pub struct Authorizer {
    server_url: String,
    config: AuthConfig,
    tokens: Option<Tokens>,
    registrations: HashMap<String, Registration>,
}

impl Authorizer {
    /// Authorization for the MCP endpoint `server_url` (already checked by `Endpoint::parse`).
    pub fn new(server_url: &str, config: AuthConfig) -> Authorizer {
        Authorizer {
            server_url: server_url.to_string(),
            config,
            tokens: None,
            registrations: HashMap::new(),
        }
    }

    /// Tokens from the host's storage (ignored unless they were issued for this server).
    pub fn restore(&mut self, tokens: Tokens) {
        if urls::resource_covers(&tokens.resource, &self.server_url) {
            self.registrations
                .insert(tokens.client.issuer.clone(), tokens.client.clone());
            self.tokens = Some(tokens);
        }
    }

    /// The current tokens (to store, when the host gave storage).
    pub fn tokens(&self) -> Option<&Tokens> {
        self.tokens.as_ref()
    }

    /// The bearer token to send, if signed in.
    pub fn access_token(&self) -> Option<&str> {
        self.tokens.as_ref().map(|t| t.access_token.as_str())
    }

    /// Whether an operation that failed with `error` should go through [`Authorizer::begin`].
    pub fn wants(error: &McpError) -> bool {
        matches!(
            error,
            McpError::Unauthorized { .. } | McpError::InsufficientScope { .. }
        )
    }

    /// Starts a flow after the server answered `status` (401, or 403 `insufficient_scope`) with
    /// `www_authenticate`, on the operation's `attempt`-th flow (0 first); refuses past
    /// [`MAX_FLOWS_PER_OPERATION`]. `entropy` comes from a CSPRNG.
    pub fn begin(
        &mut self,
        status: u16,
        www_authenticate: Option<&str>,
        attempt: u32,
        entropy: &[u8; ENTROPY_BYTES],
    ) -> Result<Flow, McpError> {
        let challenge = www_authenticate
            .and_then(challenge::parse)
            .unwrap_or_default();
        let step_up = status == 403;
        if attempt >= MAX_FLOWS_PER_OPERATION {
            let message = if step_up {
                let scope = challenge
                    .scope
                    .as_ref()
                    .map(|s| s.join(" "))
                    .unwrap_or_default();
                format!("the server still asks for more permissions ({}) after signing in again; ask its administrator to grant them", one_line(&scope))
            } else {
                "the server still refuses the token it just issued (HTTP 401); try again later or ask its administrator".to_string()
            };
            return Err(McpError::Authorization { message });
        }
        Ok(Flow::start(
            &self.server_url,
            &self.config,
            challenge,
            step_up,
            self.tokens.clone(),
            self.registrations.clone(),
            entropy,
        ))
    }

    /// Keeps the tokens of a finished flow (and its registration, for that issuer only).
    pub fn complete(&mut self, tokens: Tokens) {
        self.registrations
            .insert(tokens.client.issuer.clone(), tokens.client.clone());
        self.tokens = Some(tokens);
    }

    /// Forgets the tokens (sign out); registrations are kept.
    pub fn forget_tokens(&mut self) {
        self.tokens = None;
    }
}
