//! The sans-I/O core against the real MCP Python SDK (mcp 2.3.0) on loopback: `tests/peers/builder_peer.py`
//! is started on a free port, and the core is driven by a minimal blocking HTTP/1.1 transport written
//! here (one connection per request, chunked bodies fed to the core chunk by chunk as they arrive, an
//! `Origin` header as a browser would send).
//!
//! Needs `.venv` from `scripts/setup.sh` or `tests/peers/setup.sh` (or `MCP_PEER_PYTHON` naming a
//! Python with `mcp` 2.3.0). Without it these tests fail, saying so: none is skipped.
#![cfg(not(target_arch = "wasm32"))]

#[path = "mcp_live_support.rs"]
mod support;

use megane_builder_client::contract::marker::{Apply, Category, DocumentUse, Marker};
use megane_builder_client::contract::result::{
    interpret_call_bytes, interpret_call_prescanned, Interpreted, ResultLimits,
};
use megane_builder_client::mcp::{CallOptions, Config, Event, McpError, OpResult, ProtocolChoice};
use megane_builder_client::wire::jsonrpc::RawJson;
use serde_json::Value;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

const TOKEN: &str = "live-token-5d1e";
const ORIGIN: &str = "http://127.0.0.1:8000";

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn recorded_dir() -> PathBuf {
    manifest().join("tests/fixtures/megane-recorded")
}

fn recorded(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(recorded_dir().join(name)).unwrap()).unwrap()
}

struct Peer {
    child: Child,
    port: u16,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peer {
    fn start(extra: &[&str]) -> Peer {
        let python = std::env::var("MCP_PEER_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|_| manifest().join(".venv/bin/python"));
        assert!(
            python.exists(),
            "{} missing: run scripts/setup.sh (or tests/peers/setup.sh)",
            python.display()
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(python)
            .arg(manifest().join("tests/peers/builder_peer.py"))
            .args([
                "--port",
                &port.to_string(),
                "--token",
                TOKEN,
                "--allow-origin",
                ORIGIN,
            ])
            .arg("--fixtures")
            .arg(recorded_dir())
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the Python peer");
        let peer = Peer { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(r) = raw("GET", &peer.health(), &[], b"") {
                if r.0 == 200 {
                    return peer;
                }
            }
            assert!(Instant::now() < deadline, "the peer did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
    fn health(&self) -> String {
        format!("http://127.0.0.1:{}/health", self.port)
    }
    fn cancellations(&self) -> Value {
        let url = format!("http://127.0.0.1:{}/peer/cancellations", self.port);
        let (_, _, body) = raw("GET", &url, &[], b"").unwrap();
        serde_json::from_slice(&body).unwrap()
    }
    /// The server's record of cancellations once it holds `count` of them, or as it stands after
    /// 10 s (a loaded machine delays the peer's bookkeeping; the caller asserts on what it holds).
    fn cancellations_once(&self, count: usize) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let seen = self.cancellations();
            if seen["cancellations"].as_array().map_or(0, Vec::len) >= count
                || Instant::now() > deadline
            {
                return seen;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn config(url: &str, protocol: ProtocolChoice) -> Config {
    let mut c = Config::new(url);
    c.token = Some(TOKEN.into());
    c.origin = Some(ORIGIN.into());
    c.protocol = protocol;
    c
}

/// The SDK re-serialises the recorded result and adds its defaults (`isError: false`,
/// `resultType: "complete"`); those two are checked and set aside before comparing.
fn normalised(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        if o.get("isError") == Some(&Value::Bool(false)) {
            o.remove("isError");
        }
        if o.get("resultType").and_then(Value::as_str) == Some("complete") {
            o.remove("resultType");
        }
    }
    v
}

fn recorded_tools() -> Vec<Value> {
    recorded("tools-list.json")["tools"]
        .as_array()
        .unwrap()
        .clone()
}

/// Calls every recorded tool with its recorded arguments: progress in order, then the recorded result.
fn call_all(l: &mut Live) {
    for tool in ["liquid_box", "polymer_chain", "solvate"] {
        let rec = recorded(&format!("call-{tool}.json"));
        let mut whole = None;
        // Each tool twice: as a plain call, then with the Structure read while the answer (an
        // SSE event here) streams in (issue 10).
        for scan in [false, true] {
            let options = CallOptions {
                scan_structure: scan,
                ..CallOptions::default()
            };
            let op =
                l.c.call_tool(tool, rec["arguments"].clone(), &options, l.now());
            let start = l.events.len();
            let OpResult::ToolResult(result) = l.run_ok(op) else {
                panic!()
            };
            match whole.take() {
                None => {
                    assert!(result.take_prescanned().is_none(), "{tool}");
                    whole = Some(interpret_call_bytes(
                        tool,
                        &marker(),
                        result.get().as_bytes(),
                        &limits(),
                    ));
                    assert_eq!(
                        normalised(result.to_value()),
                        normalised(rec["result"].clone()),
                        "{tool}"
                    );
                }
                Some(whole) => same_as_whole(tool, &result, whole),
            }
            let progress: Vec<(Option<f64>, Option<String>)> = l.events[start..]
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
            let expected: Vec<(Option<f64>, Option<String>)> = (0..=5)
                .map(|i| {
                    (
                        Some(i as f64 / 5.0),
                        Some(if i < 5 {
                            format!("step {} of 5", i + 1)
                        } else {
                            "done".into()
                        }),
                    )
                })
                .collect();
            assert_eq!(progress, expected, "{tool} scan {scan}");
        }
    }
    // Other arguments: a tool error, returned as a result.
    let op = l.c.call_tool(
        "polymer_chain",
        serde_json::json!({"seed": 2}),
        &CallOptions::default(),
        l.now(),
    );
    let OpResult::ToolResult(r) = l.run_ok(op) else {
        panic!()
    };
    let r = r.to_value();
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("Error executing tool polymer_chain"));
}

#[test]
fn live_legacy_session() {
    let peer = Peer::start(&["--step-seconds", "0.05"]);
    let mut l = Live::new(config(&peer.url(), ProtocolChoice::Legacy));
    let op = l.c.connect(0);
    let OpResult::Connected(info) = l.run_ok(op) else {
        panic!()
    };
    assert_eq!(info.display_name(), "builder-test-peer");
    assert_eq!(info.protocol_version, "2025-11-25");
    let sid = l.c.session().session_id.clone().expect("a session id");
    let op = l.c.list_tools(l.now());
    let OpResult::Tools(tools) = l.run_ok(op) else {
        panic!()
    };
    assert_eq!(tools, recorded_tools(), "three pages of one");
    call_all(&mut l);

    // The session is deleted behind the client's back: the next request re-initialises and retries.
    let headers = vec![
        ("Authorization".to_string(), format!("Bearer {TOKEN}")),
        ("Mcp-Session-Id".to_string(), sid.clone()),
        ("MCP-Protocol-Version".to_string(), "2025-11-25".to_string()),
    ];
    let (status, _, _) = raw("DELETE", &peer.url(), &headers, b"").unwrap();
    assert_eq!(status, 200);
    let op = l.c.ping(l.now());
    assert_eq!(l.run_ok(op), OpResult::Pong);
    let new_sid = l.c.session().session_id.clone().unwrap();
    assert_ne!(new_sid, sid);
    assert!(l
        .events
        .iter()
        .any(|e| matches!(e, Event::Notice(n) if n.contains("expired"))));

    // close → DELETE; the session is gone afterwards.
    let op = l.c.close(l.now());
    assert_eq!(l.run_ok(op), OpResult::Closed);
    let mut headers = headers;
    headers[1].1 = new_sid;
    headers.push((
        "Accept".into(),
        "application/json, text/event-stream".into(),
    ));
    headers.push(("Content-Type".into(), "application/json".into()));
    let (status, _, _) = raw(
        "POST",
        &peer.url(),
        &headers,
        br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    )
    .unwrap();
    assert_eq!(status, 404);
}

#[test]
fn live_cancel_and_timeout_reach_the_server() {
    let peer = Peer::start(&["--step-seconds", "0.5"]);
    let mut l = Live::new(config(&peer.url(), ProtocolChoice::Legacy));
    let op = l.c.connect(0);
    l.run_ok(op);
    let rec = recorded("call-polymer_chain.json");
    let op = l.c.call_tool(
        "polymer_chain",
        rec["arguments"].clone(),
        &CallOptions::default(),
        l.now(),
    );
    let mut cancelled = false;
    let out = l.run(op, &mut |c, e, now| {
        if matches!(e, Event::Progress { .. }) && !cancelled {
            cancelled = true;
            c.cancel(op, now);
        }
    });
    assert_eq!(
        out,
        Event::Failed {
            op,
            error: McpError::Cancelled
        }
    );
    // Deliver the queued notifications/cancelled.
    let ping = l.c.ping(l.now());
    assert_eq!(l.run_ok(ping), OpResult::Pong);
    let seen = peer.cancellations_once(1);
    assert_eq!(seen["cancellations"].as_array().unwrap().len(), 1, "{seen}");
    assert_eq!(seen["cancellations"][0]["tool"], "polymer_chain");
    // No result was applied for the cancelled call.
    assert!(!l
        .events
        .iter()
        .any(|e| matches!(e, Event::Response { op: o, .. } if *o == op)));

    // A 300 ms timeout while the server is silent for 500 ms between progress steps: reported as a
    // timeout, and the server is told.
    let op = l.c.call_tool(
        "polymer_chain",
        rec["arguments"].clone(),
        &CallOptions {
            expected_seconds: None,
            timeout_ms: Some(300),
            scan_structure: false,
        },
        l.now(),
    );
    let err = l.run_err(op);
    assert_eq!(err, McpError::Timeout { seconds: 1 });
    let ping = l.c.ping(l.now());
    l.run_ok(ping);
    assert_eq!(
        peer.cancellations_once(2)["cancellations"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn live_errors_token_and_origin() {
    let peer = Peer::start(&[]);
    let mut cfg = config(&peer.url(), ProtocolChoice::Legacy);
    cfg.token = Some("wrong".into());
    let mut l = Live::new(cfg);
    let op = l.c.connect(0);
    assert_eq!(l.run_err(op), McpError::Unauthorized { token_given: true });
    let mut cfg = config(&peer.url(), ProtocolChoice::Legacy);
    cfg.origin = Some("http://evil.example".into());
    let mut l = Live::new(cfg);
    l.origin = "http://evil.example".into();
    let op = l.c.connect(0);
    let e = l.run_err(op);
    assert!(matches!(e, McpError::OriginNotAllowed { .. }), "{e}");
    assert!(
        e.to_string().contains("--allow-origin http://evil.example"),
        "{e}"
    );
    // Nothing listening: the URL and "is the server running?".
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut l = Live::new(config(&url, ProtocolChoice::Legacy));
    let op = l.c.connect(0);
    let e = l.run_err(op).to_string();
    assert!(
        e.starts_with(&format!("Could not reach {url}: is the server running?")),
        "{e}"
    );
}

#[test]
fn live_stateless() {
    let peer = Peer::start(&["--stateless", "--step-seconds", "0.05"]);
    let mut l = Live::new(config(&peer.url(), ProtocolChoice::Legacy));
    let op = l.c.connect(0);
    l.run_ok(op);
    assert_eq!(l.c.session().session_id, None);
    let op = l.c.list_tools(l.now());
    let OpResult::Tools(tools) = l.run_ok(op) else {
        panic!()
    };
    assert_eq!(tools, recorded_tools());
    call_all(&mut l);
}

#[test]
fn live_modern_and_auto() {
    let peer = Peer::start(&["--modern", "--step-seconds", "0.05"]);
    for protocol in [ProtocolChoice::Modern, ProtocolChoice::Auto] {
        let mut l = Live::new(config(&peer.url(), protocol));
        let op = l.c.connect(0);
        let OpResult::Connected(info) = l.run_ok(op) else {
            panic!()
        };
        assert_eq!(info.protocol_version, "2026-07-28");
        assert_eq!(info.display_name(), "builder-test-peer");
        let op = l.c.list_tools(l.now());
        let OpResult::Tools(tools) = l.run_ok(op) else {
            panic!()
        };
        assert_eq!(tools, recorded_tools());
        call_all(&mut l);
        let op = l.c.close(l.now());
        assert_eq!(l.run_ok(op), OpResult::Closed);
    }
}

fn marker() -> Marker {
    Marker {
        contract: 1,
        category: Category::Bulk,
        apply: Apply::NewDocument,
        document: DocumentUse::Optional,
        stochastic: true,
        expected_seconds: Some(20.0),
    }
}

fn limits() -> ResultLimits {
    ResultLimits::default()
}

/// A call made with `scan_structure`: its Structure came prescanned, only the small rest of the
/// result is text, and it reads as `whole`, the same call read without the scan.
fn same_as_whole(tool: &str, scanned: &RawJson, whole: Result<Interpreted, String>) {
    let prescanned = scanned.take_prescanned().expect("read while it came in");
    assert!(scanned.get().len() < 2000, "{tool}: only the rest is text");
    let streamed = interpret_call_prescanned(
        tool,
        &marker(),
        scanned.get().as_bytes(),
        prescanned,
        &limits(),
    );
    assert_eq!(
        streamed.unwrap().result.structure,
        whole.unwrap().result.structure,
        "{tool}"
    );
}

#[test]
fn live_json_responses_without_streams() {
    // Like Megane's e2e fake: every answer is application/json, so progress cannot be streamed.
    let peer = Peer::start(&["--json-response", "--step-seconds", "0.02"]);
    let mut l = Live::new(config(&peer.url(), ProtocolChoice::Legacy));
    let op = l.c.connect(0);
    l.run_ok(op);
    assert!(l.c.session().session_id.is_some());
    let op = l.c.list_tools(l.now());
    let OpResult::Tools(tools) = l.run_ok(op) else {
        panic!()
    };
    assert_eq!(tools, recorded_tools());
    for tool in ["liquid_box", "polymer_chain", "solvate"] {
        let rec = recorded(&format!("call-{tool}.json"));
        let op = l.c.call_tool(
            tool,
            rec["arguments"].clone(),
            &CallOptions::default(),
            l.now(),
        );
        let OpResult::ToolResult(result) = l.run_ok(op) else {
            panic!()
        };
        let plain = result.take_prescanned().is_none();
        let whole = interpret_call_bytes(tool, &marker(), result.get().as_bytes(), &limits());
        let result = result.to_value();
        assert_eq!(
            normalised(result),
            normalised(rec["result"].clone()),
            "{tool}"
        );
        // The same call with the Structure read while the answer streams in (issue 10): the
        // same Structure, and only the rest of the result parsed at the end.
        let options = CallOptions {
            scan_structure: true,
            ..CallOptions::default()
        };
        let op =
            l.c.call_tool(tool, rec["arguments"].clone(), &options, l.now());
        let OpResult::ToolResult(scanned) = l.run_ok(op) else {
            panic!()
        };
        assert!(plain, "{tool}");
        same_as_whole(tool, &scanned, whole);
    }
    let op = l.c.close(l.now());
    assert_eq!(l.run_ok(op), OpResult::Closed);
}

#[test]
fn live_notification_stream_reports_tools_changed() {
    use std::io::BufReader;
    use std::sync::mpsc;
    enum Got {
        Head(u16, Vec<(String, String)>),
        Chunk(Vec<u8>),
    }
    let peer = Peer::start(&["--announce-tools-changed", "--step-seconds", "0.02"]);
    let mut l = Live::new(config(&peer.url(), ProtocolChoice::Legacy));
    let op = l.c.connect(0);
    let OpResult::Connected(info) = l.run_ok(op) else {
        panic!()
    };
    assert!(info.tools_list_changed);
    let listen = l.c.listen(l.now());
    l.pump(&mut |_, _, _| {});
    let (gex, get) = l.queue.pop_front().expect("the GET");
    assert_eq!(get.method, megane_builder_client::mcp::Method::Get);
    assert_eq!(get.header("Accept"), Some("text/event-stream"));
    assert_eq!(
        get.header("Mcp-Session-Id"),
        l.c.session().session_id.as_deref()
    );
    // The stream stays open, so it is read on its own thread while the call runs on this one.
    let (tx, rx) = mpsc::channel::<Got>();
    let url = get.url.clone();
    let headers = get.headers.clone();
    std::thread::spawn(move || {
        let s = send_head("GET", &url, &headers, b"").unwrap();
        let mut r = BufReader::new(s);
        let (status, h) = read_head(&mut r).unwrap();
        let _ = tx.send(Got::Head(status, h.clone()));
        let _ = read_body(&mut r, &h, |c| tx.send(Got::Chunk(c.to_vec())).is_ok());
    });
    let Got::Head(status, h) = rx.recv_timeout(Duration::from_secs(10)).unwrap() else {
        panic!()
    };
    assert_eq!(status, 200);
    let now = l.now();
    l.c.handle_head(gex, status, &h, now);
    let rec = recorded("call-polymer_chain.json");
    let op = l.c.call_tool(
        "polymer_chain",
        rec["arguments"].clone(),
        &CallOptions::default(),
        l.now(),
    );
    l.run_ok(op);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !l.events.contains(&Event::ToolsChanged) {
        assert!(Instant::now() < deadline, "no tools/list_changed");
        if let Ok(Got::Chunk(c)) = rx.recv_timeout(Duration::from_millis(100)) {
            let now = l.now();
            l.c.handle_chunk(gex, &c, now);
            l.pump(&mut |_, _, _| {});
        }
    }
    // The stream ends only when the host says so.
    l.c.cancel(listen, l.now());
    l.pump(&mut |_, _, _| {});
    assert!(l.aborted.contains(&gex));
    assert!(l.events.contains(&Event::Failed {
        op: listen,
        error: McpError::Cancelled
    }));
}

/// MCP: plain tools (no Builder marker) that declare an `outputSchema`, on the Python SDK. A
/// conforming `structuredContent` passes; one that breaks the schema, a missing one and a schema
/// that does not compile are each refused with one line; a tool error is not validated.
#[test]
fn live_plain_tools_output_schema() {
    use megane_builder_client::contract::discovery::parse_tool_list;
    use megane_builder_client::contract::result::{
        interpret_plain_bytes, is_refusal_bytes, ResultLimits,
    };
    let peer = Peer::start(&["--output-schema-tools", "--page-size", "10"]);
    let mut l = Live::new(config(&peer.url(), ProtocolChoice::Legacy));
    let op = l.c.connect(0);
    l.run_ok(op);
    let op = l.c.list_tools(l.now());
    let OpResult::Tools(tools) = l.run_ok(op) else {
        panic!()
    };
    let toolbox = parse_tool_list(&Value::Array(tools), None).unwrap();
    let names: Vec<&str> = toolbox
        .plain_tools
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(names, ["plain_count", "plain_bad_schema"]);
    let mut call = |name: &str, arguments: Value| {
        let schema = toolbox
            .plain_tools
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.output_schema.clone());
        assert!(schema.is_some(), "{name} declares an outputSchema");
        let op =
            l.c.call_tool(name, arguments, &CallOptions::default(), l.now());
        let OpResult::ToolResult(raw) = l.run_ok(op) else {
            panic!()
        };
        let body = raw.get().as_bytes();
        let outcome = interpret_plain_bytes(name, schema.as_ref(), body, &ResultLimits::default());
        (outcome, is_refusal_bytes(body))
    };

    let (ok, _) = call(
        "plain_count",
        serde_json::json!({"atoms": 12, "label": "twelve"}),
    );
    let ok = ok.unwrap();
    assert_eq!(
        ok.raw["structuredContent"],
        serde_json::json!({"atoms": 12, "label": "twelve"})
    );
    assert_eq!(ok.summary, "plain_count ran.");

    let expect_error = |(outcome, refused): (Result<_, String>, bool), line: &str| {
        let error = outcome.unwrap_err();
        assert_eq!(error, line);
        assert!(!refused, "{line}: not a refusal of the arguments");
    };
    let mismatch = "The result does not match the tool's outputSchema: ";
    expect_error(
        call("plain_count", serde_json::json!({"atoms": -3})),
        &format!("{mismatch}atoms must be at least 0."),
    );
    expect_error(
        call("plain_count", serde_json::json!({"atoms": "many"})),
        &format!("{mismatch}atoms must be a whole number."),
    );
    expect_error(
        call(
            "plain_count",
            serde_json::json!({"atoms": -1, "label": ["x\n\u{202e}y"]}),
        ),
        &format!("{mismatch}atoms must be at least 0. (and 1 more problem)"),
    );
    expect_error(
        call("plain_count", serde_json::json!({"omit": true})),
        "structuredContent: missing, but the tool declares an outputSchema",
    );
    let (bad_schema, _) = call("plain_bad_schema", serde_json::json!({}));
    let bad_schema = bad_schema.unwrap_err();
    assert!(
        bad_schema.starts_with(
            "Builder cannot check this tool's result: its outputSchema is not valid JSON Schema ("
        ),
        "{bad_schema}"
    );
    assert!(!bad_schema.contains('\n'));
    // A tool error is the tool's own line (the SDK prefix dropped), not a schema problem.
    let (failed, refused) = call("plain_count", serde_json::json!({"fail": true}));
    assert_eq!(failed.unwrap_err(), "no atoms to count");
    assert!(refused);
}
