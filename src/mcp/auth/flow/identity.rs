//! The flow's client identity at the authorization server (step 4): a pre-registered client,
//! a registration made earlier with that issuer, a client ID metadata document, or dynamic
//! client registration (RFC 7591); and how it authenticates at the token endpoint.

use serde_json::{json, Value};

use super::{json_object, str_list, Flow, Stage, Step};
use crate::mcp::auth::config::{Registration, PRIVATE_KEY_JWT};
use crate::mcp::headers::{HttpRequest, Method};

impl Flow {
    pub(super) fn supported_auth_methods(&self) -> Vec<String> {
        // RFC 8414 §2: absent means client_secret_basic.
        str_list(self.meta.get("token_endpoint_auth_methods_supported"))
            .unwrap_or_else(|| vec!["client_secret_basic".into()])
    }

    pub(super) fn auth_method_for_secret(&self) -> String {
        let supported = self.supported_auth_methods();
        if supported.iter().any(|m| m == "client_secret_basic")
            || !supported.iter().any(|m| m == "client_secret_post")
        {
            "client_secret_basic".into()
        } else {
            "client_secret_post".into()
        }
    }

    pub(super) fn choose_client(&mut self) {
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

    pub(super) fn read_registration(&mut self, status: u16, body: &[u8]) {
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
}
