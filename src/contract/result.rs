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

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use super::marker::{Marker, SUPPORTED_CONTRACTS};
use super::structure::{
    at_path, read_placed, without_position, Int, ListSeed, Nullable, Skip, Structure, Text,
    SPLICE_MARK,
};
use crate::wire::jsonrpc::{self, RpcError};
use crate::wire::sse::{DataTap, SseDecoder, SseEvent};
use crate::wire::text::{excerpt, message_block, one_line};
use megane_structure_scan::{CallStream, Streamed};

/// §6: our own copy of the BuilderResult JSON Schema (2020-12), written from the contract and
/// lenient to unknown fields (§11). The typed reader below enforces everything it states and the
/// §5.1 rules it cannot state; a native test checks that both agree.
pub const BUILDER_RESULT_SCHEMA: &str = include_str!("builder_result.schema.json");

/// §5: the name used when a result's `name` is missing or blank.
pub const FALLBACK_NAME: &str = "result";

/// §9: limits applied before and while parsing a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultLimits {
    /// Largest response body accepted, in bytes, checked before parsing. The default is
    /// [`MAX_RESULT_BYTES`].
    pub max_bytes: usize,
}

pub use crate::wire::caps::MAX_RESULT_BYTES;

impl Default for ResultLimits {
    fn default() -> Self {
        ResultLimits {
            max_bytes: MAX_RESULT_BYTES,
        }
    }
}

/// §5: a validated BuilderResult.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BuilderResult {
    /// Contract version; equal to the tool's marker after [`check_builder_result`].
    pub contract: u64,
    /// Suggested document / fragment name; never blank after checking (fallback `result`).
    pub name: String,
    /// The atoms (§5.1).
    pub structure: Structure,
    /// Non-fatal problems to show after the summary (non-string entries dropped).
    pub warnings: Vec<String>,
    /// Software versions and seed, strings and numbers only (§7), in the server's order.
    pub provenance: Map<String, Value>,
}

/// §5/§5.1: a [`BuilderResult`] that passed the one result check (`check_result`: the contract,
/// [`Structure::validate`], the name fallback) and has not changed since: read-only ([`Deref`]
/// only), and made only by that check ([`check_builder_result`], [`read_builder_result`], every
/// `interpret_*`). [`plan_apply_checked`] takes it and does not validate §5.1 again, so §5.1 runs
/// once on every path from a call to a plan; a host cannot hand it an unchecked structure.
///
/// ```compile_fail
/// use megane_builder_client::contract::result::{BuilderResult, CheckedResult};
/// fn forge(result: BuilderResult) -> CheckedResult {
///     CheckedResult(result) // the field is private: only the checks make one
/// }
/// ```
///
/// [`Structure::validate`]: super::structure::Structure::validate
/// [`plan_apply_checked`]: super::apply::plan_apply_checked
/// [`Deref`]: std::ops::Deref
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct CheckedResult(BuilderResult);

impl std::ops::Deref for CheckedResult {
    type Target = BuilderResult;
    fn deref(&self) -> &BuilderResult {
        &self.0
    }
}

impl CheckedResult {
    /// The result, no longer marked checked (a change to it needs the check again).
    pub fn into_inner(self) -> BuilderResult {
        self.0
    }
}

/// The outcome of a successful call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Interpreted {
    /// The validated result.
    pub result: CheckedResult,
    /// The text content items joined with newlines: plain text, never markup.
    pub summary: String,
    /// The result's warnings, for the notice line.
    pub warnings: Vec<String>,
}

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

/// §5/§5.1: checks a parsed BuilderResult against the tool's marker and the Structure rules,
/// and applies the name fallback.
pub fn check_builder_result(
    marker: &Marker,
    result: BuilderResult,
) -> Result<CheckedResult, String> {
    check_result(Some(marker.contract), result)
}

/// §5: the one check of a result's `contract`: it must be the tool's (`Some`, from its marker),
/// or (`None`, the tool unknown) one this client supports.
pub fn check_contract(expected: Option<u64>, result_contract: u64) -> Result<(), String> {
    match expected {
        Some(expected) if result_contract != expected => Err(format!(
            "contract: the result is for contract {result_contract}, but the tool declared contract {expected}"
        )),
        None if !SUPPORTED_CONTRACTS.contains(&result_contract) => Err(format!(
            "contract: the result is for contract {result_contract}, which this client does not support"
        )),
        _ => Ok(()),
    }
}

/// [`check_builder_result`] against the tool's contract, or (`None`) any supported contract.
fn check_result(contract: Option<u64>, mut result: BuilderResult) -> Result<CheckedResult, String> {
    check_contract(contract, result.contract)?;
    result.structure.validate()?;
    if result.name.trim().is_empty() {
        result.name = FALLBACK_NAME.to_string();
    }
    Ok(CheckedResult(result))
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

/// §9/§5.1: the one byte cap on a result, checked before parsing on every path.
pub fn check_result_size(len: usize, limits: &ResultLimits) -> Result<(), String> {
    if len > limits.max_bytes {
        return Err(format!(
            "result: {len} bytes is more than the {} bytes Builder accepts",
            limits.max_bytes
        ));
    }
    Ok(())
}

/// One line for a serde_json error: data errors already name their field; syntax errors keep
/// their position.
fn describe_json_error(e: &serde_json::Error) -> String {
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
fn with_field_path(message: String) -> String {
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

/// Servers that put the BuilderResult JSON in a single text item instead of `structuredContent`.
fn builder_result_from_text(content: &[ContentItem]) -> Result<BuilderResult, String> {
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

fn summary_text(content: &[ContentItem]) -> String {
    content
        .iter()
        .filter(|item| item.kind.as_deref() == Some("text"))
        .filter_map(|item| item.text.as_deref())
        .collect::<Vec<_>>()
        .join("\n")
}

// ---------------------------------------------------------------------------------------------
// Wire shapes.
// ---------------------------------------------------------------------------------------------

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
    /// §5 wire format without the marker check (see [`check_builder_result`]); errors name the
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

#[cfg(all(test, not(target_arch = "wasm32")))]
#[path = "scan_differential.rs"]
mod scan_differential;

#[cfg(all(test, not(target_arch = "wasm32")))]
#[path = "facts_differential.rs"]
mod facts_differential;
