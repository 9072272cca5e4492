//! Refusals: what a failed answer means (an HTTP error status with its body and challenge, a
//! JSON-RPC error) as the one-line [`McpError`] a user can act on, made here with the token
//! hidden ([`Secrets::line`]), and the session expiry and version retries some of them start.

use super::{Client, Exchange, ProtocolChoice, Purpose, State};
use crate::mcp::auth;
use crate::mcp::call::DEFAULT_REQUEST_TIMEOUT_MS;
use crate::mcp::errors::{error_body_text, http_failure, McpError};
use crate::mcp::version;
use crate::wire::jsonrpc::{self, RpcError};
use crate::wire::secrets::Secrets;
use crate::wire::text::one_line;

impl Client {
    pub(super) fn rpc_failure(&self, e: &RpcError) -> McpError {
        let message = self.shown(e.message_text());
        if e.code == jsonrpc::INVALID_PARAMS {
            return McpError::InvalidParams { message };
        }
        McpError::server(format!("{message} (JSON-RPC error {})", e.code))
    }

    /// A server's `text` as a message made here shows it: one line, the token hidden.
    pub(super) fn shown(&self, text: &str) -> String {
        Secrets(&[self.token.as_deref()]).line(text)
    }

    pub(super) fn ended_with_error(&mut self, ex: Exchange, status: u16, body: &[u8], now: u64) {
        if ex.resume && status == 405 {
            if let Purpose::Rpc(op) = ex.purpose {
                let message = if ex.rpc_id.is_none() {
                    "the server offers no notification stream (HTTP 405)"
                } else {
                    "the answer stream broke off and the server cannot resume it (HTTP 405)"
                };
                self.fail_op(op, McpError::server(message));
                return;
            }
        }
        let rpc_error = jsonrpc::error_in_body(body);
        let text = error_body_text(ex.content_type.as_deref(), body)
            .map(|text| self.shown(text))
            .unwrap_or_default();
        // A legacy session that the server no longer knows: start a new one once, then retry.
        if status == 404
            && ex.sent_session
            && !ex.modern
            && rpc_error
                .as_ref()
                .is_none_or(|e| e.code != jsonrpc::METHOD_NOT_FOUND)
        {
            if let Purpose::Rpc(op) = ex.purpose {
                let used = self.ops.get(&op).is_some_and(|o| o.reinit_used);
                let recoverable = matches!(
                    self.state,
                    State::Ready | State::Initializing | State::SendingInitialized
                );
                if !used && recoverable {
                    if let Some(o) = self.ops.get_mut(&op) {
                        o.reinit_used = true;
                        o.inflight = None;
                    }
                    self.waiting.push_back(op);
                    if self.state == State::Ready {
                        self.session.session_id = None;
                        self.handshake_deadline =
                            Some(now.saturating_add(DEFAULT_REQUEST_TIMEOUT_MS));
                        self.send_initialize();
                    }
                    return;
                }
            }
        }
        // Legacy initialize refused by a 2026-07-28-only server: for its version (the error says which
        // versions it speaks) or for the missing per-request version header (a 2026-07-28 error code).
        if ex.purpose == Purpose::Initialize {
            if let Some(e) = rpc_error.as_ref() {
                if e.code == jsonrpc::UNSUPPORTED_PROTOCOL_VERSION {
                    self.fail_connection(version::no_mutual_version(&version::supported_in(e)));
                    return;
                }
                if e.code == jsonrpc::HEADER_MISMATCH {
                    self.fail_connection(McpError::ModernOnly);
                    return;
                }
            }
        }
        // Modern era: unsupported version.
        if status == 400 && ex.modern {
            if let Some(e) = rpc_error
                .as_ref()
                .filter(|e| e.code == jsonrpc::UNSUPPORTED_PROTOCOL_VERSION)
            {
                let supported = version::supported_in(e);
                if let (Some(v), false) =
                    (version::mutual_modern(&supported), self.modern_retry_used)
                {
                    if ex.purpose == Purpose::Discover || matches!(ex.purpose, Purpose::Rpc(_)) {
                        self.modern_retry_used = true;
                        self.session.version = Some(v.to_string());
                        match ex.purpose {
                            Purpose::Discover => self.start_handshake(now),
                            Purpose::Rpc(op) => self.send_op_request(op, now),
                            _ => {}
                        }
                        return;
                    }
                }
                if ex.purpose == Purpose::Discover
                    && self.protocol == ProtocolChoice::Auto
                    && (supported.is_empty() || version::has_mutual_legacy(&supported))
                {
                    self.notice(
                        "The server does not speak 2026-07-28; using the initialize handshake."
                            .into(),
                    );
                    self.fall_back_to_legacy(now);
                    return;
                }
                let error = McpError::UnsupportedVersion {
                    offered: supported.join(", "),
                };
                self.fail_purpose(ex.purpose, error);
                return;
            }
        }
        let step_up = (status == 403)
            .then(|| {
                ex.www_authenticate
                    .as_deref()
                    .and_then(auth::challenge::parse)
            })
            .flatten()
            .filter(auth::Challenge::insufficient_scope);
        if status == 401 || step_up.is_some() {
            self.auth_challenge = Some((status, ex.www_authenticate.clone()));
        }
        let error = match status {
            401 => McpError::Unauthorized {
                token_given: self.token.is_some(),
            },
            403 if step_up.is_some() => McpError::InsufficientScope {
                scope: one_line(
                    &step_up
                        .and_then(|c| c.scope)
                        .map(|s| s.join(" "))
                        .unwrap_or_default(),
                ),
            },
            403 => McpError::OriginNotAllowed {
                origin: self.origin.clone(),
                server_message: text.clone(),
            },
            421 => McpError::HostNotAllowed {
                host: self.endpoint.authority.clone(),
            },
            400 if !ex.modern
                && !ex.sent_session
                && self.session.session_id.is_none()
                && matches!(ex.purpose, Purpose::Rpc(_) | Purpose::Initialized)
                && text.to_ascii_lowercase().contains("session") =>
            {
                McpError::SessionIdUnreadable
            }
            _ => match &rpc_error {
                Some(e) => McpError::server(format!(
                    "{} (HTTP {status}, JSON-RPC error {})",
                    self.shown(e.message_text()),
                    e.code
                )),
                None => http_failure(status, &text),
            },
        };
        // The modern probe in auto mode falls back on anything but the errors a user must fix.
        if ex.purpose == Purpose::Discover
            && self.protocol == ProtocolChoice::Auto
            && !matches!(
                error,
                McpError::Unauthorized { .. }
                    | McpError::InsufficientScope { .. }
                    | McpError::OriginNotAllowed { .. }
                    | McpError::HostNotAllowed { .. }
            )
        {
            self.notice(format!(
                "The 2026-07-28 probe was refused (HTTP {status}); using the initialize handshake."
            ));
            self.fall_back_to_legacy(now);
            return;
        }
        self.fail_purpose(ex.purpose, error);
    }
}
