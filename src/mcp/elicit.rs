//! Elicitation: a server asking the user for input (`elicitation/create`, legacy era; the same request
//! inside a 2026-07-28 `input_required` result). Form mode only: a flat object schema of primitive
//! properties. The Builder contract's tools do not elicit (§1), but servers in the wild do, so a host may
//! opt in with a hook; without one, every elicitation is declined at once.
//!
//! One place for the rules both paths share: which requests are form elicitations
//! ([`form_request`]), the form's initial values from the schema's defaults ([`defaults`]), and the
//! answer's shape with omitted fields filled from those defaults ([`answer`], SEP-1034).

use serde_json::{json, Map, Value};

/// The method of an elicitation request.
pub const METHOD: &str = "elicitation/create";

/// Identifies one elicitation the host must answer ([`crate::mcp::Client::answer_elicitation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ElicitId(pub u64);

/// What the user is asked (untrusted server text).
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// The server's message, shown above the form.
    pub message: String,
    /// The requested schema as sent (`type: "object"`, `properties`).
    pub requested_schema: Value,
    /// Initial form values: each property's `default`, when the schema gives one.
    pub content: Value,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Submitted, with the form's values (properties left out get their defaults).
    Accept(Value),
    /// Refused.
    Decline,
    /// Dismissed without a choice.
    Cancel,
}

/// Reads `elicitation/create` params as a form; an error names what is wrong (the server gets it
/// as a JSON-RPC error). URL mode and non-object schemas are not supported.
pub fn form_request(params: &Value) -> Result<Form, String> {
    let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
    if mode != "form" {
        return Err(format!(
            "elicitation mode {mode:?} is not supported (only \"form\")"
        ));
    }
    let schema = params
        .get("requestedSchema")
        .filter(|s| s.is_object())
        .ok_or("elicitation/create without a requestedSchema object")?;
    if schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("object")
        != "object"
    {
        return Err("the requestedSchema of an elicitation must be an object schema".into());
    }
    let message = params
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    Ok(Form {
        message,
        requested_schema: schema.clone(),
        content: Value::Object(defaults(schema)),
    })
}

/// Each property's `default` (primitive values only: string, number, integer, boolean, or an array
/// of strings for multi-select), by property name.
pub fn defaults(schema: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            match prop.get("default") {
                Some(v @ (Value::String(_) | Value::Number(_) | Value::Bool(_))) => {
                    out.insert(name.clone(), v.clone());
                }
                Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
                    out.insert(name.clone(), Value::Array(items.clone()));
                }
                _ => {}
            }
        }
    }
    out
}

/// The `ElicitResult` for `action`: `{action, content?}`; an accepted form's omitted fields get the
/// schema's defaults (SEP-1034), and content that is not an object is replaced by the defaults.
pub fn answer(schema: &Value, action: &Action) -> Value {
    match action {
        Action::Accept(content) => {
            let mut filled = defaults(schema);
            if let Value::Object(given) = content {
                for (k, v) in given {
                    filled.insert(k.clone(), v.clone());
                }
            }
            json!({"action": "accept", "content": Value::Object(filled)})
        }
        Action::Decline => json!({"action": "decline"}),
        Action::Cancel => json!({"action": "cancel"}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_omitted_fields_only() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "verified": {"type": "boolean", "default": true},
            "free": {"type": "string"}
        }});
        let form = form_request(&json!({"message": "m", "requestedSchema": schema})).unwrap();
        assert_eq!(
            form.content,
            json!({"name": "John Doe", "age": 30, "verified": true})
        );
        let a = answer(&schema, &Action::Accept(json!({"age": 41, "free": "x"})));
        assert_eq!(
            a,
            json!({"action": "accept", "content": {"name": "John Doe", "age": 41, "verified": true, "free": "x"}})
        );
        assert_eq!(
            answer(&schema, &Action::Decline),
            json!({"action": "decline"})
        );
    }

    #[test]
    fn url_mode_and_bad_schemas_are_refused() {
        assert!(form_request(&json!({"mode": "url", "url": "https://x"})).is_err());
        assert!(form_request(&json!({"message": "m"})).is_err());
        assert!(form_request(&json!({"requestedSchema": {"type": "string"}})).is_err());
    }
}
