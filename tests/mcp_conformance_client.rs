//! The sans-I/O core as the client under test of `@modelcontextprotocol/conformance` (client
//! scenarios). `tests/peers/run_conformance.sh` runs the suite, which starts a mock server per scenario
//! and runs `tests/peers/conformance_client.sh <url>`, which runs this test with the URL in
//! `MCP_CONFORMANCE_URL` (the scenario name is in `MCP_CONFORMANCE_SCENARIO`). The suite's checks decide
//! the outcome; this test only fails when the client cannot finish its script.
#![cfg(not(target_arch = "wasm32"))]

#[path = "mcp_live_support.rs"]
mod support;

use megane_builder_client::mcp::{CallOptions, Config, OpResult};
use serde_json::json;
use support::*;

#[test]
#[ignore = "run by tests/peers/run_conformance.sh"]
fn conformance_client() {
    let url = std::env::var("MCP_CONFORMANCE_URL").expect("MCP_CONFORMANCE_URL");
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("scenario {scenario} at {url}");
    let mut l = Live::new(Config::new(url));
    let op = l.c.connect(0);
    let OpResult::Connected(info) = l.run_ok(op) else {
        panic!()
    };
    eprintln!(
        "connected: {} {}",
        info.display_name(),
        info.protocol_version
    );
    let op = l.c.list_tools(l.now());
    let OpResult::Tools(tools) = l.run_ok(op) else {
        panic!()
    };
    for tool in &tools {
        let name = tool["name"].as_str().unwrap_or_default().to_string();
        let args = match name.as_str() {
            "add_numbers" => json!({"a": 2, "b": 3}),
            _ => json!({}),
        };
        let op = l.c.call_tool(&name, args, &CallOptions::default(), l.now());
        match l.run(op, &mut |_, _, _| {}) {
            megane_builder_client::mcp::Event::Response { result, .. } => {
                eprintln!("{name}: {result:?}")
            }
            other => eprintln!("{name}: {other:?}"),
        }
    }
    let op = l.c.close(l.now());
    l.run(op, &mut |_, _, _| {});
}
