//! The sans-I/O core against npm `@modelcontextprotocol/server-everything` (streamable HTTP): generic
//! MCP features the Builder peer does not have — priming events and event ids on SSE streams, progress
//! without messages, structured content, plain non-Builder tools. The server listens on all interfaces,
//! so `tests/peers/run_everything_tests.sh` runs it and these tests inside a network namespace with
//! only loopback; the tests are `#[ignore]`d otherwise and read the URL from `MCP_EVERYTHING_URL`.
#![cfg(not(target_arch = "wasm32"))]

#[path = "mcp_live_support.rs"]
mod support;

use megane_builder_client::mcp::{CallOptions, Config, Event, McpError, OpResult};
use serde_json::json;
use support::*;

fn url() -> String {
    std::env::var("MCP_EVERYTHING_URL")
        .expect("MCP_EVERYTHING_URL: run tests/peers/run_everything_tests.sh")
}

fn connected() -> Live {
    let mut l = Live::new(Config::new(url()));
    let op = l.c.connect(0);
    let OpResult::Connected(info) = l.run_ok(op) else {
        panic!()
    };
    assert!(!info.display_name().is_empty());
    assert!(
        info.protocol_version.starts_with("2025-"),
        "{}",
        info.protocol_version
    );
    l
}

#[test]
#[ignore = "needs server-everything: tests/peers/run_everything_tests.sh"]
fn everything_tools_progress_structured_content_cancel() {
    let mut l = connected();
    let op = l.c.list_tools(l.now());
    let OpResult::Tools(tools) = l.run_ok(op) else {
        panic!()
    };
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for n in [
        "echo",
        "get-structured-content",
        "trigger-long-running-operation",
    ] {
        assert!(names.contains(&n), "{names:?}");
    }

    let op = l.c.call_tool(
        "echo",
        json!({"message": "héllo"}),
        &CallOptions::default(),
        l.now(),
    );
    let OpResult::ToolResult(r) = l.run_ok(op) else {
        panic!()
    };
    let r = r.to_value();
    assert!(
        r["content"][0]["text"].as_str().unwrap().contains("héllo"),
        "{r}"
    );

    let op = l.c.call_tool(
        "get-structured-content",
        json!({"location": "Chicago"}),
        &CallOptions::default(),
        l.now(),
    );
    let OpResult::ToolResult(r) = l.run_ok(op) else {
        panic!()
    };
    let r = r.to_value();
    assert!(r["structuredContent"]["temperature"].is_number(), "{r}");

    // Progress without messages, in order.
    let op = l.c.call_tool(
        "trigger-long-running-operation",
        json!({"duration": 1, "steps": 4}),
        &CallOptions::default(),
        l.now(),
    );
    let start = l.events.len();
    let OpResult::ToolResult(r) = l.run_ok(op) else {
        panic!()
    };
    let r = r.to_value();
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("completed"),
        "{r}"
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
    assert_eq!(
        progress,
        vec![
            (Some(0.25), None),
            (Some(0.5), None),
            (Some(0.75), None),
            (Some(1.0), None)
        ]
    );

    // Cancel mid-way; the session stays usable; close sends DELETE.
    let op = l.c.call_tool(
        "trigger-long-running-operation",
        json!({"duration": 3, "steps": 3}),
        &CallOptions::default(),
        l.now(),
    );
    let mut done = false;
    let out = l.run(op, &mut |c, e, now| {
        if matches!(e, Event::Progress { .. }) && !done {
            done = true;
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
    let op = l.c.ping(l.now());
    assert_eq!(l.run_ok(op), OpResult::Pong);
    let op = l.c.close(l.now());
    assert_eq!(l.run_ok(op), OpResult::Closed);
}

#[test]
#[ignore = "needs server-everything: tests/peers/run_everything_tests.sh"]
fn everything_timeout_is_a_timeout() {
    let mut l = connected();
    let op = l.c.call_tool(
        "trigger-long-running-operation",
        json!({"duration": 2, "steps": 1}),
        &CallOptions {
            expected_seconds: None,
            timeout_ms: Some(500),
            scan_structure: false,
        },
        l.now(),
    );
    // The server is silent for 2 s; the harness checks deadlines when bytes arrive, so the timeout is
    // noticed when the answer comes, and the answer is then discarded.
    assert_eq!(l.run_err(op), McpError::Timeout { seconds: 1 });
}
