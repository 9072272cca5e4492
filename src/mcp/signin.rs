//! The sign-in and retry policy of one connection, sans-I/O. When an operation fails, [`SignIn`]
//! says what the driver does next ([`AfterFailure`]): report the error; start the operation again
//! at once (the server asked for its DPoP nonce, which the last answer gave: once per operation);
//! wait for the sign-in another operation is running (one authorization flow at a time per
//! connection), then start it again or report the error; or run a sign-in itself (at most
//! [`MAX_FLOWS_PER_OPERATION`] per operation: a sign-in and one step-up). It then takes the flow's
//! outcome ([`SignIn::finish`]): the authorizer keeps the tokens, the client sends the new token (a
//! fresh client when the handshake itself was refused), and the tokens' JSON comes back for the
//! host's storage. It also says which requests carry a DPoP proof, and with which nonce
//! ([`SignIn::proof_for`], [`flow_proof`]).
//!
//! Fed the client's refusals, the answers' heads and random bytes; no I/O, clock or randomness of
//! its own. The drivers (`fetch.rs` on wasm32, the native conformance driver) send the requests,
//! call the host's hooks, sign, and wake the operations that wait.

use super::auth::dpop::{self, PublicKey};
use super::auth::{challenge, Authorizer, Flow, Tokens, ENTROPY_BYTES, MAX_FLOWS_PER_OPERATION};
use super::client::{Client, Config};
use super::errors::McpError;
use super::headers::{header_value, HttpRequest, AUTHORIZATION};

/// The sign-in state of one connection: the host's authorizer (none: the host gave no sign-in,
/// and no operation signs in), whether a flow is running, the MCP server's latest `DPoP-Nonce`.
#[derive(Debug, Default)]
pub struct SignIn {
    authorizer: Option<Authorizer>,
    running: bool,
    dpop_nonce: Option<String>,
}

/// One operation's tries so far (a new one per operation the host starts).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tries {
    /// Sign-ins this operation ran or waited for and then retried after.
    flows: u32,
    /// Whether it was started again for the server's DPoP nonce.
    nonce_retry_used: bool,
}

/// What the driver does after an operation failed.
#[derive(Debug)]
pub enum AfterFailure {
    /// Report the error.
    Fail,
    /// Start the operation again now.
    Retry,
    /// Another operation is signing in: wait until it ends ([`SignIn::finish`]), then start the
    /// operation again (with the token it got).
    WaitThenRetry,
    /// Another operation is signing in and this one has used its sign-ins: wait until it ends,
    /// then report the error.
    WaitThenFail,
    /// Run this flow ([`Flow::step`] until `Done` or `Failed`), then hand its outcome to
    /// [`SignIn::finish`] and wake the operations that wait.
    SignIn(Box<Flow>),
}

/// A finished sign-in ([`SignIn::finish`]): start the operation again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// The tokens as JSON, for the host's storage (keyed by the server URL).
    pub tokens_json: Option<String>,
    /// The handshake itself had been refused: the client was replaced by a fresh one with the
    /// token from its first request (its operation ids start again).
    pub new_client: bool,
}

/// What a DPoP proof (RFC 9449 §4) must cover; the driver signs [`ProofRequest::signing_input`]
/// with the connection's key and adds the `DPoP` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofRequest {
    /// The request's method.
    pub method: String,
    /// The request's URL.
    pub url: String,
    /// The access token the request carries (its hash goes in `ath`), for a resource request.
    pub access_token: Option<String>,
    /// The server's nonce, when it gave one.
    pub nonce: Option<String>,
}

impl ProofRequest {
    /// The proof's JWS signing input, issued at `iat` (seconds since the Unix epoch) with `jti`
    /// (unique per proof).
    pub fn signing_input(&self, key: &PublicKey, iat: u64, jti: &str) -> String {
        dpop::proof_input(
            key,
            &self.method,
            &self.url,
            iat,
            jti,
            self.access_token.as_deref(),
            self.nonce.as_deref(),
        )
    }
}

impl SignIn {
    /// No sign-in: every refusal is reported.
    pub fn new() -> SignIn {
        SignIn::default()
    }

    /// The host's sign-in state (`connect(url, {auth})`), before the first request: tokens it
    /// already holds (restored from the host's storage) are sent from the first request, unless
    /// they are DPoP-bound (useless without the key of the connection they were bound to) or the
    /// host gave its own token.
    pub fn set_authorizer(
        &mut self,
        authorizer: Authorizer,
        client: &mut Client,
        config: &mut Config,
    ) {
        let bound = authorizer.tokens().is_some_and(|t| t.dpop);
        if let Some(token) = authorizer.access_token().filter(|_| !bound) {
            if config.token.is_none() {
                config.token = Some(token.to_string());
                client.set_token(Some(token.to_string()));
            }
        }
        self.authorizer = Some(authorizer);
    }

    /// The host's sign-in state, when it gave one.
    pub fn authorizer(&self) -> Option<&Authorizer> {
        self.authorizer.as_ref()
    }

    /// Whether a sign-in is running (until [`SignIn::finish`]).
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// An operation failed with `error` (on `client`, which holds the refusal's challenge):
    /// what to do next. `entropy` (a CSPRNG's bytes for the flow's PKCE verifier and `state`) is
    /// called only when a sign-in starts. An error here ends the operation with it (the flow
    /// would not start: past [`MAX_FLOWS_PER_OPERATION`], no randomness).
    pub fn after_failure(
        &mut self,
        tries: &mut Tries,
        client: &mut Client,
        error: &McpError,
        entropy: impl FnOnce() -> Result<[u8; ENTROPY_BYTES], McpError>,
    ) -> Result<AfterFailure, McpError> {
        if !tries.nonce_retry_used && self.nonce_asked(client) {
            // RFC 9449 §9: the server wants its nonce in the proof: once more, with it.
            tries.nonce_retry_used = true;
            return Ok(AfterFailure::Retry);
        }
        let Some(authorizer) = self.authorizer.as_mut() else {
            return Ok(AfterFailure::Fail);
        };
        if !Authorizer::wants(error) {
            return Ok(AfterFailure::Fail);
        }
        if self.running {
            // Retried with the other operation's token, as one of this operation's sign-ins.
            if tries.flows + 1 < MAX_FLOWS_PER_OPERATION {
                tries.flows += 1;
                return Ok(AfterFailure::WaitThenRetry);
            }
            return Ok(AfterFailure::WaitThenFail);
        }
        let (status, header) = client.take_auth_challenge().unwrap_or((401, None));
        let entropy = entropy()?;
        let flow = authorizer.begin(status, header.as_deref(), tries.flows, &entropy)?;
        self.running = true;
        Ok(AfterFailure::SignIn(Box::new(flow)))
    }

    /// The outcome of the flow [`AfterFailure::SignIn`] gave (the sign-in ends either way; wake
    /// the operations that wait): its error ends the operation; its tokens go to the authorizer
    /// and the client (`config` makes a fresh client when the handshake was refused).
    pub fn finish(
        &mut self,
        outcome: Result<Tokens, McpError>,
        tries: &mut Tries,
        client: &mut Client,
        config: &Config,
    ) -> Result<SignedIn, McpError> {
        self.running = false;
        let tokens = outcome?;
        let Some(authorizer) = self.authorizer.as_mut() else {
            return Err(McpError::Authorization {
                message: "the sign-in was driven out of order".into(),
            });
        };
        let dpop = tokens.dpop;
        authorizer.complete(tokens);
        let token = authorizer.access_token().map(str::to_string);
        let new_client = client.server_info().is_none();
        if new_client {
            let mut fresh = config.clone();
            fresh.token = token;
            *client = Client::new(fresh)?;
        } else {
            client.set_token(token);
        }
        client.set_token_dpop(dpop);
        tries.flows += 1;
        Ok(SignedIn {
            tokens_json: authorizer
                .tokens()
                .and_then(|t| serde_json::to_string(t).ok()),
            new_client,
        })
    }

    /// The head of every answer of the MCP server: its latest `DPoP-Nonce` is kept for the next
    /// proofs.
    pub fn observe_answer(&mut self, headers: &[(String, String)]) {
        if let Some(nonce) = header_value(headers, "dpop-nonce") {
            self.dpop_nonce = Some(nonce.to_string());
        }
    }

    /// The proof a request to the MCP server needs: one whose `Authorization` uses the `DPoP`
    /// scheme (a DPoP-bound token, RFC 9449 §7.1), with the server's latest nonce.
    pub fn proof_for(&self, request: &HttpRequest) -> Option<ProofRequest> {
        let token = request
            .header(AUTHORIZATION)
            .and_then(|h| h.strip_prefix("DPoP "))?;
        Some(ProofRequest {
            method: request.method.as_str().to_string(),
            url: request.url.clone(),
            access_token: Some(token.to_string()),
            nonce: self.dpop_nonce.clone(),
        })
    }

    /// Whether the last refusal was a 401 `use_dpop_nonce` and the server's nonce is known
    /// (taken: the client is ready to connect again when it was the handshake).
    fn nonce_asked(&self, client: &mut Client) -> bool {
        let asked = match client.peek_auth_challenge() {
            Some((401, Some(h))) => challenge::parse(h)
                .is_some_and(|c| c.dpop && c.error.as_deref() == Some("use_dpop_nonce")),
            _ => false,
        };
        if !asked || self.dpop_nonce.is_none() {
            return false;
        }
        client.take_auth_challenge();
        let token = client.token().map(str::to_string);
        client.set_token(token);
        true
    }
}

/// The proof a request of the flow ([`Flow::step`]'s `Send`) needs: a token request of a flow
/// whose tokens are DPoP-bound (RFC 9449 §5), with the authorization server's nonce.
pub fn flow_proof(flow: &Flow, request: &HttpRequest) -> Option<ProofRequest> {
    let nonce = flow.dpop_proof()?;
    Some(ProofRequest {
        method: request.method.as_str().to_string(),
        url: request.url.clone(),
        access_token: None,
        nonce: nonce.map(str::to_string),
    })
}

/// The client assertion to sign ([`Flow::signing_input`], at `now` seconds since the Unix epoch)
/// for the flow's `Sign` step, when the host gave a client key; else the refusal.
pub fn assertion_input(flow: &mut Flow, now: u64, key_given: bool) -> Result<String, McpError> {
    let input = flow.signing_input(now);
    if !key_given {
        return Err(McpError::Authorization {
            message: "the client assertion could not be signed (no client key given)".into(),
        });
    }
    Ok(input)
}

/// The host's `redirect` hook answered `callback` (the URL the authorization server sent the
/// browser back to; `None`: no answer) for the flow's `Redirect` step.
pub fn callback_answered(flow: &mut Flow, callback: Option<&str>) -> Result<(), McpError> {
    match callback {
        Some(url) => {
            flow.handle_callback(url);
            Ok(())
        }
        None => Err(McpError::Authorization {
            message: "the sign-in window was closed or gave no answer".into(),
        }),
    }
}
