//! §6: the call timeout is one rule (`wire::timing`) for the remote client and the offline
//! tools: an explicit timeout is capped at 30 minutes, a non-positive one means the contract's
//! default, and the deadline the client arms is the one `call_deadline_ms` gives.
#![cfg(not(target_arch = "wasm32"))]

#[path = "mcp_fixtures.rs"]
mod fixtures;

use fixtures::*;
use megane_builder_client::mcp::CallOptions;
use megane_builder_client::wire::timing::{call_deadline_ms, call_timeout_ms};

#[test]
fn the_remote_client_arms_the_contract_deadline() {
    let rec = load("http-stateful/07-call-liquid_box-water-molblock.json");
    let (name, args) = call_args(&rec);
    for (expected_seconds, timeout_ms, wanted) in [
        (Some(20.0), None, 100_000),
        (Some(20.0), Some(5_000), 5_000),
        (None, Some(40 * 60_000), 30 * 60_000),
        // 0 is "no explicit timeout", as offline: the contract's 100 s, not an instant failure.
        (Some(20.0), Some(0), 100_000),
    ] {
        let mut h = connected(Chunking::Whole);
        let t0 = h.now;
        h.c.call_tool(
            &name,
            args.clone(),
            &CallOptions {
                expected_seconds,
                timeout_ms,
                scan_structure: false,
            },
            t0,
        );
        h.next_send();
        assert_eq!(
            call_timeout_ms(expected_seconds, timeout_ms.map(|t| t as f64)),
            wanted
        );
        assert_eq!(
            h.c.poll_timeout(),
            Some(call_deadline_ms(t0, t0, wanted)),
            "{expected_seconds:?} {timeout_ms:?}"
        );
        assert_eq!(h.c.poll_timeout(), Some(t0 + wanted));
    }
}
