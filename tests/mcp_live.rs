//! The sans-I/O core against the real MCP Python SDK (mcp 2.3.0) on loopback: `tests/peers/builder_peer.py`
//! is started on a free port, and the core is driven by a minimal blocking HTTP/1.1 transport written
//! here (one connection per request, chunked bodies fed to the core chunk by chunk as they arrive, an
//! `Origin` header as a browser would send).
//!
//! Needs `.venv` from `tests/peers/setup.sh` (or `MCP_PEER_PYTHON` naming a Python with `mcp` 2.3.0).
//! Without it these tests fail; set `MCP_SKIP_LIVE=1` to skip them deliberately.
#![cfg(not(target_arch = "wasm32"))]

use megane_builder_client::mcp::{
    CallOptions, Client, Config, Event, ExchangeId, HttpRequest, McpError, OpId, OpResult,
    ProtocolChoice,
};
use serde_json::Value;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "live-token-5d1e";
const ORIGIN: &str = "http://127.0.0.1:8000";

fn skip() -> bool {
    std::env::var("MCP_SKIP_LIVE").is_ok_and(|v| v == "1")
}

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn recorded_dir() -> PathBuf {
    manifest().join("../shared/fixtures/megane-recorded")
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
            "{} missing: run tests/peers/setup.sh (or set MCP_SKIP_LIVE=1)",
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
}

fn host_port_path(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (hp, path) = rest.split_once('/').unwrap();
    (hp.to_string(), format!("/{path}"))
}

fn send_head(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> std::io::Result<TcpStream> {
    let (hp, path) = host_port_path(url);
    let mut s = TcpStream::connect(&hp)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {hp}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    Ok(s)
}

type Head = (u16, Vec<(String, String)>);
type Full = (u16, Vec<(String, String)>, Vec<u8>);

fn read_head(r: &mut BufReader<TcpStream>) -> std::io::Result<Head> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line)?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    Ok((status, headers))
}

/// Reads the body, calling `each` with every piece as it arrives; `each` returns false to stop.
fn read_body(
    r: &mut BufReader<TcpStream>,
    headers: &[(String, String)],
    mut each: impl FnMut(&[u8]) -> bool,
) -> std::io::Result<()> {
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        loop {
            let mut line = String::new();
            r.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim(), 16).unwrap_or(0);
            if size == 0 {
                return Ok(());
            }
            let mut buf = vec![0; size];
            r.read_exact(&mut buf)?;
            let mut crlf = [0; 2];
            r.read_exact(&mut crlf)?;
            if !each(&buf) {
                return Ok(());
            }
        }
    }
    let mut buf = [0u8; 4096];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 || !each(&buf[..n]) {
            return Ok(());
        }
    }
}

fn raw(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> std::io::Result<Full> {
    let s = send_head(method, url, headers, body)?;
    let mut r = BufReader::new(s);
    let (status, h) = read_head(&mut r)?;
    let mut out = Vec::new();
    read_body(&mut r, &h, |c| {
        out.extend_from_slice(c);
        true
    })?;
    Ok((status, h, out))
}

/// Drives a `Client` over real sockets.
struct Live {
    c: Client,
    t0: Instant,
    origin: String,
    queue: VecDeque<(ExchangeId, HttpRequest)>,
    events: Vec<Event>,
    aborted: Vec<ExchangeId>,
}

impl Live {
    fn new(config: Config) -> Live {
        Live {
            c: Client::new(config).unwrap(),
            t0: Instant::now(),
            origin: ORIGIN.into(),
            queue: VecDeque::new(),
            events: Vec::new(),
            aborted: Vec::new(),
        }
    }
    fn now(&self) -> u64 {
        self.t0.elapsed().as_millis() as u64
    }
    fn pump(&mut self, hook: &mut dyn FnMut(&mut Client, &Event, u64)) {
        while let Some(e) = self.c.poll_event() {
            match e {
                Event::SendRequest { exchange, request } => {
                    self.queue.push_back((exchange, request))
                }
                Event::AbortExchange { exchange } => self.aborted.push(exchange),
                other => {
                    let now = self.now();
                    hook(&mut self.c, &other, now);
                    self.events.push(other);
                }
            }
        }
    }
    fn outcome(&self, op: OpId) -> Option<Event> {
        self.events
            .iter()
            .find(|e| matches!(e, Event::Response { op: o, .. } | Event::Failed { op: o, .. } if *o == op))
            .cloned()
    }
    /// Runs exchanges until `op` has an outcome.
    fn run(&mut self, op: OpId, hook: &mut dyn FnMut(&mut Client, &Event, u64)) -> Event {
        loop {
            self.pump(hook);
            if let Some(o) = self.outcome(op) {
                return o;
            }
            let now = self.now();
            self.c.handle_timeout(now);
            self.pump(hook);
            if let Some(o) = self.outcome(op) {
                return o;
            }
            let (ex, req) = self
                .queue
                .pop_front()
                .expect("the client is waiting for nothing");
            let mut headers = req.headers.clone();
            headers.push(("Origin".into(), self.origin.clone()));
            let stream = match send_head(req.method.as_str(), &req.url, &headers, &req.body) {
                Ok(s) => s,
                Err(e) => {
                    let now = self.now();
                    self.c.handle_network_error(ex, &e.to_string(), now);
                    continue;
                }
            };
            let mut r = BufReader::new(stream);
            let (status, h) = match read_head(&mut r) {
                Ok(x) => x,
                Err(e) => {
                    let now = self.now();
                    self.c.handle_network_error(ex, &e.to_string(), now);
                    continue;
                }
            };
            let now = self.now();
            self.c.handle_head(ex, status, &h, now);
            self.pump(hook);
            let t0 = self.t0;
            let mut stopped = self.aborted.contains(&ex);
            if !stopped {
                let result = read_body(&mut r, &h, |chunk| {
                    let now = t0.elapsed().as_millis() as u64;
                    // A host's timer would have fired before this chunk arrived.
                    self.c.handle_timeout(now);
                    self.pump(hook);
                    if self.aborted.contains(&ex) {
                        return false;
                    }
                    self.c.handle_chunk(ex, chunk, now);
                    self.pump(hook);
                    !self.aborted.contains(&ex)
                });
                stopped = self.aborted.contains(&ex);
                if let Err(e) = result {
                    if !stopped {
                        let now = self.now();
                        self.c.handle_network_error(ex, &e.to_string(), now);
                        continue;
                    }
                }
            }
            if !stopped {
                let now = self.now();
                self.c.handle_end(ex, now);
            }
        }
    }
    fn run_ok(&mut self, op: OpId) -> OpResult {
        match self.run(op, &mut |_, _, _| {}) {
            Event::Response { result, .. } => result,
            other => panic!("{other:?}"),
        }
    }
    fn run_err(&mut self, op: OpId) -> McpError {
        match self.run(op, &mut |_, _, _| {}) {
            Event::Failed { error, .. } => error,
            other => panic!("{other:?}"),
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
        let op = l.c.call_tool(
            tool,
            rec["arguments"].clone(),
            &CallOptions::default(),
            l.now(),
        );
        let start = l.events.len();
        let OpResult::ToolResult(result) = l.run_ok(op) else {
            panic!()
        };
        assert_eq!(
            normalised(result),
            normalised(rec["result"].clone()),
            "{tool}"
        );
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
        assert_eq!(progress, expected, "{tool}");
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
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("Error executing tool polymer_chain"));
}

#[test]
fn live_legacy_session() {
    if skip() {
        return;
    }
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
    if skip() {
        return;
    }
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
    std::thread::sleep(Duration::from_millis(300));
    let seen = peer.cancellations();
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
        },
        l.now(),
    );
    let err = l.run_err(op);
    assert_eq!(err, McpError::Timeout { seconds: 1 });
    let ping = l.c.ping(l.now());
    l.run_ok(ping);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        peer.cancellations()["cancellations"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn live_errors_token_and_origin() {
    if skip() {
        return;
    }
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
    if skip() {
        return;
    }
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
    if skip() {
        return;
    }
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
