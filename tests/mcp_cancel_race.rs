//! §6: nothing that arrives after a cancel is applied — also when the cancel comes from a progress
//! callback while the same chunk carried the result (found by the soak in tests/node/soak.test.mjs:
//! one call in ~1 000 resolved with its result although it had been cancelled).
#![cfg(not(target_arch = "wasm32"))]

#[path = "mcp_fixtures.rs"]
mod fixtures;

use fixtures::*;
use megane_builder_client::mcp::{CallOptions, Event, McpError};

#[test]
fn a_cancel_from_a_progress_callback_drops_a_result_already_received() {
    let rec = load("http-stateful/07-call-liquid_box-water-molblock.json");
    let mut h = connected(Chunking::Whole);
    let (name, args) = call_args(&rec);
    let op = h.c.call_tool(&name, args, &CallOptions::default(), h.now);
    let (ex, req) = h.next_send();
    let id = req.json().unwrap()["id"].as_u64().unwrap();
    let token = req.json().unwrap()["params"]["_meta"]["progressToken"]
        .as_str()
        .unwrap()
        .to_string();
    h.head(ex, &rec);
    // Both progress frames and the result in one chunk.
    h.c.handle_chunk(ex, &rec.body_for(Some(id), Some(&token)), h.now);
    // The host takes the first event (progress) and its callback cancels.
    let first = h.c.poll_event();
    assert!(
        matches!(first, Some(Event::Progress { op: o, .. }) if o == op),
        "{first:?}"
    );
    h.c.cancel(op, h.now);
    let rest = h.take_events();
    assert!(
        !rest
            .iter()
            .any(|e| matches!(e, Event::Response { op: o, .. } if *o == op)),
        "{rest:?}"
    );
    assert_eq!(the_failure(&rest, op), McpError::Cancelled);
}
