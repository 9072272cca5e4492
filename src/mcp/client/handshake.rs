//! Handshake and eras: the legacy `initialize` (with `notifications/initialized`) or the
//! 2026-07-28 `server/discover` probe, the fallback from one era to the other, the version
//! negotiation, the server's description, and the answers to the client's own requests routed by
//! what they were for.

use serde_json::{json, Value};

use super::{Client, Era, OpId, OpKind, OpResult, ProtocolChoice, Purpose, ServerInfo, State};
use crate::mcp::call::DEFAULT_REQUEST_TIMEOUT_MS;
use crate::mcp::errors::McpError;
use crate::mcp::revisions;
use crate::mcp::session::Session;
use crate::mcp::version;
use crate::wire::jsonrpc::{self, RawJson, RpcError};

impl Client {
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

    pub(super) fn start_handshake(&mut self, now: u64) {
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

    pub(super) fn send_initialize(&mut self) {
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

    pub(super) fn fall_back_to_legacy(&mut self, now: u64) {
        self.handshake_deadline = Some(now.saturating_add(DEFAULT_REQUEST_TIMEOUT_MS));
        self.send_initialize();
    }

    pub(super) fn fail_connection(&mut self, error: McpError) {
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

    pub(super) fn become_ready(&mut self, now: u64) {
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

    pub(super) fn handle_answer(
        &mut self,
        purpose: Purpose,
        outcome: Result<RawJson, RpcError>,
        now: u64,
    ) {
        if matches!(self.state, State::Closed | State::Failed)
            && !matches!(purpose, Purpose::Rpc(_))
        {
            return;
        }
        match purpose {
            Purpose::Initialize => match outcome {
                Ok(result) => self.initialize_result(result.to_value()),
                Err(e) if e.code == jsonrpc::UNSUPPORTED_PROTOCOL_VERSION => {
                    self.fail_connection(version::no_mutual_version(&version::supported_in(&e)))
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
                        self.shown(e.message_text())
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

    pub(super) fn initialize_result(&mut self, result: Value) {
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

    pub(super) fn discover_result(&mut self, result: Value, now: u64) {
        let supported = version::version_list(result.get("supportedVersions"));
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

    pub(super) fn server_info_from(
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
}
