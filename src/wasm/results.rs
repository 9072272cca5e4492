//! Results for the page's JavaScript: `interpretCall` (the response bytes, a string or an
//! object → a checked `BuilderResult` kept in wasm memory, its outcome), the bytes of a
//! `Uint8Array` read in pieces, and `planApply` (§5.2: the plan, the snapshot's typed arrays).

use js_sys::Uint8Array;
use serde::Deserialize;
use wasm_bindgen::prelude::*;

use super::interop::{failure, from_js_or_default, set, string_array, success, to_js, ButtonHead};
use super::snapshot::plan_to_js;
use crate::contract::apply::plan_apply_checked;
use crate::contract::result::{self, ResultLimits};
use crate::contract::structure::Structure;
use crate::wire::messages::NO_RESULT;

#[wasm_bindgen(module = "/src/js/snippets/outcome.js")]
extern "C" {
    /// `{ok: true, summary, warnings, result}`.
    #[wasm_bindgen(js_name = okOutcome)]
    fn ok_outcome(summary: &str, warnings: JsValue, result: JsValue) -> JsValue;
}

/// §5: a validated BuilderResult, kept in wasm memory: large structures are not copied into
/// JavaScript until asked for (`toJSON()`), and `planApply` reads it directly.
#[wasm_bindgen(js_name = BuilderResult)]
pub struct BuilderResultHandle {
    tool: String,
    pub(super) inner: result::CheckedResult,
}

#[wasm_bindgen(js_class = BuilderResult)]
impl BuilderResultHandle {
    /// The tool that produced the result.
    #[wasm_bindgen(getter)]
    pub fn tool(&self) -> String {
        self.tool.clone()
    }
    /// The sanitised-later suggested name (never blank; fallback `result`).
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.inner.name.clone()
    }
    /// Contract version of the result.
    #[wasm_bindgen(getter)]
    pub fn contract(&self) -> u32 {
        self.inner.contract as u32
    }
    /// Number of atoms in the structure.
    #[wasm_bindgen(getter, js_name = atomCount)]
    pub fn atom_count(&self) -> u32 {
        self.inner.structure.n_atoms() as u32
    }
    /// The result's warnings.
    #[wasm_bindgen(getter, unchecked_return_type = "string[]")]
    pub fn warnings(&self) -> js_sys::Array {
        string_array(&self.inner.warnings)
    }
    /// The result's provenance (strings and numbers).
    #[wasm_bindgen(getter, unchecked_return_type = "Record<string, string | number>")]
    pub fn provenance(&self) -> Result<JsValue, JsError> {
        to_js(&self.inner.provenance)
    }
    /// The whole result as a plain object `{contract, name, structure, warnings, provenance}`.
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "{contract: number; name: string; structure: Structure; warnings: string[]; provenance: Record<string, string | number>}")]
    pub fn to_json(&self) -> Result<JsValue, JsError> {
        to_js(&self.inner)
    }
}

/// Options of `interpretCall`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct InterpretOptions {
    max_result_bytes: Option<usize>,
}

/// §5/§6: a `tools/call` result (the response bytes as a `Uint8Array`, a JSON string, or an
/// already-parsed object; a bare CallToolResult or a JSON-RPC response; bytes and strings may be
/// SSE-framed, `event: message` / `data: …`, as a Streamable HTTP server sends them) →
/// `{ok: true, result: BuilderResult, summary, warnings}` or `{ok: false, error, refused?}`;
/// `refused: true` when the tool refused the arguments (`isError`) or the server answered
/// JSON-RPC -32602. The byte cap (`options.maxResultBytes`, default 64 MiB, `MAX_RESULT_BYTES`)
/// is checked before parsing, on objects too (their JSON text).
#[wasm_bindgen(js_name = interpretCall, unchecked_return_type = "InterpretOutcome")]
pub fn interpret_call(
    #[wasm_bindgen(unchecked_param_type = "ToolButton")] button: JsValue,
    #[wasm_bindgen(js_name = bytesOrObject, unchecked_param_type = "Uint8Array | string | object")]
    bytes_or_object: JsValue,
    #[wasm_bindgen(unchecked_param_type = "InterpretOptions | null | undefined")] options: JsValue,
) -> Result<JsValue, JsError> {
    let button = ButtonHead::from_js(button)?;
    let options: InterpretOptions = from_js_or_default(options, "options")?;
    let mut limits = ResultLimits::default();
    if let Some(max) = options.max_result_bytes {
        limits.max_bytes = max;
    }
    let source = bytes_or_object.clone();
    let outcome = if let Some(bytes) = bytes_or_object.dyn_ref::<Uint8Array>() {
        // The cap before copying the bytes into wasm memory (the same check runs again inside).
        result::interpret_call_pieces(&button.name, &button.marker, &JsBytes(bytes), &limits)
    } else if let Some(text) = bytes_or_object.as_string() {
        result::interpret_call_bytes(&button.name, &button.marker, text.as_bytes(), &limits)
    } else if bytes_or_object.is_object() {
        object_json(&bytes_or_object, &limits).and_then(|text| {
            result::interpret_call_bytes(&button.name, &button.marker, text.as_bytes(), &limits)
        })
    } else {
        Err(NO_RESULT.to_string())
    };
    // Only on the error path: is it the tool's (or the server's -32602) refusal of the arguments?
    let refused = outcome.is_err()
        && if let Some(bytes) = source.dyn_ref::<Uint8Array>() {
            (bytes.length() as usize) <= limits.max_bytes
                && result::is_refusal_bytes(&bytes.to_vec())
        } else if let Some(text) = source.as_string() {
            result::is_refusal_bytes(text.as_bytes())
        } else {
            source.is_object()
                && result::is_refusal_from(serde_wasm_bindgen::Deserializer::from(source))
        };
    Ok(interpreted_outcome(&button.name, outcome, refused))
}

/// The bytes of a `Uint8Array` as a result body in pieces: copied into wasm memory [`PIECE`]
/// bytes at a time, into one reused buffer, so only a body the scan does not read is copied
/// whole (issue 10: memory).
pub(super) struct JsBytes<'a>(pub(super) &'a Uint8Array);

/// The piece size of [`JsBytes`].
const PIECE: u32 = 256 * 1024;

impl result::BodyPieces for JsBytes<'_> {
    fn total(&self) -> usize {
        self.0.length() as usize
    }
    fn each_piece(&self, each: &mut dyn FnMut(&[u8])) {
        let len = self.0.length();
        let mut buf = vec![0; PIECE.min(len) as usize];
        let mut at = 0;
        while at < len {
            let end = len.min(at + PIECE);
            let piece = &mut buf[..(end - at) as usize];
            self.0.subarray(at, end).copy_to(piece);
            each(piece);
            at = end;
        }
    }
    fn whole(&self) -> std::borrow::Cow<'_, [u8]> {
        self.0.to_vec().into()
    }
}

/// An already-parsed result object as JSON text (`JSON.stringify`), so it takes the same bytes
/// path and the same byte cap as a body. Its UTF-16 length is never more than its UTF-8 length,
/// so an object over the cap is refused before the text is copied into wasm memory.
pub(super) fn object_json(object: &JsValue, limits: &ResultLimits) -> Result<String, String> {
    let text = js_sys::JSON::stringify(object)
        .map_err(|_| "result: the object cannot be written as JSON".to_string())?;
    result::check_result_size(text.length() as usize, limits)?;
    text.as_string().ok_or_else(|| NO_RESULT.to_string())
}

/// `{ok: true, result: BuilderResult, summary, warnings}` or `{ok: false, error}`.
pub(super) fn interpreted_outcome(
    tool: &str,
    outcome: Result<result::Interpreted, String>,
    refused: bool,
) -> JsValue {
    match outcome {
        Ok(interpreted) => {
            let handle = BuilderResultHandle {
                tool: tool.to_string(),
                inner: interpreted.result,
            };
            ok_outcome(
                &interpreted.summary,
                string_array(&interpreted.warnings).into(),
                handle.into(),
            )
        }
        Err(error) => refusal(failure(&error), refused),
    }
}

/// Marks a failure outcome `refused: true` (§10: the tool or the server refused the arguments).
pub(super) fn refusal(outcome: JsValue, refused: bool) -> JsValue {
    if refused {
        set(outcome.unchecked_ref(), "refused", true);
    }
    outcome
}

/// Options of `planApply`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct PlanOptions {
    existing_fragment_ids: Vec<String>,
    /// The insert's fragment id, chosen by the host (default: fresh from the result's name).
    fragment_id: Option<String>,
}

/// §5.2: `{ok: true, plan}` where plan is `{mode: "new_document", snapshot}` (typed arrays in
/// Megane's Snapshot shape) or `{mode: "insert", ops, select}`; `{ok: false, error}` when the
/// result cannot be applied (an insert without an open document, atoms repeating the document).
/// `document` is the open structure as a §4.3 Structure payload, or null.
#[wasm_bindgen(js_name = planApply, unchecked_return_type = "PlanOutcome")]
pub fn plan_apply_js(
    #[wasm_bindgen(unchecked_param_type = "ToolButton")] button: JsValue,
    result: &BuilderResultHandle,
    #[wasm_bindgen(unchecked_param_type = "Structure | null")] document: JsValue,
    #[wasm_bindgen(unchecked_param_type = "PlanOptions | null | undefined")] options: JsValue,
) -> Result<JsValue, JsError> {
    let button = ButtonHead::from_js(button)?;
    let options: PlanOptions = from_js_or_default(options, "options")?;
    let document: Option<Structure> = if document.is_null() || document.is_undefined() {
        None
    } else {
        match serde_wasm_bindgen::from_value::<Structure>(document) {
            Ok(structure) => Some(structure),
            Err(e) => {
                return Ok(failure(&format!(
                    "The open document is not a valid structure: {e}"
                )))
            }
        }
    };
    // The handle holds a result checked by interpretCall and read-only since: §5.1 once.
    match plan_apply_checked(
        &button.marker,
        &result.inner,
        document.as_ref(),
        &options.existing_fragment_ids,
        options.fragment_id.as_deref(),
    ) {
        Ok(plan) => Ok(success("plan", plan_to_js(&plan)?)),
        Err(error) => Ok(failure(&error)),
    }
}
