//! Operations the host starts: `tools/list` (every page), `ping`, `tools/call` (the contract's
//! timeout, progress tokens, 2026-07-28 `x-mcp-header` parameters and `input_required` rounds),
//! and their results.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::{
    CallOptions, Client, Era, InputRound, OpId, OpKind, OpResult, PendingResume, Purpose, Reply,
    MAX_INPUT_ROUNDS,
};
use crate::mcp::call::DEFAULT_REQUEST_TIMEOUT_MS;
use crate::mcp::elicit;
use crate::mcp::errors::McpError;
use crate::mcp::param_headers;
use crate::wire::jsonrpc::{self, RawJson};
use crate::wire::text::one_line;
use crate::wire::timing::{call_deadline_ms, call_timeout_ms};

impl Client {
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

    pub(super) fn send_op_request(&mut self, op: OpId, now: u64) {
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

    pub(super) fn op_result(&mut self, op: OpId, raw: RawJson, now: u64) {
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
    pub(super) fn check_param_headers(&mut self, tools: Vec<Value>) -> Vec<Value> {
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
    pub(super) fn input_required(&mut self, op: OpId, result: &Value, now: u64) {
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

    pub(super) fn input_answered(&mut self, op: OpId, key: String, result: Value, now: u64) {
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
}
