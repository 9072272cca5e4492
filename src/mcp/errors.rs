//! Errors a user can act on, with one-line messages that never contain the bearer token: a
//! server's text enters them only through [`Secrets::line`](crate::wire::secrets::Secrets::line) (the token hidden, then one line).

use std::fmt;

use super::headers::media_type;
use super::revisions::LEGACY_SUPPORTED;
use crate::wire::endpoint::{display_url, write_insecure, write_invalid, UrlError};
use crate::wire::text::one_line;

/// Everything that can end a connection or an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpError {
    /// The URL could not be used (not http/https, no host, …).
    InvalidUrl {
        /// What is wrong.
        reason: String,
    },
    /// `http:` to a host that is not loopback: refused before any request (contract §9).
    InsecureUrl {
        /// The host that was refused.
        host: String,
    },
    /// HTTP 401: the token is missing or wrong.
    Unauthorized {
        /// Whether a token was sent.
        token_given: bool,
    },
    /// HTTP 403: the server does not allow this page's origin.
    OriginNotAllowed {
        /// The page's origin, when the host told us.
        origin: Option<String>,
        /// The server's text.
        server_message: String,
    },
    /// HTTP 421: the server does not accept the Host it was reached by.
    HostNotAllowed {
        /// The host of the URL.
        host: String,
    },
    /// The server needs a session but the page could not read `Mcp-Session-Id` (CORS does not expose it).
    SessionIdUnreadable,
    /// The request never got an HTTP answer.
    Network {
        /// The URL that was tried.
        url: String,
        /// What the transport said.
        detail: String,
        /// The page's origin, if known: in a browser a refused CORS preflight looks like this too.
        origin: Option<String>,
    },
    /// The server's protocol version is not one we speak.
    UnsupportedVersion {
        /// What the server answered.
        offered: String,
    },
    /// The server speaks only the 2026-07-28 era but the host asked for the legacy handshake.
    ModernOnly,
    /// The operation hit its time limit.
    Timeout {
        /// The limit, in seconds.
        seconds: u64,
    },
    /// The host cancelled the operation.
    Cancelled,
    /// The response was larger than allowed; it was aborted before parsing.
    TooLarge {
        /// The cap, in bytes.
        limit: u64,
    },
    /// JSON-RPC error -32602 (invalid params): the server refused the request's arguments.
    InvalidParams {
        /// The server's message, one line.
        message: String,
    },
    /// JSON-RPC or transport failure, shown as `The server failed: …`.
    ServerFailed {
        /// The server's message (or a description of what went wrong).
        message: String,
    },
    /// The server answered with an HTTP redirect: refused, never followed, so the request (the
    /// structure and the token) goes only to the URL the user gave (contract §9).
    Redirected {
        /// The host the redirect points to, when the transport can read `Location` (a browser's
        /// `fetch` hides it).
        target_host: Option<String>,
    },
    /// The connection was closed before the operation finished.
    Closed,
    /// HTTP 403 with a `Bearer` challenge `error="insufficient_scope"`: the token lacks a
    /// permission (signing in again with more scopes may help: `mcp::auth`).
    InsufficientScope {
        /// The scopes the server asked for (space-separated, one line).
        scope: String,
    },
    /// The authorization flow (`mcp::auth`) refused to go on or failed.
    Authorization {
        /// What went wrong, one line, without secrets.
        message: String,
    },
}

impl McpError {
    /// §6: the one line a failed `tools/call` shows in the form: `Cancelled.` for a cancel, the
    /// timeout as itself (it behaves like a cancel and is reported as a timeout), and every other
    /// JSON-RPC or transport failure as `The server failed: <first line>`.
    pub fn call_error_line(&self) -> String {
        match self {
            McpError::Cancelled | McpError::Timeout { .. } | McpError::ServerFailed { .. } => {
                self.to_string()
            }
            other => format!("The server failed: {}", one_line(&other.to_string())),
        }
    }

    /// A `ServerFailed` with `message` cut to one line of bounded length.
    pub fn server(message: impl AsRef<str>) -> Self {
        McpError::ServerFailed {
            message: one_line(message.as_ref()),
        }
    }
}

/// `HTTP 500 Internal Server Error`: a status with its standard reason phrase (crate `http`), or
/// just `HTTP 599` for a status without one. The server's own reason phrase is never used.
pub fn http_status(status: u16) -> String {
    match http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
    {
        Some(reason) => format!("HTTP {status} {reason}"),
        None => format!("HTTP {status}"),
    }
}

/// §6/§9: what of an HTTP error answer's body may be shown (its maker then hides the secrets
/// and makes it one line: [`Secrets::line`](crate::wire::secrets::Secrets::line)): the text when the answer is `text/plain` or JSON
/// (`application/json`, `…+json`) and valid UTF-8; nothing for HTML, binary or any other type. A
/// body without a `Content-Type` (the reference server's 403 `Invalid Origin header`) is shown
/// only when it is UTF-8 text without control characters that does not start with `<` (markup).
pub fn error_body_text<'a>(content_type: Option<&str>, body: &'a [u8]) -> Option<&'a str> {
    let text = std::str::from_utf8(body).ok()?;
    let showable = match content_type {
        Some(ct) => {
            let mime = media_type(ct);
            mime == "text/plain" || mime == "application/json" || mime.ends_with("+json")
        }
        None => {
            !text.trim_start().starts_with('<')
                && !text.chars().any(|c| c.is_control() && !c.is_whitespace())
        }
    };
    showable.then_some(text)
}

/// §6: the error for an HTTP error answer that carries no JSON-RPC error: the status and its
/// reason phrase, then the body's shown line ([`error_body_text`]) when there is one.
pub fn http_failure(status: u16, shown_body: &str) -> McpError {
    if shown_body.is_empty() {
        McpError::server(http_status(status))
    } else {
        McpError::server(format!("{}: {shown_body}", http_status(status)))
    }
}

impl From<UrlError> for McpError {
    fn from(error: UrlError) -> McpError {
        match error {
            UrlError::Invalid { reason } => McpError::InvalidUrl { reason },
            UrlError::Insecure { host } => McpError::InsecureUrl { host },
        }
    }
}

impl fmt::Display for McpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpError::InvalidUrl { reason } => write_invalid(f, reason),
            McpError::InsecureUrl { host } => write_insecure(f, host),
            McpError::Unauthorized { token_given: true } => write!(
                f,
                "The server refused the token (HTTP 401): the token is wrong; copy it again from the server's output."
            ),
            McpError::Unauthorized { token_given: false } => write!(
                f,
                "The server needs a token (HTTP 401): the token is missing; enter the token the server printed."
            ),
            McpError::OriginNotAllowed { origin: Some(o), server_message } => write!(
                f,
                "The server does not allow this page's origin {o} (HTTP 403: {server_message}); start the server with --allow-origin {o}."
            ),
            McpError::OriginNotAllowed { origin: None, server_message } => write!(
                f,
                "The server does not allow this page's origin (HTTP 403: {server_message}); start the server with --allow-origin <this page's origin>."
            ),
            McpError::HostNotAllowed { host } => write!(
                f,
                "The server does not accept the host name {host} (HTTP 421, DNS-rebinding protection); connect with the host name the server listens on, such as 127.0.0.1 or localhost."
            ),
            McpError::SessionIdUnreadable => write!(
                f,
                "The server needs a session but this page cannot read its Mcp-Session-Id header: the server's CORS configuration must expose it (Access-Control-Expose-Headers: Mcp-Session-Id)."
            ),
            McpError::Network { url, detail, origin } => {
                let url = display_url(url);
                write!(f, "Could not reach {url}: is the server running?")?;
                if !detail.is_empty() {
                    write!(f, " ({detail})")?;
                }
                if let Some(o) = origin {
                    write!(
                        f,
                        " If it is running, it may not allow this page's origin {o} (start it with --allow-origin {o})."
                    )?;
                }
                Ok(())
            }
            McpError::ModernOnly => write!(
                f,
                "The server speaks only MCP 2026-07-28: connect with protocol \"auto\" or \"modern\"."
            ),
            McpError::UnsupportedVersion { offered } => write!(
                f,
                "The server speaks MCP protocol version {offered:?}, which this client does not support (it supports {} and 2026-07-28).",
                LEGACY_SUPPORTED.join(", ")
            ),
            McpError::Timeout { seconds } => {
                write!(f, "No answer from the server within {seconds} s; the request was stopped (timeout).")
            }
            McpError::Cancelled => write!(f, "Cancelled."),
            McpError::TooLarge { limit } => write!(
                f,
                "The server's answer is larger than the limit of {limit} bytes; it was discarded before parsing."
            ),
            McpError::InvalidParams { message } => write!(
                f,
                "The server refused the arguments: {message} (JSON-RPC error -32602)"
            ),
            McpError::ServerFailed { message } => write!(f, "The server failed: {message}"),
            McpError::Redirected { target_host: Some(host) } => write!(
                f,
                "The server redirected the request to {host}, and redirects are refused (the structure and the token go only to the URL you gave): connect to that address directly if you trust it."
            ),
            McpError::Redirected { target_host: None } => write!(
                f,
                "The server answered with a redirect, and redirects are refused (the structure and the token go only to the URL you gave): connect to the final address directly."
            ),
            McpError::Closed => write!(f, "The connection to the tool server is closed."),
            McpError::InsufficientScope { scope } if scope.is_empty() => write!(
                f,
                "The server refused the request: the token lacks a permission it needs (HTTP 403 insufficient_scope)."
            ),
            McpError::InsufficientScope { scope } => write!(
                f,
                "The server refused the request: the token lacks the permission {scope} (HTTP 403 insufficient_scope)."
            ),
            McpError::Authorization { message } => write!(f, "Sign-in failed: {message}."),
        }
    }
}

impl std::error::Error for McpError {}
