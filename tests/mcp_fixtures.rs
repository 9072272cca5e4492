//! Shared loader for the recorded reference-server exchanges (`../shared/fixtures/reference-server/`),
//! included by the `mcp_*` test files with `#[path]`. It is also compiled as a test crate of its own,
//! with no tests.
#![allow(dead_code)]

use serde_json::Value;
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
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/reference-server")
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
