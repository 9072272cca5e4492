//! The authorization request (PKCE S256, `state`, the `resource` indicator, the scopes) and its
//! callback (`state`, the RFC 9207 `iss`, `error`), steps 5 and 6.

use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{str_list, Flow, Stage, Step};
use crate::mcp::auth::config::{JWT_BEARER, PRIVATE_KEY_JWT};
use crate::mcp::auth::urls;

impl Flow {
    pub(super) fn authorize(&mut self) {
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
}
