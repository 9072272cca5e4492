//! Streams and resumption: each exchange's answer as it comes (head, body chunks with their
//! byte cap and Structure scan, the replay of a scanned body, the end), redirects and network
//! failures, the notification stream, and the resumption of a broken answer stream with
//! `Last-Event-ID`.

use super::{
    Client, Era, Exchange, ExchangeId, OpId, OpKind, OpResult, PendingResume, ProtocolChoice,
    Purpose, State, DEFAULT_RETRY_MS, MAX_RESUMES,
};
use crate::mcp::body::{BodyError, BodyReader};
use crate::mcp::errors::McpError;
use crate::mcp::headers::{body_kind, header_value, SESSION_ID};
use crate::wire::endpoint::redirect_host;

impl Client {
    /// Opens the server's notification stream (a GET, legacy era), over which a server that declared
    /// `tools.listChanged` sends `notifications/tools/list_changed` ([`Event::ToolsChanged`](super::Event::ToolsChanged)). It is
    /// reopened when the server closes it and ends only with [`Client::cancel`], [`Client::close`] or an
    /// error (a server without such a stream answers 405). Opened only when the host asks: browsers
    /// allow few connections per origin.
    pub fn listen(&mut self, now: u64) -> OpId {
        let op = self.new_op(OpKind::Listen, None);
        self.start_op(op, now);
        op
    }

    /// The status and headers of an exchange's response.
    pub fn handle_head(
        &mut self,
        exchange: ExchangeId,
        status: u16,
        headers: &[(String, String)],
        _now: u64,
    ) {
        let limit = self.max_response_bytes;
        let Some(ex) = self.exchanges.get_mut(&exchange) else {
            return;
        };
        ex.status = Some(status);
        ex.content_type = header_value(headers, "content-type").map(str::to_string);
        if status == 401 || status == 403 {
            ex.www_authenticate = header_value(headers, "www-authenticate").map(str::to_string);
        }
        if ex.purpose == Purpose::Initialize && (200..300).contains(&status) {
            self.session.session_id = header_value(headers, SESSION_ID)
                .map(str::trim)
                .filter(|s| !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b)))
                .map(str::to_string);
        }
        let kind = body_kind(header_value(headers, "content-type"));
        let length =
            header_value(headers, "content-length").and_then(|v| v.trim().parse::<u64>().ok());
        let too_large = length.is_some_and(|n| n > limit);
        let ok = (200..300).contains(&status);
        let wants_messages = !matches!(ex.purpose, Purpose::Notify | Purpose::Delete(_));
        // Error bodies (and bodies nobody reads) are kept only up to a small bound, for the message.
        // A tools/call answer's Structure is read while its body comes in (issue 10).
        let call = match ex.purpose {
            Purpose::Rpc(op) => self.ops.get(&op).is_some_and(|o| {
                matches!(
                    o.kind,
                    OpKind::Call {
                        scan_structure: true,
                        ..
                    }
                )
            }),
            _ => false,
        };
        ex.reader = Some(if ok && wants_messages {
            let mut reader = BodyReader::messages(kind, limit);
            if let Some(length) = length.filter(|n| *n <= limit) {
                reader.reserve(length);
            }
            if call {
                reader.scan_structure();
            }
            reader
        } else {
            BodyReader::text()
        });
        if ok && wants_messages && too_large {
            self.body_failed(exchange, BodyError::TooLarge { limit });
        }
    }

    /// One chunk of an exchange's body.
    pub fn handle_chunk(&mut self, exchange: ExchangeId, chunk: &[u8], now: u64) {
        let Some(ex) = self.exchanges.get_mut(&exchange) else {
            return;
        };
        ex.replay = false;
        let Some(reader) = ex.reader.as_mut() else {
            return;
        };
        match reader.push(chunk) {
            Ok(msgs) => {
                for m in msgs {
                    self.handle_message(exchange, m, now);
                }
            }
            Err(BodyError::Replay) => {
                // An SSE event the scan did not read and the tap did not keep: the driver feeds
                // the body again, from its first chunk, to a plain reader that goes on from here.
                ex.reader = Some(reader.replay());
                ex.replay = true;
            }
            Err(e) => self.body_failed(exchange, e),
        }
    }

    /// Whether the driver must keep this exchange's body chunks (asked after
    /// [`Client::handle_head`]): a Builder tool's answer (JSON or SSE) read by the Structure
    /// scan ([`CallOptions::scan_structure`](super::CallOptions::scan_structure)), whose body the core does not keep. When
    /// [`Client::wants_replay`] says so after a [`Client::handle_chunk`] or
    /// [`Client::handle_end`], the driver feeds every chunk so far again (`handle_chunk` each,
    /// the last one included), drops them, keeps no more, and goes on as it was (after
    /// `handle_end`: `handle_end` again).
    pub fn keeps_chunks(&self, exchange: ExchangeId) -> bool {
        self.exchanges
            .get(&exchange)
            .and_then(|ex| ex.reader.as_ref())
            .is_some_and(BodyReader::replayable)
    }

    /// After [`Client::handle_chunk`] or [`Client::handle_end`]: whether the chunks kept by the
    /// driver ([`Client::keeps_chunks`]) must be fed again, from the first, because the
    /// Structure scan did not read the answer and the core did not keep it (a JSON body: the
    /// scanner declined, found no Structure, or the rest is not one answer, known at the end;
    /// an SSE body: the same for an event larger than `body::KEEP`, known when it is
    /// dispatched). The body is then read exactly as one read without the scan: the events
    /// already handed on are passed over, the rest (and the rest of the stream) read plainly.
    pub fn wants_replay(&self, exchange: ExchangeId) -> bool {
        self.exchanges.get(&exchange).is_some_and(|ex| ex.replay)
    }

    /// The body bytes the core holds for an exchange (see [`BodyReader::held_bytes`]).
    #[doc(hidden)]
    pub fn held_body_bytes(&self, exchange: ExchangeId) -> usize {
        self.exchanges
            .get(&exchange)
            .and_then(|ex| ex.reader.as_ref())
            .map_or(0, BodyReader::held_bytes)
    }

    /// The end of an exchange's body.
    pub fn handle_end(&mut self, exchange: ExchangeId, now: u64) {
        let Some(ex) = self.exchanges.get_mut(&exchange) else {
            return;
        };
        ex.replay = false;
        let Some(mut reader) = ex.reader.take() else {
            // End without a head: treat as a dropped connection.
            self.handle_network_error(exchange, "the response ended before its headers", now);
            return;
        };
        let msgs = reader.finish();
        match msgs {
            Ok(msgs) => {
                for m in msgs {
                    self.handle_message(exchange, m, now);
                }
            }
            Err(BodyError::Replay) => {
                // The scan did not read the Structure and the body was not kept: the driver
                // feeds it again, to a plain reader (`wants_replay`).
                if let Some(ex) = self.exchanges.get_mut(&exchange) {
                    ex.reader = Some(reader.replay());
                    ex.replay = true;
                }
                return;
            }
            Err(e) => {
                self.body_failed(exchange, e);
                return;
            }
        }
        let Some(ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        let status = ex.status.unwrap_or(0);
        if (200..300).contains(&status) {
            let resume_point = reader.resume_point();
            self.ended_ok(ex, status, resume_point, now);
        } else {
            self.ended_with_error(ex, status, reader.kept_bytes(), now);
        }
    }

    /// The exchange got no HTTP answer (fetch rejected: server down, CORS preflight refused, stream
    /// broken).
    /// The transport saw an HTTP redirect, which it does not follow (§9): the exchange fails with
    /// [`McpError::Redirected`] naming `location`'s host when the transport could read it.
    pub fn handle_redirect(&mut self, exchange: ExchangeId, location: Option<&str>) {
        let Some(ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        let target_host = location.map(|l| redirect_host(l, &self.endpoint.host));
        self.fail_purpose(ex.purpose, McpError::Redirected { target_host });
    }

    pub fn handle_network_error(&mut self, exchange: ExchangeId, detail: &str, now: u64) {
        let Some(ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        let detail = self.shown(detail);
        let error = McpError::Network {
            url: self.endpoint.url.clone(),
            detail: detail.clone(),
            origin: self.origin.clone(),
        };
        match ex.purpose {
            Purpose::Rpc(op) => {
                let point = ex.reader.as_ref().and_then(BodyReader::resume_point);
                if ex.status.is_some_and(|s| (200..300).contains(&s))
                    && !ex.answered
                    && self.try_resume(op, ex.rpc_id, point, now)
                {
                    return;
                }
                if ex.status.is_some() {
                    self.fail_op(
                        op,
                        McpError::server(format!("the answer stream broke off ({detail})")),
                    );
                } else {
                    self.fail_op(op, error);
                }
            }
            Purpose::Discover if self.protocol == ProtocolChoice::Auto => {
                self.notice(format!(
                    "The 2026-07-28 probe failed ({detail}); the browser may have refused the new headers (CORS). Using the initialize handshake instead."
                ));
                self.fall_back_to_legacy(now);
            }
            Purpose::Initialize | Purpose::Initialized | Purpose::Discover => {
                self.fail_connection(error)
            }
            Purpose::Notify => {}
            Purpose::Delete(op) => self.finish_op(op, OpResult::Closed),
        }
    }

    pub(super) fn body_failed(&mut self, exchange: ExchangeId, error: BodyError) {
        let Some(ex) = self.exchanges.get(&exchange) else {
            return;
        };
        let purpose = ex.purpose;
        self.abort(exchange);
        self.fail_purpose(purpose, McpError::from(error));
    }

    /// Schedules a GET with `Last-Event-ID` for an answer stream that ended (or broke) before the
    /// answer, when the server gave event ids (legacy era). False when it cannot be resumed.
    pub(super) fn try_resume(
        &mut self,
        op: OpId,
        rpc_id: Option<u64>,
        point: Option<(String, Option<u64>)>,
        now: u64,
    ) -> bool {
        if self.session.era != Era::Legacy || self.state != State::Ready {
            return false;
        }
        let Some(o) = self.ops.get_mut(&op) else {
            return false;
        };
        let listen = matches!(o.kind, OpKind::Listen);
        if rpc_id.is_none() && !listen {
            return false;
        }
        if let Some((id, retry)) = point {
            o.last_event_id = Some(id);
            if retry.is_some() {
                o.retry_ms = retry;
            }
        }
        if (o.last_event_id.is_none() && !listen) || o.resume_attempts >= MAX_RESUMES {
            return false;
        }
        o.resume_attempts += 1;
        o.inflight = None;
        let wait = o.retry_ms.unwrap_or(DEFAULT_RETRY_MS).min(60_000);
        self.resumes.push(PendingResume {
            op,
            rpc_id,
            due: now.saturating_add(wait),
        });
        true
    }

    pub(super) fn send_resume(&mut self, r: PendingResume) {
        let Some(o) = self.ops.get(&r.op) else { return };
        let last = o.last_event_id.clone();
        if last.is_none() && r.rpc_id.is_some() {
            return;
        }
        let request = self.factory().listen(last.as_deref());
        let ex = self.send(request, Purpose::Rpc(r.op), r.rpc_id);
        if let Some(e) = self.exchanges.get_mut(&ex) {
            e.resume = true;
        }
        if let Some(o) = self.ops.get_mut(&r.op) {
            o.inflight = Some((ex, r.rpc_id.unwrap_or(0)));
        }
    }

    pub(super) fn ended_ok(
        &mut self,
        ex: Exchange,
        status: u16,
        resume_point: Option<(String, Option<u64>)>,
        now: u64,
    ) {
        match ex.purpose {
            Purpose::Initialized => {
                if self.state == State::SendingInitialized {
                    self.become_ready(now);
                }
            }
            Purpose::Delete(op) => self.finish_op(op, OpResult::Closed),
            Purpose::Notify => {}
            _ if ex.answered => {}
            Purpose::Rpc(op) => {
                if status != 202 && self.try_resume(op, ex.rpc_id, resume_point, now) {
                    return;
                }
                let error = if status == 202 {
                    McpError::server(
                        "the server accepted the request (HTTP 202) but sent no answer",
                    )
                } else {
                    McpError::server("the server ended its answer without a response")
                };
                self.fail_op(op, error);
            }
            Purpose::Initialize | Purpose::Discover => {
                if self.state == State::Initializing || self.state == State::Probing {
                    self.fail_connection(McpError::server(
                        "the server ended its answer to the handshake without a response",
                    ));
                }
            }
        }
    }
}
