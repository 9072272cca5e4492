//! The sans-I/O connection state machine: handshake, pending operations, progress, cancellation,
//! timeouts, pagination, session expiry and error classification.
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

use super::auth;
use super::body::{BodyError, BodyReader};
use super::call::{parse_progress, DEFAULT_REQUEST_TIMEOUT_MS};
use super::elicit::{self, ElicitId, Form};
use super::errors::{error_body_text, http_failure, McpError};
use super::headers::{body_kind, header_value, HttpRequest, SESSION_ID};
use super::param_headers::{self, Binding};
use super::revisions;
use super::session::{RequestFactory, Session};
use super::version::{self, Era, ProtocolChoice};
use crate::wire::caps::MAX_RESPONSE_BYTES;
use crate::wire::endpoint::Endpoint;
use crate::wire::jsonrpc::{self, Incoming, RawJson, RpcError};
use crate::wire::secrets::Secrets;
use crate::wire::text::one_line;
use crate::wire::timing::{call_deadline_ms, call_timeout_ms};

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

    /// Starts the handshake (legacy `initialize`, or a modern `server/discover` probe).
    pub fn connect(&mut self, now: u64) -> OpId {
        let op = self.new_op(OpKind::Connect, None);
        if self.state != State::New {
            let error = match self.state {
                State::Closed => McpError::Closed,
                _ => McpError::server("connect() was called twice"),
            };
            self.fail_op(op, error);
            return op;
        }
        self.connect_op = Some(op);
        self.start_handshake(now);
        op
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

    /// Lists every tool, following `nextCursor` to the end.
    pub fn list_tools(&mut self, now: u64) -> OpId {
        let kind = OpKind::ListTools {
            seen: HashSet::new(),
            cursor: None,
            tools: Vec::new(),
        };
        let op = self.new_op(kind, None);
        self.start_op(op, now);
        op
    }

    /// Sends a `ping` (checks that the session is alive).
    pub fn ping(&mut self, now: u64) -> OpId {
        let op = self.new_op(OpKind::Ping, None);
        self.start_op(op, now);
        op
    }

    /// Opens the server's notification stream (a GET, legacy era), over which a server that declared
    /// `tools.listChanged` sends `notifications/tools/list_changed` ([`Event::ToolsChanged`]). It is
    /// reopened when the server closes it and ends only with [`Client::cancel`], [`Client::close`] or an
    /// error (a server without such a stream answers 405). Opened only when the host asks: browsers
    /// allow few connections per origin.
    pub fn listen(&mut self, now: u64) -> OpId {
        let op = self.new_op(OpKind::Listen, None);
        self.start_op(op, now);
        op
    }

    /// Calls tool `name` with `arguments`, with a unique progress token and the contract's timeout.
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments: Value,
        options: &CallOptions,
        now: u64,
    ) -> OpId {
        let timeout_ms = call_timeout_ms(
            options.expected_seconds,
            options.timeout_ms.map(|t| t as f64),
        );
        let id = self.next_op;
        let token = format!("mbc-progress-{id}");
        let kind = OpKind::Call {
            name: name.to_string(),
            arguments,
            token: token.clone(),
            timeout_ms,
            started_at: now,
            input: None,
            rounds: 0,
            scan_structure: options.scan_structure,
        };
        let op = self.new_op(kind, Some(call_deadline_ms(now, now, timeout_ms)));
        self.progress_tokens.insert(token, op);
        self.start_op(op, now);
        op
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

    /// The host's answer to [`Event::Elicitation`] `id` (the user's choice). An accepted form's omitted
    /// fields get the schema's defaults. Unknown or already answered ids are ignored.
    pub fn answer_elicitation(&mut self, id: ElicitId, action: elicit::Action, now: u64) {
        let Some(pending) = self.elicitations.remove(&id) else {
            return;
        };
        let result = elicit::answer(&pending.schema, &action);
        match pending.reply {
            Reply::Rpc(rpc_id) => self.reply(jsonrpc::response(rpc_id, result)),
            Reply::Input { op, key } => self.input_answered(op, key, result, now),
        }
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
    /// scan ([`CallOptions::scan_structure`]), whose body the core does not keep. When
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
        let target_host =
            location.map(|l| crate::wire::endpoint::redirect_host(l, &self.endpoint.host));
        self.fail_purpose(ex.purpose, McpError::Redirected { target_host });
    }

    pub fn handle_network_error(&mut self, exchange: ExchangeId, detail: &str, now: u64) {
        let Some(ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        let detail = self.secrets().line(detail);
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

    fn start_handshake(&mut self, now: u64) {
        self.handshake_deadline = Some(now.saturating_add(DEFAULT_REQUEST_TIMEOUT_MS));
        match self.protocol {
            ProtocolChoice::Legacy => self.send_initialize(),
            ProtocolChoice::Modern | ProtocolChoice::Auto => {
                self.state = State::Probing;
                self.session = Session {
                    era: Era::Modern,
                    version: Some(revisions::MODERN.into()),
                    session_id: None,
                };
                let id = self.rpc_id();
                let request =
                    self.factory()
                        .post(jsonrpc::request(id, "server/discover", json!({})));
                self.send(request, Purpose::Discover, Some(id));
            }
        }
    }

    fn send_initialize(&mut self) {
        self.state = State::Initializing;
        self.session = Session {
            era: Era::Legacy,
            version: None,
            session_id: None,
        };
        let id = self.rpc_id();
        let params = json!({
            "protocolVersion": revisions::LEGACY_OFFER,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        });
        let request = self
            .factory()
            .post(jsonrpc::request(id, "initialize", params));
        self.send(request, Purpose::Initialize, Some(id));
    }

    fn fall_back_to_legacy(&mut self, now: u64) {
        self.handshake_deadline = Some(now.saturating_add(DEFAULT_REQUEST_TIMEOUT_MS));
        self.send_initialize();
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

    fn send_op_request(&mut self, op: OpId, now: u64) {
        if self
            .ops
            .get(&op)
            .is_some_and(|o| matches!(o.kind, OpKind::Listen))
        {
            if self.session.era == Era::Modern {
                self.fail_op(
                    op,
                    McpError::server("the 2026-07-28 era has no notification stream (subscriptions/listen is not supported)"),
                );
                return;
            }
            self.send_resume(PendingResume {
                op,
                rpc_id: None,
                due: now,
            });
            return;
        }
        let id = self.rpc_id();
        let Some(o) = self.ops.get_mut(&op) else {
            return;
        };
        let message = match &mut o.kind {
            OpKind::ListTools { cursor, .. } => {
                o.deadline = Some(now.saturating_add(DEFAULT_REQUEST_TIMEOUT_MS));
                let params = match cursor {
                    Some(c) => json!({"cursor": c}),
                    None => json!({}),
                };
                jsonrpc::request(id, "tools/list", params)
            }
            OpKind::Call {
                name,
                arguments,
                token,
                input,
                ..
            } => {
                let mut params = json!({"name": name, "arguments": arguments, "_meta": {"progressToken": token}});
                // The retry of an input_required round: the answers, and the exact requestState.
                if let (Some(round), Value::Object(p)) = (input.take(), &mut params) {
                    p.insert("inputResponses".into(), Value::Object(round.responses));
                    if let Some(state) = round.request_state {
                        p.insert("requestState".into(), state);
                    }
                }
                jsonrpc::request(id, "tools/call", params)
            }
            OpKind::Ping => {
                o.deadline = Some(now.saturating_add(DEFAULT_REQUEST_TIMEOUT_MS));
                jsonrpc::request(id, "ping", json!({}))
            }
            OpKind::Connect | OpKind::Close | OpKind::Listen => return,
        };
        let mut request = self.factory().post(message);
        if self.session.era == Era::Modern {
            if let Some(OpKind::Call {
                name, arguments, ..
            }) = self.ops.get(&op).map(|o| &o.kind)
            {
                if let Some(b) = self.param_bindings.get(name) {
                    request.headers.extend(param_headers::headers(b, arguments));
                }
            }
        }
        let ex = self.send(request, Purpose::Rpc(op), Some(id));
        if let Some(o) = self.ops.get_mut(&op) {
            o.inflight = Some((ex, id));
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

    fn fail_connection(&mut self, error: McpError) {
        self.state = State::Failed;
        self.handshake_deadline = None;
        if let Some(op) = self.connect_op.take() {
            self.fail_op(op, error.clone());
        }
        let waiting: Vec<OpId> = self.waiting.drain(..).collect();
        for op in waiting {
            self.fail_op(op, error.clone());
        }
    }

    fn become_ready(&mut self, now: u64) {
        self.state = State::Ready;
        self.handshake_deadline = None;
        if let Some(op) = self.connect_op.take() {
            if let Some(info) = self.server.clone() {
                self.finish_op(op, OpResult::Connected(info));
            }
        }
        let waiting: Vec<OpId> = self.waiting.drain(..).collect();
        for op in waiting {
            self.send_op_request(op, now);
        }
        // A host that answers elicitations must be reachable for requests not tied to a call, which
        // legacy servers send on the notification stream: open it (only then: it holds a connection).
        let open = self
            .elicitation_stream
            .is_some_and(|op| self.ops.contains_key(&op));
        if self.elicitation && self.session.era == Era::Legacy && !open {
            let op = self.new_op(OpKind::Listen, None);
            self.elicitation_stream = Some(op);
            self.send_op_request(op, now);
        }
    }

    fn body_failed(&mut self, exchange: ExchangeId, error: BodyError) {
        let Some(ex) = self.exchanges.get(&exchange) else {
            return;
        };
        let purpose = ex.purpose;
        self.abort(exchange);
        let error = McpError::from(error);
        match purpose {
            Purpose::Rpc(op) => self.fail_op(op, error),
            Purpose::Initialize | Purpose::Initialized | Purpose::Discover => {
                self.fail_connection(error)
            }
            Purpose::Notify => {}
            Purpose::Delete(op) => self.finish_op(op, OpResult::Closed),
        }
    }

    fn handle_message(&mut self, exchange: ExchangeId, message: Incoming, now: u64) {
        if let Some(Purpose::Rpc(op)) = self.exchanges.get(&exchange).map(|e| e.purpose) {
            if let Some(o) = self
                .ops
                .get_mut(&op)
                .filter(|o| matches!(o.kind, OpKind::Listen))
            {
                o.resume_attempts = 0;
            }
        }
        match message {
            Incoming::Response { id, outcome } => {
                let Some(ex) = self.exchanges.get_mut(&exchange) else {
                    return;
                };
                let matches = jsonrpc::id_as_u64(&id).is_some_and(|i| Some(i) == ex.rpc_id);
                if !matches {
                    return; // not the answer this stream is for (or a stale one): ignored
                }
                ex.answered = true;
                let purpose = ex.purpose;
                let resumed = ex.resume;
                self.handle_answer(purpose, outcome, now);
                // A resumed GET stream stays open on many servers: once it has delivered the answer it
                // is done, and it would hold one of the browser's few connections to the origin.
                if resumed {
                    self.abort(exchange);
                }
            }
            Incoming::Notification { method, params } => match method.as_str() {
                "notifications/progress" => {
                    let Some((token, update)) = parse_progress(&params) else {
                        return;
                    };
                    let key = match &token {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    let Some(&op) = self.progress_tokens.get(&key) else {
                        return;
                    };
                    if let Some(o) = self.ops.get_mut(&op) {
                        if let OpKind::Call {
                            timeout_ms,
                            started_at,
                            ..
                        } = &o.kind
                        {
                            o.deadline = Some(call_deadline_ms(*started_at, now, *timeout_ms));
                        }
                    }
                    self.events.push_back(Event::Progress {
                        op,
                        fraction: update.fraction,
                        message: update.message,
                    });
                }
                "notifications/tools/list_changed"
                    if self.server.as_ref().is_some_and(|s| s.tools_list_changed) =>
                {
                    self.events.push_back(Event::ToolsChanged);
                }
                _ => {}
            },
            Incoming::Request { id, method, params } => {
                // Answered at once, except an elicitation the host's hook answers.
                let answer = match method.as_str() {
                    "ping" => jsonrpc::response(id, json!({})),
                    elicit::METHOD => match elicit::form_request(&params) {
                        Ok(form) if self.elicitation => {
                            self.ask(form, Reply::Rpc(id));
                            return;
                        }
                        Ok(_) => jsonrpc::response(id, json!({"action": "decline"})),
                        Err(e) => jsonrpc::error_response(id, jsonrpc::INVALID_PARAMS, &e),
                    },
                    _ => jsonrpc::error_response(id, jsonrpc::METHOD_NOT_FOUND, "Method not found"),
                };
                self.reply(answer);
            }
        }
    }

    /// POSTs a JSON-RPC response to a server request (legacy era; the modern era has no channel back).
    fn reply(&mut self, answer: Value) {
        if self.state != State::Closed && self.session.era == Era::Legacy {
            let request = self.factory().post(answer);
            self.send(request, Purpose::Notify, None);
        }
    }

    /// Hands an elicitation to the host.
    fn ask(&mut self, form: Form, reply: Reply) {
        let id = ElicitId(self.next_elicit);
        self.next_elicit += 1;
        self.elicitations.insert(
            id,
            PendingElicit {
                schema: form.requested_schema.clone(),
                reply,
            },
        );
        self.events.push_back(Event::Elicitation { id, form });
    }

    fn handle_answer(&mut self, purpose: Purpose, outcome: Result<RawJson, RpcError>, now: u64) {
        if matches!(self.state, State::Closed | State::Failed)
            && !matches!(purpose, Purpose::Rpc(_))
        {
            return;
        }
        match purpose {
            Purpose::Initialize => match outcome {
                Ok(result) => self.initialize_result(result.to_value()),
                Err(e) if e.code == jsonrpc::UNSUPPORTED_PROTOCOL_VERSION => {
                    self.fail_connection(version::no_mutual_version(&supported_in(&e)))
                }
                Err(e) if e.code == jsonrpc::HEADER_MISMATCH => {
                    self.fail_connection(McpError::ModernOnly)
                }
                Err(e) => self.fail_connection(self.rpc_failure(&e)),
            },
            Purpose::Discover => match outcome {
                Ok(result) => self.discover_result(result.to_value(), now),
                Err(e) if self.protocol == ProtocolChoice::Auto => {
                    self.notice(format!(
                        "The server did not accept the 2026-07-28 probe ({}); using the initialize handshake.",
                        self.secrets().line(e.message_text())
                    ));
                    self.fall_back_to_legacy(now);
                }
                Err(e) => self.fail_connection(self.rpc_failure(&e)),
            },
            Purpose::Rpc(op) => match outcome {
                Ok(result) => self.op_result(op, result, now),
                Err(e) => {
                    let err = self.rpc_failure(&e);
                    self.fail_op(op, err);
                }
            },
            Purpose::Initialized | Purpose::Notify | Purpose::Delete(_) => {}
        }
    }

    fn rpc_failure(&self, e: &RpcError) -> McpError {
        let message = self.secrets().line(e.message_text());
        if e.code == jsonrpc::INVALID_PARAMS {
            return McpError::InvalidParams { message };
        }
        McpError::server(format!("{message} (JSON-RPC error {})", e.code))
    }

    /// The secrets a message made here must not show: the token.
    fn secrets(&self) -> Secrets<'_, 1> {
        Secrets([self.token.as_deref()])
    }

    fn initialize_result(&mut self, result: Value) {
        let offered = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("(none)");
        let accepted = match version::accept_legacy(offered) {
            Ok(v) => v,
            Err(e) => {
                self.fail_connection(e);
                return;
            }
        };
        self.session.version = Some(accepted.to_string());
        let info = self.server_info_from(&result, result.get("serverInfo"), accepted, Era::Legacy);
        if self.server.is_some() {
            self.notice("The server's session had expired; started a new session.".into());
        }
        self.server = Some(info);
        self.state = State::SendingInitialized;
        let request = self
            .factory()
            .post(jsonrpc::notification("notifications/initialized", None));
        self.send(request, Purpose::Initialized, None);
    }

    fn discover_result(&mut self, result: Value, now: u64) {
        let supported = version_list(result.get("supportedVersions"));
        // An answer without supportedVersions is not a 2026-07-28 server's: legacy servers may answer
        // unknown methods with an empty result.
        if supported.is_empty() {
            if self.protocol == ProtocolChoice::Auto {
                self.notice(
                    "The server's server/discover answer lists no protocol versions (not a 2026-07-28 server); using the initialize handshake.".into(),
                );
                self.fall_back_to_legacy(now);
            } else {
                self.fail_connection(McpError::server(
                    "The server's server/discover answer lists no protocol versions: it does not speak 2026-07-28. Connect with protocol \"legacy\" or \"auto\".",
                ));
            }
            return;
        }
        if version::mutual_modern(&supported).is_none() {
            if self.protocol == ProtocolChoice::Auto && version::has_mutual_legacy(&supported) {
                self.notice(
                    "The server does not speak 2026-07-28; using the initialize handshake.".into(),
                );
                self.fall_back_to_legacy(now);
            } else {
                self.fail_connection(McpError::UnsupportedVersion {
                    offered: supported.join(", "),
                });
            }
            return;
        }
        let server_info = result
            .get("_meta")
            .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"));
        let server_info = server_info.or_else(|| result.get("serverInfo")).cloned();
        let info = self.server_info_from(
            &result,
            server_info.as_ref(),
            revisions::MODERN,
            Era::Modern,
        );
        self.server = Some(info);
        self.become_ready(now);
    }

    fn server_info_from(
        &self,
        result: &Value,
        server_info: Option<&Value>,
        version: &str,
        era: Era,
    ) -> ServerInfo {
        let text = |v: Option<&Value>, key: &str| {
            v.and_then(|s| s.get(key))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        let tools_list_changed = capabilities
            .get("tools")
            .and_then(|t| t.get("listChanged"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        ServerInfo {
            name: text(server_info, "name"),
            version: text(server_info, "version"),
            protocol_version: version.to_string(),
            era,
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_string),
            capabilities,
            tools_list_changed,
            host: self.endpoint.authority.clone(),
        }
    }

    fn op_result(&mut self, op: OpId, raw: RawJson, now: u64) {
        let Some(o) = self.ops.get_mut(&op) else {
            return;
        };
        o.inflight = None;
        if let OpKind::Call { .. } = &o.kind {
            // Kept as raw JSON text: the contract core reads it once, typed.
            if !raw.get().starts_with('{') {
                self.fail_op(
                    op,
                    McpError::server("tools/call answered with a result that is not an object"),
                );
                return;
            }
            // 2026-07-28: a missing resultType means "complete"; input_required is never a result.
            match raw.result_type() {
                None => self.finish_op(op, OpResult::ToolResult(raw)),
                Some(Value::String(t)) if t == "complete" => {
                    self.finish_op(op, OpResult::ToolResult(raw))
                }
                Some(Value::String(t)) if t == "input_required" => {
                    let result = raw.to_value();
                    self.input_required(op, &result, now)
                }
                Some(other) => {
                    let shown: String = other.to_string().chars().take(40).collect();
                    self.fail_op(
                        op,
                        McpError::server(format!(
                            "tools/call answered with an unknown resultType {shown}"
                        )),
                    );
                }
            }
            return;
        }
        let result = raw.to_value();
        drop(raw);
        let Some(o) = self.ops.get_mut(&op) else {
            return;
        };
        match &mut o.kind {
            OpKind::ListTools {
                seen,
                cursor,
                tools,
            } => {
                match result.get("tools") {
                    Some(Value::Array(page)) => tools.extend(page.iter().cloned()),
                    _ => {
                        self.fail_op(
                            op,
                            McpError::server("tools/list answered without a tools array"),
                        );
                        return;
                    }
                }
                match result.get("nextCursor") {
                    Some(Value::String(next)) => {
                        if !seen.insert(next.clone()) {
                            let shown: String = next.chars().take(40).collect();
                            self.fail_op(
                                op,
                                McpError::server(format!(
                                    "tools/list returned the cursor {shown:?} twice"
                                )),
                            );
                            return;
                        }
                        *cursor = Some(next.clone());
                        self.send_op_request(op, now);
                    }
                    Some(Value::Null) | None => {
                        let tools = std::mem::take(tools);
                        let tools = self.check_param_headers(tools);
                        self.finish_op(op, OpResult::Tools(tools));
                    }
                    Some(_) => self.fail_op(
                        op,
                        McpError::server("tools/list returned a nextCursor that is not a string"),
                    ),
                }
            }
            OpKind::Ping => self.finish_op(op, OpResult::Pong),
            OpKind::Call { .. } | OpKind::Connect | OpKind::Close | OpKind::Listen => {}
        }
    }

    /// 2026-07-28: keeps each tool's `x-mcp-header` parameters for its calls, and leaves out (with a
    /// notice) the tools whose annotations are invalid. Other eras: the list as is.
    fn check_param_headers(&mut self, tools: Vec<Value>) -> Vec<Value> {
        if self.session.era != Era::Modern {
            return tools;
        }
        self.param_bindings.clear();
        let mut kept = Vec::with_capacity(tools.len());
        for tool in tools {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
            let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
            match param_headers::bindings(schema) {
                Ok(b) => {
                    if !b.is_empty() {
                        self.param_bindings.insert(name.to_string(), b);
                    }
                    kept.push(tool);
                }
                Err(e) => {
                    let shown: String = one_line(name).chars().take(60).collect();
                    self.notice(format!("Tool {shown:?} was left out: {}.", one_line(&e)));
                }
            }
        }
        kept
    }

    /// A call's `input_required` result: each input request goes to the host (elicitations) or is
    /// refused at once; when every answer is in, the call is sent again with `inputResponses`, the exact
    /// `requestState` and a new JSON-RPC id.
    fn input_required(&mut self, op: OpId, result: &Value, now: u64) {
        let Some(requests) = result.get("inputRequests").and_then(Value::as_object) else {
            self.fail_op(
                op,
                McpError::server(
                    "the server asked for input (input_required) without inputRequests",
                ),
            );
            return;
        };
        let mut round = InputRound {
            request_state: result.get("requestState").cloned(),
            ..InputRound::default()
        };
        let mut asks = Vec::new();
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            let params = request.get("params").cloned().unwrap_or(Value::Null);
            if method != elicit::METHOD {
                let shown: String = one_line(method).chars().take(60).collect();
                self.fail_op(
                    op,
                    McpError::server(format!(
                        "the server asked for input this client cannot give ({shown:?}); only elicitation is supported"
                    )),
                );
                return;
            }
            match elicit::form_request(&params) {
                Ok(form) if self.elicitation => asks.push((key.clone(), form)),
                Ok(form) => {
                    let declined = elicit::answer(&form.requested_schema, &elicit::Action::Decline);
                    round.responses.insert(key.clone(), declined);
                }
                Err(e) => {
                    self.fail_op(
                        op,
                        McpError::server(format!("the server's input request is unusable: {e}")),
                    );
                    return;
                }
            }
        }
        let Some(o) = self.ops.get_mut(&op) else {
            return;
        };
        let OpKind::Call { input, rounds, .. } = &mut o.kind else {
            return;
        };
        *rounds += 1;
        if *rounds > MAX_INPUT_ROUNDS {
            self.fail_op(
                op,
                McpError::server(format!(
                    "the server asked for input more than {MAX_INPUT_ROUNDS} times; the call was stopped"
                )),
            );
            return;
        }
        round.awaiting = asks.len();
        *input = Some(round);
        if asks.is_empty() {
            self.send_op_request(op, now);
            return;
        }
        // The user is deciding: the call's clock waits for them.
        o.deadline = None;
        for (key, form) in asks {
            self.ask(form, Reply::Input { op, key });
        }
    }

    fn input_answered(&mut self, op: OpId, key: String, result: Value, now: u64) {
        let Some(o) = self.ops.get_mut(&op) else {
            return;
        };
        let OpKind::Call {
            input: Some(round),
            timeout_ms,
            started_at,
            ..
        } = &mut o.kind
        else {
            return;
        };
        round.responses.insert(key, result);
        round.awaiting = round.awaiting.saturating_sub(1);
        if round.awaiting == 0 {
            o.deadline = Some(call_deadline_ms(*started_at, now, *timeout_ms));
            self.send_op_request(op, now);
        }
    }

    /// Schedules a GET with `Last-Event-ID` for an answer stream that ended (or broke) before the
    /// answer, when the server gave event ids (legacy era). False when it cannot be resumed.
    fn try_resume(
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

    fn send_resume(&mut self, r: PendingResume) {
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

    fn ended_ok(
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

    fn ended_with_error(&mut self, ex: Exchange, status: u16, body: &[u8], now: u64) {
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
        let text = error_body_text(ex.content_type.as_deref(), body, &self.secrets());
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
                    self.fail_connection(version::no_mutual_version(&supported_in(e)));
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
                let supported = supported_in(e);
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
                    self.secrets().line(e.message_text()),
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
}

fn timeout_of(op: &Op) -> u64 {
    match &op.kind {
        OpKind::Call { timeout_ms, .. } => *timeout_ms,
        _ => DEFAULT_REQUEST_TIMEOUT_MS,
    }
}

/// The versions a -32022 error lists in `data.supported` (or `data.supportedVersions`).
fn supported_in(e: &RpcError) -> Vec<String> {
    version_list(
        e.data
            .as_ref()
            .and_then(|d| d.get("supported").or_else(|| d.get("supportedVersions"))),
    )
}

/// The protocol versions a server lists (`supportedVersions`, or -32022's `data.supported`):
/// the strings of a JSON array, empty when absent or not an array.
fn version_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
