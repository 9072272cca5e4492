//! The sans-I/O core replayed against the recorded reference-server exchanges
//! (`tests/fixtures/reference-server/http-*/`): each scenario drives `Client`, checks every request
//! it asks for against the recorded request, and answers it with the recorded response (status, headers
//! and body), whole, byte by byte and in pseudo-random chunks. The only change made to a recorded body is
//! the JSON-RPC id and progress token, replaced by the ones our client chose. Bodies made by hand appear
//! only where a fault is the point (hostile or truncated bodies, a hidden header) and say so.
#![cfg(not(target_arch = "wasm32"))]

#[path = "mcp_fixtures.rs"]
mod fixtures;

use fixtures::*;
use megane_builder_client::mcp::{
    CallOptions, Client, Config, Event, HttpRequest, McpError, OpResult, ProtocolChoice,
};
use serde_json::json;

#[test]
fn stateful_session_list_and_calls() {
    for mode in MODES {
        let mut h = H::legacy("http://127.0.0.1:18765/mcp", mode);
        let op = connect(
            &mut h,
            "http-stateful/04-initialize.json",
            "http-stateful/05-notifications-initialized.json",
        );
        let events = h.take_events();
        let OpResult::Connected(info) = the_response(&events, op) else {
            panic!()
        };
        assert_eq!(info.display_name(), "megane-builder-tools");
        assert_eq!(info.version.as_deref(), Some("0.1.0"));
        assert_eq!(
            info.protocol_version, "2025-06-18",
            "the server's counter-offer is accepted"
        );
        assert!(info
            .instructions
            .as_deref()
            .unwrap()
            .starts_with("Structure-building tools"));
        assert!(!info.tools_list_changed);
        assert_eq!(
            h.c.session().session_id.as_deref(),
            Some("56eb2eae5bc84c58a3339c116df1d634")
        );

        // tools/list (one page).
        let op = h.c.list_tools(h.now);
        let rec = load("http-stateful/06-tools-list.json");
        h.expect_and_answer(&rec);
        let OpResult::Tools(tools) = the_response(&h.take_events(), op) else {
            panic!()
        };
        assert_eq!(
            tools,
            rec.messages[0]["result"]["tools"]
                .as_array()
                .unwrap()
                .clone()
        );
        assert_eq!(tools.len(), 3);

        // Calls: results (tool errors included) come back raw; progress comes first, in order.
        for file in [
            "http-stateful/07-call-liquid_box-water-molblock.json",
            "http-stateful/08-call-liquid_box-methanol-smiles.json",
            "http-stateful/09-call-solvate-methane-12A.json",
            "http-stateful/10-call-solvate-no-cell-tool-error.json",
            "http-stateful/11-call-liquid_box-2d-molblock-tool-error.json",
            "http-stateful/12-call-liquid_box-box-too-small-tool-error.json",
            "http-stateful/13-call-liquid_box-empty-arguments.json",
            "http-stateful/14-call-unknown-tool.json",
        ] {
            let rec = load(file);
            let (name, args) = call_args(&rec);
            let op = h.c.call_tool(
                &name,
                args,
                &CallOptions {
                    expected_seconds: Some(20.0),
                    timeout_ms: None,
                    scan_structure: false,
                },
                h.now,
            );
            let req = h.expect_and_answer(&rec);
            let token = req.json().unwrap()["params"]["_meta"]["progressToken"]
                .as_str()
                .unwrap()
                .to_string();
            assert!(!token.is_empty());
            let events = h.take_events();
            let progress: Vec<(Option<f64>, Option<String>)> = events
                .iter()
                .filter_map(|e| match e {
                    Event::Progress {
                        op: o,
                        fraction,
                        message,
                    } if *o == op => Some((*fraction, message.clone())),
                    _ => None,
                })
                .collect();
            let recorded: Vec<(Option<f64>, Option<String>)> = rec
                .messages
                .iter()
                .filter(|m| m["method"] == "notifications/progress")
                .map(|m| {
                    let p = &m["params"];
                    (
                        Some(p["progress"].as_f64().unwrap() / p["total"].as_f64().unwrap()),
                        p["message"].as_str().map(str::to_string),
                    )
                })
                .collect();
            assert_eq!(progress, recorded, "{file}");
            let OpResult::ToolResult(result) = the_response(&events, op) else {
                panic!()
            };
            let result = result.to_value();
            assert_eq!(&result, &rec.messages.last().unwrap()["result"], "{file}");
            let last = events.last().unwrap();
            assert!(
                matches!(last, Event::Response { .. }),
                "the result comes after the progress: {file}"
            );
        }
        // Progress tokens are unique per call.
        assert!(h.take_events().is_empty());
    }
}

#[test]
fn server_ping_on_a_call_stream_is_answered() {
    // The reference server never pings the client, so the recorded ping request (15) is placed, as an SSE
    // frame in the recorded framing, before the recorded answer of a call (08).
    let ping = load("http-stateful/15-ping.json").request_body.unwrap();
    let call = load("http-stateful/08-call-liquid_box-methanol-smiles.json");
    for mode in MODES {
        let mut h = connected(mode);
        let (name, args) = call_args(&call);
        let op = h.c.call_tool(&name, args, &CallOptions::default(), h.now);
        let (ex, req) = h.next_send();
        let id = req.json().unwrap()["id"].as_u64();
        let mut body = format!(
            "event: message\r\ndata: {}\r\n\r\n",
            serde_json::to_string(&ping).unwrap()
        )
        .into_bytes();
        body.extend(call.body_for(id, None));
        h.head(ex, &call);
        h.body(ex, &body);
        h.c.handle_end(ex, h.now);
        let (_, pong) = h.next_send();
        assert_eq!(
            pong.json().unwrap(),
            json!({"jsonrpc": "2.0", "id": 11, "result": {}})
        );
        assert_eq!(
            pong.header("Mcp-Session-Id"),
            Some("56eb2eae5bc84c58a3339c116df1d634")
        );
        assert_eq!(pong.header("MCP-Protocol-Version"), Some("2025-06-18"));
        assert_eq!(
            pong.header("Authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        let OpResult::ToolResult(r) = the_response(&h.take_events(), op) else {
            panic!()
        };
        let r = r.to_value();
        assert_eq!(r, call.messages[0]["result"]);
    }
}

#[test]
fn ping_and_close_with_delete() {
    for mode in MODES {
        let mut h = connected(mode);
        let op = h.c.ping(h.now);
        h.expect_and_answer(&load("http-stateful/15-ping.json"));
        assert_eq!(the_response(&h.take_events(), op), OpResult::Pong);
        let op = h.c.close(h.now);
        h.expect_and_answer(&load("http-stateful/28-delete-session.json"));
        assert_eq!(the_response(&h.take_events(), op), OpResult::Closed);
        // A second close has nothing to delete.
        let op = h.c.close(h.now);
        assert_eq!(the_response(&h.take_events(), op), OpResult::Closed);
        assert!(h.sends.is_empty());
        // After close nothing is sent.
        let op = h.c.list_tools(h.now);
        assert_eq!(the_failure(&h.take_events(), op), McpError::Closed);
        assert!(h.sends.is_empty());
    }
}

#[test]
fn session_expiry_404_reinitialises_once_and_retries() {
    for mode in MODES {
        let mut h = connected(mode);
        let op = h.c.ping(h.now);
        // The session was deleted (28): the server answers 404 (29).
        h.expect_and_answer(&load("http-stateful/29-after-delete.json"));
        // A new initialize, without the dead session id.
        let (ex, req) = h.next_send();
        assert_eq!(req.json().unwrap()["method"], "initialize");
        assert!(req.header("Mcp-Session-Id").is_none());
        h.answer(
            ex,
            &req,
            &load("http-stateful/30-initialize-2025-11-25.json"),
        );
        assert_eq!(
            h.c.session().session_id.as_deref(),
            Some("e1c30fcddd9f4a3c98192a03b91b6828")
        );
        let (ex, req) = h.next_send();
        assert_eq!(req.json().unwrap()["method"], "notifications/initialized");
        assert_eq!(
            req.header("Mcp-Session-Id"),
            Some("e1c30fcddd9f4a3c98192a03b91b6828")
        );
        assert_eq!(req.header("MCP-Protocol-Version"), Some("2025-11-25"));
        let accepted = load("http-stateful/05-notifications-initialized.json");
        h.head(ex, &accepted);
        h.c.handle_end(ex, h.now);
        // The ping is retried on the new session.
        let (ex, req) = h.next_send();
        assert_eq!(req.json().unwrap()["method"], "ping");
        assert_eq!(
            req.header("Mcp-Session-Id"),
            Some("e1c30fcddd9f4a3c98192a03b91b6828")
        );
        let pong = load("http-stateful/15-ping.json");
        let id = req.json().unwrap()["id"].as_u64();
        h.head(ex, &pong);
        h.body(ex, &pong.body_for(id, None));
        h.c.handle_end(ex, h.now);
        let events = h.take_events();
        assert_eq!(the_response(&events, op), OpResult::Pong);
        assert!(events
            .iter()
            .any(|e| matches!(e, Event::Notice(n) if n.contains("expired"))));

        // A second 404 for an operation that already re-initialised is a failure, not a loop.
        let op = h.c.ping(h.now);
        let (ex, _req) = h.next_send();
        let gone = load("http-stateful/29-after-delete.json");
        h.head(ex, &gone);
        h.body(ex, &gone.body);
        h.c.handle_end(ex, h.now);
        let (ex, req) = h.next_send();
        assert_eq!(req.json().unwrap()["method"], "initialize");
        h.answer(
            ex,
            &req,
            &load("http-stateful/30-initialize-2025-11-25.json"),
        );
        let (ex, _) = h.next_send();
        h.head(ex, &accepted);
        h.c.handle_end(ex, h.now);
        let (ex, _) = h.next_send();
        h.head(ex, &gone);
        h.body(ex, &gone.body);
        h.c.handle_end(ex, h.now);
        let err = the_failure(&h.take_events(), op);
        assert_eq!(err.to_string(), "The server failed: Session not found");
        assert!(h.sends.is_empty());
    }
}

#[test]
fn cancel_sends_notification_and_discards_the_late_answer() {
    for mode in MODES {
        let mut h = H::legacy("http://127.0.0.1:18765/mcp", mode);
        connect(
            &mut h,
            "http-cancel/01-initialize.json",
            "http-cancel/02-notifications-initialized.json",
        );
        h.take_events();
        let rec = load("http-cancel/03-call-polymer_chain-cancelled.json");
        let (name, args) = call_args(&rec);
        let op = h.c.call_tool(&name, args, &CallOptions::default(), h.now);
        let (ex, req) = h.next_send();
        check_request(&req, &rec);
        let ours = req.json().unwrap();
        let body = rec.body_for(
            ours["id"].as_u64(),
            ours["params"]["_meta"]["progressToken"].as_str(),
        );
        // The first frame (progress) arrives, then the user cancels.
        let split = body.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        h.head(ex, &rec);
        h.body(ex, &body[..split]);
        let events = h.take_events();
        assert_eq!(
            events,
            vec![Event::Progress {
                op,
                fraction: Some(0.1),
                message: Some("polymerising with RadonPy".into())
            }]
        );
        h.c.cancel(op, h.now);
        let (nex, note) = h.next_send();
        let note_json = note.json().unwrap();
        assert_eq!(note_json["params"]["requestId"], ours["id"]);
        h.answer(
            nex,
            &note,
            &load("http-cancel/04-notifications-cancelled.json"),
        );
        let events = h.take_events();
        assert_eq!(
            events,
            vec![
                Event::AbortExchange { exchange: ex },
                Event::Failed {
                    op,
                    error: McpError::Cancelled
                }
            ]
        );
        // The server's -32800 answer still arrives on the old stream: it is discarded.
        h.body(ex, &body[split..]);
        h.c.handle_end(ex, h.now);
        assert!(h.take_events().is_empty());
        assert!(h.sends.is_empty());
        // The session is still fine.
        let op = h.c.ping(h.now);
        h.expect_and_answer(&load("http-cancel/05-ping-after-cancel.json"));
        assert_eq!(the_response(&h.take_events(), op), OpResult::Pong);
    }
}

#[test]
fn timeout_cancels_reports_timeout_and_progress_resets_it_up_to_the_cap() {
    let rec = load("http-stateful/07-call-liquid_box-water-molblock.json");
    let body_events: Vec<&[u8]> = {
        let b: &[u8] = &rec.body;
        let mut parts = Vec::new();
        let mut start = 0;
        while let Some(p) = b[start..].windows(4).position(|w| w == b"\r\n\r\n") {
            parts.push(&b[start..start + p + 4]);
            start += p + 4;
        }
        parts
    };
    assert_eq!(body_events.len(), 3);
    let mut h = connected(Chunking::Whole);
    let t0 = h.now;
    let (name, args) = call_args(&rec);
    // expectedSeconds 20 → max(60 s, 100 s) = 100 s.
    let op = h.c.call_tool(
        &name,
        args.clone(),
        &CallOptions {
            expected_seconds: Some(20.0),
            timeout_ms: None,
            scan_structure: false,
        },
        t0,
    );
    let (ex, req) = h.next_send();
    assert_eq!(h.c.poll_timeout(), Some(t0 + 100_000));
    h.head(ex, &rec);
    // Progress at t0 + 50 s moves the deadline to t0 + 150 s.
    let token = req.json().unwrap()["params"]["_meta"]["progressToken"]
        .as_str()
        .unwrap()
        .to_string();
    let first = String::from_utf8(body_events[0].to_vec())
        .unwrap()
        .replace("\"lb-1\"", &format!("\"{token}\""));
    h.c.handle_chunk(ex, first.as_bytes(), t0 + 50_000);
    assert_eq!(h.c.poll_timeout(), Some(t0 + 150_000));
    h.c.handle_timeout(t0 + 149_999);
    assert!(matches!(
        h.take_events().as_slice(),
        [Event::Progress { .. }]
    ));
    h.c.handle_timeout(t0 + 150_000);
    let (_, note) = h.next_send();
    assert_eq!(note.json().unwrap()["method"], "notifications/cancelled");
    let events = h.take_events();
    assert_eq!(events[0], Event::AbortExchange { exchange: ex });
    let err = the_failure(&events, op);
    assert_eq!(err, McpError::Timeout { seconds: 100 });
    assert!(err.to_string().contains("timeout"));
    assert!(!err.to_string().starts_with("The server failed"));

    // Short expectedSeconds → 60 s; progress never extends past the 30-minute cap.
    let t1 = h.now + 1_000;
    let op = h.c.call_tool(
        &name,
        args.clone(),
        &CallOptions {
            expected_seconds: Some(1.0),
            timeout_ms: None,
            scan_structure: false,
        },
        t1,
    );
    assert_eq!(h.c.poll_timeout(), Some(t1 + 60_000));
    h.c.handle_timeout(t1 + 59_999);
    let _ = h.next_send();
    h.c.cancel(op, t1);
    h.take_events();
    h.sends.clear();
    let op = h.c.call_tool(
        &name,
        args,
        &CallOptions {
            expected_seconds: Some(1e9),
            timeout_ms: None,
            scan_structure: false,
        },
        t1,
    );
    assert_eq!(h.c.poll_timeout(), Some(t1 + 30 * 60_000));
    let (ex, req) = h.next_send();
    let token = req.json().unwrap()["params"]["_meta"]["progressToken"]
        .as_str()
        .unwrap()
        .to_string();
    h.head(ex, &rec);
    let first = String::from_utf8(body_events[0].to_vec())
        .unwrap()
        .replace("\"lb-1\"", &format!("\"{token}\""));
    h.c.handle_chunk(ex, first.as_bytes(), t1 + 29 * 60_000);
    assert_eq!(h.c.poll_timeout(), Some(t1 + 30 * 60_000));
    h.c.handle_timeout(t1 + 30 * 60_000);
    assert_eq!(
        the_failure(&h.take_events(), op),
        McpError::Timeout { seconds: 1800 }
    );
}

#[test]
fn stateless_server_without_session() {
    for mode in MODES {
        let mut h = H::legacy("http://127.0.0.1:18766/mcp", mode);
        let op = h.c.connect(h.now);
        let (ex, req) = h.next_send();
        h.answer(
            ex,
            &req,
            &load("http-stateless/01-stateless-initialize.json"),
        );
        assert_eq!(h.c.session().session_id, None);
        // notifications/initialized: the stateless recording has no 202 for it; the stateful one is
        // the same server code path.
        let (ex, req) = h.next_send();
        assert!(req.header("Mcp-Session-Id").is_none());
        let accepted = load("http-stateful/05-notifications-initialized.json");
        h.head(ex, &accepted);
        h.c.handle_end(ex, h.now);
        assert!(matches!(
            the_response(&h.take_events(), op),
            OpResult::Connected(_)
        ));
        let op = h.c.list_tools(h.now);
        let rec = load("http-stateless/02-stateless-tools-list-no-session.json");
        h.expect_and_answer(&rec);
        let OpResult::Tools(t) = the_response(&h.take_events(), op) else {
            panic!()
        };
        assert_eq!(t.len(), 3);
        let rec = load("http-stateless/03-stateless-call-liquid_box.json");
        let (name, args) = call_args(&rec);
        let op = h.c.call_tool(&name, args, &CallOptions::default(), h.now);
        h.expect_and_answer(&rec);
        let events = h.take_events();
        assert_eq!(
            events
                .iter()
                .filter(|e| matches!(e, Event::Progress { .. }))
                .count(),
            2
        );
        let OpResult::ToolResult(r) = the_response(&events, op) else {
            panic!()
        };
        let r = r.to_value();
        assert_eq!(r["structuredContent"]["contract"], 1);
    }
}

#[test]
fn polymer_and_limits_tool_errors_are_results() {
    for (dir, files) in [
        (
            "http-polymer",
            vec![
                "http-polymer/03-call-polymer_chain-ethylene-5.json",
                "http-polymer/04-call-polymer_chain-head-equals-tail-tool-error.json",
            ],
        ),
        (
            "http-limits",
            vec![
                "http-limits/03-call-timeout-tool-error.json",
                "http-limits/04-call-while-busy-tool-error.json",
            ],
        ),
    ] {
        let rec0 = load(&format!("{dir}/01-initialize.json"));
        let mut h = H::legacy(&rec0.url, Chunking::Random(7));
        connect(
            &mut h,
            &format!("{dir}/01-initialize.json"),
            &format!("{dir}/02-notifications-initialized.json"),
        );
        h.take_events();
        for f in files {
            let rec = load(f);
            let (name, args) = call_args(&rec);
            let op = h.c.call_tool(&name, args, &CallOptions::default(), h.now);
            h.expect_and_answer(&rec);
            let OpResult::ToolResult(r) = the_response(&h.take_events(), op) else {
                panic!()
            };
            let r = r.to_value();
            assert_eq!(r, rec.messages.last().unwrap()["result"], "{f}");
        }
    }
}

fn connect_fails_with(rec: &Recorded, token: Option<&str>, origin: Option<&str>) -> McpError {
    let mut cfg = Config::new("http://127.0.0.1:18765/mcp");
    cfg.protocol = ProtocolChoice::Legacy; // the recorded legacy exchanges
    cfg.token = token.map(str::to_string);
    cfg.origin = origin.map(str::to_string);
    let mut h = H::new(cfg, Chunking::Bytes);
    let op = h.c.connect(h.now);
    let (ex, _) = h.next_send();
    h.head(ex, rec);
    h.body(ex, &rec.body);
    h.c.handle_end(ex, h.now);
    the_failure(&h.take_events(), op)
}

#[test]
fn http_errors_a_user_can_act_on() {
    let e = connect_fails_with(&load("http-stateful/17-missing-token.json"), None, None);
    assert_eq!(e, McpError::Unauthorized { token_given: false });
    assert!(e.to_string().contains("token is missing"));
    let e = connect_fails_with(
        &load("http-stateful/18-wrong-token.json"),
        Some("not-the-token"),
        None,
    );
    assert!(e.to_string().contains("token is wrong"));
    assert!(!e.to_string().contains("not-the-token"));
    let e = connect_fails_with(
        &load("http-stateful/19-wrong-origin-valid-token.json"),
        Some(TOKEN),
        Some("http://evil.example"),
    );
    let s = e.to_string();
    assert!(
        s.contains("http://evil.example") && s.contains("--allow-origin http://evil.example"),
        "{s}"
    );
    assert!(s.contains("Invalid Origin header"));
    let e = connect_fails_with(
        &load("http-stateful/20-wrong-origin-missing-token.json"),
        None,
        Some("http://evil.example"),
    );
    assert_eq!(e, McpError::Unauthorized { token_given: false });
    let e = connect_fails_with(
        &load("http-public/03-public-wrong-origin.json"),
        None,
        Some("http://evil.example"),
    );
    assert!(e
        .to_string()
        .contains("requests must come from an allowed web origin"));
    let e = connect_fails_with(&load("http-public/02-public-no-origin.json"), None, None);
    assert!(e.to_string().contains("--allow-origin"));
    let e = connect_fails_with(
        &load("http-stateful/21-wrong-host-header.json"),
        Some(TOKEN),
        None,
    );
    assert!(matches!(e, McpError::HostNotAllowed { .. }));
    assert!(e.to_string().contains("421"));
    for (file, text) in [
        ("http-stateful/24-accept-json-only.json", "The server failed: Not Acceptable: Client must accept both application/json and text/event-stream"),
        ("http-stateful/25-wrong-content-type.json", "The server failed: HTTP 400 Bad Request: Invalid Content-Type header"),
        // A 2026-07-28 server's header error (-32020) as the answer to a legacy initialize: the
        // server speaks only 2026-07-28.
        ("http-modern-2026-07-28/01-modern-2026-07-28-tools-list-no-method-header.json", "The server speaks only MCP 2026-07-28: connect with protocol \"auto\" or \"modern\"."),
    ] {
        let e = connect_fails_with(&load(file), Some(TOKEN), None);
        assert_eq!(e.to_string(), text);
    }
    // None of the messages or debug output contains the token.
    for f in fixtures::all_files() {
        let rec = load(&f);
        if rec.status >= 400 {
            let e = connect_fails_with(&rec, Some(TOKEN), Some(ORIGIN));
            assert!(
                !e.to_string().contains(TOKEN) && !format!("{e:?}").contains(TOKEN),
                "{f}"
            );
            assert!(!e.to_string().contains('\n'), "one line: {f}");
        }
    }
}

#[test]
fn the_token_never_shows_in_debug_output() {
    let mut cfg = Config::new("http://127.0.0.1:18765/mcp");
    cfg.protocol = ProtocolChoice::Legacy; // the recorded legacy exchanges
    cfg.token = Some(TOKEN.into());
    assert!(!format!("{cfg:?}").contains(TOKEN));
    let mut c = Client::new(cfg).unwrap();
    c.connect(0);
    assert!(!format!("{c:?}").contains(TOKEN));
    let Some(Event::SendRequest { request, .. }) = c.poll_event() else {
        panic!()
    };
    assert_eq!(
        request.header("Authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert!(!format!("{request:?}").contains(TOKEN));
}

#[test]
fn session_id_hidden_by_cors_is_reported() {
    // Fault: the browser does not expose Mcp-Session-Id, so the initialize answer arrives without it.
    let init = load("http-stateful/04-initialize.json");
    let mut hidden = init.clone();
    hidden
        .headers
        .retain(|(k, _)| !k.eq_ignore_ascii_case("mcp-session-id"));
    let mut h = H::legacy("http://127.0.0.1:18765/mcp", Chunking::Whole);
    let op = h.c.connect(h.now);
    let (ex, req) = h.next_send();
    h.answer(ex, &req, &hidden);
    // notifications/initialized goes out without a session id; the server answers as recorded in 22.
    let (ex, req) = h.next_send();
    assert!(req.header("Mcp-Session-Id").is_none());
    let missing = load("http-stateful/22-missing-session-id.json");
    h.head(ex, &missing);
    h.body(ex, &missing.body);
    h.c.handle_end(ex, h.now);
    let e = the_failure(&h.take_events(), op);
    assert_eq!(e, McpError::SessionIdUnreadable);
    assert!(e
        .to_string()
        .contains("Access-Control-Expose-Headers: Mcp-Session-Id"));
}

#[test]
fn urls_https_unless_loopback() {
    for ok in [
        "http://127.0.0.1:8765/mcp",
        "http://localhost:8765/mcp",
        "http://[::1]:8765/mcp",
        "http://127.1.2.3/mcp",
        "https://tools.example.org/mcp",
        "HTTPS://tools.example.org/mcp",
    ] {
        let mut c = Client::new(Config::new(ok)).unwrap_or_else(|e| panic!("{ok}: {e}"));
        c.connect(0);
        assert!(matches!(c.poll_event(), Some(Event::SendRequest { .. })));
    }
    for bad in [
        "http://tools.example.org/mcp",
        "http://127.0.0.1.example.org/mcp",
        "http://192.168.1.2:8765/mcp",
        "http://[::2]/mcp",
    ] {
        let e = Client::new(Config::new(bad)).unwrap_err();
        assert!(matches!(e, McpError::InsecureUrl { .. }), "{bad}: {e}");
        assert!(e.to_string().contains("https://"));
    }
    for bad in [
        "ftp://x/mcp",
        "127.0.0.1:8765/mcp",
        "http:///mcp",
        "https://user:pw@host/mcp",
    ] {
        assert!(
            matches!(
                Client::new(Config::new(bad)).unwrap_err(),
                McpError::InvalidUrl { .. }
            ),
            "{bad}"
        );
    }
}

#[test]
fn network_failure_names_the_url() {
    let mut h = H::legacy("http://127.0.0.1:18765/mcp", Chunking::Whole);
    let op = h.c.connect(h.now);
    let (ex, _) = h.next_send();
    h.c.handle_network_error(ex, "TypeError: Failed to fetch", h.now);
    let e = the_failure(&h.take_events(), op);
    assert_eq!(
        e.to_string(),
        "Could not reach http://127.0.0.1:18765/mcp: is the server running? (TypeError: Failed to fetch) \
         If it is running, it may not allow this page's origin http://localhost:5173 \
         (start it with --allow-origin http://localhost:5173)."
    );
    // Without a known origin (Node, a Worker without one) only the first part. In auto mode (the
    // default) the probe's failure falls back to initialize first, which fails the same way.
    let mut c = Client::new(Config::new("http://127.0.0.1:18765/mcp")).unwrap();
    let op = c.connect(0);
    let Some(Event::SendRequest { exchange, request }) = c.poll_event() else {
        panic!()
    };
    assert_eq!(request.json().unwrap()["method"], "server/discover");
    c.handle_network_error(exchange, "connection refused", 1);
    assert!(matches!(c.poll_event(), Some(Event::Notice(_))));
    let Some(Event::SendRequest { exchange, request }) = c.poll_event() else {
        panic!()
    };
    assert_eq!(request.json().unwrap()["method"], "initialize");
    c.handle_network_error(exchange, "connection refused", 1);
    let Some(Event::Failed { op: o, error }) = c.poll_event() else {
        panic!()
    };
    assert_eq!(o, op);
    assert_eq!(
        error.to_string(),
        "Could not reach http://127.0.0.1:18765/mcp: is the server running? (connection refused)"
    );
}

#[test]
fn unsupported_version_is_refused_clearly() {
    // Fault: the recorded initialize answer with its protocolVersion changed to one we do not speak.
    let mut rec = load("http-stateful/04-initialize.json");
    rec.body = String::from_utf8(rec.body)
        .unwrap()
        .replace("\"2025-06-18\"", "\"2030-01-01\"")
        .into_bytes();
    let e = connect_fails_with(&rec, Some(TOKEN), None);
    assert_eq!(
        e,
        McpError::UnsupportedVersion {
            offered: "2030-01-01".into()
        }
    );
    assert!(e.to_string().contains("2030-01-01") && e.to_string().contains("2025-06-18"));
    // The counter-offer to an unknown version (31) is 2025-11-25, which we accept.
    let mut h = H::legacy("http://127.0.0.1:18765/mcp", Chunking::Whole);
    let op = h.c.connect(h.now);
    let (ex, req) = h.next_send();
    let rec = load("http-stateful/31-initialize-unknown-version.json");
    h.head(ex, &rec);
    h.body(ex, &rec.body_for(req.json().unwrap()["id"].as_u64(), None));
    h.c.handle_end(ex, h.now);
    let (ex, req) = h.next_send();
    assert_eq!(req.header("MCP-Protocol-Version"), Some("2025-11-25"));
    h.head(ex, &load("http-stateful/05-notifications-initialized.json"));
    h.c.handle_end(ex, h.now);
    let OpResult::Connected(info) = the_response(&h.take_events(), op) else {
        panic!()
    };
    assert_eq!(info.protocol_version, "2025-11-25");
}

fn modern(protocol: ProtocolChoice, mode: Chunking) -> H {
    let mut cfg = Config::new("http://127.0.0.1:18765/mcp");
    cfg.token = Some(TOKEN.into());
    cfg.protocol = protocol;
    H::new(cfg, mode)
}

fn check_modern_meta(req: &HttpRequest) {
    let body = req.json().unwrap();
    let meta = &body["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
    assert!(meta["io.modelcontextprotocol/clientInfo"]["name"].is_string());
    assert!(req.header("Mcp-Session-Id").is_none());
}

#[test]
fn modern_era_discover_list_call() {
    for mode in MODES {
        let mut h = modern(ProtocolChoice::Modern, mode);
        let op = h.c.connect(h.now);
        let req = h.expect_and_answer(&load(
            "http-modern-2026-07-28/03-modern-server-discover.json",
        ));
        check_modern_meta(&req);
        let OpResult::Connected(info) = the_response(&h.take_events(), op) else {
            panic!()
        };
        assert_eq!(info.display_name(), "megane-builder-tools");
        assert_eq!(info.protocol_version, "2026-07-28");
        assert!(info.tools_list_changed);
        let op = h.c.list_tools(h.now);
        let rec = load("http-modern-2026-07-28/02-modern-2026-07-28-tools-list.json");
        let req = h.expect_and_answer(&rec);
        check_modern_meta(&req);
        let OpResult::Tools(t) = the_response(&h.take_events(), op) else {
            panic!()
        };
        assert_eq!(
            t,
            rec.messages[0]["result"]["tools"]
                .as_array()
                .unwrap()
                .clone()
        );
        let rec = load("http-modern-2026-07-28/04-modern-tools-call-liquid_box.json");
        let (name, args) = call_args(&rec);
        let op = h.c.call_tool(&name, args, &CallOptions::default(), h.now);
        let req = h.expect_and_answer(&rec);
        check_modern_meta(&req);
        let events = h.take_events();
        assert_eq!(
            events
                .iter()
                .filter(|e| matches!(e, Event::Progress { .. }))
                .count(),
            2
        );
        let OpResult::ToolResult(r) = the_response(&events, op) else {
            panic!()
        };
        let r = r.to_value();
        assert_eq!(r, rec.messages[2]["result"]);
        // Modern close: nothing to delete.
        let op = h.c.close(h.now);
        assert_eq!(the_response(&h.take_events(), op), OpResult::Closed);
        assert!(h.sends.is_empty());
    }
}

#[test]
fn modern_cancel_aborts_the_stream_without_a_notification() {
    let mut h = modern(ProtocolChoice::Modern, Chunking::Whole);
    h.c.connect(h.now);
    h.expect_and_answer(&load(
        "http-modern-2026-07-28/03-modern-server-discover.json",
    ));
    h.take_events();
    let rec = load("http-modern-2026-07-28/04-modern-tools-call-liquid_box.json");
    let (name, args) = call_args(&rec);
    let op = h.c.call_tool(&name, args, &CallOptions::default(), h.now);
    let (ex, _) = h.next_send();
    h.head(ex, &rec);
    h.c.cancel(op, h.now);
    assert_eq!(
        h.take_events(),
        vec![
            Event::AbortExchange { exchange: ex },
            Event::Failed {
                op,
                error: McpError::Cancelled
            }
        ]
    );
    assert!(h.sends.is_empty());
    h.body(ex, &rec.body);
    h.c.handle_end(ex, h.now);
    assert!(h.take_events().is_empty());
}

#[test]
fn auto_falls_back_when_the_preflight_refuses_the_new_headers() {
    // The browser's preflight for Mcp-Method/Mcp-Name is refused (recorded in 05); fetch then rejects
    // with a TypeError, which the transport reports as a network error.
    let preflight = load("http-modern-2026-07-28/05-preflight-modern-headers.json");
    assert_eq!(preflight.status, 400);
    let mut h = modern(ProtocolChoice::Auto, Chunking::Whole);
    let op = h.c.connect(h.now);
    let (ex, req) = h.next_send();
    assert_eq!(req.header("Mcp-Method"), Some("server/discover"));
    h.c.handle_network_error(ex, "TypeError: Failed to fetch", h.now);
    let (ex, req) = h.next_send();
    assert_eq!(req.json().unwrap()["method"], "initialize");
    assert!(req.header("Mcp-Method").is_none());
    h.answer(ex, &req, &load("http-stateful/04-initialize.json"));
    h.expect_and_answer(&load("http-stateful/05-notifications-initialized.json"));
    let events = h.take_events();
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Notice(n) if n.contains("CORS"))));
    let OpResult::Connected(info) = the_response(&events, op) else {
        panic!()
    };
    assert_eq!(info.protocol_version, "2025-06-18");
}

#[test]
fn notification_stream_get_is_reopened_and_405_ends_it() {
    let rec = load("http-stateful/27-get-standalone-sse.json");
    let mut h = connected(Chunking::Whole);
    let op = h.c.listen(h.now);
    let (ex, get) = h.next_send();
    assert_eq!(get.method, megane_builder_client::mcp::Method::Get);
    assert_eq!(get.url, rec.url);
    for name in [
        "Accept",
        "Authorization",
        "Mcp-Session-Id",
        "MCP-Protocol-Version",
    ] {
        assert_eq!(get.header(name), rec.request_header(name), "{name}");
    }
    assert!(get.header("Last-Event-ID").is_none());
    // The recorded stream carried nothing and was closed (by curl): the client opens it again.
    h.head(ex, &rec);
    h.body(ex, &rec.body);
    h.c.handle_end(ex, h.now);
    assert!(h.take_events().is_empty() && h.sends.is_empty());
    assert_eq!(h.c.poll_timeout(), Some(h.now + 1_000));
    h.now += 1_000;
    h.c.handle_timeout(h.now);
    let (ex, again) = h.next_send();
    assert_eq!(again.header("Accept"), Some("text/event-stream"));
    // A server without a notification stream answers 405 (fault: the status changed).
    let mut refused = rec.clone();
    refused.status = 405;
    h.head(ex, &refused);
    h.c.handle_end(ex, h.now);
    let e = the_failure(&h.take_events(), op);
    assert_eq!(
        e.to_string(),
        "The server failed: the server offers no notification stream (HTTP 405)"
    );

    // The modern era has none.
    let mut h = modern(ProtocolChoice::Modern, Chunking::Whole);
    h.c.connect(h.now);
    h.expect_and_answer(&load(
        "http-modern-2026-07-28/03-modern-server-discover.json",
    ));
    h.take_events();
    let op = h.c.listen(h.now);
    assert!(the_failure(&h.take_events(), op)
        .to_string()
        .contains("subscriptions/listen"));
    assert!(h.sends.is_empty());
}
