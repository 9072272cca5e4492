//! The token requests (step 7: the authorization code, a refresh, client credentials, a JWT
//! bearer assertion, the SEP-990 token exchange at an enterprise identity provider), the
//! client's authentication on them (a secret, or an ES256 assertion the host signs), and the
//! tokens they give.

use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{json_object, Flow, Stage, Step};
use crate::mcp::auth::config::{
    EnterpriseIdp, Registration, Tokens, CLIENT_ASSERTION_JWT, ID_JAG, JWT_BEARER, PRIVATE_KEY_JWT,
    TOKEN_EXCHANGE,
};
use crate::mcp::auth::urls;
use crate::mcp::headers::{HttpRequest, Method};

impl Flow {
    /// RFC 8693 token exchange at the enterprise identity provider: the user's ID token for an
    /// ID-JAG whose audience is this authorization server, for this resource (SEP-990).
    pub(super) fn exchange_identity(&mut self, idp: &EnterpriseIdp) {
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
    pub(super) fn read_exchange(&mut self, status: u16, body: &[u8]) {
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
    pub(super) fn send_token(&mut self, params: Vec<(&'static str, String)>) {
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
    pub(super) fn token_request(&self, mut params: Vec<(&'static str, String)>) -> HttpRequest {
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

    pub(super) fn read_token(
        &self,
        status: u16,
        body: &[u8],
        refreshing: bool,
    ) -> Result<Tokens, String> {
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

    pub(super) fn finish(&mut self, tokens: Tokens) {
        self.stage = Stage::Finished;
        self.next = Some(Step::Done(Box::new(tokens)));
    }
}
