//! Shared loader for the recorded reference-server exchanges (`tests/fixtures/reference-server/`),
//! included by the `mcp_*` test files with `#[path]`. It is also compiled as a test crate of its own,
//! with no tests.
#![cfg(not(target_arch = "wasm32"))]
#![allow(dead_code)]

use megane_builder_client::mcp::{
    Client, Config, Event, ExchangeId, HttpRequest, McpError, Method, OpId, OpResult,
    ProtocolChoice,
};
use serde_json::Value;
use std::collections::VecDeque;
use std::path::PathBuf;

/// Token every recording used.
pub const TOKEN: &str = "peer-token-3f9c2a7e1b";
/// Origin every recording allowed.
pub const ORIGIN: &str = "http://localhost:5173";

/// One recorded HTTP exchange.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub file: String,
    pub url: String,
    pub request_headers: Vec<(String, String)>,
    pub request_body: Option<Value>,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub content_type: Option<String>,
    /// The body bytes: `rawBody` verbatim, or the recorded JSON `body` serialised.
    pub body: Vec<u8>,
    /// `sseEvents` as (event, data).
    pub sse_events: Vec<(String, Value)>,
    /// The JSON-RPC messages received, in order.
    pub messages: Vec<Value>,
}

impl Recorded {
    pub fn request_header(&self, name: &str) -> Option<&str> {
        self.request_headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC id the recorded request used.
    pub fn request_id(&self) -> Option<u64> {
        self.request_body.as_ref()?.get("id")?.as_u64()
    }

    /// The progress token the recorded request used, as JSON text (`"lb-1"`, `55`).
    pub fn progress_token(&self) -> Option<String> {
        Some(
            self.request_body
                .as_ref()?
                .pointer("/params/_meta/progressToken")?
                .to_string(),
        )
    }

    /// The body with the recorded request id and progress token replaced by ours, so the recording can
    /// answer a request our client numbered differently. Nothing else is changed.
    pub fn body_for(&self, id: Option<u64>, token: Option<&str>) -> Vec<u8> {
        let mut text = String::from_utf8(self.body.clone()).expect("recorded bodies are UTF-8");
        if let (Some(old), Some(new)) = (self.request_id(), id) {
            for sep in [":", ": "] {
                let from = format!("\"id\"{sep}{old},");
                // Error bodies about the session carry `"id": null`: nothing to rewrite then.
                assert!(
                    text.matches(&from).count() <= 1,
                    "{}: at most one id",
                    self.file
                );
                text = text.replace(&from, &format!("\"id\"{sep}{new},"));
            }
        }
        if let (Some(old), Some(new)) = (self.progress_token(), token) {
            for sep in [":", ": "] {
                text = text.replace(
                    &format!("\"progressToken\"{sep}{old},"),
                    &format!("\"progressToken\"{sep}\"{new}\","),
                );
            }
        }
        text.into_bytes()
    }

    pub fn is_sse(&self) -> bool {
        self.content_type.as_deref() == Some("text/event-stream")
    }
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference-server")
}

fn header_pair(line: &str) -> Option<(String, String)> {
    let (k, v) = line.split_once(':')?;
    Some((k.trim().to_string(), v.trim().to_string()))
}

pub fn load(rel: &str) -> Recorded {
    let path = root().join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text).unwrap();
    let req = &v["request"];
    let resp = &v["response"];
    let body = match (
        resp.get("rawBody").and_then(Value::as_str),
        resp.get("body"),
    ) {
        (Some(raw), _) => raw.as_bytes().to_vec(),
        (None, Some(b)) => serde_json::to_vec(b).unwrap(),
        (None, None) => Vec::new(),
    };
    Recorded {
        file: rel.to_string(),
        url: req["url"].as_str().unwrap().to_string(),
        request_headers: req["headersSent"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|h| header_pair(h.as_str()?))
            .collect(),
        request_body: req.get("body").filter(|b| !b.is_null()).cloned(),
        status: resp["status"].as_u64().unwrap() as u16,
        headers: resp["headers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p[0].as_str().unwrap().to_string(),
                    p[1].as_str().unwrap().to_string(),
                )
            })
            .collect(),
        content_type: resp
            .get("contentType")
            .and_then(Value::as_str)
            .map(str::to_string),
        body,
        sse_events: resp
            .get("sseEvents")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|e| {
                        (
                            e["event"].as_str().unwrap_or("message").to_string(),
                            e["data"].clone(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
        messages: v
            .get("messages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    }
}

/// Every recorded `http-*/*.json` file, relative to the fixtures root, sorted.
pub fn all_files() -> Vec<String> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root()).expect("fixtures folder beside the repository") {
        let dir = dir.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("http-") {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "json") {
                out.push(format!(
                    "{name}/{}",
                    f.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    out.sort();
    out
}

// ----- a harness that drives the core with recordings -----

#[derive(Clone, Copy, Debug)]
pub enum Chunking {
    Whole,
    Bytes,
    Random(u64),
}

pub const MODES: [Chunking; 4] = [
    Chunking::Whole,
    Chunking::Bytes,
    Chunking::Random(1),
    Chunking::Random(0xdead_beef),
];

pub struct H {
    pub c: Client,
    pub now: u64,
    pub mode: Chunking,
    pub rng: u64,
    pub sends: VecDeque<(ExchangeId, HttpRequest)>,
    pub events: Vec<Event>,
}

impl H {
    pub fn new(config: Config, mode: Chunking) -> H {
        let rng = match mode {
            Chunking::Random(s) => s | 1,
            _ => 1,
        };
        H {
            c: Client::new(config).unwrap(),
            now: 1_000_000,
            mode,
            rng,
            sends: VecDeque::new(),
            events: Vec::new(),
        }
    }

    pub fn legacy(url: &str, mode: Chunking) -> H {
        let mut cfg = Config::new(url);
        cfg.protocol = ProtocolChoice::Legacy; // the recorded legacy exchanges
        cfg.token = Some(TOKEN.into());
        cfg.origin = Some(ORIGIN.into());
        H::new(cfg, mode)
    }

    pub fn drain(&mut self) {
        while let Some(e) = self.c.poll_event() {
            match e {
                Event::SendRequest { exchange, request } => {
                    self.sends.push_back((exchange, request))
                }
                other => self.events.push(other),
            }
        }
    }

    pub fn next_send(&mut self) -> (ExchangeId, HttpRequest) {
        self.drain();
        self.sends
            .pop_front()
            .expect("the client should ask for a request")
    }

    pub fn take_events(&mut self) -> Vec<Event> {
        self.drain();
        std::mem::take(&mut self.events)
    }

    pub fn next_len(&mut self, remaining: usize) -> usize {
        match self.mode {
            Chunking::Whole => remaining,
            Chunking::Bytes => 1,
            Chunking::Random(_) => {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                1 + (self.rng % 97) as usize
            }
        }
    }

    pub fn head(&mut self, ex: ExchangeId, rec: &Recorded) {
        self.c.handle_head(ex, rec.status, &rec.headers, self.now);
    }

    pub fn body(&mut self, ex: ExchangeId, body: &[u8]) {
        let mut rest = body;
        while !rest.is_empty() {
            let n = self.next_len(rest.len()).min(rest.len());
            self.c.handle_chunk(ex, &rest[..n], self.now);
            rest = &rest[n..];
        }
    }

    /// Answers `req` (sent as `ex`) with the recording, after checking the request against it.
    pub fn answer(&mut self, ex: ExchangeId, req: &HttpRequest, rec: &Recorded) {
        check_request(req, rec);
        let ours = req.json();
        let id = ours
            .as_ref()
            .and_then(|v| v.get("id"))
            .and_then(Value::as_u64);
        let token = ours
            .as_ref()
            .and_then(|v| v.pointer("/params/_meta/progressToken"))
            .and_then(Value::as_str);
        let body = rec.body_for(id, token);
        self.head(ex, rec);
        self.body(ex, &body);
        self.c.handle_end(ex, self.now);
    }

    pub fn expect_and_answer(&mut self, rec: &Recorded) -> HttpRequest {
        let (ex, req) = self.next_send();
        self.answer(ex, &req, rec);
        req
    }
}

/// Our request agrees with the recorded one on method, URL, the headers the protocol requires, and the
/// JSON-RPC method and tool arguments.
pub fn check_request(req: &HttpRequest, rec: &Recorded) {
    let line = rec.file.as_str();
    let expected_method = if rec.request_body.is_some() {
        Method::Post
    } else {
        Method::Delete
    };
    assert_eq!(req.method, expected_method, "{line}");
    assert_eq!(req.url, rec.url, "{line}");
    if req.method == Method::Post {
        assert_eq!(
            req.header("accept"),
            Some("application/json, text/event-stream"),
            "{line}"
        );
        assert_eq!(
            req.header("content-type"),
            Some("application/json"),
            "{line}"
        );
    }
    for name in [
        "Authorization",
        "Mcp-Session-Id",
        "MCP-Protocol-Version",
        "Mcp-Method",
        "Mcp-Name",
    ] {
        assert_eq!(
            req.header(name),
            rec.request_header(name),
            "{line}: header {name}"
        );
    }
    if let Some(recorded) = &rec.request_body {
        let ours = req.json().unwrap();
        assert_eq!(ours["method"], recorded["method"], "{line}");
        assert_eq!(
            ours.get("id").is_some(),
            recorded.get("id").is_some(),
            "{line}"
        );
        if recorded["method"] == "tools/call" {
            assert_eq!(ours["params"]["name"], recorded["params"]["name"], "{line}");
            assert_eq!(
                ours["params"]["arguments"], recorded["params"]["arguments"],
                "{line}"
            );
        }
        if recorded["method"] == "notifications/cancelled" {
            assert!(ours["params"]["requestId"].is_u64(), "{line}");
            assert!(ours["params"]["reason"].is_string(), "{line}");
        }
    }
}

pub fn call_args(rec: &Recorded) -> (String, Value) {
    let b = rec.request_body.as_ref().unwrap();
    (
        b["params"]["name"].as_str().unwrap().to_string(),
        b["params"]["arguments"].clone(),
    )
}

pub fn the_response(events: &[Event], op: OpId) -> OpResult {
    let found: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::Response { op: o, .. } | Event::Failed { op: o, .. } if *o == op))
        .collect();
    assert_eq!(found.len(), 1, "exactly one outcome for {op:?}: {events:?}");
    match found[0] {
        Event::Response { result, .. } => result.clone(),
        Event::Failed { error, .. } => panic!("{op:?} failed: {error}"),
        _ => unreachable!(),
    }
}

pub fn the_failure(events: &[Event], op: OpId) -> McpError {
    let found: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::Response { op: o, .. } | Event::Failed { op: o, .. } if *o == op))
        .collect();
    assert_eq!(found.len(), 1, "exactly one outcome for {op:?}: {events:?}");
    match found[0] {
        Event::Failed { error, .. } => error.clone(),
        other => panic!("{op:?} should have failed: {other:?}"),
    }
}

/// A legacy-protocol client at the recorded server's address, connected with the recorded
/// initialize answer (`http-stateful/04`) and its 202 (`05`), its events taken: where most
/// exchange tests start.
pub fn connected(mode: Chunking) -> H {
    let mut h = H::legacy("http://127.0.0.1:18765/mcp", mode);
    connect(
        &mut h,
        "http-stateful/04-initialize.json",
        "http-stateful/05-notifications-initialized.json",
    );
    h.take_events();
    h
}

/// Connects with a recorded initialize answer and its 202 for `notifications/initialized`.
pub fn connect(h: &mut H, init: &str, initialized: &str) -> OpId {
    let op = h.c.connect(h.now);
    let (ex, req) = h.next_send();
    let body = req.json().unwrap();
    assert_eq!(body["method"], "initialize");
    assert_eq!(
        body["params"]["protocolVersion"], "2025-11-25",
        "we offer the newest legacy revision"
    );
    assert!(req.header("Mcp-Session-Id").is_none());
    assert!(req.header("MCP-Protocol-Version").is_none());
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    let rec = load(init);
    h.answer(ex, &req, &rec);
    assert!(
        h.take_events().is_empty(),
        "ready only after the 202 to notifications/initialized"
    );
    let rec2 = load(initialized);
    h.expect_and_answer(&rec2);
    op
}
