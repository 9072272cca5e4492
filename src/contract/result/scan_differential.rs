//! Differential test of the bytes path's Structure reader (issue 10): the scanner
//! (`megane-structure-scan`, tried first) against the serde visitor (the exact reader, which
//! every refusal comes from), over every recorded fixture in `tests/fixtures`, every file
//! of the committed fuzz corpus of the `result` target, and hostile numbers and shapes.
//!
//! For each input: when the scanner's read succeeds, the visitor's read succeeds with the same
//! result, bit for bit (so `-0` stays −0.0); the public path ([`interpret_bytes`]) gives exactly
//! the visitor's outcome, its errors one line.

use std::path::{Path, PathBuf};

use serde_json::value::RawValue;

use super::differential::{assert_facts_hold, float_bits, same, wrap, Split};
use super::{interpret_bytes, read_call, read_whole, Interpreted, ResultLimits};
use crate::contract::structure::read::with_scan;
use crate::contract::structure::Structure;

/// Checks one body; returns whether the scanner read it.
fn check_body(body: &[u8], what: &str) -> bool {
    let limits = ResultLimits::default();
    let exact = with_scan(false, || read_call(None, None, body));
    let scanned = with_scan(true, || read_call(None, None, body));
    let public = interpret_bytes(None, None, &body, &limits);
    if let Ok(fast) = &scanned {
        match &exact {
            Ok(slow) => assert!(same(fast, slow), "{what}: scanner and visitor differ"),
            Err(e) => panic!("{what}: the scanner accepts what the visitor refuses ({e})"),
        }
    }
    // The unframed body: the public path's outcome is the visitor's.
    if !body.starts_with(b"event:") && !body.starts_with(b"data:") {
        match (&public, &exact) {
            (Ok(a), Ok(b)) => assert!(same(a, b), "{what}: public path differs"),
            (Err(a), Err(b)) => assert_eq!(a, b, "{what}"),
            (a, b) => panic!("{what}: public {a:?} but visitor {b:?}"),
        }
    }
    if let Err(e) = &public {
        assert!(!e.contains(['\n', '\r']), "{what}: two-line error {e:?}");
    }
    // The same text as a bare §5.1 Structure (the packed fixtures are Structures).
    let exact_s = with_scan(false, || serde_json::from_slice::<Structure>(body));
    let scanned_s = with_scan(true, || serde_json::from_slice::<Structure>(body));
    if let Ok(fast) = &scanned_s {
        let slow = exact_s.as_ref().unwrap_or_else(|e| {
            panic!("{what}: scanner accepts a Structure the visitor refuses: {e}")
        });
        assert!(
            fast == slow && float_bits(fast) == float_bits(slow),
            "{what}: Structure differs"
        );
    }
    same_in_every_split(body, what);
    same_in_pieces(body, &read_whole(None, None, body, &limits), what);
    // SSE-framed (a progress event first, each line of the body a data line): as the body.
    let mut framed =
        b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"
            .to_vec();
    for line in body.split(|&b| b == b'\n') {
        framed.extend_from_slice(b"data: ");
        framed.extend_from_slice(line);
        framed.push(b'\n');
    }
    framed.push(b'\n');
    if !body.starts_with(b"event:") && !body.starts_with(b"data:") {
        let sse = read_whole(None, None, &framed, &limits);
        same_in_pieces(&framed, &sse, what);
    }
    scanned.is_ok()
        || scanned_s.is_ok()
        || matches!(
            megane_structure_scan::scan_call(body),
            megane_structure_scan::CallScan::Read(..)
        )
}

/// The bytes path on the body in pieces (`interpretCall` on JavaScript bytes: sizes 2, 7, 4 KiB,
/// 64 KiB and one piece) gives `whole`, the exact reader's outcome on the whole body, refusals
/// word for word.
fn same_in_pieces(body: &[u8], whole: &Result<Interpreted, String>, what: &str) {
    let limits = ResultLimits::default();
    for lengths in [&[2][..], &[7], &[4096, 3], &[64 * 1024], &[usize::MAX]] {
        if lengths[0] < 7 && body.len() > 200_000 {
            continue;
        }
        let split = Split {
            body,
            lengths,
            asked_whole: Default::default(),
        };
        let pieces = interpret_bytes(None, None, &split, &limits);
        match (&pieces, whole) {
            (Ok(a), Ok(b)) => assert!(same(a, b), "{what}: pieces of {lengths:?} differ"),
            (Err(a), Err(b)) => assert_eq!(a, b, "{what}: pieces of {lengths:?}"),
            (a, b) => panic!("{what}: pieces of {lengths:?} give {a:?}, whole {b:?}"),
        }
    }
}

/// A call scan's outcome as text (`Debug` of f64 tells −0.0 from 0.0).
fn shown(scan: megane_structure_scan::CallScan) -> String {
    match scan {
        megane_structure_scan::CallScan::Read(s, range) => format!("{range:?} {s:?}"),
        megane_structure_scan::CallScan::Declined => "declined".to_string(),
        megane_structure_scan::CallScan::Absent => "absent".to_string(),
    }
}

/// The call scan fed in pieces (as the remote call feeds it while the body streams in: sizes 1,
/// 2, 7, 64 KiB and random) finds what the one-piece scan finds: the same Structure bit for bit
/// and range, or the same refusal; the rest it hands over is the body without the Structure.
fn same_in_every_split(body: &[u8], what: &str) {
    let one = megane_structure_scan::scan_call(body);
    let range = match &one {
        megane_structure_scan::CallScan::Read(_, range) => Some(range.clone()),
        _ => None,
    };
    let whole = shown(one);
    let mut seed = 0x2545_F491_4F6C_DD1Du64 ^ body.len() as u64;
    let random: Vec<usize> = (0..32)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            1 + (seed % 4099) as usize
        })
        .collect();
    for lengths in [&[1][..], &[2], &[7], &[64 * 1024], &random] {
        if let Some((s, facts)) = megane_structure_scan::facts_in_pieces(body, lengths) {
            assert_facts_hold(&s, &facts, what);
        }
        let (scan, rest) = megane_structure_scan::scan_call_in_pieces(body, lengths);
        let pieces = shown(scan);
        assert!(
            pieces == whole,
            "{what}: pieces of {:?} read differently",
            &lengths[..1]
        );
        if let (Some(rest), Some(range)) = (rest, &range) {
            let mut expected = body[..range.start].to_vec();
            expected.push(b'@');
            expected.extend_from_slice(&body[range.end..]);
            assert!(rest == expected, "{what}: the rest differs");
        }
    }
}

/// A hostile body cut at every byte (a truncated body), and split in two at every byte: the
/// pieces read as the one-piece scan reads the same bytes.
fn cut_everywhere(body: &[u8], what: &str) {
    for at in 0..=body.len() {
        same_in_every_split(&body[..at], what);
        let (two, _) = megane_structure_scan::scan_call_in_pieces(body, &[at, body.len()]);
        let (one, _) = megane_structure_scan::scan_call_in_pieces(body, &[body.len()]);
        assert_eq!(shown(two), shown(one), "{what}: split at {at}");
    }
}

/// The body, and every value inside it down to three levels (raw text as sent, and the text of
/// string values: recorded exchanges keep bodies as strings).
fn bodies_of(text: &[u8], depth: usize, out: &mut Vec<Vec<u8>>) {
    out.push(text.to_vec());
    if depth == 0 {
        return;
    }
    if let Ok(map) = serde_json::from_slice::<Vec<(String, &RawValue)>>(text).or_else(|_| {
        serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(text).map(|_| vec![])
    }) {
        for (_, raw) in map {
            bodies_of(raw.get().as_bytes(), depth - 1, out);
        }
    }
    if let Ok(map) =
        serde_json::from_slice::<std::collections::BTreeMap<String, Box<RawValue>>>(text)
    {
        for raw in map.values() {
            if let Ok(s) = serde_json::from_str::<String>(raw.get()) {
                out.push(s.into_bytes());
            } else {
                bodies_of(raw.get().as_bytes(), depth - 1, out);
            }
        }
    }
    if let Ok(items) = serde_json::from_slice::<Vec<Box<RawValue>>>(text) {
        for raw in items.iter().take(50) {
            bodies_of(raw.get().as_bytes(), depth - 1, out);
        }
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn scanner_agrees_with_the_visitor_on_every_fixture_and_corpus_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    files_under(&root.join("tests/fixtures"), &mut files);
    let fixtures = files.len();
    files_under(&root.join("fuzz/corpus/result"), &mut files);
    // The minimised `result` corpus (fuzz/cmin.sh) keeps 761 files: a much smaller one is a lost corpus.
    assert!(
        fixtures > 50 && files.len() > fixtures + 500,
        "{} fixtures, {} corpus files",
        fixtures,
        files.len() - fixtures
    );
    let (mut bodies, mut scanned) = (0, Vec::new());
    for path in &files {
        let text = std::fs::read(path).unwrap();
        let mut all = Vec::new();
        bodies_of(&text, 3, &mut all);
        for body in &all {
            bodies += 1;
            if check_body(body, &path.display().to_string()) {
                scanned.push(path.clone());
            }
        }
    }
    // Not vacuous: the recorded results and the packed Structures took the scanner.
    for name in [
        "call-liquid_box.json",
        "call-solvate.json",
        "call-polymer_chain.json",
    ] {
        assert!(
            scanned
                .iter()
                .any(|p| p.ends_with(format!("megane-recorded/{name}"))),
            "{name} was not read by the scanner"
        );
    }
    assert!(scanned
        .iter()
        .any(|p| p.to_string_lossy().contains("/packed/")));
    println!("{bodies} bodies, {} read by the scanner", scanned.len());
}

fn check_structure(structure: &str) -> bool {
    check_body(wrap(structure).as_bytes(), structure)
}

#[test]
fn hostile_numbers_are_read_or_refused_as_the_visitor_does() {
    let numbers = [
        "0",
        "-0",
        "0.0",
        "-0.0",
        "-0e0",
        "0e-0",
        "1E2",
        "1e+2",
        "1e-2",
        "1e400",
        "-1e400",
        "1e-400",
        "-1e-400",
        "1e308",
        "1.7976931348623157e308",
        "1.7976931348623159e308",
        "4.9e-324",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "5e-324",
        "2.2250738585072011e-308",
        "0.30000000000000004",
        "0.1",
        "-12.345678901234567",
        "9007199254740993",
        "123456789012345",
        "1234567890123456",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "123456789012345678901234567890",
        "1e99999999999999999999",
        "0e99999999999999999999",
        "1e-99999999999999999999",
        "01",
        "00",
        "-01",
        "1.",
        ".5",
        "+1",
        "-",
        "1e",
        "1e+",
        "--1",
        "0x10",
        "NaN",
        "-NaN",
        "Infinity",
        "-Infinity",
        "inf",
        "1_0",
        "1.0.0",
        "\"1\"",
        "true",
        "null",
        "[]",
        "{}",
        "1 .5",
    ];
    let long = format!("0.{}", "1".repeat(800));
    let long_int = "9".repeat(400);
    let mut read = 0;
    for n in numbers
        .iter()
        .copied()
        .chain([long.as_str(), long_int.as_str()])
    {
        let cases = [
            format!(r#"{{"elements":[8],"positions":[{n},0,0],"cell":null,"bonds":[]}}"#),
            format!(
                r#"{{"elements":[8],"positions":[0,0,0],"cell":[{n},0,0,0,1,0,0,0,1],"bonds":[]}}"#
            ),
            format!(r#"{{"elements":[{n}],"positions":[0,0,0],"cell":null,"bonds":[]}}"#),
            format!(
                r#"{{"elements":[8,1],"positions":[0,0,0,1,0,0],"cell":null,"bonds":[[0,{n}]]}}"#
            ),
            format!(
                r#"{{"elements":[8,1],"positions":[0,0,0,1,0,0],"cell":null,"bonds":[[0,1]],"bondOrders":[{n}]}}"#
            ),
            format!(
                r#"{{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[],"molecules":[{n}],"residueIds":[{n}],"formalCharges":[{n}]}}"#
            ),
            // Integer columns with the number before a `,` (their compact-item step).
            format!(
                r#"{{"elements":[{n},8,1],"positions":[0,0,0,1,0,0,2,0,0],"cell":null,"bonds":[[0,1],[0,2]],"bondOrders":[{n},1],"molecules":[{n},0,0],"residueIds":[{n},1,1],"formalCharges":[{n},0,0]}}"#
            ),
            format!(
                r#"{{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[],"scalars":{{"q":[{n}]}}}}"#
            ),
            format!(
                r#"{{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[],"unknown":[{n}]}}"#
            ),
        ];
        for case in &cases {
            read += usize::from(check_structure(case));
        }
        cut_everywhere(wrap(&cases[0]).as_bytes(), &cases[0]);
    }
    assert!(read > 100, "{read}");
}

#[test]
fn hostile_shapes_are_read_or_refused_as_the_visitor_does() {
    let base = r#""elements":[8,1],"positions":[0,0,0,1,0,0],"cell":null,"bonds":[[0,1]]"#;
    let mut cases = vec![
        format!("{{{base}}}"),
        format!(" {{ {base} }} "),
        format!("{{{base},}}"),
        format!("{{,{base}}}"),
        format!("{{{base},\"elements\":[8,1]}}"),
        format!("{{{base},\"molecules\":null,\"molecules\":[0,0]}}"),
        format!("{{{base},\"x\":1,\"x\":2}}"),
        format!("{{{base},\"residueNames\":[\"HOH\",\"N\\u0041\"]}}"),
        format!("{{{base},\"residueNames\":[\"HOH\",\"HOH\"],\"atomNames\":[\"O\",\"H1\"]}}"),
        format!("{{{base},\"residueNames\":[\"H\u{1}\",\"HOH\"]}}"),
        format!("{{{base},\"residueNames\":[\"é\",\"日本\"]}}"),
        format!("{{{base},\"chainIds\":[\"A\",\"B\"]}}"),
        format!("{{{base},\"chainIds\":[\"A\",\"AB\"]}}"),
        format!("{{{base},\"scalars\":{{\"q\":[1,2],\"q\":[3,4]}}}}"),
        format!("{{{base},\"scalars\":{{\"q\":[1,2]}}}}"),
        format!("{{{base},\"scalars\":null}}"),
        format!("{{{base},\"bondOrders\":[5]}}"),
        format!("{{{base},\"bondOrders\":[1,2]}}"),
        format!("{{{base},\"formalCharges\":[2147483648,0]}}"),
        format!("{{{base},\"residueIds\":[9007199254740992,1]}}"),
        r#"{"elements":[8,1],"positions":[0,0,0,1,0,0],"cell":null,"bonds":[[0,1],[1,0]]}"#.into(),
        r#"{"elements":[8,1],"positions":[0,0,0,1,0,0],"cell":null,"bonds":[[0,1,]]}"#.into(),
        r#"{"elements":[8,1],"positions":[0,0,0,1,0,0],"cell":null,"bonds":[[0,4294967296]]}"#
            .into(),
        r#"{"elements":[8,1],"positions":[0,0,0,1,0,0,],"cell":null,"bonds":[]}"#.into(),
        r#"{"elements":[8,1],"positions":[0,0,0,1,0],"cell":null,"bonds":[]}"#.into(),
        r#"{"elements":[8,1] "positions":[0,0,0,1,0,0],"cell":null,"bonds":[]}"#.into(),
        r#"{"elements":[8,1],"positions":[0,0,0,1,0,0],"cell":null,"bonds":[]"#.into(),
        r#"{"elements":[8,1],"positions":[0,0,0,1,0,0],"cell":null}"#.into(),
        r#"{"elements":[8,1],"positions":[0,0,0,1,0,0],"cell":nul,"bonds":[]}"#.into(),
        r#"{"elements":[8,1],"positions":[0,0,0,1,0,0],"cell":[],"bonds":[]}"#.into(),
        r#"[]"#.into(),
        r#"null"#.into(),
        r#"{}"#.into(),
    ];
    for depth in [30, 31, 32, 33, 62, 63, 64, 65, 200] {
        let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        cases.push(format!("{{{base},\"x\":{nested}}}"));
        let objects = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        cases.push(format!("{{{base},\"x\":{objects}}}"));
    }
    let mut read = 0;
    for case in &cases {
        read += usize::from(check_structure(case));
        cut_everywhere(wrap(case).as_bytes(), case);
    }
    assert!(read >= 10, "{read}");
    // Invalid UTF-8 inside a string.
    let mut bytes = wrap(&format!("{{{base},\"residueNames\":[\"A\",\"B\"]}}")).into_bytes();
    let at = bytes.windows(3).position(|w| w == b"\"B\"").unwrap() + 1;
    bytes[at] = 0xFF;
    check_body(&bytes, "invalid UTF-8");
    // The same result SSE-framed reads the same.
    let json = wrap(&format!("{{{base}}}"));
    let sse = format!("event: message\ndata: {json}\n\n");
    let limits = ResultLimits::default();
    let a = interpret_bytes(None, None, &sse.as_bytes(), &limits).unwrap();
    let b = interpret_bytes(None, None, &json.as_bytes(), &limits).unwrap();
    assert!(same(&a, &b));
    // A BuilderResult in a text item (no structuredContent) takes the same reader.
    let text = serde_json::json!({"content": [{"type": "text", "text":
        format!(r#"{{"contract":1,"name":"t","structure":{{{base}}}}}"#)}]});
    assert!(check_body(text.to_string().as_bytes(), "text item"));
}

#[test]
fn the_structure_read_in_place_stands_only_where_serde_reads_a_structure() {
    let structure = r#"{"elements":[8,1],"positions":[0,0,0,1,0,0],"cell":null,"bonds":[[0,1]]}"#;
    let other = r#"{"elements":[6],"positions":[1,1,1],"cell":null,"bonds":[]}"#;
    let mark = r#""megane:structure read in place""#;
    let bodies = [
        wrap(structure),
        // The placeholder's own text sent by the server, at a Structure position and elsewhere.
        format!(
            r#"{{"structuredContent":{{"contract":1,"structure":{mark}}},"result":{{"structuredContent":{{"contract":1,"structure":{structure}}}}}}}"#
        ),
        format!(
            r#"{{"result":{{"structuredContent":{{"contract":1,"structure":{structure}}}}},"structuredContent":{{"contract":1,"structure":{mark}}}}}"#
        ),
        format!(r#"{{"structuredContent":{{"contract":1,"structure":{mark}}}}}"#),
        format!(
            r#"{{"content":[{{"type":"text","text":{mark}}}],"structuredContent":{{"contract":1,"structure":{structure}}}}}"#
        ),
        // Two results, two structures.
        format!(
            r#"{{"structuredContent":{{"contract":1,"structure":{other}}},"result":{{"structuredContent":{{"contract":1,"structure":{structure}}}}}}}"#
        ),
        format!(
            r#"{{"structuredContent":{{"contract":1,"structure":{structure}}},"structuredContent":{{"contract":1,"structure":{other}}}}}"#
        ),
        format!(
            r#"{{"structuredContent":{{"contract":1,"structure":{structure},"structure":{other}}}}}"#
        ),
        // Escapes before the structure, and keys that only decode to the field names.
        format!(
            r#"{{"content":[{{"type":"text","text":"a"structure":{{ \ ""}}],"structuredContent":{{"contract":1,"name":""x"","structure":{structure}}}}}"#
        ),
        format!(r#"{{"structuredContent":{{"contract":1,"structure":{structure}}}}}"#),
        format!(r#"{{"structuredContent":{{"contract":1,"structure":{structure}}}}}"#),
        format!(
            r#"{{"content":"x\q","structuredContent":{{"contract":1,"structure":{structure}}}}}"#
        ),
        format!(r#"{{"id":tru,"structuredContent":{{"contract":1,"structure":{structure}}}}}"#),
        format!(r#"{{"id":1 2,"structuredContent":{{"contract":1,"structure":{structure}}}}}"#),
        format!(r#"{{"structuredContent":{{"contract":1,"structure":{structure}}}}} trailing"#),
        format!("\u{feff}{}", wrap(structure)),
        format!(
            r#"{{"isError":true,"content":[],"structuredContent":{{"contract":1,"structure":{structure}}}}}"#
        ),
        format!(
            r#"{{"error":{{"code":-32602,"message":"no"}},"result":{{"structuredContent":{{"contract":1,"structure":{structure}}}}}}}"#
        ),
        format!(r#"{{"structuredContent":{{"contract":2,"structure":{structure}}}}}"#),
        format!(r#"[{{"structuredContent":{{"contract":1,"structure":{structure}}}}}]"#),
    ];
    let limits = ResultLimits::default();
    let mut located = 0;
    for body in &bodies {
        located += usize::from(matches!(
            megane_structure_scan::scan_call(body.as_bytes()),
            megane_structure_scan::CallScan::Read(..)
        ));
        let exact = with_scan(false, || read_call(None, None, body.as_bytes()));
        let public = interpret_bytes(None, None, &body.as_bytes(), &limits);
        match (&public, &exact) {
            (Ok(a), Ok(b)) => assert!(same(a, b), "{body}"),
            (Err(a), Err(b)) => assert_eq!(a, b, "{body}"),
            (a, b) => panic!("{body}: public {a:?} but visitor {b:?}"),
        }
    }
    assert!(located >= 15, "{located}");
}

/// The bytes path in pieces (issue 10, `interpretCall` on JavaScript bytes): a result whose
/// Structure the scan reads is never asked for whole, JSON or SSE-framed (after progress events,
/// a BOM, split anywhere), and reads as the whole body does; one the scan declines, or an SSE body
/// whose last event is not a message, is read whole, with the same outcome.
#[test]
fn a_body_the_scan_reads_is_never_asked_for_whole() {
    let atoms = 3000;
    let result = |names: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"placed"}}],"structuredContent":{{"contract":1,"name":"box","structure":{{"elements":[{}],"positions":[{}],"cell":null,"bonds":[[0,1]],"residueNames":[{}]}}}}}}}}"#,
            vec!["8"; atoms].join(","),
            vec!["1.25"; 3 * atoms].join(","),
            vec![names; atoms].join(",")
        )
    };
    let progress = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\r\n\r\n";
    let limits = ResultLimits::default();
    for (names, read_by_scan) in [(r#""HOH""#, true), (r#""\u0041""#, false)] {
        let json = result(names);
        let bodies = [
            (json.clone(), read_by_scan),
            // serde_json refuses a BOM before JSON: refused, after reading whole.
            (format!("\u{feff}  {json}"), false),
            (
                format!("{progress}event: message\ndata: {json}\n\n"),
                read_by_scan,
            ),
            (format!("\u{feff}{progress}data: {json}"), read_by_scan),
            // The last event is not a message: read whole.
            (format!("data: {json}\n\nevent: ping\ndata: 1\n\n"), false),
        ];
        for (body, scanned) in &bodies {
            let whole = read_whole(None, None, body.as_bytes(), &limits);
            assert_eq!(whole.is_ok(), !body.starts_with("\u{feff} "), "{whole:?}");
            for lengths in [&[1][..], &[2], &[7], &[1000, 3], &[usize::MAX]] {
                let split = Split {
                    body: body.as_bytes(),
                    lengths,
                    asked_whole: Default::default(),
                };
                match (interpret_bytes(None, None, &split, &limits), &whole) {
                    (Ok(a), Ok(b)) => assert!(same(&a, b), "{lengths:?}"),
                    (a, b) => assert_eq!(&a, b, "{lengths:?}"),
                }
                // A BOM cut in its first piece leaves the framing untold: read whole.
                let cut_bom = lengths[0] < 3 && body.starts_with('\u{feff}');
                let expected = usize::from(!scanned || cut_bom);
                assert_eq!(
                    split.asked_whole.get(),
                    expected,
                    "{lengths:?} {}",
                    &body[..20]
                );
            }
        }
    }
    // A refusal after the scan (a bond out of range) is the whole body's, word for word.
    let bad = result(r#""HOH""#).replace("[[0,1]]", &format!("[[0,{atoms}]]"));
    for body in [bad.clone(), format!("{progress}data: {bad}\n\n")] {
        let whole = read_whole(None, None, body.as_bytes(), &limits).unwrap_err();
        assert!(whole.starts_with("structure.bonds"), "{whole}");
        for lengths in [&[7][..], &[1000, 3], &[usize::MAX]] {
            let split = Split {
                body: body.as_bytes(),
                lengths,
                asked_whole: Default::default(),
            };
            assert_eq!(
                interpret_bytes(None, None, &split, &limits),
                Err(whole.clone())
            );
        }
    }
}
