//! The sans-I/O core on what the official conformance suite's mock servers do (the suite itself runs
//! them live: `tests/peers/run_conformance_suite.sh`): an empty `server/discover` answer, elicitation
//! with and without a host hook, 2026-07-28 `input_required` results, a legacy handshake refused by a
//! 2026-07-28-only server. The answers are written by hand here because each one is the point of its
//! test; they follow the suite's mock servers (`@modelcontextprotocol/conformance` 0.2.0-alpha.12).
#![cfg(not(target_arch = "wasm32"))]

#[path = "mcp_fixtures.rs"]
mod fixtures;

use fixtures::*;
use megane_builder_client::mcp::{
    CallOptions, Config, ElicitAction, Event, ExchangeId, HttpRequest, McpError, Method, OpResult,
    ProtocolChoice,
};
use serde_json::{json, Value};

const URL: &str = "http://127.0.0.1:18765/mcp";

fn client(protocol: ProtocolChoice, elicitation: bool) -> H {
    let mut cfg = Config::new(URL);
    cfg.protocol = protocol;
    cfg.elicitation = elicitation;
    H::new(cfg, Chunking::Whole)
}

fn json_answer(h: &mut H, ex: ExchangeId, status: u16, body: &Value) {
    let headers = vec![("Content-Type".to_string(), "application/json".to_string())];
    h.c.handle_head(ex, status, &headers, h.now);
    h.c.handle_chunk(ex, body.to_string().as_bytes(), h.now);
    h.c.handle_end(ex, h.now);
}

fn sse_head(h: &mut H, ex: ExchangeId, session: Option<&str>) {
    let mut headers = vec![("Content-Type".to_string(), "text/event-stream".to_string())];
    if let Some(s) = session {
        headers.push(("mcp-session-id".to_string(), s.to_string()));
    }
    h.c.handle_head(ex, 200, &headers, h.now);
}

fn id_of(req: &HttpRequest) -> Value {
    req.json().unwrap()["id"].clone()
}

fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A legacy handshake answered with a session and the 202 for `notifications/initialized`.
fn legacy_handshake(h: &mut H) {
    let (ex, req) = h.next_send();
    let body = req.json().unwrap();
    assert_eq!(body["method"], "initialize");
    let headers = vec![
        ("Content-Type".to_string(), "application/json".to_string()),
        ("mcp-session-id".to_string(), "s1".to_string()),
    ];
    h.c.handle_head(ex, 200, &headers, h.now);
    let answer = result(
        &body["id"],
        json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "t"}}),
    );
    h.c.handle_chunk(ex, answer.to_string().as_bytes(), h.now);
    h.c.handle_end(ex, h.now);
    let (ex, req) = h.next_send();
    assert_eq!(req.json().unwrap()["method"], "notifications/initialized");
    h.c.handle_head(ex, 202, &[], h.now);
    h.c.handle_end(ex, h.now);
}

#[test]
fn an_empty_discover_answer_is_not_a_modern_server() {
    // The suite's legacy mock servers answer any unknown request with `{}`.
    let mut h = client(ProtocolChoice::Auto, false);
    let op = h.c.connect(h.now);
    let (ex, req) = h.next_send();
    assert_eq!(req.json().unwrap()["method"], "server/discover");
    json_answer(&mut h, ex, 200, &result(&id_of(&req), json!({})));
    legacy_handshake(&mut h);
    let events = h.take_events();
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Notice(n) if n.contains("initialize handshake"))));
    let OpResult::Connected(info) = the_response(&events, op) else {
        panic!()
    };
    assert_eq!(info.protocol_version, "2025-11-25");

    // In modern mode the same answer is an error that says what to do.
    let mut h = client(ProtocolChoice::Modern, false);
    let op = h.c.connect(h.now);
    let (ex, req) = h.next_send();
    json_answer(&mut h, ex, 200, &result(&id_of(&req), json!({})));
    let e = the_failure(&h.take_events(), op).to_string();
    assert!(e.contains("\"legacy\" or \"auto\""), "{e}");
    assert!(h.sends.is_empty());
}

#[test]
fn a_modern_only_server_refusing_initialize_says_which_mode_to_use() {
    for answer in [
        // The version in an initialize answer…
        (
            200,
            json!({"protocolVersion": "2026-07-28", "capabilities": {}, "serverInfo": {"name": "m"}}),
        ),
        // …or a -32022 error listing only 2026-07-28…
        (
            400,
            json!({"code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2026-07-28"]}}),
        ),
        // …or the 2026-07-28 header error (what the suite's 2026-07-28 mock servers answer).
        (
            400,
            json!({"code": -32020, "message": "Missing MCP-Protocol-Version header"}),
        ),
    ] {
        let mut h = client(ProtocolChoice::Legacy, false);
        let op = h.c.connect(h.now);
        let (ex, req) = h.next_send();
        let body = if answer.0 == 200 {
            result(&id_of(&req), answer.1)
        } else {
            json!({"jsonrpc": "2.0", "id": id_of(&req), "error": answer.1})
        };
        json_answer(&mut h, ex, answer.0, &body);
        let e = the_failure(&h.take_events(), op);
        assert_eq!(e, McpError::ModernOnly);
        assert!(e.to_string().contains("protocol \"auto\" or \"modern\""));
    }
}

fn elicitation_request(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": {
        "message": "Accept with defaults",
        "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "verified": {"type": "boolean", "default": true}
        }}
    }})
}

#[test]
fn legacy_elicitation_goes_to_the_hook_with_defaults_or_is_declined_at_once() {
    for hook in [true, false] {
        let mut h = client(ProtocolChoice::Legacy, hook);
        let op = h.c.connect(h.now);
        let (ex, req) = h.next_send();
        let caps = req.json().unwrap()["params"]["capabilities"].clone();
        if hook {
            assert_eq!(caps, json!({"elicitation": {"form": {}}}));
        } else {
            assert_eq!(caps, json!({}), "no hook, no capability");
        }
        // Answer the initialize by hand (legacy_handshake takes its own first request).
        let headers = vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            ("mcp-session-id".to_string(), "s1".to_string()),
        ];
        h.c.handle_head(ex, 200, &headers, h.now);
        let answer = result(
            &id_of(&req),
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "t"}}),
        );
        h.c.handle_chunk(ex, answer.to_string().as_bytes(), h.now);
        h.c.handle_end(ex, h.now);
        let (ex, _) = h.next_send();
        h.c.handle_head(ex, 202, &[], h.now);
        h.c.handle_end(ex, h.now);
        let events = h.take_events();
        the_response(&events, op);
        if hook {
            // Reachable for requests not tied to a call: the notification stream is opened. This
            // server has none (405): that is normal, no notice.
            let (get_ex, get) = h.next_send();
            assert_eq!(get.method, Method::Get);
            assert_eq!(get.header("Mcp-Session-Id"), Some("s1"));
            h.c.handle_head(get_ex, 405, &[], h.now);
            h.c.handle_end(get_ex, h.now);
            let events = h.take_events();
            assert!(events.is_empty(), "{events:?}");
        } else {
            assert!(h.sends.is_empty(), "no stream without a hook");
        }

        let call =
            h.c.call_tool("ask", json!({}), &CallOptions::default(), h.now);
        let (call_ex, call_req) = h.next_send();
        sse_head(&mut h, call_ex, Some("s1"));
        let frame = format!("event: message\ndata: {}\n\n", elicitation_request(77));
        h.c.handle_chunk(call_ex, frame.as_bytes(), h.now);
        h.drain();
        let answer_req = if hook {
            let asked: Vec<_> = h
                .take_events()
                .into_iter()
                .filter_map(|e| match e {
                    Event::Elicitation { id, form } => Some((id, form)),
                    _ => None,
                })
                .collect();
            assert_eq!(asked.len(), 1);
            let (id, form) = asked[0].clone();
            assert_eq!(form.message, "Accept with defaults");
            assert_eq!(
                form.content,
                json!({"name": "John Doe", "age": 30, "verified": true})
            );
            assert!(
                h.sends.is_empty(),
                "nothing is sent before the user answers"
            );
            // The user changes one field and submits: the omitted ones get their defaults.
            h.c.answer_elicitation(id, ElicitAction::Accept(json!({"age": 41})), h.now);
            let (_, r) = h.next_send();
            assert_eq!(
                r.json().unwrap()["result"],
                json!({"action": "accept", "content": {"name": "John Doe", "age": 41, "verified": true}})
            );
            r
        } else {
            // Declined at once, on the POST channel of the session.
            let (_, r) = h.next_send();
            assert_eq!(r.json().unwrap()["result"], json!({"action": "decline"}));
            r
        };
        assert_eq!(answer_req.json().unwrap()["id"], 77);
        assert_eq!(answer_req.header("Mcp-Session-Id"), Some("s1"));
        let done = format!(
            "event: message\ndata: {}\n\n",
            result(&id_of(&call_req), json!({"content": []}))
        );
        h.c.handle_chunk(call_ex, done.as_bytes(), h.now);
        h.c.handle_end(call_ex, h.now);
        assert!(matches!(
            the_response(&h.take_events(), call),
            OpResult::ToolResult(_)
        ));
    }
}

fn modern_connect(h: &mut H) {
    let op = h.c.connect(h.now);
    let (ex, req) = h.next_send();
    json_answer(
        h,
        ex,
        200,
        &result(
            &id_of(&req),
            json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "serverInfo": {"name": "m"}}),
        ),
    );
    the_response(&h.take_events(), op);
}

fn input_required(state: Option<&str>) -> Value {
    let mut r = json!({"resultType": "input_required", "inputRequests": {"confirm": {
        "method": "elicitation/create",
        "params": {"message": "Confirm?", "requestedSchema": {"type": "object", "properties": {"confirmed": {"type": "boolean", "default": true}}}}
    }}});
    if let Some(s) = state {
        r["requestState"] = json!(s);
    }
    r
}

#[test]
fn input_required_is_never_a_result_and_is_retried_with_the_exact_state_and_a_new_id() {
    for hook in [true, false] {
        let mut h = client(ProtocolChoice::Modern, hook);
        modern_connect(&mut h);
        let op =
            h.c.call_tool("t", json!({"x": 1}), &CallOptions::default(), h.now);
        let (ex, first) = h.next_send();
        let caps =
            &first.json().unwrap()["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
        assert_eq!(caps.get("elicitation").is_some(), hook);
        // An opaque state with characters a careless client would re-encode.
        let state = r#"{"nonce":"a/b+c=","originalId":1}"#;
        json_answer(
            &mut h,
            ex,
            200,
            &result(&id_of(&first), input_required(Some(state))),
        );
        let events = h.take_events();
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::Response { .. } | Event::Failed { .. })),
            "input_required is neither a result nor a failure: {events:?}"
        );
        if hook {
            let id = events
                .iter()
                .find_map(|e| match e {
                    Event::Elicitation { id, form } => {
                        assert_eq!(form.content, json!({"confirmed": true}));
                        Some(*id)
                    }
                    _ => None,
                })
                .expect("the hook is asked");
            assert!(h.sends.is_empty());
            h.c.answer_elicitation(id, ElicitAction::Accept(json!({})), h.now);
        }
        let (ex, retry) = h.next_send();
        let body = retry.json().unwrap();
        assert_ne!(body["id"], first.json().unwrap()["id"], "a new JSON-RPC id");
        assert_eq!(body["params"]["name"], "t");
        assert_eq!(body["params"]["arguments"], json!({"x": 1}));
        assert_eq!(
            body["params"]["requestState"],
            json!(state),
            "echoed exactly"
        );
        let expected = if hook {
            json!({"action": "accept", "content": {"confirmed": true}})
        } else {
            json!({"action": "decline"})
        };
        assert_eq!(
            body["params"]["inputResponses"],
            json!({"confirm": expected})
        );
        // The second round has no state: none is sent back.
        json_answer(&mut h, ex, 200, &result(&body["id"], input_required(None)));
        if hook {
            let id = h
                .take_events()
                .into_iter()
                .find_map(|e| match e {
                    Event::Elicitation { id, .. } => Some(id),
                    _ => None,
                })
                .unwrap();
            h.c.answer_elicitation(id, ElicitAction::Decline, h.now);
        }
        let (ex, retry2) = h.next_send();
        let body2 = retry2.json().unwrap();
        assert!(body2["params"].get("requestState").is_none());
        assert_ne!(body2["id"], body["id"]);
        json_answer(
            &mut h,
            ex,
            200,
            &result(
                &body2["id"],
                json!({"resultType": "complete", "content": []}),
            ),
        );
        let OpResult::ToolResult(r) = the_response(&h.take_events(), op) else {
            panic!()
        };
        assert_eq!(r.to_value()["resultType"], "complete");
        // Another call carries nothing of that flow.
        h.c.call_tool("other", json!({}), &CallOptions::default(), h.now);
        let (_, other) = h.next_send();
        let p = &other.json().unwrap()["params"];
        assert!(p.get("inputResponses").is_none() && p.get("requestState").is_none());
    }
}

#[test]
fn a_server_that_keeps_asking_is_stopped_and_unknown_input_is_refused() {
    let mut h = client(ProtocolChoice::Modern, false);
    modern_connect(&mut h);
    let op =
        h.c.call_tool("t", json!({}), &CallOptions::default(), h.now);
    let mut rounds = 0;
    let error = loop {
        let (ex, req) = h.next_send();
        json_answer(
            &mut h,
            ex,
            200,
            &result(&id_of(&req), input_required(Some("s"))),
        );
        rounds += 1;
        let events = h.take_events();
        if let Some(Event::Failed { error, .. }) = events
            .iter()
            .find(|e| matches!(e, Event::Failed { op: o, .. } if *o == op))
        {
            break error.clone();
        }
        assert!(rounds < 20);
    };
    assert!(error.to_string().contains("more than 8 times"), "{error}");

    let op =
        h.c.call_tool("t", json!({}), &CallOptions::default(), h.now);
    let (ex, req) = h.next_send();
    let sampling = json!({"resultType": "input_required", "inputRequests": {"s": {"method": "sampling/createMessage", "params": {}}}});
    json_answer(&mut h, ex, 200, &result(&id_of(&req), sampling));
    let e = the_failure(&h.take_events(), op).to_string();
    assert!(e.contains("sampling/createMessage"), "{e}");
    assert!(h.sends.is_empty());
}
