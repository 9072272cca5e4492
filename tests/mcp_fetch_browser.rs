//! The fetch transport in headless Chromium against Python SDK peers on other loopback ports, so every
//! request is cross-origin and goes through real CORS preflights. Run with
//! `tests/peers/run_wasm_browser_tests.sh`, which starts the peers (page origin
//! http://127.0.0.1:8000) and passes their URLs at compile time.
#![cfg(target_arch = "wasm32")]

use megane_builder_client::mcp::fetch::FetchClient;
use megane_builder_client::mcp::{CallOptions, Config, McpError, ProtocolChoice};
use serde_json::Value;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const TOKEN: &str = "live-token-5d1e";
/// Allows the page's origin; CORS lists the legacy headers only (like the reference server).
const LEGACY: Option<&str> = option_env!("MCP_PEER_URL");
/// Allows the page's origin and the 2026-07-28 headers.
const MODERN: Option<&str> = option_env!("MCP_PEER_MODERN_URL");
/// Allows only another origin.
const OTHER_ORIGIN: Option<&str> = option_env!("MCP_PEER_OTHER_ORIGIN_URL");
/// Does not expose Mcp-Session-Id (fault).
const HIDDEN_SESSION: Option<&str> = option_env!("MCP_PEER_HIDDEN_SESSION_URL");

fn client(url: Option<&str>, protocol: ProtocolChoice) -> FetchClient {
    let mut cfg = Config::new(url.expect("run tests/peers/run_wasm_browser_tests.sh"));
    cfg.token = Some(TOKEN.into());
    cfg.protocol = protocol;
    FetchClient::new(cfg).unwrap()
}

fn polymer() -> Value {
    serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/megane-recorded/call-polymer_chain.json"
    )))
    .unwrap()
}

#[wasm_bindgen_test]
async fn legacy_session_through_cors() {
    let c = client(LEGACY, ProtocolChoice::Legacy);
    let info = c.connect().await.unwrap();
    assert_eq!(info.protocol_version, "2025-11-25");
    // A stateful server: listing works only if the page could read and resend Mcp-Session-Id.
    assert_eq!(c.list_tools().await.unwrap().len(), 3);
    let rec = polymer();
    let result = c
        .call_tool(
            "polymer_chain",
            rec["arguments"].clone(),
            CallOptions::default(),
            None,
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        result.to_value()["structuredContent"],
        rec["result"]["structuredContent"]
    );
    c.close().await.unwrap();
}

#[wasm_bindgen_test]
async fn auto_falls_back_when_the_preflight_refuses_modern_headers() {
    let c = client(LEGACY, ProtocolChoice::Auto);
    let info = c.connect().await.unwrap();
    assert_eq!(info.protocol_version, "2025-11-25");
    let notices = c.take_notices();
    assert!(notices.iter().any(|n| n.contains("CORS")), "{notices:?}");
    assert_eq!(c.list_tools().await.unwrap().len(), 3);
}

#[wasm_bindgen_test]
async fn modern_when_cors_allows_it() {
    for protocol in [ProtocolChoice::Modern, ProtocolChoice::Auto] {
        let c = client(MODERN, protocol);
        let info = c.connect().await.unwrap();
        assert_eq!(info.protocol_version, "2026-07-28");
        assert!(c.take_notices().is_empty());
        assert_eq!(c.list_tools().await.unwrap().len(), 3);
    }
}

#[wasm_bindgen_test]
async fn origin_not_allowed_names_the_page_origin() {
    let c = client(OTHER_ORIGIN, ProtocolChoice::Legacy);
    let e = c.connect().await.unwrap_err();
    assert!(matches!(e, McpError::Network { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("--allow-origin http://127.0.0.1:8000"),
        "{text}"
    );
}

#[wasm_bindgen_test]
async fn unreadable_session_id_is_reported() {
    let c = client(HIDDEN_SESSION, ProtocolChoice::Legacy);
    assert_eq!(
        c.connect().await.unwrap_err(),
        McpError::SessionIdUnreadable
    );
}

/// Answers with `application/json` (Python SDK peer with `--json-response`).
const JSON_ANSWERS: Option<&str> = option_env!("MCP_PEER_JSON_URL");

/// A Builder tool's JSON answer read by the Structure scan while fetch delivers it (issue 10): the
/// Structure arrives prescanned; when the scanner declines it (an escaped `"` in a residue name),
/// the transport replays the chunks it kept and the answer is the one read without the scan.
#[wasm_bindgen_test]
async fn a_scanned_json_answer_is_replayed_when_the_scanner_declines() {
    let c = client(JSON_ANSWERS, ProtocolChoice::Legacy);
    c.connect().await.unwrap();
    let rec: Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/megane-recorded/call-liquid_box.json"
    )))
    .unwrap();
    let scan = CallOptions {
        scan_structure: true,
        ..CallOptions::default()
    };
    let call = |arguments: Value, options: CallOptions| {
        c.call_tool("liquid_box", arguments, options, None, None)
    };
    // Read by the scan: only the rest is text.
    let read = call(rec["arguments"].clone(), scan.clone()).await.unwrap();
    assert!(read.take_prescanned().is_some());
    assert!(read.get().len() < 2000, "{}", read.get().len());
    // Declined: replayed, the whole result as without the scan.
    let mut quoted = rec["arguments"].clone();
    quoted["quoteInName"] = true.into();
    let replayed = call(quoted.clone(), scan).await.unwrap();
    assert!(replayed.take_prescanned().is_none());
    let plain = call(quoted, CallOptions::default()).await.unwrap();
    assert!(
        replayed.get().contains(r#""W\"WATE""#),
        "{}",
        &replayed.get()[..200]
    );
    assert_eq!(replayed.get(), plain.get());
}
