//! The wire shapes of a `tools/call` response (a `CallToolResult`, or a JSON-RPC envelope around
//! one) and their typed reader: straight into a [`BuilderResult`] (the §5.1 Structure by
//! `contract::structure`'s reader), every error naming its field.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use super::checked::BuilderResult;
use crate::contract::structure::fields::{
    at_path, without_position, Int, ListSeed, Nullable, Skip, Text,
};
use crate::contract::structure::Structure;
use crate::wire::jsonrpc::RpcError;
use crate::wire::text::{excerpt, one_line};

/// One line for a serde_json error: data errors already name their field; syntax errors keep
/// their position.
pub(super) fn describe_json_error(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let text = e.to_string();
    match e.classify() {
        Category::Data => with_field_path(one_line(without_position(&text))),
        Category::Syntax | Category::Eof | Category::Io => {
            one_line(&format!("result: not valid JSON: {text}"))
        }
    }
}

/// Keeps a message that starts with a field path (`structure.bonds[3]: …`); prefixes `result: `
/// to one that does not (serde's own `invalid type: …` for a wrong top-level shape).
pub(super) fn with_field_path(message: String) -> String {
    if starts_with_field_path(&message) {
        message
    } else {
        format!("result: {message}")
    }
}

/// Whether `message` starts with `<path>: `, a path being letters, digits and `._-[]`.
fn starts_with_field_path(message: &str) -> bool {
    match message.split_once(": ") {
        Some((path, _)) => {
            !path.is_empty()
                && path
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '[' | ']' | '_' | '-'))
        }
        None => false,
    }
}

/// Servers that put the BuilderResult JSON in a single text item instead of `structuredContent`.
pub(super) fn builder_result_from_text(content: &[ContentItem]) -> Result<BuilderResult, String> {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|item| item.text.as_deref())
        .collect();
    match texts.as_slice() {
        // `from_slice`, as the bytes path: one reader instance in the package, not a second one
        // for `&str` input (same result and errors: the text is already UTF-8).
        [text] if text.trim_start().starts_with('{') => {
            serde_json::from_slice::<BuilderResult>(text.as_bytes())
                .map_err(|e| format!("content[0] (JSON text): {}", describe_json_error(&e)))
        }
        _ => Err("structuredContent: missing; the tool returned no BuilderResult".to_string()),
    }
}

/// A `tools/call` response on the wire: the `CallToolResult` fields and, for a JSON-RPC envelope,
/// `result` / `error`. Unknown fields (`jsonrpc`, `id`, `_meta`, `resultType`) are ignored. Only
/// a JSON object is accepted (serde's derive alone would also take an array).
#[derive(Debug, Default)]
pub struct CallResultWire {
    /// `content`: text (and other) items.
    pub content: Option<Vec<ContentItem>>,
    /// `isError`.
    pub is_error: Option<bool>,
    /// `structuredContent`, read straight into the typed result.
    pub structured_content: Option<BuilderResult>,
    /// JSON-RPC envelope: the `CallToolResult`.
    pub result: Option<Box<CallResultWire>>,
    /// JSON-RPC envelope: an error instead of a result.
    pub error: Option<RpcError>,
}

/// The derive-generated field reader behind [`CallResultWire`].
#[derive(Deserialize)]
struct CallResultFields {
    #[serde(default, deserialize_with = "content_field")]
    content: Option<Vec<ContentItem>>,
    #[serde(default, rename = "isError", deserialize_with = "is_error_field")]
    is_error: Option<bool>,
    #[serde(
        default,
        rename = "structuredContent",
        deserialize_with = "structured_content_field"
    )]
    structured_content: Option<BuilderResult>,
    #[serde(default, deserialize_with = "envelope_result_field")]
    result: Option<Box<CallResultWire>>,
    #[serde(default, deserialize_with = "rpc_error_field")]
    error: Option<RpcError>,
}

impl<'de> Deserialize<'de> for CallResultWire {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(CallResultVisitor)
    }
}

struct CallResultVisitor;

impl<'de> Visitor<'de> for CallResultVisitor {
    type Value = CallResultWire;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a CallToolResult or JSON-RPC response object")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<CallResultWire, A::Error> {
        let fields = CallResultFields::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(CallResultWire {
            content: fields.content,
            is_error: fields.is_error,
            structured_content: fields.structured_content,
            result: fields.result,
            error: fields.error,
        })
    }
}

/// One MCP content item; only `type` and `text` matter here.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ContentItem {
    /// `type`: `"text"`, `"image"`, …
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// `text` of a text item.
    #[serde(default)]
    pub text: Option<String>,
}

fn content_field<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<ContentItem>>, D::Error> {
    Option::<Vec<ContentItem>>::deserialize(d).map_err(|e| at_path("content", e))
}

/// Errors inside the BuilderResult already name their field (`structure.bonds[3]: …`); a wrong
/// shape of `structuredContent` itself gets its name.
fn structured_content_field<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<BuilderResult>, D::Error> {
    Option::<BuilderResult>::deserialize(d).map_err(|e| {
        let text = e.to_string();
        let text = without_position(&text);
        if starts_with_field_path(text) {
            de::Error::custom(text)
        } else {
            de::Error::custom(format!("structuredContent: {text}"))
        }
    })
}

fn is_error_field<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Option::<bool>::deserialize(d).map_err(|e| at_path("isError", e))
}

fn envelope_result_field<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Box<CallResultWire>>, D::Error> {
    Option::<Box<CallResultWire>>::deserialize(d)
}

fn rpc_error_field<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RpcError>, D::Error> {
    Option::<RpcError>::deserialize(d).map_err(|e| at_path("error", e))
}

impl<'de> Deserialize<'de> for BuilderResult {
    /// §5 wire format without the marker check (see [`check_builder_result`](super::check_builder_result)); errors name the
    /// field.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(BuilderResultVisitor)
    }
}

struct BuilderResultVisitor;

impl<'de> Visitor<'de> for BuilderResultVisitor {
    type Value = BuilderResult;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a BuilderResult object (§5)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BuilderResult, A::Error> {
        let mut contract: Option<u64> = None;
        let mut name: Option<Option<String>> = None;
        let mut structure: Option<Structure> = None;
        let mut warnings: Option<Vec<String>> = None;
        let mut provenance: Option<Map<String, Value>> = None;
        while let Some(Text(key)) = map.next_key::<Text>()? {
            match key.as_str() {
                "contract" => {
                    once(contract.is_some(), "contract")?;
                    let raw: Int = map.next_value().map_err(|e| at_path("contract", e))?;
                    contract = Some(u64::try_from(raw.0).map_err(|_| {
                        de::Error::custom(format!("contract: {} is not a contract version", raw.0))
                    })?);
                }
                "name" => {
                    once(name.is_some(), "name")?;
                    let raw: Option<Text> = map.next_value().map_err(|e| at_path("name", e))?;
                    name = Some(raw.map(|t| t.0));
                }
                "structure" => {
                    once(structure.is_some(), "structure")?;
                    structure = Some(map.next_value().map_err(|e| at_path("structure", e))?);
                }
                "warnings" => {
                    once(warnings.is_some(), "warnings")?;
                    let raw = map
                        .next_value_seed(Nullable(ListSeed {
                            path: "warnings",
                            convert: |w: MaybeString| Ok(w.0),
                        }))
                        .map_err(|e| at_path::<A::Error>("warnings", e))?;
                    warnings = Some(raw.unwrap_or_default().into_iter().flatten().collect());
                }
                "provenance" => {
                    once(provenance.is_some(), "provenance")?;
                    provenance = Some(
                        map.next_value_seed(Nullable(ProvenanceSeed))
                            .map_err(|e| at_path::<A::Error>("provenance", e))?
                            .unwrap_or_default(),
                    );
                }
                _ => {
                    map.next_value_seed(Skip::TOP)
                        .map_err(|e| at_path::<A::Error>(&excerpt(&key), e))?;
                }
            }
        }
        Ok(BuilderResult {
            contract: contract.ok_or_else(|| de::Error::custom("contract: missing"))?,
            name: name.flatten().unwrap_or_default(),
            structure: structure.ok_or_else(|| de::Error::custom("structure: missing"))?,
            warnings: warnings.unwrap_or_default(),
            provenance: provenance.unwrap_or_default(),
        })
    }
}

fn once<E: de::Error>(already: bool, field: &str) -> Result<(), E> {
    if already {
        Err(E::custom(format!("{field}: appears twice")))
    } else {
        Ok(())
    }
}

/// A string, or anything else (skipped without building a value tree) as `None`.
struct MaybeString(Option<String>);

impl<'de> Deserialize<'de> for MaybeString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KeepScalar {
            stringify_bool: false,
        })
        .map(|v| {
            MaybeString(match v {
                Some(Value::String(s)) => Some(s),
                _ => None,
            })
        })
    }
}

/// Keeps strings and numbers (and, when asked, booleans as strings); drains anything else.
struct KeepScalar {
    stringify_bool: bool,
}

impl<'de> Visitor<'de> for KeepScalar {
    type Value = Option<Value>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string or a number")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Value::String(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(Value::String(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(Value::Number(v.into())))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(Value::Number(v.into())))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Number::from_f64(v).map(Value::Number))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(self.stringify_bool.then(|| Value::String(v.to_string())))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Skip::TOP.visit_seq(seq)?;
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Skip::TOP.visit_map(map)?;
        Ok(None)
    }
}

struct ProvenanceSeed;

impl<'de> DeserializeSeed<'de> for ProvenanceSeed {
    type Value = Map<String, Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(ProvenanceVisitor)
    }
}

struct ProvenanceVisitor;

impl<'de> Visitor<'de> for ProvenanceVisitor {
    type Value = Map<String, Value>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of strings and numbers")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Map::new();
        while let Some(Text(key)) = map.next_key::<Text>()? {
            let value = map
                .next_value_seed(KeepScalarSeed)
                .map_err(|e| at_path::<A::Error>(&format!("provenance.{}", excerpt(&key)), e))?;
            if let Some(value) = value {
                out.insert(key, value);
            }
        }
        Ok(out)
    }
}

struct KeepScalarSeed;

impl<'de> DeserializeSeed<'de> for KeepScalarSeed {
    type Value = Option<Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(KeepScalar {
            stringify_bool: true,
        })
    }
}
