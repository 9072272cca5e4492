//! §4.1: reading a tool's `inputSchema`: local `$ref` into `$defs`, pydantic optionals and types.
//!
//! These helpers only look at a schema; they never validate an instance (that is [`super::validate`]).

use serde_json::{Map, Value};

/// Deepest chain of local `$ref`s followed before a schema is called cyclic.
const MAX_REF_DEPTH: usize = 16;

/// §4.1: a schema after local `$ref` resolution: the target's keys with the referring schema's own
/// keys laid over them (so `title`, `x-megane-widget` and the like written beside a `$ref` are kept).
///
/// `root` is the whole `inputSchema`, whose `$defs` (or legacy `definitions`) the pointer addresses.
/// Errors name the reference: a `$ref` that is not local, does not resolve, or loops.
pub fn resolve(schema: &Value, root: &Value) -> Result<Map<String, Value>, String> {
    let mut current = match schema {
        Value::Object(map) => map.clone(),
        Value::Bool(true) => Map::new(),
        _ => return Err("its schema is not an object".to_string()),
    };
    for _ in 0..MAX_REF_DEPTH {
        let Some(reference) = current.remove("$ref") else {
            return Ok(current);
        };
        let Some(pointer) = reference.as_str() else {
            return Err("its `$ref` is not a string".to_string());
        };
        let target = lookup_local(pointer, root)?;
        let mut merged = match target {
            Value::Object(map) => map.clone(),
            _ => {
                return Err(format!(
                    "its `$ref` {pointer} does not point to a schema object"
                ))
            }
        };
        for (key, value) in current {
            merged.insert(key, value);
        }
        current = merged;
    }
    Err("its `$ref` chain is cyclic or deeper than 16".to_string())
}

/// Follows a local JSON pointer such as `#/$defs/Molecule` inside `root`.
fn lookup_local<'a>(pointer: &str, root: &'a Value) -> Result<&'a Value, String> {
    let Some(path) = pointer.strip_prefix('#') else {
        return Err(format!(
            "its `$ref` {pointer} is not local (only `#/$defs/…` is supported)"
        ));
    };
    if path.is_empty() {
        return Ok(root);
    }
    root.pointer(path)
        .ok_or_else(|| format!("its `$ref` {pointer} does not resolve"))
}

/// The pydantic optional `anyOf: [T, {"type": "null"}]` (either order) or `type: [T, "null"]`:
/// returns T's schema and `true`; any other schema comes back unchanged with `false`.
///
/// §4.1 does not support `anyOf`, but an optional T is an optional field, not a refusal.
pub fn strip_nullable(schema: Map<String, Value>) -> (Map<String, Value>, bool) {
    if let Some(Value::Array(options)) = schema.get("anyOf") {
        if options.len() == 2 {
            let null_at = options.iter().position(is_null_schema);
            if let Some(null_at) = null_at {
                let inner = &options[1 - null_at];
                if let Value::Object(inner) = inner {
                    if !is_null_schema(&options[1 - null_at]) {
                        let mut merged = inner.clone();
                        for (key, value) in &schema {
                            if key != "anyOf" {
                                merged.insert(key.clone(), value.clone());
                            }
                        }
                        return (merged, true);
                    }
                }
            }
        }
    }
    if let Some(Value::Array(types)) = schema.get("type") {
        let non_null: Vec<&Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .collect();
        if non_null.len() == 1 && types.len() == 2 {
            let mut merged = schema.clone();
            merged.insert("type".to_string(), non_null[0].clone());
            return (merged, true);
        }
    }
    (schema, false)
}

fn is_null_schema(value: &Value) -> bool {
    value.get("type").and_then(Value::as_str) == Some("null")
        && value.as_object().is_some_and(|m| m.len() <= 3)
}

/// The single `type` of a schema, if it names exactly one.
pub fn single_type(schema: &Map<String, Value>) -> Option<&str> {
    schema.get("type").and_then(Value::as_str)
}

/// A string keyword of a schema (`title`, `description`, `x-megane-widget`, …).
pub fn str_key<'a>(schema: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    schema.get(key).and_then(Value::as_str)
}

/// A numeric keyword of a schema (`minimum`, `multipleOf`, …) as f64.
pub fn num_key(schema: &Map<String, Value>, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

/// An unsigned integer keyword (`minItems`, `maxLength`, …).
pub fn uint_key(schema: &Map<String, Value>, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

/// The names listed in a schema's `required`.
pub fn required_names(schema: &Map<String, Value>) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The keywords §4.1 does not support for form generation, in the order they are reported.
pub const UNSUPPORTED_KEYWORDS: &[&str] = &["oneOf", "anyOf", "allOf", "if", "not"];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ref_keeps_the_referring_schemas_own_keys() {
        let root = json!({"$defs": {"M": {"type": "object", "title": "Molecule"}}});
        let resolved = resolve(&json!({"$ref": "#/$defs/M", "title": "Solvent"}), &root).unwrap();
        assert_eq!(resolved["title"], "Solvent");
        assert_eq!(resolved["type"], "object");
    }

    #[test]
    fn external_and_cyclic_refs_are_errors() {
        let root = json!({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}});
        assert!(resolve(&json!({"$ref": "https://x/y"}), &root)
            .unwrap_err()
            .contains("not local"));
        assert!(resolve(&json!({"$ref": "#/$defs/A"}), &root)
            .unwrap_err()
            .contains("cyclic"));
        assert!(resolve(&json!({"$ref": "#/$defs/Z"}), &root)
            .unwrap_err()
            .contains("does not resolve"));
    }

    #[test]
    fn pydantic_optional_is_unwrapped() {
        let schema = json!({"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Smiles"});
        let (inner, nullable) = strip_nullable(schema.as_object().unwrap().clone());
        assert!(nullable);
        assert_eq!(inner["type"], "string");
        assert_eq!(inner["title"], "Smiles");
        let (same, nullable) = strip_nullable(
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
                .as_object()
                .unwrap()
                .clone(),
        );
        assert!(!nullable);
        assert!(same.contains_key("anyOf"));
    }
}
