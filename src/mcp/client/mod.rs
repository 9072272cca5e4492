//! The sans-I/O connection state machine: handshake, pending operations, progress, cancellation,
//! timeouts, pagination, session expiry and error classification.
//!
//! Files, by concern: this one holds the client's state, its public surface and the lifecycle of
//! an operation (start, finish, fail, stop, timeouts, close); `handshake.rs` the handshake and the
//! eras; `calls.rs` the operations' requests and results; `streams.rs` the answers as they come and
//! the resumption of broken streams; `server_requests.rs` what the server sends on its own;
//! `refusals.rs` what a failed answer means.
//!
//! The host drives it:
//! 1. [`Client::new`] checks the URL (nothing is sent for a refused one); [`Client::connect`],
//!    [`Client::list_tools`], [`Client::call_tool`], [`Client::cancel`] and [`Client::close`] start or
//!    stop operations.
//! 2. [`Client::poll_event`] yields [`Event::SendRequest`] (send this HTTP request, identified by an
//!    [`ExchangeId`]), [`Event::AbortExchange`] (abort that fetch), and the outcomes
//!    ([`Event::Progress`], [`Event::Response`], [`Event::Failed`], notices).
//! 3. For each exchange the host feeds [`Client::handle_head`] (status and headers), then
//!    [`Client::handle_chunk`] for each body chunk and [`Client::handle_end`], or
//!    [`Client::handle_network_error`] when no answer came.
//! 4. Time is passed in as milliseconds (`now`); [`Client::poll_timeout`] says when to call
//!    [`Client::handle_timeout`].

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;

use serde_json::{json, Value};

use super::body::BodyReader;
use super::call::DEFAULT_REQUEST_TIMEOUT_MS;
use super::elicit::{ElicitId, Form};
use super::errors::McpError;
use super::headers::{HttpRequest, SESSION_ID};
use super::param_headers::Binding;
use super::session::{RequestFactory, Session};
use super::version::{Era, ProtocolChoice};
use crate::wire::caps::MAX_RESPONSE_BYTES;
use crate::wire::endpoint::Endpoint;
use crate::wire::jsonrpc::{self, RawJson};

mod calls;
mod handshake;
mod refusals;
mod server_requests;
mod streams;

/// Connection settings. `Debug` never shows the token.
#[derive(Clone)]
pub struct Config {
    /// The server's endpoint URL (`…/mcp`).
    pub url: String,
    /// Bearer token, sent as `Authorization: Bearer …` on every request.
    pub token: Option<String>,
    /// Which protocol era to use.
    pub protocol: ProtocolChoice,
    /// `clientInfo.name`.
    pub client_name: String,
    /// `clientInfo.version`.
    pub client_version: String,
    /// The page's origin, named in a 403 error so the user knows what to pass to `--allow-origin`.
    pub origin: Option<String>,
    /// Cap on one response body, in bytes.
    pub max_response_bytes: u64,
    /// Whether the host answers elicitations ([`Event::Elicitation`]): only then is the `elicitation`
    /// capability declared; otherwise every elicitation is declined at once.
    pub elicitation: bool,
}

impl Config {
    /// Settings with defaults: [`ProtocolChoice::default`] (auto), no token, the crate's name and
    /// version as `clientInfo`.
    pub fn new(url: impl Into<String>) -> Self {
        Config {
            url: url.into(),
            token: None,
            protocol: ProtocolChoice::default(),
            client_name: env!("CARGO_PKG_NAME").to_string(),
            client_version: env!("CARGO_PKG_VERSION").to_string(),
            origin: None,
            max_response_bytes: MAX_RESPONSE_BYTES,
            elicitation: false,
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("protocol", &self.protocol)
            .field("client_name", &self.client_name)
            .field("client_version", &self.client_version)
            .field("origin", &self.origin)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("elicitation", &self.elicitation)
            .finish()
    }
}

/// Identifies one operation the host started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpId(pub u64);

/// Identifies one HTTP request/response the host carries out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExchangeId(pub u64);

/// What the server told us about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    /// `serverInfo.name`, if given.
    pub name: Option<String>,
    /// `serverInfo.version`, if given.
    pub version: Option<String>,
    /// The protocol version in use.
    pub protocol_version: String,
    /// The era in use.
    pub era: Era,
    /// `instructions` (untrusted text).
    pub instructions: Option<String>,
    /// The server's `capabilities`.
    pub capabilities: Value,
    /// Whether the server declared `tools.listChanged`.
    pub tools_list_changed: bool,
    /// The URL's host with its port (`127.0.0.1:8765`), for display when the server gives no name.
    pub host: String,
}

impl ServerInfo {
    /// `serverInfo.name`, else the URL's host with its port.
    pub fn display_name(&self) -> &str {
        self.name
            .as_deref()
            .filter(|n| !n.is_empty())
            .unwrap_or(&self.host)
    }

    /// `serverInfo.version`, or `None` when the server gives none (or an empty one).
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref().filter(|v| !v.is_empty())
    }
}

/// The successful outcome of an operation.
#[derive(Debug, Clone, PartialEq)]
pub enum OpResult {
    /// The handshake finished.
    Connected(ServerInfo),
    /// Every page of `tools/list`, raw.
    Tools(Vec<Value>),
    /// The raw `CallToolResult` as JSON text, a JSON object (the contract core interprets it with
    /// its typed reader; `isError` is not a failure here).
    ToolResult(RawJson),
    /// The server answered a `ping`.
    Pong,
    /// The connection is closed (DELETE sent and answered, or nothing to delete).
    Closed,
}

/// Something the host must do or know.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Send this request and feed the answer back under `exchange`.
    SendRequest {
        /// The id to feed back with.
        exchange: ExchangeId,
        /// The request.
        request: HttpRequest,
    },
    /// Abort this fetch (cancel, timeout, cap exceeded); later input for it is ignored.
    AbortExchange {
        /// The exchange to abort.
        exchange: ExchangeId,
    },
    /// Progress of a `tools/call`.
    Progress {
        /// The call.
        op: OpId,
        /// `progress / total` when the server gave a total.
        fraction: Option<f64>,
        /// The server's message.
        message: Option<String>,
    },
    /// An operation finished.
    Response {
        /// The operation.
        op: OpId,
        /// Its result.
        result: OpResult,
    },
    /// An operation failed (or was cancelled, or timed out).
    Failed {
        /// The operation.
        op: OpId,
        /// Why.
        error: McpError,
    },
    /// Something the user may want to know that is not an error (fallbacks, re-initialisation).
    Notice(String),
    /// The server said its tool list changed (`notifications/tools/list_changed`); list again.
    ToolsChanged,
    /// The server asks the user to fill in a form (only with [`Config::elicitation`]); answer with
    /// [`Client::answer_elicitation`].
    Elicitation {
        /// The id to answer with.
        id: ElicitId,
        /// What to ask.
        form: Form,
    },
}

/// Options of one `tools/call`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallOptions {
    /// The tool's `expectedSeconds` (contract §3), for the timeout.
    pub expected_seconds: Option<f64>,
    /// An explicit timeout in milliseconds (capped at 30 minutes; 0 means the contract's):
    /// `wire::timing::call_timeout_ms`.
    pub timeout_ms: Option<u64>,
    /// Read a §5.1 Structure at `structuredContent.structure` of the answer (a JSON body, or the
    /// SSE event that carries it) while it comes in
    /// (issue 10, [`BodyReader::scan_structure`]): the result's text then has the contract core's
    /// placeholder instead of the Structure's, and the Structure comes with it
    /// ([`RawJson::take_prescanned`]). For Builder tools, whose result the contract core reads.
    pub scan_structure: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    New,
    Probing,
    Initializing,
    SendingInitialized,
    Ready,
    Failed,
    Closed,
}

#[derive(Debug)]
enum OpKind {
    Connect,
    ListTools {
        seen: HashSet<String>,
        cursor: Option<String>,
        tools: Vec<Value>,
    },
    Call {
        name: String,
        arguments: Value,
        token: String,
        timeout_ms: u64,
        started_at: u64,
        /// The current `input_required` round (2026-07-28 multi-round-trip requests), if any.
        input: Option<InputRound>,
        /// How many `input_required` rounds the call went through.
        rounds: u32,
        /// [`CallOptions::scan_structure`].
        scan_structure: bool,
    },
    Ping,
    Listen,
    Close,
}

#[derive(Debug)]
struct Op {
    kind: OpKind,
    deadline: Option<u64>,
    /// The in-flight request: exchange and JSON-RPC id.
    inflight: Option<(ExchangeId, u64)>,
    /// Already re-initialised once for this operation after a 404.
    reinit_used: bool,
    /// How often a broken answer stream was resumed with `Last-Event-ID`.
    resume_attempts: u32,
    /// The last SSE event id seen on this operation's answer streams.
    last_event_id: Option<String>,
    /// The server's `retry:` value for this operation's streams.
    retry_ms: Option<u64>,
}

/// One `input_required` round of a call: the answers collected so far and the state to echo back.
#[derive(Debug, Default)]
struct InputRound {
    /// `requestState` exactly as the server sent it (echoed back unchanged; omitted when absent).
    request_state: Option<Value>,
    /// `inputResponses`, by the server's keys.
    responses: serde_json::Map<String, Value>,
    /// Elicitations of this round still waiting for the host.
    awaiting: usize,
}

/// Most `input_required` rounds of one call (a server that keeps asking is stopped).
const MAX_INPUT_ROUNDS: u32 = 8;

/// Where the answer to an elicitation goes.
#[derive(Debug)]
enum Reply {
    /// A JSON-RPC response to a server request (legacy era), POSTed back.
    Rpc(Value),
    /// An `inputResponses` entry of a call's retry.
    Input { op: OpId, key: String },
}

#[derive(Debug)]
struct PendingElicit {
    schema: Value,
    reply: Reply,
}

/// A GET that will resume a broken answer stream.
#[derive(Debug)]
struct PendingResume {
    op: OpId,
    /// The request whose answer is awaited (`None` for the notification stream).
    rpc_id: Option<u64>,
    due: u64,
}

/// Most resumptions of one operation's answer stream.
const MAX_RESUMES: u32 = 5;
/// Wait before resuming when the server gave no `retry:`.
const DEFAULT_RETRY_MS: u64 = 1_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    /// A JSON-RPC request of an operation.
    Rpc(OpId),
    /// Legacy `initialize`.
    Initialize,
    /// `notifications/initialized`.
    Initialized,
    /// Modern `server/discover`.
    Discover,
    /// A notification or an answer to a server request: only the status matters.
    Notify,
    /// Session DELETE of a close operation.
    Delete(OpId),
}

#[derive(Debug)]
struct Exchange {
    purpose: Purpose,
    rpc_id: Option<u64>,
    sent_session: bool,
    status: Option<u16>,
    /// The answer's `Content-Type`: decides whether an error body may be shown.
    content_type: Option<String>,
    reader: Option<BodyReader>,
    answered: bool,
    modern: bool,
    /// A GET resuming a broken answer stream.
    resume: bool,
    /// `WWW-Authenticate` of a 401 or 403 answer.
    www_authenticate: Option<String>,
    /// The scanned reader gave way to a plain one (`BodyError::Replay`): the driver must feed
    /// the kept chunks again ([`Client::wants_replay`]); cleared by the next chunk or end.
    replay: bool,
}

/// The sans-I/O MCP client. See the module documentation for the driving loop.
pub struct Client {
    endpoint: Endpoint,
    token: Option<String>,
    /// The token is DPoP-bound (RFC 9449): sent with the `DPoP` scheme (the proof is the driver's).
    token_dpop: bool,
    /// The last 401 / 403 answer's status and `WWW-Authenticate` value, for the authorization
    /// flow (`mcp::auth`): taken with [`Client::take_auth_challenge`].
    auth_challenge: Option<(u16, Option<String>)>,
    protocol: ProtocolChoice,
    origin: Option<String>,
    max_response_bytes: u64,
    client_info: Value,
    session: Session,
    state: State,
    server: Option<ServerInfo>,
    next_rpc: u64,
    next_op: u64,
    next_exchange: u64,
    ops: HashMap<OpId, Op>,
    /// Operations waiting for the handshake, in order.
    waiting: VecDeque<OpId>,
    connect_op: Option<OpId>,
    /// Deadline of the handshake itself.
    handshake_deadline: Option<u64>,
    modern_retry_used: bool,
    exchanges: HashMap<ExchangeId, Exchange>,
    progress_tokens: HashMap<String, OpId>,
    resumes: Vec<PendingResume>,
    events: VecDeque<Event>,
    /// Whether the host answers elicitations.
    elicitation: bool,
    /// The client capabilities we declare.
    capabilities: Value,
    elicitations: HashMap<ElicitId, PendingElicit>,
    next_elicit: u64,
    /// 2026-07-28: each listed tool's `x-mcp-header` parameters, by tool name.
    param_bindings: HashMap<String, Vec<Binding>>,
    /// The notification stream opened for elicitations (legacy era, with a host hook): servers send
    /// requests not tied to a call there.
    elicitation_stream: Option<OpId>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("url", &self.endpoint.url)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("session", &self.session)
            .field("state", &self.state)
            .field("pending_ops", &self.ops.len())
            .finish()
    }
}

impl Client {
    /// A client for `config`. Fails, before anything is sent, for an unusable or insecure URL.
    pub fn new(config: Config) -> Result<Self, McpError> {
        let endpoint = Endpoint::parse(&config.url)?;
        let era = if config.protocol == ProtocolChoice::Legacy {
            Era::Legacy
        } else {
            Era::Modern
        };
        Ok(Client {
            endpoint,
            token: config.token.filter(|t| !t.is_empty()),
            token_dpop: false,
            auth_challenge: None,
            protocol: config.protocol,
            origin: config.origin,
            max_response_bytes: config.max_response_bytes.max(1),
            client_info: json!({"name": config.client_name, "version": config.client_version}),
            session: Session {
                era,
                version: None,
                session_id: None,
            },
            state: State::New,
            server: None,
            next_rpc: 1,
            next_op: 1,
            next_exchange: 1,
            ops: HashMap::new(),
            waiting: VecDeque::new(),
            connect_op: None,
            handshake_deadline: None,
            modern_retry_used: false,
            exchanges: HashMap::new(),
            progress_tokens: HashMap::new(),
            resumes: Vec::new(),
            events: VecDeque::new(),
            elicitation: config.elicitation,
            capabilities: if config.elicitation {
                json!({"elicitation": {"form": {}}})
            } else {
                json!({})
            },
            elicitations: HashMap::new(),
            next_elicit: 1,
            param_bindings: HashMap::new(),
            elicitation_stream: None,
        })
    }

    /// The server's description once connected.
    pub fn server_info(&self) -> Option<&ServerInfo> {
        self.server.as_ref()
    }

    /// The negotiated state (era, version, session id).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Whether the handshake has finished and the connection is usable.
    pub fn is_ready(&self) -> bool {
        self.state == State::Ready
    }

    /// The next thing for the host to do or report.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Replaces the bearer token for every later request (after the authorization flow,
    /// `mcp::auth`). A connection that failed (a 401 at the handshake) can then `connect` again.
    pub fn set_token(&mut self, token: Option<String>) {
        self.token = token.filter(|t| !t.is_empty());
        if self.state == State::Failed {
            self.state = State::New;
            self.session.session_id = None;
            self.modern_retry_used = false;
        }
    }

    /// Whether the token is DPoP-bound (`Authorization: DPoP …`, RFC 9449 §7.1) rather than a
    /// bearer token. The driver adds each request's `DPoP` proof.
    pub fn set_token_dpop(&mut self, dpop: bool) {
        self.token_dpop = dpop;
    }

    /// The access token requests carry, if any (for the driver's DPoP proofs: their `ath`).
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The status (401, or 403 `insufficient_scope`) and `WWW-Authenticate` value of the last
    /// answer that asked for authorization.
    pub fn peek_auth_challenge(&self) -> Option<(u16, Option<&str>)> {
        self.auth_challenge
            .as_ref()
            .map(|(status, h)| (*status, h.as_deref()))
    }

    /// As [`Client::peek_auth_challenge`], taken (once).
    pub fn take_auth_challenge(&mut self) -> Option<(u16, Option<String>)> {
        self.auth_challenge.take()
    }

    /// Cancels an operation: a call gets `notifications/cancelled` (legacy era) and its fetch aborted;
    /// anything the server sends for it afterwards is discarded. Reports [`McpError::Cancelled`].
    /// The handshake is never cancelled on the wire (the spec forbids cancelling `initialize`).
    pub fn cancel(&mut self, op: OpId, _now: u64) {
        // §6: an answer already received but not yet taken by the host (a cancel from a progress
        // callback while the same chunk also carried the result) is dropped, never applied.
        let queued = self.events.len();
        self.events
            .retain(|e| !matches!(e, Event::Response { op: o, .. } if *o == op));
        if self.events.len() < queued {
            self.events.push_back(Event::Failed {
                op,
                error: McpError::Cancelled,
            });
            return;
        }
        self.stop_op(op, McpError::Cancelled);
    }

    /// Closes the connection: pending operations fail with [`McpError::Closed`], and a legacy session is
    /// ended with DELETE (any answer, 405 included, completes the close).
    pub fn close(&mut self, now: u64) -> OpId {
        let op = self.new_op(
            OpKind::Close,
            Some(now.saturating_add(DEFAULT_REQUEST_TIMEOUT_MS)),
        );
        let others: Vec<OpId> = self.ops.keys().copied().filter(|o| *o != op).collect();
        let mut others = others;
        others.sort();
        for o in others {
            self.stop_op(o, McpError::Closed);
        }
        self.waiting.clear();
        // A handshake still in flight is abandoned too (cancellation notices just queued still go out).
        let mut left: Vec<ExchangeId> = self
            .exchanges
            .iter()
            .filter(|(_, e)| e.purpose != Purpose::Notify)
            .map(|(id, _)| *id)
            .collect();
        left.sort();
        for ex in left {
            self.abort(ex);
        }
        let had_session = self.session.era == Era::Legacy && self.session.session_id.is_some();
        self.state = State::Closed;
        self.handshake_deadline = None;
        if had_session {
            let request = self.factory().delete();
            // Forget the id: a second close has nothing left to delete.
            self.session.session_id = None;
            let ex = self.send(request, Purpose::Delete(op), None);
            if let Some(o) = self.ops.get_mut(&op) {
                o.inflight = Some((ex, 0));
            }
        } else {
            self.finish_op(op, OpResult::Closed);
        }
        op
    }

    /// When [`Client::handle_timeout`] should next be called (milliseconds, same clock as `now`).
    pub fn poll_timeout(&self) -> Option<u64> {
        self.ops
            .values()
            .filter_map(|o| o.deadline)
            .chain(self.handshake_deadline)
            .chain(self.resumes.iter().map(|r| r.due))
            .min()
    }

    /// Fails every operation whose deadline has passed; a timed-out call is cancelled as by
    /// [`Client::cancel`] and reported as [`McpError::Timeout`].
    pub fn handle_timeout(&mut self, now: u64) {
        // Broken answer streams whose wait is over are resumed first.
        let (due, later): (Vec<PendingResume>, Vec<PendingResume>) =
            std::mem::take(&mut self.resumes)
                .into_iter()
                .partition(|r| r.due <= now);
        self.resumes = later;
        for r in due {
            self.send_resume(r);
        }
        if let Some(d) = self.handshake_deadline {
            if d <= now {
                self.handshake_deadline = None;
                let secs = DEFAULT_REQUEST_TIMEOUT_MS / 1000;
                let aborts: Vec<ExchangeId> = self
                    .exchanges
                    .iter()
                    .filter(|(_, e)| {
                        matches!(
                            e.purpose,
                            Purpose::Initialize | Purpose::Initialized | Purpose::Discover
                        )
                    })
                    .map(|(id, _)| *id)
                    .collect();
                for ex in aborts {
                    self.abort(ex);
                }
                self.fail_connection(McpError::Timeout { seconds: secs });
            }
        }
        let mut due: Vec<(OpId, u64)> = self
            .ops
            .iter()
            .filter_map(|(id, o)| {
                o.deadline
                    .filter(|d| *d <= now)
                    .map(|_| (*id, timeout_of(o)))
            })
            .collect();
        due.sort();
        for (op, ms) in due {
            self.stop_op(
                op,
                McpError::Timeout {
                    seconds: ms.div_ceil(1000),
                },
            );
        }
    }

    // ----- internals -------------------------------------------------------------------------

    fn factory(&self) -> RequestFactory<'_> {
        RequestFactory {
            endpoint: &self.endpoint,
            token: self.token.as_deref(),
            dpop: self.token_dpop,
            session: &self.session,
            client_info: &self.client_info,
            capabilities: &self.capabilities,
        }
    }

    fn new_op(&mut self, kind: OpKind, deadline: Option<u64>) -> OpId {
        let id = OpId(self.next_op);
        self.next_op += 1;
        self.ops.insert(
            id,
            Op {
                kind,
                deadline,
                inflight: None,
                reinit_used: false,
                resume_attempts: 0,
                last_event_id: None,
                retry_ms: None,
            },
        );
        id
    }

    fn rpc_id(&mut self) -> u64 {
        let id = self.next_rpc;
        self.next_rpc += 1;
        id
    }

    fn notice(&mut self, s: String) {
        self.events.push_back(Event::Notice(s));
    }

    fn send(&mut self, request: HttpRequest, purpose: Purpose, rpc_id: Option<u64>) -> ExchangeId {
        let exchange = ExchangeId(self.next_exchange);
        self.next_exchange += 1;
        let sent_session = request.header(SESSION_ID).is_some();
        self.exchanges.insert(
            exchange,
            Exchange {
                purpose,
                rpc_id,
                sent_session,
                status: None,
                content_type: None,
                reader: None,
                answered: false,
                modern: self.session.era == Era::Modern,
                resume: false,
                www_authenticate: None,
                replay: false,
            },
        );
        self.events
            .push_back(Event::SendRequest { exchange, request });
        exchange
    }

    fn abort(&mut self, exchange: ExchangeId) {
        if self.exchanges.remove(&exchange).is_some() {
            self.events.push_back(Event::AbortExchange { exchange });
        }
    }

    fn start_op(&mut self, op: OpId, now: u64) {
        match self.state {
            State::Ready => self.send_op_request(op, now),
            State::Failed => self.fail_op(
                op,
                McpError::server("the connection failed earlier; connect again"),
            ),
            State::Closed => self.fail_op(op, McpError::Closed),
            _ => self.waiting.push_back(op),
        }
    }

    fn finish_op(&mut self, op: OpId, result: OpResult) {
        self.resumes.retain(|r| r.op != op);
        self.forget_elicitations(op);
        if let Some(o) = self.ops.remove(&op) {
            if let OpKind::Call { token, .. } = &o.kind {
                self.progress_tokens.remove(token);
            }
            self.events.push_back(Event::Response { op, result });
        }
    }

    fn forget_elicitations(&mut self, op: OpId) {
        self.elicitations
            .retain(|_, e| !matches!(&e.reply, Reply::Input { op: o, .. } if *o == op));
    }

    fn fail_op(&mut self, op: OpId, error: McpError) {
        self.resumes.retain(|r| r.op != op);
        self.forget_elicitations(op);
        if self.elicitation_stream == Some(op) {
            // Opened by the client itself: nobody waits for it. A server without the stream (405) or a
            // close is normal; anything else is worth a notice.
            self.elicitation_stream = None;
            self.ops.remove(&op);
            let normal = matches!(error, McpError::Closed | McpError::Cancelled)
                || error.to_string().contains("HTTP 405");
            if !normal {
                self.notice(format!(
                    "The server's notification stream failed ({error}); its elicitations cannot be answered."
                ));
            }
            return;
        }
        if let Some(o) = self.ops.remove(&op) {
            if let OpKind::Call { token, .. } = &o.kind {
                self.progress_tokens.remove(token);
            }
            self.waiting.retain(|w| *w != op);
            self.events.push_back(Event::Failed { op, error });
        }
    }

    /// Where a failure of an exchange goes: its operation, the connection (the handshake), or
    /// nowhere (a notification); a close's DELETE ends the close whatever its answer.
    fn fail_purpose(&mut self, purpose: Purpose, error: McpError) {
        match purpose {
            Purpose::Rpc(op) => self.fail_op(op, error),
            Purpose::Initialize | Purpose::Initialized | Purpose::Discover => {
                self.fail_connection(error)
            }
            Purpose::Notify => {}
            Purpose::Delete(op) => self.finish_op(op, OpResult::Closed),
        }
    }

    /// Stops an operation from the client side (cancel, timeout, close).
    fn stop_op(&mut self, op: OpId, error: McpError) {
        let Some(o) = self.ops.get(&op) else { return };
        let inflight = o.inflight;
        let is_call = matches!(o.kind, OpKind::Call { .. });
        if matches!(o.kind, OpKind::Connect) {
            // Never cancel initialize on the wire; the host just stops waiting.
            self.connect_op = None;
            self.fail_op(op, error);
            return;
        }
        // The request is running on the server while its answer stream is open, or while a broken
        // stream waits to be resumed.
        let live_exchange = inflight.filter(|(ex, _)| self.exchanges.contains_key(ex));
        let running = live_exchange.map(|(_, id)| id).or_else(|| {
            self.resumes
                .iter()
                .find(|r| r.op == op)
                .and_then(|r| r.rpc_id)
        });
        if let Some(rpc_id) = running {
            if is_call && self.session.era == Era::Legacy && self.state != State::Closed {
                let reason = match error {
                    McpError::Timeout { .. } => "timed out",
                    McpError::Closed => "connection closed",
                    _ => "cancelled by the user",
                };
                let note = jsonrpc::notification(
                    "notifications/cancelled",
                    Some(json!({"requestId": rpc_id, "reason": reason})),
                );
                let request = self.factory().post(note);
                self.send(request, Purpose::Notify, None);
            }
        }
        if let Some((ex, _)) = live_exchange {
            self.abort(ex);
        }
        self.fail_op(op, error);
    }
}

fn timeout_of(op: &Op) -> u64 {
    match &op.kind {
        OpKind::Call { timeout_ms, .. } => *timeout_ms,
        _ => DEFAULT_REQUEST_TIMEOUT_MS,
    }
}
