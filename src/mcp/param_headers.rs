//! 2026-07-28 custom headers from tool parameters (SEP-2243): a tool's `inputSchema` may mark
//! properties with `"x-mcp-header": "<Name>"`; every `tools/call` then mirrors those arguments into
//! `Mcp-Param-<Name>` headers, so intermediaries can route without parsing bodies.
//!
//! One place for the rules: which annotations are valid ([`bindings`]: an RFC 9110 token, unique
//! case-insensitively, on a `string`, `integer` or `boolean` property reached through `properties`
//! only; a tool with an invalid one is excluded by the client), and how a value is encoded
//! ([`encode_value`]: plain when it is printable ASCII without surrounding whitespace, else the
//! `=?base64?…?=` form of its UTF-8 bytes; null or absent arguments send no header).

use base64::Engine as _;
use serde_json::Value;

/// The schema keyword.
pub const KEYWORD: &str = "x-mcp-header";
/// The header name prefix.
pub const PREFIX: &str = "Mcp-Param-";

/// One annotated parameter: the header's name (without the prefix) and the path of property names
/// from the arguments object to the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// `<Name>` of `Mcp-Param-<Name>`, as the schema spells it.
    pub header: String,
    /// Property names from the arguments object down to the value.
    pub path: Vec<String>,
}

/// RFC 9110 `token`: 1*tchar.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

/// The annotated parameters of a tool's `inputSchema`, or why the annotations are invalid (then the
/// tool must not be offered). A schema without annotations gives an empty list.
pub fn bindings(input_schema: &Value) -> Result<Vec<Binding>, String> {
    let mut out: Vec<Binding> = Vec::new();
    walk(input_schema, &mut Vec::new(), &mut out)?;
    let mut seen: Vec<String> = Vec::new();
    for b in &out {
        let lower = b.header.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!("{KEYWORD} {:?} is declared twice", b.header));
        }
        seen.push(lower);
    }
    Ok(out)
}

fn walk(schema: &Value, path: &mut Vec<String>, out: &mut Vec<Binding>) -> Result<(), String> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (name, prop) in props {
        path.push(name.clone());
        if let Some(header) = prop.get(KEYWORD) {
            let shown = path.join(".");
            let header = header
                .as_str()
                .ok_or_else(|| format!("{KEYWORD} of {shown} is not a string"))?;
            if !is_token(header) {
                return Err(format!(
                    "{KEYWORD} {header:?} of {shown} is not a valid header name"
                ));
            }
            let ty = prop.get("type").and_then(Value::as_str).unwrap_or("");
            if !matches!(ty, "string" | "integer" | "boolean") {
                return Err(format!(
                    "{KEYWORD} of {shown} is on a {} property (only string, integer and boolean)",
                    if ty.is_empty() { "untyped" } else { ty }
                ));
            }
            out.push(Binding {
                header: header.to_string(),
                path: path.clone(),
            });
        }
        walk(prop, path, out)?;
        path.pop();
    }
    Ok(())
}

/// A value as a header field value: strings plain when printable ASCII without leading or trailing
/// whitespace (and not looking like the Base64 form), else `=?base64?<standard Base64 of UTF-8>?=`;
/// integers in decimal; booleans `true`/`false`. `None` for null, objects and arrays (no header).
pub fn encode_value(value: &Value) -> Option<String> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null | Value::Array(_) | Value::Object(_) => return None,
    };
    let plain = text.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && text.trim() == text
        && !(text.starts_with("=?base64?") && text.ends_with("?="));
    Some(if plain {
        text
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(text.as_bytes())
        )
    })
}

/// The `Mcp-Param-*` headers of one call: one per binding whose argument is present and not null.
pub fn headers(bindings: &[Binding], arguments: &Value) -> Vec<(String, String)> {
    bindings
        .iter()
        .filter_map(|b| {
            let value = b.path.iter().try_fold(arguments, |v, k| v.get(k))?;
            encode_value(value).map(|v| (format!("{PREFIX}{}", b.header), v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_plain_or_base64() {
        assert_eq!(encode_value(&json!("us-west1")).unwrap(), "us-west1");
        assert_eq!(encode_value(&json!("us west 1")).unwrap(), "us west 1");
        assert_eq!(encode_value(&json!("")).unwrap(), "");
        assert_eq!(encode_value(&json!(42)).unwrap(), "42");
        assert_eq!(encode_value(&json!(false)).unwrap(), "false");
        assert_eq!(
            encode_value(&json!("Hello, 世界")).unwrap(),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(
            encode_value(&json!(" padded ")).unwrap(),
            "=?base64?IHBhZGRlZCA=?="
        );
        assert!(encode_value(&json!("\tindented"))
            .unwrap()
            .starts_with("=?base64?"));
        assert!(encode_value(&json!("line1\r\nline2"))
            .unwrap()
            .starts_with("=?base64?"));
        assert!(encode_value(&json!("=?base64?abc?="))
            .unwrap()
            .starts_with("=?base64?PT9"));
        assert_eq!(encode_value(&Value::Null), None);
    }

    #[test]
    fn invalid_annotations_are_refused() {
        let one = |prop: Value| bindings(&json!({"type": "object", "properties": {"v": prop}}));
        assert_eq!(
            one(json!({"type": "string", "x-mcp-header": "Region"})).unwrap(),
            vec![Binding {
                header: "Region".into(),
                path: vec!["v".into()]
            }]
        );
        for bad in [
            json!({"type": "string", "x-mcp-header": ""}),
            json!({"type": "string", "x-mcp-header": 5}),
            json!({"type": "object", "x-mcp-header": "Data"}),
            json!({"type": "array", "x-mcp-header": "Items"}),
            json!({"type": "null", "x-mcp-header": "Nil"}),
            json!({"type": "number", "x-mcp-header": "Score"}),
            json!({"type": "string", "x-mcp-header": "My Region"}),
            json!({"type": "string", "x-mcp-header": "Region:Primary"}),
            json!({"type": "string", "x-mcp-header": "Région"}),
            json!({"type": "string", "x-mcp-header": "Region\t1"}),
        ] {
            assert!(one(bad.clone()).is_err(), "{bad}");
        }
        let dup = json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "MyField"},
            "b": {"type": "string", "x-mcp-header": "myfield"}}});
        assert!(bindings(&dup).is_err());
    }

    #[test]
    fn headers_skip_null_and_absent_arguments() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "n": {"type": "object", "properties": {"deep": {"type": "integer", "x-mcp-header": "Deep"}}},
            "query": {"type": "string"}}});
        let b = bindings(&schema).unwrap();
        assert_eq!(
            headers(
                &b,
                &json!({"region": "eu", "verbose": null, "n": {"deep": 7}, "query": "q"})
            ),
            vec![
                ("Mcp-Param-Region".to_string(), "eu".to_string()),
                ("Mcp-Param-Deep".to_string(), "7".to_string())
            ]
        );
    }
}
