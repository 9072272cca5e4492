//! The SSE decoder against every recorded `text/event-stream` body of the reference server, whole,
//! byte by byte and in random chunkings, with CRLF, LF and CR line ends.
#![cfg(not(target_arch = "wasm32"))]

#[path = "mcp_fixtures.rs"]
mod fixtures;

use megane_builder_client::wire::sse::{SseDecoder, SseError, SseEvent};
use proptest::prelude::*;
use serde_json::Value;

fn decode_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<SseEvent> {
    let mut d = SseDecoder::new(1 << 24);
    let mut out = Vec::new();
    for c in chunks {
        d.feed(c, &mut out).unwrap();
    }
    d.finish(&mut out).unwrap();
    out
}

fn sse_fixtures() -> Vec<fixtures::Recorded> {
    let all: Vec<_> = fixtures::all_files()
        .iter()
        .map(|f| fixtures::load(f))
        .filter(|r| r.is_sse())
        .collect();
    assert!(
        all.len() >= 25,
        "expected the recorded SSE bodies, found {}",
        all.len()
    );
    all
}

fn check(rec: &fixtures::Recorded, events: &[SseEvent]) {
    assert_eq!(events.len(), rec.sse_events.len(), "{}", rec.file);
    for (got, (event, data)) in events.iter().zip(&rec.sse_events) {
        assert_eq!(got.event_type(), event, "{}", rec.file);
        let parsed: Value = serde_json::from_str(&got.data).unwrap();
        assert_eq!(&parsed, data, "{}", rec.file);
        assert_eq!(got.id, None);
    }
    // The JSON-RPC messages are exactly the recorded ones, in order.
    let msgs: Vec<Value> = events
        .iter()
        .map(|e| serde_json::from_str(&e.data).unwrap())
        .collect();
    if !rec.messages.is_empty() {
        assert_eq!(msgs, rec.messages, "{}", rec.file);
    }
}

#[test]
fn recorded_bodies_whole_and_byte_by_byte() {
    for rec in sse_fixtures() {
        if !rec.body.is_empty() {
            assert!(
                rec.body.windows(4).any(|w| w == b"\r\n\r\n"),
                "{} uses CRLF framing",
                rec.file
            );
        }
        check(&rec, &decode_chunks([rec.body.as_slice()]));
        check(&rec, &decode_chunks(rec.body.chunks(1)));
    }
}

#[test]
fn recorded_bodies_with_lf_and_cr_line_ends() {
    for rec in sse_fixtures() {
        let text = String::from_utf8(rec.body.clone()).unwrap();
        let lf = text.replace("\r\n", "\n");
        let cr = text.replace("\r\n", "\r");
        check(&rec, &decode_chunks([lf.as_bytes()]));
        check(&rec, &decode_chunks(cr.as_bytes().chunks(3)));
    }
}

#[test]
fn recorded_progress_precedes_the_result() {
    let rec = fixtures::load("http-stateful/09-call-solvate-methane-12A.json");
    let events = decode_chunks(rec.body.chunks(7));
    let methods: Vec<Option<String>> = events
        .iter()
        .map(|e| {
            let v: Value = serde_json::from_str(&e.data).unwrap();
            v.get("method").and_then(Value::as_str).map(str::to_string)
        })
        .collect();
    assert_eq!(events.len(), 4);
    assert!(methods[..3]
        .iter()
        .all(|m| m.as_deref() == Some("notifications/progress")));
    assert_eq!(methods[3], None);
}

#[test]
fn final_frame_without_blank_line_is_flushed() {
    let rec = fixtures::load("http-stateful/15-ping.json");
    let text = String::from_utf8(rec.body.clone()).unwrap();
    let cut = text.trim_end_matches(['\r', '\n']);
    assert_ne!(cut.len(), text.len());
    check(&rec, &decode_chunks([cut.as_bytes()]));
}

#[test]
fn an_oversized_event_is_an_error_not_memory() {
    let rec = fixtures::load("http-stateful/07-call-liquid_box-water-molblock.json");
    let mut d = SseDecoder::new(1024);
    let mut out = Vec::new();
    let mut err = None;
    for c in rec.body.chunks(1000) {
        if let Err(e) = d.feed(c, &mut out) {
            err = Some(e);
            break;
        }
    }
    assert_eq!(err, Some(SseError::EventTooLarge { limit: 1024 }));
    // The two small progress events before the result were still delivered.
    assert_eq!(out.len(), 2);
    assert!(d.finish(&mut out).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn recorded_bodies_in_random_chunkings(cuts in proptest::collection::vec(0usize..200_000, 0..40), pick in 0usize..1000) {
        let all = sse_fixtures();
        let rec = &all[pick % all.len()];
        let mut points: Vec<usize> = cuts.into_iter().map(|c| c % (rec.body.len() + 1)).collect();
        points.sort();
        let mut chunks = Vec::new();
        let mut last = 0;
        for p in points {
            chunks.push(&rec.body[last..p]);
            last = p;
        }
        chunks.push(&rec.body[last..]);
        check(rec, &decode_chunks(chunks));
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_respect_the_cap(bytes in proptest::collection::vec(any::<u8>(), 0..4000), size in 1usize..300) {
        let mut d = SseDecoder::new(256);
        let mut out = Vec::new();
        for c in bytes.chunks(size) {
            if d.feed(c, &mut out).is_err() {
                break;
            }
        }
        let _ = d.finish(&mut out);
        for e in &out {
            prop_assert!(e.data.len() <= 256 * 3);
        }
    }
}
