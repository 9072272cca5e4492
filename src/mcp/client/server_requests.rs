//! What the server sends on its own: notifications (progress, a changed tool list) and requests
//! (`ping`, elicitations, which the host answers, and anything else, refused), and the answers
//! going back.

use serde_json::{json, Value};

use super::Event;
use super::{Client, Era, ExchangeId, OpKind, PendingElicit, Purpose, Reply, State};
use crate::mcp::call::parse_progress;
use crate::mcp::elicit::{self, ElicitId, Form};
use crate::wire::jsonrpc::{self, Incoming};
use crate::wire::timing::call_deadline_ms;

impl Client {
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

    pub(super) fn handle_message(&mut self, exchange: ExchangeId, message: Incoming, now: u64) {
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
    pub(super) fn reply(&mut self, answer: Value) {
        if self.state != State::Closed && self.session.era == Era::Legacy {
            let request = self.factory().post(answer);
            self.send(request, Purpose::Notify, None);
        }
    }

    /// Hands an elicitation to the host.
    pub(super) fn ask(&mut self, form: Form, reply: Reply) {
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
}
