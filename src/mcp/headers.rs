//! HTTP requests the core asks the host to send, header names, and case-insensitive header look-up.

use std::fmt;

/// `Accept` value on every POST.
pub const ACCEPT_POST: &str = "application/json, text/event-stream";
/// Session header (case-insensitive on the wire).
pub const SESSION_ID: &str = "Mcp-Session-Id";
/// Protocol-version header.
pub const PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
/// Modern-era method header.
pub const MCP_METHOD: &str = "Mcp-Method";
/// Modern-era name header (`tools/call`: the tool name).
pub const MCP_NAME: &str = "Mcp-Name";
/// Authorization header.
pub const AUTHORIZATION: &str = "Authorization";

/// HTTP method of a request the core wants sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// A JSON-RPC message.
    Post,
    /// Resuming a broken SSE stream (`Last-Event-ID`).
    Get,
    /// Session termination.
    Delete,
}

impl Method {
    /// The method token (`POST`, `GET`, `DELETE`).
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Post => "POST",
            Method::Get => "GET",
            Method::Delete => "DELETE",
        }
    }
}

/// One HTTP request for the host to send. `Debug` hides the `Authorization` value.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// HTTP method.
    pub method: Method,
    /// Absolute URL.
    pub url: String,
    /// Header names and values, in order.
    pub headers: Vec<(String, String)>,
    /// Body bytes (a JSON text for POST, empty for DELETE).
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        header_value(&self.headers, name)
    }

    /// The body parsed as JSON, if it is JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| {
                if k.eq_ignore_ascii_case(AUTHORIZATION) {
                    (k.as_str(), "<redacted>")
                } else {
                    (k.as_str(), v.as_str())
                }
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// The first value of `name` in `headers`, compared case-insensitively.
pub fn header_value<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// What a response body is, by its `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// `application/json` (or `+json`).
    Json,
    /// `text/event-stream`.
    EventStream,
    /// Anything else (text/plain error pages, none at all).
    Other,
}

/// The media type of a `Content-Type` value, lower-cased, without parameters
/// (`Text/Plain; charset=utf-8` → `text/plain`).
pub fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Classifies a `Content-Type` value (parameters and case ignored).
pub fn body_kind(content_type: Option<&str>) -> BodyKind {
    let Some(ct) = content_type else {
        return BodyKind::Other;
    };
    let mime = media_type(ct);
    if mime == "text/event-stream" {
        BodyKind::EventStream
    } else if mime == "application/json" || mime.ends_with("+json") {
        BodyKind::Json
    } else {
        BodyKind::Other
    }
}
