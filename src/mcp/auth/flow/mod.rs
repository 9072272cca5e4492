//! One run of the authorization flow ([`Flow`], driven with [`Flow::step`]): its stages, the
//! refusals it words with its secrets hidden, network retries, and the discovery of the
//! protected resource and authorization server metadata. The client identity (`identity.rs`),
//! the authorization request and its callback (`authorize.rs`) and the token requests
//! (`token.rs`) add their steps to it.

use std::collections::HashMap;
use std::fmt;

use base64::Engine;
use serde_json::{json, Map, Value};

use super::challenge::Challenge;
use super::config::{AuthConfig, Registration, Tokens, ENTROPY_BYTES, MAX_AUTH_BODY_BYTES};
use super::{dpop, urls};
use crate::mcp::errors::{http_status, McpError};
use crate::mcp::headers::{HttpRequest, Method};
use crate::wire::secrets::Secrets;

mod authorize;
mod identity;
mod token;

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
    /// Signed in: give the tokens to [`Authorizer::complete`](super::Authorizer::complete) and retry the operation.
    Done(Box<Tokens>),
    /// Refused: the operation fails with this error.
    Failed(McpError),
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
    /// A flow for the MCP endpoint `server_url` after a refusal with `challenge` (a 403 step-up
    /// when `step_up`), knowing the tokens and registrations held so far; its PKCE verifier and
    /// `state` from `entropy`. It starts at the protected resource metadata: the challenge's
    /// `resource_metadata` when it is https (or loopback), then the well-known locations.
    pub(super) fn start(
        server_url: &str,
        config: &AuthConfig,
        challenge: Challenge,
        step_up: bool,
        previous: Option<Tokens>,
        registrations: HashMap<String, Registration>,
        entropy: &[u8; ENTROPY_BYTES],
    ) -> Flow {
        let mut prm = Vec::new();
        if let Some(u) = challenge.resource_metadata.as_deref() {
            if urls::secure(u) {
                prm.push(u.to_string());
            }
        }
        for u in urls::prm_candidates(server_url) {
            if !prm.contains(&u) {
                prm.push(u);
            }
        }
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let verifier = b64.encode(&entropy[..32]);
        let state = b64.encode(&entropy[32..]);
        let mut flow = Flow {
            server_url: server_url.to_string(),
            config: config.clone(),
            challenge,
            step_up,
            previous,
            registrations,
            verifier,
            state,
            stage: Stage::Prm {
                candidates: prm,
                index: 0,
            },
            resource: urls::canonical_resource(server_url),
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
        flow
    }

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
        Secrets(&[
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
}
