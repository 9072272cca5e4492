//! The core under faults and server behaviour the reference server did not record: pagination
//! (pages cut from the recorded tool list), a repeating cursor, a JSON-array body (2025-03-26 servers),
//! oversized answers, hostile and truncated bodies, modern-era version errors, 404 as "unknown method",
//! and the auto-era probe. Bodies are the recorded ones where possible; bodies made by hand are faults
//! or are built from recorded messages, as each test says.
#![cfg(not(target_arch = "wasm32"))]

#[path = "mcp_fixtures.rs"]
mod fixtures;

use fixtures::*;
use megane_builder_client::mcp::{CallOptions, Config, Event, McpError, OpResult, ProtocolChoice};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Answers the next request with `status`, the recorded headers of `like`, and `body`.
fn answer_with(h: &mut H, like: &Recorded, status: u16, body: &[u8]) -> Value {
    let (ex, req) = h.next_send();
    let mut rec = like.clone();
    rec.status = status;
    h.head(ex, &rec);
    h.body(ex, body);
    h.c.handle_end(ex, h.now);
    req.json().unwrap_or(Value::Null)
}

fn sse_frame(message: &Value) -> Vec<u8> {
    format!(
        "event: message\r\ndata: {}\r\n\r\n",
        serde_json::to_string(message).unwrap()
    )
    .into_bytes()
}

fn recorded_tools() -> Vec<Value> {
    load("http-stateful/06-tools-list.json").messages[0]["result"]["tools"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn tools_list_follows_next_cursor_in_pages_of_one() {
    let like = load("http-stateful/06-tools-list.json");
    let tools = recorded_tools();
    for mode in MODES {
        let mut h = connected(mode);
        let op = h.c.list_tools(h.now);
        let mut cursor_sent = Vec::new();
        for (i, tool) in tools.iter().enumerate() {
            let (ex, req) = h.next_send();
            let body = req.json().unwrap();
            cursor_sent.push(body["params"].get("cursor").cloned());
            let mut result = json!({"tools": [tool]});
            if i + 1 < tools.len() {
                result["nextCursor"] = json!(format!("page-{}", i + 1));
            }
            let msg = json!({"jsonrpc": "2.0", "id": body["id"], "result": result});
            h.head(ex, &like);
            h.body(ex, &sse_frame(&msg));
            h.c.handle_end(ex, h.now);
        }
        assert_eq!(
            cursor_sent,
            vec![None, Some(json!("page-1")), Some(json!("page-2"))]
        );
        let OpResult::Tools(all) = the_response(&h.take_events(), op) else {
            panic!()
        };
        assert_eq!(all, tools);
    }
}

#[test]
fn a_cursor_seen_twice_is_an_error() {
    let like = load("http-stateful/06-tools-list.json");
    let tools = recorded_tools();
    let mut h = connected(Chunking::Whole);
    let op = h.c.list_tools(h.now);
    for _ in 0..2 {
        let (ex, req) = h.next_send();
        let id = req.json().unwrap()["id"].clone();
        let msg = json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [tools[0]], "nextCursor": "again"}});
        h.head(ex, &like);
        h.body(ex, &sse_frame(&msg));
        h.c.handle_end(ex, h.now);
    }
    let e = the_failure(&h.take_events(), op);
    assert!(
        e.to_string()
            .starts_with("The server failed: tools/list returned the cursor \"again\" twice"),
        "{e}"
    );
    assert!(h.sends.is_empty());
}

#[test]
fn json_array_body_from_a_2025_03_26_server() {
    // The recorded tools/list answer, wrapped in an array as a 2025-03-26 server may send it.
    let rec = load("http-stateful/06-tools-list.json");
    let json_like = load("http-stateful/23-unknown-session-id.json"); // recorded application/json headers
    let mut h = connected(Chunking::Bytes);
    let op = h.c.list_tools(h.now);
    let (ex, req) = h.next_send();
    let mut msg = rec.messages[0].clone();
    msg["id"] = req.json().unwrap()["id"].clone();
    let mut head = json_like.clone();
    head.status = 200;
    head.headers
        .retain(|(k, _)| !k.eq_ignore_ascii_case("content-length"));
    h.head(ex, &head);
    h.body(ex, &serde_json::to_vec(&json!([msg])).unwrap());
    h.c.handle_end(ex, h.now);
    let OpResult::Tools(t) = the_response(&h.take_events(), op) else {
        panic!()
    };
    assert_eq!(t, recorded_tools());
}

#[test]
fn oversized_answers_are_aborted_before_parsing() {
    // SSE: the recorded liquid_box answer against a 2 kB cap.
    let rec = load("http-stateful/07-call-liquid_box-water-molblock.json");
    for mode in MODES {
        let mut cfg = Config::new("http://127.0.0.1:18765/mcp");
        cfg.protocol = ProtocolChoice::Legacy; // the recorded legacy exchanges
        cfg.token = Some(TOKEN.into());
        cfg.max_response_bytes = 2_000;
        let mut h = H::new(cfg, mode);
        connect(
            &mut h,
            "http-stateful/04-initialize.json",
            "http-stateful/05-notifications-initialized.json",
        );
        h.take_events();
        let (name, args) = call_args(&rec);
        let op = h.c.call_tool(&name, args, &CallOptions::default(), h.now);
        let (ex, req) = h.next_send();
        let body = rec.body_for(req.json().unwrap()["id"].as_u64(), None);
        h.head(ex, &rec);
        h.body(ex, &body);
        h.c.handle_end(ex, h.now);
        let events = h.take_events();
        assert!(events.contains(&Event::AbortExchange { exchange: ex }));
        assert_eq!(
            the_failure(&events, op),
            McpError::TooLarge { limit: 2_000 }
        );
    }
    // JSON with Content-Length: refused at the head, before any byte (modern tools/list, 16093 bytes).
    let rec = load("http-modern-2026-07-28/02-modern-2026-07-28-tools-list.json");
    let mut cfg = Config::new("http://127.0.0.1:18765/mcp");
    cfg.token = Some(TOKEN.into());
    cfg.protocol = ProtocolChoice::Modern;
    cfg.max_response_bytes = 16_000;
    let mut h = H::new(cfg, Chunking::Whole);
    h.c.connect(h.now);
    h.expect_and_answer(&load(
        "http-modern-2026-07-28/03-modern-server-discover.json",
    ));
    h.take_events();
    let op = h.c.list_tools(h.now);
    let (ex, _) = h.next_send();
    h.head(ex, &rec);
    let events = h.take_events();
    assert_eq!(
        events,
        vec![
            Event::AbortExchange { exchange: ex },
            Event::Failed {
                op,
                error: McpError::TooLarge { limit: 16_000 }
            }
        ]
    );
    // Bytes still delivered for the aborted exchange are ignored.
    h.body(ex, &rec.body);
    h.c.handle_end(ex, h.now);
    assert!(h.take_events().is_empty());
}

#[test]
fn hostile_and_truncated_bodies_fail_with_one_line() {
    let like = load("http-stateful/15-ping.json");
    let json_like = {
        let mut r = load("http-stateful/23-unknown-session-id.json");
        r.headers
            .retain(|(k, _)| !k.eq_ignore_ascii_case("content-length"));
        r
    };
    let cases: Vec<(&Recorded, u16, Vec<u8>, &str)> = vec![
        (
            &json_like,
            200,
            b"{not json".to_vec(),
            "The server failed: the answer is not valid JSON",
        ),
        (
            &json_like,
            200,
            b"42".to_vec(),
            "The server failed: a message that is not a JSON object",
        ),
        (
            &like,
            200,
            b"event: message\r\ndata: {oops\r\n\r\n".to_vec(),
            "The server failed: a server-sent event is not JSON-RPC",
        ),
        // The stream ends after a progress-free prefix: no answer.
        (
            &like,
            200,
            b": keep-alive\r\n\r\n".to_vec(),
            "The server failed: the server ended its answer without a response",
        ),
        (
            &like,
            202,
            Vec::new(),
            "The server failed: the server accepted the request (HTTP 202) but sent no answer",
        ),
        (
            &json_like,
            500,
            vec![b'x'; 200_000],
            "The server failed: HTTP 500 Internal Server Error: xxxx",
        ),
    ];
    for (like, status, body, expected) in cases {
        let mut h = connected(Chunking::Random(3));
        let op = h.c.ping(h.now);
        answer_with(&mut h, like, status, &body);
        let e = the_failure(&h.take_events(), op).to_string();
        assert!(e.starts_with(expected), "{e}");
        assert!(!e.contains('\n') && e.len() < 600, "{e}");
    }
    // A stream that breaks off after the head is a server failure, not "is the server running?".
    let mut h = connected(Chunking::Whole);
    let op = h.c.ping(h.now);
    let (ex, _) = h.next_send();
    h.head(ex, &like);
    h.c.handle_chunk(ex, b"event: message\r\nda", h.now);
    h.c.handle_network_error(ex, "network error", h.now);
    let e = the_failure(&h.take_events(), op).to_string();
    assert!(
        e.starts_with("The server failed: the answer stream broke off"),
        "{e}"
    );
}

#[test]
fn legacy_404_with_method_not_found_is_not_a_session_expiry() {
    // Hand-made: a 404 whose body is a JSON-RPC -32601 error.
    let like = load("http-stateful/23-unknown-session-id.json");
    let mut h = connected(Chunking::Whole);
    let op = h.c.ping(h.now);
    let body = json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found"}});
    answer_with(&mut h, &like, 404, &serde_json::to_vec(&body).unwrap());
    let e = the_failure(&h.take_events(), op);
    // §6: a JSON-RPC error is shown as every one is; its code is kept beside the line.
    assert_eq!(e.to_string(), "The server failed: Method not found");
    assert!(
        matches!(
            e,
            McpError::Rpc {
                code: -32601,
                status: Some(404),
                ..
            }
        ),
        "{e:?}"
    );
    assert!(h.sends.is_empty(), "no re-initialisation");
}

#[test]
fn a_tools_call_answered_by_invalid_params_is_a_refusal_not_a_failure() {
    // Hand-made: a tools/call answered by JSON-RPC -32602 (how some servers refuse arguments).
    let like = load("http-stateful/06-tools-list.json");
    let mut h = connected(Chunking::Whole);
    let op =
        h.c.call_tool("liquid_box", json!({}), &CallOptions::default(), h.now);
    let (ex, req) = h.next_send();
    let id = req.json().unwrap()["id"].clone();
    // The message's first line only (issue 11, item 3).
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "components: field required\nTraceback"}});
    h.head(ex, &like);
    h.body(ex, &sse_frame(&body));
    h.c.handle_end(ex, h.now);
    let e = the_failure(&h.take_events(), op);
    assert!(e.refuses_arguments(), "{e:?}");
    assert!(
        matches!(
            e,
            McpError::Rpc {
                code: -32602,
                status: None,
                ..
            }
        ),
        "{e:?}"
    );
    // §6: shown as every JSON-RPC error is, as the bytes path shows it; the code is not in the line.
    assert_eq!(
        e.to_string(),
        "The server failed: components: field required"
    );
    assert_eq!(e.call_error_line(), e.to_string());
}

fn modern_h(protocol: ProtocolChoice) -> H {
    let mut cfg = Config::new("http://127.0.0.1:18765/mcp");
    cfg.token = Some(TOKEN.into());
    cfg.protocol = protocol;
    H::new(cfg, Chunking::Whole)
}

#[test]
fn modern_404_method_not_found_and_unsupported_version() {
    let like = load("http-modern-2026-07-28/01-modern-2026-07-28-tools-list-no-method-header.json");
    let mut h = modern_h(ProtocolChoice::Modern);
    h.c.connect(h.now);
    h.expect_and_answer(&load(
        "http-modern-2026-07-28/03-modern-server-discover.json",
    ));
    h.take_events();
    let op = h.c.ping(h.now);
    let body = json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found: ping"}});
    answer_with(&mut h, &like, 404, &serde_json::to_vec(&body).unwrap());
    assert!(the_failure(&h.take_events(), op)
        .to_string()
        .contains("Method not found: ping"));
    assert!(h.sends.is_empty());

    // Hand-made -32022 listing only a version we do not speak: modern-only fails clearly.
    let mut h = modern_h(ProtocolChoice::Modern);
    let op = h.c.connect(h.now);
    let body = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2027-03-01"]}}});
    answer_with(&mut h, &like, 400, &serde_json::to_vec(&body).unwrap());
    assert_eq!(
        the_failure(&h.take_events(), op),
        McpError::UnsupportedVersion {
            offered: "2027-03-01".into()
        }
    );

    // The same with auto, when the server lists a legacy version: fall back to initialize.
    let mut h = modern_h(ProtocolChoice::Auto);
    let op = h.c.connect(h.now);
    let body = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2025-06-18"]}}});
    answer_with(&mut h, &like, 400, &serde_json::to_vec(&body).unwrap());
    let (ex, req) = h.next_send();
    assert_eq!(req.json().unwrap()["method"], "initialize");
    h.answer(ex, &req, &load("http-stateful/04-initialize.json"));
    h.expect_and_answer(&load("http-stateful/05-notifications-initialized.json"));
    let OpResult::Connected(info) = the_response(&h.take_events(), op) else {
        panic!()
    };
    assert_eq!(info.protocol_version, "2025-06-18");
}

#[test]
fn auto_uses_modern_when_the_probe_succeeds() {
    let mut h = modern_h(ProtocolChoice::Auto);
    let op = h.c.connect(h.now);
    h.expect_and_answer(&load(
        "http-modern-2026-07-28/03-modern-server-discover.json",
    ));
    let OpResult::Connected(info) = the_response(&h.take_events(), op) else {
        panic!()
    };
    assert_eq!(info.protocol_version, "2026-07-28");
}

#[test]
fn auto_falls_back_on_a_legacy_400() {
    // A stateful legacy server answers a session-less request with the recorded 400 (22).
    let mut h = modern_h(ProtocolChoice::Auto);
    let op = h.c.connect(h.now);
    let rec = load("http-stateful/22-missing-session-id.json");
    answer_with(&mut h, &rec, 400, &rec.body);
    let (ex, req) = h.next_send();
    assert_eq!(req.json().unwrap()["method"], "initialize");
    h.answer(ex, &req, &load("http-stateful/04-initialize.json"));
    h.expect_and_answer(&load("http-stateful/05-notifications-initialized.json"));
    let events = h.take_events();
    assert!(events.iter().any(|e| matches!(e, Event::Notice(_))));
    assert!(matches!(the_response(&events, op), OpResult::Connected(_)));
    // But a 401 on the probe is reported, not hidden by a fallback.
    let mut h = modern_h(ProtocolChoice::Auto);
    let op = h.c.connect(h.now);
    let rec = load("http-stateful/18-wrong-token.json");
    answer_with(&mut h, &rec, 401, &rec.body);
    assert_eq!(
        the_failure(&h.take_events(), op),
        McpError::Unauthorized { token_given: true }
    );
}

#[test]
fn handshake_timeout_and_operations_queued_before_ready() {
    let mut h = H::legacy("http://127.0.0.1:18765/mcp", Chunking::Whole);
    let c = h.c.connect(h.now);
    let l = h.c.list_tools(h.now);
    let (_ex, _) = h.next_send();
    assert!(h.sends.is_empty(), "tools/list waits for the handshake");
    h.c.handle_timeout(h.now + 60_000);
    let events = h.take_events();
    assert_eq!(the_failure(&events, c), McpError::Timeout { seconds: 60 });
    assert_eq!(the_failure(&events, l), McpError::Timeout { seconds: 60 });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Arbitrary statuses, content types and bytes never panic, and every operation ends exactly once.
    #[test]
    fn arbitrary_answers_end_every_operation_once(
        status in prop_oneof![Just(200u16), Just(202), Just(400), Just(404), Just(500), 100u16..600],
        ct in prop_oneof![Just("text/event-stream"), Just("application/json"), Just("text/plain")],
        body in proptest::collection::vec(any::<u8>(), 0..3000),
        chunk in 1usize..64,
    ) {
        let mut h = connected(Chunking::Whole);
        let op = h.c.call_tool("liquid_box", json!({}), &CallOptions::default(), h.now);
        let (ex, _) = h.next_send();
        let headers = vec![("content-type".to_string(), ct.to_string())];
        h.c.handle_head(ex, status, &headers, h.now);
        for c in body.chunks(chunk) {
            h.c.handle_chunk(ex, c, h.now);
        }
        h.c.handle_end(ex, h.now);
        // A 404 re-initialises; time out whatever is left.
        h.c.handle_timeout(h.now + 31 * 60_000);
        let events = h.take_events();
        let outcomes = events.iter().filter(|e| matches!(e, Event::Response { op: o, .. } | Event::Failed { op: o, .. } if *o == op)).count();
        prop_assert_eq!(outcomes, 1);
    }
}

#[test]
fn close_during_the_handshake_abandons_it() {
    let mut h = H::legacy("http://127.0.0.1:18765/mcp", Chunking::Whole);
    let c = h.c.connect(h.now);
    let (ex, req) = h.next_send();
    let close = h.c.close(h.now);
    let events = h.take_events();
    assert_eq!(the_failure(&events, c), McpError::Closed);
    assert_eq!(the_response(&events, close), OpResult::Closed);
    assert!(events.contains(&Event::AbortExchange { exchange: ex }));
    // The initialize answer arriving anyway starts nothing.
    h.answer(ex, &req, &load("http-stateful/04-initialize.json"));
    assert!(h.take_events().is_empty());
    assert!(h.sends.is_empty());
}

/// The recorded liquid_box answer (07) cut into its SSE frames, each given an `id:` (the reference server
/// sends none) so that the fault "stream dropped before the answer" can be resumed.
fn frames_with_ids(token: &str, id: u64) -> Vec<Vec<u8>> {
    let rec = load("http-stateful/07-call-liquid_box-water-molblock.json");
    let body = String::from_utf8(rec.body_for(Some(id), Some(token))).unwrap();
    body.split_inclusive("\r\n\r\n")
        .enumerate()
        .map(|(i, f)| format!("id: ev-{}\r\nretry: 500\r\n{f}", i + 1).into_bytes())
        .collect()
}

#[test]
fn a_dropped_answer_stream_is_resumed_with_last_event_id() {
    let rec = load("http-stateful/07-call-liquid_box-water-molblock.json");
    for mode in MODES {
        let mut h = connected(mode);
        let (name, args) = call_args(&rec);
        let op = h.c.call_tool(&name, args, &CallOptions::default(), h.now);
        let (ex, req) = h.next_send();
        let body = req.json().unwrap();
        let token = body["params"]["_meta"]["progressToken"]
            .as_str()
            .unwrap()
            .to_string();
        let frames = frames_with_ids(&token, body["id"].as_u64().unwrap());
        assert_eq!(frames.len(), 3);
        // The server closes the stream after the two progress frames (fault).
        h.head(ex, &rec);
        h.body(ex, &frames[0]);
        h.body(ex, &frames[1]);
        h.c.handle_end(ex, h.now);
        let events = h.take_events();
        assert_eq!(
            events
                .iter()
                .filter(|e| matches!(e, Event::Progress { .. }))
                .count(),
            2
        );
        assert!(h.sends.is_empty());
        // It waits for `retry` (500 ms), then GETs with Last-Event-ID on the same session.
        assert_eq!(h.c.poll_timeout(), Some(h.now + 500));
        h.c.handle_timeout(h.now + 499);
        assert!(h.take_events().is_empty() && h.sends.is_empty());
        h.now += 500;
        h.c.handle_timeout(h.now);
        let (gex, get) = h.next_send();
        assert_eq!(get.method, megane_builder_client::mcp::Method::Get);
        assert_eq!(get.header("Last-Event-ID"), Some("ev-2"));
        assert_eq!(get.header("Accept"), Some("text/event-stream"));
        assert_eq!(
            get.header("Mcp-Session-Id"),
            Some("56eb2eae5bc84c58a3339c116df1d634")
        );
        assert_eq!(
            get.header("Authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        assert!(get.body.is_empty());
        h.head(gex, &rec);
        h.body(gex, &frames[2]);
        h.c.handle_end(gex, h.now);
        let OpResult::ToolResult(r) = the_response(&h.take_events(), op) else {
            panic!()
        };
        let r = r.to_value();
        assert_eq!(r, rec.messages[2]["result"]);
    }
}

#[test]
fn resumption_refused_or_cancelled() {
    let rec = load("http-stateful/07-call-liquid_box-water-molblock.json");
    let (name, args) = call_args(&rec);
    // 405 to the GET: one-line failure.
    let mut h = connected(Chunking::Whole);
    let op =
        h.c.call_tool(&name, args.clone(), &CallOptions::default(), h.now);
    let (ex, req) = h.next_send();
    let body = req.json().unwrap();
    let frames = frames_with_ids(
        body["params"]["_meta"]["progressToken"].as_str().unwrap(),
        body["id"].as_u64().unwrap(),
    );
    h.head(ex, &rec);
    h.body(ex, &frames[0]);
    // A broken connection (not a clean end) is resumed the same way.
    h.c.handle_network_error(ex, "network error", h.now);
    assert!(h
        .take_events()
        .iter()
        .any(|e| matches!(e, Event::Progress { .. })));
    h.now += 500;
    h.c.handle_timeout(h.now);
    let (gex, _) = h.next_send();
    let mut refused = load("http-stateful/25-wrong-content-type.json");
    refused.status = 405;
    h.head(gex, &refused);
    h.c.handle_end(gex, h.now);
    let e = the_failure(&h.take_events(), op);
    assert_eq!(
        e.to_string(),
        "The server failed: the answer stream broke off and the server cannot resume it (HTTP 405)"
    );

    // Cancel while waiting to resume: the server is told, and no GET follows.
    let op = h.c.call_tool(&name, args, &CallOptions::default(), h.now);
    let (ex, req) = h.next_send();
    let body = req.json().unwrap();
    let frames = frames_with_ids(
        body["params"]["_meta"]["progressToken"].as_str().unwrap(),
        body["id"].as_u64().unwrap(),
    );
    h.head(ex, &rec);
    h.body(ex, &frames[0]);
    h.c.handle_end(ex, h.now);
    h.take_events();
    h.c.cancel(op, h.now);
    let (_, note) = h.next_send();
    assert_eq!(note.json().unwrap()["method"], "notifications/cancelled");
    assert_eq!(note.json().unwrap()["params"]["requestId"], body["id"]);
    assert_eq!(the_failure(&h.take_events(), op), McpError::Cancelled);
    h.c.handle_timeout(h.now + 10_000);
    h.drain();
    assert!(h.sends.is_empty());
}
