//! The hot part of reading a §5.1 Structure from JSON: a strict, single-pass scanner over the
//! text of one Structure object, straight into typed columns.
//!
//! It is a *fast path*, not a second definition of the rules: [`scan_structure`] returns
//! `Some` only for text that the package's serde reader (`megane-builder-client`'s
//! `contract::structure`) reads to exactly the same values, and `None` for anything it is not
//! sure of (a number that is not a plain JSON integer where an integer is expected, an escape in
//! a string, a value out of a field's range, a field twice, nesting deeper than
//! [`MAX_SKIP_DEPTH`], any syntax error…). The caller then reads the same text with the serde
//! reader, which gives the exact one-line error. The §5.1 cross-field rules (lengths, bond
//! ranges, duplicates) are not checked here; `Structure::validate` checks them once.
//!
//! This crate exists so the scanner can be built at `opt-level = 3` (a per-package profile
//! override in the root `Cargo.toml`) while the rest of the package is size-optimised. Its entry
//! point is not generic, so its code is generated here, at this crate's level.
//!
//! Numbers: JSON grammar checked here (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`), then integers of
//! up to 15 digits are converted exactly and everything else by `fast-float2` (correctly rounded,
//! as serde_json with its `float_roundtrip` feature, which this package's dependency graph turns
//! on, and as JavaScript's `JSON.parse`). A number that does not fit an `f64` (`1e400`) is left
//! to the serde reader ("number out of range").
//!
//! Files: [`scanned`](Scanned) the types it makes; `scanner.rs` the scanner; `numbers.rs` JSON
//! numbers and the integer ranges; `stream.rs` the same scan resumable piece by piece
//! ([`CallStream`]); [`checks`] the per-atom searches of the §5.1 checks and the facts a scan
//! sums up.

#![forbid(unsafe_code)]

pub mod checks;
mod numbers;
mod scanned;
mod scanner;
mod stream;

pub use scanned::{CallScan, Column, Scanned};
pub use scanner::MAX_SKIP_DEPTH;
pub use stream::{facts_in_pieces, scan_call_in_pieces, CallStream, Streamed};

use scanner::{Level, Scanner};

/// Reads the JSON text of one §5.1 Structure object (white space around it allowed). `None`
/// when the text is anything the scanner does not read with certainty; see the module comment.
pub fn scan_structure(text: &[u8]) -> Option<Scanned> {
    let mut scanner = Scanner { b: text, i: 0 };
    let out = scanner.structure()?;
    scanner.ws();
    (scanner.i == text.len()).then_some(out)
}

/// Finds and reads the Structure of a `tools/call` response body: `structuredContent.structure`
/// of a bare CallToolResult, or of `result` in a JSON-RPC envelope (the first one met). Returns
/// it with its byte range in `body`, so the caller can let its JSON reader parse the rest of the
/// body with a short placeholder in that range; the Structure itself is read once, here.
///
/// The members before the Structure are only walked (their strings' escapes are stepped over,
/// not checked); the caller's reader must then accept the whole body with the placeholder, which
/// checks them. [`CallScan::Declined`] when the Structure is there but declined as
/// [`scan_structure`] declines (the caller's exact reader then reads the body, once);
/// [`CallScan::Absent`] when the walk finds no Structure at that place.
pub fn scan_call(body: &[u8]) -> CallScan {
    let mut scanner = Scanner { b: body, i: 0 };
    if body.starts_with(&[0xEF, 0xBB, 0xBF]) {
        scanner.i = 3;
    }
    match scanner.locate(Level::Body) {
        Some(Some(start)) => match scanner.structure() {
            Some(structure) => CallScan::Read(Box::new(structure), start..scanner.i),
            None => CallScan::Declined,
        },
        _ => CallScan::Absent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numbers::digit_run;
    use crate::scanner::push_sized;

    fn scan(text: &str) -> Option<Scanned> {
        scan_structure(text.as_bytes())
    }

    #[test]
    fn digit_runs_read_eight_bytes_at_a_time_as_one_byte_at_a_time() {
        // Every byte value at every place of a run of digits, long runs, runs cut by the end of
        // the bytes: the same end and value as the per-digit rule.
        fn per_digit(b: &[u8], mut i: usize, mut m: u64) -> (usize, u64) {
            while let Some(&d @ b'0'..=b'9') = b.get(i) {
                m = m.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                i += 1;
            }
            (i, m)
        }
        let digits = b"9081726354"; // includes 0 and 9, the ends of the range
        for len in 0..=21 {
            let run: Vec<u8> = (0..len).map(|k| digits[k % digits.len()]).collect();
            for stop in 0..=255u8 {
                for tail in 0..=9 {
                    let mut b = run.clone();
                    b.push(stop);
                    b.extend(std::iter::repeat_n(b'7', tail));
                    for cut in [b.len(), len + 1, len] {
                        let b = &b[..cut.min(b.len())];
                        for start in [0, len.min(3)] {
                            assert_eq!(
                                digit_run(b, start, 42),
                                per_digit(b, start, 42),
                                "{:?} from {start}",
                                String::from_utf8_lossy(b)
                            );
                        }
                    }
                }
            }
        }
    }

    const WATER: &str = r#" {"elements":[8,1,1],"positions":[0,0,0, 0.96,0,0, -0.24,0.93,0],
        "cell":null,"bonds":[[0,1],[0,2]],"extra":{"ignored":[1,2,{"a":null}]}} "#;

    #[test]
    fn per_atom_lists_after_elements_end_in_blocks_of_their_size() {
        let atoms = 1000;
        let list = |n: usize, item: &str| vec![item; n].join(",");
        let body = format!(
            r#"{{"result":{{"structuredContent":{{"structure":{{"elements":[{}],"positions":[{}],"cell":null,"bonds":[],"molecules":[{}],"residueNames":[{}],"residueIds":[{}]}}}}}}}}"#,
            list(atoms, "8"),
            list(3 * atoms, "1.5"),
            list(atoms, "0"),
            list(atoms, "\"HOH\""),
            list(atoms, "1"),
        );
        let whole = match scan_call(body.as_bytes()) {
            CallScan::Read(s, _) => s,
            _ => panic!("not read"),
        };
        let (pieces, _) = scan_call_in_pieces(body.as_bytes(), &[7, 64, 1]);
        let CallScan::Read(streamed, _) = pieces else {
            panic!("not read in pieces")
        };
        for s in [&whole, &streamed] {
            assert_eq!(s.positions.capacity(), 3 * atoms);
            assert_eq!(s.molecules.as_ref().unwrap().capacity(), atoms);
            assert_eq!(s.residue_ids.as_ref().unwrap().capacity(), atoms);
            assert_eq!(s.residue_names.as_ref().unwrap().index.capacity(), atoms);
        }
        // Elements after positions, or a list longer than expected: plain doubling.
        let mut v = Vec::new();
        for k in 0..20 {
            push_sized(&mut v, k, 12);
        }
        assert_eq!(v.len(), 20);
        assert!(v.capacity() >= 20 && v.capacity() <= 24, "{}", v.capacity());
        // A long hostile `elements` list never makes a short list take more room than doubling.
        let mut v = Vec::new();
        for k in 0..3 {
            push_sized(&mut v, k, 1 << 40);
        }
        assert_eq!(v.capacity(), 8);
    }

    #[test]
    fn reads_water() {
        let s = scan(WATER).unwrap();
        assert_eq!(s.elements, [8, 1, 1]);
        assert_eq!(s.positions[3], 0.96);
        assert_eq!(s.positions[6], -0.24);
        assert_eq!(s.bonds, [[0, 1], [0, 2]]);
        assert_eq!(s.cell, None);
    }

    #[test]
    fn a_string_column_repeats_only_equal_strings() {
        let names = [
            "HOH", "HOH", "HOX", "HO", "HOH", "HOHH", "H", "HOH", "", "", "HOH",
        ];
        let column: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
        let text = format!(
            r#"{{"elements":[{ones}],"positions":[{zeros}],"cell":null,"bonds":[],"residueNames":[{c}],"atomNames":[ {spaced} ]}}"#,
            ones = vec!["1"; names.len()].join(","),
            zeros = vec!["0"; 3 * names.len()].join(","),
            c = column.join(","),
            spaced = column.join(" , "),
        );
        let expect = |c: &Column| {
            let read: Vec<&str> = c
                .index
                .iter()
                .map(|&t| c.table[t as usize].as_str())
                .collect();
            assert_eq!(read, names);
        };
        let s = scan(&text).unwrap();
        expect(s.residue_names.as_ref().unwrap());
        expect(s.atom_names.as_ref().unwrap());
        let body = format!(r#"{{"result":{{"structuredContent":{{"structure":{text}}}}}}}"#);
        assert!(same_in_pieces(body.as_bytes()));
        let Ok((s, _)) = outcome(scan_call(body.as_bytes())) else {
            panic!("not read")
        };
        expect(s.residue_names.as_ref().unwrap());
        expect(s.atom_names.as_ref().unwrap());
    }

    #[test]
    fn declines_what_it_is_not_sure_of() {
        let body = |positions: &str| {
            format!(r#"{{"elements":[8],"positions":{positions},"cell":null,"bonds":[]}}"#)
        };
        assert!(scan(&body("[1,2,3]")).is_some());
        for bad in [
            "[1,2,]",
            "[01,2,3]",
            "[1.,2,3]",
            "[.5,2,3]",
            "[1e400,2,3]",
            "[-1e400,0,0]",
            "[+1,2,3]",
            "[NaN,0,0]",
            "[Infinity,0,0]",
            "[1,2,3",
            "[\"1\",2,3]",
            "[1 2 3]",
            "[-,0,0]",
            "[1e,0,0]",
            "[1e+,0,0]",
            "null",
        ] {
            assert!(scan(&body(bad)).is_none(), "{bad}");
        }
        assert!(scan(
            r#"{"elements":[8],"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[]}"#
        )
        .is_none());
        assert!(scan(r#"{"elements":[8.0],"positions":[0,0,0],"cell":null,"bonds":[]}"#).is_none());
        assert!(scan(r#"{"elements":[119],"positions":[0,0,0],"cell":null,"bonds":[]}"#).is_none());
        assert!(scan(r#"{"elements":[8],"positions":[0,0,0],"bonds":[]}"#).is_none());
        assert!(
            scan(r#"{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[[0,1,2]]}"#).is_none()
        );
        assert!(scan(r#"{"elements":[8],"positions":[0,0,0],"cell":[1,2],"bonds":[]}"#).is_none());
        assert!(
            scan(r#"{"elem\u0065nts":[8],"positions":[0,0,0],"cell":null,"bonds":[]}"#).is_none()
        );
        let deep = format!(
            r#"{{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[],"x":{}{}}}"#,
            "[".repeat(40),
            "]".repeat(40)
        );
        assert!(scan(&deep).is_none());
    }

    /// Integers: at most 15 digits, no fraction or exponent, a lone `0` before other digits
    /// read as `0` (the list then declines at the next byte), the position after the token.
    #[test]
    fn integers_as_the_number_grammar_has_them() {
        let int = |text: &str| {
            let mut s = Scanner {
                b: text.as_bytes(),
                i: 0,
            };
            s.int().map(|v| (v, s.i))
        };
        assert_eq!(int("0"), Some((0, 1)));
        assert_eq!(int("-0,"), Some((0, 2)));
        assert_eq!(int("42]"), Some((42, 2)));
        assert_eq!(int("-118 "), Some((-118, 4)));
        assert_eq!(int("01"), Some((0, 1)));
        assert_eq!(int("999999999999999"), Some((999_999_999_999_999, 15)));
        assert_eq!(int("-999999999999999"), Some((-999_999_999_999_999, 16)));
        for refused in [
            "",
            "-",
            "-x",
            "+1",
            " 1",
            ".5",
            "1.0",
            "1.",
            "0.5",
            "1e3",
            "1E3",
            "0e0",
            "1000000000000000",
            "-1000000000000000",
            "99999999999999999999999",
        ] {
            assert_eq!(int(refused), None, "{refused:?}");
        }
    }

    #[test]
    fn numbers_are_read_as_json_parse_reads_them() {
        let body = |positions: &str| {
            format!(r#"{{"elements":[8],"positions":[{positions}],"cell":null,"bonds":[]}}"#)
        };
        for (text, expected) in [
            ("-0,0,0", -0.0f64),
            ("1e-400,0,0", 0.0),
            ("12345678901234567890123,0,0", 12345678901234567890123.0),
            ("0.1000000000000000055511151231257827,0,0", 0.1),
            (
                "2.2250738585072011e-308,0,0",
                f64::from_bits(0x000F_FFFF_FFFF_FFFF),
            ),
            ("1E2,0,0", 100.0),
        ] {
            let s = scan(&body(text)).unwrap();
            assert_eq!(s.positions[0].to_bits(), expected.to_bits(), "{text}");
        }
    }

    /// The outcome of a call scan as comparable data: the Structure and range, or which refusal.
    fn outcome(scan: CallScan) -> Result<(Scanned, std::ops::Range<usize>), &'static str> {
        match scan {
            CallScan::Read(s, range) => Ok((*s, range)),
            CallScan::Declined => Err("declined"),
            CallScan::Absent => Err("absent"),
        }
    }

    /// Every split given, and pieces of random lengths, read `body` as the one-piece scan does
    /// (same Structure bit for bit, same range, the rest the body with `@` for the Structure).
    fn same_in_pieces(body: &[u8]) -> bool {
        let whole = outcome(scan_call(body));
        let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ body.len() as u64;
        let random: Vec<usize> = (0..64)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                1 + (seed % 97) as usize
            })
            .collect();
        for lengths in [&[1][..], &[2], &[7], &[65536], &random, &[3, 1, 200]] {
            let (scan, rest) = scan_call_in_pieces(body, lengths);
            let pieces = outcome(scan);
            assert_eq!(
                format!("{pieces:?}"),
                format!("{whole:?}"),
                "pieces {:?} of {}",
                &lengths[..lengths.len().min(3)],
                String::from_utf8_lossy(body)
            );
            if let (Ok((_, range)), Some(rest)) = (&whole, rest) {
                let mut expected = body[..range.start].to_vec();
                expected.push(b'@');
                expected.extend_from_slice(&body[range.end..]);
                assert_eq!(rest, expected);
            }
        }
        whole.is_ok()
    }

    #[test]
    fn any_split_reads_as_the_whole_body() {
        let envelope = |structure: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"type":"text","text":"a \"b\", {{c}}"}}],"structuredContent":{{"contract":1,"name":"w","structure":{structure}}},"isError":false}}}}"#
            )
        };
        let full = r#"{"elements":[8, 1 ,1],"positions":[0,-0.0,1e-3,0.96,0,0,-0.24,0.93,12345678901234567890],
            "cell":[1,0,0,0,1,0,0,0,1],"bonds":[[0,1],[0, 2]],"bondOrders":[1,2],"molecules":[0,0,0],
            "residueNames":["HOH","HOH","Na,"],"residueIds":[1,1,-2],"atomNames":["O","H1","H1"],
            "chainIds":["A","A","B"],"formalCharges":[0,0,-1],"scalars":{"q":[0.5,1,2]},
            "extra":{"a":[1,{"b":null}],"c":"d"}}"#;
        let mut read = 0;
        for structure in [
            WATER,
            full,
            r#"{"elements":[],"positions":[],"cell":null,"bonds":[],"bondOrders":null,"residueNames":[]}"#,
        ] {
            read += usize::from(same_in_pieces(envelope(structure).as_bytes()));
            let bare = format!(r#"{{"structuredContent":{{"structure":{structure}}}}}"#);
            read += usize::from(same_in_pieces(bare.as_bytes()));
            let bom = [&[0xEF, 0xBB, 0xBF][..], bare.as_bytes()].concat();
            read += usize::from(same_in_pieces(&bom));
        }
        assert_eq!(read, 9);
        // Declined, absent, and the whole body cut at every byte (a truncated body).
        let body = envelope(full);
        for cut in 0..=body.len() {
            same_in_pieces(&body.as_bytes()[..cut]);
        }
        for bad in [
            r#"{"structuredContent":{"structure":{}}}"#,
            r#"{"structuredContent":{"structure":{"elements":[8],"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[]}}}"#,
            r#"{"structuredContent":{"structure":{"elements":[8],"positions":[0,0,0],"bonds":[]}}}"#,
            r#"{"structuredContent":{"structure":{"elements":[8],"positions":[1e400,0,0],"cell":null,"bonds":[]}}}"#,
            r#"{"structuredContent":{"structure":{"elements":[8],"positions":[1 2 3],"cell":null,"bonds":[]}}}"#,
            r#"{"structuredContent":{"structure":{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[],"residueNames":["a\u0062"]}}}"#,
            r#"{"content":[],"isError":true}"#,
            r#"{"structuredContent":{"structure":null}}"#,
            r#"[1,2]"#,
            "",
        ] {
            assert!(!same_in_pieces(bad.as_bytes()), "{bad}");
        }
    }
}
