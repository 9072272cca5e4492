//! §5, §5.1, §6 and §9: interpreting a `tools/call` result.
//!
//! Input is the raw response as bytes (JSON, or SSE-framed as a Streamable HTTP server sends it;
//! a JavaScript object is written back to JSON first; a parsed `serde_json::Value` is measured as
//! JSON), so every path has one typed reader and one byte cap ([`MAX_RESULT_BYTES`]): a bare
//! `CallToolResult`, or a JSON-RPC envelope `{"jsonrpc","id","result"}` /
//! `{"jsonrpc","id","error"}`. Output is a validated
//! [`BuilderResult`] with the text summary, or one line saying what is wrong. The byte cap is
//! checked before parsing (§9); one failure rejects the whole result (§6).
//!
//! Choices where the contract is silent:
//! - A tool error's line drops the `Error executing tool <name>: ` prefix the MCP SDKs add, so the
//!   form shows the server's own sentence.
//! - When `structuredContent` is absent, a single text content item holding a JSON object is
//!   read as the BuilderResult (servers that put JSON in text).
//! - `provenance`: strings and numbers are kept as sent, booleans become `"true"`/`"false"`,
//!   `null`, arrays and objects are dropped (the contract says strings / numbers only).
//! - `warnings` that are not strings are dropped; `warnings` that is not an array is an error.
//! - `contract` is required (the tool's marker says which one the result must carry).

//!
//! Files: this one reads a response (the entry points, the bytes path with its Structure scan, the
//! §6 lines of a refused call); `checked.rs` holds the result types and their one check, `wire.rs`
//! the wire shapes and their typed reader.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::marker::Marker;
use super::structure::fields::without_position;
use super::structure::read::{read_placed, SPLICE_MARK};
use super::structure::Structure;
use crate::wire::jsonrpc::{self, RpcError};
use crate::wire::sse::{DataTap, SseDecoder, SseEvent};
use crate::wire::text::{message_block, one_line};
use checked::check_result;
use megane_structure_scan::{CallStream, Streamed};
use wire::{builder_result_from_text, describe_json_error, with_field_path};

mod checked;
mod wire;

pub use checked::{
    check_builder_result, check_contract, check_result_size, BuilderResult, CheckedResult,
    Interpreted, ResultLimits, FALLBACK_NAME,
};
pub use wire::{CallResultWire, ContentItem};

/// §6: our own copy of the BuilderResult JSON Schema (2020-12), written from the contract and
/// lenient to unknown fields (§11). The typed reader enforces everything it states and the §5.1
/// rules it cannot state; a native test checks that both agree.
pub const BUILDER_RESULT_SCHEMA: &str = include_str!("../builder_result.schema.json");

/// §5/§6: interpret a `tools/call` response body: JSON, or the same framed as a
/// `text/event-stream` (MCP Streamable HTTP; the JSON-RPC response is its last message event).
/// The size cap is checked before parsing.
pub fn interpret_call_bytes(
    tool_name: &str,
    marker: &Marker,
    bytes: &[u8],
    limits: &ResultLimits,
) -> Result<Interpreted, String> {
    interpret_bytes(Some(tool_name), Some(marker.contract), &bytes, limits)
}

/// [`interpret_call_bytes`] on a body handed in pieces (issue 10: `interpretCall` on the
/// JavaScript bytes, copied into wasm memory one piece at a time): the pieces go to the resumable
/// Structure scan the remote call uses (`CallStream`; SSE-framed, each event's data through the
/// decoder's [`DataTap`]), so a result the scan reads is never whole in wasm memory; any other
/// body is asked for whole ([`BodyPieces::whole`]) and read as [`interpret_call_bytes`] reads it.
/// Same outcome, every refusal word for word, as [`interpret_call_bytes`] on the whole body.
pub fn interpret_call_pieces(
    tool_name: &str,
    marker: &Marker,
    body: &dyn BodyPieces,
    limits: &ResultLimits,
) -> Result<Interpreted, String> {
    interpret_bytes(Some(tool_name), Some(marker.contract), body, limits)
}

/// A response body handed in pieces, in order ([`interpret_call_pieces`]).
pub trait BodyPieces {
    /// The body's length in bytes.
    fn total(&self) -> usize;
    /// Hands the body to `each`, piece by piece, in order.
    fn each_piece(&self, each: &mut dyn FnMut(&[u8]));
    /// The whole body, for the exact reader (when the scan did not read the result).
    fn whole(&self) -> Cow<'_, [u8]>;
}

/// Bytes already in wasm memory: one piece (the scan reads a piece where it lies and copies only
/// a unit left unfinished, so cutting it up would gain nothing).
impl BodyPieces for &[u8] {
    fn total(&self) -> usize {
        self.len()
    }
    fn each_piece(&self, each: &mut dyn FnMut(&[u8])) {
        each(self);
    }
    fn whole(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self)
    }
}

/// The Structure scan of a body in pieces: of the body (JSON), or of the data of its last event
/// when that is a `message` event (SSE-framed, told from the first piece as [`sse_message`] tells
/// it from the body; the data is not kept). `None` when the first piece cannot tell the framing
/// or the decoder stops: the caller reads the whole body.
fn scan_pieces(body: &dyn BodyPieces, limits: &ResultLimits) -> Option<CallStream> {
    let mut framed = None;
    let mut stream = CallStream::new();
    let mut decoder = SseDecoder::new(limits.max_bytes);
    let (mut tap, mut events, mut last_message, mut fine) =
        (LastEventScan::default(), Vec::new(), false, true);
    body.each_piece(&mut |piece| {
        // Told by the first piece only; a BOM cut in it would make a JSON body look framed.
        let told = framed.get_or_insert_with(|| {
            (piece.len() >= 3 || !BOM.starts_with(piece) || piece.len() == body.total())
                .then(|| first_byte(piece).map(|b| !matches!(b, b'{' | b'[')))
                .flatten()
        });
        match told {
            Some(false) => stream.feed(piece),
            Some(true) if fine => {
                fine = decoder.feed_tapped(piece, &mut events, &mut tap).is_ok();
                if let Some(e) = events.pop() {
                    last_message = e.is_message();
                    events.clear();
                }
            }
            _ => {}
        }
    });
    match framed.flatten()? {
        false => Some(stream),
        true => {
            fine = fine && decoder.finish_tapped(&mut events, &mut tap).is_ok();
            if let Some(e) = events.pop() {
                last_message = e.is_message();
            }
            tap.last.filter(|_| fine && last_message)
        }
    }
}

/// The scan of each SSE event's data as it comes, keeping that of the last dispatched event (the
/// data itself is not kept: the body is asked for whole when the scan does not read it).
#[derive(Default)]
struct LastEventScan {
    current: CallStream,
    last: Option<CallStream>,
}

impl DataTap for LastEventScan {
    fn data(&mut self, bytes: &[u8]) {
        self.current.feed(bytes);
    }
    fn end_event(&mut self, dispatched: bool) {
        let stream = std::mem::take(&mut self.current);
        if dispatched {
            self.last = Some(stream);
        }
    }
}

/// [`interpret_unmarked_value`] on a response body (JSON or SSE-framed), capped like
/// [`interpret_call_bytes`].
pub fn interpret_unmarked_bytes(
    bytes: &[u8],
    limits: &ResultLimits,
) -> Result<Interpreted, String> {
    interpret_bytes(None, None, &bytes, limits)
}

/// An ordinary MCP tool's result (a tool without the Builder marker).
#[derive(Debug, Clone, PartialEq)]
pub struct PlainResult {
    /// The `CallToolResult` as sent (out of its JSON-RPC envelope, if it came in one).
    pub raw: Value,
    /// The text content items joined with newlines: plain text, never markup.
    pub summary: String,
}

/// MCP `tools/call` of a tool without the Builder marker. The body (JSON or SSE-framed) passes
/// the same byte cap ([`check_result_size`]) and framing as a Builder result, then is read as a
/// `CallToolResult` (this is the small-result path: it builds a `Value`). A tool error is its one
/// line, as for a Builder tool (§6). When the tool declares an `outputSchema`, the result must
/// carry `structuredContent` that conforms to it (MCP: clients SHOULD validate), checked with the
/// validator cached per distinct schema ([`super::validate::validate_output`]); the first problem
/// is the one-line error. A tool error is not validated (MCP: an error result need not conform).
pub fn interpret_plain_bytes(
    tool_name: &str,
    output_schema: Option<&Value>,
    bytes: &[u8],
    limits: &ResultLimits,
) -> Result<PlainResult, String> {
    check_result_size(bytes.len(), limits)?;
    let unframed = sse_message(bytes, limits)?;
    let bytes = unframed.as_deref().map_or(bytes, str::as_bytes);
    let value: Value = serde_json::from_slice(bytes).map_err(|e| describe_json_error(&e))?;
    let raw = plain_call(value)?;
    let content: Vec<ContentItem> = raw
        .get("content")
        .and_then(|c| Option::<Vec<ContentItem>>::deserialize(c).ok().flatten())
        .unwrap_or_default();
    if raw.get("isError") == Some(&Value::Bool(true)) {
        return Err(tool_error_line(Some(tool_name), &content));
    }
    if let Some(schema) = output_schema {
        let Some(structured) = raw.get("structuredContent") else {
            return Err(
                "structuredContent: missing, but the tool declares an outputSchema".to_string(),
            );
        };
        let problems = super::validate::validate_output(schema, structured)?;
        if let Some(first) = problems.first() {
            let more = match problems.len() - 1 {
                0 => String::new(),
                1 => " (and 1 more problem)".to_string(),
                n => format!(" (and {n} more problems)"),
            };
            return Err(one_line(&format!(
                "The result does not match the tool's outputSchema: {}{more}",
                first.message
            )));
        }
    }
    Ok(PlainResult {
        summary: summary_text(&content),
        raw,
    })
}

/// A plain tool's response as its `CallToolResult`: a JSON-RPC envelope (it has `jsonrpc`) is
/// opened, its `error` being the §6 server failure; anything but an object is refused.
fn plain_call(value: Value) -> Result<Value, String> {
    let Value::Object(mut object) = value else {
        return Err("result: a CallToolResult must be a JSON object".to_string());
    };
    if object.contains_key("jsonrpc") {
        if let Some(error) = object.get("error") {
            let error = RpcError::deserialize(error).unwrap_or_default();
            return Err(error.failure_line());
        }
        if let Some(inner) = object.remove("result") {
            return match inner {
                Value::Object(_) => Ok(inner),
                _ => Err("result: a CallToolResult must be a JSON object".to_string()),
            };
        }
    }
    Ok(Value::Object(object))
}

/// The one bytes path: the cap, then the resumable Structure scan on the body's pieces (JSON, or
/// the last event's data of an SSE-framed body: [`scan_pieces`]) and the exact reader on the rest
/// with the Structure in place ([`read_with`]); any body the scan does not read (declined, none,
/// refused after) is read whole by [`read_whole`], whose outcome it is in every case (the scanner
/// accepts only text the serde visitor reads to the same values: `scan_differential.rs`). No
/// `Value` tree.
fn interpret_bytes(
    tool_name: Option<&str>,
    contract: Option<u64>,
    body: &dyn BodyPieces,
    limits: &ResultLimits,
) -> Result<Interpreted, String> {
    check_result_size(body.total(), limits)?;
    if let Some(Streamed::Read {
        structure,
        facts,
        rest,
        ..
    }) = scan_pieces(body, limits).map(|s| s.finish(SPLICE_MARK.as_bytes()))
    {
        if let Ok(done) = read_with(tool_name, contract, &rest, *structure, *facts) {
            return Ok(done);
        }
    }
    read_whole(tool_name, contract, &body.whole(), limits)
}

/// The exact reader on `rest`, a result with the placeholder where the Structure's text stood,
/// taking `structure` (read by the scan) there ([`read_placed`]). An `Ok` is the exact reader's
/// outcome on the whole result: it met the placeholder where it reads a Structure, and the scanner
/// accepts only text the visitor reads to the same values.
fn read_with(
    tool_name: Option<&str>,
    contract: Option<u64>,
    rest: &[u8],
    structure: megane_structure_scan::Scanned,
    facts: megane_structure_scan::checks::Facts,
) -> Result<Interpreted, String> {
    read_placed(rest, structure, facts, |rest| {
        read_call(tool_name, contract, rest)
    })
}

/// The exact reader on a whole body: the cap, the SSE framing ([`sse_message`]), then the serde
/// visitor for everything, every refusal its one-line error.
fn read_whole(
    tool_name: Option<&str>,
    contract: Option<u64>,
    bytes: &[u8],
    limits: &ResultLimits,
) -> Result<Interpreted, String> {
    check_result_size(bytes.len(), limits)?;
    let unframed = sse_message(bytes, limits)?;
    let bytes = unframed.as_deref().map_or(bytes, str::as_bytes);
    read_call(tool_name, contract, bytes)
}

/// [`interpret_call_bytes`] on a remote call's result whose §5.1 Structure was read while the
/// body streamed in (issue 10): `text` is the result with the placeholder instead of the
/// Structure's text (`mcp::body` checks it stands inside the result exactly once), so only this
/// small rest is parsed here; the byte cap is the whole result's. The exact reader (the serde
/// visitor for everything) reads it and takes the prescanned Structure where it meets the
/// placeholder ([`read_placed`]): the scanner accepts only text the visitor reads to the same
/// values, so the outcome, every refusal word for word, is [`interpret_call_bytes`]'s on the
/// result as sent, and the Structure's text is never needed again.
pub fn interpret_call_prescanned(
    tool_name: &str,
    marker: &Marker,
    text: &[u8],
    prescanned: jsonrpc::Prescanned,
    limits: &ResultLimits,
) -> Result<Interpreted, String> {
    let jsonrpc::Prescanned {
        structure,
        facts,
        structure_len,
    } = prescanned;
    let whole = text.len().saturating_sub(SPLICE_MARK.len()) + structure_len;
    check_result_size(whole, limits)?;
    read_with(
        Some(tool_name),
        Some(marker.contract),
        text,
        *structure,
        *facts,
    )
}

/// Reads and interprets an unframed response body; the Structure reader is chosen by the mode
/// ([`read_whole`]: the serde visitor; [`read_placed`]: the Structure read by the scan).
fn read_call(
    tool_name: Option<&str>,
    contract: Option<u64>,
    bytes: &[u8],
) -> Result<Interpreted, String> {
    match serde_json::from_slice::<CallResultWire>(bytes) {
        Ok(wire) => interpret_wire(tool_name, contract, wire),
        Err(e) => Err(
            tool_error_despite(serde_json::from_slice(bytes).ok(), tool_name)
                .unwrap_or_else(|| describe_json_error(&e)),
        ),
    }
}

/// §5/§6: interpret an already-parsed response (bare `CallToolResult` or JSON-RPC envelope)
/// with the same typed reader as bytes, after the same byte cap ([`MAX_RESULT_BYTES`]) on the
/// length of its compact JSON text.
pub fn interpret_call_value(
    tool_name: &str,
    marker: &Marker,
    value: &Value,
) -> Result<Interpreted, String> {
    interpret_value(Some(tool_name), Some(marker.contract), value)
}

/// The parsed-value path: the byte cap on its JSON length, then the typed reader.
fn interpret_value(
    tool_name: Option<&str>,
    contract: Option<u64>,
    value: &Value,
) -> Result<Interpreted, String> {
    check_result_size(json_len(value), &ResultLimits::default())?;
    match CallResultWire::deserialize(value) {
        Ok(wire) => interpret_wire(tool_name, contract, wire),
        Err(e) => Err(
            tool_error_despite(ErrorProbe::deserialize(value).ok(), tool_name)
                .unwrap_or_else(|| describe_json_error(&e)),
        ),
    }
}

/// The length in bytes of `value` written as compact JSON, counted without recursion (a value
/// built in memory may be nested deeper than any stack).
fn json_len(value: &Value) -> usize {
    let string_len = |s: &str| serde_json::to_string(s).map_or(0, |t| t.len());
    let mut total = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(match v {
            Value::Null => 4,
            Value::Bool(b) => 4 + usize::from(!*b),
            Value::Number(n) => n.to_string().len(),
            Value::String(s) => string_len(s),
            Value::Array(items) => {
                stack.extend(items);
                2 + items.len().saturating_sub(1)
            }
            Value::Object(map) => {
                stack.extend(map.values());
                let keys: usize = map.keys().map(|k| string_len(k) + 1).sum();
                2 + keys + map.len().saturating_sub(1)
            }
        });
    }
    total
}

/// A tool error whose `structuredContent` is not a BuilderResult is still a tool error: when the
/// full read fails, a second, lenient read that skips `structuredContent` looks for `isError`.
fn tool_error_despite(probe: Option<ErrorProbe>, tool_name: Option<&str>) -> Option<String> {
    let probe = probe?;
    if let Some(error) = &probe.error {
        return Some(error.failure_line());
    }
    let call = match probe.result {
        Some(inner) => *inner,
        None => probe,
    };
    (call.is_error == Some(true))
        .then(|| tool_error_line(tool_name, call.content.as_deref().unwrap_or(&[])))
}

/// §6/§10: whether a `tools/call` response (a bare `CallToolResult` or a JSON-RPC envelope) is a
/// refusal of the call's arguments: the tool's own `isError` result, or the JSON-RPC error -32602
/// (invalid params). Another server error, or a response that does not parse, is not.
pub fn is_refusal_from<'de, D: Deserializer<'de>>(deserializer: D) -> bool {
    ErrorProbe::deserialize(deserializer).is_ok_and(|probe| probe.refuses())
}

/// [`is_refusal_from`] for response bytes.
pub fn is_refusal_bytes(bytes: &[u8]) -> bool {
    is_refusal_from(&mut serde_json::Deserializer::from_slice(bytes))
}

impl ErrorProbe {
    fn refuses(&self) -> bool {
        if let Some(error) = &self.error {
            return error.code == jsonrpc::INVALID_PARAMS;
        }
        match &self.result {
            Some(inner) => inner.is_error == Some(true),
            None => self.is_error == Some(true),
        }
    }
}

/// The fields that decide whether a response is an error; everything else is skipped.
#[derive(Deserialize)]
struct ErrorProbe {
    #[serde(default)]
    content: Option<Vec<ContentItem>>,
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
    #[serde(default)]
    result: Option<Box<ErrorProbe>>,
    #[serde(default)]
    error: Option<RpcError>,
}

/// §5.2 input for the JavaScript API: a BuilderResult (as `interpretCall` returned it) read from
/// any deserializer and checked again against the marker and §5.1, so a plan is never made from
/// an unchecked object.
pub fn read_builder_result<'de, D: Deserializer<'de>>(
    marker: &Marker,
    deserializer: D,
) -> Result<CheckedResult, String> {
    let result = BuilderResult::deserialize(deserializer)
        .map_err(|e| with_field_path(one_line(without_position(&e.to_string()))))?;
    check_builder_result(marker, result)
}

/// §4.3 input for the JavaScript API: the open document as a §5.1 Structure from any
/// deserializer, validated; errors start with `document: `.
pub fn read_document<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Structure, String> {
    let document = Structure::deserialize(deserializer)
        .map_err(|e| format!("document: {}", one_line(without_position(&e.to_string()))))?;
    document.validate().map_err(|e| format!("document: {e}"))?;
    Ok(document)
}

/// §5/§6: interpret a response already read into its wire shape.
pub fn interpret_call_wire(
    tool_name: &str,
    marker: &Marker,
    wire: CallResultWire,
) -> Result<Interpreted, String> {
    interpret_wire(Some(tool_name), Some(marker.contract), wire)
}

/// §5/§6 without a tool: a raw `tools/call` result (bare `CallToolResult` or JSON-RPC envelope)
/// whose BuilderResult may carry any contract this client supports
/// ([`SUPPORTED_CONTRACTS`](super::marker::SUPPORTED_CONTRACTS)). For hosts that hold only the raw
/// result (Builder's `interpretCall(raw)`); the SDK's `Error executing tool <name>: ` prefix is
/// dropped whatever the name.
pub fn interpret_unmarked_value(value: &Value) -> Result<Interpreted, String> {
    interpret_value(None, None, value)
}

/// The one interpretation path: `tool_name` (for the SDK prefix) and the contract the result
/// must carry (`None`: any supported one).
fn interpret_wire(
    tool_name: Option<&str>,
    contract: Option<u64>,
    wire: CallResultWire,
) -> Result<Interpreted, String> {
    let call = unwrap_envelope(wire)?;
    if call.is_error == Some(true) {
        return Err(tool_error_line(
            tool_name,
            call.content.as_deref().unwrap_or(&[]),
        ));
    }
    let content = call.content.unwrap_or_default();
    let raw = match call.structured_content {
        Some(raw) => raw,
        None => builder_result_from_text(&content)?,
    };
    let result = check_result(contract, raw)?;
    let summary = summary_text(&content);
    let warnings = result.warnings.clone();
    Ok(Interpreted {
        result,
        summary,
        warnings,
    })
}

/// MCP Streamable HTTP framing: when `bytes` do not start (after white space and a BOM) like a
/// JSON object or array, they are read as a `text/event-stream` with the transport's own decoder
/// ([`SseDecoder`]) and the data of the last event that carries a message is returned (the
/// response comes after any progress notifications). `None`: not SSE-framed (or no message
/// event in it), so the bytes are read as JSON and a bad body gets the JSON error.
fn sse_message(bytes: &[u8], limits: &ResultLimits) -> Result<Option<String>, String> {
    match first_byte(bytes) {
        None | Some(b'{') | Some(b'[') => return Ok(None),
        Some(_) => {}
    }
    let mut decoder = SseDecoder::new(limits.max_bytes);
    let mut events = Vec::new();
    decoder
        .feed(bytes, &mut events)
        .and_then(|()| decoder.finish(&mut events))
        .map_err(|e| format!("result: {e}"))?;
    Ok(events
        .into_iter()
        .rev()
        .find(SseEvent::carries_message)
        .map(|e| e.data))
}

/// The first byte of a body after a BOM and white space: `{` or `[` is JSON, anything else an
/// SSE framing ([`sse_message`]).
fn first_byte(bytes: &[u8]) -> Option<u8> {
    let body = bytes.strip_prefix(&BOM).unwrap_or(bytes);
    body.iter().copied().find(|b| !b.is_ascii_whitespace())
}

/// A UTF-8 byte order mark.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Follows a JSON-RPC envelope to the `CallToolResult`, or turns its `error` into the §6 line.
fn unwrap_envelope(wire: CallResultWire) -> Result<CallResultWire, String> {
    if let Some(error) = &wire.error {
        return Err(error.failure_line());
    }
    match wire.result {
        Some(inner) if inner.result.is_some() || inner.error.is_some() => {
            Err("result: a JSON-RPC envelope inside another one".to_string())
        }
        Some(inner) => Ok(*inner),
        None => Ok(wire),
    }
}

/// §6: the line shown for a tool error (`isError`) that gives no text.
pub const BARE_TOOL_ERROR: &str = "The tool reported an error.";

/// §6: the tool's own message in an `isError` result: the first text content item (`type` `text`,
/// or no `type`), without the SDK's `Error executing tool <name>: ` prefix (for any one-word name
/// when the tool is not known); not yet sanitised.
fn tool_message<'a>(tool_name: Option<&str>, content: &'a [ContentItem]) -> &'a str {
    let text = content
        .iter()
        .find(|item| item.text.is_some() && item.kind.as_deref().is_none_or(|k| k == "text"))
        .and_then(|item| item.text.as_deref())
        .unwrap_or("")
        .trim_start();
    let stripped = match tool_name {
        Some(name) => text.strip_prefix(&format!("Error executing tool {name}: ")),
        None => text
            .strip_prefix("Error executing tool ")
            .and_then(|rest| rest.split_once(": "))
            .filter(|(name, _)| !name.is_empty() && !name.contains(char::is_whitespace))
            .map(|(_, text)| text),
    };
    stripped.unwrap_or(text)
}

/// §6: the one line shown for a tool error: the first line of the tool's message
/// ([`tool_message`], [`one_line`]), else [`BARE_TOOL_ERROR`].
fn tool_error_line(tool_name: Option<&str>, content: &[ContentItem]) -> String {
    or_bare(one_line(tool_message(tool_name, content)))
}

/// §6: a tool error's whole message as Megane Builder shows it (its first text block, trimmed;
/// [`message_block`]: controls and direction overrides out, at most 20 lines and 2 000
/// characters), else [`BARE_TOOL_ERROR`].
fn tool_error_block(tool_name: Option<&str>, content: &[ContentItem]) -> String {
    or_bare(message_block(tool_message(tool_name, content)))
}

/// A tool's shown message, or [`BARE_TOOL_ERROR`] when nothing of it is left to show.
fn or_bare(shown: String) -> String {
    if shown.is_empty() {
        BARE_TOOL_ERROR.to_string()
    } else {
        shown
    }
}

/// What a response the interpretation refused is (§6), for a host that words each kind its own
/// way (Megane Builder: `contract::seam::builder_failure`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureKind {
    /// A JSON-RPC error: the interpretation's line is `The server failed: <first line>`.
    ServerFailed,
    /// The tool's own error (`isError`), with its whole message ([`tool_error_block`]).
    ToolError {
        /// The tool's message: trimmed, sanitised, bounded; never empty.
        message: String,
    },
    /// The result itself cannot be used: not a valid BuilderResult (§5, §5.1), too large, not
    /// JSON.
    InvalidResult,
}

/// §6: the kind of a `tools/call` response (JSON: a bare `CallToolResult` or a JSON-RPC
/// envelope) that the interpretation refused, read again leniently (only `content`, `isError`,
/// `result` and `error`; `structuredContent` skipped), in the interpretation's order: a JSON-RPC
/// error, then `isError`, else an invalid result.
pub fn failure_kind(bytes: &[u8], tool_name: Option<&str>) -> FailureKind {
    let Ok(probe) = serde_json::from_slice::<ErrorProbe>(bytes) else {
        return FailureKind::InvalidResult;
    };
    if probe.error.is_some() {
        return FailureKind::ServerFailed;
    }
    let call = match probe.result {
        Some(inner) => *inner,
        None => probe,
    };
    if call.is_error == Some(true) {
        return FailureKind::ToolError {
            message: tool_error_block(tool_name, call.content.as_deref().unwrap_or(&[])),
        };
    }
    FailureKind::InvalidResult
}

fn summary_text(content: &[ContentItem]) -> String {
    content
        .iter()
        .filter(|item| item.kind.as_deref() == Some("text"))
        .filter_map(|item| item.text.as_deref())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod differential;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod facts_differential;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod scan_differential;
