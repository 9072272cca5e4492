//! What a connection has negotiated (era, version, session id) and the HTTP requests built from it.

use serde_json::{json, Value};

use super::headers::{self, HttpRequest, Method};
use super::revisions::sends_version_header;
use super::version::Era;
use crate::wire::endpoint::Endpoint;

/// `_meta` key of the protocol version (modern era).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities (modern era).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client info (modern era).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// Negotiated state of one connection.
#[derive(Clone, PartialEq, Eq)]
pub struct Session {
    /// The era in use.
    pub era: Era,
    /// The negotiated protocol version (legacy: after initialize; modern: the version sent).
    pub version: Option<String>,
    /// The `Mcp-Session-Id` the server gave (legacy, stateful servers).
    pub session_id: Option<String>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("era", &self.era)
            .field("version", &self.version)
            .field("session_id", &self.session_id)
            .finish()
    }
}

/// Builds requests for one endpoint. Holds the token only for the duration of a call.
pub struct RequestFactory<'a> {
    /// Where to send.
    pub endpoint: &'a Endpoint,
    /// The bearer token, if any.
    pub token: Option<&'a str>,
    /// The token is DPoP-bound: the `DPoP` scheme instead of `Bearer` (RFC 9449 §7.1).
    pub dpop: bool,
    /// The negotiated state.
    pub session: &'a Session,
    /// `clientInfo` (`{name, version}`).
    pub client_info: &'a Value,
    /// The client capabilities we declare (`{}`, or `{elicitation: {form: {}}}` with a host hook).
    pub capabilities: &'a Value,
}

impl RequestFactory<'_> {
    fn common_headers(&self, with_session: bool) -> Vec<(String, String)> {
        let mut h = Vec::new();
        if let Some(t) = self.token {
            let scheme = if self.dpop { "DPoP" } else { "Bearer" };
            h.push((headers::AUTHORIZATION.to_string(), format!("{scheme} {t}")));
        }
        if with_session {
            if let Some(id) = &self.session.session_id {
                h.push((headers::SESSION_ID.to_string(), id.clone()));
            }
        }
        if let Some(v) = &self.session.version {
            if self.session.era == Era::Modern || sends_version_header(v) {
                h.push((headers::PROTOCOL_VERSION.to_string(), v.clone()));
            }
        }
        h
    }

    /// A POST of one JSON-RPC message. In the modern era, requests get the `_meta` envelope and the
    /// `Mcp-Method` / `Mcp-Name` headers.
    pub fn post(&self, mut message: Value) -> HttpRequest {
        let mut h = vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            ("Accept".to_string(), headers::ACCEPT_POST.to_string()),
        ];
        h.extend(self.common_headers(true));
        if self.session.era == Era::Modern {
            let method = message
                .get("method")
                .and_then(Value::as_str)
                .map(str::to_string);
            let is_request = message.get("id").is_some();
            if let (Some(method), true) = (method, is_request) {
                let version = self.session.version.clone().unwrap_or_default();
                if let Some(obj) = message.as_object_mut() {
                    let params = obj.entry("params").or_insert_with(|| json!({}));
                    if !params.is_object() {
                        *params = json!({});
                    }
                    let name = params
                        .get("name")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    let meta = params
                        .as_object_mut()
                        .map(|p| p.entry("_meta").or_insert_with(|| json!({})));
                    if let Some(Value::Object(meta)) = meta {
                        meta.insert(META_PROTOCOL_VERSION.into(), json!(version));
                        meta.insert(META_CLIENT_CAPABILITIES.into(), self.capabilities.clone());
                        meta.insert(META_CLIENT_INFO.into(), self.client_info.clone());
                    }
                    h.push((headers::MCP_METHOD.to_string(), method.clone()));
                    if method == "tools/call" {
                        if let Some(n) = name {
                            h.push((headers::MCP_NAME.to_string(), n));
                        }
                    }
                }
            }
        }
        HttpRequest {
            method: Method::Post,
            url: self.endpoint.url.clone(),
            headers: h,
            body: serde_json::to_vec(&message).unwrap_or_default(),
        }
    }

    /// A GET resuming a broken SSE stream after `last_event_id`.
    pub fn resume(&self, last_event_id: &str) -> HttpRequest {
        self.listen(Some(last_event_id))
    }

    /// A GET opening the server's notification stream (legacy era), resuming after `last_event_id`.
    pub fn listen(&self, last_event_id: Option<&str>) -> HttpRequest {
        let mut h = vec![("Accept".to_string(), "text/event-stream".to_string())];
        h.extend(self.common_headers(true));
        if let Some(id) = last_event_id {
            h.push(("Last-Event-ID".to_string(), id.to_string()));
        }
        HttpRequest {
            method: Method::Get,
            url: self.endpoint.url.clone(),
            headers: h,
            body: Vec::new(),
        }
    }

    /// A DELETE ending the session.
    pub fn delete(&self) -> HttpRequest {
        HttpRequest {
            method: Method::Delete,
            url: self.endpoint.url.clone(),
            headers: self.common_headers(true),
            body: Vec::new(),
        }
    }
}
