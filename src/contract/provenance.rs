//! §7 provenance records: what Builder keeps for every applied result so the structure can be
//! rebuilt by calling the same tool with the same arguments.
//!
//! The document argument is replaced by `{"atoms": N, "sha256": hex}` (SHA-256 of its canonical
//! JSON, [`super::canonical`]); `argumentsSha256` hashes the canonical JSON of the recorded
//! arguments. A record never holds a server token: [`ServerIdentity`] has no token field, and the
//! URL is stored without user info, query or fragment.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::canonical::canonical_sha256;
use super::result::BuilderResult;

/// §7 `server`: which server produced the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerIdentity {
    /// The server id from the user's configuration.
    pub id: String,
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// The URL connected to (stripped of user info, query and fragment), for HTTP servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// §7: one applied result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvenanceRecord {
    /// The server.
    pub server: ServerIdentity,
    /// Tool name.
    pub tool: String,
    /// Contract version of the tool.
    pub contract: u64,
    /// The arguments as sent, with the document argument replaced by `{atoms, sha256}`.
    pub arguments: Value,
    /// Lower-case hex SHA-256 of the canonical JSON of `arguments` (as recorded).
    pub arguments_sha256: String,
    /// The result's provenance (strings and numbers).
    pub provenance: Map<String, Value>,
    /// Number of atoms applied.
    pub atoms: usize,
}

/// §7: builds the record for an applied result. `document_property` names the tool's document
/// argument (the `x-megane-widget: "document"` property), if it has one.
pub fn provenance_record(
    server: &ServerIdentity,
    tool: &str,
    arguments: &Value,
    document_property: Option<&str>,
    result: &BuilderResult,
    atoms_applied: usize,
) -> ProvenanceRecord {
    let arguments = recorded_arguments(arguments, document_property);
    ProvenanceRecord {
        server: ServerIdentity {
            url: server.url.as_deref().map(url_without_secrets),
            ..server.clone()
        },
        tool: tool.to_string(),
        contract: result.contract,
        arguments_sha256: canonical_sha256(&arguments),
        arguments,
        provenance: result.provenance.clone(),
        atoms: atoms_applied,
    }
}

/// The arguments with the document property replaced by its atom count and hash.
fn recorded_arguments(arguments: &Value, document_property: Option<&str>) -> Value {
    let mut recorded = arguments.clone();
    if let (Some(property), Value::Object(map)) = (document_property, &mut recorded) {
        if let Some(document) = map.get_mut(property) {
            *document = document_digest(document);
        }
    }
    recorded
}

/// `{"atoms": N, "sha256": hex}` for a §4.3 document payload (N from `elements`).
pub fn document_digest(document: &Value) -> Value {
    let atoms = document
        .get("elements")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    json!({ "atoms": atoms, "sha256": canonical_sha256(document) })
}

/// Drops `user:password@`, `?query` and `#fragment` from a URL, where tokens may hide.
fn url_without_secrets(url: &str) -> String {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    let base = &url[..end];
    match base.find("://") {
        Some(scheme_end) => {
            let (scheme, rest) = base.split_at(scheme_end + 3);
            let authority_end = rest.find('/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(authority_end);
            let host = authority.rsplit('@').next().unwrap_or(authority);
            format!("{scheme}{host}{path}")
        }
        None => base.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::structure::Structure;

    fn result() -> BuilderResult {
        BuilderResult {
            contract: 1,
            name: "water".into(),
            structure: Structure::default(),
            warnings: vec![],
            provenance: serde_json::from_str(r#"{"packmol":"21.2.3","seed":1}"#).unwrap(),
        }
    }

    fn server() -> ServerIdentity {
        ServerIdentity {
            id: "local".into(),
            name: "megane-builder-tools".into(),
            version: "0.1.0".into(),
            url: Some(
                "http://user:secret-token@127.0.0.1:8765/mcp?token=peer-token#token=x".into(),
            ),
        }
    }

    #[test]
    fn document_is_replaced_by_count_and_hash() {
        let args = json!({"document": {"positions": [0, 0, 0.5], "elements": [8]}, "seed": 1});
        let record = provenance_record(&server(), "solvate", &args, Some("document"), &result(), 3);
        // Canonical text {"elements":[8],"positions":[0,0,0.5]}, hashed with sha256sum.
        assert_eq!(
            record.arguments["document"],
            json!({"atoms": 1, "sha256": "ebde35eab71b4b76dc92d8709003ac47e34e2a2bdbdebe575dd9bf32d97d236b"})
        );
        assert_eq!(record.arguments["seed"], json!(1));
        assert_eq!(record.atoms, 3);
    }

    #[test]
    fn records_round_trip_and_hold_no_token() {
        let args = json!({"seed": 7});
        let record = provenance_record(&server(), "liquid_box", &args, None, &result(), 300);
        let text = serde_json::to_string(&record).unwrap();
        assert!(
            !text.contains("token") && !text.contains("secret"),
            "{text}"
        );
        assert_eq!(
            record.server.url.as_deref(),
            Some("http://127.0.0.1:8765/mcp")
        );
        let back: ProvenanceRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back, record);
        // printf '{"seed":7}' | sha256sum
        assert_eq!(
            record.arguments_sha256,
            "beced1fe696351bb996169a4f1987ca19b5f52f37c7ef3071f9c044cf3580bfc"
        );
    }
}
