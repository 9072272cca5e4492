//! §7: canonical JSON in the style of RFC 8785 (JCS), for the SHA-256 hashes in provenance
//! records.
//!
//! Object keys sorted by their UTF-16 code units, no whitespace, strings escaped as JSON requires
//! (`\"`, `\\`, `\b \f \n \r \t`, other control characters as `\u00xx`, everything else
//! literal), numbers formatted as ECMAScript's `Number.prototype.toString` does (crate `ryu-js`).
//! Integers whose magnitude is at most 2^53 print as integers; larger ones go through `f64`, as
//! JCS requires.

use serde_json::{Number, Value};
use sha2::{Digest, Sha256};

/// Largest integer magnitude an IEEE double holds exactly (2^53).
const MAX_EXACT_INTEGER: u64 = 1 << 53;

/// The canonical JSON text of `value`.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

/// Lower-case hex SHA-256 of the canonical JSON of `value`. The text is streamed into the hash,
/// never held whole (a 500 000-atom document is ~30 MB of it).
pub fn canonical_sha256(value: &Value) -> String {
    let mut hasher = Sha256::new();
    write_value(value, &mut hasher);
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Where canonical text goes: a `String`, or straight into a hash.
trait Sink {
    fn push_str(&mut self, text: &str);
    fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }
}

impl Sink for String {
    fn push_str(&mut self, text: &str) {
        String::push_str(self, text);
    }
}

impl Sink for Sha256 {
    fn push_str(&mut self, text: &str) {
        self.update(text.as_bytes());
    }
}

fn write_value(value: &Value, out: &mut impl Sink) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

/// ECMAScript number formatting.
fn write_number(n: &Number, out: &mut impl Sink) {
    if let Some(u) = n.as_u64().filter(|u| *u <= MAX_EXACT_INTEGER) {
        out.push_str(&u.to_string());
    } else if let Some(i) = n.as_i64().filter(|i| i.unsigned_abs() <= MAX_EXACT_INTEGER) {
        out.push_str(&i.to_string());
    } else {
        write_f64(n.as_f64().unwrap_or(0.0), out);
    }
}

fn write_f64(v: f64, out: &mut impl Sink) {
    if v == 0.0 || !v.is_finite() {
        // -0 prints as 0 in ECMAScript; JSON numbers are never NaN or infinite.
        out.push('0');
    } else {
        let mut buffer = ryu_js::Buffer::new();
        out.push_str(buffer.format_finite(v));
    }
}

/// JSON string escaping as JCS specifies (serde_json's escaping is exactly that).
fn write_string(s: &str, out: &mut impl Sink) {
    match serde_json::to_string(s) {
        Ok(text) => out.push_str(&text),
        Err(_) => out.push_str("\"\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_follow_ecmascript() {
        // RFC 8785 §3.2.2.3 examples.
        let v = json!([
            1e30,
            4.50,
            2e-3,
            0.000001,
            1e-7,
            1.0,
            -0.0,
            9007199254740993u64,
            333333333.3333333
        ]);
        assert_eq!(
            canonical_json(&v),
            "[1e+30,4.5,0.002,0.000001,1e-7,1,0,9007199254740992,333333333.3333333]"
        );
    }

    #[test]
    fn keys_sort_by_utf16_and_strings_escape() {
        // U+1F600 is the surrogate pair D83D DE00, so it sorts before U+FB33 in UTF-16 (not in
        // code points).
        let v = json!({"b": 1, "a": {"z": null, "\u{1F600}": true, "\u{FB33}": "\u{0}\n\"/"}});
        assert_eq!(
            canonical_json(&v),
            "{\"a\":{\"z\":null,\"\u{1F600}\":true,\"\u{FB33}\":\"\\u0000\\n\\\"/\"},\"b\":1}"
        );
    }

    #[test]
    fn streamed_hash_equals_hash_of_the_text() {
        let v = json!({"positions": [0.1, 1e21, -3], "name": "w\u{e9}ter", "cell": null});
        let text_hash: String = Sha256::digest(canonical_json(&v).as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(canonical_sha256(&v), text_hash);
    }

    #[test]
    fn sha256_of_a_known_text() {
        // printf '{"a":1}' | sha256sum
        assert_eq!(
            canonical_sha256(&json!({"a": 1})),
            "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
        );
    }
}
