//! The sans-I/O core as the client under test of `@modelcontextprotocol/conformance` (client
//! scenarios). `tests/peers/run_conformance_suite.sh` runs the suite, which starts a mock server per scenario
//! and runs `tests/peers/conformance_client.sh <url>`, which runs this test with the URL in
//! `MCP_CONFORMANCE_URL` (the scenario name is in `MCP_CONFORMANCE_SCENARIO`, its context in
//! `MCP_CONFORMANCE_CONTEXT`, the protocol mode in `MBC_CONFORMANCE_PROTOCOL`). The suite's checks decide
//! the outcome; this test only fails when the client cannot finish its script. The driver carries one
//! exchange at a time (blocking sockets), so it cannot answer an elicitation while the call's stream is
//! open: that scenario is run with the package in Node (`tests/node/conformance-client.mjs`).
#![cfg(not(target_arch = "wasm32"))]

#[path = "mcp_live_support.rs"]
mod support;

use megane_builder_client::mcp::{CallOptions, Config, OpResult, ProtocolChoice};
use serde_json::json;
use support::*;

#[test]
#[ignore = "run by tests/peers/run_conformance_suite.sh"]
fn conformance_client() {
    let url = std::env::var("MCP_CONFORMANCE_URL").expect("MCP_CONFORMANCE_URL");
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("scenario {scenario} at {url}");
    let mut config = Config::new(url);
    // The protocol mode of the leg (tests/peers/run_conformance_suite.sh), default legacy.
    if let Some(p) = std::env::var("MBC_CONFORMANCE_PROTOCOL")
        .ok()
        .and_then(|p| ProtocolChoice::parse(&p))
    {
        config.protocol = p;
    }
    let mut l = Live::new(config);
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
    // What a host would call: the context's tool calls, the schema echo of its scenario, else every
    // tool with the arguments a user would type for the suite's `add_numbers`.
    let context: serde_json::Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let plan: Vec<(String, serde_json::Value)> =
        if let Some(calls) = context["toolCalls"].as_array() {
            calls
                .iter()
                .map(|c| {
                    (
                        c["name"].as_str().unwrap_or_default().to_string(),
                        c["arguments"].clone(),
                    )
                })
                .collect()
        } else if scenario == "json-schema-2020-12-preservation" {
            let focal = tools.iter().find(|t| t["name"] != "json_schema_echo");
            focal
                .map(|f| {
                    vec![(
                        "json_schema_echo".to_string(),
                        json!({"schema": f["inputSchema"]}),
                    )]
                })
                .unwrap_or_default()
        } else {
            tools
                .iter()
                .map(|tool| {
                    let name = tool["name"].as_str().unwrap_or_default().to_string();
                    let args = match name.as_str() {
                        "add_numbers" => json!({"a": 2, "b": 3}),
                        _ => json!({}),
                    };
                    (name, args)
                })
                .collect()
        };
    for (name, args) in plan {
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
    // The gate (tests/peers/conformance_gate.mjs) looks for this line: the host finished its script.
    println!("mbc-conformance-driver: finished");
}
