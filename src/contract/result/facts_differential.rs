//! Differential test of the scan's facts (issue 10): `CallStream` sums up each column as it is
//! read ([`checks::Facts`]) and `Structure::validate` consults those facts instead of searching a
//! scanned Structure again. On random and hostile Structures (bonds out of range, to the same atom,
//! repeated, out of order; chain ids of 0, 1 or 2 characters; large residue ids; wrong lengths),
//! with their members in any order, read from bodies split anywhere, JSON and SSE-framed:
//! every fact equals what a plain search of the whole column finds, and the bytes path (scan and
//! facts) gives exactly the exact reader's outcome (the serde visitor and the full checks), every
//! refusal word for word.

use megane_structure_scan::checks::{Columns, Facts};

use super::differential::{assert_facts_hold, same, wrap, Split};
use super::{interpret_bytes, read_whole, ResultLimits};

/// xorshift64: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// True one time in `n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
    /// About `count` items (usually `count`, sometimes one more or one fewer), joined as a JSON
    /// array.
    fn list(&mut self, count: usize, mut item: impl FnMut(&mut Rng) -> String) -> String {
        let count = match self.below(12) {
            0 => count + 1,
            1 => count.saturating_sub(1),
            _ => count,
        };
        let items: Vec<String> = (0..count).map(|_| item(self)).collect();
        format!("[{}]", items.join(", "))
    }
}

/// The members of a random Structure (JSON text each), some of them hostile.
fn random_members(r: &mut Rng) -> Vec<String> {
    let n = r.below(24) as usize;
    let mut members = vec![
        format!(
            "\"elements\": {}",
            r.list(n, |r| (1 + r.below(118)).to_string())
        ),
        format!(
            "\"positions\": {}",
            r.list(3 * n, |r| format!(
                "{}.{}",
                r.below(200) as i64 - 100,
                r.below(1000)
            ))
        ),
        format!(
            "\"cell\": {}",
            if r.one_in(2) {
                "null".to_string()
            } else {
                r.list(9, |r| r.below(50).to_string())
            }
        ),
    ];
    // Bonds: in increasing order or not, with atoms out of range, to themselves, repeated.
    let m = r.below(2 * n as u64 + 1) as usize;
    // Atoms up to n - 1, or one or two beyond.
    let span = n as u64 + if r.one_in(3) { 1 + r.below(2) } else { 0 };
    let mut bonds: Vec<[u64; 2]> = (0..m)
        .map(|_| [r.below(span.max(1)), r.below(span.max(1))])
        .collect();
    if r.one_in(2) {
        bonds.sort_by_key(|&[a, b]| (a.min(b), a.max(b)));
        bonds.dedup_by_key(|&mut [a, b]| (a.min(b), a.max(b)));
        bonds.retain(|[a, b]| a != b || r.one_in(8));
    }
    if !bonds.is_empty() && r.one_in(4) {
        let k = r.below(bonds.len() as u64) as usize;
        let [a, b] = bonds[k];
        bonds.insert(k + 1, if r.one_in(2) { [b, a] } else { [a, b] });
    }
    let shown: Vec<String> = bonds.iter().map(|[a, b]| format!("[{a}, {b}]")).collect();
    members.push(format!("\"bonds\": [{}]", shown.join(",")));
    let b = bonds.len();
    if r.one_in(2) {
        members.push(format!(
            "\"bondOrders\": {}",
            r.list(b, |r| (1 + r.below(4)).to_string())
        ));
    } else if r.one_in(3) {
        members.push("\"bondOrders\": null".to_string());
    }
    if r.one_in(2) {
        members.push(format!(
            "\"molecules\": {}",
            r.list(n, |r| r.below(4).to_string())
        ));
    }
    if r.one_in(2) {
        members.push(format!(
            "\"residueIds\": {}",
            r.list(n, |r| match r.below(6) {
                0 => "999999999999999".to_string(),
                1 => "-999999999999999".to_string(),
                _ => (r.below(2000) as i64 - 1000).to_string(),
            })
        ));
    }
    for name in ["residueNames", "atomNames"] {
        if r.one_in(2) {
            members.push(format!(
                "\"{name}\": {}",
                r.list(n, |r| ["\"HOH\"", "\"NA\"", "\"O\""][r.below(3) as usize]
                    .to_string())
            ));
        }
    }
    if r.one_in(2) {
        members.push(format!(
            "\"chainIds\": {}",
            r.list(n, |r| match r.below(12) {
                0 => "\"\"".to_string(),
                1 => "\"AB\"".to_string(),
                2 => "\"é\"".to_string(),
                3 => "\"𝄞\"".to_string(),
                _ => "\"A\"".to_string(),
            })
        ));
    }
    if r.one_in(3) {
        members.push(format!(
            "\"formalCharges\": {}",
            r.list(n, |r| (r.below(5) as i64 - 2).to_string())
        ));
    }
    if r.one_in(3) {
        members.push(format!(
            "\"scalars\": {{\"q\": {}}}",
            r.list(n, |r| r.below(9).to_string())
        ));
    }
    if r.one_in(4) {
        members.push("\"extra\": {\"a\": [1, 2]}".to_string());
    }
    members
}

/// The members in a random order, with random white space between them.
fn shuffled(r: &mut Rng, mut members: Vec<String>) -> String {
    for k in (1..members.len()).rev() {
        members.swap(k, r.below(k as u64 + 1) as usize);
    }
    let gap = [",", ", ", ",\n  "][r.below(3) as usize];
    format!("{{{}}}", members.join(gap))
}

#[test]
fn facts_hold_and_the_outcome_is_the_full_checks_for_random_structures_in_any_order() {
    let limits = ResultLimits::default();
    let mut r = Rng(0x5DEE_CE66_D1CE_4E5B);
    let (mut read, mut refused) = (0, 0);
    for case in 0..600 {
        let members = random_members(&mut r);
        let structure = shuffled(&mut r, members);
        let body = wrap(&structure);
        let mut framed = b"event: message\ndata: ".to_vec();
        framed.extend_from_slice(body.as_bytes());
        framed.extend_from_slice(b"\n\n");
        let random: Vec<usize> = (0..16).map(|_| 1 + r.below(97) as usize).collect();
        for lengths in [&[1][..], &[7], &[64], &random, &[usize::MAX]] {
            let what = format!("case {case}, pieces {lengths:?}: {structure}");
            if let Some((s, facts)) =
                megane_structure_scan::facts_in_pieces(body.as_bytes(), lengths)
            {
                assert_facts_hold(&s, &facts, &what);
                read += 1;
            }
            for bytes in [body.as_bytes(), &framed] {
                let whole = read_whole(None, None, bytes, &limits);
                let split = Split {
                    body: bytes,
                    lengths,
                    asked_whole: Default::default(),
                };
                match (interpret_bytes(None, None, &split, &limits), &whole) {
                    (Ok(a), Ok(b)) => {
                        assert!(same(&a, b), "{what}");
                    }
                    (Err(a), Err(b)) => {
                        assert_eq!(&a, b, "{what}");
                        refused += 1;
                    }
                    (a, b) => panic!("{what}: pieces {a:?}, whole {b:?}"),
                }
            }
        }
    }
    // Not vacuous: most bodies are read by the scan, and many are refused by a §5.1 rule.
    assert!(read > 2000, "{read} read by the scan");
    assert!(refused > 1000, "{refused} refused");
}

/// A Structure the scan placed and the reader then dropped (an outer `structuredContent` that the
/// envelope's inner result replaces) lends its facts to nothing: the Structure read afterwards
/// from the result's text, of the same shape, gets the exact reader's refusal. (Found in review:
/// facts bound to a Structure by the address of its columns could clear another that the
/// allocator placed in the freed blocks. Natively the blocks are not handed back here, so this
/// passed with that binding too; the facts now travel with their Structure, see the next test.)
#[test]
fn the_facts_of_a_dropped_structure_clear_no_other() {
    let limits = ResultLimits::default();
    let structure = |first: u8| {
        let elements: Vec<String> = std::iter::once(first.to_string())
            .chain(std::iter::repeat_n("8".to_string(), 999))
            .collect();
        format!(
            r#"{{"contract":1,"name":"x","structure":{{"positions":[{}],"elements":[{}],"cell":null,"bonds":[]}}}}"#,
            vec!["0"; 3000].join(","),
            elements.join(",")
        )
    };
    let inner = serde_json::to_string(&structure(0)).unwrap();
    let body = format!(
        r#"{{"structuredContent":{},"result":{{"content":[{{"type":"text","text":{inner}}}]}}}}"#,
        structure(8)
    );
    let whole = read_whole(None, None, body.as_bytes(), &limits);
    let error = whole.as_ref().expect_err("the text's Structure is refused");
    assert!(error.contains("structure.elements[0]: 0 is not"), "{error}");
    for _ in 0..20 {
        let split = Split {
            body: body.as_bytes(),
            lengths: &[usize::MAX],
            asked_whole: Default::default(),
        };
        assert_eq!(
            interpret_bytes(None, None, &split, &limits).err(),
            whole.clone().err()
        );
    }
}

/// The facts are consulted: a placed Structure's first check trusts them (here, facts that clear
/// an element the full search refuses), and a copy, which carries none, is searched in full.
#[test]
fn a_placed_structures_first_check_consults_its_facts() {
    let body = wrap(r#"{"elements":[8,1],"positions":[0,0,0,1,0,0],"cell":null,"bonds":[]}"#);
    let (scanned, facts) =
        megane_structure_scan::facts_in_pieces(body.as_bytes(), &[usize::MAX]).unwrap();
    let placed = super::super::structure::Structure {
        scanned: super::super::structure::ScanFacts::holding(*facts),
        ..super::super::structure::Structure::from(*scanned)
    };
    let mut changed = placed.clone();
    changed.elements[1] = 0;
    // The same columns with the facts of the read ones: the first check consults them.
    let lying = super::super::structure::Structure {
        scanned: super::super::structure::ScanFacts::holding(Facts::of(Columns {
            elements: &placed.elements,
            positions: &placed.positions,
            ..Columns::default()
        })),
        ..changed.clone()
    };
    assert_eq!(lying.validate(), Ok(()));
    // Taken by that check: the second searches.
    assert!(lying
        .validate()
        .unwrap_err()
        .starts_with("structure.elements[1]: 0"));
    assert!(changed
        .validate()
        .unwrap_err()
        .starts_with("structure.elements[1]: 0"));
    assert_eq!(placed.validate(), Ok(()));
}
