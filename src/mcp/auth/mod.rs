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
//! Every refusal is [`McpError::Authorization`]: one line a user can act on, with the secrets the
//! flow holds hidden ([`Secrets::line`]); a token never goes into a URL, a message or `Debug`
//! output.

pub mod challenge;
pub mod dpop;
pub mod urls;

use std::collections::HashMap;
use std::fmt;

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

pub use challenge::Challenge;

use super::errors::{http_status, McpError};
use super::headers::{HttpRequest, Method};
use crate::wire::secrets::Secrets;
use crate::wire::text::one_line;

/// Most authorization flows for one operation (the sign-in and one step-up): a server whose 403
/// `insufficient_scope` never ends does not open a third sign-in window.
pub const MAX_FLOWS_PER_OPERATION: u32 = 2;

/// Cap on one metadata, registration or token answer, in bytes.
pub const MAX_AUTH_BODY_BYTES: usize = 256 * 1024;

/// RFC 7523 §2.1: the JWT bearer grant type.
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// The token endpoint auth method of a client that signs its assertions (RFC 7523 §2.2).
pub const PRIVATE_KEY_JWT: &str = "private_key_jwt";
/// `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
pub const CLIENT_ASSERTION_JWT: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// RFC 8693 token exchange grant type.
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an identity assertion JWT authorization grant (SEP-990).
pub const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// Random bytes a flow needs (PKCE verifier: 32, `state`: 16), from the host's CSPRNG
/// (`crypto.getRandomValues` in the package).
pub const ENTROPY_BYTES: usize = 48;

/// How the host identifies this client to authorization servers.
#[derive(Clone, Default)]
pub struct AuthConfig {
    /// Where the authorization server sends the browser back (the page's callback URL).
    pub redirect_uri: String,
    /// A pre-registered client ID.
    pub client_id: Option<String>,
    /// Its secret, when it has one (a page usually cannot keep one).
    pub client_secret: Option<String>,
    /// The issuer the pre-registered ID belongs to (used with any issuer when absent).
    pub client_issuer: Option<String>,
    /// An HTTPS URL of this client's ID metadata document (used where servers support them).
    pub client_metadata_url: Option<String>,
    /// A workload identity JWT (RFC 7523 assertion) for servers without user sign-in.
    pub assertion: Option<String>,
    /// The host holds an ES256 (P-256) private key for the pre-registered `client_id`: the client
    /// authenticates with `private_key_jwt` (RFC 7523 §2.2) where the authorization server lists
    /// it. The key never enters the core: [`Step::Sign`] asks the driver for a signature.
    pub client_key: bool,
    /// Enterprise-managed authorization (MCP extension, SEP-990): the user's identity at the
    /// enterprise identity provider, exchanged there for an identity assertion grant.
    pub enterprise: Option<EnterpriseIdp>,
    /// Client metadata for dynamic registration (RFC 7591 §2); `redirect_uris`, `grant_types`,
    /// `response_types`, `token_endpoint_auth_method` and `application_type` are filled in when absent.
    pub client_metadata: Option<Map<String, Value>>,
}

/// The enterprise identity provider of enterprise-managed authorization (SEP-990): where the
/// host's ID token is exchanged (RFC 8693) for an identity assertion JWT authorization grant
/// (ID-JAG) meant for the MCP server's authorization server, which then takes it with the
/// jwt-bearer grant (RFC 7523).
#[derive(Clone, Default)]
pub struct EnterpriseIdp {
    /// The identity provider's token endpoint (https, or http on loopback).
    pub token_endpoint: String,
    /// The user's ID token from that identity provider (a secret: redacted from every message).
    pub id_token: String,
    /// This client's ID at the identity provider, and its secret when it has one.
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

impl fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthConfig")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .finish()
    }
}

/// A client identity at one authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// The issuer it belongs to.
    pub issuer: String,
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`, if any.
    pub client_secret: Option<String>,
    /// `none`, `client_secret_basic` or `client_secret_post`.
    pub auth_method: String,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

/// Tokens for one server, with what is needed to refresh them. Serialised (JSON) only into
/// storage the host passed.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// The bearer token.
    pub access_token: String,
    /// The refresh token, if granted.
    pub refresh_token: Option<String>,
    /// The scopes asked for (united on step-up).
    pub scopes: Vec<String>,
    /// The resource indicator they were issued for.
    pub resource: String,
    /// The token endpoint (for refresh).
    pub token_endpoint: String,
    /// The client they were issued to.
    pub client: Registration,
    /// Sender-constrained (`token_type` `DPoP`, RFC 9449): sent as `Authorization: DPoP …` with a
    /// proof of the connection's key, which lives only as long as the connection.
    #[serde(default)]
    pub dpop: bool,
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"<redacted>")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("scopes", &self.scopes)
            .field("resource", &self.resource)
            .field("client", &self.client)
            .finish()
    }
}

/// Authorization state for one MCP server: configuration, tokens and registrations per issuer.
#[derive(Debug, Clone)]
pub struct Authorizer {
    server_url: String,
    config: AuthConfig,
    tokens: Option<Tokens>,
    registrations: HashMap<String, Registration>,
}

/// What the driver does next for a [`Flow`].
#[derive(Debug)]
pub enum Step {
    /// Send this request and feed the answer to [`Flow::handle_response`] (or
    /// [`Flow::handle_network_error`]).
    Send(HttpRequest),
    /// Open this authorization URL (the host's `redirect` hook) and feed the callback URL to
    /// [`Flow::handle_callback`].
    Redirect(String),
    /// Sign [`Flow::signing_input`] with the host's ES256 client key and feed the signature
    /// (64 bytes, `r ‖ s` as WebCrypto gives it) to [`Flow::handle_signature`].
    Sign,
    /// Signed in: give the tokens to [`Authorizer::complete`] and retry the operation.
    Done(Box<Tokens>),
    /// Refused: the operation fails with this error.
    Failed(McpError),
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
        let mut prm = Vec::new();
        if let Some(u) = challenge.resource_metadata.as_deref() {
            if urls::secure(u) {
                prm.push(u.to_string());
            }
        }
        for u in urls::prm_candidates(&self.server_url) {
            if !prm.contains(&u) {
                prm.push(u);
            }
        }
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let verifier = b64.encode(&entropy[..32]);
        let state = b64.encode(&entropy[32..]);
        let mut flow = Flow {
            server_url: self.server_url.clone(),
            config: self.config.clone(),
            challenge,
            step_up,
            previous: self.tokens.clone(),
            registrations: self.registrations.clone(),
            verifier,
            state,
            stage: Stage::Prm {
                candidates: prm,
                index: 0,
            },
            resource: urls::canonical_resource(&self.server_url),
            prm_scopes: None,
            issuer: String::new(),
            meta: Map::new(),
            registration: None,
            scopes: Vec::new(),
            next: None,
            network_retry_used: false,
            last_network_error: None,
            last_request: None,
            unsigned: None,
            dpop: false,
            dpop_nonce: None,
            dpop_retry_used: false,
            prm_dpop_required: false,
        };
        flow.send_current();
        Ok(flow)
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

#[derive(Debug)]
enum Stage {
    Prm {
        candidates: Vec<String>,
        index: usize,
    },
    AsMeta {
        candidates: Vec<String>,
        index: usize,
        legacy: bool,
    },
    Refresh,
    Register,
    Authorize,
    /// At the enterprise identity provider: ID token → ID-JAG (RFC 8693).
    Exchange,
    Token,
    Finished,
}

/// One run of the authorization flow. Drive it with [`Flow::step`].
pub struct Flow {
    server_url: String,
    config: AuthConfig,
    challenge: Challenge,
    step_up: bool,
    previous: Option<Tokens>,
    registrations: HashMap<String, Registration>,
    verifier: String,
    state: String,
    stage: Stage,
    resource: String,
    prm_scopes: Option<Vec<String>>,
    issuer: String,
    meta: Map<String, Value>,
    registration: Option<Registration>,
    scopes: Vec<String>,
    next: Option<Step>,
    network_retry_used: bool,
    last_network_error: Option<String>,
    last_request: Option<HttpRequest>,
    /// A token request waiting for its `private_key_jwt` client assertion, and the JWS signing
    /// input handed out for it.
    unsigned: Option<(TokenParams, Option<String>)>,
    /// DPoP (RFC 9449): whether token requests carry a proof, the authorization server's nonce,
    /// and whether the one nonce retry was used.
    dpop: bool,
    dpop_nonce: Option<String>,
    dpop_retry_used: bool,
    prm_dpop_required: bool,
}

/// A token request's form parameters, before the client's authentication is added.
type TokenParams = Vec<(&'static str, String)>;

impl fmt::Debug for Flow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Flow")
            .field("stage", &self.stage)
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .finish()
    }
}

fn get(url: &str) -> HttpRequest {
    HttpRequest {
        method: Method::Get,
        url: url.to_string(),
        headers: vec![("Accept".into(), "application/json".into())],
        body: Vec::new(),
    }
}

fn json_object(status: u16, body: &[u8]) -> Option<Map<String, Value>> {
    if !(200..300).contains(&status) || body.len() > MAX_AUTH_BODY_BYTES {
        return None;
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    }
}

fn str_list(v: Option<&Value>) -> Option<Vec<String>> {
    v?.as_array().map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    })
}

impl Flow {
    /// The next thing to do; [`Step::Done`] and [`Step::Failed`] end the flow.
    pub fn step(&mut self) -> Step {
        if let Some(Step::Send(r)) = &self.next {
            self.last_request = Some(r.clone());
        }
        self.next.take().unwrap_or_else(|| {
            Step::Failed(McpError::Authorization {
                message: "the sign-in was driven out of order".into(),
            })
        })
    }

    /// One line for a message: every secret this flow holds hidden, then the sanitiser.
    fn shown(&self, text: &str) -> String {
        Secrets([
            self.config.client_secret.as_deref(),
            self.config.assertion.as_deref(),
            self.config.enterprise.as_ref().map(|e| e.id_token.as_str()),
            self.config
                .enterprise
                .as_ref()
                .and_then(|e| e.client_secret.as_deref()),
            self.previous
                .as_ref()
                .and_then(|t| t.refresh_token.as_deref()),
            self.previous.as_ref().map(|t| t.access_token.as_str()),
            self.registration
                .as_ref()
                .and_then(|r| r.client_secret.as_deref()),
            Some(self.verifier.as_str()),
        ])
        .line(text)
    }

    fn fail(&mut self, message: String) {
        self.stage = Stage::Finished;
        self.next = Some(Step::Failed(McpError::Authorization { message }));
    }

    /// The `error: error_description` of an OAuth error answer, shown safely.
    fn oauth_error(&self, status: u16, body: &[u8]) -> String {
        let parsed: Option<Value> = serde_json::from_slice(body).ok();
        let error = parsed
            .as_ref()
            .and_then(|v| v["error"].as_str())
            .unwrap_or("");
        let desc = parsed
            .as_ref()
            .and_then(|v| v["error_description"].as_str())
            .unwrap_or("");
        let detail = match (error.is_empty(), desc.is_empty()) {
            (false, false) => format!(": {error}: {desc}"),
            (false, true) => format!(": {error}"),
            _ => String::new(),
        };
        self.shown(&format!("{}{detail}", http_status(status)))
    }

    fn send_current(&mut self) {
        let url = match &self.stage {
            Stage::Prm { candidates, index }
            | Stage::AsMeta {
                candidates, index, ..
            } => candidates.get(*index).cloned(),
            _ => None,
        };
        match url {
            Some(u) => self.next = Some(Step::Send(get(&u))),
            None => self.candidates_exhausted(),
        }
    }

    fn candidates_exhausted(&mut self) {
        match &self.stage {
            Stage::Prm { .. } => {
                // 2025-03-26 servers: no resource metadata; the authorization server is the
                // server's origin (its metadata at the root, else the default endpoints).
                let origin = urls::split(&self.server_url)
                    .map(|p| p.origin())
                    .unwrap_or_default();
                self.issuer = origin.clone();
                self.stage = Stage::AsMeta {
                    candidates: urls::as_metadata_candidates(&origin),
                    index: 0,
                    legacy: true,
                };
                self.send_current();
            }
            Stage::AsMeta { legacy: true, .. } => {
                let o = self.issuer.clone();
                self.meta = json!({
                    "issuer": o,
                    "authorization_endpoint": format!("{o}/authorize"),
                    "token_endpoint": format!("{o}/token"),
                    "registration_endpoint": format!("{o}/register"),
                    "code_challenge_methods_supported": ["S256"],
                })
                .as_object()
                .cloned()
                .unwrap_or_default();
                self.after_metadata();
            }
            Stage::AsMeta { .. } => {
                let issuer = self.shown(&self.issuer);
                let last = match &self.last_network_error {
                    Some(e) => format!("; the last attempt could not reach it: {e}"),
                    None => String::new(),
                };
                self.fail(format!("the authorization server {issuer} publishes no metadata (RFC 8414 or OpenID discovery){last}"));
            }
            _ => {}
        }
    }

    /// A transport failure (the request got no HTTP answer).
    pub fn handle_network_error(&mut self, detail: &str) {
        let detail = self.shown(detail);
        match &mut self.stage {
            Stage::Prm { index, .. } | Stage::AsMeta { index, .. } => {
                // A metadata GET is tried twice (a kept-alive connection the server was closing),
                // then the location is skipped (in a browser: no CORS).
                if self.network_retry_used {
                    self.network_retry_used = false;
                    *index += 1;
                } else {
                    self.network_retry_used = true;
                }
                self.last_network_error = Some(detail);
                self.send_current();
            }
            // A registration or token POST is sent once more, as a browser does when a reused
            // connection closes before any answer (a code is single-use: a server that did take
            // the first one refuses the second with invalid_grant, in one line).
            _ if !self.network_retry_used && self.last_request.is_some() => {
                self.network_retry_used = true;
                self.next = self.last_request.take().map(Step::Send);
            }
            _ => self.fail(format!(
                "the authorization server could not be reached ({detail})"
            )),
        }
    }

    /// The HTTP answer to the last [`Step::Send`] (headers are not needed: every answer is JSON
    /// or refused).
    pub fn handle_response(&mut self, status: u16, headers: &[(String, String)], body: &[u8]) {
        self.network_retry_used = false;
        if matches!(self.stage, Stage::Token | Stage::Refresh)
            && self.dpop_nonce_retry(status, headers, body)
        {
            return;
        }
        match std::mem::replace(&mut self.stage, Stage::Finished) {
            Stage::Prm { candidates, index } => match json_object(status, body) {
                Some(prm) => self.read_prm(prm),
                None => {
                    self.stage = Stage::Prm {
                        candidates,
                        index: index + 1,
                    };
                    self.send_current();
                }
            },
            Stage::AsMeta {
                candidates,
                index,
                legacy,
            } => match json_object(status, body) {
                Some(meta) => {
                    self.stage = Stage::AsMeta {
                        candidates,
                        index,
                        legacy,
                    };
                    self.read_as_metadata(meta)
                }
                None => {
                    self.stage = Stage::AsMeta {
                        candidates,
                        index: index + 1,
                        legacy,
                    };
                    self.send_current();
                }
            },
            Stage::Refresh => match self.read_token(status, body, true) {
                Ok(t) => self.finish(t),
                // A refused refresh: sign in again (the old tokens stay known, to be redacted).
                Err(_) => self.choose_client(),
            },
            Stage::Register => self.read_registration(status, body),
            Stage::Exchange => self.read_exchange(status, body),
            Stage::Token => match self.read_token(status, body, false) {
                Ok(t) => self.finish(t),
                Err(m) => self.fail(m),
            },
            Stage::Authorize | Stage::Finished => {
                self.fail("the sign-in was driven out of order".into());
            }
        }
    }

    fn read_prm(&mut self, prm: Map<String, Value>) {
        let Some(resource) = prm.get("resource").and_then(Value::as_str) else {
            return self.fail("the server's protected resource metadata names no resource".into());
        };
        if !urls::resource_covers(resource, &self.server_url) {
            let r = self.shown(resource);
            return self.fail(format!("the server's protected resource metadata is for another resource ({r}), not this server: not signing in"));
        }
        self.resource = resource.to_string();
        self.prm_scopes = str_list(prm.get("scopes_supported"));
        self.prm_dpop_required = prm.get("dpop_bound_access_tokens_required") == Some(&json!(true));
        let issuer = str_list(prm.get("authorization_servers")).and_then(|a| a.into_iter().next());
        let Some(issuer) = issuer else {
            return self.fail(
                "the server's protected resource metadata names no authorization server".into(),
            );
        };
        if !urls::secure(&issuer) {
            let i = self.shown(&issuer);
            return self.fail(format!(
                "the authorization server {i} is not https: not signing in"
            ));
        }
        self.stage = Stage::AsMeta {
            candidates: urls::as_metadata_candidates(&issuer),
            index: 0,
            legacy: false,
        };
        self.issuer = issuer;
        self.send_current();
    }

    fn read_as_metadata(&mut self, meta: Map<String, Value>) {
        let issuer = meta.get("issuer").and_then(Value::as_str).unwrap_or("");
        if issuer != self.issuer {
            let (got, want) = (self.shown(issuer), self.shown(&self.issuer));
            return self.fail(format!("the authorization server's metadata names issuer {got}, not {want} (RFC 8414 §3.3): not signing in"));
        }
        self.meta = meta;
        // DPoP where the server asks for it (a `DPoP` challenge, or its metadata requires bound
        // tokens), with ES256, the one algorithm this client signs with.
        if self.challenge.dpop || self.prm_dpop_required {
            let es256 = str_list(self.meta.get("dpop_signing_alg_values_supported"))
                .is_some_and(|a| a.iter().any(|x| x == "ES256"));
            if !es256 {
                let i = self.shown(&self.issuer);
                return self.fail(format!("the server wants DPoP-bound tokens, but its authorization server {i} does not list ES256 for DPoP proofs"));
            }
            self.dpop = true;
        }
        self.after_metadata();
    }

    /// `Some(nonce)` when the request [`Flow::step`] just gave is a token request that must carry
    /// a DPoP proof (RFC 9449 §5) for the connection's key, with the authorization server's nonce
    /// when it gave one; the driver builds it with [`dpop::proof_input`].
    pub fn dpop_proof(&self) -> Option<Option<&str>> {
        (self.dpop && matches!(self.stage, Stage::Token | Stage::Refresh))
            .then_some(self.dpop_nonce.as_deref())
    }

    /// RFC 9449 §8: a token endpoint answer asking for a nonce: resend once with it.
    fn dpop_nonce_retry(&mut self, status: u16, headers: &[(String, String)], body: &[u8]) -> bool {
        let nonce = dpop::nonce_asked(status, headers, body);
        match (
            self.dpop && !self.dpop_retry_used,
            nonce,
            self.last_request.clone(),
        ) {
            (true, Some(n), Some(r)) => {
                self.dpop_retry_used = true;
                self.dpop_nonce = Some(n);
                self.next = Some(Step::Send(r));
                true
            }
            _ => false,
        }
    }

    fn endpoint(&self, name: &str) -> Result<String, String> {
        match self.meta.get(name).and_then(Value::as_str) {
            Some(u) if urls::secure(u) => Ok(u.to_string()),
            Some(u) => Err(format!(
                "the authorization server's {name} {} is not https",
                self.shown(u)
            )),
            None => Err(format!("the authorization server's metadata has no {name}")),
        }
    }

    fn after_metadata(&mut self) {
        let s256 = str_list(self.meta.get("code_challenge_methods_supported"))
            .is_some_and(|m| m.iter().any(|x| x == "S256"));
        if !s256 {
            let i = self.shown(&self.issuer);
            return self.fail(format!(
                "the authorization server {i} does not support PKCE with S256: not signing in"
            ));
        }
        for name in ["authorization_endpoint", "token_endpoint"] {
            if let Err(m) = self.endpoint(name) {
                return self.fail(m);
            }
        }
        // A refresh first, for a plain 401 with a refresh token from this very issuer.
        let refresh = self.previous.as_ref().filter(|t| {
            !self.step_up && t.refresh_token.is_some() && t.client.issuer == self.issuer
        });
        if let Some(t) = refresh.cloned() {
            self.registration = Some(t.client.clone());
            self.scopes = t.scopes.clone();
            let refresh_token = t.refresh_token.clone().unwrap_or_default();
            let params = vec![
                ("grant_type", "refresh_token".to_string()),
                ("refresh_token", refresh_token),
                ("resource", self.resource.clone()),
            ];
            self.stage = Stage::Refresh;
            self.send_token(params);
            return;
        }
        self.choose_client();
    }

    fn supported_auth_methods(&self) -> Vec<String> {
        // RFC 8414 §2: absent means client_secret_basic.
        str_list(self.meta.get("token_endpoint_auth_methods_supported"))
            .unwrap_or_else(|| vec!["client_secret_basic".into()])
    }

    fn auth_method_for_secret(&self) -> String {
        let supported = self.supported_auth_methods();
        if supported.iter().any(|m| m == "client_secret_basic")
            || !supported.iter().any(|m| m == "client_secret_post")
        {
            "client_secret_basic".into()
        } else {
            "client_secret_post".into()
        }
    }

    fn choose_client(&mut self) {
        let issuer = self.issuer.clone();
        let pre = self.config.client_id.clone().filter(|_| {
            self.config
                .client_issuer
                .as_deref()
                .is_none_or(|i| i == issuer)
        });
        if let Some(id) = pre {
            let secret = self.config.client_secret.clone();
            let by_key = self.config.client_key
                && self
                    .supported_auth_methods()
                    .iter()
                    .any(|m| m == PRIVATE_KEY_JWT);
            let method = if by_key {
                PRIVATE_KEY_JWT.into()
            } else if secret.is_some() {
                self.auth_method_for_secret()
            } else {
                "none".into()
            };
            self.registration = Some(Registration {
                issuer,
                client_id: id,
                client_secret: secret,
                auth_method: method,
            });
            return self.authorize();
        }
        if let Some(r) = self.registrations.get(&issuer).cloned() {
            self.registration = Some(r);
            return self.authorize();
        }
        let cimd =
            self.meta.get("client_id_metadata_document_supported") == Some(&Value::Bool(true));
        if let (true, Some(url)) = (cimd, self.config.client_metadata_url.clone()) {
            self.registration = Some(Registration {
                issuer,
                client_id: url,
                client_secret: None,
                auth_method: "none".into(),
            });
            return self.authorize();
        }
        let endpoint = match self.endpoint("registration_endpoint") {
            Ok(e) => e,
            Err(_) => {
                let i = self.shown(&issuer);
                return self.fail(format!("the authorization server {i} offers no way to register this page (no dynamic registration, no client ID metadata documents): configure a client ID for it"));
            }
        };
        let mut body = self.config.client_metadata.clone().unwrap_or_default();
        let supported = self.supported_auth_methods();
        let method = if supported.iter().any(|m| m == "none") {
            "none".to_string()
        } else {
            self.auth_method_for_secret()
        };
        let defaults = [
            ("redirect_uris", json!([self.config.redirect_uri])),
            ("client_name", json!("megane-builder-client")),
            (
                "grant_types",
                json!(["authorization_code", "refresh_token"]),
            ),
            ("response_types", json!(["code"])),
            ("token_endpoint_auth_method", json!(method)),
            ("application_type", json!("web")),
        ];
        for (k, v) in defaults {
            body.entry(k.to_string()).or_insert(v);
        }
        self.stage = Stage::Register;
        self.next = Some(Step::Send(HttpRequest {
            method: Method::Post,
            url: endpoint,
            headers: vec![
                ("Content-Type".into(), "application/json".into()),
                ("Accept".into(), "application/json".into()),
            ],
            body: serde_json::to_vec(&Value::Object(body)).unwrap_or_default(),
        }));
    }

    fn read_registration(&mut self, status: u16, body: &[u8]) {
        let Some(r) = json_object(status, body) else {
            let e = self.oauth_error(status, body);
            return self.fail(format!(
                "the authorization server refused to register this page ({e})"
            ));
        };
        let Some(id) = r.get("client_id").and_then(Value::as_str) else {
            return self
                .fail("the authorization server's registration answer has no client_id".into());
        };
        let secret = r
            .get("client_secret")
            .and_then(Value::as_str)
            .map(str::to_string);
        let method = match r.get("token_endpoint_auth_method").and_then(Value::as_str) {
            Some(m) => m.to_string(),
            None if secret.is_some() => self.auth_method_for_secret(),
            None => "none".into(),
        };
        if !matches!(
            method.as_str(),
            "none" | "client_secret_basic" | "client_secret_post"
        ) {
            let m = self.shown(&method);
            return self.fail(format!("the authorization server registered this page for token authentication {m}, which it does not support"));
        }
        self.registration = Some(Registration {
            issuer: self.issuer.clone(),
            client_id: id.to_string(),
            client_secret: secret,
            auth_method: method,
        });
        self.authorize();
    }

    fn authorize(&mut self) {
        let endpoint = match self.endpoint("authorization_endpoint") {
            Ok(e) => e,
            Err(m) => return self.fail(m),
        };
        // Scopes: the challenge's, else the resource metadata's; united with those asked before.
        let mut scopes: Vec<String> = self
            .previous
            .as_ref()
            .filter(|t| t.resource == self.resource)
            .map(|t| t.scopes.clone())
            .unwrap_or_default();
        let asked = self
            .challenge
            .scope
            .clone()
            .or_else(|| self.prm_scopes.clone())
            .unwrap_or_default();
        for s in asked {
            if !scopes.contains(&s) {
                scopes.push(s);
            }
        }
        let offline = str_list(self.meta.get("scopes_supported"))
            .is_some_and(|s| s.iter().any(|x| x == "offline_access"));
        if offline && !scopes.is_empty() && !scopes.iter().any(|s| s == "offline_access") {
            scopes.push("offline_access".into());
        }
        self.scopes = scopes;
        // An authorization server without user sign-in (no authorization_code): a workload
        // identity assertion the host holds (RFC 7523 jwt-bearer, MCP extension `auth/wif`), else
        // client_credentials for a client with a secret (extension `oauth-client-credentials`).
        // There is no user, so no redirect.
        let grants = str_list(self.meta.get("grant_types_supported")).unwrap_or_default();
        let offers = |g: &str| grants.iter().any(|x| x == g);
        if !grants.is_empty() && !offers("authorization_code") {
            // Enterprise-managed (SEP-990): the ID-JAG is asked for first, at the identity provider.
            if self.config.assertion.is_none() && offers(JWT_BEARER) {
                if let Some(idp) = self.config.enterprise.clone() {
                    return self.exchange_identity(&idp);
                }
            }
            let mut params = match (&self.config.assertion, &self.registration) {
                (Some(a), _) if offers(JWT_BEARER) => vec![
                    ("grant_type", JWT_BEARER.to_string()),
                    ("assertion", a.clone()),
                ],
                (_, Some(r))
                    if offers("client_credentials")
                        && (r.client_secret.is_some() || r.auth_method == PRIVATE_KEY_JWT) =>
                {
                    vec![("grant_type", "client_credentials".to_string())]
                }
                _ => {
                    let i = self.shown(&self.issuer);
                    return self.fail(format!("the authorization server {i} offers no user sign-in, and this client has neither a secret or key for client_credentials nor a workload identity assertion for it"));
                }
            };
            params.push(("resource", self.resource.clone()));
            if !self.scopes.is_empty() {
                params.push(("scope", self.scopes.join(" ")));
            }
            self.stage = Stage::Token;
            self.send_token(params);
            return;
        }
        let client_id = self
            .registration
            .as_ref()
            .map(|r| r.client_id.clone())
            .unwrap_or_default();
        let digest = Sha256::digest(self.verifier.as_bytes());
        let code_challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
        let scope = self.scopes.join(" ");
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", client_id.as_str()),
            ("redirect_uri", self.config.redirect_uri.as_str()),
            ("code_challenge", code_challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("state", self.state.as_str()),
            ("resource", self.resource.as_str()),
        ];
        if !scope.is_empty() {
            params.push(("scope", scope.as_str()));
        }
        let url = urls::with_query(&endpoint, &params);
        self.stage = Stage::Authorize;
        self.next = Some(Step::Redirect(url));
    }

    /// The URL the authorization server sent the browser back to (the host's `redirect` answer).
    pub fn handle_callback(&mut self, callback_url: &str) {
        if !matches!(self.stage, Stage::Authorize) {
            return self.fail("the sign-in was driven out of order".into());
        }
        let same_target = match (
            urls::split(callback_url),
            urls::split(&self.config.redirect_uri),
        ) {
            (Some(c), Some(r)) => c.origin_key() == r.origin_key() && c.path == r.path,
            _ => false,
        };
        if !same_target {
            return self.fail("the sign-in came back to an address other than this page's callback: not signing in".into());
        }
        let pairs = urls::query_pairs(callback_url);
        let one = |name: &str| -> Result<Option<String>, ()> {
            let mut found = pairs.iter().filter(|(k, _)| k == name);
            let first = found.next().map(|(_, v)| v.clone());
            if found.next().is_some() {
                Err(())
            } else {
                Ok(first)
            }
        };
        let (Ok(code), Ok(state), Ok(iss), Ok(error)) =
            (one("code"), one("state"), one("iss"), one("error"))
        else {
            return self.fail("the sign-in answer repeats a parameter: not signing in".into());
        };
        if state.as_deref() != Some(self.state.as_str()) {
            return self.fail("the sign-in answer does not belong to this sign-in (state mismatch): sign in again".into());
        }
        if let Some(e) = error {
            let desc = one("error_description").ok().flatten().unwrap_or_default();
            let text = if desc.is_empty() {
                e
            } else {
                format!("{e}: {desc}")
            };
            let text = self.shown(&text);
            return self.fail(format!(
                "the authorization server refused the sign-in ({text})"
            ));
        }
        // RFC 9207: a present iss must be the issuer, exactly; an advertised one must be present.
        let advertised = self
            .meta
            .get("authorization_response_iss_parameter_supported")
            == Some(&Value::Bool(true));
        match iss {
            Some(i) if i != self.issuer => {
                let (got, want) = (self.shown(&i), self.shown(&self.issuer));
                return self.fail(format!("the sign-in answer comes from issuer {got}, not {want} (RFC 9207): not signing in"));
            }
            None if advertised => {
                return self.fail("the sign-in answer lacks the issuer (iss) its server promised (RFC 9207): not signing in".into());
            }
            _ => {}
        }
        let Some(code) = code.filter(|c| !c.is_empty()) else {
            return self.fail("the sign-in answer has no authorization code".into());
        };
        let params = vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", code),
            ("redirect_uri", self.config.redirect_uri.clone()),
            ("code_verifier", self.verifier.clone()),
            ("resource", self.resource.clone()),
        ];
        self.stage = Stage::Token;
        self.send_token(params);
    }

    /// RFC 8693 token exchange at the enterprise identity provider: the user's ID token for an
    /// ID-JAG whose audience is this authorization server, for this resource (SEP-990).
    fn exchange_identity(&mut self, idp: &EnterpriseIdp) {
        if !urls::secure(&idp.token_endpoint) {
            let u = self.shown(&idp.token_endpoint);
            return self.fail(format!("the identity provider's token endpoint {u} is not https: not sending the ID token there"));
        }
        let mut params = vec![
            ("grant_type", TOKEN_EXCHANGE.to_string()),
            ("requested_token_type", ID_JAG.to_string()),
            ("audience", self.issuer.clone()),
            ("resource", self.resource.clone()),
            ("subject_token", idp.id_token.clone()),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token".to_string(),
            ),
        ];
        if !self.scopes.is_empty() {
            params.push(("scope", self.scopes.join(" ")));
        }
        let mut headers = vec![
            (
                "Content-Type".to_string(),
                "application/x-www-form-urlencoded".to_string(),
            ),
            ("Accept".to_string(), "application/json".to_string()),
        ];
        match (&idp.client_id, &idp.client_secret) {
            (Some(id), Some(secret)) => {
                headers.push(("Authorization".into(), urls::basic_credentials(id, secret)))
            }
            (Some(id), None) => params.push(("client_id", id.clone())),
            _ => {}
        }
        let pairs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        self.stage = Stage::Exchange;
        self.next = Some(Step::Send(HttpRequest {
            method: Method::Post,
            url: idp.token_endpoint.clone(),
            headers,
            body: urls::form(&pairs),
        }));
    }

    /// The identity provider's answer: the ID-JAG goes to this authorization server with the
    /// jwt-bearer grant and the client's own authentication.
    fn read_exchange(&mut self, status: u16, body: &[u8]) {
        let grant = json_object(status, body).and_then(|t| {
            let issued = t.get("issued_token_type").and_then(Value::as_str);
            let token = t.get("access_token").and_then(Value::as_str);
            match (issued, token) {
                (Some(ID_JAG), Some(jag)) if !jag.is_empty() => Some(jag.to_string()),
                _ => None,
            }
        });
        let Some(jag) = grant else {
            let e = self.oauth_error(status, body);
            return self.fail(format!(
                "the identity provider gave no identity assertion grant for this server ({e})"
            ));
        };
        let mut params = vec![
            ("grant_type", JWT_BEARER.to_string()),
            ("assertion", jag),
            ("resource", self.resource.clone()),
        ];
        if !self.scopes.is_empty() {
            params.push(("scope", self.scopes.join(" ")));
        }
        self.stage = Stage::Token;
        self.send_token(params);
    }

    /// Sends a token request, first asking for a client assertion when the client authenticates
    /// with `private_key_jwt`.
    fn send_token(&mut self, params: Vec<(&'static str, String)>) {
        let by_key = self
            .registration
            .as_ref()
            .or(self.previous.as_ref().map(|t| &t.client))
            .is_some_and(|r| r.auth_method == PRIVATE_KEY_JWT);
        if by_key {
            self.unsigned = Some((params, None));
            self.next = Some(Step::Sign);
        } else {
            self.next = Some(Step::Send(self.token_request(params)));
        }
    }

    /// The JWS signing input (`header.payload`, RFC 7515) of the client assertion [`Step::Sign`]
    /// asks for (RFC 7523 §3): `iss` and `sub` the client ID, `aud` the issuer, issued at `now`
    /// (seconds since the Unix epoch), valid 5 minutes, a `jti` unique to this flow.
    pub fn signing_input(&mut self, now: u64) -> String {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let client_id = self
            .registration
            .as_ref()
            .or(self.previous.as_ref().map(|t| &t.client))
            .map(|r| r.client_id.clone())
            .unwrap_or_default();
        let jti = b64.encode(&Sha256::digest(format!("client-assertion {}", self.state))[..16]);
        let header = json!({"alg": "ES256", "typ": "JWT"});
        let claims = json!({"iss": client_id, "sub": client_id, "aud": self.issuer,
            "iat": now, "exp": now + 300, "jti": jti});
        let input = format!(
            "{}.{}",
            b64.encode(header.to_string()),
            b64.encode(claims.to_string())
        );
        if let Some((_, stored)) = &mut self.unsigned {
            *stored = Some(input.clone());
        }
        input
    }

    /// The host's ES256 signature of [`Flow::signing_input`]: the token request goes out with
    /// the client assertion.
    pub fn handle_signature(&mut self, signature: &[u8]) {
        let Some((mut params, Some(input))) = self.unsigned.take() else {
            return self.fail("the sign-in was driven out of order".into());
        };
        if signature.len() != 64 {
            return self.fail(format!("the client key gave a {}-byte signature, not an ES256 one (64 bytes): check that it is a P-256 private key", signature.len()));
        }
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        params.push(("client_assertion_type", CLIENT_ASSERTION_JWT.into()));
        params.push((
            "client_assertion",
            format!("{input}.{}", b64.encode(signature)),
        ));
        self.next = Some(Step::Send(self.token_request(params)));
    }

    /// A token-endpoint request with the client's authentication (`none`: `client_id` in the
    /// body; `client_secret_post`: id and secret in the body; `client_secret_basic`: the
    /// `Authorization` header).
    fn token_request(&self, mut params: Vec<(&'static str, String)>) -> HttpRequest {
        let reg = self
            .registration
            .clone()
            .or_else(|| self.previous.as_ref().map(|t| t.client.clone()));
        let mut headers = vec![
            (
                "Content-Type".to_string(),
                "application/x-www-form-urlencoded".to_string(),
            ),
            ("Accept".to_string(), "application/json".to_string()),
        ];
        if let Some(r) = &reg {
            match (r.auth_method.as_str(), &r.client_secret) {
                ("client_secret_basic", Some(s)) => headers.push((
                    "Authorization".into(),
                    urls::basic_credentials(&r.client_id, s),
                )),
                ("client_secret_post", Some(s)) => {
                    params.push(("client_id", r.client_id.clone()));
                    params.push(("client_secret", s.clone()));
                }
                _ => params.push(("client_id", r.client_id.clone())),
            }
        }
        let pairs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let url = self
            .meta
            .get("token_endpoint")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        HttpRequest {
            method: Method::Post,
            url,
            headers,
            body: urls::form(&pairs),
        }
    }

    fn read_token(&self, status: u16, body: &[u8], refreshing: bool) -> Result<Tokens, String> {
        let Some(t) = json_object(status, body) else {
            let e = self.oauth_error(status, body);
            return Err(format!(
                "the authorization server refused the token request ({e})"
            ));
        };
        let Some(access) = t
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        else {
            return Err("the authorization server's token answer has no access_token".into());
        };
        let kind = t.get("token_type").and_then(Value::as_str).unwrap_or("");
        let dpop = self.dpop && kind.eq_ignore_ascii_case("dpop");
        if !kind.eq_ignore_ascii_case("bearer") && !dpop {
            let k = self.shown(kind);
            return Err(format!(
                "the authorization server issued a {k} token; only Bearer tokens (and DPoP ones, where the server asks for them) are supported"
            ));
        }
        let refresh = t
            .get("refresh_token")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| {
                refreshing
                    .then(|| self.previous.as_ref().and_then(|p| p.refresh_token.clone()))
                    .flatten()
            });
        Ok(Tokens {
            access_token: access.to_string(),
            refresh_token: refresh,
            scopes: self.scopes.clone(),
            resource: self.resource.clone(),
            token_endpoint: self
                .meta
                .get("token_endpoint")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            client: self.registration.clone().unwrap_or_else(|| Registration {
                issuer: self.issuer.clone(),
                client_id: String::new(),
                client_secret: None,
                auth_method: "none".into(),
            }),
            dpop,
        })
    }

    fn finish(&mut self, tokens: Tokens) {
        self.stage = Stage::Finished;
        self.next = Some(Step::Done(Box::new(tokens)));
    }
}
