//! §6/§9: what a failed HTTP answer shows. A JSON-RPC error message with a traceback gives its
//! first line; an HTTP error with an HTML (or binary, or untyped) body gives
//! `The server failed: HTTP 500 Internal Server Error` and never the body; a `text/plain` or JSON
//! body (or an untyped one that is plain text) gives its first line after the status. Bodies are faults made by hand (the reference
//! server sends none of these); the headers around them are the recorded ones.
#![cfg(not(target_arch = "wasm32"))]

#[path = "mcp_fixtures.rs"]
mod fixtures;

use fixtures::*;
use megane_builder_client::mcp::CallOptions;
use serde_json::json;

/// The line a failed call shows when the server answers `status`, `content_type` and `body`.
fn call_fails_with(status: u16, content_type: Option<&str>, body: &[u8]) -> String {
    let mut h = connected(Chunking::Random(7));
    let op =
        h.c.call_tool("liquid_box", json!({}), &CallOptions::default(), h.now);
    let (ex, _) = h.next_send();
    let mut rec = load("http-stateful/07-call-liquid_box-water-molblock.json");
    rec.status = status;
    rec.headers
        .retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
    if let Some(ct) = content_type {
        rec.headers
            .push(("content-type".to_string(), ct.to_string()));
    }
    h.head(ex, &rec);
    h.body(ex, body);
    h.c.handle_end(ex, h.now);
    the_failure(&h.take_events(), op).call_error_line()
}

const HTML: &[u8] = b"<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head>\n<body><h1>Internal Server Error</h1><p>Traceback (most recent call last):<br>  File \"app.py\"</p></body></html>\n";

#[test]
fn html_and_untyped_bodies_give_the_status_and_its_reason_phrase_only() {
    for ct in [
        Some("text/html; charset=utf-8"),
        Some("application/xhtml+xml"),
        Some("application/octet-stream"),
        None,
    ] {
        assert_eq!(
            call_fails_with(500, ct, HTML),
            "The server failed: HTTP 500 Internal Server Error",
            "{ct:?}"
        );
    }
    assert_eq!(
        call_fails_with(502, Some("text/html"), b"<html>bad gateway</html>"),
        "The server failed: HTTP 502 Bad Gateway"
    );
    assert_eq!(
        call_fails_with(503, Some("text/plain"), b""),
        "The server failed: HTTP 503 Service Unavailable"
    );
    // Untyped: shown only when it is plain text (the reference server's 403 body is untyped).
    assert_eq!(
        call_fails_with(500, None, b"Invalid request\nmore"),
        "The server failed: HTTP 500 Internal Server Error: Invalid request"
    );
    assert_eq!(
        call_fails_with(500, None, b"\x00\x01binary"),
        "The server failed: HTTP 500 Internal Server Error"
    );
    assert_eq!(
        call_fails_with(599, Some("text/html"), HTML),
        "The server failed: HTTP 599"
    );
}

#[test]
fn plain_text_and_json_bodies_give_their_first_line() {
    assert_eq!(
        call_fails_with(
            500,
            Some("text/plain; charset=utf-8"),
            b"database is locked\nTraceback (most recent call last):\n  File \"x.py\"\n"
        ),
        "The server failed: HTTP 500 Internal Server Error: database is locked"
    );
    assert_eq!(
        call_fails_with(
            500,
            Some("application/problem+json"),
            b"{\"title\": \"oops\"}"
        ),
        "The server failed: HTTP 500 Internal Server Error: {\"title\": \"oops\"}"
    );
    // Not UTF-8: not shown.
    assert_eq!(
        call_fails_with(500, Some("text/plain"), &[0xff, 0xfe, b'a']),
        "The server failed: HTTP 500 Internal Server Error"
    );
}

#[test]
fn a_json_rpc_error_with_a_traceback_shows_its_first_line() {
    let message = "Tool failed: KeyError 'count'\nTraceback (most recent call last):\n  File \"server.py\", line 12, in call\n    raise KeyError('count')\n";
    // In an HTTP error answer…
    let body = serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": message}}),
    )
    .unwrap();
    assert_eq!(
        call_fails_with(500, Some("application/json"), &body),
        "The server failed: Tool failed: KeyError 'count'"
    );
    // …and in a 200 answer (the id must match the request's).
    let mut h = connected(Chunking::Random(7));
    let op =
        h.c.call_tool("liquid_box", json!({}), &CallOptions::default(), h.now);
    let (ex, req) = h.next_send();
    let id = req.json().unwrap()["id"].clone();
    let mut rec = load("http-stateful/07-call-liquid_box-water-molblock.json");
    rec.headers
        .retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
    rec.headers
        .push(("content-type".to_string(), "application/json".to_string()));
    h.head(ex, &rec);
    let body = serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": message}}),
    )
    .unwrap();
    h.body(ex, &body);
    h.c.handle_end(ex, h.now);
    let line = the_failure(&h.take_events(), op).call_error_line();
    // The one rendering of a JSON-RPC error: the client's line is the bytes path's.
    let bytes_path = megane_builder_client::wire::jsonrpc::RpcError {
        code: -32603,
        message: Some(message.to_string()),
        data: None,
    }
    .failure_line();
    assert_eq!(line, "The server failed: Tool failed: KeyError 'count'");
    assert_eq!(line, bytes_path);
}
