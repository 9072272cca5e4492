//! A Builder tool's answer read while it streams in (issue 10): `CallOptions::scan_structure` has
//! the core feed each piece of a JSON answer to the resumable Structure scanner, and
//! `interpret_call_prescanned` then reads only the small rest of the result. For the recorded
//! results and broken variants of them (a §5.1 refusal found only after the scan, numbers and
//! escapes the scanner declines, a tool error, another contract, a truncated Structure), fed
//! whole, byte by byte and in random pieces: the outcome is exactly the one of the whole result
//! read by `interpret_call_bytes` (the path without the scan), refusals word for word.
#![cfg(not(target_arch = "wasm32"))]

#[path = "mcp_fixtures.rs"]
mod fixtures;

use fixtures::*;
use megane_builder_client::contract::marker::{Apply, Category, DocumentUse, Marker};
use megane_builder_client::contract::result::{
    interpret_call_bytes, interpret_call_prescanned, Interpreted, ResultLimits,
};
use megane_builder_client::mcp::{CallOptions, OpResult};
use serde_json::Value;

const RECORDED: [&str; 3] = [
    include_str!("../../shared/fixtures/megane-recorded/call-liquid_box.json"),
    include_str!("../../shared/fixtures/megane-recorded/call-solvate.json"),
    include_str!("../../shared/fixtures/megane-recorded/call-polymer_chain.json"),
];

fn marker() -> Marker {
    Marker {
        contract: 1,
        category: Category::Bulk,
        apply: Apply::NewDocument,
        document: DocumentUse::Optional,
        stochastic: true,
        expected_seconds: Some(20.0),
    }
}

/// Calls `liquid_box` and answers with `result` as an `application/json` body; returns the
/// outcome as the page's `ToolServer.call` reads it, and whether the Structure came prescanned.
fn call(result: &str, scan: bool, mode: Chunking) -> (Result<Interpreted, String>, bool) {
    let mut h = connected(mode);
    let options = CallOptions {
        scan_structure: scan,
        ..CallOptions::default()
    };
    let op =
        h.c.call_tool("liquid_box", serde_json::json!({}), &options, h.now);
    let (ex, req) = h.next_send();
    let id = req.json().unwrap()["id"].as_u64().unwrap();
    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
    let head = [("Content-Type".to_string(), "application/json".to_string())];
    h.c.handle_head(ex, 200, &head, h.now);
    h.body(ex, body.as_bytes());
    h.c.handle_end(ex, h.now);
    let OpResult::ToolResult(raw) = the_response(&h.take_events(), op) else {
        panic!("not a tool result")
    };
    let limits = ResultLimits::default();
    let bytes = raw.get().as_bytes();
    match raw.take_prescanned() {
        Some(p) => (
            interpret_call_prescanned("liquid_box", &marker(), bytes, p, &limits),
            true,
        ),
        None => (
            interpret_call_bytes("liquid_box", &marker(), bytes, &limits),
            false,
        ),
    }
}

fn s(v: &mut Value) -> &mut Value {
    &mut v["structuredContent"]["structure"]
}

fn bits(outcome: &Result<Interpreted, String>) -> Vec<u64> {
    match outcome {
        Ok(i) => i
            .result
            .structure
            .positions
            .iter()
            .map(|v| v.to_bits())
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn a_result_read_while_it_streams_in_is_the_result_read_whole() {
    let mut results: Vec<(String, &str)> = Vec::new();
    for text in RECORDED {
        let result = serde_json::from_str::<Value>(text).unwrap()["result"].clone();
        results.push((result.to_string(), "recorded"));
    }
    let base: Value = serde_json::from_str::<Value>(RECORDED[0]).unwrap()["result"].clone();
    let variant = |edit: &dyn Fn(&mut Value)| {
        let mut v = base.clone();
        edit(&mut v);
        v.to_string()
    };
    // A §5.1 cross-field refusal: the scan reads it, the fast read refuses, the exact one words it.
    results.push((
        variant(&|v| s(v)["bonds"][0][1] = 100_000.into()),
        "bond range",
    ));
    results.push((variant(&|v| s(v)["elements"][0] = 0.into()), "element 0"));
    results.push((
        variant(&|v| v["structuredContent"]["contract"] = 2.into()),
        "contract 2",
    ));
    results.push((variant(&|v| v["isError"] = true.into()), "tool error"));
    let recorded = results[0].0.clone();
    // Text the scanner declines: an escape in a name, a number out of range.
    results.push((recorded.replacen("\"WATE\"", "\"W\\u0041TE\"", 1), "escape"));
    results.push((
        recorded.replacen("\"positions\":[", "\"positions\":[1e400,", 1),
        "1e400",
    ));
    results.push((
        recorded.replacen("\"positions\":[", "\"positions\":[-0.0,0,0,", 1),
        "-0",
    ));
    // A Structure cut short, and one with a member twice.
    results.push((
        recorded.replacen("\"bonds\":[", "\"bonds\":[[0,1],", 1),
        "extra bond",
    ));
    results.push((
        recorded.replacen("\"cell\":", "\"cell\":null,\"cell\":", 1),
        "cell twice",
    ));
    let mut prescanned = 0;
    for (result, what) in &results {
        let (whole, took) = call(result, false, Chunking::Whole);
        assert!(!took, "{what}: scanned without being asked");
        for mode in MODES {
            let (streamed, took) = call(result, true, mode);
            prescanned += usize::from(took);
            assert_eq!(streamed, whole, "{what} {mode:?}");
            assert_eq!(bits(&streamed), bits(&whole), "{what} {mode:?}");
            if let Err(e) = &streamed {
                assert!(!e.contains('\n'), "{what}: {e}");
            }
        }
    }
    // Not vacuous: the recorded results and the refusals found after the scan took the new path.
    assert!(prescanned >= 4 * 8, "{prescanned}");
    assert!(call(&results[0].0, true, Chunking::Random(7)).0.is_ok());
    assert!(call(&results[3].0, true, Chunking::Whole).0.is_err());
}
