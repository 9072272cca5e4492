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
use megane_builder_client::mcp::{CallOptions, Event, ExchangeId, OpId, OpResult};
use megane_builder_client::wire::jsonrpc::RawJson;
use serde_json::Value;

const RECORDED: [&str; 3] = [
    include_str!("fixtures/megane-recorded/call-liquid_box.json"),
    include_str!("fixtures/megane-recorded/call-solvate.json"),
    include_str!("fixtures/megane-recorded/call-polymer_chain.json"),
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

/// A `liquid_box` call sent (with or without the scan), waiting for its answer.
struct Pending {
    h: H,
    op: OpId,
    ex: ExchangeId,
    id: u64,
    token: Value,
}

fn start(scan: bool, mode: Chunking) -> Pending {
    let mut h = connected(mode);
    let options = CallOptions {
        scan_structure: scan,
        ..CallOptions::default()
    };
    let op =
        h.c.call_tool("liquid_box", serde_json::json!({}), &options, h.now);
    let (ex, req) = h.next_send();
    let request = req.json().unwrap();
    Pending {
        h,
        op,
        ex,
        id: request["id"].as_u64().unwrap(),
        token: request["params"]["_meta"]["progressToken"].clone(),
    }
}

/// A tool result as the page's `ToolServer.call` reads it, and whether its Structure came
/// prescanned.
fn read(raw: &RawJson) -> (Result<Interpreted, String>, bool) {
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

/// Calls `liquid_box` and answers with `result` as an `application/json` body; returns the
/// outcome as the page's `ToolServer.call` reads it, and whether the Structure came prescanned.
fn call(result: &str, scan: bool, mode: Chunking) -> (Result<Interpreted, String>, bool) {
    call_with(
        &|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
        scan,
        mode,
    )
}

/// [`call`] answered with the JSON body `body(id)`.
fn call_with(
    body: &dyn Fn(u64) -> String,
    scan: bool,
    mode: Chunking,
) -> (Result<Interpreted, String>, bool) {
    let Pending {
        mut h, op, ex, id, ..
    } = start(scan, mode);
    let body = body(id);
    let head = [("Content-Type".to_string(), "application/json".to_string())];
    h.c.handle_head(ex, 200, &head, h.now);
    assert_eq!(h.c.keeps_chunks(ex), scan);
    // The most body bytes the core holds after a chunk (the driver keeps the chunks).
    let mut held = 0;
    let mut rest = body.as_bytes();
    while !rest.is_empty() {
        let n = h.next_len(rest.len()).min(rest.len());
        h.c.handle_chunk(ex, &rest[..n], h.now);
        held = held.max(h.c.held_body_bytes(ex));
        rest = &rest[n..];
    }
    h.c.handle_end(ex, h.now);
    // The scan did not read the Structure: the driver feeds the body again, to a plain reader.
    let replayed = h.c.wants_replay(ex);
    if replayed {
        assert!(scan && !h.c.keeps_chunks(ex));
        h.body(ex, body.as_bytes());
        h.c.handle_end(ex, h.now);
        assert!(!h.c.wants_replay(ex));
    }
    let OpResult::ToolResult(raw) = the_response(&h.take_events(), op) else {
        panic!("not a tool result")
    };
    let mut structure_len = None;
    let raw = match raw.take_prescanned() {
        Some(p) => {
            structure_len = Some(p.structure_len);
            raw.with_prescanned(p)
        }
        None => raw,
    };
    let (outcome, took) = read(&raw);
    assert_eq!(took, structure_len.is_some());
    // A scanned body is read once (prescanned) or replayed, never both.
    assert_eq!(scan, took || replayed);
    assert!(!(took && replayed));
    if let Some(len) = structure_len {
        // The dropped path: the core never held the Structure's text, only the bytes around it
        // and the unit being read.
        // (Kept pieces would be at least the body: 5–41 KB here; the bytes around it, a Vec
        // grown by doubling, are 70 KB more in the results with a long text.)
        let around = body.len() - len;
        assert!(
            held <= 2048 + 2 * around.saturating_sub(1024) && held < len / 2 + 2 * around,
            "{held} of {} held",
            body.len()
        );
    }
    (outcome, took)
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

/// The recorded results, and variants the scan reads but the fast read refuses, or the scan
/// declines, or no reader accepts.
fn results() -> Vec<(String, &'static str)> {
    let mut results: Vec<(String, &'static str)> = Vec::new();
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
    results.push((
        recorded.replacen("\"positions\":[", "\"positions\":[-0.0,0,0,", 1),
        "-0",
    ));
    // Larger than an SSE event's data the scan keeps (64 KiB, a long text).
    let long = recorded.replacen(
        "\"text\":\"",
        &format!("\"text\":\"{}", "x".repeat(70_000)),
        1,
    );
    assert!(long.len() > 80_000);
    results.push((long.clone(), "large"));
    // Text the scanner declines: an escape in a name, a number out of range (a large one in an
    // SSE body is fed again).
    for (base, [escape, huge]) in [
        (&recorded, ["escape", "1e400"]),
        (&long, ["escape, large", "1e400, large"]),
    ] {
        results.push((base.replacen("\"WATE\"", "\"W\\u0041TE\"", 1), escape));
        results.push((
            base.replacen("\"positions\":[", "\"positions\":[1e400,", 1),
            huge,
        ));
    }
    // A Structure cut short, and one with a member twice.
    results.push((
        recorded.replacen("\"bonds\":[", "\"bonds\":[[0,1],", 1),
        "extra bond",
    ));
    results.push((
        recorded.replacen("\"cell\":", "\"cell\":null,\"cell\":", 1),
        "cell twice",
    ));
    // Where the placeholder could be mistaken, or stand where no Structure is read.
    let water = r#"{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[]}"#;
    let mark = "\"megane:structure read in place\"";
    let escaped_mark = "\"megane:structure read in plac\\u0065\"";
    for (from, to, what) in [
        (
            "{",
            format!("{{\"result\":{{\"structuredContent\":{{\"structure\":{mark}}}}},"),
            "mark nested first",
        ),
        (
            "{",
            format!("{{\"result\":{{\"structuredContent\":{{\"structure\":{escaped_mark}}}}},"),
            "escaped mark nested first",
        ),
        (
            "{",
            format!(
                "{{\"result\":{{\"structuredContent\":{{\"contract\":1,\"structure\":{water}}}}},"
            ),
            "a nested result first",
        ),
        ("{", format!("{{\"note\":{mark},"), "mark elsewhere"),
        (
            "{",
            "{\"structuredContent\":null,".to_string(),
            "structuredContent null first",
        ),
        (
            "{",
            format!("{{\"structuredC\\u006fntent\":{{\"contract\":1,\"structure\":{water}}},"),
            "structuredContent escaped first",
        ),
        (
            "\"structure\":{",
            "\"structure\":null,\"structure\":{".to_string(),
            "structure null first",
        ),
        (
            "\"structure\":{",
            format!("\"structur\\u0065\":{water},\"structure\":{{"),
            "structure escaped first",
        ),
        (
            "\"structure\":{",
            format!("\"structure\":{mark},\"structure\":{{"),
            "structure as the mark first",
        ),
    ] {
        assert!(recorded.contains(from), "{what}");
        results.push((recorded.replacen(from, &to, 1), what));
    }
    results
}

/// Bodies where the scan finds a Structure outside the answer's result, or the placeholder
/// would not be alone: read as the whole body is.
#[test]
fn a_structure_outside_the_result_reads_as_the_whole_body() {
    let result = serde_json::from_str::<Value>(RECORDED[2]).unwrap()["result"].to_string();
    let structure = serde_json::from_str::<Value>(&result).unwrap()["structuredContent"]
        ["structure"]
        .to_string();
    let mark = "\"megane:structure read in place\"";
    let bodies: [(&dyn Fn(u64) -> String, &str); 3] = [
        (
            &|id| {
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"structuredContent":{{"structure":{structure}}},"result":{result}}}"#
                )
            },
            "structuredContent beside the result",
        ),
        (
            &|id| format!(r#"{{"jsonrpc":"2.0","note":{mark},"id":{id},"result":{result}}}"#),
            "the mark in the envelope",
        ),
        (
            &|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result},"note":{mark}}}"#),
            "the mark after the result",
        ),
    ];
    for (body, what) in bodies {
        let (whole, took) = call_with(body, false, Chunking::Whole);
        assert!(!took);
        for mode in MODES {
            let (streamed, took) = call_with(body, true, mode);
            assert!(!took, "{what}: the placeholder would not be alone");
            assert_eq!(streamed, whole, "{what} {mode:?}");
            assert_eq!(bits(&streamed), bits(&whole), "{what} {mode:?}");
        }
    }
}

#[test]
fn a_result_read_while_it_streams_in_is_the_result_read_whole() {
    let results = results();
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

/// How an SSE answer is framed.
#[derive(Clone, Copy, Debug)]
struct Framing {
    eol: &'static str,
    bom: bool,
    /// A comment, `retry:` and a priming event (empty data) first.
    preamble: bool,
    /// A progress notification event before the answer.
    progress: bool,
    /// `data:` without its space.
    tight: bool,
    /// The answer's data in many lines, broken after every fifth `,` between values.
    split: bool,
    /// The blank line after the answer's event (without it, the end of the stream dispatches it).
    blank_end: bool,
}

const PLAIN: Framing = Framing {
    eol: "\n",
    bom: false,
    preamble: false,
    progress: false,
    tight: false,
    split: false,
    blank_end: true,
};
const CRLF: Framing = Framing {
    eol: "\r\n",
    bom: true,
    preamble: true,
    progress: true,
    tight: true,
    ..PLAIN
};
const CR: Framing = Framing {
    eol: "\r",
    progress: true,
    split: true,
    blank_end: false,
    ..PLAIN
};

/// `message` (each `\n` in it starts another `data` line) as a `text/event-stream` body.
fn sse_body(message: &[u8], token: &Value, f: Framing) -> Vec<u8> {
    let eol = f.eol.as_bytes();
    let data = if f.tight { &b"data:"[..] } else { b"data: " };
    let mut body = Vec::new();
    if f.bom {
        body.extend_from_slice(b"\xef\xbb\xbf");
    }
    if f.preamble {
        for line in [&b": hello"[..], b"retry: 500", b"data:", b""] {
            body.extend_from_slice(line);
            body.extend_from_slice(eol);
        }
    }
    if f.progress {
        let note = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 1, "total": 4, "message": "packing"}});
        for line in [&b"event: message"[..], data, note.to_string().as_bytes()] {
            body.extend_from_slice(line);
            if line != data {
                body.extend_from_slice(eol);
            }
        }
        body.extend_from_slice(eol);
    }
    let mut message = message.to_vec();
    if f.split {
        // Line breaks between values only (outside strings), so the data is the same JSON.
        let (mut in_string, mut escaped, mut commas) = (false, false, 0);
        let mut split = Vec::new();
        for &b in &message {
            split.push(b);
            match b {
                _ if escaped => escaped = false,
                b'\\' if in_string => escaped = true,
                b'"' => in_string = !in_string,
                b',' if !in_string => {
                    commas += 1;
                    if commas % 5 == 0 {
                        split.push(b'\n');
                    }
                }
                _ => {}
            }
        }
        message = split;
    }
    body.extend_from_slice(b"event: message");
    body.extend_from_slice(eol);
    for line in message.split(|&b| b == b'\n') {
        body.extend_from_slice(data);
        body.extend_from_slice(line);
        body.extend_from_slice(eol);
    }
    if f.blank_end {
        body.extend_from_slice(eol);
    }
    body
}

/// How the body is fed.
#[derive(Clone, Copy, Debug)]
enum Feed {
    /// In pieces of this many bytes.
    Every(usize),
    /// In pieces of 1–97 bytes from this seed.
    Random(u64),
    /// The stream ends after this many bytes, fed in two pieces.
    Cut(usize),
    /// Whole, in two pieces split here.
    Two(usize),
}

const FEEDS: [Feed; 7] = [
    Feed::Every(usize::MAX),
    Feed::Every(1),
    Feed::Every(2),
    Feed::Every(7),
    Feed::Every(64 * 1024),
    Feed::Random(1),
    Feed::Random(0xdead_beef),
];

/// What the call came to, as the page sees it.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// A tool result, read (the positions' bits too).
    Read(Box<Result<Interpreted, String>>, Vec<u64>),
    /// The call failed.
    Failed(String),
    /// No outcome yet.
    Pending,
}

/// One progress report the page saw: fraction and message.
type Progress = (Option<f64>, Option<String>);

/// Calls `liquid_box` and answers with the SSE body `body(id, progress token)`, fed as `feed`
/// says, by a driver that keeps the chunks for the core's replay; the outcome, the progress the
/// page saw, whether the Structure came prescanned, and whether the body was fed again.
fn call_sse(
    body: &dyn Fn(u64, &Value) -> Vec<u8>,
    scan: bool,
    feed: Feed,
) -> (Outcome, Vec<Progress>, bool, bool) {
    let Pending {
        mut h,
        op,
        ex,
        id,
        token,
    } = start(scan, Chunking::Whole);
    let mut body = body(id, &token);
    let head = [("Content-Type".to_string(), "text/event-stream".to_string())];
    h.c.handle_head(ex, 200, &head, h.now);
    let mut pieces: Vec<usize> = match feed {
        Feed::Every(n) => vec![n],
        Feed::Random(seed) => {
            let mut rng = seed | 1;
            (0..body.len())
                .map(|_| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    1 + (rng % 97) as usize
                })
                .collect()
        }
        Feed::Cut(at) => {
            body.truncate(at);
            vec![at / 2, body.len()]
        }
        Feed::Two(at) => vec![at, body.len()],
    };
    pieces.retain(|&n| n > 0);
    let mut keep = h.c.keeps_chunks(ex);
    assert_eq!(keep, scan);
    let (mut kept, mut replayed) = (Vec::new(), false);
    let mut rest = &body[..];
    for k in 0.. {
        if rest.is_empty() {
            break;
        }
        let n = pieces[k % pieces.len().max(1)].min(rest.len());
        if keep {
            kept.push(&rest[..n]);
        }
        h.c.handle_chunk(ex, &rest[..n], h.now);
        if keep && h.c.wants_replay(ex) {
            // The core gave up the scan: the chunks so far again, then the stream read on.
            (keep, replayed) = (false, true);
            assert!(!h.c.keeps_chunks(ex));
            for chunk in kept.drain(..) {
                h.c.handle_chunk(ex, chunk, h.now);
            }
        }
        rest = &rest[n..];
    }
    h.c.handle_end(ex, h.now);
    if h.c.wants_replay(ex) {
        assert!(keep && !replayed);
        replayed = true;
        for chunk in kept.drain(..) {
            h.c.handle_chunk(ex, chunk, h.now);
        }
        h.c.handle_end(ex, h.now);
        assert!(!h.c.wants_replay(ex));
    }
    let events = h.take_events();
    let mut progress = Vec::new();
    let mut outcome = Outcome::Pending;
    let mut took = false;
    for e in events {
        match e {
            Event::Progress {
                op: o,
                fraction,
                message,
            } if o == op => progress.push((fraction, message)),
            Event::Response { op: o, result } if o == op => {
                let OpResult::ToolResult(raw) = result else {
                    panic!("not a tool result")
                };
                let (read, prescanned) = read(&raw);
                took = prescanned;
                let bits = bits(&read);
                outcome = Outcome::Read(Box::new(read), bits);
            }
            Event::Failed { op: o, error } if o == op => {
                outcome = Outcome::Failed(error.to_string())
            }
            _ => {}
        }
    }
    (outcome, progress, took, replayed)
}

/// `result` as the JSON-RPC answer to request `id`.
fn answer(id: u64, result: &[u8]) -> Vec<u8> {
    let mut message = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#).into_bytes();
    message.extend_from_slice(result);
    message.push(b'}');
    message
}

#[test]
fn an_sse_answer_read_while_it_streams_in_is_the_answer_read_whole() {
    let (mut prescanned, mut replayed) = (0, 0);
    for (result, what) in results() {
        let (json, _) = call(&result, false, Chunking::Whole);
        for framing in [PLAIN, CRLF, CR] {
            let body =
                |id: u64, token: &Value| sse_body(&answer(id, result.as_bytes()), token, framing);
            let whole = call_sse(&body, false, Feed::Every(usize::MAX));
            assert!(!whole.2, "{what}: scanned without being asked");
            // The SSE answer reads as the JSON one, and the progress before it arrives.
            assert_eq!(
                whole.0,
                Outcome::Read(Box::new(json.clone()), bits(&json)),
                "{what} {framing:?}"
            );
            assert_eq!(whole.1.len(), usize::from(framing.progress), "{what}");
            for feed in FEEDS {
                let streamed = call_sse(&body, true, feed);
                prescanned += usize::from(streamed.2);
                replayed += usize::from(streamed.3);
                assert!(!(streamed.2 && streamed.3), "{what}: read once");
                assert_eq!(streamed.0, whole.0, "{what} {framing:?} {feed:?}");
                assert_eq!(streamed.1, whole.1, "{what} {framing:?} {feed:?}");
                if let Outcome::Read(read, _) = &streamed.0 {
                    if let Err(e) = read.as_ref() {
                        assert!(!e.contains('\n'), "{what}: {e}");
                    }
                }
            }
        }
    }
    // Not vacuous: the recorded results and the refusals found after the scan took the new path
    // (5 results of the 16 are read by the scan, in 3 framings and 7 feeds), and the two large
    // ones the scan declines were fed again.
    assert!(prescanned >= 5 * 3 * 7, "{prescanned}");
    assert!(replayed >= 2 * 3 * 7, "{replayed}");
}

#[test]
fn hostile_sse_answers_read_as_the_whole_answer() {
    let base: Value = serde_json::from_str::<Value>(RECORDED[2]).unwrap()["result"].clone();
    let result = base.to_string().into_bytes();
    let replace = |from: &str, to: &[u8]| {
        let at = result
            .windows(from.len())
            .position(|w| w == from.as_bytes())
            .unwrap();
        let mut v = result[..at].to_vec();
        v.extend_from_slice(to);
        v.extend_from_slice(&result[at + from.len()..]);
        v
    };
    type Hostile<'a> = Box<dyn Fn(u64) -> Vec<u8> + 'a>;
    let answered = |r: Vec<u8>| -> Hostile { Box::new(move |id| answer(id, &r)) };
    let cases: Vec<(&str, Hostile)> = vec![
        ("as sent", answered(result.clone())),
        // Invalid UTF-8 (the event's data has U+FFFD there): in a name, in the text.
        (
            "bad UTF-8 in a name",
            answered(replace("\"residueNames\":[\"", b"\"residueNames\":[\"\xff")),
        ),
        (
            "bad UTF-8 in the text",
            answered(replace("\"text\":\"", b"\"text\":\"\xc3")),
        ),
        // A `data` line break inside a string (a raw line feed in it), or between values.
        (
            "line break in a name",
            answered(replace("\"residueNames\":[\"", b"\"residueNames\":[\"\n")),
        ),
        (
            "line break in the text",
            answered(replace("\"text\":\"", b"\"text\":\"\n")),
        ),
        (
            "empty data lines",
            answered(replace("\"bonds\":[", b"\n\n\"bonds\":[\n")),
        ),
        (
            "line break in a number",
            answered(replace("\"positions\":[", b"\"positions\":[1\n2,")),
        ),
        (
            "BOM in the data",
            Box::new(|id| [&b"\xef\xbb\xbf"[..], &answer(id, &result)].concat()),
        ),
        (
            "batch",
            Box::new(|id| [&b"["[..], &answer(id, &result), b"]"].concat()),
        ),
        (
            "cut short",
            Box::new(|id| answer(id, &result[..result.len() / 2])),
        ),
        (
            "two answers",
            Box::new(|id| [answer(id, &result), answer(id, &result)].concat()),
        ),
    ];
    let mut prescanned = 0;
    for (what, message) in &cases {
        for framing in [PLAIN, CRLF] {
            let body = |id: u64, token: &Value| sse_body(&message(id), token, framing);
            let whole = call_sse(&body, false, Feed::Every(usize::MAX));
            for feed in [
                Feed::Every(usize::MAX),
                Feed::Every(1),
                Feed::Every(7),
                Feed::Random(5),
            ] {
                let streamed = call_sse(&body, true, feed);
                prescanned += usize::from(streamed.2);
                assert_eq!(streamed.0, whole.0, "{what} {framing:?} {feed:?}");
                // The progress seen depends on the pieces (a chunk whose events include one that is
                // not JSON-RPC fails whole), as without the scan.
                let unscanned = call_sse(&body, false, feed);
                assert_eq!(streamed.1, unscanned.1, "{what} {framing:?} {feed:?}");
            }
        }
    }
    // An event of another type carrying an answer is not the answer.
    let other = |id: u64, token: &Value| {
        let mut body = b"event: note\ndata: ".to_vec();
        body.extend_from_slice(&answer(id, &result));
        body.extend_from_slice(b"\n\n");
        body.extend_from_slice(&sse_body(
            &answer(id, &replace("\"name\":\"poly", b"\"name\":\"xpoly")),
            token,
            PLAIN,
        ));
        body
    };
    let whole = call_sse(&other, false, Feed::Every(usize::MAX));
    assert_eq!(call_sse(&other, true, Feed::Every(3)).0, whole.0);
    let Outcome::Read(read, _) = &whole.0 else {
        panic!("{:?}", whole.0)
    };
    let read = read.as_ref().as_ref().unwrap();
    assert!(read.result.name.starts_with('x'), "{}", read.result.name);
    // Not vacuous: the answer as sent took the new path in every framing and feed.
    assert!(prescanned >= 2 * 4, "{prescanned}");
}

#[test]
fn an_sse_answer_cut_anywhere_reads_as_the_same_cut_read_whole() {
    let water = br#"{"content":[{"type":"text","text":"water"}],"structuredContent":{"contract":1,"name":"water","structure":{"elements":[8,1,1],"positions":[0,0,0,0.9572,0,0,-0.24,0.927,0],"bonds":[[0,1],[0,2]],"residueNames":["HOH","HOH","HOH"],"cell":null},"warnings":[]},"isError":false}"#;
    let polymer: Value = serde_json::from_str::<Value>(RECORDED[2]).unwrap()["result"].clone();
    let polymer = polymer.to_string();
    let framing = Framing {
        preamble: false,
        ..CRLF
    };
    let mut read = 0;
    for (result, step) in [(&water[..], 1), (polymer.as_bytes(), 61)] {
        let body = |id: u64, token: &Value| sse_body(&answer(id, result), token, framing);
        let full = call_sse(&body, false, Feed::Every(usize::MAX));
        assert!(
            matches!(&full.0, Outcome::Read(read, _) if read.is_ok()),
            "{:?}",
            full.0
        );
        let sent = start(false, Chunking::Whole);
        let len = body(sent.id, &sent.token).len();
        for at in (0..=len).step_by(step) {
            let whole = call_sse(&body, false, Feed::Cut(at));
            let streamed = call_sse(&body, true, Feed::Cut(at));
            read += usize::from(streamed.2);
            assert_eq!(streamed.0, whole.0, "cut at {at} of {len}");
            assert_eq!(streamed.1, whole.1, "cut at {at} of {len}");
            if at < len {
                let two = call_sse(&body, true, Feed::Two(at));
                assert_eq!(two.0, full.0, "split at {at} of {len}");
                assert_eq!(two.1, full.1, "split at {at} of {len}");
            }
        }
    }
    // Not vacuous: a stream cut after the answer's last data byte is still read by the scan.
    assert!(read >= 2, "{read}");
}

#[test]
fn a_large_sse_answer_broken_off_reads_and_resumes_as_without_the_scan() {
    // An answer larger than the data the scan keeps, declined by the scan (the body is fed again
    // from its first chunk once the answer is dispatched), between progress events with ids; the
    // stream breaks off anywhere (a network error): the same events, the same resume (a GET with
    // the same Last-Event-ID after the same wait) as without the scan.
    let (result, _) = results()
        .into_iter()
        .find(|(_, what)| *what == "escape, large")
        .unwrap();
    let run = |scan: bool, cut: Option<usize>, piece: usize| {
        let Pending {
            mut h,
            ex,
            id,
            token,
            ..
        } = start(scan, Chunking::Whole);
        let note = |n: u32| {
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": n, "total": 4}})
            .to_string()
        };
        let mut body = format!(
            "id: ev-1\nretry: 500\ndata: {}\n\nid: ev-2\ndata: ",
            note(1)
        );
        body.push_str(std::str::from_utf8(&answer(id, result.as_bytes())).unwrap());
        body.push_str(&format!("\n\nid: ev-3\ndata: {}\n\n", note(2)));
        let len = body.len();
        let body = &body.as_bytes()[..cut.unwrap_or(len).min(len)];
        let head = [("Content-Type".to_string(), "text/event-stream".to_string())];
        h.c.handle_head(ex, 200, &head, h.now);
        let mut keep = h.c.keeps_chunks(ex);
        let mut kept = Vec::new();
        let mut replayed = false;
        for chunk in body.chunks(piece) {
            if keep {
                kept.push(chunk);
            }
            h.c.handle_chunk(ex, chunk, h.now);
            if keep && h.c.wants_replay(ex) {
                (keep, replayed) = (false, true);
                for c in kept.drain(..) {
                    h.c.handle_chunk(ex, c, h.now);
                }
            }
        }
        match cut {
            Some(_) => h.c.handle_network_error(ex, "connection reset", h.now),
            None => h.c.handle_end(ex, h.now),
        }
        let mut seen: Vec<String> = h.take_events().iter().map(|e| format!("{e:?}")).collect();
        h.now += 500;
        h.c.handle_timeout(h.now);
        seen.extend(h.take_events().iter().map(|e| format!("{e:?}")));
        let resumed = h
            .sends
            .pop_front()
            .map(|(_, get)| format!("{:?} {:?}", get.method, get.header("Last-Event-ID")));
        (seen, resumed, replayed, len)
    };
    let (whole, none, replayed, len) = run(true, None, 4096);
    assert!(replayed && none.is_none());
    assert_eq!(whole, run(false, None, 4096).0);
    let (mut resumed, mut replays) = (0, 0);
    for piece in [4096, 65_536] {
        for cut in (0..len)
            .step_by(9_973)
            .chain([len - 1, len - 40, len - 100])
        {
            let plain = run(false, Some(cut), piece);
            let scanned = run(true, Some(cut), piece);
            assert_eq!(scanned.0, plain.0, "cut at {cut}, pieces of {piece}");
            assert_eq!(scanned.1, plain.1, "cut at {cut}, pieces of {piece}");
            resumed += usize::from(plain.1.is_some());
            replays += usize::from(scanned.2);
        }
    }
    // Not vacuous: broken off before the answer, the call resumes; after it, the body was fed
    // again before the break.
    assert!(
        resumed >= 10 && replays >= 4,
        "{resumed} resumed, {replays} replayed"
    );
}
