//! JSON-RPC 2.0 messages: building our requests and notifications, and classifying what a server
//! sends; the one JSON-RPC error type ([`RpcError`]), for the MCP client and for the `tools/call`
//! answers the contract core reads.

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::text::one_line;

/// A JSON-RPC error object: in a server's message ([`parse_body`]: each member read leniently) or
/// in a `tools/call` answer the contract core reads (its `Deserialize`: `code` an integer and
/// `message` a string when present, every other member ignored).
#[derive(Debug, Clone, PartialEq, Default, serde::Deserialize)]
pub struct RpcError {
    /// The error code (0 when absent).
    #[serde(default)]
    pub code: i64,
    /// The error message; `None` when absent (or, read leniently, not a string).
    #[serde(default, deserialize_with = "present_string")]
    pub message: Option<String>,
    /// The optional `data` member (read by [`RpcError::from_value`] only).
    #[serde(skip_deserializing)]
    pub data: Option<Value>,
}

/// A member that, when present, must be a string (`null` included in what is refused).
fn present_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    String::deserialize(d).map(Some)
}

impl RpcError {
    /// The error read leniently from a message's `error` member: a member of the wrong type is
    /// taken as absent.
    pub fn from_value(error: &Value) -> RpcError {
        RpcError {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string),
            data: error.get("data").cloned(),
        }
    }

    /// The message as the MCP client's errors quote it: `(no message)` when there is none.
    pub fn message_text(&self) -> &str {
        self.message.as_deref().unwrap_or("(no message)")
    }

    /// §6: the line of a JSON-RPC error inside a `tools/call` answer (the bytes path):
    /// `The server failed: <first line of its message>`, or `The server failed: error <code>`
    /// when it gives no message. (The MCP client's errors add the code as `(JSON-RPC error <code>)`
    /// after the message instead: `McpError::ServerFailed`.)
    pub fn failure_line(&self) -> String {
        let message = one_line(self.message.as_deref().unwrap_or(""));
        if message.is_empty() {
            format!("The server failed: error {}", self.code)
        } else {
            format!("The server failed: {message}")
        }
    }
}

/// Code for "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// 2026-07-28 `HeaderMismatchError`: required headers missing or not matching the body (a legacy
/// `initialize`, which carries no `MCP-Protocol-Version`, gets it from a 2026-07-28-only server).
pub const HEADER_MISMATCH: i64 = -32020;
/// Code for "invalid params": for `tools/call`, the server's refusal of the arguments.
pub const INVALID_PARAMS: i64 = -32602;
/// Code for "request cancelled" (sent by some servers after `notifications/cancelled`).
pub const REQUEST_CANCELLED: i64 = -32800;
/// Modern-era code for "unsupported protocol version".
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// One message received from the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// An answer to one of our requests.
    Response {
        /// The id it answers (`null` for errors about unparseable requests).
        id: Value,
        /// `result` (raw JSON text, read by whoever asked) or `error`.
        outcome: Result<RawJson, RpcError>,
    },
    /// A server notification.
    Notification {
        /// The method.
        method: String,
        /// The params (`null` when absent).
        params: Value,
    },
    /// A server-to-client request (e.g. `ping`).
    Request {
        /// The server's id (number or string).
        id: Value,
        /// The method.
        method: String,
        /// The params (`null` when absent).
        params: Value,
    },
}

/// One message as read from the wire: `result` is kept as raw JSON text borrowed from the body
/// (no copy), so a large `tools/call` result is read once, by the typed reader of the contract
/// core, and never becomes a `Value` tree here; the other members are values.
struct WireMessage<'a>(Option<MessageParts<'a>>);

/// The members of a message object (`None` for valid JSON that is not an object).
struct MessageParts<'a> {
    method: Option<Value>,
    id: Option<Value>,
    params: Option<Value>,
    result: Option<&'a RawValue>,
    error: Option<Value>,
}

impl<'de: 'a, 'a> Deserialize<'de> for WireMessage<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(WireMessageVisitor(std::marker::PhantomData))
    }
}

struct WireMessageVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for WireMessageVisitor<'a> {
    type Value = WireMessage<'a>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WireMessage<'a>, A::Error> {
        let (mut method, mut id, mut params, mut result, mut error) =
            (None, None, None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "method" => method = Some(map.next_value()?),
                "id" => id = Some(map.next_value()?),
                "params" => params = Some(map.next_value()?),
                "result" => result = Some(map.next_value::<&'de RawValue>()?),
                "error" => error = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(WireMessage(Some(MessageParts {
            method,
            id,
            params,
            result,
            error,
        })))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<WireMessage<'a>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(WireMessage(None))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<WireMessage<'a>, E> {
        Ok(WireMessage(None))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<WireMessage<'a>, E> {
        Ok(WireMessage(None))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<WireMessage<'a>, E> {
        Ok(WireMessage(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<WireMessage<'a>, E> {
        Ok(WireMessage(None))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<WireMessage<'a>, E> {
        Ok(WireMessage(None))
    }
    fn visit_unit<E: de::Error>(self) -> Result<WireMessage<'a>, E> {
        Ok(WireMessage(None))
    }
}

/// Classifies one message read from `text` (the whole body or event data, shared by the
/// messages' raw results).
fn classify(message: WireMessage, text: &Arc<String>) -> Result<Incoming, String> {
    let WireMessage(Some(MessageParts {
        method,
        id,
        params,
        result,
        error,
    })) = message
    else {
        return Err("a message that is not a JSON object".into());
    };
    let method = match method {
        Some(Value::String(s)) => Some(s),
        Some(_) => return Err("a message whose method is not a string".into()),
        None => None,
    };
    let params = params.unwrap_or(Value::Null);
    match (method, id) {
        (Some(method), Some(id)) if !id.is_null() => Ok(Incoming::Request { id, method, params }),
        (Some(method), _) => Ok(Incoming::Notification { method, params }),
        (None, id) => {
            let id = id.unwrap_or(Value::Null);
            if let Some(result) = result {
                Ok(Incoming::Response {
                    id,
                    outcome: Ok(RawJson::within(text, result.get())),
                })
            } else if let Some(err) = error {
                Ok(Incoming::Response {
                    id,
                    outcome: Err(RpcError::from_value(&err)),
                })
            } else {
                Err("a message with neither method, result nor error".into())
            }
        }
    }
}

/// A JSON value kept as its raw text (valid JSON, without surrounding white space): a response's
/// `result`, read later by whoever asked for it. It is a range of the message text it came in,
/// shared, not copied (a 30 MB result is held once).
#[derive(Clone)]
pub struct RawJson {
    text: Arc<String>,
    range: Range<usize>,
    /// The Structure read while the body streamed in, when the text has a placeholder instead
    /// of it (see [`Prescanned`]); taken once.
    prescanned: Option<Arc<Mutex<Option<Prescanned>>>>,
}

/// A `tools/call` result whose §5.1 Structure was read while its body streamed in (the MCP
/// client's body reader, `mcp::body`): the [`RawJson`] text holds the contract core's placeholder
/// (`structure::SPLICE_MARK`) where the Structure's text was.
pub struct Prescanned {
    /// The Structure's members, read by `megane-structure-scan`'s [`megane_structure_scan::CallStream`].
    pub structure: Box<megane_structure_scan::Scanned>,
    /// Its columns summed up by the scan (for `Structure::validate`).
    pub facts: Box<megane_structure_scan::checks::Facts>,
    /// The length in bytes of the Structure's text (for the §9 byte cap on the whole result).
    pub structure_len: usize,
}

impl RawJson {
    /// `part`, a slice of `text`, as a range of it.
    fn within(text: &Arc<String>, part: &str) -> RawJson {
        let start = (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
        RawJson {
            text: Arc::clone(text),
            range: start..start + part.len(),
            prescanned: None,
        }
    }

    /// Attaches the Structure read while the body streamed in (the text has the placeholder).
    pub fn with_prescanned(mut self, prescanned: Prescanned) -> RawJson {
        self.prescanned = Some(Arc::new(Mutex::new(Some(prescanned))));
        self
    }

    /// Takes the Structure read while the body streamed in, if there is one (once).
    pub fn take_prescanned(&self) -> Option<Prescanned> {
        let cell = self.prescanned.as_ref()?;
        let mut slot = cell
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        slot.take()
    }

    /// Where the JSON text stands in the message text it came in (byte offsets).
    pub fn span(&self) -> Range<usize> {
        self.range.clone()
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.text[self.range.clone()]
    }

    /// The top-level `resultType` of an object (2026-07-28 multi-round-trip requests), read
    /// without building a tree of the rest; `None` when absent, `null` or not an object.
    pub fn result_type(&self) -> Option<Value> {
        #[derive(serde::Deserialize)]
        struct Peek {
            #[serde(rename = "resultType", default)]
            result_type: Option<Value>,
        }
        serde_json::from_str::<Peek>(self.get())
            .ok()
            .and_then(|p| p.result_type)
    }

    /// The value as a `Value` tree (for small results: initialize, tools/list, plain tools).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.get()).unwrap_or(Value::Null)
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawJson").field(&self.get()).finish()
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

/// Parses a whole JSON body: one message, or an array of messages (2025-03-26 batches).
pub fn parse_body(bytes: &[u8]) -> Result<Vec<Incoming>, String> {
    parse_owned(bytes.to_vec())
}

/// [`parse_body`] on a body it may keep: the results' raw text stays in it (no copy).
pub fn parse_owned(bytes: Vec<u8>) -> Result<Vec<Incoming>, String> {
    match String::from_utf8(bytes) {
        Ok(text) => parse_text(text),
        // serde_json's own words for the bad byte (JSON text is UTF-8).
        Err(e) => {
            let error = serde_json::from_slice::<IgnoredAny>(e.as_bytes())
                .err()
                .map_or_else(|| "invalid UTF-8".to_string(), |e| e.to_string());
            Err(format!("the answer is not valid JSON ({error})"))
        }
    }
}

/// [`parse_owned`] on text already known to be UTF-8 (an SSE event's data): not checked again.
pub fn parse_text(text: String) -> Result<Vec<Incoming>, String> {
    let not_json = |e: serde_json::Error| format!("the answer is not valid JSON ({e})");
    let text = Arc::new(text);
    let batch = text.bytes().find(|b| !b.is_ascii_whitespace()) == Some(b'[');
    if batch {
        let items: Vec<WireMessage> = serde_json::from_str(&text).map_err(not_json)?;
        items.into_iter().map(|m| classify(m, &text)).collect()
    } else {
        let message: WireMessage = serde_json::from_str(&text).map_err(not_json)?;
        Ok(vec![classify(message, &text)?])
    }
}

/// Tries to read a JSON-RPC error out of an HTTP error body (for 400/404 classification).
pub fn error_in_body(bytes: &[u8]) -> Option<RpcError> {
    match parse_body(bytes).ok()?.into_iter().next()? {
        Incoming::Response {
            outcome: Err(e), ..
        } => Some(e),
        _ => None,
    }
}

/// A request object.
pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A notification object.
pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), json!("2.0"));
    m.insert("method".into(), json!(method));
    if let Some(p) = params {
        m.insert("params".into(), p);
    }
    Value::Object(m)
}

/// A successful response to a server request.
pub fn response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response to a server request.
pub fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Our ids are unsigned integers; matches a server's echo of one.
pub fn id_as_u64(id: &Value) -> Option<u64> {
    match id {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(body: &str) -> Vec<String> {
        parse_owned(body.as_bytes().to_vec())
            .unwrap()
            .into_iter()
            .map(|m| match m {
                Incoming::Response { outcome: Ok(r), .. } => r.get().to_string(),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_result_is_its_exact_text_in_the_body() {
        // Multi-byte characters and escapes before and inside the result; white space around it.
        let body = "{\"jsonrpc\":\"2.0\",\"_meta\":\"é😀\\\"\",\"id\":1,\"result\" :  {\"a\":\"é\\u00e9\\\"}\"} }";
        assert_eq!(results(body), ["{\"a\":\"é\\u00e9\\\"}\"}"]);
        let batch =
            "[ {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1, 2]},\n{\"id\":2,\"result\":\"ü\"} ]";
        assert_eq!(results(batch), ["[1, 2]", "\"ü\""]);
        let cloned = parse_owned(batch.as_bytes().to_vec()).unwrap();
        assert_eq!(cloned.clone(), cloned);
    }

    #[test]
    fn a_body_that_is_not_utf8_is_not_json() {
        let err = parse_owned(b"{\"id\":1,\"result\":\"\xff\"}".to_vec()).unwrap_err();
        assert!(err.starts_with("the answer is not valid JSON ("), "{err}");
    }
}
