//! JSON-RPC 2.0 messages: building our requests and notifications, and classifying what a server sends.

use serde_json::{json, Map, Value};

/// A JSON-RPC error object from the server.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The error code.
    pub code: i64,
    /// The error message.
    pub message: String,
    /// The optional `data` member.
    pub data: Option<Value>,
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
        /// `result` or `error`.
        outcome: Result<Value, RpcError>,
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

/// Classifies one JSON value as a JSON-RPC message.
pub fn classify(v: Value) -> Result<Incoming, String> {
    let Value::Object(mut m) = v else {
        return Err("a message that is not a JSON object".into());
    };
    let method = match m.remove("method") {
        Some(Value::String(s)) => Some(s),
        Some(_) => return Err("a message whose method is not a string".into()),
        None => None,
    };
    let id = m.remove("id");
    let params = m.remove("params").unwrap_or(Value::Null);
    match (method, id) {
        (Some(method), Some(id)) if !id.is_null() => Ok(Incoming::Request { id, method, params }),
        (Some(method), _) => Ok(Incoming::Notification { method, params }),
        (None, id) => {
            let id = id.unwrap_or(Value::Null);
            if let Some(result) = m.remove("result") {
                Ok(Incoming::Response {
                    id,
                    outcome: Ok(result),
                })
            } else if let Some(err) = m.remove("error") {
                Ok(Incoming::Response {
                    id,
                    outcome: Err(parse_error(&err)),
                })
            } else {
                Err("a message with neither method, result nor error".into())
            }
        }
    }
}

fn parse_error(err: &Value) -> RpcError {
    RpcError {
        code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
        message: err
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("(no message)")
            .to_string(),
        data: err.get("data").cloned(),
    }
}

/// Parses a whole JSON body: one message, or an array of messages (2025-03-26 batches).
pub fn parse_body(bytes: &[u8]) -> Result<Vec<Incoming>, String> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("the answer is not valid JSON ({e})"))?;
    match v {
        Value::Array(items) => items.into_iter().map(classify).collect(),
        other => Ok(vec![classify(other)?]),
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
