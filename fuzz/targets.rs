//! The bodies of the `cargo fuzz` targets (issue 11, item 14), shared by `fuzz/fuzz_targets/*.rs`
//! (libFuzzer, nightly) and `tests/fuzz_corpus.rs` (which replays every committed corpus file on
//! stable, in CI), so the two never drift. Each body takes arbitrary bytes and asserts the
//! invariants: no panic, every error a single line as the text sanitiser makes it
//! (`wire::text`), and the differential rules where two paths must agree.
#![allow(dead_code)]

use megane_builder_client::chem::molblock::{parse_molblock, write_molblock};
use megane_builder_client::contract::apply::plan_apply;
use megane_builder_client::contract::discovery::{
    parse_tool_list, parse_tool_list_text, parse_tool_list_with, SentSchemas,
};
use megane_builder_client::contract::files::{read_structure, write_structure, Format};
use megane_builder_client::contract::launch::parse_launch_fragment;
use megane_builder_client::contract::marker::{Apply, Category, DocumentUse, Marker};
use megane_builder_client::contract::result::{
    interpret_call_bytes, interpret_call_value, ResultLimits,
};
use megane_builder_client::contract::structure::Structure;
use megane_builder_client::contract::values::{
    build_arguments, initial_values, FormContext, LibraryMolecule,
};
use megane_builder_client::mcp::body::{BodyError, BodyReader};
use megane_builder_client::mcp::errors::{error_body_text, http_failure, http_status, McpError};
use megane_builder_client::mcp::headers::{body_kind, media_type};
use megane_builder_client::wire::endpoint::{display_url, redirect_host, Endpoint};
use megane_builder_client::wire::jsonrpc::{error_in_body, parse_body};
use megane_builder_client::wire::sse::{SseDecoder, TapRecorder};
use megane_builder_client::wire::text::{is_one_line, one_line};
use serde_json::Value;

/// The target names, as `fuzz/fuzz_targets/<name>.rs` and `fuzz/corpus/<name>/`.
pub const TARGETS: &[&str] = &[
    "sse",
    "jsonrpc",
    "result",
    "discovery",
    "molblock",
    "launch",
    "server_url",
    "transfer",
    "structure_files",
];

/// Runs the target `name` on `data` (for the corpus replay test).
pub fn run(name: &str, data: &[u8]) {
    match name {
        "sse" => sse(data),
        "jsonrpc" => jsonrpc(data),
        "result" => result(data),
        "discovery" => discovery(data),
        "molblock" => molblock(data),
        "launch" => launch(data),
        "server_url" => server_url(data),
        "transfer" => transfer(data),
        "structure_files" => structure_files(data),
        other => panic!("unknown fuzz target {other}"),
    }
}

/// The sanitiser's rule for a message shown to a person (`wire::text::is_one_line`): one
/// line, no control character, no invisible direction control, not blank-padded. (Long composed
/// messages may exceed `MAX_LINE_CHARS`, and a quoted excerpt may keep its inner spaces.)
pub fn assert_one_line(context: &str, message: &str) {
    assert!(
        is_one_line(message),
        "{context}: error is not one line: {message:?}"
    );
    assert_eq!(
        message.trim(),
        message,
        "{context}: error is padded: {message:?}"
    );
}

/// A body error as the client shows it.
fn body_error(e: BodyError) -> String {
    McpError::from(e).to_string()
}

/// Splits `data` into chunks whose sizes come from its first byte (1–16 bytes each, varied), so a
/// decoder sees every possible cut of a stream.
fn chunks(data: &[u8]) -> Vec<&[u8]> {
    let Some((&seed, rest)) = data.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut at = 0;
    let mut i = 0usize;
    while at < rest.len() {
        let size = 1 + (usize::from(seed).wrapping_mul(31).wrapping_add(i * 7) % 16);
        let end = (at + size).min(rest.len());
        out.push(&rest[at..end]);
        at = end;
        i += 1;
    }
    out
}

/// SSE decoder: no panic; decoding in arbitrary chunks gives the same events (and the same
/// error) as decoding in one piece; an event never exceeds the cap.
pub fn sse(data: &[u8]) {
    const CAP: usize = 256;
    let pieces = chunks(data);
    let whole: Vec<u8> = pieces.concat();
    let decode = |parts: &[&[u8]]| {
        let mut decoder = SseDecoder::new(CAP);
        let mut events = Vec::new();
        for part in parts {
            if let Err(e) = decoder.feed(part, &mut events) {
                return (events, Some(e.to_string()));
            }
        }
        let end = decoder.finish(&mut events).err().map(|e| e.to_string());
        (events, end)
    };
    let (by_chunks, err_chunks) = decode(&pieces);
    let (in_one, err_one) = decode(&[&whole]);
    assert_eq!(
        err_chunks.is_some(),
        err_one.is_some(),
        "chunking changed the outcome"
    );
    if err_one.is_none() {
        assert_eq!(by_chunks, in_one, "chunking changed the events");
    }
    for e in err_chunks.iter().chain(&err_one) {
        assert_one_line("sse", e);
    }
    // The cap counts input bytes; invalid UTF-8 becomes U+FFFD (3 bytes per byte at most).
    for event in &in_one {
        assert!(event.data.len() <= 3 * CAP);
    }
    // A data tap on the same chunks is handed each event's data as it comes (issue 10).
    let mut decoder = SseDecoder::new(CAP);
    let mut tap = TapRecorder::default();
    let mut events = Vec::new();
    let tapped = pieces
        .iter()
        .try_for_each(|part| decoder.feed_tapped(part, &mut events, &mut tap))
        .and_then(|()| decoder.finish_tapped(&mut events, &mut tap));
    if tapped.is_ok() && err_one.is_none() {
        if let Err(e) = tap.check(&events, &in_one) {
            panic!("the tap was handed other data: {e}");
        }
    }
    // The body reader on the same stream, chunked, without and with the Structure scan: the same
    // number of messages, or the same failure.
    let read = |scan: bool| {
        let mut reader = BodyReader::messages(body_kind(Some("text/event-stream")), 4096);
        if scan {
            reader.scan_structure();
        }
        let mut messages = 0;
        for part in &pieces {
            match reader.push(part) {
                Ok(m) => messages += m.len(),
                Err(e) => return Err(body_error(e)),
            }
        }
        reader
            .finish()
            .map(|m| messages + m.len())
            .map_err(body_error)
    };
    let plain = read(false);
    if let Err(e) = &plain {
        assert_one_line("sse body", e);
    }
    assert_eq!(read(true), plain, "the scan changed the messages");
}

/// JSON-RPC bodies and headers: the first line is a `Content-Type` (and two bytes of status), the
/// rest a body. Parsing never panics; every error and every shown body text is one line.
pub fn jsonrpc(data: &[u8]) {
    let split = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let head = String::from_utf8_lossy(&data[..split]);
    let body = data.get(split + 1..).unwrap_or(&[]);
    let status = u16::from_le_bytes([
        data.first().copied().unwrap_or(0),
        data.get(1).copied().unwrap_or(0),
    ]) % 1000;
    let content_type = Some(head.as_ref()).filter(|h| !h.is_empty());
    let _ = media_type(&head);
    let kind = body_kind(content_type);
    match parse_body(body) {
        Ok(messages) => {
            let _ = messages.len();
        }
        Err(e) => assert_one_line("parse_body", &e),
    }
    if let Some(error) = error_in_body(body) {
        let _ = error;
    }
    let shown = error_body_text(content_type, body)
        .map(one_line)
        .unwrap_or_default();
    assert!(!shown.contains(['\n', '\r']), "error body text: {shown:?}");
    assert_one_line("http_failure", &http_failure(status, &shown).to_string());
    assert_one_line("http_status", &http_status(status));
    let mut reader = BodyReader::messages(kind, 4096);
    let mut failed = false;
    for part in chunks(data) {
        if let Err(e) = reader.push(part) {
            assert_one_line("body", &body_error(e));
            failed = true;
            break;
        }
    }
    if !failed {
        if let Err(e) = reader.finish() {
            assert_one_line("body", &body_error(e));
        }
    }
}

fn marker(apply: Apply) -> Marker {
    Marker {
        contract: 1,
        category: Category::Bulk,
        apply,
        document: DocumentUse::Optional,
        stochastic: false,
        expected_seconds: None,
    }
}

/// A small open document (one water in a 20 Å cell) for insert plans.
fn document() -> Structure {
    serde_json::from_str(
        r#"{"elements":[8,1,1],"positions":[9.994,10.3872,10.0,9.206,9.8042,10.0,10.8,9.8086,10.0],
            "cell":[20.0,0,0,0,20.0,0,0,0,20.0],"bonds":[[0,1],[0,2]]}"#,
    )
    .expect("the fuzz document parses")
}

/// Result bytes → interpret → plan, both apply modes. Differential: where the bytes are JSON,
/// the parsed-object path (`interpret_call_value`) gives the same outcome as the bytes path on
/// the same document.
pub fn result(data: &[u8]) {
    // The call scan fed in pieces (as the remote call feeds it) finds what the one-piece scan finds.
    let show = |scan: megane_structure_scan::CallScan| match scan {
        megane_structure_scan::CallScan::Read(s, range) => format!("{range:?} {s:?}"),
        megane_structure_scan::CallScan::Declined => "declined".to_string(),
        megane_structure_scan::CallScan::Absent => "absent".to_string(),
    };
    let whole = show(megane_structure_scan::scan_call(data));
    let lengths = [
        1 + data.len() % 7,
        1,
        1 + usize::from(data.first().copied().unwrap_or(0)),
    ];
    let (pieces, _) = megane_structure_scan::scan_call_in_pieces(data, &lengths);
    assert_eq!(show(pieces), whole, "the call scan in pieces differs");
    let limits = ResultLimits::default();
    let doc = document();
    let parsed: Option<Value> = serde_json::from_slice(data).ok();
    for apply in [Apply::NewDocument, Apply::Insert] {
        let m = marker(apply);
        let by_bytes = interpret_call_bytes("fuzz", &m, data, &limits);
        if let Some(value) = &parsed {
            // The same document as bytes and as a parsed object (bytes written from the object:
            // text with a key twice has no parsed-object form, and the bytes path refuses it).
            let by_bytes =
                interpret_call_bytes("fuzz", &m, &serde_json::to_vec(value).unwrap(), &limits);
            let by_value = interpret_call_value("fuzz", &m, value);
            match (&by_bytes, &by_value) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "bytes and value paths differ"),
                (Err(a), Err(b)) => {
                    let _ = (a, b);
                }
                (a, b) => panic!("bytes path {a:?} but value path {b:?}"),
            }
        }
        match by_bytes {
            Ok(done) => {
                for w in &done.warnings {
                    assert!(!w.contains(['\n', '\r']), "warning: {w:?}");
                }
                for document in [None, Some(&doc)] {
                    if let Err(e) = plan_apply(&m, &done.result, document, &["frag-1".into()]) {
                        assert_one_line("plan_apply", &e);
                    }
                }
            }
            Err(e) => {
                assert!(!e.is_empty());
                assert_one_line("interpret", &e);
            }
        }
    }
}

const WATER: &str = "water\n  megane\n\n  3  2  0  0  0  0  0  0  0  0999 V2000\n    \
    0.0000    0.0000    0.1173 O   0  0  0  0  0  0  0  0  0  0  0  0\n    \
    0.0000    0.7572   -0.4692 H   0  0  0  0  0  0  0  0  0  0  0  0\n    \
    0.0000   -0.7572   -0.4692 H   0  0  0  0  0  0  0  0  0  0  0  0\n  \
    1  2  1  0\n  1  3  1  0\nM  END\n";

fn context() -> FormContext {
    FormContext {
        library: vec![LibraryMolecule {
            name: "water".into(),
            molblock: Some(WATER.into()),
            smiles: None,
        }],
        random_seed: Some(1),
        ..FormContext::default()
    }
}

/// The length of the `NUL` + form values part of a discovery input (0 when none).
fn values_len(data: &[u8]) -> usize {
    data.iter()
        .position(|&b| b == 0)
        .map_or(0, |i| data.len() - i)
}

/// The typed reading of the list's text (the page's parseToolList) classifies it exactly as the
/// `Value` reading does: the same toolbox, or the same refusal.
fn same_by_text(text: &[u8], list: &Value) {
    let text = std::str::from_utf8(text).expect("serde_json read it, so it is UTF-8");
    let by_value = parse_tool_list_with(list, Some("fuzz"), &mut SentSchemas);
    let by_text = parse_tool_list_text(text, Some("fuzz"), &mut SentSchemas, |_| {})
        .expect("the text is JSON serde_json reads");
    match (by_value, by_text) {
        (Ok((a, ea)), Ok((b, eb))) => {
            assert_eq!(a, b, "typed reading differs");
            assert_eq!(ea.len(), eb.len());
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        (a, b) => panic!("typed reading differs: {:?} vs {:?}", a.err(), b.err()),
    }
}

/// tools/list → forms → initial values → buildArguments (which validates against the input
/// schema). The input is a JSON tool list, optionally followed by a NUL byte and JSON form values.
pub fn discovery(data: &[u8]) {
    let (list, values) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    let Ok(list) = serde_json::from_slice::<Value>(list) else {
        return;
    };
    let values: Option<Value> = values.and_then(|v| serde_json::from_slice(v).ok());
    same_by_text(&data[..data.len() - values_len(data)], &list);
    let toolbox = match parse_tool_list(&list, Some("fuzz")) {
        Ok(t) => t,
        Err(e) => return assert_one_line("parse_tool_list", &e),
    };
    for hidden in toolbox
        .malformed
        .iter()
        .chain(&toolbox.unknown_apply)
        .chain(&toolbox.unsupported_contract)
    {
        assert_one_line("hidden tool", &hidden.reason);
    }
    let ctx = context();
    for button in &toolbox.buttons {
        if let Some(reason) = &button.disabled_reason {
            assert_one_line("disabled", reason);
        }
        let Some(form) = &button.form else { continue };
        let initial = initial_values(form, &ctx);
        for input in [Some(&initial), values.as_ref()].into_iter().flatten() {
            if let Err(problems) =
                build_arguments(&button.marker, form, &button.input_schema, input, &ctx)
            {
                for p in problems {
                    assert_one_line("build_arguments", &p.message);
                }
            }
        }
    }
}

/// Mol blocks: parsing never panics, errors are one line naming a line; what parses writes back
/// and re-reads to the same atoms and bonds.
pub fn molblock(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match parse_molblock(&text) {
        Ok(molecule) => {
            if let Ok(written) = write_molblock(&molecule) {
                let again = parse_molblock(&written).expect("a written mol block re-reads");
                assert_eq!(again.elements, molecule.elements);
                assert_eq!(again.bonds, molecule.bonds);
            }
        }
        Err(e) => {
            assert!(e.starts_with("line "), "{e:?}");
            assert_one_line("molblock", &e);
        }
    }
}

/// §8 launch links: no panic, errors one line, a parsed link's URL passes the server URL check
/// and no `tools=`/`token=` part stays in the remaining fragment.
pub fn launch(data: &[u8]) {
    let hash = String::from_utf8_lossy(data);
    match parse_launch_fragment(&hash) {
        Ok(Some(link)) => {
            assert!(Endpoint::parse(&link.url).is_ok(), "{:?}", link.url);
            let rest = link.remaining_fragment.strip_prefix('#').unwrap_or("");
            for part in rest.split('&') {
                assert!(!part.starts_with("tools=") && !part.starts_with("token="));
            }
        }
        Ok(None) => {}
        Err(e) => assert_one_line("launch", &e),
    }
}

/// Server URLs: no panic; errors one line and never repeat the URL's query or credentials.
pub fn server_url(data: &[u8]) {
    let url = String::from_utf8_lossy(data);
    match Endpoint::parse(&url) {
        Ok(_) => {}
        Err(e) => assert_one_line("server url", &e.to_string()),
    }
    let (location, current) = url.split_once(' ').unwrap_or((&url, "127.0.0.1"));
    let host = redirect_host(location, current);
    assert!(!host.contains(['\n', '\r']), "redirect host: {host:?}");
    // A URL as a message shows it: one line, no query, no fragment, no user info.
    let shown = display_url(&url);
    assert!(is_one_line(&shown), "shown url: {shown:?}");
    assert!(!shown.contains(['?', '#']), "shown url: {shown:?}");
    let scheme = shown.split_once("://").filter(|(s, _)| {
        s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    let after_scheme = scheme.map_or(shown.as_str(), |(_, rest)| rest);
    let authority = after_scheme.split(['/', '\\']).next().unwrap_or("");
    assert!(!authority.contains('@'), "shown url: {shown:?}");
}

/// The offline Worker's transfer as the page reads it (`offline::transfer`, issue 12): any bytes,
/// and the same bytes behind the transfer's magic (so most reach its layout), are read or refused
/// with one line, never a panic; what reads is interpreted on the one path (§5.1 included), and
/// its plan made.
pub fn transfer(data: &[u8]) {
    use megane_builder_client::offline::transfer;
    let mut framed = transfer::MAGIC.to_vec();
    framed.extend_from_slice(data);
    let limits = ResultLimits::default();
    for bytes in [data, &framed] {
        let m = marker(Apply::NewDocument);
        let (outcome, _) = transfer::interpret("fuzz", &m, &bytes, &limits);
        match outcome {
            Ok(done) => {
                if let Err(e) = plan_apply(&m, &done.result, None, &[]) {
                    assert_one_line("plan_apply", &e);
                }
            }
            Err(e) => assert_one_line("transfer", &e),
        }
    }
}

/// The page's structure files (issue 33): any bytes read as each format (by the file name's
/// extension) are a structure or a one-line error, never a panic; a structure read writes in every
/// format that takes it, and what was written reads back to the same elements, the positions
/// within the format's precision (XYZ 1e-7 Å, mol 1e-4 Å, PDB 1e-3 Å, .gro 0.005 Å), the cell
/// where the format has one (XYZ, PDB, .gro), and the bonds where it has them (mol, PDB).
pub fn structure_files(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for name in ["f.xyz", "f.pdb", "f.mol", "f.gro", "f.json"] {
        let opened = match read_structure(name, &text) {
            Ok(opened) => opened,
            Err(e) => {
                assert_one_line("structure file", &e);
                continue;
            }
        };
        for note in &opened.notes {
            assert_one_line("note", note);
        }
        let s = &opened.structure;
        for format in Format::ALL {
            let written = match write_structure(s, format, &opened.title) {
                Ok(w) => w,
                Err(e) => {
                    assert_one_line("write", &e);
                    continue;
                }
            };
            let again = read_structure(&format!("g.{}", format.extension()), &written)
                .unwrap_or_else(|e| panic!("{name} written as {format:?} does not re-read: {e}"));
            let back = &again.structure;
            assert_eq!(back.elements, s.elements, "{name} as {format:?}: elements");
            let tolerance = match format {
                Format::Xyz => 1e-7 * (1.0 + max_abs(&s.positions)),
                Format::Mol => 1e-4,
                Format::Pdb => 1e-3,
                Format::Gro => 5e-3 + 1e-9,
            };
            for (a, b) in s.positions.iter().zip(&back.positions) {
                assert!(
                    (a - b).abs() <= tolerance,
                    "{name} as {format:?}: {a} read back as {b}"
                );
            }
            if format != Format::Mol {
                assert_eq!(
                    back.cell.is_some(),
                    s.cell.is_some() && s.cell != Some([0.0; 9]),
                    "{name} as {format:?}: cell"
                );
            }
            if matches!(format, Format::Mol | Format::Pdb) && !s.bonds.is_empty() {
                let sorted = |bonds: &[[u32; 2]]| {
                    let mut b: Vec<[u32; 2]> =
                        bonds.iter().map(|&[i, j]| [i.min(j), i.max(j)]).collect();
                    b.sort_unstable();
                    b
                };
                assert_eq!(
                    sorted(&back.bonds),
                    sorted(&s.bonds),
                    "{name} as {format:?}: bonds"
                );
            }
        }
    }
}

fn max_abs(values: &[f64]) -> f64 {
    values.iter().fold(0.0, |m, v| m.max(v.abs()))
}
